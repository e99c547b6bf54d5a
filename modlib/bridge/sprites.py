"""Chapter 7, the bridge (notebooks/bridge.ipynb), section "Chapter 2's decoders" of "Experiment 3:
does structure predict behaviour?": how separable the slots of chapter 2's monolithic decoder are,
read off binary weight masks, one per slot, against the decoder's whole-cube R^2 over seeds, with
chapter 2's compositional model as the reference.

**The decoders** are chapter 2's (:mod:`modlib.compositional_sprites`), trained again by chapter 2's
own functions (``build``, ``data``, ``train``) and settings for the rows ``orthogonal-monolithic``
(one decoder from all 10 latents) and ``orthogonal`` (one decoder per slot, composed by soft
occlusion): the orthogonal support, every seed on the one shared draw of training scenes that
chapter 2's ``run_row`` uses, ``torch.manual_seed(seed)`` before the model is built. At ``full`` the
settings are chapter 2's ``full`` ones unchanged, so seeds 0-2 are the very networks of chapter 2's
stored rows; here more seeds are trained, because the experiment correlates over seeds. At
``default`` the decoders are narrower and train on fewer scenes for fewer epochs
(:data:`DECODER_CHANGES`), to keep the page within its budget: they are chapter 2's models, not its
networks. Each decoder's R^2 in-domain and on the whole latent cube is measured on
chapter 2's own evaluation scenes (``data(..., "in-domain" | "whole", 0)``).

**The masks.** Per frozen decoder and slot k, a binary weight mask (:mod:`modlib.masks`, Csordás et
al.'s Gumbel-sigmoid estimator, every weight of every linear and convolutional layer, as
:func:`modlib.bridge.train_mask` trains the toy's) is trained so that the masked decoder, given the
scene's latents of *both* slots, renders **the scene containing only sprite k**
(:func:`slot_target`): chapter 2's renderer with slot 1 - k drawn empty (all black), composed by
the row's own composition function (soft occlusion, sharpness 1). This target is chosen because

- soft occlusion works pixel by pixel, so wherever sprite 1 - k covers no pixel the target *is*
  the real scene: the mask is asked to keep sprite k exactly as the decoder draws it in training
  scenes, and to draw nothing where sprite 1 - k was. A mask that merely keeps the decoder whole
  does not pass it (the decoder draws both sprites);
- it is the image the compositional model draws when its slot decoder 1 - k draws nothing, so its
  masks can reach it exactly, whatever the composition does to a lone sprite (under soft
  occlusion a lone slot-1 sprite is drawn at half brightness, sigmoid(0) = 1/2, and a lone slot-0
  sprite at sigmoid(sum of its colour) of it); the bare sprite of the renderer (``render``) would
  instead ask the compositional model to undo its own composition, which no mask can;
- it needs nothing but latents and the renderer, so it is defined on the whole cube too.

The masks train on in-domain latents only (fresh draws from the orthogonal support, generator
keyed by seed, :func:`mask_scenes`); the loss is the squared error to the target plus Csordás et
al.'s penalty ``alpha * sum(logits) / batch``. Their logits start at ``init`` = 4 (a weight kept
with probability 0.98 per sample) rather than the toy's 2: these decoders break when an eighth of
their weights is dropped at random, and the masks then never start to fit.

**Per seed** (stored, :func:`compute`): each slot mask's kept share (pooled and per layer); the
slot subnetwork's R^2 against its target on fresh in-domain and whole-cube scenes, and that of a
random subnetwork with as many weights per layer (the control); the whole decoder's R^2 against
the same targets (what the mask adds); both masks themselves, from which
:mod:`modlib.bridge.findings` reads their overlap (IoU, per layer and pooled, against chance); and
the ablation damage: with the weights that slot j's mask keeps and the other slot's does not
removed from the decoder (:func:`exclusive`), the rise of its squared error on the pixels of sprite
k alone (``damage [S, j, k]``), and the same for a random removal of as many weights per layer,
from which the findings read the selectivity.

Two stored results, ``sprites-monolithic`` and ``sprites-compositional`` (:func:`fetch`).
"""

from __future__ import annotations

import time
from dataclasses import asdict

import numpy as np
import torch
from torch import nn

from modlib import masks, profiles, results
from modlib.bridge.experiment import CHAPTER, train_mask
from modlib.compositional_sprites import experiment as cs
from modlib.data import sprites
from modlib.profiles import check_choices, check_int, check_range, settings_for
from modlib.redundant_input_toy.baselines import json_ready
from modlib.runtime import describe

