"""Chapter 7: rule 2 of the CNN surgery against masks for other targets, their removal matched in size
by the target mask's own ranking (issue 53; notebooks/bridge.ipynb, section "Rule 2 with masks for
other targets").

:mod:`modlib.bridge.surgery_sized` matches a target mask's removal to rule 2's count per tensor at
random: a random subset of the mask's weights outside the Y1 mask where they are more, random padding
outside the Y1 mask where they are fewer. A random subset is no longer the mask's choice, and the
padding may hit rule 2's own weights. Here nothing is drawn: per weight tensor the removal is the
``n`` weights outside the Y1 mask whose logits in the target's mask are highest (:func:`ranked`),
``n`` the count rule 2 removes there. Where the mask's own removal is larger, these are the weights it
is surest of; where it is smaller, all of it and the weights it came nearest to keeping.

The left digit's mask is :mod:`~modlib.bridge.surgery_sized`'s (its point and seed). The right
digit's mask named its target at 69% there, below the bar of 90%; its point here is chosen first, in
two steps as :mod:`modlib.bridge.surgery_fresh` chooses the "use X2" mask's recipe:

1. **The right-digit recipe** (``right5-recipe-mnist-seed<k>``, the recipe CNNs
   :func:`~modlib.bridge.surgery_fresh.recipe_seeds`): each CNN trained again; the right digit's
   mask at every point of :data:`GRID` and its fit. :func:`chosen` picks, by a rule written down
   before: the first point in :data:`GRID`'s order whose fit reaches
   :data:`~modlib.bridge.surgery_fresh.AIM` on every recipe CNN; where none does, the point whose
   worse fit is highest.
2. **The fresh CNNs** (``surgery-ranked-mnist-seed<k>``): each CNN, its Y1 and "use X2" masks as
   :func:`modlib.bridge.surgery_fresh.compute_fresh` trains them, each target's mask (with its
   logits, :func:`modlib.bridge.experiment.train_mask_scores`), and the arms: ``full``, ``sub``
   (the Y1 subnetwork), ``ablated_excl`` (rule 2), ``random_x2_excl`` (rule 2 with random masks of
   the "use X2" mask's counts per tensor, :data:`DRAWS` draws: what the mutations put in rule 2's
   place), ``<t>_excl`` (the target mask's weights outside the Y1 mask removed) and ``<t>_ranked``
   (:func:`ranked`'s removal). Besides: ``overlap_<t>``, the share of rule 2's removal that the
   ranked removal also removes, and ``own_<t>``, the share of the ranked removal the target mask
   itself keeps (the rest is the weights it came nearest to keeping).

About fifteen minutes of one core per CNN at ``full``. Computed at ``smoke`` (the tests) and ``full``.
"""

from __future__ import annotations

import numpy as np
import torch

from modlib import masks, results
from modlib.bridge import digit_surgery, digits, surgery_fresh, surgery_sized
from modlib.bridge.experiment import CHAPTER, kept, train_mask, train_mask_scores
from modlib.bridge.surgery_target import NAMES, TARGETS, labels
from modlib.data import digits as digit_data
from modlib.resists_at_scale import controls, networks
from modlib.runtime import describe

RECIPE = "right5-recipe-mnist"  # stored as right5-recipe-mnist-seed<k>, one per recipe CNN
RESULT = "surgery-ranked-mnist"  # stored as surgery-ranked-mnist-seed<k>, one per fresh CNN
RIGHT = "right5"  # the target whose point the recipe chooses; left5 keeps surgery_sized's
GRID = ((2, 1 / 81), (4, 1 / 81), (4, 1 / 243))  # (mask steps, penalty) as multiples of experiment 1's, in order
KEY = 98_000  # rule 2's random masks' seeds: KEY + 100 * CNN seed + draw
DRAWS = 3  # rule 2's random masks per CNN (the mutation "random mask as dense")
ARMS = ("full", "sub", "ablated_excl", "random_x2_excl", *(f"{t}_{k}" for t in TARGETS for k in ("excl", "ranked")))
MASKS = ("y1", "x2", "excl", *TARGETS, *(f"{t}_{k}" for t in TARGETS for k in ("excl", "ranked")))


