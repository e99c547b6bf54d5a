"""What chapter 1's stored results show (notebooks/redundant_input_toy.ipynb): each statement the page
prints about its sweep, with the numbers behind it, computed in one place so that the page's prose
and the claims tests (``tests/test_claims.py``) say the same thing at every profile; the
statistics are :mod:`modlib.stats`'.
"""

from __future__ import annotations

import numpy as np

from modlib import claims, stats
from modlib.redundant_input_toy.experiment import CHAPTER, GENERALIZES
from modlib.stats import DOES_NOT_HOLD, HOLDS, UNDECIDED, Finding, Verdict, distinct_units, marked, paired, wilson

# an arm (one setting's seeds) *trained* when its mean training accuracy reaches this (the registry's
# `trained` of every claim of this chapter says why the mean, not every seed)
TRAINED = stats.TRAINED
# a band the page reports the two losses' paired intervals against (how many lie within this of 0): a
# described number, not a verdict (the rule decides one-sided claims; "within a band either side of 0"
# is not one of them, and no claim is registered for it)
LOSS_MARGIN = 0.15


def trained(arrays: dict) -> bool:
    """Whether one setting's seeds trained: mean training accuracy at least :data:`TRAINED`."""
    return bool(np.mean(arrays["train_acc"]) >= TRAINED)


def compare(key: str, x: np.ndarray, y: np.ndarray, arms: list[dict], percent: bool = True,
            shares: bool = True) -> tuple[Verdict, str]:
    """The verdict on the registered claim ``key`` (its id in ``claims.toml``: "``x`` exceeds
    ``y``"), one value per seed in two settings that share each seed's initial weights
    (:func:`modlib.stats.paired`: Newcombe's interval for the shares of seeds that generalise,
    ``shares``; a t interval for measurements, such as the reliance), the units counted by
    :func:`modlib.stats.distinct_units` of the ``arms``' held-out accuracies, every arm
    :func:`trained`; the direction and the margin come from the registry
    (:func:`modlib.claims.decide`). Returns the verdict and its text, which ends with ✓ / ✗ for a
    claim of the paper and "holds" / "does not hold" for the book's own hypothesis
    (:func:`marked_own`). A claim registered with a margin other than the rule's default
    (:data:`modlib.stats.CLEAR`) states it before its mark, so that the line reads against its own
    margin."""
    # the units: seeds whose arms differ in what was measured (not in a 0/1 outcome alone)
    units = distinct_units(x, y, *(a[k] for a in arms for k in ("test_acc", "reliance") if k in a))
    effect = paired(x, y, units=units, shares=shares)
    v = claims.decide(f"{CHAPTER}/{key}", effect, trained=all(trained(a) for a in arms))
    c = claims.get(v.claim)
    mark = marked_own if c.own else marked
    text = effect.text(percent, c.margin)  # a bound at the margin: the digits to show its side
    if c.margin != stats.CLEAR:  # inside the interval's brackets: "(95% ... +6 points; margin 10 points)"
        margin = f"{100 * c.margin:.0f} points" if percent else f"{c.margin:.2f}"
        text = f"{text.removesuffix(')')}; the registered margin {margin})"
    return v, text + claims.late(v, mark(v, f"mean training accuracy below {TRAINED:.0%}"))


def marked_own(v: Verdict, untrained: str = "") -> str:
    """A verdict on the book's own hypothesis as the page prints it after its interval: the rule's
    outcome in the words for a hypothesis, ``" — holds"`` (the rule would say reproduced),
    ``" — does not hold"`` (not reproduced), or ``" — ? cannot be decided here (why)"``; no ✓ or
    ✗, which the page keeps for the paper's claims."""
    if v.outcome == UNDECIDED:
        return marked(v, untrained)
    return (f" — {HOLDS if v.reproduced else DOES_NOT_HOLD}" + (f" ({v.plain})" if v.plain else "")
            + (f" ({v.amended})" if v.amended else ""))


def _share(generalises: np.ndarray) -> str:
    """``"70% (61-78%)"``: a share of seeds and its Wilson 95% interval."""
    low, high = wilson(int(generalises.sum()), generalises.size)
    return f"{generalises.mean():.0%} ({low:.0%}–{high:.0%})"


