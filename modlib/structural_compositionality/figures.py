"""Chapter 5's figures (notebooks/structural_compositionality.ipynb): odd-one-out problems, the
subnetworks' and controls' accuracies beside the paper's, and where the masks keep weights, layer
by layer; each handed to a numbered caption with :func:`modlib.plots.glue`.
"""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
import numpy as np

from modlib.plots import COLUMN, count, notice, percent_axis
from modlib.profiles import check_choice

TARGET, OTHER = "#1f77b4", "#ff7f0e"  # the subnetwork's own subroutine, the other one
OTHER_TEXT = "#c45c00"  # the other one's orange, darkened for words on white


def odd_one_out_problems(problems: dict[str, dict], titles: dict[str, str]) -> plt.Figure:
    """One vision problem per row (``problems``: kind -> a set from
    :func:`modlib.structural_compositionality.problems`, its first problem shown), its four panels
    side by side, the odd one framed in orange; ``titles``: kind -> the row's label. The column's
    width, so that each panel's one-pixel outlines are drawn about two screen pixels wide."""
    fig, axes = plt.subplots(len(problems), 4, figsize=(COLUMN, 1.12 * len(problems)), squeeze=False)
    for row, (kind, p) in zip(axes, problems.items()):
        for i, ax in enumerate(row):
            ax.imshow(p["images"][0, i].permute(1, 2, 0).numpy(), interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            for side in ax.spines.values():
                odd = i == int(p["answer"][0])
                side.set_edgecolor(OTHER if odd else "0.7")
                side.set_linewidth(3 if odd else 0.5)
        row[0].set_ylabel(titles[kind], rotation=0, ha="right", va="center", fontsize=9)
    fig.subplots_adjust(wspace=0.05, hspace=0.08, left=0.3, right=0.99, top=0.99, bottom=0.01)
    return fig


RULE_TITLES = {"inside-contact": "Inside-Contact", "number-contact": "Number-Contact",
               "inside-number": "Inside-Number", "sv-plural": "Agreement"}  # rules as figures name them


def rule_title(rule: str) -> str:
    """A rule's name in a figure's title: ``"sv-plural"`` -> ``"Agreement"``."""
    return RULE_TITLES.get(rule, rule)


NOTHING_PASSED = "no trained base model's mask passed the selection gate at this profile"  # e.g. at smoke


def subnetwork_bars(table, paper: dict | None = None) -> plt.Figure:
    """The paper's results figure: per (rule, subroutine), the subnetwork's and the ablated model's
    accuracy on the target (blue) and the other subroutine (orange), mean over runs (bars) and each
    run (dots), chance dashed; the paper's means as black diamonds where ``paper`` has them; each
    panel's title gives the masks' mean kept share.
    ``table``: :func:`modlib.structural_compositionality.findings.structure_table` rows of trained base models."""
    groups = list(dict.fromkeys(zip(table["rule"], table["subroutine"])))
    if not groups:  # e.g. at smoke, where no base model's mask passes the selection gate
        return notice(NOTHING_PASSED)
    ncols = 2 if len(groups) == 4 else min(3, len(groups))
    nrows = -(-len(groups) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(COLUMN, 2.3 * nrows), squeeze=False, sharey=True)
    for ax, (rule, sub) in zip(axes.flat, groups):
        rows = table[(table["rule"] == rule) & (table["subroutine"] == sub)]
        columns = ["sub_target", "sub_other", "abl_target", "abl_other"]
        x = np.array([0, 0.8, 2.2, 3.0])
        for xi, col in zip(x, columns):
            colour = TARGET if col.endswith("target") else OTHER
            ax.bar(xi, rows[col].mean(), 0.7, color=colour, alpha=0.75)
            jitter = np.linspace(-0.2, 0.2, len(rows))
            ax.plot(xi + jitter, rows[col], ".", color="0.2", ms=3)
        if paper and (rule, sub) in paper:
            ax.plot(x, paper[(rule, sub)], "D", color="black", ms=4, label="paper")
        ax.axhline(0.25, color="0.4", ls="--", lw=0.8)
        ax.set_xticks([0.4, 2.6], ["subnetwork", "ablated"])
        ax.set_title(f"{rule_title(rule)}, {sub} mask\n{100 * rows['kept'].mean():.1f} % kept", fontsize=9)
        ax.set_ylim(0, 1.05)
    for ax in axes[:, 0]:
        ax.set_ylabel("accuracy")
    for ax in list(axes.flat)[len(groups):]:
        ax.axis("off")
    handles = [plt.Rectangle((0, 0), 1, 1, color=TARGET, alpha=0.75),
               plt.Rectangle((0, 0), 1, 1, color=OTHER, alpha=0.75)]
    labels = ["target subroutine", "other subroutine"]
    if paper:
        handles.append(plt.Line2D([], [], marker="D", color="black", ls=""))
        labels.append("paper's mean")
    handles.append(plt.Line2D([], [], color="0.4", ls="--"))
    labels.append("chance")
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def control_bars(table) -> plt.Figure:
    """Per (rule, subroutine), top: the ablated model's other-minus-target accuracy (the modular effect)
    with the removed weights zeroed and re-initialised and with as many weights removed at random, for
    the trained base models, and zeroed for the untrained control; bottom: the target accuracy of the found subnetwork against a random one of
    the same size. Dots: runs; bars: means; a mean that rounds to 0 is drawn as a stub marked "0".
    Only the (rule, subroutine) pairs searched in a trained base model are drawn: an untrained
    control alone has nothing to be compared with."""
    trained = table[table["trained"]]
    groups = list(dict.fromkeys(zip(trained["rule"], trained["subroutine"])))
    if not groups:
        return notice(NOTHING_PASSED)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(COLUMN, 5.6), sharey=False)
    width = 0.2
    labels = [rule_title(rule).replace("-", "-\n") + f"\n({sub})" for rule, sub in groups]  # short lines
    series = [("zeroed", lambda t: t[t["trained"]], "abl", "#2ca02c"),
              ("re-initialised", lambda t: t[t["trained"]], "reinit", "#9467bd"),
              ("random removal", lambda t: t[t["trained"]], "rand_abl", "0.55"),
              ("untrained net", lambda t: t[~t["trained"]], "abl", "#8c564b")]
    for j, (label, pick, prefix, colour) in enumerate(series):
        labelled = False
        for i, (rule, sub) in enumerate(groups):
            rows = pick(table[(table["rule"] == rule) & (table["subroutine"] == sub)])
            if rows.empty or f"{prefix}_other" not in rows or rows[f"{prefix}_other"].isna().all():
                continue
            xi = i + (j - 1.5) * width
            if (rows["kept"] <= 1e-4).all():  # masks that keep nothing: no control, no bar
                top.text(xi, 0.01, "kept\nnothing", fontsize=9, ha="center", va="bottom", color=colour)
                continue
            effect = rows[f"{prefix}_other"] - rows[f"{prefix}_target"]
            top.bar(xi, effect.mean(), width, color=colour, label=None if labelled else label)
            if round(effect.mean(), 2) == 0:  # a bar too low to see: a stub and "0", so 0 is not "missing"
                top.plot([xi - width / 2, xi + width / 2], [0, 0], color=colour, lw=3, solid_capstyle="butt")
                top.text(xi, -0.015, "0", fontsize=8, ha="center", va="top", color=colour)  # under: "kept nothing" is above
            top.plot(np.full(len(effect), xi), effect, ".", color="0.2", ms=3)
            labelled = True
    top.axhline(0, color="0.3", lw=0.8)
    top.set_xticks(range(len(groups)), labels, fontsize=9)
    top.set_ylabel("ablated: other − target", fontsize=9)
    top.tick_params(labelsize=9)
    top.legend(fontsize=9, frameon=False, ncol=4, loc="upper center", bbox_to_anchor=(0.5, 1.2))
    for j, (col, label, colour) in enumerate((("sub_target", "found", TARGET), ("random_target", "random", "0.55"))):
        for i, (rule, sub) in enumerate(groups):
            rows = table[(table["rule"] == rule) & (table["subroutine"] == sub) & table["trained"]]
            xi = i + (j - 0.5) * width
            bottom.bar(xi, rows[col].mean(), width, color=colour, label=f"{label} subnetwork" if i == 0 else None)
            bottom.plot(np.full(len(rows), xi), rows[col], ".", color="0.2", ms=3)
    bottom.axhline(0.25, color="0.4", ls="--", lw=0.8)
    bottom.set_xticks(range(len(groups)), labels, fontsize=9)
    bottom.set_ylabel("accuracy on the target", fontsize=9)
    bottom.tick_params(labelsize=9)
    bottom.set_ylim(0, 1.05)
    for ax in (top, bottom):  # room on the right for the last group's "kept nothing"
        ax.set_xlim(-0.55, len(groups) - 0.3)
    bottom.legend(fontsize=9, frameon=False, ncol=2, loc="upper center", bbox_to_anchor=(0.5, 1.2))
    fig.tight_layout()
    return fig


