"""Chapter 7: controls of the CNNs' cut that needs no mask (issue 53; notebooks/bridge.ipynb, section
"Controls of the cut").

:mod:`modlib.bridge.digit_cut` zeroes the dense layer's weights from the feature columns that read
only the right-hand digit, and that repairs the CNNs (more than rule 2 of the surgery, and more than
as many random dense weights). Three questions are left:

- **the left-only cut** (``cut-mnist-left``, every CNN of the cut, each trained again and cut both
  ways): the same cut's mirror image, the dense weights from the columns that read only the
  *left*-hand digit (columns 0-10 of 25 against 14-24: as many weights, the same shape, the other
  side);
- **the block at every offset** (``cut-mnist-shifted``, every CNN of the cut, each trained again):
  the cut's block of 11 columns moved one column at a time from the left edge (the mirror) to the
  right (the cut), so that the blocks that take in the three columns reading both halves, and those
  that leave a right-only column in place, are scored too;
- **rule 2 with the cut** (``surgery-cut-mnist-seed<k>``, one per fresh CNN of
  :mod:`modlib.bridge.surgery_fresh`, each trained again with its two masks, as that surgery trains
  them): the dense cut and rule 2's removal together, against the cut alone: whether the mask finds
  anything the cut leaves. Beside it, the same with rule 2's "use X2" mask replaced by random masks
  of its counts per tensor (the draws of :func:`modlib.bridge.digit_surgery.measure`), and where
  rule 2's dense-layer removal falls: its share in the right-only columns.

Computed at ``smoke`` (the tests) and ``full``; a CNN with its masks takes about five minutes of one
core at ``full``.
"""

from __future__ import annotations

import numpy as np
import torch

from modlib import masks, results
from modlib.bridge import digit_cut, digit_surgery, digits, surgery_fresh
from modlib.bridge.experiment import kept, train_mask
from modlib.resists_at_scale import controls, networks

LEFT = "cut-mnist-left"  # the left-only cut, every CNN of cut-mnist
COMBINED = "surgery-cut-mnist"  # rule 2 with the cut: surgery-cut-mnist-seed<k>, one per fresh CNN
PROFILES = ("smoke", "full")
FEATURES = (64, 11, 25)  # the last convolution's feature map (channels, rows, columns), flattened channel-major
ARMS = ("full", "sub", "ablated_excl", "cut_dense", "excl_cut", "random_x2_cut")  # sub: the Y1 subnetwork (its fit)
MASKS = ("y1", "x2", "excl", "excl_cut")  # kept shares stored


