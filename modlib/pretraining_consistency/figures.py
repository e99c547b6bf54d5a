"""Chapter 6's figures (notebooks/pretraining_consistency.ipynb): SimCLR's views, the pretraining
curves, the ablation effect of every base model from scratch and pretrained, and both arms against
density; each handed to a numbered caption with :func:`modlib.plots.glue`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import patheffects

from modlib.data import sentences as agreement
from modlib.plots import COLUMN, count, percent_axis
from modlib.structural_compositionality.figures import rule_title  # chapter 5's, reused by name

INIT_COLOURS = {"scratch": "#7f7f7f", "pretrained": "#d62728"}
SMALL = 9  # the smallest lettering, in points, of Figs. 6.4-6.6 at the page's column (issue 57)


def _test_grid(groups: list, height: float = 1.75):
    """A figure for two tests per (rule, subroutine) of ``groups``: two panels a row, one per
    subroutine of a rule, the rule's subnetwork test in one row and its ablation test in the row below, every
    panel on one log axis of kept shares (``sharex``), so that densities compare across panels, and
    every panel of a test on one y axis, so that the rules compare too. Returns the figure (laid out
    as it is drawn: a legend goes "outside lower center") and ``panel(test, j)``, the axes of test 0
    or 1 of group ``j``; panels no group fills are removed."""
    ncols = min(2, max(1, len(groups)))
    pairs = -(-max(1, len(groups)) // ncols)
    fig, axes = plt.subplots(2 * pairs, ncols, figsize=(COLUMN, height * 2 * pairs + 0.6), squeeze=False,
                             sharex=True, layout="constrained")  # a rule's two rows close
    for test in (0, 1):  # one y axis per test, across the rules' rows
        for ax in axes[test::2].flat[1:]:
            ax.sharey(axes[test, 0])
    for ax in axes[:, 1:].flat:  # the shared y axis labelled once a row
        ax.yaxis.set_tick_params(labelleft=False)
    for ax in axes[1::2].flat:  # each rule's second row keeps its kept-share labels
        ax.xaxis.set_tick_params(labelbottom=True)
    for k in range(len(groups), pairs * ncols):
        for test in (0, 1):
            fig.delaxes(axes[2 * (k // ncols) + test, k % ncols])
    return fig, lambda test, j: axes[2 * (j // ncols) + test, j % ncols]


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
    gate or effect below ``margin``, dashed, as in :func:`density_by_arm` and the explorer). Bars: means over the
    base models whose masks passed the gate (``passed_gate``, where the table has it), as the appendix's
    Consistency table (:func:`~modlib.pretraining_consistency.findings.pretraining_consistency`) and the
    effect's statements average them. ``paper``: ``{(rule, subroutine, init):
    effect}``, drawn as black diamonds. ``df``: :func:`modlib.pretraining_consistency.findings.pretraining_effects`."""
    groups = list(dict.fromkeys(zip(df["rule"], df["subroutine"])))
    ncols = min(len(groups), 2)
    nrows = -(-len(groups) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(COLUMN, 2.3 * nrows + 0.7), squeeze=False, sharey=True)
    for ax, (rule, sub) in zip(axes.flat, groups):
        for x, init in enumerate(("scratch", "pretrained")):
            rows = df[(df["rule"] == rule) & (df["subroutine"] == sub) & (df["init"] == init)]
            colour = INIT_COLOURS[init]
            passed = rows[rows["passed_gate"]] if "passed_gate" in rows else rows  # as the Consistency table
            ax.bar(x, passed["effect"].mean(), 0.6, color=colour, alpha=0.35)
            jitter = np.linspace(-0.15, 0.15, len(rows)) if len(rows) > 1 else np.zeros(1)
            for dx, (_, row) in zip(jitter, rows.iterrows()):
                ax.plot(x + dx, row["effect"], "o", ms=4, color=colour,
                        mfc=colour if row["modular"] else "white")
            if paper and (rule, sub, init) in paper:  # beside the dots, never over them
                ax.plot(x + 0.25, paper[(rule, sub, init)], "D", color="black", ms=4)
        ax.axhline(0, color="0.3", lw=0.8)
        if margin is not None:
            ax.axhline(margin, color="0.4", ls="--", lw=0.8)  # dashed: the margin; dotted: chance
        ax.set_xticks([0, 1], ["scratch", "pretrained"], fontsize=SMALL)
        ax.tick_params(axis="y", labelsize=SMALL)
        ax.set_title(f"{rule_title(rule)}: {sub} mask", fontsize=SMALL + 1)
    for ax in axes[:, 0]:
        ax.set_ylabel("ablation effect\n(other − target)", fontsize=SMALL)
    for ax in list(axes.flat)[len(groups):]:
        ax.axis("off")
    handles = [plt.Line2D([], [], marker="o", color="0.3", ls="", ms=4),
               plt.Line2D([], [], marker="o", color="0.3", mfc="white", ls="", ms=4)]
    labels = ["modular pattern", "not"]
    if paper:
        handles.append(plt.Line2D([], [], marker="D", color="black", ls="", ms=4))
        labels.append("paper means (9 runs; 6 for Inside-Contact)")
    if margin is not None:
        handles.append(plt.Line2D([], [], color="0.4", ls="--"))
        labels.append(f"modular above {margin:g}")
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=SMALL, frameon=False)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig


