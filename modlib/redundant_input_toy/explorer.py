"""Chapter 1's explorer (notebooks/redundant_input_toy.ipynb, "Explore it yourself"): the toy's stored
boundaries by epoch, seed, formulation, activation, loss and training set; live with a kernel
(ipywidgets), and on the static page a stated subset pre-rendered (:func:`modlib.widgets.wire`).
"""

from __future__ import annotations

import ipywidgets as w
import matplotlib.pyplot as plt

from modlib import plots
from modlib.redundant_input_toy import figures
from modlib.widgets import keep_box, options_of, wire

STATIC_SEEDS = 3  # the static page's seeds: the first few of those with stored boundaries


def toy_explorer(sweep) -> w.VBox:
    """Formulation, activation, loss, training-set, epoch and seed controls over the toy's stored
    boundaries. The static page has every formulation, activation and loss, the training sets the
    chapter's table shows (the paper's, the held-out cell in training, the ternary controls), the
    first :data:`STATIC_SEEDS` seeds and the last epoch, and says so."""
    s = sweep.settings
    first = sweep.arrays(s.activations[0], s.losses[0], s.formulations[0], s.reveals[0])
    epochs = [int(t) for t in first["snapshot_epochs"]]
    sets = [(figures.condition_label(d, r), (d, r)) for d, r in s.conditions]
    seeds = first["grids"].shape[0]
    controls = {
        "formulation": w.ToggleButtons(options=list(s.formulations), description="formulation"),
        "activation": w.ToggleButtons(options=list(s.activations), description="activation"),
        "loss": w.ToggleButtons(options=list(s.losses), description="loss"),
        "condition": w.Dropdown(options=sets, value=sets[0][1], description="training set"),
        "epoch": w.SelectionSlider(options=epochs, value=epochs[-1], description="epoch"),
        "seed": w.IntSlider(value=0, min=0, max=seeds - 1, description="seed"),
    }
    # a control with one choice is no choice: the live version leaves it out (its value is fixed),
    # and the static one shows no menu for it (modlib.widgets.static_html)
    fixed = {n: c.value for n, c in controls.items() if len(options_of(c)) == 1}
    controls = {n: c for n, c in controls.items() if n not in fixed}
    ends = (max(s.reveals), min(s.reveals))
    shown_sets = [(label, (d, r)) for label, (d, r) in sets if d != "binary" or r in ends]
    shown_seeds = min(STATIC_SEEDS, seeds)
    note = (f"Pre-rendered for this page: the last stored epoch ({epochs[-1]}, named in each view's "
            f"title; the animation below steps through every epoch), seeds 0–{shown_seeds - 1} of "
            f"the {seeds} with stored "
            f"boundaries, and {len(shown_sets)} of the {len(sets)} training sets. Open the notebook "
            "(Colab) for every epoch, seed and training set.")
    layout = [[n for n in row if n in controls]
              for row in (["formulation", "activation"], ["loss", "condition"], ["epoch", "seed"])]
    static = {"condition": shown_sets, "epoch": [(str(epochs[-1]), epochs[-1])],
              "seed": [(str(k), k) for k in range(shown_seeds)]}
    drawn: dict = {}  # one figure per formulation and design, drawn again for each view
    return wire(controls, lambda choices: render(sweep, epochs, {**fixed, **choices}, drawn),
                 layout=[row for row in layout if row],
                 static={n: v for n, v in static.items() if n in controls},
                 note=note, alt="the network's decision boundary over its training data")


def render(sweep, epochs: list[int], choices: dict, drawn: dict | None = None) -> list:
    """The view of ``choices`` (``formulation``, ``activation``, ``loss``, ``condition``: ``(design,
    reveal)``, ``epoch``: one of the stored snapshot ``epochs``, ``seed``): that seed's boundary at
    that epoch over the training data, titled with its final held-out accuracy (one figure).

    ``drawn``: figures kept between calls, one per formulation and design (their views share one
    layout: the window, ticks and labels), each cleared and drawn again, its tight box measured
    once (:func:`modlib.widgets.keep_box`): the same pixels as a new figure per view, in less time
    (the static page's 120 views); without it, a new figure."""
    design, reveal = choices["condition"]
    a = sweep.arrays(choices["activation"], choices["loss"], choices["formulation"], reveal, design)
    seed, epoch = choices["seed"], choices["epoch"]
    key = (choices["formulation"], design)
    new = drawn is None or key not in drawn
    if new:
        fig, ax = plt.subplots(figsize=(4.2, 4.2))
        plots.stamp(fig, sweep.provenance)
    else:
        fig = drawn[key]
        ax = fig.axes[0]
        ax.cla()
    figures.boundary_panel(ax, a, choices["formulation"], seed, epochs.index(epoch),
                           f"epoch {epoch}, seed {seed}: held-out accuracy "
                           f"{a['test_acc'][seed]:.2f} (final)", design)
    if new and drawn is not None:
        keep_box(fig)
        drawn[key] = fig
    return [fig]
