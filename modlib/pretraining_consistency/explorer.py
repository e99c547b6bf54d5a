"""Chapter 6's explorer (notebooks/pretraining_consistency.ipynb, "Explore the seeds"): every base
model's ablated accuracies, from scratch and pretrained, per rule and subroutine; live with a kernel
(ipywidgets), and on the static page every subnetwork and base model pre-rendered
(:func:`modlib.widgets.wire`).
"""

from __future__ import annotations

import html

import ipywidgets as w
import matplotlib.pyplot as plt

from modlib import plots
from modlib.pretraining_consistency import figures
from modlib.widgets import wire


def pretraining_explorer(runs, df, margin: float) -> w.VBox:
    """Chapter 6: choose a rule and subroutine; see every base model's ablated accuracies (target
    against other subroutine), from scratch and pretrained, one point per base model, with a chosen
    seed's two points ringed and its numbers (subnetwork and ablation, per mask seed) below, as a table; points
    above the dashed line (effect ``margin``, :data:`modlib.pretraining_consistency.findings.MARGIN`) show the modular
    pattern, dotted lines mark chance, as in the chapter's figures. The masks are those the search chose, not the comparable-
    density ones (the title says so). The static page has every subnetwork and base model.
    ``df``: :func:`modlib.pretraining_consistency.findings.pretraining_effects` of ``runs``."""
    groups = [(f"{rule}: {sub}", (rule, sub)) for rule, sub in dict.fromkeys(zip(df["rule"], df["subroutine"]))]
    controls = {"group": w.Dropdown(options=groups, description="subnetwork"),
                "seed": w.IntSlider(value=0, min=0, max=int(df["seed"].max()), description="base model")}
    return wire(controls, lambda choices: render(runs, df, margin, choices),
                 alt="every base model's ablated accuracies, target against other subroutine")


def render(runs, df, margin: float, choices: dict) -> list:
    """The view of ``choices`` (``group``: ``(rule, subroutine)``; ``seed``: a base model): the
    scatter of every base model with the chosen one ringed (a figure) and its numbers per mask seed
    (HTML)."""
    rule, sub = choices["group"]
    seed = choices["seed"]
    rows = df[(df["rule"] == rule) & (df["subroutine"] == sub)]
    fig, ax = plt.subplots(figsize=(plots.COLUMN, 4.0))
    for init, colour in figures.INIT_COLOURS.items():
        r = rows[rows["init"] == init]
        ax.plot(r["target"], r["other"], "o", color=colour, label=init, ms=5)
        mine = r[r["seed"] == seed]
        ax.plot(mine["target"], mine["other"], "o", ms=12, mfc="none", color=colour)
    ax.plot([0, 1], [0, 1], color="0.6", lw=0.8)
    ax.plot([0, 1 - margin], [margin, 1], color="0.6", lw=0.8, ls="--", label=f"effect {margin:g}")
    ax.axhline(0.25, color="0.4", ls=":", lw=0.8, label="chance")  # dotted, as in the figures
    ax.axvline(0.25, color="0.4", ls=":", lw=0.8)
    ax.set(xlim=(0, 1.05), ylim=(0, 1.05), xlabel=f"ablated: {sub} problems (target)",
           ylabel="ablated: other subroutine's accuracy")
    # the search's masks, not the comparable-density ones most verdicts read (issue 57)
    ax.set_title(f"{rule}, {sub} mask, as the search chose it (not at comparable density)\n"
                 f"above the dashed line (effect ≥ {margin:g}) is modular", fontsize=9)
    # beside the axes: inside, the chance lines and the points run through it
    ax.legend(fontsize=8, frameon=False, loc="center left", bbox_to_anchor=(1.02, 0.5))
    ax.set_aspect("equal")
    fig.tight_layout(rect=(0, 0.05, 1, 1))  # room for the provenance line below the axes
    plots.stamp(fig, figures.pretraining_provenance(runs))
    head = ["init", "task accuracy", "mask seed", "alone: target", "alone: other", "removed: target", "removed: other"]
    rows = []
    for init in ("scratch", "pretrained"):
        m = runs.rows[f"{rule}-{init}-{seed}"].metrics
        if not m["searched"]:
            rows.append([init, f"{m['base']['task']:.2f}", "not searched (below the base gate)"])
            continue
        for run in m["subroutines"][sub]["runs"]:
            rows.append([init, f"{m['base']['task']:.2f}", str(run["seed"]),
                         *(f"{a:.2f}" for a in (*run["hard"], *run["complement"]))])
    return [fig, _table(head, rows)]


def _table(head: list[str], rows: list[list[str]]) -> str:
    """A small HTML table of ``rows`` under ``head``; a row shorter than ``head`` spans the rest.
    Every cell is padded, so that no theme runs two columns together ("pretrained1.00")."""
    pad = 'style="padding: 0.1em 0.8em 0.1em 0"'

    def cells(row, tag):
        out = [f"<{tag} {pad}>{html.escape(x)}</{tag}>" for x in row]
        if len(row) < len(head):
            out[-1] = out[-1].replace(f"<{tag} ", f'<{tag} colspan="{len(head) - len(row) + 1}" ', 1)
        return "<tr>" + "".join(out) + "</tr>"
    return ("<table><thead>" + cells(head, "th") + "</thead><tbody>"
            + "".join(cells(r, "td") for r in rows) + "</tbody></table>")
