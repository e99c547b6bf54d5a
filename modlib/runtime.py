"""Seeding and device choice, each reported in one line."""

from __future__ import annotations

import os
import random

import numpy as np
import torch


def seed_everything(seed: int, *, quiet: bool = False) -> None:
    """Seed Python's ``random``, NumPy and torch (all devices) with ``seed``."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device
    if not quiet:
        print(f"seed: {seed} (python, numpy, torch)")


def pick_device(prefer: str | None = None, *, quiet: bool = False) -> torch.device:
    """CUDA if available, then Apple MPS, then CPU; ``prefer`` (or ``$MODLIB_DEVICE``) overrides."""
    prefer = prefer or os.environ.get("MODLIB_DEVICE")
    if prefer:
        device = torch.device(prefer)
    elif torch.cuda.is_available():
        device = torch.device("cuda")
    elif getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
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