def pretraining_provenance(runs) -> str:
    """Chapter 6's caption line: profile, device and base models per initialisation."""
    from modlib import results
    from modlib.structural_compositionality import settings

    line = results.provenance(list(runs.rows.values()))
    n, masks = runs.settings.seeds, settings(runs.profile).mask_seeds
    return (line.rsplit(" · ", 1)[0] + f" · {count(n, 'base model')} per initialisation and rule "
            f"(seeds 0–{n - 1}) × {count(masks, 'mask seed')}")



MEDIAN_LS = "-."  # the scratch median's vertical line (density_by_arm): dotted is chance
CROSS_EDGE = [patheffects.withStroke(linewidth=3, foreground="white")]  # density_by_arm's crosses, seen over a dot


def density_by_arm(df, matched=None, margin: float | None = None) -> plt.Figure:
    """Chapter 6's density check (issue 31): per (rule, subroutine), each searched base model's
    selected masks at their kept share (across, log scale) against the subnetwork's accuracy on the
    *other* subroutine (top row) and the ablation effect (bottom row), from scratch (grey) and
    pretrained (red). If one arm's masks are denser, differences between the arms can come from
    density alone; ``matched`` (:func:`modlib.pretraining_consistency.findings.matched_density`)
    adds each base model's mask nearest the common kept share, the scratch arm's median (crosses),
    and that share (a dash-dotted line, apart from the dotted chance line); ``margin`` (the effect a modular base model needs) is drawn dashed
    in every bottom-row panel, the only row where it applies.
    ``df``: :func:`modlib.pretraining_consistency.findings.pretraining_effects`."""
    rows = df[df["searched"] & df["kept"].notna()]
    groups = list(dict.fromkeys(zip(rows["rule"], rows["subroutine"])))
    fig, panel = _test_grid(groups)
    for j, (rule, sub) in enumerate(groups):
        top, bottom = panel(0, j), panel(1, j)
        for init in ("scratch", "pretrained"):
            g = rows[(rows["rule"] == rule) & (rows["subroutine"] == sub) & (rows["init"] == init)]
            colour = INIT_COLOURS[init]
            top.plot(g["kept"], g["sub_other"], "o", color=colour, ms=4, label=init)
            bottom.plot(g["kept"], g["effect"], "o", color=colour, ms=4)
            if matched is not None and not matched.empty:
                m = matched[(matched["rule"] == rule) & (matched["subroutine"] == sub) & (matched["init"] == init)]
                m = m[m["kept"].notna()]
                # over the dots, outlined in white: a scratch cross is often its own arm's dot (the same mask)
                for ax, y in ((top, "sub_other"), (bottom, "effect")):
                    ax.plot(m["kept"], m[y], "x", color=colour, ms=6, mew=1.4, zorder=4, path_effects=CROSS_EDGE)
                for ax in (top, bottom):
                    if len(m):
                        ax.axvline(m["common"].iloc[0], color="0.5", ls=MEDIAN_LS, lw=0.8)
        top.set_title(f"{rule_title(rule)}: {sub} mask", fontsize=SMALL + 1)
        top.axhline(0.25, color="0.4", ls=":", lw=0.8)  # chance, as in Figs. 5.4 and 6.5
        bottom.axhline(0, color="0.3", lw=0.8)
        if margin is not None:  # the modular pattern's margin, in every effect panel
            bottom.axhline(margin, color="0.4", ls="--", lw=0.8)
        bottom.set_xlabel("share kept", fontsize=SMALL)
        if j % 2 == 0:
            top.set_ylabel("alone:\nother subroutine", fontsize=SMALL)
            bottom.set_ylabel("ablation effect", fontsize=SMALL)
    if groups:  # accuracies from 0 to 1, as in Fig. 6.5; headroom over the highest effect (one y axis a row)
        panel(0, 0).set_ylim(0, 1.05)
        low, high = panel(1, 0).get_ylim()
        panel(1, 0).set_ylim(low, high + 0.08 * (high - low))
    for ax in fig.axes:  # after every panel is drawn: the shared axis spans them all
        percent_axis(ax, labelsize=SMALL, axis="both")
    handles = [plt.Line2D([], [], marker="o", color=INIT_COLOURS[i], ls="", ms=4) for i in ("scratch", "pretrained")]
    labels = ["scratch", "pretrained"]
    if matched is not None:
        handles += [plt.Line2D([], [], marker="x", color="0.3", ls="", ms=5), plt.Line2D([], [], color="0.5", ls=MEDIAN_LS)]
        labels += ["mask nearest the scratch median", "scratch median (vertical)"]
    handles.append(plt.Line2D([], [], color="0.4", ls=":"))
    labels.append("chance, 0.25 (upper panels)")
    if margin is not None:
        handles.append(plt.Line2D([], [], color="0.4", ls="--"))
        labels.append(f"modular above {margin:g} (effect panels)")
    fig.legend(handles, labels, loc="outside lower center", ncol=2, fontsize=SMALL, frameon=False)
    return fig


