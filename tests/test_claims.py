"""The papers' claims, checked on the committed full-profile results (no training here).

A chapter whose full results are not stored yet is skipped with the command that makes them.
"""

import fnmatch
import functools
import re
from pathlib import Path

import numpy as np
import pytest

import torch

from modlib import claims
from modlib import compositional_sprites as cs
from modlib import pretraining_consistency as pc
from modlib import redundant_input_toy as toy
from modlib import resists_at_scale as rs
from modlib import jobs, results, stats
from modlib import weight_masks as wm
from modlib.compositional_sprites import findings as cs_findings
from modlib.data import toy as toy_data
from modlib.pretraining_consistency import findings as pc_findings
from modlib.redundant_input_toy import findings as toy_findings
from modlib.resists_at_scale import findings as rs_findings
from modlib.structural_compositionality import findings as sc_findings
from modlib.structural_compositionality import tasks as sc_tasks
from modlib.weight_masks import findings as wm_findings

FULL = Path(__file__).resolve().parents[1] / "notebooks" / "results" / "full"


@functools.cache
def not_current(chapter: str) -> set[str]:
    """The full results of ``chapter`` that its own code does not load as current now."""
    return {job for job, (_, compute) in jobs.jobs([chapter], "full").items() if not jobs.is_stored(compute)}


def load(chapter: str, pattern: str) -> list[tuple[dict, dict]]:
    """(meta, arrays) of every stored full-profile result of ``chapter`` matching ``pattern``; for
    chapter 4, the test is skipped unless every result of the full profile that matches is stored
    for the profile's present settings. A stored result that does not read back, or that other code
    made, fails the test: the claims are checked on what the code as committed computes."""
    out = []
    for path in sorted((FULL / chapter).glob(f"{pattern}.json")):
        r = results.read(path)
        if f"{chapter}/{path.stem}" in not_current(chapter):
            pytest.fail(f"{path} was made by other code than the committed code; remake it "
                        f"(python -m modlib.batch --profile full notebooks/{chapter}.ipynb)")
        out.append((r.meta, r.arrays))
    if chapter == wm.CHAPTER:
        wanted = [n for n in wm.names("full") if fnmatch.fnmatch(n, pattern)]
        current = {n: wm.stored("full", n) for n in wanted}  # None: missing, or other settings
        missing = [n for n, r in current.items() if r is None]
        if missing:
            pytest.skip(f"{len(missing)} of the {len(wanted)} full-profile results this claim needs are not "
                        f"stored for the present settings ({', '.join(missing)}); make them with "
                        f"`python -m modlib.weight_masks --profile full` (on the CPU; it resumes where it stopped)")
        return [(r.meta, r.arrays) for r in current.values()]
    if not out:
        pytest.skip(f"no full-profile results {pattern} of {chapter} are stored yet; make them with "
                    f"`make batch PROFILE=full NOTEBOOKS=notebooks/{chapter}.ipynb`")
    return out


def stored_full(chapter: str, names, config_of) -> dict[str, results.Result]:
    """The stored full results ``names`` of ``chapter``, each checked to be made by the committed
    code (:func:`load`) with the full profile's present settings, ``config_of(name)`` (skipped
    while one is not stored, failed when made otherwise)."""
    import json

    out = {}
    for name in names:
        found = load(chapter, name)
        if not found:
            pytest.skip(f"the full result {name} of {chapter} is not stored yet; make it with "
                        f"`make batch PROFILE=full NOTEBOOKS=notebooks/{chapter}.ipynb`")
        [(meta, _)] = found
        if meta["config"] != json.loads(json.dumps(config_of(name))):
            pytest.fail(f"{name} was made with other settings than the full profile's; remake it")
        out[name] = results.read(FULL / chapter / f"{name}.json")
    return out


def toy_sweep() -> toy.ToySweep:
    """Chapter 1's stored full sweep, made by the committed code with the full profile's present
    settings (skipped when not stored yet, failed when made otherwise)."""
    import json

    s, groups = toy.settings("full"), {}
    for activation in s.activations:
        for loss in s.losses:
            name = f"sweep-{activation}-{loss}"
            [(meta, _)] = load(toy.CHAPTER, name) or [(None, None)]
            wanted = json.loads(json.dumps(toy.experiment._group_config(s, activation, loss)))
            if meta["config"] != wanted:
                pytest.fail(f"{name} was made with other settings than the full profile's; remake it "
                            f"(python -m modlib.batch --profile full notebooks/{toy.CHAPTER}.ipynb)")
            groups[(activation, loss)] = results.read(FULL / toy.CHAPTER / f"{name}.json")
    return toy.ToySweep(s, groups, "full")


@pytest.fixture(scope="module")
def sweep():
    return toy_sweep()


@pytest.fixture(scope="module")
def toy_found(sweep):
    return toy_findings.redundant_input(sweep, toy.GENERALIZES, toy.PAPER_EPOCHS)


def generalises(sweep, f, activation="relu", loss="mse", reveal=1.0, design="binary"):
    """Which seeds of one setting generalise; the setting must have trained (a comparison of arms
    that did not fit their training set says nothing)."""
    a = sweep.arrays(activation, loss, f, reveal, design)
    assert toy_findings.trained(a), (f"{activation}, {loss}, ({f}), {design}, reveal {reveal}: mean "
                                     f"training accuracy {a['train_acc'].mean():.2f}, the arm did not train")
    return a["test_acc"] >= toy.GENERALIZES


def test_toy_in_b_the_paper_setting_generalises_less_than_every_control(toy_found):
    # the summary: in (b) fewer seeds generalise in the paper's setting than in each ternary
    # control (test cell unseen, X2 uncorrelated) and than with the cell in training; paired
    # intervals (Newcombe's) over 100 seeds exclude zero
    for name in (*toy.settings("full").controls, "cell"):
        finding = toy_found[f"{name}-b"]
        assert finding.holds, finding.text


def test_toy_in_a_only_the_middle_and_corner_controls_generalise_more(toy_found):
    # the page: in (a) the middle and corner controls beat the paper's setting; for the even-corner
    # control the interval holds both no difference and the margin: "cannot be decided here"
    for name in ("middle", "corner", "cell"):
        assert toy_found[f"{name}-a"].holds, toy_found[f"{name}-a"].text
    even = toy_found["even-a"]
    assert not even.holds and "cannot be decided here" in even.text and "wide enough" in even.text, even.text


@pytest.mark.parametrize("f", ["a", "b"])
def test_toy_reliance_ends_higher_in_the_paper_setting_than_in_the_controls(toy_found, f):
    for c in toy.settings("full").controls:
        finding = toy_found[f"reliance-{c}-{f}"]
        assert finding.holds, finding.text


@pytest.mark.parametrize("f", ["a", "b"])
def test_toy_curves_have_levelled_off_after_the_paper_epochs(toy_found, sweep, f):
    finding = toy_found[f"level-{f}"]
    assert finding.holds, finding.text
    for c, r in sweep.settings.conditions:  # every training set, not only the paper's
        a = sweep.arrays("relu", "mse", f, r, c)
        assert toy_findings.trained(a), (c, r, a["train_acc"].mean())  # levelled off at a fit, not at chance
        then = a["test_acc_curve"][:, list(a["curve_epochs"]).index(toy.PAPER_EPOCHS)]
        end = a["test_acc_curve"][:, -1]
        moved = abs((end >= toy.GENERALIZES).mean() - (then >= toy.GENERALIZES).mean())
        assert moved <= 0.05 and abs(end.mean() - then.mean()) <= 0.03, (c, r, moved)


@pytest.mark.parametrize("f", ["a", "b"])
def test_toy_the_boundary_in_the_cell_keeps_moving_after_epoch_1_then_settles(sweep, f):
    # the page: not in place at the first epoch (the paper's Fig. 5), settled by epoch 1024
    a = sweep.arrays("relu", "mse", f)
    first, paper = toy_findings.settled(a, 1), toy_findings.settled(a, toy.PAPER_EPOCHS)
    assert first < 0.8 and paper >= 0.9 and paper - first >= 0.2, (first, paper)


def test_toy_formulation_a_is_milder_than_b(toy_found):
    assert toy_found["formulation"].holds, toy_found["formulation"].text


def test_toy_in_b_nearly_every_seed_generalises_in_every_control(sweep):
    assert generalises(sweep, "b", reveal=0.0).mean() >= 0.95
    for c in sweep.settings.controls:
        assert generalises(sweep, "b", design=c).mean() >= 0.9, c


def test_toy_in_a_the_corner_control_generalises_less_than_the_middle_one(sweep):
    e = stats.paired(generalises(sweep, "a", design="corner"), generalises(sweep, "a", design="middle"),
                     shares=True)
    assert e.high < 0, f"corner - middle in (a): {e.text()}"


@pytest.mark.parametrize("f", ["a", "b"])
def test_toy_reliance_ends_highest_in_the_paper_setting(sweep, f):
    medians = {(c, r): float(np.median(sweep.arrays("relu", "mse", f, r, c)["final_reliance"]))
               for c, r in sweep.settings.conditions}
    assert max(medians, key=medians.get) == ("binary", 1.0), medians


def test_toy_training_lowers_the_reliance_the_initialisation_gave(sweep):
    # the page: training removes much of the dependence on x2 at initialisation, in every
    # training set (median over seeds, ReLU and squared loss)
    for f in sweep.settings.formulations:
        for c, r in sweep.settings.conditions:
            rel = np.median(sweep.arrays("relu", "mse", f, r, c)["reliance"], axis=0)  # [E]
            assert rel[-1] < 0.75 * rel[0], (f, c, r, rel[0], rel[-1])


def test_toy_the_training_loss_is_near_zero_at_the_end(sweep):
    for f in sweep.settings.formulations:
        for c, r in sweep.settings.conditions:
            loss = sweep.arrays("relu", "mse", f, r, c)["train_loss_curve"][:, -1]
            assert loss.mean() < 0.01, (f, c, r, loss.mean())


def test_toy_a_rare_cell_in_training_already_helps(sweep):
    e = stats.paired(generalises(sweep, "b", reveal=0.95), generalises(sweep, "b"), shares=True)
    assert e.low > 0, f"reveal 0.95 - paper's setting in (b): {e.text()}"


@pytest.mark.parametrize("f", ["a", "b"])
def test_toy_tanh_generalises_more_than_relu(toy_found, sweep, f):
    assert toy_found[f"tanh-{f}"].holds, toy_found[f"tanh-{f}"].text
    if f == "b":  # "the bias nearly disappears in (b)"
        assert generalises(sweep, "b", "tanh").mean() >= 0.9


def test_toy_with_tanh_in_a_the_corner_control_fails_as_often_as_the_paper_setting(sweep):
    # the page's limit: with tanh in (a) about one seed in ten fails, and whether the corner control
    # does better (the correlation's doing) cannot be decided here: the interval holds 0 and the margin
    corner, paper = (sweep.arrays("tanh", "mse", "a", 1.0, d) for d in ("corner", "binary"))
    v, text = toy_findings.compare("tanh-corner-a", generalises(sweep, "a", "tanh", design="corner"),
                                   generalises(sweep, "a", "tanh"), [corner, paper])
    assert v.outcome == stats.UNDECIDED and "wide enough" in v.why, text
    assert generalises(sweep, "a", "tanh").mean() < 0.95  # about one seed in ten fails


def test_toy_a_rare_cell_leaves_the_correlation_nearly_unchanged():
    # the page: at weight 0.05 X2 is "still correlated with Y1 almost as strongly"
    g = torch.Generator().manual_seed(0)
    corr = {}
    for r in (1.0, 0.95):
        x, y = toy_data.redundant_toy("b", 200_000, reveal=r, generator=g)
        corr[r] = float(torch.corrcoef(torch.stack([x[:, 1], y]))[0, 1])
    assert corr[1.0] < corr[0.95] < 0 and corr[0.95] / corr[1.0] > 0.85, corr


def test_toy_the_loss_matters_little(sweep, toy_found):
    # the summary: the share that generalises differs by at most about 10 points between the
    # squared loss and cross-entropy, in every formulation and activation; an absence, so stated
    # as an interval: every paired interval (Newcombe's, over the 100 seeds) lies within
    # toy_findings.LOSS_MARGIN of 0, both arms trained: the page's `loss-*` checks
    s = sweep.settings
    for f in s.formulations:
        for a in s.activations:
            mse, ce = (generalises(sweep, f, a, loss) for loss in s.losses)
            assert abs(mse.mean() - ce.mean()) <= 0.10, (f, a)
            assert toy_found[f"loss-{f}-{a}"].holds, toy_found[f"loss-{f}-{a}"].text


# ---------------------------------------------------------------- chapter 1: the distribution over seeds


def test_toy_in_b_the_failures_are_partial_not_total(sweep):
    # the page: most seeds in (b) miss the 0.9 cut, yet the median seed gets about 80% of the held-out
    # cell right and hardly any seed gets less than half of it: not the total failure of the paper's Fig. 6
    found = toy_findings.distribution(sweep, toy.GENERALIZES)
    assert found["partial-b"].holds, found["partial-b"].text
    acc = sweep.arrays("relu", "mse", "b")["test_acc"]
    assert generalises(sweep, "b").mean() < 0.5 and 0.7 <= np.median(acc) < toy.GENERALIZES, found["partial-b"].text


@pytest.mark.parametrize("f", ["a", "b"])
def test_toy_mean_held_out_accuracy_is_higher_with_the_cell_in_training(sweep, f):
    # the same comparison as the shares, without a cut: the mean held-out accuracy
    found = toy_findings.distribution(sweep, toy.GENERALIZES)
    assert found[f"acc-cell-{f}"].holds, found[f"acc-cell-{f}"].text


def test_toy_in_b_mean_held_out_accuracy_is_higher_in_every_control(sweep):
    found = toy_findings.distribution(sweep, toy.GENERALIZES)
    for c in sweep.settings.controls:
        assert found[f"acc-{c}-b"].holds, found[f"acc-{c}-b"].text


# ---------------------------------------------------------------- chapter 1: the later studies

def toy_studies_stored():
    """Chapter 1's three later studies (baselines, mechanism, scale) and issue 51's controls (coverage,
    mechanism-norm, scale-lr), stored at full and made by the committed code with the full profile's
    settings, beside the stored sweep."""
    from modlib.redundant_input_toy import baselines, coverage, mechanism, mechanism_norm, scale, scale_lr, studies

    s = toy.settings("full")
    configs = {"baselines": baselines._config(s, baselines.settings("full")),
               "mechanism": mechanism._config(s, mechanism.settings("full")),
               "scale": scale._config(s, scale.settings("full")),
               coverage.RESULT: coverage._config(s, coverage.settings("full")),
               mechanism_norm.RESULT: mechanism_norm._config(s, mechanism.settings("full")),
               scale_lr.RESULT: scale_lr._config(s, scale.settings("full"))}
    stored = stored_full(toy.CHAPTER, list(configs), configs.get)
    return studies.ToyStudies(toy_sweep(), stored, "full")


@pytest.fixture(scope="module")
def toy_studies():
    return toy_studies_stored()


def _toy_rule(x, y, arms, shares=True):
    """The book's rule on "``x`` exceeds ``y``" as chapter 1 applies it (paired over seeds, the stated
    margin, every arm trained), for a comparison the page does not print (so no registered claim)."""
    units = stats.distinct_units(x, y, *(a[k] for a in arms for k in ("test_acc", "reliance") if k in a))
    effect = stats.paired(x, y, units=units, shares=shares)
    v = effect.verdict(paper=stats.CLEAR, source=stats.STATED, trained=all(toy_findings.trained(a) for a in arms))
    return v, effect.text()


