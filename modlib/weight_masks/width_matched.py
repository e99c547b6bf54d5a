"""Chapter 4: the width curve at matched density (issue 52; its claim ``width-spares-matched`` is
registered before these results were computed, and the page decides it from the results stored).

The width curve compares networks 256 to 2048 wide at one α, and their masks thin as the width grows
(the + mask keeps about 14 % of the 256×2 network's weights and 0.5 % of the 2048×2's). A random removal
as dense as a mask spares more the sparser it is, so "a wider network's removal spares the other
operation more than a random one" compares densities as well as widths. Here the narrow end is made as
dense as the wide one instead: for each operation, the 256×2 network's mask α is searched until the
mask keeps the share of all the network's weights that the same seed's mask of that operation keeps in
the 1024×2 network at α 1e-4 (the stored α curve's networks, ``alphacurve0.0001-seed<k>``: the wide
end, at a density a 256×2 mask can reach; the 2048×2 masks are too sparse for one and too slow to
train denser here).

The search is chapter 5's (:func:`~modlib.structural_compositionality.untrained_matched.match_lam`,
reused: factors of 3 from the profile's α until the target is bracketed, then bisection, at most 5
masks, stopping within a factor of 1.2), reading the kept share only. The mask at the chosen α is then
trained and scored as every point of the width curve is (:func:`~modlib.weight_masks.causes.op_point`,
one operation per result, so that :func:`~modlib.weight_masks.causes.point` pairs the two). One result
per operation and network, ``narrow256x2-{add,mul}-seed<k>``.
"""

from __future__ import annotations

import numpy as np
import torch

from modlib import masks, results
from modlib.runtime import describe
from modlib.structural_compositionality import untrained_matched as um
from modlib.weight_masks import causes
from modlib.weight_masks import experiment as ex
from modlib.weight_masks.protocol import train_network, trained_op_masks

CLAIMS = ("width-spares-matched", "width-spares-matched-512")  # the claim of each narrow end (narrows), in order
MATCHED = 1.5  # the check the claim reads: each narrow mask's kept share within this factor of its target
PROFILES = ("smoke", "full")  # computed at smoke (the tests) and full


def narrows(profile: str) -> list[tuple[int, ...]]:
    """The narrow ends at ``profile``, their α searched: the width curve's two narrowest shapes (full:
    256×2, the claim width-spares-matched; 512×2, width-spares-matched-512, registered once the
    256×2 networks were seen not to train to the width curve's bar)."""
    c = ex.causes_settings(profile)
    return [(w,) * c.depth for w in sorted(c.widths)[:2]]


def wide_alpha(profile: str) -> float:
    """The wide end's α: the α curve's weakest (full: 1e-4), on the main network (full: 1024×2)."""
    return min(ex.causes_settings(profile).alphas)


def wide_name(profile: str, seed: int) -> str:
    """The stored wide network of ``seed``: the α curve's point at :func:`wide_alpha`."""
    return f"alphacurve{wide_alpha(profile):g}-seed{seed}"


def name(hidden, op: str, seed: int) -> str:
    """The stored result's name: ``narrow256x2-add-seed0`` for the narrow shape ``hidden`` (not
    ``width...``: the width curve's claims read every result named so)."""
    return f"narrow{ex.shape_name(hidden)}-{causes.OP_NAMES[op]}-seed{seed}"


def seeds(profile: str) -> range:
    """The networks: those of the α curve at ``profile`` (none outside :data:`PROFILES`)."""
    c = ex.causes_settings(profile)
    return range(c.seeds) if profile in PROFILES and c.alphas and c.widths else range(0)


def share(found: dict, hidden) -> float:
    """The share of all the network's masked weights that a mask (``found``: ``{layer: bool mask}``)
    keeps, pooled over layers as :func:`~modlib.weight_masks.causes.point` pools ``share``."""
    sizes = causes.mask_sizes("addmul", hidden)
    return float(np.array(list(masks.kept_fraction(found).values())) @ sizes / sizes.sum())


def targets(wide: results.Result) -> dict[str, float]:
    """Per operation, the share of the weights the wide network's mask keeps (``wide``: its stored
    α-curve result, both masks)."""
    sizes = causes.mask_sizes("addmul", wide.config["hidden"])
    kept = wide.arrays["kept"] @ sizes / sizes.sum()  # [2]: + and ×
    return {op: float(kept[i]) for i, op in enumerate(wide.metrics["ops"])}


