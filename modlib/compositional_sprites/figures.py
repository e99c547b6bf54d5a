"""Chapter 2's figures (notebooks/compositional_sprites.ipynb; its theory page's: :func:`theory_process`,
:func:`support_schematic`, :func:`visibility_figure`): scenes and their supports, R² curves,
error maps, reconstructions, the sharpness sweep, the support schematic, an animation over
rows, the concept diagram of the two models (:func:`diagram_models`), and the recomputed rows of issue 32 (:func:`diagram_slot_recovery`, :func:`recomputed_figure`,
:func:`modlib.plots.not_stored` while they are not stored); each handed to a numbered caption with :func:`modlib.plots.glue`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.cm import ScalarMappable
from matplotlib.colors import PowerNorm

from modlib.plots import COLUMN, jshtml

SUPPORT_COLOURS = {"in-domain": "#1f77b4", "whole": "#d62728"}
SEED_MARKERS = ("o", "s", "^", "D", "v", "P", "X")  # one a seed, where seeds' lines would coincide


def _image(ax: plt.Axes, img: np.ndarray, title: str | None = None, fontsize: float = 8) -> None:
    """Show ``img [3, H, W]`` (floats in [0, 1] or uint8) without axes, ``title`` at ``fontsize``."""
    img = np.asarray(img)
    img = img / 255 if img.dtype == np.uint8 else np.clip(img, 0, 1)
    ax.imshow(np.transpose(img[:3], (1, 2, 0)), interpolation="nearest")
    ax.set_xticks([]), ax.set_yticks([])
    for spine in ax.spines.values():  # a grey frame: black canvases side by side stay apart
        spine.set_color("0.6")
    if title:
        ax.set_title(title, fontsize=fontsize)


def image_grid(rows: dict[str, np.ndarray], titles: list[str] | None = None, per_row: int | None = None,
               largest: float = 1.1, fontsize: float = 8) -> plt.Figure:
    """One row of images per entry of ``rows`` (label -> ``[N, 3, H, W]``), labelled on the left;
    ``titles`` over the first row's columns. ``per_row``: at most that many images a row, the rest
    in further blocks of the same rows below (labels repeated), so that each image is drawn larger;
    ``largest``: an image's largest side in inches; ``fontsize``: of labels and titles. (Chapter 2:
    sprites, scenes, reconstructions; the theory page's data-generating process.)"""
    n = max(len(v) for v in rows.values())
    per_row = min(per_row or n, n)
    blocks = -(-n // per_row)  # ceil
    side = min(COLUMN / (per_row + 0.6), largest)
    fig, axes = plt.subplots(len(rows) * blocks, per_row, squeeze=False,
                             figsize=(side * per_row + 0.6, side * len(rows) * blocks + 0.3))
    for b in range(blocks):
        for i, (label, imgs) in enumerate(rows.items()):
            row = b * len(rows) + i
            for j in range(per_row):
                ax, k = axes[row, j], b * per_row + j
                if k < len(imgs):
                    _image(ax, imgs[k], titles[k] if titles and i == 0 else None, fontsize)
                else:
                    ax.axis("off")
            axes[row, 0].set_ylabel(label, fontsize=fontsize, rotation=0, ha="right", va="center")
    fig.tight_layout(pad=0.3)
    return fig


def theory_process(size: int = 64) -> plt.Figure:
    """The theory page's compositional data-generating process (book/compositional_theory.md): two
    sprites, each drawn alone by its slot's renderer, and the scene that soft occlusion composes from
    them, at ``size`` × ``size`` pixels, titled at 10 pt."""
    import torch

    from modlib.data import sprites

    z = torch.tensor([[[0.2, 0.7, 0.0, 0.8, 0.05], [0.3, 0.55, 1.0, 1.0, 0.6]]])  # [1 scene, 2 slots, 5]
    slots = sprites.render_slots(z, size)[0]  # [2, 3, size, size]
    scene = sprites.scenes(z, size)[0]  # [3, size, size]
    return image_grid({"": torch.stack([slots[0], slots[1], scene]).numpy()},
                      titles=["φ₀(z₀): slot 0", "φ₁(z₁): slot 1", "f(z) = C(φ₀, φ₁)"],
                      largest=1.8, fontsize=10)


def unscaled(z: np.ndarray) -> np.ndarray:
    """Scaled latents ``[..., 5]`` (as the models get them, :func:`modlib.data.sprites.scale_latents`)
    back to [0, 1] (shape: 0, 0.5 or 1), for plotting over the latent cube."""
    from modlib.data import sprites

    out = np.array(z, dtype=float)
    for i, name in enumerate(sprites.LATENT_NAMES):
        low, high = sprites.LATENT_RANGES.get(name, (0.0, 2.0))
        out[..., i] = (out[..., i] - low) / (high - low)
    return out


def support_panel(ax: plt.Axes, z: np.ndarray, title: str, dims=((0, 0), (1, 0))) -> None:
    """Scenes' latents ``z [N, 2, 5]`` (in [0, 1]) projected on two latents, ``dims`` =
    ((slot, latent), ...): by default slot 0's x against slot 1's x."""
    from modlib.data import sprites

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


def reconstructions(runs, rows: list[str], labels: list[str], n: int = 6, per_row: int = 3) -> plt.Figure:
    """Unseen scenes from the whole cube (seed 0): the truth, then each row's reconstruction;
    ``per_row`` scenes a block, so that each is large enough to read at the page's width."""
    first = runs.arrays(rows[0])
    images = {"truth": first["shown_true"][:n]}
    for row, label in zip(rows, labels):
        images[label] = runs.arrays(row)["shown_pred"][:n]
    titles = [f"scene {k + 1}" for k in range(len(images["truth"]))]  # over each block's truth row
    return image_grid(images, titles, per_row=per_row, largest=1.4, fontsize=9)


def sharpness_figure(runs, rows: list[str], sharpness: list[float], fit: float = 0.8) -> plt.Figure:
    """R^2 in-domain and on the whole cube against the occlusion's sharpness k (log scale): one
    point per seed, filled where the seed fits its training support (in-domain R^2 >= ``fit``) and
    hollow where it never trained; the line joins the mean over the seeds that fit only (a mean over
    stuck seeds is no model's R^2), each point labelled with how many seeds it counts."""
    fig, ax = plt.subplots(figsize=(COLUMN, 3.1))
    fitted = [runs.arrays(r)["r2_in"][:, -1] >= fit for r in rows]
    for key, name in (("r2_in", "in-domain"), ("r2_whole", "whole")):
        finals = [runs.arrays(r)[key][:, -1] for r in rows]
        colour = SUPPORT_COLOURS[name]
        for k, v, f in zip(sharpness, finals, fitted):
            # seed by seed a little apart on the log axis, so that seeds with equal R^2 stay visible
            xs = k * 1.07 ** (np.arange(v.size) - (v.size - 1) / 2)
            ax.scatter(xs[f], v[f], color=colour, s=12, alpha=0.6)
            ax.scatter(xs[~f], v[~f], facecolors="none", edgecolors=colour, s=14)
        means = [v[f].mean() if f.any() else np.nan for v, f in zip(finals, fitted)]
        ax.plot(sharpness, means, color=colour, marker="o", label=f"{name}: mean of\nthe seeds that fit")
    low = min(float(np.nanmin(runs.arrays(r)[key][:, -1])) for r in rows for key in ("r2_in", "r2_whole"))
    ax.set_ylim(min(0.0, low) - 0.05, 1.2)
    for k, f in zip(sharpness, fitted):
        ax.text(k, 1.03, f"{int(f.sum())} of {f.size} fit", fontsize=9, ha="center", va="bottom")
    ax.set_xscale("log")
    ax.set_xlim(min(sharpness) / 1.6, max(sharpness) * 1.6)
    ax.set_xticks(sharpness, [f"{k:g}" for k in sharpness])
    ax.set_xlabel("sharpness k: the top sprite weighs σ(k·Σa), the lower one σ(−k·Σa)", fontsize=9)
    ax.set_ylabel("variance-weighted R²", fontsize=9)
    ax.tick_params(labelsize=9)
    # the hollow mark in the legend in the colours the plot draws it in: in-domain, then whole
    from matplotlib.legend_handler import HandlerTuple
    from matplotlib.lines import Line2D

    hollow = tuple(Line2D([], [], ls="none", marker="o", markerfacecolor="none", markersize=4,
                          markeredgecolor=SUPPORT_COLOURS[name]) for name in ("in-domain", "whole"))
    handles, labels = ax.get_legend_handles_labels()
    ax.legend([*handles, hollow], [*labels, "a seed that never fit\n(in-domain, whole)"],
              handler_map={tuple: HandlerTuple(ndivide=None)}, fontsize=9, loc="center left",
              bbox_to_anchor=(1.02, 0.5), frameon=False)
    fig.tight_layout()
    return fig


def support_schematic() -> plt.Figure:
    """Three training supports of a two-slot process with one latent per slot, drawn in the unit
    square (slot 0's latent across, slot 1's up) with each slot's marginal support as a bar on its
    axis: orthogonal lines, a diagonal band, lines with a gap. (Chapter 2's theory page.)"""
    fig, axes = plt.subplots(1, 3, figsize=(COLUMN, 2.4))
    t = np.linspace(0, 1, 2)
    panels = {
        "orthogonal lines": [((t, 0.2 + 0 * t), None), ((0.3 + 0 * t, t), None)],
        "diagonal band": [(None, 0.12)],
        "lines with a gap in $z_0$": [((np.array([0, 0.25]), [0.2, 0.2]), None),
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
            ax.plot([x0, x1], [-0.045, -0.045], color="black", lw=4, clip_on=False, solid_capstyle="butt")
            ax.plot([-0.045, -0.045], [y0, y1], color="black", lw=4, clip_on=False, solid_capstyle="butt")
        ax.set(xlim=(0, 1), ylim=(0, 1), aspect="equal", xticks=[], yticks=[])
        ax.set_xlabel("$z_0$ (slot 0), 0 to 1", fontsize=9, labelpad=16)
        ax.set_ylabel("$z_1$ (slot 1), 0 to 1", fontsize=9, labelpad=16)
        ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return fig


def visibility_figure(size: int = 32, sharpness: float = 64.0) -> plt.Figure:
    """Why the authors' orthogonal support has a third plane: one sprite of the lower slot (slot 1)
    in the bottom-left corner (top left), behind the top slot fixed as on the second plane (a small
    triangle in the corner: "top in corner") and as on the third (a small square in the middle: "top
    in middle"), the names the caption and the theory page's exercise use, with near-hard
    occlusion (top row); under each scene, the weight C gives the lower slot, sigmoid(-k * sum_rgb
    top) (bottom row). Titles at 10 pt, legible at the page's width."""
    import torch

    from modlib.data import sprites

    z1 = torch.tensor([[0.05, 0.1, 0.5, 1.0, 0.6]])  # a large square in the bottom-left corner
    # the top sprite fixed in the corner (the second plane) and in the middle (the third)
    contexts = {"top in corner": (0, 0, 0, 0, 0), "top in middle": (0.5, 0.5, 0.5, 0, 0.5)}
    images = {"lower sprite alone": sprites.render(z1, size)[0]}
    weights = {}
    for name, fixed in contexts.items():
        z = torch.stack([torch.tensor([fixed], dtype=torch.float32), z1], dim=1)  # [1, 2, 5]
        slots = sprites.render_slots(z, size)
        images[f"scene: {name}"] = sprites.soft_occlusion(slots, sharpness)[0]
        weights[name] = torch.sigmoid(-sharpness * slots[0, 0].sum(0))  # [H, W]
    fig, axes = plt.subplots(2, 3, figsize=(5.4, 4.2), layout="constrained")
    for ax, (title, img) in zip(axes[0], images.items()):
        _image(ax, img.numpy(), title.replace(": ", ":\n"), fontsize=10)
    axes[1, 0].axis("off")
    for ax, (name, wgt) in zip(axes[1, 1:], weights.items()):
        ax.imshow(wgt.numpy(), cmap="gray", vmin=0, vmax=1, interpolation="nearest")
        ax.set_xticks([]), ax.set_yticks([])
        ax.set_title(f"its weight in C:\n{name}", fontsize=10)
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
    norm = PowerNorm(0.5, vmin=0, vmax=top)  # a square-root scale: low errors stay apart
    bar = fig.colorbar(ScalarMappable(norm, "magma"), ax=ax_error, fraction=0.08, pad=0.04,
                       shrink=0.55)
    bar.set_label("MSE per pixel", fontsize=8)
    bar.ax.tick_params(labelsize=7)

    def draw(k):
        a = runs.arrays(rows[k])
        for ax in (ax_support, ax_error, ax_true, ax_pred):
            ax.clear()
        support_panel(ax_support, unscaled(a["train_z"]), "training scenes")
        ax_error.imshow(a["slice_mse"].mean(0), origin="lower", extent=(0, 1, 0, 1), cmap="magma",
                        norm=norm)
        ax_error.set(xticks=[0, 1], yticks=[0, 1], title="error",
                     xlabel="slot 0: x", ylabel="slot 1: x")
        ax_error.xaxis.label.set_fontsize(8), ax_error.yaxis.label.set_fontsize(8)
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
    alt = ("An animation, one frame per stored row: left, the row's training scenes as slot 0's x "
           "against slot 1's x; middle, its reconstruction error over that plane, dark where low, on the colour scale beside it; right, "
           "three unseen scenes above seed 0's reconstructions of them; the title gives the row's R² "
           "in-domain and on the whole cube, mean over seeds.")
    return jshtml(fig, draw, len(rows), 1500, alt=alt)


# ---------------------------------------------------------------- the recomputed rows (issue 32)

def diagram_slot_recovery() -> plt.Figure:
    """What the slot R² measures (no data): one slot's latents go to the learned slot decoder and,
    separately, to the renderer drawing that sprite alone; R² compares the two images. The scene
    R² compares only the composed scenes (the caption says so)."""
    fig, ax = plt.subplots(figsize=(COLUMN, 2.2))
    ax.set_xlim(0, 10), ax.set_ylim(0, 4), ax.axis("off")

    def box(x, y, text, colour):
        return ax.text(x, y, text, ha="center", va="center", fontsize=9,
                       bbox=dict(boxstyle="round,pad=0.35", facecolor=colour, edgecolor="0.3"))

    def arrow(a, b):  # from box a to box b, each end on its box's edge
        ax.annotate("", b.get_position(), a.get_position(), arrowprops=dict(
            arrowstyle="->", color="0.3", shrinkA=1, shrinkB=1,
            patchA=a.get_bbox_patch(), patchB=b.get_bbox_patch()))

    latents = box(1.0, 2.0, "latents of\nslot k, $z_k$", "#f2f2f2")
    learned = box(4.3, 3.1, "learned decoder\n$\\hat\\varphi_k(z_k)$", "#d9e8f5")
    true = box(4.3, 0.9, "renderer, slot k alone\n$\\varphi(z_k)$", "#fbe3d6")
    r2 = box(8.2, 2.0, "slot R²: does $\\hat\\varphi_k$\ndraw slot k's sprite?", "#fff5cc")
    for image in (learned, true):
        arrow(latents, image)
        arrow(image, r2)
    fig.tight_layout()
    return fig


SLOT_FLOOR = -1.0  # slot R² below this is drawn at it, as "<" (soft occlusion's slot 0 lies near -25)


def recomputed_figure(runs) -> plt.Figure:
    """The recomputed rows (each seed on its own scenes): (a) in-domain R² of alpha compositing per
    seed, as initialised and with the opacity opened, a line joining each seed's pair; (b) each
    compositional row's slot R² per seed (slot 0 filled, slot 1 hollow; below :data:`SLOT_FLOOR`, a
    "<" at it; the marks named in a legend below the panels, with the slot whose marks lie at the
    floor); (c) R² on the gap scenes alone per seed, for every row that has it. Rows run down (b)
    and (c), named once, so that their names stay legible at 9 pt. Rows missing from ``runs`` are
    left out."""
    rows = [r for r in runs.rows if {"r2_slot", "r2_gap"} & set(runs.arrays(r))]
    fig = plt.figure(figsize=(COLUMN, 1.2 + 0.19 * max(len(rows), 6)), layout="constrained")
    grid = fig.add_gridspec(1, 3, width_ratios=[1, 1.1, 1])
    ax = fig.add_subplot(grid[0])
    if {"alpha", "alpha-open"} <= set(runs.rows):
        shut, opened = (runs.arrays(r)["r2_in"][:, -1] for r in ("alpha", "alpha-open"))
        # seeds with nearly the same R² would draw one line: each seed a little to the side of the
        # others (the offset means nothing), with a marker of its own, named in a legend
        step = 0.08
        for s, (a, b) in enumerate(zip(shut, opened)):
            dx = step * (s - (len(shut) - 1) / 2)
            ax.plot([dx, 1 + dx], [a, b], color="0.5", lw=0.8, marker=SEED_MARKERS[s % len(SEED_MARKERS)],
                    ms=4, markerfacecolor="white", label=f"seed {s}")
        ax.set_xticks([0, 1], ["as\ninitialised", "opened"], fontsize=9)
        ax.legend(fontsize=8, frameon=False, loc="lower right", handlelength=1.2, labelspacing=0.2)
    ax.set_xlim(-0.6, 1.6)
    ax.set_title("(a) alpha,\nin-domain R²", fontsize=9)
    slot_ax = fig.add_subplot(grid[1])
    gap_ax = fig.add_subplot(grid[2], sharey=slot_ax)
    clipped = set()  # the slots with some mark drawn at the floor, named in the legend
    for i, r in enumerate(rows):
        a = runs.arrays(r)
        if "r2_slot" in a and np.isfinite(a["r2_slot"]).all():
            for k, dy in enumerate((-0.15, 0.15)):
                v = a["r2_slot"][:, k]
                low = v < SLOT_FLOOR  # far below: drawn at the floor, as a "<"
                if low.any():
                    clipped.add(k)
                fill = {"color": "#1f77b4"} if k == 0 else {"facecolors": "none", "edgecolors": "#1f77b4"}
                slot_ax.scatter(v[~low], np.full((~low).sum(), i + dy), s=10, **fill)
                slot_ax.scatter(np.full(low.sum(), SLOT_FLOOR), np.full(low.sum(), i + dy), s=14, marker="<",
                                **fill)
        if "r2_gap" in a:
            v = a["r2_gap"]
            gap_ax.scatter(v, np.full(len(v), i), color="#d62728" if r == "gap" else "0.3", s=10)
    slot_ax.set_yticks(range(len(rows)), rows)
    slot_ax.set_ylim(len(rows) - 0.5, -0.5)  # the first row on top
    slot_ax.axvline(0.8, color="0.15", lw=1.2, ls=":")  # dark enough to see beside the marks
    slot_ax.set_xlim(SLOT_FLOOR - 0.15, 1.1)
    slot_ax.set_title("(b) slot R²", fontsize=9)
    gap_ax.tick_params(labelleft=False)
    gap_ax.set_title("(c) R², gap scenes", fontsize=9)
    for ax in fig.axes:
        ax.tick_params(labelsize=9)
    # the marks of (b) in a legend of their own below the panels, not in its title
    from matplotlib.lines import Line2D

    def mark(marker, filled, label):
        return Line2D([], [], ls="none", marker=marker, ms=5, color="#1f77b4",
                      markerfacecolor="#1f77b4" if filled else "none", label=label)

    handles = [mark("o", True, "(b) slot 0"), mark("o", False, "(b) slot 1")]
    if clipped:  # which slot's marks lie at the floor: "(b) slot 0 below −1, drawn at −1"
        names = "slot 0" if clipped == {0} else "slot 1" if clipped == {1} else "slots 0 and 1"
        floor = f"{SLOT_FLOOR:g}".replace("-", "−")
        handles.append(mark("<", 0 in clipped, f"(b) {names} below {floor}, drawn at {floor}"))
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=9, frameon=False)
    return fig


# ---------------------------------------------------------------- concept diagrams (issue 34)

def diagram_models() -> plt.Figure:
    """The two models of "The models and their training" (no data): the compositional model draws
    each slot with its own decoder and composes the two images with the known C; the monolithic
    model maps all ten latents to the scene with one decoder."""
    fig, axes = plt.subplots(1, 2, figsize=(COLUMN, 2.6))

    def box(ax, x, y, text, colour):
        ax.text(x, y, text, ha="center", va="center", fontsize=9,
                bbox=dict(boxstyle="round,pad=0.35", facecolor=colour, edgecolor="0.3"))

    def arrow(ax, x0, y0, x1, y1):
        ax.annotate("", (x1, y1), (x0, y0), arrowprops=dict(arrowstyle="->", color="0.3"))

    for ax in axes:
        ax.set_xlim(0, 10), ax.set_ylim(0, 4), ax.axis("off")
    left, right = axes
    left.set_title("compositional: a decoder per slot, then C", fontsize=9)
    box(left, 1.0, 3.0, "slot 0\n$z_0$ (5)", "#f2f2f2")
    box(left, 1.0, 1.0, "slot 1\n$z_1$ (5)", "#f2f2f2")
    box(left, 4.1, 3.0, "decoder\n$\\hat\\varphi_0$", "#d9e8f5")
    box(left, 4.1, 1.0, "decoder\n$\\hat\\varphi_1$", "#d9e8f5")
    box(left, 7.4, 2.0, "known\nC", "#fbe3d6")
    box(left, 9.4, 2.0, "scene", "#ffffff")
    for y in (3.0, 1.0):
        arrow(left, 1.8, y, 3.1, y)
        arrow(left, 5.1, y, 6.7, 2.0 + (y - 2.0) * 0.25)
    arrow(left, 8.1, 2.0, 8.7, 2.0)
    right.set_title("monolithic: one decoder for everything", fontsize=9)
    box(right, 1.0, 3.0, "slot 0\n$z_0$ (5)", "#f2f2f2")
    box(right, 1.0, 1.0, "slot 1\n$z_1$ (5)", "#f2f2f2")
    box(right, 5.2, 2.0, "one wider\ndecoder $\\hat f$\nof all 10 latents", "#d9e8f5")
    box(right, 9.2, 2.0, "scene", "#ffffff")
    for y in (3.0, 1.0):
        arrow(right, 1.8, y, 3.2, 2.0 + (y - 2.0) * 0.3)
    arrow(right, 7.2, 2.0, 8.5, 2.0)
    fig.tight_layout()
    return fig