@pytest.fixture(scope="module")
def toy_studies_found(toy_studies):
    return toy_findings.studies(toy_studies)


def test_toystudy_least_squares_relies_on_x2_without_a_gradient_step(toy_studies, toy_studies_found):
    # the page: least squares, no gradient step, relies on x2 where x2 is correlated with Y1 (R clearly
    # above its value with the held-out cell in training), in (a) at least as much as gradient descent
    for f in ("a", "b"):
        paper = toy_studies.arrays("baselines", "least-squares", f)
        cell = toy_studies.arrays("baselines", "least-squares", f, "binary", 0.0)
        v, text = _toy_rule(paper["reliance"], cell["reliance"], [paper, cell], shares=False)
        assert v.reproduced, (f, text)
    finding = toy_studies_found["nogd-least-squares-a"]
    # the book's own hypothesis (the paper ran no minimisers): "does not hold", never ✗
    said = claims.untagged(finding.text)  # without the label of a claim written down after its results
    assert said.endswith(("— does not hold.", "opposite to the one claimed).")) and "✗" not in finding.text, \
        finding.text


def test_toystudy_only_the_maximum_margin_line_and_least_squares_in_b_rely_less(toy_studies_found):
    # the page: gradient descent relies on x2 clearly more than the maximum-margin line (both
    # formulations) and least squares in (b); no more than the random-features and linearised fits
    more = {k for k, f in toy_studies_found.items() if k.startswith("nogd-") and f.holds}
    assert more == {"nogd-max-margin-a", "nogd-max-margin-b", "nogd-least-squares-b"}, more
    for name in ("rf-min-norm", "rf-max-margin", "linearised"):
        for f in ("a", "b"):
            text = toy_studies_found[f"nogd-{name}-{f}"].text
            assert not text.endswith("— holds.") and "interval over 100 seeds" in text, text


def test_toystudy_the_maximum_margin_line_ignores_x2_and_generalises(toy_studies):
    for f in ("a", "b"):
        a = toy_studies.arrays("baselines", "max-margin", f)
        assert toy_findings.trained(a) and np.median(a["reliance"]) < 0.05, f
        assert (a["test_acc"] >= toy.GENERALIZES).mean() >= 0.9, f


def test_toystudy_the_kernel_fits_rely_on_x2_in_every_training_set(toy_studies):
    # the page: the minimum-norm random-features and linearised fits rely on x2 whether or not it is
    # correlated with Y1 (median R above 0.15 in every training set, both formulations)
    for f in ("a", "b"):
        for cond in toy_studies.conditions("baselines"):
            for name in ("rf-min-norm", "linearised"):
                a = toy_studies.arrays("baselines", name, f, *cond)
                assert toy_findings.trained(a) and np.median(a["reliance"]) > 0.15, (f, cond, name)


@pytest.mark.parametrize("f", ["a", "b"])
def test_toystudy_started_blind_to_x2_the_gradient_builds_reliance_early(toy_studies_found, f):
    finding = toy_studies_found[f"early-{f}"]
    assert finding.holds, finding.text


def test_toystudy_in_b_the_gradient_builds_reliance_where_x2_is_correlated(toy_studies_found):
    assert toy_studies_found["built-b"].holds, toy_studies_found["built-b"].text


def test_toystudy_in_a_what_the_gradient_builds_is_mostly_removed_again(toy_studies_found):
    # clear of no difference but below the margin: not reproduced
    text = toy_studies_found["built-a"].text
    assert "✗ not reproduced" in text and "interval over 100 seeds +0" in text, text


@pytest.mark.parametrize("f", ["a", "b"])
def test_toystudy_most_of_the_reliance_left_is_inherited(toy_studies, toy_studies_found, f):
    # the page: ordinary start ends above the zero-x2 start, and in (b) by more than the zero-x2
    # start's own reliance (the inherited part is the larger)
    finding = toy_studies_found[f"inherited-{f}"]
    assert finding.holds, finding.text
    ordinary, zero = (np.median(toy_studies.arrays("mechanism", arm, f)["reliance"])
                      for arm in ("ordinary", "zero-x2"))
    assert ordinary - zero > zero, (f, ordinary, zero)


@pytest.mark.parametrize("f", ["a", "b"])
def test_toystudy_started_blind_to_x2_more_seeds_generalise(toy_studies_found, f):
    assert toy_studies_found[f"zero-gen-{f}"].holds, toy_studies_found[f"zero-gen-{f}"].text


def test_toystudy_the_ordinary_start_is_the_sweeps_network(toy_studies):
    # the mechanism's ordinary arm trains the sweep's network again: the same numbers
    for f in ("a", "b"):
        for cond in toy_studies.conditions("mechanism"):
            ordinary = toy_studies.arrays("mechanism", "ordinary", f, *cond)
            sweep = toy_studies.sweep.arrays("relu", "mse", f, cond[1], cond[0])
            assert np.allclose(ordinary["test_acc"], sweep["test_acc"]), (f, cond)
            assert np.allclose(ordinary["reliance"], sweep["final_reliance"], rtol=1e-3), (f, cond)


def test_toystudy_the_larger_scale_makes_b_fail(toy_studies_found):
    # the page: shrunk to (a)'s scale, (b)'s training set is the mildest; enlarged, (a) fails more too
    for key in ("scale-b", "scale-a", "formulation-control"):
        assert toy_studies_found[key].holds, toy_studies_found[key].text


def test_toystudy_the_margin_helps_at_scale_1_and_hurts_at_scale_5(toy_studies, toy_studies_found):
    assert toy_studies_found["margin-x5"].holds, toy_studies_found["margin-x5"].text
    text = claims.untagged(toy_studies_found["margin-x1"].text)
    # the book's hypothesis: no ✓ / ✗ (an interval clear of 0 on the other side adds its plain words)
    assert text.endswith(("— does not hold.", "— does not hold (an effect was found, but in the direction "
                          "opposite to the one claimed).")) and "✗" not in text, text
    gen = {(shape, sc): (toy_studies.arrays("scale", sc, shape)["test_acc"] >= toy.GENERALIZES).astype(float)
           for shape in ("a", "b") for sc in ("x1", "x5")}
    arms = [toy_studies.arrays("scale", "x1", shape) for shape in ("b", "a")]
    v, text = _toy_rule(gen[("b", "x1")], gen[("a", "x1")], arms)
    assert v.reproduced, text  # at scale 1 the margin helps, clearly


def _stacked(runs, key):
    return np.stack([a[key] for _, a in runs])


def _addmul():
    runs = load(wm.CHAPTER, "addmul-seed*")
    assert len(runs) >= 5, f"only {len(runs)} seeds stored"
    tables = _stacked(runs, "table")  # [seeds, 5 rows, 2 ops]
    found = wm_findings.specialization(tables, _stacked(runs, "control"), wm.CHANCE["addmul"],
                                       _stacked(runs, "kept"), wm.mask_sizes("addmul", wm.settings("full").hidden))
    return tables, {f.name: f for f in found}


# What the full profile measured (5 seeds, each an independent base network; the verdicts by the book's
# rule, stats.RULE, paired t intervals over seeds): the + mask alone adds and cannot multiply, the ×
# mask alone multiplies at about 0.77 of the full network (reproduced, below the paper's 1); removing
# a mask loses its own operation far more than removing as many random weights (reproduced); the
# removal is selective, barely for the × mask (reproduced, interval from +0.00); it does not spare the
# other operation as a random removal does (not reproduced at this scale).


def test_weight_masks_every_base_network_trained_and_masks_keep_some_weights():
    runs = load(wm.CHAPTER, "addmul-seed*")
    tables, kept = _stacked(runs, "table"), _stacked(runs, "kept")
    assert (tables[:, 0] >= wm_findings.TRAINED).all(), "a base network did not learn both operations"
    assert not wm_findings.degenerate(kept[:, :2]), kept.round(3)
    share = wm_findings.kept_share(kept[:, :2], wm.mask_sizes("addmul", wm.settings("full").hidden))
    assert (share > 0.01).all() and (share < 0.5).all(), share.round(3)


def test_weight_masks_each_mask_alone_does_its_own_operation_reproduced():
    tables, found = _addmul()
    f = found["each mask alone does its own operation only"]
    assert f.outcome == stats.REPRODUCED, f.text
    assert "below the paper's +1.00" in f.text  # the × mask keeps about 0.77 of ×, not all of it
    assert (tables[:, 3, 1] / tables[:, 0, 1] < 0.8).all()


def test_weight_masks_removing_a_mask_loses_its_own_operation():
    _, found = _addmul()
    f = found["removing a mask loses its own operation"]
    assert f.outcome == stats.REPRODUCED, f.text


def test_weight_masks_removing_a_mask_is_selective_barely_for_times():
    # the × mask's removal leaves + little above × (interval from +0.00): clear of 0 at most by a hair,
    # its estimate below the margin, so the rule cannot decide; the + mask's removal is selective
    tables, found = _addmul()
    f = found["removing a mask is selective"]
    assert f.outcome == stats.UNDECIDED and "falls short of the margin" in f.verdict.why, f.text
    assert re.search(r"interval \+0\.00\d", f.text), f.text  # clear of 0, by a hair: its side shown
    # the + mask's removal alone is clear of 0 (described beside the verdict, not decided: one claim, one verdict)
    plus = re.search(r"\+ mask removed, paired t interval ([+-]\d\.\d\d) to", f.text)
    assert plus and float(plus.group(1)) > 0, f.text


def test_weight_masks_each_mask_drops_the_other_operations_input():
    runs = load(wm.CHAPTER, "addmul-seed*")
    first = np.stack([a["first_layer"] for _, a in runs]).astype(float).mean(2)  # [seeds, 3 masks, 42 inputs]
    plus_op, times_op = 40, 41  # the operation's one-hot units
    assert (first[:, 0, times_op] < 0.01).all() and (first[:, 1, plus_op] < 0.01).all()
    assert (first[:, 0, plus_op] > 0.1).all() and (first[:, 1, times_op] > 0.1).all()


def test_weight_masks_removal_sparing_the_other_operation_not_reproduced_at_this_scale():
    # not a band of numbers: against the random removal of as many weights (which spares the other
    # operation), the learned removal costs it clearly more; the interval excludes the paper's sparing
    _, found = _addmul()
    f = found["removing a mask spares the other operation"]
    assert f.outcome == stats.NOT_REPRODUCED and "which spares it" in f.text, f.text


def _double():
    runs = load(wm.CHAPTER, "double-seed*")
    assert len(runs) >= 5
    return runs, _stacked(runs, "table")  # [seeds, 7 rows (wm.PAIR_ROWS), 2 pairs]


def test_double_addition_pairs_overlap_less_than_two_masks_of_one_pair():
    runs, tables = _double()
    found = wm_findings.reuse(*(_stacked(runs, k) for k in ("iou", "iou_same", "iou_random")), tables,
                              _stacked(runs, "kept"), wm.mask_sizes("double", wm.settings("full").hidden))
    assert [f.outcome for f in found] == [stats.REPRODUCED], [f.text for f in found]
    same = wm_findings.hidden_layers(_stacked(runs, "iou_same"))
    assert (same < 0.99).all(), "two pair-1 masks from different seeds are one mask: the reference is void"


def test_double_addition_ablations_as_measured_not_the_papers_at_this_scale():
    """The rows the page discusses: the both-pairs mask (trained at the full profile's alpha, five
    times the authors' 4e-4) fails both pairs; removing one pair's mask leaves that pair partly
    working (the network computes it redundantly) and the other pair whole; a random removal of as
    many weights leaves the pair whole, so the learned removal takes more of it than chance does."""
    runs, tables = _double()
    controls = _stacked(runs, "control")  # [seeds, 4 rows, 2 pairs]
    rows = {name: k for k, name in enumerate(wm.PAIR_ROWS)}
    assert (tables[:, 0] >= wm_findings.TRAINED).all(), "a base network did not learn both additions"
    assert (tables[:, rows["both-pairs mask"]] < 0.5).all(), "the both-pairs mask now works: update the page"
    for k, name in enumerate(("pair-1 mask removed", "pair-2 mask removed")):
        own, other = tables[:, rows[name], k], tables[:, rows[name], 1 - k]
        random_own = controls[:, 1 + 2 * k, k]
        v = stats.paired(random_own, own).verdict(paper=1.0)
        assert v.outcome == stats.REPRODUCED, (name, v)
        assert (other > 0.95).all(), f"{name}: the other pair should be untouched, {other.round(3)}"
        assert (own > 0.3).all(), f"{name}: own pair {own.round(3)}"


def _class_removal():
    ((meta, a),) = load(wm.CHAPTER, "cnn-seed0")
    acc = wm.removal_accuracy(a["confusion"], a["confusion_random"])
    found = wm_findings.class_removal(acc["own"], acc["others"], acc["reference"],
                                   random_own=acc["random_own"], random_others=acc["random_others"])
    return acc, {f.name: f for f in found}


def test_class_removal_one_network_cannot_decide_though_every_class_is_hurt_more():
    # one CNN: the ten classes are measurements within one network, so the rule says "cannot be
    # decided here"; within that network every class loses more than the others (sign test 0.002)
    acc, found = _class_removal()
    f = found["removing a class's mask hurts that class more than the others"]
    assert f.outcome == stats.UNDECIDED and "one unit only" in f.text, f.text
    own_drop = acc["reference"] - acc["own"]
    others_drop = wm_findings.others_reference(acc["reference"]) - acc["others"]
    assert stats.sign_test(own_drop - others_drop) < 0.01
    assert (acc["others"] - acc["random_others"]).mean() > 0.2  # random masks as dense damage the others


def test_class_removal_collapse_cannot_be_decided_and_is_partial_here():
    acc, found = _class_removal()
    assert found["the removed class collapses"].outcome == stats.UNDECIDED
    assert (acc["own"] < 0.5 * acc["reference"]).sum() <= 3  # most classes lose part of their accuracy only


# --- chapter 4, the added experiments (issue 32): what the verdicts depend on ------------------------
# Skipped until `python -m modlib.weight_masks --profile full --added` has stored them. These tests pin
# what must hold whatever the outcome (networks trained, controls that work, verdicts the rule can
# decide); the outcomes themselves are pinned (test_added_stored_*) as the page says them.
# tests/test_degenerate_4_6.py runs each (they start with test_added_) on degenerate variants.


def _added(*patterns):
    """The added experiments' full results (:func:`modlib.weight_masks.findings.added`) and their
    statements by name; skipped while a result of ``patterns`` is missing, failed when one is stale."""
    for pattern in patterns:
        load(wm.CHAPTER, pattern)
    c, s = wm.causes_settings("full"), wm.settings("full")
    d = wm_findings.added(wm.curves("full", wm.collect("full")), c.depth, wm.shape_name(s.hidden),
                          wm.shape_name(c.reuse_hidden))
    return d, {f.name: f for f in wm_findings.added_claims(d, wm.CHANCE["addmul"])}


DECIDED = (stats.REPRODUCED, stats.NOT_REPRODUCED)


def _registered(found: dict, cid: str):
    """The statement of chapter 4's registered claim ``cid`` among ``found`` (by its registry key:
    the names of the reuse control's claims are the full profile's, whatever the network's label)."""
    (f,) = [f for f in found.values() if f.verdict is not None and f.verdict.claim == f"weight_masks/{cid}"]
    return f


