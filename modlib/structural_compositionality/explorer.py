"""Chapter 5's explorer (notebooks/structural_compositionality.ipynb, after the masks by layer): a
stored base model's masks by layer and each mask seed's accuracies; live with a kernel (ipywidgets),
and on the static page every searched base model and subroutine pre-rendered
(:func:`modlib.widgets.wire`).
"""

from __future__ import annotations

import html

import ipywidgets as w
import numpy as np

from modlib import plots, results
from modlib.structural_compositionality import figures
from modlib.widgets import wire


def structure_explorer(runs) -> w.VBox:
    """Chapter 5: choose a stored base model (trained or the untrained control) and a subroutine;
    see where its masks keep weights, layer by layer, with the overlap of the two subroutines'
    masks, and the accuracies of each mask seed's subnetwork, ablation and controls. The static
    page has every searched base model and both of its subroutines."""
    searched = [n for n, r in runs.rows.items() if r.metrics.get("subroutines")]
    if not searched:
        return w.HTML("No stored result at this profile has a mask search (no base model passed "
                      f"the gate of {runs.settings.base_gate}).")
    controls = {"result": w.Dropdown(options=searched, description="base model"),
                "subroutine": w.ToggleButtons(options=[], description="subroutine")}

    def subroutines(_=None):  # the live subroutine buttons follow the base model's rule
        controls["subroutine"].options = list(runs.rows[controls["result"].value].metrics["subroutines"])

    controls["result"].observe(subroutines, names="value")
    subroutines()
    every = list(dict.fromkeys(sub for n in searched for sub in runs.rows[n].metrics["subroutines"]))
    return wire(controls, lambda choices: render(runs, choices),
                 static={"subroutine": [(sub, sub) for sub in every]},
                 alt="fraction of weights each subroutine's mask keeps per layer, and their overlap")


def configuration(chosen: dict) -> str:
    """A chosen mask configuration in the page's words: ``{"lam": 30.0, "stages": "later"}`` ->
    ``"λ ×30, layers later"`` (the multiple of the paper's λ, the masked layers, s0, learning rate)."""
    names = {"lam": "λ ×", "stages": "layers ", "init": "s0 ", "lr": "lr "}
    return ", ".join(f"{names.get(k, k + ' ')}{v:g}" if isinstance(v, float) else f"{names.get(k, k + ' ')}{v}"
                     for k, v in chosen.items())


def render(runs, choices: dict) -> list | None:
    """The view of ``choices`` (``result``: a stored result's name; ``subroutine``: one of its
    subroutines, or ``None`` for the first): its masks by layer (a figure) and the subroutine's
    chosen configuration and accuracies per mask seed (HTML); ``None`` where the result has no such
    subroutine."""
    r = runs.rows[choices["result"]]
    subs = tuple(r.metrics["subroutines"])
    sub = choices["subroutine"] or subs[0]
    if sub not in subs:
        return None
    found = r.metrics["subroutines"][sub]
    with np.errstate(invalid="ignore"):  # a layer both masks drop: no random overlap to draw
        fig = figures.kept_by_layer(r.arrays, subs, r.metrics["overlap"]["layers"])
    fig.axes[0].set_title(f"{choices['result']}: masks by layer", fontsize=9)
    made = results.provenance([r]).rsplit(" · ", 1)[0]
    plots.stamp(fig, f"{made} · {choices['result']}: kept, the mean of its "
                     f"{plots.count(len(found['runs']), 'mask seed')}; overlap, mask seed 0")
    heads = [head.split(" ", 1) + [""] for head in COLUMNS.values()]  # a two-word name on two lines
    lines = [f"{sub} mask: {configuration(found['chosen'])}",
             f"({'passed' if found['passed_gate'] else 'missed'} the 0.9 gate on validation)",
             "seed  kept   " + "".join(f"{h[0]:<11}" for h in heads).rstrip(),
             ("             " + "".join(f"{h[1]:<11}" for h in heads)).rstrip()]
    lines = [line for line in lines if line.strip()]  # no second name line where every name is one word
    for run in found["runs"]:
        cells = "  ".join(f"{f'{a:.2f}/{b:.2f}':<9}" for a, b in (run.get(m, (np.nan, np.nan)) for m in COLUMNS))
        lines.append(f"{run['seed']:>4}  {run['kept']:.3f}  {cells}".rstrip())
    return [fig, "<pre>" + html.escape("\n".join(lines + KEY)) + "</pre>"]


# the console table's columns (a stored run's accuracies: target / other) and the key printed under
# it; every line at most WIDTH characters, so that the table fits the book's text column (688 px)
COLUMNS = {"hard": "alone", "complement": "removed", "reinit": "re-drawn", "random": "random alone",
           "random_complement": "random removed"}
KEY = ["", "Each cell: target / other. target: the mask's own subroutine;",
       "other: the other one. alone: only the mask's weights kept;",
       "removed: the mask's weights zeroed; re-drawn: removed by giving them",
       "fresh random values; random alone / random removed: the same for as",
       "many weights per layer, chosen at random."]
WIDTH = 75
