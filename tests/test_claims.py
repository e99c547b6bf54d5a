"""The papers' claims, checked on the committed full-profile results (no training here).

A chapter whose full results are not stored yet is skipped with the command that makes them.
"""

import fnmatch
from pathlib import Path

import numpy as np
import pytest

from modlib import modularity, results, toy

FULL = Path(__file__).resolve().parents[1] / "notebooks" / "results" / "full"


def load(chapter: str, pattern: str) -> list[tuple[dict, dict]]:
    """(meta, arrays) of every stored full-profile result of ``chapter`` matching ``pattern``; for
    chapter 4, the test is skipped unless every result of the full profile that matches is stored.
    A stored result that does not read back, or that other code made, fails the test: the claims
    are checked on what the code as committed computes."""
    out = []
    for path in sorted((FULL / chapter).glob(f"{pattern}.json")):
        r = results.read(path)
        code = r.meta.get("code_module")
        if code is None or r.meta.get("code") != results.code_fingerprint(code):
            pytest.fail(f"{path} was made by other code than the committed {code or 'code'}; remake it "
                        f"(python -m modlib.batch --profile full notebooks/{chapter}.ipynb)")
        out.append((r.meta, r.arrays))
    wanted = [n for n in modularity.names("full") if fnmatch.fnmatch(n, pattern)]
    missing = [n for n in wanted if not (FULL / chapter / f"{n}.json").exists()]
    if chapter == modularity.CHAPTER and missing:
        pytest.skip(f"{len(missing)} of the {len(wanted)} full-profile results this claim needs are not stored "
                    f"yet ({', '.join(missing)}); make them with `python -m modlib.modularity --profile full` "
                    f"(on a GPU; it resumes where it stopped)")
    if not out:
        pytest.skip(f"no full-profile results for {chapter} are stored yet; make them with "
                    f"`make batch PROFILE=full NOTEBOOKS=notebooks/{chapter}.ipynb` (on a GPU)")
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


def test_weight_masks_specialize_for_add_and_multiply():
    runs = load(modularity.CHAPTER, "addmul-seed*")
    assert len(runs) >= 5, f"only {len(runs)} seeds stored"
    for meta, a in runs:
        t = dict(zip(meta["metrics"]["rows"], a["table"]))  # row -> [acc on +, acc on *]
        full_add, full_mul = t["full model"]
        assert full_add > 0.9 and full_mul > 0.5, "the base network did not learn the task"
        assert t["+ mask"][0] > 0.8 * full_add and t["+ mask"][1] < 0.5 * full_mul
        assert t["+ mask removed"][0] < 0.1 and t["+ mask removed"][1] > 0.2  # chance is 0.01
        assert t["* mask"][1] > 0.8 * full_mul and t["* mask"][0] < 0.5 * full_add
        assert t["* mask removed"][1] < 0.1 and t["* mask removed"][0] > 0.2


def test_double_addition_masks_are_not_reused():
    runs = load(modularity.CHAPTER, "double-seed*")
    assert len(runs) >= 5
    for meta, a in runs:
        hidden = a["iou"][1:-1]  # the first layer reads different inputs, the last writes different outputs
        assert hidden.mean() < 0.5, f"hidden-layer IoU {hidden.round(2)} is close to full reuse (1.0)"
