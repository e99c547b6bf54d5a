"""What chapter 1's later experiments share with its sweep (notebooks/redundant_input_toy.ipynb,
"Without gradient descent", "Inherited or built?" and "The scale of (a) and (b)"): one member's data
and initial network exactly as :func:`modlib.redundant_input_toy.experiment.run_group` makes them, so
that a baseline or a network started otherwise is compared with the sweep's network of the same seed
on the same points, and the gradients of a model's output with respect to its two inputs.
"""

from __future__ import annotations

import torch

from modlib.models import mlp
from modlib.profiles import check_choices, check_range
from modlib.redundant_input_toy.experiment import TERNARY, ToySettings, test_set, training_set
from modlib.training import forward


def conditions(reveals, controls) -> list[tuple[str, float]]:
    """A study's training sets ``(design, reveal)``: the binary design at each of ``reveals``, then
    the ternary ``controls`` (their held-out cells unseen, so reveal 1), as the sweep names them."""
    return [("binary", r) for r in reveals] + [(c, 1.0) for c in controls]


def check_conditions(reveals, controls) -> None:
    """Fail unless every reveal lies in [0, 1] and every control is a ternary design."""
    check_choices("controls", controls, tuple(TERNARY))
    for r in reveals:
        check_range("reveals", r, 0.0, 1.0)


def member_data(s: ToySettings, formulation: str, condition: tuple[str, float], seed: int
                ) -> tuple[torch.Tensor, ...]:
    """``(x [n, 2], y [n], x_test [m, 2], y_test [m])`` of the sweep's member ``(formulation,
    condition, seed)`` at settings ``s``: the same generator key, so the same points."""
    c = s.conditions.index(condition)
    key = 10_000 * seed + 100 * s.formulations.index(formulation) + c
    g = torch.Generator().manual_seed(key)
    x, y = training_set(formulation, *condition, s.n_train, g)
    x_test, y_test = test_set(formulation, condition[0], s.n_test, g)
    return x, y, x_test, y_test


def initial_network(s: ToySettings, seed: int, activation: str = "relu") -> torch.nn.Sequential:
    """The sweep's network of ``seed`` at initialisation (the Playground's: U(-0.5, 0.5), bias 0.1)."""
    torch.manual_seed(seed)
    return mlp(2, s.hidden, 1, activation, init="playground")


def input_gradients(template, params, x: torch.Tensor) -> torch.Tensor:
    """``E|dz/dx1|`` and ``E|dz/dx2|`` over the points ``x [M, N, 2]``, per member: ``[M, 2]``.
    Their ratio, column 1 over column 0, is the chapter's reliance R."""
    with torch.enable_grad():
        x = x.clone().requires_grad_(True)
        (g,) = torch.autograd.grad(forward(template, params, x).sum(), x)
    return g.abs().mean(dim=1)


def gradients_of(fn, x: torch.Tensor) -> torch.Tensor:
    """``E|dz/dx1|`` and ``E|dz/dx2|`` of one model ``fn`` (points ``[N, 2]`` -> logits ``[N]``)
    over the points ``x [N, 2]``: ``[2]``."""
    with torch.enable_grad():
        x = x.clone().requires_grad_(True)
        (g,) = torch.autograd.grad(fn(x).sum(), x)
    return g.abs().mean(dim=0)
