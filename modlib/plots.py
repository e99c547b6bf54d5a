"""Figures for the chapters. Each figure's caption names the profile, device and seeds that produced
it (:func:`glue`); a figure shown without a caption (an interactive view) carries :func:`stamp`."""

from __future__ import annotations

import re
import matplotlib.pyplot as plt
import numpy as np
from matplotlib import animation
from matplotlib.colors import ListedColormap

from modlib import agreement, data, toy

POSITIVE, NEGATIVE = "#1f77b4", "#ff7f0e"  # Y1 = 1 (blue circles), Y1 = 0 (orange triangles), as in Fig. 4
BOUNDARY_CMAP = ListedColormap(plt.get_cmap("RdBu")(np.linspace(0.25, 0.75, 256)))
FORMULATION_NAMES = {"a": "(a) paper text: X = Y - U[0,1]", "b": "(b) Playground: sign(x1), pushed 0.3"}
# Every chapter's figures: at most three panels a row, lettering at least 8 pt, and at most COLUMN
# inches wide: the page's text column is 6.8 in at 100 dpi, and the inline backend's tight bounding
# box adds 0.1 in of padding on each side. Profile, device and seeds go into the captions (glue).
COLUMN = 6.6


def glue(name: str, value) -> None:
    """Hand ``value`` to the book under ``name``: a figure for a ``{glue:figure}`` with a numbered
    caption, text (e.g. a provenance line) for ``{glue:text}`` in a caption or sentence.

    A figure is also shown (and closed) where it is drawn, so a notebook run in Colab or Jupyter, where
    the book's captions are not rendered, still shows it; the book hides that copy (the cell is tagged
    ``remove-output``) and shows the captioned one. Without myst-nb (Colab) text is not shown."""
    try:
        from myst_nb import glue as glue_to_book
    except ImportError:
        glue_to_book = None
    if isinstance(value, plt.Figure):
        if glue_to_book is None:
            from IPython.display import display

            display(value)
        else:
            glue_to_book(name, value)
        plt.close(value)
    elif glue_to_book is not None:
        glue_to_book(name, value, display=False)


def stamp(fig: plt.Figure, provenance: str) -> plt.Figure:
    """Write ``provenance`` (profile, device, seeds) in the figure's bottom-right corner."""
    fig.text(0.995, 0.005, provenance, ha="right", va="bottom", fontsize=7, color="0.4")
    return fig


def _held_out(ax: plt.Axes, formulation: str, design: str = "binary") -> None:
    """Outline the held-out test cell (x1 > 0, its band of x2) with a dashed rectangle."""
    high = data.EXTENT[formulation][1]
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
        ax.set(xlabel="", ylabel="")
        ax.tick_params(labelsize=8)
    for ax in axes[-1]:
        ax.set_xlabel("$x_1$", fontsize=9)
    for ax in axes[:, 0]:
        ax.set_ylabel("$x_2$", fontsize=9)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    return fig


def boundary_steps(sweep, formulation: str, activation: str = "relu", loss: str = "mse",
                   reveal: float = 1.0, design: str = "binary", seed: int = 0,
                   n: int = 6) -> plt.Figure:
    """The paper's Fig. 5: one seed's boundary after ``n`` of the stored snapshot epochs (from the
    first to the last, about evenly spaced on the log scale the snapshots are taken at)."""
    a = sweep.arrays(activation, loss, formulation, reveal, design)
    k_all = len(a["snapshot_epochs"])
    ks = sorted({int(round(k)) for k in np.linspace(0, k_all - 1, min(n, k_all))})
    titles = [f"epoch {int(a['snapshot_epochs'][k])}" for k in ks]
    return small_multiples(a, formulation, [(seed, k) for k in ks], titles, design=design)


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
    return small_multiples(a, formulation, [(s, snaps.index(epoch)) for s in seeds], titles,
                           design=design)


CONTROL_NAMES = {"middle": "middle control", "corner": "corner control",
                 "even": "even-corner control"}
CONTROL_STYLES = {"middle": "--", "corner": ":", "even": "-."}


def condition_label(design: str, reveal: float) -> str:
    """How the figures name a training set."""
    if design in CONTROL_NAMES:
        return CONTROL_NAMES[design]
    return "paper's setting" if reveal == 1 else f"reveal {reveal:g}"


def seed_spread(sweep, activation: str = "relu", loss: str = "mse",
                threshold: float | None = None) -> plt.Figure:
    """Every seed's held-out-cell accuracy in the paper's setting beside the controls (the ternary
    ones; reveal 0, the held-out cell in training), one panel per formulation, same axes;
    ``threshold``: a dotted line where a seed counts as generalising."""
    s = sweep.settings
    fig, axes = plt.subplots(1, len(s.formulations), figsize=(COLUMN, 3.1), sharex=True,
                             sharey=True, squeeze=False, layout="constrained")
    bins = np.linspace(0, 1, 21)
    styles = [(("binary", 1.0), dict(color=NEGATIVE, alpha=0.6)),
              *[((c, 1.0), dict(histtype="step", color="k", lw=1.5, ls=CONTROL_STYLES[c]))
                for c in s.controls],
              (("binary", min(s.reveals)), dict(histtype="step", color="0.55", lw=1.5))]
    for ax, f in zip(axes[0], s.formulations):
        for (design, r), style in styles:
            if (design, r) not in s.conditions:
                continue
            acc = sweep.arrays(activation, loss, f, r, design)["test_acc"]
            ax.hist(np.clip(acc, 0, 1), bins=bins, label=condition_label(design, r), **style)
        if threshold is not None:
            ax.axvline(threshold, color="0.3", ls=":", lw=1, label=f"generalises (≥ {threshold:g})")
        ax.set_title(FORMULATION_NAMES[f], fontsize=9)
        ax.set_xlabel("held-out-cell accuracy of one seed", fontsize=9)
        ax.tick_params(labelsize=8)
    axes[0, 0].set_ylabel("seeds", fontsize=9)
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=2,
               fontsize=8, frameon=False)
    return fig


