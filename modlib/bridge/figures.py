"""Chapter 7's figures (notebooks/bridge.ipynb): the concept diagrams of "The question"
(:func:`diagram_bridge`) and of experiment 3 (:func:`diagram_overlap`), no data, and the figures of
"Is the solution already inside?" (:func:`inside`), "Surgery" (:func:`surgery`) and "Experiment 3"
(:func:`structure`), drawn from the stored arrays per formulation.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from modlib.bridge.findings import both, failing
from modlib.plots import COLUMN, stamp

# a small drawn network: 2 inputs, two hidden layers of 4, one output
_LAYERS = (2, 4, 4, 1)
# the edges a subnetwork that reads only x1 could keep, (layer, from, to)
_X1_PATH = {(0, 0, 1), (0, 0, 2), (1, 1, 1), (1, 2, 1), (1, 2, 3), (2, 1, 0), (2, 3, 0)}
_X2_PATH = {(0, 1, 0), (0, 1, 3), (1, 0, 0), (1, 3, 2), (2, 0, 0), (2, 2, 0)}
BLUE, ORANGE, GREY = "#1f77b4", "#ff7f0e", "0.8"
SMALL = 9  # the smallest lettering, in points, of every figure here (at the page's column, issue 57)
LABEL = 11  # the data figures' titles, axis, tick and category labels: larger, read at the page's width


def _net(ax, kept: set | None, removed: set | None, title: str, note: str) -> None:
    """One drawn network: every edge grey, ``kept`` edges dark, ``removed`` edges dashed red."""
    pos = {(l, i): (l, (i - (n - 1) / 2) * 0.8) for l, n in enumerate(_LAYERS) for i in range(n)}
    for l in range(len(_LAYERS) - 1):
        for i in range(_LAYERS[l]):
            for j in range(_LAYERS[l + 1]):
                e, (x0, y0), (x1, y1) = (l, i, j), pos[(l, i)], pos[(l + 1, j)]
                if removed is not None and e in removed:
                    ax.plot([x0, x1], [y0, y1], ls="--", color="tab:red", lw=1.2)
                elif kept is None or e in kept:
                    ax.plot([x0, x1], [y0, y1], color="0.25", lw=1.2)
                else:
                    ax.plot([x0, x1], [y0, y1], color=GREY, lw=0.6)
    for (l, i), (x, y) in pos.items():
        ax.add_patch(plt.Circle((x, y), 0.13, color="white", ec="0.2", zorder=3))
    ax.text(-0.3, pos[(0, 0)][1], "$x_1$", ha="right", va="center")
    ax.text(-0.3, pos[(0, 1)][1], "$x_2$", ha="right", va="center")
    ax.text(3.3, 0, "$z$", ha="left", va="center")
    ax.set_title(title, fontsize=SMALL)
    ax.text(1.5, -1.75, note, ha="center", va="top", fontsize=SMALL, wrap=True)
    ax.set_xlim(-0.7, 3.7), ax.set_ylim(-2.4, 1.6), ax.set_aspect("equal"), ax.axis("off")


def diagram_bridge() -> plt.Figure:
    """The chapter's two experiments on one frozen network: the full network (it leans on x2 and
    fails the held-out cell); experiment 1, the subnetwork a mask keeps for Y1 on unconfounded data
    (does it generalize?); experiment 2, the network with a "use X2" mask's weights removed
    (is it repaired?). Drawn, not measured."""
    fig, axes = plt.subplots(1, 3, figsize=(COLUMN, 2.6))
    _net(axes[0], None, None, "trained network (frozen)", "uses $x_1$ and $x_2$;\nfails held-out (1, 1)?")
    _net(axes[1], _X1_PATH, None, "1. subnetwork for $Y_1$",
         "mask trained where $x_2$\ntells nothing: generalizes?")
    _net(axes[2], None, _X2_PATH, "2. \"use $X_2$\" removed", "mask's weights cut:\nrepaired?")
    fig.tight_layout()
    return fig


def diagram_evidence() -> plt.Figure:
    """The theory page's three kinds of evidence (book/bridge_theory.md), on the drawn network:
    keep a mask's weights alone (sufficiency, experiment 1), remove them (necessity, experiment 2),
    and set a structural score against behaviour across seeds (correlation, experiment 3; the dots
    are placed by hand, a schematic, and rise as the claim is registered: more overlap above chance,
    higher held-out accuracy). Drawn, not measured."""
    fig, axes = plt.subplots(1, 3, figsize=(COLUMN, 2.6))
    _net(axes[0], _X1_PATH, None, "1. keep the mask alone", "does what is kept compute $g$?\n"
         "then the weights can")
    _net(axes[1], None, _X2_PATH, "2. remove the mask", "does the network lose $g$?\n"
         "then it needs them")
    ax = axes[2]
    score = np.array([0.1, 0.2, 0.3, 0.35, 0.5, 0.55, 0.7, 0.8, 0.9])
    acc = np.array([0.35, 0.5, 0.45, 0.6, 0.7, 0.6, 0.85, 0.8, 0.95])  # rising: the registered direction
    ax.scatter(score, acc, s=22, facecolor="none", edgecolor=BLUE, lw=1)
    ax.set_xlim(0, 1), ax.set_ylim(0.2, 1.05)
    ax.set_xticks([]), ax.set_yticks([])
    ax.set_xlabel("structural score\n\ndo the two vary together?\nthen they go together", fontsize=SMALL)
    ax.set_ylabel("held-out accuracy", fontsize=SMALL)
    ax.set_title("3. one dot per seed", fontsize=SMALL)
    fig.tight_layout()
    ax.set_position([0.72, 0.36, 0.24, 0.5])
    return fig


# a drawn "use X2" mask that shares two edges with _X1_PATH
_X2_MASK = {(0, 1, 0), (0, 1, 2), (1, 0, 0), (1, 2, 1), (2, 0, 0), (2, 1, 0)}


def diagram_overlap() -> plt.Figure:
    """Experiment 3's score on one network: the weights the Y1 mask keeps, the weights the "use X2"
    mask keeps, and the weights both keep (their overlap), which is compared with what two masks of
    the same sizes per layer would share by chance. Drawn, not measured."""
    fig, axes = plt.subplots(1, 3, figsize=(COLUMN, 2.6))
    _net(axes[0], _X1_PATH, None, "Y1 mask keeps", "experiment 1's mask")
    _net(axes[1], _X2_MASK, None, "\"use $X_2$\" mask keeps", "experiment 2's mask")
    _net(axes[2], _X1_PATH & _X2_MASK, None, "both keep: the overlap",
         "shared share of the Y1 mask,\nminus what chance gives")
    fig.tight_layout()
    return fig


def _strip(ax, values: list[np.ndarray], labels: list[str], colors: list[str], fails: np.ndarray,
           size: float = LABEL) -> None:
    """Per-seed dots of each arm (failing seeds filled, left of the arm's centre; the others
    hollow, right of it, so that the two stay apart where they pile up at one value) with each
    arm's mean over the failing seeds as a bar behind them; a few seeds (a CNN's five) get
    larger dots. The bar spans the failing seeds' half only, under their dots, and each filled dot
    has a white rim, so that dots piled up at the bar's height (a subnetwork at 1.0) stay visible."""
    rng = np.random.default_rng(0)
    dot = 12 if fails.size > 20 else 28
    both_kinds = fails.any() and (~fails).any()
    for i, (v, c) in enumerate(zip(values, colors)):
        jitter = rng.uniform(-0.12, 0.12, v.size)
        shift = 0.14 if both_kinds else 0.0
        ax.scatter(i - shift + jitter[fails], v[fails], s=dot, color=c, alpha=0.9, edgecolor="white",
                   lw=0.4, zorder=3)
        ax.scatter(i + shift + jitter[~fails], v[~fails], s=dot, facecolor="none", edgecolor=c, alpha=0.9,
                   lw=0.8, zorder=3)
        if fails.any():
            ax.plot([i - shift - 0.18, i - shift + 0.18], [v[fails].mean()] * 2, color="k", lw=1.6, zorder=2)
    ax.set_xticks(range(len(values)), labels, fontsize=size)
    ax.tick_params(axis="y", labelsize=size)
    ax.set_ylim(-0.04, 1.06)


