"""ipywidgets explorers over stored results (they need a live kernel; the static book page shows
the saved first view, and the chapters add a kernel-free animation beside them)."""

from __future__ import annotations

import ipywidgets as w
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display

from modlib import plots


def toy_explorer(sweep) -> w.VBox:
    """Step, seed, formulation, activation, loss and reveal controls over the toy's stored boundaries."""
    s = sweep.settings
    first = sweep.arrays(s.activations[0], s.losses[0], s.formulations[0], s.reveals[0])
    steps = [int(t) for t in first["snapshot_steps"]]
    controls = {
        "step": w.SelectionSlider(options=steps, value=steps[-1], description="step"),
        "seed": w.IntSlider(value=0, min=0, max=first["grids"].shape[0] - 1, description="seed"),
        "formulation": w.ToggleButtons(options=list(s.formulations), description="formulation"),
        "activation": w.ToggleButtons(options=list(s.activations), description="activation"),
        "loss": w.ToggleButtons(options=list(s.losses), description="loss"),
        "reveal": w.SelectionSlider(options=list(s.reveals), value=s.reveals[0],
                                    description="X2 reveals"),
    }
    out = w.Output()

    def redraw(_=None):
        c = {k: v.value for k, v in controls.items()}
        a = sweep.arrays(c["activation"], c["loss"], c["formulation"], c["reveal"])
        k = steps.index(c["step"])
        with out:
            out.clear_output(wait=True)
            fig, ax = plt.subplots(figsize=(4.2, 4.2))
            plots.boundary_panel(ax, a, c["formulation"], c["seed"], k,
                                 f"step {c['step']}, seed {c['seed']}: held-out accuracy "
                                 f"{a['test_acc'][c['seed']]:.2f} (final)")
            plots.stamp(fig, sweep.provenance)
            plt.show()

    for c in controls.values():
        c.observe(redraw, names="value")
    redraw()
    box = w.VBox([w.HBox([controls["formulation"], controls["activation"]]),
                  w.HBox([controls["loss"], controls["reveal"]]),
                  w.HBox([controls["step"], controls["seed"]]), out])
    display(box)
    return box


def mask_explorer(points: dict, layers: list[str]) -> w.VBox:
    """An alpha selector (the specialization table at that alpha) and a layer selector (the + / *
    mask overlap at that layer across alphas) over the stored alpha sweep of the weight-mask chapter
    (``points``: ``{alpha: result}`` from :func:`modlib.modularity.sweep`)."""
    from modlib import data, modularity, results

    alphas, tables, ious = modularity.sweep_arrays(points)  # [A], [A, 5, 2], [A, L]
    provenance = results.provenance(list(points.values()))
    alpha = w.SelectionSlider(options=alphas, value=alphas[0], description="alpha")
    layer = w.Dropdown(options=[(f"layer {i + 1} ({n})", i) for i, n in enumerate(layers)], value=0,
                       description="layer")
    out = w.Output()

    def redraw(_=None):
        a = alphas.index(alpha.value)
        with out:
            out.clear_output(wait=True)
            fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
            axes[0].imshow(tables[a], cmap="Greens", vmin=0, vmax=1)
            for (i, j), v in np.ndenumerate(tables[a]):
                axes[0].text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8)
            axes[0].set(xticks=range(2), xticklabels=[f"acc. on {o}" for o in data.OPS],
                        yticks=range(len(modularity.ROWS)), yticklabels=modularity.ROWS,
                        title=f"alpha = {alpha.value:g}")
            axes[1].plot(alphas, ious[:, layer.value], marker="o")
            axes[1].axvline(alpha.value, color="0.6", ls=":")
            axes[1].set(xscale="log", xlabel="alpha", ylabel="IoU of + and * masks", ylim=(0, 1),
                        title=layer.label)
            fig.tight_layout()
            plots.stamp(fig, provenance)
            plt.show()

    alpha.observe(redraw, names="value")
    layer.observe(redraw, names="value")
    redraw()
    box = w.VBox([w.HBox([alpha, layer]), out])
    display(box)
    return box
