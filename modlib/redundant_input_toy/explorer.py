"""Chapter 1's explorer (notebooks/redundant_input_toy.ipynb): the toy's stored boundaries by epoch,
seed, formulation, activation, loss and training set (ipywidgets; a live kernel).
"""

from __future__ import annotations

import ipywidgets as w
import matplotlib.pyplot as plt

from modlib import plots
from modlib.redundant_input_toy import figures
from modlib.widgets import _wire


def toy_explorer(sweep) -> w.VBox:
    """Epoch, seed, formulation, activation, loss and training-set controls over the toy's stored
    boundaries."""
    s = sweep.settings
    first = sweep.arrays(s.activations[0], s.losses[0], s.formulations[0], s.reveals[0])
    epochs = [int(t) for t in first["snapshot_epochs"]]
    sets = [(figures.condition_label(d, r), (d, r)) for d, r in s.conditions]
    controls = {
        "epoch": w.SelectionSlider(options=epochs, value=epochs[-1], description="epoch"),
        "seed": w.IntSlider(value=0, min=0, max=first["grids"].shape[0] - 1, description="seed"),
        "formulation": w.ToggleButtons(options=list(s.formulations), description="formulation"),
        "activation": w.ToggleButtons(options=list(s.activations), description="activation"),
        "loss": w.ToggleButtons(options=list(s.losses), description="loss"),
        "condition": w.Dropdown(options=sets, value=sets[0][1], description="training set"),
    }
    out = w.Output()

    def redraw(_=None):
        c = {k: v.value for k, v in controls.items()}
        design, reveal = c["condition"][0], c["condition"][1]
        a = sweep.arrays(c["activation"], c["loss"], c["formulation"], reveal, design)
        k = epochs.index(c["epoch"])
        with out:
            out.clear_output(wait=True)
            fig, ax = plt.subplots(figsize=(4.2, 4.2))
            figures.boundary_panel(ax, a, c["formulation"], c["seed"], k,
                                 f"epoch {c['epoch']}, seed {c['seed']}: held-out accuracy "
                                 f"{a['test_acc'][c['seed']]:.2f} (final)", design)
            plots.stamp(fig, sweep.provenance)
            plt.show()

    return _wire(controls, redraw, w.VBox([w.HBox([controls["formulation"], controls["activation"]]),
                                           w.HBox([controls["loss"], controls["condition"]]),
                                           w.HBox([controls["epoch"], controls["seed"]]), out]))
