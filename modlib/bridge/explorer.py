"""Chapter 7's explorer (notebooks/bridge.ipynb, "Explore the networks"): one stored network of
either formulation, its decision boundary as a whole, as its Y1 subnetwork, as a random subnetwork
as large per layer, and with its "use X2" mask's weights removed, each with its held-out and
training accuracy and kept share; live with a kernel (ipywidgets), and on the static page the first
seeds pre-rendered (:func:`modlib.widgets._wire`). Drawn from the stored networks and masks
(arrays ``net`` and ``mask_<name>``): nothing is trained, the boundaries are forward passes.
"""

from __future__ import annotations

import html

import ipywidgets as w
import matplotlib.pyplot as plt
import numpy as np
import torch

from modlib import masks, plots
from modlib.bridge import experiment as ex
from modlib.bridge.findings import failing
from modlib.redundant_input_toy import experiment as toy
from modlib.redundant_input_toy import figures as toy_figures
from modlib.redundant_input_toy.members import member_data
from modlib.widgets import _wire

STATIC_SEEDS = 6  # the static page's seeds: the first few of each formulation
# the four views of one network: (title, stored arm, mask, mode)
VIEWS = (("full network", "full", None, "off"),
         ("Y1 subnetwork", "sub", "y1", "hard"),
         ("random, as large", "random_sub", "y1", "random"),
         ("\"use X2\" removed", "ablated", "x2", "complement"))


def bridge_explorer(runs: dict, toy_settings: toy.ToySettings, provenance: str) -> w.VBox:
    """Formulation and seed controls over the stored results ``runs`` (``{formulation: Result}``,
    :func:`modlib.bridge.run`) made with chapter 1's ``toy_settings``. The static page has both
    formulations and the first :data:`STATIC_SEEDS` seeds, and says so."""
    fs = list(runs)
    seeds = runs[fs[0]].arrays["full_held_out"].size
    controls = {"formulation": w.ToggleButtons(options=fs, description="formulation"),
                "seed": w.IntSlider(value=0, min=0, max=seeds - 1, description="seed")}
    shown = min(STATIC_SEEDS, seeds)
    note = (f"Pre-rendered for this page: seeds 0–{shown - 1} of the {seeds} per formulation. "
            "Open the notebook (Colab) for every seed.")
    arrays = {f: r.arrays for f, r in runs.items()}
    return _wire(controls, lambda choices: render(arrays, toy_settings, provenance, choices),
                 static={"seed": [(str(k), k) for k in range(shown)]}, note=note,
                 alt="one network's decision boundary: whole, its Y1 subnetwork, a random "
                     "subnetwork as large, and with the use-X2 mask's weights removed")


def _probabilities(net: torch.nn.Module, mask: dict | None, mode: str, seed: int, grid: torch.Tensor,
                   resolution: int) -> np.ndarray:
    """P(Y1 = 1) over ``grid`` as chapter 1's boundaries store it (uint8 x 255, ``[res, res]``),
    of ``net`` with ``mask`` applied in ``mode`` (as :func:`modlib.bridge.scored` applies it)."""
    ms = None
    if mask is not None:
        ms = masks.attach(net, "gumbel")
        ms.set_masks(mask)
        ms.set_mode(mode, seed=seed)
    try:
        with torch.no_grad():
            z = net(grid)[:, 0]
        p = toy.to_probability(z, ex.LOSS)
        return (p * 255).round().to(torch.uint8).numpy().reshape(resolution, resolution)
    finally:
        if ms is not None:
            ms.remove()


def render(arrays: dict, s: toy.ToySettings, provenance: str, choices: dict) -> list:
    """The view of ``choices`` (``formulation``, ``seed``): four boundary panels of that network
    over its training points, each titled with held-out and training accuracy (a figure), and
    the numbers with the masks' kept shares (HTML)."""
    f, seed = choices["formulation"], choices["seed"]
    a = arrays[f]
    net = ex.network(s, a, seed)
    x, y, _, _ = member_data(s, f, ex.CONDITION, seed)
    win = toy.window(f, "binary")
    res = s.grid_resolution
    grid = toy._grid(res, torch.tensor(win))
    fig, axes = plt.subplots(1, len(VIEWS), figsize=(plots.COLUMN, 2.6), sharey=True)
    for ax, (title, arm, name, mode) in zip(axes, VIEWS):
        mask = None if name is None else ex.stored_mask(net, a, name, seed)
        if mode == "random":  # the control as scored: as many weights per layer, placed with the seed
            mask, mode = masks.random_like(mask, seed), "hard"
        toy_figures.boundary(ax, _probabilities(net, mask, mode, seed, grid, res), win)
        toy_figures.toy_data(ax, x.numpy(), y.numpy(), f, legend=False)
        ax.set_title(f"{title}\nheld-out {a[f'{arm}_held_out'][seed]:.2f}, "
                     f"train {a[f'{arm}_train'][seed]:.2f}", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.set(xlabel="$x_1$", ylabel="")
    axes[0].set_ylabel("$x_2$")
    fails = "fails" if failing(a)[seed] else "generalizes"
    fig.suptitle(f"formulation ({f}), seed {seed}: the network {fails} (dashed box: held-out cell)",
                 fontsize=9)
    fig.tight_layout(rect=(0, 0.05, 1, 1))  # room for the provenance line below the axes
    plots.stamp(fig, provenance)
    rows = [("full network", "full", "—"),
            ("Y1 subnetwork", "sub", f"{a['kept_y1'][seed]:.0%}"),
            ("random subnetwork, as large per layer", "random_sub", f"{a['kept_y1'][seed]:.0%}"),
            ("Y1 subnetwork of the untrained weights", "untrained_sub", f"{a['kept_untrained'][seed]:.0%}"),
            ("\"use X2\" mask's weights removed", "ablated", f"{1 - a['kept_x2'][seed]:.0%}"),
            ("as many random weights removed", "random_ablated", f"{1 - a['kept_x2'][seed]:.0%}"),
            ("first layer's weights from x2 zeroed", "zero_x2", "—")]
    lines = [f"{'':<40} {'held-out':>8} {'train':>6} {'reliance':>9}  weights kept"]
    lines += [f"{label:<40} {a[f'{arm}_held_out'][seed]:>8.2f} {a[f'{arm}_train'][seed]:>6.2f} "
              f"{a[f'{arm}_reliance'][seed]:>9.2f}  {share}" for label, arm, share in rows]
    return [fig, "<pre>" + html.escape("\n".join(lines)) + "</pre>"]
