"""Binary weight masks on frozen networks: one small API for any ``torch.nn.Module``.

``attach(model, estimator)`` wraps the chosen weight tensors of ``model`` in place with
``torch.nn.utils.parametrize``, so every layer computes with ``weight * mask`` (both of the weight's
shape); every parameter of the model is frozen and the masks' own parameters (``ms.parameters()``)
are the only trainable ones. Nothing is copied or rewritten per architecture: MLPs, CNNs, LSTMs,
``nn.Transformer`` and Hugging Face models are handled alike. By default the weights of linear,
convolutional, recurrent and ``nn.MultiheadAttention`` layers are masked (every direct parameter
whose name contains ``"weight"``); biases, normalisation layers and embeddings never are.

Two estimators share the interface:

``"gumbel"``   Csordás et al. (2021): one logit ``l`` per weight, initialised at ``init``. In training
               the mask is a hard 0/1 sample of a Gumbel-sigmoid with temperature ``tau``; gradients
               pass through the soft value (straight-through). Regulariser ``alpha * sum(l)``
               (divide it by the batch size, as the paper does); final mask ``l >= 0``.
``"sparsify"`` continuous sparsification (Savarese et al. 2020; Lepori et al. 2023): one score ``s``
               per weight, initialised at ``init``. In training the mask is ``sigmoid(beta * s)``;
               :meth:`MaskSet.anneal` (once per epoch) multiplies ``beta`` by ``beta_growth``, by
               default reaching 200 after 90 calls. Regulariser ``lam * sum(sigmoid(beta * s))``;
               final mask ``s > 0``.

One Gumbel sample is drawn per forward pass of ``model`` and kept for the whole pass (a layer used
twice sees the same mask). The paper's several samples per batch: split the batch into chunks and
run one forward pass per chunk, as :func:`sampled_loss` does::

    ms = masks.attach(model, "gumbel")
    opt = torch.optim.Adam(ms.parameters(), lr=1e-2)
    loss = masks.sampled_loss(model, F.cross_entropy, x, y, samples=4) + ms.regularizer() / len(x)

``ms.sampled_loss(F.cross_entropy, x, y, samples=4)`` computes the same in one batched pass, for
models that :func:`torch.func.vmap` handles (MLPs, CNNs).

Modes (``ms.mode = ...`` or ``with ms.use(mode, seed):``): ``"train"`` (sampled or soft mask),
``"hard"`` (the final binary mask), ``"complement"`` (the removed weights only: the ablation),
``"off"`` (the original model) and two controls: ``"random"`` (per tensor as many kept weights as the
hard mask, placed at random) and ``"reinit"`` (the hard mask, with the removed weights replaced by
fresh values from a normal with the std of that weight tensor instead of zeros).
"""

from __future__ import annotations

import contextlib
import fnmatch
import io
import math
from pathlib import Path
from typing import Callable

import torch
from torch import nn
from torch.nn.utils import parametrize

from modlib.profiles import check_choice, check_int, check_range
from modlib.results import atomic_write_bytes

ESTIMATORS = ("gumbel", "sparsify")
MODES = ("train", "hard", "complement", "off", "random", "reinit")
LAYER_TYPES = (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.LSTM, nn.GRU, nn.RNN, nn.MultiheadAttention)
DEFAULTS = {
    "gumbel": {"init": 2.0, "tau": 1.0, "alpha": 1e-4},
    "sparsify": {"init": 0.0, "beta": 1.0, "beta_growth": 200 ** (1 / 90), "beta_max": 200.0, "lam": 1e-8},
}

Masks = dict[str, torch.Tensor]  # weight name (e.g. "0.weight") -> bool tensor of that weight's shape


def gumbel_weight(weight: torch.Tensor, logit: torch.Tensor, u: torch.Tensor, tau: float) -> torch.Tensor:
    """``weight`` times a Gumbel-sigmoid mask sample, all ``[*shape]``: the value is the hard 0/1 sample
    ``sigmoid((logit + logit(u)) / tau) > 0.5`` for uniform ``u`` (``logit(u)`` is the difference of
    two Gumbel variables); the gradient is that of the soft sample (straight-through)."""
    soft = torch.sigmoid((logit + torch.logit(u, eps=1e-6)) / tau)
    return weight * ((soft > 0.5).to(soft.dtype) + (soft - soft.detach()))


