"""Chapter 2's explorer (notebooks/compositional_sprites.ipynb, "Explore"): a training support and a
composition, the sufficient-support check and the matching stored row; live with a kernel
(ipywidgets), and on the static page every support and composition pre-rendered
(:func:`modlib.widgets.wire`).
"""

from __future__ import annotations

import html

import ipywidgets as w
import matplotlib.pyplot as plt

from modlib import plots
from modlib.compositional_sprites import figures, findings
from modlib.widgets import wire

SUPPORTS = ["random", "orthogonal", "orthogonal-broad", "gap", "normal",
            "diagonal δ=0.2", "diagonal δ=0.1", "diagonal δ=0.05"]
COMPOSITIONS = [("soft, k = 1", ("soft", 1.0)), ("soft, k = 4", ("soft", 4.0)),
                ("soft, k = 16", ("soft", 16.0)), ("soft, k = 64", ("soft", 64.0)),
                ("alpha", ("alpha", 1.0))]


def sprite_explorer(runs, size: int) -> w.VBox:
    """Chapter 2: choose a training support and a composition; see the support (slot-0 x against
    slot-1 x), the sufficient-support check at ``size`` pixels (computed when the view is drawn) and
    the stored result of the matching row, if this run has one. The static page has every pair."""
    controls = {"support": w.Dropdown(options=SUPPORTS, value="orthogonal", description="support"),
                "composition": w.Dropdown(options=COMPOSITIONS, value=("soft", 1.0), description="C")}
    return wire(controls, lambda choices: render(runs, size, choices),
                 alt="600 scenes of the training support, slot 0's x against slot 1's x")


def render(runs, size: int, choices: dict) -> list:
    """The view of ``choices`` (``support``, one of :data:`SUPPORTS`; ``composition``, a value of
    :data:`COMPOSITIONS`): the support (a figure) and the check with the stored row (HTML)."""
    import torch

    from modlib import compositional_sprites as cs
    from modlib.data import sprites

    name = choices["support"]
    support, delta = (name.split(" δ=")[0], float(name.split("=")[1])) if "δ" in name else (name, None)
    composition, k = choices["composition"]
    z = sprites.sample_support(support, 600, torch.Generator().manual_seed(0), delta=delta).numpy()
    share = sprites.sufficient_support(support, composition, size, n=8, sharpness=k, delta=delta)
    row = next((r for r, spec in cs.ROWS.items()
                if spec[:2] == (support, delta) and spec[3:] == (composition, k)
                and spec[2] != "monolithic"), None)
    stored = _stored_line(runs, row) if row in runs.rows else "no stored result for this pair at this profile"
    fig, ax = plt.subplots(figsize=(3.2, 3.2))
    figures.support_panel(ax, z, name)
    plots.stamp(fig, findings.provenance(runs))  # its rows counted by name
    return [fig, (f"<pre>sufficient-support check: full rank at {share.min():.0%} of a slot's\n"
                  f"outputs in the worst of 8 draws per slot\n{html.escape(stored)}</pre>")]


def _stored_line(runs, row: str) -> str:
    """The stored row's final R², twice: the mean over every seed (stuck ones included, as the paper's
    table counts them) and the mean over the seeds that fit (in-domain R² >= ``findings.FIT``), which is
    what the chapter's text quotes for "a trained model"."""
    from modlib.compositional_sprites import findings

    r2_in, r2_whole = findings.r2_of(runs, row)
    fit = r2_in >= findings.FIT
    lines = [f"stored result ({row}):",
             f"  mean over all {len(r2_in)} seeds: R² {r2_in.mean():.2f} in-domain, {r2_whole.mean():.2f} whole cube"]
    if fit.all():
        lines.append("  (every seed fits its training support)")
    elif not fit.any():
        lines.append(f"  (no seed fits: none reaches in-domain R² {findings.FIT})")
    else:
        lines += [f"  over the seeds that fit ({fit.sum()} of {len(r2_in)}: in-domain R² ≥ {findings.FIT}),",
                  f"  as the text counts: R² {r2_in[fit].mean():.2f} in-domain, {r2_whole[fit].mean():.2f} whole cube"]
    return "\n".join(lines)