def kept_by_layer(arrays: dict, subroutines: tuple[str, str], layers: list[str], ax: plt.Axes | None = None):
    """One stored result's per-layer kept fractions (both subroutines, mean over mask seeds) and
    the overlap (IoU) of their seed-0 masks, layer by layer, against the overlap two independent
    random masks of the seed-0 masks' sizes would have, ``pq / (p + q - pq)``, on a log axis. A
    value below :data:`LAYER_FLOOR` (a mask that keeps none of a layer, two masks that share no
    weight) is drawn at the floor, marked by a black down-pointing triangle (in the legend), so that
    every line stays on the axis. (Chapter 5.)"""
    fig = None
    if ax is None:
        fig, ax = plt.subplots(figsize=(COLUMN, 2.6))
    x = np.arange(len(layers))

    floored = []  # (layers, colour) of the values drawn at the floor, marked once the lines are down

    def line(values, fmt, colour, label, **kw):
        v = np.asarray(values, dtype=float)
        low = np.isfinite(v) & (v < LAYER_FLOOR)
        ax.plot(x, np.where(low, LAYER_FLOOR, v), fmt, color=colour, label=label, **kw)
        if low.any():  # (an empty unclipped line would stretch the layout's bounding box to 0, 0)
            floored.append((x[low], colour))

    for sub, colour in zip(subroutines, (TARGET, OTHER)):
        line(arrays[f"kept-{sub}"].mean(0), "o-", colour, f"{sub} mask: kept", ms=3)
    line(arrays["overlap"], "s--", "0.3", "overlap (IoU)", ms=3)
    p, q = (arrays[f"kept-{sub}"][0] for sub in subroutines)
    union = p + q - p * q  # 0 in a layer both masks empty: no overlap to expect there, no point
    chance = np.divide(p * q, union, out=np.full_like(union, np.nan, dtype=float), where=union > 0)
    line(chance, ":", "0.5", "overlap of random masks")
    for where, _ in floored:  # one black triangle wherever any line sits at the floor, above the lines
        ax.plot(where, np.full(len(where), LAYER_FLOOR), "v", color="black", ms=6, ls="none", clip_on=False,
                zorder=4, label=f"under {LAYER_FLOOR:g} (at the floor)" if where is floored[0][0] else None)
    ax.set_xticks(x, [short_layer(n) for n in layers], rotation=45, ha="right", rotation_mode="anchor",
                  fontsize=9)
    ax.set_ylim(LAYER_FLOOR / 1.6, 40)  # before the log scale; the floor clear of the frame, room above 1 for the legend
    ax.set_yscale("log")  # sparse masks keep 0.1-30 % per layer
    ax.set_yticks([1e-3, 1e-2, 1e-1, 1], ["≤0.001", "0.01", "0.1", "1"])
    ax.minorticks_off()
    ax.tick_params(axis="y", labelsize=9)
    ax.set_ylabel("fraction (log)", fontsize=9)
    ax.legend(fontsize=9 if not floored else 8, frameon=False, ncol=2 if not floored else 3, loc="upper center",
              handlelength=1.5, columnspacing=1)
    if fig is not None:
        fig.tight_layout()
    return fig


