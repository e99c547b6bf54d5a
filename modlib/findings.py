"""What a chapter's stored results show: each statement the page prints about its results, with the
numbers behind it, computed in one place so that the page's prose and the claims tests
(``tests/test_claims.py``) say the same thing at every profile.

A statement is a :class:`Finding`: a short name, whether it holds, and a sentence written from the
numbers (mean ± std over seeds). Chapter 4 (weight masks, :mod:`modlib.modularity`) uses
:func:`specialization`, :func:`reuse` and :func:`class_removal`; chapter 2 (multi-sprite scenes,
:mod:`modlib.compositional_sprites`) uses :func:`paper_comparison`, :func:`gradient_reach` and
:func:`compositional_sprites`; chapter 3 (MNIST pairs and SCAN, :mod:`modlib.resists_at_scale`) uses
:func:`resists_at_scale`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FAR_ABOVE_CHANCE = 10  # "well above chance": at least this many times the accuracy of guessing


@dataclass(frozen=True)
class Finding:
    """One statement about the results: ``name``, whether it ``holds``, and ``text`` (Markdown)."""

    name: str
    holds: bool
    text: str


def _ms(values: np.ndarray) -> str:
    """``"0.93 ± 0.02"`` over seeds (just ``"0.93"`` for one seed)."""
    values = np.asarray(values, dtype=float)
    return f"{values.mean():.2f}" + (f" ± {values.std():.2f}" if values.size > 1 else "")


def _span(values: np.ndarray) -> str:
    """``"0.02–0.14"`` (just ``"0.02"`` when all are equal to two decimals), as percentages."""
    lo, hi = f"{np.min(values):.1%}", f"{np.max(values):.1%}"
    return lo if lo == hi else f"{lo}–{hi}"


def _seeds(n: int) -> str:
    return "the one seed" if n == 1 else f"all {n} seeds"


def specialization(tables: np.ndarray, controls: np.ndarray, chance: float) -> list[Finding]:
    """Chapter 4's add/multiply table: ``tables [seeds, 5, 2]`` (rows ``modularity.ROWS``: full model,
    + mask, + mask removed, × mask, × mask removed; columns +, ×) and ``controls [seeds, 4, 2]``
    (``modularity.CONTROL_ROWS``: random masks as dense, alone and removed). Four findings, each
    asked of every seed: each mask alone does its own operation (at least 80% of the full network)
    and not the other (at most half); removing a mask loses its own operation (at most
    :data:`FAR_ABOVE_CHANCE` times chance); the removal is selective (the other operation keeps at
    least twice ``sqrt(chance)``, the accuracy of a network that gets one of the two digits right
    and guesses the other: 0.2 for two-digit answers; the text sets it beside removing random
    weights as many); and the paper's claim proper, that the removal spares the other operation (at
    least 80% of the full network's accuracy)."""
    full = tables[:, 0]  # [seeds, 2]
    ops, out = ("+", "×"), []
    alone = [(tables[:, 1 + 2 * k, k], tables[:, 1 + 2 * k, 1 - k]) for k in range(2)]  # own, other
    removed = [(tables[:, 2 + 2 * k, k], tables[:, 2 + 2 * k, 1 - k]) for k in range(2)]
    random_removed = [controls[:, 1 + 2 * k] for k in range(2)]  # [seeds, 2]: + and × after random removal

    def verdict(each, what="mask"):
        return (f"holds for both {what}s in {_seeds(len(tables))}" if all(each) else
                f"holds for the {ops[each.index(True)]} {what} only" if any(each) else "is not reproduced at this scale")

    each = [bool((own >= 0.8 * full[:, k]).all() and (other <= 0.5 * full[:, 1 - k]).all())
            for k, (own, other) in enumerate(alone)]
    out.append(Finding("each mask alone does its own operation only", all(each), (
        f"**Each mask alone.** The + mask adds at {_ms(alone[0][0])} and multiplies at {_ms(alone[0][1])}; the × "
        f"mask multiplies at {_ms(alone[1][0])} and adds at {_ms(alone[1][1])} (full network: + {_ms(full[:, 0])}, "
        f"× {_ms(full[:, 1])}). Requiring a mask alone to reach at least 80% of the full network on its own "
        f"operation and at most half of it on the other, this half of specialization {verdict(each)}.")))
    each = [bool((own <= FAR_ABOVE_CHANCE * chance).all()) for own, _ in removed]
    out.append(Finding("removing a mask loses its own operation", all(each), (
        f"**Removing a mask, its own operation.** Without the + mask the network adds at {_ms(removed[0][0])}; "
        f"without the × mask it multiplies at {_ms(removed[1][0])} (chance: {chance:g}). Losing the operation "
        f"(at most {FAR_ABOVE_CHANCE}× chance) {verdict(each, 'removed mask')}.")))
    half_answer = float(np.sqrt(chance))  # one digit of two right, the other guessed
    each = [bool((other >= 2 * half_answer).all()) for _, other in removed]
    out.append(Finding("removing a mask is selective", all(each), (
        f"**Removing a mask, the other operation.** Without the + mask the network multiplies at "
        f"{_ms(removed[0][1])}; without the × mask it adds at {_ms(removed[1][1])}. Removing random weights, as "
        f"many in each layer, leaves + {_ms(random_removed[0][:, 0])} / × {_ms(random_removed[0][:, 1])} (the "
        f"+ mask's count) and + {_ms(random_removed[1][:, 0])} / × {_ms(random_removed[1][:, 1])} (the × mask's). "
        f"A network that gets one of the two digits right and guesses the other scores {half_answer:g} (the "
        f"ones digit of a sum or a product depends on the ones digits alone, so it is the easy half); asking "
        f"the other operation to keep at least twice that, a removal is selective: that "
        f"{verdict(each, 'removed mask')}. Where the other operation falls further than under the random "
        f"removal, the removed module's weights also serve it, which the next finding weighs.")))
    each = [bool((other >= 0.8 * full[:, 1 - k]).all()) for k, (_, other) in enumerate(removed)]
    out.append(Finding("removing a mask spares the other operation", all(each), (
        f"**The paper's claim.** Removing the + mask should leave multiplication working, near the full "
        f"network's accuracy (and mirrored for ×). Asking for at least 80% of the full network, it "
        f"{verdict(each, 'removed mask')}" + ("." if all(each) else
        ": here the two operations share more weights than in the paper's 2000×4 network, and removing one "
        "operation's module costs the other part of its accuracy."))))
    return out


def hidden_layers(iou: np.ndarray) -> np.ndarray:
    """Per seed, the mean over the hidden layers (all but the first and the last) of a per-layer
    overlap ``iou [seeds, L]``: in the double addition the first and last layers serve one pair by
    construction, so reuse is read on the others."""
    return iou[:, 1:-1].mean(1)


