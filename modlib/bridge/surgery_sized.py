"""Chapter 7: rule 2 of the CNN surgery against masks for other targets that fit their targets, their
removal matched in size (issue 53; notebooks/bridge.ipynb, section "Rule 2 with masks for other
targets").

:mod:`modlib.bridge.surgery_target` trains masks for two other targets (:data:`TARGETS`: the left
digit's label plus 5, the right digit's label plus 5) exactly as the "use X2" mask is trained; they
named their targets at a median 88% and 61% (the bar is 90%) and removed 3-10 times fewer weights
than rule 2, so neither claim could be decided. Here, in two steps, as :mod:`modlib.bridge.surgery_fresh`
chooses the "use X2" mask's recipe:

1. **The target recipe** (``target-recipe-mnist-seed<k>``, the recipe CNNs
   :func:`~modlib.bridge.surgery_fresh.recipe_seeds`): each CNN trained again as chapter 3 trains it;
   each target's mask at every point of :data:`GRID` (denser than the "use X2" mask's) and its fit.
   :func:`chosen` picks per target by a rule written down before: the larger penalty among the
   points whose fit reaches :data:`~modlib.bridge.surgery_fresh.AIM` on every recipe CNN; where none
   does, the point whose worse fit is highest.
2. **The fresh CNNs** (``surgery-sized-mnist-seed<k>``): each CNN, its Y1 mask and "use X2" mask as
   :func:`modlib.bridge.surgery_fresh.compute_fresh` trains them, each target's mask at its chosen
   point, and the arms: ``full``, ``sub`` (the Y1 subnetwork, its fit), ``ablated_excl`` (rule 2),
   ``random_x2_excl`` (rule 2 with random masks of the "use X2" mask's counts per tensor, :data:`DRAWS`
   draws: what the mutations put in rule 2's place), ``<t>_excl`` (the target mask's weights outside
   the Y1 mask removed) and ``<t>_sized`` (the same, matched per tensor to rule 2's count,
   :func:`sized`; :data:`DRAWS` draws averaged).

About twelve minutes of one core per CNN at ``full``. Computed at ``smoke`` (the tests) and ``full``.
"""

from __future__ import annotations

import numpy as np
import torch

from modlib import masks, results
from modlib.bridge import digit_surgery, digits, surgery_fresh
from modlib.bridge.experiment import CHAPTER, kept, train_mask
from modlib.bridge.surgery_target import NAMES, TARGETS, labels
from modlib.data import digits as digit_data
from modlib.resists_at_scale import controls, networks
from modlib.runtime import describe

RECIPE = "target-recipe-mnist"  # stored as target-recipe-mnist-seed<k>, one per recipe CNN
RESULT = "surgery-sized-mnist"  # stored as surgery-sized-mnist-seed<k>, one per fresh CNN
GRID = ((2, 1 / 9), (2, 1 / 27))  # (mask steps, penalty) as multiples of experiment 1's: denser than "use X2"'s
MASK_KEY = 96_000  # the target masks' seeds: MASK_KEY + 10 * CNN seed + the target's index in TARGETS
KEY = 97_000  # the random draws': KEY + 100 * CNN seed + 10 * part + draw (part 0: rule 2's random masks)
DRAWS = 3  # random draws per CNN: the size-matched removals (each target's) and rule 2's random masks
ARMS = ("full", "sub", "ablated_excl", "random_x2_excl", *(f"{t}_{k}" for t in TARGETS for k in ("excl", "sized")))
MASKS = ("y1", "x2", "excl", *TARGETS, *(f"{t}_{k}" for t in TARGETS for k in ("excl", "sized")))


def target_mask(d: digits.DigitSettings, net: torch.nn.Module, pools: dict, seed: int, target: str,
                point: tuple[float, float]) -> dict:
    """CNN ``seed``'s mask for ``target`` (:data:`TARGETS`), trained as the "use X2" mask is (its
    setting-B pairs, the categorical hinge) at the :data:`GRID` point ``point``, seed
    ``MASK_KEY + 10 * seed + i``."""
    x, t1, t2 = (t.to(next(net.parameters()).device) for t in digit_surgery.mask_pairs(d, pools, seed))
    steps, alpha = surgery_fresh.setting(d, point)
    return train_mask(net, x, labels(t1, t2, target), steps, alpha, d.mask_lr, d.mask_batch, d.samples,
                      seed=MASK_KEY + 10 * seed + list(TARGETS).index(target), loss_fn=networks.categorical_hinge)


