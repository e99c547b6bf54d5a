"""Chapter 4: reuse at depth 4 with the pair masks' α chosen on a network held aside (issue 52; its
claims ``reuse-deep-alpha``, ``control-apart-deep-alpha`` and ``control-random-deep-alpha`` were
registered before these results were computed, and the page decides them from the results stored).

The page's deeper double-addition network (512×4, ``reuse512x4-seed<k>``) trains its pair masks at the
profile's α for the double addition (full: 2e-3, five times the authors' 4e-4, as the page's 1024×2
network trains them). At depth 4 that α leaves masks too thin to do their own pair alone (about 0.2
and 0.1 of it, the reuse claim asks at least 0.5), so the reuse test there cannot be decided. Here α
is chosen for depth 4 before the networks it is read on are trained:

- **tuning** (:func:`tune`): one network held aside (seed :func:`tune_seed`, after the reported
  ones; no claim reads its numbers) is trained as the others, and its pair-1 and pair-2 masks at
  each α of :data:`TUNE_ALPHAS` (strongest first; full: the authors' 4e-4, then 2e-4);
- **the rule** (:func:`choose`): the strongest α whose two masks each keep at least
  :data:`TUNE_BAR` of their pair alone (a margin above the claim's 0.5, since other networks
  scatter); where none does, the α whose weaker mask keeps most;
- **the networks** (:func:`fetch`): seeds ``0..`` (:func:`seeds`), each as the page's deeper network
  is computed (:func:`~modlib.weight_masks.causes.reuse_control` with ``original``: the network, its
  whole-task mask at the authors' α, its pair masks, a second pair-1 mask and the forced-reuse
  control's), the pair masks at the chosen α. About 15 minutes of one core at ``full``.

Results ``reusealpha512x4-tune<α>-seed<k>`` (tuning) and ``reusealpha512x4-seed<k>``.
"""

from __future__ import annotations

import numpy as np
import torch

from modlib import masks, results, stats
from modlib.runtime import describe
from modlib.weight_masks import causes, findings
from modlib.weight_masks import experiment as ex
from modlib.weight_masks.protocol import ablation_table, train_network

RESULT = "reusealpha"  # not "reuse...-": the claims reuse-deep and control-*-deep read reuse512x4-*
PROFILES = ("smoke", "full")  # computed at smoke (the tests) and full
TUNE_ALPHAS = {"smoke": (4e-4, 2e-4), "full": (4e-4, 2e-4)}  # tried on the held-aside network, strongest first
TUNE_BAR = 0.8  # the share of its own pair each tuning mask keeps alone for its α to be chosen
SEEDS = {"smoke": 1, "full": 5}  # the networks the claims read
CLAIMS = ("reuse-deep-alpha", "control-apart-deep-alpha", "control-random-deep-alpha")


def hidden(profile: str) -> tuple[int, ...]:
    """The deeper network's shape (full: 512×4), as the page's deeper reuse test has it."""
    return tuple(ex.causes_settings(profile).reuse_hidden)


def seeds(profile: str) -> range:
    """The networks the claims read (none outside :data:`PROFILES`)."""
    return range(SEEDS[profile]) if profile in PROFILES else range(0)


def tune_seed(profile: str) -> int:
    """The network held aside for the choice of α: the seed after the reported ones."""
    return SEEDS[profile] if profile in PROFILES else 0


def _stem(profile: str) -> str:
    return f"{RESULT}{ex.shape_name(hidden(profile))}"


def tune_name(profile: str, alpha: float) -> str:
    return f"{_stem(profile)}-tune{alpha:g}-seed{tune_seed(profile)}"


def name(profile: str, seed: int) -> str:
    return f"{_stem(profile)}-seed{seed}"


def _check_profile(profile: str):
    if profile not in PROFILES:
        raise ValueError(f"profile={profile!r}; the retuned reuse test is computed at {', '.join(PROFILES)}")


def tune(s, seed: int, device, alpha: float) -> tuple[dict, dict]:
    """The double-addition network ``seed`` (shape ``s.hidden``) and its pair-1 and pair-2 masks at
    ``alpha``, trained as :func:`~modlib.weight_masks.causes.reuse_control` trains them (streams and
    mask seeds): ``table [5, 2]`` (the network, then each mask alone and removed; columns pair 1
    and pair 2) and ``kept [2, L]``."""
    model = train_network("double", s, seed, device)
    found = {n: causes._pair_mask(model, s, seed, device, n, alpha) for n in ("pair 1", "pair 2")}
    table = ablation_table(model, found, causes._pair_evals(s, seed, device))
    kept = np.array([list(masks.kept_fraction(m).values()) for m in found.values()])
    return {"layers": list(found["pair 1"]), "alpha": alpha, "network": causes.network_digest(model)}, \
        {"table": table, "kept": kept}


def alone(table: np.ndarray) -> np.ndarray:
    """``[2]``: what the pair-1 and pair-2 masks alone keep of their own pair's accuracy, from a
    ``table [5, 2]`` of :func:`tune` (as shares of the network's)."""
    return np.array([table[1, 0], table[3, 1]]) / np.maximum(table[0], 1e-9)


