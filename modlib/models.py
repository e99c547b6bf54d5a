"""Small model builders shared by the chapters."""

from __future__ import annotations

from typing import Sequence

import torch
from torch import nn

from modlib.profiles import check_choice, check_int

ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh}
INITS = ("torch", "playground")


def mlp(in_dim: int, hidden: Sequence[int], out_dim: int, activation: str = "relu",
        init: str = "torch") -> nn.Sequential:
    """A fully connected network ``in_dim -> hidden[0] -> ... -> out_dim``; input ``[N, in_dim]``,
    output ``[N, out_dim]`` (no activation after the last layer).

    ``init="playground"`` draws every weight from U(-0.5, 0.5) and sets every bias to 0.1, as the
    TensorFlow Playground does; ``"torch"`` keeps PyTorch's default initialisation.
    """
    check_choice("activation", activation, ACTIVATIONS)
    check_choice("init", init, INITS)
    for i, h in enumerate(hidden):
        check_int(f"hidden[{i}]", h, 1)
    layers: list[nn.Module] = []
    sizes = [in_dim, *hidden]
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), ACTIVATIONS[activation]()]
    layers.append(nn.Linear(sizes[-1], out_dim))
    net = nn.Sequential(*layers)
    if init == "playground":
        with torch.no_grad():
            for m in net:
                if isinstance(m, nn.Linear):
                    m.weight.uniform_(-0.5, 0.5)
                    m.bias.fill_(0.1)
    return net