def inside(arrays: dict[str, dict], provenance: str) -> plt.Figure:
    """Experiment 1, one panel per formulation, one above the other (room for lettering of
    :data:`LABEL` points): the worse of held-out and training accuracy per seed for the full network,
    its Y1 subnetwork, a random subnetwork of the same size per layer and the Y1 subnetwork of its
    untrained weights; filled dots are failing networks, black bars their means."""
    fig, axes = plt.subplots(len(arrays), 1, figsize=(COLUMN, 1.9 * len(arrays) + 0.6), sharex=True,
                             squeeze=False)
    arms = [("full", "full\nnetwork"), ("sub", "Y1\nsubnetwork"), ("random_sub", "random,\nsame size"),
            ("untrained_sub", "Y1 subnetwork,\nuntrained")]
    for ax, (f, a) in zip(axes[:, 0], arrays.items()):
        _strip(ax, [both(a, k) for k, _ in arms], [l for _, l in arms],
               ["0.35", BLUE, "0.55", ORANGE], failing(a))
        ax.set_title(f"formulation ({f}): {int(failing(a).sum())} of {a['full_held_out'].size} fail",
                     fontsize=LABEL)
        ax.set_ylabel("min(held-out,\ntrain) accuracy", fontsize=LABEL)
    fig.legend(handles=[plt.Line2D([], [], ls="", marker="o", color="0.4", ms=4),
                        plt.Line2D([], [], ls="", marker="o", mfc="none", mec="0.4", ms=4),
                        plt.Line2D([], [], color="black", lw=2)],
               labels=["fails (left)", "generalizes (right)", "failing networks' mean"],
               fontsize=LABEL, loc="upper center", ncol=3, frameon=False, handletextpad=0.3)
    fig.tight_layout(rect=(0, 0.03, 1, 0.94))
    return stamp(fig, provenance, SMALL)


