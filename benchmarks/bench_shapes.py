"""Panels per second of the shape-panel generator (modlib/data/shapes.py) before and after its speed-up
(issue 56), side by side in one run.

    python benchmarks/bench_shapes.py [--base e7f03fa] [--sizes 32 64] [--seeds 10] [--rounds 3]
                                      [--out benchmarks/shapes.csv]

The old generator is ``modlib/data/shapes.py`` as of git revision ``--base`` (default ``e7f03fa``,
the last commit before the speed-up, which filled every panel's full pixel grid with matplotlib's
``Path.contains_points`` and used ``scipy.ndimage`` erosion and dilation), loaded as a module of its
own; the new one is the working tree's. For each size, both draw the same panels (``--seeds`` seeds of
each of the 8 combinations of ``inside``, ``contact`` and ``count`` in (2, 3)), in alternating rounds
so that a change in the machine's load hits them alike; the time is the median round, and ``ratio =
old / new`` the median of the rounds' ratios. Every panel of the two is checked to be bit-identical
(images, fills and the generator's state after it) and the run fails otherwise.

Measured here (2026-12-02, numpy 2.4, matplotlib 3.11, 1 thread, ``nice``, on the 2-core machine
shared with other jobs; benchmarks/shapes.csv): size 32, 30 -> 120 panels/s (2.7x); size 64, 11 -> 79
panels/s (7.0x). What is left is mostly matplotlib's ``contains_points`` on each polygon's bounding
box and numpy's per-call overhead on small arrays.

Output: the table printed and written to ``--out`` (CSV; its first line, a ``#`` comment, holds the
numpy and matplotlib versions, the base revision and the CPU).
"""

from __future__ import annotations

import argparse
import csv
import itertools
import platform
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path

import matplotlib
import numpy as np

from modlib.data import shapes

ROOT = Path(__file__).resolve().parents[1]
PROPERTIES = list(itertools.product((True, False), (True, False), (2, 3)))  # inside, contact, count


def old_module(base: str) -> types.ModuleType:
    """``modlib/data/shapes.py`` as of git revision ``base``, loaded as module ``shapes_old``."""
    source = subprocess.run(["git", "show", f"{base}:modlib/data/shapes.py"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    module = types.ModuleType("shapes_old")
    exec(compile(source, f"{base}:modlib/data/shapes.py", "exec"), module.__dict__)
    return module


def draw_all(module, size: int, seeds: int) -> list[tuple]:
    """Every panel of one round: ``module.panel`` for each seed and :data:`PROPERTIES`, as
    ``(image, fills, generator state)``."""
    out = []
    for seed, (inside, contact, count) in itertools.product(range(seeds), PROPERTIES):
        rng = np.random.default_rng(seed)
        image, fills = module.panel(rng, size, inside=inside, contact=contact, count=count)
        out.append((image, fills, rng.bit_generator.state))
    return out


def same(a: list[tuple], b: list[tuple]) -> bool:
    """Whether two rounds drew bit-identical panels and left the generators in the same states."""
    return len(a) == len(b) and all(
        ia.tobytes() == ib.tobytes() and len(fa) == len(fb)
        and all(x.tobytes() == y.tobytes() for x, y in zip(fa, fb)) and sa == sb
        for (ia, fa, sa), (ib, fb, sb) in zip(a, b))


def bench(old, size: int, seeds: int, rounds: int) -> dict:
    """One row of the table: old and new panels per second at ``size`` (median rounds) and their
    ratio (median of the rounds' ratios)."""
    times = {"old": [], "new": []}
    for _ in range(rounds):
        drawn = {}
        for name, module in (("old", old), ("new", shapes)):
            start = time.perf_counter()
            drawn[name] = draw_all(module, size, seeds)
            times[name].append(time.perf_counter() - start)
        if not same(drawn["old"], drawn["new"]):
            sys.exit(f"size {size}: the new generator's panels differ from the old one's")
    panels = seeds * len(PROPERTIES)
    return {"size": size, "panels": panels,
            "old_per_s": round(panels / statistics.median(times["old"]), 1),
            "new_per_s": round(panels / statistics.median(times["new"]), 1),
            "ratio": round(statistics.median(o / n for o, n in zip(times["old"], times["new"])), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="e7f03fa", help="git revision of the old generator")
    parser.add_argument("--sizes", type=int, nargs="+", default=[32, 64])
    parser.add_argument("--seeds", type=int, default=10, help="seeds per combination of properties")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "shapes.csv")
    args = parser.parse_args()
    old = old_module(args.base)
    rows = [bench(old, size, args.seeds, args.rounds) for size in args.sizes]
    print(f"{'size':>5} {'panels':>7} {'old /s':>8} {'new /s':>8} {'ratio':>6}")
    for r in rows:
        print(f"{r['size']:>5} {r['panels']:>7} {r['old_per_s']:>8} {r['new_per_s']:>8} {r['ratio']:>6}")
    with open(args.out, "w", newline="") as f:
        f.write(f"# numpy {np.__version__}, matplotlib {matplotlib.__version__}, base {args.base}, "
                f"{platform.processor() or platform.machine()}\n")
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