SWEEP_TESTS = {"alone": ("hard", 1, "random", "subnetwork test:\nother subroutine"),
               "removed": ("complement", 0, "random_complement", "ablation test:\nown subroutine")}


def sweep_arms(sweeps: dict, paper: dict[str, tuple[float, float]]) -> plt.Figure:
    """Both arms against density (issue 31): for base model 0 of each rule, from scratch (grey, chapter
    5's sweep) and pretrained (red, :func:`modlib.pretraining_consistency.sweep`), each mask of the
    lambda sweep at its kept share (log scale). Top row, the subnetwork test: the subnetwork alone on the
    *other* subroutine (solid), with a random subnetwork of the same size (dashed); bottom row, the
    ablation test: the model without the subnetwork on its *own* subroutine (solid), and without as
    many random weights (dashed). One column per (rule, subroutine); the paper's range of kept
    shares shaded, chance (0.25) dotted; an open marker is a mask still shrinking when its training
    stopped (not converged). ``sweeps``: rule -> {"scratch": metrics, "pretrained": metrics};
    ``paper``: rule -> (low, high)."""
    groups = [(rule, sub) for rule, arms in sweeps.items()
              for sub in dict.fromkeys(q["subroutine"] for q in arms["scratch"]["points"])]
    fig, panel = _test_grid(groups)
    for j, (rule, sub) in enumerate(groups):
        low, high = paper[rule]
        for i, (arm, side, control, label) in enumerate(SWEEP_TESTS.values()):
            ax = panel(i, j)
            ax.axvspan(low, high, color="0.92", zorder=0)
            ax.axhline(0.25, color="0.4", ls=":", lw=0.8)
            for init, m in sweeps[rule].items():
                pts = sorted((q for q in m["points"] if q["subroutine"] == sub), key=lambda q: q["kept"])
                kept = [max(q["kept"], 1e-5) for q in pts]
                colour = INIT_COLOURS[init]
                ax.plot(kept, [q[arm][side] for q in pts], "-", color=colour, lw=1.2)
                for k, q in zip(kept, pts):  # open: the mask was still shrinking when training stopped
                    ax.plot(k, q[arm][side], "o", color=colour, ms=3.5, mfc=colour if q["converged"] else "white")
                ax.plot(kept, [q[control][side] for q in pts], "--", color=colour, lw=0.9, alpha=0.8)
            ax.set_ylim(0, 1.05)
            if j % 2 == 0:
                ax.set_ylabel(label, fontsize=SMALL)
        panel(0, j).set_title(f"{rule_title(rule)}: {sub} mask", fontsize=SMALL + 1)
        panel(1, j).set_xlabel("share kept", fontsize=SMALL)
    for ax in fig.axes:  # after every panel is drawn: the shared axis spans them all
        percent_axis(ax, labelsize=SMALL, axis="both")
    handles = [plt.Line2D([], [], color=INIT_COLOURS[i], marker="o", ms=3.5) for i in INIT_COLOURS]
    handles += [plt.Line2D([], [], color="0.4", marker="o", ms=3.5, mfc="white", ls=""),
                plt.Line2D([], [], color="0.4", ls="--"), plt.Rectangle((0, 0), 1, 1, color="0.92")]
    labels = ["from scratch", "pretrained", "mask not converged", "random weights of the same number",
              "the paper's kept shares"]
    fig.legend(handles, labels, loc="outside lower center", ncol=2, fontsize=SMALL, frameon=False)
    return fig


