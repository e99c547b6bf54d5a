"""Mutations the verdicts must notice, on the stored full results, where a mutation changes the data
upstream of the verdict (the ones computed again from a decision's own arms, swapped arms, shuffled
units and an untrained arm, are in tests/test_registry.py): a claim that names the mutation in its
registry must read otherwise when its analysis is framed that way."""

from pathlib import Path

import pytest

from modlib import claims, results, stats
from modlib import structural_compositionality as sc
from modlib.structural_compositionality import findings as sc_findings

FULL = Path(__file__).resolve().parents[1] / "notebooks" / "results" / "full"


def _moved_claims(chapter: str, before: dict, after: dict, mutation: str) -> tuple[list[str], list[str]]:
    """(claims that name ``mutation`` and are decided, those of them whose outcome did not move)."""
    named = {c.key for c in claims.registry(chapter).values() if mutation in c.mutations}
    decided = [k for k, v in before.items() if k in named and v.outcome != stats.UNDECIDED]
    return decided, [f"{k}: {before[k].outcome} -> {after[k].outcome if k in after else 'not decided'}"
                     for k in decided if k in after and (after[k].outcome, after[k].open) == (before[k].outcome, before[k].open)]


def _verdicts(found: dict) -> dict[str, stats.Verdict]:
    return {f.verdict.claim: f.verdict for f in found.values()
            if isinstance(f, stats.Claim) and f.verdict is not None and f.verdict.claim}


@pytest.fixture(scope="module")
def structure():
    """Chapter 5's stored full results: the table of accuracies per mask, and the base models."""
    s = sc.settings("full")
    names = sc.result_names(s)
    if not all((FULL / sc.CHAPTER / f"{n}.json").exists() for n in names):
        pytest.skip("chapter 5's full results are not stored")
    runs = sc.StructureRuns(s, {n: results.read(FULL / sc.CHAPTER / f"{n}.json") for n in names}, "full")
    bases = [{"rule": r.metrics["rule"], "model": r.metrics["seed"], "trained": r.metrics["trained"],
              "searched": r.metrics["searched"], "task": r.metrics["base"]["task"]} for r in runs.rows.values()]
    yield sc_findings.structure_table(runs), bases, s.base_gate
    claims.forget(sc.CHAPTER)


def swap_target_and_other(table):
    """The analysis with each subnetwork's target and other subroutine exchanged (a plausible bug of
    the evaluation): every ``<arm>_target`` column swapped with its ``<arm>_other``."""
    out = table.copy()
    for column in table.columns:
        if column.endswith("_target") and column[: -len("_target")] + "_other" in table.columns:
            other = column[: -len("_target")] + "_other"
            out[column], out[other] = table[other], table[column]
    return out


def test_chapter_5_verdicts_move_when_target_and_other_are_swapped(structure):
    table, bases, gate = structure
    before = _verdicts(sc_findings.structural_from(table, bases, gate))
    after = _verdicts(sc_findings.structural_from(swap_target_and_other(table), bases, gate))
    decided, still = _moved_claims(sc.CHAPTER, before, after, "swap target and other")
    assert decided, "no decided claim of chapter 5 names the mutation: the harness would check nothing"
    assert not still, "verdicts that did not notice target and other swapped:\n" + "\n".join(still)