def target_scores(d: digits.DigitSettings, net: torch.nn.Module, pools: dict, seed: int, target: str,
                  point: tuple[float, float]) -> tuple[dict, dict]:
    """CNN ``seed``'s mask for ``target`` (:data:`~modlib.bridge.surgery_target.TARGETS`) and its
    logits, trained as :func:`modlib.bridge.surgery_sized.target_mask` trains it (its pairs, loss and
    seed) at the point ``point``: ``(hard, scores)``."""
    x, t1, t2 = (t.to(next(net.parameters()).device) for t in digit_surgery.mask_pairs(d, pools, seed))
    steps, alpha = surgery_fresh.setting(d, point)
    return train_mask_scores(net, x, labels(t1, t2, target), steps, alpha, d.mask_lr, d.mask_batch, d.samples,
                             seed=surgery_sized.MASK_KEY + 10 * seed + list(TARGETS).index(target),
                             loss_fn=networks.categorical_hinge)


def ranked(scores: dict, like: dict, spare: dict) -> dict:
    """Per weight tensor, the ``like[k].sum()`` weights outside ``spare[k]`` (the Y1 mask) with the
    highest ``scores[k]`` (a target mask's logits), as bool tensors of the weights' shapes. ``like``:
    rule 2's removal, whose count per tensor is matched."""
    out = {}
    for k, s in scores.items():
        n, flat = int(like[k].sum()), s.reshape(-1).clone()
        flat[spare[k].reshape(-1)] = -torch.inf  # the Y1 mask's weights are never taken
        one = torch.zeros(flat.numel(), dtype=torch.bool)
        one[torch.topk(flat, n).indices] = True
        out[k] = one.reshape(s.shape)
    return out


def _share(part: dict, whole: dict) -> float:
    """The pooled share of ``whole``'s weights that ``part`` holds too (0 where ``whole`` is empty)."""
    total = sum(int(w.sum()) for w in whole.values())
    return sum(int((part[k] & w).sum()) for k, w in whole.items()) / total if total else 0.0


# ---------------------------------------------------------------- 1. the right digit's recipe

def compute_recipe(s: networks.ResistSettings, d: digits.DigitSettings, seed: int,
                   device: torch.device) -> tuple[dict, dict]:
    """Recipe CNN ``seed`` trained; the right digit's mask at each :data:`GRID` point. Arrays ``[G]``:
    ``fit`` (its own task on fresh setting-B pairs), ``kept`` (pooled kept share), ``steps``, ``alpha``."""
    pools, source = controls.pools()
    net, _, _ = digits.train_network(s, seed, pools, device)
    found = [target_scores(d, net, pools, seed, RIGHT, point)[0] for point in GRID]
    arrays = {"fit": np.array([surgery_sized.fits(d, net, pools, seed, {RIGHT: m})[RIGHT] for m in found]),
              "kept": np.array([kept(m)[0] for m in found]),
              "steps": np.array([surgery_fresh.setting(d, p)[0] for p in GRID], dtype=float),
              "alpha": np.array([surgery_fresh.setting(d, p)[1] for p in GRID])}
    return {"seed": seed, "data": source, "fit": arrays["fit"].tolist()}, arrays


def fetch_recipe(profile: str, seed: int, device: torch.device) -> results.Result:
    """Load (or compute and store) ``right5-recipe-mnist-seed<seed>`` at ``profile``."""
    return surgery_fresh.fetch_on_recipe(RECIPE, compute_recipe, "right-digit recipe", {
        "mask_key": surgery_sized.MASK_KEY, "grid": [list(p) for p in GRID], "target": [RIGHT, *TARGETS[RIGHT]]},
        profile, seed, device)


def chosen(recipes: list[dict]) -> tuple[float, float]:
    """The :data:`GRID` point the rule picks from the recipe CNNs' arrays ``recipes`` (each
    :func:`compute_recipe`'s): the first in :data:`GRID`'s order whose fit reaches
    :data:`~modlib.bridge.surgery_fresh.AIM` on every CNN; where none does, the one whose worse fit
    is highest."""
    worst = np.min([r["fit"] for r in recipes], axis=0)  # [G]
    ok = [i for i in range(len(GRID)) if worst[i] >= surgery_fresh.AIM]
    return GRID[ok[0]] if ok else GRID[int(np.argmax(worst))]


