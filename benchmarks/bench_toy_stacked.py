"""The toy's sweep as one stacked MLP (one batched matmul per layer) against the present path,
and what an update costs in the chapter's own run.

    python benchmarks/bench_toy_stacked.py [--members 400 2200 3200] [--steps 50] [--threads 1]

Chapter 1 trains the models of its sweep (seeds x formulations x training sets, 2,200 per
(activation, loss) pair at the full profile) together. The present path,
`modlib.training.train_seeds`, runs them with `torch.func.vmap` over `functional_call`. On the
authors' clock (18,432 SGD updates per model for the paper's 1024 epochs; four times that at
`full`) the update must be cheap. The alternative here: each layer's weights of all members are one
tensor `[M, in, out]` and a layer is one `torch.baddbmm`. Both paths do the same plain SGD on the
same 2-8-8-8-1 ReLU MLP, with squared loss on batches of 10; the table gives milliseconds per
update at each number of members, measured side by side in one run, and the ratio. Before timing,
both paths train 8 members for 50 steps in float64 from the same start on the same batches, and the
largest difference between their weights is printed (it should be rounding only). Last, the
chapter's own `toy.run_group` at the full profile's 2,200 members: milliseconds per update with
the Playground's batches and the recording between updates, from two runs of different length.

Measured here (2026-11-23, 2-core CPU machine, 1 thread, a headless browser on the other core):
1.9 / 1.2, 6.2 / 5.5 and 8.6 / 7.9 ms per update (vmap / stacked) at 400, 2,200 and 3,200 members,
and identical float64 weights. The stacked path saves about 10% at the chapter's size, so the chapter
keeps `train_seeds`. The chapter's own update, with the Playground's batches gathered each step and
the recording between updates, costs 9.7 ms at 2,200 members here; the stored full results took
527-614 s per (activation, loss) pair (7.1-8.3 ms per update, 73,728 updates), 38 minutes in all.
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn.functional as F

from modlib import redundant_input_toy as toy
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
    parser.add_argument("--members", type=int, nargs="+", default=[400, 2200, 3200])
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
    print(f"at the authors' clock (18,432 updates per model), {args.members[-1]} members: about "
          f"{18_432 * vmap_ms / 60_000:.1f} min (vmap) and {18_432 * stacked_ms / 60_000:.1f} min (stacked), "
          "updates only")
    ms, members, per_epoch = chapter_ms_per_update()
    print(f"toy.run_group at full ({members} members, {per_epoch} updates an epoch): {ms:.1f} ms per "
          f"update with batches and recording; one (activation, loss) pair of full "
          f"({toy.settings('full').epochs} epochs): about {ms * per_epoch * toy.settings('full').epochs / 60_000:.1f} min")


def chapter_ms_per_update(short: int = 8, long: int = 40) -> tuple[float, int, int]:
    """The chapter's own group at the full profile's members, run for ``short`` and ``long``
    epochs: the difference in time per update (setup cancels out), members, updates an epoch."""
    s = toy.settings("full")
    times = []
    for epochs in (short, long):
        begin = time.perf_counter()
        toy.run_group(s.with_(epochs=epochs), "relu", "mse", torch.device("cpu"), progress=False)
        times.append(time.perf_counter() - begin)
    per_epoch = toy.playground_batches(s.n_train, s.batch, 1)[1][-1]
    members = len(s.formulations) * len(s.conditions) * s.seeds
    return 1000 * (times[1] - times[0]) / ((long - short) * per_epoch), members, per_epoch


if __name__ == "__main__":
    main()
