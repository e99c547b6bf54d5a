"""A fused GPU kernel for Gumbel-sigmoid mask training (used by :mod:`modlib.masks` on CUDA).

Training a mask over a wide layer is bound by memory traffic, not arithmetic: written as tensor
operations, one mask sample costs a dozen passes over arrays of the weight's size (draw the noise,
add, sigmoid, threshold, multiply, and as many again backwards). Here the forward pass is one pass
(read weight and logits, write the masked weight) and the backward pass another (read the incoming
gradient, weight and logits, write the logits' gradient). The noise is never stored: both passes
draw it again from the same seed with Triton's counter-based generator, so a sample is defined by
one ``int64`` seed on the GPU, which also keeps CUDA-graph replays drawing new samples.

The values are those of :func:`modlib.masks.gumbel_weight` given the uniform numbers
:func:`uniform` returns for the same seed (a test checks this on a GPU).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _soft(logit_ptr, seed_ptr, offs, keep, inv_tau):
    """The soft sample ``sigmoid((logit + logit(u)) / tau)`` at ``offs``, ``u`` drawn from the seed."""
    u = tl.rand(tl.load(seed_ptr), offs)
    u = tl.minimum(tl.maximum(u, 1e-6), 1.0 - 1e-6)
    logit = tl.load(logit_ptr + offs, mask=keep, other=0.0)
    return tl.sigmoid((logit + tl.log(u / (1.0 - u))) * inv_tau)


@triton.jit
def _forward(w_ptr, logit_ptr, seed_ptr, out_ptr, n, inv_tau, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = offs < n
    w = tl.load(w_ptr + offs, mask=keep, other=0.0)
    soft = _soft(logit_ptr, seed_ptr, offs, keep, inv_tau)
    tl.store(out_ptr + offs, tl.where(soft > 0.5, w, 0.0), mask=keep)


@triton.jit
def _backward(grad_ptr, w_ptr, logit_ptr, seed_ptr, out_ptr, n, inv_tau, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = offs < n
    g = tl.load(grad_ptr + offs, mask=keep, other=0.0)
    w = tl.load(w_ptr + offs, mask=keep, other=0.0)
    soft = _soft(logit_ptr, seed_ptr, offs, keep, inv_tau)
    tl.store(out_ptr + offs, g * w * soft * (1.0 - soft) * inv_tau, mask=keep)


@triton.jit
def _uniform(seed_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    u = tl.rand(tl.load(seed_ptr), offs)
    tl.store(out_ptr + offs, tl.minimum(tl.maximum(u, 1e-6), 1.0 - 1e-6), mask=offs < n)


def _grid(n: int) -> tuple[int]:
    return (triton.cdiv(n, BLOCK),)


class _GumbelWeight(torch.autograd.Function):
    @staticmethod
    def forward(ctx, weight, logit, seed, tau):
        weight, logit = weight.contiguous(), logit.contiguous()
        out = torch.empty_like(weight)
        _forward[_grid(weight.numel())](weight, logit, seed, out, weight.numel(), 1.0 / tau, BLOCK=BLOCK)
        ctx.save_for_backward(weight, logit, seed)
        ctx.inv_tau = 1.0 / tau
        return out

    @staticmethod
    def backward(ctx, grad):
        weight, logit, seed = ctx.saved_tensors
        grad, n = grad.contiguous(), weight.numel()
        grad_weight = grad_logit = None
        if ctx.needs_input_grad[0]:  # the weight's gradient is the incoming one, masked
            grad_weight = torch.empty_like(weight)
            _forward[_grid(n)](grad, logit, seed, grad_weight, n, ctx.inv_tau, BLOCK=BLOCK)
        if ctx.needs_input_grad[1]:
            grad_logit = torch.empty_like(logit)
            _backward[_grid(n)](grad, weight, logit, seed, grad_logit, n, ctx.inv_tau, BLOCK=BLOCK)
        return grad_weight, grad_logit, None, None


def gumbel_weight(weight: torch.Tensor, logit: torch.Tensor, seed: torch.Tensor, tau: float) -> torch.Tensor:
    """``weight`` times a hard Gumbel-sigmoid sample of the mask with logits ``logit`` (both float32
    ``[*shape]`` on one GPU), straight-through gradient to ``logit``; ``seed`` (``int64 [1]`` on that
    GPU) decides the sample."""
    return _GumbelWeight.apply(weight, logit, seed, tau)


def new_seed(device: torch.device) -> torch.Tensor:
    """A fresh seed ``int64 [1]`` on ``device``, drawn from torch's generator (so that it changes at
    every replay of a CUDA graph)."""
    return torch.randint(2**31 - 1, (1,), device=device)


def uniform(seed: torch.Tensor, shape) -> torch.Tensor:
    """The uniform numbers ``[*shape]`` (clamped to [1e-6, 1 - 1e-6]) behind the sample of ``seed``."""
    out = torch.empty(shape, device=seed.device)
    _uniform[_grid(out.numel())](seed, out, out.numel(), BLOCK=BLOCK)
    return out