def decided_or_wide(f) -> bool:
    """Decided by the rule, or undecided only because its interval is wide enough for both no effect
    and the margin, or its estimate falls short of the margin while the interval reaches it (every
    network trained, every control passed): what an honest small study may find, where a failed arm
    or control may not hide."""
    return f.verdict.outcome in DECIDED or stats.open_interval(f.verdict)


def test_added_width_curve_is_decided_between_networks_that_trained():
    d, found = _added("width*", "addmul-seed*")
    c = wm.causes_settings("full")
    assert set(d["width"]) == {(w,) * c.depth for w in c.widths} | {tuple(c.other_depth)}
    assert all(len(p["table"]) == c.seeds for p in d["width"].values())
    widest = d["width"][(max(c.widths),) * c.depth]
    assert (widest["table"][:, 0] >= wm_findings.TRAINED).all(), "the widest network did not train"
    for name in ("a wider network's + and × masks share fewer weights",
                 "a wider network's removal spares the other operation more",
                 f"{len(c.other_depth)} hidden layers spare the other operation more than {c.depth}"):
        assert decided_or_wide(found[name]), found[name].text


def test_added_alpha_curve_keeps_less_as_alpha_grows_and_is_decided():
    d, found = _added("alphacurve*", "addmul-seed*")
    alphas = sorted(d["alpha"])
    assert len(alphas) == len(wm.causes_settings("full").alphas) + 1  # and the main alpha, from addmul
    kept = [d["alpha"][a]["share"].mean() for a in alphas]
    assert all(a > b for a, b in zip(kept, kept[1:])), kept  # a stronger regulariser keeps fewer weights
    assert decided_or_wide(found["a stronger regulariser spares the other operation more"]), \
        found["a stronger regulariser spares the other operation more"].text


def test_added_stored_authors_schedule_over_three_networks_fails_its_control():
    """Three networks at the authors' schedule (issue 52): the claim cannot be decided because its
    registered control fails (a random removal as dense as the × mask leaves + below half), which the
    statement says; the networks trained and the masks are not degenerate."""
    d, found = _added("authors*", "addmul-seed*")
    f = found["at the authors' schedule, removing a mask spares the other operation"]
    assert len(d["authors"]["table"]) == 3
    assert f.outcome == stats.UNDECIDED and "a control did not pass" in f.text, f.text
    assert "(check failed: below half)" in f.text, f.text
    assert (d["authors"]["table"][:, 0] >= wm_findings.TRAINED).all()
    assert not wm_findings.degenerate(d["authors"]["kept"]), d["authors"]["kept"].round(4)


def test_added_reuse_positive_control_works_and_is_decided():
    d, found = _added("copyweight*", "double-seed*", "reuse*")
    for x, label in ((d["copy"], d["main"]), (d["reuse"], d["deep"])):
        # the copied network computes both sums: pair 1 runs on pair 2's weights
        assert (x["copy_table"][:, 0] >= wm_findings.TRAINED).all(), x["copy_table"][:, 0]
        assert f"the whole-task mask at the authors' α does both pairs ({label})" in found
    # on the main network the measure finds the forced reuse; on the deeper one it is decided where its
    # masks do their own task, and otherwise (as stored: the 512×4 pair masks keep a tenth of their pair
    # alone at this mask schedule, in the copied network and in the network itself) cannot be, for that
    # reason, which the page says
    for cid in ("control-apart-main", "control-random-main"):
        assert _registered(found, cid).outcome == stats.HOLDS, _registered(found, cid).text
    r = d["reuse"]
    f = _registered(found, "control-apart-deep")
    alone = np.stack([r["copy_table"][:, 1, 0], r["copy_table"][:, 3, 1]]) / r["copy_table"][:, 0].T
    if (alone >= 0.5).all():
        assert decided_or_wide(f), f.text
    else:
        assert f.outcome == stats.UNDECIDED and "do not do their task" in f.text, f.text
    f = _registered(found, "reuse-deep")
    assert decided_or_wide(f) or (f.outcome == stats.UNDECIDED and "fail their own task" in f.text), f.text
    assert len(wm.causes_settings("full").reuse_hidden) >= 3


def test_added_class_removal_over_three_cnns_is_decided_and_placed():
    d, found = _added("cnnlayers*")
    assert len(d["cnn"]["accs"]) >= 3
    name = "removing a class's mask hurts that class more than the others, over networks"
    assert decided_or_wide(found[name]), found[name].text
    # the collapse's size cannot be decided (issue 52: the paper gives none); as registered, it was decided
    gone = found["the removed class collapses, over networks"]
    assert gone.outcome == stats.UNDECIDED and "gives no number" in gone.text, gone.text
    assert claims.decisions(wm.CHAPTER)[gone.verdict.claim].registered_outcome != stats.UNDECIDED
    assert "classes are removed mostly in the dense layer before the output" in found
    np.testing.assert_array_equal(d["cnn"]["dropped"][..., -1], 0)  # the output layer's mask is fixed


def test_added_heldout_networks_trained_on_their_problems():
    d, found = _added("heldout*")
    h = d["heldout"]
    assert (h["table"][:, 0] >= wm_findings.TRAINED).all(), h["table"][:, 0]
    assert "the networks answer held-out problems" in found


def test_added_stored_outcomes_as_the_summary_prints_them():
    # the page's summary, as stored: the + and × masks of a wider network share fewer weights (the
    # paper's measure), but not fewer than their density makes; raw, the other operation keeps more
    # after the removal in the wider network and at the stronger α, while a random removal as dense
    # keeps more still, so sparing falls: the page's hypotheses do not hold; the compared ends' masks
    # do their own operation alone (from 0.5)
    d, found = _added("width*", "alphacurve*", "addmul-seed*")
    c = wm.causes_settings("full")
    assert found["a wider network's + and × masks share fewer weights"].outcome == stats.REPRODUCED
    for name in ("a wider network's masks share fewer weights than their density makes",
                 "a wider network's removal spares the other operation more",
                 f"{len(c.other_depth)} hidden layers spare the other operation more than {c.depth}",
                 "a stronger regulariser spares the other operation more"):
        assert found[name].outcome == stats.DOES_NOT_HOLD, found[name].text
    lo, hi = wm_findings.width_ends(d["width"], c.depth)
    a, b = wm_findings.alpha_ends(d["alpha"])
    for narrow, wide in ((d["width"][lo], d["width"][hi]), (d["alpha"][a], d["alpha"][b])):
        (r0, c0), (r1, c1) = (wm_findings.retention(p["table"], p["control"]) for p in (narrow, wide))
        assert r1.mean() > r0.mean() + 0.1 and c1.mean() - c0.mean() > r1.mean() - r0.mean(), (r0, r1, c0, c1)
        assert min(wm_findings.alone(p["table"]).min() for p in (narrow, wide)) >= 0.5
    ratio = [np.mean(d["width"][h]["overlap"] / d["width"][h]["overlap_chance"]) for h in (lo, hi)]
    assert ratio[1] > ratio[0], ratio  # relative to chance the wider network's masks share more


def test_added_stored_authors_schedule_is_compared_at_one_alpha():
    # the summary compares the authors' schedule with the page's steps at the authors' α (the α
    # curve's point, the networks of the main result), not with the page's α; the networks differ in
    # weights (two devices), which the statement says
    d, found = _added("authors*", "alphacurve*", "addmul-seed*")
    f = found["at the authors' schedule, removing a mask spares the other operation"]
    assert "matched" in d and "At the authors' α with the page's steps" in f.text, f.text
    m = d["matched"]  # networks that trained, distinct, with masks that can be read
    assert wm_findings._usable(m) and stats.distinct_units(m["table"]) == len(m["table"]), m["table"][:, 0]
    if d["devices"].get("authors") != d["devices"].get("book"):
        assert "their weights differ" in f.text, f.text


def test_added_stored_whole_task_mask_and_held_out_problems_hold():
    d, found = _added("copyweight*", "reuse*", "heldout*")
    for label in (d["main"], d["deep"]):
        f = found[f"the whole-task mask at the authors' α does both pairs ({label})"]
        assert f.holds, f.text
    assert found["the networks answer held-out problems"].holds
    held = found["each mask alone does its own operation only (held-out problems)"]
    assert held.outcome == stats.REPRODUCED, held.text
    assert found["removing a mask spares the other operation (held-out problems)"].outcome == stats.NOT_REPRODUCED


def test_added_stored_reuse_control_passes_and_class_collapse_fails_over_networks():
    d, found = _added("copyweight*", "double-seed*", "cnnlayers*")
    for cid in ("control-apart-main", "control-random-main"):
        f = _registered(found, cid)
        assert f.outcome == stats.HOLDS and "identical" not in f.text, f.text
    assert found["removing a class's mask hurts that class more than the others, over networks"].outcome == \
        stats.REPRODUCED
    # issue 52: the paper gives no size for "drops significantly", so the size claim cannot be decided;
    # under the stand-in it was registered with (a loss of about 80%) it was not reproduced
    collapse = found["the removed class collapses, over networks"]
    assert collapse.outcome == stats.UNDECIDED and "as registered: ✗ not reproduced" in collapse.text, collapse.text


# --- chapter 2: compositional generalization from first principles (multi-sprite) ---------------

SHARPNESS = {r: spec[4] for r, spec in cs.ROWS.items() if r.startswith("sharpness")}


@pytest.fixture(scope="module")
def sprite_runs() -> cs.SpriteRuns:
    """The rows chapter 2's page reads (:func:`modlib.compositional_sprites.causes.page_runs`): the
    stored full rows recomputed with each seed on its own scenes (:func:`stored_full`)."""
    from modlib.compositional_sprites import causes as cs_causes

    return _recomputed([cs_causes.PREFIX + row for row in cs.settings("full").rows])


def _recomputed(names: list[str]) -> cs.SpriteRuns:
    """Chapter 2's stored full rows recomputed with each seed on its own scenes, ``names`` (each
    :data:`~modlib.compositional_sprites.causes.PREFIX` and a row), as runs keyed by row."""
    from modlib.compositional_sprites import causes as cs_causes

    s, c = cs.settings("full"), cs_causes.causes_settings("full")
    found = stored_full(cs.CHAPTER, names, lambda n: cs_causes._config(s, n[len(cs_causes.PREFIX):], c))
    return cs.SpriteRuns(s, {n[len(cs_causes.PREFIX):]: r for n, r in found.items()}, "full")


@pytest.fixture(scope="module")
def sprite_found(sprite_runs):
    return cs_findings.compositional_sprites(sprite_runs, SHARPNESS)


def final_r2(runs, row):
    a = runs.arrays(row)
    return a["r2_in"][:, -1], a["r2_whole"][:, -1]


def test_sprites_compositional_model_generalises_on_the_orthogonal_support(sprite_runs, sprite_found):
    assert sprite_found["orthogonal"].holds, sprite_found["orthogonal"].text
    r_in, r_whole = final_r2(sprite_runs, "orthogonal")
    assert len(r_whole) >= 5  # a headline row: five seeds, each on its own scenes
    assert (r_whole >= 0.8).all() and (np.abs(r_in - r_whole) <= 0.05).all(), (r_in, r_whole)


def test_sprites_monolithic_model_fits_the_planes_and_fails_off_them(sprite_runs, sprite_found):
    # the headline counts the seeds in which both models fit (4 of 5 monolithic seeds here): every
    # monolithic seed, fitted or not, fails off the planes, and the compositional model beats it on
    # the whole cube by far, seed for seed
    assert sprite_found["monolithic"].holds, sprite_found["monolithic"].text
    r_in, r_whole = final_r2(sprite_runs, "orthogonal-monolithic")
    fit = r_in >= cs_findings.FIT
    assert fit.sum() >= 4 and (r_whole <= 0.3).all(), (r_in, r_whole)
    comp = final_r2(sprite_runs, "orthogonal")[1]
    assert (comp - r_whole).min() > 0.5, (comp, r_whole)


def test_sprites_the_two_models_see_the_same_training_scenes():
    # the comparison isolates the model: same support, same scenes, same evaluation sets
    s = cs.settings("smoke")
    for split in ("train", "in-domain", "whole"):
        a = cs.data(s, "orthogonal", 50, split, 0)
        b = cs.data(s, "orthogonal-monolithic", 50, split, 0)
        assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


def test_sprites_the_monolithic_failure_grows_as_its_fit_improves(sprite_runs):
    # the page: "the better it fits the planes, the worse it does off them"
    a = sprite_runs.arrays("orthogonal-monolithic")
    r_in, r_whole = a["r2_in"].mean(0), a["r2_whole"].mean(0)
    assert r_in[-1] > r_in[0] + 0.3 and r_whole[-1] < r_whole[0] - 0.3, (r_in, r_whole)


def test_sprites_random_support_both_models_fit(sprite_runs, sprite_found):
    # on the random support the whole cube is in-domain (both test sets are uniform on the cube), so
    # "in-domain ≈ whole" cannot fail and is only a check of the evaluation; the claim that can fail
    # is the fit: every compositional seed fits, and at least one monolithic seed does (not every one
    # after 60 epochs), each seed that fits losing nothing
    assert sprite_found["random"].holds, sprite_found["random"].text
    comp, mono = (final_r2(sprite_runs, row) for row in ("random", "random-monolithic"))
    assert (comp[0] >= cs_findings.FIT).all() and (mono[0] >= cs_findings.FIT).any(), (comp, mono)
    for r_in, r_whole in (comp, mono):
        fit = r_in >= cs_findings.FIT
        assert (np.abs(r_in - r_whole)[fit] <= 0.05).all(), (r_in, r_whole)


def test_sprites_narrow_diagonal_is_clearly_worse_than_wide(sprite_runs, sprite_found):
    assert sprite_found["diagonal"].holds, sprite_found["diagonal"].text
    wide, mid, narrow = (final_r2(sprite_runs, f"diagonal-{d}")[1] for d in ("0.2", "0.1", "0.05"))
    # every seed, and the order of the three widths on average
    assert narrow.max() < wide.min() and wide.mean() - narrow.mean() >= 0.05, (wide, narrow)
    assert wide.mean() > mid.mean() > narrow.mean(), (wide, mid, narrow)
    # in-domain they are alike: what changes is the whole cube
    ins = [final_r2(sprite_runs, f"diagonal-{d}")[0] for d in ("0.2", "0.05")]
    assert abs(ins[0].mean() - ins[1].mean()) < 0.03, ins


def test_sprites_gap_costs_more_than_the_full_orthogonal_support(sprite_runs, sprite_found):
    assert sprite_found["gap-drop"].holds, sprite_found["gap-drop"].text
    drop = {r: np.subtract(*final_r2(sprite_runs, r)) for r in ("gap", "orthogonal")}
    assert drop["gap"].min() > drop["orthogonal"].max(), drop


def test_sprites_orthogonal_variants_lose_little(sprite_runs):
    # the page: broad, normal and the wide diagonal lose little, like the orthogonal support, and
    # far less than the gap or the narrow diagonal
    worst_small = 0.0
    for row in ("orthogonal", "orthogonal-broad", "normal", "diagonal-0.2"):
        r_in, r_whole = final_r2(sprite_runs, row)
        assert (r_whole >= 0.8).all() and (r_in - r_whole <= 0.1).all(), (row, r_in, r_whole)
        worst_small = max(worst_small, (r_in - r_whole).mean())
    for row in ("gap", "diagonal-0.05"):
        r_in, r_whole = final_r2(sprite_runs, row)
        assert (r_in - r_whole).mean() > 2 * worst_small, (row, r_in - r_whole, worst_small)


