"""Chapter 3's figures (notebooks/resists_at_scale.ipynb): MNIST pairs, accuracy curves of settings A
and B (and an animation over seeds), attention maps, the swap test and the SCAN detail; each
handed to a numbered caption with :func:`modlib.plots.glue`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from modlib.data import scan
from modlib.plots import COLUMN, jshtml

# after the paper's Fig. 3: setting A blue (train) and cyan (test), setting B red (train) and pink
# (test; the paper's brown was hard to tell from red, issue 57): each test colour a lighter shade of
# its setting's training colour
AB_COLOURS = {("A", "train"): "#1f77b4", ("A", "test"): "#17becf",
              ("B", "train"): "#d62728", ("B", "test"): "#e377c2"}
# and every test curve dashed, every training curve solid
SPLIT_STYLE = {"train": "-", "test": "--"}
# accuracy axes: room below 0 and above 1, so that a curve at 0 (setting A's test on SCAN) or at 1
# is drawn clear of the frame instead of on the spine
YLIM = (-0.05, 1.05)


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
    mean over seeds with a band of one standard deviation, or one ``seed``'s curves. Each dashed
    test curve is drawn above its setting's training curves, so that where B's test curve lies on
    B's training curve the dashes still show on it."""
    for setting in ("A", "B"):
        a = runs.arrays(f"{experiment}-{setting}")
        for split in ("train", "test"):
            values = a[f"acc_{split}"]
            colour, ls = AB_COLOURS[setting, split], SPLIT_STYLE[split]
            z = 3 if split == "test" else 2  # the dashes on top of the solid lines
            if seed is None:
                mean, std = values.mean(0), values.std(0)
                ax.fill_between(a["eval_steps"], mean - std, mean + std, color=colour, alpha=0.2, lw=0)
                ax.plot(a["eval_steps"], mean, color=colour, lw=1.5, ls=ls, label=f"{split} {setting}",
                        zorder=z)
            else:
                ax.plot(a["eval_steps"], values[seed], color=colour, lw=1.2, ls=ls, label=f"{split} {setting}",
                        zorder=z)
    ax.set_ylim(*YLIM)
    ax.set_xlabel("training step", fontsize=9)
    ax.set_ylabel("accuracy", fontsize=9)
    ax.tick_params(labelsize=9)
    ax.grid(alpha=0.3)


def accuracy_curves(runs, experiment: str, log: bool = False) -> plt.Figure:
    """The paper's Fig. 3 for one experiment of a :class:`ResistRuns` (``"mnist"`` or
    ``"scan"``): accuracy on training-distribution (solid) and test data (dashed) in settings A
    and B, the column's width, lettering at 9 pt."""
    fig, ax = plt.subplots(figsize=(COLUMN, 3.0))
    ab_curves(ax, runs, experiment)
    if log:
        ax.set_xscale("symlog", linthresh=10)
        ax.set_xlim(left=0)
    # where the curves are not: top left of SCAN's late rise, bottom right of MNIST's early one
    ax.legend(fontsize=9, ncol=2, loc="upper left" if log else "lower right")
    fig.tight_layout()
    return fig


def attention_map(weights: np.ndarray, words: list[str], actions: list[str], ax: plt.Axes):
    """Attention ``weights [T, S]`` of one translation: output actions down, command words across,
    on a fixed scale from 0 to 1. Returns the image, for a colour bar."""
    image = ax.imshow(weights[:len(actions), :len(words)], cmap="Greys", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(len(words)), words, rotation=45, ha="right", fontsize=7)
    ax.set_yticks(range(len(actions)), [ACTION_SHORT.get(a, a) for a in actions], fontsize=7)
    return image


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
    return jshtml(fig, draw, seeds, 1500)


ACTION_SHORT = {"I_WALK": "WALK", "I_LOOK": "LOOK", "I_RUN": "RUN", "I_JUMP": "JUMP",
                "I_TURN_LEFT": "L", "I_TURN_RIGHT": "R"}


NBSP = "\u00a0"  # a space a line never breaks at


