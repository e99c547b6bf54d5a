"""The claims ledger: every registered claim of the seven chapters in one table (the book page
``book/ledger.md``), drawn from the registry (``modlib/<chapter>/claims.toml``, :mod:`modlib.claims`)
and the decisions the chapters made on their stored full results (``book/ledger/<chapter>.json``).

:func:`table` gives the rows as a ``pandas.DataFrame``; :func:`summary` the page's opening table of
verdict counts by chapter; :func:`page` the page's HTML: the table with four menus (chapter, paper,
verdict, kind) that filter its rows in the browser, with no kernel. Registry text is printed without
the project's internal tracker numbers (:func:`_plain`); the registry itself is unchanged.
"""

from __future__ import annotations

import html
import re
from collections import Counter

from modlib import claims, mutations, stats

PAPERS = {"li2021gradient": "Li et al.", "wiedemer2023compositional": "Wiedemer et al.",
          "csordas2021neural": "Csordás et al.", "lepori2023break": "Lepori et al."}  # references.bib keys
CHAPTER_NUMBER = {ch: i + 1 for i, ch in enumerate(claims.CHAPTERS)}
NOT_DECIDED = "not decided at full"  # a registered claim the page did not decide on the stored results


def _verdict_words(outcome: str | None, own: bool) -> str:
    if outcome is None:
        return NOT_DECIDED
    if own and outcome != stats.UNDECIDED:
        return stats.HOLDS if outcome == stats.REPRODUCED else stats.DOES_NOT_HOLD
    return f"{stats.MARKS[outcome]} {outcome}"


WRITTEN = {"before": "before its data", "newest": "before the newest results it reads (older ones were already stored)",
           "after": "after its data (post hoc)", None: "not dated against its data (none stored)"}  # claims.written


def _earlier(c: claims.Registered) -> list[str]:
    """The days of the claim's amendments that come before the day it was registered: a claim its
    page decided before the registry existed is dated by the registry's commit, and the registry
    recorded the page's earlier changes as amendments with their own, earlier, dates."""
    day = (claims.registration(c) or "")[:10]
    return sorted({a.date for a in c.amendments if day and a.date < day})


def _registration(c: claims.Registered) -> str:
    """When the claim was registered, the day and against its data (:func:`modlib.claims.written`,
    which the chapters' keys count by too), amended or not; amendments dated before that day
    (:func:`_earlier`) are named beside it."""
    day = (claims.registration(c) or "")[:10]
    early = _earlier(c)
    before = f" (amended before registration: {stats.listing(early)})" if early else ""
    said = f"registered {day + before + ', ' if day else ''}{WRITTEN[claims.written(c)]}"
    return f"amended; {said}" if c.amendments else said


SHORT = {"registered ": "reg. ", "amended before registration": "amended before reg.",
         WRITTEN["newest"]: "before its newest data", WRITTEN[None]: "not dated (no data stored)"}


def _registration_cell(text: str) -> str:
    """The "registered" cell's HTML: :func:`_registration`'s words, shortened (:data:`SHORT`) so that
    the narrow column wraps to a few lines, a date never broken; the page's legend gives the long forms."""
    for long, short in SHORT.items():
        text = text.replace(long, short)
    return re.sub(r"(\d{4}-\d\d-\d\d)", r'<span style="white-space:nowrap">\1</span>', html.escape(text))


KINDS = {"paper": "the paper's claim", "own": "the book's own hypothesis"}


def _kind_changed(c: claims.Registered) -> str:
    """Where an amendment changed whose claim it is (field ``whose``), the words that go beside the
    verdict as registered: "first registered, in error, as the paper's claim"; "" otherwise."""
    first = c.original()["whose"]
    if first == c.whose or not any(a.field == "whose" for a in c.amendments):
        return ""
    return f"first registered, in error, as {KINDS.get(first, first)}"


def _why(c: claims.Registered, d: claims.Decision | None) -> str:
    """The decision's reason, with "the paper's side" read as "the claim's side" for the book's own
    hypothesis (the rule of :func:`modlib.claims.reason` and the pages' statements)."""
    if d is None:
        return ""
    return d.why.replace("the paper's side", "the claim's side") if c.own else d.why


