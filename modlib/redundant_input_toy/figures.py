"""Chapter 1's figures (notebooks/redundant_input_toy.ipynb): the toy's data, the networks'
boundaries (single panels, small multiples, an animation over epochs), how much they rely on the
redundant input, and the sweep's summaries; each handed to a numbered caption with
:func:`modlib.plots.glue`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap

from modlib import redundant_input_toy as toy
from modlib.data.toy import EXTENT
from modlib.plots import COLUMN, jshtml
from modlib.stats import wilson

POSITIVE, NEGATIVE = "#1f77b4", "#ff7f0e"  # Y1 = 1 (blue circles), Y1 = 0 (orange triangles), as in Fig. 4
BOUNDARY_CMAP = ListedColormap(plt.get_cmap("RdBu")(np.linspace(0.25, 0.75, 256)))
FORMULATION_NAMES = {"a": "(a) paper text: X = Y - U[0,1]", "b": "(b) Playground: sign(x1), pushed 0.3"}


def _held_out(ax: plt.Axes, formulation: str, design: str = "binary") -> None:
    """Outline the held-out test cell (x1 > 0, its band of x2) with a dashed rectangle."""
    high = EXTENT[formulation][1]
    low2, high2 = toy.held_out_band(formulation, design)
    ax.add_patch(plt.Rectangle((0, low2), high, high2 - low2, fill=False, ls="--", lw=1.2,
                               ec="0.2", zorder=5))


def toy_data(ax: plt.Axes, x: np.ndarray, y: np.ndarray, formulation: str, *,
             design: str = "binary", legend: bool = True) -> None:
    """Scatter training points ``x [n, 2]`` coloured by ``y [n]`` and shade the held-out cell."""
    _held_out(ax, formulation, design)
    pos, neg = y.astype(bool), ~y.astype(bool)
    ax.scatter(x[pos, 0], x[pos, 1], s=9, marker="o", c=POSITIVE, label="train, $Y_1=1$")
    ax.scatter(x[neg, 0], x[neg, 1], s=11, marker="^", c=NEGATIVE, label="train, $Y_1=0$")
    x1_low, x1_high, x2_low, x2_high = toy.window(formulation, design)
    tick = 1 if x1_high < 3 else 5
    ax.set(xlim=(x1_low, x1_high), ylim=(x2_low, x2_high), xlabel="$x_1$", ylabel="$x_2$",
           aspect="equal", xticks=[-tick, 0, tick],
           yticks=[t for t in (-tick, 0, tick, 2 * tick) if t <= x2_high])
    if legend:
        ax.plot([], [], ls="--", color="0.2", label="held-out test cell")
        ax.legend(loc="lower left", fontsize=8, framealpha=0.9)


def data_figure(samples: dict) -> plt.Figure:
    """The training data side by side (the paper's Fig. 4): ``samples`` maps a panel title to
    ``(formulation, design, x [n, 2], y [n])``; one legend for all panels, below them."""
    fig, axes = plt.subplots(1, len(samples), figsize=(COLUMN, 3.4), squeeze=False,
                             layout="constrained")
    for ax, (title, (f, design, x, y)) in zip(axes[0], samples.items()):
        toy_data(ax, x, y, f, design=design, legend=False)
        ax.set_title(title, fontsize=9)
        ax.tick_params(labelsize=8)
    axes[0, 0].plot([], [], ls="--", color="0.2", label="held-out test cell")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=3,
               fontsize=8, frameon=False)
    return fig


# ---------------------------------------------------------------- concept diagrams (no data)

def _cells(ax, cells: dict, title: str) -> None:
    """A design drawn as its cells: ``cells`` maps (y1, y2) to "pos", "neg" or "test"."""
    style = {"pos": dict(fc=POSITIVE, alpha=0.35, ec=POSITIVE, ls="-"),
             "neg": dict(fc=NEGATIVE, alpha=0.35, ec=NEGATIVE, ls="-"),
             "test": dict(fc="white", ec="0.2", ls="--")}
    words = {"pos": "train\n$Y_1 = 1$", "neg": "train\n$Y_1 = 0$", "test": "held out:\ntest only"}
    for (y1, y2), kind in cells.items():
        ax.add_patch(plt.Rectangle((y1 + 0.06, y2 + 0.06), 0.88, 0.88, lw=1.2, **style[kind]))
        ax.text(y1 + 0.5, y2 + 0.5, words[kind], ha="center", va="center", fontsize=8)
    rows = 1 + max(y2 for _, y2 in cells)
    ax.set(xlim=(0, 2), ylim=(0, rows), xticks=[0.5, 1.5], xticklabels=["$Y_1=0$", "$Y_1=1$"],
           yticks=[k + 0.5 for k in range(rows)], yticklabels=[f"$Y_2={k}$" for k in range(rows)],
           aspect="equal")
    ax.tick_params(length=0, labelsize=8)
    for side in ax.spines.values():
        side.set_visible(False)
    ax.set_title(title, fontsize=9)


def diagram_held_out_cell() -> plt.Figure:
    """The toy's held-out cell, as a design of cells (no data, no training). Left, the paper's
    setting: three cells in training, $(1,1)$ held out, so a high $X_2$ means $Y_1 = 0$ in
    training. Middle, the middle control: a third band of $Y_2$ keeps $(1,1)$ unseen while $Y_2$
    has the same mean in both classes. Right, two boundaries that fit the training cells equally
    well and disagree only on the held-out cell: $x_1 = 0$ (reads $x_1$ only) and one that also
    reads $x_2$."""
    fig, axes = plt.subplots(1, 3, figsize=(COLUMN, 2.9), layout="constrained",
                             gridspec_kw={"width_ratios": [1, 1, 1.15]})
    _cells(axes[0], {(0, 0): "neg", (0, 1): "neg", (1, 0): "pos", (1, 1): "test"},
           "paper's setting:\nhigh $X_2$ means $Y_1 = 0$")
    _cells(axes[1], {(0, 0): "neg", (0, 1): "neg", (0, 2): "neg", (1, 0): "pos",
                     (1, 1): "test", (1, 2): "pos"},
           "middle control: $(1,1)$ unseen,\n$X_2$ uncorrelated with $Y_1$")
    ax = axes[2]
    _cells(ax, {(0, 0): "neg", (0, 1): "neg", (1, 0): "pos", (1, 1): "test"},
           "two fits of the same\ntraining cells")
    ax.set_yticklabels([])
    ax.plot([1, 1], [0, 2], color="k", lw=2, label="reads $x_1$ only")
    ax.plot([1, 1.15, 2], [0, 0.98, 0.98], color="k", lw=2, ls=(0, (1, 1)),
            label="also reads $x_2$")
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower right", fontsize=8, ncol=2,
               frameon=False)
    return fig


def diagram_reliance() -> plt.Figure:
    """The reliance measure $R = \\mathbb{E}|\\partial z/\\partial x_2| / \\mathbb{E}|\\partial z/
    \\partial x_1|$ on two made-up logits over points of the held-out cell: the arrows are each
    point's gradient $(\\partial z/\\partial x_1, \\partial z/\\partial x_2)$, the grey lines the
    contours of $z$ and the black line $z = 0$. $z = x_1$ ignores $x_2$ ($R = 0$); $z = x_1 - x_2$
    moves with $x_2$ as much as with $x_1$ ($R = 1$)."""
    fig, axes = plt.subplots(1, 2, figsize=(COLUMN, 3.0), layout="constrained")
    grid = np.linspace(-1, 1, 81)
    g1, g2 = np.meshgrid(grid, grid)
    points = np.random.default_rng(0).uniform(0.1, 0.9, (12, 2))  # in the held-out cell
    for ax, (w2, name) in zip(axes, ((0.0, "$z = x_1$"), (-1.0, "$z = x_1 - x_2$"))):
        ax.contour(g1, g2, g1 + w2 * g2, levels=np.linspace(-2, 2, 9), colors="0.75",
                   linewidths=0.6, negative_linestyles="solid")
        ax.contour(g1, g2, g1 + w2 * g2, levels=[0], colors="k", linewidths=1.5)
        ax.add_patch(plt.Rectangle((0, 0), 1, 1, fill=False, ls="--", lw=1.2, ec="0.2"))
        ax.quiver(points[:, 0], points[:, 1], np.full(12, 1.0), np.full(12, w2), angles="xy",
                  scale_units="xy", scale=6, width=0.008, color="#d62728")
        r = abs(w2) / 1.0
        ax.set_title(f"{name}: $R = {r:g}$", fontsize=9)
        ax.set(xlim=(-1, 1.1), ylim=(-1, 1.1), aspect="equal", xlabel="$x_1$", ylabel="$x_2$",
               xticks=[-1, 0, 1], yticks=[-1, 0, 1])
        ax.tick_params(labelsize=8)
    return fig


def boundary(ax: plt.Axes, grid: np.ndarray, win) -> None:
    """Draw a model's P(Y1=1) over the plotting window ``win`` = (x1 low, x1 high, x2 low, x2 high);
    ``grid [res, res]`` uint8 (x 255), row = x2. The black line is the decision boundary (P = 0.5)."""
    p = grid.astype(float) / 255
    ax.imshow(p, origin="lower", extent=tuple(win), cmap=BOUNDARY_CMAP, aspect="auto",
              vmin=0, vmax=1, alpha=0.8, interpolation="bilinear")
    if p.min() < 0.5 < p.max():
        ax.contour(np.linspace(win[0], win[1], grid.shape[1]),
                   np.linspace(win[2], win[3], grid.shape[0]), p, levels=[0.5], colors="k",
                   linewidths=1.2)
    ax.axhline(0, color="0.5", lw=0.5)
    ax.axvline(0, color="0.5", lw=0.5)


def boundary_panel(ax, arrays: dict, formulation: str, seed: int, k: int, title: str | None = None,
                   design: str = "binary"):
    """One panel: the boundary of grid seed ``seed`` after snapshot ``k``, over the training data."""
    boundary(ax, arrays["grids"][seed, k], arrays["windows"])
    toy_data(ax, arrays["train_x"].astype(float), arrays["train_y"], formulation, design=design,
             legend=False)
    ax.set_title(title or f"epoch {int(arrays['snapshot_epochs'][k])}", fontsize=9)


def small_multiples(arrays: dict, formulation: str, panels: list[tuple[int, int]], titles: list[str],
                    ncols: int = 3, design: str = "binary") -> plt.Figure:
    """A grid of boundary panels, ``panels`` = list of (grid seed, snapshot index), ``ncols`` a row
    across the page's width; axes labelled on the outer panels only."""
    nrows = -(-len(panels) // ncols)
    x1_low, x1_high, x2_low, x2_high = toy.window(formulation, design)
    tall = (x2_high - x2_low) / (x1_high - x1_low)
    fig, axes = plt.subplots(nrows, ncols, figsize=(COLUMN, 2.3 * tall * nrows), sharex=True,
                             sharey=True, squeeze=False, layout="constrained")
    for ax, (seed, k), title in zip(axes.flat, panels, titles):
        boundary_panel(ax, arrays, formulation, seed, k, title, design)
        ax.tick_params(labelsize=8)
    _label_outer(axes)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    return fig


def _label_outer(axes) -> None:
    """Name x1 and x2 on the outer panels of a grid of boundary panels only."""
    for ax in axes.flat:
        ax.set(xlabel="", ylabel="")
    for ax in axes[-1]:
        ax.set_xlabel("$x_1$", fontsize=9)
    for ax in axes[:, 0]:
        ax.set_ylabel("$x_2$", fontsize=9)


def boundary_steps(sweep, formulation: str, activation: str = "relu", loss: str = "mse",
                   reveal: float = 1.0, design: str = "binary", seed: int = 0,
                   n: int = 6) -> plt.Figure:
    """The paper's Fig. 5: one seed's boundary after ``n`` of the stored snapshot epochs
    (:func:`step_epochs`: the first, epoch 1, the paper's length and the last among them)."""
    a = sweep.arrays(activation, loss, formulation, reveal, design)
    snaps = [int(e) for e in a["snapshot_epochs"]]
    ks = [snaps.index(e) for e in step_epochs(snaps, n)]
    titles = [f"epoch {snaps[k]}" for k in ks]
    return small_multiples(a, formulation, [(seed, k) for k in ks], titles, design=design)


def step_epochs(snapshot_epochs, n: int = 6) -> list[int]:
    """The ``n`` snapshot epochs :func:`boundary_steps` shows: 0, 1, 4 and 16 (where the text
    measures how much of the held-out cell is settled), the paper's length and the last stored,
    filled up with epochs about evenly spaced on the log scale the snapshots are taken at."""
    snaps = [int(e) for e in snapshot_epochs]
    wanted = [e for e in (0, 1, 4, 16, toy.PAPER_EPOCHS, snaps[-1]) if e in snaps]
    picked = list(dict.fromkeys(wanted))[:n]
    for k in np.linspace(0, len(snaps) - 1, len(snaps)):
        if len(picked) >= min(n, len(snaps)):
            break
        if snaps[int(round(k))] not in picked:
            picked.append(snaps[int(round(k))])
    return sorted(picked)


def boundary_seeds(sweep, formulation: str, activation: str = "relu", loss: str = "mse",
                   reveal: float = 1.0, design: str = "binary", n: int = 6,
                   epoch: int | None = None) -> plt.Figure:
    """The paper's Fig. 6: the boundaries of the first ``n`` seeds after ``epoch`` (one of the
    stored snapshot epochs; default the last), each titled with its held-out accuracy then."""
    a = sweep.arrays(activation, loss, formulation, reveal, design)
    snaps, curve = list(a["snapshot_epochs"]), list(a["curve_epochs"])
    epoch = snaps[-1] if epoch is None else epoch
    if epoch not in snaps or epoch not in curve:
        raise ValueError(f"epoch={epoch} is not stored for both snapshots and curves; choose from "
                         f"{sorted(set(snaps) & set(curve))}")
    acc = a["test_acc_curve"][:, curve.index(epoch)]
    seeds = range(min(n, a["grids"].shape[0]))
    titles = [f"seed {s}: held-out acc. {acc[s]:.2f}" for s in seeds]
    fig = small_multiples(a, formulation, [(s, snaps.index(epoch)) for s in seeds], titles,
                          design=design)
    fig.suptitle(f"boundaries and held-out accuracy after epoch {epoch}", fontsize=9)
    return fig


CONTROL_NAMES = {"middle": "middle control", "corner": "corner control",
                 "even": "even-corner control"}
CONTROL_STYLES = {"middle": "--", "corner": ":", "even": "-."}
# each ternary control's colour, the same in every figure (the paper's setting is orange, NEGATIVE;
# the held-out cell in training grey)
CONTROL_COLOURS = {"middle": "#2ca02c", "corner": "#9467bd", "even": "#8c564b"}
CELL_COLOUR = "0.5"


def condition_label(design: str, reveal: float) -> str:
    """How the figures name a training set."""
    if design in CONTROL_NAMES:
        return CONTROL_NAMES[design]
    return "paper's setting" if reveal == 1 else f"reveal {reveal:g}"


def seed_spread(sweep, activation: str = "relu", loss: str = "mse",
                threshold: float | None = None) -> plt.Figure:
    """Every seed's held-out-cell accuracy in the paper's setting beside the controls (the ternary
    ones; reveal 0, the held-out cell in training), one panel per formulation, same axes: a bin of
    width 0.1 holds one bar per training set, side by side so that none hides another, the paper's
    setting orange, each other training set in its own colour (:data:`CONTROL_COLOURS`), named in
    the legend; ``threshold``: a dotted line where a seed counts as generalising, labelled on the
    axes (not a series of the legend)."""
    s = sweep.settings
    fig, axes = plt.subplots(1, len(s.formulations), figsize=(COLUMN, 3.3), sharex=True,
                             sharey=True, squeeze=False, layout="constrained")
    bins = np.round(np.linspace(0, 1, 11), 10)  # 0.9, the cut, an edge
    sets = [("binary", 1.0, NEGATIVE), ("binary", min(s.reveals), CELL_COLOUR),
            *[(c, 1.0, CONTROL_COLOURS[c]) for c in s.controls]]
    for ax, f in zip(axes[0], s.formulations):
        accs, colours, labels = [], [], []
        for design, r, colour in sets:
            if (design, r) not in s.conditions:
                continue
            acc = sweep.arrays(activation, loss, f, r, design)["test_acc"]
            label = condition_label(design, r)
            if design == "binary" and r == min(s.reveals):
                label += " (cell in training)"
            accs.append(np.clip(acc, 0, 1))
            colours.append(colour)
            labels.append(label)
        # a thin white edge between neighbours, so that a bin's bars read apart
        ax.hist(accs, bins=bins, color=colours, label=labels, rwidth=0.9, edgecolor="white",
                linewidth=0.6)
        ax.grid(axis="y", color="0.9", lw=0.6)  # light lines to read a bar's count against
        ax.set_axisbelow(True)
        if threshold is not None:
            ax.axvline(threshold, color="0.2", ls=":", lw=1)
            ax.text(threshold - 0.01, 0.97, f"cut {threshold:g}: generalises →", ha="right",
                    va="top", fontsize=8, color="0.2", transform=ax.get_xaxis_transform())
        ax.set_title(FORMULATION_NAMES[f], fontsize=9)
        ax.set_xlabel("held-out-cell accuracy of one seed", fontsize=9)
        ax.tick_params(labelsize=8)
    axes[0, 0].set_ylabel("seeds", fontsize=9)
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=3,
               fontsize=9, frameon=False)
    return fig


def curve_sets(settings) -> list[tuple[str, float]]:
    """The training sets :func:`reliance_curves` draws, six at most so that the lines stay
    readable: the paper's setting, the held-out cell at its rarest (the largest reveal below 1),
    the cell in training (the smallest reveal), and the ternary controls."""
    reveals = sorted(settings.reveals, reverse=True)
    picked = [reveals[0], *([reveals[1]] if len(reveals) > 2 else []), reveals[-1]]
    return [("binary", r) for r in dict.fromkeys(picked)] + [(c, 1.0) for c in settings.controls]


def _curve_style(settings, design: str, reveal: float) -> tuple[str, str, str]:
    """``(colour, line style, label)`` of one training set in the curves: orange the paper's
    setting, red the rare cell, grey the cell in training, each control its own colour and style."""
    bits = toy.mutual_information(design, reveal)
    if design in CONTROL_STYLES:
        return CONTROL_COLOURS[design], CONTROL_STYLES[design], f"{CONTROL_NAMES[design]} ({bits:.2f} bits)"
    if reveal == max(settings.reveals):
        return NEGATIVE, "-", f"paper's setting, reveal {reveal:g} ({bits:.2f} bits)"
    if reveal == min(settings.reveals):
        return CELL_COLOUR, "-", f"cell in training, reveal {reveal:g} ({bits:.2f} bits)"
    return "#d62728", "-", f"rare cell, reveal {reveal:g} ({bits:.2f} bits)"


def reliance_curves(sweep, activation: str, loss: str, formulation: str, ax: plt.Axes | None = None,
                    legend: bool = True, metric: str = "reliance"):
    """The median of ``metric`` (reliance on x2, or ``test_acc_curve``) over seeds against the
    epoch, one line per training set of :func:`curve_sets` (the other reveal levels are in the
    sweep's figures and tables); the band (25-75% of seeds) only for the paper's setting and the
    cell in training, so the lines stay readable."""
    ax = ax or plt.subplots(figsize=(COLUMN / 2, 3))[1]
    s = sweep.settings
    for design, r in curve_sets(s):
        a = sweep.arrays(activation, loss, formulation, r, design)
        epochs = a["curve_epochs"].astype(float)
        epochs[0] = 0.5  # show the initialisation on the log axis
        q25, med, q75 = np.percentile(a[metric], [25, 50, 75], axis=0)
        colour, style, label = _curve_style(s, design, r)
        ax.plot(epochs, med, color=colour, lw=1.8 if r == 1.0 and design == "binary" else 1.4,
                ls=style, label=label)
        if design == "binary" and r in (max(s.reveals), min(s.reveals)):
            ax.fill_between(epochs, q25, q75, color=colour, alpha=0.15, lw=0)
    ax.set_xscale("log")
    ax.set_xlabel("epoch (log scale; init. at 0.5)", fontsize=9)
    ylabel = "reliance $R$ on $x_2$" if metric == "reliance" else "held-out-cell accuracy"
    ax.set_ylabel(f"{ylabel} (median)", fontsize=9)
    ax.set_title(f"{FORMULATION_NAMES[formulation]}", fontsize=9)
    ax.tick_params(labelsize=8)
    ax.grid(alpha=0.3)
    if legend:
        ax.legend(fontsize=8, title="training set ($I(Y_1;Y_2)$)", title_fontsize=8)
    return ax


def reliance_figure(sweep, activation: str = "relu", loss: str = "mse",
                    metric: str = "reliance") -> plt.Figure:
    """:func:`reliance_curves` for every formulation side by side, on the same y-axis, with one
    legend below the panels."""
    fs = sweep.settings.formulations
    fig, axes = plt.subplots(1, len(fs), figsize=(COLUMN, 3.8), sharey=True, squeeze=False,
                             layout="constrained")
    for ax, f in zip(axes[0], fs):
        reliance_curves(sweep, activation, loss, f, ax=ax, legend=False, metric=metric)
    for ax in axes[0, 1:]:
        ax.set_ylabel("")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=2,
               fontsize=9, frameon=False, title="training set ($I(Y_1;Y_2)$ in training)",
               title_fontsize=9)
    return fig


