"""Binary weight masks on frozen networks: one small API for any ``torch.nn.Module``.

``attach(model, estimator)`` wraps the chosen weight tensors of ``model`` in place with
``torch.nn.utils.parametrize``, so every layer computes with ``weight * mask`` (both of the weight's
shape); every parameter of the model is frozen and the masks' own parameters (``ms.parameters()``)
are the only trainable ones. Nothing is copied or rewritten per architecture: MLPs, CNNs, LSTMs,
``nn.Transformer`` and Hugging Face models (BERT, GPT-2, ViT) are handled alike. By default
(:func:`layer_types`) the weights of linear, convolutional, recurrent and ``nn.MultiheadAttention``
layers are masked, and of Hugging Face's ``Conv1D`` (GPT-2's attention and MLP layers): every direct
parameter whose name contains ``"weight"``. Biases, normalisation layers and embeddings never are,
nor a weight tied to one (GPT-2's ``lm_head.weight`` is its token embedding).

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

    ms = masks.attach(model, "gumbel", seed=0)
    opt = torch.optim.Adam(ms.parameters(), lr=1e-2)
    loss = masks.sampled_loss(model, F.cross_entropy, x, y, samples=4) + ms.regularizer() / len(x)

``ms.sampled_loss(F.cross_entropy, x, y, samples=4)`` computes the same in one batched pass, for
models that :func:`torch.func.vmap` handles (MLPs, CNNs). The Gumbel noise comes from torch's global
random generator, or, with ``attach(..., seed=s)``, from a generator of the MaskSet's own
(``ms.generator``, seeded with ``s``): the same seed then gives the same samples whatever else draws
random numbers, and the global generator is left alone.

Modes (``ms.mode = ...`` or ``with ms.use(mode, seed):``): ``"train"`` (sampled or soft mask),
``"hard"`` (the final binary mask), ``"complement"`` (the removed weights only: the ablation),
``"off"`` (the original model) and two controls: ``"random"`` (per tensor as many kept weights as the
hard mask, placed at random) and ``"reinit"`` (the hard mask, with the removed weights replaced by
fresh values from a normal with the std of that weight tensor instead of zeros). A mode can apply to
some weights only: ``with ms.use("complement", layers=["bert.encoder.layer.3.*"]):`` ablates the mask
in those weights (shell patterns over ``ms.names``) and leaves every other one as trained (``"off"``).

``ms.stats()`` is a ``pandas.DataFrame`` with one row per masked weight (shape, size, kept count and
fraction, mode). ``ms.save(path)`` writes the masks; ``load(path, model)`` attaches them to a model
without masks, fails with a ``ValueError`` naming a file that ``save`` did not write, and warns which
weights a default ``attach`` would mask that the file leaves unmasked.
"""

from __future__ import annotations

import contextlib
import fnmatch
import io
import math
import sys
import warnings
from pathlib import Path
from typing import Callable, Iterable

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
FILE_KEYS = ("estimator", "settings", "beta", "scores", "fixed")  # what MaskSet.save writes

Masks = dict[str, torch.Tensor]  # weight name (e.g. "0.weight") -> bool tensor of that weight's shape


def layer_types() -> tuple[type, ...]:
    """The layer types masked by default: ``LAYER_TYPES`` and, once ``transformers`` has loaded it (as
    every model that uses it does), Hugging Face's ``Conv1D`` (GPT-2's linear layers, weight
    ``[in, out]``). Importing ``transformers`` takes seconds, so a model without it never waits."""
    hf = sys.modules.get("transformers.pytorch_utils")
    return LAYER_TYPES + ((hf.Conv1D,) if hf is not None else ())


def gumbel_weight(weight: torch.Tensor, logit: torch.Tensor,
                  u: torch.Tensor, tau: float) -> torch.Tensor:
    """``weight`` times a Gumbel-sigmoid mask sample, all ``[*shape]``.

    The value is the hard 0/1 sample
    ``sigmoid((logit + logit(u)) / tau) > 0.5`` for uniform ``u``
    (``logit(u)`` is the difference of two Gumbel variables); the gradient
    is that of the soft sample (straight-through). Shown in chapter 4
    (weight_masks), section "The tool"."""
    soft = torch.sigmoid((logit + torch.logit(u, eps=1e-6)) / tau)
    return weight * ((soft > 0.5).to(soft.dtype) + (soft - soft.detach()))


