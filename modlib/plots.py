"""Figures for the chapters. Every figure is stamped with the profile and device that produced it."""

from __future__ import annotations

import re
import matplotlib.pyplot as plt
import numpy as np
from matplotlib import animation
from matplotlib.colors import ListedColormap

from modlib import data

POSITIVE, NEGATIVE = "#1f77b4", "#ff7f0e"  # Y1 = 1 (blue circles), Y1 = 0 (orange triangles), as in Fig. 4
BOUNDARY_CMAP = ListedColormap(plt.get_cmap("RdBu")(np.linspace(0.25, 0.75, 256)))
FORMULATION_NAMES = {"a": "(a) paper text: X = Y - U[0,1]", "b": "(b) Playground: sign(x1), pushed 0.3"}


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


def _held_out(ax: plt.Axes, formulation: str) -> None:
    """Outline the held-out test cell (x1 > 0, x2 > 0) with a dashed rectangle."""
    high = data.EXTENT[formulation][1]
    ax.add_patch(plt.Rectangle((0, 0), high, high, fill=False, ls="--", lw=1.2, ec="0.2", zorder=5))


def toy_data(ax: plt.Axes, x: np.ndarray, y: np.ndarray, formulation: str, *, legend: bool = True) -> None:
    """Scatter training points ``x [n, 2]`` coloured by ``y [n]`` and shade the held-out cell."""
    _held_out(ax, formulation)
    pos, neg = y.astype(bool), ~y.astype(bool)
    ax.scatter(x[pos, 0], x[pos, 1], s=9, marker="o", c=POSITIVE, label="train, $Y_1=1$")
    ax.scatter(x[neg, 0], x[neg, 1], s=11, marker="^", c=NEGATIVE, label="train, $Y_1=0$")
    low, high = data.EXTENT[formulation]
    ax.set(xlim=(low, high), ylim=(low, high), xlabel="$x_1$", ylabel="$x_2$", aspect="equal")
    if legend:
        ax.plot([], [], ls="--", color="0.2", label="held-out test cell")
        ax.legend(loc="lower left", fontsize=7, framealpha=0.9)


def boundary(ax: plt.Axes, grid: np.ndarray, formulation: str) -> None:
    """Draw a model's P(Y1=1) over the plotting window; ``grid [res, res]`` uint8 (x 255), row = x2.
    The black line is the decision boundary (P = 0.5)."""
    low, high = data.EXTENT[formulation]
    p = grid.astype(float) / 255
    ax.imshow(p, origin="lower", extent=(low, high, low, high), cmap=BOUNDARY_CMAP,
              vmin=0, vmax=1, alpha=0.8, interpolation="bilinear")
    axis = np.linspace(low, high, grid.shape[0])
    if p.min() < 0.5 < p.max():
        ax.contour(axis, axis, p, levels=[0.5], colors="k", linewidths=1.2)
    ax.axhline(0, color="0.5", lw=0.5)
    ax.axvline(0, color="0.5", lw=0.5)


def boundary_panel(ax, arrays: dict, formulation: str, seed: int, k: int, title: str | None = None):
    """One panel: the boundary of grid seed ``seed`` after snapshot ``k``, over the training data."""
    boundary(ax, arrays["grids"][seed, k], formulation)
    toy_data(ax, arrays["train_x"].astype(float), arrays["train_y"], formulation, legend=False)
    ax.set_title(title or f"step {int(arrays['snapshot_steps'][k])}", fontsize=9)


def small_multiples(arrays: dict, formulation: str, panels: list[tuple[int, int]], titles: list[str],
                    provenance: str, suptitle: str, ncols: int = 6) -> plt.Figure:
    """A grid of boundary panels, ``panels`` = list of (grid seed, snapshot index)."""
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(2.1 * ncols, 2.2 * nrows + 0.5), squeeze=False)
    for ax, (seed, k), title in zip(axes.flat, panels, titles):
        boundary_panel(ax, arrays, formulation, seed, k, title)
        ax.set(xlabel="", ylabel="")
        ax.tick_params(labelsize=6)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    fig.suptitle(suptitle + "\n(x: $x_1$, y: $x_2$; colour: P($Y_1$=1), blue = 1; black line: boundary; "
                 "dashed: held-out cell)", fontsize=9)
    fig.tight_layout()
    return stamp(fig, provenance)


