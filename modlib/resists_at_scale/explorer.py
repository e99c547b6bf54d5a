"""Chapter 3's explorer (notebooks/resists_at_scale.ipynb): one seed's MNIST and SCAN curves in
settings A and B and its stored translations (ipywidgets; a live kernel).
"""

from __future__ import annotations

import html

import ipywidgets as w
import matplotlib.pyplot as plt

from modlib import plots
from modlib.resists_at_scale import figures
from modlib.widgets import _wire


def resists_explorer(runs) -> w.VBox:
    """Chapter 3: choose a seed; see its MNIST and SCAN curves in settings A and B (means over
    seeds dotted) and its stored translations of the shown SCAN test commands in the chosen
    setting."""
    import torch

    from modlib import resists_at_scale as rs
    from modlib.data import scan

    seeds = len(runs.arrays("mnist-A")["acc_train"])
    controls = {"seed": w.IntSlider(value=0, min=0, max=seeds - 1, description="seed"),
                "setting": w.ToggleButtons(options=list(rs.SETTING_NAMES), description="translations")}
    out = w.Output()
    _, test = scan.split("add-jump")
    shown = [test[i] for i in rs.shown_commands(runs.settings.seeds).tolist()]

    def redraw(_=None):
        seed, setting = controls["seed"].value, controls["setting"].value
        with out:
            out.clear_output(wait=True)
            fig, axes = plt.subplots(1, 2, figsize=(plots.COLUMN, 2.6))
            for ax, experiment in zip(axes, rs.EXPERIMENTS):
                figures.ab_curves(ax, runs, experiment, seed=seed)
                ax.set_title(f"{experiment.upper()}, seed {seed}", fontsize=9)
            axes[1].set_xscale("symlog", linthresh=10)
            axes[1].set_xlim(left=0)
            axes[1].legend(fontsize=6, loc="center right")
            plots.stamp(fig, runs.rows["scan-A"].provenance + " per setting")
            fig.tight_layout()
            plt.show()
        pred = runs.arrays(f"scan-{setting}")["shown_pred"][seed]
        lines = [f"setting {setting}, seed {seed}, the shown test commands (✓ right, ✗ wrong):"]
        for (command, truth), p in zip(shown, torch.as_tensor(pred).tolist()):
            said = " ".join(scan.ACTION_VOCAB.decode(p))
            lines.append(f"{'✓' if said == truth else '✗'} {html.escape(command)}")
        text.value = "<pre>" + "\n".join(lines) + "</pre>"

    text = w.HTML()
    return _wire(controls, redraw, w.VBox([w.HBox(list(controls.values())), out, text]))