class _Mask(nn.Module):
    """The parametrization of one weight tensor ``[*shape]``: ``weight -> weight * mask``."""

    def __init__(self, owner: MaskSet, weight: torch.Tensor, init: float):
        super().__init__()
        self.owner = owner  # a plain object, not a submodule
        self.score = nn.Parameter(torch.full_like(weight, init))  # logit (gumbel) or score (sparsify)
        self.register_buffer("fixed", None, persistent=False)  # bool mask from MaskSet.set_masks
        self.register_buffer("sample", None, persistent=False)  # the current Gumbel sample's noise
        self.register_buffer("control", None, persistent=False)  # random mask or fresh weights
        self.mode = "train"  # this weight's mode, set by MaskSet.set_mode ("off" outside its layers)
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
        if self.sample is None:  # u ~ U(0, 1), from the MaskSet's generator (None: torch's global one)
            shape = (samples, *weight.shape) if samples else weight.shape
            self.sample = torch.rand(shape, dtype=self.score.dtype, device=self.score.device,
                                     generator=self.owner.generator)
        return gumbel_weight(weight, self.score, self.sample, self.owner.settings["tau"])

    def forward(self, weight: torch.Tensor) -> torch.Tensor:
        if self.given is not None:
            return self.given
        if self.mode == "off":
            return weight
        if self.mode == "train":
            return self.train_mask(weight)
        if self.mode == "random":
            return weight * self.control
        hard = self.hard()
        if self.mode == "reinit":
            return torch.where(hard, weight, self.control)
        return weight * (hard if self.mode == "hard" else ~hard).to(weight.dtype)


