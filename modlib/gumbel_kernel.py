"""A fused GPU kernel for Gumbel-sigmoid mask training (used by :mod:`modlib.masks` on CUDA).

Training a mask over a wide layer is bound by memory traffic, not arithmetic: written as tensor
operations, one mask sample costs a dozen passes over arrays of the weight's size (draw the noise,
add, sigmoid, threshold, multiply, and as many again backwards). Here the forward pass is one pass
(read weight and logits once, write the masked weight of each of the samples asked for) and the
backward pass another (read the incoming gradient of each sample, weight and logits, write the
logits' gradient summed over the samples). The noise is never stored: both passes
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
def _soft(logit, seed, offs, inv_tau):
    """The soft sample ``sigmoid((logit + logit(u)) / tau)``, ``u`` the seed's uniform numbers at ``offs``."""
    u = tl.rand(seed, offs)
    u = tl.minimum(tl.maximum(u, 1e-6), 1.0 - 1e-6)
    return tl.sigmoid((logit + tl.log(u / (1.0 - u))) * inv_tau)


@triton.jit
def _forward(w_ptr, logit_ptr, seed_ptr, out_ptr, n, inv_tau, SAMPLES: tl.constexpr, BLOCK: tl.constexpr):
    """``out [SAMPLES, n]``: ``w [n]`` times each hard sample; weight and logits are read once."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = offs < n
    w = tl.load(w_ptr + offs, mask=keep, other=0.0)
    logit = tl.load(logit_ptr + offs, mask=keep, other=0.0)
    seed = tl.load(seed_ptr)
    for s in tl.static_range(SAMPLES):
        soft = _soft(logit, seed, s * n + offs, inv_tau)
        tl.store(out_ptr + s * n + offs, tl.where(soft > 0.5, w, 0.0), mask=keep)


@triton.jit
def _backward(grad_ptr, w_ptr, logit_ptr, seed_ptr, grad_w_ptr, grad_logit_ptr, n, inv_tau,
              SAMPLES: tl.constexpr, WEIGHT: tl.constexpr, LOGIT: tl.constexpr, BLOCK: tl.constexpr):
    """From ``grad [SAMPLES, n]``: the weight's gradient (the incoming one through each hard sample)
    and the logits' (through each soft sample), both summed over the samples."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = offs < n
    w = tl.load(w_ptr + offs, mask=keep, other=0.0)
    logit = tl.load(logit_ptr + offs, mask=keep, other=0.0)
    seed = tl.load(seed_ptr)
    grad_w = tl.zeros([BLOCK], dtype=tl.float32)
    grad_soft = tl.zeros([BLOCK], dtype=tl.float32)
    for s in tl.static_range(SAMPLES):
        g = tl.load(grad_ptr + s * n + offs, mask=keep, other=0.0)
        soft = _soft(logit, seed, s * n + offs, inv_tau)
        grad_w += tl.where(soft > 0.5, g, 0.0)
        grad_soft += g * soft * (1.0 - soft)
    if WEIGHT:
        tl.store(grad_w_ptr + offs, grad_w, mask=keep)
    if LOGIT:
        tl.store(grad_logit_ptr + offs, grad_soft * w * inv_tau, mask=keep)


@triton.jit
def _uniform(seed_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    u = tl.rand(tl.load(seed_ptr), offs)
    tl.store(out_ptr + offs, tl.minimum(tl.maximum(u, 1e-6), 1.0 - 1e-6), mask=offs < n)


def _grid(n: int) -> tuple[int]:
    return (triton.cdiv(n, BLOCK),)


class _GumbelWeight(torch.autograd.Function):
    @staticmethod
    def forward(ctx, weight, logit, seed, tau, samples):
        weight, logit = weight.contiguous(), logit.contiguous()
        n = weight.numel()
        out = torch.empty((samples, *weight.shape), dtype=weight.dtype, device=weight.device)
        _forward[_grid(n)](weight, logit, seed, out, n, 1.0 / tau, SAMPLES=samples, BLOCK=BLOCK)
        ctx.save_for_backward(weight, logit, seed)
        ctx.inv_tau, ctx.samples = 1.0 / tau, samples
        return out

    @staticmethod
    def backward(ctx, grad):
        weight, logit, seed = ctx.saved_tensors
        want_w, want_logit = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        grad_w = torch.empty_like(weight) if want_w else None
        grad_logit = torch.empty_like(logit) if want_logit else None
        if want_w or want_logit:
            n = weight.numel()
            unused = weight  # stands in for an output that is not asked for (never written)
            _backward[_grid(n)](grad.contiguous(), weight, logit, seed, unused if grad_w is None else grad_w,
                                unused if grad_logit is None else grad_logit, n, ctx.inv_tau,
                                SAMPLES=ctx.samples, WEIGHT=want_w, LOGIT=want_logit, BLOCK=BLOCK)
        return grad_w, grad_logit, None, None, None


def gumbel_weight(weight: torch.Tensor, logit: torch.Tensor, seed: torch.Tensor, tau: float,
                  samples: int | None = None) -> torch.Tensor:
    """``weight`` times hard Gumbel-sigmoid samples of the mask with logits ``logit`` (both float32
    ``[*shape]`` on one GPU), straight-through gradient to ``logit``: one sample ``[*shape]``, or
    ``samples`` of them ``[samples, *shape]``. ``seed`` (``int64 [1]`` on that GPU) decides them."""
    out = _GumbelWeight.apply(weight, logit, seed, tau, samples or 1)
    return out if samples else out[0]


def new_seed(device: torch.device) -> torch.Tensor:
    """A fresh seed ``int64 [1]`` on ``device``, drawn from torch's generator (so that it changes at
    every replay of a CUDA graph)."""
    return torch.randint(2**31 - 1, (1,), device=device)


def uniform(seed: torch.Tensor, shape) -> torch.Tensor:
    """The uniform numbers ``[*shape]`` (clamped to [1e-6, 1 - 1e-6]) behind the sample of ``seed``;
    with ``shape = [samples, *weight shape]``, those of each of ``samples`` samples."""
    out = torch.empty(shape, device=seed.device)
    _uniform[_grid(out.numel())](seed, out, out.numel(), BLOCK=BLOCK)
    return out