def redundant_input(sweep, threshold: float, paper_epochs: int) -> dict[str, Finding]:
    """Chapter 1's statements about its sweep (:class:`modlib.redundant_input_toy.ToySweep`), keyed by name.

    Shares of seeds that generalise (held-out accuracy at least ``threshold``) come with Wilson
    intervals; differences between settings with paired intervals over seeds (the unit; the
    settings share each seed's initial weights): :func:`compare`.
    ``holds`` says the verdict (:func:`compare`, :func:`modlib.stats.verdict`) is *reproduced*,
    which needs both arms :func:`trained`; the text ends with the mark: ✓ / ✗ for the paper's
    claim (``cell-<f>``: fewer seeds generalise than with the held-out cell in training), "holds" /
    "does not hold" for the book's own hypotheses (every other comparison; ``whose`` in the chapter's
    ``claims.toml``). For
    ``<control>-<f>`` and ``cell-<f>``, more seeds generalise in the control than in the paper's
    setting; for ``reliance-<control>-<f>``, R ends higher in the paper's setting; ``loss-*``, a
    described number (no claim, no verdict): both arms trained and the paired interval of the two
    losses' shares lies within :data:`LOSS_MARGIN` of 0; ``tanh-<f>``, tanh generalises more; ``formulation``, (a) more than (b). For
    ``level-<f>``: the paper's setting trained and after ``paper_epochs`` the curves moved by at most 5 points of share and 0.03
    of accuracy. The ReLU network with the squared loss, the paper's, unless a name says otherwise.
    """
    s, out = sweep.settings, {}
    gen = lambda a: (a["test_acc"] >= threshold).astype(float)  # noqa: E731, [S] 1/0 per seed

    def arrays(f, activation="relu", loss="mse", reveal=1.0, design="binary"):
        return sweep.arrays(activation, loss, f, reveal, design)

    for f in s.formulations:
        paper = arrays(f)
        others = [(c, arrays(f, design=c), f"the {c} control") for c in s.controls]
        others.append(("cell", arrays(f, reveal=min(s.reveals)),
                       f"reveal {min(s.reveals):g} (the held-out cell in training)"))
        for name, other, label in others:
            # the held-out cell in training is the paper's claim; the controls are the book's
            v, text = compare(f"{name}-{f}", gen(other), gen(paper), [other, paper])
            out[f"{name}-{f}"] = Finding(
                f"{name}-{f}", v.reproduced,
                f"({f}): {_share(gen(paper))} of seeds generalise in the paper's setting, "
                f"{_share(gen(other))} in {label}; difference {text}.")
        for c in s.controls:
            control = arrays(f, design=c)
            v, text = compare(f"reliance-{c}-{f}", paper["final_reliance"], control["final_reliance"],
                              [paper, control], False, shares=False)
            out[f"reliance-{c}-{f}"] = Finding(
                f"reliance-{c}-{f}", v.reproduced,
                f"({f}): the median reliance R ends at {np.median(paper['final_reliance']):.2f} in "
                f"the paper's setting and {np.median(control['final_reliance']):.2f} in the {c} "
                f"control; mean difference {text}.")
        for a in s.activations if len(s.losses) == 2 else ():
            arms = [arrays(f, a, loss) for loss in s.losses]
            x, y = (gen(arm) for arm in arms)
            effect = paired(x, y, units=distinct_units(*(arm["test_acc"] for arm in arms)), shares=True)
            both = all(trained(arm) for arm in arms)
            little = bool(both and effect.units >= 2 and -LOSS_MARGIN <= effect.low and effect.high <= LOSS_MARGIN)
            text = effect.text() + (
                f", {'within' if little else 'not within'} {100 * LOSS_MARGIN:.0f} points of no difference"
                if both else f" (an arm did not train: mean training accuracy below {TRAINED:.0%})")
            out[f"loss-{f}-{a}"] = Finding(
                f"loss-{f}-{a}", little,
                f"({f}, {a}): {_share(x)} generalise with {s.losses[0]}, {_share(y)} with "
                f"{s.losses[1]}; difference {text}.")
        if {"relu", "tanh"} <= set(s.activations):
            relu, tanh = gen(arrays(f, "relu")), gen(arrays(f, "tanh"))
            v, text = compare(f"tanh-{f}", tanh, relu, [arrays(f, "tanh"), arrays(f, "relu")])
            out[f"tanh-{f}"] = Finding(
                f"tanh-{f}", v.reproduced,
                f"({f}, squared loss, the paper's setting): {_share(relu)} generalise with ReLU, "
                f"{_share(tanh)} with tanh; difference {text}.")
        epochs = list(paper["curve_epochs"])
        if paper_epochs in epochs and epochs[-1] > paper_epochs:
            k = epochs.index(paper_epochs)
            then, end = paper["test_acc_curve"][:, k], paper["test_acc_curve"][:, -1]
            moved = abs((end >= threshold).mean() - (then >= threshold).mean())
            out[f"level-{f}"] = Finding(
                f"level-{f}", bool(trained(paper) and moved <= 0.05 and abs(end.mean() - then.mean()) <= 0.03),
                f"({f}): at epoch {paper_epochs} (the paper's) {(then >= threshold).mean():.0%} "
                f"generalise and the mean held-out accuracy is {then.mean():.2f}; at epoch "
                f"{epochs[-1]}, {(end >= threshold).mean():.0%} and {end.mean():.2f}"
                + ("" if trained(paper) else f" (but the networks did not fit their training set: mean "
                   f"training accuracy {np.mean(paper['train_acc']):.2f})") + ".")
    if len(s.formulations) == 2:
        arms = [arrays(f) for f in s.formulations]
        a, b = (gen(arm) for arm in arms)
        v, text = compare("formulation", a, b, arms)
        out["formulation"] = Finding(
            "formulation", v.reproduced,
            f"ReLU, squared loss, the paper's setting: {_share(a)} generalise in "
            f"({s.formulations[0]}), {_share(b)} in ({s.formulations[1]}); difference {text}.")
    return out