def fits(d: digits.DigitSettings, net: torch.nn.Module, pools: dict, seed: int, found: dict) -> dict:
    """Each mask of ``found`` (``"x2"`` and targets of :data:`TARGETS`) scored at its own task on
    ``d.n_eval`` fresh setting-B pairs (:func:`modlib.bridge.digit_surgery.fit_pairs`' pairs)."""
    g = torch.Generator().manual_seed(digit_surgery.KEY + 1_000 + seed)
    fx, f1, f2 = pools["train"].sample(d.n_eval, digits.MASK_SETTING, "train", g)
    want = {"x2": f2, **{t: labels(f1, f2, t) for t in TARGETS}}
    return {m: digits.scored(net, found[m], "hard", {"fit": (fx, want[m])})["fit"] for m in found}


def sized(chosen: dict, like: dict, spare: dict, seed: int) -> dict:
    """A removal with as many weights per tensor as ``like`` (rule 2's), taken from ``chosen`` (a
    mask's weights outside the Y1 mask): a random subset of ``chosen`` where it holds more, all of it
    and random weights that neither ``chosen`` nor ``spare`` (the Y1 mask) keeps besides where it
    holds fewer. Drawn with ``seed``."""
    g = torch.Generator().manual_seed(seed)
    out = {}
    for k, c in chosen.items():
        n, flat = int(like[k].sum()), c.reshape(-1)
        take = torch.nonzero(flat).flatten()
        take = take[torch.randperm(take.numel(), generator=g)[:n]]
        free = torch.nonzero(~flat & ~spare[k].reshape(-1)).flatten()
        pad = free[torch.randperm(free.numel(), generator=g)[: n - take.numel()]]
        one = torch.zeros(flat.numel(), dtype=torch.bool)
        one[torch.cat([take, pad])] = True
        out[k] = one.reshape(c.shape)
    return out


# ---------------------------------------------------------------- 1. the target recipe

def compute_recipe(s: networks.ResistSettings, d: digits.DigitSettings, seed: int,
                   device: torch.device) -> tuple[dict, dict]:
    """Recipe CNN ``seed`` trained; each target's mask at each :data:`GRID` point. Arrays
    ``[T, G]`` (targets in :data:`TARGETS`' order): ``fit`` (its own task on fresh setting-B pairs),
    ``kept`` (pooled kept share); ``steps``, ``alpha`` ``[G]``."""
    pools, source = controls.pools()
    net, _, _ = digits.train_network(s, seed, pools, device)
    fit, share = [], []
    for t in TARGETS:
        found = [target_mask(d, net, pools, seed, t, point) for point in GRID]
        fit.append([fits(d, net, pools, seed, {t: m})[t] for m in found])
        share.append([kept(m)[0] for m in found])
    arrays = {"fit": np.array(fit), "kept": np.array(share),
              "steps": np.array([surgery_fresh.setting(d, p)[0] for p in GRID], dtype=float),
              "alpha": np.array([surgery_fresh.setting(d, p)[1] for p in GRID])}
    return {"seed": seed, "data": source, "fit": arrays["fit"].tolist()}, arrays


def fetch_recipe(profile: str, seed: int, device: torch.device) -> results.Result:
    """Load (or compute and store) ``target-recipe-mnist-seed<seed>`` at ``profile``."""
    return surgery_fresh.fetch_on_recipe(RECIPE, compute_recipe, "target recipe", {
        "mask_key": MASK_KEY, "grid": [list(p) for p in GRID], "targets": {t: list(v) for t, v in TARGETS.items()}},
        profile, seed, device)


