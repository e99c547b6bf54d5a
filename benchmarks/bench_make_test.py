"""`make test`'s pytest runs one after the other (one process, torch's default threads, as before
issue 56) against spread over the cores (pytest-xdist, one torch thread per worker, as `make test`
runs them), measured side by side in one run; prints each run's wall time, the ratio and each file's
or notebook's time (pytest --durations, summed per file).

    python benchmarks/bench_make_test.py [--workers 2] [PATH ...]

PATH: test files or notebooks (default: every notebook, at the smoke profile, as `make test` runs
them). Each run computes into a fresh results store of its own, so neither loads what the other made.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "notebooks").glob("*.ipynb"))
NBVAL = ["--nbval-lax", "--nbval-current-env", "--nbval-cell-timeout=300"]


def timed_run(paths: list[str], parallel: list[str], env: dict[str, str]) -> tuple[float, dict[str, float], int]:
    """Wall time, seconds per file (from --durations) and the exit status of one pytest run; prints
    what failed (e.g. a notebook cell past its timeout on a busy machine)."""
    notebooks = any(p.endswith(".ipynb") for p in paths)
    with tempfile.TemporaryDirectory() as store:
        env = {**os.environ, "MODLIB_RESULTS": store, "PYTHONPATH": str(ROOT), **env,
               **({"MODLIB_PROFILE": "smoke"} if notebooks else {})}
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "--durations=0", "--durations-min=0",
                               *parallel, *(NBVAL if notebooks else []), *paths],
                              cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
    for line in re.findall(r"^(?:FAILED|ERROR) .*$", done.stdout, re.M):
        print(f"{' '.join(parallel) or 'one process'}: {line}")
    per_file = collections.Counter()
    for seconds, nodeid in re.findall(r"^([\d.]+)s (?:setup|call|teardown)\s+(\S+)", done.stdout, re.M):
        per_file[nodeid.split("::")[0]] += float(seconds)
    return wall, dict(per_file), done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("paths", nargs="*", default=NOTEBOOKS)
    args = parser.parse_args()
    runs = {"one process": ([], {}),
            f"{args.workers} workers": (["-n", str(args.workers), "--dist", "loadfile"], {"OMP_NUM_THREADS": "1"})}
    measured = {name: timed_run(args.paths, parallel, env) for name, (parallel, env) in runs.items()}
    print(f"pytest on {len(args.paths)} path(s), {os.cpu_count()} cores")
    print(f"{'run':16s} {'wall (s)':>9s} {'exit':>5s}")
    for name, (wall, _, rc) in measured.items():
        print(f"{name:16s} {wall:9.1f} {rc:5d}")
    (serial, _, _), (spread, _, _) = measured.values()
    print(f"one process / {args.workers} workers: {serial / spread:.2f}")
    print(f"\n{'file or notebook':48s} " + " ".join(f"{name:>16s}" for name in measured))
    files = sorted({f for _, per_file, _ in measured.values() for f in per_file},
                   key=lambda f: -next(iter(measured.values()))[1].get(f, 0.0))
    for f in files:
        print(f"{f:48s} " + " ".join(f"{per_file.get(f, 0.0):16.1f}" for _, per_file, _ in measured.values()))


if __name__ == "__main__":
    main()