def test_sprites_alpha_seeds_that_fit_generalise(sprite_runs, sprite_found):
    assert sprite_found["alpha"].holds, sprite_found["alpha"].text
    a = sprite_runs.arrays("alpha")
    fit = a["r2_in"][:, -1] >= cs_findings.FIT
    assert 2 <= fit.sum() < fit.size, fit  # the page: some seeds fit (2 of 5), the others stay flat
    assert (np.abs(a["r2_in"][fit, -1] - a["r2_whole"][fit, -1]) <= 0.05).all()
    # the page says the others never left their starting output: flat from the first evaluation
    assert (np.ptp(a["r2_in"][~fit], axis=1) < 0.01).all(), a["r2_in"][~fit]


def test_sprites_sharper_occlusion_fails_to_train_but_most_fitted_seeds_generalise(sprite_runs, sprite_found):
    # the page, each seed on its own scenes: a smaller share of seeds fits at the sharpest k, and most
    # (not all: the page names the exceptions) of the seeds that fit reach 0.8 on the whole cube
    rows = ["orthogonal", *sorted(SHARPNESS, key=SHARPNESS.get)]
    fits = [(final_r2(sprite_runs, r)[0] >= cs_findings.FIT).mean() for r in rows]
    assert fits[0] == 1 and fits[-1] < fits[0], dict(zip(rows, fits))
    assert all(a >= b for a, b in zip(fits, fits[1:])), dict(zip(rows, fits))  # never a larger share as k grows
    general = np.concatenate([r_whole[r_in >= cs_findings.FIT] >= 0.8
                              for r_in, r_whole in (final_r2(sprite_runs, r) for r in rows)])
    assert 0.8 <= general.mean() < 1, general
    assert not sprite_found["sharpness"].holds, sprite_found["sharpness"].text  # "every fitted seed" fails
    text = cs_findings.sharpness_seeds(sprite_runs, {"orthogonal": 1.0, **SHARPNESS})
    assert text["astray"] != "no seed" and f"{int(general.sum())} of the {general.size}" in text["general"], text


def test_sprites_a_closed_start_explains_the_stuck_alpha_seeds_not_the_soft_occlusion_ones(sprite_runs, sprite_found):
    # with alpha compositing the seeds that never fit started with (almost) no gradient reaching the
    # slot decoders and those that fit with all of it; with soft occlusion, each seed on its own
    # scenes, a seed that fit started as closed as the one that did not (the page: a hypothesis no more)
    reach = {rows[0]: (np.concatenate([cs_findings.gradient_reach(sprite_runs, r) for r in rows]),
                       np.concatenate([final_r2(sprite_runs, r)[0] >= cs_findings.FIT for r in rows]))
             for rows in (["orthogonal", *SHARPNESS], ["alpha"])}
    r, fit = reach["alpha"]
    assert (~fit).any() and fit.sum() >= 2 and r[~fit].max() < 0.05 < r[fit].min(), (r, fit)
    r, fit = reach["orthogonal"]
    assert (~fit).any() and r[fit].min() <= r[~fit].max(), (r, fit)
    assert not sprite_found["reach"].holds, sprite_found["reach"].text


def test_sprites_gradient_reach_is_the_lower_slots_weight():
    # soft occlusion: sigma(-k * sum_rgb top); a top slot of mass m everywhere gives sigma(-k m)
    s = cs.settings("smoke")
    runs = cs.SpriteRuns(s, {}, "smoke")
    runs.arrays = lambda row: {"r2_in": np.zeros((1, 1)), "r2_whole": np.zeros((1, 1))}
    reach = cs_findings.gradient_reach(runs, "sharpness-4", n=8)
    torch.manual_seed(0)
    model = cs.build(s, "sharpness-4")
    z, _ = cs.data(s, "sharpness-4", 8, "train", 0)
    with torch.no_grad():
        top = model.slot_images(z)[:, 0].sum(1)
    assert reach[0] == pytest.approx(torch.sigmoid(-4 * top).mean().item())
    assert 0 < reach[0] < 1


# --- chapter 3: gradient descent resists compositionality, at scale (MNIST pairs, SCAN) ----------

@pytest.fixture(scope="module")
def resist_runs() -> rs.ResistRuns:
    """Chapter 3's stored full results (:func:`stored_full`)."""
    s = rs.settings("full")
    rows = stored_full(rs.CHAPTER, rs.RESULTS, lambda name: rs.experiment.result_config(s, name))
    return rs.ResistRuns(s, rows, "full")


@pytest.fixture(scope="module")
def resist_found(resist_runs):
    return rs_findings.resists_at_scale(resist_runs)


def test_resists_full_is_the_papers_settings_with_five_seeds(resist_runs):
    assert resist_runs.settings == rs.settings("paper") and resist_runs.settings.seeds >= 5
    assert all(len(resist_runs.arrays(n)["final_train"]) == resist_runs.settings.seeds for n in rs.RESULTS)


@pytest.mark.parametrize("experiment", rs.EXPERIMENTS)
def test_resists_setting_a_trains_faster_early(resist_runs, resist_found, experiment):
    assert resist_found[f"{experiment}-early"].holds, resist_found[f"{experiment}-early"].text
    a, b = (rs_findings.early_train_accuracy(resist_runs, f"{experiment}-{s}") for s in "AB")
    e = stats.paired(a, b)  # 5 seeds: a t interval, not a bootstrap
    assert e.low > 0 and (a > b).all(), (a, b)
    if experiment == "mnist":  # the page calls MNIST's head start clear, SCAN's a few points
        assert e.mean >= stats.CLEAR, e.mean


@pytest.mark.parametrize("experiment", rs.EXPERIMENTS)
def test_resists_setting_a_has_the_larger_train_test_gap(resist_runs, resist_found, experiment):
    assert resist_found[f"{experiment}-gap"].holds, resist_found[f"{experiment}-gap"].text
    gap = {s: resist_runs.arrays(f"{experiment}-{s}")["final_train"]
           - resist_runs.arrays(f"{experiment}-{s}")["final_test"] for s in "AB"}
    # a margin well outside the spread over seeds: every seed of A above every seed of B, and the
    # difference of the means more than three standard deviations of either setting
    assert gap["A"].min() > gap["B"].max(), gap
    assert gap["A"].mean() - gap["B"].mean() > 3 * max(gap["A"].std(), gap["B"].std()), gap


@pytest.mark.parametrize("experiment", rs.EXPERIMENTS)
def test_resists_setting_b_train_and_test_agree(resist_found, experiment):
    assert resist_found[f"{experiment}-b-agrees"].holds, resist_found[f"{experiment}-b-agrees"].text


def test_resists_scan_setting_a_fails_the_test_commands(resist_runs, resist_found):
    assert resist_found["scan-test"].holds, resist_found["scan-test"].text
    a = resist_runs.arrays("scan-A")
    assert (a["final_train"] > 0.9).all() and (a["final_test"] < a["final_train"] / 4).all(), a


def test_resists_scan_setting_b_on_commands_it_never_saw(resist_found):
    # B's test accuracy is partly memory (its training set holds test commands); on the rest it
    # still beats A clearly
    assert resist_found["scan-unseen"].holds, resist_found["scan-unseen"].text


def test_resists_setting_a_cnn_relies_on_the_right_digit(resist_runs, resist_found):
    assert resist_found["mnist-swap"].holds, resist_found["mnist-swap"].text
    a = resist_runs.arrays("mnist-A")
    assert (a["final_test"] > 0.5).all(), a["final_test"]  # "far above chance" (0.1): it reads the left digit too


def test_resists_scan_early_lead_is_the_one_word_jump(resist_runs, resist_found):
    # the page: on all training commands A leads early; on multi-word training commands exact-match
    # accuracy is at its floor in both settings over steps 10-25, so whether the correlation speeds
    # up the compositional part *cannot be decided here* (not "no effect")
    assert resist_found["scan-early"].holds, resist_found["scan-early"].text
    a, b = (rs_findings.early_train_accuracy(resist_runs, f"scan-{s}", "acc_train_long") for s in "AB")
    assert max(a.max(), b.max()) <= rs_findings.FLOOR, (a, b)
    long = resist_found["scan-early-long"]
    assert not long.holds and "cannot be decided here" in long.text and "floor" in long.text, long.text


def test_resists_shown_translations(resist_runs):
    # the page: no seed of A translates any shown command (none of which B trained on); B's nearly all
    from modlib.data import scan as scan_data

    _, test = scan_data.split("add-jump")
    truth = [test[i][1] for i in rs.shown_commands(resist_runs.settings.seeds).tolist()]
    right = {}
    for s in "AB":
        said = resist_runs.arrays(f"scan-{s}")["shown_pred"]  # [S, R, T]
        right[s] = np.array([[" ".join(scan_data.ACTION_VOCAB.decode(p)) == t for p, t in zip(seed, truth)]
                             for seed in said])
    assert right["A"].sum() == 0 and right["B"].mean() >= 0.9, right


# --- chapter 3's controls: the correlation removed, the dose-response, the authors' B, measures, defaults -----

def stored_controls() -> rs.ResistRuns:
    """Chapter 3's stored full results with its control results (:mod:`modlib.resists_at_scale.controls`),
    made by the committed code with the full profile's present settings (skipped while any is not
    stored, failed when made otherwise)."""
    from modlib.resists_at_scale import controls as rc

    s, c = rs.settings("full"), rc.settings("full")
    rows = stored_full(rs.CHAPTER, rs.RESULTS, lambda name: rs.experiment.result_config(s, name))
    rows.update(stored_full(rs.CHAPTER, rc.result_names(c), lambda name: rc.config(c, name)))
    return rs.ResistRuns(s, rows, "full", c)


@pytest.fixture(scope="module")
def control_runs() -> rs.ResistRuns:
    return stored_controls()


@pytest.fixture(scope="module")
def control_found(control_runs):
    return rs_findings.controls(control_runs)


def test_controls_full_is_the_papers_training_with_five_seeds():
    from dataclasses import asdict

    from modlib.resists_at_scale import controls as rc

    c, paper = asdict(rc.settings("full")), asdict(rs.settings("paper"))
    shared = [k for k in c if k in paper and k != "seeds"]
    assert len(shared) >= 15 and all(c[k] == paper[k] for k in shared), shared
    assert c["seeds"] >= 5 and c["extra_seeds"] >= 3 and not c["only"]
    assert len(set(c["dose"]) | {rc.CONTROL_OFFSETS}) >= 4  # at least four levels for the slope


def test_controls_the_designs_remove_the_information():
    # the data alone: the control's redundant input tells under a tenth of what setting A's tells
    from modlib.resists_at_scale import controls as rc

    info = rc.information_table(rc.settings("full"))
    for experiment in ("MNIST", "SCAN"):
        a, c = info[f"{experiment} A"], info[f"{experiment} C"]
        assert c["share"] < 0.06 and c["bits"] < a["bits"] / 5 and a["share"] > 0.6, (experiment, a, c)


def test_controls_mnist_without_the_correlation_the_unseen_offset_costs_little(control_runs, control_found):
    assert control_found["mnist-control-gap"].holds, control_found["mnist-control-gap"].text
    assert control_found["mnist-control-agrees"].holds, control_found["mnist-control-agrees"].text
    c = control_runs.arrays("mnist-C")
    assert (c["final_test"] > 0.8).all(), c["final_test"]


def test_controls_scan_without_the_correlation_jump_goes_into_a_new_frame(control_runs, control_found):
    # the page: C's gap is smaller than A's (the rule's verdict), "jump" is translated almost perfectly
    # in a frame it was never seen in by most seeds, and C's gap is not shown to be within 5 points of 0
    assert control_found["scan-control-gap"].holds, control_found["scan-control-gap"].text
    c = control_runs.arrays("scan-C")
    assert len(set(c["held_out"].tolist())) == len(c["held_out"])  # a different held-out frame per seed
    assert (c["final_test"] >= 0.95).sum() > len(c["final_test"]) / 2, c["final_test"]
    assert (c["final_train"] >= 0.95).all(), c["final_train"]  # every seed trained
    agrees = control_found["scan-control-agrees"]
    assert agrees.holds == bool((c["final_test"] >= c["final_train"] - 0.05).all()), agrees.text


def test_controls_mnist_the_gap_grows_with_the_information(control_runs, control_found):
    # the page: the gap grows with the bits, by a slope whose interval is above 0, but the verdict is
    # "cannot be decided" because a seed of one level did not reach the rule's 90 % training accuracy
    f = control_found["mnist-dose-gap"]
    levels = sorted((control_runs.rows[n].metrics["info_bits"], n) for n in control_runs.rows
                    if n.startswith("mnist-dose-") or n == "mnist-C")
    gaps = [np.mean(control_runs.arrays(n)["final_train"] - control_runs.arrays(n)["final_test"]) for _, n in levels]
    assert gaps[-1] - gaps[0] >= stats.CLEAR, list(zip(levels, gaps))  # the most informative level vs C
    slopes = rs_findings.dose_slopes(control_runs, [(n, b) for b, n in levels],
                                     lambda a: a["final_train"] - a["final_test"])
    _, low, _ = stats.t_interval(slopes)
    assert low > 0, slopes
    untrained = [n for _, n in levels if not rs_findings.trained(control_runs.arrays(n))]
    assert untrained and not f.holds and "did not train" in f.text, (untrained, f.text)


def test_controls_mnist_the_head_start_is_not_shown_to_grow_with_the_information(control_found):
    f = control_found["mnist-dose-early"]
    assert not f.holds and "cannot be decided" in f.text, f.text


def test_controls_scan_setting_a_fails_under_the_authors_measure(control_runs, control_found):
    assert control_found["scan-tf-test"].holds, control_found["scan-tf-test"].text
    assert control_found["scan-tf-unseen"].holds, control_found["scan-tf-unseen"].text
    # the page: the authors' sentence accuracy and greedy exact match are one measure
    assert control_found["scan-tf-equals-greedy"].holds, control_found["scan-tf-equals-greedy"].text


def test_controls_scan_compositional_speed_is_measured_off_the_floor(control_runs, control_found):
    # issue 33: the speed of the compositional part is decided where the measure has left its floor
    # (token accuracy in steps 10-25, exact match in the later window), whatever the verdict
    for key, names, curve, window in (
            ("scan-early-long-tok", ("scan-A-tf", "scan-B-tf"), "tok_train_long", rs_findings.EARLY["scan"]),
            ("scan-later-long", ("scan-A", "scan-B"), "acc_train_long", rs_findings.LATER["scan"]),
            ("scan-later-long-tf", ("scan-A-tf", "scan-B-tf"), "acc_train_long", rs_findings.LATER["scan"])):
        values = [rs_findings.window_mean(control_runs.arrays(n), curve, window) for n in names]
        assert min(v.min() for v in values) > rs_findings.FLOOR, (key, values)
        text = control_found[key].text
        assert "floor" not in text and "identical" not in text and "did not train" not in text, text
    # the page's directions: no early lead in token accuracy; later, A a few points ahead in exact match
    # (both runs): clear of 0, but an estimate short of the margin, which the rule leaves open
    # (the book's own hypotheses: "does not hold", never ✗)
    assert " — does not hold" in control_found["scan-early-long-tok"].text, control_found["scan-early-long-tok"].text
    for key in ("scan-later-long", "scan-later-long-tf"):
        text = claims.untagged(control_found[key].text)
        assert not control_found[key].holds and "cannot be decided here (clear of 0, but the estimate" in text, text


