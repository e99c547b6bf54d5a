"""Each kind of full result against its limit (issue 56, item 4): one training step of every kind of
stored ``full`` result, timed beside a dense float32 matrix multiplication that does the same FLOPs,
in the same run.

    python benchmarks/bench_limits.py [--kinds KIND ...] [--quick] [--threads 1] [--out benchmarks/limits.csv]

A *kind* groups the jobs of ``modlib.jobs.jobs([chapter], "full")`` by what they train (see
:data:`KINDS`; ``--list`` prints them). For each kind the step is built from the chapter's own code at
the ``full`` profile's sizes (``<chapter>.settings("full")``): its model constructor, batch size, loss
and optimizer as the chapter calls them, on random tensors of the chapter's shapes where the chapter
would generate data (timing does not depend on the values). Its FLOPs are counted with
``torch.utils.flop_counter.FlopCounterMode`` over one forward + backward + optimizer step (the counter
counts matrix multiplications and convolutions: the elementwise work, the optimizer and Python are
free in it, which is the point: they are what keeps a step from its limit). The *limit* is this
machine's ``torch.mm`` on square float32 matrices with 2 n^3 = the step's FLOPs (or ``torch.bmm`` on a
batch of them above n = 2048), timed in the same loop: the step, the matmul (and the prototype, where
there is one) alternate, so that a change in the machine's load hits them alike; each time is the
median of the repetitions after a warm-up, and ``ratio = step / matmul`` the median over the rounds of
the two timed back to back: 1 is a step as fast as its FLOPs allow here; 10 is a step that spends 90 %
of its time on something other than matmul throughput.

Where a kind is more than 3x from its limit, the table says in one line what bounds it, and where a
concrete speed-up exists it is *prototyped here only* (``proto_*`` columns): the same work done the
faster way, per step of the chapter's kind (e.g. the three seeds of a chapter-2 row stacked into one
step with ``torch.func.vmap``, timed as one third of the stacked step). Adopting any of these in
``modlib`` changes how the stored numbers are computed (batching changes float rounding and, for
stacked seeds, the random streams), so it must wait for a recompute of the affected full results;
nothing here changes ``modlib``.

Measured here (2026-12-02, torch 2.13 CPU, 1 thread, ``nice``, on the 2-core machine shared with other
jobs, load average 7-11, so single times vary by up to 2x between runs; benchmarks/limits.csv): the
large-matrix kinds (chapter 4's FNNs, chapter 5/6's ResNet and its search, SimCLR, chapter 3's CNN)
run at 1.1-2x their matmul; BERT (base, search, MLM) at 2-2.6x; the decoders of chapter 2, the SCAN
seq2seq and chapter 4's masks at 3-7x; chapter 7's sprite masks at ~14x, chapter 1's sweep at ~37x and
chapter 7's toy masks at ~1,500x (their matrices are 8 wide). The prototypes that paid: chapter 7's
toy masks stacked (all 300 of a formulation in one step: ~100x less time per mask step), channels-last
for chapter 2's decoders and chapter 4's CNN (~25-30 % less, not for the masked CNNs). Those that did
not: chapter 2's seeds stacked with vmap (slower), chapter 4's mask samples in one vmapped pass (2.4x
slower, as the README's table says) and SimCLR's augment vectorized (the same). The toy sweep without
vmap, within the noise at full's 2,200 members, saves a third of a step at default's 100 and computes the
same numbers bit for bit (``benchmarks/bench_toy_step.py``): adopted on 2026-12-04, so the toy-sweep row's
step is the present one and its ``extra`` column times the vmap step beside it.

Output: the table printed and written to ``--out`` (CSV; its first line, a ``#`` comment, holds the
torch version, thread count and CPU). Run it with ``nice`` on a shared machine; the ratios, not the
absolute times, are what compares across runs.
"""

from __future__ import annotations

import argparse
import copy
import csv
import math
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

os.environ.setdefault("TQDM_DISABLE", "1")

import torch

from modlib import results
import torch.nn.functional as F
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

NMAX = 2048  # the largest square matmul side; above it the limit is a batch of NMAX-ish matmuls
SLOW = 3.0  # a kind further than this from its limit gets a "why"
RECOMPUTE = ("prototype only: adopting it in modlib changes how the stored full results are computed, "
             "so it must wait for their recompute")


# ---------------------------------------------------------------- measuring


def count_flops(step: Callable[[], object]) -> int:
    """Matmul and convolution FLOPs of one call of ``step`` (forward, backward and all)."""
    with FlopCounterMode(display=False) as counter:
        step()
    return int(counter.get_total_flops())


def matmul_shape(flops: float) -> tuple[int, int]:
    """``(k, n)``: k float32 n x n matmuls with 2 k n^3 about ``flops``; k = 1 up to n = NMAX,
    above it as few matmuls of at most NMAX as do the FLOPs."""
    n = max(1, round((flops / 2) ** (1 / 3)))
    if n <= NMAX:
        return 1, n
    k = math.ceil(flops / (2 * NMAX ** 3))
    return k, max(1, round((flops / 2 / k) ** (1 / 3)))


def matmul_for(flops: float) -> tuple[Callable[[], object], str]:
    """A dense float32 matmul doing about ``flops`` FLOPs (:func:`matmul_shape`): ``torch.mm`` of
    two n x n matrices, or ``torch.bmm`` of k pairs. Returns the call and its shape as text."""
    k, n = matmul_shape(flops)
    if k == 1:
        a, b, out = torch.randn(n, n), torch.randn(n, n), torch.empty(n, n)
        return (lambda: torch.mm(a, b, out=out)), f"{n}x{n}"
    a, b, out = torch.randn(k, n, n), torch.randn(k, n, n), torch.empty(k, n, n)
    return (lambda: torch.bmm(a, b, out=out)), f"{k}x{n}x{n}"


def matmul_flops(shape: str) -> int:
    """The FLOPs of the matmul of shape ``"NxN"`` or ``"KxNxN"`` (as :func:`matmul_for` names it)."""
    dims = [int(d) for d in shape.split("x")]
    k = dims[0] if len(dims) == 3 else 1
    return 2 * k * dims[-1] ** 3


