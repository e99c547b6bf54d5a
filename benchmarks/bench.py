"""Benchmarks, measured side by side in one run; prints tables.

    python benchmarks/bench.py [--seeds 20] [--steps 256] [--skip-notebooks]

1. Several seeds of the toy's MLP trained as one batched model (torch.func) against a Python loop
   over seeds (the same SGD, `modlib.training.train_separately`), on the CPU and on CUDA if present.
2. Each notebook's wall time at the smoke and default profiles, run with papermill in a fresh
   results store (so nothing is loaded from earlier runs).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from modlib.models import mlp
from modlib.runtime import describe
from modlib.training import stack, train_separately, train_seeds

ROOT = Path(__file__).resolve().parents[1]


def seeds_benchmark(device: torch.device, seeds: int, steps: int) -> dict:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(seeds, 300, 2, generator=g).to(device)
    y = (x[..., 0] > 0).float()
    picks = torch.randint(300, (steps, seeds, 10), generator=g).to(device)

    def batches(t):
        i = picks[t]
        return torch.gather(x, 1, i[..., None].expand(-1, -1, 2)), torch.gather(y, 1, i)

    def models():
        out = []
        for s in range(seeds):
            torch.manual_seed(s)
            out.append(mlp(2, [8, 8, 8], 1, init="playground").to(device))
        return out

    def loss(out, target):
        return F.binary_cross_entropy_with_logits(out[:, 0], target)

    def timed(fn):
        start = time.perf_counter()
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - start

    template, params = stack(models())
    train_seeds(template, params, batches, loss, steps=5, lr=0.1, progress=False)  # warm-up
    batched = timed(lambda: train_seeds(template, params, batches, loss, steps=steps, lr=0.1, progress=False))
    loop = timed(lambda: train_separately(models(), batches, loss, steps=steps, lr=0.1, progress=False))
    return {"device": describe(device), "batched_s": batched, "loop_s": loop, "ratio": loop / batched}


def notebook_time(notebook: Path, profile: str) -> float:
    with tempfile.TemporaryDirectory() as store, tempfile.TemporaryDirectory() as out:
        env = {**os.environ, "MODLIB_RESULTS": store}
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "papermill", str(notebook), f"{out}/{notebook.name}",
                        "-p", "profile", profile, "--cwd", str(notebook.parent)],
                       check=True, env=env, capture_output=True)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--steps", type=int, default=256)
    parser.add_argument("--skip-notebooks", action="store_true")
    args = parser.parse_args()

    devices = [torch.device("cpu")] + ([torch.device("cuda")] if torch.cuda.is_available() else [])
    print(f"\nBatched seeds vs a loop over seeds: toy MLP 2-8-8-8-1, {args.seeds} seeds, "
          f"{args.steps} SGD steps of batch 10")
    print(f"{'device':28s} {'batched (s)':>12s} {'loop (s)':>10s} {'loop / batched':>15s}")
    for d in devices:
        r = seeds_benchmark(d, args.seeds, args.steps)
        print(f"{r['device']:28s} {r['batched_s']:12.2f} {r['loop_s']:10.2f} {r['ratio']:15.1f}")

    if args.skip_notebooks:
        return
    device = describe(devices[-1])
    print(f"\nNotebook wall time (papermill, fresh results store, {device})")
    print(f"{'notebook':32s} {'smoke (s)':>10s} {'default (s)':>12s}")
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        smoke, default = notebook_time(nb, "smoke"), notebook_time(nb, "default")
        print(f"{nb.name:32s} {smoke:10.1f} {default:12.1f}")


if __name__ == "__main__":
    main()
