"""Chapter 7's explorer (notebooks/bridge.ipynb, "Explore the networks"): one stored network of
either formulation, its decision boundary as a whole, as its Y1 subnetwork, as a random subnetwork
as large per layer, with its "use X2" mask's weights removed, with only the "use X2" weights the Y1
mask does not keep removed (experiment 2's second rule, :func:`modlib.bridge.experiment.with_exclusive`)
and with the first layer's weights from x2 zeroed, each with its held-out and training accuracy
and kept share; live with a kernel (ipywidgets), and on the static page the first seeds
pre-rendered (:func:`modlib.widgets.wire`), opened on a failing network. Drawn from the stored
networks and masks (arrays ``net`` and ``mask_<name>``): nothing is trained, the boundaries are
forward passes.
"""

from __future__ import annotations

import copy
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
from modlib.redundant_input_toy.mechanism import zero_x2
from modlib.redundant_input_toy.members import member_data
from modlib.widgets import wire

STATIC_SEEDS = 6  # the static page's seeds: the first few of each formulation
# the six views of one network, two rows of three: (title, stored arm, mask, mode); "excl" is the
# "use X2" mask minus the Y1 mask (scored here when the arrays lack it), "zero" the x2-zeroed net
VIEWS = (("full network", "full", None, "off"),
         ("Y1 subnetwork", "sub", "y1", "hard"),
         ("random, as large", "random_sub", "y1", "random"),
         ("\"use X2\" removed", "ablated", "x2", "complement"),
         ("\"use X2\" minus Y1 removed", "ablated_excl", "excl", "complement"),
         ("x2's input weights zeroed", "zero_x2", None, "zero"))


def bridge_explorer(runs: dict, toy_settings: toy.ToySettings, provenance: str) -> w.VBox:
    """Formulation and seed controls over the stored results ``runs`` (``{formulation: Result}``,
    :func:`modlib.bridge.run`) made with chapter 1's ``toy_settings``. The static page has both
    formulations and the first :data:`STATIC_SEEDS` seeds, and says so."""
    fs = list(runs)
    seeds = runs[fs[0]].arrays["full_held_out"].size
    shown = min(STATIC_SEEDS, seeds)
    # open on a failing network (the first among the pre-rendered seeds), where surgery matters
    fails = np.flatnonzero(failing(runs[fs[0]].arrays)[:shown])
    controls = {"formulation": w.ToggleButtons(options=fs, description="formulation"),
                "seed": w.IntSlider(value=int(fails[0]) if fails.size else 0, min=0, max=seeds - 1,
                                    description="seed")}
    note = (f"Pre-rendered for this page: seeds 0–{shown - 1} of the {seeds} per formulation. "
            "Open the notebook (Colab) for every seed.")
    arrays = {f: r.arrays for f, r in runs.items()}
    return wire(controls, lambda choices: render(arrays, toy_settings, provenance, choices),
                 static={"seed": [(str(k), k) for k in range(shown)]}, note=note,
                 alt="one network's decision boundary: whole, its Y1 subnetwork, a random "
                     "subnetwork as large, with the use-X2 mask's weights removed, with only the "
                     "use-X2 weights outside the Y1 mask removed, and with x2's input weights zeroed")


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
    """The view of ``choices`` (``formulation``, ``seed``): six boundary panels of that network
    over its training points (:data:`VIEWS`), each titled with held-out and training accuracy (a
    figure), and the numbers with the masks' kept shares (an HTML table, with what its reliance
    column means)."""
    f, seed = choices["formulation"], choices["seed"]
    a = dict(arrays[f])
    net = ex.network(s, a, seed)
    x, y, x_test, y_test = member_data(s, f, ex.CONDITION, seed)
    y1, x2 = (ex.stored_mask(net, a, m, seed) for m in ("y1", "x2"))
    excl = {k: x2[k] & ~y1[k] for k in x2}  # as modlib.bridge.experiment.with_exclusive removes it
    if "ablated_excl_held_out" not in a:  # the stored result lacks it: score this seed here
        r = ex.scored(net, excl, "complement", {"held_out": (x_test, y_test), "train": (x, y)})
        for k, v in r.items():
            a[f"ablated_excl_{k}"] = {seed: v}
    win = toy.window(f, "binary")
    res = s.grid_resolution
    grid = toy.window_grid(res, torch.tensor(win))
    fig, axes = plt.subplots(2, 3, figsize=(plots.COLUMN, 5.4), sharex=True, sharey=True)
    for i, (ax, (title, arm, name, mode)) in enumerate(zip(axes.flat, VIEWS)):
        mask = {"y1": y1, "x2": x2, "excl": excl}.get(name)
        view = net
        if mode == "random":  # the control as scored: as many weights per layer, placed with the seed
            mask, mode = masks.random_like(mask, seed), "hard"
        elif mode == "zero":  # chapter 1's cut: the first layer's weights from x2 set to zero
            view, mode = zero_x2(copy.deepcopy(net)), "off"
        toy_figures.boundary(ax, _probabilities(view, mask, mode, seed, grid, res), win)
        toy_figures.toy_data(ax, x.numpy(), y.numpy(), f, legend=False)
        ax.set_title(f"{title}\nheld-out {a[f'{arm}_held_out'][seed]:.2f}, "
                     f"train {a[f'{arm}_train'][seed]:.2f}", fontsize=8)
        ax.tick_params(labelsize=8)
        ax.set(xlabel="$x_1$" if i >= 3 else "", ylabel="$x_2$" if i % 3 == 0 else "")
    fails = "fails" if failing(a)[seed] else "generalizes"
    fig.suptitle(f"formulation ({f}), seed {seed}: the network {fails} (dashed box: held-out cell)",
                 fontsize=9)
    fig.tight_layout(rect=(0, 0.04, 1, 1), h_pad=1.2)  # room for the provenance line below the axes
    plots.stamp(fig, provenance)
    rows = [("full network", "full", "—"),
            ("Y1 subnetwork", "sub", f"{a['kept_y1'][seed]:.0%}"),
            ("random subnetwork, as large per layer", "random_sub", f"{a['kept_y1'][seed]:.0%}"),
            ("Y1 subnetwork of the untrained weights", "untrained_sub", f"{a['kept_untrained'][seed]:.0%}"),
            ("\"use X2\" mask's weights removed", "ablated", f"{1 - a['kept_x2'][seed]:.0%}"),
            ("as many random weights removed", "random_ablated", f"{1 - a['kept_x2'][seed]:.0%}"),
            ("\"use X2\" weights the Y1 mask does not keep removed", "ablated_excl",
             f"{1 - ex.kept(excl)[0]:.0%}"),
            ("first layer's weights from x2 zeroed", "zero_x2", "—")]
    return [fig, _numbers_table([(label, a[f"{arm}_held_out"][seed], a[f"{arm}_train"][seed],
                                  a[f"{arm}_reliance"][seed], share) for label, arm, share in rows])]