def compact_actions(actions: str) -> str:
    """A SCAN action sequence for a table: turns as L and R, and runs of a repeated action or pair
    of actions written once with a count, e.g. ``"(R JUMP) ×8 L"``. Inside a run the spaces are
    :data:`NBSP`, so that a narrow table column wraps between runs, never inside one ("R ×2", not
    "R" and "×2" on two lines)."""
    tokens = [ACTION_SHORT.get(a, a) for a in actions.split()]
    out, i = [], 0
    while i < len(tokens):
        for period in (2, 1):
            unit = tokens[i:i + period]
            count = 1
            while len(unit) == period and tokens[i + count * period:i + (count + 1) * period] == unit:
                count += 1
            if count > 1:
                out.append(f"({NBSP.join(unit)}){NBSP}×{count}" if period == 2 else f"{unit[0]}{NBSP}×{count}")
                i += count * period
                break
        else:
            out.append(tokens[i])
            i += 1
    return " ".join(out)


def swap_curves(runs) -> plt.Figure:
    """Chapter 3: the CNN's accuracy on training-distribution pairs (solid) and on the same pairs
    with the right digit replaced by a random one (dashed), settings A and B, against the step:
    means over seeds with a band of one standard deviation. As in :func:`accuracy_curves`, each
    solid curve is its setting's dark colour and its dashed twin the lighter shade
    (:data:`AB_COLOURS`); the solid one is drawn wide and the dashed one on top of it, so that where
    the two coincide (setting B) both still show."""
    fig, ax = plt.subplots(figsize=(COLUMN, 3.0))
    for setting in ("A", "B"):
        a = runs.arrays(f"mnist-{setting}")
        for key, split in (("acc_train", "train"), ("acc_swapped", "test")):
            mean, std = a[key].mean(0), a[key].std(0)
            ax.fill_between(a["eval_steps"], mean - std, mean + std, color=AB_COLOURS[setting, split],
                            alpha=0.2, lw=0)
        ax.plot(a["eval_steps"], a["acc_train"].mean(0), color=AB_COLOURS[setting, "train"], lw=2.5,
                label=f"train {setting}", zorder=2)
        ax.plot(a["eval_steps"], a["acc_swapped"].mean(0), color=AB_COLOURS[setting, "test"], lw=1.5,
                ls="--", label=f"train {setting}, right digit replaced", zorder=3)
    ax.set_ylim(*YLIM)
    ax.set_xlabel("training step", fontsize=9)
    ax.set_ylabel("accuracy", fontsize=9)
    ax.tick_params(labelsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=9, loc="lower right")
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
            ax.plot(a["eval_steps"], mean, color=colour, lw=1.5, ls=SPLIT_STYLE[split], label=f"setting {setting}")
        ax.set_xscale("symlog", linthresh=10)
        ax.set_xlim(left=0)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("training step", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="center right")
    axes[0].set_ylabel("accuracy", fontsize=8)
    axes[0].set_ylim(*YLIM)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------- the controls (modlib.resists_at_scale.controls)

# the control C green, next to the paper's colours for A (blue) and B (red)
C_COLOURS = {"train": "#2ca02c", "test": "#98df8a"}


def _band(ax, steps, values, colour, label, ls="-"):
    mean, std = values.mean(0), values.std(0)
    ax.fill_between(steps, mean - std, mean + std, color=colour, alpha=0.15, lw=0)
    ax.plot(steps, mean, color=colour, lw=1.4, ls=ls, label=label)


def _absent(ax, what: str = "not computed at this profile") -> None:
    ax.text(0.5, 0.5, what, ha="center", va="center", transform=ax.transAxes, fontsize=8, color="0.4")


def _legend(ax, **kwargs) -> None:
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**kwargs)