def settled(arrays: dict, epoch: int) -> float:
    """How much of the held-out cell (x1 > 0, x2 > 0 in the plotted window) a network already
    gives its final class after ``epoch``: the share of the cell's grid points, mean over the grid
    seeds. ``arrays``: one binary-design setting of :meth:`modlib.redundant_input_toy.ToySweep.arrays`."""
    epochs = list(arrays["snapshot_epochs"])
    if epoch not in epochs:
        raise ValueError(f"epoch={epoch} has no stored snapshot; choose from {epochs}")
    side = arrays["grids"] > 127  # [G, K, res, res], rows x2: P(Y1 = 1) > 0.5
    same = side[:, epochs.index(epoch)] == side[:, -1]  # [G, res, res]
    return float(same[:, held_out_cell(arrays)].mean())


def held_out_cell(arrays: dict) -> np.ndarray:
    """The grid points of the held-out cell (x1 > 0, x2 > 0 in the plotted window), ``[res, res]``
    (rows x2), of one binary-design setting's stored grids."""
    x1_low, x1_high, x2_low, x2_high = arrays["windows"]
    res_x2, res_x1 = arrays["grids"].shape[-2:]
    x1 = np.linspace(x1_low, x1_high, res_x1)
    x2 = np.linspace(x2_low, x2_high, res_x2)
    return (x2[:, None] > 0) & (x1[None, :] > 0)


def steps_note(arrays: dict, epochs, seed: int = 0) -> str:
    """What a figure of one seed's boundary after each of ``epochs`` (stored snapshots) shows
    without a black line, for its caption: the epochs after which the network says one class
    everywhere, and whether the first boundary drawn already crosses the held-out cell; "" where
    every panel has a line."""
    snaps = list(arrays["snapshot_epochs"])
    prob = {e: arrays["grids"][seed, snaps.index(e)] / 255 for e in epochs}  # P(Y1 = 1)
    flat = [e for e, q in prob.items() if not q.min() < 0.5 < q.max()]
    if not flat:
        return ""
    note = (f"After epoch{'s' * (len(flat) > 1)} {' and '.join(map(str, flat))} the network says "
            "one class everywhere (pale colour), so no black line")
    first = next((e for e in prob if e not in flat), None)
    inside = prob[first][held_out_cell(arrays)] if first is not None else None
    if inside is not None and inside.min() < 0.5 < inside.max():
        note += f"; the first line, after epoch {first}, already crosses the dashed cell"
    return note + "."


# ---------------------------------------------------------------- the distribution over seeds

THRESHOLDS = np.round(np.linspace(0.0, 1.0, 41), 3)  # the held-out accuracies the share is read at