def test_controls_followups_mnist_a_at_c_offset_and_the_test_digit_slope(control_runs, control_found):
    # issue 51: setting A tested at control C's one offset (9) keeps a gap larger than C's (registered
    # before mnist-A-9 was computed); the dose-response on test digits (post hoc) is left open by the
    # same untrained seed as the gap's slope (dose 7's seed 4), its slope about +0.087 per bit
    assert control_found["mnist-control-gap-9"].holds, control_found["mnist-control-gap-9"].text
    a9 = control_runs.arrays("mnist-A-9")
    assert (a9["final_test"] < a9["final_train"] - 0.1).all(), a9["final_test"]
    text = control_found["mnist-dose-test"].text
    assert not control_found["mnist-dose-test"].holds and "cannot be decided here" in text, text
    assert "the slope per bit is +0.09" in text, text
    assert not rs_findings.trained(control_runs.arrays("mnist-dose-7"))


def test_controls_followups_scan_the_around_right_frame(control_runs, control_found):
    # issue 51: "jump" held out of "X around right" (the frame of scan-C's one low seed) in seeds 0, 2, 3:
    # every seed trained, and most score below 0.95 on the test there; over three seeds the paired
    # intervals are wide, so that the frame lowers C's score, and that A's gap exceeds this C's, are left open
    h = control_runs.arrays("scan-C-around-right")
    assert list(h["seeds"]) == [0, 2, 3] and (h["final_train"] >= 0.95).all(), h["final_train"]
    assert (h["final_test"] < 0.95).sum() >= 2, h["final_test"]
    for key in ("scan-frame-hard", "scan-control-gap-hard"):
        text = control_found[key].text
        assert not control_found[key].holds and "cannot be decided here (wide enough" in text, text


def test_controls_followups_mnist_information_at_fixed_coverage(control_runs, control_found):
    # issue 51: five right digits per left digit throughout, the bits moved by the right digit's marginal;
    # both slopes are positive (about +0.10 per bit), but mnist-cover-9's seed 2 ends under the 0.90 bar
    # on its training pairs (0.897), so the rule leaves both open
    for key in ("mnist-cover-gap", "mnist-cover-test"):
        text = control_found[key].text
        assert not control_found[key].holds and "an arm did not train" in text, text
    assert not rs_findings.trained(control_runs.arrays("mnist-cover-9"))
    assert rs_findings.trained(control_runs.arrays("mnist-cover-8"))
    levels = [(n, control_runs.rows[n].metrics["info_bits"]) for n in rs_findings.COVER]
    assert [round(b, 2) for _, b in levels] == [0.47, 0.72, 1.0]
    for quantity in (lambda a: a["final_train"] - a["final_test"], rs_findings.test_digit_gap):
        assert rs_findings.dose_slopes(control_runs, levels, quantity).mean() > 0.05


def test_controls_followups_scan_c_at_setting_a_size(control_runs, control_found):
    # issue 51: control C's training cut to setting A's size (A's commands without "jump" and as many
    # distinct commands with "jump" as A's rows of "jump" alone): its gap stays far below A's (holds); that
    # the smaller set widens C's gap is left open over three seeds (C's seed 1, "around right", is the spread)
    m = control_runs.arrays("scan-C-matched")
    assert (m["train_rows"] == 14670).all() and (m["jump_rows"] == 1467).all() and list(m["seeds"]) == [0, 1, 2]
    assert (m["final_train"] >= 0.95).all() and (m["final_test"] >= 0.95).all(), m["final_test"]
    assert control_found["scan-matched-gap"].holds, control_found["scan-matched-gap"].text
    text = control_found["scan-matched-size"].text
    assert not control_found["scan-matched-size"].holds and "cannot be decided here" in text, text


def _crossed_by_hand(control_runs) -> tuple[np.ndarray, np.ndarray]:
    """Control C's final exact match on training and test commands, ``[6 directed frames, seeds 0-2]``,
    read straight from the stored results by the frame each run recorded (``held_out``), not through
    the page's code."""
    from modlib.data import scan

    frames = scan.VERB_FRAMES[1:]
    train, test = np.full((6, 3), np.nan), np.full((6, 3), np.nan)
    c = control_runs.arrays("scan-C")
    runs = [(k, h, tr, te) for k, (h, tr, te) in enumerate(zip(c["held_out"], c["final_train"], c["final_test"]))]
    for name in ("scan-C-around-right", "scan-C-left", "scan-C-right", "scan-C-opposite-left",
                 "scan-C-opposite-right", "scan-C-around-left"):
        a = control_runs.arrays(name)
        runs += list(zip(a["seeds"], a["held_out"], a["final_train"], a["final_test"]))
    for k, h, tr, te in runs:
        if k < 3:
            f = frames.index(scan.VERB_FRAMES[int(h)])
            assert np.isnan(test[f, k]), f"frame {frames[f]!r} under seed {k} stored twice"
            train[f, k], test[f, k] = tr, te
    assert not np.isnan(test).any(), test  # every frame under seeds 0, 1 and 2
    return train, test


def test_controls_crossed_every_frame_under_the_same_seeds(control_runs, control_found):
    # issue 51, registered before the crossed results were computed: A's gap exceeds control C's with the
    # six held-out frames as units (each frame's mean over seeds 0-2), and "around right" is the hard frame
    # per seed; recomputed here from the stored arrays and t quantiles, the decisions must agree
    from scipy import stats as st

    train, test = _crossed_by_hand(control_runs)
    a = control_runs.arrays("scan-A")
    a_gap = (a["final_train"] - a["final_test"])[:3]
    d = (a_gap[None, :] - (train - test)).mean(1)  # [6 frames]
    hard = 5  # "X around right", the last of the six directed frames (modlib.data.scan.VERB_FRAMES[1:])
    per_seed = np.delete(test, hard, axis=0).mean(0) - test[hard]  # [3 seeds]
    decided = claims.decisions(rs.CHAPTER)
    for key, x in (("scan-control-gap-frames", d), ("scan-frame-hard-crossed", per_seed)):
        low, high = st.t.interval(0.95, x.size - 1, loc=x.mean(), scale=st.sem(x))
        got = decided[f"{rs.CHAPTER}/{key}"]
        assert (got.estimate, got.low, got.high, got.units) == pytest.approx((x.mean(), low, high, x.size), abs=1e-6), key
    assert (train >= rs_findings.TRAINED).all()  # every run trained, so the interval decides
    # stored: A's gap exceeds C's over the six frames by about 0.83 (holds); "around right" against the
    # other frames per seed is left open over three seeds ("around left" is as hard, and seed 0 fails both)
    assert control_found["scan-control-gap-frames"].holds and d.mean() > 0.6 and (d > 0.05).all(), d
    text = control_found["scan-frame-hard-crossed"].text
    assert not control_found["scan-frame-hard-crossed"].holds and "cannot be decided here (wide enough" in text, text
    assert per_seed[0] > 0.5 and abs(per_seed[2]) < 0.05, per_seed  # the seed decides how hard "around right" is
    assert test[4].mean() < 0.7 and test[5].mean() < 0.7, test  # both "around" frames low
    # framed wrong, each verdict moves: the arms swapped, or an arm untrained; the open one cannot move
    # under swapped arms (its interval is wide both ways), only to "an arm did not train"
    for key, mutations in (("scan-control-gap-frames", ("swap arms", "shuffle units", "arm untrained")),
                           ("scan-frame-hard-crossed", ("arm untrained",))):
        got = decided[f"{rs.CHAPTER}/{key}"]
        for mutation in mutations:
            assert claims.moved(got, claims.replay(got, mutation)), (key, mutation)
    swapped = claims.replay(decided[f"{rs.CHAPTER}/scan-frame-hard-crossed"], "swap arms")
    assert swapped.open and "wide enough" in swapped.why
    spread = rs_findings.frame_spread(control_runs)
    assert sum(spread.values()) == pytest.approx(1.0) and min(spread.values()) >= -1e-9


def test_controls_the_effects_stand_under_the_authors_defaults(control_found):
    # the page's sentence "the effects do not depend on them" (initialisation, forget-gate bias, input
    # feeding): setting A's gap and failure, and B's success on commands it never saw, with the authors'
    for key in ("mnist-gap", "mnist-swap", "scan-gap", "scan-test", "scan-unseen"):
        assert control_found[f"ablation-{key}"].holds, control_found[f"ablation-{key}"].text


def test_controls_the_authors_setting_b_scores_test_commands_it_trained_on(control_runs, control_found):
    assert control_found["scan-union"].holds, control_found["scan-union"].text
    u = control_runs.arrays("scan-B-union")
    assert (u["test_rows"] == 7_706).all() and (u["final_test"] > 0.9).all(), u["final_test"]


# --- chapter 5: structural compositionality (odd-one-out subnetworks) ------------------------------


@pytest.fixture(scope="module")
def structure_runs():
    """Chapter 5's stored full results (:func:`stored_full`)."""
    from modlib import structural_compositionality as sc

    s = sc.settings("full")
    rows = stored_full(sc.CHAPTER, sc.result_names(s),
                       lambda n: {**sc.experiment.result_config(s, sc.experiment.parse_name(n)[0]), **sc.experiment.identity(n)})
    return sc.StructureRuns(s, rows, "full")


@pytest.fixture(scope="module")
def structure_found(structure_runs):
    return sc_findings.structural(structure_runs)


@pytest.fixture(scope="module")
def structure_table(structure_runs):
    return sc_findings.structure_table(structure_runs)


@pytest.fixture(scope="module")
def structure_sweeps():
    """Chapter 5's stored density sweeps, by rule (:mod:`modlib.structural_compositionality.sweep`)."""
    from modlib.structural_compositionality import experiment as ex
    from modlib.structural_compositionality import sweep

    s, w = ex.settings("full"), sweep.settings("full")

    def config(name):
        rule = name.removeprefix("sweep-")
        return {"structure": ex.result_config(s, rule), "lams": list(sweep.lams(rule, w))}

    rows = stored_full(ex.CHAPTER, sweep.result_names(w), config)
    return {r.metrics["rule"]: r.metrics for r in rows.values()}


def test_structure_sweep_test_1_can_fail_at_every_density_in_the_resnet_and_at_none_in_bert(structure_sweeps):
    # the page: at x1 a random subnetwork of the mask's size solves the other subroutine in BERT; in
    # the ResNet a random subnetwork is near chance at every density and the found one passes test 1
    # at every density; in BERT, at every density swept, either a random subnetwork of the mask's size
    # gets most of the other subroutine right or the mask misses its own (the gate)
    from modlib.structural_compositionality import findings as f

    bert = structure_sweeps["sv-plural"]["points"]
    dense = [p for p in bert if p["lam"] == 1.0]
    assert len(dense) == 2 and all(p["random"][1] >= f.GATE_TARGET and p["kept"] > 0.1 for p in dense), dense
    assert all(p["random"][1] >= 0.8 for p in bert if p["kept"] >= 0.1), bert
    assert all(p["random"][1] >= 0.7 or p["hard"][0] < f.GATE_TARGET for p in bert), bert
    assert any(p["random"][1] < 0.4 for p in bert)  # the sparsest verb mask takes a random one to chance
    resnet = structure_sweeps["inside-contact"]["points"]
    assert len(resnet) == 10 and max(p["kept"] for p in resnet) > 0.2, resnet
    for p in resnet:
        assert p["random"][0] < 0.5 and p["random"][1] < 0.65, p
        assert p["hard"][0] >= f.GATE_TARGET and p["hard"][1] < 0.4, p
    found = f.sweep_findings(structure_sweeps)
    assert len(found) == 4 and all(finding.holds for finding in found.values()), [x.text for x in found.values()]


def _rows(table, rule, sub, trained=True):
    return table[(table["rule"] == rule) & (table["subroutine"] == sub) & (table["trained"] == trained)]


def _outcome(found, key):
    return found[key].outcome


# The verdicts by the book's rule (stats.RULE) over base models (3 per rule; the mask seeds of one
# base model are averaged, not counted), paired t intervals: with 3 base models the t interval is
# wide (2 degrees of freedom), so several effects the page describes cannot be decided here.


def test_structure_base_models_solve_agreement_and_inside_contact(structure_found):
    for rule in ("sv-plural", "inside-contact"):
        assert structure_found[f"{rule}/base"].holds, structure_found[f"{rule}/base"].text


def test_structure_number_contact_falls_short_of_the_gate_and_is_not_searched(structure_runs, structure_found):
    # the page: Number-Contact's base models fall just short of the 0.95 gate (the other two rules'
    # pass it), they solve the number-only test set and miss more of the contact-only one, and no
    # mask is searched in them, so the chapter makes no Number-Contact claim
    assert structure_found["inside-contact/base"].holds, structure_found["inside-contact/base"].text
    assert not structure_found["number-contact/base"].holds
    trained = [r.metrics for r in structure_runs.rows.values()
               if r.metrics["rule"] == "number-contact" and r.metrics["trained"]]
    assert len(trained) == 3 and not any(m["searched"] or m.get("subroutines") for m in trained)
    for m in trained:
        assert 0.9 <= m["base"]["task"] < structure_runs.settings.base_gate, m["base"]
        assert m["base"]["only-0"] > m["base"]["only-1"], m["base"]
    assert [k for k in structure_found if k.startswith("number-contact/")] == ["number-contact/base"]


def test_structure_every_searched_subnetwork_does_its_own_subroutine(structure_table):
    # the paper's first test, target half: every subnetwork chosen through the selection gate
    # reaches 0.9 on its target's test set (Inside-Contact and agreement, two subroutines each)
    passed = structure_table[structure_table["trained"] & structure_table["passed_gate"]]
    means = passed.groupby(["rule", "subroutine"])["sub_target"].mean()
    assert len(means) == 4 and (means >= sc_findings.GATE_TARGET).all(), means


def test_structure_trained_masks_are_as_sparse_as_the_papers(structure_found, structure_table):
    # issue 31: every trained mask keeps some but few of the masked weights: per rule and subroutine
    # the mean within the paper's range for its modality (its ResNet-50s 0.4-12.5 %, BERT-small
    # 0.4-10 %), no mask keeping nothing or everything. Issue 53: the book's aim (median at most 5 %)
    # per architecture, not over ResNet and BERT together: the ResNet's masks meet it; BERT's do not
    # (a median 5.8 %, 3.4 to 10.7 times the authors' own masks for agreement), and the page says so
    # from density_against_authors, which this test reads
    trained = structure_table[structure_table["trained"]]
    assert not sc_findings.degenerate(trained["kept"]), trained["kept"].describe()
    density = [k for k in structure_found if k.endswith("/density")]
    assert len(density) == 4 and all(structure_found[k].holds for k in density), [
        structure_found[k].text for k in density]
    vision = trained["rule"].isin(sc_tasks.VISION)
    assert trained[vision]["kept"].median() <= sc_findings.TARGET_KEPT, trained[vision].groupby("subroutine")["kept"].mean()
    language = trained[~vision]
    if language["kept"].median() > sc_findings.TARGET_KEPT:  # BERT misses the aim: named, with the ratio
        said = sc_findings.density_against_authors(structure_table)
        ratio = language["kept"].median() / max(sc_findings.AUTHORS_KEPT["sv-plural"])
        assert ratio > 1 and f"{ratio:.1f} to" in said, said


def test_structure_chosen_masks_converged(structure_table):
    # the page (fig-sc-kept): the chosen masks' kept share stopped falling; most runs converged (a
    # configuration is chosen only when its search mask converged; the three mask seeds then rerun it)
    trained = structure_table[structure_table["trained"]]
    assert (trained["converged"] == True).mean() >= 0.75, trained.groupby(["rule", "subroutine"])["converged"].mean()  # noqa: E712
    assert (trained["kept"] > 0).all() and (trained["kept"] < 0.1).all(), trained["kept"].describe()  # where they settled