def others_reference(reference: np.ndarray) -> np.ndarray:
    """For each class ``c``, the mean accuracy of the other nine under the all-classes mask, from the
    per-class ``reference [10]``."""
    return (reference.sum() - reference) / (len(reference) - 1)


def reuse(iou: np.ndarray, iou_same: np.ndarray, iou_random: np.ndarray,
          tables: np.ndarray | None = None) -> list[Finding]:
    """Chapter 4's double addition: per-layer IoU ``[seeds, L]`` of the pair-1 and pair-2 masks
    (``iou``), of two pair-1 masks from different seeds (``iou_same``) and of random masks as dense
    (``iou_random``), read on the hidden layers (all but the first and the last). Reuse would put
    the two pairs' overlap near that of two masks of one pair; the finding asks that it be lower in
    every seed, by more than twice the spread of the difference over seeds. Given the ablation
    ``tables [seeds, 7, 2]`` (rows ``modularity.PAIR_ROWS``), it also asks that each pair's mask
    alone do its pair (at least half the full network's accuracy): the overlap of masks that fail
    their own task says nothing about reuse."""
    pairs, same, rand = (hidden_layers(a) for a in (iou, iou_same, iou_random))  # [seeds]
    gap = same - pairs
    below = bool((gap > 0).all() and gap.mean() > 2 * gap.std())
    text = (f"In the hidden layers the pair-1 and pair-2 masks overlap at IoU {_ms(pairs)}; two masks trained "
            f"for pair 1 from different seeds overlap at {_ms(same)}, and random masks as dense at {_ms(rand)}. ")
    if tables is not None:
        alone = np.stack([tables[:, 3, 0] / tables[:, 0, 0], tables[:, 5, 1] / tables[:, 0, 1]])  # [2, seeds]
        if (alone < 0.5).any():
            return [Finding("two pairs' masks overlap less than two masks of one pair", False, text + (
                f"But the pair masks do not do their own pair: alone they keep {_ms(alone[0])} (pair 1) and "
                f"{_ms(alone[1])} (pair 2) of the full network's accuracy. The overlap of masks that fail "
                f"their own task cannot be read as reuse or its absence at this profile."))]
    return [Finding("two pairs' masks overlap less than two masks of one pair", below, text + (
        "The two pairs' masks overlap clearly less than two masks of one pair: the network does not reuse "
        "one adder for both pairs, as the paper found." if below else
        "The two pairs' masks do not overlap clearly less than two masks of one pair: the paper's finding "
        "of no reuse is not reproduced at this scale."))]


def class_removal(own: np.ndarray, others: np.ndarray, reference: np.ndarray,
                  reference_others: np.ndarray | None = None, random_own: np.ndarray | None = None,
                  random_others: np.ndarray | None = None) -> list[Finding]:
    """Chapter 4's class removal, per removed class ``[10]``: accuracy on it (``own``) and on the
    others (``others``) with its mask applied; the same under the all-classes mask (``reference``:
    per class; ``reference_others``: mean over the other nine, computed from ``reference`` when not
    given). Two findings: the removal is
    selective (the removed class loses more than twice what the others lose, and at least 0.05,
    for every class), and the removed class collapses (falls below half its reference accuracy).
    Given the random control (``random_own``, ``random_others``: the same under random masks as
    dense), the text says whether the learned masks differ from it; selectivity then also asks that
    the random masks spare the other classes, or the removal cannot be told from damage."""
    if reference_others is None:
        reference_others = others_reference(reference)
    drop_own, drop_others = reference - own, reference_others - others
    far = drop_own > 2 * drop_others + 0.05
    collapsed = np.flatnonzero(own < 0.5 * reference)
    control, damaged = "", False
    if random_own is not None and random_others is not None:
        damaged = bool((random_others < 0.5 * reference_others).any())
        control = (f" A random mask as dense as each class mask leaves the other classes at {_ms(random_others)} "
                   f"and the removed class anywhere from {random_own.min():.2f} to {random_own.max():.2f}" + (
                       ": random masks this sparse damage the whole network, and which classes survive is "
                       "chance, so the class masks' selectivity is what sets them apart from damage."
                       if damaged else "."))
    return [
        Finding("removing a class's mask hurts that class more than the others", bool(far.all()), (
            f"Removing class c's weights drops its accuracy by {_ms(drop_own)} (over the ten classes; from "
            f"{drop_own.min():.2f} to {drop_own.max():.2f}) and the other classes' by {_ms(drop_others)}. The "
            f"removed class loses more than twice what the others lose, and at least 0.05, for "
            f"{'all 10' if far.all() else f'{int(far.sum())} of the 10'} classes" + ("." if far.all() else f"; not for {np.flatnonzero(~far).tolist()}.") + control)),
        Finding("the removed class collapses", len(collapsed) == 10, (
            f"The paper reports that a class's accuracy drops significantly when its weights are removed. Here "
            f"{len(collapsed)} of the 10 classes "
            + ("falls" if len(collapsed) == 1 else "fall")
            + " below half their accuracy under the all-classes mask"
            + (f" (class{'es' if len(collapsed) > 1 else ''} {', '.join(map(str, collapsed.tolist()))})"
               if len(collapsed) else "")
            + ("." if len(collapsed) == 10 else
               ": the removal is selective but mostly partial, a weaker effect than the paper's, not reproduced "
               "in full at this scale."))),
    ]


# --- Chapter 1: the redundant-input toy -------------------------------------------------------------

