"""Training helpers.

:func:`train_seeds` trains several copies of one small architecture (one per seed) as a single
batched model: their parameters are stacked along a new leading "member" dimension and one
batched forward pass (:func:`forward`, a batched matrix product a layer) and one backward pass
compute every member's outputs and gradient per step. This gives the
same numbers as training each seed on its own (:func:`train_separately`, the reference loop), in a
fraction of the time, because the Python overhead per step is paid once instead of once per seed.
The members do not interact, so the gradient of the *sum* of their losses with respect to the
stacked parameters is, row by row, each member's own gradient: one backward pass gives them all.

:func:`adam` trains one model (or a mask over it) with Adam.
"""

from __future__ import annotations

import copy
import os
from typing import Callable, Iterator, Sequence

import torch
from torch import nn
from torch.func import stack_module_state, vmap
from tqdm.auto import tqdm

from modlib.models import ACTIVATIONS
from modlib.profiles import check_int, check_range

Batches = Callable[[int], tuple[torch.Tensor, torch.Tensor]]
LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
Params = dict[str, torch.Tensor]


def bar(iterable, desc: str, show: bool = True) -> tqdm:
    """A progress bar over ``iterable``, hidden when ``show`` is false or ``$TQDM_DISABLE`` is set
    (the book build sets it; tqdm's notebook bars do not read it themselves)."""
    quiet = os.environ.get("TQDM_DISABLE", "") not in ("", "0")
    return tqdm(iterable, desc=desc, disable=quiet or not show, mininterval=2.0)


def _layers(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """``(prefix of its parameters' names, layer)`` for each layer of an ``nn.Sequential``, or the
    model itself (prefix ``""``) when it is a single layer."""
    if isinstance(model, nn.Sequential):
        return [(f"{name}.", layer) for name, layer in model.named_children()]
    return [("", model)]


def stack(models: Sequence[nn.Module]) -> tuple[nn.Module, Params]:
    """Stack ``M`` models of one architecture, each an ``nn.Sequential`` of ``nn.Linear`` layers and
    elementwise activations (a :func:`modlib.models.mlp`): returns a stateless template (on the
    ``meta`` device) and a dict of parameters, each of shape ``[M, *shape_of_that_parameter]``."""
    for _, layer in _layers(models[0]):
        if not isinstance(layer, (nn.Linear, *ACTIVATIONS.values())) or getattr(layer, "bias", 0) is None:
            raise ValueError(f"train_seeds stacks an nn.Sequential of nn.Linear and {sorted(ACTIVATIONS)} "
                             f"activations, every linear layer with a bias; got {layer}")
    params, buffers = stack_module_state(list(models))
    if buffers:
        raise ValueError("train_seeds supports models without buffers (e.g. no BatchNorm)")
    template = copy.deepcopy(models[0]).to("meta")
    return template, {k: v.detach().clone() for k, v in params.items()}


def forward(template: nn.Module, params: Params, x: torch.Tensor) -> torch.Tensor:
    """Run every member on its own inputs: ``x [M, N, in]`` -> outputs ``[M, N, out]``.

    Each linear layer is one batched matrix product plus the bias, the operations that ``vmap`` of
    the member's ``functional_call`` runs (``addmm`` batched is ``bmm`` then ``add``), so the
    numbers are vmap's bit for bit (``tests/test_training.py``) without its Python overhead per
    call, which made the toy's small steps about 1.5 times as slow."""
    for prefix, layer in _layers(template):
        if isinstance(layer, nn.Linear):  # weight [M, out, in], bias [M, out]
            x = torch.bmm(x, params[prefix + "weight"].transpose(1, 2)) + params[prefix + "bias"].unsqueeze(1)
        else:
            x = layer(x)  # an elementwise activation
    return x


def unstack(template: nn.Module, params: Params, member: int, device="cpu") -> nn.Module:
    """Member ``member`` of a stacked model as an ordinary module."""
    model = copy.deepcopy(template).to_empty(device=device)
    model.load_state_dict({k: v[member] for k, v in params.items()})
    return model


def _check(steps: int, lr: float) -> None:
    check_int("steps", steps, 0)
    check_range("lr", lr, 0.0, float("inf"), open_low=True)


def train_seeds(template: nn.Module, params: Params, batches: Batches,
                loss_fn: LossFn, *, steps: int, lr: float,
                on_step: Callable[[int, Params], None] | None = None,
                progress: bool = True, desc: str = "train") -> Params:
    """Plain SGD on the ``M`` stacked models ``(template, params)`` made by :func:`stack`; returns
    the trained stacked parameters (the ones passed in are left unchanged).

    ``batches(t)`` gives step ``t``'s inputs ``[M, B, ...]`` and targets ``[M, B, ...]``, member
    ``m`` training on row ``m``. ``loss_fn(output [B, ...], target [B, ...])`` is one member's mean
    loss. ``on_step(t, params)`` runs after ``t`` updates, for ``t = 0`` (the initialisation) to
    ``steps``, inside ``torch.no_grad``.
    """
    _check(steps, lr)
    member_loss = vmap(loss_fn)
    if on_step:
        with torch.no_grad():
            on_step(0, params)
    for t in bar(range(1, steps + 1), desc, show=progress):
        x, y = batches(t - 1)
        leaves = {k: v.requires_grad_(True) for k, v in params.items()}
        total = member_loss(forward(template, leaves, x), y).sum()
        grads = torch.autograd.grad(total, list(leaves.values()))
        with torch.no_grad():
            params = {k: v.detach() - lr * g
                      for (k, v), g in zip(leaves.items(), grads)}
            if on_step:
                on_step(t, params)
    return params


def train_separately(models: Sequence[nn.Module], batches: Batches, loss_fn: LossFn, *, steps: int,
                     lr: float, progress: bool = True, desc: str = "train") -> list[nn.Module]:
    """The reference: the same SGD as :func:`train_seeds`, one model after another with
    ``torch.optim.SGD``. Trains the given modules in place and returns them."""
    _check(steps, lr)
    data = [batches(t) for t in range(steps)]
    for m, model in enumerate(bar(models, desc, show=progress)):
        opt = torch.optim.SGD(model.parameters(), lr=lr)
        for x, y in data:
            opt.zero_grad()
            loss_fn(model(x[m]), y[m]).backward()
            opt.step()
    return list(models)


def adam(loss_fn: LossFn, params: Sequence[torch.Tensor], batches: Iterator, *, steps: int, lr: float,
         clip: float | None = None, desc: str = "train") -> None:
    """``steps`` Adam steps on ``params`` (updated in place), minimising ``loss_fn(x, y)`` (a scalar)
    on successive pairs ``(x, y)`` from ``batches``; ``clip`` caps the gradient's norm. Uses torch's
    fused Adam (one kernel for all parameters: several times faster than the default on a CPU)."""
    _check(steps, lr)
    params = list(params)
    opt = torch.optim.Adam(params, lr=lr, fused=True)
    for _, (x, y) in zip(bar(range(steps), desc), batches):
        opt.zero_grad(set_to_none=True)
        loss_fn(x, y).backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(params, clip)
        opt.step()
    opt.zero_grad(set_to_none=True)