def surgery(arrays: dict[str, dict], provenance: str) -> plt.Figure:
    """Experiment 2, one row per formulation: held-out accuracy (left of each pair) and training
    accuracy (right) of the failing networks before surgery; after removing the whole "use X2"
    mask's weights, or as many random weights per layer; after removing only the "use X2" weights
    the Y1 mask does not keep (:func:`modlib.bridge.with_exclusive`), or as many random ones, or
    those of random masks with the "use X2" mask's per-layer counts in its place (the stored control
    of :func:`modlib.bridge.with_random_exclusive`, drawn where ``arrays`` hold it); and with the
    first layer's weights from x2 set to zero. Bars are means over the failing networks, dots
    seeds, a black tick the mean score (the worse of the two, :func:`both`)."""
    fig, axes = plt.subplots(len(arrays), 1, figsize=(COLUMN, 2.3 * len(arrays)), sharex=True,
                             squeeze=False)
    arms = [("full", "before"), ("ablated", "rule 1:\nwhole\n\"use X2\"\nmask"),
            ("random_ablated", "rule 1's\nrandom\ncontrol"), ("ablated_excl", "rule 2:\n\"use X2\"\nnot in\nY1 mask"),
            ("random_ablated_excl", "rule 2's\nrandom\nweights")]
    if all("random_x2_excl_held_out" in a for a in arrays.values()):
        arms.append(("random_x2_excl", "rule 2's\nrandom\nmasks"))
    arms.append(("zero_x2", "x2\ninputs\nzeroed"))
    rng = np.random.default_rng(0)
    for ax, (f, a) in zip(axes[:, 0], arrays.items()):
        fails = failing(a)
        for i, (k, _) in enumerate(arms):
            for off, key, c in ((-0.18, "held_out", BLUE), (0.18, "train", "0.55")):
                v = a[f"{k}_{key}"][fails]
                if v.size:
                    ax.bar(i + off, v.mean(), width=0.34, color=c, alpha=0.35)
                    ax.scatter(i + off + rng.uniform(-0.1, 0.1, v.size), v, s=6, color=c, lw=0)
            if fails.any():
                ax.hlines(both(a, k)[fails].mean(), i - 0.38, i + 0.38, color="black", lw=2)
        for x in (0.5, 2.5, len(arms) - 1.5):
            ax.axvline(x, color="0.85", lw=0.8)
        ax.set_title(f"formulation ({f}), the {int(fails.sum())} failing networks", fontsize=LABEL)
        ax.set_ylim(-0.03, 1.03)
        ax.set_ylabel("accuracy", fontsize=LABEL)
        ax.tick_params(labelsize=LABEL)
    axes[-1, 0].set_xticks(range(len(arms)), [l for _, l in arms], fontsize=LABEL)
    fig.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=BLUE, alpha=0.5),
                        plt.Rectangle((0, 0), 1, 1, color="0.55", alpha=0.5),
                        plt.Line2D([], [], color="black", lw=2)],
               labels=["held-out accuracy", "training accuracy", "score (the worse)"],
               fontsize=LABEL, loc="upper center", ncol=3, frameon=False)
    fig.tight_layout(rect=(0, 0.03, 1, 0.95))
    return stamp(fig, provenance, SMALL)


