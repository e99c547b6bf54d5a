import random

import numpy as np
import pytest
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


@pytest.fixture
def cpu_only(monkeypatch):
    """This machine as one without CUDA or MPS, whatever it has."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)


@pytest.mark.parametrize("asked", ["cuda", "cuda:0", "mps", "gpu"])
def test_unavailable_device_in_the_environment_fails_naming_the_available_ones(asked, cpu_only, monkeypatch):
    monkeypatch.setenv("MODLIB_DEVICE", asked)
    with pytest.raises(ValueError, match=rf"^\$MODLIB_DEVICE='{asked}' .* not available here; available: cpu$"):
        runtime.pick_device()


def test_unavailable_device_given_as_prefer_is_named_as_such(cpu_only, monkeypatch):
    monkeypatch.setenv("MODLIB_DEVICE", "cpu")
    with pytest.raises(ValueError, match=r"^prefer='cuda' .* not available here; available: cpu$"):
        runtime.pick_device("cuda")


def test_cuda_index_beyond_the_device_count_fails(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert runtime.available_devices() == ["cuda:0", "cuda:1", "cpu"]
    assert [runtime.pick_device(d, quiet=True) for d in ("cuda", "cuda:1", "cpu")] == [
        torch.device("cuda"), torch.device("cuda:1"), torch.device("cpu")]
    with pytest.raises(ValueError, match=r"prefer='cuda:2' .* available: cuda:0, cuda:1, cpu$"):
        runtime.pick_device("cuda:2")


@pytest.fixture
def cuda_here(monkeypatch):
    """This machine as one with one CUDA device, whatever it has."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    monkeypatch.delenv("MODLIB_DEVICE", raising=False)


def test_tiny_work_runs_on_the_cpu_even_where_cuda_exists(cuda_here):
    assert runtime.pick_device(quiet=True) == torch.device("cuda")
    assert runtime.pick_device(quiet=True, work="large") == torch.device("cuda")
    assert runtime.pick_device(quiet=True, work="tiny") == torch.device("cpu")


def test_tiny_work_runs_on_the_cpu_where_only_mps_exists(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    monkeypatch.delenv("MODLIB_DEVICE", raising=False)
    assert runtime.pick_device(quiet=True) == torch.device("mps")
    assert runtime.pick_device(quiet=True, work="tiny") == torch.device("cpu")


def test_a_device_asked_for_overrides_the_rule_for_tiny_work(cuda_here, monkeypatch):
    assert runtime.pick_device("cuda", quiet=True, work="tiny") == torch.device("cuda")
    monkeypatch.setenv("MODLIB_DEVICE", "cuda:0")
    assert runtime.pick_device(quiet=True, work="tiny") == torch.device("cuda:0")


def test_an_unknown_kind_of_work_fails_naming_the_kinds(cuda_here):
    with pytest.raises(ValueError, match=r"^work='small' .* choose from large, tiny$"):
        runtime.pick_device(quiet=True, work="small")
