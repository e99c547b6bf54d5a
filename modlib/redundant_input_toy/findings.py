"""What chapter 1's stored results show (notebooks/redundant_input_toy.ipynb): each statement the page
prints about its sweep, with the numbers behind it, computed in one place so that the page's prose
and the claims tests (``tests/test_claims.py``) say the same thing at every profile; the
statistics are :mod:`modlib.stats`'.
"""

from __future__ import annotations

import numpy as np

from modlib.stats import CLEAR, Finding, Verdict, distinct_units, marked, paired, wilson

# an arm (one setting's seeds) *trained* when its mean training accuracy reaches this
TRAINED = 0.95
# "the loss matters little": the paired interval of the two losses' shares lies within this of 0
LOSS_MARGIN = 0.15


def trained(arrays: dict) -> bool:
    """Whether one setting's seeds trained: mean training accuracy at least :data:`TRAINED`."""
    return bool(np.mean(arrays["train_acc"]) >= TRAINED)


def compare(x: np.ndarray, y: np.ndarray, arms: list[dict], percent: bool = True,
            paper: float = CLEAR, shares: bool = True) -> tuple[Verdict, str]:
    """The verdict (:func:`modlib.stats.verdict`) on "``x`` exceeds ``y``", one value per seed in
    two settings that share each seed's initial weights (:func:`modlib.stats.paired`: Newcombe's
    interval for the shares of seeds that generalise, ``shares``; a t interval for measurements,
    such as the reliance), the units
    counted by :func:`modlib.stats.distinct_units` of the ``arms``' held-out accuracies, every arm
    :func:`trained`. The paper reports a direction, not a size: ``paper`` is
    :data:`modlib.stats.CLEAR`, the stated margin. Returns the verdict and its text."""
    effect = paired(x, y, units=distinct_units(*(a["test_acc"] for a in arms)), shares=shares)
    v = effect.verdict(paper=paper, trained=all(trained(a) for a in arms),
                       source="the stated margin of" if paper == CLEAR else "the paper's")
    return v, effect.text(percent) + marked(v, f"mean training accuracy below {TRAINED:.0%}")


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
    which needs both arms :func:`trained`; the text ends with the mark. For
    ``<control>-<f>`` and ``cell-<f>``, more seeds generalise in the control than in the paper's
    setting; for ``reliance-<control>-<f>``, R ends higher in the paper's setting; ``loss-*``, a
    check (no paper's claim): both arms trained and the paired interval of the two losses' shares
    lies within :data:`LOSS_MARGIN` of 0 (the loss matters little); ``tanh-<f>``, tanh generalises more; ``formulation``, (a) more than (b). For
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
            v, text = compare(gen(other), gen(paper), [other, paper])
            out[f"{name}-{f}"] = Finding(
                f"{name}-{f}", v.reproduced,
                f"({f}): {_share(gen(paper))} of seeds generalise in the paper's setting, "
                f"{_share(gen(other))} in {label}; difference {text}.")
        for c in s.controls:
            control = arrays(f, design=c)
            v, text = compare(paper["final_reliance"], control["final_reliance"], [paper, control], False,
                              shares=False)
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
            v, text = compare(tanh, relu, [arrays(f, "tanh"), arrays(f, "relu")])
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
        v, text = compare(a, b, arms)
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
    x1_low, x1_high, x2_low, x2_high = arrays["windows"]
    x1 = np.linspace(x1_low, x1_high, side.shape[-1])
    x2 = np.linspace(x2_low, x2_high, side.shape[-2])
    cell = (x2[:, None] > 0) & (x1[None, :] > 0)  # [res, res]
    same = side[:, epochs.index(epoch)] == side[:, -1]  # [G, res, res]
    return float(same[:, cell].mean())
