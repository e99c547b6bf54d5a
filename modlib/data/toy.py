"""The redundant-input toy's data (chapter 1, notebooks/redundant_input_toy.ipynb; Li et al.,
section 6 and appendix C), made on the fly, in two formulations:

``"a"`` the paper's text (Fig. 4): Y1, Y2 in {0, 1}; X_i = Y_i - U[0, 1]; training on the cells
      (0,0), (0,1), (1,0); the held-out test cell is (1, 1). The target is Y1.
``"b"`` the authors' TensorFlow Playground version: x ~ U(-5, 5)^2, each coordinate pushed 0.3 away
      from its axis, label 1[x1 > 0]; the quadrant x1 > 0, x2 > 0 is held out for testing.

``reveal`` sets how much X2 tells about Y1 in training: the held-out cell is kept in training with
weight ``1 - reveal`` relative to the three others, so ``reveal=1`` is the paper's setting and
``reveal=0`` the control in which X2 and Y1 are independent.
"""

from __future__ import annotations

import torch

from modlib.profiles import check_choice, check_int, check_range

FORMULATIONS = ("a", "b")
PUSH = 0.3  # formulation b: distance the points are pushed away from the axes
EXTENT = {"a": (-1.25, 1.25), "b": (-6.0, 6.0)}  # plotting window per formulation


def inputs_a(n: int, cells: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    """Formulation (a)'s inputs ``[n, 2]`` for the cells ``[n, 2]`` (values of Y1, Y2 in {0, 1}):
    each coordinate uniform on (y - 1, y]."""
    y = cells.to(torch.float32)  # [n, 2] values of (Y1, Y2)
    return y - torch.rand(n, 2, generator=g)


def inputs_b(n: int, cells: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    """Formulation (b)'s inputs ``[n, 2]`` for the cells ``[n, 2]``: each coordinate's magnitude
    uniform on [PUSH, 5 + PUSH), positive where the cell's value is 1."""
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
    x = (inputs_a if formulation == "a" else inputs_b)(n, cells, g)
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