# below this a kept fraction or an overlap is drawn at it (fig-sc-layers' floor: a zero has no log)
LAYER_FLOOR = 1e-3


def short_layer(name: str) -> str:
    """A masked weight's name shortened for an axis: ``resnet.encoder.stages.1.layers.0.layer.1
    .convolution.weight`` -> ``s1.b0.conv1``; ``bert.encoder.layer.0.intermediate.dense.weight``
    -> ``L0.ffn-in``."""
    name = name.removesuffix(".weight").removesuffix(".convolution")
    name = re.sub(r"resnet\.encoder\.stages\.(\d+)\.layers\.(\d+)\.", r"s\1.b\2.", name)
    name = re.sub(r"\.layer\.(\d+)$", r".conv\1", name)
    for long, short in (("attention.self.", ""), ("attention.output.dense", "attn-out"),
                        ("intermediate.dense", "ffn-in"), ("output.dense", "ffn-out")):
        name = name.replace(long, short)
    name = re.sub(r"bert\.encoder\.layer\.(\d+)\.", r"L\1.", name)
    return name.replace("resnet.embedder.embedder", "stem")


def structure_provenance(runs) -> str:
    """Chapter 5's caption line: profile, device and how many base models and mask seeds, e.g.
    ``"profile full · cpu (1 thread) · 3 base models × 3 mask seeds searched per rule"`` (a figure
    draws those of them whose masks passed the selection gate, as its caption says)."""
    from modlib import results

    s = runs.settings
    line = results.provenance(list(runs.rows.values()))
    return (line.rsplit(" · ", 1)[0] + f" · {count(s.base_models, 'base model')} × "
            f"{count(s.mask_seeds, 'mask seed')} searched per rule (base-model seeds 0–{s.base_models - 1})")


