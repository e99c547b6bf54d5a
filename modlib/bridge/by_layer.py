"""Rule 2 of chapter 7's surgery, layer by layer (notebooks/bridge.ipynb, "Surgery"; issue 53): a
reading after the results, no claim. Rule 2 removes the "use X2" weights the Y1 mask does not keep.
Here that removal is split into its first layer (the weights from the inputs, where x2 enters) and
its hidden layers (every later weight tensor), and each part is removed alone, beside as many random
weights per layer drawn like it from outside the Y1 mask (:func:`modlib.bridge.experiment.outside`),
so that the page can say which part carries the repair and whether the first-layer part is the cut
of the x2 input weights. Scored from the stored networks and masks: nothing is trained or stored.
"""
from __future__ import annotations

import numpy as np

from modlib import stats
from modlib.bridge import experiment as ex
from modlib.bridge import findings
from modlib.redundant_input_toy import experiment as toy

PARTS = ("first", "hidden")  # the first weight tensor; every later one
DRAWS = ex.DRAWS  # random removals per network and part (their scores averaged), as rule 2's control
KEY = 90_000  # their seeds: KEY + DRAWS * seed + draw (apart from every stored control's)
SETS = ("held_out", "train")
X2 = 1  # the first layer's input column of x2 (the column chapter 1's ``zero_x2`` zeroes)


def split(mask: dict) -> dict[str, dict]:
    """``mask`` (weight name -> bool tensor, in the network's order) as ``{"first": ..., "hidden":
    ...}``: the same tensors, the first kept only in ``"first"``, the others only in ``"hidden"``."""
    names = list(mask)
    return {"first": {k: m if k == names[0] else m & False for k, m in mask.items()},
            "hidden": {k: m & False if k == names[0] else m for k, m in mask.items()}}


def by_layer(s: toy.ToySettings, arrays: dict, formulation: str, first: int = 0) -> dict[str, np.ndarray]:
    """Per stored network of ``arrays`` (one stored result of :func:`~modlib.bridge.experiment.compute`,
    its seeds from ``first``), accuracies ``[S]`` with rule 2's removal cut to one part of
    :data:`PARTS`, keyed ``"{part}_{set}"``, and with as many random weights per layer from outside
    the Y1 mask, ``"random_{part}_{set}"`` (:data:`DRAWS` draws averaged), for the sets of
    :data:`SETS`; ``"kept_{part}"`` ``[S]``, the share of the masked weights each part removes; and
    ``"from_x2"``, ``"from_x1"`` ``[S]``, the share of the first layer's weights from x2 (from x1)
    that the first-layer part removes."""
    out: dict[str, list] = {}
    for seed, net, sets, y1, x2 in ex.surgery_inputs(s, arrays, formulation, first):
        rule2 = {k: x2[k] & ~y1[k] for k in x2}
        for part, removed in split(rule2).items():
            own = ex.scored(net, removed, "complement", sets)
            draws = [ex.scored(net, ex.outside(removed, y1, KEY + DRAWS * seed + d), "complement", sets)
                     for d in range(DRAWS)]
            for k in SETS:
                out.setdefault(f"{part}_{k}", []).append(own[k])
                out.setdefault(f"random_{part}_{k}", []).append(float(np.mean([r[k] for r in draws])))
            out.setdefault(f"kept_{part}", []).append(ex.kept(removed)[0])
        inputs = next(iter(rule2.values()))  # [hidden, 2]: the first layer's weights from x1, x2
        out.setdefault("from_x2", []).append(inputs[:, X2].float().mean().item())
        out.setdefault("from_x1", []).append(inputs[:, 1 - X2].float().mean().item())
    return {k: np.array(v, dtype=np.float32) for k, v in out.items()}


# what the page prints: (key, arm, the arm it is measured against), each a change of the score
READINGS = (("first", "first", "full"), ("hidden", "hidden", "full"), ("random_hidden", "random_hidden", "full"),
            ("first-cut", "first", "zero_x2"), ("hidden-random", "hidden", "random_hidden"),
            ("rest", "ablated_excl", "first"))


def readings(arrays: dict) -> dict[str, str]:
    """The page's words for one formulation's ``arrays`` (:func:`~modlib.bridge.experiment.with_exclusive`'s,
    with :func:`by_layer`'s added), over its failing networks (:func:`modlib.bridge.findings.failing`):
    per key of :data:`READINGS`, the mean change of the score (the worse of held-out and training
    accuracy) from the second arm to the first, in points, with its 95% t interval ("+13 points (+10
    to +16)"); ``"from_x2"``, ``"from_x1"``, the median shares of the weights from each input that
    the first-layer part removes. Fewer than two failing networks: every value says so."""
    fail = findings.failing(arrays)
    if fail.sum() < 2:
        return {k: "– (fewer than 2 failing networks at this profile)"
                for k in [r[0] for r in READINGS] + ["from_x2", "from_x1"]}
    out = {}
    for key, arm, against in READINGS:
        m, lo, hi = stats.t_interval((findings.both(arrays, arm) - findings.both(arrays, against))[fail])
        out[key] = f"{stats.points(m)} points ({stats.points(lo)} to {stats.points(hi)})"
    for side in ("from_x2", "from_x1"):
        out[side] = f"{np.median(arrays[side][fail]):.0%}"
    return out