def left_cut(net: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The mirror image of :func:`modlib.bridge.digit_cut.dense_cut` (True: removed): the dense
    layer's weights from the feature columns whose receptive field lies wholly in the *left* half
    (column ``q`` of 25 goes to ``24 - q``: columns 0-10), as many as the right-only cut removes."""
    out = digit_cut.dense_cut(net)
    rows = out[digit_cut.DENSE].shape[0]
    out[digit_cut.DENSE] = out[digit_cut.DENSE].reshape(rows, *FEATURES).flip(-1).reshape(rows, -1)
    return out


LEFT_ARMS = ("full", "cut_dense", "cut_left")  # the full CNN, the right-only cut, its mirror image


def compute_left(s: networks.ResistSettings, d: digits.DigitSettings, cnns: list[int], device: torch.device
                 ) -> tuple[dict, dict]:
    """Each CNN of ``cnns`` trained again (as :func:`modlib.bridge.digit_cut.compute`) and scored
    whole, with the right-only cut and with its mirror image, all on the same CNN (a CNN trained on
    another CPU is not bit for bit ``cut-mnist``'s); arrays ``seed [C]`` and ``<arm>_<set> [C]`` for
    every arm of :data:`LEFT_ARMS` and set of :data:`modlib.bridge.digits.SETS`."""
    pools, source = controls.pools()
    rows = []
    for seed in cnns:
        net, _, _ = digits.train_network(s, seed, pools, device)
        sets = digits.eval_sets(d, pools, seed)
        rows.append({"full": digits.scored(net, None, "off", sets),
                     "cut_dense": digits.scored(net, digit_cut.dense_cut(net), "complement", sets),
                     "cut_left": digits.scored(net, left_cut(net), "complement", sets)})
    arrays = {"seed": np.array(cnns)}
    for arm in LEFT_ARMS:
        for k in digits.SETS:
            arrays[f"{arm}_{k}"] = np.array([row[arm][k] for row in rows], dtype=np.float32)
    return {"result": LEFT, "data": source}, arrays


def fetch_left(profile: str, device: torch.device) -> results.Result:
    """Load (or compute and store) ``cut-mnist-left`` at ``profile`` (the CNNs of ``cut-mnist``)."""
    columns = sorted(24 - q for q in digit_cut.right_columns())
    return digit_cut.fetch_over_cnns(profile, LEFT, compute_left, {"columns": columns}, device)


SHIFTED = "cut-mnist-shifted"  # the cut's block of 11 columns at every offset, every CNN of cut-mnist
OFFSETS = tuple(range(FEATURES[2] - 11 + 1))  # the block's first column: 0 (the mirror) to 14 (the cut)


def block_cut(net: torch.nn.Module, first: int) -> dict[str, torch.Tensor]:
    """A removal mask over :data:`modlib.bridge.digits.LAYERS` (True: removed) that removes the dense
    layer's weights from the block of 11 feature columns ``first`` to ``first + 10`` (every channel
    and row): :func:`modlib.bridge.digit_cut.dense_cut`'s block moved, as many weights (``first = 14``
    is that cut, ``first = 0`` its mirror image, :func:`left_cut`)."""
    out = digit_cut.dense_cut(net)
    rows = out[digit_cut.DENSE].shape[0]
    right = digit_cut.right_columns()
    out[digit_cut.DENSE] = out[digit_cut.DENSE].reshape(rows, *FEATURES).roll(first - right[0], -1).reshape(rows, -1)
    return out


def compute_shifted(s: networks.ResistSettings, d: digits.DigitSettings, cnns: list[int], device: torch.device
                    ) -> tuple[dict, dict]:
    """Each CNN of ``cnns`` trained again (as :func:`modlib.bridge.digit_cut.compute`) and scored whole
    and with :func:`block_cut` at every offset of :data:`OFFSETS`; arrays ``seed [C]``, ``full_<set>
    [C]`` and ``block_<set> [C, O]`` for every set of :data:`modlib.bridge.digits.SETS`."""
    pools, source = controls.pools()
    full, blocks = [], []
    for seed in cnns:
        net, _, _ = digits.train_network(s, seed, pools, device)
        sets = digits.eval_sets(d, pools, seed)
        full.append(digits.scored(net, None, "off", sets))
        blocks.append([digits.scored(net, block_cut(net, o), "complement", sets) for o in OFFSETS])
    arrays = {"seed": np.array(cnns), "offsets": np.array(OFFSETS)}
    for k in digits.SETS:
        arrays[f"full_{k}"] = np.array([f[k] for f in full], dtype=np.float32)
        arrays[f"block_{k}"] = np.array([[b[k] for b in row] for row in blocks], dtype=np.float32)
    return {"result": SHIFTED, "data": source}, arrays


def fetch_shifted(profile: str, device: torch.device) -> results.Result:
    """Load (or compute and store) ``cut-mnist-shifted`` at ``profile`` (the CNNs of ``cut-mnist``)."""
    return digit_cut.fetch_over_cnns(profile, SHIFTED, compute_shifted, {"offsets": list(OFFSETS)}, device)


def in_columns(removed: torch.Tensor, cut: torch.Tensor) -> float:
    """The share of the dense-layer weights ``removed [64, F]`` (bool) that lie where ``cut [64, F]``
    (bool, the right-only cut) does; NaN where nothing is removed."""
    n = int(removed.sum())
    return float((removed & cut).sum()) / n if n else float("nan")


def measure(d: digits.DigitSettings, seed: int, net: torch.nn.Module, pools: dict, point: tuple[float, float]
            ) -> dict:
    """CNN ``seed``'s Y1 mask and "use X2" mask (as :mod:`modlib.bridge.surgery_fresh` trains them,
    the latter at the :data:`~modlib.bridge.surgery_fresh.GRID` point ``point``) and every arm of
    :data:`ARMS` scored on experiment 1's sets: ``{"scores": {arm: {set: acc}}, "kept": {mask:
    (pooled, [L])}, "x2_fit": acc, "in_right": share}``; ``in_right``: the share of rule 2's
    dense-layer removal inside the right-only cut. ``net`` (frozen) is left unchanged."""
    x, t1, _ = (t.to(next(net.parameters()).device) for t in digit_surgery.mask_pairs(d, pools, seed))
    y1 = train_mask(net, x, t1, d.mask_steps, d.alpha, d.mask_lr, d.mask_batch, d.samples,
                    seed=3 * seed, loss_fn=networks.categorical_hinge)  # experiment 1's, as digit_surgery trains it
    x2 = surgery_fresh.x2_mask(d, net, pools, seed, *surgery_fresh.setting(d, point))
    cut = digit_cut.dense_cut(net)
    excl = {k: x2[k] & ~y1[k] for k in x2}  # rule 2's removal
    found = {"y1": y1, "x2": x2, "excl": excl, "excl_cut": {k: excl[k] | cut[k] for k in excl}}
    sets = digits.eval_sets(d, pools, seed)
    randoms = []  # rule 2 without its mask, with the cut: digit_surgery.measure's random "use X2" masks
    for draw in range(digit_surgery.X2_DRAWS):
        r = masks.random_like(x2, digit_surgery.KEY + 100 * seed + 10 + draw)
        randoms.append(digits.scored(net, {k: (r[k] & ~y1[k]) | cut[k] for k in r}, "complement", sets))
    scores = {"full": digits.scored(net, None, "off", sets), "sub": digits.scored(net, y1, "hard", sets),
              "ablated_excl": digits.scored(net, excl, "complement", sets),
              "cut_dense": digits.scored(net, cut, "complement", sets),
              "excl_cut": digits.scored(net, found["excl_cut"], "complement", sets),
              "random_x2_cut": {k: float(np.mean([r[k] for r in randoms])) for k in sets}}
    fit = digits.scored(net, x2, "hard", {"fit": digit_surgery.fit_pairs(d, pools, seed)})["fit"]
    return {"scores": scores, "kept": {m: kept(found[m]) for m in MASKS}, "x2_fit": fit,
            "in_right": in_columns(excl[digit_cut.DENSE], cut[digit_cut.DENSE])}


def compute_combined(s: networks.ResistSettings, d: digits.DigitSettings, seed: int, point: tuple[float, float],
                     device: torch.device) -> tuple[dict, dict]:
    """Fresh CNN ``seed`` trained and measured (:func:`measure`). Arrays, one row each so that the
    CNNs' results stack (:func:`modlib.bridge.digit_surgery.stacked`): ``<arm>_<set> [1]`` for every
    arm of :data:`ARMS` and set of :data:`modlib.bridge.digits.SETS`; ``kept_<m> [1]`` and
    ``kept_<m>_layers [1, L]`` for every mask of :data:`MASKS`; ``x2_fit [1]``; ``in_right [1]``;
    chapter 3's ``ch3_final_test``, ``ch3_final_train`` ``[1]``."""
    pools, source = controls.pools()
    net, _, numbers = digits.train_network(s, seed, pools, device)
    row = measure(d, seed, net, pools, point)
    arrays = {f"{arm}_{k}": np.array([row["scores"][arm][k]], dtype=np.float32) for arm in ARMS for k in digits.SETS}
    for m in MASKS:
        arrays[f"kept_{m}"] = np.array([row["kept"][m][0]], dtype=np.float32)
        arrays[f"kept_{m}_layers"] = np.array([row["kept"][m][1]], dtype=np.float32)
    arrays.update({k: np.array([row[k]], dtype=np.float32) for k in ("x2_fit", "in_right")})
    for k in ("final_test", "final_train"):
        arrays[f"ch3_{k}"] = np.array([float(numbers[k])], dtype=np.float32)
    return {"result": COMBINED, "seed": seed, "data": source, "x2_fit": row["x2_fit"],
            "in_right": row["in_right"]}, arrays


