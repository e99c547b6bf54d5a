"""Degenerate results for chapters 1-3 (chapter 3 with its controls): every claims test of those chapters (``tests/test_claims.py``)
and every statement their pages print as holding must fail on at least one degenerate variant of the
stored full results, built here from the stored arrays (nothing is recomputed or written):

- ``chance``: every model at chance (accuracies at chance, R^2 at 0);
- ``never-fit``: every seed's training fit at its floor, the rest unchanged;
- ``identical``: every seed a copy of seed 0 (one unit, however many seeds);
- ``control=treatment``: each control or comparison arm made equal to the arm it is compared with;
- ``one-untrained``: one arm (the paper's setting, or setting B; in chapter 1's later studies the arm
  each comparison starts from) at chance, the others unchanged.

A claim that survives every variant cannot fail on a broken result: rewrite it to test the claim,
or drop it with the sentence it backs.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import test_claims as tc
from modlib import compositional_sprites as cs
from modlib import resists_at_scale as rs
from modlib import redundant_input_toy as toy
from modlib.compositional_sprites import causes as cs_causes
from modlib.compositional_sprites import findings as cs_findings
from modlib.redundant_input_toy import findings as toy_findings
from modlib.resists_at_scale import findings as rs_findings


class Variant:
    """The stored results ``base`` with ``change(key, arrays) -> arrays`` applied to what
    ``arrays(*key)`` returns (a copy; the store is never touched)."""

    def __init__(self, base, change):
        self._base, self._change = base, change
        self.settings, self.profile = base.settings, base.profile
        self.rows = getattr(base, "rows", None)

    def arrays(self, *args, **kwargs):
        bound = inspect.signature(self._base.arrays).bind(*args, **kwargs)
        bound.apply_defaults()
        key = tuple(bound.arguments.values())
        return self._change(key, {k: np.array(v, copy=True) for k, v in self._base.arrays(*key).items()},
                            self._base)


def _first_seed(arrays: dict, seeds: int, keys=None) -> dict:
    for k, v in arrays.items():
        if (keys is None or k in keys) and v.ndim >= 1 and v.shape[0] == seeds:
            arrays[k] = np.repeat(v[:1], seeds, axis=0)
    return arrays


# ---------------------------------------------------------------- chapter 1: the toy

TOY_ACC = ("test_acc", "test_acc_curve")


def _toy_chance(a: dict) -> dict:
    for k in ("test_acc", "test_acc_curve", "train_acc"):
        a[k] = np.full_like(a[k], 0.5)
    a["train_loss_curve"] = np.full_like(a["train_loss_curve"], 0.25)  # a constant 0.5 output
    a["reliance"], a["final_reliance"] = np.zeros_like(a["reliance"]), np.zeros_like(a["final_reliance"])
    a["grids"] = np.full_like(a["grids"], 255)
    return a


def _toy_positive(a: dict) -> dict:
    # answers 'positive' everywhere: every held-out point right, training only where Y1 = 1
    a["test_acc"], a["test_acc_curve"] = np.ones_like(a["test_acc"]), np.ones_like(a["test_acc_curve"])
    a["train_acc"] = np.full_like(a["train_acc"], float(np.mean(a["train_y"] == 1)))
    a["train_loss_curve"] = np.full_like(a["train_loss_curve"], 0.5)
    a["grids"] = np.full_like(a["grids"], 255)
    return a


def _toy_never_fit(a: dict) -> dict:
    a["train_acc"] = np.full_like(a["train_acc"], 0.5)
    a["train_loss_curve"] = np.full_like(a["train_loss_curve"], 0.25)
    return a


PAPER_SETTING = ("relu", "mse")


def toy_variants(sweep) -> dict[str, Variant]:
    seeds = sweep.settings.seeds
    paper = lambda key: key[:2] == PAPER_SETTING and key[3:] == (1.0, "binary")  # noqa: E731
    return {
        "chance": Variant(sweep, lambda key, a, base: _toy_chance(a)),
        "positive-everywhere": Variant(sweep, lambda key, a, base: _toy_positive(a)),
        "never-fit": Variant(sweep, lambda key, a, base: _toy_never_fit(a)),
        "identical": Variant(sweep, lambda key, a, base: _first_seed(a, seeds)),
        "control=treatment": Variant(sweep, lambda key, a, base: dict(base.arrays(key[0], key[1], key[2]))),
        "one-untrained": Variant(sweep, lambda key, a, base: _toy_chance(a) if paper(key) else a),
    }


# ---------------------------------------------------------------- chapter 1: the later studies

class StudyVariant(Variant):
    """A :class:`Variant` of chapter 1's studies, which also forwards what is not per seed."""

    def __init__(self, base, change):
        super().__init__(base, change)
        self.sweep, self.axis, self.arms, self.conditions = base.sweep, base.axis, base.arms, base.conditions