def training_curves(sweep, activation: str = "relu", loss: str = "mse",
                    mark: int | None = None) -> plt.Figure:
    """Median held-out accuracy (top) and reliance (bottom) over seeds against the epoch, one
    column per formulation, one line per training set of :func:`curve_sets`
    (:func:`reliance_curves`); ``mark``: a dotted line at that epoch (the paper's training length),
    labelled."""
    fs = sweep.settings.formulations
    fig, axes = plt.subplots(2, len(fs), figsize=(COLUMN, 6.6), sharex=True, sharey="row",
                             squeeze=False, layout="constrained")
    for j, f in enumerate(fs):
        for i, metric in enumerate(("test_acc_curve", "reliance")):
            ax = axes[i, j]
            reliance_curves(sweep, activation, loss, f, ax=ax, legend=False, metric=metric)
            if mark is not None:
                ax.axvline(mark, color="0.3", ls=":", lw=1)
                if i == 0:
                    ax.text(mark, 0.03, f"epoch {mark} ", ha="right", va="bottom", fontsize=8,
                            color="0.3", transform=ax.get_xaxis_transform())
            if i == 0:
                ax.set_xlabel("")
            else:
                ax.set_title("")
            if j > 0:
                ax.set_ylabel("")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=2,
               fontsize=9, frameon=False, title="training set (I(Y₁;Y₂) in training)",
               title_fontsize=9)
    return fig