def recipe_text(recipes: list[results.Result]) -> str:
    """The recipe CNNs' fits at every :data:`GRID` point and the point :func:`chosen` picks, in words."""
    arrays = [r.arrays for r in recipes]
    pick = chosen(arrays)
    at = [f"{int(arrays[0]['steps'][j])} steps at 1/{round(1 / point[1])} of experiment 1's penalty "
          f"(α {arrays[0]['alpha'][j]:.2g}): fit " + ", ".join(f"{r['fit'][j]:.0%}" for r in arrays)
          + (" (chosen)" if point == pick else "") for j, point in enumerate(GRID)]
    seeds = " and ".join(str(int(r.config["seed"])) for r in recipes)
    said = f"the {NAMES[RIGHT]} on CNNs {seeds}: " + "; ".join(at)
    if (np.min([r["fit"] for r in arrays], axis=0) < surgery_fresh.AIM).all():
        said += f". No point reaches {surgery_fresh.AIM:.0%} on both CNNs, so the one whose worse fit is highest"
    return said


# ---------------------------------------------------------------- 2. the fresh CNNs

def measure(d: digits.DigitSettings, seed: int, net: torch.nn.Module, pools: dict, x2_point: tuple[float, float],
            points: dict) -> dict:
    """CNN ``seed``'s Y1 mask, "use X2" mask (at ``x2_point``) and each target's (at ``points[t]``),
    every arm of :data:`ARMS` scored on experiment 1's sets: ``{"scores": {arm: {set: acc}}, "kept":
    {mask: (pooled, [L])}, "fits": {mask: acc}, "overlap": {t: share}, "own": {t: share}}``. ``net``
    (frozen) is left unchanged."""
    x, t1, _ = (t.to(next(net.parameters()).device) for t in digit_surgery.mask_pairs(d, pools, seed))
    y1 = train_mask(net, x, t1, d.mask_steps, d.alpha, d.mask_lr, d.mask_batch, d.samples,
                    seed=3 * seed, loss_fn=networks.categorical_hinge)  # experiment 1's
    found = {"x2": surgery_fresh.x2_mask(d, net, pools, seed, *surgery_fresh.setting(d, x2_point))}
    logits = {}
    for t in TARGETS:
        found[t], logits[t] = target_scores(d, net, pools, seed, t, points[t])
    removed = {"excl": {k: found["x2"][k] & ~y1[k] for k in y1}}
    for t in TARGETS:
        removed[f"{t}_excl"] = {k: found[t][k] & ~y1[k] for k in y1}
        removed[f"{t}_ranked"] = ranked(logits[t], removed["excl"], y1)
    sets = digits.eval_sets(d, pools, seed)
    score = lambda m: digits.scored(net, m, "complement", sets)  # noqa: E731
    scores = {"full": digits.scored(net, None, "off", sets), "sub": digits.scored(net, y1, "hard", sets)}
    scores.update({arm: score(removed[arm.removeprefix("ablated_")]) for arm in ARMS
                   if arm.endswith(("_excl", "_ranked")) and arm != "random_x2_excl"})
    draws = [score({k: r[k] & ~y1[k] for k in r})
             for r in (masks.random_like(found["x2"], KEY + 100 * seed + i) for i in range(DRAWS))]
    scores["random_x2_excl"] = {k: float(np.mean([one[k] for one in draws])) for k in draws[0]}
    return {"scores": scores,
            "kept": {m: kept(v) for m, v in (("y1", y1), *found.items(), *removed.items())},
            "fits": surgery_sized.fits(d, net, pools, seed, found),
            "overlap": {t: _share(removed[f"{t}_ranked"], removed["excl"]) for t in TARGETS},
            "own": {t: _share(removed[f"{t}_excl"], removed[f"{t}_ranked"]) for t in TARGETS}}