def choose(tuned: dict[float, np.ndarray]) -> float:
    """The rule, from ``tuned`` (α -> its :func:`tune` table, strongest α first): the strongest α
    whose two masks each keep at least :data:`TUNE_BAR` of their pair alone; where none does, the
    α whose weaker mask keeps most (the first of equals)."""
    for alpha, table in tuned.items():
        if alone(table).min() >= TUNE_BAR:
            return alpha
    return max(tuned, key=lambda a: alone(tuned[a]).min())


def fetch_tune(profile: str, alpha: float, device) -> results.Result:
    """Load (or compute and store) the held-aside network's masks at ``alpha`` (:func:`tune`)."""
    _check_profile(profile)
    if alpha not in TUNE_ALPHAS[profile]:
        raise ValueError(f"alpha={alpha:g}; the α values tried at {profile!r} are "
                         f"{', '.join(f'{a:g}' for a in TUNE_ALPHAS[profile])}")
    s = ex.settings(profile).with_(hidden=hidden(profile))
    seed = tune_seed(profile)
    config = {**ex._config(("reuse", tune_name(profile, alpha), seed, s)), "experiment": f"{RESULT}-tune",
              "tune_alpha": alpha}
    config.pop("alpha_double", None)
    return results.fetch(ex.CHAPTER, tune_name(profile, alpha), config,
                         lambda: tune(s, seed, torch.device(device), alpha),
                         profile=profile, device=describe(torch.device(device)), code=tune)


def chosen(profile: str, device="cpu") -> tuple[float, list[results.Result]]:
    """The α the rule picks (:func:`choose`) from the tuning results (computed where missing), and
    those results."""
    tuned = [fetch_tune(profile, a, device) for a in TUNE_ALPHAS[profile]]
    return choose({r.config["tune_alpha"]: r.arrays["table"] for r in tuned}), tuned


def fetch(profile: str, seed: int, device) -> results.Result:
    """Load (or compute and store) network ``seed`` with its pair masks at the chosen α
    (:func:`chosen`; its tuning results are this result's dependencies)."""
    _check_profile(profile)
    if seed not in seeds(profile):
        raise ValueError(f"seed={seed}; the networks at profile {profile!r} are {list(seeds(profile))}")
    alpha, tuned = chosen(profile, device)
    c = ex.causes_settings(profile)
    s = ex.settings(profile).with_(hidden=hidden(profile), alpha_double=alpha)
    kw = {"whole_alpha": c.whole_alpha, "original": True}
    config = {**ex._config(("reuse", name(profile, seed), seed, ex.Point(s, tuple(kw.items())))),
              "experiment": RESULT}
    return results.fetch(ex.CHAPTER, name(profile, seed), config,
                         lambda: causes.reuse_control(s, seed, torch.device(device), **kw),
                         profile=profile, device=describe(torch.device(device)), code=causes.reuse_control,
                         depends=tuned)


def stored(profile: str) -> list[results.Result]:
    """The networks' results stored now at ``profile``, in seed order (nothing computed; a missing
    one ends the list)."""
    return results.stored_run(lambda k: fetch(profile, k, "cpu"), seeds(profile))


def stored_tuning(profile: str) -> list[results.Result]:
    """The tuning results stored now at ``profile``, strongest α first (nothing computed)."""
    return results.stored_run(lambda a: fetch_tune(profile, a, "cpu"), TUNE_ALPHAS[profile])


def points(found: list[results.Result], change=dict) -> list[dict]:
    """The networks' arrays, each with ``sizes`` (:func:`~modlib.weight_masks.experiment.added_point`,
    as the page's deeper reuse test reads its own), passed through ``change`` (a mutation's;
    ``dict``: as stored)."""
    return [change(ex.added_point("reuse", r)) for r in found]


def decided(profile: str, change=dict) -> list[stats.Claim]:
    """The claims of :data:`CLAIMS` decided on the results stored at ``profile`` (every network
    stored, else none): the reuse test (:func:`~modlib.weight_masks.findings.reuse`) and its
    positive control's two checks and whole-task mask
    (:func:`~modlib.weight_masks.findings.reuse_control`), each point passed through ``change``."""
    found = stored(profile)
    if len(found) < len(seeds(profile)) or not found:
        return []
    r = findings.stack(points(found, change))  # as findings.added stacks the page's deeper test
    label = (f"FNN {ex.shape_name(hidden(profile))}, other networks, pair masks at α "
             f"{found[0].config['alpha_double']:g}")
    return (findings.reuse(r["iou"], r["iou_same"], r["iou_random"], r["table"], r["kept"], r["sizes"][0],
                           cid=CLAIMS[0], label=label)
            + findings.reuse_control(r, label, where="deep-alpha"))


__all__ = ["RESULT", "PROFILES", "TUNE_ALPHAS", "TUNE_BAR", "SEEDS", "CLAIMS", "hidden", "seeds", "tune_seed",
           "tune_name", "name", "tune", "alone", "choose", "fetch_tune", "chosen", "fetch", "stored",
           "stored_tuning", "points", "decided"]