def structure(arrays: dict[str, dict], provenance: str) -> plt.Figure:
    """Experiment 3, one panel per formulation: per seed, the Y1 and "use X2" masks' overlap above
    chance (:func:`modlib.bridge.findings.score`) against the network's held-out accuracy; filled
    dots are failing networks, the dashed line chapter 1's threshold, the title Spearman's rho with
    its Fisher z interval."""
    from modlib import stats
    from modlib.bridge.findings import score
    from modlib.redundant_input_toy.experiment import GENERALIZES

    fig, axes = plt.subplots(1, len(arrays), figsize=(COLUMN, 2.8), sharey=True, squeeze=False)
    for ax, (f, a) in zip(axes[0], arrays.items()):
        x, y, fails = score(a), a["full_held_out"], failing(a)
        ax.scatter(x[fails], y[fails], s=12, color=BLUE, alpha=0.7, lw=0, label="fails")
        ax.scatter(x[~fails], y[~fails], s=12, facecolor="none", edgecolor=BLUE, lw=0.7,
                   label="generalizes")
        ax.axhline(GENERALIZES, color="0.5", ls="--", lw=0.8)
        ax.axvline(0, color="0.7", lw=0.6)
        e = stats.correlation(x, y)
        rho = (f"rho {e.mean:+.2f} ({e.low:+.2f} to {e.high:+.2f})" if e.measurable
               else "rho undefined (no spread)")
        ax.set_title(f"formulation ({f}): {rho}", fontsize=SMALL)
        ax.set_xlabel("overlap of the masks above chance", fontsize=SMALL)
        ax.set_ylim(-0.03, 1.03)
    axes[0, 0].set_ylabel("held-out accuracy", fontsize=SMALL)
    axes[0, 0].legend(fontsize=SMALL, frameon=False, loc="lower left")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return stamp(fig, provenance, SMALL)


# the CNN's masked weight tensors (modlib.bridge.digits.LAYERS), as the figure names them
_CNN_LAYERS = ("conv 1", "conv 2", "dense 1", "dense 2", "out")  # dense 1: 17600 → 64