TRACKER = ((re.compile(r" \(issue \d+(?:, session \d+)?\)"), ""), (re.compile(r"\(issue \d+: "), "("),
           (re.compile(r"\bissue \d+: "), ""), (re.compile(r"after the issue quoted"), "after the request for it quoted"))


def _plain(text: str) -> str:
    """Registry text as the ledger prints it: the project's internal tracker numbers ("(issue 50)",
    "issue 52: ") left out, as a reader cannot open them; the dates and commits that date a claim
    against its data stay, as they are its record. The registry itself is not changed."""
    for pattern, words in TRACKER:
        text = pattern.sub(words, text)
    return text


def _corrections(c: claims.Registered) -> str:
    """Corrections of the claim's registration record (not of the claim): which commit, which fields, why."""
    return "; ".join(f"{x['commit']} ({', '.join(x['fields'])}): {x['reason']}"
                     for x in claims.snapshot(c.chapter).get(c.id, {}).get("corrections", ()))


def _amendments(c: claims.Registered) -> str:
    """The claim's amendments as the registry gives them: when, which field and why (what a page's
    "when and why: the claims ledger" points to)."""
    return "; ".join(f"{a.date}, {claims.FIELD_WORDS.get(a.field, a.field)}: {a.reason}" for a in c.amendments)


def _mutations(c: claims.Registered, d: claims.Decision | None, found: dict) -> str:
    """Which of the claim's mutations move its verdict, in words: replayed from its decision
    (:func:`modlib.claims.replay`) or run on the stored results (``found``: :func:`modlib.mutations.saved`)."""
    if d is None or not c.mutations:
        return ""
    said = []
    for m in c.mutations:
        if m in claims.REPLAYED:
            moves = claims.moved(d, claims.replay(d, m))
        else:
            moves = mutations.moved(c.chapter, m, c.key, found)
            why = mutations.cannot(c.chapter, m).get(c.id)
            if moves is None:
                said.append(f"{m}: not run ({why})" if why else f"{m}: not run")
                continue
        words = "moves it" if moves else "leaves it" if moves is False else "cannot be replayed"
        if moves is False and d.outcome not in mutations.MUST_MOVE.get(m, {d.outcome}):
            words = f"leaves the label \"{d.outcome}\" (which covers no effect too, so it need not move)"
        said.append(f"{m}: {words}")
    return "; ".join(said)


SENSITIVITY = "a sensitivity reading"  # a claim registered to re-read another's data another way


def _sensitivity(c: claims.Registered) -> bool:
    """Whether claim ``c`` re-reads another claim's data another way (its note's first clause says
    "sensitivity": the authors' choice of masks, a unit left out): a reading beside the registered
    test, which the ledger labels and counts apart."""
    return "sensitivity" in c.note.split(":", 1)[0]


MATCHED = "matched_"  # chapter 6: a claim re-tested at comparable density ("sv-plural-subject-matched_effect")
LAM = "lam_"  # chapter 6: and at the common share, lambda searched ("sv-plural-subject-lam_effect")


def _beside(some: list[dict]) -> dict[str, str]:
    """{key: words} for the rows of a chapter that read the same comparison as another row: a
    sensitivity reading names the registered test whose data it re-reads (the longest other key its
    own key starts with: ``...-effect-argmax`` re-reads ``...-effect``); chapter 6's claims at
    comparable density (``...-matched_effect``) and at the search's density (``...-effect``) are
    both registered tests, and each names the other."""
    keys = {r["key"]: r for r in some}
    out = {}

    def tail(key: str) -> str:  # the id's last part: the other row sits beside this one, same rule and part
        return f"<b>…-{html.escape(key.rsplit('-', 1)[1])}</b>"

    for r in some:
        key = r["key"]
        if r["kind"] == SENSITIVITY:
            tests = [k for k in keys if k != key and key.startswith(k + "-") and keys[k]["kind"] != SENSITIVITY]
            if tests:
                out[key] = f"Re-reads the data of {tail(max(tests, key=len))}, the registered test."
        elif MATCHED in key and key.replace(MATCHED, "") in keys:
            plain = key.replace(MATCHED, "")
            out[key] = f"A registered test at comparable density; {tail(plain)} tests it on the search's masks."
            out[plain] = f"A registered test on the search's masks; {tail(key)} tests it at comparable density."
        elif LAM in key and key.replace(LAM, "") in keys:
            out[key] = (f"A registered test at the common share (λ searched); {tail(key.replace(LAM, ''))} tests it "
                        f"on the search's masks, {tail(key.replace(LAM, MATCHED))} at comparable density.")
    return out


