"""Chapter 3's explorer (notebooks/resists_at_scale.ipynb, "Explore"): one seed's MNIST and SCAN
curves in settings A and B and whether its stored translations of the shown SCAN test commands are
right; live with a kernel (ipywidgets), and on the
static page every seed and setting pre-rendered (:func:`modlib.widgets.wire`).
"""

from __future__ import annotations

import html

import ipywidgets as w
import matplotlib.pyplot as plt

from modlib import plots
from modlib.resists_at_scale import figures
from modlib.widgets import wire


def resists_explorer(runs) -> w.VBox:
    """Chapter 3: choose a seed; see its MNIST and SCAN curves in settings A and B and whether its
    stored translation of each shown SCAN test command is right, in the chosen setting. The static
    page has every seed and both settings."""
    from modlib import resists_at_scale as rs
    from modlib.data import scan

    seeds = len(runs.arrays("mnist-A")["acc_train"])
    controls = {"seed": w.IntSlider(value=0, min=0, max=seeds - 1, description="seed"),
                "setting": w.ToggleButtons(options=list(rs.SETTING_NAMES), description="translations")}
    _, test = scan.split("add-jump")
    shown = [test[i] for i in rs.shown_commands(runs.settings.seeds).tolist()]
    return wire(controls, lambda choices: render(runs, shown, choices),
                 alt="MNIST and SCAN accuracy curves of settings A and B")


def render(runs, shown: list[tuple[str, str]], choices: dict) -> list:
    """The view of ``choices`` (``seed``, ``setting``): the seed's curves (a figure) and its
    translations of the ``shown`` test commands, ``(command, truth)``, in the setting (HTML)."""
    import torch

    from modlib import resists_at_scale as rs
    from modlib.data import scan

    seed, setting = choices["seed"], choices["setting"]
    fig, axes = plt.subplots(1, 2, figsize=(plots.COLUMN, 2.6))
    for ax, experiment in zip(axes, rs.EXPERIMENTS):
        figures.ab_curves(ax, runs, experiment, seed=seed)
        ax.set_title(f"{experiment.upper()}, seed {seed}", fontsize=9)
    axes[1].set_xscale("symlog", linthresh=10)
    axes[1].set_xlim(left=0)
    axes[0].legend(fontsize=6, loc="lower right")  # each panel keys its own curves
    axes[1].legend(fontsize=6, loc="center right")
    plots.stamp(fig, runs.rows["scan-A"].provenance + " per setting")
    fig.tight_layout()
    pred = runs.arrays(f"scan-{setting}")["shown_pred"][seed]
    lines = [f"setting {setting}, seed {seed}, the shown test commands, each translated right or wrong:"]
    for (command, truth), p in zip(shown, torch.as_tensor(pred).tolist()):
        said = " ".join(scan.ACTION_VOCAB.decode(p))
        lines.append(f"{'right' if said == truth else 'wrong'}  {html.escape(command)}")
    return [fig, "<pre>" + "\n".join(lines) + "</pre>"]