def _centre_and_bar(values: np.ndarray, cut: float | None) -> tuple[float, float, float]:
    """(centre, low, high) of one training set's seeds, within the values' bounds: with ``cut``, the
    share of seeds at or above it and its 95% Wilson interval; without, the median and the
    interquartile range."""
    values = np.asarray(values, dtype=float)
    if cut is not None:
        k = int((values >= cut).sum())
        low, high = wilson(k, values.size)
        return k / values.size, low, high
    low, mid, high = np.percentile(values, [25, 50, 75])
    return float(mid), float(low), float(high)


def sweep_summary(sweep, metric: str = "test_acc", ylabel: str | None = None,
                  cut: float | None = None) -> plt.Figure:
    """``metric`` for every training set, one panel per formulation, one above the other on the same
    y-axis. With ``cut`` (the default for ``test_acc``: the cut at which a seed generalises) each
    point is the share of seeds at or above the cut with its 95% Wilson interval; otherwise the
    median over seeds with the interquartile range (both stay within the values' bounds). The
    training sets: the ternary controls (squares) on the left,
    then the reveal levels from the paper's setting (1) to the cell in training (0), each training
    set at its own equally spaced place on the x-axis (the levels near 1 would otherwise pile up);
    one line per (activation, loss), the lines side by side within each place so that the error
    bars stay apart; one legend below the panels."""
    s = sweep.settings
    if metric == "test_acc" and cut is None:
        cut = toy.GENERALIZES
    if ylabel is None:
        ylabel = (f"share of seeds with held-out\naccuracy ≥ {cut:g}" if cut is not None
                  else f"{metric} (median)")

    def bar(v):  # centre and the error bar's two lengths
        c, low, high = _centre_and_bar(v, cut)
        return c, [[max(c - low, 0.0)], [max(high - c, 0.0)]]  # rounding: never below 0

    fig, axes = plt.subplots(len(s.formulations), 1, figsize=(COLUMN, 2.5 * len(s.formulations) + 0.8),
                             sharey=True, sharex=True, squeeze=False, layout="constrained")
    n = len(sweep.groups)
    at = {c: i for i, c in enumerate(s.controls)}  # the controls' places on the x-axis
    first = len(at) + 0.6 if at else 0  # the reveal levels start after a gap
    place = {r: first + k for k, r in enumerate(sorted(s.reveals, reverse=True))}
    for ax, f in zip(axes[:, 0], s.formulations):
        for g, (activation, loss) in enumerate(sweep.groups):
            bars = [bar(sweep.arrays(activation, loss, f, r)[metric]) for r in s.reveals]
            nudge = (g - (n - 1) / 2) * 0.16
            xs = np.array([place[r] for r in s.reveals]) + nudge
            line = ax.errorbar(xs, [b[0] for b in bars],
                               yerr=np.hstack([b[1] for b in bars]), marker="o", ms=3.5,
                               capsize=2, lw=1.2, label=f"{activation}, {loss}")
            for c, x in at.items():
                centre, err = bar(sweep.arrays(activation, loss, f, 1.0, c)[metric])
                ax.errorbar([x + nudge], [centre], yerr=err, marker="s", ms=4.5,
                            capsize=2, mfc="white", color=line[0].get_color())
        ax.set_xticks([*at.values(), *place.values()],
                      [*at, *[f"{r:g}" for r in place]])
        if at:
            ax.axvline(first - 0.8, color="0.6", lw=0.8)  # the controls | the reveal levels
        ax.set_title(FORMULATION_NAMES[f], fontsize=9)
        ax.set_ylabel(ylabel, fontsize=9)
        ax.tick_params(labelsize=8)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("training set: the ternary controls | reveal (1: paper's setting; "
                           "0: cell in training)", fontsize=9)
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=n,
               fontsize=9, frameon=False)
    return fig