def rows() -> list[dict]:
    """One dict per registered claim, in chapter order: what the ledger shows."""
    out, found = [], mutations.saved()
    for chapter in claims.CHAPTERS:
        decided = claims.saved(chapter)
        for cid, c in claims.registry(chapter).items():
            d = decided.get(c.key)
            out.append({
                "chapter": CHAPTER_NUMBER[chapter], "page": chapter, "section": c.section, "key": c.key,
                "kind": (SENSITIVITY if _sensitivity(c) else
                         "the paper's claim" if c.whose == "paper" else "the book's own hypothesis"),
                "paper": PAPERS.get(c.paper, c.paper) if c.paper else "the book",
                "claim": c.name, "quote": c.quote, "measure": c.measure, "units": c.units,
                "effect": d.estimate if d else None, "low": d.low if d else None, "high": d.high if d else None,
                "n": d.units if d else None, "over": d.conditions.get("over", "") if d else "",
                "arms": [sum(a) / len(a) for a in d.arms] if d and len(d.arms) == 2 and all(d.arms) else None,
                "margin": c.margin, "size": c.size,
                "verdict": _verdict_words(d.outcome if d else None, c.own),
                "as registered": (_verdict_words(d.registered_outcome, c.original()["whose"] == "own")
                                  if d and d.registered_outcome else ""),
                "kind as registered": _kind_changed(c),
                "registration": _registration(c), "corrections": _corrections(c), "amendments": _amendments(c),
                "note": c.note, "why": _why(c, d),
                "trained": c.trained, "mutations": _mutations(c, d, found),
            })
    return out


def table():
    """The ledger as a ``pandas.DataFrame``, one row per registered claim."""
    import pandas as pd

    return pd.DataFrame(rows())


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _effect(r: dict) -> str:
    """The effect cell: the estimate and its 95% interval at one precision (:func:`stats.ends`), then
    the claim's margin; a dash where no unit was compared (none measured, or none the claim's
    condition admits), and no interval over one unit (an interval of no width over several units,
    both arms at a floor, is printed: 0.00 to 0.00). An interval over the parts of one unit (chapter
    4's ten classes of one network) is printed as what it is, as the reason under the claim gives
    it, not as an interval over units."""
    margin = f'<br><small>margin {r["margin"]:g}</small>'
    if r["effect"] is None or not r["n"]:
        return "—" + margin
    if r["low"] is None or r["n"] == 1:
        alone = "<br><small>one unit: no interval</small>" if r["n"] == 1 else ""
        if r["n"] == 1 and r["low"] is not None and r["low"] != r["high"] and r.get("over"):
            alone = (f"<br><small>one unit: {stats.ends(r['low'], r['high'], r['margin'])} is over "
                     f"{html.escape(r['over'])}, not over units</small>")
        return f"{stats.number(r['effect'], 2, sign=True)}{alone}{margin}"
    interval = stats.ends(r["low"], r["high"], r["margin"])
    places = max(2, len(interval.split(" to ")[0].split(".")[-1]))
    while places < 4 and round(abs(r["effect"]), places) == abs(r["margin"]) != abs(r["effect"]):
        places += 1  # an estimate just short of (or past) the margin does not print as the margin
    return f"{stats.number(r['effect'], places, sign=True)}<br><small>{interval}</small>{margin}"


