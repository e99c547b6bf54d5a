"""Binary weight masks on frozen networks: one small API for any ``torch.nn.Module``.

``attach(model, estimator)`` wraps the chosen weight tensors of ``model`` in place (with
``torch.nn.utils.parametrize``), so the model computes with ``weight * mask``; every original
parameter is frozen and the mask's own parameters are the only trainable ones. Nothing is copied and
nothing is written per architecture: MLPs, CNNs, LSTMs and Hugging Face transformers are handled
alike. By default the weights of linear, convolutional and recurrent layers are masked; biases,
normalisation layers and embeddings never are.

Two estimators share the interface:

``"gumbel"``   Csordás et al. (2021): one logit ``l`` per weight (initialised at ``init``); in
               training each forward pass draws a hard 0/1 sample from a Gumbel-sigmoid with
               temperature ``tau`` and back-propagates through the soft value (straight-through).
               Regulariser ``alpha * sum(l)``; final mask ``l >= 0``. Several mask samples per batch:
               split the batch into chunks and run a forward pass per chunk (each draws anew).
``"sparsify"`` continuous sparsification (Savarese et al. 2020; Lepori et al. 2023): a score ``s``
               per weight (initialised at ``init``); in training the mask is ``sigmoid(beta * s)``;
               :meth:`MaskSet.anneal` multiplies ``beta`` by ``beta_growth`` (default reaches 200
               after 90 calls, one per epoch). Regulariser ``lam * sum(sigmoid(beta * s))``; final mask
               ``s > 0``.

Modes (``mask_set.mode``): ``"train"`` (stochastic or soft), ``"hard"`` (the final binary mask),
``"complement"`` (its complement: the ablation), ``"off"`` (the original model). Controls:
:meth:`MaskSet.random_masks` (the same number of kept weights per layer, placed at random) and
``removed="reinit"`` (removed weights replaced by fresh random values instead of zeros).
"""

from __future__ import annotations

import fnmatch
import io
import math
from pathlib import Path

import torch
from torch import nn
from torch.nn.utils import parametrize

from modlib.profiles import check_choice, check_int, check_range
from modlib.results import atomic_write_bytes

ESTIMATORS = ("gumbel", "sparsify")
MODES = ("train", "hard", "complement", "off")
REMOVED = ("zero", "reinit")
LAYER_TYPES = (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.LSTM, nn.GRU, nn.RNN)
DEFAULTS = {
    "gumbel": {"init": 2.0, "tau": 1.0, "alpha": 1e-4},
    "sparsify": {"init": 0.0, "beta": 1.0, "beta_growth": 200 ** (1 / 90), "beta_max": 200.0, "lam": 1e-8},
}

Masks = dict[str, torch.Tensor]  # weight name -> bool tensor of the weight's shape


class _Mask(nn.Module):
    """The parametrization of one weight tensor: ``weight -> weight * mask``."""

    def __init__(self, owner: "MaskSet", weight: torch.Tensor, init: float):
        super().__init__()
        self.score = nn.Parameter(torch.full_like(weight, init))  # logit (gumbel) or score (sparsify)
        self.register_buffer("fixed", None)  # a binary mask set with MaskSet.set_masks
        self.register_buffer("fresh", None)  # replacement values for removed="reinit"
        object.__setattr__(self, "owner", owner)  # not a submodule: no reference cycle in modules()

    def hard(self) -> torch.Tensor:
        if self.fixed is not None:
            return self.fixed.to(self.score.dtype)
        threshold = self.score >= 0 if self.owner.estimator == "gumbel" else self.score > 0
        return threshold.to(self.score.dtype)

    def forward(self, weight: torch.Tensor) -> torch.Tensor:
        mode, o = self.owner.mode, self.owner
        if mode == "off":
            return weight
        if mode == "train":
            if o.estimator == "gumbel":
                u = torch.rand_like(self.score).clamp(1e-6, 1 - 1e-6)
                soft = torch.sigmoid((self.score + torch.log(u) - torch.log1p(-u)) / o.settings["tau"])
                mask = (soft > 0.5).to(soft.dtype) - soft.detach() + soft  # straight-through
            else:
                mask = torch.sigmoid(o.beta * self.score)
            return weight * mask
        mask = self.hard() if mode == "hard" else 1 - self.hard()
        if o.removed == "reinit":
            return weight * mask + self.fresh * (1 - mask)
        return weight * mask