def animate_boundaries(sweep, settings: list[tuple[str, str, str, float, str]], seed: int = 0,
                       ncols: int = 2):
    """A kernel-free animation (JavaScript HTML) of the boundary over the snapshot epochs, one panel
    per (activation, loss, formulation, reveal, design) in ``settings``, ``ncols`` a row; its frames are
    the page's width (COLUMN inches at 100 dpi). The caption below it names profile, device, seed."""
    arrs = [sweep.arrays(*st) for st in settings]
    nrows = -(-len(settings) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(COLUMN, 3.1 * nrows), squeeze=False, dpi=100)
    n_frames = len(arrs[0]["snapshot_epochs"])

    def draw(k):
        for ax, a, (act, loss, f, r, design) in zip(axes.flat, arrs, settings):
            ax.clear()
            epoch = int(a["snapshot_epochs"][k])
            name = condition_label(design, r)
            boundary_panel(ax, a, f, seed, k, f"({f}) {act}, {name}: epoch {epoch}", design)
            ax.tick_params(labelsize=8)
            ax.set_xlabel("$x_1$", fontsize=9, labelpad=1)
            ax.set_ylabel("$x_2$", fontsize=9, labelpad=1)
        return []

    for ax in axes.flat[len(settings):]:
        ax.axis("off")
    draw(0)
    fig.tight_layout()
    return jshtml(fig, draw, n_frames, 700)


def _finish(fig, axes, formulations, xlabel: str, ylabel: str, ncol: int) -> plt.Figure:
    """Title each panel with its formulation, label the axes, grid them, and put one legend (the
    first panel's) below the panels."""
    for ax, f in zip(axes[0], formulations):
        ax.set_title(FORMULATION_NAMES[f], fontsize=9)
        ax.set_xlabel(xlabel, fontsize=9)
        ax.tick_params(labelsize=8)
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel(ylabel, fontsize=9)
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=ncol,
               fontsize=9, frameon=False)
    return fig


# ---------------------------------------------------------------- the distribution over seeds

def threshold_curve(sweep, threshold: float, activation: str = "relu", loss: str = "mse",
                    low: float = 0.5) -> plt.Figure:
    """The share of seeds whose held-out accuracy is at least each threshold (y) against the
    threshold (x, from ``low`` to 1, where the curves part), one panel per formulation: the paper's
    setting with its Wilson 95% band and its median (a dashed line, labelled beside the curve), the
    ternary controls (:data:`CONTROL_COLOURS`) and ``reveal = 0`` (grey) as thin lines;
    ``threshold``, the chapter's cut, dotted. Reading rule: a curve that stays high far to the
    right has many seeds that get nearly all of the cell right; the cut reads one point off each
    curve."""
    from modlib.redundant_input_toy import findings

    s = sweep.settings
    fig, axes = plt.subplots(1, len(s.formulations), figsize=(COLUMN, 3.5), sharey=True,
                             squeeze=False, layout="constrained")
    t = findings.THRESHOLDS
    for ax, f in zip(axes[0], s.formulations):
        acc = sweep.arrays(activation, loss, f, min(s.reveals))["test_acc"]
        ax.plot(t, findings.share_curve(acc)[0], color=CELL_COLOUR, lw=1.5,
                label=condition_label("binary", min(s.reveals)) + " (cell in training)")
        for c in s.controls:
            acc = sweep.arrays(activation, loss, f, 1.0, c)["test_acc"]
            ax.plot(t, findings.share_curve(acc)[0], color=CONTROL_COLOURS[c], lw=1.5,
                    ls=CONTROL_STYLES[c], label=condition_label(c, 1.0))
        acc = sweep.arrays(activation, loss, f)["test_acc"]
        share, lo, hi = findings.share_curve(acc)
        ax.fill_between(t, lo, hi, color=NEGATIVE, alpha=0.2, lw=0)
        ax.plot(t, share, color=NEGATIVE, lw=2.2, label="paper's setting (band: 95% Wilson)")
        med = float(np.median(acc))
        ax.axvline(med, color=NEGATIVE, ls="--", lw=1)
        # the median's label left of both vertical lines, so that neither crosses it
        ax.annotate(f"median\n{med:.2f}", (med, 0.2), xytext=(min(med, threshold) - 0.03, 0.2),
                    ha="right", va="center", fontsize=8, color=NEGATIVE,
                    arrowprops=dict(arrowstyle="->", color=NEGATIVE, lw=0.8))
        ax.axvline(threshold, color="0.2", ls=":", lw=1)
        ax.text(threshold - 0.006, 0.02, f"cut {threshold:g}", ha="right", va="bottom", fontsize=8,
                color="0.2")
        ax.set(xlim=(low, 1), ylim=(0, 1.02))
    return _finish(fig, axes, s.formulations, "threshold on held-out-cell accuracy",
                   "share of seeds at or above it", 2)


def quantile_seeds(sweep, formulation: str, quantiles=(0.1, 0.5, 0.9), activation: str = "relu",
                   loss: str = "mse") -> plt.Figure:
    """The paper's Fig. 6 chosen by the distribution instead of by seed number: among the seeds
    whose boundaries are stored, those whose held-out accuracy lies nearest the ``quantiles`` of all
    seeds' (paper's setting, after training), each titled with its accuracy and the quantile it is
    nearest."""
    a = sweep.arrays(activation, loss, formulation)
    acc, stored = a["test_acc"], a["grids"].shape[0]
    picks, titles = [], []
    for q in quantiles:
        target = float(np.quantile(acc, q))
        seed = int(np.argmin(np.abs(acc[:stored] - target)))
        picks.append((seed, len(a["snapshot_epochs"]) - 1))
        titles.append(f"seed {seed}: {acc[seed]:.2f} (nearest\nthe {q:.0%} quantile, {target:.2f})")
    fig = small_multiples(a, formulation, picks, titles, ncols=len(quantiles))
    last = int(a["snapshot_epochs"][-1])
    fig.suptitle(f"boundaries and held-out accuracy after epoch {last}, the end of training",
                 fontsize=9)
    return fig


# ---------------------------------------------------------------- without gradient descent

BASELINE_NAMES = {"gradient descent": "gradient descent\n(the trained network)",
                  "least-squares": "least squares\n(linear)", "max-margin": "maximum margin\n(linear)",
                  "rf-min-norm": "random features,\nminimum norm", "rf-max-margin": "random features,\nmaximum margin",
                  "linearised": "linearised network,\nminimum norm"}