def reliance_curves(sweep, activation: str, loss: str, formulation: str, ax: plt.Axes | None = None):
    """Median reliance on x2 (with the 25-75% band over seeds) against training step, one line per
    reveal level."""
    ax = ax or plt.subplots(figsize=(6, 3.6))[1]
    cmap = plt.get_cmap("viridis")
    reveals = sweep.settings.reveals
    for i, r in enumerate(reveals):
        a = sweep.arrays(activation, loss, formulation, r)
        steps = a["curve_steps"].astype(float)
        steps[0] = 0.5  # show the initialisation on the log axis
        q25, med, q75 = np.percentile(a["reliance"], [25, 50, 75], axis=0)
        colour = cmap(i / max(len(reveals) - 1, 1))
        ax.plot(steps, med, color=colour, label=f"reveal {r:g} ({data.toy_mutual_information(r):.3f} bits)")
        ax.fill_between(steps, q25, q75, color=colour, alpha=0.15)
    ax.set(xscale="log", xlabel="SGD step (log scale; init at 0.5)",
           ylabel=r"reliance $E|\partial z/\partial x_2| \,/\, E|\partial z/\partial x_1|$",
           title=f"formulation {formulation}, {activation}, {loss} loss")
    ax.legend(fontsize=7, title="how much $X_2$ reveals ($I(Y_1;Y_2)$)", title_fontsize=7)
    return ax


def sweep_summary(sweep, metric: str = "test_acc", ylabel: str = "held-out-cell accuracy") -> plt.Figure:
    """``metric`` (mean over seeds, error bar = std) against how much X2 reveals, one panel per
    formulation, one line per (activation, loss)."""
    s = sweep.settings
    fig, axes = plt.subplots(1, len(s.formulations), figsize=(5.2 * len(s.formulations), 3.6), squeeze=False)
    for ax, f in zip(axes[0], s.formulations):
        for activation, loss in sweep.groups:
            vals = np.array([sweep.arrays(activation, loss, f, r)[metric] for r in s.reveals])  # [R, S]
            ax.errorbar(s.reveals, vals.mean(1), yerr=vals.std(1), marker="o", ms=4, capsize=2,
                        label=f"{activation}, {loss}")
        ax.set(xlabel="reveal (1 = paper's setting, 0 = control)", ylabel=ylabel,
               title=FORMULATION_NAMES[f])
        ax.invert_xaxis()
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return stamp(fig, sweep.provenance)


def animate_boundaries(sweep, settings: list[tuple[str, str, str, float]], seed: int = 0):
    """A kernel-free animation (JavaScript HTML) of the boundary over the snapshot steps, one panel
    per (activation, loss, formulation, reveal) in ``settings``."""
    from IPython.display import HTML

    arrs = [sweep.arrays(*st) for st in settings]
    fig, axes = plt.subplots(1, len(settings), figsize=(3.2 * len(settings), 3.4), squeeze=False)
    n_frames = len(arrs[0]["snapshot_steps"])

    def draw(k):
        for ax, a, (act, loss, f, r) in zip(axes[0], arrs, settings):
            ax.clear()
            boundary_panel(ax, a, f, seed, k, f"({f}) {act}, {loss}, reveal {r:g}\nstep {a['snapshot_steps'][k]}")
        return []

    draw(0)
    fig.tight_layout()
    stamp(fig, sweep.provenance + f" · seed {seed}")
    anim = animation.FuncAnimation(fig, draw, frames=n_frames, interval=700, blit=False)
    # matplotlib links Font Awesome from a CDN for the player's buttons; the book's theme has it already
    html = re.sub(r"<link[^>]*font-awesome[^>]*>", "", anim.to_jshtml(default_mode="once"))
    plt.close(fig)
    return HTML(html)


# --- weight-mask chapter ---------------------------------------------------------------------------


def accuracy_table(tables: np.ndarray, rows, columns, title: str, provenance: str,
                   chance: float | None = None) -> plt.Figure:
    """Heat map of accuracies ``tables [seeds, rows, columns]``: mean, with the std over seeds;
    ``chance``, the accuracy of guessing, is named under the table."""
    mean, std = tables.mean(0), tables.std(0)
    fig, ax = plt.subplots(figsize=(1.8 * len(columns) + 4.2, 0.5 * len(rows) + 1.5))
    im = ax.imshow(mean, cmap="Greens", vmin=0, vmax=1)
    for i in range(len(rows)):
        for j in range(len(columns)):
            ax.text(j, i, f"{mean[i, j]:.2f}" + (f"±{std[i, j]:.2f}" if len(tables) > 1 else ""),
                    ha="center", va="center", fontsize=9, color="white" if mean[i, j] > 0.6 else "black")
    xlabel = "accuracy" + (f" (chance: {chance:g})" if chance is not None else "")
    ax.set(xticks=range(len(columns)), xticklabels=[f"on {c}" for c in columns], xlabel=xlabel,
           yticks=range(len(rows)), yticklabels=rows, title=title)
    fig.colorbar(im, ax=ax, label="accuracy (all digits right)", shrink=0.8)
    fig.tight_layout()
    return stamp(fig, provenance)


