"""The toy's training step before and after it dropped ``vmap`` (issue 56, item 4), side by side.

    python benchmarks/bench_toy_step.py [--members 100 400 2200] [--steps 200] [--threads 1]

Chapter 1 trains the models of its sweep (seeds x formulations x training sets: 100 per (activation,
loss) group at `default`, 2,200 at `full`) as one stacked model (`modlib.training.train_seeds`), and
chapter 7 its toy networks the same way. Until 2026-12-04 every step ran the members through
`torch.func.vmap` over `functional_call` (:func:`vmap_forward`, kept here as the "before"); now
`modlib.training.forward` runs each linear layer as the `bmm` then `add` that vmap dispatched, without
vmap's Python work per call. The two give the same numbers bit for bit: before timing, both train 8
members for 50 float32 steps from the same start on the same batches, for each activation and loss
of the chapter, and the weights must be equal exactly (the run stops otherwise). The table gives
milliseconds per update at each number of members, measured side by side in one run (the two paths
alternate, five rounds, the median), and the ratio. Last, the chapter's own `toy.run_group` at
`default`: milliseconds per update with the Playground's batches and the recording between updates.

Measured here (2026-12-04, 2-core CPU machine, 1 thread, `nice`, another benchmark on the other core):
equal bit for bit; 1.85 -> 1.25, 2.73 -> 2.23 and 9.65 -> 8.99 ms per update (vmap -> now) at 100, 400
and 2,200 members (ratios 1.46, 1.30, 1.08): the saving is vmap's fixed cost per call, so it matters
at `default`'s sizes and little at `full`'s. The chapter's own group at `default` (120 members) took
1.44 ms per update with batches and recording, about 26 s of CPU for one (activation, loss) group.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch.func import functional_call, vmap

from modlib import redundant_input_toy as toy
from modlib.models import mlp
from modlib.training import forward, stack, train_seeds

WIDTHS = (2, 8, 8, 8, 1)  # the paper's toy network
BATCH = 10


def vmap_forward(template, params, x: torch.Tensor) -> torch.Tensor:
    """The engine until 2026-12-04: every member through ``functional_call`` under ``vmap``."""
    return vmap(lambda p, xi: functional_call(template, p, (xi,)))(params, x)


def train_before(template, params, batches, loss_fn, steps: int, lr: float) -> dict:
    """``train_seeds`` as it was: the same SGD with :func:`vmap_forward`."""
    member_loss = vmap(loss_fn)
    for t in range(steps):
        x, y = batches(t)
        leaves = {k: v.requires_grad_(True) for k, v in params.items()}
        grads = torch.autograd.grad(member_loss(vmap_forward(template, leaves, x), y).sum(), list(leaves.values()))
        with torch.no_grad():
            params = {k: v.detach() - lr * g for (k, v), g in zip(leaves.items(), grads)}
    return params


def make_batches(members: int, steps: int):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(steps, members, BATCH, 2, generator=g)
    y = (x[..., 0] > 0).float()
    return lambda t: (x[t], y[t])


def start(members: int, activation: str = "relu"):
    torch.manual_seed(0)
    return stack([mlp(WIDTHS[0], list(WIDTHS[1:-1]), WIDTHS[-1], activation, init="playground")
                  for _ in range(members)])


def check_equal() -> None:
    """Both paths, 8 members, 50 float32 steps, every activation and loss of the chapter: the weights
    must be equal bit for bit, and so must one forward pass."""
    batches = make_batches(8, 50)
    for activation in ("relu", "tanh"):
        for loss in toy.LOSSES:
            template, params = start(8, activation)
            now = train_seeds(template, params, batches, toy.loss_fn(loss), steps=50, lr=0.03, progress=False)
            before = train_before(template, params, batches, toy.loss_fn(loss), 50, 0.03)
            x = batches(0)[0]
            same = all(torch.equal(now[k], before[k]) for k in now) and torch.equal(
                forward(template, now, x), vmap_forward(template, now, x))
            if not same:
                raise SystemExit(f"{activation}/{loss}: the two paths differ; the stored results would move")
    print("equal bit for bit: weights after 50 steps and outputs, relu/tanh x " + "/".join(toy.LOSSES))


def ms_per_step(fn, steps: int) -> float:
    fn(2)  # warm-up
    begin = time.process_time()
    fn(steps)
    return 1000 * (time.process_time() - begin) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--members", type=int, nargs="+", default=[100, 400, 2200])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"CPU, {torch.get_num_threads()} thread(s); MLP {'-'.join(map(str, WIDTHS))}, batch {BATCH}, plain SGD")
    check_equal()
    print(f"{'members':>8} {'before, vmap (ms/step)':>23} {'now (ms/step)':>14} {'ratio':>6}")
    mse = toy.loss_fn("mse")
    for m in args.members:
        template, params = start(m)
        batches = make_batches(m, args.steps + 2)
        rounds = [(ms_per_step(lambda n: train_before(template, params, batches, mse, n, 0.03), args.steps),
                   ms_per_step(lambda n: train_seeds(template, params, batches, mse, steps=n, lr=0.03,
                                                     progress=False), args.steps)) for _ in range(5)]
        before, now = (statistics.median(r[i] for r in rounds) for i in (0, 1))
        ratio = statistics.median(b / a for b, a in rounds)
        print(f"{m:>8} {before:>23.2f} {now:>14.2f} {ratio:>6.2f}")
    ms, members, per_epoch = chapter_ms_per_update()
    print(f"toy.run_group at default ({members} members, {per_epoch} updates an epoch): {ms:.2f} ms per "
          f"update with batches and recording; one (activation, loss) group of default "
          f"({toy.settings('default').epochs} epochs): about {ms * per_epoch * toy.settings('default').epochs / 1000:.0f} s")


def chapter_ms_per_update(short: int = 16, long: int = 80) -> tuple[float, int, int]:
    """The chapter's own group at the default profile's members, run for ``short`` and ``long``
    epochs: the difference in CPU time per update (setup cancels out), members, updates an epoch."""
    s = toy.settings("default")
    times = []
    for epochs in (short, long):
        begin = time.process_time()
        toy.run_group(s.with_(epochs=epochs), "relu", "mse", torch.device("cpu"), progress=False)
        times.append(time.process_time() - begin)
    per_epoch = toy.playground_batches(s.n_train, s.batch, 1)[1][-1]
    members = len(s.formulations) * len(s.conditions) * s.seeds
    return 1000 * (times[1] - times[0]) / ((long - short) * per_epoch), members, per_epoch


if __name__ == "__main__":
    main()