class MaskSet:
    """The masks attached to one model; see the module docstring."""

    def __init__(self, model: nn.Module, estimator: str, targets: list[tuple[str, nn.Module, str]],
                 settings: dict):
        self.model, self.estimator, self.settings = model, estimator, settings
        self.beta = settings.get("beta", 1.0)
        self.removed = "zero"
        self._mode = "train"
        self._frozen = {name: p.requires_grad for name, p in model.named_parameters()}
        for p in model.parameters():
            p.requires_grad_(False)
        self._masks: dict[str, _Mask] = {}
        self._where: dict[str, tuple[nn.Module, str]] = {}
        for module_name, module, param in targets:
            name = f"{module_name}.{param}" if module_name else param
            mask = _Mask(self, getattr(module, param).detach(), settings["init"])
            parametrize.register_parametrization(module, param, mask)
            self._masks[name], self._where[name] = mask, (module, param)

    # -- state ---------------------------------------------------------------------------------
    @property
    def mode(self) -> str:
        return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        check_choice("mode", value, MODES)
        self._mode = value

    def parameters(self) -> list[nn.Parameter]:
        """The trainable mask parameters (one tensor per masked weight)."""
        return [m.score for m in self._masks.values()]

    @property
    def names(self) -> list[str]:
        """The masked weights, in the model's order (e.g. ``"encoder.0.weight"``)."""
        return list(self._masks)

    def __repr__(self) -> str:
        shapes = ", ".join(f"{k} {list(m.score.shape)}" for k, m in self._masks.items())
        total = sum(m.score.numel() for m in self._masks.values())
        return f"MaskSet({self.estimator}, {len(self._masks)} weight tensors, {total:,} weights: {shapes})"

    # -- training --------------------------------------------------------------------------------
    def regularizer(self) -> torch.Tensor:
        """``alpha * sum(logits)`` (gumbel) or ``lam * sum(sigmoid(beta * s))`` (sparsify): a scalar."""
        scores = [m.score for m in self._masks.values()]
        if self.estimator == "gumbel":
            return self.settings["alpha"] * sum(s.sum() for s in scores)
        return self.settings["lam"] * sum(torch.sigmoid(self.beta * s).sum() for s in scores)

    def anneal(self) -> float:
        """Sparsify: multiply ``beta`` by ``beta_growth`` (capped at ``beta_max``); returns ``beta``."""
        if self.estimator != "sparsify":
            raise ValueError("anneal() is for estimator='sparsify'; 'gumbel' has a fixed temperature")
        self.beta = min(self.beta * self.settings["beta_growth"], self.settings["beta_max"])
        return self.beta

    # -- binary masks ------------------------------------------------------------------------------
    def hard_masks(self) -> Masks:
        """The final binary masks (bool, on the CPU), by weight name."""
        return {k: m.hard().bool().cpu() for k, m in self._masks.items()}

    def set_masks(self, masks: Masks | None) -> None:
        """Use given binary masks in the hard and complement modes (``None``: back to the learned ones)."""
        for k, m in self._masks.items():
            if masks is None:
                m.fixed = None
                continue
            if k not in masks or tuple(masks[k].shape) != tuple(m.score.shape):
                got = tuple(masks[k].shape) if k in masks else "missing"
                raise ValueError(f"mask for {k!r}: expected shape {tuple(m.score.shape)}, got {got}")
            m.fixed = masks[k].to(device=m.score.device, dtype=torch.bool)

    def random_masks(self, seed: int = 0) -> Masks:
        """Control masks: per layer, as many kept weights as the hard mask, at random places."""
        g = torch.Generator().manual_seed(seed)
        out = {}
        for k, hard in self.hard_masks().items():
            flat = torch.zeros(hard.numel(), dtype=torch.bool)
            flat[torch.randperm(hard.numel(), generator=g)[: int(hard.sum())]] = True
            out[k] = flat.reshape(hard.shape)
        return out

    def set_removed(self, how: str, seed: int = 0) -> None:
        """What removed weights become in the hard and complement modes: ``"zero"`` or ``"reinit"``
        (fresh values from a normal with the std of that weight tensor)."""
        check_choice("removed", how, REMOVED)
        self.removed = how
        if how == "reinit":
            g = torch.Generator().manual_seed(seed)
            for k, m in self._masks.items():
                w = self.original(k)
                m.fresh = (torch.randn(w.shape, generator=g) * w.std().cpu()).to(w)

    def original(self, name: str) -> torch.Tensor:
        """The frozen, unmasked weight ``name``."""
        module, param = self._where[name]
        return module.parametrizations[param].original

    # -- files -------------------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        """Save the mask parameters, any set binary masks and the settings (atomically)."""
        state = {"estimator": self.estimator, "settings": self.settings, "beta": self.beta,
                 "scores": {k: m.score.detach().cpu() for k, m in self._masks.items()},
                 "fixed": {k: m.fixed.cpu() for k, m in self._masks.items() if m.fixed is not None}}
        buf = io.BytesIO()
        torch.save(state, buf)
        atomic_write_bytes(Path(path), buf.getvalue())

    def load(self, path: str | Path) -> None:
        """Load what :meth:`save` wrote; the masked weights' names and shapes must match."""
        state = torch.load(path, map_location="cpu", weights_only=True)
        if state["estimator"] != self.estimator:
            raise ValueError(f"{path} holds a {state['estimator']!r} mask; this MaskSet is {self.estimator!r}")
        if set(state["scores"]) != set(self._masks):
            raise ValueError(f"{path} masks {sorted(state['scores'])}, this model {sorted(self._masks)}")
        with torch.no_grad():
            for k, m in self._masks.items():
                if state["scores"][k].shape != m.score.shape:
                    raise ValueError(f"mask for {k!r}: file has shape {tuple(state['scores'][k].shape)}, "
                                     f"model {tuple(m.score.shape)}")
                m.score.copy_(state["scores"][k])
        self.settings, self.beta = state["settings"], state["beta"]
        self.set_masks(state["fixed"] or None)

    def remove(self) -> nn.Module:
        """Detach the masks: the model is again the plain model, with its original weights and
        ``requires_grad`` flags. Returns the model."""
        for module, param in self._where.values():
            parametrize.remove_parametrizations(module, param, leave_parametrized=False)
        for name, p in self.model.named_parameters():
            p.requires_grad_(self._frozen.get(name, True))
        self._masks.clear()
        return self.model