class MaskSet:
    """The masks attached to one model (made by :func:`attach` or :func:`load`).

    ``seed`` and ``generator``: the seed given to ``attach``/``load`` and the ``torch.Generator`` (on
    the device of the model's weights) that draws every Gumbel sample; both ``None`` where the
    samples come from torch's global generator."""

    def __init__(self, model: nn.Module, estimator: str, settings: dict,
                 targets: dict[str, tuple[nn.Module, str]], seed: int | None = None):
        if seed is not None:
            check_int("seed", seed, 0)
        self.model, self.estimator, self.settings = model, estimator, settings
        self.beta = settings.get("beta")  # the current sparsify temperature (None for gumbel)
        self.seed, self.generator = seed, None
        if seed is not None:
            device = getattr(*next(iter(targets.values()))).device
            self.generator = torch.Generator(device=device).manual_seed(seed)
        self._mode, self._seed, self._layers = "train", 0, None
        self._requires_grad = {name: p.requires_grad for name, p in model.named_parameters()}
        model.requires_grad_(False)
        self._masks: dict[str, _Mask] = {}
        self._where = targets
        self._order = {module: list(module._parameters) for module, _ in targets.values()}
        for name, (module, param) in targets.items():
            self._masks[name] = _Mask(self, getattr(module, param).detach(), settings["init"])
            parametrize.register_parametrization(module, param, self._masks[name])
        self._hook = model.register_forward_pre_hook(lambda module, args: self.resample())
        self._removed = False  # set by remove(): every later use fails (_check_attached)

    def _check_attached(self) -> None:
        """Fail once :meth:`remove` has taken the masks off: the model may carry another MaskSet by now."""
        if self._removed:
            raise RuntimeError("this MaskSet was removed from its model (remove()); attach new masks with "
                               "masks.attach(model) or masks.load(path, model) and use those")

    def __repr__(self) -> str:
        if self._removed:
            return f"MaskSet({self.estimator}, removed)"
        total = sum(m.score.numel() for m in self._masks.values())
        shapes = ", ".join(f"{k} {list(m.score.shape)}" for k, m in self._masks.items())
        return f"MaskSet({self.estimator}, {len(self._masks)} weight tensors, {total:,} weights: {shapes})"

    @property
    def names(self) -> list[str]:
        """The masked weights in the model's order, e.g. ``["0.weight", "2.weight"]``."""
        self._check_attached()
        return list(self._masks)

    def parameters(self) -> list[nn.Parameter]:
        """The trainable mask parameters, one per masked weight, each of that weight's shape."""
        self._check_attached()
        return [m.score for m in self._masks.values()]

    def original(self, name: str) -> torch.Tensor:
        """The frozen, unmasked weight ``name``."""
        self._check_attached()
        module, param = self._where[name]
        return module.parametrizations[param].original

    def stats(self):
        """A ``pandas.DataFrame``, one row per masked weight in the model's order, with columns

        ``name``           the weight, e.g. ``"0.weight"`` (as in :attr:`names`)
        ``shape``          its shape, a tuple
        ``weights``        its number of weights
        ``kept``           how many of them the hard mask keeps (the masks given to :meth:`set_masks`,
                           if any, else the learned ones)
        ``kept_fraction``  ``kept / weights``
        ``mode``           the mode it computes in now (``"off"`` outside the ``layers`` of :meth:`set_mode`)
        """
        self._check_attached()
        import pandas as pd

        rows = []
        for name, m in self._masks.items():
            hard = m.hard()
            kept = int(hard.sum())
            rows.append((name, tuple(hard.shape), hard.numel(), kept, kept / hard.numel(), m.mode))
        return pd.DataFrame(rows, columns=["name", "shape", "weights", "kept", "kept_fraction", "mode"])

    # -- modes -----------------------------------------------------------------------------------
    @property
    def mode(self) -> str:
        return self._mode

    @mode.setter
    def mode(self, mode: str) -> None:
        self.set_mode(mode)

    @property
    def layers(self) -> list[str]:
        """The masked weights in :attr:`mode` now (all of them unless ``set_mode`` was given ``layers``);
        the others compute with their original values."""
        return self._layers or self.names

    def set_mode(self, mode: str, seed: int = 0, layers: str | Iterable[str] | None = None) -> None:
        """Switch to ``mode`` (one of ``MODES``). ``layers``: shell patterns over :attr:`names` (e.g.
        ``["0.*"]`` or ``"*.attn.*"``); only the weights they match take ``mode`` and every other
        masked weight computes with its original value, as in ``"off"`` (the model as trained);
        ``None``: all weights take ``mode``. ``seed`` draws the ``"random"``/``"reinit"`` controls,
        from the hard masks as they are now (the Gumbel noise has ``attach``'s ``seed``)."""
        self._check_attached()
        check_choice("mode", mode, MODES)
        check_int("seed", seed, 0)
        chosen = self._match(layers)
        controls = random_like(self.hard_masks(), seed) if mode == "random" else {}
        if mode == "reinit":
            g = torch.Generator().manual_seed(seed)
            controls = {k: torch.randn(m.score.shape, generator=g) * float(self.original(k).std())
                        for k, m in self._masks.items()}
        for k, m in self._masks.items():
            m.mode = mode if k in chosen else "off"
            m.control = controls[k].to(m.score) if k in controls else None
        self._mode, self._seed, self._layers = mode, seed, None if layers is None else chosen
        self.resample()

    def _match(self, layers: str | Iterable[str] | None) -> list[str]:
        """The masked weights that the shell patterns ``layers`` match, in the model's order; all of
        them for ``None``. Fails on a pattern that matches none."""
        if layers is None:
            return self.names
        patterns = [layers] if isinstance(layers, str) else list(layers)
        if not patterns:
            raise ValueError(f"layers={patterns} selects no weight; give shell patterns over the masked "
                             f"weights {self.names}, or layers=None for all of them")
        for p in patterns:
            if not fnmatch.filter(self.names, p):
                raise ValueError(f"layers pattern {p!r} matches no masked weight; the masked weights are "
                                 f"{self.names}")
        return [n for n in self.names if any(fnmatch.fnmatch(n, p) for p in patterns)]

    @contextlib.contextmanager
    def use(self, mode: str, seed: int = 0, layers: str | Iterable[str] | None = None):
        """``with ms.use("complement"): ...`` runs the block in ``mode`` (on ``layers`` only, if given:
        see :meth:`set_mode`) and restores the previous mode and layers."""
        before = self._mode, self._seed, self._layers
        self.set_mode(mode, seed, layers)
        try:
            yield self
        finally:
            if not self._removed:  # remove() inside the block: nothing to restore
                self.set_mode(*before)

    # -- training --------------------------------------------------------------------------------
    def resample(self) -> None:
        """Draw a new Gumbel mask sample at the next use. Runs before every forward pass of the model;
        call it yourself only when running one of its submodules directly."""
        self._check_attached()
        for m in self._masks.values():
            m.sample = None

    def regularizer(self) -> torch.Tensor:
        """A scalar: ``alpha * sum(logits)`` (gumbel; the paper divides it by the batch size) or
        ``lam * sum(sigmoid(beta * s))`` (sparsify)."""
        self._check_attached()
        scores = self.parameters()
        if self.estimator == "gumbel":
            return self.settings["alpha"] * sum(s.sum() for s in scores)
        return self.settings["lam"] * sum(torch.sigmoid(self.beta * s).sum() for s in scores)

    def sampled_loss(self, loss_fn: Callable, x: torch.Tensor, y: torch.Tensor, samples: int = 4) -> torch.Tensor:
        """What :func:`sampled_loss` computes, in one pass instead of ``samples``: ``x [N, ...]`` and
        ``y [N, ...]`` are split into ``samples`` equal chunks, every mask in ``"train"`` draws
        ``samples`` samples (``[samples, *shape]``) at once, and :func:`torch.func.vmap` runs each
        chunk under its own: larger, fewer kernels. It needs a model that ``vmap`` can batch (linear
        and convolutional layers can; use :func:`sampled_loss` for any other). Outside ``"train"``
        mode the masks are fixed and this is :func:`sampled_loss`."""
        self._check_attached()
        check_int("samples", samples, 1)
        if len(x) % samples or len(y) != len(x):
            raise ValueError(f"a batch of {len(x)} inputs and {len(y)} targets does not split into "
                             f"samples={samples} equal chunks")
        if self._mode != "train":
            return sampled_loss(self.model, loss_fn, x, y, samples)
        self.resample()
        training = {name: m for name, m in self._masks.items() if m.mode == "train"}  # the others: "off"
        weights = {name: m.train_mask(self.original(name), samples) for name, m in training.items()}

        def chunk_loss(w, xc, yc):  # under vmap: one chunk and each mask's sample for it
            for name, m in training.items():
                m.given = w[name]
            try:
                return loss_fn(self.model(xc), yc)
            finally:
                for m in training.values():
                    m.given = None

        chunks = [t.reshape(samples, len(t) // samples, *t.shape[1:]) for t in (x, y)]
        return torch.func.vmap(chunk_loss, randomness="different")(weights, *chunks).mean()  # own dropout per chunk

    def anneal(self) -> float:
        """Sparsify, once per epoch: ``beta *= beta_growth``, capped at ``beta_max``. Returns ``beta``."""
        self._check_attached()
        if self.estimator != "sparsify":
            raise ValueError(f"anneal() is for estimator='sparsify'; this MaskSet is {self.estimator!r}")
        self.beta = min(self.beta * self.settings["beta_growth"], self.settings["beta_max"])
        return self.beta

    # -- binary masks ----------------------------------------------------------------------------
    def hard_masks(self) -> Masks:
        """The final binary masks (bool, on the CPU), by weight name."""
        self._check_attached()
        return {k: m.hard().detach().cpu() for k, m in self._masks.items()}

    def set_masks(self, masks: Masks | None) -> None:
        """Use these binary masks (one per masked weight, of its shape) instead of the learned ones in
        every mode but ``"train"`` and ``"off"``; ``None`` goes back to the learned ones."""
        self._check_attached()
        if masks is not None:
            _check_same(masks, {k: m.score for k, m in self._masks.items()}, "the given masks", "the model")
        for k, m in self._masks.items():
            m.fixed = None if masks is None else masks[k].to(m.score.device, torch.bool)

    # -- files -----------------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        """Write the estimator, its settings, the mask parameters (whose names and shapes are the
        masked weights') and any masks given to :meth:`set_masks`, atomically; read with :func:`load`."""
        self._check_attached()
        state = {"estimator": self.estimator, "settings": self.settings, "beta": self.beta,
                 "scores": {k: m.score.detach().cpu() for k, m in self._masks.items()},
                 "fixed": {k: m.fixed.cpu() for k, m in self._masks.items() if m.fixed is not None}}
        buffer = io.BytesIO()
        torch.save(state, buffer)
        atomic_write_bytes(Path(path), buffer.getvalue())

    def remove(self) -> nn.Module:
        """Take the masks off: the model is the plain model again, with its original weights and
        ``requires_grad`` flags. Returns the model."""
        self._check_attached()
        self._hook.remove()
        for module, param in self._where.values():
            parametrize.remove_parametrizations(module, param, leave_parametrized=False)
        for module, order in self._order.items():  # put each weight back in its place (before its bias)
            for name in order:
                module._parameters[name] = module._parameters.pop(name)
        for name, p in self.model.named_parameters():
            p.requires_grad_(self._requires_grad.get(name, True))
        self._masks, self._where, self._order = {}, {}, {}
        self._removed = True
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


def _select(model: nn.Module, include: tuple[type, ...], names: list[str],
            exclude: list[str]) -> dict[str, nn.Module]:
    """The modules of ``model`` of the ``include`` types whose names match a shell pattern of ``names``
    (any name, if it is empty) and none of ``exclude``, by name."""
    def matches(name, patterns):
        return any(fnmatch.fnmatch(name, p) for p in patterns)

    return {n: m for n, m in model.named_modules()
            if isinstance(m, include) and not matches(n, exclude) and (not names or matches(n, names))}


def _weights(model: nn.Module, modules: dict[str, nn.Module]) -> dict[str, tuple[nn.Module, str]]:
    """The weights of ``modules`` (by module name) to mask, by full name (e.g. ``"0.weight"``): every
    direct parameter whose name contains ``"weight"``, unless a module outside ``modules`` holds the same
    tensor (a weight tied to an embedding, as GPT-2's ``lm_head.weight``: masking it in one place
    would give the layer and the embedding different weights)."""
    chosen = {id(m) for m in modules.values()}
    elsewhere = {id(p) for m in model.modules() if id(m) not in chosen for p in m.parameters(recurse=False)}
    return {f"{name}.{param}".lstrip("."): (module, param) for name, module in modules.items()
            for param, p in module.named_parameters(recurse=False)
            if "weight" in param and id(p) not in elsewhere}


def _check_unmasked(modules: dict[str, nn.Module]) -> None:
    """Fail if any of ``modules`` (by name) is parametrized already, e.g. carries another MaskSet's masks."""
    taken = [name for name, m in modules.items() if parametrize.is_parametrized(m)]
    if taken:
        raise ValueError(f"modules {taken} are already parametrized (masks attached twice?); "
                         "remove() the other MaskSet first")


def attach(model: nn.Module, estimator: str = "gumbel", *, include: Iterable[type] | None = None, names=None,
           exclude=(), seed: int | None = None, **settings) -> MaskSet:
    """Put a trainable mask on weights of ``model`` (in place) and freeze all of its parameters.

    ``include``: the layer types whose weights are masked (default: :func:`layer_types`); ``names``: if
    given, only modules whose name matches one of these shell patterns (e.g. ``["bert.encoder.*"]``);
    ``exclude``: patterns of module names to leave alone. ``seed``: draw the Gumbel noise from the
    MaskSet's own generator, seeded with it, on the device of the model's weights (move the model
    first); ``None``: from torch's global generator. ``settings`` override the estimator's ``DEFAULTS``.
    """
    settings = _settings(estimator, settings)
    include = layer_types() if include is None else tuple(include)
    names, exclude = list(names or []), list(exclude)
    modules = _select(model, include, names, exclude)
    _check_unmasked(modules)
    targets = _weights(model, modules)
    if not targets:
        some = [n for n, _ in model.named_modules() if n][:8]
        raise ValueError(f"no weights to mask: no module of types {[t.__name__ for t in include]} matches "
                         f"names={names} exclude={exclude}; the model's modules include {some}")
    return MaskSet(model, estimator, settings, targets, seed)


def load(path: str | Path, model: nn.Module, *, seed: int | None = None) -> MaskSet:
    """Attach the masks that :meth:`MaskSet.save` wrote to ``path`` to ``model``, whose weights must
    have the saved names and shapes and carry no masks yet (checked before anything is attached).
    ``seed`` as for :func:`attach`. A ``UserWarning`` names the weights that a default :func:`attach`
    would mask but the file does not cover: they keep their original values in every mode. A file
    that ``save`` did not write (truncated, corrupt, another file) raises a ``ValueError`` naming it."""
    state = _read(path)
    targets, weights = {}, {}
    for name in state["scores"]:
        module_name, _, param = name.rpartition(".")
        try:
            targets[name] = module, param = model.get_submodule(module_name), param
            weights[name] = getattr(module, param)
        except AttributeError:
            raise ValueError(f"{path} has a mask for {name!r}, which this model does not have") from None
    _check_unmasked({name.rpartition(".")[0]: module for name, (module, _) in targets.items()})
    _check_same(state["scores"], weights, str(path), "the model")
    uncovered = [n for n in _weights(model, _select(model, layer_types(), [], [])) if n not in targets]
    if uncovered:
        warnings.warn(f"{path} has no masks for {uncovered}: these weights stay unmasked (their original "
                      "values) in every mode", UserWarning, stacklevel=2)
    ms = MaskSet(model, state["estimator"], state["settings"], targets, seed)
    with torch.no_grad():
        for score, saved in zip(ms.parameters(), state["scores"].values()):
            score.copy_(saved)
    ms.beta = state["beta"]
    ms.set_masks(state["fixed"] or None)
    return ms


def _read(path: str | Path) -> dict:
    """What :meth:`MaskSet.save` wrote to ``path``, checked (``"settings"`` complete and valid): a
    ``ValueError`` naming ``path`` if it is anything else (a missing file raises the system's own error)."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except OSError:  # no such file, a folder, no permission: the system's message says which
        raise
    except Exception as err:  # truncated, corrupt or not written by torch.save
        raise _not_a_mask_file(path, "torch.load cannot read it: truncated, corrupt or another format") from err
    problem = _file_problem(state)
    if problem:
        raise _not_a_mask_file(path, problem)
    try:
        settings = _settings(state["estimator"], state["settings"])
        if state["estimator"] == "sparsify":
            check_range("beta", state["beta"], 0.0, math.inf, open_low=True)
    except ValueError as err:
        raise _not_a_mask_file(path, str(err)) from err
    return {**state, "settings": settings}


def _file_problem(state) -> str:
    """How ``state`` (a loaded file) differs from what :meth:`MaskSet.save` writes; ``""`` if it does not."""
    if not isinstance(state, dict):
        return f"it holds a {type(state).__name__}, not a dict"
    missing = [k for k in FILE_KEYS if k not in state]
    if missing:
        return f"it lacks the keys {missing}"
    scores, fixed = state["scores"], state["fixed"]
    if not _tensors(scores) or not scores:
        return "its 'scores' are not a dict of tensors by weight name"
    shapes = {k: v.shape for k, v in scores.items()}
    if not _tensors(fixed) or (fixed and {k: v.shape for k, v in fixed.items()} != shapes):
        return "its 'fixed' masks are not a dict of tensors of the scores' names and shapes"
    if not isinstance(state["settings"], dict):
        return "its 'settings' are not a dict"
    return ""


def _tensors(d) -> bool:
    return isinstance(d, dict) and all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in d.items())


def _not_a_mask_file(path: str | Path, problem: str) -> ValueError:
    return ValueError(f"{path} is not a mask file written by MaskSet.save ({problem}); "
                      "save the masks again with ms.save(path)")


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
