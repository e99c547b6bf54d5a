"""Chapter 7: the surgery on chapter 3's CNNs again, with a "use X2" mask that computes its task, on
fresh CNNs (issue 53; notebooks/bridge.ipynb, section "Surgery on chapter 3's CNNs").

On experiment 1's five CNNs (:mod:`modlib.bridge.digit_surgery`) every surgery claim is undecided:
the "use X2" masks, trained at experiment 1's mask settings, name the right digit of fresh setting-B
pairs at a median 87%, below the registered bar of 90% (``findings.FIT``). Two steps, each fixed
before its results were computed:

1. **The recipe** (``surgery-x2-recipe-seed<k>``, CNNs :data:`RECIPE_SEEDS`, already reported by
   ``surgery-mnist``, so nothing read from them is reported as a verdict): the "use X2" mask trained
   at each setting of :data:`GRID` (steps and penalty as multiples of experiment 1's) and its fit.
   :func:`chosen` picks by a rule written down before: the fewest steps, then the larger penalty (a
   sparser mask), among the settings whose fit reaches :data:`AIM` on every recipe CNN; where none
   does, the setting whose worse fit is highest.
2. **The fresh CNNs** (``surgery-mnist-fresh-seed<k>``, seeds :func:`fresh_seeds`: chapter 3's
   setting-A recipe, seeds it did not train): each CNN trained as chapter 3 trains it, the Y1 mask
   as experiment 1 trains it, the "use X2" mask at the chosen setting, and every arm of
   :func:`modlib.bridge.digit_surgery.measure`. The claims ``*-mnist-fresh`` read them, registered
   before they were computed.

Computed at ``smoke`` (the tests) and ``full``.
"""

from __future__ import annotations

import numpy as np
import torch

from modlib import results
from modlib.bridge import digit_surgery, digits
from modlib.bridge.experiment import CHAPTER, kept, train_mask
from modlib.data import digits as digit_data
from modlib.resists_at_scale import controls, networks
from modlib.runtime import describe

RECIPE = "surgery-x2-recipe"  # stored as surgery-x2-recipe-seed<k>
FRESH = "surgery-mnist-fresh"  # stored as surgery-mnist-fresh-seed<k>
PROFILES = ("smoke", "full")
RECIPE_SEEDS = (0, 2)  # experiment 1's CNNs the recipe is chosen on: 2 fit lowest (82%), 0 highest (90%)
GRID = ((2, 1.0), (4, 1.0), (2, 1 / 3))  # (mask steps, penalty) as multiples of experiment 1's
AIM = 0.93  # the fit the chosen setting must reach on every recipe CNN: above the bar of 0.9 with room


def recipe_seeds(profile: str) -> tuple[int, ...]:
    """The CNNs the recipe is chosen on at ``profile`` (those of :data:`RECIPE_SEEDS` it has)."""
    return tuple(k for k in RECIPE_SEEDS if k < digits.settings(profile).seeds)


def fresh_seeds(profile: str) -> range:
    """The fresh CNNs' seeds: as many as experiment 1 has, after its own (5-9 at ``full``)."""
    n = digits.settings(profile).seeds
    return range(n, 2 * n)


def setting(d: digits.DigitSettings, point: tuple[float, float]) -> tuple[int, float]:
    """``(steps, alpha)`` of a :data:`GRID` point for experiment 1's settings ``d``."""
    return int(round(point[0] * d.mask_steps)), point[1] * d.alpha


def x2_mask(d: digits.DigitSettings, net: torch.nn.Module, pools: dict, seed: int, steps: int,
            alpha: float) -> dict:
    """CNN ``seed``'s "use X2" mask (weight name -> bool tensor), trained as experiment 1's is
    (:func:`modlib.bridge.digit_surgery.measure`: its pairs, loss and seed) for ``steps`` at ``alpha``."""
    x, _, t2 = digit_surgery.mask_pairs(d, pools, seed)
    return train_mask(net, x, t2, steps, alpha, d.mask_lr, d.mask_batch, d.samples,
                      seed=digit_surgery.KEY + seed, loss_fn=networks.categorical_hinge)


def compute_recipe(s: networks.ResistSettings, d: digits.DigitSettings, seed: int, device: torch.device
                   ) -> tuple[dict, dict]:
    """CNN ``seed`` trained; the "use X2" mask at each :data:`GRID` point. Arrays ``[G]``: ``steps``,
    ``alpha``, ``fit`` (right digit of fresh setting-B pairs), ``kept`` (pooled kept share)."""
    pools, source = controls.pools()
    net, _, _ = digits.train_network(s, seed, pools, device)
    fresh = {"fit": digit_surgery.fit_pairs(d, pools, seed)}
    rows = []
    for point in GRID:
        steps, alpha = setting(d, point)
        m = x2_mask(d, net, pools, seed, steps, alpha)
        rows.append((steps, alpha, digits.scored(net, m, "hard", fresh)["fit"], kept(m)[0]))
    arrays = {k: np.array(v, dtype=float) for k, v in zip(("steps", "alpha", "fit", "kept"), zip(*rows))}
    return {"seed": seed, "data": source, "fit": arrays["fit"].tolist()}, arrays