def reliance_curves(sweep, activation: str, loss: str, formulation: str, ax: plt.Axes | None = None,
                    legend: bool = True, metric: str = "reliance"):
    """The median of ``metric`` (reliance on x2, or ``test_acc_curve``) over seeds against the
    epoch, one line per reveal level and a black one per ternary control; the band (25-75% of
    seeds) only for the paper's setting and the controls, so the lines stay readable."""
    ax = ax or plt.subplots(figsize=(COLUMN / 2, 3))[1]
    cmap = plt.get_cmap("viridis")
    conds = sweep.settings.conditions
    reveals = sweep.settings.reveals
    for design, r in conds:
        a = sweep.arrays(activation, loss, formulation, r, design)
        epochs = a["curve_epochs"].astype(float)
        epochs[0] = 0.5  # show the initialisation on the log axis
        q25, med, q75 = np.percentile(a[metric], [25, 50, 75], axis=0)
        bits = toy.mutual_information(design, r)
        if design in CONTROL_STYLES:
            colour, style = "k", CONTROL_STYLES[design]
            label = f"{design} ({bits:.3f} bits)"
        else:
            colour = cmap(0.9 * reveals.index(r) / max(len(reveals) - 1, 1))
            style, label = "-", f"{r:g} ({bits:.3f} bits)"
        ax.plot(epochs, med, color=colour, lw=1.5, ls=style, label=label)
        if design != "binary" or r in (max(reveals), min(reveals)):
            ax.fill_between(epochs, q25, q75, color=colour, alpha=0.12, lw=0)
    ax.set_xscale("log")
    ax.set_xlabel("epoch (log scale; init. at 0.5)", fontsize=9)
    ylabel = "reliance $R$ on $x_2$" if metric == "reliance" else "held-out-cell accuracy"
    ax.set_ylabel(f"{ylabel} (median)", fontsize=9)
    ax.set_title(f"{FORMULATION_NAMES[formulation]}", fontsize=9)
    ax.tick_params(labelsize=8)
    ax.grid(alpha=0.3)
    if legend:
        ax.legend(fontsize=8, title="reveal ($I(Y_1;Y_2)$)", title_fontsize=8)
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
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=4,
               fontsize=8, frameon=False, title="training set: reveal ($I(Y_1;Y_2)$)",
               title_fontsize=8)
    return fig


def training_curves(sweep, activation: str = "relu", loss: str = "mse",
                    mark: int | None = None) -> plt.Figure:
    """Median held-out accuracy (top) and reliance (bottom) over seeds against the epoch, one
    column per formulation, one line per training set (:func:`reliance_curves`); ``mark``: a
    dotted line at that epoch (the paper's training length)."""
    fs = sweep.settings.formulations
    fig, axes = plt.subplots(2, len(fs), figsize=(COLUMN, 6.2), sharex=True, sharey="row",
                             squeeze=False, layout="constrained")
    for j, f in enumerate(fs):
        for i, metric in enumerate(("test_acc_curve", "reliance")):
            ax = axes[i, j]
            reliance_curves(sweep, activation, loss, f, ax=ax, legend=False, metric=metric)
            if mark is not None:
                ax.axvline(mark, color="0.3", ls=":", lw=1)
            if i == 0:
                ax.set_xlabel("")
            else:
                ax.set_title("")
            if j > 0:
                ax.set_ylabel("")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=4,
               fontsize=8, frameon=False, title="training set: reveal (I(Y₁;Y₂))",
               title_fontsize=8)
    return fig


def sweep_summary(sweep, metric: str = "test_acc", ylabel: str = "held-out-cell accuracy") -> plt.Figure:
    """``metric`` (mean over seeds, error bar = std) against how much of the held-out cell training
    sees (reveal), with the ternary controls left of the paper's setting; one panel per formulation
    on the same y-axis, one line per (activation, loss), nudged sideways so that the error bars do
    not hide each other; one legend below the panels."""
    s = sweep.settings
    fig, axes = plt.subplots(1, len(s.formulations), figsize=(COLUMN, 3.2), sharey=True,
                             squeeze=False, layout="constrained")
    n = len(sweep.groups)
    at = {c: 1.2 + 0.3 * i for i, c in enumerate(s.controls)}  # the controls on the axis
    for ax, f in zip(axes[0], s.formulations):
        for g, (activation, loss) in enumerate(sweep.groups):
            vals = np.array([sweep.arrays(activation, loss, f, r)[metric] for r in s.reveals])  # [R, S]
            nudge = (g - (n - 1) / 2) * 0.012
            line = ax.errorbar(np.array(s.reveals) + nudge, vals.mean(1), yerr=vals.std(1),
                               marker="o", ms=3, capsize=2, lw=1.2, label=f"{activation}, {loss}")
            for c, x in at.items():
                v = sweep.arrays(activation, loss, f, 1.0, c)[metric]
                ax.errorbar([x + nudge], [v.mean()], yerr=[v.std()], marker="s", ms=4,
                            capsize=2, mfc="white", color=line[0].get_color())
        ax.set_xticks([*at.values(), 1.0, 0.5, 0.0], [*at, "1", "0.5", "0"])
        if at:
            ax.axvline(1.1, color="0.6", lw=0.8)  # the controls | the reveal levels
        ax.set_xlabel("reveal (1: paper's setting; 0: cell in training)", fontsize=9)
        ax.set_title(FORMULATION_NAMES[f], fontsize=9)
        ax.invert_xaxis()
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=8)
    axes[0, 0].set_ylabel(ylabel, fontsize=9)
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=n,
               fontsize=8, frameon=False)
    return fig


def source_block(*functions) -> str:
    """The source of ``functions`` as one Markdown code block for the page (show it with
    ``IPython.display.Markdown``): each headed by a comment naming it, docstrings left out. The
    functions' code is kept within the page's 75-character code lines in ``modlib`` itself."""
    import ast
    import inspect
    import textwrap

    parts = []
    for function in functions:
        source = textwrap.dedent(inspect.getsource(function))
        lines = source.splitlines()
        first = ast.parse(source).body[0].body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                and isinstance(first.value.value, str):
            del lines[first.lineno - 1:first.end_lineno]
        parts.append(f"# {function.__module__}.{function.__qualname__}\n" + "\n".join(lines))
    return "```python\n" + "\n\n".join(parts) + "\n```"


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
    return _jshtml(fig, draw, n_frames, 700)


def _jshtml(fig: plt.Figure, draw, frames: int, interval: int):
    """``draw(k)`` for each frame as a kernel-free JavaScript animation (``IPython.display.HTML``)."""
    from IPython.display import HTML

    anim = animation.FuncAnimation(fig, draw, frames=frames, interval=interval, blit=False)
    # matplotlib links Font Awesome from a CDN for the player's buttons; the book's theme has it already
    html = re.sub(r"<link[^>]*font-awesome[^>]*>", "", anim.to_jshtml(default_mode="once"))
    plt.close(fig)
    return HTML(html)


# --- weight-mask chapter ---------------------------------------------------------------------------


def times(label: str) -> str:
    """The page's notation for an operation name or row label: "×" where the code writes "*"."""
    return label.replace("*", "×")