def baseline_boundaries(st, formulation: str = "b", seed: int = 0) -> plt.Figure:
    """One seed's training points in the paper's setting and the boundary each minimiser draws
    through them: the trained network first, then the five that take no gradient step; each title
    gives the reliance R on x2 over the held-out points. Colours and lines as the boundary figures."""
    arms = st.arms("baselines")
    fig, axes = plt.subplots(2, 3, figsize=(COLUMN, 4.9), sharex=True, sharey=True,
                             layout="constrained")
    sweep = st.sweep.arrays("relu", "mse", formulation)
    for ax, arm in zip(axes.flat, arms):
        a = st.arrays("baselines", arm, formulation)
        boundary(ax, a["grids"][seed], sweep["windows"])
        toy_data(ax, sweep["train_x"].astype(float), sweep["train_y"], formulation, legend=False)
        ax.set_title(f"{BASELINE_NAMES[arm]}: R = {a['reliance'][seed]:.2f}", fontsize=8)
        ax.tick_params(labelsize=7)
    _label_outer(axes)
    return fig


def baseline_reliance(st) -> plt.Figure:
    """The reliance R on x2 (median over seeds, bar: 25th to 75th percentile; log scale, on the
    horizontal axis) of every minimiser, one row each with its name written horizontally, in the
    paper's setting (orange) and in the training sets where x2 is uncorrelated with Y1 (grey: the
    cell in training; the ternary controls in their colours), one panel per formulation."""
    arms = st.arms("baselines")
    conds = st.conditions("baselines")
    fs = st.sweep.settings.formulations
    fig, axes = plt.subplots(1, len(fs), figsize=(COLUMN, 4.2), sharey=True, sharex=True,
                             squeeze=False, layout="constrained")
    styles = {("binary", 1.0): dict(color=NEGATIVE, marker="o", ms=6)}
    for c in conds[1:]:
        d = c[0]
        styles[c] = dict(color=CELL_COLOUR if d == "binary" else CONTROL_COLOURS[d], mfc="white",
                         marker={"binary": "s", "middle": "^", "corner": "v", "even": "D"}[d], ms=4.5)
    for ax, f in zip(axes[0], fs):
        for j, cond in enumerate(conds):
            offset = (j - (len(conds) - 1) / 2) * 0.17
            for i, arm in enumerate(arms):
                r = st.arrays("baselines", arm, f, *cond)["reliance"]
                q25, med, q75 = np.percentile(r, [25, 50, 75])
                label = condition_label(*cond) if i == 0 else None
                if cond[0] == "binary" and label and cond[1] != 1.0:
                    label += " (cell in training)"
                ax.errorbar([med], [i + offset], xerr=[[med - q25], [q75 - med]], capsize=2, lw=1,
                            ls="none", label=label, **styles[cond])
        ax.axhspan(-0.5, 0.5, color="0.92", zorder=0)
        ax.set_xscale("log")
        ax.set_yticks(range(len(arms)), [BASELINE_NAMES[a] for a in arms], fontsize=8)
        ax.set_ylim(len(arms) - 0.5, -0.5)  # the trained network on top
        ax.set_title(FORMULATION_NAMES[f], fontsize=9)
        ax.set_xlabel("reliance $R$ on $x_2$ (median, log scale)", fontsize=9)
        ax.tick_params(axis="x", labelsize=8)
        ax.tick_params(axis="y", length=0)
        ax.grid(alpha=0.3, axis="x")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=2,
               fontsize=9, frameon=False)
    return fig


# ---------------------------------------------------------------- inherited or built?

def diagram_zero_x2_start() -> plt.Figure:
    """Concept figure of the mechanism experiment: the same network twice, its first layer drawn
    from the two inputs; on the left every weight random (the ordinary start), on the right the
    weights from x2 zero (dashed), so that the output starts blind to x2."""
    fig, axes = plt.subplots(1, 2, figsize=(COLUMN, 2.6), layout="constrained")
    weights = np.random.default_rng(0).uniform(-0.5, 0.5, (2, 8))  # the same in both panels
    hidden = np.linspace(0.1, 0.9, 8)
    for ax, zero, title in zip(axes, (False, True), ("ordinary start: every weight random",
                                                     "zero-x2 start: weights from $x_2$ are 0")):
        for k, (y_in, name) in enumerate(((0.68, "$x_1$"), (0.32, "$x_2$"))):
            for h, w in zip(hidden, weights[k]):
                off = zero and k == 1
                ax.plot([0.1, 0.5], [y_in, h], color="0.6" if off else ("#1f77b4" if w > 0 else "#d62728"),
                        lw=0.8 if off else 0.4 + 3 * abs(w), ls=":" if off else "-", zorder=1)
            ax.scatter([0.1], [y_in], s=500, color="white", edgecolor="k", zorder=2)
            ax.text(0.1, y_in, name, ha="center", va="center", fontsize=10, zorder=3)
        ax.scatter(np.full(8, 0.5), hidden, s=90, color="white", edgecolor="k", zorder=2)
        ax.annotate("", (0.8, 0.5), (0.56, 0.5), arrowprops=dict(arrowstyle="->", color="0.3"))
        ax.text(0.83, 0.5, "two more\nlayers\n→ $z$", va="center", fontsize=8)
        ax.text(0.5, -0.04, "first hidden layer (8 units)", ha="center", fontsize=8)
        ax.set_title(title, fontsize=9)
        ax.set(xlim=(0, 1.05), ylim=(-0.1, 1.0))
        ax.axis("off")
    return fig


def mechanism_curves(st, designs=(("binary", 1.0), ("binary", 0.0))) -> plt.Figure:
    """The median reliance R on x2 over seeds (band: 25th-75th percentile) after every recorded
    update (log scale; the start drawn at 0.5), from the ordinary start (solid) and from zero x2
    weights (dashed), in the paper's setting (orange) and with the held-out cell in training (grey);
    one panel per formulation; dotted lines at the end of epochs 1 and 8 and of the paper's 1024,
    named on an axis along the top."""
    from modlib.redundant_input_toy.studies import reliance_curve

    axis = st.axis("mechanism")
    x = axis["updates"].astype(float)
    x[0] = 0.5
    per_epoch = int(axis["updates_per_epoch"])
    fs = st.sweep.settings.formulations
    fig, axes = plt.subplots(1, len(fs), figsize=(COLUMN, 3.4), sharey=True, squeeze=False,
                             layout="constrained")
    for ax, f in zip(axes[0], fs):
        for cond in designs:
            colour = NEGATIVE if cond == ("binary", 1.0) else "0.5"
            for arm, ls in (("ordinary", "-"), ("zero-x2", "--")):
                r = reliance_curve(st.arrays("mechanism", arm, f, *cond))
                q25, med, q75 = np.percentile(r, [25, 50, 75], axis=0)
                ax.plot(x, med, color=colour, ls=ls, lw=1.5,
                        label=f"{condition_label(*cond)}, {arm} start")
                if cond == ("binary", 1.0):
                    ax.fill_between(x, q25, q75, color=colour, alpha=0.15, lw=0)
        epochs = [e for e in (1, 8, 1024) if e * per_epoch <= x[-1]]
        for e in epochs:
            ax.axvline(e * per_epoch, color="0.3", ls=":", lw=0.8)
        ax.set_xscale("log")
        # the dotted lines named on a second x axis along the top, level and at 9 pt
        top = ax.secondary_xaxis("top", functions=(lambda u: u / per_epoch, lambda e: e * per_epoch))
        top.set_xticks(epochs, [str(e) for e in epochs])
        top.minorticks_off()
        top.tick_params(labelsize=9, length=3)
        top.set_xlabel("end of epoch", fontsize=9)
    return _finish(fig, axes, fs, "SGD updates (log scale; start at 0.5)",
                   "reliance $R$ on $x_2$ (median)", 2)