def chosen(recipes: list[dict]) -> dict[str, tuple[float, float]]:
    """Per target of :data:`TARGETS`, the :data:`GRID` point the rule picks from the recipe CNNs'
    arrays ``recipes`` (each :func:`compute_recipe`'s): the larger penalty among the points whose fit
    reaches :data:`~modlib.bridge.surgery_fresh.AIM` on every CNN; where none does, the point whose
    worse fit is highest."""
    worst = np.min([r["fit"] for r in recipes], axis=0)  # [T, G]
    out = {}
    for i, t in enumerate(TARGETS):
        ok = [j for j in range(len(GRID)) if worst[i, j] >= surgery_fresh.AIM]
        out[t] = GRID[max(ok, key=lambda j: GRID[j][1])] if ok else GRID[int(np.argmax(worst[i]))]
    return out


def recipe_text(recipes: list[results.Result]) -> str:
    """The recipe CNNs' fits per target and :data:`GRID` point, and the points :func:`chosen` picks."""
    arrays = [r.arrays for r in recipes]
    pick = chosen(arrays)
    parts = []
    for i, t in enumerate(TARGETS):
        at = []
        for j, point in enumerate(GRID):
            per = ", ".join(f"{r['fit'][i, j]:.0%}" for r in arrays)
            at.append(f"at 1/{round(1 / point[1])} of experiment 1's penalty (α {arrays[0]['alpha'][j]:.2g}) "
                      f"fit {per}" + (" (chosen)" if point == pick[t] else ""))
        parts.append(f"{NAMES[t]}: {', '.join(at)}")
    seeds = " and ".join(str(int(r.config["seed"])) for r in recipes)
    said = f"on CNNs {seeds}, {int(arrays[0]['steps'][0])} mask steps, fit per CNN: " + "; ".join(parts)
    if (np.min([r["fit"] for r in arrays], axis=0) < surgery_fresh.AIM).all():
        said += (f". Neither penalty reaches {surgery_fresh.AIM:.0%} on both CNNs for either target, so each "
                 "target takes the one whose worse fit is higher")
    return said


# ---------------------------------------------------------------- 2. the fresh CNNs

def _mean(scores: list[dict]) -> dict:
    """Per set, the mean of the draws' ``scores``."""
    return {k: float(np.mean([one[k] for one in scores])) for k in scores[0]}


def measure(d: digits.DigitSettings, seed: int, net: torch.nn.Module, pools: dict, x2_point: tuple[float, float],
            points: dict) -> dict:
    """CNN ``seed``'s Y1 mask, "use X2" mask (at ``x2_point``) and each target's (at ``points[t]``),
    every arm of :data:`ARMS` scored on experiment 1's sets: ``{"scores": {arm: {set: acc}}, "kept":
    {mask: (pooled, [L])}, "fits": {mask: acc}}``. ``net`` (frozen) is left unchanged."""
    x, t1, _ = (t.to(next(net.parameters()).device) for t in digit_surgery.mask_pairs(d, pools, seed))
    y1 = train_mask(net, x, t1, d.mask_steps, d.alpha, d.mask_lr, d.mask_batch, d.samples,
                    seed=3 * seed, loss_fn=networks.categorical_hinge)  # experiment 1's
    found = {"x2": surgery_fresh.x2_mask(d, net, pools, seed, *surgery_fresh.setting(d, x2_point)),
             **{t: target_mask(d, net, pools, seed, t, points[t]) for t in TARGETS}}
    removed = {"excl": {k: found["x2"][k] & ~y1[k] for k in y1}}
    for t in TARGETS:
        removed[f"{t}_excl"] = {k: found[t][k] & ~y1[k] for k in y1}
    sets = digits.eval_sets(d, pools, seed)
    score = lambda m: digits.scored(net, m, "complement", sets)  # noqa: E731
    scores = {"full": digits.scored(net, None, "off", sets), "sub": digits.scored(net, y1, "hard", sets),
              "ablated_excl": score(removed["excl"])}
    randoms = [masks.random_like(found["x2"], KEY + 100 * seed + draw) for draw in range(DRAWS)]
    scores["random_x2_excl"] = _mean([score({k: r[k] & ~y1[k] for k in r}) for r in randoms])
    shares = {}
    for i, t in enumerate(TARGETS):
        scores[f"{t}_excl"] = score(removed[f"{t}_excl"])
        draws = [sized(removed[f"{t}_excl"], removed["excl"], y1, KEY + 100 * seed + 10 * (i + 1) + draw)
                 for draw in range(DRAWS)]
        scores[f"{t}_sized"] = _mean([score(m) for m in draws])
        shares[f"{t}_sized"] = kept(draws[0])  # every draw removes as many per tensor
    shares.update({m: kept(v) for m, v in (("y1", y1), *found.items(), *removed.items())})
    return {"scores": scores, "kept": shares, "fits": fits(d, net, pools, seed, found)}