def _legend_below(fig, axes, ncol: int, entries=None) -> None:
    """One legend for all panels, below them (the panels share their entries), at a readable
    size and off the curves, with room for it taken from the figure's height.
    ``entries`` (label: handle) replaces the panels' own entries where given."""
    handles, labels = dict(entries or {}), list(entries or ())
    for ax in axes if entries is None else ():
        for h, label in zip(*ax.get_legend_handles_labels()):
            if label not in handles:
                handles[label] = h
                labels.append(label)
    fig.tight_layout()
    if not labels:
        return
    rows = -(-len(labels) // ncol)
    room = (0.04 + 0.19 * rows) / fig.get_figheight()  # the legend's share of the figure's height
    fig.subplots_adjust(bottom=fig.subplotpars.bottom + room)
    fig.legend([handles[k] for k in labels], labels, loc="lower center", ncol=ncol, fontsize=8,
               frameon=False, bbox_to_anchor=(0.5, 0))


def _style(ax, log: bool = False):
    """Axes, scale and limits of a panel of curves. Call it *after* plotting: ``set_xlim`` turns
    x autoscaling off, so limits fixed before the curves are drawn stay at matplotlib's empty-axes
    default (0 to 1), and a symlog panel then shows only steps 0 and 1 (Fig. 3.9's empty SCAN panel
    did exactly that)."""
    if log:
        ax.set_xscale("symlog", linthresh=10)
        ax.set_xlim(left=0)
    ax.set_ylim(*YLIM)
    ax.set_xlabel("training step", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3)


def control_curves(runs) -> plt.Figure:
    """Chapter 3's controls: test accuracy (dashed) against the step in settings A (cyan), B (pink)
    and the control C (light green), with C's training accuracy (solid green); MNIST pairs left, SCAN right (exact
    match, linear up to 10 steps, logarithmic after). Means over seeds with a band of one standard
    deviation; an experiment whose control is not in ``runs`` is left empty."""
    fig, axes = plt.subplots(1, 2, figsize=(COLUMN, 3.0), sharey=True)
    for ax, experiment in zip(axes, ("mnist", "scan")):
        ax.set_title("MNIST pairs" if experiment == "mnist" else 'SCAN "jump"', fontsize=9)
        if f"{experiment}-C" not in runs.rows:
            _style(ax, log=experiment == "scan")
            _absent(ax)
            continue
        for setting in ("A", "B"):
            if f"{experiment}-{setting}" in runs.rows:
                a = runs.arrays(f"{experiment}-{setting}")
                _band(ax, a["eval_steps"], a["acc_test"], AB_COLOURS[setting, "test"], f"test {setting}",
                      ls=SPLIT_STYLE["test"])
        c = runs.arrays(f"{experiment}-C")
        _band(ax, c["eval_steps"], c["acc_train"], C_COLOURS["train"], "train C")
        _band(ax, c["eval_steps"], c["acc_test"], C_COLOURS["test"], "test C", ls="--")
        _style(ax, log=experiment == "scan")  # after the curves: it fixes the x-limits
    axes[0].set_ylabel("accuracy", fontsize=8)
    _legend_below(fig, axes, ncol=4)
    return fig


def dose_response(runs) -> plt.Figure:
    """Chapter 3's dose-response (MNIST pairs): after training, accuracy on training pairs and on
    test pairs (left), and training accuracy over the first quarter of training (right), against
    the information the right digit carries about the label in training, one point per seed and the
    mean per level: the dose levels, the control C (0.15 bits) and setting A (2.32 bits) where
    stored."""
    from modlib.resists_at_scale.findings import EARLY, window_mean

    levels = sorted(((runs.rows[n].metrics["info_bits"], n) for n in runs.rows
                     if n.startswith("mnist-dose-") or n == "mnist-C"))
    fig, axes = plt.subplots(1, 2, figsize=(COLUMN, 2.6))
    for ax, panel in zip(axes, ("final", "early")):
        series = ((("final_train", "train", AB_COLOURS["A", "train"]), ("final_test", "test", AB_COLOURS["A", "test"]))
                  if panel == "final" else (("early", "train, steps 1–50", AB_COLOURS["A", "train"]),))
        for key, label, colour in series:
            means = []
            for bits, name in levels:
                a = runs.arrays(name)
                values = window_mean(a, "acc_train", EARLY["mnist"]) if key == "early" else a[key]
                ax.scatter(np.full(len(values), bits), values, s=8, color=colour, alpha=0.5, lw=0)
                means.append(values.mean())
            ax.plot([b for b, _ in levels], means, color=colour, lw=1.4, marker="o", ms=3, label=label,
                    ls=SPLIT_STYLE["test" if key == "final_test" else "train"])
        if len(levels) < 2:
            _absent(ax, "fewer than two levels at this profile")
        elif levels:  # each level's m on a second axis, as the exercise asks its predictions
            top = ax.secondary_xaxis("top")
            top.set_xticks([b for b, _ in levels], labels=[str(_dose_m(n)) for _, n in levels])
            top.set_xlabel("m: training offsets 0 to m − 1", fontsize=7)
            top.tick_params(labelsize=7)
        ax.set_xlabel("I(Y1; Y2) in training, bits", fontsize=8)
        ax.set_ylim(*YLIM)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        _legend(ax, fontsize=7, loc="lower left")
    axes[0].set_ylabel("accuracy after training", fontsize=8)
    axes[1].set_ylabel("mean training accuracy", fontsize=8)
    fig.tight_layout()
    return fig


def _dose_m(name: str) -> int:
    """The dose-response level ``m`` of a stored MNIST result (training offsets 0 to m - 1): control C
    is m = 9; ``mnist-dose-<m>`` is m."""
    return 9 if name == "mnist-C" else int(name.rsplit("-", 1)[1])


def followups(runs) -> plt.Figure:
    """Chapter 3's follow-ups of control C ("What control C left open, tested"). Top, MNIST pairs:
    accuracy on test digits at the training combinations minus at the others, against the bits the
    right digit carries, for the dose-response (levels and control C) and at fixed coverage
    (:data:`modlib.resists_at_scale.findings.COVER`), one point per seed and the means. Bottom,
    SCAN's control C: final test exact match with each of the six directed frames held out, one
    numbered point per seed (``scan-C``, ``scan-C-around-right`` and the crossed design's
    ``scan-C-<frame>``), a bar at the mean over the seeds every frame has; and, apart, control C
    matched to setting A's size (``scan-C-matched``)."""
    from modlib.data.scan import VERB_FRAMES
    from modlib.resists_at_scale.controls import CROSSED, HARD_FRAME, held_out_frame
    from modlib.resists_at_scale.findings import COVER, crossed_cells, test_digit_gap

    fig, (left, right) = plt.subplots(2, 1, figsize=(COLUMN, 5.6), height_ratios=(1, 1.1))
    dose = sorted((runs.rows[n].metrics["info_bits"], n) for n in runs.rows
                  if n.startswith("mnist-dose-") or n == "mnist-C")
    cover = sorted((runs.rows[n].metrics["info_bits"], n) for n in COVER if n in runs.rows)
    for levels, colour, marker, label in ((dose, C_COLOURS["train"], "o", "dose-response"),
                                          (cover, "#9467bd", "s", "fixed coverage")):
        means = []
        for bits, name in levels:
            values = test_digit_gap(runs.arrays(name))
            left.scatter(np.full(len(values), bits), values, s=10, color=colour, alpha=0.5, lw=0)
            means.append(values.mean())
        if levels:
            left.plot([b for b, _ in levels], means, color=colour, marker=marker, ms=4, lw=1.4, label=label)
    if not dose and not cover:
        _absent(left)
    left.set_xlabel("I(Y1; Y2) in training, bits", fontsize=9)
    left.set_ylabel("test digits:\nseen minus unseen", fontsize=9)
    left.set_title("MNIST pairs", fontsize=10)
    left.tick_params(labelsize=8)
    left.grid(alpha=0.3)
    _legend(left, fontsize=8, loc="upper left")
    frames = VERB_FRAMES[1:]
    points: list[tuple[int, int, float]] = []  # (column, seed, test exact match)
    if "scan-C" in runs.rows:
        c = runs.arrays("scan-C")
        points += [(frames.index(held_out_frame(k)), k, float(v)) for k, v in enumerate(c["final_test"])]
    named = (("scan-C-around-right", HARD_FRAME), *CROSSED.items(), ("scan-C-matched", None))
    for name, frame in named:
        if name in runs.rows:
            a = runs.arrays(name)
            column = len(frames) if frame is None else frames.index(frame)
            points += [(column, int(k), float(v)) for k, v in zip(a["seeds"], a["final_test"])]
    for column, k, v in points:
        x = column + 0.11 * (k - 2)  # each seed a little apart, so that equal scores stay readable
        right.scatter(x, v, s=18, color=C_COLOURS["test"], edgecolor=C_COLOURS["train"], lw=0.7, zorder=2)
        right.annotate(str(k), (x, v), xytext=(0, -10), textcoords="offset points", fontsize=7, ha="center")
    seeds, _, test = crossed_cells(runs)
    if len(seeds) >= 2:
        for column, mean in enumerate(test.mean(1)):
            right.plot([column - 0.32, column + 0.32], [mean, mean], color="0.3", lw=1.6, zorder=1,
                       label=f"mean over seeds {', '.join(map(str, seeds))}" if column == 0 else None)
        _legend(right, fontsize=8, loc="lower left")
    if not points:
        _absent(right)
    right.axvline(len(frames) - 0.5, color="0.5", lw=0.8, ls=":")
    labels = [f[2:].replace("opposite", "opp.").replace("around", "around\n") for f in frames]
    right.set_xticks(range(len(frames) + 1), labels + ["at A's size\n(own frame)"], fontsize=8)
    right.set_xlim(-0.5, len(frames) + 0.5)
    right.set_ylim(*YLIM)
    right.set_xlabel('the frame "jump" is held out of', fontsize=9)
    right.set_ylabel("control C:\ntest exact match", fontsize=9)
    right.set_title("SCAN, control C (numbers: seeds)", fontsize=10)
    right.tick_params(axis="y", labelsize=8)
    right.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def measures_curves(runs, sets: tuple[str, ...] = ("train_long", "unseen")) -> plt.Figure:
    """Chapter 3's measures, on SCAN's settings A and B measured again (``scan-A-tf``, ``scan-B-tf``):
    greedy exact match (a wide pale solid line; this book's), teacher-forced sentence accuracy (dashed,
    drawn on top: the authors', which often lies on the greedy curve) and teacher-forced token
    accuracy (dotted; setting A's drawn wider, under B's, so that both show where they coincide),
    against the step (linear up to 10, logarithmic after), one panel per command set of ``sets``:
    means over seeds."""
    titles = {"train_long": "training, more than one word", "unseen": "test, never in B's training",
              "train": "training commands", "test": "test commands"}
    fig, axes = plt.subplots(1, len(sets), figsize=(COLUMN, 3.3), sharey=True, squeeze=False)
    for ax, key in zip(axes[0], sets):
        for setting in ("A", "B"):
            name = f"scan-{setting}-tf"
            if name not in runs.rows:
                continue
            a = runs.arrays(name)
            colour = AB_COLOURS[setting, "train" if key.startswith("train") else "test"]
            # greedy wide and pale underneath, so that the dashed teacher-forced curve on it shows
            for measure, ls, what, look in (("acc", "-", "greedy", {"lw": 3.5, "alpha": 0.4, "zorder": 2}),
                                            ("tf", "--", "teacher-forced", {"lw": 1.3, "zorder": 3}),
                                            # A's dotted curve wider and under B's: where they coincide,
                                            # both show (blue edges round the red)
                                            ("tok", ":", "tokens", {"lw": 2.8 if setting == "A" else 1.1,
                                                                    "zorder": 3 if setting == "A" else 4})):
                if f"{measure}_{key}" in a:
                    ax.plot(a["eval_steps"], a[f"{measure}_{key}"].mean(0), color=colour, ls=ls,
                            label=f"{setting}, {what}", **look)
        if not any(f"scan-{x}-tf" in runs.rows for x in "AB"):
            _absent(ax)
        _style(ax, log=True)
        ax.set_title(titles.get(key, key), fontsize=9)
    axes[0, 0].set_ylabel("accuracy", fontsize=8)
    from matplotlib.lines import Line2D

    entries = {"greedy exact match": Line2D([], [], color="0.2", ls="-", lw=3.5, alpha=0.4),
               "teacher-forced sentence": Line2D([], [], color="0.2", ls="--"),
               "teacher-forced token": Line2D([], [], color="0.2", ls=":")}
    for x in "AB":
        entries[f"setting {x}, training"] = Line2D([], [], color=AB_COLOURS[x, "train"], lw=3)
        entries[f"setting {x}, test"] = Line2D([], [], color=AB_COLOURS[x, "test"], lw=3)
    _legend_below(fig, axes[0], ncol=3, entries=entries)
    return fig


# ---------------------------------------------------------------- concept diagrams (no training)

_TRAIN, _TEST, _BOTH, _EMPTY = "#9ecae1", "#fdae6b", "#a1d99b", "white"
_KINDS = {(True, False): _TRAIN, (False, True): _TEST, (True, True): _BOTH, (False, False): _EMPTY}


def _cell_grid(ax, colours: np.ndarray, xticks, yticks, xlabel: str, ylabel: str, title: str,
               aspect="equal") -> None:
    rows, cols = colours.shape[:2]
    for i in range(rows):
        for j in range(cols):
            ax.add_patch(plt.Rectangle((j, rows - 1 - i), 1, 1, facecolor=colours[i, j], edgecolor="0.6",
                                       lw=0.5))
    ax.set_xlim(0, cols)
    ax.set_ylim(0, rows)
    ax.set_aspect(aspect)
    ax.set_xticks(np.arange(cols) + 0.5, xticks, fontsize=8, rotation=0)
    ax.set_yticks(np.arange(rows) + 0.5, yticks[::-1], fontsize=8)
    ax.tick_params(length=0, pad=2)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.set_title(title, fontsize=9)


# the action words in the data code's order, and the rows of chapter 3's SCAN grids: the one-word
# command, then each verb-phrase frame within a longer command
SCAN_WORDS, SCAN_ROWS = tuple(scan.PRIMITIVES), ("X alone", *scan.VERB_FRAMES)


def scan_kinds(train, test) -> tuple[np.ndarray, np.ndarray]:
    """Where each action word sits in SCAN's ``(command, actions)`` pairs ``train`` and ``test``:
    the colour of each cell of chapter 3's grids (:data:`SCAN_ROWS` down, :data:`SCAN_WORDS`
    across; training only, test only or both) and the word's number of occurrences there in
    training (repeated commands counted), ``[rows, words]`` each."""
    def counts(pairs) -> np.ndarray:
        out = np.zeros((len(SCAN_ROWS), len(SCAN_WORDS)), dtype=int)
        for command, _ in pairs:
            alone = len(command.split()) == 1
            for word, verb, _ in scan.occurrences(command):
                out[0 if alone else 1 + scan.VERB_FRAMES.index(verb), SCAN_WORDS.index(word)] += 1
        return out

    trained, tested = counts(train), counts(test)
    colours = np.empty(trained.shape, dtype=object)
    for (i, j), k in np.ndenumerate(trained):
        colours[i, j] = _KINDS[bool(k), bool(tested[i, j])]
    return colours, trained


def diagram_settings() -> plt.Figure:
    """Chapter 3's designs as grids of combinations (a concept diagram: no training). Top: MNIST
    pairs, the left digit's label $Y_1$ across and the offset $(Y_2 - Y_1) \\bmod 10$ down; bottom:
    SCAN, the action word across and, down, the one-word command ("X alone") and the verb-phrase
    frames it sits in within longer commands, each cell as the data code's commands have it
    (:func:`scan_kinds`, the theory page's :func:`theory_jump` too). Blue: shown in training only;
    orange: tested, never shown in training; green: tested and also shown in training. Columns:
    setting A, setting B (its draw ``seed=0``) and control C (SCAN's C holds "jump" out of one
    frame, here "X around right"; each seed holds out another)."""
    from modlib.resists_at_scale.networks import scan_pairs

    fig, axes = plt.subplots(2, 3, figsize=(COLUMN, 5.2), gridspec_kw=dict(height_ratios=(1, 0.85)))
    designs = {"A": (range(2), range(2, 10)), "B": (range(10), range(2, 10)), "C": (range(9), range(9, 10))}
    for ax, (name, (train, test)) in zip(axes[0], designs.items()):
        colours = np.full((10, 10), _EMPTY, dtype=object)
        for offset in range(10):
            seen, tested = offset in train, offset in test
            colours[offset, :] = _BOTH if seen and tested else _TRAIN if seen else _TEST if tested else _EMPTY
        _cell_grid(ax, colours, range(10), range(10), "left digit $Y_1$",
                   "offset $Y_2 - Y_1$" if name == "A" else "", f"MNIST, {'control ' if name == 'C' else 'setting '}{name}")
    words, frames = SCAN_WORDS, SCAN_ROWS
    # the one-word commands first (in every design shown in training, "jump" alone included: in
    # setting A the only training command with "jump"), then each frame within longer commands;
    # the test commands put walk, look and run in every frame too ("jump left and walk twice")
    splits = {"A": scan_pairs("A", 0), "B": scan_pairs("B", 0),
              "C": scan.frame_split("jump", (scan.VERB_FRAMES[-1],))}
    for ax, name in zip(axes[1], "ABC"):
        colours, _ = scan_kinds(*splits[name])
        _cell_grid(ax, colours, words, frames, "action word", "frame" if name == "A" else "",
                   f"SCAN, {'control ' if name == 'C' else 'setting '}{name}", aspect="auto")
        ax.axhline(len(frames) - 1, color="0.2", lw=1.2)  # one-word commands above, longer ones below
        if name != "A":
            ax.set_yticklabels([])
    for ax in axes[0, 1:]:
        ax.set_yticklabels([])
    handles = [plt.Rectangle((0, 0), 1, 1, facecolor=c, edgecolor="0.6") for c in (_TRAIN, _TEST, _BOTH)]
    fig.legend(handles, ["training only", "test, never in training", "test, also in training"],
               loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.04, 1, 1), h_pad=1.2)
    return fig


