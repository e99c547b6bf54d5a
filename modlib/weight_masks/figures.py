"""Chapter 4's figures (notebooks/weight_masks.ipynb): accuracy tables, per-layer bars, input usage,
the alpha sweep, confusion grids, class removal and the concept diagrams (``diagram_*``: a weight
mask and its complement, the specialization and reuse tests; no data, no training); each
handed to a numbered caption with :func:`modlib.plots.glue`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from modlib.plots import COLUMN, not_stored  # noqa: F401 (the notebook calls figures.not_stored)
from modlib.weight_masks import protocol


def accuracy_table(tables: np.ndarray, rows, columns, chance: float | None = None,
                   prefix: str = "accuracy on ") -> plt.Figure:
    """Heat map of accuracies ``tables [seeds, rows, columns]``: mean, with the std over seeds;
    ``chance``, the accuracy of guessing, is named under the table; each column is headed
    ``prefix`` and its name. (Chapter 4's ablation tables.)"""
    mean, std = tables.mean(0), tables.std(0)
    fig, ax = plt.subplots(figsize=(5.6, 0.36 * len(rows) + 1.0))
    ax.imshow(mean, cmap="Greens", vmin=0, vmax=1, aspect="auto")
    for i in range(len(rows)):
        for j in range(len(columns)):
            ax.text(j, i, f"{mean[i, j]:.2f}" + (f" ± {std[i, j]:.2f}" if len(tables) > 1 else ""),
                    ha="center", va="center", fontsize=9, color="white" if mean[i, j] > 0.6 else "black")
    ax.set_xticks(range(len(columns)), [f"{prefix}{c}" for c in columns], fontsize=9)
    ax.set_yticks(range(len(rows)), list(rows), fontsize=9)
    ax.xaxis.tick_top()
    if chance is not None:
        ax.set_xlabel(f"chance: {chance:g}; mean ± std over seeds" if len(tables) > 1 else f"chance: {chance:g}",
                      fontsize=8)
    ax.tick_params(length=0)
    fig.tight_layout()
    return fig


def layer_name(i: int, n: int, sep: str = " ") -> str:
    """Weight layer ``i`` (from 0) of ``n`` as the figures name it: "layer 1", ..., "layer 3
    (output)" for the last (``sep`` before the bracket: a newline under a bar), never PyTorch's
    parameter name ("4.weight")."""
    return f"layer {i + 1}" + (f"{sep}(output)" if i == n - 1 else "")


def layer_bars(values: dict[str, np.ndarray], layers: list[str], ylabel: str, log: bool = False,
               hidden: bool = False) -> plt.Figure:
    """Grouped bars per layer: ``values`` label -> ``[seeds, L]`` (mean, error bar = std over
    seeds), the legend above the axes; ``log``: a log scale from 0.001, for shares that differ by
    orders of magnitude; ``hidden``: the layers between hidden layers (all but the first and the
    last) shaded and named "reuse is read here", as the reuse diagram shades them. (Chapter 4:
    overlaps and densities per layer.)"""
    fig, ax = plt.subplots(figsize=(min(COLUMN, 1.3 * len(layers) + 2.6), 3.0))
    if hidden and len(layers) > 2:
        ax.axvspan(0.5, len(layers) - 1.5, color="#f2f2f2", zorder=0)
        ax.text((len(layers) - 1) / 2, 0.97, "reuse is read here", ha="center", va="top", fontsize=8,
                color="#555555", transform=ax.get_xaxis_transform())
    n = len(values)
    for i, (label, v) in enumerate(values.items()):
        v = np.atleast_2d(v)
        ax.bar(np.arange(len(layers)) + (i - (n - 1) / 2) * 0.8 / n, v.mean(0), 0.8 / n,
               yerr=v.std(0) if len(v) > 1 else None, capsize=2, label=label)
    names = [layer_name(i, len(layers), "\n") for i in range(len(layers))]
    ax.set_xticks(range(len(layers)), names, fontsize=9)
    ax.set(ylabel=ylabel, ylim=(1e-3, 1) if log else (0, 1), yscale="log" if log else "linear")
    ax.legend(fontsize=8, loc="lower left", bbox_to_anchor=(0, 1.01), ncol=min(n, 2), frameon=False)
    fig.tight_layout()
    return fig


def input_usage(first_layer: np.ndarray, names: list[str]) -> plt.Figure:
    """Which inputs each mask keeps: ``first_layer [masks, width, 42]`` (0/1) -> a row per mask, a
    column per input unit, coloured by the share of that input's outgoing weights the mask keeps."""
    share = first_layer.mean(1)  # [masks, 42]
    fig, ax = plt.subplots(figsize=(COLUMN, 0.45 * len(names) + 1.3))
    top = max(0.05, float(np.ceil(share.max() * 20) / 20))  # the colour scale ends near the data's top
    im = ax.imshow(share, cmap="Purples", vmin=0, vmax=top, aspect="auto")
    groups = ["a: tens", "a: ones", "b: tens", "b: ones"]
    ax.set_xticks([4.5 + 10 * k for k in range(4)] + [40, 41], groups + ["+", "×"], fontsize=8)
    for tick in ax.get_xticklabels()[-2:]:  # the operation's two units: one character each, so larger
        tick.set_fontsize(11)
    ax.set_xticks([b - 0.5 for b in (10, 20, 30, 40)], minor=True)
    ax.tick_params(which="major", length=0)
    ax.grid(which="minor", axis="x", color="white", lw=2)
    ax.set_yticks(range(len(names)), [f"{n} mask" for n in names], fontsize=9)
    ax.set_xlabel("input unit (one-hot digits 0-9 of each number, then the operation)", fontsize=8)
    fig.colorbar(im, ax=ax, pad=0.01, fraction=0.04).set_label("share kept", fontsize=8)
    fig.tight_layout()
    return fig


def alpha_sweep(alphas, tables: np.ndarray, ious: np.ndarray, ops, rows,
                controls: np.ndarray | None = None) -> plt.Figure:
    """The regulariser sweep: ``tables [A, rows, ops]`` and ``ious [A, L]`` over ``alphas [A]``;
    left, the + mask alone and removed (accuracy on each operation); right, the + / × IoU per layer.
    ``controls [A, 4, ops]`` (random masks as dense, alone and removed): the middle panel draws, dashed,
    each operation after removing as many random weights as the + mask keeps, the reference the
    removal is read against."""
    fig, axes = plt.subplots(1, 3, figsize=(COLUMN, 3.2), sharex=True)
    # the random removal's lines, one style per operation, so that lines on top of each other both show:
    # the first dashed with crosses, drawn over the second, dotted with larger open squares
    randoms = ({"ls": "--", "marker": "x", "ms": 5, "zorder": 3},
               {"ls": ":", "marker": "s", "ms": 7, "mfc": "none", "zorder": 2})
    learned, keys = {}, []
    for ax, row in zip(axes[:2], (1, 2)):
        for j, op in enumerate(ops):
            line, = ax.plot(alphas, tables[:, row, j], marker="o", label=f"on {op}")
            learned.setdefault(op, line)
            if row == 2 and controls is not None:
                keys.append(ax.plot(alphas, controls[:, 1, j], color=line.get_color(),
                                    label=f"on {op}, random removal as dense (middle)", **randoms[j % 2])[0])
        ax.set(ylim=(-0.02, 1.02), title=rows[row])
    axes[0].set_ylabel("accuracy")
    # one key for the two left panels, under them and legible: the learned mask's lines (solid), then
    # the random removal's (middle panel only)
    fig.legend(handles=[*learned.values(), *keys],
               labels=[f"on {op}: + mask alone (left), removed (middle)" for op in learned]
               + [k.get_label() for k in keys],
               fontsize=9, frameon=False, loc="lower left", ncol=2, bbox_to_anchor=(0.01, 0.0))
    for i in range(ious.shape[1]):
        axes[2].plot(alphas, ious[:, i], marker="o", label=f"layer {i + 1}")
    axes[2].set(ylim=(0, 1.02), title="IoU, + and × masks")
    axes[2].legend(fontsize=9, frameon=False)
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xticks(alphas, [f"{a:g}" for a in alphas], rotation=45)
        ax.minorticks_off()
        ax.set_xlabel(r"$\alpha$")
        ax.title.set_fontsize(9)
        ax.tick_params(labelsize=8)
    fig.tight_layout(rect=(0, 0.16, 1, 1))  # room for the key under the panels
    return fig


def confusion_grid(mats: np.ndarray, titles: list[str], ncols: int = 2) -> plt.Figure:
    """Small multiples of row-normalised confusion matrices ``mats [n, 10, 10]`` (row: true class)."""
    nrows = -(-len(mats) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(2.9 * ncols + 0.6, 2.8 * nrows), squeeze=False)
    for ax, m, t in zip(axes.flat, mats, titles):
        im = ax.imshow(m, cmap="Blues", vmin=0, vmax=1)
        ax.set_title(t, fontsize=9)
        ax.set_xticks(range(10))
        ax.set_yticks(range(10))
        ax.tick_params(labelsize=8)
        ax.set_xlabel("predicted class", fontsize=8)
        ax.set_ylabel("true class", fontsize=8)
    for ax in axes.flat[len(mats):]:
        ax.axis("off")
    fig.tight_layout()
    fig.colorbar(im, ax=axes, fraction=0.03, pad=0.02).set_label("share of the true class's images", fontsize=8)
    return fig


def class_removal(panels: dict[str, dict]) -> plt.Figure:
    """One panel per entry ``title -> accuracy``, ``accuracy`` from
    :func:`modlib.weight_masks.removal_accuracy` (``own``, ``others``, ``reference``, each ``[10]``, and
    ``random_own`` where given): per removed class, the accuracy on it and the mean on the others;
    the reference's mean accuracy; and the removed class's accuracy under the random control mask."""
    fig, axes = plt.subplots(len(panels), 1, figsize=(COLUMN, 2.5 * len(panels) + 0.7), squeeze=False,
                             sharex=True)
    for ax, (title, acc) in zip(axes[:, 0], panels.items()):
        ax.bar(np.arange(10) - 0.2, acc["own"], 0.4, label="the removed class")
        ax.bar(np.arange(10) + 0.2, acc["others"], 0.4, label="the other classes (mean)")
        ax.axhline(acc["reference"].mean(), color="k", ls="--", lw=1, label="all-classes mask (mean)")
        if "random_own" in acc:
            ax.plot(np.arange(10) - 0.2, acc["random_own"], "kx", ms=5,
                    label="the removed class, random mask as dense")
        ax.axhline(0.1, color="grey", ls=":", lw=1, label="chance")
        ax.set(ylabel="accuracy", ylim=(0, 1.05))
        ax.set_title(title, fontsize=9)
        ax.tick_params(labelsize=8)
    axes[-1, 0].set_xticks(range(10))
    axes[-1, 0].set_xlabel("class whose mask was removed", fontsize=9)
    axes[0, 0].legend(fontsize=8, loc="lower left", bbox_to_anchor=(0, 1.12), ncol=2, frameon=False)
    fig.tight_layout()
    return fig


def _spread(ax, x, values, **kw):
    """Mean over seeds with the std as whiskers: ``values [seeds]`` at ``x``."""
    v = np.asarray(values, dtype=float)
    return ax.errorbar(x, v.mean(), yerr=v.std() if len(v) > 1 else None, capsize=2, **kw)


def _curve(axes, xs, points: list[dict], marker="o", label=True, ls="-"):
    """The three panels of :func:`width_curve` and :func:`alpha_curve` for one series of points;
    with ``label``, each line is named at its right end (:func:`_end_labels`)."""
    def rel(p, row, col):
        return p["table"][:, row, col] / np.maximum(p["table"][:, 0, col], 1e-9)

    def crel(p, row, col):
        return p["control"][:, row, col] / np.maximum(p["table"][:, 0, col], 1e-9)

    # a random removal (or chance) is drawn dashed with open markers in the colour of the learned
    # line it is read against, as the α sweep's figure draws it; the colour is the operation measured
    # (C0 +, C1 ×, as in :func:`alpha_sweep`), named after the colon ("+ mask removed: ×")
    series = [(axes[0], lambda p: rel(p, 2, 1), "+ mask removed: ×", "C1", False),
              (axes[0], lambda p: crel(p, 1, 1), "random removal: ×", "C1", True),
              (axes[0], lambda p: rel(p, 4, 0), "× mask removed: +", "C0", False),
              (axes[0], lambda p: crel(p, 3, 0), "random removal: +", "C0", True),
              (axes[1], lambda p: rel(p, 2, 0), "+ mask removed: +", "C0", False),
              (axes[1], lambda p: rel(p, 4, 1), "× mask removed: ×", "C1", False),
              (axes[2], lambda p: p["overlap"], "share of + kept by ×", "C2", False),
              (axes[2], lambda p: p["overlap_chance"], "the same, by chance", "C2", True),
              (axes[2], lambda p: p["share"].mean(1), "weights kept", "C4", False)]
    ends = {}  # axis -> [(y at the last point, name, colour)]
    for ax, fn, name, colour, dashed in series:
        ys = [fn(p) for p in points]
        ax.plot(xs, [y.mean() for y in ys], ls="--" if dashed and ls != "none" else ls, color=colour, lw=1.2)
        for x, y in zip(xs, ys):
            _spread(ax, x, y, color=colour, marker=marker, ms=4, lw=0, elinewidth=1,
                    mfc="white" if dashed else colour)
        if label:
            ends.setdefault(ax, []).append((float(ys[-1].mean()), name, colour))
    for ax, entries in ends.items():
        _end_labels(ax, entries)


def _end_labels(ax, entries: list[tuple[float, str, str]], gap: float = 0.13) -> None:
    """Name each line beside the panel's right edge, in its colour, at the height of its last point
    (``entries``: (y, name, colour)), nudged apart so that no two names overlap (``gap``: the least
    distance between them, in shares of the panel's height)."""
    to_axes = ax.transScale + ax.transLimits  # data -> the panel's 0..1 coordinates
    placed = sorted((float(to_axes.transform((1.0, y))[1]), name, colour) for y, name, colour in entries)
    heights = [h for h, _, _ in placed]
    for i in range(1, len(heights)):  # push up where a name would sit on the one below
        heights[i] = max(heights[i], heights[i - 1] + gap)
    shift = max(0.0, heights[-1] - 1.0)  # then down, so that the top one stays in the panel
    for h, (_, name, colour) in zip(heights, placed):
        ax.annotate(name, (1.02, h - shift), xycoords="axes fraction", fontsize=9, color=colour,
                    va="center", ha="left")


def _curve_axes(xlabel: str):
    """Three panels, one above the other, with room on the right for the lines' names."""
    fig, axes = plt.subplots(3, 1, figsize=(COLUMN, 7.2), sharex=True)
    titles = ("the other operation, left after a removal (dashed: random removal)",
              "the own operation, left after its own mask's removal (should fall)", "the + and × masks")
    for ax, title in zip(axes, titles):
        ax.set_title(title, fontsize=10, loc="left")
        ax.tick_params(labelsize=9)
    axes[-1].set_xlabel(xlabel, fontsize=10)
    for ax in axes[:2]:
        ax.set_ylabel("share of the full\nnetwork's accuracy", fontsize=9)
        ax.set_ylim(-0.02, 1.05)
    axes[2].set_ylabel("share of the weights", fontsize=9)
    axes[2].set_yscale("log")  # kept shares of a few percent beside overlaps near one half
    axes[2].set_ylim(1e-3, 1.2)
    return fig, axes


def _finish_curves(fig) -> None:
    """Lay the panels out, leaving room on their right for the lines' names (:func:`_end_labels`)."""
    fig.tight_layout()


def width_curve(points: dict, depth: int = 2, paper: tuple[int, int] = (2000, 4)) -> plt.Figure:
    """The width curve: ``points`` shape -> stacked arrays over seeds (``table [seeds, 5, 2]``,
    ``control [seeds, 4, 2]``, ``share [seeds, 2]``, ``overlap [seeds]``, ``overlap_chance
    [seeds]``; see :func:`modlib.weight_masks.findings.stack`). Top, the other operation's accuracy
    after each mask's removal beside a random removal as dense; middle, the own operation's after the
    removal; bottom (log scale), the share of the + mask's weights the × mask keeps too beside its
    chance level, and the masks' share of the weights kept; x the first layer's width (log scale).
    Networks of ``depth`` hidden layers are joined by lines, each named at its right end; other
    depths are squares (named under the bottom panel); the paper's network (``paper``: width, depth)
    is marked by a dotted vertical line (the random removals are dashed)."""
    fig, axes = _curve_axes("first layer's width")
    main = {h: p for h, p in points.items() if len(h) == depth}
    if main:
        _curve(axes, [h[0] for h in main], list(main.values()))
    others = sorted({len(h) for h in points if len(h) != depth})
    for h, p in points.items():
        if len(h) != depth:
            _curve(axes, [h[0]], [p], marker="s", label=False, ls="none")
    if others:  # the squares named once, under the masks' panel
        axes[2].annotate("squares: " + ", ".join(f"{n} hidden layers" for n in others), (0, -0.42),
                         xycoords="axes fraction", fontsize=9, color="0.3")
    widths = sorted({h[0] for h in points})  # the paper's width is the dotted line, named in the middle panel
    for ax in axes:
        ax.axvline(paper[0], color="k", ls=":", lw=1.0)
        ax.set_xscale("log", base=2)
        ax.set_xticks(widths, [str(w) for w in widths], rotation=45)
        ax.minorticks_off()
    axes[1].annotate(f"paper: {paper[0]}×{paper[1]}", (paper[0], 0.97), xytext=(-3, 0), textcoords="offset points",
                     fontsize=9, ha="right", va="top")
    _finish_curves(fig)
    return fig


def alpha_curve(points: dict, main: float | None = None) -> plt.Figure:
    """The α curve: ``points`` α -> stacked arrays over seeds (as :func:`width_curve`), the same
    networks at every α; ``main``, the page's α, is marked by a dotted vertical line."""
    fig, axes = _curve_axes(r"$\alpha$")
    alphas = sorted(points)
    _curve(axes, alphas, [points[a] for a in alphas])
    for ax in axes:
        if main is not None:
            ax.axvline(main, color="k", ls=":", lw=1.0)
        ax.set_xscale("log")
        ax.set_xticks(alphas, [f"{a:g}" for a in alphas], rotation=45)
        ax.minorticks_off()
    if main is not None:
        axes[1].annotate("the page's α", (main, 0.97), xytext=(-3, 0), textcoords="offset points",
                         fontsize=9, ha="right", va="top")
    _finish_curves(fig)
    return fig


def reuse_control(groups: dict[str, dict[str, np.ndarray]]) -> plt.Figure:
    """The positive control for reuse: one group of bars per network (``groups`` label -> bar label
    -> per-seed values ``[seeds]``, e.g. the hidden layers' IoU of the network's own pair masks, of
    two masks of pair 1, of the copied-weights network's pair masks and of random masks as dense);
    mean over seeds, whiskers the std."""
    fig, ax = plt.subplots(figsize=(COLUMN, 2.8))
    labels = list(dict.fromkeys(k for g in groups.values() for k in g))
    n = len(labels)
    for i, label in enumerate(labels):
        for j, bars in enumerate(groups.values()):
            if label in bars:
                v = np.asarray(bars[label], dtype=float)
                ax.bar(j + (i - (n - 1) / 2) * 0.8 / n, v.mean(), 0.8 / n, yerr=v.std() if len(v) > 1 else None,
                       capsize=2, color=f"C{i}", label=label if j == 0 else None)
    ax.set_xticks(range(len(groups)), list(groups), fontsize=9)
    ax.set(ylabel="IoU of two masks, hidden layers", ylim=(0, 1))
    ax.legend(fontsize=8, loc="lower left", bbox_to_anchor=(0, 1.01), ncol=2, frameon=False)
    fig.tight_layout()
    return fig


def removal_place(drop: np.ndarray, layers: list[str], full: np.ndarray | None = None) -> plt.Figure:
    """Where each class is removed: ``drop [nets, 10, L]``, the class's accuracy lost when its mask
    replaces the all-classes mask in one layer alone, beyond what a second all-classes mask (the
    null) loses there, as a heat map (class x layer, mean over
    networks); ``full [nets, 10]``, the loss under the whole class mask, as a last column."""
    mean = drop.mean(0)
    cols = protocol.cnn_layer_names(layers)
    cols[-1] += "\n(fixed)"
    if full is not None:
        mean = np.concatenate([mean, full.mean(0)[:, None]], axis=1)
        cols.append("whole\nmask")
    fig, ax = plt.subplots(figsize=(min(COLUMN, 1.0 * len(cols) + 1.8), 4.2))
    im = ax.imshow(mean, cmap="Reds", vmin=min(0.0, float(mean.min())), vmax=max(0.05, float(mean.max())),
                   aspect="auto")
    for i in range(mean.shape[0]):
        for j in range(mean.shape[1]):  # white on the dark cells, where black would not read
            cell = round(float(mean[i, j]), 2) + 0.0  # -0.00 prints as 0.00
            ax.text(j, i, f"{cell:.2f}", ha="center", va="center", fontsize=9,
                    color="white" if im.norm(mean[i, j]) > 0.6 else "black")
    ax.set_xticks(range(len(cols)), cols, fontsize=8)
    ax.set_yticks(range(10))
    ax.set_ylabel("removed class", fontsize=8)
    ax.tick_params(labelsize=8, length=0)
    bar = fig.colorbar(im, ax=ax, pad=0.02, fraction=0.05)
    bar.set_label("accuracy lost on the class\n(layers: beyond the null's)", fontsize=8)
    fig.tight_layout()
    return fig


# --- concept diagrams (no data, no training): the page's methods drawn ----------------------------

_KEPT, _OTHER, _GONE = "#d95f02", "#1b9e77", "#cccccc"


def diagram_mask_and_complement(seed: int = 0) -> plt.Figure:
    """Concept diagram of chapter 4's two uses of one mask ``m`` on a layer's frozen weights ``W``
    (random numbers, an illustration): the module alone computes with ``W ⊙ m``, the module removed
    (the ablation) with ``W ⊙ (1 - m)``. The two together are the whole layer."""
    g = np.random.default_rng(seed)
    w = g.normal(size=(6, 8))
    m = (g.random((6, 8)) < 0.35).astype(float)
    limit = np.abs(w).max()
    fig, axes = plt.subplots(1, 4, figsize=(COLUMN, 2.1))
    panels = [(w, "RdBu", -limit, limit, "frozen weights $W$"),
              (m, "Greys", 0, 1, "mask $m$\n(black: kept)"),
              (w * m, "RdBu", -limit, limit, "module alone\n$W \\odot m$"),
              (w * (1 - m), "RdBu", -limit, limit, "module removed\n$W \\odot (1 - m)$")]
    for ax, (values, cmap, lo, hi, title) in zip(axes, panels):
        ax.imshow(values, cmap=cmap, vmin=lo, vmax=hi)
        ax.set_title(title, fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
    axes[0].set_ylabel("outputs", fontsize=8)
    axes[0].set_xlabel("inputs", fontsize=8)
    for ax in axes[2:]:
        for spine in ax.spines.values():
            spine.set_edgecolor(_KEPT if ax is axes[2] else _OTHER)
            spine.set_linewidth(2)
    fig.tight_layout(w_pad=1.2)
    return fig


def _net(ax, widths, edges, title, removed=()):
    """A small layered network on ``ax``: ``widths`` nodes per layer; ``edges`` maps a colour to the
    set of (layer, i, j) edges drawn in it (the rest light grey); ``removed`` edges are dashed."""
    xs = np.arange(len(widths))
    pos = [[(x, (i - (n - 1) / 2) * 0.8) for i in range(n)] for x, n in zip(xs, widths)]
    coloured = {e: c for c, es in edges.items() for e in es}
    for layer in range(len(widths) - 1):
        for i, a in enumerate(pos[layer]):
            for j, b in enumerate(pos[layer + 1]):
                e = (layer, i, j)
                colour = coloured.get(e)
                if e in removed:
                    ax.plot(*zip(a, b), color="#777777", lw=1.1, ls=(0, (2, 2)), zorder=2)
                elif colour is None:
                    ax.plot(*zip(a, b), color=_GONE, lw=0.6, zorder=1)
                else:
                    ax.plot(*zip(a, b), color=colour, lw=1.8, zorder=2)
    for layer in pos:
        ax.scatter(*zip(*layer), s=40, color="white", edgecolor="black", lw=0.8, zorder=3)
    ax.set_title(title, fontsize=8)
    ax.set_xlim(-0.4, len(widths) - 0.6)
    ax.set_ylim(-3.1, 2.0)
    ax.axis("off")
    return pos


# edges of a made-up "+ module" and "× module" in a 4-5-5-3 network (layer, from, to)
_PLUS = {(0, 0, 0), (0, 1, 1), (0, 3, 1), (1, 0, 0), (1, 1, 1), (1, 1, 2), (2, 0, 0), (2, 2, 1)}
_TIMES = {(0, 2, 3), (0, 3, 4), (0, 1, 3), (1, 3, 3), (1, 4, 4), (1, 3, 2), (2, 3, 1), (2, 4, 2), (2, 2, 2)}


def diagram_specialization() -> plt.Figure:
    """Concept diagram of the specialization test on the two-operation task (made-up modules in a
    tiny network, an illustration): the + mask's module alone, then the network with that module
    removed, each scored on + and on ×, with what the paper's specialization predicts."""
    fig, axes = plt.subplots(1, 3, figsize=(COLUMN, 2.5))
    widths = (4, 5, 5, 3)
    _net(axes[0], widths, {_KEPT: _PLUS, _OTHER: _TIMES}, "trained network\n(both operations)")
    _net(axes[1], widths, {_KEPT: _PLUS}, "+ module alone")
    _net(axes[2], widths, {_OTHER: _TIMES}, "+ module removed", removed=_PLUS)
    notes = ["inputs: $a$, $b$, + or ×\noutputs: two digits",
             "should: + high, × low\n(test 1: it works alone)",
             "should: + low, × high\n(test 2: removal spares ×)"]
    for ax, note in zip(axes, notes):
        ax.text(1.5, -3.05, note, ha="center", va="bottom", fontsize=7)
    fig.legend(handles=[plt.Line2D([], [], color=_KEPT, lw=2, label="+ mask keeps"),
                        plt.Line2D([], [], color=_OTHER, lw=2, label="the rest, e.g. what × uses")],
               loc="lower center", ncol=2, fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def diagram_reuse() -> plt.Figure:
    """Concept diagram of the reuse test on the double addition (made-up masks, an illustration):
    the network is run once per pair with the other pair's digits set to zero; the pair-1 and
    pair-2 masks either share their hidden-layer weights (reuse: high IoU) or not (no reuse: low
    IoU). The first and last layers differ by construction, so only the hidden layers are read."""
    fig, axes = plt.subplots(1, 2, figsize=(COLUMN, 2.6))
    widths = (4, 5, 5, 4)
    inputs1 = {(0, 0, 1), (0, 1, 2), (0, 0, 2)}
    inputs2 = {(0, 2, 1), (0, 3, 2), (0, 3, 1)}
    out1, out2 = {(2, 1, 0), (2, 2, 1)}, {(2, 1, 2), (2, 2, 3)}
    shared = {(1, 1, 1), (1, 2, 2), (1, 1, 2)}
    p1, p2 = "#1f77b4", "#ff7f0e"
    _net(axes[0], widths, {p1: inputs1 | out1, p2: inputs2 | out2, "#7b3294": shared},
         "reuse: one adder for both pairs\nhidden-layer IoU high")
    sep1 = {(0, 0, 0), (0, 1, 1), (2, 0, 0), (2, 1, 1)} | {(1, 0, 0), (1, 1, 1), (1, 0, 1)}
    sep2 = {(0, 2, 3), (0, 3, 4), (2, 3, 2), (2, 4, 3)} | {(1, 3, 3), (1, 4, 4), (1, 3, 4)}
    _net(axes[1], (4, 5, 5, 4), {p1: sep1, p2: sep2}, "no reuse: a separate adder each\nhidden-layer IoU low")
    for ax in axes:
        ax.text(0, -2.3, "digits of\n$a, b, c, d$", ha="center", va="top", fontsize=7)
        ax.text(3, -2.3, "digits of\nthe two sums", ha="center", va="top", fontsize=7)
        ax.axvspan(0.5, 2.5, color="#f2f2f2", zorder=0)
        ax.set_ylim(-3.1, 2.5)
        ax.text(1.5, 2.0, "hidden layers: read here", ha="center", fontsize=7, color="#555555")
    fig.legend(handles=[plt.Line2D([], [], color=p1, lw=2, label="pair-1 mask"),
                        plt.Line2D([], [], color=p2, lw=2, label="pair-2 mask"),
                        plt.Line2D([], [], color="#7b3294", lw=2, label="kept by both")],
               loc="lower center", ncol=3, fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def diagram_class_removal() -> plt.Figure:
    """Concept diagram of class removal in the CNN (made-up masks in a tiny network standing for
    it, an illustration): the all-classes mask is the reference; the mask for "class 3 removed" is
    trained on the other classes only, with the output layer's mask copied from the reference and
    kept fixed, so it can drop class 3's path only inside the network."""
    fig, axes = plt.subplots(1, 2, figsize=(COLUMN, 2.7))
    widths = (4, 5, 5, 5)
    inner = {(0, 0, 0), (0, 1, 1), (0, 2, 2), (0, 3, 3), (0, 2, 4), (0, 1, 0),
             (1, 0, 0), (1, 1, 1), (1, 2, 2), (1, 3, 3), (1, 4, 4), (1, 2, 3)}
    output = {(2, 0, 0), (2, 1, 1), (2, 2, 2), (2, 3, 3), (2, 4, 4), (2, 1, 0)}
    path3 = {(1, 3, 3), (1, 2, 3)}  # the hidden weights only class 3's output unit reads
    fixed = "#7570b3"
    _net(axes[0], widths, {_OTHER: inner, fixed: output}, "all-classes mask\n(the reference)")
    _net(axes[1], widths, {_OTHER: inner - path3, fixed: output},
         "class 3 removed: trained on\nthe other classes only", removed=path3)
    for ax in axes:
        for k in range(5):
            ax.text(3.25, (k - 2) * 0.8, f"class {k}", va="center", fontsize=7)
        ax.set_xlim(-0.4, 3.9)
    axes[1].text(1.5, -2.5, "class 3's path is cut inside (dashed);\nthe other classes keep theirs",
                 ha="center", va="top", fontsize=7)
    axes[0].text(1.5, -2.5, "test: accuracy per class", ha="center", va="top", fontsize=7)
    fig.legend(handles=[plt.Line2D([], [], color=_OTHER, lw=2, label="kept, trained"),
                        plt.Line2D([], [], color=fixed, lw=2, label="output layer: copied, fixed")],
               loc="lower center", ncol=2, fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig
