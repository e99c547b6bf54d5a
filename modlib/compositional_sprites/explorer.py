"""Chapter 2's explorer (notebooks/compositional_sprites.ipynb): a training support and a composition,
the sufficient-support check and the matching stored row (ipywidgets; a live kernel).
"""

from __future__ import annotations

import html

import ipywidgets as w
import matplotlib.pyplot as plt

from modlib import plots
from modlib.compositional_sprites import figures
from modlib.widgets import _wire


def sprite_explorer(runs, size: int) -> w.VBox:
    """Chapter 2: choose a training support and a composition; see the support (slot-0 x against
    slot-1 x), the sufficient-support check at ``size`` pixels (computed live) and the stored
    result of the matching row, if this run has one."""
    import torch

    from modlib import compositional_sprites as cs
    from modlib.data import sprites

    supports = ["random", "orthogonal", "orthogonal-broad", "gap", "normal",
                "diagonal δ=0.2", "diagonal δ=0.1", "diagonal δ=0.05"]
    compositions = [("soft, k = 1", ("soft", 1.0)), ("soft, k = 4", ("soft", 4.0)),
                    ("soft, k = 16", ("soft", 16.0)), ("soft, k = 64", ("soft", 64.0)),
                    ("alpha", ("alpha", 1.0))]
    controls = {"support": w.Dropdown(options=supports, value="orthogonal", description="support"),
                "composition": w.Dropdown(options=compositions, value=("soft", 1.0),
                                          description="C")}
    out = w.Output()

    def redraw(_=None):
        name = controls["support"].value
        support, delta = (name.split(" δ=")[0], float(name.split("=")[1])) if "δ" in name else (name, None)
        composition, k = controls["composition"].value
        z = sprites.sample_support(support, 600, torch.Generator().manual_seed(0),
                                   delta=delta).numpy()
        share = sprites.sufficient_support(support, composition, size, n=8, sharpness=k, delta=delta)
        row = next((r for r, spec in cs.ROWS.items()
                    if spec[:2] == (support, delta) and spec[3:] == (composition, k)
                    and spec[2] != "monolithic"), None)
        stored = (f"stored result ({row}): R² {runs.rows[row].metrics['r2_in_mean']:.2f} in-domain, "
                  f"{runs.rows[row].metrics['r2_whole_mean']:.2f} whole cube"
                  if row in runs.rows else "no stored result for this pair at this profile")
        with out:
            out.clear_output(wait=True)
            fig, ax = plt.subplots(figsize=(3.2, 3.2))
            figures.support_panel(ax, z, name)
            plots.stamp(fig, runs.provenance)
            plt.show()
        worst = share.min()
        text.value = (f"<pre>sufficient-support check: full rank at {worst:.0%} of a slot's\n"
                      f"outputs in the worst of 8 draws per slot\n{html.escape(stored)}</pre>")

    # text goes to its own widget: printing into an Output widget after a figure can leave the
    # kernel's last message undelivered, and the page's build waits for it
    text = w.HTML()
    return _wire(controls, redraw, w.VBox([w.HBox(list(controls.values())), out, text]))