def test_structure_vision_subnetworks_fail_the_other_subroutine(structure_found, structure_table):
    # Inside-Contact: as in the paper, each subnetwork alone is near chance on the other subroutine
    for sub in ("inside", "contact"):
        assert _outcome(structure_found, f"inside-contact/{sub}/subnetwork") == stats.REPRODUCED
        assert _rows(structure_table, "inside-contact", sub)["sub_other"].mean() < 0.4


def test_structure_vision_random_subnetworks_of_the_same_size_fail(structure_found, structure_table):
    # the page: a random subnetwork of the found one's size per layer is near chance on the target
    for sub in ("inside", "contact"):
        assert _outcome(structure_found, f"inside-contact/{sub}/random") == stats.HOLDS
        assert _rows(structure_table, "inside-contact", sub)["random_target"].mean() < 0.4


def _gated(table, rule, sub):
    rows = _rows(table, rule, sub)
    return rows[rows["passed_gate"] == True]  # noqa: E712 (the base models the verdicts count)


def test_structure_agreement_base_model_1_missed_the_selection_gate(structure_runs, structure_table):
    # the page: base model 1's agreement masks missed the gate (too few of their own mask-training
    # problems), so the verdicts count base models 0 and 2; the others passed
    m = structure_runs.rows["sv-plural-1"].metrics
    assert all(not f["passed_gate"] for f in m["subroutines"].values())
    for sub in ("subject", "verb"):
        rows = _rows(structure_table, "sv-plural", sub)
        assert sorted(rows[rows["passed_gate"] == True]["model"].unique()) == [0, 2], rows[["model", "passed_gate"]]  # noqa: E712
        assert (rows[rows["model"] == 1]["own"] < sc_findings.GATE_TARGET).all()
    inside = structure_table[structure_table["rule"] == "inside-contact"]
    assert inside[inside["trained"]]["passed_gate"].all()


def test_structure_language_subnetworks_do_both_subroutines(structure_found, structure_table):
    # the page: the subject subnetwork alone is as good on verb problems as on its own (both at the
    # ceiling: cannot be decided); the verb subnetwork is not shown to beat a random subnetwork of its
    # size, so its test 1 cannot be decided either; the subject subnetwork beats a random one of its
    # size, which still gets most subject problems right
    subject = _gated(structure_table, "sv-plural", "subject")
    assert subject["sub_other"].mean() >= subject["sub_target"].mean() - 0.05
    assert _outcome(structure_found, "sv-plural/subject/subnetwork") == stats.UNDECIDED
    assert _outcome(structure_found, "sv-plural/verb/random") == stats.UNDECIDED
    verb = structure_found["sv-plural/verb/subnetwork"]
    assert verb.outcome == stats.UNDECIDED and "a control did not pass" in verb.verdict.why, verb.text
    assert _outcome(structure_found, "sv-plural/subject/random") == stats.HOLDS
    assert 0.75 <= subject["random_target"].mean() < subject["sub_target"].mean() - 0.1, subject.mean(numeric_only=True)
    for sub in ("subject", "verb"):
        rows = _rows(structure_table, "sv-plural", sub)
        assert rows["sub_target"].mean() >= 0.95 and rows["sub_other"].mean() >= 0.75, rows.mean(numeric_only=True)


def test_structure_removing_an_agreement_subnetwork_is_not_selective(structure_found, structure_table):
    # the page: removing the verb subnetwork leaves both at the ceiling (cannot be decided); removing
    # the subject subnetwork changes nothing in two base models and takes both subroutines down in
    # the third; over the two base models that count, the zeroing verdict cannot be decided
    verb = _rows(structure_table, "sv-plural", "verb")
    assert (verb[["abl_target", "abl_other"]].mean() >= 0.95).all(), verb[["abl_target", "abl_other"]].mean()
    for key in ("ablation", "reinit"):
        f = structure_found[f"sv-plural/verb/{key}"]
        assert f.outcome == stats.UNDECIDED and "floor or ceiling" in f.text, f.text
    f = structure_found["sv-plural/subject/ablation"]
    assert f.outcome == stats.UNDECIDED and "over 2 base models" in f.text, f.text
    m = _rows(structure_table, "sv-plural", "subject").groupby("model")[["abl_target", "abl_other"]].mean()
    assert (m["abl_target"] >= 0.95).sum() == 2, m
    fallen = m[m["abl_target"] < 0.6]
    assert len(fallen) == 1 and (fallen["abl_other"] < 0.6).all(), m


def test_structure_the_convergence_condition_decided_one_inside_mask(structure_runs):
    # the page: only base model 1's inside choice changes without the book's convergence condition
    # (x30 instead of x100); chosen as the authors' code chooses, the inside ablation is reproduced,
    # and that x30 mask's removal hurts inside problems far more than contact ones
    found = sc_findings.without_convergence_rule(structure_runs)
    assert list(found) == ["inside-contact/inside/ablation-argmax"], list(found)
    f = found["inside-contact/inside/ablation-argmax"]
    assert f.outcome == stats.REPRODUCED and "base model 1: ×30" in f.text, f.text
    grid = structure_runs.rows["inside-contact-1"].metrics["subroutines"]["inside"]["grid"]
    x30 = next(c for c in grid if c["lam"] == 30)
    assert not x30["converged"] and x30["test"]["complement"][1] - x30["test"]["complement"][0] > 0.3, x30["test"]


def test_structure_sweep_the_second_test_fades_as_masks_get_sparser(structure_sweeps):
    # the page: removing a mask of a few percent hurts its own subroutine more than the other in the
    # ResNet, removing the sparsest hurts neither; in BERT removing the subject mask hurts subject
    # problems more while the mask keeps a tenth or more, and nothing from x300 down
    def removed(rule, sub, lam):
        (p,) = [p for p in structure_sweeps[rule]["points"] if p["subroutine"] == sub and p["lam"] == lam]
        return p["complement"], p["random_complement"]

    (t, o), (rt, _) = removed("inside-contact", "inside", 10.0)
    assert o - t > 0.3 and rt >= 0.95, (t, o, rt)
    for sub in ("inside", "contact"):
        assert min(removed("inside-contact", sub, 100.0)[0]) >= 0.9
    for lam in (1.0, 10.0, 100.0):
        (t, o), _ = removed("sv-plural", "subject", lam)
        assert o - t > 0.1, (lam, t, o)
    for lam in (300.0, 1000.0):
        assert min(removed("sv-plural", "subject", lam)[0]) >= 0.95


def _removed_per_model(table, sub):
    rows = _rows(table, "inside-contact", sub)
    return rows.groupby("model")[["abl_target", "abl_other", "kept", "lam"]].mean()


def test_structure_inside_removal_hurts_inside_in_two_base_models_and_not_the_third(structure_found, structure_table):
    # the page: removing the inside subnetwork leaves inside problems worse than contact problems on
    # average (the paper's direction), but one base model barely notices: cannot be decided
    assert _outcome(structure_found, "inside-contact/inside/ablation") == stats.UNDECIDED
    m = _removed_per_model(structure_table, "inside")
    assert (m["abl_other"] - m["abl_target"]).mean() > 0.1, m
    assert (m["abl_target"] >= 0.9).sum() == 1 and (m["abl_target"] < 0.6).sum() == 2, m


def test_structure_contact_removal_breaks_both_in_two_base_models_and_neither_in_the_third(structure_found, structure_table):
    assert _outcome(structure_found, "inside-contact/contact/ablation") == stats.UNDECIDED
    m = _removed_per_model(structure_table, "contact")
    broken = (m["abl_target"] < 0.3) & (m["abl_other"] < 0.5)
    spared = (m["abl_target"] >= 0.9) & (m["abl_other"] >= 0.9)
    assert broken.sum() == 2 and spared.sum() == 1, m


def test_structure_the_masks_whose_removal_hurts_nothing_are_the_sparsest(structure_table):
    # the page: the two Inside-Contact masks whose removal leaves the target at 0.9 or more are the
    # ones for which the search chose x100 (under 1 % kept); the others were chosen at x30
    spared = []
    for sub in ("inside", "contact"):
        m = _removed_per_model(structure_table, sub)
        spared += [(sub, model) for model in m.index[m["abl_target"] >= 0.9]]
        assert (m.loc[m["abl_target"] >= 0.9, "lam"] == 100).all() and (m.loc[m["abl_target"] >= 0.9, "kept"] < 0.01).all(), m
        assert (m.loc[m["abl_target"] < 0.9, "lam"] < 100).all(), m
    assert len(spared) == 2, spared


def test_structure_random_removal_of_the_same_size_hurts_nothing(structure_found, structure_table):
    # the page: removing as many weights per layer at random leaves Inside-Contact's subroutines intact,
    # so where removing the subnetwork hurts, it is these weights and not their number
    for sub in ("inside", "contact"):
        rows = _rows(structure_table, "inside-contact", sub)
        assert rows["rand_abl_target"].mean() >= 0.95 and rows["abl_target"].mean() < 0.8, rows.mean(numeric_only=True)
        assert structure_found[f"inside-contact/{sub}/random_ablation"].outcome != stats.DOES_NOT_HOLD


def test_structure_reinitialising_gives_the_same_picture_as_zeroing(structure_found, structure_table):
    # the page: where zeroing Inside-Contact's subnetworks hurts, re-initialising them hurts as much
    for sub in ("inside", "contact"):
        rows = _rows(structure_table, "inside-contact", sub)
        assert rows["reinit_target"].mean() < 0.8, rows.mean(numeric_only=True)
        for arm in ("target", "other"):
            assert abs(rows[f"reinit_{arm}"].mean() - rows[f"abl_{arm}"].mean()) < 0.1, rows.mean(numeric_only=True)
        assert _outcome(structure_found, f"inside-contact/{sub}/reinit") == _outcome(
            structure_found, f"inside-contact/{sub}/ablation")


def test_structure_untrained_networks_one_each_cannot_decide(structure_runs, structure_found, structure_table):
    # one untrained network per rule, its masks trained with its trained twin's chosen configuration
    # where the twin was searched (as the paper does): the comparison with the trained base models
    # cannot be decided; a control whose masks keep nothing (or everything) is degenerate, never a
    # pass; no ablation in an untrained network is selective
    untrained = [k for k in structure_found if k.endswith("/untrained")]
    assert len(untrained) == 4 and all(structure_found[k].outcome == stats.UNDECIDED for k in untrained)
    for r in structure_runs.rows.values():
        twin = structure_runs.rows.get(f"{r.metrics['rule']}-{r.metrics['seed']}")
        if not r.metrics["trained"] and twin.metrics.get("subroutines"):
            for sub, found in r.metrics["subroutines"].items():
                assert found.get("chosen_from") == "given"
                assert found["chosen"] == twin.metrics["subroutines"][sub]["chosen"]
    rows = structure_table[~structure_table["trained"]]
    for (rule, sub), g in rows.groupby(["rule", "subroutine"]):
        if f"{rule}/{sub}/untrained" in structure_found:
            text = structure_found[f"{rule}/{sub}/untrained"].text
            assert ("degenerate, not a pass" in text) == sc_findings.degenerate(g["kept"]), text
    live = rows[~rows.groupby(["rule", "subroutine"])["kept"].transform(sc_findings.degenerate).astype(bool)]
    assert len(live) and ((live["abl_other"] - live["abl_target"]).abs() < 0.1).all()


def test_structure_the_untrained_resnet_has_an_inside_subnetwork(structure_table):
    # the page: an inside mask trained in the never-trained ResNet keeps a few percent and shows the
    # pattern test 1 looks for, in one network (near the ceiling on inside problems, near chance on
    # contact), as the paper's untrained ResNet-50 did; the other untrained masks of Inside-Contact and
    # agreement keep nothing
    inside = _rows(structure_table, "inside-contact", "inside", trained=False)
    assert not sc_findings.degenerate(inside["kept"]) and inside["kept"].mean() < 0.1, inside["kept"]
    assert inside["sub_target"].mean() >= 0.9 and inside["sub_other"].mean() < 0.4, inside.mean(numeric_only=True)
    for rule, sub in (("inside-contact", "contact"), ("sv-plural", "subject"), ("sv-plural", "verb")):
        assert (_rows(structure_table, rule, sub, trained=False)["kept"] == 0).all()


def _overlap_over_chance(run):
    """Per masked layer: the seed-0 masks' IoU over that of independent random masks of their sizes."""
    subs = list(run.metrics["subroutines"])
    p, q = (run.arrays[f"kept-{sub}"][0] for sub in subs)
    with np.errstate(invalid="ignore", divide="ignore"):
        return run.arrays["overlap"] / (p * q / (p + q - p * q)), run.metrics["overlap"]["layers"]


def test_structure_vision_masks_share_the_head_not_the_convolutions(structure_runs):
    # the page: the median convolution near chance overlap, the head many times it; two masks of one
    # subroutine from two mask seeds overlap far more than inside and contact masks do anywhere
    for name in ("inside-contact-0", "inside-contact-1", "inside-contact-2"):
        run = structure_runs.rows[name]
        ratio, layers = _overlap_over_chance(run)
        head = np.array([n.startswith("head.") for n in layers])
        assert 0.5 < np.nanmedian(ratio[~head]) < 2 and np.nanmedian(ratio[head]) > 7, (name, ratio)
        assert min(run.metrics["seed_overlap"].values()) > np.nanmax(run.arrays["overlap"]), name


def test_structure_language_masks_share_the_feed_forward_blocks(structure_runs):
    for name in ("sv-plural-0", "sv-plural-1", "sv-plural-2"):
        ratio, layers = _overlap_over_chance(structure_runs.rows[name])
        ffn = np.array(["intermediate" in n or n.endswith("output.dense.weight") and "attention" not in n
                        for n in layers])
        assert np.nanmedian(ratio[ffn]) > 5 > np.nanmedian(ratio[~ffn]), (name, ratio)


# --- chapter 6: pretraining and the consistency of modular structure ------------------------------


def _from_store(load, what: str):
    """``load()`` with the full results read as the book build reads them (nothing computed):
    skipped while one is not stored, failed when one was made by other code or settings."""
    import os

    before = {k: os.environ.get(k) for k in (results.FROM_STORE_ENV, results.ROOT_ENV)}
    os.environ[results.FROM_STORE_ENV] = "1"
    os.environ[results.ROOT_ENV] = str(FULL.parent)
    try:
        return load()
    except results.StaleResultError as err:
        if "no stored result" in str(err):
            pytest.skip(f"{what} are not all stored yet: {err}")
        pytest.fail(str(err))
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture(scope="module")
def pretraining_runs():
    """Chapter 6's stored full results (:func:`_from_store`)."""
    return _from_store(lambda: pc.run("full", torch.device("cpu")), "chapter 6's full results")


@pytest.fixture(scope="module")
def pretraining_lam():
    """Chapter 6's stored results at the common share (modlib.pretraining_consistency.lam_matched),
    those stored now."""
    from modlib.pretraining_consistency import lam_matched

    return lam_matched.stored("full")


@pytest.fixture(scope="module")
def pretraining_own():
    """Chapter 6's pretrained arm with a pretraining run per base model
    (modlib.pretraining_consistency.own_runs): its base models and its added runs, those stored now."""
    from modlib.pretraining_consistency import own_runs

    return own_runs.stored("full"), own_runs.stored_runs("full")


@pytest.fixture(scope="module")
def pretraining_shared():
    """Chapter 6's base models from a shared random start (modlib.pretraining_consistency.shared_start),
    those stored now."""
    from modlib.pretraining_consistency import shared_start

    return shared_start.stored("full")