def diagram_two_arms() -> plt.Figure:
    """The comparison, drawn: two arms of base models that differ only in where their weights start
    (random, or pretrained without labels), then the same training on the task, the same mask search
    and tests (chapter 5), and the comparison across base models at equal kept share. A schematic."""
    fig, ax = plt.subplots(figsize=(COLUMN, 3.1))
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 4)
    ax.axis("off")
    steps = {"scratch": ["random weights\n(a seed per model)", "train on the\ntask (60 epochs)",
                         "search masks,\nrun the two tests"],
             "pretrained": ["pretrain, no labels\n(MLM or SimCLR, once)", "fine-tune on the\ntask (60 epochs)",
                            "search masks,\nrun the two tests"]}
    centres = (1.3, 4.05, 6.6)
    for y, (init, boxes) in zip((2.9, 0.9), steps.items()):
        colour = INIT_COLOURS[init]
        ax.text(0.1, y + 0.62, init, fontsize=10, color=colour, fontweight="bold", va="center")
        for i, (x, text) in enumerate(zip(centres, boxes)):
            ax.text(x, y, text, ha="center", va="center", fontsize=9,
                    bbox={"boxstyle": "round,pad=0.35", "fc": "white", "ec": colour if i == 0 else "0.4"})
            if i:
                ax.annotate("", (x - 1.1, y), (centres[i - 1] + (1.3 if i == 1 else 1.15), y),
                            arrowprops={"arrowstyle": "->", "color": "0.4"})
        ax.annotate("", (8.2, 1.9 + (y - 1.9) * 0.3), (7.75, y), arrowprops={"arrowstyle": "->", "color": "0.4"})
    ax.text(9.2, 1.9, "compare base\nmodel by base\nmodel: how\nmany modular,\nhow large and\nhow spread\nthe effect, at\nequal kept share",
            ha="center", va="center", fontsize=8.5, bbox={"boxstyle": "round,pad=0.35", "fc": "0.95", "ec": "0.4"})
    ax.text(3.95, 1.9, "the same data, training, gate, search and tests in both arms",
            ha="center", va="center", fontsize=8.5, color="0.35", style="italic")
    return fig
