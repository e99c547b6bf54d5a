import random

import numpy as np
import torch

from modlib import runtime


def draw():
    return random.random(), float(np.random.rand()), float(torch.rand(1))


def test_seeding_makes_python_numpy_and_torch_repeatable(capsys):
    runtime.seed_everything(7)
    first = draw()
    runtime.seed_everything(7)
    assert draw() == first
    runtime.seed_everything(8)
    assert draw() != first
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines == ["seed: 7 (python, numpy, torch)"] * 2 + ["seed: 8 (python, numpy, torch)"]


def test_device_choice_is_reported_in_one_line(capsys, monkeypatch):
    monkeypatch.delenv("MODLIB_DEVICE", raising=False)
    device = runtime.pick_device()
    expected = "cuda" if torch.cuda.is_available() else device.type
    assert device.type == expected
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith(f"device: {device.type}")
    monkeypatch.setenv("MODLIB_DEVICE", "cpu")
    assert runtime.pick_device(quiet=True).type == "cpu"
    assert "Runtime > Change runtime type" in runtime.gpu_hint(torch.device("cpu"))
    assert runtime.gpu_hint(torch.device("cuda")) is None