def time_together(calls: dict[str, Callable[[], object]], reps: int, warmup: int = 2,
                  min_seconds: float = 0.02) -> dict[str, list[float]]:
    """Seconds per call of each of ``calls`` in each of ``reps`` rounds, timed in alternation (one
    round: each call once, or, for a call faster than ``min_seconds``, as many times in a row as fill
    it, averaged)."""
    inner = {}
    for name, fn in calls.items():
        for _ in range(warmup):
            fn()
        start = time.perf_counter()
        fn()
        once = time.perf_counter() - start
        inner[name] = max(1, min(20_000, int(min_seconds / max(once, 1e-7))))
    times = {name: [] for name in calls}
    for _ in range(reps):
        for name, fn in calls.items():
            start = time.perf_counter()
            for _ in range(inner[name]):
                fn()
            times[name].append((time.perf_counter() - start) / inner[name])
    return times


def median_ratio(a: list[float], b: list[float]) -> float:
    """The median over rounds of a / b: each round's pair was timed back to back, so a change in the
    machine's load between rounds cancels (on a shared machine this is steadier than the ratio of
    the medians)."""
    return statistics.median(x / y for x, y in zip(a, b))


@dataclass
class Kind:
    """One kind's step, built at the full profile's sizes."""

    step: Callable[[], object]
    what: str  # model, batch, optimizer: what one step is
    why: str = ""  # what bounds it, if it is far from its limit
    # faster ways of doing the same work, prototyped here: (label, call, how many of the kind's
    # steps one call does)
    protos: list[tuple[str, Callable[[], object], int]] = field(default_factory=list)
    extra: dict[str, tuple[Callable[[], object], str]] = field(default_factory=dict)  # other timings


def adam_step(opt: torch.optim.Optimizer, loss_fn: Callable[[], torch.Tensor], clip_params=None,
              clip: float | None = None) -> Callable[[], None]:
    """One step as the chapters write it: zero the gradients, backward, (clip,) step."""
    clip_params = None if clip_params is None else list(clip_params)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn()
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(clip_params, clip)
        opt.step()
    return step


def channels_last(*tensors_or_models):
    """Copies in channels-last memory format (4-d tensors and the 4-d weights of modules)."""
    out = []
    for t in tensors_or_models:
        if isinstance(t, nn.Module):
            out.append(copy.deepcopy(t).to(memory_format=torch.channels_last))
        else:
            out.append(t.contiguous(memory_format=torch.channels_last) if t.dim() == 4 else t)
    return out


CL_LABEL = "channels-last memory format (model and inputs)"


# ---------------------------------------------------------------- the kinds, chapter by chapter
# Each builder returns a Kind at the full profile's sizes.


def toy_sweep() -> Kind:
    """Chapter 1's sweep: one (activation, loss) group's members as one stacked model
    (``modlib.training.train_seeds``: a ``bmm`` then ``add`` a layer), plain SGD on batches of 10;
    beside it (``extra``) the same step as it ran until 2026-12-04, under ``torch.func.vmap``."""
    from torch.func import functional_call, vmap

    from modlib import redundant_input_toy as toy
    from modlib.models import mlp
    from modlib.training import stack, train_seeds

    s = toy.settings("full")
    members = len(s.formulations) * len(s.conditions) * s.seeds  # 2 x 11 x 100 = 2,200
    models = [mlp(2, s.hidden, 1, "relu", init="playground") for _ in range(members)]
    template, params = stack(models)
    x, y = torch.randn(members, s.n_train, 2), torch.randint(0, 2, (members, s.n_train)).float()
    idx = torch.arange(s.batch)
    lossf = toy.loss_fn("mse")
    state = {"p": params, "before": params}

    def step():
        state["p"] = train_seeds(template, state["p"], lambda t: (x[:, idx], y[:, idx]), lossf, steps=1,
                                 lr=s.lr, progress=False)

    def before():  # the same SGD step with every member run through functional_call under vmap
        leaves = {k: v.requires_grad_(True) for k, v in state["before"].items()}
        out = vmap(lambda p, xi: functional_call(template, p, (xi,)))(leaves, x[:, idx])
        grads = torch.autograd.grad(vmap(lossf)(out, y[:, idx]).sum(), list(leaves.values()))
        with torch.no_grad():
            state["before"] = {k: v.detach() - s.lr * g for (k, v), g in zip(leaves.items(), grads)}

    # prototype 2: members last ([batch, features, members]); each layer a loop of broadcast
    # multiply-adds over its inputs, contiguous along the 2,200 members, instead of 2,200 tiny
    # [10, 8] x [8, 8] matmuls
    wl = [(params[f"{i}.weight"].permute(2, 1, 0).contiguous().requires_grad_(),  # [in, out, M]
           params[f"{i}.bias"].T.contiguous().requires_grad_())  # [out, M]
          for i in range(0, 2 * len(s.hidden) + 1, 2)]
    xl, yl = x.permute(1, 2, 0).contiguous(), y.T.contiguous()  # [n, 2, M], [n, M]
    flat = [t for pair in wl for t in pair]

    def members_last():
        h = xl[idx]  # [B, in, M]
        for k, (w, bias) in enumerate(wl):
            out = bias.expand(h.shape[0], *bias.shape)
            for i in range(w.shape[0]):
                out = torch.addcmul(out, h[:, i, None, :], w[i])  # [B, out, M]
            h = out.relu() if k < len(wl) - 1 else out
        loss = (0.5 * (torch.tanh(h[:, 0]) - (2 * yl[idx] - 1)) ** 2).mean(0).sum()
        grads = torch.autograd.grad(loss, flat)
        with torch.no_grad():
            for t, g in zip(flat, grads):
                t.sub_(s.lr * g)

    return Kind(step, f"{members} members of a 2-8-8-8-1 MLP, a bmm a layer, batch {s.batch}, SGD",
                why="2,200 independent 8-wide MLPs on 10 points: every layer is a bmm of 2,200 [10, 8] x "
                    "[8, 8] matrices, which MKL runs at a few GFLOP/s (bmm is ~60 % of the step, the batch "
                    "gather x[:, idx] ~20 %)",
                protos=[("members-last layout, broadcast multiply-adds instead of bmm", members_last, 1)],
                extra={"before_ms": (before, "before 2026-12-04 (vmap of functional_call, the same numbers)")})