def digits_inside(arrays: dict, provenance: str) -> plt.Figure:
    """Experiment 1 on chapter 3's setting-A CNNs (:mod:`modlib.bridge.digits`), two panels one above
    the other (room for lettering of :data:`LABEL` points). Top: per seed the
    worse of held-out and training accuracy for the full CNN, its Y1 subnetwork, a random
    subnetwork with as many weights per tensor and the Y1 subnetwork of its untrained weights
    (filled dots: CNNs that fail the held-out pairs; black bars their means). Bottom: the kept share
    of each weight tensor, per seed, of the two Y1 masks (log scale; a tensor of which a mask keeps
    nothing is drawn on the dotted floor, "none kept")."""
    from modlib.bridge.findings import digit_failing

    fig, (ax, kx) = plt.subplots(2, 1, figsize=(COLUMN, 5.0), gridspec_kw={"height_ratios": (1, 1)})
    arms = [("full", "full\nCNN"), ("sub", "Y1\nsubnetwork"), ("random_sub", "random,\nsame size"),
            ("untrained_sub", "Y1 subnetwork,\nuntrained")]
    fails = digit_failing(arrays)
    _strip(ax, [both(arrays, k) for k, _ in arms], [l for _, l in arms], ["0.35", BLUE, "0.55", ORANGE], fails)
    ax.axhline(0.1, color="0.6", ls=":", lw=0.8)
    ax.set_title(f"{int(fails.sum())} of {fails.size} CNNs fail", fontsize=LABEL)
    ax.set_ylabel("min(held-out,\ntrain) accuracy", fontsize=LABEL)
    x = np.arange(len(_CNN_LAYERS))
    floor = 1e-6  # a mask that keeps nothing of a tensor is drawn here
    for off, (m, label, c) in zip((-0.15, 0.15), (("y1", "Y1 mask, trained", BLUE),
                                                  ("untrained", "Y1 mask, untrained", ORANGE))):
        k = np.maximum(np.asarray(arrays[f"kept_{m}_layers"], dtype=float), floor)  # [S, L]
        for row in k:
            kx.scatter(x + off, row, s=10, color=c, alpha=0.7, lw=0)
        kx.plot(x + off, np.median(k, axis=0), "_", color=c, ms=12, mew=2, label=label)
    kx.set_yscale("log")
    kx.set_ylim(floor / 3, 3)
    kx.axhline(floor, color="0.6", ls=":", lw=0.8)
    kx.set_yticks([floor, 1e-4, 1e-2, 1], ["none\nkept", "$10^{-4}$", "$10^{-2}$", "1"], fontsize=LABEL)
    kx.minorticks_off()
    kx.set_xticks(x, _CNN_LAYERS, fontsize=LABEL)
    kx.set_ylabel("kept share\nof the tensor", fontsize=LABEL)
    kx.set_title("what each mask keeps, per weight tensor", fontsize=LABEL)
    # below the panel, off the data (the floor's dots sit at the bottom left)
    kx.legend(fontsize=LABEL, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2,
              handlelength=1.2)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return stamp(fig, provenance, SMALL)


# ---------------------------------------------------------------- chapter 2's decoders


def diagram_slot_targets(size: int = 32) -> plt.Figure:
    """What a slot mask of "Chapter 2's decoders" is trained to draw, for one scene of chapter 2's
    renderer (:func:`modlib.bridge.sprites.slot_target`, at ``size`` pixels for legibility): the
    scene, the scene with sprite 0 alone (slot 1 drawn empty) and with sprite 1 alone (slot 0
    empty, so that soft occlusion draws it at half brightness). Drawn by the renderer, no model."""
    import torch

    from modlib.bridge.sprites import slot_target
    from modlib.data import sprites

    z = torch.tensor([[[0.35, 0.6, 0.5, 1.0, 0.05], [0.6, 0.45, 1.0, 1.0, 0.6]]])  # [1, 2, 5]
    images = [sprites.scenes(z, size)[0], slot_target(z, 0, size)[0], slot_target(z, 1, size)[0]]
    titles = ["the scene $C(\\varphi(z_0), \\varphi(z_1))$", "slot 0's mask: $C(\\varphi(z_0), 0)$",
              "slot 1's mask: $C(0, \\varphi(z_1))$"]
    fig, axes = plt.subplots(1, 3, figsize=(COLUMN, 2.5))
    for ax, image, title in zip(axes, images, titles):
        ax.imshow(image.permute(1, 2, 0).clamp(0, 1).numpy(), interpolation="nearest")
        ax.set_title(title, fontsize=SMALL)
        ax.set_xticks([]), ax.set_yticks([])
    fig.text(0.5, 0.03, "every mask sees the latents of both slots", ha="center", fontsize=SMALL)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig


def sprite_masks(arrays: dict[str, dict], provenance: str) -> plt.Figure:
    """"Chapter 2's decoders", one panel per question, a column of dots per model (blue monolithic,
    orange compositional): (a) each slot subnetwork's R^2 against its one-sprite scene (filled) and
    a random subnetwork's as large per layer (hollow), per seed and slot, values below -1 drawn at
    -1; (b) the slot masks' IoU per seed (filled) and what chance gives at their kept shares per
    layer (hollow), joined per seed; (c) per seed, the overlap above chance against the decoder's
    whole-cube R^2, with Spearman's rho of the monolithic decoders in the title."""
    from modlib import stats
    from modlib.bridge.findings import MASK_FIT, slot_overlap, slot_score

    colors = {"monolithic": BLUE, "compositional": ORANGE}
    fig, axes = plt.subplots(1, 3, figsize=(COLUMN, 3.4))
    rng = np.random.default_rng(0)
    names = list(arrays)
    for i, (m, a) in enumerate(arrays.items()):
        c = colors.get(m, "0.4")
        for off, key, fill in ((-0.17, "slot_in", True), (0.17, "random_in", False)):
            v = np.clip(a[key].ravel(), -1, 1)
            x = i + off + rng.uniform(-0.07, 0.07, v.size)
            axes[0].scatter(x, v, s=10, color=c if fill else "none", edgecolor=c, lw=0.7)
        iou, chance = slot_overlap(a)
        for s_iou, s_chance in zip(iou, chance):
            axes[1].plot([i - 0.15, i + 0.15], [s_iou, s_chance], color=c, lw=0.6, alpha=0.6)
        axes[1].scatter(np.full(iou.size, i - 0.15), iou, s=12, color=c, lw=0)
        axes[1].scatter(np.full(chance.size, i + 0.15), chance, s=12, facecolor="none", edgecolor=c, lw=0.7)
        axes[2].scatter(slot_score(a), a["r2_whole"], s=14, color=c, lw=0, label=m[:4] + ".")  # as (a), (b)
    axes[0].axhline(MASK_FIT, color="0.6", ls="--", lw=0.8)
    axes[0].set_ylim(-1.05, 1.05)
    axes[0].set_title("(a) R² of the one-sprite scene\nfilled: mask, hollow: random", fontsize=SMALL)
    axes[1].set_title("(b) IoU of the two slot masks\nfilled: found, hollow: chance", fontsize=SMALL)
    axes[1].set_ylim(0, 1)
    for ax in axes[:2]:
        ax.set_xticks(range(len(names)), [n[:4] + "." for n in names], fontsize=SMALL)
        ax.set_xlim(-0.6, len(names) - 0.4)
    mono = arrays.get("monolithic")
    rho = ""
    if mono is not None:
        e = stats.correlation(slot_score(mono), mono["r2_whole"])
        rho = f"\nmono. ρ {e.mean:+.2f} ({e.low:+.2f} to {e.high:+.2f})" if e.measurable else \
            "\nmonolithic ρ undefined"
    axes[2].set_title(f"(c) structure and behaviour{rho}", fontsize=SMALL)
    axes[2].set_xlabel("IoU above chance", fontsize=SMALL)
    axes[2].set_ylabel("decoder's whole-cube R²", fontsize=SMALL)
    axes[2].axvline(0, color="0.7", lw=0.6)
    axes[2].legend(fontsize=SMALL, frameon=False, loc="best", handletextpad=0.2, borderaxespad=0.2)
    for ax in axes:
        ax.tick_params(labelsize=SMALL)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return stamp(fig, provenance, SMALL)