def _study_chance(a: dict) -> dict:
    for k in ("test_acc", "train_acc", "test_acc_curve"):
        if k in a:
            a[k] = np.full_like(a[k], 0.5)
    for k in ("reliance", "grad_x2", "weight_x2"):
        if k in a:
            a[k] = np.zeros_like(a[k])
    return a


def _study_positive(a: dict) -> dict:
    # answers 'positive' everywhere: every held-out point right, training only where Y1 = 1 (a third)
    a["test_acc"] = np.ones_like(a["test_acc"])
    if "test_acc_curve" in a:
        a["test_acc_curve"] = np.ones_like(a["test_acc_curve"])
    a["train_acc"] = np.full_like(a["train_acc"], 1 / 3)
    return a


# each study's main arm (key without the study): the one the others are compared with
STUDY_MAIN = {"baselines": ("gradient descent", "b", "binary", 1.0), "mechanism": ("ordinary", "b", "binary", 1.0),
              "scale": ("x5", "b", "binary", 1.0)}


def study_variants(st) -> dict[str, Variant]:
    seeds = st.settings["mechanism"].seeds

    def main(key):  # the main arm of the key's study, in the key's formulation (scale: its shape)
        arm, _, design, reveal = STUDY_MAIN[key[0]]
        return (key[0], arm, key[2], design, reveal)

    def untrained(key):  # the arm each comparison starts from: at chance
        return key[1] in ("gradient descent", "zero-x2", "x5") and key[3:] == ("binary", 1.0)

    return {
        "chance": StudyVariant(st, lambda key, a, base: _study_chance(a)),
        "positive-everywhere": StudyVariant(st, lambda key, a, base: _study_positive(a)),
        "never-fit": StudyVariant(st, lambda key, a, base: {**a, "train_acc": np.full_like(a["train_acc"], 0.5)}),
        "identical": StudyVariant(st, lambda key, a, base: _first_seed(a, seeds)),
        "control=treatment": StudyVariant(st, lambda key, a, base: {**a, **{
            k: np.array(v, copy=True) for k, v in base.arrays(*main(key)).items() if k in a}}),
        "one-untrained": StudyVariant(st, lambda key, a, base: _study_chance(a) if untrained(key) else a),
    }


# ---------------------------------------------------------------- chapter 2: the sprites

def _r2_at(a: dict, keys=("r2_in", "r2_whole"), value: float = 0.0) -> dict:
    for k in keys:
        a[k] = np.full_like(a[k], value)
    return a


def _stuck(a: dict) -> dict:
    # never left the starting output: every evaluation equal to the first one
    for k in ("r2_in", "r2_whole"):
        a[k] = np.repeat(a[k][:, :1], a[k].shape[1], axis=1)
    return a


# each row's comparison arm: the row it is compared with on the page
SPRITE_PARTNER = {"orthogonal-monolithic": "orthogonal", "random-monolithic": "random", "gap": "orthogonal",
                  "diagonal-0.05": "diagonal-0.2", "diagonal-0.1": "diagonal-0.2", "alpha": "orthogonal",
                  "sharpness-4": "orthogonal", "sharpness-16": "orthogonal", "sharpness-64": "orthogonal",
                  "random": "orthogonal", "orthogonal-broad": "orthogonal", "normal": "orthogonal"}


def sprite_variants(runs) -> dict[str, Variant]:
    # each row's own number of seeds: the recomputed rows have 5 in the headline rows, 3 in the others
    per_seed = ("r2_in", "r2_whole", "slice_mse", "r2_slot", "r2_gap", "reach")
    return {
        "chance": Variant(runs, lambda row, a, base: _r2_at(a)),
        "never-fit": Variant(runs, lambda row, a, base: _stuck(a)),
        "identical": Variant(runs, lambda row, a, base: _first_seed(a, len(a["r2_in"]), per_seed)),
        "control=treatment": Variant(runs, lambda row, a, base: dict(base.arrays(SPRITE_PARTNER.get(row[0], row[0])))),
        "one-untrained": Variant(runs, lambda row, a, base: _r2_at(a) if row[0] == "orthogonal" else a),
    }


