"""Seeding and device choice, each reported in one line."""

from __future__ import annotations

import os
import random

import numpy as np
import torch

ENV_VAR = "MODLIB_DEVICE"


def seed_everything(seed: int, *, quiet: bool = False) -> None:
    """Seed Python's ``random``, NumPy and torch (all devices) with ``seed``."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device
    if not quiet:
        print(f"seed: {seed} (python, numpy, torch)")


def available_devices() -> list[str]:
    """The devices usable here, best first, e.g. ``["cuda:0", "cpu"]``."""
    cuda = [f"cuda:{i}" for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []
    return cuda + (["mps"] if _mps_available() else []) + ["cpu"]


def _mps_available() -> bool:
    return getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()


def check_device(value: str | torch.device, source: str) -> torch.device:
    """``value`` as a device, failing unless it is one of :func:`available_devices` (or ``"cuda"``,
    the current CUDA device, where there is one); ``source`` names where ``value`` came from."""
    valid = available_devices()
    accepted = valid + (["cuda"] if valid[0].startswith("cuda") else [])
    try:
        ok = str(torch.device(value)) in accepted
    except RuntimeError:  # not a device name at all, e.g. "gpu"
        ok = False
    if not ok:
        raise ValueError(f"{source}={str(value)!r} asks for a device that is not available here; "
                         f"available: {', '.join(valid)}")
    return torch.device(value)


# The kinds of computation, for where each runs best (issue 56). "tiny": networks of a few dozen
# weights (chapter 1's redundant-input toy, retrained by chapter 7), batched or not, whose every
# small op is one kernel launch on an accelerator: the CPU is faster (chapter 7's toy part took 202 s
# on an H100 against 80 s on a 2-core CPU). "large": everything else, on the accelerator where one
# exists.
WORK = ("large", "tiny")


def pick_device(prefer: str | None = None, *, work: str = "large", quiet: bool = False) -> torch.device:
    """CUDA if available, then Apple MPS, then CPU, for ``work="large"``; the CPU for ``work="tiny"``
    (:data:`WORK`) even where an accelerator exists. ``prefer`` (or ``$MODLIB_DEVICE``) overrides
    both and must name an available device (:func:`check_device`)."""
    if work not in WORK:
        raise ValueError(f"work={work!r} is not a kind of computation; choose from {', '.join(WORK)}")
    if prefer:
        device = check_device(prefer, "prefer")
    elif os.environ.get(ENV_VAR):
        device = check_device(os.environ[ENV_VAR], f"${ENV_VAR}")
    elif work == "tiny":
        device = torch.device("cpu")
    elif torch.cuda.is_available():
        device = torch.device("cuda")
    elif _mps_available():
        device = torch.device("mps")
    else:
        device = torch.device("cpu")
    if not quiet:
        print(f"device: {describe(device)}")
    return device


def describe(device: torch.device | str) -> str:
    """A short human-readable name, e.g. ``"cuda (NVIDIA H100 80GB HBM3)"`` or ``"cpu (2 threads)"``."""
    device = torch.device(device)
    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    if device.type == "cpu":
        return f"cpu ({torch.get_num_threads()} threads)"
    return device.type


def gpu_hint(device: torch.device) -> str | None:
    """A one-line hint on switching on a GPU in Colab, or ``None`` when a GPU is in use."""
    if device.type != "cpu":
        return None
    return ("No GPU found. In Colab: Runtime > Change runtime type > Hardware accelerator: GPU, "
            "then run the notebook again. Every chapter also runs on the CPU at the default profile.")