def diagram_two_tests() -> plt.Figure:
    """The method, drawn: a small network whose weights a mask splits into a subnetwork (blue, what
    the mask for subroutine A keeps) and its complement (grey); the paper's two tests keep only the
    subnetwork (test 1) or remove it (test 2, removed weights dotted red), and the book's random
    control removes as many weights chosen at random. Under each, the accuracies structural compositionality predicts on A's and B's
    test sets. A schematic: no data, no model."""
    rng = np.random.default_rng(3)
    layers = [4, 5, 5, 3]
    nodes = [[(i, (n - 1) / 2 - j) for j in range(n)] for i, n in enumerate(layers)]
    edges = [(a, b) for left, right in zip(nodes, nodes[1:]) for a in left for b in right]
    sub = rng.random(len(edges)) < 0.22  # the subnetwork: about a fifth of the weights
    rand = np.zeros(len(edges), bool)
    rand[rng.choice(len(edges), sub.sum(), replace=False)] = True
    panels = [("the trained network\nand A's mask (blue)", np.ones(len(edges), bool), sub, None),
              ("test 1: A's subnetwork\nalone", sub, sub, (0.95, 0.3)),
              ("test 2: A's subnetwork\nremoved (ablation)", ~sub, None, (0.3, 0.95)),
              ("control: as many weights\nremoved at random", ~rand, None, (0.9, 0.9))]
    fig, axes = plt.subplots(2, 4, figsize=(COLUMN, 3.3), gridspec_kw={"height_ratios": [2.2, 1]})
    for (title, shown, blue, expect), ax, bars in zip(panels, axes[0], axes[1]):
        for (a, b), on, is_sub in zip(edges, shown, blue if blue is not None else np.zeros(len(edges), bool)):
            if on:
                ax.plot([a[0], b[0]], [a[1], b[1]], color=TARGET if is_sub else "0.75",
                        lw=1.6 if is_sub else 0.7, zorder=2 if is_sub else 1)
            elif expect is not None and expect[1] > 0.5:  # a removed weight: dotted red
                ax.plot([a[0], b[0]], [a[1], b[1]], color="#d62728", lw=0.8, ls=":", zorder=1)
        for layer in nodes:
            ax.plot(*zip(*layer), "o", color="0.25", ms=4, zorder=3)
        ax.set_title(title, fontsize=8)
        ax.axis("off")
        if expect is None:
            bars.axis("off")
            bars.text(0.5, 0.5, "trained on the whole task;\nthe mask is trained\non A's set", ha="center",
                      va="center", fontsize=7.5, transform=bars.transAxes)
            continue
        bars.bar([0, 1], expect, color=[TARGET, OTHER], width=0.6)
        bars.axhline(0.25, color="0.4", ls="--", lw=0.8)
        bars.set_xticks([0, 1], ["on A", "on B"], fontsize=8)
        bars.set_yticks([0, 1])
        bars.set_ylim(0, 1.05)
        bars.tick_params(labelsize=7)
        for side in ("top", "right"):
            bars.spines[side].set_visible(False)
    axes[1, 1].set_ylabel("predicted\naccuracy", fontsize=7.5)
    fig.tight_layout(h_pad=0.4, w_pad=0.6)
    return fig