def accuracy_table(tables: np.ndarray, rows, columns, chance: float | None = None) -> plt.Figure:
    """Heat map of accuracies ``tables [seeds, rows, columns]``: mean, with the std over seeds;
    ``chance``, the accuracy of guessing, is named under the table. (Chapter 4's ablation tables.)"""
    mean, std = tables.mean(0), tables.std(0)
    fig, ax = plt.subplots(figsize=(5.6, 0.36 * len(rows) + 1.0))
    ax.imshow(mean, cmap="Greens", vmin=0, vmax=1, aspect="auto")
    for i in range(len(rows)):
        for j in range(len(columns)):
            ax.text(j, i, f"{mean[i, j]:.2f}" + (f" ± {std[i, j]:.2f}" if len(tables) > 1 else ""),
                    ha="center", va="center", fontsize=9, color="white" if mean[i, j] > 0.6 else "black")
    ax.set_xticks(range(len(columns)), [f"accuracy on {times(c)}" for c in columns], fontsize=9)
    ax.set_yticks(range(len(rows)), [times(r) for r in rows], fontsize=9)
    ax.xaxis.tick_top()
    if chance is not None:
        ax.set_xlabel(f"chance: {chance:g}; mean ± std over seeds" if len(tables) > 1 else f"chance: {chance:g}",
                      fontsize=8)
    ax.tick_params(length=0)
    fig.tight_layout()
    return fig


def layer_bars(values: dict[str, np.ndarray], layers: list[str], ylabel: str, log: bool = False) -> plt.Figure:
    """Grouped bars per layer: ``values`` label -> ``[seeds, L]`` (mean, error bar = std over
    seeds), the legend above the axes; ``log``: a log scale from 0.001, for shares that differ by
    orders of magnitude. (Chapter 4: overlaps and densities per layer.)"""
    fig, ax = plt.subplots(figsize=(min(COLUMN, 1.3 * len(layers) + 2.6), 3.0))
    n = len(values)
    for i, (label, v) in enumerate(values.items()):
        v = np.atleast_2d(v)
        ax.bar(np.arange(len(layers)) + (i - (n - 1) / 2) * 0.8 / n, v.mean(0), 0.8 / n,
               yerr=v.std(0) if len(v) > 1 else None, capsize=2, label=times(label))
    names = [f"layer {i + 1}" + ("\n(output)" if i == len(layers) - 1 else "") for i in range(len(layers))]
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
    ax.set_xticks([b - 0.5 for b in (10, 20, 30, 40)], minor=True)
    ax.tick_params(which="major", length=0)
    ax.grid(which="minor", axis="x", color="white", lw=2)
    ax.set_yticks(range(len(names)), [f"{times(n)} mask" for n in names], fontsize=9)
    ax.set_xlabel("input unit (one-hot digits 0-9 of each number, then the operation)", fontsize=8)
    fig.colorbar(im, ax=ax, pad=0.01, fraction=0.04).set_label("share kept", fontsize=8)
    fig.tight_layout()
    return fig