def _sprite_kind(row: str) -> Kind:
    from torch.func import functional_call, stack_module_state, vmap

    from modlib import compositional_sprites as cs
    from modlib.data import sprites

    s = cs.settings("full")
    model = cs.build(s, row)
    opt = torch.optim.AdamW(model.parameters(), lr=s.lr, weight_decay=s.weight_decay)
    z = torch.rand(s.batch, sprites.SLOTS, sprites.LATENTS)
    x = torch.rand(s.batch, 3, s.size, s.size)
    step = adam_step(opt, lambda: F.mse_loss(model(z), x))

    # prototype: the row's seeds (trained one after another) stacked into one vmapped model,
    # each seed on its own batch; AdamW is elementwise, so one AdamW over the stacked parameters
    # is each seed's own
    seeds = s.seeds
    replicas = [cs.build(s, row) for _ in range(seeds)]
    params, buffers = stack_module_state(replicas)
    params = {k: v.detach().requires_grad_() for k, v in params.items()}
    template = copy.deepcopy(replicas[0]).to("meta")
    sopt = torch.optim.AdamW(params.values(), lr=s.lr, weight_decay=s.weight_decay)
    zs, xs = z.expand(seeds, *z.shape).clone(), x.expand(seeds, *x.shape).clone()

    def one(p, b, zi, xi):
        return F.mse_loss(functional_call(template, (p, b), (zi,)), xi)

    def stacked_loss():
        return vmap(one)(params, buffers, zs, xs).sum()

    # prototype: the same model in channels-last format
    cl, = channels_last(model)
    clopt = torch.optim.AdamW(cl.parameters(), lr=s.lr, weight_decay=s.weight_decay)
    xcl, = channels_last(x)
    return Kind(step, f"{type(model).__name__} decoder, {s.size}x{s.size}, batch {s.batch}, AdamW",
                why="the backward of the 2x2 convolutions (16-32 channels, <=16x16 maps) and of the "
                    "bilinear upsampling (memory-bound) take about 2/3 of the step; the matmuls about a "
                    "tenth; at batch 64 the rest is per-op overhead",
                protos=[(f"the row's {seeds} seeds stacked (torch.func.vmap), one AdamW", adam_step(sopt, stacked_loss),
                         seeds),
                        (CL_LABEL, adam_step(clopt, lambda: F.mse_loss(cl(z), xcl)), 1)])


def sprites_compositional() -> Kind:
    """Chapter 2, a compositional row (e.g. ``orthogonal``): one decoder per slot, composed."""
    return _sprite_kind("orthogonal")


def sprites_monolithic() -> Kind:
    """Chapter 2, a monolithic row: one decoder from all 10 latents."""
    return _sprite_kind("orthogonal-monolithic")


def mnist_cnn() -> Kind:
    """Chapter 3's MNIST pairs: the paper's CNN, categorical hinge, Adam, batch 64; the chapter
    evaluates on 3 x 100 fresh pairs after every step (timed as an extra column)."""
    from modlib import resists_at_scale as rs
    from modlib.resists_at_scale.networks import accuracy, categorical_hinge, digit_cnn

    s = rs.settings("full")
    model = digit_cnn()
    opt = torch.optim.Adam(model.parameters(), lr=s.mnist_lr)
    x, y = torch.rand(s.mnist_batch, 1, 28, 56), torch.randint(0, 10, (s.mnist_batch,))
    xe, ye = torch.rand(s.mnist_eval, 1, 28, 56), torch.randint(0, 10, (s.mnist_eval,))
    step = adam_step(opt, lambda: categorical_hinge(model(x), y))

    def with_eval():
        step()
        for _ in range(3):  # acc_train, acc_swapped, acc_test
            accuracy(model, xe, ye)

    cl, = channels_last(model)
    clopt = torch.optim.Adam(cl.parameters(), lr=s.mnist_lr)
    xcl, = channels_last(x)
    return Kind(step, f"digit CNN on 28x56 pairs, batch {s.mnist_batch}, Adam",
                why="max-pooling the [64, 32, 26, 54] map in NCHW format (slow on this CPU) and Adam over "
                    "1.1M parameters (memory-bound) beside the convolutions",
                protos=[(CL_LABEL, adam_step(clopt, lambda: categorical_hinge(cl(xcl), y)), 1)],
                extra={"with_eval_ms": (with_eval, "step + the chapter's evaluation after every step "
                                                   "(3 x 100 pairs forward)")})


def scan_seq2seq() -> Kind:
    """Chapter 3's SCAN: the seq2seq LSTM with attention, Adam with clipping, batch 256, teacher
    forcing over the batch's longest action sequence (up to 49 steps)."""
    from modlib import resists_at_scale as rs
    from modlib.data import scan
    from modlib.resists_at_scale.networks import Seq2Seq

    s = rs.settings("full")
    model = Seq2Seq(len(scan.COMMAND_VOCAB), len(scan.ACTION_VOCAB), s.embedding, s.encoder, s.decoder)
    opt = torch.optim.Adam(model.parameters(), lr=s.scan_lr)
    g = torch.Generator().manual_seed(0)
    lengths = torch.randint(1, scan.MAX_WORDS + 1, (s.scan_batch,), generator=g)
    src = torch.randint(3, len(scan.COMMAND_VOCAB), (s.scan_batch, scan.MAX_WORDS), generator=g)
    src[torch.arange(scan.MAX_WORDS)[None, :] >= lengths[:, None]] = scan.Vocab.PAD
    T = scan.MAX_ACTIONS + 1  # a batch of 256 commands drawn with replacement nearly always holds a longest one
    tgt_in = torch.randint(3, len(scan.ACTION_VOCAB), (s.scan_batch, T), generator=g)
    tgt_out = torch.randint(3, len(scan.ACTION_VOCAB), (s.scan_batch, T), generator=g)

    def loss():
        return F.cross_entropy(model(src, tgt_in).flatten(0, 1), tgt_out.flatten(), ignore_index=scan.Vocab.PAD)

    return Kind(adam_step(opt, loss, model.parameters(), s.scan_clip),
                f"seq2seq BiLSTM + LSTMCell decoder, T={T}, batch {s.scan_batch}, Adam + clip",
                why=f"the decoder is a Python loop over {T} time steps, each about 10 small ops on "
                    f"[{s.scan_batch}, {s.decoder}] tensors (LSTM cell, attention over 9 words): "
                    "sequential and dispatch-bound")