def fetch_recipe(profile: str, seed: int, device: torch.device) -> results.Result:
    """Load (or compute and store) ``surgery-x2-recipe-seed<seed>`` at ``profile``."""
    d, s = _settings(profile)
    if seed not in recipe_seeds(profile):
        raise ValueError(f"seed={seed}; the recipe CNNs at {profile!r} are {recipe_seeds(profile)}")
    cfg = {**digits.config(s, d), "seed": seed, "key": digit_surgery.KEY, "grid": [list(p) for p in GRID]}
    return results.fetch(CHAPTER, f"{RECIPE}-seed{seed}", cfg, lambda: compute_recipe(s, d, seed, device),
                         profile=profile, device=describe(device), code=compute_recipe,
                         sources={"mnist": digit_data.available_sources()})


def chosen(recipes: list[dict]) -> tuple[float, float]:
    """The :data:`GRID` point the rule picks from the recipe CNNs' arrays ``recipes`` (each
    :func:`compute_recipe`'s): the fewest steps, then the larger penalty, among the points whose fit
    reaches :data:`AIM` on every CNN; where none does, the point whose worse fit is highest."""
    worst = np.min([r["fit"] for r in recipes], axis=0)  # [G]
    ok = [i for i in range(len(GRID)) if worst[i] >= AIM]
    if not ok:
        return GRID[int(np.argmax(worst))]
    return GRID[min(ok, key=lambda i: (GRID[i][0], -GRID[i][1]))]


def compute_fresh(s: networks.ResistSettings, d: digits.DigitSettings, seed: int, point: tuple[float, float],
                  device: torch.device) -> tuple[dict, dict]:
    """Fresh CNN ``seed`` trained as chapter 3 trains it and measured as
    :func:`modlib.bridge.digit_surgery.compute` measures experiment 1's, its "use X2" mask at the
    :data:`GRID` point ``point``; the same arrays as that function's."""
    pools, source = controls.pools()
    net, _, numbers = digits.train_network(s, seed, pools, device)
    row = digit_surgery.measure(d, seed, net, pools, x2=x2_mask(d, net, pools, seed, *setting(d, point)))
    arrays = digit_surgery.arrays_of(row, numbers)
    return {"result": FRESH, "seed": seed, "data": source, "x2_setting": list(setting(d, point)),
            **{k: float(v[0]) for k, v in arrays.items() if v.ndim == 1}}, arrays


def on_fresh(profile: str, seed: int, what: str, device: torch.device
             ) -> tuple[digits.DigitSettings, networks.ResistSettings, tuple[float, float], int, float]:
    """What every result on a fresh CNN starts from: ``(d, s, point, steps, alpha)``, experiment 1's
    and chapter 3's settings at ``profile``, the :data:`GRID` point :func:`chosen` picks from the
    stored recipe results (computed first if missing) and its "use X2" mask's steps and penalty. A
    ``profile`` outside :data:`PROFILES` (``what`` names the result in the error) or a ``seed`` that
    is not a fresh CNN's is refused, naming the valid choices."""
    if profile not in PROFILES:
        raise ValueError(f"profile={profile!r} computes no {what}; choose from {', '.join(PROFILES)}")
    if seed not in fresh_seeds(profile):
        raise ValueError(f"seed={seed}; the fresh CNNs at {profile!r} are {list(fresh_seeds(profile))}")
    d, s = _settings(profile)
    point = chosen([fetch_recipe(profile, k, device).arrays for k in recipe_seeds(profile)])
    return d, s, point, *setting(d, point)


def fetch_on_fresh(result: str, compute, what: str, extra, profile: str, seed: int,
                   device: torch.device) -> results.Result:
    """Load (or compute and store) ``<result>-seed<seed>`` at ``profile``, a result on fresh CNN
    ``seed`` (:func:`on_fresh`; ``what`` names it in a refusal): ``compute(s, d, seed, point, device)``,
    its config chapter 3's and experiment 1's settings, the seed and ``extra(steps, alpha)`` (the
    result's own keys, given the "use X2" mask's steps and penalty at the chosen point)."""
    d, s, point, steps, alpha = on_fresh(profile, seed, what, device)
    cfg = {**digits.config(s, d), "seed": seed, **extra(steps, alpha)}
    return results.fetch(CHAPTER, f"{result}-seed{seed}", cfg, lambda: compute(s, d, seed, point, device),
                         profile=profile, device=describe(device), code=compute,
                         sources={"mnist": digit_data.available_sources()})


def fetch_fresh(profile: str, seed: int, device: torch.device) -> results.Result:
    """Load (or compute and store) ``surgery-mnist-fresh-seed<seed>`` at ``profile``: the "use X2"
    mask at the point :func:`chosen` picks from the stored recipe results (computed first if missing)."""
    return fetch_on_fresh(FRESH, compute_fresh, "fresh surgery", lambda steps, alpha: {
        "key": digit_surgery.KEY, "draws": digit_surgery.DRAWS, "x2_draws": digit_surgery.X2_DRAWS,
        "x2_steps": steps, "x2_alpha": alpha}, profile, seed, device)


