"""The toy's sweep as one stacked MLP (one batched matmul per layer) against the present path.

    python benchmarks/bench_toy_stacked.py [--members 400 1600 3200] [--steps 50] [--threads 1]

Chapter 1 trains every model of its sweep (seeds x formulations x activations x losses x reveal
levels, 3,200 at the full profile) together. The present path, `modlib.training.train_seeds`, runs
the models with `torch.func.vmap` over `functional_call`. Issue 12 asks for the authors' clock (about
18,400 SGD updates per model instead of 1,024); this asks whether the update itself must get
cheaper. The alternative here: each layer's weights of all members are one tensor `[M, in, out]` and
a layer is one `torch.baddbmm`. Both paths do the
same plain SGD on the same 2-8-8-8-1 ReLU MLP, with squared loss on batches of 10; the table gives
milliseconds per update at each number of members, measured side by side in one run, and the ratio.
Before timing, both paths train 8 members for 50 steps in float64 from the same start on the same
batches, and the largest difference between their weights is printed (it should be rounding only).
This is a prototype for issue 12: the stacked step is not yet what the chapter trains with.

Measured here (2026-11-23, 2-core CPU machine, 1 thread, quiet): 1.9 / 1.2, 4.7 / 4.1 and 8.6 / 7.9
ms per update (vmap / stacked) at 400, 1,600 and 3,200 members, and identical float64 weights. The
update is already cheap on the present path (3,200 members x 18,400 updates: under 3 minutes); what
a longer run costs is the recording between updates (`on_step`), which this does not time.
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn.functional as F

from modlib.models import mlp
from modlib.training import stack, train_seeds

WIDTHS = (2, 8, 8, 8, 1)  # the paper's toy network
BATCH = 10


def stacked_params(template_params: dict) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """From `stack`'s {name: [M, ...]} (nn.Linear weights [M, out, in], biases [M, out]) to a list of
    (weight [M, in, out], bias [M, 1, out]), one pair per layer, for `baddbmm`."""
    names = sorted({k.rsplit(".", 1)[0] for k in template_params}, key=lambda n: int(n.split(".")[-1]))
    return [(template_params[f"{n}.weight"].transpose(1, 2).contiguous(),
             template_params[f"{n}.bias"][:, None, :].contiguous()) for n in names]


def stacked_forward(layers, x: torch.Tensor) -> torch.Tensor:
    """x [M, B, 2] -> outputs [M, B, 1]; ReLU between layers."""
    for k, (w, b) in enumerate(layers):
        x = torch.baddbmm(b, x, w)  # [M, B, out]
        if k < len(layers) - 1:
            x = x.relu()
    return x


def train_stacked(layers, batches, steps: int, lr: float):
    """Plain SGD on every member at once; the loss summed over members is each member's own mean
    loss, so each member's gradient is its own."""
    params = [p.clone().requires_grad_(True) for pair in layers for p in pair]
    for t in range(steps):
        x, y = batches(t)
        out = stacked_forward(list(zip(params[::2], params[1::2])), x)[..., 0]  # [M, B]
        loss = ((out - y) ** 2).mean(1).sum()
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p -= lr * g
    return [p.detach() for p in params]


def make_batches(members: int, steps: int, dtype=torch.float32):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(steps, members, BATCH, 2, generator=g, dtype=dtype)
    y = torch.sign(x[..., 0])
    return lambda t: (x[t], y[t])


def start(members: int, dtype=torch.float32):
    torch.manual_seed(0)
    template, params = stack([mlp(WIDTHS[0], list(WIDTHS[1:-1]), WIDTHS[-1]).to(dtype)
                              for _ in range(members)])
    return template, params


def agreement() -> float:
    """Largest weight difference after 50 float64 steps of both paths from the same start."""
    template, params = start(8, torch.float64)
    batches = make_batches(8, 50, torch.float64)
    mse = lambda out, y: F.mse_loss(out[..., 0], y)  # noqa: E731 (one member's mean loss)
    ours = train_seeds(template, params, batches, mse, steps=50, lr=0.1, progress=False)
    theirs = train_stacked(stacked_params(params), batches, 50, 0.1)
    ours = [p for pair in stacked_params(ours) for p in pair]  # the same order as theirs
    return max((a - b).abs().max().item() for a, b in zip(ours, theirs))


def ms_per_step(fn, steps: int) -> float:
    fn(2)  # warm-up
    begin = time.perf_counter()
    fn(steps)
    return 1000 * (time.perf_counter() - begin) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--members", type=int, nargs="+", default=[400, 1600, 3200])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"CPU, {torch.get_num_threads()} thread(s); MLP {'-'.join(map(str, WIDTHS))}, batch {BATCH}, plain SGD")
    print(f"agreement (8 members, 50 float64 steps): largest weight difference {agreement():.1e}")
    print(f"{'members':>8} {'vmap (ms/step)':>15} {'stacked (ms/step)':>18} {'ratio':>6}")
    for m in args.members:
        template, params = start(m)
        batches = make_batches(m, args.steps + 2)
        mse = lambda out, y: F.mse_loss(out[..., 0], y)  # noqa: E731
        vmap_ms = ms_per_step(lambda n: train_seeds(template, params, batches, mse, steps=n, lr=0.1,
                                                    progress=False), args.steps)
        layers = stacked_params(params)
        stacked_ms = ms_per_step(lambda n: train_stacked(layers, batches, n, 0.1), args.steps)
        print(f"{m:>8} {vmap_ms:>15.1f} {stacked_ms:>18.1f} {vmap_ms / stacked_ms:>6.1f}")
    print(f"at the authors' clock (~18,400 updates per model), {args.members[-1]} members: about "
          f"{18_400 * vmap_ms / 60_000:.1f} min (vmap) and {18_400 * stacked_ms / 60_000:.1f} min (stacked), "
          "updates only")


if __name__ == "__main__":
    main()