def diagram_swap() -> plt.Figure:
    """Chapter 3's central measurement on MNIST pairs as a diagram (no data, no training): the same
    training-distribution pair classified twice, once as drawn and once with its right digit
    replaced by a random digit; the drop in accuracy is what the network takes from the digit it
    should ignore."""
    fig, ax = plt.subplots(figsize=(COLUMN, 2.0))
    ax.set_xlim(0, 11)
    ax.set_ylim(0, 4.3)
    ax.axis("off")

    def box(x, y, w, h, text, colour="white"):
        ax.add_patch(plt.Rectangle((x, y), w, h, facecolor=colour, edgecolor="0.3", lw=0.8))
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=8)

    def arrow(x0, y0, x1, y1):
        ax.annotate("", (x1, y1), (x0, y0), arrowprops=dict(arrowstyle="->", lw=0.8, color="0.3"))

    for y, right, colour, out in ((2.4, "4", _TRAIN, "accuracy on\ntraining pairs"),
                                  (0.4, "8 (random)", _TEST, "accuracy with the\nright digit replaced")):
        box(0.2, y, 1.2, 1.0, "3")
        box(1.4, y, 1.6, 1.0, right, colour)
        arrow(3.1, y + 0.5, 4.1, y + 0.5)
        box(4.2, y + 0.1, 1.4, 0.8, "the same\nCNN")
        arrow(5.7, y + 0.5, 6.3, y + 0.5)
        box(6.4, y + 0.1, 2.6, 0.8, out)
    ax.text(0.8, 3.55, "left digit\n(the label)", fontsize=7, ha="center", va="bottom")
    ax.text(2.2, 3.55, "right digit", fontsize=7, ha="center", va="bottom")
    arrow(9.1, 2.9, 9.6, 2.0)
    arrow(9.1, 0.9, 9.6, 1.8)
    ax.text(9.7, 1.9, "the drop:\nreliance", fontsize=8, va="center")
    return fig