# ---------------------------------------------------------------- scale and gap

def scale_figure(st) -> plt.Figure:
    """The four training sets of the scale-and-gap control (seed 0's points, each on its own
    axes: (a) and (b) /5 reach about 1, (a) x5 and (b) about 5), each titled with the share of seeds
    that generalise; the dashed square is the held-out cell, the grey band the gap between the classes."""
    from modlib.redundant_input_toy import scale

    axis = st.axis("scale")
    y = axis["train_y"]
    fig, axes = plt.subplots(2, 2, figsize=(COLUMN, 5.6), layout="constrained")
    names = {("a", "x1"): "(a): scale 1, no gap", ("a", "x5"): "(a) ×5: scale 5, no gap",
             ("b", "x1"): "(b) /5: scale 1, gap", ("b", "x5"): "(b): scale 5, gap"}
    for i, shape in enumerate(scale.SHAPES):
        for j, sc in enumerate(scale.SCALES):
            ax = axes[j, i]
            x = axis["train_x"][i, j]
            size = scale.SCALES[sc] * (1 + scale.MARGIN)
            push = scale.MARGIN * scale.SCALES[sc] if shape == "b" else 0.0
            ax.add_patch(plt.Rectangle((0, 0), size, size, fill=False, ls="--", lw=1.2, ec="0.2"))
            if push:
                ax.axvspan(-push, push, color="0.85", zorder=0)
            pos = y.astype(bool)
            ax.scatter(x[pos, 0], x[pos, 1], s=7, marker="o", c=POSITIVE)
            ax.scatter(x[~pos, 0], x[~pos, 1], s=9, marker="^", c=NEGATIVE)
            share = (st.arrays("scale", sc, shape)["test_acc"] >= toy.GENERALIZES).mean()
            ax.set_title(f"{names[(shape, sc)]}\n{share:.0%} of seeds generalise", fontsize=9)
            ax.set(xlim=(-1.1 * size, 1.1 * size), ylim=(-1.1 * size, 1.1 * size), aspect="equal")
            ax.tick_params(labelsize=8)
            ax.axhline(0, color="0.5", lw=0.5)
            ax.axvline(0, color="0.5", lw=0.5)
    return fig


# ---------------------------------------------------------------- the theory page's figure (no training)

# the two networks of the theory page's exercise "Information without a derivative" (book/toy_theory.md)
THEORY_NETWORKS = {"A": ("network A: $\\mathbb{1}[x_1 > 0]$", lambda x1, x2: x1 > 0),
                   "B": ("network B: $\\mathbb{1}[x_1 > 0]\\,\\mathbb{1}[x_2 \\leq 0]$",
                         lambda x1, x2: (x1 > 0) & (x2 <= 0))}
_FILL = ListedColormap(["#ffe0c2", "#cfe3f3"])  # predicted 0 (light orange), predicted 1 (light blue)


def theory_toy(n_train: int = 150, n_test: int = 40) -> plt.Figure:
    """The toy of book/toy_theory.md as drawn by its data code (:func:`modlib.data.toy.redundant_toy`,
    formulation (a), generator seeded 0), no network trained. Left: ``n_train`` training points
    coloured by $Y_1$, each of the three training cells $(Y_1, Y_2)$ labelled where it lies, and the
    held-out cell $(1, 1)$ dashed with ``n_test`` test points. Middle and right: the predictions over
    the input plane of the exercise's networks A (reads $x_1$ only) and B (also reads $x_2$), which
    agree on every training point and disagree on the held-out cell."""
    import torch

    from modlib.data.toy import grid as plane, redundant_toy

    g = torch.Generator().manual_seed(0)
    x, y = (v.numpy() for v in redundant_toy("a", n_train, split="train", generator=g))
    x_test, _ = redundant_toy("a", n_test, split="test", generator=g)
    x_test = x_test.numpy()
    points, (low, high) = plane("a", 201)
    fig, axes = plt.subplots(1, 3, figsize=(COLUMN, 2.95), layout="constrained")
    pos = y.astype(bool)
    for k, ax in enumerate(axes):
        ax.axhline(0, color="0.6", lw=0.6, zorder=1)
        ax.axvline(0, color="0.6", lw=0.6, zorder=1)
        ax.add_patch(plt.Rectangle((0, 0), 1, 1, fill=False, ls="--", lw=1.3, ec="0.15", zorder=5))
        faint = 0.35 if k else 1.0
        ax.scatter(x[pos, 0], x[pos, 1], s=9, marker="o", c=POSITIVE, alpha=faint, lw=0, zorder=3,
                   label="train, $Y_1 = 1$")
        ax.scatter(x[~pos, 0], x[~pos, 1], s=11, marker="^", c=NEGATIVE, alpha=faint, lw=0, zorder=3,
                   label="train, $Y_1 = 0$")
        ax.scatter(x_test[:, 0], x_test[:, 1], s=14, marker="o", facecolors="none",
                   edgecolors=POSITIVE, lw=0.8, zorder=4, label="test, $Y_1 = 1$")
        ax.set(xlim=(low, high), ylim=(low, high), aspect="equal", xticks=[-1, 0, 1],
               yticks=[-1, 0, 1], xlabel="$x_1$")
        ax.tick_params(labelsize=9)
        ax.xaxis.label.set_size(10)
    axes[0].set_ylabel("$x_2$", fontsize=10)
    axes[0].set_title("the data: cells $(Y_1, Y_2)$", fontsize=9)
    # each cell's label in the empty band above or below it, off the points
    for (y1, y2), text in {(0, 0): "(0,0)", (0, 1): "(0,1)", (1, 0): "(1,0)",
                           (1, 1): "(1,1) held out"}.items():
        axes[0].text(y1 - 0.5, (high + 1) / 2 if y2 else (low - 1) / 2, text, ha="center",
                     va="center", fontsize=9, zorder=6)
    g1, g2 = points[:, 0].numpy(), points[:, 1].numpy()
    for ax, (title, network) in zip(axes[1:], THEORY_NETWORKS.values()):
        said = network(g1, g2).reshape(201, 201).astype(float)  # row = x2
        ax.imshow(said, origin="lower", extent=(low, high, low, high), cmap=_FILL, vmin=0, vmax=1,
                  interpolation="nearest", zorder=0)
        ax.set_title(title, fontsize=9)
        ax.set_yticklabels([])
    handles, labels = axes[0].get_legend_handles_labels()
    handles += [plt.Rectangle((0, 0), 1, 1, fc=c, ec="0.6") for c in _FILL.colors[::-1]]
    labels += ["network says 1", "network says 0"]
    fig.legend(handles, labels, loc="outside lower center", ncol=5, fontsize=9, frameon=False,
               handlelength=1.2, columnspacing=1.0, handletextpad=0.4)
    return fig



