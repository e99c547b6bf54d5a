"""Chapter 4's exercises (notebooks/weight_masks.ipynb): :func:`check_gumbel_weight` and
:func:`check_iou`, each returning a :class:`modlib.checks.Verdict`.
"""

from __future__ import annotations

import math

import torch

from modlib import masks
from modlib.checks import check


@check
def check_gumbel_weight(mine):
    """``mine(weight, logit, u, tau)``: the straight-through Gumbel-sigmoid masked weight, compared
    with :func:`modlib.masks.gumbel_weight` on random inputs ``[1000]``: the values, then the
    gradients that reach the logits."""
    g = torch.Generator().manual_seed(0)
    w, logit0 = torch.randn(1000, generator=g), 2 * torch.randn(1000, generator=g)
    u = torch.rand(1000, generator=g).clamp(1e-3, 1 - 1e-3)
    for tau in (1.0, 0.5):
        outs, grads = [], []
        for f in (mine, masks.gumbel_weight):
            logit = logit0.clone().requires_grad_()
            out = f(w, logit, u, tau)
            outs.append(out.detach())
            grads.append(torch.autograd.grad(out.sum(), logit)[0] if out.requires_grad else None)
        if not torch.allclose(outs[0], outs[1], atol=1e-6):
            return f"tau={tau}: the values differ; the forward pass gives weight times the hard 0/1 sample"
        if grads[0] is None or not torch.allclose(grads[0], grads[1], atol=1e-5):
            return (f"tau={tau}: the gradients reaching the logits differ; they are those of the soft "
                    "sample (hard + soft - soft.detach())")
    return None


@check
def check_iou(mine):
    """``mine(a, b)``: the intersection over union of two boolean masks of one weight tensor,
    compared with :func:`modlib.masks.iou`, including nested, disjoint and empty masks."""
    g = torch.Generator().manual_seed(0)
    a, b = torch.rand(20, 30, generator=g) < 0.3, torch.rand(20, 30, generator=g) < 0.6
    empty = torch.zeros(20, 30, dtype=torch.bool)
    cases = {"two random masks": (a, b), "one inside the other": (a, a | b), "disjoint masks": (a, ~a),
             "a mask and itself": (a, a), "two empty masks": (empty, empty)}
    for name, (m1, m2) in cases.items():
        got, want = float(mine(m1.clone(), m2.clone())), masks.iou({"w": m1}, {"w": m2})["w"]
        if math.isnan(want):
            if not math.isnan(got):
                return f"{name}: got {got:.4f}, expected nan (the union is empty: no overlap to measure)"
            continue
        if math.isnan(got) or abs(got - want) > 1e-6:
            smaller = masks.iomin({"w": m1}, {"w": m2})["w"]
            if abs(got - smaller) < 1e-6:
                return f"{name}: got {got:.4f}, expected {want:.4f}; divide by the union, not the smaller mask"
            return f"{name}: got {got:.4f}, expected {want:.4f}; |a and b| / |a or b|"
    return None