def layer_bars(values: dict[str, np.ndarray], layers: list[str], ylabel: str, title: str,
               provenance: str, reference: float | None = None, ref_label: str = "") -> plt.Figure:
    """Grouped bars per layer: ``values`` label -> ``[seeds, L]`` (mean, error bar = std)."""
    fig, ax = plt.subplots(figsize=(1.2 * len(layers) + 3, 3.4))
    n = len(values)
    for i, (label, v) in enumerate(values.items()):
        v = np.atleast_2d(v)
        ax.bar(np.arange(len(layers)) + (i - (n - 1) / 2) * 0.8 / n, v.mean(0), 0.8 / n,
               yerr=v.std(0) if len(v) > 1 else None, capsize=2, label=label)
    if reference is not None:
        ax.axhline(reference, color="k", ls="--", lw=1, label=ref_label)
    ax.set(xticks=range(len(layers)), xticklabels=[f"layer {i + 1}" for i in range(len(layers))],
           ylabel=ylabel, title=title, ylim=(0, 1.05))
    ax.legend(fontsize=8)
    fig.tight_layout()
    return stamp(fig, provenance)


def input_usage(first_layer: np.ndarray, names: list[str], provenance: str) -> plt.Figure:
    """Which inputs each mask keeps: ``first_layer [masks, width, 42]`` (0/1) -> the share of each
    input's outgoing weights that each mask keeps."""
    groups = ["a tens"] * 10 + ["a ones"] * 10 + ["b tens"] * 10 + ["b ones"] * 10 + ["op +", "op *"]
    fig, ax = plt.subplots(figsize=(11, 3.2))
    for k, name in enumerate(names):
        ax.plot(first_layer[k].mean(0), marker="o", ms=3, lw=1, label=f"{name} mask")
    for b in (10, 20, 30, 40):
        ax.axvline(b - 0.5, color="0.7", lw=0.8)
    ax.set(xticks=range(42), xlabel="input unit", ylabel="share of its first-layer weights kept",
           title="First layer: which inputs does each mask keep?", ylim=(0, 1.02))
    ax.set_xticklabels([f"{g[:6]} {i % 10}" if i < 40 else g for i, g in enumerate(groups)], rotation=90, fontsize=6)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return stamp(fig, provenance)


def confusion_grid(mats: np.ndarray, titles: list[str], provenance: str, ncols: int = 4) -> plt.Figure:
    """Small multiples of row-normalised confusion matrices ``mats [n, 10, 10]``."""
    nrows = -(-len(mats) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(2.6 * ncols, 2.7 * nrows), squeeze=False)
    for ax, m, t in zip(axes.flat, mats, titles):
        ax.imshow(m, cmap="Blues", vmin=0, vmax=1)
        ax.set_title(t, fontsize=9)
        ax.set(xticks=range(10), yticks=range(10))
        ax.tick_params(labelsize=6)
        ax.set_xlabel("predicted", fontsize=7)
        ax.set_ylabel("true", fontsize=7)
    for ax in axes.flat[len(mats):]:
        ax.axis("off")
    fig.suptitle("Confusion matrices on held-out digits (row = true class; colour = share of the row)", fontsize=10)
    fig.tight_layout()
    return stamp(fig, provenance)


def class_removal(panels: dict[str, tuple[dict, str]]) -> plt.Figure:
    """One panel per entry ``title -> (accuracy, provenance)``, ``accuracy`` from
    :func:`modlib.modularity.removal_accuracy` (``own``, ``others``, ``reference``, each ``[10]``, and
    ``random_own`` where given): per removed class, the accuracy on it and the mean on the others;
    the reference's mean accuracy; and the removed class's accuracy under the random control mask."""
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, 3.6 * len(panels)), squeeze=False)
    for ax, (title, (acc, provenance)) in zip(axes[:, 0], panels.items()):
        ax.bar(np.arange(10) - 0.2, acc["own"], 0.4, label="accuracy on the removed class")
        ax.bar(np.arange(10) + 0.2, acc["others"], 0.4, label="mean accuracy on the other classes")
        ax.axhline(acc["reference"].mean(), color="k", ls="--", lw=1, label="all-classes mask (mean)")
        if "random_own" in acc:
            ax.plot(np.arange(10) - 0.2, acc["random_own"], "k.", label="removed class, random mask as dense")
        ax.axhline(0.1, color="grey", ls=":", lw=1, label="chance")
        ax.set(xticks=range(10), xlabel="class whose weights were removed", ylabel="accuracy", ylim=(0, 1.05),
               title=f"{title}\n{provenance}")
        ax.title.set_fontsize(9)
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    fig.tight_layout()
    return fig
