"""The claims ledger: every registered claim of the seven chapters in one table (the book page
``book/ledger.md``), drawn from the registry (``modlib/<chapter>/claims.toml``, :mod:`modlib.claims`)
and the decisions the chapters made on their stored full results (``book/ledger/<chapter>.json``).

:func:`table` gives the rows as a ``pandas.DataFrame``; :func:`page` the page's HTML: the table with
three menus (paper, verdict, kind) that filter its rows in the browser, with no kernel.
"""

from __future__ import annotations

import html
import re

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


def _registration(c: claims.Registered, stored: dict[str, str]) -> str:
    registered = claims.registered_at(c.chapter).get(c.id)
    before = claims.registered_before_data(c, stored, registered)
    new = claims.registered_before_data(c, stored, registered, last=True)
    when = ("before the data" if before else
            "before its newest data, after an arm it reads was stored" if new else
            "after the data" if before is False else "date of the data unknown")
    said = f"amended, registered {when}" if c.amendments else f"registered {when}"
    corrected = claims.snapshot(c.chapter).get(c.id, {}).get("corrections", ())
    return said + "".join(f"; registration corrected in {x['commit']} ({', '.join(x['fields'])}): {x['reason']}"
                          for x in corrected)


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
        said.append(f"{m}: {'moves it' if moves else 'leaves it' if moves is False else 'cannot be replayed'}")
    return "; ".join(said)


def rows() -> list[dict]:
    """One dict per registered claim, in chapter order: what the ledger shows."""
    out, found = [], mutations.saved()
    for chapter in claims.CHAPTERS:
        decided, stored = claims.saved(chapter), claims.first_stored(chapter)
        for cid, c in claims.registry(chapter).items():
            d = decided.get(c.key)
            out.append({
                "chapter": CHAPTER_NUMBER[chapter], "page": chapter, "section": c.section, "key": c.key,
                "kind": "the paper's claim" if c.whose == "paper" else "the book's own hypothesis",
                "paper": PAPERS.get(c.paper, c.paper) if c.paper else "the book",
                "claim": c.name, "quote": c.quote, "measure": c.measure, "units": c.units,
                "effect": d.estimate if d else None, "low": d.low if d else None, "high": d.high if d else None,
                "n": d.units if d else None, "margin": c.margin, "size": c.size,
                "verdict": _verdict_words(d.outcome if d else None, c.own),
                "as registered": (_verdict_words(d.registered_outcome, c.original()["whose"] == "own")
                                  if d and d.registered_outcome else ""),
                "registration": _registration(c, stored), "amendments": _amendments(c), "note": c.note,
                "trained": c.trained, "mutations": _mutations(c, d, found),
            })
    return out


def table():
    """The ledger as a ``pandas.DataFrame``, one row per registered claim."""
    import pandas as pd

    return pd.DataFrame(rows())


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _num(v) -> str:
    """An effect as the ledger prints it: a number that rounds to 0 has no sign (:func:`stats.number`)."""
    return "" if v is None else stats.number(v, 2, sign=True)


def page() -> str:
    """The ledger's HTML: a summary line, three menus and the table; each menu hides the rows that
    do not match it (plain JavaScript in the page, no kernel)."""
    data = rows()
    esc = html.escape
    menus = {"paper": sorted({r["paper"] for r in data}), "verdict": sorted({r["verdict"] for r in data}),
             "kind": sorted({r["kind"] for r in data})}
    controls = "".join(
        f'<label>{name} <select data-ledger="{name}"><option value="">all</option>'
        + "".join(f'<option value="{esc(v)}">{esc(v)}</option>' for v in values) + "</select></label> "
        for name, values in menus.items())
    body = []
    for r in data:
        link = f'../notebooks/{r["page"]}.html#{_slug(r["section"])}'
        interval = ("" if r["low"] is None else  # its ends as the chapters print them
                    stats.ends(r["low"], r["high"], r["margin"]))
        more = [("claim", r["key"]), ("the paper's words", r["quote"]),
                ("units", f'{r["units"]}; {"" if r["n"] is None else r["n"]} distinct units'),
                ("trained", r["trained"]), ("amended", r["amendments"]), ("note", r["note"]),
                ("mutations", r["mutations"])]
        details = "".join(f"<br><small><b>{k}</b>: {esc(v)}</small>" for k, v in more if v)
        before = f'<br><small>as registered: {esc(r["as registered"])}</small>' if r["as registered"] else ""
        body.append(
            f'<tr data-paper="{esc(r["paper"])}" data-verdict="{esc(r["verdict"])}" data-kind="{esc(r["kind"])}">'
            f'<td><a href="{link}">{r["chapter"]}</a></td><td>{esc(r["paper"])}</td>'
            f'<td><details><summary>{esc(r["measure"])}</summary>{details}</details></td>'
            f'<td>{_num(r["effect"])}<br><small>{interval}</small></td><td>{r["margin"]:g}</td>'
            f'<td>{esc(r["verdict"])}{before}</td><td><small>{esc(r["registration"])}</small></td></tr>')
    counts = {}
    for r in data:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    summary = f"{len(data)} registered claims: " + ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
    script = """<script>(function(){var root=document.currentScript.parentNode;
var menus=root.querySelectorAll('select[data-ledger]');function apply(){var shown=0;
root.querySelectorAll('tbody tr').forEach(function(tr){var ok=true;menus.forEach(function(m){
if(m.value&&tr.dataset[m.dataset.ledger]!==m.value){ok=false;}});tr.style.display=ok?'':'none';if(ok){shown++;}});
root.querySelector('.modlib-ledger-count').textContent=shown+' shown';}
menus.forEach(function(m){m.addEventListener('change',apply);});apply();})();</script>"""
    return (f'<div class="modlib-ledger"><p>{esc(summary)}.</p><p>{controls}<span class="modlib-ledger-count">'
            f'</span></p><table class="table" style="table-layout:fixed;width:100%;overflow-wrap:anywhere">'
            f'<colgroup><col style="width:3em"><col style="width:6.5em"><col><col style="width:7em">'
            f'<col style="width:4.5em"><col style="width:8em"><col style="width:7em"></colgroup><thead><tr><th>ch.</th><th>whose</th><th>what is measured (open it for the '
            f'claim, the paper\'s words, the units and the bar for trained)</th><th>effect, 95% interval</th><th>margin</th><th>verdict</th><th>registered</th></tr>'
            f'</thead><tbody>{"".join(body)}</tbody></table>{script}</div>')
