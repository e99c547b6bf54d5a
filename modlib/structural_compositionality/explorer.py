"""Chapter 5's explorer (notebooks/structural_compositionality.ipynb): a stored base model's masks by
layer and each mask seed's accuracies (ipywidgets; a live kernel).
"""

from __future__ import annotations

import html

import ipywidgets as w
import matplotlib.pyplot as plt

from modlib import plots
from modlib.structural_compositionality import figures
from modlib.widgets import _wire


def structure_explorer(runs) -> w.VBox:
    """Chapter 5: choose a stored base model (trained or the untrained control) and a subroutine;
    see where its masks keep weights, layer by layer, with the overlap of the two subroutines'
    masks, and the accuracies of each mask seed's subnetwork, ablation and controls."""
    searched = [n for n, r in runs.rows.items() if r.metrics.get("subroutines")]
    if not searched:
        return w.HTML("No stored result at this profile has a mask search (no base model passed "
                      f"the gate of {runs.settings.base_gate}).")
    controls = {"result": w.Dropdown(options=searched, description="base model"),
                "subroutine": w.ToggleButtons(options=[], description="subroutine")}
    out, text = w.Output(), w.HTML()

    def subroutines(_=None):
        names = list(runs.rows[controls["result"].value].metrics["subroutines"])
        controls["subroutine"].options = names

    def redraw(_=None):
        r = runs.rows[controls["result"].value]
        subs = tuple(r.metrics["subroutines"])
        sub = controls["subroutine"].value or subs[0]
        found = r.metrics["subroutines"][sub]
        with out:
            out.clear_output(wait=True)
            fig = figures.kept_by_layer(r.arrays, subs, r.metrics["overlap"]["layers"])
            fig.axes[0].set_title(f"{controls['result'].value}: masks by layer", fontsize=9)
            plots.stamp(fig, figures.structure_provenance(runs))
            plt.show()
        chosen = ", ".join(f"{k} {v}" for k, v in found["chosen"].items())
        lines = [f"{sub} mask: {chosen}",
                 f"({'passed' if found['passed_gate'] else 'missed'} the 0.9 gate on validation)",
                 "seed  kept   subnetwork     ablated        re-init abl.   random subnet",
                 "             target other   target other   target other   target other"]
        for run in found["runs"]:
            cells = "   ".join(f"{run[m][0]:.2f}  {run[m][1]:.2f}" for m in ("hard", "complement", "reinit", "random"))
            lines.append(f"{run['seed']:>4}  {run['kept']:.3f}  {cells}")
        text.value = "<pre>" + html.escape("\n".join(lines)) + "</pre>"

    controls["result"].observe(subroutines, names="value")
    subroutines()
    return _wire(controls, redraw, w.VBox([w.HBox(list(controls.values())), out, text]))