def alpha_sweep(alphas, tables: np.ndarray, ious: np.ndarray, ops, rows) -> plt.Figure:
    """The regulariser sweep: ``tables [A, rows, ops]`` and ``ious [A, L]`` over ``alphas [A]``;
    left, the + mask alone and removed (accuracy on each operation); right, the + / × IoU per layer."""
    fig, axes = plt.subplots(1, 3, figsize=(COLUMN, 2.5), sharex=True)
    for ax, row in zip(axes[:2], (1, 2)):
        for j, op in enumerate(ops):
            ax.plot(alphas, tables[:, row, j], marker="o", label=f"on {times(op)}")
        ax.set(ylim=(-0.02, 1.02), title=times(rows[row]))
    axes[0].set_ylabel("accuracy")
    axes[0].legend(fontsize=8, frameon=False, loc="center left")
    for i in range(ious.shape[1]):
        axes[2].plot(alphas, ious[:, i], marker="o", label=f"layer {i + 1}")
    axes[2].set(ylim=(0, 1.02), title="IoU, + and × masks")
    axes[2].legend(fontsize=8, frameon=False)
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xticks(alphas, [f"{a:g}" for a in alphas], rotation=45)
        ax.minorticks_off()
        ax.set_xlabel(r"$\alpha$")
        ax.title.set_fontsize(9)
        ax.tick_params(labelsize=8)
    fig.tight_layout()
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
    :func:`modlib.modularity.removal_accuracy` (``own``, ``others``, ``reference``, each ``[10]``, and
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


def mask_concept(seed: int = 0) -> plt.Figure:
    """Concept figure of chapter 4, "The tool": a layer's weights ``W [6, 8]`` (random numbers), a
    binary mask ``m`` of the same shape, and the weights the masked network computes with, ``W * m``."""
    g = np.random.default_rng(seed)
    w = g.normal(size=(6, 8))
    m = (g.random((6, 8)) < 0.45).astype(float)
    fig, axes = plt.subplots(1, 3, figsize=(COLUMN, 2.0))
    limit = np.abs(w).max()
    panels = [(w, "RdBu", -limit, limit, "weights $W$ (frozen)"),
              (m, "Greys", 0, 1, "mask $m$ (black: 1, kept)"),
              (w * m, "RdBu", -limit, limit, r"what the network uses: $W \odot m$")]
    for ax, (values, cmap, lo, hi, title) in zip(axes, panels):
        ax.imshow(values, cmap=cmap, vmin=lo, vmax=hi)
        ax.set_title(title, fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_xlabel("inputs", fontsize=8)
    axes[0].set_ylabel("outputs", fontsize=8)
    fig.text(0.345, 0.5, "×", fontsize=16, ha="center", va="center")
    fig.text(0.665, 0.5, "=", fontsize=16, ha="center", va="center")
    fig.tight_layout(w_pad=2.5)
    return fig


# --- compositional-sprites chapter ------------------------------------------------------------------

SUPPORT_COLOURS = {"in-domain": "#1f77b4", "whole": "#d62728"}


def _image(ax: plt.Axes, img: np.ndarray, title: str | None = None) -> None:
    """Show ``img [3, H, W]`` (floats in [0, 1] or uint8) without axes."""
    img = np.asarray(img)
    img = img / 255 if img.dtype == np.uint8 else np.clip(img, 0, 1)
    ax.imshow(np.transpose(img[:3], (1, 2, 0)), interpolation="nearest")
    ax.set_xticks([]), ax.set_yticks([])
    if title:
        ax.set_title(title, fontsize=8)


def image_grid(rows: dict[str, np.ndarray], titles: list[str] | None = None) -> plt.Figure:
    """One row of images per entry of ``rows`` (label -> ``[N, 3, H, W]``), labelled on the left;
    ``titles`` over the first row's columns. (Chapter 2: sprites, scenes, reconstructions.)"""
    n = max(len(v) for v in rows.values())
    side = min(COLUMN / (n + 0.6), 1.1)
    fig, axes = plt.subplots(len(rows), n, figsize=(side * n + 0.6, side * len(rows) + 0.3),
                             squeeze=False)
    for i, (label, imgs) in enumerate(rows.items()):
        for j in range(n):
            ax = axes[i, j]
            if j < len(imgs):
                _image(ax, imgs[j], titles[j] if titles and i == 0 else None)
            else:
                ax.axis("off")
        axes[i, 0].set_ylabel(label, fontsize=8, rotation=0, ha="right", va="center")
    fig.tight_layout(pad=0.3)
    return fig


def unscaled(z: np.ndarray) -> np.ndarray:
    """Scaled latents ``[..., 5]`` (as the models get them, :func:`modlib.sprites.scale_latents`)
    back to [0, 1] (shape: 0, 0.5 or 1), for plotting over the latent cube."""
    from modlib import sprites

    out = np.array(z, dtype=float)
    for i, name in enumerate(sprites.LATENT_NAMES):
        low, high = sprites.LATENT_RANGES.get(name, (0.0, 2.0))
        out[..., i] = (out[..., i] - low) / (high - low)
    return out


def support_panel(ax: plt.Axes, z: np.ndarray, title: str, dims=((0, 0), (1, 0))) -> None:
    """Scenes' latents ``z [N, 2, 5]`` (in [0, 1]) projected on two latents, ``dims`` =
    ((slot, latent), ...): by default slot 0's x against slot 1's x."""
    from modlib import sprites

    (s0, l0), (s1, l1) = dims
    ax.scatter(z[:, s0, l0], z[:, s1, l1], s=3, alpha=0.5, color="0.2", linewidths=0)
    ax.set(xlim=(-0.03, 1.03), ylim=(-0.03, 1.03), aspect="equal", xticks=[0, 1], yticks=[0, 1])
    ax.set_xlabel(f"slot {s0}: {sprites.LATENT_NAMES[l0]}", fontsize=8, labelpad=-6)
    ax.set_ylabel(f"slot {s1}: {sprites.LATENT_NAMES[l1]}", fontsize=8, labelpad=-4)
    ax.set_title(title, fontsize=9)
    ax.tick_params(labelsize=7)


def supports_figure(samples: dict[str, np.ndarray]) -> plt.Figure:
    """Each training support (title -> latents ``[N, 2, 5]``) as slot-0 x against slot-1 x,
    three panels a row."""
    n = len(samples)
    cols = min(3, n)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(COLUMN, 2.1 * rows), squeeze=False)
    for ax, (title, z) in zip(axes.flat, samples.items()):
        support_panel(ax, z, title)
    for ax in axes.flat[n:]:
        ax.axis("off")
    fig.tight_layout()
    return fig


def r2_curves(runs, rows: list[str], labels: list[str]) -> plt.Figure:
    """R^2 against the epoch (log scale) for ``rows`` of a :class:`SpriteRuns`, one panel each:
    in-domain (blue) and the whole latent cube (red), the mean over seeds with one line per seed
    faint behind it."""
    fig, axes = plt.subplots(1, len(rows), figsize=(COLUMN, 2.5), sharey=True, squeeze=False)
    for ax, row, label in zip(axes[0], rows, labels):
        a = runs.arrays(row)
        for key, name in (("r2_in", "in-domain"), ("r2_whole", "whole")):
            colour = SUPPORT_COLOURS[name]
            ax.plot(a["eval_epochs"], a[key].T, color=colour, alpha=0.25, lw=0.8)
            ax.plot(a["eval_epochs"], a[key].mean(0), color=colour, lw=2, marker="o", ms=3,
                    label=f"{name}")
        ax.set_xscale("log")
        ax.axhline(0, color="0.6", lw=0.6)
        ax.set_title(label, fontsize=9)
        ax.set_xlabel("epoch", fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0, 0].set_ylabel("variance-weighted R²", fontsize=8)
    axes[0, 0].set_ylim(-1.05, 1.0)
    axes[0, 0].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def error_maps(runs, rows: list[str], labels: list[str]) -> plt.Figure:
    """Reconstruction error over the latent slice slot-0 x against slot-1 x (the other latents at
    0.5), mean over seeds, one panel per row on one colour scale; the training scenes' projection
    on the same plane drawn over it."""
    maps = [runs.arrays(r)["slice_mse"].mean(0) for r in rows]
    top = max(float(m.max()) for m in maps)
    fig, axes = plt.subplots(1, len(rows), figsize=(COLUMN, 2.6), squeeze=False)
    for ax, row, label, m in zip(axes[0], rows, labels, maps):
        im = ax.imshow(m, origin="lower", extent=(0, 1, 0, 1), cmap="magma", vmin=0, vmax=top)
        z = unscaled(runs.arrays(row)["train_z"])
        ax.scatter(z[:, 0, 0], z[:, 1, 0], s=2, color="cyan", alpha=0.6, linewidths=0)
        ax.set(xticks=[0, 1], yticks=[0, 1])
        ax.set_xlabel("slot 0: x", fontsize=8, labelpad=-6)
        ax.set_ylabel("slot 1: x", fontsize=8, labelpad=-4)
        ax.set_title(label, fontsize=9)
        ax.tick_params(labelsize=7)
    fig.colorbar(im, ax=axes[0].tolist(), shrink=0.85, label="MSE per pixel").ax.tick_params(labelsize=7)
    return fig


def reconstructions(runs, rows: list[str], labels: list[str], n: int = 6) -> plt.Figure:
    """Unseen scenes from the whole cube (seed 0): the truth, then each row's reconstruction."""
    first = runs.arrays(rows[0])
    images = {"truth": first["shown_true"][:n]}
    for row, label in zip(rows, labels):
        images[label] = runs.arrays(row)["shown_pred"][:n]
    return image_grid(images)


def sharpness_figure(runs, rows: list[str], sharpness: list[float]) -> plt.Figure:
    """R^2 in-domain and on the whole cube against the occlusion's sharpness k (log scale): one
    point per seed, the mean joined by a line."""
    fig, ax = plt.subplots(figsize=(4.2, 2.8))
    for key, name in (("r2_in", "in-domain"), ("r2_whole", "whole")):
        finals = [runs.arrays(r)[key][:, -1] for r in rows]
        colour = SUPPORT_COLOURS[name]
        for k, v in zip(sharpness, finals):
            ax.scatter([k] * len(v), v, color=colour, s=12, alpha=0.5)
        ax.plot(sharpness, [v.mean() for v in finals], color=colour, marker="o", label=name)
    ax.set_xscale("log")
    ax.set_xticks(sharpness, [f"{k:g}" for k in sharpness])
    ax.set_xlabel("sharpness k of the occlusion σ(k·Σa)", fontsize=8)
    ax.set_ylabel("variance-weighted R²", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def support_schematic() -> plt.Figure:
    """Three training supports of a two-slot process with one latent per slot, drawn in the unit
    square (slot 1's latent across, slot 2's up) with each slot's marginal support as a bar on its
    axis: orthogonal lines, a diagonal band, lines with a gap. (Chapter 2's theory page.)"""
    fig, axes = plt.subplots(1, 3, figsize=(COLUMN, 2.4))
    t = np.linspace(0, 1, 2)
    panels = {
        "orthogonal: compositional": [((t, 0.2 + 0 * t), None), ((0.3 + 0 * t, t), None)],
        "diagonal band: compositional": [(None, 0.12)],
        "gap: not compositional": [((np.array([0, 0.25]), [0.2, 0.2]), None),
                                   ((np.array([0.6, 1]), [0.2, 0.2]), None), (([0.8, 0.8], t), None)],
    }
    for ax, (title, parts) in zip(axes, panels.items()):
        covered = []
        for line, band in parts:
            if band is not None:
                ax.fill_between([0, 1], [-band, 1 - band], [band, 1 + band], color="#1f77b4", alpha=0.35,
                                linewidth=0)
                covered.append(((0, 1), (0, 1)))
            else:
                ax.plot(*line, color="#1f77b4", lw=3)
                covered.append(((min(line[0]), max(line[0])), (min(line[1]), max(line[1]))))
        for (x0, x1), (y0, y1) in covered:  # the marginal supports, on the axes
            ax.plot([x0, x1], [-0.05, -0.05], color="black", lw=4, clip_on=False, solid_capstyle="butt")
            ax.plot([-0.05, -0.05], [y0, y1], color="black", lw=4, clip_on=False, solid_capstyle="butt")
        ax.set(xlim=(0, 1), ylim=(0, 1), aspect="equal", xticks=[], yticks=[])
        ax.set_xlabel("$z_1$ (slot 1), 0 to 1", fontsize=8, labelpad=6)
        ax.set_ylabel("$z_2$ (slot 2), 0 to 1", fontsize=8, labelpad=6)
        ax.set_title(title, fontsize=8)
    fig.tight_layout()
    return fig


def visibility_figure(size: int = 32, sharpness: float = 64.0) -> plt.Figure:
    """Why the authors' orthogonal support has a third plane: one sprite of the lower slot (code's
    slot 1) in the bottom-left corner, behind the top slot fixed as on the second plane (a small
    triangle in the corner) and as on the third (a small square in the middle), with near-hard
    occlusion; and, for each, the weight C gives the lower slot, sigmoid(-k * sum_rgb top)."""
    import torch

    from modlib import sprites

    z1 = torch.tensor([[0.05, 0.1, 0.5, 1.0, 0.6]])  # a large square in the bottom-left corner
    contexts = {"second plane": (0, 0, 0, 0, 0), "third plane": (0.5, 0.5, 0.5, 0, 0.5)}
    images = {"lower sprite alone": sprites.render(z1, size)[0]}
    weights = {}
    for name, fixed in contexts.items():
        z = torch.stack([torch.tensor([fixed], dtype=torch.float32), z1], dim=1)  # [1, 2, 5]
        slots = sprites.render_slots(z, size)
        images[f"scene: {name}"] = sprites.soft_occlusion(slots, sharpness)[0]
        weights[name] = torch.sigmoid(-sharpness * slots[0, 0].sum(0))  # [H, W]
    fig, axes = plt.subplots(1, 5, figsize=(COLUMN, 1.9))
    for ax, (title, img) in zip(axes[:3], images.items()):
        _image(ax, img.numpy(), title)
    for ax, (name, wgt) in zip(axes[3:], weights.items()):
        ax.imshow(wgt.numpy(), cmap="gray", vmin=0, vmax=1, interpolation="nearest")
        ax.set_xticks([]), ax.set_yticks([])
        ax.set_title(f"its weight in C:\n{name}", fontsize=8)
    fig.tight_layout(pad=0.3)
    return fig


def animate_rows(runs, rows: list[str], labels: list[str]):
    """A kernel-free view of chapter 2's stored rows, one frame per row: its training support
    (slot-0 x against slot-1 x), its reconstruction error over that plane (mean over seeds, one
    colour scale for all frames) and three unseen scenes with seed 0's reconstructions; the title
    gives R^2 in-domain and on the whole cube (mean over seeds)."""
    top = max(float(runs.arrays(r)["slice_mse"].mean(0).max()) for r in rows)
    fig = plt.figure(figsize=(COLUMN, 2.9), dpi=100)
    grid = fig.add_gridspec(2, 5, width_ratios=[1.5, 1.5, 0.02, 1, 1])
    ax_support, ax_error = fig.add_subplot(grid[:, 0]), fig.add_subplot(grid[:, 1])
    ax_true, ax_pred = fig.add_subplot(grid[0, 3:]), fig.add_subplot(grid[1, 3:])

    def draw(k):
        a = runs.arrays(rows[k])
        for ax in (ax_support, ax_error, ax_true, ax_pred):
            ax.clear()
        support_panel(ax_support, unscaled(a["train_z"]), "training scenes")
        ax_error.imshow(a["slice_mse"].mean(0), origin="lower", extent=(0, 1, 0, 1), cmap="magma",
                        vmin=0, vmax=top)
        ax_error.set(xticks=[0, 1], yticks=[0, 1], title="error (dark: low)")
        ax_error.title.set_fontsize(9)
        ax_error.tick_params(labelsize=7)
        for ax, key, name in ((ax_true, "shown_true", "unseen scenes"), (ax_pred, "shown_pred", "reconstructed")):
            strip = np.concatenate(list(a[key][:3]), axis=2)  # [3, H, 3W]
            _image(ax, strip, name)
        fig.suptitle(f"{labels[k]}: R² {a['r2_in'][:, -1].mean():.2f} in-domain, "
                     f"{a['r2_whole'][:, -1].mean():.2f} whole cube", fontsize=9)
        return []

    draw(0)
    fig.tight_layout()
    return _jshtml(fig, draw, len(rows), 1500)


# --- resists-at-scale chapter (3) -------------------------------------------------------------------

# the paper's Fig. 3: setting A blue (train) and cyan (test), setting B red (train) and brown (test)
AB_COLOURS = {("A", "train"): "#1f77b4", ("A", "test"): "#17becf",
              ("B", "train"): "#d62728", ("B", "test"): "#8c564b"}


def digit_pairs_figure(rows: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]) -> plt.Figure:
    """One row of digit pairs per entry of ``rows`` (label -> ``(x [N, 1, 28, 56], y1 [N], y2
    [N])``), each titled with its labels. (Chapter 3: the MNIST pairs of settings A and B.)"""
    n = max(len(v[0]) for v in rows.values())
    fig, axes = plt.subplots(len(rows), n, figsize=(COLUMN, 0.75 * len(rows) + 0.2), squeeze=False)
    for i, (label, (x, y1, y2)) in enumerate(rows.items()):
        for j, ax in enumerate(axes[i]):
            ax.imshow(x[j, 0], cmap="gray_r", vmin=0, vmax=1, interpolation="nearest")
            ax.axvline(27.5, color="0.7", lw=0.5)
            ax.set_xticks([]), ax.set_yticks([])
            ax.set_title(f"Y1={int(y1[j])}, Y2={int(y2[j])}", fontsize=7, pad=2)
        axes[i, 0].set_ylabel(label, fontsize=8, rotation=0, ha="right", va="center")
    fig.tight_layout(pad=0.3)
    return fig


def ab_curves(ax: plt.Axes, runs, experiment: str, seed: int | None = None) -> None:
    """Training and test accuracy against the step for settings A and B of ``experiment``: the
    mean over seeds with a band of one standard deviation, or one ``seed``'s curves."""
    for setting in ("A", "B"):
        a = runs.arrays(f"{experiment}-{setting}")
        for split in ("train", "test"):
            values = a[f"acc_{split}"]
            colour = AB_COLOURS[setting, split]
            if seed is None:
                mean, std = values.mean(0), values.std(0)
                ax.fill_between(a["eval_steps"], mean - std, mean + std, color=colour, alpha=0.2, lw=0)
                ax.plot(a["eval_steps"], mean, color=colour, lw=1.5, label=f"{split} {setting}")
            else:
                ax.plot(a["eval_steps"], values[seed], color=colour, lw=1.2, label=f"{split} {setting}")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("training step", fontsize=8)
    ax.set_ylabel("accuracy", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3)


def accuracy_curves(runs, experiment: str, log: bool = False) -> plt.Figure:
    """The paper's Fig. 3 for one experiment of a :class:`ResistRuns` (``"mnist"`` or
    ``"scan"``): accuracy on training-distribution and test data in settings A and B."""
    fig, ax = plt.subplots(figsize=(COLUMN * 0.75, 2.8))
    ab_curves(ax, runs, experiment)
    if log:
        ax.set_xscale("symlog", linthresh=10)
        ax.set_xlim(left=0)
    # where the curves are not: top left of SCAN's late rise, bottom right of MNIST's early one
    ax.legend(fontsize=7, ncol=2, loc="upper left" if log else "lower right")
    fig.tight_layout()
    return fig


def attention_map(weights: np.ndarray, words: list[str], actions: list[str], ax: plt.Axes) -> None:
    """Attention ``weights [T, S]`` of one translation: output actions down, command words across."""
    ax.imshow(weights[:len(actions), :len(words)], cmap="Greys", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(len(words)), words, rotation=45, ha="right", fontsize=7)
    ax.set_yticks(range(len(actions)), [ACTION_SHORT.get(a, a) for a in actions], fontsize=7)


def animate_seeds(runs):
    """A kernel-free view of chapter 3's stored results, one frame per seed: that seed's MNIST and
    SCAN curves in settings A and B."""
    seeds = len(runs.arrays("mnist-A")["acc_train"])
    fig, axes = plt.subplots(1, 2, figsize=(COLUMN, 2.6), dpi=100)

    def draw(k):
        for ax, experiment in zip(axes, ("mnist", "scan")):
            ax.clear()
            ab_curves(ax, runs, experiment, seed=k)
            ax.set_title(f"{experiment.upper()}, seed {k}", fontsize=9)
        axes[1].set_xscale("symlog", linthresh=10)
        axes[1].set_xlim(left=0)
        axes[1].legend(fontsize=6, loc="center right")
        return []

    draw(0)
    fig.tight_layout()
    return _jshtml(fig, draw, seeds, 1500)


ACTION_SHORT = {"I_WALK": "WALK", "I_LOOK": "LOOK", "I_RUN": "RUN", "I_JUMP": "JUMP",
                "I_TURN_LEFT": "L", "I_TURN_RIGHT": "R"}


def compact_actions(actions: str) -> str:
    """A SCAN action sequence for a table: turns as L and R, and runs of a repeated action or pair
    of actions written once with a count, e.g. ``"(R JUMP) ×8 L"``."""
    tokens = [ACTION_SHORT.get(a, a) for a in actions.split()]
    out, i = [], 0
    while i < len(tokens):
        for period in (2, 1):
            unit = tokens[i:i + period]
            count = 1
            while len(unit) == period and tokens[i + count * period:i + (count + 1) * period] == unit:
                count += 1
            if count > 1:
                out.append(f"({' '.join(unit)}) ×{count}" if period == 2 else f"{unit[0]} ×{count}")
                i += count * period
                break
        else:
            out.append(tokens[i])
            i += 1
    return " ".join(out)


def swap_curves(runs) -> plt.Figure:
    """Chapter 3: the CNN's accuracy on training-distribution pairs (solid) and on the same pairs
    with the right digit replaced by a random one (dashed), settings A and B, against the step:
    means over seeds."""
    fig, ax = plt.subplots(figsize=(COLUMN * 0.75, 2.6))
    for setting in ("A", "B"):
        a = runs.arrays(f"mnist-{setting}")
        colour = AB_COLOURS[setting, "train"]
        ax.plot(a["eval_steps"], a["acc_train"].mean(0), color=colour, lw=1.5, label=f"train {setting}")
        ax.plot(a["eval_steps"], a["acc_swapped"].mean(0), color=colour, lw=1.5, ls="--",
                label=f"train {setting}, right digit replaced")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("training step", fontsize=8)
    ax.set_ylabel("accuracy", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def scan_detail(runs) -> plt.Figure:
    """Chapter 3: SCAN accuracy on training commands of more than one word (left; the one-word
    "jump" rows left out) and on test commands that setting B never trained on (right), settings A
    and B against the step: the mean over seeds with a band of one standard deviation."""
    fig, axes = plt.subplots(1, 2, figsize=(COLUMN, 2.6), sharey=True)
    for ax, (key, title, split) in zip(axes, (("acc_train_long", "training, more than one word", "train"),
                                              ("acc_unseen", "test, never in B's training", "test"))):
        for setting in ("A", "B"):
            a = runs.arrays(f"scan-{setting}")
            mean, std = a[key].mean(0), a[key].std(0)
            colour = AB_COLOURS[setting, split]
            ax.fill_between(a["eval_steps"], mean - std, mean + std, color=colour, alpha=0.2, lw=0)
            ax.plot(a["eval_steps"], mean, color=colour, lw=1.5, label=f"setting {setting}")
        ax.set_xscale("symlog", linthresh=10)
        ax.set_xlim(left=0)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("training step", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="center right")
    axes[0].set_ylabel("accuracy", fontsize=8)
    axes[0].set_ylim(-0.02, 1.02)
    fig.tight_layout()
    return fig


# --- chapter 5: structural compositionality -------------------------------------------------------

TARGET, OTHER = "#1f77b4", "#ff7f0e"  # the subnetwork's own subroutine, the other one


def odd_one_out_problems(problems: dict[str, dict], titles: dict[str, str]) -> plt.Figure:
    """One vision problem per row (``problems``: kind -> a set from
    :func:`modlib.structural_compositionality.problems`, its first problem shown), its four panels
    side by side, the odd one framed in orange; ``titles``: kind -> the row's label."""
    fig, axes = plt.subplots(len(problems), 4, figsize=(COLUMN * 0.62, 1.05 * len(problems)), squeeze=False)
    for row, (kind, p) in zip(axes, problems.items()):
        for i, ax in enumerate(row):
            ax.imshow(p["images"][0, i].permute(1, 2, 0).numpy())
            ax.set_xticks([])
            ax.set_yticks([])
            for side in ax.spines.values():
                odd = i == int(p["answer"][0])
                side.set_edgecolor(OTHER if odd else "0.7")
                side.set_linewidth(3 if odd else 0.5)
        row[0].set_ylabel(titles[kind], rotation=0, ha="right", va="center", fontsize=8)
    fig.subplots_adjust(wspace=0.05, hspace=0.08, left=0.38)
    return fig


def subnetwork_bars(table, paper: dict | None = None) -> plt.Figure:
    """The paper's results figure: per (rule, subroutine), the subnetwork's and the ablated model's
    accuracy on the target (blue) and the other subroutine (orange), mean over runs (bars) and each
    run (dots), chance dashed; the paper's means as black diamonds where ``paper`` has them.
    ``table``: :func:`modlib.findings.structure_table` rows of trained base models."""
    groups = list(dict.fromkeys(zip(table["rule"], table["subroutine"])))
    ncols = min(3, len(groups))
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
        ax.set_title(f"{rule}\n{sub} mask", fontsize=9)
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
        labels.append("paper (means of 9 runs)")
    handles.append(plt.Line2D([], [], color="0.4", ls="--"))
    labels.append("chance")
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def control_bars(table) -> plt.Figure:
    """Per (rule, subroutine), top: the ablated model's other-minus-target accuracy (the modular effect)
    with the removed weights zeroed and re-initialised, for the trained base models, and zeroed for
    the untrained control; bottom: the target accuracy of the found subnetwork against a random one of
    the same size. Dots: runs; bars: means."""
    groups = list(dict.fromkeys(zip(table["rule"], table["subroutine"])))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(COLUMN, 5.6), sharey=False)
    width = 0.26
    labels = [rule.replace("-", "-\n") + f"\n({sub})" for rule, sub in groups]  # 3 short lines
    series = [("zeroed", lambda t: t[t["trained"]], "abl", "#2ca02c"),
              ("re-initialised", lambda t: t[t["trained"]], "reinit", "#9467bd"),
              ("untrained net", lambda t: t[~t["trained"]], "abl", "#8c564b")]
    for j, (label, pick, prefix, colour) in enumerate(series):
        for i, (rule, sub) in enumerate(groups):
            rows = pick(table[(table["rule"] == rule) & (table["subroutine"] == sub)])
            if rows.empty:
                continue
            effect = rows[f"{prefix}_other"] - rows[f"{prefix}_target"]
            xi = i + (j - 1) * width
            top.bar(xi, effect.mean(), width, color=colour, label=label if i == 0 else None)
            top.plot(np.full(len(effect), xi), effect, ".", color="0.2", ms=3)
    top.axhline(0, color="0.3", lw=0.8)
    top.set_xticks(range(len(groups)), labels, fontsize=8)
    top.set_ylabel("ablated: other − target")
    top.legend(fontsize=8, frameon=False, ncol=3, loc="upper center", bbox_to_anchor=(0.5, 1.18))
    for j, (col, label, colour) in enumerate((("sub_target", "found", TARGET), ("random_target", "random", "0.55"))):
        for i, (rule, sub) in enumerate(groups):
            rows = table[(table["rule"] == rule) & (table["subroutine"] == sub) & table["trained"]]
            xi = i + (j - 0.5) * width
            bottom.bar(xi, rows[col].mean(), width, color=colour, label=f"{label} subnetwork" if i == 0 else None)
            bottom.plot(np.full(len(rows), xi), rows[col], ".", color="0.2", ms=3)
    bottom.axhline(0.25, color="0.4", ls="--", lw=0.8)
    bottom.set_xticks(range(len(groups)), labels, fontsize=8)
    bottom.set_ylabel("accuracy on the target")
    bottom.set_ylim(0, 1.05)
    bottom.legend(fontsize=8, frameon=False, ncol=2, loc="upper center", bbox_to_anchor=(0.5, 1.18))
    fig.tight_layout()
    return fig


def kept_by_layer(arrays: dict, subroutines: tuple[str, str], layers: list[str], ax: plt.Axes | None = None):
    """One stored result's per-layer kept fractions (both subroutines, mean over mask seeds) and
    the overlap (IoU) of their seed-0 masks, layer by layer, against the overlap two independent
    random masks of the seed-0 masks' sizes would have, ``pq / (p + q - pq)``. (Chapter 5.)"""
    fig = None
    if ax is None:
        fig, ax = plt.subplots(figsize=(COLUMN, 2.6))
    x = np.arange(len(layers))
    for sub, colour in zip(subroutines, (TARGET, OTHER)):
        ax.plot(x, arrays[f"kept-{sub}"].mean(0), "o-", color=colour, ms=3, label=f"{sub} mask: kept")
    ax.plot(x, arrays["overlap"], "s--", color="0.3", ms=3, label="overlap (IoU)")
    p, q = (arrays[f"kept-{sub}"][0] for sub in subroutines)
    ax.plot(x, p * q / (p + q - p * q), ":", color="0.5", label="overlap of random masks")
    ax.set_xticks(x, [short_layer(n) for n in layers], rotation=60, ha="right", fontsize=7)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("fraction")
    ax.legend(fontsize=7, frameon=False)
    if fig is not None:
        fig.tight_layout()
    return fig


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
    ``"profile full · cpu (1 thread) · 3 base models × 3 mask seeds per rule"``."""
    from modlib import results

    s = runs.settings
    line = results.provenance(list(runs.rows.values()))
    return (line.rsplit(" · ", 1)[0] + f" · {count(s.base_models, 'base model')} × "
            f"{count(s.mask_seeds, 'mask seed')} per rule (base-model seeds 0–{s.base_models - 1})")


# --- chapter 6: pretraining and the consistency of modular structure -----------------------------

INIT_COLOURS = {"scratch": "#7f7f7f", "pretrained": "#d62728"}


def simclr_views(panels, views: list) -> plt.Figure:
    """Chapter 6: unlabelled panels ``[N, 3, H, W]`` (top row) and random views of them (one row per
    entry of ``views``, each ``[N, 3, H, W]``), as SimCLR sees them: a pair of views of one panel is
    a positive pair."""
    rows = [("panel", panels)] + [(f"view {i + 1}", v) for i, v in enumerate(views)]
    n = len(panels)
    fig, axes = plt.subplots(len(rows), n, figsize=(COLUMN, 1.1 * len(rows) * COLUMN / n), squeeze=False)
    for (label, images), row in zip(rows, axes):
        for ax, image in zip(row, images):
            ax.imshow(image.permute(1, 2, 0).clamp(0, 1).numpy())
            ax.set_xticks([])
            ax.set_yticks([])
        row[0].set_ylabel(label, rotation=0, ha="right", va="center", fontsize=8)
    fig.subplots_adjust(wspace=0.05, hspace=0.08, left=0.15)
    return fig


def pretraining_curves(language, vision) -> plt.Figure:
    """Chapter 6's pretraining: left, the masked-language-model loss of the language model (stored
    every 50 steps) against a uniform guess among the agreement vocabulary's words; right, SimCLR's
    loss of the vision model (every 25 steps) against the loss of a guess (log(2 × batch − 1)).
    ``language``, ``vision``: the stored pretraining results."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(COLUMN, 2.5))
    loss = language.metrics["losses"]
    left.plot(np.arange(len(loss)) * 50, loss, color=INIT_COLOURS["pretrained"], lw=1)
    left.axhline(np.log(len(agreement.VOCAB) - len(agreement.SPECIAL)), color="0.4", ls="--", lw=0.8, label="a guess")
    left.legend(fontsize=8, frameon=False)
    left.set(xlabel="step", ylabel="masked-word loss", title="language: masked-language modelling")
    loss = vision.metrics["losses"]
    right.plot(np.arange(len(loss)) * 25, loss, color=INIT_COLOURS["pretrained"], lw=1)
    right.axhline(vision.metrics["chance_loss"], color="0.4", ls="--", lw=0.8, label="a guess")
    right.set(xlabel="step", ylabel="contrastive loss", title="vision: SimCLR on unlabelled panels")
    right.legend(fontsize=8, frameon=False)
    for ax in (left, right):
        ax.title.set_fontsize(9)
    fig.tight_layout()
    return fig