def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson 95% interval ``(low, high)`` for a share of ``successes`` out of ``n`` (e.g. the
    seeds that generalise): binomial, and sensible at shares of 0 and 1."""
    if n < 1:
        raise ValueError(f"n={n}: a share needs at least one trial")
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def paired_difference(a: np.ndarray, b: np.ndarray, resamples: int = 10_000,
                      seed: int = 0) -> tuple[float, float, float]:
    """``mean(a - b)`` over seeds and its 95% bootstrap interval ``(difference, low, high)``.

    ``a [S]`` and ``b [S]`` hold one value per seed (an accuracy, or 1/0 for "generalises") in two
    settings that share each seed's initial weights, so the seeds are resampled in pairs."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if d.ndim != 1 or d.size < 2:
        raise ValueError(f"a and b must be [S] with S >= 2 paired seeds; got shape {d.shape}")
    rng = np.random.default_rng(seed)
    means = d[rng.integers(d.size, size=(resamples, d.size))].mean(1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(d.mean()), float(low), float(high)


def _share(generalises: np.ndarray) -> str:
    """``"70% (61-78%)"``: a share of seeds and its Wilson 95% interval."""
    low, high = wilson(int(generalises.sum()), generalises.size)
    return f"{generalises.mean():.0%} ({low:.0%}–{high:.0%})"


def _difference(a: np.ndarray, b: np.ndarray, percent: bool = True) -> tuple[str, bool, float]:
    """The paired difference ``a - b`` as text, whether its interval excludes 0, and its sign."""
    d, low, high = paired_difference(a, b)
    fmt = (lambda v: f"{100 * v:+.0f} points") if percent else (lambda v: f"{v:+.2f}")
    return f"{fmt(d)} (95% interval {fmt(low)} to {fmt(high)})", low > 0 or high < 0, d


def redundant_input(sweep, threshold: float, paper_epochs: int) -> dict[str, Finding]:
    """Chapter 1's statements about its sweep (:class:`modlib.toy.ToySweep`), keyed by name.

    Shares of seeds that generalise (held-out accuracy at least ``threshold``) come with Wilson
    intervals; differences between settings with paired bootstrap intervals over seeds (the
    settings share each seed's initial weights). ``holds`` says the interval excludes zero: for
    ``<control>-<f>`` and ``cell-<f>``, more seeds generalise in the control than in the paper's
    setting; for ``reliance-<control>-<f>``, R ends higher in the paper's setting; ``loss-*``, the
    losses differ; ``tanh-<f>``, tanh generalises more; ``formulation``, (a) more than (b). For
    ``level-<f>``: after ``paper_epochs`` the curves moved by at most 5 points of share and 0.03
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
            text, significant, d = _difference(gen(other), gen(paper))
            out[f"{name}-{f}"] = Finding(
                f"{name}-{f}", significant and d > 0,
                f"({f}): {_share(gen(paper))} of seeds generalise in the paper's setting, "
                f"{_share(gen(other))} in {label}; difference {text}.")
        for c in s.controls:
            control = arrays(f, design=c)
            text, significant, d = _difference(paper["final_reliance"],
                                               control["final_reliance"], False)
            out[f"reliance-{c}-{f}"] = Finding(
                f"reliance-{c}-{f}", significant and d > 0,
                f"({f}): the median reliance R ends at {np.median(paper['final_reliance']):.2f} in "
                f"the paper's setting and {np.median(control['final_reliance']):.2f} in the {c} "
                f"control; mean difference {text}.")
        for a in s.activations if len(s.losses) == 2 else ():
            x, y = (gen(arrays(f, a, loss)) for loss in s.losses)
            text, significant, _ = _difference(x, y)
            out[f"loss-{f}-{a}"] = Finding(
                f"loss-{f}-{a}", significant,
                f"({f}, {a}): {_share(x)} generalise with {s.losses[0]}, {_share(y)} with "
                f"{s.losses[1]}; difference {text}.")
        if {"relu", "tanh"} <= set(s.activations):
            relu, tanh = gen(arrays(f, "relu")), gen(arrays(f, "tanh"))
            text, significant, d = _difference(tanh, relu)
            out[f"tanh-{f}"] = Finding(
                f"tanh-{f}", significant and d > 0,
                f"({f}, squared loss, the paper's setting): {_share(relu)} generalise with ReLU, "
                f"{_share(tanh)} with tanh; difference {text}.")
        epochs = list(paper["curve_epochs"])
        if paper_epochs in epochs and epochs[-1] > paper_epochs:
            k = epochs.index(paper_epochs)
            then, end = paper["test_acc_curve"][:, k], paper["test_acc_curve"][:, -1]
            moved = abs((end >= threshold).mean() - (then >= threshold).mean())
            out[f"level-{f}"] = Finding(
                f"level-{f}", moved <= 0.05 and abs(end.mean() - then.mean()) <= 0.03,
                f"({f}): at epoch {paper_epochs} (the paper's) {(then >= threshold).mean():.0%} "
                f"generalise and the mean held-out accuracy is {then.mean():.2f}; at epoch "
                f"{epochs[-1]}, {(end >= threshold).mean():.0%} and {end.mean():.2f}.")
    if len(s.formulations) == 2:
        a, b = (gen(arrays(f)) for f in s.formulations)
        text, significant, d = _difference(a, b)
        out["formulation"] = Finding(
            "formulation", significant and d > 0,
            f"ReLU, squared loss, the paper's setting: {_share(a)} generalise in "
            f"({s.formulations[0]}), {_share(b)} in ({s.formulations[1]}); difference {text}.")
    return out


def settled(arrays: dict, epoch: int) -> float:
    """How much of the held-out cell (x1 > 0, x2 > 0 in the plotted window) a network already
    gives its final class after ``epoch``: the share of the cell's grid points, mean over the grid
    seeds. ``arrays``: one binary-design setting of :meth:`modlib.toy.ToySweep.arrays`."""
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


def _r2(runs, row: str) -> tuple[np.ndarray, np.ndarray]:
    """Final R^2 per seed of a row: ``(in-domain [S], whole cube [S])``."""
    a = runs.arrays(row)
    return a["r2_in"][:, -1], a["r2_whole"][:, -1]


FIT = 0.8  # a seed "fits" its training support when its final in-domain R^2 reaches this


def paper_comparison(runs):
    """Chapter 2's table: each stored row's R^2 (mean ± std over seeds) in-domain and on the whole
    cube beside the paper's; the drop from in-domain to whole beside the paper's drop; how many
    seeds fit the training support (in-domain R^2 >= ``FIT``); and whether a paper number lies
    outside the row's range over seeds widened by 0.01 (``differs``). A ``pandas.DataFrame``."""
    import pandas as pd

    from modlib.compositional_sprites import PAPER_R2

    def outside(v, p):
        return bool(p < v.min() - 0.01 or p > v.max() + 0.01)

    lines = []
    for row in runs.rows:
        r_in, r_whole = _r2(runs, row)
        paper = PAPER_R2.get(row)
        lines.append({
            "row": row, "R² in-domain": _ms(r_in), "paper in-domain": paper[0] if paper else None,
            "R² whole": _ms(r_whole), "paper whole": paper[1] if paper else None,
            "drop": _ms(r_in - r_whole), "paper drop": round(paper[0] - paper[1], 3) if paper else None,
            "seeds fit": f"{int((r_in >= FIT).sum())}/{len(r_in)}",
            "differs": (outside(r_in, paper[0]) or outside(r_whole, paper[1])) if paper else None})
    return pd.DataFrame(lines)


def gradient_reach(runs, row: str, n: int = 500) -> np.ndarray:
    """How much of the composition's gradient reaches the slot decoders of a row's compositional
    model *before training*, per seed ``[S]`` (each seed's model rebuilt as the run built it, on
    ``n`` of the row's training scenes). Used in chapter 2, "Why some seeds never train".

    Soft occlusion: the mean over pixels of sigma(-k * sum_rgb top slot), the weight with which the
    lower slot's output enters the scene and its gradient reaches the lower decoder. Alpha
    compositing: the share of opacity outputs strictly between 0 and 1, where the clamp passes a
    gradient (outside it, the slot's colour and opacity both get none)."""
    import torch

    from modlib import compositional_sprites as cs

    s = runs.settings
    z, _ = cs.data(s, row, n, "train", 0)  # [n, 2, 5]
    _, _, _, composition, k = cs.ROWS[row]
    reach = []
    for seed in range(len(_r2(runs, row)[0])):
        torch.manual_seed(seed)  # as run_row seeds each model
        model = cs.build(s, row)
        with torch.no_grad():
            slots = model.slot_images(z)  # [n, 2, C, H, W]
        if composition == "alpha":
            opacity = slots[:, :, 3]  # [n, 2, H, W]
            passes = (opacity > 0) & (opacity < 1)
            reach.append(passes.float().mean().item())
        else:
            top = slots[:, 0].sum(1)  # [n, H, W]
            reach.append(torch.sigmoid(-k * top).mean().item())
    return np.array(reach)


def compositional_sprites(runs, sharpness_rows: dict[str, float] | None = None) -> dict[str, Finding]:
    """Chapter 2's statements about its stored rows (:class:`modlib.compositional_sprites.SpriteRuns`),
    keyed by name; a statement whose rows are not stored is left out.

    ``orthogonal``: the compositional model reaches R^2 >= 0.8 on the whole cube, within 0.05 of
    in-domain, in every seed; ``monolithic``: in-domain >= 0.8 and whole <= 0.3 in every seed;
    ``random``: on the random support both models' whole R^2 is within 0.05 of their in-domain R^2;
    ``alpha``: with alpha compositing at least one seed fits its training support, and every seed
    that fits (in-domain >= ``FIT``) generalises as ``orthogonal`` asks; ``diagonal``: delta 0.05
    ends below delta 0.2 on the whole cube in every seed, by at least 0.05 on average;
    ``gap-drop``: the gap support loses more from in-domain to whole than the orthogonal support;
    ``sharpness`` (``sharpness_rows``: row -> k, with ``"orthogonal"`` as k = 1): fewer seeds fit
    at the sharpest k than at k = 1, and every seed that fits reaches R^2 >= 0.8 on the whole
    cube; ``reach`` (where some seed of the alpha or sharpness rows never fits): for each
    composition, every seed that never fits started with less :func:`gradient_reach` than every
    seed that fits; ``epochs``: the first evaluated epoch at which the compositional model's whole R^2
    reaches 0.8 (mean over seeds), holds if it does.
    """
    out, stored = {}, set(runs.rows)

    def generalises(row: str) -> tuple[bool, str]:
        r_in, r_whole = _r2(runs, row)
        ok = bool((r_whole >= 0.8).all() and (np.abs(r_in - r_whole) <= 0.05).all())
        return ok, f"R² {_ms(r_in)} in-domain, {_ms(r_whole)} on the whole cube"

    def fitted(row: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        r_in, r_whole = _r2(runs, row)
        fit = r_in >= FIT
        return fit, r_in[fit], r_whole[fit]

    if "orthogonal" in stored:
        ok, text = generalises("orthogonal")
        out["orthogonal"] = Finding("orthogonal", ok, f"The compositional model on the orthogonal support: "
                                    f"{text} ({_seeds(len(_r2(runs, 'orthogonal')[0]))}).")
    if "alpha" in stored:
        fit, r_in, r_whole = fitted("alpha")
        stuck = runs.arrays("alpha")["r2_in"][~fit]
        out["alpha"] = Finding(
            "alpha", bool(fit.any() and (r_whole >= 0.8).all() and (np.abs(r_in - r_whole) <= 0.05).all()),
            f"With alpha compositing (one decoder for both slots), {fit.sum()} of {fit.size} seeds fit "
            "the training support" + (f", with R² {_ms(r_in)} in-domain and {_ms(r_whole)} on the whole cube"
                                      if fit.any() else "")
            + (f"; the other {(~fit).sum()} never left their starting output (in-domain R² "
               + (f"{stuck.min():.2f} at every evaluation)" if np.ptp(stuck) < 0.005 else
                  f"from {stuck.min():.2f} to {stuck.max():.2f} over all evaluations)")
               if (~fit).any() else "") + ".")
    if "orthogonal-monolithic" in stored:
        r_in, r_whole = _r2(runs, "orthogonal-monolithic")
        out["monolithic"] = Finding(
            "monolithic", bool((r_in >= 0.8).all() and (r_whole <= 0.3).all()),
            f"The monolithic model on the orthogonal support: R² {_ms(r_in)} in-domain, "
            f"{_ms(r_whole)} on the whole cube.")
    randoms = [r for r in ("random", "random-monolithic") if r in stored]
    if randoms:
        gaps = {r: np.abs(np.subtract(*_r2(runs, r))) for r in randoms}
        out["random"] = Finding(
            "random", all(bool((g <= 0.05).all()) for g in gaps.values()),
            "On the random support: " + "; ".join(
                f"{'monolithic' if 'mono' in r else 'compositional'}, R² {_ms(_r2(runs, r)[0])} "
                f"in-domain and {_ms(_r2(runs, r)[1])} on the whole cube" for r in randoms) + ".")
    if {"diagonal-0.2", "diagonal-0.05"} <= stored:
        wide, narrow = _r2(runs, "diagonal-0.2")[1], _r2(runs, "diagonal-0.05")[1]
        out["diagonal"] = Finding(
            "diagonal", bool(narrow.max() < wide.min() and wide.mean() - narrow.mean() >= 0.05),
            f"Whole-cube R² on the diagonal support: {_ms(wide)} at δ = 0.2, "
            + (f"{_ms(_r2(runs, 'diagonal-0.1')[1])} at δ = 0.1, " if "diagonal-0.1" in stored else "")
            + f"{_ms(narrow)} at δ = 0.05.")
    if {"gap", "orthogonal"} <= stored:
        drop = {r: np.subtract(*_r2(runs, r)) for r in ("gap", "orthogonal")}
        out["gap-drop"] = Finding(
            "gap-drop", bool(drop["gap"].mean() > drop["orthogonal"].mean()),
            f"From in-domain to the whole cube, R² drops by {_ms(drop['gap'])} with the gap in "
            f"slot 0's x and by {_ms(drop['orthogonal'])} without it.")
    if "orthogonal" in stored and stored & set(sharpness_rows or ()):
        ks = {"orthogonal": 1.0, **{r: k for r, k in sharpness_rows.items() if r in stored}}
        ks = dict(sorted(ks.items(), key=lambda item: item[1]))
        parts, fits, ok = [], [], True
        for row, k in ks.items():
            fit, r_in, r_whole = fitted(row)
            fits.append(fit.mean())
            ok &= bool((r_whole >= 0.8).all())
            parts.append(f"k = {k:g}, {fit.sum()} of {fit.size} seeds fit"
                         + (f" (R² {_ms(r_in)} in-domain, {_ms(r_whole)} on the whole cube)" if fit.any() else ""))
        out["sharpness"] = Finding(
            "sharpness", bool(ok and fits[-1] < fits[0]),
            "Soft occlusion of growing sharpness: " + "; ".join(parts) + ".")
    reach_rows = {"soft occlusion": [r for r in ("orthogonal", *(sharpness_rows or ())) if r in stored],
                  "alpha compositing": [r for r in ("alpha",) if r in stored]}
    parts, ok, any_stuck = [], True, False
    for composition, rows in reach_rows.items():
        if not rows:
            continue
        reach = np.concatenate([gradient_reach(runs, r) for r in rows])
        fit = np.concatenate([fitted(r)[0] for r in rows])
        if fit.all() or not fit.any():
            continue
        any_stuck = True
        ok &= bool(reach[~fit].max() < reach[fit].min())
        parts.append(f"with {composition}, {_span(reach[~fit])} in the {(~fit).sum()} seed(s) that never fit "
                     f"against {_span(reach[fit])} in the {fit.sum()} that fit")
    if any_stuck:
        out["reach"] = Finding(
            "reach", ok, "The share of the composition's gradient that reached the slot decoders before "
            "training: " + "; ".join(parts) + ".")
    if "orthogonal" in stored:
        a = runs.arrays("orthogonal")
        reached = [int(e) for e, v in zip(a["eval_epochs"], a["r2_whole"].mean(0)) if v >= 0.8]
        out["epochs"] = Finding(
            "epochs", bool(reached),
            (f"The compositional model's whole-cube R² (mean over seeds) first reaches 0.8 at epoch "
             f"{reached[0]} of {int(a['eval_epochs'][-1])} evaluated" if reached else
             f"The compositional model's whole-cube R² never reaches 0.8 in {int(a['eval_epochs'][-1])} epochs")
            + f" (evaluated at epochs {', '.join(str(int(e)) for e in a['eval_epochs'])}).")
    return out


# the windows in which training speed is compared: MNIST's first quarter, and the steps in which the
# paper's text sees setting A ahead on SCAN ("steps 10-25")
EARLY = {"mnist": (1, 50), "scan": (10, 25)}
CLEAR = 0.05  # an effect the page calls clear: a paired difference of at least this, interval clear of 0


def early_train_accuracy(runs, name: str, curve: str = "acc_train") -> np.ndarray:
    """Mean accuracy per seed on the ``curve`` (training-distribution data by default) over the
    experiment's :data:`EARLY` window of steps: ``[S]``. ``name``: a result of chapter 3, e.g.
    ``"mnist-A"``."""
    a = runs.arrays(name)
    low, high = EARLY[name.split("-")[0]]
    window = (a["eval_steps"] >= low) & (a["eval_steps"] <= high)
    return a[curve][:, window].mean(1)


def _paired_excess(x: np.ndarray, y: np.ndarray, label: str) -> tuple[bool, str]:
    """Whether ``x`` exceeds ``y`` seed for seed with a paired interval clear of 0, and the text
    ``"; <label> <difference>"``; with one seed, ``(True, "")`` (no interval to ask for)."""
    if len(x) < 2:
        return True, ""
    text, clear, sign = _difference(x, y)
    return clear and sign > 0, f"; {label} {text}"


def resists_at_scale(runs) -> dict[str, Finding]:
    """Chapter 3's statements about its stored results (:class:`modlib.resists_at_scale.ResistRuns`),
    keyed by name; an experiment not stored is left out. Settings A and B share each seed's initial
    weights, so differences are paired over seeds (:func:`paired_difference`; with 5 seeds its
    interval clears 0 whenever all seeds agree, so a *clear* effect also needs a size of
    :data:`CLEAR`).

    ``<exp>-early`` (``mnist``, ``scan``): setting A's training accuracy over the :data:`EARLY`
    window is higher than B's (interval clear of 0); ``scan-early-long``: the same on training
    commands of more than one word (no size asked: it is reported either way, and holds if A is
    ahead); ``<exp>-gap``: A's final train-test gap exceeds B's in every seed, clearly;
    ``<exp>-b-agrees``: setting B's final train and test accuracies differ by at most 0.05 on
    average; ``scan-test``: A's final test accuracy is below a quarter of its training accuracy in
    every seed; ``scan-unseen``: on test commands that B never trained on, B's final accuracy is
    clearly above A's; ``mnist-swap``: replacing the right digit costs A clearly more accuracy than
    B, and at least half of A's train-test gap.
    """
    out = {}
    for experiment, label in (("mnist", "MNIST pairs"), ("scan", "SCAN")):
        if f"{experiment}-A" not in runs.rows or f"{experiment}-B" not in runs.rows:
            continue
        a, b = runs.arrays(f"{experiment}-A"), runs.arrays(f"{experiment}-B")
        seeds = len(a["final_train"])
        low, high = EARLY[experiment]
        if seeds > 1 and a["eval_steps"][-1] >= high:
            curves = [("early", "acc_train", "")]
            if experiment == "scan":
                curves.append(("early-long", "acc_train_long", " on training commands of more than one word"))
            for key, curve, what in curves:
                early = {s: early_train_accuracy(runs, f"{experiment}-{s}", curve) for s in "AB"}
                text, clear, sign = _difference(early["A"], early["B"])
                out[f"{experiment}-{key}"] = Finding(
                    f"{experiment}-{key}", clear and sign > 0,
                    f"{label}, steps {low}–{high}: mean training accuracy{what} {_ms(early['A'])} in setting A "
                    f"and {_ms(early['B'])} in B; A minus B {text}.")
        gap = {s: r["final_train"] - r["final_test"] for s, r in (("A", a), ("B", b))}
        paired, text = _paired_excess(gap["A"], gap["B"], "A minus B")
        out[f"{experiment}-gap"] = Finding(
            f"{experiment}-gap",
            bool(paired and gap["A"].min() > gap["B"].max() and gap["A"].mean() - gap["B"].mean() >= CLEAR),
            f"{label}, after training: setting A {_ms(a['final_train'])} on training-distribution data and "
            f"{_ms(a['final_test'])} on test data, setting B {_ms(b['final_train'])} and "
            f"{_ms(b['final_test'])}; the train-test gap is {_ms(gap['A'])} in A and {_ms(gap['B'])} in B"
            f"{text}.")
        out[f"{experiment}-b-agrees"] = Finding(
            f"{experiment}-b-agrees", bool(abs(gap["B"].mean()) <= 0.05),
            f"{label}, setting B: training and test accuracy differ by {_ms(gap['B'])}.")
        if experiment == "scan":
            out["scan-test"] = Finding(
                "scan-test", bool((a["final_test"] < a["final_train"] / 4).all()),
                f"SCAN setting A: test accuracy {_ms(a['final_test'])} against {_ms(a['final_train'])} on "
                f"training commands.")
            paired, text = _paired_excess(b["final_unseen"], a["final_unseen"], "B minus A")
            out["scan-unseen"] = Finding(
                "scan-unseen", bool(paired and b["final_unseen"].mean() - a["final_unseen"].mean() >= CLEAR),
                f"SCAN, test commands that setting B never trained on: accuracy {_ms(b['final_unseen'])} in "
                f"setting B and {_ms(a['final_unseen'])} in A{text}.")
        if experiment == "mnist":
            cost = {s: r["final_train"] - r["swapped"] for s, r in (("A", a), ("B", b))}
            paired, text = _paired_excess(cost["A"], cost["B"], "A minus B")
            out["mnist-swap"] = Finding(
                "mnist-swap", bool(paired and cost["A"].mean() - cost["B"].mean() >= CLEAR
                                   and cost["A"].mean() >= gap["A"].mean() / 2),
                f"Replacing the right digit of training-distribution pairs by a random one lowers accuracy "
                f"by {_ms(cost['A'])} in setting A and {_ms(cost['B'])} in B{text}; A's train-test gap "
                f"is {_ms(gap['A'])}.")
    return out


# --- chapter 5: structural compositionality ------------------------------------------------------

# Lepori et al. (2023), means of 9 runs: (subnetwork target, other, ablated target, other) per
# (rule, subroutine) of their ResNet-50 and BERT-small (scratch) base models
LEPORI = {("inside-contact", "inside"): (0.95, 0.23, 0.71, 0.56),
          ("inside-contact", "contact"): (0.96, 0.37, 0.50, 0.80),
          ("number-contact", "contact"): (1.00, 0.45, 0.55, 0.87),
          ("inside-number", "inside"): (1.00, 0.40, 0.39, 0.57),
          ("sv-plural", "subject"): (1.00, 0.45, 0.62, 0.93)}
GATE_TARGET = 0.9  # the paper's: a subnetwork must reach this on its target (structural_compositionality.GATE)
LOWER = 0.1  # "clearly lower": the subnetwork's other-subroutine accuracy this far below its target's


def structure_table(runs):
    """One row per (rule, base model, subroutine, mask seed) of chapter 5's stored results
    (:class:`modlib.structural_compositionality.StructureRuns`): the subnetwork's accuracy on its own
    mask-training distribution (``own``), on the target and the other subroutine's ablation test set
    (``sub_*``), the ablated model's (``abl_*``), the re-initialising ablation's (``reinit_*``), a
    random subnetwork's of the same size (``random_*``), and the kept fraction."""
    import pandas as pd

    out = []
    for r in runs.rows.values():
        m = r.metrics
        for sub, found in (m.get("subroutines") or {}).items():
            for run in found["runs"]:
                row = {"rule": m["rule"], "model": m["seed"], "trained": m["trained"], "subroutine": sub,
                       "mask_seed": run["seed"], "passed_gate": found["passed_gate"], "own": run["own"],
                       "kept": run["kept"]}
                for mode, label in (("hard", "sub"), ("complement", "abl"), ("reinit", "reinit"),
                                    ("random", "random")):
                    row[f"{label}_target"], row[f"{label}_other"] = run[mode]
                out.append(row)
    return pd.DataFrame(out)


def _by_model(rows, column: str) -> np.ndarray:
    """Per base model, the mean of ``column`` over its mask seeds: ``[models]``."""
    return rows.groupby("model")[column].mean().to_numpy()


def _clear_excess(rows, high: str, low: str, size: float) -> tuple[bool, str]:
    """Whether ``high`` exceeds ``low`` by at least ``size`` on average over runs, with the 95%
    interval over base models (mask seeds averaged within each) clear of 0, and the text."""
    a, b = _by_model(rows, high), _by_model(rows, low)
    mean = float((rows[high] - rows[low]).mean())
    if len(a) < 2:
        return bool(mean >= size), f"{mean:+.2f}"
    _, lo, hi = paired_difference(a, b)
    return bool(lo > 0 and mean >= size), f"{mean:+.2f} (95% interval over base models {lo:+.2f} to {hi:+.2f})"


def structural(runs) -> dict[str, Finding]:
    """Chapter 5's statements, keyed ``"{rule}/{subroutine}/{what}"`` (and ``"{rule}/base"``):

    ``subnetwork``  the subnetwork reaches 0.9 on its target subroutine's test set (mean over base
                    models and mask seeds) and is lower on the other by :data:`LOWER` on average,
                    with the interval over base models clear of 0;
    ``ablation``    removing the subnetwork hurts the target subroutine more than the other: the
                    ablated model's other-minus-target accuracy is :data:`CLEAR` on average, with the
                    interval over base models clear of 0 (with 3 base models: in every one);
    ``reinit``      the same with the removed weights re-initialised instead of zeroed;
    ``random``      a random subnetwork of the same size per layer is clearly worse on the target
                    than the found one (by :data:`LOWER`);
    ``untrained``   the search in an untrained network does *not* show the pattern (its subnetwork
                    misses 0.9 on the target, or its ablation effect is under :data:`CLEAR`).
    """
    table = structure_table(runs)
    out = {}
    if table.empty:
        return out
    for rule in dict.fromkeys(table["rule"]):
        trained = [r for r in runs.rows.values() if r.metrics["rule"] == rule and r.metrics["trained"]]
        passed = [r.metrics["seed"] for r in trained if r.metrics["searched"]]
        task = np.array([r.metrics["base"]["task"] for r in trained])
        out[f"{rule}/base"] = Finding(
            f"{rule}/base", len(passed) == len(trained),
            f"{rule}: base models reach {_ms(task)} on the task's test set; {len(passed)} of "
            f"{len(trained)} pass {runs.settings.base_gate} and are searched.")
        for sub in dict.fromkeys(table[table["rule"] == rule]["subroutine"]):
            rows = table[(table["rule"] == rule) & (table["subroutine"] == sub)]
            t, u = rows[rows["trained"]], rows[~rows["trained"]]
            name = f"{rule}/{sub}"
            if not t.empty:
                lower, text = _clear_excess(t, "sub_target", "sub_other", LOWER)
                out[f"{name}/subnetwork"] = Finding(
                    f"{name}/subnetwork", bool(t["sub_target"].mean() >= GATE_TARGET and lower),
                    f"{rule}, {sub} subnetwork ({len(t)} runs, {_ms(t['kept'])} of the masked weights kept): "
                    f"{_ms(t['sub_target'])} on {sub} problems, {_ms(t['sub_other'])} on the other "
                    f"subroutine's; target minus other {text}.")
                for key, prefix, what in (("ablation", "abl", "Removing it (zeroed)"),
                                          ("reinit", "reinit", "Removing it (re-initialised)")):
                    holds, text = _clear_excess(t, f"{prefix}_other", f"{prefix}_target", CLEAR)
                    out[f"{name}/{key}"] = Finding(
                        f"{name}/{key}", holds,
                        f"{rule}, {sub}: {what} leaves {_ms(t[f'{prefix}_target'])} on {sub} problems and "
                        f"{_ms(t[f'{prefix}_other'])} on the other subroutine's; other minus target {text}.")
                holds, text = _clear_excess(t, "sub_target", "random_target", LOWER)
                out[f"{name}/random"] = Finding(
                    f"{name}/random", holds,
                    f"{rule}, {sub}: a random subnetwork of the same size per layer gets "
                    f"{_ms(t['random_target'])} on {sub} problems against the found one's "
                    f"{_ms(t['sub_target'])}; difference {text}.")
            if not u.empty:
                effect = float((u["abl_other"] - u["abl_target"]).mean())
                shows = u["sub_target"].mean() >= GATE_TARGET and effect >= CLEAR
                verdict = "both tests pass, as they should not" if shows else "no subnetwork passes both tests"
                out[f"{name}/untrained"] = Finding(
                    f"{name}/untrained", bool(not shows),
                    f"{rule}, {sub}, untrained network ({len(u)} runs, {_ms(u['kept'])} of the masked "
                    f"weights kept): {verdict}; the subnetwork gets {_ms(u['sub_target'])} on {sub} problems "
                    f"and {_ms(u['sub_other'])} on the other's; ablated, {_ms(u['abl_target'])} and "
                    f"{_ms(u['abl_other'])} (other minus target {effect:+.2f}).")
    return out



# --- chapter 6: pretraining and the consistency of modular structure -----------------------------

# Lepori et al. (2023), means of 9 runs (subnetwork target, other, ablated target, other) of BERT-small
# on SV plural fine-tuned from its MLM weights (from scratch and the ResNet-50s: LEPORI above)
LEPORI_PRETRAINED = {("sv-plural", "subject"): (1.00, 0.27, 0.27, 0.74),
                     ("sv-plural", "verb"): (1.00, 0.31, 0.40, 1.00)}


def paper_effects() -> dict[tuple[str, str, str], float]:
    """The paper's mean ablation effect (ablated other minus target) per (rule, subroutine, init),
    where it reports one: ``{("sv-plural", "subject", "pretrained"): 0.47, ...}``."""
    out = {}
    for init, table in (("scratch", LEPORI), ("pretrained", LEPORI_PRETRAINED)):
        for (rule, sub), (_, _, target, other) in table.items():
            out[(rule, sub, init)] = round(other - target, 2)
    return out
MARGIN = 0.1  # the modular pattern: the ablated model keeps the other subroutine this much better


def pretraining_effects(runs):
    """One row per (base model, subroutine) of chapter 6's stored results
    (:class:`modlib.pretraining_consistency.PretrainingRuns`): rule, init, seed, subroutine, the
    base model's task accuracy, whether it was searched and its subnetwork passed the gate, the
    subnetwork's (``sub_*``) and the ablated model's accuracy on the target and the other
    subroutine (means over mask seeds), ``effect`` (ablated other minus target) and ``modular``
    (passed the gate and effect at least :data:`MARGIN`), and ``both_tests`` (modular, and the
    subnetwork passes chapter 5's first test too: :data:`LOWER` below its target on the other)."""
    import pandas as pd

    out = []
    for name, r in runs.rows.items():
        rule, init, seed = name.rsplit("-", 2)
        m = r.metrics
        for sub in m["subroutines"] if m["searched"] else _subroutine_names(rule):
            row = {"rule": rule, "init": init, "seed": int(seed), "subroutine": sub,
                   "task": m["base"]["task"], "searched": m["searched"], "passed_gate": False,
                   "sub_target": np.nan, "sub_other": np.nan, "target": np.nan, "other": np.nan}
            if m["searched"]:
                found = m["subroutines"][sub]
                hard = np.array([run["hard"] for run in found["runs"]])  # [mask seeds, 2]
                ablated = np.array([run["complement"] for run in found["runs"]])
                row.update(passed_gate=bool(found["passed_gate"]), sub_target=hard[:, 0].mean(),
                           sub_other=hard[:, 1].mean(), target=ablated[:, 0].mean(), other=ablated[:, 1].mean())
            out.append(row)
    df = pd.DataFrame(out)
    df["effect"] = df["other"] - df["target"]
    df["modular"] = df["passed_gate"] & (df["effect"] >= MARGIN)
    df["both_tests"] = df["modular"] & (df["sub_target"] - df["sub_other"] >= LOWER)
    return df


def _subroutine_names(rule: str) -> tuple[str, str]:
    from modlib.structural_compositionality import RULES

    return RULES[rule]


def pretraining_consistency(df):
    """Per (rule, subroutine, init) of :func:`pretraining_effects`' table: base models, how many
    show the modular pattern, and the mean, standard deviation (over the base models, as in the
    findings' "mean ± sd"), Brown-Forsythe spread (:func:`spread`) and range of the ablation
    effect over the searched ones."""
    import pandas as pd

    rows = {}
    for key, g in df.groupby(["rule", "subroutine", "init"], sort=False):
        e = g["effect"].dropna()
        rows[key] = {"models": len(g), "modular": int(g["modular"].sum()), "mean effect": e.mean(),
                     "sd effect": e.std(ddof=0) if len(e) > 1 else np.nan,
                     "spread (MAD)": spread(e).mean() if len(e) > 1 else np.nan,
                     "min effect": e.min(), "max effect": e.max()}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis(["rule", "subroutine", "init"])


def unpaired_difference(a: np.ndarray, b: np.ndarray, resamples: int = 10_000,
                        seed: int = 0) -> tuple[float, float, float]:
    """``mean(a) - mean(b)`` for two independent groups of base models and its 95% bootstrap
    interval ``(difference, low, high)``: each group resampled on its own."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size < 2 or b.size < 2:
        raise ValueError(f"each group needs at least 2 values; got {a.size} and {b.size}")
    rng = np.random.default_rng(seed)
    means = (a[rng.integers(a.size, size=(resamples, a.size))].mean(1)
             - b[rng.integers(b.size, size=(resamples, b.size))].mean(1))
    low, high = np.percentile(means, [2.5, 97.5])
    return float(a.mean() - b.mean()), float(low), float(high)


def spread(values) -> np.ndarray:
    """Absolute deviations from the median ``[n]`` of ``values`` ``[n]``: their mean is the
    Brown-Forsythe measure of spread, which one outlying base model moves less than the standard
    deviation; :func:`permutation_test` of two groups' deviations compares their spreads."""
    values = np.asarray(values, dtype=float)
    return np.abs(values - np.median(values))


def permutation_test(a, b) -> tuple[float, float]:
    """``mean(a) - mean(b)`` and its one-sided p-value (that large or larger) over every way of
    splitting the pooled values into groups of ``len(a)`` and ``len(b)`` (252 for 5 and 5): exact,
    where a bootstrap of five values per group gives intervals that are too narrow."""
    from itertools import combinations

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size < 2 or b.size < 2:
        raise ValueError(f"each group needs at least 2 values; got {a.size} and {b.size}")
    pooled, observed = np.concatenate([a, b]), a.mean() - b.mean()
    splits = [np.isin(np.arange(pooled.size), picked)
              for picked in combinations(range(pooled.size), a.size)]  # [C(n, k)] masks
    diffs = np.array([pooled[m].mean() - pooled[~m].mean() for m in splits])
    return float(observed), float((diffs >= observed - 1e-12).mean())


def pretraining(runs) -> dict[str, Finding]:
    """Chapter 6's statements, keyed by name:

    ``language/pretraining``  the MLM learnt agreement: its probe reaches 0.9 (untrained: about 0.5);
    ``vision/pretraining``    SimCLR's loss ends below a guess's;
    ``vision/features``       the SimCLR ResNet's pooled features tell inside and contact apart
                              (linear probe) better than the untrained ResNet's, by 0.05 each;
    ``{rule}/base``           base models from both inits reach the task (all searched);
    ``{rule}/{sub}/consistency``  pretrained base models show the modular pattern, and in at
                              least as many base models as scratch ones;
    ``{rule}/{sub}/spread``   the pretrained models' ablation effect varies less: their mean absolute
                              deviation from the median (the Brown-Forsythe spread, robust with 5
                              values) is smaller, one-sided exact permutation p below 0.05;
    ``{rule}/{sub}/effect``   the pretrained models' mean ablation effect is larger, with the 95%
                              bootstrap interval of the difference clear of 0;
    ``{rule}/{sub}/specific`` the pretrained models' subnetworks are more specific: their accuracy
                              on the other subroutine's problems is lower, the 95% bootstrap
                              interval of the difference clear of 0.
    """
    out = {}
    df = pretraining_effects(runs)
    if "language" in runs.pretraining:
        m = runs.pretraining["language"].metrics
        out["language/pretraining"] = Finding(
            "language/pretraining", m["probe"] >= 0.9,
            f"Masked-language modelling on {m['sentences']:,} generated sentences ({len(m['templates'])} "
            f"templates): the loss falls from {m['losses'][0]:.2f} to {m['final_loss']:.2f} (mean of the "
            f"last 100 steps); the agreement probe prefers the agreeing verb in {m['probe']:.0%} of "
            f"sentences (untrained: {m['probe_untrained']:.0%}).")
    if "vision" in runs.pretraining:
        m = runs.pretraining["vision"].metrics
        out["vision/pretraining"] = Finding(
            "vision/pretraining", m["final_loss"] < m["chance_loss"],
            f"SimCLR on {m['panels']:,} unlabelled panels: the contrastive loss falls from "
            f"{m['losses'][0]:.2f} to {m['final_loss']:.2f} (a guess: {m['chance_loss']:.2f}).")
        pre, raw = m["probe"], m["probe_untrained"]
        out["vision/features"] = Finding(
            "vision/features", all(pre[k] - raw[k] >= 0.05 for k in pre),
            "A linear probe on the ResNet's pooled features tells "
            + " and ".join(f"{k} ({pre[k]:.2f} after SimCLR, {raw[k]:.2f} untrained)" for k in pre)
            + " apart on single panels (chance 0.5).")
    for rule in dict.fromkeys(df["rule"]):
        r = df[df["rule"] == rule].drop_duplicates(["init", "seed"])
        parts, ok = [], True
        for init in ("scratch", "pretrained"):
            g = r[r["init"] == init]
            ok &= bool(g["searched"].all())
            parts.append(f"{init}, {_ms(g['task'])} ({int(g['searched'].sum())} of {len(g)} searched)")
        out[f"{rule}/base"] = Finding(f"{rule}/base", ok, f"{rule}: base models reach " + "; ".join(parts) + ".")
        for sub in dict.fromkeys(df[df["rule"] == rule]["subroutine"]):
            rows = df[(df["rule"] == rule) & (df["subroutine"] == sub)]
            s, p = rows[rows["init"] == "scratch"], rows[rows["init"] == "pretrained"]
            es, ep = s["effect"].dropna(), p["effect"].dropna()

            def describe(g, e, init):
                if e.empty:
                    return f"{init}: none of {len(g)} base models reached the gate, none searched"
                searched = g[g["searched"]]
                note = "" if len(searched) == len(g) else f" ({len(searched)} searched)"
                return (f"{init}: {int(g['modular'].sum())} of {len(g)} base models modular{note} "
                        f"({int(g['both_tests'].sum())} with chapter 5's subnetwork test too), ablated "
                        f"{_ms(searched['target'])} on {sub} problems and {_ms(searched['other'])} on the "
                        f"other's, effect "
                        f"{_ms(e)} (range {e.min():+.2f} to {e.max():+.2f})")

            name = f"{rule}/{sub}"
            out[f"{name}/consistency"] = Finding(
                f"{name}/consistency", bool(p["modular"].sum() >= max(1, s["modular"].sum())),
                f"{rule}, {sub} mask. {describe(s, es, 'Scratch')}. {describe(p, ep, 'Pretrained')}.")
            if len(ep) > 1 and len(es) > 1:
                d, p_value = permutation_test(spread(es), spread(ep))
                out[f"{name}/spread"] = Finding(
                    f"{name}/spread", bool(p_value < 0.05),
                    f"{rule}, {sub}: the ablation effect's mean absolute deviation from its median is "
                    f"{spread(es).mean():.2f} from scratch and {spread(ep).mean():.2f} pretrained; "
                    f"scratch minus pretrained {d:+.2f} (Brown-Forsythe, one-sided permutation p = "
                    f"{p_value:.2f}).")
                d, lo, hi = unpaired_difference(ep, es)
                out[f"{name}/effect"] = Finding(
                    f"{name}/effect", bool(lo > 0),
                    f"{rule}, {sub}: pretrained minus scratch mean ablation effect {d:+.2f} "
                    f"(95% bootstrap interval {lo:+.2f} to {hi:+.2f}).")
                ss, sp = s["sub_other"].dropna(), p["sub_other"].dropna()
                d, lo, hi = unpaired_difference(ss, sp)
                out[f"{name}/specific"] = Finding(
                    f"{name}/specific", bool(lo > 0),
                    f"{rule}, {sub}: the subnetwork alone gets {_ms(ss)} on the other subroutine's "
                    f"problems from scratch and {_ms(sp)} pretrained (on its own, {_ms(s['sub_target'])} "
                    f"and {_ms(p['sub_target'])}); scratch minus pretrained {d:+.2f} (95% bootstrap "
                    f"interval {lo:+.2f} to {hi:+.2f}).")
    return out