MODELS = ("monolithic", "compositional")
ROWS = {"monolithic": "orthogonal-monolithic", "compositional": "orthogonal"}  # chapter 2's rows
MASK_KEY = 70_000  # the masks' scenes: generator MASK_KEY + seed (chapter 2's keys are 1000 s + 0..3)
PREFIX = "sprites-"  # a result's name: PREFIX + model
DECODER_CHANGES = ("epochs", "n_train", "hidden", "channels", "mono_hidden", "mono_channels")


@profiles.settings
class SpriteMaskSettings:
    """The slot masks' settings and how many decoders of each model; the decoders are chapter 2's
    at the same profile, except the settings of :data:`DECODER_CHANGES` that are not 0."""

    mono_seeds: int  # monolithic decoders, seeds 0..mono_seeds-1
    comp_seeds: int  # compositional models (the reference)
    mask_steps: int
    alpha: float = 1e-7  # the penalty, times sum(logits) / batch
    init: float = 4.0  # the mask logits' start
    mask_lr: float = 0.05
    mask_batch: int = 64
    samples: int = 4  # mask samples per batch (the batch is split across them)
    n_mask: int = 4000  # in-domain scenes the masks train on
    n_eval: int = 1000  # fresh scenes the masks are scored on (in-domain, and as many whole-cube)
    # the decoders' epochs, training scenes and widths; 0: chapter 2's at this profile
    epochs: int = 0
    n_train: int = 0
    hidden: int = 0
    channels: int = 0
    mono_hidden: int = 0
    mono_channels: int = 0
    models: tuple[str, ...] = MODELS

    def __post_init__(self):
        for name in ("mono_seeds", "comp_seeds", "mask_steps", "mask_batch", "samples", "n_mask", "n_eval"):
            check_int(name, getattr(self, name), 1)
        for name in DECODER_CHANGES:
            check_int(name, getattr(self, name), 0)
        check_range("alpha", self.alpha, 0.0, 1.0)
        check_range("init", self.init, -10.0, 10.0)
        check_range("mask_lr", self.mask_lr, 0.0, 10.0, open_low=True)
        check_choices("models", self.models, MODELS)
        if self.mask_batch % self.samples:
            raise ValueError(f"mask_batch={self.mask_batch} does not split into samples={self.samples} "
                             f"equal chunks; choose a mask_batch that is a multiple of {self.samples}")

    def seeds_of(self, model: str) -> int:
        profiles.check_choice("model", model, MODELS)
        return self.mono_seeds if model == "monolithic" else self.comp_seeds


# full: chapter 2's full decoders (about 2.6 minutes of one core to train a monolithic one, 3.6 a
# compositional one) and two masks of 1,000 steps each (about 1 minute each): 6 monolithic seeds in
# about 28 minutes, 3 compositional ones in about 17.
# default: about 1 minute of one core, so not chapter 2's decoders: one of each kind, narrower (under a
# fifth of the monolithic decoder's weights), 25 epochs over 3,000 scenes (they fit their support less
# well than chapter 2's), masks of 150 steps at three times the learning rate.
SETTINGS = {
    "smoke": SpriteMaskSettings(mono_seeds=2, comp_seeds=2, mask_steps=30, init=0.5, n_mask=128, n_eval=64),
    "default": SpriteMaskSettings(mono_seeds=1, comp_seeds=1, mask_steps=150, mask_lr=0.15, n_mask=1500,
                                  n_eval=500, epochs=25, n_train=3000, hidden=96, channels=8,
                                  mono_hidden=128, mono_channels=16),
    "full": SpriteMaskSettings(mono_seeds=6, comp_seeds=3, mask_steps=1000),
    "paper": SpriteMaskSettings(mono_seeds=6, comp_seeds=3, mask_steps=1000),
}


def settings(profile: str | None = None) -> SpriteMaskSettings:
    return settings_for(SETTINGS, profile)


def decoder_settings(profile: str, b: SpriteMaskSettings, model: str) -> cs.SpriteSettings:
    """Chapter 2's settings at ``profile`` for ``model``'s row, with ``b``'s seeds (and its
    :data:`DECODER_CHANGES` where they are not 0)."""
    changes = {k: getattr(b, k) for k in DECODER_CHANGES if getattr(b, k)}
    return cs.settings(profile).with_(seeds=b.seeds_of(model), rows=(ROWS[model],), **changes)


# ---------------------------------------------------------------- the target and the data