RELIANCE_CAP = 1000.0  # above it the x1 gradient is (nearly) zero and the ratio says only "x2 alone"
RELIANCE_NOTE = ("<p style='font-size:0.85em'>Reliance on x2: E|dz/dx2| / E|dz/dx1| over the held-out "
                 "cell, above 1 where the output moves more with x2 than with x1; "
                 f"&quot;&gt; {RELIANCE_CAP:.0f}&quot; where the x1 gradient is (nearly) zero.</p>")


def reliance_text(r: float) -> str:
    """A reliance (E|dz/dx2| / E|dz/dx1|, the x1 gradient clamped at 1e-12) as the explorer shows
    it: two decimals, or "> 1000" where the x1 gradient is (nearly) zero and the ratio is huge."""
    return f"> {RELIANCE_CAP:.0f}" if r > RELIANCE_CAP else f"{r:.2f}"


def _numbers_table(rows: list[tuple]) -> str:
    """The numbers under the panels as a small HTML table whose headers wrap: per variant of the
    network its held-out and training accuracy, its reliance on x2 and the weights it keeps."""
    cell = "padding:1px 8px;text-align:{};vertical-align:bottom"
    head = ["", "held-out accuracy", "train accuracy", "reliance on x2", "weights kept"]
    out = ["<table style='font-size:0.85em;border-collapse:collapse'><tr>"]
    out += [f"<th style='{cell.format('left' if i == 0 else 'right')}'>{h}</th>" for i, h in enumerate(head)]
    out.append("</tr>")
    for label, held_out, train, reliance, share in rows:
        values = [html.escape(label), f"{held_out:.2f}", f"{train:.2f}", html.escape(reliance_text(reliance)),
                  share]
        out.append("<tr>" + "".join(f"<td style='{cell.format('left' if i == 0 else 'right')}'>{v}</td>"
                                    for i, v in enumerate(values)) + "</tr>")
    out.append("</table>")
    return "".join(out) + RELIANCE_NOTE