@pytest.fixture(scope="module")
def pretraining_found(pretraining_runs, pretraining_lam, pretraining_own, pretraining_shared):
    return pc_findings.pretraining(pretraining_runs, pretraining_lam, pretraining_own, pretraining_shared)


@pytest.fixture(scope="module")
def pretraining_table(pretraining_runs):
    return pc_findings.pretraining_effects(pretraining_runs)


@pytest.fixture(scope="module")
def pretraining_matched(pretraining_runs):
    return pc_findings.matched_density(pretraining_runs)


def _claim(found: dict, key: str):
    """The claim ``key`` of ``found``, which must have been made."""
    assert key in found, f"no claim {key}"
    return found[key]


def _arm(table, rule, sub, init):
    return table[(table["rule"] == rule) & (table["subroutine"] == sub) & (table["init"] == init)]


def test_pretraining_runs_learnt_what_they_were_for(pretraining_found, pretraining_runs):
    # the page: the MLM probe goes from chance to 1.00; SimCLR's loss ends far below a guess's; a linear
    # probe reads inside (0.97) and, less well, contact (0.72) off SimCLR's features
    for key in ("language/pretraining", "vision/pretraining", "vision/features"):
        assert pretraining_found[key].holds, pretraining_found[key].text
    language = pretraining_runs.pretraining["language"].metrics
    assert language["probe"] >= 0.95 and language["probe_untrained"] < 0.65
    vision = pretraining_runs.pretraining["vision"].metrics
    assert vision["final_loss"] < 0.1 * vision["chance_loss"]
    assert vision["probe"]["inside"] > 0.9 and vision["probe"]["contact"] < vision["probe"]["inside"] - 0.15


def test_pretraining_every_base_model_reaches_the_task_and_is_searched(pretraining_found, pretraining_table):
    assert pretraining_found["sv-plural/base"].holds and pretraining_found["inside-contact/base"].holds
    models = pretraining_table.drop_duplicates(["rule", "init", "seed"])
    assert len(models) == 20 and models["searched"].all() and (models["task"] >= 0.95).all()
    assert not sc_findings.degenerate(pretraining_table["kept"].dropna())


def test_pretraining_masks_are_as_sparse_as_the_papers(pretraining_table):
    # issue 31: both arms' masks keep some but few of the masked weights, none nothing or
    # everything; each (rule, subroutine, init) on average within the paper's range for the
    # modality (chapter 5's), the pretrained BERTs' within the paper's pretrained range (0.07-1.5 %)
    kept = pretraining_table["kept"]
    assert not sc_findings.degenerate(kept.dropna()), kept.describe()
    for (rule, sub, init), g in pretraining_table[pretraining_table["searched"]].groupby(
            ["rule", "subroutine", "init"]):
        assert g["kept"].notna().all(), (rule, sub, init)
        low, high = (pc_findings.PAPER_KEPT_PRETRAINED if (rule, init) == ("sv-plural", "pretrained")
                     else sc_findings.paper_kept(rule))
        assert low <= g["kept"].mean() <= high, (rule, sub, init, g["kept"].tolist())


# The verdicts by the book's rule (stats.RULE) over base models (5 per arm, independent; mask seeds
# averaged within each), pretrained against scratch, Welch t intervals.


def test_pretraining_language_masks_are_too_far_apart_in_density_at_the_search(pretraining_found, pretraining_table):
    # the page: each pretrained subnetwork alone solves its subroutine and falls to chance on the
    # other (the paper: 0.27 and 0.31), a scratch one stays well above; but the arms' masks are
    # several times apart in density, so none of the four comparisons is decided there
    for sub in ("subject", "verb"):
        for what in ("consistency", "spread", "effect", "specific"):
            f = _claim(pretraining_found, f"sv-plural/{sub}/{what}")
            assert f.outcome == stats.UNDECIDED and "times apart in density" in f.text, f.text
        pre, raw = (_arm(pretraining_table, "sv-plural", sub, init) for init in ("pretrained", "scratch"))
        assert pc_findings.density_ratio(raw, pre) > 2 * pc_findings.DENSITY_RATIO
        pre, raw = (_arm(pretraining_table, "sv-plural", sub, init) for init in ("pretrained", "scratch"))
        assert (pre["sub_target"] >= 0.95).all() and (pre["sub_other"] < 0.35).all(), pre
        assert raw["sub_other"].mean() > 0.6, raw


def test_pretraining_removing_a_pretrained_language_subnetwork_costs_nothing(pretraining_found, pretraining_table):
    # the page: without its subnetwork a pretrained model still solves both subroutines, so none is
    # modular (at the search's density, where nothing is decided: the test above)
    for sub in ("subject", "verb"):
        pre = _arm(pretraining_table, "sv-plural", sub, "pretrained")
        assert (pre["target"] >= 0.95).all() and (pre["other"] >= 0.95).all() and not pre["modular"].any(), pre
    raw = _arm(pretraining_table, "sv-plural", "verb", "scratch")
    assert (raw["effect"].abs() < 0.05).all(), raw


def test_pretraining_language_arms_at_comparable_density(pretraining_table, pretraining_matched, pretraining_found):
    # the page: at the search's penalties the pretrained masks keep several times less than the
    # scratch ones; with one more penalty weight (x10) every pretrained BERT has a mask within a factor
    # 2 of the scratch arm's median, and there both of the paper's claims are reproduced: removing a
    # pretrained subnetwork takes its own subroutine down and leaves the other, and alone it stays at
    # chance on the other subroutine
    matched = pretraining_matched
    for sub in ("subject", "verb"):
        pre, raw = (_arm(pretraining_table, "sv-plural", sub, init) for init in ("pretrained", "scratch"))
        assert raw["kept"].median() > 3 * pre["kept"].median(), (raw["kept"], pre["kept"])
        m = matched[(matched["rule"] == "sv-plural") & (matched["subroutine"] == sub)]
        mp, ms = m[m["init"] == "pretrained"], m[m["init"] == "scratch"]
        assert mp["kept"].notna().all() and (mp["lam"] == pc.MATCH_LAMS["sv-plural"][0]).all(), mp
        assert ms["kept"].median() / mp["kept"].median() < pc_findings.DENSITY_RATIO, (ms["kept"], mp["kept"])
        assert (mp["other"] > 0.95).all() and (mp["target"] < 0.5).all() == (sub == "verb"), mp  # subject weaker
        assert (mp["sub_other"] < 0.35).all() and (ms["sub_other"].dropna() > 0.6).all(), (mp, ms)
        for what in ("matched_effect", "matched_specific"):
            f = _claim(pretraining_found, f"sv-plural/{sub}/{what}")
            assert f.outcome == stats.REPRODUCED and "Without pretrained base model 0" in f.text, f.text
        # every pretrained BERT modular at this density, few scratch ones: more modular, reproduced;
        # the scratch BERTs show almost no effect, so a spread cannot be compared
        assert (mp["effect"] >= pc_findings.MARGIN).all() and (ms["effect"].dropna() >= pc_findings.MARGIN).sum() <= 1
        assert _claim(pretraining_found, f"sv-plural/{sub}/matched_consistency").outcome == stats.REPRODUCED
        f = _claim(pretraining_found, f"sv-plural/{sub}/matched_spread")
        assert f.outcome == stats.UNDECIDED and "too little mean effect to compare spreads" in f.text, f.text
        # the page: without base model 0 (its sweep chose x10) the subject's interval reaches below 0,
        # the verb's does not
        held = stats.unpaired(mp[mp["seed"] != 0]["effect"], ms["effect"].dropna(), unit="base model")
        assert (held.low < 0) == (sub == "subject"), (sub, held)


def _swapped(df, prefix: str, other: str = "scratch") -> dict:
    """Chapter 6's comparisons at the common share (``prefix``) decided on ``df``
    (findings.lam_density's table) with the pretrained arm and ``other`` exchanged."""
    with claims.apart():
        return pc_findings.matched_from(df.assign(init=df["init"].map({other: "pretrained", "pretrained": other})),
                                        prefix=prefix, seeds=5, other=other)


def _at_the_share(df, sub: str, other: str = "scratch"):
    """``(other's rows, pretrained rows)`` of ``df`` (:func:`pc_findings.lam_density`) for the
    subroutine ``sub``, the base models with a mask only, checked to lie at the common share (each
    arm's median within lam_matched.MATCHED of it)."""
    from modlib.pretraining_consistency import lam_matched

    g = df[df["subroutine"] == sub]
    s, p = (g[(g["init"] == init) & g["kept"].notna()] for init in (other, "pretrained"))
    assert pc_findings.lam_check(s, p) <= lam_matched.MATCHED, (s["kept"], p["kept"])
    return s, p


def test_pretraining_language_arms_at_the_common_share(pretraining_lam, pretraining_found):
    # the page (issue 53, registered before the masks were trained): every BERT of both arms trained
    # again and its masks searched to the scratch arm's median kept share; both arms' medians lie
    # within 1.5 of it, removing a pretrained subnetwork takes its own subroutine down in every base
    # model, and the larger effect is reproduced for subject and verb; swapping the arms moves it

    bert = {n: r for n, r in pretraining_lam.items() if r.metrics["rule"] == "sv-plural"}
    if len(bert) < 2 * pc.settings("full").seeds:
        pytest.skip("the language rule's results at the common share are not all stored")
    df = pc_findings.lam_density(bert)
    for sub in ("subject", "verb"):
        s, p = _at_the_share(df, sub)
        assert len(p) == 5 and (p["effect"] >= pc_findings.MARGIN).all() and (p["other"] > 0.95).all(), p
        assert _claim(pretraining_found, f"sv-plural/{sub}/lam_effect").outcome == stats.REPRODUCED
        assert _claim(pretraining_found, f"sv-plural/{sub}/lam_specific").outcome == stats.REPRODUCED
        swapped = _swapped(df, pc_findings.LAM)
        assert swapped[f"sv-plural/{sub}/lam_effect"].outcome != stats.REPRODUCED
    # the verb: every pretrained BERT modular and no scratch one; the subject: two of four scratch ones
    # are modular too, and the count cannot be decided
    assert _claim(pretraining_found, "sv-plural/verb/lam_consistency").outcome == stats.REPRODUCED
    assert _claim(pretraining_found, "sv-plural/subject/lam_consistency").outcome == stats.UNDECIDED


def test_pretraining_language_with_a_pretraining_run_per_base_model(pretraining_lam, pretraining_own,
                                                                     pretraining_found):
    # the page (issue 53, registered before the runs were computed): pretrained base models 1-4 each
    # fine-tuned from a pretraining run of its own; every run learnt agreement, both arms' masks lie at
    # the common share, and the larger effect and the more specific subnetworks are reproduced for
    # subject and verb as with one run; the count of modular base models for the verb only; neither
    # spread can be decided (the subject's, decided with one run, is no longer); swapping the arms moves it
    from modlib.pretraining_consistency import own_runs

    own, made = pretraining_own
    bert = {n: r for n, r in own.items() if r.metrics["rule"] == "sv-plural"}
    if len(bert) < pc.settings("full").seeds - 1:
        pytest.skip("the language rule's base models from their own pretraining runs are not all stored")
    for r in bert.values():  # each base model from the run of its own seed, and that run learnt agreement
        run = made[own_runs.pretrain_name("language", r.metrics["seed"])]
        assert f"full/{pc.CHAPTER}/{run.name}" in r.meta["depends"] and run.metrics["probe"] >= 0.9
    lam = {n: r for n, r in pretraining_lam.items() if r.metrics["rule"] == "sv-plural"}
    df = pc_findings.lam_density(own_runs.arm(lam, bert))
    assert sorted(df[df["init"] == "pretrained"]["seed"].unique()) == list(range(pc.settings("full").seeds))
    for sub in ("subject", "verb"):
        s, p = _at_the_share(df, sub)
        assert (p["effect"] >= pc_findings.MARGIN).all(), p
        assert _claim(pretraining_found, f"sv-plural/{sub}/own_effect").outcome == stats.REPRODUCED
        assert _claim(pretraining_found, f"sv-plural/{sub}/own_specific").outcome == stats.REPRODUCED
        assert _claim(pretraining_found, f"sv-plural/{sub}/own_spread").outcome == stats.UNDECIDED
        swapped = _swapped(df, pc_findings.OWN)
        assert swapped[f"sv-plural/{sub}/own_effect"].outcome != stats.REPRODUCED
    assert _claim(pretraining_found, "sv-plural/verb/own_consistency").outcome == stats.REPRODUCED
    assert _claim(pretraining_found, "sv-plural/subject/own_consistency").outcome == stats.UNDECIDED


def test_pretraining_language_against_a_shared_random_start(pretraining_lam, pretraining_shared, pretraining_found):
    # the page (issue 53; the book's own claims, registered before the base models were trained): BERTs
    # that share the random encoder of seed 0 show no modular pattern at the common share, and the
    # pretrained arm (one run) has the larger effect, the more specific subnetworks and more modular base
    # models against them, for subject and verb; the spread cannot be compared (their effects are too
    # small); swapping the arms moves the effect
    from modlib.pretraining_consistency import shared_start

    if len(pretraining_shared) < len(shared_start.names("full")):
        pytest.skip("the base models from a shared random start are not all stored")
    assert all(r.config["shared_seed"] == 0 for r in pretraining_shared.values())
    lam = {n: r for n, r in pretraining_lam.items() if r.metrics["rule"] == "sv-plural"}
    df = pc_findings.lam_density(shared_start.arm(lam, pretraining_shared))
    for sub in ("subject", "verb"):
        s, p = _at_the_share(df, sub, shared_start.INIT)
        assert len(s) == len(p) == 5, (s["kept"], p["kept"])
        assert s["effect"].mean() < pc_findings.MARGIN <= p["effect"].min(), (s["effect"], p["effect"])
        for what in ("effect", "specific", "consistency"):
            assert _claim(pretraining_found, f"sv-plural/{sub}/shared_{what}").outcome == stats.HOLDS
        f = _claim(pretraining_found, f"sv-plural/{sub}/shared_spread")
        assert f.outcome == stats.UNDECIDED and "shared-start models show too little" in f.text
        swapped = _swapped(df, pc_findings.SHARED, other=shared_start.INIT)
        assert swapped[f"sv-plural/{sub}/shared_effect"].outcome != stats.HOLDS


@pytest.fixture(scope="module")
def pretraining_sweeps():
    """Both arms' stored sweeps by rule (chapter 5's from scratch, chapter 6's pretrained), metrics
    only (:func:`_from_store`)."""
    swept = _from_store(lambda: pc.sweeps("full", torch.device("cpu")), "the sweeps of chapters 5 and 6")
    return {rule: {init: r.metrics for init, r in arms.items()} for rule, arms in swept.items()}


