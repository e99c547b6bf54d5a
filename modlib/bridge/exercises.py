"""Chapter 7's exercise checks (notebooks/bridge.ipynb, "Exercises"): :func:`check_score` and
:func:`check_random_same_size`, each returning a :class:`modlib.checks.Verdict`.
"""

from __future__ import annotations

import torch

from modlib.checks import check


def _masks(seed: int) -> dict[str, torch.Tensor]:
    """A made-up mask over chapter 1's network (2-8-8-8-1), with different shares per layer."""
    g = torch.Generator().manual_seed(seed)
    shapes = {"0.weight": (8, 2), "2.weight": (8, 8), "4.weight": (8, 8), "6.weight": (1, 8)}
    shares = {"0.weight": 0.5, "2.weight": 0.2, "4.weight": 0.7, "6.weight": 0.4}
    return {k: torch.rand(s, generator=g) < shares[k] for k, s in shapes.items()}


@check
def check_random_same_size(mine):
    """``mine(mask, seed)``: a random control for ``mask`` (weight name -> bool tensor): the same
    names and shapes, as many kept weights *in each tensor* as ``mask`` keeps there, at places
    drawn at random with ``seed``. Compared on made-up masks with the rule, not with one answer."""
    for trial in range(3):
        mask = _masks(trial)
        got = mine({k: v.clone() for k, v in mask.items()}, trial)
        if not isinstance(got, dict) or set(got) != set(mask):
            return f"return a dict with the mask's weight names {sorted(mask)}"
        for k, m in mask.items():
            g = torch.as_tensor(got[k])
            if tuple(g.shape) != tuple(m.shape):
                return f"{k}: shape {tuple(g.shape)}, expected {tuple(m.shape)} (the weight's own)"
            if int(g.bool().sum()) != int(m.sum()):
                pooled = sum(int(v.sum()) for v in mask.values())
                got_pooled = sum(int(torch.as_tensor(v).bool().sum()) for v in got.values())
                why = (" (the total is right: keep the count per tensor, not pooled over the network)"
                       if pooled == got_pooled else "")
                return f"{k}: keeps {int(g.bool().sum())} weights, the mask keeps {int(m.sum())}{why}"
    mask = _masks(0)
    a, b = mine(mask, 0), mine(mask, 1)
    if all(torch.equal(torch.as_tensor(a[k]).bool(), m) for k, m in mask.items()):
        return "the control is the mask itself; draw the kept places at random"
    firsts = all(torch.equal(torch.as_tensor(a[k]).bool().flatten()[: int(m.sum())],
                             torch.ones(int(m.sum()), dtype=torch.bool)) for k, m in mask.items())
    if firsts:
        return "every tensor keeps its first weights; place them at random (torch.randperm)"
    if all(torch.equal(torch.as_tensor(a[k]).bool(), torch.as_tensor(b[k]).bool()) for k in mask):
        return "seeds 0 and 1 give the same control; draw the places with a generator seeded by seed"
    return None


@check
def check_score(mine):
    """``mine(held_out, train)``: the page's score of a network, per seed, from its held-out and
    training accuracies (``[S]`` arrays): the worse of the two (:func:`modlib.bridge.findings.both`).
    Compared on made-up accuracies, among them a network that answers 1 everywhere."""
    import numpy as np

    cases = {"a network that answers 1 everywhere": (np.array([1.0, 1.0]), np.array([1 / 3, 0.3])),
             "a failing network that fits its training points": (np.array([0.6, 0.7]), np.array([1.0, 0.99])),
             "a repaired network": (np.array([0.97, 0.95]), np.array([0.99, 1.0]))}
    for name, (held_out, train) in cases.items():
        got = np.asarray(mine(held_out.copy(), train.copy()), dtype=float)
        want = np.minimum(held_out, train)
        if got.shape != want.shape:
            return f"{name}: shape {got.shape}, expected {want.shape} (one score per seed)"
        if not np.allclose(got, want):
            if np.allclose(got, held_out):
                return f"{name}: got the held-out accuracy alone; it calls a network that says 1 everywhere repaired"
            if np.allclose(got, (held_out + train) / 2):
                return (f"{name}: got the mean {got.round(2).tolist()}, expected {want.round(2).tolist()}: "
                        "a network must do both, so take the worse (np.minimum)")
            return f"{name}: got {got.round(3).tolist()}, expected {want.round(3).tolist()}"
    return None