# ---------------------------------------------------------------- the theory page's figures (no training)

_KIND_NAMES = ("training only", "test, never in training", "test, also in training")


def _kinds_legend(fig: plt.Figure) -> None:
    handles = [plt.Rectangle((0, 0), 1, 1, facecolor=c, edgecolor="0.6") for c in (_TRAIN, _TEST, _BOTH)]
    fig.legend(handles, _KIND_NAMES, loc="outside lower center", ncol=3, fontsize=9, frameon=False)


def theory_pairs(draws: int = 500) -> plt.Figure:
    """Which label pairs $(Y_1, Y_2)$ of MNIST pairs each setting trains and tests on, as the data
    code draws them (:func:`modlib.data.digits.right_labels`, ``draws`` left labels of each digit,
    generator seeded 0; no image is read): a 10 x 10 grid per setting, the left digit's label
    across and the right digit's down, each pair coloured by whether it occurs in training, in the
    test set or in both (book/resists_theory.md)."""
    import torch

    from modlib.data import digits

    g = torch.Generator().manual_seed(0)
    y1 = torch.arange(10).repeat_interleave(draws)
    occurs = {}
    for setting in digits.SETTING_NAMES:
        for split in digits.SPLITS:
            seen = np.zeros((10, 10), dtype=bool)  # [Y2, Y1]
            seen[digits.right_labels(y1, setting, split, g).numpy(), y1.numpy()] = True
            occurs[setting, split] = seen
    fig, axes = plt.subplots(1, 2, figsize=(COLUMN, 3.55), layout="constrained")
    for ax, setting in zip(axes, digits.SETTING_NAMES):
        train, test = occurs[setting, "train"], occurs[setting, "test"]
        colours = np.empty((10, 10), dtype=object)
        for i in range(10):
            for j in range(10):
                colours[i, j] = _KINDS[bool(train[i, j]), bool(test[i, j])]
        _cell_grid(ax, colours, range(10), range(10), "left digit's label $Y_1$ (the answer)",
                   "right digit's label $Y_2$" if setting == "A" else "", f"setting {setting}")
        ax.set_yticks(np.arange(10) + 0.5, range(10)[::-1], fontsize=9)  # row i is Y2 = i, top down
        ax.set_xticks(np.arange(10) + 0.5, range(10), fontsize=9)
        ax.xaxis.label.set_size(9)
        ax.yaxis.label.set_size(9)
        ax.title.set_size(10)
    _kinds_legend(fig)
    return fig