def slot_target(z: torch.Tensor, k: int, size: int, composition: str = "soft",
                sharpness: float = 1.0) -> torch.Tensor:
    """The scene containing only sprite ``k`` of latents ``z [N, 2, 5]`` (in [0, 1], unscaled):
    chapter 2's renderer with slot ``1 - k`` drawn empty (black), composed by ``composition``;
    ``[N, 3, size, size]``. Wherever sprite ``1 - k`` covers no pixel it equals
    :func:`modlib.data.sprites.scenes`; a lone slot-1 sprite is drawn at half brightness under soft
    occlusion, as chapter 2's composition draws it under an empty slot 0."""
    profiles.check_choice("k", k, range(sprites.SLOTS))
    slots = sprites.render_slots(z, size, composition == "alpha")
    slots[:, 1 - k] = 0
    return sprites.compose(slots, composition, sharpness)


def mask_scenes(seed: int, n_mask: int, n_eval: int) -> dict[str, torch.Tensor]:
    """The masks' latents for decoder ``seed`` (unscaled, ``[n, 2, 5]``), from a generator of their
    own: ``"mask"`` ``[n_mask]`` and ``"in"`` ``[n_eval]`` from the orthogonal support (in-domain),
    ``"whole"`` ``[n_eval]`` uniform on the cube. The same for both models of one seed."""
    g = torch.Generator().manual_seed(MASK_KEY + seed)
    z = sprites.sample_support("orthogonal", n_mask + n_eval, g)
    return {"mask": z[:n_mask], "in": z[n_mask:], "whole": torch.rand(n_eval, sprites.SLOTS, sprites.LATENTS,
                                                                       generator=g)}


def regions(z: torch.Tensor, size: int) -> torch.Tensor:
    """``[2, N, size, size]`` bool: the pixels of each sprite alone (covered by sprite k, not by the
    other), where the ablation damage is read."""
    cover = sprites.render_slots(z, size, rgba=True)[:, :, 3] > 0  # [N, 2, H, W]
    return torch.stack([cover[:, k] & ~cover[:, 1 - k] for k in range(sprites.SLOTS)])


# ---------------------------------------------------------------- decoders


def train_decoder(s: cs.SpriteSettings, model: str, seed: int, device: torch.device) -> nn.Module:
    """Chapter 2's decoder of ``model``'s row, seed ``seed``, trained as chapter 2's ``run_row``
    trains it (the shared draw of training scenes, ``torch.manual_seed(seed)``, ``build``,
    ``train``), without its evaluation hook, which changes nothing in the training."""
    row = ROWS[model]
    z, x = (t.to(device) for t in cs.data(s, row, s.n_train, "train", 0))
    torch.manual_seed(seed)
    net = cs.build(s, row).to(device)
    return cs.train(net, z, x, s, seed, desc=f"{row} seed {seed}")


def decoder_r2(s: cs.SpriteSettings, model: str, net: nn.Module, device: torch.device) -> tuple[float, float]:
    """The decoder's R^2 ``(in-domain, whole cube)`` on chapter 2's own evaluation scenes."""
    out = []
    for split in ("in-domain", "whole"):
        z, x = (t.to(device) for t in cs.data(s, ROWS[model], s.n_eval, split, 0))
        out.append(cs.r2_score(x, cs.predict(net, z)))
    return out[0], out[1]


# ---------------------------------------------------------------- masks


def train_slot_mask(net: nn.Module, z: torch.Tensor, y: torch.Tensor, b: SpriteMaskSettings,
                    seed: int) -> dict[str, torch.Tensor]:
    """A binary weight mask over the frozen ``net`` so that it renders ``y [N, 3, H, W]`` from the
    scaled latents ``z [N, 2, 5]``; returns the hard mask (weight name -> bool tensor). The loss is
    the squared error plus Csordás et al.'s penalty ``alpha * sum(logits) / batch``: the loop of
    :func:`modlib.bridge.train_mask`, with the logits starting at ``b.init``."""
    return train_mask(net, z, y, b.mask_steps, b.alpha, b.mask_lr, b.mask_batch, b.samples, seed,
                      loss_fn=nn.functional.mse_loss, init=b.init)


@torch.no_grad()
def masked_output(net: nn.Module, mask: dict | None, mode: str, z: torch.Tensor, seed: int = 0) -> torch.Tensor:
    """``net``'s images ``[N, 3, H, W]`` of scaled latents ``z`` with ``mask`` applied in ``mode``
    (``"hard"``: the subnetwork; ``"complement"``: the mask's weights removed; ``"random"``: as many
    weights per layer as the mask keeps, at places drawn with ``seed``); ``mask=None``: ``net``."""
    if mask is None:
        return cs.predict(net, z)
    ms = masks.attach(net, "gumbel")
    try:
        ms.set_masks(mask)
        ms.set_mode(mode, seed=seed)
        return cs.predict(net, z)
    finally:
        ms.remove()