def ablation_effects(df, paper: dict | None = None, margin: float | None = None) -> plt.Figure:
    """Chapter 6's figure: per (rule, subroutine), the ablation effect (the ablated model's accuracy
    on the other subroutine minus that on the target) of every base model, from scratch (grey) and
    pretrained (red); filled dots show the modular pattern, open ones do not (subnetwork missed the
    gate or effect below ``margin``, dotted). Bars: means. ``paper``: ``{(rule, subroutine, init):
    effect}``, drawn as black diamonds. ``df``: :func:`modlib.findings.pretraining_effects`."""
    groups = list(dict.fromkeys(zip(df["rule"], df["subroutine"])))
    ncols = min(len(groups), 4)
    nrows = -(-len(groups) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(COLUMN, 2.6 * nrows), squeeze=False, sharey=True)
    for ax, (rule, sub) in zip(axes.flat, groups):
        for x, init in enumerate(("scratch", "pretrained")):
            rows = df[(df["rule"] == rule) & (df["subroutine"] == sub) & (df["init"] == init)]
            colour = INIT_COLOURS[init]
            ax.bar(x, rows["effect"].mean(), 0.6, color=colour, alpha=0.35)
            jitter = np.linspace(-0.15, 0.15, len(rows)) if len(rows) > 1 else np.zeros(1)
            for dx, (_, row) in zip(jitter, rows.iterrows()):
                ax.plot(x + dx, row["effect"], "o", ms=4, color=colour,
                        mfc=colour if row["modular"] else "white")
            if paper and (rule, sub, init) in paper:
                ax.plot(x, paper[(rule, sub, init)], "D", color="black", ms=4)
        ax.axhline(0, color="0.3", lw=0.8)
        if margin is not None:
            ax.axhline(margin, color="0.4", ls=":", lw=0.8)
        ax.set_xticks([0, 1], ["scratch", "pre-\ntrained"], fontsize=8)
        ax.set_title(f"{rule}\n{sub} mask", fontsize=9)
    for ax in axes[:, 0]:
        ax.set_ylabel("ablation effect\n(other − target)")
    for ax in list(axes.flat)[len(groups):]:
        ax.axis("off")
    handles = [plt.Line2D([], [], marker="o", color="0.3", ls="", ms=4),
               plt.Line2D([], [], marker="o", color="0.3", mfc="white", ls="", ms=4)]
    labels = ["modular pattern", "not"]
    if paper:
        handles.append(plt.Line2D([], [], marker="D", color="black", ls="", ms=4))
        labels.append("paper (means of 9 runs)")
    if margin is not None:
        handles.append(plt.Line2D([], [], color="0.4", ls=":"))
        labels.append(f"margin {margin}")
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def pretraining_provenance(runs) -> str:
    """Chapter 6's caption line: profile, device and base models per initialisation."""
    from modlib import results
    from modlib.structural_compositionality import settings

    line = results.provenance(list(runs.rows.values()))
    n, masks = runs.settings.seeds, settings(runs.profile).mask_seeds
    return (line.rsplit(" · ", 1)[0] + f" · {count(n, 'base model')} per initialisation and rule "
            f"(seeds 0–{n - 1}) × {count(masks, 'mask seed')}")


def count(n: int, noun: str) -> str:
    """``n`` things in words for captions and page headers (chapters 5 and 6): ``"1 mask seed"``,
    ``"3 mask seeds"``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"