try:  # a fused kernel for the same computation on GPUs (Triton comes with CUDA builds of torch)
    from modlib import gumbel_kernel
except ImportError:
    gumbel_kernel = None


def _fused(weight: torch.Tensor) -> bool:
    return gumbel_kernel is not None and weight.is_cuda and weight.dtype == torch.float32


class _Mask(nn.Module):
    """The parametrization of one weight tensor ``[*shape]``: ``weight -> weight * mask``."""

    def __init__(self, owner: MaskSet, weight: torch.Tensor, init: float):
        super().__init__()
        self.owner = owner  # a plain object, not a submodule
        self.score = nn.Parameter(torch.full_like(weight, init))  # logit (gumbel) or score (sparsify)
        self.register_buffer("fixed", None, persistent=False)  # bool mask from MaskSet.set_masks
        self.register_buffer("sample", None, persistent=False)  # the current Gumbel sample's noise
        self.register_buffer("control", None, persistent=False)  # random mask or fresh weights
        self.given = None  # the masked weight to use in this pass, set by MaskSet.sampled_loss

    def hard(self) -> torch.Tensor:
        """The final binary mask, bool ``[*shape]``."""
        if self.fixed is not None:
            return self.fixed
        return self.score >= 0 if self.owner.estimator == "gumbel" else self.score > 0

    def train_mask(self, weight: torch.Tensor, samples: int | None = None) -> torch.Tensor:
        """``weight`` times the training mask: a hard Gumbel sample with a soft gradient (``[*shape]``),
        or ``samples`` independent ones (``[samples, *shape]``); or the soft mask (sparsify)."""
        if self.owner.estimator == "sparsify":
            out = weight * torch.sigmoid(self.owner.beta * self.score)
            return out if samples is None else out.expand(samples, *out.shape)
        tau, shape = self.owner.settings["tau"], (samples, *weight.shape) if samples else weight.shape
        if _fused(weight):  # the sample is a seed: the kernel draws the noise itself
            if self.sample is None:
                self.sample = gumbel_kernel.new_seed(weight.device)
            return gumbel_kernel.gumbel_weight(weight, self.score, self.sample, tau, samples)
        if self.sample is None:
            self.sample = torch.rand(shape, dtype=self.score.dtype, device=self.score.device)  # u ~ U(0, 1)
        return gumbel_weight(weight, self.score, self.sample, tau)

    def forward(self, weight: torch.Tensor) -> torch.Tensor:
        if self.given is not None:
            return self.given
        mode = self.owner.mode
        if mode == "off":
            return weight
        if mode == "train":
            return self.train_mask(weight)
        if mode == "random":
            return weight * self.control
        hard = self.hard()
        if mode == "reinit":
            return torch.where(hard, weight, self.control)
        return weight * (hard if mode == "hard" else ~hard).to(weight.dtype)


