"""The papers' claims, checked on the committed full-profile results (no training here).

A chapter whose full results are not stored yet is skipped with the command that makes them.
"""

import fnmatch
from pathlib import Path

import numpy as np
import pytest

from modlib import findings, modularity, results, toy

FULL = Path(__file__).resolve().parents[1] / "notebooks" / "results" / "full"


def load(chapter: str, pattern: str) -> list[tuple[dict, dict]]:
    """(meta, arrays) of every stored full-profile result of ``chapter`` matching ``pattern``; for
    chapter 4, the test is skipped unless every result of the full profile that matches is stored
    for the profile's present settings. A stored result that does not read back, or that other code
    made, fails the test: the claims are checked on what the code as committed computes."""
    out = []
    for path in sorted((FULL / chapter).glob(f"{pattern}.json")):
        r = results.read(path)
        code = r.meta.get("code_module")
        if code is None or r.meta.get("code") != results.code_fingerprint(code):
            pytest.fail(f"{path} was made by other code than the committed {code or 'code'}; remake it "
                        f"(python -m modlib.batch --profile full notebooks/{chapter}.ipynb)")
        out.append((r.meta, r.arrays))
    if chapter == modularity.CHAPTER:
        wanted = [n for n in modularity.names("full") if fnmatch.fnmatch(n, pattern)]
        current = {n: modularity.stored("full", n) for n in wanted}  # None: missing, or other settings
        missing = [n for n, r in current.items() if r is None]
        if missing:
            pytest.skip(f"{len(missing)} of the {len(wanted)} full-profile results this claim needs are not "
                        f"stored for the present settings ({', '.join(missing)}); make them with "
                        f"`python -m modlib.modularity --profile full` (on the CPU; it resumes where it stopped)")
        return [(r.meta, r.arrays) for r in current.values()]
    if not out:
        pytest.skip(f"no full-profile results for {chapter} are stored yet; make them with "
                    f"`make batch PROFILE=full NOTEBOOKS=notebooks/{chapter}.ipynb`")
    return out


def test_toy_full_results_show_the_bias_and_the_control_removes_it():
    for meta, a in load(toy.CHAPTER, "sweep-*"):
        cfg = meta["config"]
        assert cfg["seeds"] >= 20
        f, paper, control = cfg["formulations"].index("b"), cfg["reveals"].index(1.0), cfg["reveals"].index(0.0)
        acc, rel = a["test_acc"][f], a["final_reliance"][f]
        assert acc[control].mean() > 0.97  # the control generalises
        assert acc[paper].mean() < acc[control].mean()  # the redundant input hurts on the held-out cell
        assert np.median(rel[paper]) > np.median(rel[control])  # because the model leans on x2
    relu = [a for meta, a in load(toy.CHAPTER, "sweep-relu-*")]
    assert all(a["test_acc"][1, 0].mean() < 0.85 for a in relu)  # strong with ReLU in formulation b


def _stacked(runs, key):
    return np.stack([a[key] for _, a in runs])


def _finding(found, name):
    return next(f for f in found if f.name == name)


def _specialization():
    runs = load(modularity.CHAPTER, "addmul-seed*")
    assert len(runs) >= 5, f"only {len(runs)} seeds stored"
    assert (_stacked(runs, "table")[:, 0] > 0.95).all(), "a base network did not learn both operations"
    return findings.specialization(_stacked(runs, "table"), _stacked(runs, "control"), modularity.CHANCE["addmul"])


def test_weight_masks_each_mask_alone_does_its_own_operation():
    f = _finding(_specialization(), "each mask alone does its own operation only")
    assert f.holds, f.text


def test_weight_masks_removing_a_mask_loses_its_own_operation():
    f = _finding(_specialization(), "removing a mask loses its own operation")
    assert f.holds, f.text


def test_weight_masks_removing_a_mask_spares_the_other_operation():
    f = _finding(_specialization(), "removing a mask keeps the other operation far above chance")
    assert f.holds, f.text
    runs = load(modularity.CHAPTER, "addmul-seed*")
    tables = _stacked(runs, "table")
    for k in range(2):  # the other operation survives a removed module far more than its own: margin > 3 std
        gap = tables[:, 2 + 2 * k, 1 - k] - tables[:, 2 + 2 * k, k]
        assert gap.mean() > 3 * gap.std(), f"removing mask {k}: gap {gap.round(3)}"


def test_double_addition_pairs_overlap_less_than_two_masks_of_one_pair():
    runs = load(modularity.CHAPTER, "double-seed*")
    assert len(runs) >= 5
    (f,) = findings.reuse(*(_stacked(runs, k) for k in ("iou", "iou_same", "iou_random")))
    assert f.holds, f.text


def test_class_removal_hurts_the_removed_class_far_more_than_the_others():
    ((meta, a),) = load(modularity.CHAPTER, "cnn-seed0")
    acc = modularity.removal_accuracy(a["confusion"])
    others_reference = (acc["reference"].sum() - acc["reference"]) / 9
    (f,) = findings.class_removal(acc["own"], acc["others"], acc["reference"], others_reference)
    assert f.holds, f.text