def region_errors(out: torch.Tensor, x: torch.Tensor, where: torch.Tensor) -> np.ndarray:
    """``[2]``: the squared error of ``out`` against ``x`` (``[N, 3, H, W]``), summed over colour
    channels, averaged over the pixels of each sprite alone (``where``, :func:`regions`)."""
    se = ((out - x) ** 2).sum(1)  # [N, H, W]
    return np.array([float(se[w].mean()) if w.any() else 0.0 for w in where])


def exclusive(mask: dict, other: dict) -> dict:
    """The weights ``mask`` keeps and ``other`` does not, per tensor: what is removed to ask whether
    a slot's own part matters for its own sprite. (Removing a whole slot mask would remove the
    small layers both masks keep entirely, the output layer among them, and break both sprites
    alike.)"""
    return {k: v & ~other[k] for k, v in mask.items()}


def kept(mask: dict) -> tuple[float, list[float]]:
    """The share of the masked weights ``mask`` keeps: pooled, and per weight tensor in order."""
    per = masks.kept_fraction(mask)
    return float(masks.kept_fraction(mask, per_layer=False)), [per[k] for k in mask]


def flat(mask: dict) -> np.ndarray:
    """A mask (weight name -> bool tensor, in order) as one flat bool vector."""
    return torch.cat([v.reshape(-1) for v in mask.values()]).numpy().astype(bool)


def unflat(vector: np.ndarray, like: dict) -> dict:
    """:func:`flat`'s inverse over the weights of ``like`` (names, shapes and order)."""
    out, i = {}, 0
    for k, v in like.items():
        out[k] = torch.as_tensor(np.asarray(vector[i:i + v.numel()], dtype=bool)).reshape(v.shape)
        i += v.numel()
    return out


def measure(s: cs.SpriteSettings, b: SpriteMaskSettings, model: str, seed: int, net: nn.Module,
            device: torch.device) -> dict:
    """Both slot masks of one trained decoder ``net`` (frozen, left unchanged) and every score."""
    composition, sharpness = cs.ROWS[ROWS[model]][3:]
    z = mask_scenes(seed, b.n_mask, b.n_eval)
    scaled = {k: sprites.scale_latents(v).to(device) for k, v in z.items()}
    target = {(split, k): slot_target(z[split], k, s.size, composition, sharpness).to(device)
              for split in ("mask", "in", "whole") for k in range(sprites.SLOTS)}
    slot_masks = [train_slot_mask(net, scaled["mask"], target["mask", k], b, seed=10 * seed + k)
                  for k in range(sprites.SLOTS)]
    r2 = lambda split, k, out: cs.r2_score(target[split, k], out)  # noqa: E731
    out = {"slot_in": [], "slot_whole": [], "random_in": [], "full_slot_in": []}
    for k, m in enumerate(slot_masks):
        out["slot_in"].append(r2("in", k, masked_output(net, m, "hard", scaled["in"])))
        out["slot_whole"].append(r2("whole", k, masked_output(net, m, "hard", scaled["whole"])))
        out["random_in"].append(r2("in", k, masked_output(net, m, "random", scaled["in"], seed=seed)))
        out["full_slot_in"].append(r2("in", k, masked_output(net, None, "off", scaled["in"])))
    x = sprites.scenes(z["in"], s.size, composition, sharpness).to(device)
    where = regions(z["in"], s.size).to(device)
    intact = region_errors(masked_output(net, None, "off", scaled["in"]), x, where)
    own = [exclusive(slot_masks[k], slot_masks[1 - k]) for k in range(sprites.SLOTS)]
    damage = [region_errors(masked_output(net, m, "complement", scaled["in"]), x, where) - intact
              for m in own]
    damage_random = [region_errors(masked_output(net, masks.random_like(m, seed), "complement", scaled["in"]),
                                   x, where) - intact for m in own]
    return {**out, "region_err": intact, "damage": np.array(damage), "damage_random": np.array(damage_random),
            "kept": [kept(m) for m in slot_masks], "masks": [flat(m) for m in slot_masks],
            "layers": [v.numel() for v in slot_masks[0].values()]}