def language_sweep_claims(curves) -> dict[str, bool]:
    """What the page says about the BERT's two sweeps (one base model per arm), each True where it
    holds on ``curves`` (rule -> {"scratch", "pretrained"} -> a sweep's metrics); a function so that
    tests/test_degenerate_4_6.py can run it on degenerate variants."""
    pre, raw = (curves["sv-plural"][init]["points"] for init in ("pretrained", "scratch"))
    fit = [q for q in pre if q["own"] >= 0.9]
    return {
        # the first test holds at every density in the pretrained BERT, and a random subnetwork of the
        # same size does far better on the other subroutine (the test could have failed)
        "specific at every density": bool(fit) and all(q["hard"][1] < 0.35 and q["random"][1] > q["hard"][1] + 0.2
                                                       for q in fit),
        # removing a pretrained subnetwork of a few percent takes its own subroutine down and leaves the
        # other; removing one of 1 % or less costs nothing
        "removal costs at a few percent": any(0.02 <= q["kept"] <= 0.06 for q in fit) and all(
            q["complement"][0] < 0.5 and q["complement"][1] > 0.95 for q in fit if 0.02 <= q["kept"] <= 0.06),
        "removal costs nothing under 1 %": any(q["kept"] < 0.012 for q in fit) and all(
            min(q["complement"]) >= 0.99 for q in fit if q["kept"] < 0.012),
        # the scratch subnetwork alone solves the other subroutine at the densities the pretrained masks reach
        "scratch not specific": all(q["hard"][1] > 0.6 for q in raw if 0.02 <= q["kept"] <= 0.15),
    }


def test_pretraining_language_sweeps_show_the_papers_pattern_only_in_the_pretrained_bert(pretraining_sweeps):
    claims = language_sweep_claims(pretraining_sweeps)
    assert all(claims.values()), claims


def test_pretraining_vision_decides_nothing(pretraining_found, pretraining_table, pretraining_matched):
    # the page: from scratch 3 of 5 base models are modular for inside, pretrained none, but the
    # pretrained inside masks are about 3 times sparser (medians): not decided; contact does not
    # differ clearly; "more specific" cannot be decided (both arms' subnetworks at chance on the other)
    pre, raw = (_arm(pretraining_table, "inside-contact", "inside", init) for init in ("pretrained", "scratch"))
    assert int(raw["modular"].sum()) == 3 and int(pre["modular"].sum()) == 0
    assert (pre["effect"] < pc_findings.MARGIN).all() and raw["effect"].max() > 0.3
    assert pc_findings.density_ratio(raw[raw["searched"]], pre[pre["searched"]]) > pc_findings.DENSITY_RATIO
    for claim in ("consistency", "effect", "specific"):
        f = _claim(pretraining_found, f"inside-contact/inside/{claim}")
        assert f.outcome == stats.UNDECIDED and "times apart in density" in f.text, f.text
    # the hint the page gives: the pretrained ResNets whose converged inside masks are as dense as the
    # scratch ones' (two) are not modular
    near = pc_findings.near_numbers(pretraining_matched)
    assert near["near-inside-contact-inside"] == "2 of 5", near
    assert all(float(e) < pc_findings.MARGIN for e in near["near-inside-contact-inside-effect"].split(" and "))
    # three pretrained inside masks were chosen at x100 (the x30 ones had not converged), two at x30
    assert sorted(pre["lam"].tolist()) == [30.0, 30.0, 100.0, 100.0, 100.0]
    assert (pre[pre["lam"] == 100.0]["target"] >= 0.95).all()  # removal costs nothing there
    for what in ("consistency", "effect"):
        assert _claim(pretraining_found, f"inside-contact/contact/{what}").outcome == stats.UNDECIDED
    # both arms' subnetworks at chance on the other subroutine, and so are random ones of the same
    # per-layer counts: the control (issue 50) fails before the floor is read
    f = _claim(pretraining_found, "inside-contact/contact/specific")
    assert f.outcome == stats.UNDECIDED and "a control did not pass" in f.text, f.text
    assert "random subnetworks of the same per-layer counts get" in f.text, f.text
    for sub in ("inside", "contact"):
        rows = pretraining_table[(pretraining_table["rule"] == "inside-contact")
                                 & (pretraining_table["subroutine"] == sub)]
        assert (rows["sub_other"] < 0.35).all(), rows["sub_other"]
    # at comparable density: inside's converged pretrained masks are too sparse to match; contact undecided
    f = _claim(pretraining_found, "inside-contact/inside/matched_effect")
    assert f.outcome == stats.UNDECIDED and "no masks of one density" in f.text, f.text
    for what in pc_findings.MATCHED:
        assert _claim(pretraining_found, f"inside-contact/contact/{what}").outcome == stats.UNDECIDED


# --- chapter 2, the rows recomputed with data drawn per seed (issue 32) ----------------------------
# Skipped until `python -m modlib.batch --profile full --executor local --workers 1
# notebooks/compositional_sprites.ipynb` has stored them. They pin what must hold whatever the
# outcome (each seed on its own scenes, the arms trained where a comparison needs it, the opened
# opacity passing a gradient, each verdict decided by the rule, the seeds named); the outcomes are
# pinned once the results are computed and the page says them. Meanwhile
# tests/test_compositional_sprites_causes.py runs these very tests on synthetic numbers (they pass)
# and on degenerate variants of them (each fails on some).

DRAWN_MAKE = "python -m modlib.batch --profile full --executor local --workers 1 notebooks/compositional_sprites.ipynb"


@pytest.fixture(scope="module")
def sprite_drawn():
    """(runs, cause settings, statements by name) of the recomputed rows, by row name."""
    from modlib.compositional_sprites import causes as cs_causes

    names = cs_causes.names("full")
    missing = [n for n in names if not (FULL / cs.CHAPTER / f"{n}.json").exists()]
    if missing:
        pytest.skip(f"{len(missing)} of the {len(names)} recomputed rows of chapter 2 are not stored yet; "
                    f"make them with `{DRAWN_MAKE}`")
    runs = _recomputed(names)
    return runs, cs_causes.causes_settings("full"), {f.name: f for f in cs_findings.recomputed(runs)}


def test_spritesdrawn_headline_rows_have_five_seeds_each_on_its_own_scenes(sprite_drawn):
    runs, c, _ = sprite_drawn
    for row in ("orthogonal", "orthogonal-monolithic", "alpha", "alpha-open"):
        r2 = runs.arrays(row)["r2_in"]
        assert len(r2) == c.seeds >= 5, row
        assert runs.rows[row].config["data"] == "per seed"
        assert stats.distinct_units(r2, runs.arrays(row)["r2_gap"]) == c.seeds, (row, "seeds repeat one another")


def test_spritesdrawn_opening_the_opacity_is_decided(sprite_drawn):
    runs, _, found = sprite_drawn
    assert (runs.arrays("alpha-open")["reach"] >= 0.5).all(), "the opened opacity passes little gradient"
    f = found["alpha-open"]
    if f.verdict.outcome == stats.UNDECIDED:  # allowed only where every seed of both arms fits: nothing to fix
        assert "floor or ceiling" in f.verdict.why and (runs.arrays("alpha-open")["r2_in"][:, -1]
                                                        >= cs_findings.FIT).all(), f.text
    else:
        assert f.verdict.outcome in DECIDED, f.text


def test_spritesdrawn_slot_decoders_measured_on_fitted_seeds(sprite_drawn):
    runs, _, found = sprite_drawn
    fit = runs.arrays("orthogonal")["r2_in"][:, -1] >= cs_findings.FIT
    assert fit.sum() >= 3, fit
    assert np.isfinite(runs.arrays("orthogonal")["r2_slot"]).all()
    assert "seeds" in found["slots"].text and "not measured" not in found["slots"].text, found["slots"].text


def test_spritesdrawn_gap_scenes_and_delta_order_are_decided_between_trained_rows(sprite_drawn):
    runs, _, found = sprite_drawn
    for row in ("gap", "orthogonal", "diagonal-0.1"):
        assert (runs.arrays(row)["r2_in"][:, -1] >= cs_findings.FIT).all(), row
    assert found["gap-scenes"].verdict.outcome in DECIDED, found["gap-scenes"].text
    # the paper's difference of drops is +0.003, below the rule's margin, so the order is the book's
    # hypothesis (issue 50): the δ = 0.1 diagonal loses more than the orthogonal support on every
    # draw of scenes, but by less than the margin, so it does not hold (never ✗: no paper's claim)
    f = found["delta-order"]
    drop = {r: np.subtract(*(runs.arrays(r)[k][:, -1] for k in ("r2_in", "r2_whole")))
            for r in ("diagonal-0.1", "orthogonal")}
    assert drop["diagonal-0.1"].mean() > drop["orthogonal"].mean(), drop
    assert f.own and f.verdict.outcome == stats.NOT_REPRODUCED and "below the margin" in f.verdict.why, f.text
    assert "**does not hold**" in f.text, f.text  # in a hypothesis's words; ✗ only for the claim as registered
    assert f.text.count("✗") == 1 and "under the claim as registered: ✗ not reproduced" in f.text, f.text


def test_spritesdrawn_soft_occlusion_draws_scenes_not_sprites_and_alpha_draws_both(sprite_drawn):
    """What the page says of the theorem's conclusion: on the orthogonal support, the fitted soft
    occlusion seeds draw the whole cube well while their slot decoders do not draw the sprites
    (slot R² below 0); the fitted alpha seeds draw both."""
    runs, _, found = sprite_drawn
    soft, alpha = runs.arrays("orthogonal"), runs.arrays("alpha")
    fit = soft["r2_in"][:, -1] >= cs_findings.FIT
    assert fit.sum() >= 3 and (soft["r2_whole"][fit, -1] >= cs_findings.FIT).all()
    assert (soft["r2_slot"][fit] < 0).all(), soft["r2_slot"]
    assert not found["slots"].holds, found["slots"].text
    fit = alpha["r2_in"][:, -1] >= cs_findings.FIT
    assert fit.sum() >= 2 and (alpha["r2_slot"][fit] >= cs_findings.SLOT_FIT).all(), alpha["r2_slot"]
    assert stats.distinct_units(alpha["r2_slot"][fit]) == fit.sum(), "the fitted alpha seeds repeat one another"


def test_spritesdrawn_the_normal_support_varies_no_more_than_the_others(sprite_drawn):
    runs, _, _ = sprite_drawn
    sd = {row: runs.arrays(row)["r2_whole"][:, -1].std() for row in ("normal", "orthogonal", "orthogonal-broad",
                                                                      "random", "diagonal-0.2")}
    assert all((runs.arrays(row)["r2_in"][:, -1] >= cs_findings.FIT).all() for row in sd), sd
    assert sd["normal"] <= max(v for row, v in sd.items() if row != "normal") + 0.005, sd


# ---------------------------------------------------------------- what an amendment changed (claims.amended)


def test_amended_a_claim_whose_amendment_moved_its_verdict():
    """Chapter 4's class-hurts, its margin amended from 0.5 to 0.05 after the results were seen: an
    interval of +0.10 to +0.20 clears the new margin and not the old one, so the verdict differs; not
    decided, the amendments are known and the verdicts are not."""
    key = f"{wm.CHAPTER}/class-hurts"
    with claims.apart():
        a = claims.amended(key)
        assert (a.decided, a.now, a.first, a.same) == (False, None, None, False)
        v = claims.decide(key, low=0.10, high=0.20, units=10, estimate=0.15)
        a = claims.amended(key)
        assert a.key == key and [(x.field, x.old, x.new) for x in a.shown] == [("margin", 0.5, 0.05)]
        assert a.seen == a.shown and a.seen_fields == {"margin"} and a.seen_words == {"the margin"}
        assert (a.decided, a.now, a.first, a.same) == (True, "✓ reproduced", "✗ not reproduced", False)
        assert a.shown_after_seen and a.when == "after the results were seen"
        assert not claims.amended_unchanged(key)
        assert v.amended.endswith("under the claim as registered: ✗ not reproduced")
        assert claims.words(key).endswith(" (as registered: ✗ not reproduced)")


def test_amended_a_claim_whose_amendment_left_its_verdict_as_it_was():
    """Chapter 7's built-a, what counts as a unit amended twice after the results were seen: the same
    interval gives the same verdict under both, which the dagger marks (claims.amended_unchanged);
    class-hurts on an interval that clears both margins is the same too."""
    key = "bridge/built-a"
    with claims.apart():
        v = claims.decide(key, low=0.10, high=0.20, units=10, estimate=0.15)
        a = claims.amended(key)
        assert [x.field for x in a.shown] == ["units", "units"] and a.seen == a.shown
        assert a.seen_fields == {"units"} and a.seen_words == {"what counts as a unit"}
        assert (a.decided, a.now, a.first, a.same) == (True, "holds", "holds", True)
        assert claims.amended_unchanged(key)
        assert v.amended == ("changed after the results were seen (what counts as a unit was revised; when and "
                             "why: the claims ledger); the same verdict as under the claim as registered")
        assert "as registered" not in claims.words(key)
        claims.decide(f"{wm.CHAPTER}/class-hurts", low=0.6, high=0.8, units=10, estimate=0.7)
        a = claims.amended(f"{wm.CHAPTER}/class-hurts")
        assert (a.now, a.first, a.same) == ("✓ reproduced", "✓ reproduced", True)


def test_amended_the_same_outcome_in_another_kinds_words_is_not_the_same_verdict():
    """Chapter 2's delta-order, first registered as a claim of the paper and made the book's own after
    the results were seen: reproduced under both, "holds" now and "✓ reproduced" as registered."""
    key = f"{cs.CHAPTER}/delta-order"
    with claims.apart():
        claims.decide(key, low=0.10, high=0.20, units=10, estimate=0.15)
        a = claims.amended(key)
        assert a.seen_fields == {"whose", "paper", "size"} and [x.field for x in a.shown] == ["whose", "paper", "size"]
        assert (a.now, a.first, a.same) == ("holds", "✓ reproduced", False)
        assert not claims.amended_unchanged(key)


def test_amended_a_claim_never_amended_is_none():
    key = f"{wm.CHAPTER}/alone"
    assert not claims.get(key).amendments
    with claims.apart():
        assert claims.amended(key) is None
        v = claims.decide(key, low=0.10, high=0.20, units=10, estimate=0.15)
        assert claims.amended(key) is None and not claims.amended_unchanged(key) and v.amended == ""


def test_amended_only_in_a_field_no_verdict_reads_shows_nothing():
    """Chapter 1's even-a, amended after its results were seen only in its list of mutations
    (claims.UNSHOWN): seen, not shown, so no note beside the verdict and no dagger."""
    key = f"{toy.CHAPTER}/even-a"
    with claims.apart():
        v = claims.decide(key, low=0.10, high=0.20, units=10, estimate=0.15)
        a = claims.amended(key)
        assert a.shown == () and not a.shown_after_seen
        assert [x.field for x in a.seen] == ["mutations"] and a.seen_fields == {"mutations"}
        assert a.seen_words == {"the mutations it must notice"}
        assert (a.decided, a.now, a.first, a.same) == (True, "holds", "holds", True)
        assert not claims.amended_unchanged(key) and v.amended == ""


def test_a_result_counts_from_when_its_computation_began(tmp_path, monkeypatch):
    """A claim registered while its results were being computed is not registered before them:
    a result's time is its record's ``created`` (when it was stored) less its ``wall_time_s``."""
    import json

    folder = tmp_path / "full" / "bridge"
    folder.mkdir(parents=True)
    (folder / "toy-a.json").write_text(json.dumps({"created": "2026-12-04T15:01:23+00:00", "wall_time_s": 693.8}))
    (folder / "old.json").write_text(json.dumps({"created": "2026-11-01"}))  # a date only: kept as it is
    monkeypatch.setenv("MODLIB_RESULTS", str(tmp_path))
    claims._created.cache_clear()
    try:
        began = claims._created("bridge")
        assert began["toy-a"].startswith("2026-12-04T14:49:49") and began["old"] == "2026-11-01"
        assert claims._earlier("2026-12-04T14:54:56+00:00", "2026-12-04T15:01:23+00:00")  # before it was stored,
        assert not claims._earlier("2026-12-04T14:54:56+00:00", began["toy-a"])  # not before it began
    finally:
        claims._created.cache_clear()