# ---------------------------------------------------------------- issue 51: coverage, and the linear limit

def coverage_figure(st) -> plt.Figure:
    """The coverage controls beside the paper's setting (ReLU, squared loss): for each formulation,
    the share of seeds that generalise (Wilson 95% interval) in the paper's setting and in the three
    single-band, uncorrelated designs, each labelled with its I(Y1;Y2) and Cov(Y1, Y2); below, seed
    0's training points of the design ``single`` in (b), the held-out cell dashed."""
    from modlib.redundant_input_toy import coverage
    from modlib.redundant_input_toy.studies import coverage_arm

    fs = st.sweep.settings.formulations
    fig = plt.figure(figsize=(COLUMN, 6.6), layout="constrained")
    top, bottom = fig.subfigures(2, 1, height_ratios=[1.5, 1])
    axes = top.subplots(1, len(fs), sharey=True, squeeze=False)[0]
    sets = ["paper", "single-low", "single", "single-high"]
    for ax, f in zip(axes, fs):
        for i, d in enumerate(sets):
            acc = (st.sweep.arrays("relu", "mse", f)["test_acc"] if d == "paper"
                   else coverage_arm(st, d, f)["test_acc"])
            k = int((acc >= toy.GENERALIZES).sum())
            lo, hi = wilson(k, acc.size)
            p = k / acc.size
            colour = NEGATIVE if d == "paper" else POSITIVE
            ax.errorbar([i], [p], yerr=[[p - lo], [hi - p]], marker="o", color=colour, capsize=3, ls="none")
        paper = (f"paper's\nsetting\n{toy.mutual_information('binary', 1.0):.3f} bits\n"
                 f"Cov {toy.binary_covariance(1.0):.2f}".replace("-", "−"))
        labels = [paper] + [f"{d}\n{coverage.mutual_information(d):.3f} bits\n"
                            f"Cov {round(coverage.covariance(d), 2) + 0.0:.2f}" for d in sets[1:]]
        ax.set_xticks(range(len(sets)), labels, fontsize=9)
        ax.set_xlim(-0.5, len(sets) - 0.5)
        ax.set_ylim(0, 1.05)
        ax.set_title(FORMULATION_NAMES[f], fontsize=10)
        ax.grid(alpha=0.3, axis="y")
        ax.tick_params(axis="y", labelsize=9)
    axes[0].set_ylabel(f"share of seeds with held-out\naccuracy ≥ {toy.GENERALIZES:g}", fontsize=9)
    ax = bottom.subplots()
    a = st.stored[coverage.RESULT].arrays
    j = coverage.settings(st.profile).designs.index("single")
    i = fs.index("b") if "b" in fs else 0
    x, y = a["train_x"][i, j], a["train_y"][i, j].astype(bool)
    ax.scatter(x[y, 0], x[y, 1], s=7, marker="o", c=POSITIVE, label="$Y_1 = 1$")
    ax.scatter(x[~y, 0], x[~y, 1], s=9, marker="^", c=NEGATIVE, label="$Y_1 = 0$")
    low, high = toy.held_out_band(fs[i], "corner")  # the band of Y2 = 2, as the corner controls'
    right = window_right = toy.window(fs[i], "corner")[1]
    ax.add_patch(plt.Rectangle((0, low), window_right, high - low, fill=False, ls="--", lw=1.2, ec="0.2"))
    ax.set(xlim=(-right, right), ylim=toy.window(fs[i], "corner")[2:], xlabel="$x_1$", ylabel="$x_2$")
    ax.set_title(f"the design 'single' in ({fs[i]}), seed 0's training points: $Y_1 = 1$ in the middle "
                 "band only;\nthe held-out cell (1,2) dashed", fontsize=9)
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1))  # outside: off the points
    ax.tick_params(labelsize=9)
    return fig


def trajectory_figure(st, traj) -> plt.Figure:
    """The linear model's b/a (the weight on x2 over the weight on x1) under full-batch gradient
    descent on the page's loss ½(tanh z − t)², from zero, against the step (log scale; median over
    seeds, band 25th to 75th percentile), beside the least-squares fit (dashed) and the
    maximum-margin line (dotted) of the same training points (median over seeds); paper's setting,
    one panel per formulation. ``traj``: the stored ``gd-trajectory`` result."""
    from modlib.redundant_input_toy.baselines import LINEAR

    coef, steps = traj.arrays["coef"], traj.arrays["steps"]
    lin = st.axis("baselines")["coef"]  # [F, C, 2, S, 3]
    fs = st.sweep.settings.formulations
    fig, axes = plt.subplots(1, len(fs), figsize=(COLUMN, 3.0), sharey=True, squeeze=False,
                             layout="constrained")
    for ax, f in zip(axes[0], fs):
        i = fs.index(f)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = coef[i, :, 1:, 1] / coef[i, :, 1:, 0]  # step 0 is the zero start
        q25, med, q75 = np.percentile(ratio, [25, 50, 75], axis=0)
        ax.plot(steps[1:], med, color=NEGATIVE, label="gradient descent, ½(tanh z − t)²")
        ax.fill_between(steps[1:], q25, q75, color=NEGATIVE, alpha=0.2, lw=0)
        for k, (name, ls) in enumerate(zip(LINEAR, ("--", ":"))):
            c = lin[i, 0, k]  # the paper's setting
            r = np.median(c[:, 1] / c[:, 0])
            ax.axhline(r, color="0.3", ls=ls, lw=1.2,
                       label=f"{name.replace('-', ' ')} ({r:+.3f})")
        ax.axhline(0, color="0.6", lw=0.5)
        ax.set_xscale("log")
        ax.set_title(FORMULATION_NAMES[f], fontsize=8)
        ax.set_xlabel("full-batch steps (learning rate %g)" % traj.config.get("lr", 0.1), fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel("$b/a$: weight on $x_2$ over weight on $x_1$", fontsize=8)
    handles, labels = axes[0, -1].get_legend_handles_labels()
    fig.legend(handles, [lab.split(" (")[0] for lab in labels], loc="outside lower center", ncol=3,
               fontsize=7, frameon=False)
    return fig