def compute(s: cs.SpriteSettings, b: SpriteMaskSettings, model: str,
            device: torch.device) -> tuple[dict, dict]:
    """Train ``model``'s decoders and measure every one; returns ``(metrics, arrays)``.

    Arrays (S seeds, L masked weight tensors, W masked weights, slots k = 0, 1): ``r2_in``,
    ``r2_whole`` ``[S]`` (the decoder on chapter 2's evaluation scenes); ``slot_in``,
    ``slot_whole`` ``[S, 2]`` (slot k's subnetwork against :func:`slot_target` on fresh in-domain
    and whole-cube scenes); ``random_in`` ``[S, 2]`` (a random subnetwork as large per layer);
    ``full_slot_in`` ``[S, 2]`` (the whole decoder against the same targets); ``kept`` ``[S, 2]``
    and ``kept_layers`` ``[S, 2, L]``; ``mask`` ``[S, 2, W]`` bool (every mask over the masked
    weights in order) and ``mask_layers`` ``[L]`` (the weights per tensor); ``region_err``
    ``[S, 2]`` (the decoder's squared error on the pixels of each sprite alone, in-domain);
    ``damage``, ``damage_random`` ``[S, 2, 2]`` (the rise of that error on sprite k's pixels, index
    ``[s, j, k]``, with the weights only slot j's mask keeps removed (:func:`exclusive`), or as many
    random weights per layer).
    Prints the CPU seconds of each decoder and of its masks (not stored: results compare bit for
    bit)."""
    rows = []
    for seed in range(s.seeds):
        start = time.process_time()
        net = train_decoder(s, model, seed, device)
        trained = time.process_time()
        r_in, r_whole = decoder_r2(s, model, net, device)
        row = measure(s, b, model, seed, net, device)
        rows.append({**row, "r2_in": r_in, "r2_whole": r_whole})
        print(f"{PREFIX}{model} seed {seed}: decoder {trained - start:.0f} s, masks and scores "
              f"{time.process_time() - trained:.0f} s of CPU", flush=True)
    arrays = {k: np.array([r[k] for r in rows], dtype=np.float64)
              for k in ("r2_in", "r2_whole", "slot_in", "slot_whole", "random_in", "full_slot_in",
                        "region_err", "damage", "damage_random")}
    arrays["kept"] = np.array([[kk[0] for kk in r["kept"]] for r in rows], dtype=np.float64)
    arrays["kept_layers"] = np.array([[kk[1] for kk in r["kept"]] for r in rows], dtype=np.float64)
    arrays["mask"] = np.array([r["masks"] for r in rows], dtype=bool)
    arrays["mask_layers"] = np.array(rows[0]["layers"], dtype=np.int64)
    metrics = {"model": model, "row": ROWS[model], "seeds": s.seeds,
               **{f"{k}_mean": float(arrays[k].mean()) for k in ("r2_in", "r2_whole", "slot_in", "slot_whole",
                                                                  "random_in", "kept")}}
    return metrics, arrays


# ---------------------------------------------------------------- stored results


def result_names(b: SpriteMaskSettings) -> list[str]:
    return [PREFIX + m for m in b.models]


def _config(s: cs.SpriteSettings, b: SpriteMaskSettings, model: str) -> dict:
    dec = asdict(s)
    dec.pop("rows")
    masks_cfg = asdict(b)
    for k in ("models", "mono_seeds", "comp_seeds", *DECODER_CHANGES):
        masks_cfg.pop(k)
    return json_ready({"masks": masks_cfg, "decoder": dec, "row": [ROWS[model], *cs.ROWS[ROWS[model]]],
                       "model": model, "seeds": s.seeds, "target": "slot alone, other slot empty"})


REMAKE = "python -m modlib.batch --profile {profile} --executor local --workers 2 notebooks/bridge.ipynb"


def fetch(profile: str, model: str, device: torch.device, b: SpriteMaskSettings | None = None) -> results.Result:
    """Load (or compute and store) the result ``sprites-<model>`` at ``profile``."""
    b = b or settings(profile)
    profiles.check_choice("model", model, b.models)
    s = decoder_settings(profile, b, model)
    return results.fetch(CHAPTER, PREFIX + model, _config(s, b, model), lambda: compute(s, b, model, device),
                         profile=profile, device=describe(device), code=compute,
                         remake=REMAKE.format(profile=profile))


def run(profile: str, device: torch.device, b: SpriteMaskSettings | None = None) -> dict[str, results.Result]:
    """Every sprite result at ``profile`` (loaded, or computed and stored): ``{model: Result}``."""
    b = b or settings(profile)
    return {m: fetch(profile, m, device, b) for m in b.models}


def runs(profile: str, device: torch.device) -> dict[str, results.Result] | None:
    """What the page shows: :func:`run`, except that where nothing may be computed at ``profile``
    (a build from stored full results) and a result is not stored, ``None`` (computes nothing)."""
    if not results.from_store_only(profile):
        return run(profile, device)
    try:
        with results.store_only():
            return run(profile, device)
    except results.StaleResultError:
        return None