def _fnn(task: str) -> tuple:
    from modlib import weight_masks as wm
    from modlib.models import mlp
    from modlib.weight_masks.protocol import Pairwise

    s = wm.settings("full")
    n_in, n_out = (80, 40) if task == "double" else (42, 20)
    net = mlp(n_in, s.hidden, n_out)
    model = Pairwise(net) if task == "double" else net
    x = torch.randint(0, 2, (s.batch, n_in)).float()
    y = torch.randint(0, 10, (s.batch, n_out // 10))
    return s, model, x, y


def fnn_base() -> Kind:
    """Chapter 4's add/multiply FNN: 42 -> 1024 -> 1024 -> 20, fused Adam with clipping, batch 128."""
    from modlib.weight_masks.protocol import CLIP, digit_loss

    s, model, x, y = _fnn("addmul")
    opt = torch.optim.Adam(model.parameters(), lr=s.lr, fused=True)  # modlib.training.adam's
    return Kind(adam_step(opt, lambda: digit_loss(model(x), y), model.parameters(), CLIP),
                f"MLP 42-{'-'.join(map(str, s.hidden))}-20, batch {s.batch}, fused Adam + clip",
                why="1.1M-parameter Adam and clipping (memory-bound, ~10 passes over the weights) "
                    "against only 128 rows of matmul per step")


def fnn_double() -> Kind:
    """Chapter 4's double-addition FNN (Pairwise: the network runs once per pair)."""
    from modlib.weight_masks.protocol import CLIP, digit_loss

    s, model, x, y = _fnn("double")
    opt = torch.optim.Adam(model.parameters(), lr=s.double_lr, fused=True)
    return Kind(adam_step(opt, lambda: digit_loss(model(x), y), model.parameters(), CLIP),
                f"Pairwise MLP 80-{'-'.join(map(str, s.hidden))}-40 run twice, batch {s.batch}, fused Adam + clip",
                why="as the add/multiply FNN: Adam over 1.1M weights against 2 x 128 rows of matmul")


def _gumbel_fnn_mask(model, x, y, loss_fn, s, alpha, one_pass: bool = False) -> Callable[[], None]:
    """``modlib.weight_masks.protocol.train_mask``'s step: Gumbel masks, s.samples samples, fused
    Adam with clipping (through ``modlib.training.adam`` in the chapter). ``one_pass``: the samples'
    passes as one vmapped pass (``MaskSet.sampled_loss``, as chapter 7 trains its masks) instead of
    one pass per sample (``masks.sampled_loss``, chapter 4's)."""
    from modlib import masks
    from modlib.weight_masks.protocol import CLIP

    ms = masks.attach(model, estimator="gumbel", alpha=alpha, seed=0)
    ms.mode = "train"
    trained = ms.parameters()
    opt = torch.optim.Adam(trained, lr=s.mask_lr, fused=True)
    if one_pass:
        return adam_step(opt, lambda: ms.sampled_loss(loss_fn, x, y, samples=s.samples)
                         + ms.regularizer() / len(x), trained, CLIP)
    return adam_step(opt, lambda: masks.sampled_loss(model, loss_fn, x, y, samples=s.samples)
                     + ms.regularizer() / len(x), trained, CLIP)


def fnn_mask() -> Kind:
    """Chapter 4's masks on the add/multiply FNN (also its alpha and shape sweeps, its added
    experiments, and the double-addition masks)."""
    from modlib.weight_masks.protocol import digit_loss

    s, model, x, y = _fnn("addmul")
    twin = copy.deepcopy(model)
    return Kind(_gumbel_fnn_mask(model, x, y, digit_loss, s, s.alpha),
                f"Gumbel masks over the 42-1024-1024-20 MLP, {s.samples} samples, batch {s.batch}, fused Adam + clip",
                why="the Gumbel noise (uniform_), logit, sigmoid and straight-through product for every "
                    "weight and sample (4 x 1.1M, elementwise, memory-bound) outweigh the 32-row matmuls "
                    "of each sample: the matmuls are ~15 % of the step",
                protos=[("the 4 samples in one vmapped pass (MaskSet.sampled_loss, as chapter 7's masks)",
                         _gumbel_fnn_mask(twin, x, y, digit_loss, s, s.alpha, one_pass=True), 1)])


def cnn_base() -> Kind:
    """Chapter 4's class-removal CNN: fused Adam with clipping, batch 64 (``trained_cnn``)."""
    from modlib import weight_masks as wm
    from modlib.weight_masks.protocol import CLIP, cnn

    s = wm.settings("full")
    model = cnn()
    opt = torch.optim.Adam(model.parameters(), lr=s.lr, fused=True)
    x, y = torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,))
    cl, = channels_last(model)
    clopt = torch.optim.Adam(cl.parameters(), lr=s.lr, fused=True)
    xcl, = channels_last(x)
    return Kind(adam_step(opt, lambda: F.cross_entropy(model(x), y), model.parameters(), CLIP),
                "MNIST CNN 1-16-32 channels, batch 64, fused Adam + clip",
                why="max_pool2d on NCHW maps is slow on this CPU (about half the step: ~10 ms for the "
                    "[64, 16, 26, 26] map, 5x its channels-last time); then the backward of the thin "
                    "16/32-channel convolutions",
                protos=[(CL_LABEL, adam_step(clopt, lambda: F.cross_entropy(cl(xcl), y), cl.parameters(), CLIP), 1)])


