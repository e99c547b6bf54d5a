"""Smoke checks of benchmarks/bench_limits.py (issue 56, item 4): its FLOP counting, the sizing of the
matmul it compares a step with, and one tiny kind measured end to end. Nothing here is timed against
a bound: the machine's speed is not under test."""

import importlib.util
import math
import sys
from pathlib import Path

import torch
from torch import nn

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_limits.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_limits", PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_flops_of_a_linear_step():
    bl = _bench()
    layer = nn.Linear(16, 8)
    x = torch.randn(4, 16)
    # forward x @ W.T, and backward the weight's gradient (x needs none): 2 x (2 * 4 * 16 * 8)
    assert bl.count_flops(lambda: layer(x).sum().backward()) == 2 * 2 * 4 * 16 * 8


def test_matmul_sizing():
    bl = _bench()
    for flops in (1e3, 5e6, 2e9, 3 * 2 * bl.NMAX ** 3):
        k, n = bl.matmul_shape(flops)
        assert n <= bl.NMAX and abs(2 * k * n ** 3 - flops) / flops < 0.1
    shapes = [bl.matmul_shape(f) for f in (1e4, 1e6, 1e9, 1e11)]
    done = [2 * k * n ** 3 for k, n in shapes]
    assert done == sorted(done) and len(set(done)) == len(done)  # more FLOPs, a larger matmul
    assert bl.matmul_flops("10x10") == 2000 and bl.matmul_flops("3x10x10") == 6000


def test_one_tiny_kind_end_to_end():
    bl = _bench()
    torch.set_num_threads(1)
    row = bl.measure("toy-masks", reps=1)
    assert row["flops_per_step"] > 0
    assert math.isfinite(row["ratio"]) and row["ratio"] > 0
    assert math.isfinite(row["gflops"]) and row["gflops"] > 0
    assert bl.matmul_flops(row["matmul"]) > 0
    assert row["proto"] and all(float(r) > 0 for r in row["proto_ratio"].split(" | "))