# ---------------------------------------------------------------- chapter 3: MNIST pairs and SCAN

def _rs_chance(name: str, a: dict, keys=None) -> dict:
    chance = rs_findings.CHANCE[name.split("-")[0]]
    for k in keys or ("acc_train", "acc_train_long", "acc_test", "acc_unseen", "acc_swapped",
                      "final_train", "final_test", "final_unseen", "swapped"):
        if k in a:
            a[k] = np.full_like(a[k], chance)
    if keys is None:
        a["shown_pred"] = np.zeros_like(a["shown_pred"])
    return a


def resist_variants(runs) -> dict[str, Variant]:
    seeds = runs.settings.seeds
    return {
        "chance": Variant(runs, lambda key, a, base: _rs_chance(key[0], a)),
        "never-fit": Variant(runs, lambda key, a, base: _rs_chance(key[0], a, ("acc_train", "acc_train_long",
                                                                               "final_train"))),
        "identical": Variant(runs, lambda key, a, base: _first_seed(a, seeds)),
        "control=treatment": Variant(runs, lambda key, a, base: dict(base.arrays(key[0].replace("-B", "-A")))),
        "one-untrained": Variant(runs, lambda key, a, base: _rs_chance(key[0], a) if key[0].endswith("-B") else a),
    }


# ---------------------------------------------------------------- chapter 3's controls

# what each control result is compared with: a degenerate control equals that arm (with the same measures)
CONTROL_PARTNER = {"mnist-C": "mnist-dose-2", "scan-C": "scan-A-tf", "scan-B-tf": "scan-A-tf",
                   "mnist-B-ablation": "mnist-A-ablation", "scan-B-ablation": "scan-A-ablation",
                   "scan-B-union": "scan-A-tf", "mnist-B": "mnist-A", "scan-B": "scan-A"}
# the arms that stand for "no correlation": untrained in the one-untrained variant
CONTROL_ARMS = ("mnist-C", "scan-C", "mnist-B", "scan-B", "scan-B-tf", "mnist-B-ablation", "scan-B-ablation",
                "scan-B-union")


def _control_chance(name: str, a: dict, train_only: bool = False) -> dict:
    chance = rs_findings.CHANCE[name.split("-")[0]]
    for k in a:
        measured = k.startswith(("acc_", "tf_", "tok_", "fixed_", "final_")) or k == "swapped"
        if measured and (not train_only or "train" in k):
            a[k] = np.full_like(a[k], chance)
    if "shown_pred" in a and not train_only:
        a["shown_pred"] = np.zeros_like(a["shown_pred"])
    return a


def _partner(name: str) -> str:
    return "mnist-C" if name.startswith("mnist-dose-") else CONTROL_PARTNER.get(name, name)


def control_variants(runs) -> dict[str, Variant]:
    return {
        "chance": Variant(runs, lambda key, a, base: _control_chance(key[0], a)),
        "never-fit": Variant(runs, lambda key, a, base: _control_chance(key[0], a, train_only=True)),
        "identical": Variant(runs, lambda key, a, base: _first_seed(a, len(a["final_train"]))),
        "control=treatment": Variant(runs, lambda key, a, base: dict(base.arrays(_partner(key[0])))),
        "one-untrained": Variant(runs, lambda key, a, base: _control_chance(key[0], a) if key[0] in CONTROL_ARMS
                                 else a),
    }


# ---------------------------------------------------------------- the checks

# claims tests that check the code or the data generator, not stored results: no variant applies
NOT_ON_RESULTS = {
    "test_toy_a_rare_cell_leaves_the_correlation_nearly_unchanged",  # the data generator's correlation
    "test_sprites_the_two_models_see_the_same_training_scenes",  # the data pipeline
    "test_sprites_gradient_reach_is_the_lower_slots_weight",  # the measure's formula
    "test_resists_full_is_the_papers_settings_with_five_seeds",  # the stored settings, not a result
    "test_controls_full_is_the_papers_training_with_five_seeds",  # the settings, not a result
    "test_controls_the_designs_remove_the_information",  # the data generators' information
}

