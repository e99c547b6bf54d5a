"""Mutations the verdicts must notice where the mutation changes the data upstream of the verdict
(issue 50): a chapter's stored full results analysed again with the framing wrong, as a plausible
bug would frame it. The mutations computed again from a decision's own arms (swapped arms, units
dealt out so that neither arm leads, an untrained arm) are :func:`modlib.claims.replay`'s.

``swap target and other``  each subnetwork's target and other subroutine exchanged;
``random mask as dense``   each learned mask replaced by a random mask of the same per-layer counts
                           (from the random masks the stored results already evaluate).

A chapter that can run one has a module ``modlib.<chapter>.mutations`` with

``MUTATIONS``  {mutation: how the chapter applies it, in words};
``CANNOT``     {mutation: {claim id: why the stored results cannot show it}};
``decide(mutation)``  the chapter's decisions on its stored full results with ``mutation`` applied
               (``None``: as stored), made inside :func:`modlib.claims.apart`.

:func:`compute` runs them all; ``python -m modlib.mutations`` writes the outcomes to
``book/ledger/mutations.json``, which the claims ledger reads (and a test recomputes).
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

from modlib import claims, stats

DATA_LEVEL = ("swap target and other", "random mask as dense")
FILE = claims.LEDGER / "mutations.json"


def chapter_module(chapter: str):
    """The chapter's mutations module, or None where it has none."""
    if chapter not in claims.CHAPTERS:
        raise ValueError(f"chapter={chapter!r}; choose from {', '.join(claims.CHAPTERS)}")
    try:
        return importlib.import_module(f"modlib.{chapter}.mutations")
    except ModuleNotFoundError as e:
        if e.name != f"modlib.{chapter}.mutations":
            raise
        return None


def decide(chapter: str, mutation: str | None) -> dict[str, claims.Decision] | None:
    """The chapter's decisions on its stored full results with ``mutation`` (one of
    :data:`DATA_LEVEL`, or None for none) applied, by claim key; None where the chapter cannot run it
    (no stored results, or no such mutation). The page's own record of decisions is left alone."""
    if mutation is not None and mutation not in DATA_LEVEL:
        raise ValueError(f"mutation={mutation!r}; the data-level ones: {', '.join(DATA_LEVEL)}")
    module = chapter_module(chapter)
    if module is None or (mutation is not None and mutation not in module.MUTATIONS):
        return None
    with claims.apart() as made:
        if module.decide(mutation) is None:
            return None
    return made


def cannot(chapter: str, mutation: str) -> dict[str, str]:
    """{claim id: why} for the claims naming ``mutation`` that the chapter's stored results cannot
    show it for."""
    module = chapter_module(chapter)
    return dict(getattr(module, "CANNOT", {}).get(mutation, {})) if module else {}


def compute(chapters=claims.CHAPTERS) -> dict[str, dict[str, dict[str, list]]]:
    """{chapter: {mutation: {claim key: [outcome, open]}}} for every data-level mutation each
    chapter can run on its stored full results."""
    out = {}
    for ch in chapters:
        runs = {}
        for m in DATA_LEVEL:
            made = decide(ch, m)
            if made is not None:
                runs[m] = {k: [d.outcome, d.open] for k, d in sorted(made.items())}
        if runs:
            out[ch] = runs
    return out


def saved(path: Path = FILE) -> dict[str, dict[str, dict[str, list]]]:
    """What ``python -m modlib.mutations`` last wrote (empty where it never ran)."""
    return json.loads(path.read_text()) if path.exists() else {}


def moved(chapter: str, mutation: str, key: str, found: dict | None = None) -> bool | None:
    """Whether ``mutation`` moves the verdict of claim ``key`` (outcome, or undecided for another
    kind of reason) against the page's saved decision; None where it was not run for the claim (the
    ledger then says why, :func:`cannot`)."""
    if claims.get(key).id in cannot(chapter, mutation):
        return None
    found = saved() if found is None else found
    after = found.get(chapter, {}).get(mutation, {}).get(key)
    before = claims.saved(chapter).get(key)
    if after is None or before is None:
        return None
    return tuple(after) != (before.outcome, before.open)


# which verdicts a data-level mutation must move: both destroy the effect a claim reads (the target's
# lead over the other, the learned mask's over chance), so a verdict that found one must change; a
# verdict that found none may stay
MUST_MOVE = {"swap target and other": {stats.REPRODUCED}, "random mask as dense": {stats.REPRODUCED}}


def unmoved(chapter: str, mutation: str, made: dict[str, claims.Decision] | None) -> list[str]:
    """The chapter's claims that name ``mutation`` and that the mutated analysis ``made``
    (:func:`decide`) fails: a verdict in :data:`MUST_MOVE` left as it was, or a claim left undecided
    without a reason in the chapter's ``CANNOT``; in words, one line each (empty: all is well)."""
    before, why = claims.saved(chapter), cannot(chapter, mutation)
    out = []
    for cid, c in claims.registry(chapter).items():
        if mutation not in c.mutations or cid in why or c.key not in before:
            continue
        d, after = before[c.key], (made or {}).get(c.key)
        if after is None:
            out.append(f"{c.key}: {mutation} not run on it, and no reason given (CANNOT)")
        elif d.outcome in MUST_MOVE[mutation] and (after.outcome, after.open) == (d.outcome, d.open):
            out.append(f"{c.key}: {mutation} leaves {d.outcome}")
    return out


def moves(chapter: str, key: str, found: dict | None = None) -> dict[str, bool | None]:
    """{mutation the claim names: whether it moves the claim's saved verdict} (None: not run for it),
    replayed (:func:`modlib.claims.replay`) or run on the stored results (``found``, :func:`saved`)."""
    c, d = claims.get(key), claims.saved(chapter).get(key)
    if d is None:
        return {m: None for m in c.mutations}
    return {m: claims.moved(d, claims.replay(d, m)) if m in claims.REPLAYED else moved(chapter, m, key, found)
            for m in c.mutations}


def unmoved_by_any(chapter: str, found: dict | None = None) -> list[str]:
    """The harness's report: the chapter's claims that name no mutation, and its decided claims
    (✓ / ✗, holds / does not hold) that none of their mutations moves, one line each. An undecided
    verdict has no effect for a mutation to destroy (only an untrained arm can move it, to
    undecided for another reason), so it is not listed."""
    found = saved() if found is None else found
    out = []
    for c in claims.registry(chapter).values():
        d = claims.saved(chapter).get(c.key)
        if not c.mutations:
            out.append(f"{c.key}: names no mutation")
        elif d is not None and d.outcome != stats.UNDECIDED and not any(moves(chapter, c.key, found).values()):
            out.append(f"{c.key}: {d.outcome}, and none of {', '.join(c.mutations)} moves it")
    return out


def _main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m modlib.mutations", description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", metavar="CHAPTER", help=f"default: all ({', '.join(claims.CHAPTERS)})")
    args = parser.parse_args(argv)
    bad = [ch for ch in args.chapters if ch not in claims.CHAPTERS]
    if bad:
        parser.error(f"unknown chapter {', '.join(bad)}; choose from {', '.join(claims.CHAPTERS)}")
    found = saved()
    found.update(compute(args.chapters or claims.CHAPTERS))
    FILE.write_text(claims.ledger_text(dict(sorted(found.items()))))
    for ch, runs in found.items():
        print(f"{ch}: " + "; ".join(f"{m}: {len(v)} verdicts" for m, v in runs.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
