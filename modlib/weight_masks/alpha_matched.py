"""Chapter 4: the α curve at matched density (issue 52; its claims ``alpha-spares-cut`` and
``alpha-spares-grown`` were registered before these results were computed, and the page decides them
from the results stored).

The α curve trains the + and × masks of the same 1024×2 networks at α 1e-4 to 2e-3, and a stronger
α's masks spare the other operation *less* than a random removal as dense (``alpha-spares``). But α
moves the masks' density as well (the + mask keeps about 2.7 % of the weights at 1e-4 and 1.0 % at
1e-3), and a random removal spares more the sparser it is. Here the two ends of the α curve are
compared at one density, each end's mask moved to the other's density by its own logits (the mask's
ranking of its weights):

- ``weak_cut``: the weak α's mask (:data:`ENDS`) keeps, in each layer, only its highest-logit weights,
  as many as the strong α's mask keeps in that layer: compared with the strong α's mask at its
  density;
- ``strong_grown``: the strong α's mask keeps, in each layer, as many weights as the weak α's mask
  keeps there, its highest logits: compared with the weak α's mask at its density.

Each network is trained and its masks at both ends are trained as the α curve trains them
(:func:`~modlib.weight_masks.causes.op_point`: the same network, data streams and mask seeds), their
logits kept; every mask set is scored as a point of the curve (each mask alone and removed, and a
random mask of the same per-layer counts alone and removed, with the α curve's control seeds: the two
mask sets compared at one density share their random masks). One result per network,
``alphamatched-seed<k>`` (about 17 minutes of one core at ``full``).
"""

from __future__ import annotations

import numpy as np
import torch

from modlib import masks, results, stats
from modlib.data import digits
from modlib.runtime import describe
from modlib.weight_masks import causes, findings
from modlib.weight_masks import experiment as ex
from modlib.weight_masks.protocol import (CHANCE, MASKS, ablation_table, digit_loss, op_evals, random_controls,
                                          task_batches, train_mask, train_network)

RESULT = "alphamatched"  # stored as alphamatched-seed<k>, one per network
PROFILES = ("smoke", "full")  # computed at smoke (the tests) and full
ENDS = {"smoke": (1e-4, 1e-3), "full": (1e-4, 1e-3)}  # (weak, strong): the ends alpha-spares compares at full
ARMS = ("weak", "strong", "weak_cut", "strong_grown")  # the mask sets scored, each with the + and × masks
CLAIMS = {"alpha-spares-cut": ("strong", "weak_cut"), "alpha-spares-grown": ("strong_grown", "weak")}  # arms


def name(seed: int) -> str:
    return f"{RESULT}-seed{seed}"


def seeds(profile: str) -> range:
    """The networks: those of the α curve at ``profile`` (none outside :data:`PROFILES`)."""
    return range(ex.causes_settings(profile).seeds) if profile in PROFILES else range(0)


def top_like(logits: dict[str, torch.Tensor], counts: dict[str, int]) -> dict[str, torch.Tensor]:
    """Per masked weight tensor ``name``, a bool mask of its shape keeping the ``counts[name]``
    weights of highest logit (``logits``: name -> tensor of the weight's shape)."""
    out = {}
    for k, lg in logits.items():
        flat = torch.zeros(lg.numel(), dtype=torch.bool)
        flat[torch.topk(lg.reshape(-1), counts[k]).indices] = True
        out[k] = flat.reshape(lg.shape)
    return out


def counts(mask: dict[str, torch.Tensor]) -> dict[str, int]:
    """Per weight tensor, how many weights ``mask`` keeps."""
    return {k: int(m.sum()) for k, m in mask.items()}


def end_masks(model, s, seed: int, alpha: float, device) -> tuple[dict, dict]:
    """The + and × masks of ``model`` at ``alpha``, trained as
    :func:`~modlib.weight_masks.protocol.trained_op_masks` trains them (its streams, steps and
    seeds), with their final logits: ``({op: {name: bool}}, {op: {name: logits}})``."""
    hard, logits = {}, {}
    for op in digits.OPS:
        stream = task_batches("addmul", s.batch, 2000 + seed, device, (op,))
        hard[op], logits[op] = train_mask(model, stream, digit_loss, s.mask_steps, alpha, s,
                                          seed=4000 + 10 * seed + MASKS.index(op), desc=f"mask {op}, alpha {alpha:g}",
                                          logits=True)
    return hard, logits


