"""Chapter 3's costs: generating SCAN, and training steps per second of both models on the CPU.

    python benchmarks/bench_resists.py [--threads 1] [--steps 20] [--seeds 5]

1. SCAN: the time to generate all 20,910 commands with their translations and the four splits
   (`modlib.data.scan`, from a cold cache), and to encode the add-jump split.
2. The MNIST-pairs CNN (`resists_at_scale.digit_cnn`, batch 64 pairs of 28 x 56): ``seeds``
   networks trained one after another (a loop) against the same networks stacked and trained as
   one batched model (`torch.func.vmap` over stacked weights, `modlib.training`), measured side by
   side in alternating blocks so that the machine's load hits both alike.
3. The SCAN seq2seq model (batch 256, the longest outputs of 49 steps): steps per second. Its
   encoder packs variable-length commands, which `vmap` does not batch, so there is no batched
   path; the chapter trains its seeds one after another.

Measured here (2026-11-24, this project's 2-core CPU machine, torch 2.13, 1 thread, the other core
idle, `--steps 20 --seeds 5`):

    SCAN: all commands and four splits generated in 0.19 s; add-jump encoded in 0.21 s
    model                                steps/s
    CNN, 5 seeds in a loop                  2.69
    CNN, 5 seeds batched (vmap)             2.11   (batched / loop: 0.79x)
    seq2seq, one seed, batch 256            6.52

On the CPU the batched CNN is slower than the loop (its convolutions are already large enough to
keep one core busy, and vmap adds work), so the chapter trains its seeds one after another.
"""

from __future__ import annotations

import argparse
import time

import torch
from modlib import resists_at_scale as rs
from modlib import training
from modlib.data import scan


def timed(fn, repeats: int) -> float:
    """Seconds per call of ``fn`` over ``repeats`` calls, after one call to warm up."""
    fn()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats


def scan_generation() -> tuple[float, float]:
    start = time.perf_counter()
    for cached in (scan.commands, scan.command_pairs):
        cached.cache_clear()
    for name in scan.SPLITS:
        scan.split(name)
    generate = time.perf_counter() - start
    start = time.perf_counter()
    rs.scan_data("A", 0)
    return generate, time.perf_counter() - start


def cnn_step_costs(seeds: int, steps: int) -> tuple[float, float]:
    """Seconds per training step of all ``seeds`` CNNs: in a loop, and batched with vmap."""
    x = torch.rand(seeds, 64, 1, 28, 56)
    y = torch.randint(0, 10, (seeds, 64))
    models = [rs.digit_cnn() for _ in range(seeds)]
    opts = [torch.optim.Adam(m.parameters(), lr=1e-3) for m in models]

    def loop():
        for m, opt, xi, yi in zip(models, opts, x, y):
            loss = rs.categorical_hinge(m(xi), yi)
            opt.zero_grad()
            loss.backward()
            opt.step()

    template, params = training.stack([rs.digit_cnn() for _ in range(seeds)])
    params = {k: v.detach().requires_grad_(True) for k, v in params.items()}
    opt = torch.optim.Adam(params.values(), lr=1e-3)

    def batched():
        scores = training.forward(template, params, x)  # [seeds, 64, 10], one vmap call
        # the sum of the members' mean losses: each member's gradient is its own
        loss = rs.categorical_hinge(scores.flatten(0, 1), y.flatten()) * seeds
        opt.zero_grad()
        loss.backward()
        opt.step()

    loop_s, batched_s = [], []
    for _ in range(3):  # alternating blocks
        loop_s.append(timed(loop, steps))
        batched_s.append(timed(batched, steps))
    return min(loop_s), min(batched_s)


def seq2seq_step_cost(steps: int) -> float:
    s = rs.settings("full")
    model = rs.Seq2Seq(len(scan.COMMAND_VOCAB), len(scan.ACTION_VOCAB), s.embedding, s.encoder, s.decoder)
    opt = torch.optim.Adam(model.parameters(), lr=s.scan_lr)
    (src, tgt_in, tgt_out), _ = rs.scan_data("A", 0)
    idx = torch.randint(0, len(src), (s.scan_batch,), generator=torch.Generator().manual_seed(0))

    def step():
        scores = model(src[idx], tgt_in[idx])
        loss = torch.nn.functional.cross_entropy(scores.flatten(0, 1), tgt_out[idx].flatten(),
                                                 ignore_index=scan.Vocab.PAD)
        opt.zero_grad()
        loss.backward()
        opt.step()

    return timed(step, steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s)\n")
    generate, encode = scan_generation()
    print(f"SCAN: all commands and four splits generated in {generate:.2f} s; "
          f"add-jump encoded in {encode:.2f} s\n")
    loop, batched = cnn_step_costs(args.seeds, args.steps)
    print(f"{'model':<34}{'steps/s':>10}")
    print(f"{f'CNN, {args.seeds} seeds in a loop':<34}{1 / loop:>10.2f}")
    print(f"{f'CNN, {args.seeds} seeds batched (vmap)':<34}{1 / batched:>10.2f}   "
          f"(batched / loop: {loop / batched:.2f}x)")
    print(f"{'seq2seq, one seed, batch 256':<34}{1 / seq2seq_step_cost(args.steps // 4 or 1):>10.2f}")


if __name__ == "__main__":
    main()
