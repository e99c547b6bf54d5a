"""The book's registry of claims: every verdict a page prints is decided for a claim declared here,
in ``modlib/<chapter>/claims.toml``, under the one rule of :data:`modlib.stats.RULE`.

A claim is *registered* when its fields are first written to the chapter's snapshot,
``modlib/<chapter>/claims_registered.json`` (``python -m modlib.claims register``), ideally before
the results it reads are computed. From then on its fields are fixed: a change is an *amendment*
(:class:`Amendment`: date, field, old -> new, reason), kept in the TOML file beside the claim, and
the page then prints the verdict under the registered fields beside the amended one. Whether a claim
was registered before its data is not typed by anyone: :func:`written` compares the commit that
registered it with the times its results were computed.

The chapters decide through :func:`decide` (an :class:`~modlib.stats.Effect`, or an interval, plus the
run-time conditions "every arm trained", "every control passed", "measurable") and write the statement
with :func:`statement`; each decision is recorded (:func:`decisions`) and, at the ``full`` profile,
saved to ``book/ledger/<chapter>.json`` (:func:`save`), from which the claims ledger page is drawn.

A claim in ``claims.toml``::

    [[claim]]
    id = "selective"                  # unique in the chapter; the registry's key is "<chapter>/<id>"
    name = "removing a mask is selective"   # the statement as the page names it
    whose = "paper"                   # "paper" (reproduced / not reproduced) or "own" (holds / does not hold)
    paper = "csordas2021"             # the citation key (references.bib), for a paper's claim
    quote = "…"                       # the paper's words, with their section
    measure = "…"                     # what is computed, in what unit
    units = "network"                 # the independent units the interval is over
    arms = ["…", "…"]                 # first minus second (or one arm against 0)
    direction = 1                     # +1: the claim says the measure is above 0; -1: below
    size = 0.31                       # the paper's reported effect (leave out where it gives a direction only)
    margin = 0.05                     # the smallest effect that counts
    margin_why = "…"
    trained = "…"                     # the bar for "trained" this claim uses
    reads = ["width512x2-seed*"]      # the stored full results it reads (glob patterns, in the chapter)
    mutations = ["swap arms"]         # the analysis errors that must move its verdict
    section = "specialization"        # the page's section (anchor) that prints it
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fnmatch
import json
import re
import subprocess
import tomllib
from dataclasses import asdict, dataclass, field, replace
from functools import cache
from pathlib import Path

import numpy as np

from modlib import stats

PACKAGE = Path(__file__).resolve().parent
CHAPTERS = ("redundant_input_toy", "compositional_sprites", "resists_at_scale", "weight_masks",
            "structural_compositionality", "pretraining_consistency", "bridge")
WHOSE = ("paper", "own")
MUTATIONS = ("swap arms", "swap target and other", "shuffle units", "random mask as dense", "arm untrained")
# the fields that fix a claim: changing one after registration is an amendment
FIXED = ("name", "whose", "paper", "quote", "measure", "units", "arms", "direction", "size", "margin",
         "trained", "reads", "mutations")
LEDGER = PACKAGE.parent / "book" / "ledger"  # the decisions at full, one JSON file a chapter (a checkout only)


@dataclass(frozen=True)
class Amendment:
    """A change to a registered claim: on ``date`` its ``field`` went from ``old`` to ``new``, for
    ``reason``. The verdict under ``old`` is computed beside the new one, never typed. ``seen``: the
    results the claim reads had been seen when it changed (false only where none had been computed,
    e.g. a run refused before it stored anything)."""

    date: str
    field: str
    old: object
    new: object
    reason: str
    seen: bool = True


@dataclass(frozen=True)
class Registered:
    """One claim of the registry (the fields are described in this module's docstring)."""

    chapter: str
    id: str
    name: str
    whose: str
    measure: str
    units: str
    arms: tuple[str, ...]
    direction: int
    margin: float
    margin_why: str
    trained: str
    reads: tuple[str, ...]
    section: str
    mutations: tuple[str, ...] = ()
    paper: str = ""
    quote: str = ""
    size: float | None = None
    note: str = ""  # how the page reads it (e.g. "post hoc: chosen after the results were seen")
    amendments: tuple[Amendment, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.chapter}/{self.id}"

    @property
    def own(self) -> bool:
        return self.whose == "own"

    def fixed(self) -> dict:
        """The fields that registration fixes, as JSON values."""
        return {k: _jsonable(getattr(self, k)) for k in FIXED}

    def original(self) -> dict:
        """The fixed fields as they were registered: the amendments undone, newest first."""
        fields = self.fixed()
        for a in reversed(self.amendments):
            fields[a.field] = _jsonable(a.old)
        return fields

    def rule_arguments(self, fields: dict | None = None) -> dict:
        """The arguments of :func:`modlib.stats.verdict` these fields give: the paper's effect with
        its sign (or the margin, standing in where the paper gives a direction only), the margin and
        the source of the number."""
        f = self.fixed() if fields is None else fields
        s = 1.0 if f["direction"] > 0 else -1.0
        if f["size"] is None:
            return {"paper": s * float(f["margin"]) if f["margin"] else s * stats.CLEAR, "margin": float(f["margin"]),
                    "source": stats.STATED if f["margin"] else "the paper's"}
        return {"paper": s * abs(float(f["size"])), "margin": float(f["margin"]), "source": "the paper's"}


def _same(a, b) -> bool:
    """Two values of a field, equal once "no value" (None, "", "none") and tuples are read alike."""
    def norm(v):
        v = _jsonable(v)
        return None if v in (None, "", "none") else v
    return norm(a) == norm(b)


def _jsonable(value):
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    return value


class RegistryError(ValueError):
    """A claims.toml that does not follow the schema, or a claim that is not registered."""


def _load(chapter: str, path: Path) -> dict[str, Registered]:
    try:
        raw = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise RegistryError(f"{path}: not valid TOML ({e})") from None
    out = {}
    for entry in raw.get("claim", []):
        where = f"{path}: claim {entry.get('id', '?')!r}"
        missing = [k for k in ("id", "name", "whose", "measure", "units", "arms", "direction", "margin",
                               "margin_why", "trained", "reads", "section") if k not in entry]
        if missing:
            raise RegistryError(f"{where}: missing {', '.join(missing)}")
        if entry["whose"] not in WHOSE:
            raise RegistryError(f"{where}: whose={entry['whose']!r}; choose one of {', '.join(WHOSE)}")
        if entry["direction"] not in (1, -1):
            raise RegistryError(f"{where}: direction={entry['direction']!r}; choose 1 or -1")
        if entry["whose"] == "paper" and not (entry.get("paper") and entry.get("quote")):
            raise RegistryError(f"{where}: a paper's claim needs `paper` and `quote` (the paper's words)")
        bad = [m for m in entry.get("mutations", []) if m not in MUTATIONS]
        if bad:
            raise RegistryError(f"{where}: mutations {bad}; choose from {', '.join(MUTATIONS)}")
        if entry["id"] in out:
            raise RegistryError(f"{where}: the id is registered twice")
        amendments = tuple(Amendment(**a) for a in entry.pop("amendment", []))
        unknown = [a.field for a in amendments if a.field not in FIXED]
        if unknown:
            raise RegistryError(f"{where}: amendments of {unknown}; a registered claim fixes {', '.join(FIXED)}")
        entry = {k: tuple(v) if isinstance(v, list) else v for k, v in entry.items()}
        try:
            out[entry["id"]] = Registered(chapter=chapter, amendments=amendments, **entry)
        except TypeError as e:
            raise RegistryError(f"{where}: {e}") from None
    return out


@cache
def registry(chapter: str) -> dict[str, Registered]:
    """The registered claims of ``chapter``, by id (``modlib/<chapter>/claims.toml``)."""
    if chapter not in CHAPTERS:
        raise RegistryError(f"chapter={chapter!r}; choose one of {', '.join(CHAPTERS)}")
    path = PACKAGE / chapter / "claims.toml"
    return _load(chapter, path) if path.exists() else {}


def get(key: str) -> Registered:
    """The claim ``"<chapter>/<id>"``."""
    chapter, _, cid = key.partition("/")
    claims = registry(chapter)
    if cid not in claims:
        near = sorted(claims)[:8]
        raise RegistryError(f"claim {key!r} is not registered in modlib/{chapter}/claims.toml "
                            f"(registered there: {', '.join(near)}{' …' if len(claims) > 8 else ''})")
    return claims[cid]


# ---------------------------------------------------------------- deciding, and what was decided


@dataclass(frozen=True)
class Decision:
    """What :func:`decide` found for one claim: the verdict under the claim's present fields and,
    where it was amended, under the fields it was registered with."""

    key: str
    outcome: str
    why: str
    estimate: float
    low: float
    high: float
    units: int
    registered_outcome: str | None = None  # under the registered fields, where an amendment changed them
    open: bool = False  # undecided only by where the interval lies
    arms: tuple = ()  # the two arms' per-unit values ([n], [m]) where an Effect was given
    how: tuple = ()  # the Effect's function and arguments (stats.paired, unpaired or correlation)
    conditions: dict = field(default_factory=dict)  # trained, controls, measurable as given; reason, where one left it undecided


_DECISIONS: dict[str, Decision] = {}
_PLAIN: dict[str, str] = {}  # by key: the verdict's plain words where its interval is clear of 0 (stats.Verdict.plain)


def decide(key: str, effect: stats.Effect | None = None, *, low: float | None = None, high: float | None = None,
           units: int | None = None, estimate: float | None = None, trained: bool = True,
           controls: bool = True, measurable: bool = True, what: str = "", over: str = "",
           as_registered: dict | None = None, reason: str = "") -> stats.Verdict:
    """The verdict on the registered claim ``key`` (``"<chapter>/<id>"``) under the book's rule:
    from an ``effect`` (:class:`~modlib.stats.Effect`), or from an interval ``low``..``high`` over
    ``units`` (with its ``estimate``). The direction, the paper's number and the margin come from the
    registry, never from the caller; ``trained``, ``controls`` and ``measurable`` are the run-time
    conditions of :func:`~modlib.stats.verdict`. ``as_registered``: where an amendment changed a
    condition the caller computes (e.g. a density gate taken over other units), that condition as
    registered (``{"controls": ...}``, ``trained``, ``measurable`` or ``reason``), or the ``effect``
    the claim as registered reads where an amended measure admits other units, for the verdict as
    registered.
    ``reason``: a condition outside the rule's arguments that leaves the claim undecided (e.g. two
    arms' masks too far apart in density to compare), in words: the verdict is then "cannot be
    decided here" for that reason, under the present and the registered fields alike.
    The decision is recorded (:func:`decisions`)."""
    c = get(key)

    def rule(fields: dict, effect: stats.Effect | None = effect, **conditions) -> stats.Verdict:
        args = c.rule_arguments(fields)
        conditions = {"trained": trained, "controls": controls, "measurable": measurable, **conditions}
        if effect is not None:
            return effect.verdict(**conditions, **args)
        if low is None or high is None or units is None:
            raise ValueError(f"{key}: give an effect, or low, high and units")
        return stats.verdict(low, high, units=units, what=what, over=over, estimate=estimate, **conditions, **args)

    registered = dict(as_registered or {})
    reason_then = registered.pop("reason", reason)
    registered.setdefault("effect", effect)
    v = rule(c.fixed())
    before = rule(c.original(), **registered).outcome if c.amendments else None
    if reason:
        v = stats.Verdict(stats.UNDECIDED, reason)
    if before is not None and reason_then:
        before = stats.UNDECIDED
    if effect is not None:
        est, lo, hi, n = effect.mean, effect.low, effect.high, effect.units
    else:
        est, lo, hi, n = (estimate if estimate is not None else (low + high) / 2), low, high, units
    arms = tuple([float(x) for x in arm] for arm in effect.arms) if effect is not None else ()
    how = (effect.how[0], list(effect.how[1]), dict(effect.how[2])) if effect is not None and effect.how else ()
    _DECISIONS[key] = Decision(key, v.outcome, v.why, float(est), float(lo), float(hi), int(n), before, v.open,
                               arms, how, {"trained": bool(trained), "controls": bool(controls),
                                           "measurable": bool(measurable), "what": what, "over": over,
                                           **({"reason": reason} if reason else {})})
    _PLAIN[key] = "" if reason else v.plain
    said = ""
    a = amended(key)
    if a is not None and a.shown:
        said = f"changed {a.when} ({changes_in_words(a.shown)}; when and why: the claims ledger); " \
               + ("the same verdict as under the claim as registered" if a.same else
                  f"under the claim as registered: {a.first}")
    return stats.Verdict(v.outcome, v.why, v.open, key, said, v.plain if not reason else "")


UNSHOWN = ("mutations",)  # amended fields a verdict's words leave to the ledger: they cannot move a verdict
SHORT = 40  # an amendment's old and new values shown on the page up to this many characters together


def changes_in_words(amendments: tuple[Amendment, ...]) -> str:
    """What the amendments changed, as a page prints it beside a verdict: ``"margin 0.5 → 0.05"`` for
    short values; a field whose values are sentences (:data:`WORDED`) or long, by what it is for a
    reader (:data:`FIELD_WORDS`): "the bar for 'trained' and the quoted passage of the paper were
    revised"; the date and the reason are in the claims ledger."""
    fields = {a.field for a in amendments}

    def one(a: Amendment) -> str:
        if a.field == "whose":  # "paper" / "own", in the words a reader knows
            kinds = {"paper": "a paper's claim", "own": "the book's own hypothesis"}
            return f"{kinds.get(a.old, a.old)} → {kinds.get(a.new, a.new)}"
        if a.field == "size":
            return f"the paper's size {a.old if a.old not in (None, '', 'none') else 'none'} → " \
                   f"{a.new if a.new not in (None, '', 'none') else 'none'}"
        return f"{a.field} {a.old} → {a.new}"
    # a citation key is no reader's word: the paper's name goes with "whose" where that changed too
    kept = [a for a in amendments if not (a.field == "paper" and "whose" in fields)]
    short = [a for a in kept if a.field in ("whose", "size")
             or (a.field not in WORDED and len(f"{a.old}{a.new}") <= SHORT)]
    revised = list(dict.fromkeys(FIELD_WORDS.get(a.field, f"its {a.field}") for a in kept if a not in short))
    said = [one(a) for a in short]
    if revised:  # a long value by what it is for a reader: "the bar for 'trained' and the quoted passage"
        said.append(f"{stats.listing(revised)} {'was' if len(revised) == 1 else 'were'} revised")
    return "; ".join(said)


# a field whose old and new values are too long to print, in a reader's words (:func:`changes_in_words`)
FIELD_WORDS = {"name": "the claim's name", "whose": "whose claim it is", "paper": "the paper cited",
               "quote": "the quoted passage of the paper", "measure": "the measure",
               "units": "what counts as a unit", "arms": "the arms compared", "direction": "the direction",
               "size": "the paper's size", "margin": "the margin", "trained": "the bar for 'trained'",
               "reads": "the list of results it reads", "mutations": "the mutations it must notice"}
WORDED = ("trained", "quote", "measure", "units", "reads")  # always in words: their values are sentences


def statement(v: stats.Verdict, text: str) -> stats.Claim:
    """The page's statement of the claim that ``v`` decided (:func:`decide`), named as registered:
    ``text``, then the verdict in the words for the claim's kind (a paper's: ✓ / ✗ / ?; the book's
    own: holds / does not hold / ?), "(post hoc)" after it where the claim was written down after its
    results were seen (:func:`written`), why, and for an amended claim the verdict as registered."""
    if not v.claim:
        raise RegistryError("a verdict printed on a page must come from claims.decide (a registered claim)")
    c = get(v.claim)
    out = stats.claim(c.name, v, text, own=c.own)
    if not post_hoc(v.claim):
        return out
    marked = f"**{out.marked}**"  # the verdict, then the label of a claim written down after its results
    return replace(out, text=out.text.replace(marked, f"{marked} ({POST_HOC})", 1))


def tagged(c: stats.Claim) -> str:
    """A statement's mark and outcome as a page's prose quotes it (``c.marked``: "✓ reproduced",
    "holds", "check passed"), with "(post hoc)" after it where its claim was written down after its
    results were seen (:func:`written`), as :func:`statement` and :func:`words` print it."""
    v = getattr(c, "verdict", None)
    return c.marked if v is None or not v.claim else post_hoc_words(c.marked, v.claim)


def post_hoc_words(words: str, key: str) -> str:
    """``words``, a verdict on claim ``key`` ("holds"), with "(post hoc)" after them where the claim
    was written down after its results were seen (:func:`post_hoc`): "holds (post hoc)"."""
    late = post_hoc(key)
    return f"{words} ({late})" if late else words


def untagged(text: str) -> str:
    """``text`` without the "(post hoc)" labels that :func:`statement`, :func:`words`, :func:`late` and
    :func:`tagged` add: a verdict's wording whatever its claim's date, for the tests that compare it."""
    return text.replace(f" ({POST_HOC})", "").replace(f"({POST_HOC}; ", "(")


def late(v: stats.Verdict, said: str) -> str:
    """``said``, the verdict ``v`` as a page of chapters 1-3 prints it after its interval
    (:func:`modlib.stats.marked`: " — ✓ reproduced (why)", " — holds"), with "(post hoc)" after its
    outcome where the claim was written down after its results were seen (:func:`written`), as
    :func:`statement` and :func:`words` print it; ``said`` unchanged otherwise."""
    if not v.claim or not post_hoc(v.claim):
        return said
    for outcome in (f"{v.mark} {v.outcome}", stats.HOLDS, stats.DOES_NOT_HOLD):
        head = f" — {outcome}"
        if said.startswith(head):
            rest = said[len(head):]
            return head + (f" ({POST_HOC}; {rest[2:]}" if rest.startswith(" (") else f" ({POST_HOC}){rest}")
    raise ValueError(f"not a verdict as stats.marked prints it: {said!r}")


def outcome_words(outcome: str, own: bool) -> str:
    """An outcome in the words for its claim's kind: "holds" / "does not hold" for the book's own
    hypothesis (``own``), the mark and the outcome ("✓ reproduced", "? cannot be decided here") else."""
    if own and outcome != stats.UNDECIDED:
        return stats.HOLDS if outcome == stats.REPRODUCED else stats.DOES_NOT_HOLD
    return f"{stats.MARKS[outcome]} {outcome}"


# the one line of plain words that keys the marks in every chapter's "What we found" box (each page
# glues it as "<short>-marks-key"): one wording for the whole book, in three parts (:func:`marks_key`)
KEY_PAPER = (f"{outcome_words(stats.REPRODUCED, False)} / {outcome_words(stats.NOT_REPRODUCED, False)}: "
             "a paper's claim was found / not found at this scale")
KEY_OWN = (f"{stats.HOLDS} / {stats.DOES_NOT_HOLD}: a hypothesis of the book's own passed / failed its "
           "test")
KEY_UNDECIDED = (f"{outcome_words(stats.UNDECIDED, False)}: the data settle neither way (an interval "
                 "that allows both, an effect whose estimate is short of the margin while its interval "
                 "reaches it, too few units, or a condition of the test not met).")
# the two words of the boxes that are the registry's, defined where a reader meets them (issue 57)
KEY_TERMS = ("A claim is registered when it is written down, with its test and margin, in the book's "
             "claims registry, and amended when that entry is changed afterwards, in this edition mostly after "
             "its results were seen; a page then gives the verdict as first registered too.")
MARKS_KEY = f"Marks: {KEY_PAPER}; {KEY_OWN}; {KEY_UNDECIDED} {KEY_TERMS}"

POST_HOC = "post hoc"  # the label beside a verdict whose claim was written down after its results were seen
# how to read the marks of claims written down after their results were seen (:func:`when_registered`)
READ_POST_HOC = "their marks describe these runs, not the outcome of a test fixed in advance"


@cache
def _created(chapter: str) -> dict[str, str]:
    """When the computation of each stored full result of ``chapter`` began (``name -> ISO 8601``):
    its own record's ``created`` (when it was stored) less its ``wall_time_s`` where it records one,
    so that a claim registered while its results were being computed does not count as registered
    before them; from the store the pages read; empty where it holds none."""
    from modlib import results

    folder = results.default_root() / "full" / chapter
    created, took = results.recorded(folder, "created"), results.recorded(folder, "wall_time_s")
    return {name: (_dt.datetime.fromisoformat(when) - _dt.timedelta(seconds=float(took[name]))).isoformat()
            if name in took and len(when) > 10 else when for name, when in created.items()}


def _note_before(note: str) -> bool:
    """Whether a claim's registry ``note`` says it was written down before results it reads were
    computed, in any of the registry's wordings: "before its result was computed", "before the
    results it reads were computed", "before drawn-alpha-more and drawn-alpha-open-more (seeds 5-9)
    were computed", "before the five scan-C-<frame> results ..." (one clause: up to the next ";")."""
    return re.search(r"\bbefore\b[^;]*?\b(?:(?:was|were) computed|results?\b)", note) is not None


def registration(c: Registered) -> str | None:
    """When claim ``c`` was registered: the commit time that first wrote it to its snapshot
    (:func:`registered_at`), else the snapshot's date (no git); None where neither is known."""
    return registered_at(c.chapter).get(c.id) or snapshot(c.chapter).get(c.id, {}).get("registered")


def written(c: Registered) -> str | None:
    """When claim ``c`` was written down against the stored full results it reads: ``"after"`` its
    first results began to be computed (its registry note begins "post hoc" or says it was
    "registered after" an outcome was seen, or it was registered later, even while they ran),
    ``"before"`` them, ``"newest"`` (before the newest of them, after older arms it compares with),
    or None where that cannot be told here (none of them stored, or nothing stored yet for one of the
    patterns it reads: a claim registered before part of its data exists is not yet read on it, and
    its older inputs alone would date it wrongly). The results' times are their own
    records (``created`` less ``wall_time_s``: when each began to be computed, :func:`_created`, so
    that it works outside a checkout); the registration's is the commit that first wrote the claim
    to its snapshot (:func:`registered_at`), or, without git, the snapshot's date, which orders a
    registration on the day of its data only where the note does (:func:`_note_before`). The
    chapters' keys and the claims ledger both read it."""
    if c.note.lower().startswith(POST_HOC) or re.search(r"\bregistered after\b", c.note):
        return "after"  # the note says so: an outcome seen before, even outside the store
    stored = _created(c.chapter)
    if any(not any(fnmatch.fnmatch(name, p) for name in stored) for p in c.reads):
        return None
    when = _read_dates(c, stored)
    registered = registration(c)
    if not when or not registered:
        return None
    first, last = (f(when, key=_instant) for f in (min, max))
    if len(registered) == 10:  # a date only: to the day
        day, first, last = registered, first[:10], last[:10]
        if day == first:
            return "before" if _note_before(c.note) else None
        if day == last:
            return "newest" if _note_before(c.note) else None
    return "before" if _earlier(registered, first) else "newest" if _earlier(registered, last) else "after"


def post_hoc(key: str) -> str:
    """:data:`POST_HOC` where claim ``key`` was written down after its first results were seen
    (:func:`written`), else "": for a page to set beside the claim's verdict (glued)."""
    return POST_HOC if written(get(key)) == "after" else ""


def marks_key(chapter: str) -> str:
    """:data:`MARKS_KEY` with only the marks ``chapter``'s registered claims can take: without the
    paper's ✓ / ✗ where every claim is the book's own hypothesis, without holds / does not hold where
    none is; the whole key for a chapter with both kinds. What "registered" and "amended" mean
    (:data:`KEY_TERMS`) and when the chapter's claims were written down (:func:`when_registered`)
    follow."""
    kinds = {c.own for c in registry(chapter).values()}
    parts = [part for part, own in ((KEY_PAPER, False), (KEY_OWN, True)) if own in kinds]
    return f"Marks: {'; '.join(parts + [KEY_UNDECIDED])} {KEY_TERMS} {when_registered(chapter)}"


def when_registered(chapter: str) -> str:
    """One sentence on when ``chapter``'s claims were written down against their data
    (:func:`written`): how many after their first results were seen, so that a reader does not
    take a verdict for the outcome of a test registered in advance; the claims ledger dates each."""
    told = [written(c) for c in registry(chapter).values()]
    n, after = len(told), told.count("after")
    if after == n:
        return (f"All {n} claims of this chapter were written down after their first results were seen "
                f"(post hoc): {READ_POST_HOC}.")
    if told.count("before") == n:
        return f"All {n} claims of this chapter were written down before their results were computed."
    parts = [f"{after} of this chapter's {n} claims were written down after their first results were seen "
             f"(post hoc): {READ_POST_HOC}"]
    for what, words in (("before", "before {its} results were computed"),
                        ("newest", "before the newest results {it} read{s} were computed (older ones were already stored)"),
                        (None, "not dated here, having no stored full result or no time that orders a registration "
                               "on the day of {its} data")):
        count = told.count(what)
        if count:  # one claim: "its", "it compares"; more: "their", "they compare"
            one = count == 1
            parts.append(f"{count} " + words.format(its="its" if one else "their", it="it" if one else "they",
                                                    s="s" if one else ""))
    return "; ".join(parts) + ". The claims ledger dates each claim."


AMENDED = "†"  # beside a verdict whose claim was amended after its results were seen, the verdict unchanged


@dataclass(frozen=True)
class Amended:
    """What the amendments of one registered claim changed, as :func:`amended` finds it: the facts a
    page words its own note on an amendment from. ``shown``: the amendments of fields a page shows
    (not in :data:`UNSHOWN`); ``seen``: those made after the claim's results were seen, of any field;
    ``now`` and ``first``: the verdict last decided in this process (:func:`decide`), in the words for
    the claim's kind (:func:`outcome_words`), under the claim as it stands and as first registered
    (:func:`registered_words`), both None where it was not decided (since it was amended).

    E.g. chapter 4's ``class-hurts`` (its margin 0.5 amended to 0.05 after the results were seen),
    decided on an interval +0.10 to +0.20: ``shown == seen == (<the margin's amendment>,)``,
    ``seen_fields == {"margin"}``, ``seen_words == {"the margin"}``, ``now == "✓ reproduced"``,
    ``first == "✗ not reproduced"``, ``same`` false; ``when == "after the results were seen"``."""

    key: str
    shown: tuple[Amendment, ...]
    seen: tuple[Amendment, ...]
    now: str | None
    first: str | None

    @property
    def decided(self) -> bool:
        """Whether the claim, as amended, was decided in this process (:func:`decide`)."""
        return self.now is not None

    @property
    def same(self) -> bool:
        """Whether the claim, decided, reaches the same verdict, in the same words, under the claim as
        first registered as under the claim as it stands."""
        return self.decided and self.first == self.now

    @property
    def seen_fields(self) -> frozenset[str]:
        """The fields changed after the results were seen (of ``seen``)."""
        return frozenset(a.field for a in self.seen)

    @property
    def seen_words(self) -> frozenset[str]:
        """:attr:`seen_fields` in a reader's words (:data:`FIELD_WORDS`): "the margin"."""
        return frozenset(FIELD_WORDS.get(f, f) for f in self.seen_fields)

    @property
    def shown_after_seen(self) -> bool:
        """Whether an amendment a page shows (of ``shown``) was made after the results were seen."""
        return any(a.seen for a in self.shown)

    @property
    def when(self) -> str:
        """When the amendments a page shows were made, as its notes say it: "after the results were
        seen" (:attr:`shown_after_seen`), else "before its results were computed"."""
        return "after the results were seen" if self.shown_after_seen else "before its results were computed"


def amended(key: str) -> Amended | None:
    """What the amendments of the registered claim ``key`` changed (:class:`Amended`): which of them
    a page shows, which were made after the results were seen, and the verdict last decided in this
    process now and as first registered; None where the claim was never amended. The one reading of
    a claim's amendments that every page's note on them words in its own way."""
    c = get(key)
    if not c.amendments:
        return None
    first = registered_words(key)  # None where no decision computed the verdict as first registered
    return Amended(key, tuple(a for a in c.amendments if a.field not in UNSHOWN),
                   tuple(a for a in c.amendments if a.seen),
                   None if first is None else outcome_words(_DECISIONS[key].outcome, c.own), first)


def amended_unchanged(key: str) -> bool:
    """Whether the claim ``key``, as last decided (:func:`decide`), was amended after its results
    were seen (an amendment a page shows) and reaches the same verdict under the claim as first
    registered: what :data:`AMENDED` marks."""
    a = amended(key)
    return a is not None and a.shown_after_seen and a.same


def short_text(c: stats.Finding) -> str:
    """A statement's text (:func:`statement`) with its closing sentence on the amendment shortened to
    :data:`AMENDED` where the amendment left the verdict as it was (:func:`amended_unchanged`): for a
    page that says once, below its statements, what the amendments changed. Any other text (a check's,
    which has no verdict) as it is."""
    v = getattr(c, "verdict", None)
    if v is None or not v.claim or not v.amended or not amended_unchanged(v.claim):
        return c.text
    return c.text.replace(stats.amended_sentence(v), f" {AMENDED}")


NOT_DECIDED = "not decided at this profile"  # words() of a registered claim no page decided in this process


def words(key: str, why: bool = False) -> str:
    """The verdict last decided for the registered claim ``key`` in this process (:func:`decide`), in
    the words for its kind, as :func:`statement` prints it: "✓ reproduced", "✗ not reproduced",
    "holds", "does not hold", "? cannot be decided here", with "(post hoc)" where the claim was written
    down after its results were seen (:func:`written`); an amended claim's verdict is followed by
    the verdict as registered where its words differ (another outcome, or another kind's words). ``why``: an undecided verdict's reason follows in
    brackets (:func:`modlib.stats.undecided_reason`), or, for a decided one whose interval is clear of 0,
    its plain words (:func:`plain`; an undecided one's reason already says them). For a page's prose (glued), so that the prose
    names a verdict without typing it; :data:`NOT_DECIDED` where the claim was not decided (a
    result not made at this profile)."""
    c = get(key)
    d = _DECISIONS.get(key)
    if d is None:
        return NOT_DECIDED
    text = outcome_words(d.outcome, c.own)
    reason = stats.undecided_reason(stats.Verdict(d.outcome, d.why)) if why else ""
    late = post_hoc(key)  # written down after its results were seen
    said = "; ".join(x for x in (late, reason or (plain(key) if why else "")) if x)
    if said:
        text += f" ({said})"
    a = amended(key)
    if a is not None and a.decided and not a.same:  # another outcome or kind's words as registered
        text += f" (as registered: {a.first})"
    return text


def registered_words(key: str) -> str | None:
    """The verdict last decided for the amended claim ``key`` under the claim as first registered, in
    the words for that claim's kind (:func:`outcome_words`); None where it was not decided or never
    amended."""
    d = _DECISIONS.get(key)
    if d is None or d.registered_outcome is None:
        return None
    return outcome_words(d.registered_outcome, get(key).original()["whose"] == "own")


def reason(key: str) -> str:
    """Why the verdict last decided for ``key`` is what it is, in words without its interval ("wide
    enough for no effect and for one beyond the margin of +0.05", "within the margin of no effect
    (±0.05)"), as the decision's ``why`` gives it after the interval; :data:`NOT_DECIDED` where the
    claim was not decided in this process."""
    d = _DECISIONS.get(key)
    if d is None:
        return NOT_DECIDED
    why = d.why.split(": ", 1)[1] if ": " in d.why else d.why
    return why.replace("the paper's side", "the claim's side") if get(key).own else why  # as stats.claim


def plain(key: str) -> str:
    """The plain words of the verdict last decided for ``key`` where it is not reproduced (does not
    hold) or undecided although its interval is clear of 0: "an effect was found, but smaller than
    the margin of +0.05" (:attr:`modlib.stats.Verdict.plain`); "" otherwise."""
    return _PLAIN.get(key, "") if key in _DECISIONS else ""


def units_needed(key: str, most: int = 200) -> int | None:
    """For the claim ``key`` as last decided: the units the rule would need to decide it if its
    estimate and spread were the truth (:func:`modlib.stats.units_to_decide`, under the claim's margin
    and direction); None where the decision kept no arms, or its interval is not a t interval."""
    d = _DECISIONS.get(key)
    if d is None or not d.arms or not _t_interval(d):
        return None
    f = get(key).fixed()
    return stats.units_to_decide(d.how[0], *d.arms, margin=float(f["margin"] or stats.CLEAR),
                                 direction=f["direction"], most=most)


def _t_interval(d: Decision) -> bool:
    """Whether ``d`` was decided on Student's or Welch's t interval (not Newcombe's for shares, not
    a correlation's): the interval :func:`modlib.stats.units_to_decide` plans for."""
    return bool(d.how) and d.how[0] in ("paired", "unpaired") and not d.how[2].get("shares")


def units_frame(chapter: str, most: int = 200):
    """For every claim of ``chapter`` decided in this process that cannot be decided only because of
    where its interval lies (:attr:`Decision.open`), a planning row (a ``pandas.DataFrame``): the
    claim, its units now, its estimate and interval, and the units the rule would need if the
    estimate and spread were the truth (:func:`units_needed`; "more than ``most``" where none up to
    that many would, "no t interval" for shares and correlations)."""
    import pandas as pd

    rows = []
    for key, d in sorted(decisions(chapter).items()):
        if d.outcome != stats.UNDECIDED or not d.open:
            continue
        need = units_needed(key, most)
        if need is None:
            need = f"more than {most}" if _t_interval(d) else "no t interval"
        low, high = stats.number(d.low, sign=True), stats.number(d.high, sign=True)  # a rounded 0: "0.00"
        rows.append({"claim": get(key).name, "units now": d.units, "estimate": stats.number(d.estimate, sign=True),
                     "95% interval": f"{low} to {high}", "units needed": need})
    return pd.DataFrame(rows, columns=["claim", "units now", "estimate", "95% interval", "units needed"])


def page_words(chapter: str, why: bool = False) -> dict[str, str]:
    """:func:`words` for every registered claim of ``chapter``, by id: what a page glues as
    ``<prefix>-<id>-mark`` for its prose."""
    return {cid: words(f"{chapter}/{cid}", why) for cid in registry(chapter)}


def decisions(chapter: str | None = None) -> dict[str, Decision]:
    """The decisions made in this process (of ``chapter``), by key."""
    return {k: d for k, d in _DECISIONS.items() if chapter is None or k.startswith(chapter + "/")}


def forget(chapter: str | None = None) -> None:
    """Drop the recorded decisions (of ``chapter``): a page starts afresh."""
    for k in list(decisions(chapter)):
        del _DECISIONS[k]
        _PLAIN.pop(k, None)


@contextlib.contextmanager
def apart():
    """Decisions made inside the ``with`` block are kept apart: they are put in the dict it yields
    (by key) and the record of :func:`decisions` is left as it was (an analysis run with its framing
    mutated, :mod:`modlib.mutations`, must not overwrite what the page decided)."""
    before, plain_before = dict(_DECISIONS), dict(_PLAIN)
    _DECISIONS.clear()
    made: dict[str, Decision] = {}
    try:
        yield made
    finally:
        made.update(_DECISIONS)
        _DECISIONS.clear()
        _DECISIONS.update(before)
        _PLAIN.clear()
        _PLAIN.update(plain_before)


def save(chapter: str, profile: str, folder: Path = LEDGER) -> Path | None:
    """At the ``full`` profile, write the decisions of ``chapter`` to ``folder/<chapter>.json`` for
    the claims ledger (sorted, so an unchanged page rewrites the same file); at other profiles write
    nothing (the ledger shows the book's full results only). Returns the path written."""
    if profile != "full" or not folder.parent.exists():
        return None
    folder.mkdir(exist_ok=True)
    path = folder / f"{chapter}.json"
    rows = {k: asdict(d) for k, d in sorted(decisions(chapter).items())}
    text = ledger_text(rows)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return path


def ledger_text(rows: dict) -> str:
    """``rows`` as the ledger file's text: floats to 9 decimals (so that the last bits of a
    recomputed interval, which differ between versions of scipy, rewrite nothing)."""
    def rounded(x):
        if isinstance(x, float):
            return round(x, 9) + 0.0
        if isinstance(x, dict):
            return {k: rounded(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [rounded(v) for v in x]
        return x

    return json.dumps(rounded(rows), indent=1, ensure_ascii=False) + "\n"


def saved(chapter: str, folder: Path = LEDGER) -> dict[str, Decision]:
    """The decisions of ``chapter`` saved at the full profile (:func:`save`), by key."""
    path = folder / f"{chapter}.json"
    if not path.exists():
        return {}
    out = {}
    for k, d in json.loads(path.read_text()).items():
        d["arms"], d["how"] = tuple(d.get("arms", ())), tuple(d.get("how", ()))
        out[k] = Decision(**d)
    return out


# ---------------------------------------------------------------- mutations the verdicts must notice

REPLAYED = ("swap arms", "shuffle units", "arm untrained")  # computed again from a decision's own arms


def _balanced(a: np.ndarray, b: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The arms' units dealt out again so that neither arm is ahead: paired units exchange their two
    values in every other unit by the size of their difference; independent units are pooled, sorted
    and dealt alternately; for a correlation, ``b`` is reordered against ``a``'s ranks in the order
    0, n-1, 1, n-2, ... (no monotone relation left)."""
    if name == "paired":
        order = np.argsort(a - b, kind="stable")
        flip = np.zeros(a.size, bool)
        flip[order[1::2]] = True
        return np.where(flip, b, a), np.where(flip, a, b)
    if name == "correlation":
        ranks = np.argsort(np.argsort(a, kind="stable"), kind="stable")
        zigzag = np.array([v for pair in zip(range(a.size), range(a.size - 1, -1, -1)) for v in pair][:a.size])
        return a, np.sort(b)[zigzag][ranks]
    pooled = np.sort(np.concatenate([a, b]))
    picks = np.zeros(pooled.size, bool)
    picks[np.linspace(0, pooled.size - 1, a.size).round().astype(int)] = True
    return pooled[picks], pooled[~picks]


def replay(d: Decision, mutation: str) -> stats.Verdict | None:
    """The verdict the claim of decision ``d`` gets when its analysis is framed wrong by ``mutation``
    (one of :data:`REPLAYED`), computed again from the decision's own arms under the registry's
    fields; None where the decision keeps no arms to alter (an interval given directly: then "swap
    arms" negates it). The other :data:`MUTATIONS` change data upstream, chapter by chapter."""
    if mutation not in REPLAYED:
        raise ValueError(f"mutation={mutation!r}; replayed here: {', '.join(REPLAYED)}")
    c = get(d.key)
    if d.conditions.get("reason"):  # undecided for a reason outside the rule, which no framing changes
        return stats.Verdict(stats.UNDECIDED, d.conditions["reason"])
    args = c.rule_arguments()
    cond = {k: d.conditions.get(k, True) for k in ("trained", "controls", "measurable")}
    if mutation == "arm untrained":
        cond["trained"] = False
    if d.how:
        name, pos, kw = d.how
        a, b = (np.asarray(x, dtype=float) for x in d.arms)
        if mutation == "swap arms":
            a, b = (a, -b) if name == "correlation" else (b, a)
        elif mutation == "shuffle units":
            a, b = _balanced(a, b, name)
        effect = getattr(stats, name)(a, b, *pos, **kw)
        return effect.verdict(**cond, **args)
    if mutation == "shuffle units":
        return None
    low, high, est = (-d.high, -d.low, -d.estimate) if mutation == "swap arms" else (d.low, d.high, d.estimate)
    return stats.verdict(low, high, units=d.units, estimate=est, what=d.conditions.get("what", ""),
                         over=d.conditions.get("over", ""), **cond, **args)


def moved(d: Decision, v: stats.Verdict | None) -> bool | None:
    """Whether the mutated verdict ``v`` reads otherwise than decision ``d``: another outcome, or
    undecided for another kind of reason (by the interval, or by a failed condition)."""
    if v is None:
        return None
    return (v.outcome, v.open) != (d.outcome, d.open)


# ---------------------------------------------------------------- registration, and whether it came first


def snapshot_path(chapter: str) -> Path:
    return PACKAGE / chapter / "claims_registered.json"


def snapshot(chapter: str) -> dict[str, dict]:
    """The chapter's registration snapshot: per claim id, ``{"registered": ISO date, "fields": {...}}``."""
    path = snapshot_path(chapter)
    return json.loads(path.read_text()) if path.exists() else {}


def register(chapter: str, today: str | None = None) -> list[str]:
    """Write every claim of ``chapter`` that is not yet in its snapshot, with its registered fields
    (:meth:`Registered.original`) and ``today``'s date. Claims already there are never rewritten.
    Returns the ids added."""
    snap = snapshot(chapter)
    today = today or _dt.date.today().isoformat()
    added = [cid for cid in registry(chapter) if cid not in snap]
    for cid in added:
        snap[cid] = {"registered": today, "fields": registry(chapter)[cid].original()}
    if added:
        snapshot_path(chapter).write_text(json.dumps(dict(sorted(snap.items())), indent=1, ensure_ascii=False) + "\n")
    return added


def unrecorded_changes(chapter: str) -> list[str]:
    """Every difference between a claim's registered fields (its snapshot) and its present fields
    that no amendment records, and every claim missing from the snapshot: each as one line."""
    snap, out = snapshot(chapter), []
    for cid, c in registry(chapter).items():
        if cid not in snap:
            out.append(f"{chapter}/{cid}: not registered (python -m modlib.claims register {chapter})")
            continue
        value = c.fixed()  # walk the amendments back from the present: each must end where the next begins
        for a in reversed(c.amendments):
            if not _same(a.new, value[a.field]):
                out.append(f"{chapter}/{cid}: the amendment of {a.field} on {a.date} gives {a.new!r}, but the "
                           f"field then read {value[a.field]!r}: a change after it without an amendment")
            value[a.field] = _jsonable(a.old)
        was = snap[cid]["fields"]
        for k in FIXED:
            if not _same(was.get(k), value.get(k)):
                out.append(f"{chapter}/{cid}: {k} registered as {was.get(k)!r}, now {value.get(k)!r} "
                           f"without an amendment")
    return out


def snapshot_rewrites(chapter: str, root: Path | None = None) -> list[str]:
    """Every entry of the chapter's snapshot that differs from the entry as first committed (a
    snapshot only grows: a registration rewritten later would hide a change from the amendment test),
    and every committed entry since removed: each as one line. A field corrected on the record is
    not listed: the entry's ``corrections`` (``[{"commit", "date", "fields", "reason"}]``) names it,
    e.g. a registration set back to the state the claim had when its results were first stored.
    Empty outside a git checkout."""
    root = root or PACKAGE.parent
    rel = snapshot_path(chapter).relative_to(root)
    try:
        commits = subprocess.run(["git", "-C", str(root), "log", "--reverse", "--format=%H", "--", str(rel)],
                                 capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return []
    first: dict[str, tuple[str, dict]] = {}
    for commit in commits:
        shown = subprocess.run(["git", "-C", str(root), "show", f"{commit}:{rel}"], capture_output=True, text=True)
        if shown.returncode:
            continue
        for cid, entry in json.loads(shown.stdout).items():
            first.setdefault(cid, (commit[:7], entry))
    now = snapshot(chapter)
    out = []
    for cid, (commit, entry) in first.items():
        if cid not in now:
            out.append(f"{chapter}/{cid}: registered in {commit}, since removed from the snapshot")
        else:
            changed = sorted(k for k in entry["fields"]  # (a field the snapshot gained later is no rewrite)
                             if not _same(entry["fields"][k], now[cid]["fields"].get(k)))
            if entry.get("registered") != now[cid].get("registered"):
                changed.append("registered")
            said = {f for c in now[cid].get("corrections", ()) for f in c["fields"]}
            changed = [f for f in changed if f not in said]
            if changed:
                    out.append(f"{chapter}/{cid}: its registration of {commit} rewritten ({', '.join(changed)})")
    return out


@cache
def registered_at(chapter: str, root: Path | None = None) -> dict[str, str]:
    """When each claim of ``chapter`` was first committed to its snapshot (``id -> ISO 8601 commit
    time``), from git; empty where there is no git history."""
    root = root or PACKAGE.parent
    rel = snapshot_path(chapter).relative_to(root)
    try:
        log = subprocess.run(["git", "-C", str(root), "log", "--reverse", "--format=%H %cI", "--", str(rel)],
                             capture_output=True, text=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    out: dict[str, str] = {}
    for line in log.splitlines():
        commit, when = line.split()
        shown = subprocess.run(["git", "-C", str(root), "show", f"{commit}:{rel}"], capture_output=True, text=True)
        for cid in (json.loads(shown.stdout) if shown.returncode == 0 else {}):
            out.setdefault(cid, when)
    return out


def _earlier(a: str, b: str) -> bool:
    """Whether time ``a`` comes strictly before ``b`` (ISO 8601); where either is a date only, to the
    day (a registration on the day of the data is then not before it)."""
    if len(a) == 10 or len(b) == 10:
        return a[:10] < b[:10]
    return _dt.datetime.fromisoformat(a) < _dt.datetime.fromisoformat(b)


def _read_dates(c: Registered, stored: dict[str, str]) -> list[str]:
    """When each stored result that claim ``c`` reads was made (``stored``: :func:`_created`)."""
    return [d for name, d in stored.items() if any(fnmatch.fnmatch(name, p) for p in c.reads)]


def _instant(d: str) -> _dt.datetime:
    return _dt.datetime.fromisoformat(d) if len(d) > 10 else _dt.datetime.fromisoformat(d + "T00:00:00+00:00")


def _main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m modlib.claims", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    reg = sub.add_parser("register", help="write the claims not yet registered to their chapter's snapshot")
    reg.add_argument("chapters", nargs="*", metavar="CHAPTER", help=f"default: all ({', '.join(CHAPTERS)})")
    sub.add_parser("check", help="list every change to a registered claim that no amendment records")
    args = parser.parse_args(argv)
    if args.command == "register":
        bad = [ch for ch in args.chapters if ch not in CHAPTERS]
        if bad:
            parser.error(f"unknown chapter {', '.join(bad)}; choose from {', '.join(CHAPTERS)}")
        for ch in args.chapters or CHAPTERS:
            added = register(ch)
            print(f"{ch}: registered {len(added)} claim(s)" + (f": {', '.join(added)}" if added else ""))
        return 0
    problems = [p for ch in CHAPTERS for p in unrecorded_changes(ch)]
    print("\n".join(problems) or "every registered claim is as registered or amended on the record")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(_main())


def one_sided_p(decision: Decision) -> float:
    """The one-sided p-value of ``decision``'s effect on its claim's registered side of 0 (the
    registry's ``direction``), from the arms the decision kept, by the test behind its interval:
    paired t (:func:`modlib.stats.paired`), Welch's t (:func:`~modlib.stats.unpaired`), Fisher's
    z with the rank correlation's standard error (:func:`~modlib.stats.correlation`); for shares,
    the exact McNemar (paired) or Fisher (unpaired) test. A decision made from an interval alone
    (no arms) is read by the normal approximation of its 95 % interval. Where the arms do not vary
    (nothing measurable), 1."""
    from scipy import stats as _st

    side = "greater" if get(decision.key).direction > 0 else "less"
    sign = 1.0 if side == "greater" else -1.0
    how = decision.how[0] if decision.how else ""
    kwargs = dict(decision.how[2]) if len(decision.how) > 2 else {}
    if how in ("paired", "unpaired", "correlation") and len(decision.arms) == 2:
        a, b = (np.asarray(v, dtype=float) for v in decision.arms)
        if how == "correlation":
            n = a.size
            if n < 4 or np.ptp(a) < 1e-12 or np.ptp(b) < 1e-12:
                return 1.0
            rho = float(np.clip(_st.spearmanr(a, b).statistic, -0.999999, 0.999999))
            return float(_st.norm.sf(sign * np.arctanh(rho) / np.sqrt(1.06 / (n - 3))))
        if kwargs.get("shares"):
            if how == "paired":
                only_a, only_b = int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
                if only_a + only_b == 0:
                    return 1.0
                return float(_st.binomtest(only_a, only_a + only_b, alternative=side).pvalue)
            table = [[int(a.sum()), int(a.size - a.sum())], [int(b.sum()), int(b.size - b.sum())]]
            return float(_st.fisher_exact(table, alternative=side).pvalue)
        if how == "paired":
            d = a - b
            if d.size < 2 or np.ptp(d) < 1e-12:
                return 1.0 if sign * d.mean() <= 0 else 0.0
            return float(_st.ttest_1samp(d, 0.0, alternative=side).pvalue)
        if a.size < 2 or b.size < 2 or (np.ptp(a) < 1e-12 and np.ptp(b) < 1e-12):
            return 1.0 if sign * (a.mean() - b.mean()) <= 0 else 0.0
        return float(_st.ttest_ind(a, b, equal_var=False, alternative=side).pvalue)
    se = (decision.high - decision.low) / (2 * 1.96)
    if not np.isfinite(se) or se <= 0:
        return 1.0 if sign * decision.estimate <= 0 else 0.0
    return float(_st.norm.sf(sign * decision.estimate / se))


def holm(chapter: str, alpha: float = 0.025, made: dict[str, Decision] | None = None) -> dict[str, tuple]:
    """Holm's correction (:func:`modlib.stats.holm`) over every claim of ``chapter`` decided
    (``made``, default the decisions recorded now): {key: (outcome, one-sided p, Holm-adjusted p,
    clear of 0 after the correction)}. The correction moves only the rule's first condition (the
    interval clears 0); the margin is the rule's second, unchanged."""
    made = {k: d for k, d in (decisions(chapter) if made is None else made).items()
            if k.startswith(f"{chapter}/")}
    ps = {k: one_sided_p(d) for k, d in made.items()}
    adjusted = stats.holm(ps, alpha)
    return {k: (made[k].outcome, ps[k], *adjusted[k]) for k in sorted(made)}