def cnn_mask() -> Kind:
    """Chapter 4's class-removal masks on the CNN (batch ``s.batch``)."""
    from modlib import weight_masks as wm
    from modlib.weight_masks.protocol import cnn

    s = wm.settings("full")
    model = cnn()
    x, y = torch.randn(s.batch, 1, 28, 28), torch.randint(0, 10, (s.batch,))
    cl, xcl = channels_last(model, x)
    twin = copy.deepcopy(model)
    return Kind(_gumbel_fnn_mask(model, x, y, F.cross_entropy, s, s.cnn_alpha),
                f"Gumbel masks over the MNIST CNN, {s.samples} samples, batch {s.batch}, fused Adam + clip",
                why="as the CNN's base step (NCHW max-pooling, thin convolutions), run as 4 passes of 32 "
                    "images (one per mask sample), plus the elementwise mask sampling",
                protos=[(CL_LABEL, _gumbel_fnn_mask(cl, xcl, y, F.cross_entropy, s, s.cnn_alpha), 1),
                        ("the 4 samples in one vmapped pass (MaskSet.sampled_loss)",
                         _gumbel_fnn_mask(twin, x, y, F.cross_entropy, s, s.cnn_alpha, one_pass=True), 1)])


def _structure(rule: str, batch: int):
    from modlib import structural_compositionality as sc
    from modlib.structural_compositionality import tasks

    s = sc.settings("full")
    model = sc.make_model(rule, s, seed=0)
    if rule in tasks.VISION:  # panels are slow to draw; random ones of the same shape time the same
        b = {"images": torch.randint(0, 256, (batch, 4, 3, s.size, s.size), dtype=torch.uint8),
             "answer": torch.randint(0, 4, (batch,))}
    else:
        data = tasks.problems(rule, "task", batch, seed=0, size=s.size)
        b = {k: v for k, v in data.items() if isinstance(v, torch.Tensor)}
    return s, model, b


def _base(rule: str) -> tuple[Callable[[], None], str]:
    from modlib import structural_compositionality as sc
    from modlib.structural_compositionality.experiment import score

    s, model, b = _structure(rule, sc.settings("full").batch)
    lr = s.vision_lr if rule in sc.VISION else s.language_lr
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    return adam_step(opt, lambda: F.cross_entropy(score(model, b), b["answer"])), f"batch {s.batch} problems x 4 items"


def resnet_base() -> Kind:
    """Chapter 5's vision base model (tiny ResNet with instance norm + MLP head), trained on the
    task; chapter 6's vision fine-tuning is the same step."""
    step, what = _base("inside-contact")
    return Kind(step, f"tiny ResNet (16-32-64, instance norm) on 32x32 panels, {what}, Adam",
                why="instance norm and ReLU over every activation map (memory-bound) between "
                    "16-64-channel convolutions; many small ops per block")


def bert_base() -> Kind:
    """Chapter 5's language base model (BERT, 2 layers, hidden 64), trained on the task; chapter 6's
    language fine-tuning is the same step."""
    step, what = _base("sv-plural")
    return Kind(step, f"BERT 2 layers hidden 64, length 11, {what}, Adam",
                why="hidden 64 on 11-token sentences: [1408, 64] x [64, 64] matmuls, and about 25 "
                    "small ops per layer (layer norm, softmax, GELU, reshapes; Hugging Face's Python) "
                    "dominate")


def _search(rule: str) -> Callable[[], None]:
    """Chapter 5's ``train_mask`` step (continuous sparsification, full's layer set)."""
    from modlib import masks
    from modlib import structural_compositionality as sc
    from modlib.structural_compositionality.experiment import PAPER_TOTAL_MASKED, mask_patterns, score

    s, model, b = _structure(rule, sc.settings("full").mask_batch)
    stages = s.vision_stages[0] if rule in sc.VISION else s.language_stages[0]
    ms = masks.attach(model, "sparsify", names=mask_patterns(model, stages), init=s.inits[0],
                      beta_growth=200 ** (1 / s.mask_epochs))
    ms.settings["lam"] = 1e-8 * PAPER_TOTAL_MASKED / int(ms.stats()["weights"].sum())
    opt = torch.optim.Adam(ms.parameters(), lr=s.mask_lrs[0])
    model.eval()
    ms.mode = "train"
    return adam_step(opt, lambda: F.cross_entropy(score(model, b), b["answer"]) + ms.regularizer())


def resnet_search() -> Kind:
    """Chapter 5's (and chapter 6's) mask search in the vision model: later stages + head."""
    return Kind(_search("inside-contact"), "sparsify masks over the ResNet's later stages + head, batch 64 x 4, Adam",
                why="as the ResNet's base step (instance norm, small convolutions), plus sigmoid masks "
                    "recomputed for every masked weight each step")


def bert_search() -> Kind:
    """Chapter 5's (and chapter 6's) mask search in the language model: all layers."""
    return Kind(_search("sv-plural"), "sparsify masks over all of BERT, batch 64 x 4, Adam",
                why="as BERT's base step (small matrices, many small ops), plus a sigmoid mask per "
                    "masked weight each step")


def mlm() -> Kind:
    """Chapter 6's masked-language-model pretraining (``pretrain_mlm``): BertForMaskedLM, batch 128."""
    from modlib import pretraining_consistency as pc
    from modlib import structural_compositionality as sc
    from modlib.data import sentences as agreement
    from modlib.pretraining_consistency import pretraining

    p, s = pc.settings("full"), sc.settings("full")
    model = pretraining.mlm_model(s, seed=0)
    ids, attention = agreement.encode(pretraining.corpus(p.mlm_batch, seed=0))
    g = torch.Generator().manual_seed(0)
    opt = torch.optim.Adam(model.parameters(), lr=p.mlm_lr)
    model.train()

    def loss():
        inputs, labels = pretraining.mask_tokens(ids, g)
        logits = model(input_ids=inputs, attention_mask=attention).logits
        return F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=-100)

    return Kind(adam_step(opt, loss), f"BertForMaskedLM 2 layers hidden 64, length {ids.shape[1]}, batch {p.mlm_batch}, Adam",
                why="as BERT's base step: hidden 64 matrices and many small ops per layer; the MLM head "
                    "over the whole vocabulary at every position is the only sizeable matmul")