def _text(text: str) -> str:
    """Registry text as HTML: escaped, with a name in backticks set as code, not shown with its ticks."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def _short(measure: str, most: int = 80) -> str:
    """The measure's opening words, at most ``most`` characters (the row's folded summary)."""
    return measure if len(measure) <= most else measure[:most].rsplit(" ", 1)[0] + " …"


ORDER = (f"{stats.MARKS[stats.REPRODUCED]} {stats.REPRODUCED}", f"{stats.MARKS[stats.NOT_REPRODUCED]} "
         f"{stats.NOT_REPRODUCED}", stats.HOLDS, stats.DOES_NOT_HOLD,
         f"{stats.MARKS[stats.UNDECIDED]} {stats.UNDECIDED}", NOT_DECIDED)  # how the counts list verdicts
SHARED = 100  # a reason of at least this many characters that several rows of a chapter give is printed once


def _counts(some: list[dict], registered: bool = False) -> Counter:
    """How many of ``some`` read each verdict: as they read now (amendments applied), or as first
    registered."""
    return Counter((registered and r["as registered"]) or r["verdict"] for r in some)


def _counted(some: list[dict], registered: bool = False) -> str:
    """The verdicts' counts in :data:`ORDER`: as they read now (amendments applied), or as first
    registered."""
    counts = _counts(some, registered)
    rank = {v: i for i, v in enumerate(ORDER)}
    return ", ".join(f"{n} {v}" for v, n in sorted(counts.items(), key=lambda vn: (rank.get(vn[0], len(ORDER)), vn[0])))


def _both(some: list[dict]) -> str:
    now, first = _counted(some), _counted(some, registered=True)
    return now if now == first else f"as they read now, amendments applied: {now}; as first registered: {first}"


def _title(chapter: str) -> str:
    """The chapter's title, its notebook's first heading ("Chapter 3: ..."), as the sidebar gives it."""
    import json

    path = claims.PACKAGE.parent / "notebooks" / f"{chapter}.ipynb"
    if path.exists():
        for cell in json.loads(path.read_text())["cells"]:
            for line in "".join(cell["source"]).splitlines():
                if cell["cell_type"] == "markdown" and line.startswith("# "):
                    return line[2:].strip()
    return f"Chapter {CHAPTER_NUMBER[chapter]}"


def _shared(some: list[dict]) -> dict[str, str]:
    """{reason: label} for the long reasons ("why", :data:`SHARED`) that two or more of a chapter's
    undecided rows give word for word, labelled by chapter and letter in order of first use (6a, 6b):
    the chapter's section prints each once, and its rows name the label."""
    undecided = [r["why"] for r in some if _undecided(r) and len(r["why"]) >= SHARED]
    repeated = [w for i, w in enumerate(undecided) if undecided.count(w) > 1 and w not in undecided[:i]]
    return {w: f'{some[0]["chapter"]}{"abcdefghijklmnopqrstuvwxyz"[i]}' for i, w in enumerate(repeated)}


def _undecided(r: dict) -> bool:
    return r["verdict"].startswith(stats.MARKS[stats.UNDECIDED])


def _head(some: list[dict], shared: dict[str, str]) -> str:
    """A chapter's section head: its title, linked to its page, the count of its verdicts by kind of
    claim (the present verdicts, and as first registered where an amendment changed one), and the
    reasons that several of its rows share, each printed once."""
    esc = html.escape
    first = some[0]
    kinds = [(KINDS["paper"] + "s", "the paper's claim"), ("the book's own hypotheses", "the book's own hypothesis"),
             ("sensitivity readings", SENSITIVITY)]
    counts = "; ".join(f"{name}: {_both(rows_)}" for name, kind in kinds
                       if (rows_ := [r for r in some if r["kind"] == kind]))
    reasons = "".join(f'<li id="why-{label}"><small><b>{label}</b> ({sum(r["why"] == why for r in some)} rows): '
                      f"{_text(_plain(why))}</small></li>" for why, label in shared.items())
    if reasons:
        label = next(iter(shared.values()))
        reasons = ("<p><small>Why some rows below cannot be decided: a reason that several of them share "
                   f"is printed once here, under a label ({label} is chapter {first['chapter']}'s first such "
                   "reason), and those rows give the label instead of the reason.</small></p>"
                   f"<ul>{reasons}</ul>")
    return (f'<h3 style="font-size:1.25em;margin-top:1.5em"><a href="../notebooks/{first["page"]}.html">'
            f'{esc(_title(first["page"]))}</a></h3><p><small>{len(some)} claims. {esc(counts[0].upper() + counts[1:])}.'
            f"</small></p>{reasons}")


FLOOR = "floor or ceiling"  # the rule's reason where both arms sit where the measure cannot be read


