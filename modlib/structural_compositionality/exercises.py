"""Chapter 5's exercises (notebooks/structural_compositionality.ipynb): :func:`check_odd_scores` and
:func:`check_quality`, each returning a :class:`modlib.checks.Verdict`.
"""

from __future__ import annotations

import torch

from modlib import structural_compositionality as sc
from modlib.checks import check, shape_of


@check
def check_odd_scores(mine):
    """``mine(embeddings)``: the odd-one-out scores ``[N, 4]`` of embeddings ``[N, 4, D]``,
    compared with :func:`modlib.structural_compositionality.odd_scores`."""
    torch.manual_seed(0)
    spread = torch.logspace(-2, 2, 4)[None, :, None]
    cases = {"random": torch.randn(8, 4, 16), "lengths from 0.01 to 100": torch.randn(8, 4, 16) * spread}
    for name, e in cases.items():
        got, want = mine(e.clone()), sc.odd_scores(e)
        if shape_of(got) != tuple(want.shape):
            return f"{name}: shape {shape_of(got)}, expected {tuple(want.shape)}"
        if not torch.allclose(got, want, atol=1e-5):
            unnormalised = -(e @ e.transpose(1, 2)).sum(-1)
            hint = ("; normalise the embeddings first (cosine, not dot products)"
                    if torch.allclose(got, unnormalised, rtol=1e-4, atol=1e-4) else "")
            return f"{name}: scores differ by up to {(got - want).abs().max():.3g}{hint}"
    seen = torch.tensor([[[1.0, 0], [1, 0.1], [0, 1], [1, -0.1]]])
    if mine(seen).argmax(1).item() != 2:
        return "the item at [0, 2] is the odd one out; is your sign right?"
    return None


@check
def check_quality(mine):
    """``mine(own, ablated_target, ablated_other)``: the selection rule's score of a subnetwork,
    compared with :func:`modlib.structural_compositionality.quality` at and around the gate."""
    cases = [(0.95, 0.3, 0.8), (0.89, 0.3, 0.8), (0.9, 0.3, 0.8), (0.95, 0.1, 0.8), (0.95, 0.1, 0.2),
             (1.0, 0.8, 0.3)]
    for case in cases:
        got, want = mine(*case), sc.quality(*case)
        if abs(got - want) > 1e-9:
            if case[0] in (0.89, 0.9):
                hint = "the gate is 'at least 0.9'"
            elif min(case[1:]) < 0.25:
                hint = "floor both accuracies at chance (0.25)"
            else:
                hint = "other minus target, not the reverse"
            return f"quality{case}: got {got:.3f}, expected {want:.3f} ({hint})"
    return None