def _targets(model: nn.Module, include, names, exclude) -> list[tuple[str, nn.Module, str]]:
    out = []
    for module_name, module in model.named_modules():
        is_type = isinstance(module, tuple(include)) or type(module).__name__ == "Conv1D"  # HF GPT-2
        if not is_type or parametrize.is_parametrized(module):
            continue
        if names and not any(fnmatch.fnmatch(module_name, p) for p in names):
            continue
        if any(fnmatch.fnmatch(module_name, p) for p in exclude):
            continue
        params = [n for n, _ in module.named_parameters(recurse=False)
                  if n == "weight" or (isinstance(module, nn.RNNBase) and n.startswith("weight_"))]
        out += [(module_name, module, p) for p in params]
    return out


def attach(model: nn.Module, estimator: str = "gumbel", *, include=LAYER_TYPES, names=None,
           exclude=(), **settings) -> MaskSet:
    """Put a trainable mask on the weights of ``model`` (in place) and freeze its parameters.

    ``include``: layer types whose weights are masked; ``names``: if given, only modules whose
    name matches one of these shell patterns (e.g. ``"bert.encoder.*"``); ``exclude``: patterns of
    module names to leave alone. ``settings`` override the estimator's defaults (``DEFAULTS``).
    """
    check_choice("estimator", estimator, ESTIMATORS)
    for key in settings:
        if key not in DEFAULTS[estimator]:
            raise ValueError(f"unknown setting {key!r} for estimator {estimator!r}; "
                             f"valid settings are {', '.join(DEFAULTS[estimator])}")
    s = {**DEFAULTS[estimator], **settings}
    for key, value in s.items():
        if key == "init":
            if not (isinstance(value, (int, float)) and math.isfinite(value)):
                raise ValueError(f"init={value!r} is not valid; it must be a finite number")
        elif key == "beta_growth":
            check_range(key, value, 1.0, 1e6)
        elif key in ("alpha", "lam"):
            check_range(key, value, 0.0, 1e6)
        else:
            check_range(key, value, 0.0, 1e6, open_low=True)
    names, exclude = list(names or []), list(exclude)
    targets = _targets(model, include, names, exclude)
    if not targets:
        some = [n for n, _ in model.named_modules() if n][:8]
        raise ValueError(f"no weights to mask: no module of types {[t.__name__ for t in include]} "
                         f"matches names={names} exclude={exclude}; modules include {some}")
    return MaskSet(model, estimator, targets, s)


# --- comparing masks --------------------------------------------------------------------------------


def _pairwise(m1: Masks, m2: Masks, fn, per_layer: bool):
    if set(m1) != set(m2):
        raise ValueError(f"the masks cover different weights: {sorted(set(m1) ^ set(m2))}")
    if per_layer:
        return {k: fn(m1[k].bool(), m2[k].bool()) for k in m1}
    a = torch.cat([m1[k].bool().reshape(-1) for k in m1])
    b = torch.cat([m2[k].bool().reshape(-1) for k in m1])
    return fn(a, b)


def _ratio(num: torch.Tensor, den: torch.Tensor) -> float:
    return float(num) / float(den) if float(den) > 0 else float("nan")


def kept_fraction(masks: Masks) -> dict[str, float]:
    """Share of each weight tensor that the mask keeps."""
    return {k: int(m.sum()) / m.numel() for k, m in masks.items()}


def iou(m1: Masks, m2: Masks, per_layer: bool = True):
    """Intersection over union, |m1 & m2| / |m1 | m2|, per weight tensor (or pooled)."""
    return _pairwise(m1, m2, lambda a, b: _ratio((a & b).sum(), (a | b).sum()), per_layer)


def iomin(m1: Masks, m2: Masks, per_layer: bool = True):
    """Intersection over the smaller mask, |m1 & m2| / min(|m1|, |m2|): 1 when one lies inside the other."""
    return _pairwise(m1, m2, lambda a, b: _ratio((a & b).sum(), torch.minimum(a.sum(), b.sum())), per_layer)


def shared_fraction(m1: Masks, m2: Masks, per_layer: bool = True):
    """Share of ``m1``'s kept weights that ``m2`` keeps too, |m1 & m2| / |m1|."""
    return _pairwise(m1, m2, lambda a, b: _ratio((a & b).sum(), a.sum()), per_layer)