def _row(r: dict, shared: dict[str, str], beside: dict[str, str] | None = None) -> str:
    """One claim's row: the chapter's number (linked to the section that prints it), the claim (its
    id, whose it is and what is measured, open for the rest; beneath it, a verdict "? cannot be
    decided here" gives its reason, or names the chapter's shared reason), the effect, the verdict
    (with the verdict as first registered beneath it) and when it was registered."""
    esc = html.escape
    link = f'../notebooks/{r["page"]}.html#{_slug(r["section"])}'
    more = [("what is measured", r["measure"]), ("claim", r["key"]), ("the paper's words", r["quote"]),
            ("units", r["units"] + ("" if r["n"] is None else
                                    f'; {r["n"]} distinct unit{"" if r["n"] == 1 else "s"}')),
            ("trained", r["trained"]), ("why this verdict", r["why"]), ("amended", r["amendments"]),
            ("note", r["note"]), ("registration record corrected", r["corrections"]),
            ("mutations (errors planted on purpose)", r["mutations"])]
    details = "".join(f"<br><small><b>{k}</b>: {_text(_plain(v))}</small>" for k, v in more if v)
    kind = f' ({esc(r["kind as registered"])})' if r["kind as registered"] else ""
    before = f'<br><small>as registered: {esc(r["as registered"])}{kind}</small>' if r["as registered"] else ""
    # an undecided verdict's reason, in the wide claim cell and named as the reason it cannot be
    # decided (not the verdict as registered's); a reason the chapter's rows share, by its label
    why = ""
    if _undecided(r):
        label = shared.get(r["why"])
        reason = f'reason <a href="#why-{label}">{label}</a>, above the table' if label else _text(_plain(r["why"]))
        if FLOOR in r["why"] and r.get("arms"):  # the levels that are the reason, beside it
            first, second = (stats.number(a, 2) for a in r["arms"])
            reason += f"; each arm's mean: {first} and {second} (the effect is the first minus the second)"
        why = f"<small><i>why it cannot be decided here</i>: {reason}</small>"  # below the block <details>
    sensitivity = (f"<br><small>({SENSITIVITY}, not the registered test)</small>"  # not the registered
                   if r["kind"] == SENSITIVITY else "")  # test of the paper's claim or the book's hypothesis
    other = (beside or {}).get(r["key"])
    other = f"<small>{other}</small>" if other else ""
    if other and why:
        other += "<br>"
    return (f'<tr data-chapter="{r["chapter"]}" data-paper="{esc(r["paper"])}" '
            f'data-verdict="{esc(r["verdict"])}" data-kind="{esc(r["kind"])}">'
            f'<td><a href="{link}">{r["chapter"]}</a></td>'
            f'<td><details><summary><b>{esc(r["key"].split("/", 1)[1])}</b> ({esc(r["paper"])}): '
            f'{_text(_short(r["measure"])).replace("`", "")}</summary>{details}</details>{other}{why}</td>'
            f'<td>{_effect(r)}</td><td>{esc(r["verdict"])}{sensitivity}{before}</td>'
            f'<td><small>{_registration_cell(r["registration"])}</small></td></tr>')


TABLE = ('<table class="table" style="table-layout:fixed;width:100%;overflow-wrap:break-word"><colgroup>'
         '<col style="width:2.8em"><col><col style="width:7em"><col style="width:8em"><col style="width:8.5em">'
         '</colgroup><thead><tr><th>ch.</th><th>claim (whose): what is measured; open it for the rest</th>'
         '<th>effect, 95% interval, margin</th><th>verdict</th><th>registered</th></tr></thead>')


def _tally(some: list[dict], verdict: str) -> str:
    """A summary cell: how many of ``some`` read ``verdict`` now, and in brackets how many read it as
    first registered where an amendment changed that count; a dash for none either way."""
    now, first = _counts(some)[verdict], _counts(some, registered=True)[verdict]
    if now == first:
        return str(now) if now else "–"
    return f"{now} ({first})"