def names(profile: str) -> list[str]:
    """The stored results at ``profile``: the recipe CNNs', then the fresh CNNs' (none elsewhere)."""
    return names_on_recipe(RECIPE, profile) + names_on_fresh(FRESH, profile)


def names_on_fresh(result: str, profile: str) -> list[str]:
    """The stored results ``<result>-seed<k>`` at ``profile``, one per fresh CNN in seed order (none
    outside :data:`PROFILES`): those of every result computed on each fresh CNN."""
    return [f"{result}-seed{k}" for k in fresh_seeds(profile)] if profile in PROFILES else []


def run_on_fresh(fetch, profile: str, device: torch.device) -> list:
    """``fetch(profile, seed, device)`` on every fresh CNN at ``profile``, in seed order (none outside
    :data:`PROFILES`): the run of every result computed on each fresh CNN."""
    return [fetch(profile, k, device) for k in fresh_seeds(profile)] if profile in PROFILES else []


def fetch_on_recipe(recipe: str, compute, what: str, extra: dict, profile: str, seed: int,
                    device: torch.device) -> results.Result:
    """Load (or compute and store) ``<recipe>-seed<seed>`` at ``profile``, a recipe chosen on recipe CNN
    ``seed`` by another module (:mod:`modlib.bridge.surgery_sized`, :mod:`modlib.bridge.surgery_ranked`):
    ``compute(s, d, seed, device)``, its config chapter 3's and experiment 1's settings, the seed and
    ``extra``. A ``profile`` outside :data:`PROFILES` is refused (``what`` names the recipe there)."""
    if profile not in PROFILES:
        raise ValueError(f"profile={profile!r} computes no {what}; choose from {', '.join(PROFILES)}")
    d, s = _settings(profile)
    cfg = {**digits.config(s, d), "seed": seed, **extra}
    return results.fetch(CHAPTER, f"{recipe}-seed{seed}", cfg, lambda: compute(s, d, seed, device),
                         profile=profile, device=describe(device), code=compute,
                         sources={"mnist": digit_data.available_sources()})


def names_on_recipe(recipe: str, profile: str) -> list[str]:
    """The stored results ``<recipe>-seed<k>`` at ``profile``, one per recipe CNN (none outside
    :data:`PROFILES`): those of every recipe chosen on the recipe CNNs."""
    return [f"{recipe}-seed{k}" for k in recipe_seeds(profile)] if profile in PROFILES else []


def run_with_recipe(fetch_recipe, fetch, profile: str, device: torch.device) -> tuple[list, list]:
    """``(recipes, fresh)``: ``fetch_recipe(profile, k, device)`` on every recipe CNN, then
    ``fetch(profile, k, device)`` on every fresh CNN, in seed order (none outside :data:`PROFILES`)."""
    if profile not in PROFILES:
        return [], []
    return [fetch_recipe(profile, k, device) for k in recipe_seeds(profile)], run_on_fresh(fetch, profile, device)


def fresh_names(profile: str) -> list[str]:
    """The fresh CNNs' surgery results at ``profile``, in seed order."""
    return [f"{FRESH}-seed{k}" for k in fresh_seeds(profile)]


def _settings(profile: str) -> tuple[digits.DigitSettings, networks.ResistSettings]:
    if profile not in PROFILES:
        raise ValueError(f"profile={profile!r} computes no fresh surgery; choose from {', '.join(PROFILES)}")
    d = digits.settings(profile)
    return d, digits.chapter3_settings(profile, d)


def run(profile: str, device: torch.device) -> tuple[list[results.Result], list[results.Result]]:
    """``(recipes, fresh)``: the recipe CNNs' results and the fresh CNNs' at ``profile``
    (:func:`fetch_recipe`, :func:`fetch_fresh`), in seed order; none outside :data:`PROFILES`."""
    return run_with_recipe(fetch_recipe, fetch_fresh, profile, device)


def recipe_text(recipes: list[results.Result]) -> str:
    """The recipe CNNs' fits at every :data:`GRID` point and the point :func:`chosen` picks, in words."""
    arrays = [r.arrays for r in recipes]
    pick = chosen(arrays)
    parts = []
    for i, point in enumerate(GRID):
        a = arrays[0]
        fits = ", ".join(f"{r['fit'][i]:.0%}" for r in arrays)
        kept_ = ", ".join(f"{100 * r['kept'][i]:.2g}%" for r in arrays)
        parts.append(f"{int(a['steps'][i])} steps at α {a['alpha'][i]:g}: fit {fits} (kept {kept_})"
                     + (" ← chosen" if point == pick else ""))
    seeds = ", ".join(str(int(r.config["seed"])) for r in recipes)
    return f"On CNNs {seeds} (fit, then kept share, per CNN): " + "; ".join(parts)
