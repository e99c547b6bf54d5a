"""Chapter 4's explorer (notebooks/weight_masks.ipynb, "The regulariser's strength"): the stored alpha
sweep, its specialization table and mask overlap by layer; live with a kernel (ipywidgets), and on
the static page every alpha and layer pre-rendered (:func:`modlib.widgets.wire`).
"""

from __future__ import annotations

import ipywidgets as w
import matplotlib.pyplot as plt
import numpy as np

from modlib import plots, results
from modlib.weight_masks.figures import layer_name
from modlib.widgets import wire


def mask_explorer(points: dict, layers: list[str], alpha: float | None = None) -> w.VBox:
    """An alpha selector (the specialization table at that alpha) and a layer selector (the + / *
    mask overlap at that layer across alphas) over the stored alpha sweep of the weight-mask chapter
    (``points``: ``{alpha: result}`` from :func:`modlib.weight_masks.sweep`); the figure's corner
    names the profile, device and seeds. The static page has every alpha and layer. It opens at
    ``alpha`` (the page's) where the sweep has it, else at the weakest."""
    from modlib import weight_masks as wm

    alphas, tables, ious = wm.sweep_arrays(points)  # [A], [A, 5, 2], [A, L]
    near = [a for a in alphas if alpha is not None and np.isclose(a, alpha, rtol=1e-9, atol=0)]
    controls = {"alpha": w.SelectionSlider(options=alphas, value=(near or alphas)[0], description="alpha"),
                "layer": w.Dropdown(options=[(layer_name(i, len(layers)), i) for i in range(len(layers))],
                                    value=0, description="layer")}
    provenance = results.provenance(list(points.values()))
    return wire(controls, lambda choices: render(alphas, tables, ious, layers, provenance, choices),
                 alt="specialization table at one alpha and the + / × masks' overlap in one layer")


def render(alphas: list, tables: np.ndarray, ious: np.ndarray, layers: list[str], provenance: str,
           choices: dict) -> list:
    """The view of ``choices`` (``alpha``, ``layer``: an index into ``layers``): the accuracy table
    at that alpha beside the layer's IoU of the + and × masks across ``alphas`` (one figure)."""
    from modlib import weight_masks as wm
    from modlib.data import digits

    alpha, layer = choices["alpha"], choices["layer"]
    a = alphas.index(alpha)
    fig, axes = plt.subplots(1, 2, figsize=(plots.COLUMN, 2.8), width_ratios=(1.3, 1))
    axes[0].imshow(tables[a], cmap="Greens", vmin=0, vmax=1, aspect="auto")
    for (i, j), v in np.ndenumerate(tables[a]):
        axes[0].text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8,
                     color="white" if v > 0.6 else "black")
    axes[0].set_xticks(range(2), [f"on {o}" for o in digits.OPS], fontsize=8)
    axes[0].set_yticks(range(len(wm.ROWS)), list(wm.ROWS), fontsize=8)
    axes[0].set_title(f"accuracy at alpha = {alpha:g}", fontsize=9)
    axes[1].plot(alphas, ious[:, layer], marker="o")
    axes[1].axvline(alpha, color="0.6", ls=":")
    axes[1].set(xscale="log", ylim=(0, 1))
    axes[1].set_xticks(alphas, [f"{v:g}" for v in alphas], rotation=45)
    axes[1].minorticks_off()
    axes[1].set_xlabel("alpha", fontsize=8)
    axes[1].set_ylabel("IoU of + and × masks", fontsize=8)
    axes[1].set_title(layer_name(layer, len(layers)), fontsize=9)
    axes[1].tick_params(labelsize=8)
    fig.tight_layout(rect=(0, 0.05, 1, 1))  # room for the provenance line below the axes
    plots.stamp(fig, provenance)
    return [fig]