def summary() -> str:
    """The page's opening table: per chapter, how many registered tests it decides and how many read
    each verdict (as they read now, and in brackets as first registered where an amendment changed
    the count), then all chapters together, then the sensitivity readings, counted apart. The same
    counts as the chapters' section heads, in a grid; it is not part of the filtered ledger."""
    data = rows()
    tests = [r for r in data if r["kind"] != SENSITIVITY]
    readings = [r for r in data if r["kind"] == SENSITIVITY]
    verdicts = [v for v in ORDER if v != NOT_DECIDED or any(r["verdict"] == v for r in data)]
    head = "".join(f"<th>{html.escape(v)}</th>" for v in verdicts)

    def line(name: str, some: list[dict], bold: bool = False) -> str:
        cells = "".join(f"<td>{_tally(some, v)}</td>" for v in verdicts)
        name = f"<b>{name}</b>" if bold else name
        return f"<tr><td>{name}</td><td>{len(some)}</td>{cells}</tr>"

    body = []
    for n in sorted({r["chapter"] for r in tests}):
        some = [r for r in tests if r["chapter"] == n]
        title = html.escape(re.sub(r"^Chapter \d+: ", "", _title(some[0]["page"])))
        body.append(line(f'{n}, <a href="#chapter-{n}">{title}</a>', some))
    body.append(line("all chapters", tests, bold=True))
    if readings:
        where = stats.listing(sorted({str(r["chapter"]) for r in readings}))
        body.append(line(f"sensitivity readings (chapters {where}), counted apart", readings))
    return ('<table class="table modlib-ledger-summary" style="width:100%"><thead><tr><th>chapter</th>'
            f"<th>tests</th>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
            "<p><small>A count in brackets is the count as first registered, where an amendment changed "
            "it. A sensitivity reading re-reads a test's data another way; it is not a test of its own."
            "</small></p>")


def page() -> str:
    """The ledger's HTML: a line with the number of claims, four menus (chapter, paper, verdict, kind) and one section a
    chapter (anchored ``#chapter-N``): its title, the count of its verdicts, the reasons its rows
    share, and its table. Each menu hides the rows that do not match it, and a chapter whose rows
    are all hidden (plain JavaScript in the page, no kernel)."""
    data = rows()
    esc = html.escape
    menus = {"chapter": sorted({str(r["chapter"]) for r in data}, key=int),
             "paper": sorted({r["paper"] for r in data}), "verdict": sorted({r["verdict"] for r in data}),
             "kind": sorted({r["kind"] for r in data})}
    controls = "".join(
        f'<label>{name} <select data-ledger="{name}"><option value="">all</option>'
        + "".join(f'<option value="{esc(v)}">{esc(v)}</option>' for v in values) + "</select></label> "
        for name, values in menus.items())
    jump = " · ".join(f'<a href="#chapter-{n}">{n}</a>' for n in menus["chapter"])
    sections = []
    for n in menus["chapter"]:
        some = [r for r in data if str(r["chapter"]) == n]
        shared = _shared(some)
        beside = _beside(some)
        sections.append(f'<div class="modlib-ledger-chapter" id="chapter-{n}" data-section="{n}">'
                        f'{_head(some, shared)}{TABLE}<tbody>{"".join(_row(r, shared, beside) for r in some)}'
                        f"</tbody></table></div>")
    readings = sum(r["kind"] == SENSITIVITY for r in data)
    total = f"{len(data)} registered claims: {len(data) - readings} tests"
    total += f" and {readings} sensitivity readings of their data" if readings else ""
    total += " (the table at the top of the page counts their verdicts)"
    script = """<script>(function(){var root=document.currentScript.parentNode;
var menus=root.querySelectorAll('select[data-ledger]');function apply(){var shown=0;
root.querySelectorAll('tbody tr').forEach(function(tr){var ok=true;menus.forEach(function(m){
if(m.value&&tr.dataset[m.dataset.ledger]!==m.value){ok=false;}});tr.style.display=ok?'':'none';if(ok){shown++;}});
root.querySelectorAll('.modlib-ledger-chapter').forEach(function(s){var any=false;
s.querySelectorAll('tbody tr').forEach(function(tr){if(tr.style.display!=='none'){any=true;}});
s.style.display=any?'':'none';});
root.querySelector('.modlib-ledger-count').textContent=shown+' shown';}
menus.forEach(function(m){m.addEventListener('change',apply);});apply();})();</script>"""
    return (f'<div class="modlib-ledger"><p>{esc(total)}.</p><p>Chapter: {jump}</p><p>{controls}'
            f'<span class="modlib-ledger-count"></span></p>{"".join(sections)}{script}</div>')