CHAPTERS = {
    # prefix of the claims tests: (fixture of the runs, fixture of the findings, findings of runs, variants)
    "test_toy_": ("sweep", "toy_found",
                  lambda runs: {**toy_findings.redundant_input(runs, toy.GENERALIZES, toy.PAPER_EPOCHS),
                                **toy_findings.distribution(runs, toy.GENERALIZES)}, toy_variants),
    "test_toystudy_": ("toy_studies", "toy_studies_found", toy_findings.studies, study_variants),
    "test_sprites_": ("sprite_runs", "sprite_found",
                      lambda runs: cs_findings.compositional_sprites(runs, tc.SHARPNESS), sprite_variants),
    "test_resists_": ("resist_runs", "resist_found", rs_findings.resists_at_scale, resist_variants),
    "test_controls_": ("control_runs", "control_found", rs_findings.controls, control_variants),
}


def _stored(prefix):
    if prefix == "test_toy_":
        return tc.toy_sweep()
    if prefix == "test_toystudy_":
        return tc.toy_studies_stored()
    if prefix == "test_sprites_":  # the rows the page and the claims tests read: each seed on its own scenes
        return tc._recomputed([cs_causes.PREFIX + row for row in cs.settings("full").rows])
    if prefix == "test_controls_":
        return tc.stored_controls()
    s = rs.settings("full")
    return rs.ResistRuns(s, tc.stored_full(rs.CHAPTER, rs.RESULTS, lambda name: rs.experiment.result_config(s, name)),
                         "full")


def _cases(fn):
    """Each parametrisation of a claims test: a list of keyword dicts ([{}] when not parametrised)."""
    cases = [{}]
    for mark in getattr(fn, "pytestmark", []):
        if mark.name == "parametrize":
            names, values = mark.args
            names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
            cases = [{**c, **dict(zip(names, v if len(names) > 1 else (v,)))} for c in cases for v in values]
    return cases


def claims_tests(prefix):
    return [(name, fn) for name, fn in vars(tc).items()
            if name.startswith(prefix) and callable(fn) and name not in NOT_ON_RESULTS]


def _fails(fn, kwargs) -> bool:
    try:
        fn(**kwargs)
    except (AssertionError, KeyError):  # a claim that fails, or a statement the page no longer makes;
        return True                      # any other error is a broken test, not a failed claim
    return False


_memo: dict = {}


def _setup(prefix):
    if prefix not in _memo:
        runs_name, found_name, find, variants = CHAPTERS[prefix]
        runs = _stored(prefix)
        built = {name: (v, find(v)) for name, v in variants(runs).items()}
        _memo[prefix] = runs, find(runs), built
    return _memo[prefix]


@pytest.mark.parametrize("prefix", list(CHAPTERS))
def test_every_claims_test_fails_on_some_degenerate_variant(prefix):
    runs_name, found_name, _, _ = CHAPTERS[prefix]
    runs, found, variants = _setup(prefix)
    survivors = []
    for name, fn in claims_tests(prefix):
        params = inspect.signature(fn).parameters
        for case in _cases(fn):
            failed_on = []
            for variant, (v_runs, v_found) in variants.items():
                kwargs = {**case, **{k: val for k, val in ((runs_name, v_runs), (found_name, v_found))
                                     if k in params}}
                if _fails(fn, kwargs):
                    failed_on.append(variant)
            if not failed_on:
                survivors.append(f"{name}{case or ''}")
    assert not survivors, f"claims tests that pass on every degenerate variant: {survivors}"


@pytest.mark.parametrize("prefix", list(CHAPTERS))
def test_every_printed_statement_that_holds_fails_on_some_degenerate_variant(prefix):
    _, found, variants = _setup(prefix)
    survivors = [k for k, f in found.items() if f.holds
                 and all(k in v_found and v_found[k].holds for _, v_found in variants.values())]
    assert not survivors, f"statements that hold on every degenerate variant: {survivors}"


@pytest.mark.parametrize("prefix", list(CHAPTERS))
def test_no_statement_is_reproduced_on_a_single_unit(prefix):
    # every seed identical is one unit: nothing the page marks reproduced (a paper's claim, ✓) or
    # "holds" under the verdict rule (the book's own hypothesis) may hold there
    _, found, variants = _setup(prefix)
    _, identical = variants["identical"]
    held = [k for k, f in identical.items() if f.holds and (("reproduced" in f.text and "✓" in f.text)
                                                            or f.text.endswith(" — holds."))]
    assert not held, held