def compute(s: networks.ResistSettings, d: digits.DigitSettings, seed: int, x2_point: tuple[float, float],
            points: dict, device: torch.device) -> tuple[dict, dict]:
    """Fresh CNN ``seed`` trained and measured (:func:`measure`). Arrays, one row each so that the
    CNNs' results stack (:func:`modlib.bridge.digit_surgery.stacked`): ``<arm>_<set> [1]`` for every
    arm of :data:`ARMS` and set of :data:`modlib.bridge.digits.SETS`; ``kept_<m> [1]`` and
    ``kept_<m>_layers [1, L]`` for every mask of :data:`MASKS`; ``<m>_fit [1]`` for the "use X2" mask
    and each target's; ``overlap_<t>``, ``own_<t>`` ``[1]`` per target; chapter 3's
    ``ch3_final_test``, ``ch3_final_train`` ``[1]``."""
    pools, source = controls.pools()
    net, _, numbers = digits.train_network(s, seed, pools, device)
    row = measure(d, seed, net, pools, x2_point, points)
    one = lambda v: np.array([v], dtype=np.float32)  # noqa: E731
    arrays = {f"{arm}_{k}": one(row["scores"][arm][k]) for arm in ARMS for k in digits.SETS}
    for m in MASKS:
        arrays[f"kept_{m}"] = one(row["kept"][m][0])
        arrays[f"kept_{m}_layers"] = one(row["kept"][m][1])
    arrays.update({f"{m}_fit": one(v) for m, v in row["fits"].items()})
    arrays.update({f"{k}_{t}": one(row[k][t]) for k in ("overlap", "own") for t in TARGETS})
    arrays.update({f"ch3_{k}": one(float(numbers[k])) for k in ("final_test", "final_train")})
    return {"result": RESULT, "seed": seed, "data": source, "fits": row["fits"], "overlap": row["overlap"],
            "points": {t: list(p) for t, p in points.items()}}, arrays


def points(profile: str, device: torch.device) -> dict[str, tuple[float, float]]:
    """Each target's point: the left digit's as :mod:`~modlib.bridge.surgery_sized`'s recipe picks
    it, the right digit's as this module's does (both computed first if missing)."""
    left = surgery_sized.chosen([surgery_sized.fetch_recipe(profile, k, device).arrays
                                 for k in surgery_fresh.recipe_seeds(profile)])
    right = chosen([fetch_recipe(profile, k, device).arrays for k in surgery_fresh.recipe_seeds(profile)])
    return {t: right if t == RIGHT else left[t] for t in TARGETS}


def fetch(profile: str, seed: int, device: torch.device) -> results.Result:
    """Load (or compute and store) ``surgery-ranked-mnist-seed<seed>`` at ``profile``: the "use X2"
    mask at the point the stored "use X2" recipe picks, each target's at :func:`points`'."""
    d, s, x2_point, steps, alpha = surgery_fresh.on_fresh(profile, seed, "ranked target control", device)
    at = points(profile, device)
    cfg = {**digits.config(s, d), "seed": seed, "key": KEY, "mask_key": surgery_sized.MASK_KEY, "draws": DRAWS,
           "x2_steps": steps, "x2_alpha": alpha, "targets": {t: list(v) for t, v in TARGETS.items()},
           "points": {t: list(p) for t, p in at.items()}}
    return results.fetch(CHAPTER, f"{RESULT}-seed{seed}", cfg, lambda: compute(s, d, seed, x2_point, at, device),
                         profile=profile, device=describe(device), code=compute,
                         sources={"mnist": digit_data.available_sources()})


def recipe_names(profile: str) -> list[str]:
    """The right-digit recipe's stored results at ``profile``, one per recipe CNN (none outside surgery_fresh's profiles)."""
    return surgery_fresh.names_on_recipe(RECIPE, profile)


def names(profile: str) -> list[str]:
    """The stored results on the fresh CNNs at ``profile``, in seed order."""
    return surgery_fresh.names_on_fresh(RESULT, profile)


def run(profile: str, device: torch.device) -> tuple[list[results.Result], list[results.Result]]:
    """``(recipes, fresh)`` at ``profile`` (:func:`fetch_recipe`, :func:`fetch`), in seed order; none
    outside :data:`~modlib.bridge.surgery_fresh.PROFILES`."""
    return surgery_fresh.run_with_recipe(fetch_recipe, fetch, profile, device)