# book/structural_theory.md's drawn network (:func:`theory_tests`): inputs, two hidden layers, one
# output; the edges (layer, from, to) that the mask for subroutine A keeps, and as many edges chosen
# by hand, spread over the layers as A's are, that the random control removes
THEORY_LAYERS = (3, 4, 4, 2)
THEORY_MASK = {(0, 0, 0), (0, 1, 1), (1, 0, 0), (1, 1, 0), (1, 1, 1), (2, 0, 0), (2, 1, 0)}
THEORY_RANDOM = {(0, 2, 3), (0, 0, 2), (1, 3, 2), (1, 2, 3), (1, 0, 3), (2, 3, 1), (2, 2, 0)}
REMOVED = "#d62728"  # a removed weight, dashed
THEORY_OUTCOMES = {  # panel -> (title, what structural compositionality predicts on A, on B)
    "keep": ("test 1: keep only\nA's mask", "A still works", "B: a weak signal"),
    "remove": ("test 2: remove\nA's mask", "A fails", "B survives"),
    "random": ("control: remove as many\nweights at random", "A survives", "B survives"),
}


def theory_tests() -> plt.Figure:
    """The two tests of book/structural_theory.md and the ablation's control, on a drawn network:
    keep only the weights of the mask for subroutine A (:data:`THEORY_MASK`, blue; the rest faint),
    remove them (dashed red), and remove as many weights chosen at random (:data:`THEORY_RANDOM`,
    dashed red, as many per layer). Under each, what a structurally compositional network should
    then do on A's and B's problems (:data:`THEORY_OUTCOMES`). An illustration: no data, no model."""
    fig, axes = plt.subplots(1, 3, figsize=(COLUMN, 3.0))
    pos = {(l, i): (l, (n - 1) / 2 - i) for l, n in enumerate(THEORY_LAYERS) for i in range(n)}
    edges = [(l, i, j) for l in range(len(THEORY_LAYERS) - 1)
             for i in range(THEORY_LAYERS[l]) for j in range(THEORY_LAYERS[l + 1])]
    for ax, (panel, (title, on_a, on_b)) in zip(axes, THEORY_OUTCOMES.items()):
        removed = {"keep": set(), "remove": THEORY_MASK, "random": THEORY_RANDOM}[panel]
        for e in edges:
            (x0, y0), (x1, y1) = pos[(e[0], e[1])], pos[(e[0] + 1, e[2])]
            if e in removed:
                ax.plot([x0, x1], [y0, y1], color=REMOVED, ls="--", lw=1.2, zorder=2)
            elif e in THEORY_MASK:
                ax.plot([x0, x1], [y0, y1], color=TARGET, lw=2, zorder=2)
            elif panel == "keep":  # switched off: drawn faint
                ax.plot([x0, x1], [y0, y1], color="0.88", lw=0.6, zorder=1)
            else:
                ax.plot([x0, x1], [y0, y1], color="0.55", lw=0.8, zorder=1)
        for x, y in pos.values():
            ax.add_patch(plt.Circle((x, y), 0.14, color="white", ec="0.2", zorder=3))
        ax.set_title(title, fontsize=9)
        fails = on_a.endswith("fails")
        ax.text(1.5, -2.2, on_a, ha="center", va="top", fontsize=11,
                color=REMOVED if fails else TARGET, fontweight="bold")
        ax.text(1.5, -2.95, on_b, ha="center", va="top", fontsize=11, color=OTHER_TEXT, fontweight="bold")
        ax.set_xlim(-0.4, 3.4), ax.set_ylim(-3.7, 1.8), ax.set_aspect("equal"), ax.axis("off")
    fig.tight_layout(w_pad=0.5)
    return fig