def fetch_combined(profile: str, seed: int, device: torch.device) -> results.Result:
    """Load (or compute and store) ``surgery-cut-mnist-seed<seed>`` at ``profile``: the "use X2" mask
    at the setting the stored recipe results pick (:func:`modlib.bridge.surgery_fresh.chosen`)."""
    return surgery_fresh.fetch_on_fresh(COMBINED, compute_combined, "rule 2 with the cut", lambda steps, alpha: {
        "key": digit_surgery.KEY, "x2_draws": digit_surgery.X2_DRAWS, "x2_steps": steps, "x2_alpha": alpha,
        "columns": digit_cut.right_columns()}, profile, seed, device)


def cut_share() -> float:
    """The share of the dense layer's weights the cut zeroes: its columns' share of the feature map's."""
    return len(digit_cut.right_columns()) / FEATURES[2]


def layer_sizes() -> np.ndarray:
    """``[L]``: the sizes of the CNN's masked weight tensors, :data:`modlib.bridge.digits.LAYERS` in order."""
    return np.array([p.numel() for k, p in networks.digit_cnn().named_parameters() if k in digits.LAYERS])


def beyond_cut(arrays: dict) -> np.ndarray:
    """``[C]``: how many weights rule 2's removal adds to the dense cut on each fresh CNN (``arrays``:
    the ``surgery-cut-mnist`` results stacked), from the kept share per weight tensor of the two
    removed together (``kept_excl_cut_layers [C, L]``) and the tensors' sizes, less the cut's own."""
    cut = int(digit_cut.dense_cut(networks.digit_cnn())[digit_cut.DENSE].sum())
    return np.rint(np.asarray(arrays["kept_excl_cut_layers"], dtype=float) @ layer_sizes()) - cut


def combined_names(profile: str) -> list[str]:
    """The rule-2-with-the-cut results at ``profile``: one per fresh CNN (none outside :data:`PROFILES`)."""
    return surgery_fresh.names_on_fresh(COMBINED, profile)


def run_combined(profile: str, device: torch.device) -> list[results.Result]:
    """Every fresh CNN's :func:`fetch_combined` at ``profile``, in seed order; none outside :data:`PROFILES`."""
    return surgery_fresh.run_on_fresh(fetch_combined, profile, device)