def share_curve(acc: np.ndarray, thresholds=THRESHOLDS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The share of seeds whose held-out accuracy ``acc [S]`` is at least each threshold, with its
    Wilson 95% interval: ``(share, low, high)``, each ``[len(thresholds)]``."""
    hits = [(acc >= t - 1e-9).sum() for t in thresholds]
    bounds = np.array([wilson(int(k), acc.size) for k in hits])
    return np.array(hits) / acc.size, bounds[:, 0], bounds[:, 1]


def median_interval(values: np.ndarray) -> tuple[float, float, float]:
    """The median of ``values [S]`` and its distribution-free 95% interval (the order statistics
    the binomial(S, 1/2) puts 2.5% beyond on each side)."""
    from scipy.stats import binom

    v = np.sort(np.asarray(values, dtype=float))
    k = int(binom.ppf(0.025, v.size, 0.5))  # lower order statistic, 0-based
    return float(np.median(v)), float(v[max(k - 1, 0)]), float(v[min(v.size - k, v.size - 1)])


def distribution(sweep, threshold: float, cuts=(0.9, 0.85, 0.8)) -> dict[str, Finding]:
    """How the held-out accuracy spreads over seeds in the paper's setting (ReLU, squared loss), not
    one cut: for each formulation, the median with its interval and the share at each of ``cuts``.
    ``partial-<f>`` holds when the seeds trained and the failures are partial: the median seed gets
    more than half of the cell right (its interval above 0.5) while at most a tenth of the seeds
    get less than half right. ``acc-<c>-<f>``: the verdict on the mean held-out accuracy (no cut),
    each control or ``cell`` (the held-out cell in training) minus the paper's setting."""
    s, out = sweep.settings, {}
    for f in s.formulations:
        paper = sweep.arrays("relu", "mse", f)
        acc = paper["test_acc"]
        med, low, high = median_interval(acc)
        shares = ", ".join(f"{(acc >= c).mean():.0%} at {c:g}" for c in cuts)
        total = float((acc < 0.5).mean())
        holds = trained(paper) and low > 0.5 and total <= 0.1
        out[f"partial-{f}"] = Finding(
            f"partial-{f}", bool(holds),
            f"({f}): the median seed gets {med:.2f} of the held-out cell right (95% interval of the "
            f"median {low:.2f} to {high:.2f}); the share of seeds at or above a cut is {shares}; "
            f"{total:.0%} get less than half of it right.")
        others = [(c, sweep.arrays("relu", "mse", f, 1.0, c), f"the {c} control") for c in s.controls]
        others.append(("cell", sweep.arrays("relu", "mse", f, min(s.reveals)), "the cell in training"))
        for name, other, label in others:
            v, text = compare(f"acc-{name}-{f}", other["test_acc"], acc, [other, paper], percent=False,
                              shares=False)
            out[f"acc-{name}-{f}"] = Finding(
                f"acc-{name}-{f}", v.reproduced,
                f"({f}): mean held-out accuracy {acc.mean():.2f} in the paper's setting, "
                f"{other['test_acc'].mean():.2f} in {label}; difference {text}.")
    return out


# ---------------------------------------------------------------- the later studies

def _median(a: dict, key: str = "reliance") -> float:
    return float(np.median(a[key]))


def baselines(st) -> dict[str, Finding]:
    """The baselines without gradient descent (:class:`modlib.redundant_input_toy.studies.ToyStudies`),
    paper's setting, each formulation. ``nogd-<baseline>-<f>``: the verdict on "gradient descent
    relies on x2 more than this minimiser" (R of the sweep's trained network minus the baseline's,
    paired by seed: the same training points). ``heldout-<baseline>-<f>``: how it does on the held-out
    cell (a statement, no verdict; ``holds`` when it fits its training set). The page attributes the
    reliance to gradient descent; the paper ran no such minimisers, so ``nogd-*`` is the book's own
    hypothesis and ends "holds" / "does not hold"."""
    from modlib.redundant_input_toy.studies import GRADIENT_DESCENT

    out = {}
    for f in st.sweep.settings.formulations:
        gd = st.arrays("baselines", GRADIENT_DESCENT, f)
        for name in st.arms("baselines")[1:]:
            b = st.arrays("baselines", name, f)
            v, text = compare(f"nogd-{name}-{f}", gd["reliance"], b["reliance"], [gd, b], percent=False, shares=False)
            out[f"nogd-{name}-{f}"] = Finding(
                f"nogd-{name}-{f}", v.reproduced,
                f"({f}) {name}: median R {_median(b):.2f}, against {_median(gd):.2f} after gradient "
                f"descent; gradient descent minus {name} {text}.")
            held = {arm: f"{_median(a, 'test_acc'):.2f} and {(a['test_acc'] >= GENERALIZES).mean():.0%}"
                    for arm, a in ((name, b), ("gd", gd))}
            text = (f"({f}) {name}: median held-out accuracy and share of seeds at or above "
                    f"{GENERALIZES:g}: {held[name]} (gradient descent: {held['gd']}); mean training "
                    f"accuracy {np.mean(b['train_acc']):.2f}.")
            out[f"heldout-{name}-{f}"] = Finding(f"heldout-{name}-{f}", trained(b), text)
    return out


def mechanism(st) -> dict[str, Finding]:
    """The x2 weights started at zero. For each formulation: ``built-<f>``, the verdict on "the
    gradient builds reliance where x2 is correlated with Y1" (zero-x2 arm: final R in the paper's
    setting minus with the held-out cell in training, paired by seed); ``inherited-<f>``, on "part of
    the reliance left after ordinary training is inherited from the initial weights" (paper's
    setting: ordinary minus zero-x2); ``zero-gen-<f>``, on "started without x2, more seeds
    generalise" (share, zero-x2 minus ordinary); ``early-<f>``, how the zero arm's median R rises
    update by update (``holds`` when it rises above 0.05 in the paper's setting). ``built-<f>`` is
    the paper's argument (marked ✓ / ✗); ``inherited-<f>`` and ``zero-gen-<f>`` are the book's own
    hypotheses ("holds" / "does not hold")."""
    from modlib.redundant_input_toy.studies import reliance_curve

    out, cell = {}, ("binary", min(st.settings["mechanism"].reveals))
    axis = st.axis("mechanism")
    updates, per_epoch = axis["updates"], int(axis["updates_per_epoch"])
    for f in st.sweep.settings.formulations:
        ordinary, zero = (st.arrays("mechanism", arm, f) for arm in ("ordinary", "zero-x2"))
        zero_cell = st.arrays("mechanism", "zero-x2", f, *cell)
        v, text = compare(f"built-{f}", zero["reliance"], zero_cell["reliance"], [zero, zero_cell], False,
                          shares=False)
        out[f"built-{f}"] = Finding(
            f"built-{f}", v.reproduced,
            f"({f}) started with no weight on x2: median R ends at {_median(zero):.2f} in the paper's "
            f"setting and {_median(zero_cell):.2f} with the held-out cell in training; difference {text}.")
        v, text = compare(f"inherited-{f}", ordinary["reliance"], zero["reliance"], [ordinary, zero], False,
                          shares=False)
        out[f"inherited-{f}"] = Finding(
            f"inherited-{f}", v.reproduced,
            f"({f}) paper's setting: median R ends at {_median(ordinary):.2f} from the ordinary "
            f"initialisation and {_median(zero):.2f} from zero x2 weights; difference {text}.")
        gen = [(a["test_acc"] >= GENERALIZES).astype(float) for a in (zero, ordinary)]
        v, text = compare(f"zero-gen-{f}", *gen, [zero, ordinary])
        out[f"zero-gen-{f}"] = Finding(
            f"zero-gen-{f}", v.reproduced,
            f"({f}) paper's setting: {gen[0].mean():.0%} of seeds generalise from zero x2 weights, "
            f"{gen[1].mean():.0%} from the ordinary initialisation; difference {text}.")
        curve = np.median(reliance_curve(zero), axis=0)  # [T]
        trace = updates <= 8 * per_epoch
        peak = int(np.argmax(np.where(trace, curve, -np.inf)))
        first = int(np.searchsorted(updates, per_epoch))
        out[f"early-{f}"] = Finding(
            f"early-{f}", bool(trained(zero) and curve[peak] > 0.05 and curve[0] == 0),
            f"({f}) started with no weight on x2, the median R is {curve[0]:.2f} at the start, "
            f"{curve[first]:.2f} after the first epoch ({per_epoch} updates) and at most "
            f"{curve[peak]:.2f} in the first 8 epochs (after {int(updates[peak])} updates); from the "
            f"ordinary initialisation it is {np.median(reliance_curve(ordinary)[:, 0]):.2f} at the start "
            f"and {np.median(reliance_curve(ordinary)[:, first]):.2f} after the first epoch.")
    return out


def scale(st) -> dict[str, Finding]:
    """Scale and the gap between the classes apart (the page keeps "margin" for the verdict rule's;
    the registry's ids and names still say margin). ``scale-<shape>``: the verdict on "the larger
    input scale lowers the share of seeds that generalise" (x1 minus x5, with or without the gap);
    ``margin-<scale>``: on "the gap lowers it" (no gap minus gap, at either scale); ``formulation-control``: (a)
    against (b) on the same draws (the chapter's "(a) is milder than (b)"). All are the book's own
    hypotheses: each ends "holds" / "does not hold"."""
    out = {}

    def gen(shape, sc):
        a = st.arrays("scale", sc, shape)
        return (a["test_acc"] >= GENERALIZES).astype(float), a

    names = {("a", "x1"): "(a)", ("a", "x5"): "(a) x5", ("b", "x1"): "(b) /5", ("b", "x5"): "(b)"}
    pairs = {"scale-a": (("a", "x1"), ("a", "x5")), "scale-b": (("b", "x1"), ("b", "x5")),
             "margin-x1": (("a", "x1"), ("b", "x1")), "margin-x5": (("a", "x5"), ("b", "x5")),
             "formulation-control": (("a", "x1"), ("b", "x5"))}
    for key, (first, second) in pairs.items():
        (x, a), (y, b) = gen(*first), gen(*second)
        v, text = compare(key, x, y, [a, b])
        out[key] = Finding(key, v.reproduced,
                           f"{x.mean():.0%} of seeds generalise in {names[first]}, {y.mean():.0%} in "
                           f"{names[second]}; difference {text}.")
    return out


def studies(st) -> dict[str, Finding]:
    """Every statement of the three later studies, keyed by name."""
    return {**baselines(st), **mechanism(st), **scale(st)}


# ---------------------------------------------------------------- issue 51's controls

def coverage(st) -> dict[str, Finding]:
    """The coverage controls (:mod:`modlib.redundant_input_toy.coverage`), ReLU and squared loss,
    each formulation: ``single-<f>``, the verdict on "at the paper's coverage and information, taking
    the correlation away makes more seeds generalise" (share, ``single`` minus the paper's setting);
    ``reliance-single-<f>`` on "... the correlation raises R" (R, the paper's setting minus
    ``single``); ``info-<f>`` on "at fixed coverage and no correlation, more information makes fewer
    seeds generalise" (share, ``single-low`` minus ``single-high``); ``info-reliance-<f>`` on "...
    raises R" (R, ``single-high`` minus ``single-low``). All are the book's own hypotheses."""
    from modlib.redundant_input_toy import coverage as cov
    from modlib.redundant_input_toy.studies import coverage_arm

    out = {}
    gen = lambda a: (a["test_acc"] >= GENERALIZES).astype(float)  # noqa: E731
    bits = {d: cov.mutual_information(d) for d in cov.COVERAGE}
    for f in st.sweep.settings.formulations:
        p = st.sweep.arrays("relu", "mse", f)
        paper = {"test_acc": p["test_acc"], "train_acc": p["train_acc"], "reliance": p["final_reliance"]}
        single, low, high = (coverage_arm(st, d, f) for d in ("single", "single-low", "single-high"))
        v, text = compare(f"single-{f}", gen(single), gen(paper), [single, paper])
        out[f"single-{f}"] = Finding(
            f"single-{f}", v.reproduced,
            f"({f}): {_share(gen(paper))} of seeds generalise in the paper's setting (Y1 = 1 at one band, "
            f"Cov(Y1, Y2) = -0.11, {bits['single']:.3f} bits), {_share(gen(single))} in the coverage-matched "
            f"control (Y1 = 1 at one band, Cov 0, the same bits); difference {text}.")
        v, text = compare(f"reliance-single-{f}", paper["reliance"], single["reliance"], [paper, single], False,
                          shares=False)
        out[f"reliance-single-{f}"] = Finding(
            f"reliance-single-{f}", v.reproduced,
            f"({f}): the median reliance R ends at {_median(paper):.2f} in the paper's setting and "
            f"{_median(single):.2f} in the coverage-matched control; mean difference {text}.")
        v, text = compare(f"info-{f}", gen(low), gen(high), [low, high])
        out[f"info-{f}"] = Finding(
            f"info-{f}", v.reproduced,
            f"({f}) Y1 = 1 at one band, Cov 0: {_share(gen(low))} of seeds generalise with "
            f"{bits['single-low']:.3f} bits, {_share(gen(single))} with {bits['single']:.3f}, "
            f"{_share(gen(high))} with {bits['single-high']:.3f}; {bits['single-low']:.3f} minus "
            f"{bits['single-high']:.3f} bits {text}.")
        v, text = compare(f"info-reliance-{f}", high["reliance"], low["reliance"], [high, low], False, shares=False)
        out[f"info-reliance-{f}"] = Finding(
            f"info-reliance-{f}", v.reproduced,
            f"({f}) Y1 = 1 at one band, Cov 0: the median R ends at {_median(low):.2f} with "
            f"{bits['single-low']:.3f} bits, {_median(single):.2f} with {bits['single']:.3f} and "
            f"{_median(high):.2f} with {bits['single-high']:.3f}; {bits['single-high']:.3f} minus "
            f"{bits['single-low']:.3f} bits {text}.")
    return out


def norm(st) -> dict[str, Finding]:
    """The zero-x2 start with the first layer's norm matched
    (:mod:`modlib.redundant_input_toy.mechanism_norm`), paper's setting, each formulation:
    ``zero-norm-gen-<f>`` (share, norm-matched zero-x2 minus ordinary), ``norm-gen-<f>`` (share,
    zero-x2 minus norm-matched zero-x2: the part of the gain that is the smaller norm) and
    ``inherited-norm-<f>`` (R, ordinary minus norm-matched zero-x2). The book's own hypotheses."""
    from modlib.redundant_input_toy.studies import norm_arm

    out = {}
    for f in st.sweep.settings.formulations:
        ordinary, zero = (st.arrays("mechanism", arm, f) for arm in ("ordinary", "zero-x2"))
        matched = norm_arm(st, f)
        gen = {k: (a["test_acc"] >= GENERALIZES).astype(float)
               for k, a in (("ordinary", ordinary), ("zero", zero), ("matched", matched))}
        v, text = compare(f"zero-norm-gen-{f}", gen["matched"], gen["ordinary"], [matched, ordinary])
        out[f"zero-norm-gen-{f}"] = Finding(
            f"zero-norm-gen-{f}", v.reproduced,
            f"({f}) paper's setting: {gen['matched'].mean():.0%} of seeds generalise from zero x2 weights "
            f"with the first layer's norm matched, {gen['ordinary'].mean():.0%} from the ordinary "
            f"initialisation; difference {text}.")
        v, text = compare(f"norm-gen-{f}", gen["zero"], gen["matched"], [zero, matched])
        out[f"norm-gen-{f}"] = Finding(
            f"norm-gen-{f}", v.reproduced,
            f"({f}) paper's setting: {gen['zero'].mean():.0%} of seeds generalise from zero x2 weights "
            f"(the first layer's norm shrunk), {gen['matched'].mean():.0%} with the norm matched; "
            f"difference {text}.")
        v, text = compare(f"inherited-norm-{f}", ordinary["reliance"], matched["reliance"], [ordinary, matched],
                          False, shares=False)
        out[f"inherited-norm-{f}"] = Finding(
            f"inherited-norm-{f}", v.reproduced,
            f"({f}) paper's setting: median R ends at {_median(ordinary):.2f} from the ordinary "
            f"initialisation, {_median(zero):.2f} from zero x2 weights and {_median(matched):.2f} from "
            f"zero x2 weights with the norm matched; ordinary minus norm-matched {text}.")
    return out


def scale_lr(st) -> dict[str, Finding]:
    """The scale control with the learning rate matched (:mod:`modlib.redundant_input_toy.scale_lr`)
    and the interaction of scale and margin: ``scale-lr<k>-<shape>`` (share, scale 1 at lr 0.1 minus
    scale 5 at 0.1/k); ``interaction`` (the stored scale control, every set at 0.1) and
    ``interaction-lr<k>``: per seed, the larger scale's cost with the margin minus its cost without
    one, a paired t interval over the seeds. The book's own hypotheses."""
    from modlib.redundant_input_toy.studies import scale_lr_arm

    out = {}
    gen = lambda a: (a["test_acc"] >= GENERALIZES).astype(float)  # noqa: E731
    names = {"a": ("(a)", "(a) x5"), "b": ("(b) /5", "(b)")}
    for k in ("25", "5"):
        for shape in ("a", "b"):
            one, five = scale_lr_arm(st, "x1", shape), scale_lr_arm(st, f"x5 lr/{k}", shape)
            v, text = compare(f"scale-lr{k}-{shape}", gen(one), gen(five), [one, five])
            out[f"scale-lr{k}-{shape}"] = Finding(
                f"scale-lr{k}-{shape}", v.reproduced,
                f"{gen(one).mean():.0%} of seeds generalise in {names[shape][0]} at lr 0.1, "
                f"{gen(five).mean():.0%} in {names[shape][1]} at lr 0.1/{k} (mean training accuracy "
                f"{np.mean(five['train_acc']):.3f}); difference {text}.")
    sets = {"interaction": (lambda sc, shape: st.arrays("scale", sc, shape), "every set at lr 0.1"),
            **{f"interaction-lr{k}": (lambda sc, shape, k=k: scale_lr_arm(st, "x1" if sc == "x1" else f"x5 lr/{k}",
                                                                          shape), f"scale 5 at lr 0.1/{k}")
               for k in ("25", "5")}}
    for key, (get, label) in sets.items():
        a1, a5, b1, b5 = get("x1", "a"), get("x5", "a"), get("x1", "b"), get("x5", "b")
        with_margin, without = gen(b1) - gen(b5), gen(a1) - gen(a5)
        v, text = compare(key, with_margin, without, [a1, a5, b1, b5], shares=False)
        out[key] = Finding(
            key, v.reproduced,
            f"({label}) the larger scale costs {with_margin.mean() * 100:+.0f} points of share with the "
            f"gap between the classes ({gen(b1).mean():.0%} to {gen(b5).mean():.0%}) and {without.mean() * 100:+.0f} without "
            f"({gen(a1).mean():.0%} to {gen(a5).mean():.0%}); the interaction (difference of differences) {text}.")
    return out


def issue51(st) -> dict[str, Finding]:
    """Every statement of issue 51's controls, keyed by name."""
    return {**coverage(st), **norm(st), **scale_lr(st)}


# the two measures of one comparison of training sets, each a registered claim: the share of seeds
# that generalise (``<id>``) and the mean held-out accuracy (``acc-<id>``)
MEASURE_NAMES = {"": "the share of seeds that generalise", "acc-": "the mean held-out accuracy"}


def two_measures(comparisons: dict[str, str]) -> list[str]:
    """For each claim id of ``comparisons`` (id -> the comparison in words, "the corner control in
    (a)"; a comparison by the share of seeds that generalise) whose twin by the mean held-out
    accuracy (``acc-<id>``) was decided with another outcome in this process: one line of plain
    words giving both verdicts and why each is what it is (:func:`modlib.claims.reason`: where its
    interval lies against its margin). The two measures ask different questions: the share counts a
    seed only when its held-out accuracy reaches the cut (:data:`GENERALIZES`), the mean counts every
    seed's, partial failures included, so their intervals differ in width and place and their marks
    may differ. [] where every pair agrees."""
    made = claims.decisions(CHAPTER)
    lines = []
    for cid, what in comparisons.items():
        keys = [f"{CHAPTER}/{prefix}{cid}" for prefix in MEASURE_NAMES]
        if not all(k in made for k in keys) or made[keys[0]].outcome == made[keys[1]].outcome:
            continue
        said = [f"by {name}, {claims.words(k)}: the interval is {claims.reason(k)}"
                for name, k in zip(MEASURE_NAMES.values(), keys)]
        lines.append(f"{what}: " + "; ".join(said))
    return lines


def two_measures_text(comparisons: dict[str, str]) -> str:
    """:func:`two_measures` as a page prints it below the statements: what the two measures ask, then
    each comparison whose two marks differ; "" where every pair agrees."""
    lines = two_measures(comparisons)
    if not lines:
        return ""
    head = (f"**Two measures, two marks.** The share of seeds that generalise asks how many seeds reach "
            f"the cut ({GENERALIZES:g} of the held-out cell right); the mean held-out accuracy asks how "
            "much of the cell the seeds get right on average, partial failures included. Each is decided "
            "against its own margin, so one interval can be clear of its margin where the other is not. "
            "The comparisons whose two marks differ:")
    return head + "\n\n" + "\n".join(f"- {line}" for line in lines)
