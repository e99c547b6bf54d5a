"""Pairs of MNIST digits side by side, labelled by the left digit (chapter 3, "MNIST pairs";
Li et al., "Gradient descent resists compositionality", section 5.1).

An input is two digits ``[1, 28, 56]``: the left one, X1, with label Y1 (the target), and the
right one, X2, with label Y2 (never a target). The two settings differ only in how Y2 is tied to
Y1 in training:

- ``"A"``: Y2 = (Y1 + r) mod 10 with r in {0, 1}, so the right digit nearly tells the answer;
- ``"B"``: Y2 uniform on 0..9, independent of Y1.

The test pairs are the same in both: Y2 = (Y1 + 2 + r) mod 10 with r in {0..7}, combinations
that setting A never shows. Digits come from :func:`modlib.data.mnist` (train pairs from its
train split, test pairs from its test split).
"""

from __future__ import annotations

import torch

from modlib.profiles import check_choice, check_int

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