DENSITY_TESTS = {  # test -> (the found mask's arm, the random control's arm, its side, legend labels)
    "alone": ("hard", "random", 1, ("subnetwork, own subroutine", "subnetwork, other subroutine",
                                    "random same-size subnetwork, other")),
    "removed": ("complement", "random_complement", 0, ("subnetwork removed: own subroutine",
                                                       "subnetwork removed: other subroutine",
                                                       "as many random weights removed: own")),
}



RULE_BAR = "#9467bd"  # :func:`density_sweep`'s lines where the rule for reading a test draws its bar (purple)
LABEL_BAND = (-0.09, -0.21)  # :func:`density_sweep`'s two staggered heights for the labels, under accuracy 0


def density_sweep(sweeps: dict, paper: dict[str, tuple[float, float]], test: str = "alone") -> plt.Figure:
    """One of the two tests against density (:mod:`modlib.structural_compositionality.sweep`): one
    panel per (rule, subroutine), across the share of masked weights the mask keeps (log scale),
    accuracy on the mask's own subroutine (blue) and on the other (orange), and the random control
    (grey) -- for ``test="alone"`` the subnetwork alone and a random subnetwork of the same size on
    the other subroutine; for ``"removed"`` the model without the subnetwork and without as many
    random weights, on the own subroutine. The paper's range of kept shares shaded, chance dotted,
    the bounds of :func:`~modlib.structural_compositionality.findings.read_rule` dash-dotted (purple:
    0.9 for the grey line of ``"alone"``; 0.95 and 0.35 for the blue and orange lines of ``"removed"``);
    each point's multiple of lambda written under accuracy 0 (:data:`LABEL_BAND`). ``sweeps``: rule
    -> a stored sweep's metrics; ``paper``: rule -> (low, high)."""
    from modlib.structural_compositionality.findings import CEILING, FLOOR, GATE_TARGET

    check_choice("test", test, DENSITY_TESTS)
    arm, control, side, names = DENSITY_TESTS[test]
    # the rule for when the test can be read (findings.read_rule): test 1's bar for the grey line,
    # test 2's ceiling and floor for the blue and orange lines
    bars, bar_label = {"alone": ((GATE_TARGET,), f"{GATE_TARGET:g}: the rule's bar for grey"),
                       "removed": ((CEILING, FLOOR), f"{CEILING:g} and {FLOOR:g}: the rule's bounds for blue and orange")}[test]
    groups = [(rule, sub) for rule, m in sweeps.items() for sub in dict.fromkeys(p["subroutine"] for p in m["points"])]
    ncols = min(2, len(groups))
    nrows = -(-len(groups) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(COLUMN, 2.7 * nrows + 0.6), squeeze=False, sharey=True)
    for ax, (rule, sub) in zip(axes.flat, groups):
        pts = sorted((p for p in sweeps[rule]["points"] if p["subroutine"] == sub), key=lambda p: p["kept"])
        kept = np.array([max(p["kept"], 1e-5) for p in pts])
        low, high = paper[rule]
        ax.axvspan(low, high, color="0.92", zorder=0)
        ax.plot(kept, [p[arm][0] for p in pts], "o-", color=TARGET, ms=4)
        ax.plot(kept, [p[arm][1] for p in pts], "o-", color=OTHER, ms=4)
        ax.plot(kept, [p[control][side] for p in pts], "s--", color="0.5", ms=3)
        for i, (p, k) in enumerate(zip(pts, kept)):  # staggered: neighbours can sit close
            # each label at its own point's kept share, in a band under accuracy 0 where no line
            # runs, joined to the lowest of its markers by a faint line, so a label is never read
            # as its neighbour's nor drawn over (issue 57)
            lowest = min(p[arm][0], p[arm][1], p[control][side])
            ax.annotate(f"×{p['lam']:g}", xy=(k, lowest), xytext=(k, LABEL_BAND[i % 2]), textcoords="data",
                        fontsize=9, ha="center", va="center", color="0.3",
                        arrowprops=dict(arrowstyle="-", color="0.8", lw=0.6, shrinkA=6, shrinkB=3),
                        annotation_clip=False)
        ax.axhline(0.25, color="0.4", ls=":", lw=0.8)
        for y in bars:
            ax.axhline(y, color=RULE_BAR, ls="-.", lw=0.9, zorder=1)
        ax.axhline(0, color="0.6", lw=0.6)  # the band of labels lies under it
        # the axis ends near the data (not at 100 %), ticked in percent as chapter 6's figures are
        ax.set_xlim(min(kept.min(), low) / 1.6, min(1.0, max(kept.max(), high) * 1.3))
        percent_axis(ax)
        ax.set_ylim(LABEL_BAND[1] - 0.1, 1.05)
        ax.set_yticks([0, 0.25, 0.5, 0.75, 1])
        ax.set_title(f"{rule_title(rule)}: {sub} mask", fontsize=9)
        ax.set_xlabel("share of masked weights kept", fontsize=8)
    for ax in axes[:, 0]:
        ax.set_ylabel("accuracy (test)")
    for ax in list(axes.flat)[len(groups):]:
        ax.axis("off")
    handles = [plt.Line2D([], [], color=TARGET, marker="o"), plt.Line2D([], [], color=OTHER, marker="o"),
               plt.Line2D([], [], color="0.5", marker="s", ls="--"), plt.Rectangle((0, 0), 1, 1, color="0.92"),
               plt.Line2D([], [], color=RULE_BAR, ls="-.", lw=0.9)]
    labels = [*names, "the paper's kept shares", bar_label]
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.13, 1, 1))
    return fig