def study(op: str, seed: int, s, device, target: float) -> tuple[dict, dict]:
    """The narrow network of ``seed`` (``s``: the profile's settings at a narrow shape), the α of
    ``op``'s mask searched for the kept share ``target``, and the mask at that α scored as a point of
    the width curve (:func:`~modlib.weight_masks.causes.op_point`'s metrics and arrays), with
    ``target_kept``, ``alpha``, the search's ``probes`` (``lam``: the α tried, ``kept``) and whether
    its kept share is ``matched`` (:data:`MATCHED`)."""
    model = train_network("addmul", s, seed, device)

    def probe(alpha: float) -> dict:
        found = trained_op_masks(model, s, seed, alpha, s.mask_steps, device, (op,))
        return {"kept": share(found[op], s.hidden)}

    alpha, probes = um.match_lam(probe, s.alpha, target)
    metrics, arrays = causes.op_point(s.with_(alpha=alpha), seed, device, ops=(op,))
    sizes = causes.mask_sizes("addmul", s.hidden)
    kept = float(arrays["kept"][0] @ sizes / sizes.sum())
    metrics.update(target_kept=target, alpha=alpha, probes=probes, kept=kept,
                   matched=um.ratio(kept, target) <= MATCHED)
    return metrics, arrays


def fetch(profile: str, hidden, op: str, seed: int, device) -> results.Result:
    """Load (or compute, after the wide network of ``seed``, and store) ``op``'s mask in the narrow
    network of shape ``hidden`` (one of :func:`narrows`)."""
    if seed not in seeds(profile):
        raise ValueError(f"seed={seed}; the networks at profile {profile!r} are {list(seeds(profile))}")
    job = {j[1]: j for j in ex.all_jobs(profile)}[wide_name(profile, seed)]
    wide = ex.fetch_job(job, profile, device)  # the wide network: loaded, or computed first
    if tuple(hidden) not in narrows(profile):
        raise ValueError(f"hidden={hidden}; the narrow ends at profile {profile!r} are {narrows(profile)}")
    s = ex.settings(profile).with_(hidden=tuple(hidden))
    target = targets(wide)[op]
    config = {**ex._config(("width", name(hidden, op, seed), seed, ex.Point(s, (("ops", [op]),)))),
              "target_kept": target, "step": um.STEP, "probes": um.PROBES, "close": um.CLOSE, "matched": MATCHED}
    return results.fetch(ex.CHAPTER, name(hidden, op, seed), config, lambda: study(op, seed, s, torch.device(device), target),
                         profile=profile, device=describe(torch.device(device)), code=study, depends=[wide])


def stored(profile: str) -> dict[str, results.Result]:
    """The results stored now at ``profile`` by name, every narrow end's (nothing computed)."""
    out = {}
    for hidden in narrows(profile):
        for k in seeds(profile):
            for op in causes.OP_NAMES:
                with results.store_only():
                    try:
                        out[name(hidden, op, k)] = fetch(profile, hidden, op, k, "cpu")
                    except (results.StaleResultError, ValueError):
                        continue
    return out


def points(profile: str, hidden, found: dict[str, results.Result]) -> tuple[list[dict], list[dict]]:
    """The two ends as the width curve reads its points (:func:`~modlib.weight_masks.causes.point`,
    with ``seed`` and, for the narrow end, ``matched``): the narrow networks of shape ``hidden`` with
    both masks stored, and the wide networks of the same seeds."""
    narrow, wide = [], []
    for k in seeds(profile):
        parts = [found.get(name(hidden, op, k)) for op in causes.OP_NAMES]
        big = ex.stored(profile, wide_name(profile, k))
        if None in parts or big is None:
            continue
        narrow.append({**causes.point(parts), "seed": np.float64(k),
                       "matched": np.float64(all(p.metrics["matched"] for p in parts))})
        wide.append({**causes.point([big]), "seed": np.float64(k)})
    return narrow, wide


__all__ = ["CLAIMS", "MATCHED", "PROFILES", "narrows", "wide_alpha", "wide_name", "name", "seeds", "share", "targets", "study",
           "fetch", "stored", "points"]
