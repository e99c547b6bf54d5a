"""Chapter 4's explorer (notebooks/weight_masks.ipynb): the stored alpha sweep, its specialization
table and mask overlap by layer (ipywidgets; a live kernel).
"""

from __future__ import annotations

import ipywidgets as w
import matplotlib.pyplot as plt
import numpy as np

from modlib import plots
from modlib.weight_masks import figures
from modlib.widgets import _wire


def mask_explorer(points: dict, layers: list[str]) -> w.VBox:
    """An alpha selector (the specialization table at that alpha) and a layer selector (the + / *
    mask overlap at that layer across alphas) over the stored alpha sweep of the weight-mask chapter
    (``points``: ``{alpha: result}`` from :func:`modlib.weight_masks.sweep`); the caption below it on
    the page names the profile, device and seeds."""
    from modlib import weight_masks as wm
    from modlib.data import digits

    alphas, tables, ious = wm.sweep_arrays(points)  # [A], [A, 5, 2], [A, L]
    alpha = w.SelectionSlider(options=alphas, value=alphas[0], description="alpha")
    layer = w.Dropdown(options=[(f"layer {i + 1} ({n})", i) for i, n in enumerate(layers)], value=0,
                       description="layer")
    out = w.Output()

    def redraw(_=None):
        a = alphas.index(alpha.value)
        with out:
            out.clear_output(wait=True)
            fig, axes = plt.subplots(1, 2, figsize=(plots.COLUMN, 2.8), width_ratios=(1.3, 1))
            axes[0].imshow(tables[a], cmap="Greens", vmin=0, vmax=1, aspect="auto")
            for (i, j), v in np.ndenumerate(tables[a]):
                axes[0].text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8,
                             color="white" if v > 0.6 else "black")
            axes[0].set_xticks(range(2), [f"on {o}" for o in digits.OPS], fontsize=8)
            axes[0].set_yticks(range(len(wm.ROWS)), list(wm.ROWS),
                               fontsize=8)
            axes[0].set_title(f"accuracy at alpha = {alpha.value:g}", fontsize=9)
            axes[1].plot(alphas, ious[:, layer.value], marker="o")
            axes[1].axvline(alpha.value, color="0.6", ls=":")
            axes[1].set(xscale="log", ylim=(0, 1))
            axes[1].set_xticks(alphas, [f"{v:g}" for v in alphas], rotation=45)
            axes[1].minorticks_off()
            axes[1].set_xlabel("alpha", fontsize=8)
            axes[1].set_ylabel("IoU of + and × masks", fontsize=8)
            axes[1].set_title(layer.label, fontsize=9)
            axes[1].tick_params(labelsize=8)
            fig.tight_layout()
            plt.show()

    return _wire({"alpha": alpha, "layer": layer}, redraw, w.VBox([w.HBox([alpha, layer]), out]))