class MaskSet:
    """The masks attached to one model (made by :func:`attach` or :func:`load`)."""

    def __init__(self, model: nn.Module, estimator: str, settings: dict,
                 targets: dict[str, tuple[nn.Module, str]]):
        self.model, self.estimator, self.settings = model, estimator, settings
        self.beta = settings.get("beta")  # the current sparsify temperature (None for gumbel)
        self._mode, self._seed = "train", 0
        self._requires_grad = {name: p.requires_grad for name, p in model.named_parameters()}
        model.requires_grad_(False)
        self._masks: dict[str, _Mask] = {}
        self._where = targets
        self._order = {module: list(module._parameters) for module, _ in targets.values()}
        for name, (module, param) in targets.items():
            self._masks[name] = _Mask(self, getattr(module, param).detach(), settings["init"])
            parametrize.register_parametrization(module, param, self._masks[name])
        self._hook = model.register_forward_pre_hook(lambda module, args: self.resample())

    def __repr__(self) -> str:
        total = sum(m.score.numel() for m in self._masks.values())
        shapes = ", ".join(f"{k} {list(m.score.shape)}" for k, m in self._masks.items())
        return f"MaskSet({self.estimator}, {len(self._masks)} weight tensors, {total:,} weights: {shapes})"

    @property
    def names(self) -> list[str]:
        """The masked weights in the model's order, e.g. ``["0.weight", "2.weight"]``."""
        return list(self._masks)

    def parameters(self) -> list[nn.Parameter]:
        """The trainable mask parameters, one per masked weight, each of that weight's shape."""
        return [m.score for m in self._masks.values()]

    def original(self, name: str) -> torch.Tensor:
        """The frozen, unmasked weight ``name``."""
        module, param = self._where[name]
        return module.parametrizations[param].original

    # -- modes -----------------------------------------------------------------------------------
    @property
    def mode(self) -> str:
        return self._mode

    @mode.setter
    def mode(self, mode: str) -> None:
        self.set_mode(mode)

    def set_mode(self, mode: str, seed: int = 0) -> None:
        """Switch to ``mode`` (one of ``MODES``); ``seed`` draws the ``"random"``/``"reinit"`` controls,
        from the hard masks as they are now."""
        check_choice("mode", mode, MODES)
        check_int("seed", seed, 0)
        self._mode, self._seed = mode, seed
        controls = random_like(self.hard_masks(), seed) if mode == "random" else {}
        if mode == "reinit":
            g = torch.Generator().manual_seed(seed)
            controls = {k: torch.randn(m.score.shape, generator=g) * float(self.original(k).std())
                        for k, m in self._masks.items()}
        for k, m in self._masks.items():
            m.control = controls[k].to(m.score) if k in controls else None
        self.resample()

    @contextlib.contextmanager
    def use(self, mode: str, seed: int = 0):
        """``with ms.use("complement"): ...`` runs the block in ``mode`` and restores the previous mode."""
        before = self._mode, self._seed
        self.set_mode(mode, seed)
        try:
            yield self
        finally:
            self.set_mode(*before)

    # -- training --------------------------------------------------------------------------------
    def resample(self) -> None:
        """Draw a new Gumbel mask sample at the next use. Runs before every forward pass of the model;
        call it yourself only when running one of its submodules directly."""
        for m in self._masks.values():
            m.sample = None

    def regularizer(self) -> torch.Tensor:
        """A scalar: ``alpha * sum(logits)`` (gumbel; the paper divides it by the batch size) or
        ``lam * sum(sigmoid(beta * s))`` (sparsify)."""
        scores = self.parameters()
        if self.estimator == "gumbel":
            return self.settings["alpha"] * sum(s.sum() for s in scores)
        return self.settings["lam"] * sum(torch.sigmoid(self.beta * s).sum() for s in scores)

    def sampled_loss(self, loss_fn: Callable, x: torch.Tensor, y: torch.Tensor, samples: int = 4) -> torch.Tensor:
        """What :func:`sampled_loss` computes, in one pass instead of ``samples``: ``x [N, ...]`` and
        ``y [N, ...]`` are split into ``samples`` equal chunks, every mask draws ``samples`` samples
        at once, and :func:`torch.func.vmap` runs each chunk under its own. Larger, fewer kernels
        (on a GPU the fused kernel reads each weight once for all samples); it needs a model that
        ``vmap`` can batch (linear and convolutional layers can; use :func:`sampled_loss` for any
        other). Outside ``"train"`` mode the masks are fixed and this is :func:`sampled_loss`."""
        check_int("samples", samples, 1)
        if len(x) % samples or len(y) != len(x):
            raise ValueError(f"a batch of {len(x)} inputs and {len(y)} targets does not split into "
                             f"samples={samples} equal chunks")
        if self._mode != "train":
            return sampled_loss(self.model, loss_fn, x, y, samples)
        self.resample()
        weights = {name: m.train_mask(self.original(name), samples) for name, m in self._masks.items()}

        def chunk_loss(w, xc, yc):  # under vmap: one chunk and each mask's sample for it
            for name, m in self._masks.items():
                m.given = w[name]
            try:
                return loss_fn(self.model(xc), yc)
            finally:
                for m in self._masks.values():
                    m.given = None

        chunks = [t.reshape(samples, len(t) // samples, *t.shape[1:]) for t in (x, y)]
        return torch.func.vmap(chunk_loss, randomness="different")(weights, *chunks).mean()  # own dropout per chunk

    def anneal(self) -> float:
        """Sparsify, once per epoch: ``beta *= beta_growth``, capped at ``beta_max``. Returns ``beta``."""
        if self.estimator != "sparsify":
            raise ValueError(f"anneal() is for estimator='sparsify'; this MaskSet is {self.estimator!r}")
        self.beta = min(self.beta * self.settings["beta_growth"], self.settings["beta_max"])
        return self.beta

    # -- binary masks ----------------------------------------------------------------------------
    def hard_masks(self) -> Masks:
        """The final binary masks (bool, on the CPU), by weight name."""
        return {k: m.hard().detach().cpu() for k, m in self._masks.items()}

    def set_masks(self, masks: Masks | None) -> None:
        """Use these binary masks (one per masked weight, of its shape) instead of the learned ones in
        every mode but ``"train"`` and ``"off"``; ``None`` goes back to the learned ones."""
        if masks is not None:
            _check_same(masks, {k: m.score for k, m in self._masks.items()}, "the given masks", "the model")
        for k, m in self._masks.items():
            m.fixed = None if masks is None else masks[k].to(m.score.device, torch.bool)

    # -- files -----------------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        """Write the estimator, its settings, the mask parameters (whose names and shapes are the
        masked weights') and any masks given to :meth:`set_masks`, atomically; read with :func:`load`."""
        state = {"estimator": self.estimator, "settings": self.settings, "beta": self.beta,
                 "scores": {k: m.score.detach().cpu() for k, m in self._masks.items()},
                 "fixed": {k: m.fixed.cpu() for k, m in self._masks.items() if m.fixed is not None}}
        buffer = io.BytesIO()
        torch.save(state, buffer)
        atomic_write_bytes(Path(path), buffer.getvalue())

    def remove(self) -> nn.Module:
        """Take the masks off: the model is the plain model again, with its original weights and
        ``requires_grad`` flags. Returns the model."""
        self._hook.remove()
        for module, param in self._where.values():
            parametrize.remove_parametrizations(module, param, leave_parametrized=False)
        for module, order in self._order.items():  # put each weight back in its place (before its bias)
            for name in order:
                module._parameters[name] = module._parameters.pop(name)
        for name, p in self.model.named_parameters():
            p.requires_grad_(self._requires_grad.get(name, True))
        self._masks, self._where, self._order = {}, {}, {}
        return self.model


def _settings(estimator: str, overrides: dict) -> dict:
    check_choice("estimator", estimator, ESTIMATORS)
    for key in overrides:
        check_choice(f"{estimator} setting", key, DEFAULTS[estimator])
    settings = {**DEFAULTS[estimator], **overrides}
    for key, value in settings.items():
        if key == "init":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"init={value!r} is not valid; it must be a finite number")
        elif key in ("alpha", "lam"):
            check_range(key, value, 0.0, math.inf)
        elif key == "beta_growth":
            check_range(key, value, 1.0, math.inf)
        else:  # tau, beta, beta_max
            check_range(key, value, 0.0, math.inf, open_low=True)
    return settings


def attach(model: nn.Module, estimator: str = "gumbel", *, include=LAYER_TYPES, names=None, exclude=(),
           **settings) -> MaskSet:
    """Put a trainable mask on weights of ``model`` (in place) and freeze all of its parameters.

    ``include``: the layer types whose weights are masked; ``names``: if given, only modules whose
    name matches one of these shell patterns (e.g. ``["bert.encoder.*"]``); ``exclude``: patterns of
    module names to leave alone. ``settings`` override the estimator's ``DEFAULTS``.
    """
    settings = _settings(estimator, settings)
    names, exclude = list(names or []), list(exclude)
    targets = {}
    for module_name, module in model.named_modules():
        if not isinstance(module, tuple(include)) or any(fnmatch.fnmatch(module_name, p) for p in exclude):
            continue
        if names and not any(fnmatch.fnmatch(module_name, p) for p in names):
            continue
        if parametrize.is_parametrized(module):
            raise ValueError(f"module {module_name!r} is already parametrized (masks attached twice?); "
                             "remove() the other MaskSet first")
        for param, _ in module.named_parameters(recurse=False):
            if "weight" in param:
                targets[f"{module_name}.{param}".lstrip(".")] = (module, param)
    if not targets:
        some = [n for n, _ in model.named_modules() if n][:8]
        raise ValueError(f"no weights to mask: no module of types {[t.__name__ for t in include]} matches "
                         f"names={names} exclude={exclude}; the model's modules include {some}")
    return MaskSet(model, estimator, settings, targets)


def load(path: str | Path, model: nn.Module) -> MaskSet:
    """Attach the masks that :meth:`MaskSet.save` wrote to ``path`` to ``model``, whose weights must
    have the saved names and shapes (checked before anything is attached)."""
    state = torch.load(path, map_location="cpu", weights_only=True)
    settings = _settings(state["estimator"], state["settings"])
    targets, weights = {}, {}
    for name in state["scores"]:
        module_name, _, param = name.rpartition(".")
        try:
            targets[name] = module, param = model.get_submodule(module_name), param
            weights[name] = getattr(module, param)
        except AttributeError:
            raise ValueError(f"{path} has a mask for {name!r}, which this model does not have") from None
    _check_same(state["scores"], weights, str(path), "the model")
    ms = MaskSet(model, state["estimator"], settings, targets)
    with torch.no_grad():
        for score, saved in zip(ms.parameters(), state["scores"].values()):
            score.copy_(saved)
    ms.beta = state["beta"]
    ms.set_masks(state["fixed"] or None)
    return ms


def _check_same(given: dict, expected: dict, given_label: str, expected_label: str) -> None:
    """Fail unless ``given`` and ``expected`` have the same keys and tensor shapes."""
    if set(given) != set(expected):
        raise ValueError(f"{given_label} cover {sorted(given)}, {expected_label} masks {sorted(expected)}")
    for k, v in expected.items():
        if tuple(given[k].shape) != tuple(v.shape):
            raise ValueError(f"mask for {k!r}: {given_label} has shape {tuple(given[k].shape)}, "
                             f"{expected_label} {tuple(v.shape)}")


def sampled_loss(model: nn.Module, loss_fn: Callable, x: torch.Tensor, y: torch.Tensor,
                 samples: int = 4) -> torch.Tensor:
    """Csordás et al.'s several mask samples per batch: ``x [N, ...]`` and ``y [N, ...]`` are split into
    ``samples`` chunks along dim 0, each run in its own forward pass (so under its own Gumbel sample).
    Returns the batch's mean loss: each chunk's ``loss_fn(output, target)`` weighted by ``len(chunk) / N``."""
    check_int("samples", samples, 1)
    chunks = zip(x.chunk(samples), y.chunk(samples))
    return sum(loss_fn(model(xc), yc) * len(xc) for xc, yc in chunks) / len(x)


# --- statistics and comparisons of mask dicts -------------------------------------------------------


def random_like(masks: Masks, seed: int = 0) -> Masks:
    """Control masks: per tensor as many kept weights as in ``masks``, at random places."""
    check_int("seed", seed, 0)
    g = torch.Generator().manual_seed(seed)
    out = {}
    for k, m in masks.items():
        flat = torch.zeros(m.numel(), dtype=torch.bool)
        flat[torch.randperm(m.numel(), generator=g)[: int(m.sum())]] = True
        out[k] = flat.reshape(m.shape)
    return out


def _per_layer(fn, per_layer: bool, *mask_dicts: Masks):
    """``fn`` over bool tensors, per weight name (a dict) or over all weights pooled (a float)."""
    first = mask_dicts[0]
    for other in mask_dicts[1:]:
        _check_same(other, first, "the second masks", "the first")
    if per_layer:
        return {k: fn(*(d[k].bool() for d in mask_dicts)) for k in first}
    return fn(*(torch.cat([d[k].bool().reshape(-1) for k in first]) for d in mask_dicts))


def _ratio(num: torch.Tensor, den: torch.Tensor) -> float:
    return int(num) / int(den) if int(den) > 0 else math.nan


def kept_fraction(masks: Masks, per_layer: bool = True):
    """Share of the weights a mask keeps, |m| / size, per weight tensor (or pooled)."""
    return _per_layer(lambda m: int(m.sum()) / m.numel(), per_layer, masks)


def iou(m1: Masks, m2: Masks, per_layer: bool = True):
    """Intersection over union, |m1 & m2| / |m1 | m2|, per weight tensor (or pooled); nan if both are empty."""
    return _per_layer(lambda a, b: _ratio((a & b).sum(), (a | b).sum()), per_layer, m1, m2)


def iomin(m1: Masks, m2: Masks, per_layer: bool = True):
    """Intersection over the smaller mask, |m1 & m2| / min(|m1|, |m2|): 1 when one lies inside the other."""
    return _per_layer(lambda a, b: _ratio((a & b).sum(), min(a.sum(), b.sum())), per_layer, m1, m2)


def shared_fraction(m1: Masks, m2: Masks, per_layer: bool = True):
    """Share of ``m1``'s kept weights that ``m2`` keeps too, |m1 & m2| / |m1| (not symmetric)."""
    return _per_layer(lambda a, b: _ratio((a & b).sum(), a.sum()), per_layer, m1, m2)