def kept_over_training(table_runs: dict, lams: dict | None = None) -> plt.Figure:
    """How the kept share of each chosen mask falls while it trains: ``table_runs``: (rule, subroutine)
    -> list of per-epoch kept shares (one list per base model and mask seed); log scale, one panel
    per rule. A mask has converged when its line is flat at the end. ``lams``, the same keys -> the
    multiple of lambda each line's mask was trained at: each group of lines is labelled with it
    ("×30") at its right end."""
    rules = list(dict.fromkeys(rule for rule, _ in table_runs))
    fig, axes = plt.subplots(1, len(rules), figsize=(COLUMN, 2.5), squeeze=False, sharey=True)
    for ax, rule in zip(axes[0], rules):
        subs = [sub for r, sub in table_runs if r == rule]
        ends = {}  # multiple of lambda -> the kept shares its lines end at
        for sub, colour in zip(subs, (TARGET, OTHER)):
            for i, traj in enumerate(table_runs[(rule, sub)]):
                epochs = np.arange(1, len(traj) + 1)
                ax.plot(epochs, np.maximum(traj, 1e-5), color=colour, lw=0.8, alpha=0.7,
                        label=sub if i == 0 else None)
                if lams and len(traj):
                    ends.setdefault(lams[(rule, sub)][i], []).append((len(traj), max(traj[-1], 1e-5)))
        for lam, at in ends.items():  # above the group's highest end, at the right
            ax.annotate(f"×{lam:g}", (max(x for x, _ in at), max(y for _, y in at)), xytext=(0, 2),
                        textcoords="offset points", ha="right", va="bottom", fontsize=7)
        ax.set_yscale("log")
        ax.set_title(rule_title(rule), fontsize=9)
        ax.set_xlabel("mask epoch", fontsize=8)
        ax.legend(fontsize=7, frameon=False)
    axes[0, 0].set_ylabel("share kept")
    fig.tight_layout()
    return fig