def theory_jump(seed: int = 0) -> plt.Figure:
    """Where each action word sits in the SCAN commands that settings A and B train on and in
    their shared test set, as the data code builds them (:func:`networks.scan_pairs`: the add-jump
    split, and for B the training commands' action words re-drawn with ``seed``): a grid per
    setting, the action word across and, down, the one-word command, then the verb-phrase frame
    (:data:`modlib.data.scan.VERB_FRAMES`) the word sits in within a longer command. Each cell is
    coloured by whether the word occurs there in training, in the test set or in both, and gives
    its number of occurrences in training (repeated rows counted) (book/resists_theory.md)."""
    from modlib.resists_at_scale.networks import scan_pairs

    words, frames = SCAN_WORDS, SCAN_ROWS
    fig, axes = plt.subplots(1, 2, figsize=(COLUMN, 3.7), layout="constrained")
    for ax, setting in zip(axes, ("A", "B")):
        colours, trained = scan_kinds(*scan_pairs(setting, seed))
        _cell_grid(ax, colours, words, frames, "action word",
                   "where it sits" if setting == "A" else "", f"setting {setting}", aspect="auto")
        rows = len(frames)
        for (i, j), k in np.ndenumerate(trained):
            ax.text(j + 0.5, rows - 0.5 - i, f"{k:,}", ha="center", va="center", fontsize=9)
        ax.axhline(rows - 1, color="0.2", lw=1.2)  # the one-word command above, longer ones below
        ax.tick_params(labelsize=9)
        ax.xaxis.label.set_size(9)
        ax.yaxis.label.set_size(9)
        ax.title.set_size(10)
        if setting == "B":
            ax.set_yticklabels([])
    _kinds_legend(fig)
    return fig