def study(s, seed: int, device, ends: tuple[float, float]) -> tuple[dict, dict]:
    """Network ``seed`` (shape ``s.hidden``), its masks at both ``ends`` (weak, strong α) and each moved
    to the other end's per-layer counts; per arm of :data:`ARMS`, ``<arm>_table [5, 2]`` (the full
    network, then each mask alone and removed; columns + and ×), ``<arm>_control [4, 2]`` (a random
    mask of the same per-layer counts alone and removed, per mask) and ``<arm>_kept [2, L]``; and per
    operation and layer, ``iou_cut [2, L]`` (the weak mask cut against the strong one) and
    ``iou_grown [2, L]`` (the strong mask grown against the weak one)."""
    model = train_network("addmul", s, seed, device)
    evals = op_evals(s, seed, device)
    (weak, weak_logits), (strong, strong_logits) = (end_masks(model, s, seed, a, device) for a in ends)
    sets = {"weak": weak, "strong": strong,
            "weak_cut": {op: top_like(weak_logits[op], counts(strong[op])) for op in digits.OPS},
            "strong_grown": {op: top_like(strong_logits[op], counts(weak[op])) for op in digits.OPS}}
    arrays = {}
    for arm, found in sets.items():
        found = {op: {k: m.cpu() for k, m in found[op].items()} for op in digits.OPS}
        arrays[f"{arm}_table"] = ablation_table(model, found, evals)
        arrays[f"{arm}_control"] = random_controls(model, found, evals, 9000 + seed)
        arrays[f"{arm}_kept"] = np.array([list(masks.kept_fraction(found[op]).values()) for op in digits.OPS])
        sets[arm] = found
    for key, (a, b) in {"iou_cut": ("weak_cut", "strong"), "iou_grown": ("strong_grown", "weak")}.items():
        arrays[key] = np.array([list(masks.iou(sets[a][op], sets[b][op]).values()) for op in digits.OPS])
    metrics = {"layers": list(weak["+"]), "ops": list(digits.OPS), "arms": list(ARMS), "ends": list(ends),
               "chance": CHANCE["addmul"], "network": causes.network_digest(model)}
    return metrics, arrays


def fetch(profile: str, seed: int, device) -> results.Result:
    """Load (or compute and store) network ``seed``'s masks at both ends of the α curve and moved to
    each other's density (:func:`study`)."""
    if seed not in seeds(profile):
        raise ValueError(f"seed={seed}; the networks at profile {profile!r} are {list(seeds(profile))}")
    s = ex.settings(profile)
    config = {**ex._config(("alphacurve", name(seed), seed, s)), "experiment": RESULT, "ends": list(ENDS[profile])}
    config.pop("alpha", None)
    return results.fetch(ex.CHAPTER, name(seed), config,
                         lambda: study(s, seed, torch.device(device), ENDS[profile]),
                         profile=profile, device=describe(torch.device(device)), code=study)


def stored(profile: str) -> list[results.Result]:
    """The results stored now at ``profile``, in seed order (nothing computed; a missing one ends
    the list)."""
    return results.stored_run(lambda k: fetch(profile, k, "cpu"), seeds(profile))


def points(found: list[results.Result]) -> dict[str, list[dict]]:
    """Per arm of :data:`ARMS`, one point per network as the α curve reads its points
    (:func:`~modlib.weight_masks.causes.point`'s ``table``, ``control``, ``kept``, ``sizes`` and
    ``share``, with ``seed``)."""
    out = {arm: [] for arm in ARMS}
    for r in found:
        sizes = causes.mask_sizes("addmul", r.config["hidden"])
        for arm in ARMS:
            kept = r.arrays[f"{arm}_kept"]
            out[arm].append({"table": r.arrays[f"{arm}_table"], "control": r.arrays[f"{arm}_control"], "kept": kept,
                             "sizes": sizes, "share": kept @ sizes / sizes.sum(), "seed": np.float64(r.config["seed"])})
    return out


def labels(ends: tuple[float, float]) -> dict[str, str]:
    """Each arm of :data:`ARMS` in words, for ``ends`` (weak, strong α)."""
    weak, strong = (f"α = {a:g}" for a in ends)
    return {"weak": f"the {weak} masks", "strong": f"the {strong} masks",
            "weak_cut": f"the {weak} masks cut to the {strong} masks' counts",
            "strong_grown": f"the {strong} masks grown to the {weak} masks' counts"}


def decided(profile: str, change=dict) -> list[stats.Claim]:
    """The claims of :data:`CLAIMS` decided on the results stored at ``profile``
    (:func:`~modlib.weight_masks.findings.alpha_matched`), each point passed through ``change`` first
    (a mutation's; ``dict``: as stored)."""
    found = {arm: [change(p) for p in ps] for arm, ps in points(stored(profile)).items()}
    return [findings.alpha_matched(found, cid, arms, labels(ENDS[profile]), len(seeds(profile)))
            for cid, arms in CLAIMS.items()]


__all__ = ["RESULT", "PROFILES", "ENDS", "ARMS", "CLAIMS", "name", "seeds", "top_like", "counts", "end_masks",
           "study", "fetch", "stored", "points", "labels",
           "decided"]