def _augment_vectorized(images: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    """``pretraining.augment`` without its loop over panels: the same draws from ``g`` in the same
    order, the same views (checked equal in :func:`simclr`)."""
    n = len(images)
    flips = torch.rand(n, generator=g) < 0.5
    turns = torch.randint(4, (n,), generator=g)
    channels = torch.argsort(torch.rand(n, 3, generator=g), dim=1)
    x = images[torch.arange(n)[:, None], channels]  # [N, 3, H, W]
    x = torch.where(flips[:, None, None, None], x.flip(-1), x)
    out = torch.empty_like(x)
    for k in range(4):
        sel = turns == k
        out[sel] = torch.rot90(x[sel], k, dims=(-2, -1))
    return out


def simclr() -> Kind:
    """Chapter 6's SimCLR pretraining of the vision model (``pretrain_simclr``): batch 128 panels,
    two augmented views each."""
    from modlib import pretraining_consistency as pc
    from modlib import structural_compositionality as sc
    from modlib.pretraining_consistency import pretraining

    p, s = pc.settings("full"), sc.settings("full")
    model = sc.make_model("inside-contact", s, seed=0)
    panels = torch.randint(0, 256, (1000, 3, s.size, s.size), dtype=torch.uint8)
    g = torch.Generator().manual_seed(0)
    opt = torch.optim.Adam(model.parameters(), lr=p.simclr_lr)
    model.train()

    def loss(augment):
        def f():
            x = panels[torch.randint(len(panels), (p.simclr_batch,), generator=g)].float().div(255)
            return pretraining.nt_xent(model(augment(x, g)), model(augment(x, g)), p.temperature)
        return f

    # the prototype's views are the chapter's, draw for draw
    check = torch.rand(16, 3, s.size, s.size)
    same = torch.equal(pretraining.augment(check, torch.Generator().manual_seed(1)),
                       _augment_vectorized(check, torch.Generator().manual_seed(1)))
    if not same:
        raise AssertionError("the vectorized augment differs from pretraining.augment")
    return Kind(adam_step(opt, loss(pretraining.augment)),
                f"tiny ResNet + head, 2 views x batch {p.simclr_batch}, NT-Xent, Adam",
                why="the ResNet's instance norm and small convolutions (as its base step); augment's "
                    f"Python loop over the 2 x {p.simclr_batch} panels is not what bounds it (the "
                    "vectorized prototype times the same)",
                protos=[("augment vectorized (same draws, same views)", adam_step(opt, loss(_augment_vectorized)), 1)])


# chapter 7


def _bridge_mask(net, x, y, b, loss_fn=None, init=None) -> Callable[[], None]:
    """``modlib.bridge.experiment.train_mask``'s step: Gumbel masks, ``MaskSet.sampled_loss``
    (the samples under vmap), Adam, clipping."""
    from modlib import masks
    from modlib.bridge.experiment import CLIP
    from modlib.redundant_input_toy import experiment as toy

    start = {} if init is None else {"init": init}
    ms = masks.attach(net, "gumbel", alpha=b.alpha, seed=0, **start)
    opt = torch.optim.Adam(ms.parameters(), lr=b.mask_lr)
    g = torch.Generator().manual_seed(0)
    loss_fn = loss_fn or toy.loss_fn("mse")

    def step():
        i = torch.randint(len(x), (b.mask_batch,), generator=g)
        loss = ms.sampled_loss(loss_fn, x[i], y[i], b.samples) + ms.regularizer() / b.mask_batch
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(ms.parameters(), CLIP)
        opt.step()
    return step


def _stacked_toy_masks(m: int, b, hidden, n: int) -> Callable[[], None]:
    """Prototype: ``m`` toy masks (seeds x the 3 masks per seed) trained as one stacked step: each
    layer's frozen weights ``[m, out, in]`` and mask logits ``[m, out, in]``, ``b.samples`` Gumbel
    samples each (``modlib.masks.gumbel_weight``), one ``matmul`` per layer for all masks and samples,
    Adam over the stacked logits (elementwise: each mask's own) and each mask's own gradient-norm
    clip. A sketch written for timing, outside ``modlib.masks``: not checked against
    ``bridge.train_mask`` mask for mask (its random draws differ in any case)."""
    from modlib.bridge.experiment import CLIP
    from modlib.masks import DEFAULTS, gumbel_weight

    sizes = [2, *hidden, 1]
    weights = [torch.empty(m, o, i).uniform_(-0.5, 0.5) for i, o in zip(sizes[:-1], sizes[1:])]
    biases = [torch.full((m, 1, 1, o), 0.1) for o in sizes[1:]]
    logits = [torch.full_like(w, DEFAULTS["gumbel"]["init"]).requires_grad_() for w in weights]
    opt = torch.optim.Adam(logits, lr=b.mask_lr)
    x, y = torch.randn(m, n, 2), torch.randint(0, 2, (m, n)).float()
    chunk = b.mask_batch // b.samples
    g = torch.Generator().manual_seed(0)

    def step():
        i = torch.randint(n, (m, b.mask_batch), generator=g)
        h = torch.gather(x, 1, i[..., None].expand(-1, -1, 2)).view(m, b.samples, chunk, 2)
        t = torch.gather(y, 1, i).view(m, b.samples, chunk)
        for k, (w, bias, lg) in enumerate(zip(weights, biases, logits)):
            u = torch.rand(m, b.samples, *w.shape[1:], generator=g)
            wk = gumbel_weight(w[:, None], lg[:, None], u, DEFAULTS["gumbel"]["tau"])  # [m, S, out, in]
            h = h @ wk.transpose(-1, -2) + bias
            if k < len(weights) - 1:
                h = h.relu()
        per = (0.5 * (torch.tanh(h[..., 0]) - (2 * t - 1)) ** 2).mean(-1).mean(-1)  # [m]
        reg = b.alpha * sum(lg.flatten(1).sum(1) for lg in logits) / b.mask_batch
        opt.zero_grad()
        (per + reg).sum().backward()
        with torch.no_grad():  # clip_grad_norm_ per mask
            norm = torch.sqrt(sum(lg.grad.flatten(1).pow(2).sum(1) for lg in logits))  # [m]
            scale = (CLIP / (norm + 1e-6)).clamp(max=1.0)
            for lg in logits:
                lg.grad.mul_(scale.view(-1, 1, 1))
        opt.step()
    return step


def toy_masks() -> Kind:
    """Chapter 7's masks on chapter 1's toy networks: per formulation 100 seeds x 3 masks, one
    after another, 1,000 steps each."""
    from modlib import bridge
    from modlib.models import mlp
    from modlib.redundant_input_toy import experiment as toy

    b = bridge.settings("full")
    s = toy.settings("full")
    net = mlp(2, s.hidden, 1, "relu", init="playground")
    x, y = torch.randn(b.n_mask, 2), torch.randint(0, 2, (b.n_mask,)).float()
    m = 3 * b.seeds
    return Kind(_bridge_mask(net, x, y, b), f"Gumbel masks over a 2-8-8-8-1 MLP, {b.samples} samples, batch {b.mask_batch}, Adam + clip",
                why="a step's work is ~60 kFLOP (8-wide layers, 16 points per sample): all of it is "
                    "per-op Python/dispatch overhead (mask parametrizations, vmap over samples, Adam, clip)",
                protos=[(f"all {m} masks of a formulation stacked in one step", _stacked_toy_masks(m, b, s.hidden, b.n_mask), m)])


def digit_masks() -> Kind:
    """Chapter 7's masks on chapter 3's MNIST-pair CNNs (categorical hinge)."""
    from modlib.bridge import digits as br_digits
    from modlib.resists_at_scale.networks import categorical_hinge, digit_cnn

    d = br_digits.settings("full")
    net = digit_cnn()
    x, y = torch.rand(d.n_mask, 1, 28, 56), torch.randint(0, 10, (d.n_mask,))
    cl, xcl = channels_last(net, x)
    return Kind(_bridge_mask(net, x, y, d, loss_fn=categorical_hinge),
                f"Gumbel masks over the digit CNN, {d.samples} samples, batch {d.mask_batch}, Adam + clip",
                why="4 mask samples of the 1.1M-weight dense layer (17600 -> 64) each step: sampling and "
                    "the straight-through product are elementwise over 4 x 1.1M weights (memory-bound), "
                    "for 16 images per sample; and the NCHW max-pooling",
                protos=[(CL_LABEL, _bridge_mask(cl, xcl, y, d, loss_fn=categorical_hinge), 1)])


def sprite_masks() -> Kind:
    """Chapter 7's slot masks on chapter 2's decoders (monolithic; the compositional reference
    likewise), MSE to the slot's target scene."""
    from modlib import compositional_sprites as cs
    from modlib.bridge import sprites as br_sprites
    from modlib.data import sprites

    b = br_sprites.settings("full")
    s = br_sprites.decoder_settings("full", b, "monolithic")
    net = cs.build(s, br_sprites.ROWS["monolithic"])
    z = torch.rand(b.n_mask, sprites.SLOTS, sprites.LATENTS)
    x = torch.rand(b.n_mask, 3, s.size, s.size)
    cl, xcl = channels_last(net, x)
    return Kind(_bridge_mask(net, z, x, b, loss_fn=F.mse_loss, init=b.init),
                f"Gumbel masks over the monolithic decoder, {b.samples} samples, batch {b.mask_batch}, Adam + clip",
                why="the Gumbel noise and straight-through product over every weight x 4 samples "
                    "(elementwise), the 2x2 convolutions' and upsampling's backward, for 16 scenes per "
                    "sample: the batched matmuls are under a tenth of the step",
                protos=[(CL_LABEL, _bridge_mask(cl, z, xcl, b, loss_fn=F.mse_loss, init=b.init), 1)])


# name: (chapter, builder); the jobs of modlib.jobs.jobs([chapter], "full") each kind covers are in
# its builder's docstring. Jobs timed through another kind's step: chapter 1's mechanism and scale
# (the sweep's vmapped SGD on other data), chapter 2's causes rows (the same decoders), chapter 3's
# controls (the same CNN; the SCAN controls' input-feeding variant of the seq2seq), chapter 4's added
# experiments (the FNN and its masks at other widths), chapter 5's sweeps and all of chapter 6's
# fine-tuning, matched and sweep jobs (chapter 5's base and search steps), chapter 7's compositional
# sprite masks (as the monolithic ones). Not timed: chapter 1's baselines (closed form, no training
# step).
KINDS: dict[str, tuple[str, Callable[[], Kind]]] = {
    "toy-sweep": ("redundant_input_toy", toy_sweep),
    "sprites-compositional": ("compositional_sprites", sprites_compositional),
    "sprites-monolithic": ("compositional_sprites", sprites_monolithic),
    "mnist-cnn": ("resists_at_scale", mnist_cnn),
    "scan-seq2seq": ("resists_at_scale", scan_seq2seq),
    "fnn-base": ("weight_masks", fnn_base),
    "fnn-double-base": ("weight_masks", fnn_double),
    "fnn-mask": ("weight_masks", fnn_mask),
    "cnn-base": ("weight_masks", cnn_base),
    "cnn-mask": ("weight_masks", cnn_mask),
    "resnet-base": ("structural_compositionality", resnet_base),
    "bert-base": ("structural_compositionality", bert_base),
    "resnet-search": ("structural_compositionality", resnet_search),
    "bert-search": ("structural_compositionality", bert_search),
    "mlm-pretrain": ("pretraining_consistency", mlm),
    "simclr-pretrain": ("pretraining_consistency", simclr),
    "toy-masks": ("bridge", toy_masks),
    "digit-masks": ("bridge", digit_masks),
    "sprite-masks": ("bridge", sprite_masks),
}

COLUMNS = ("kind", "chapter", "step", "flops_per_step", "step_ms", "matmul", "matmul_ms", "ratio",
           "gflops", "matmul_gflops", "why", "extra", "proto", "proto_ms_per_step", "proto_ratio")


# ---------------------------------------------------------------- the table


def measure(name: str, reps: int) -> dict:
    """One row of the table for kind ``name``."""
    chapter, build = KINDS[name]
    torch.manual_seed(0)
    kind = build()
    flops = count_flops(kind.step)
    mm, shape = matmul_for(flops)
    calls = {"step": kind.step, "matmul": mm}
    for i, (_, fn, _) in enumerate(kind.protos):
        calls[f"proto{i}"] = fn
    for key, (fn, _) in kind.extra.items():
        calls[key] = fn
    rounds = time_together(calls, reps)
    t = {name: statistics.median(v) for name, v in rounds.items()}
    ratio = median_ratio(rounds["step"], rounds["matmul"])
    row = {"kind": name, "chapter": chapter, "step": kind.what, "flops_per_step": flops,
           "step_ms": t["step"] * 1e3, "matmul": shape, "matmul_ms": t["matmul"] * 1e3, "ratio": ratio,
           "gflops": flops / t["step"] / 1e9, "matmul_gflops": matmul_flops(shape) / t["matmul"] / 1e9,
           "why": kind.why if ratio > SLOW else "", "extra": "", "proto": "", "proto_ms_per_step": "",
           "proto_ratio": ""}
    extras = []
    for key, (fn, label) in kind.extra.items():  # its ratio against the matmul scaled to its FLOPs
        more = count_flops(fn)
        extras.append(f"{label}: {t[key] * 1e3:.3g} ms, {more / 1e6:.0f} MFLOP, ratio "
                      f"{median_ratio(rounds[key], rounds['matmul']) * flops / more:.2f}")
    row["extra"] = "; ".join(extras)
    if kind.protos:  # several: joined by " | " in the same order in all three columns
        per_step = [t[f"proto{i}"] / per for i, (_, _, per) in enumerate(kind.protos)]
        ratios = [median_ratio(rounds[f"proto{i}"], rounds["matmul"]) / per for i, (_, _, per) in enumerate(kind.protos)]
        row.update(proto=" | ".join(label for label, _, _ in kind.protos),
                   proto_ms_per_step=" | ".join(f"{p * 1e3:.3g}" for p in per_step),
                   proto_ratio=" | ".join(f"{r:.3g}" for r in ratios))
    return row



def header(threads: int) -> str:
    return (f"# torch {torch.__version__}, {threads} thread(s), CPU {results.cpu_name()} ({os.cpu_count()} cores), "
            f"python {platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M %Z')}")


def fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"
    return str(v)


def print_table(rows: list[dict]) -> None:
    short = ("kind", "flops_per_step", "step_ms", "matmul", "matmul_ms", "ratio", "gflops", "proto_ms_per_step",
             "proto_ratio")
    widths = {c: max(len(c), *(len(fmt(r[c])) for r in rows)) for c in short}
    print("  ".join(c.ljust(widths[c]) for c in short))
    for r in rows:
        print("  ".join(fmt(r[c]).ljust(widths[c]) for c in short))
    for r in rows:
        if r["why"]:
            print(f"- {r['kind']} (x{r['ratio']:.1f}): {r['why']}")
        if r["extra"]:
            print(f"  {r['kind']}: {r['extra']}")
        if r["proto"]:
            for label, ms, ratio in zip(r["proto"].split(" | "), r["proto_ms_per_step"].split(" | "),
                                        r["proto_ratio"].split(" | ")):
                print(f"  {r['kind']} prototype, {label}: {ms} ms per step, ratio {r['ratio']:.1f} -> {ratio}")
    if any(r["proto"] for r in rows):
        print(f"  (every prototype: {RECOMPUTE})")


def write_csv(rows: list[dict], path: Path, threads: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        f.write(header(threads) + "\n")
        f.write(f"# proto columns: faster ways of doing a kind's work, prototyped in the benchmark only; {RECOMPUTE}\n")
        w = csv.DictWriter(f, COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in r.items()})


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kinds", nargs="+", choices=tuple(KINDS), metavar="KIND", default=list(KINDS),
                    help=f"a subset of the kinds ({', '.join(KINDS)})")
    ap.add_argument("--quick", action="store_true", help="3 repetitions instead of 9")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("limits.csv"),
                    help="the CSV written (default benchmarks/limits.csv; '-' for none)")
    ap.add_argument("--list", action="store_true", help="print the kinds and what they cover, and stop")
    args = ap.parse_args(argv)
    if args.list:
        for name, (chapter, build) in KINDS.items():
            print(f"{name} ({chapter}): {' '.join((build.__doc__ or '').split())}")
        return []
    torch.set_num_threads(args.threads)
    print(header(args.threads), flush=True)
    reps = 3 if args.quick else 9
    rows = []
    start = time.perf_counter()
    for name in args.kinds:
        t0 = time.perf_counter()
        rows.append(measure(name, reps))
        r = rows[-1]
        print(f"{name}: {r['flops_per_step'] / 1e6:.1f} MFLOP, step {r['step_ms']:.3g} ms, matmul {r['matmul']} "
              f"{r['matmul_ms']:.3g} ms, ratio {r['ratio']:.1f} ({time.perf_counter() - t0:.0f} s)", flush=True)
    print(f"\n{len(rows)} kinds in {time.perf_counter() - start:.0f} s\n")
    print_table(rows)
    if str(args.out) != "-":
        write_csv(rows, args.out, args.threads)
        print(f"\nwritten: {args.out}")
    return rows


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    main()
