"""Chapter 2's exercises (notebooks/compositional_sprites.ipynb): :func:`check_soft_occlusion` and
:func:`check_r2_score`, each returning a :class:`modlib.checks.Verdict` (a solution marked
:func:`modlib.checks.book_solution` is reported as the book's, not the reader's).
"""

from __future__ import annotations

import torch

from modlib import compositional_sprites
from modlib.checks import check, shape_of
from modlib.data import sprites


@check
def check_soft_occlusion(mine):
    """``mine(slots, k)``: chapter 2's soft occlusion of slot images ``[N, 2, 3, H, W]`` (slot 0
    on top), compared with :func:`modlib.data.sprites.soft_occlusion` at two sharpnesses."""
    torch.manual_seed(0)
    slots = torch.rand(4, 2, 3, 8, 8)
    slots[:, 0, :, :2] = 0  # an empty (black) band in the top slot: the lower one shows through
    for k in (1.0, 5.0):
        out, want = mine(slots.clone(), k=k), sprites.soft_occlusion(slots, sharpness=k)
        if shape_of(out) != tuple(want.shape):
            return f"k={k}: shape {shape_of(out)}, expected {tuple(want.shape)}"
        if not torch.allclose(out, want, atol=1e-6):
            if torch.allclose(out, sprites.soft_occlusion(slots.flip(1), sharpness=k), atol=1e-6):
                return f"k={k}: the slots are swapped; slot 0 lies on top"
            return f"k={k}: values differ by up to {(out - want).abs().max():.3g}"
    return None


@check
def check_r2_score(mine):
    """``mine(x, x_hat)``: variance-weighted R² of images ``[N, ...]``, compared with
    :func:`modlib.compositional_sprites.r2_score` on a perfect prediction, the mean image, noise,
    and outputs whose variances differ by a factor of 100."""
    torch.manual_seed(0)
    x = torch.rand(50, 3, 4, 4)
    x[:, 0] *= 10  # the red channel varies 100 times as much as the others
    noisy = x + 0.3 * torch.randn_like(x)
    cases = {"a perfect prediction": x.clone(), "the mean image": x.mean(0, keepdim=True).expand_as(x),
             "a noisy prediction": noisy}
    for name, x_hat in cases.items():
        got, want = float(mine(x.clone(), x_hat.clone())), compositional_sprites.r2_score(x, x_hat)
        if abs(got - want) > 1e-5:
            flat, flat_hat = x.flatten(1), x_hat.flatten(1)
            per_output = 1 - ((flat - flat_hat) ** 2).sum(0) / ((flat - flat.mean(0)) ** 2).sum(0)
            if abs(got - float(per_output.mean())) < 1e-5:
                return (f"{name}: got {got:.4f}, expected {want:.4f}; that is the plain mean of "
                        "per-output R², weight each output by its variance")
            return f"{name}: got {got:.4f}, expected {want:.4f}"
    return None