def compute(s: networks.ResistSettings, d: digits.DigitSettings, seed: int, x2_point: tuple[float, float],
            points: dict, device: torch.device) -> tuple[dict, dict]:
    """Fresh CNN ``seed`` trained and measured (:func:`measure`). Arrays, one row each so that the
    CNNs' results stack (:func:`modlib.bridge.digit_surgery.stacked`): ``<arm>_<set> [1]`` for every
    arm of :data:`ARMS` and set of :data:`modlib.bridge.digits.SETS`; ``kept_<m> [1]`` and
    ``kept_<m>_layers [1, L]`` for every mask of :data:`MASKS`; ``<m>_fit [1]`` for the "use X2" mask
    and each target's; chapter 3's ``ch3_final_test``, ``ch3_final_train`` ``[1]``."""
    pools, source = controls.pools()
    net, _, numbers = digits.train_network(s, seed, pools, device)
    row = measure(d, seed, net, pools, x2_point, points)
    arrays = {f"{arm}_{k}": np.array([row["scores"][arm][k]], dtype=np.float32) for arm in ARMS for k in digits.SETS}
    for m in MASKS:
        arrays[f"kept_{m}"] = np.array([row["kept"][m][0]], dtype=np.float32)
        arrays[f"kept_{m}_layers"] = np.array([row["kept"][m][1]], dtype=np.float32)
    arrays.update({f"{m}_fit": np.array([v], dtype=np.float32) for m, v in row["fits"].items()})
    for k in ("final_test", "final_train"):
        arrays[f"ch3_{k}"] = np.array([float(numbers[k])], dtype=np.float32)
    return {"result": RESULT, "seed": seed, "data": source, "fits": row["fits"],
            "points": {t: list(p) for t, p in points.items()}}, arrays


def fetch(profile: str, seed: int, device: torch.device) -> results.Result:
    """Load (or compute and store) ``surgery-sized-mnist-seed<seed>`` at ``profile``: the "use X2"
    mask at the point the stored "use X2" recipe picks, each target's at the point the stored target
    recipe picks (:func:`chosen`; both computed first if missing)."""
    recipes = [fetch_recipe(profile, k, device).arrays for k in surgery_fresh.recipe_seeds(profile)]
    points = chosen(recipes)
    d, s, x2_point, steps, alpha = surgery_fresh.on_fresh(profile, seed, "sized target control", device)
    cfg = {**digits.config(s, d), "seed": seed, "key": KEY, "mask_key": MASK_KEY, "draws": DRAWS,
           "x2_steps": steps, "x2_alpha": alpha, "targets": {t: list(v) for t, v in TARGETS.items()},
           "points": {t: list(p) for t, p in points.items()}}
    return results.fetch(CHAPTER, f"{RESULT}-seed{seed}", cfg,
                         lambda: compute(s, d, seed, x2_point, points, device), profile=profile,
                         device=describe(device), code=compute, sources={"mnist": digit_data.available_sources()})


def recipe_names(profile: str) -> list[str]:
    """The target recipe's stored results at ``profile``, one per recipe CNN (none outside surgery_fresh's profiles)."""
    return surgery_fresh.names_on_recipe(RECIPE, profile)


def names(profile: str) -> list[str]:
    """The stored results on the fresh CNNs at ``profile``, in seed order."""
    return surgery_fresh.names_on_fresh(RESULT, profile)


def run(profile: str, device: torch.device) -> tuple[list[results.Result], list[results.Result]]:
    """``(recipes, fresh)`` at ``profile`` (:func:`fetch_recipe`, :func:`fetch`), in seed order; none
    outside :data:`~modlib.bridge.surgery_fresh.PROFILES`."""
    return surgery_fresh.run_with_recipe(fetch_recipe, fetch, profile, device)
