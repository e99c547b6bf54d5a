"""Chapter 4's protocol (notebooks/weight_masks.ipynb; Csordás et al. 2021, on the authors'
RobertCsordas/modules unless a docstring says otherwise): everything that decides a run
(:class:`MaskSettings`; :mod:`modlib.weight_masks.experiment` holds its values per profile), how
networks and masks are trained and scored, and the three experiments, each a function from
settings, seed and device to one stored result's metrics and arrays (the experiment module stores
them).
"""

from __future__ import annotations

import contextlib
import functools
from contextlib import contextmanager

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from modlib import masks, profiles, training
from modlib.data import digits
from modlib.models import mlp
from modlib.profiles import check_choice, check_int, check_range

CHANCE = {"addmul": 0.01, "double": 0.01, "cnn": 0.1}  # two digits right by guessing; one class of ten
CLIP = 1.0  # gradient-norm clip of every training step, network and mask (the authors' grad_clip)


@profiles.settings
class MaskSettings:
    """Everything that decides a run of the chapter; validated on construction."""

    seeds: int = 1
    hidden: tuple[int, ...] = (256, 256, 256, 256)
    base_steps: int = 3000
    double_steps: int = 6000
    mask_steps: int = 700
    batch: int = 128
    lr: float = 1e-3
    double_lr: float = 1e-3
    mask_lr: float = 1e-2
    alpha: float = 1e-4
    alpha_double: float = 4e-4
    samples: int = 4
    eval_n: int = 10_000
    sweep_alphas: tuple[float, ...] = (1e-5, 1e-3)
    sweep_shapes: tuple[tuple[int, ...], ...] = ()
    sweep_mask_steps: int = 300
    cnn_steps: int = 600
    cnn_mask_steps: int = 300
    cnn_alpha: float = 1e-4
    cnn_mask_lr: float = 1e-2

    def __post_init__(self):
        for name in ("seeds", "batch", "samples", "eval_n"):
            check_int(name, getattr(self, name), 1)
        for name in ("base_steps", "double_steps", "mask_steps", "sweep_mask_steps", "cnn_steps", "cnn_mask_steps"):
            check_int(name, getattr(self, name), 0)
        for name in ("lr", "double_lr", "mask_lr", "cnn_mask_lr"):
            check_range(name, getattr(self, name), 0.0, 1.0, open_low=True)
        for name in ("alpha", "alpha_double", "cnn_alpha"):
            check_range(name, getattr(self, name), 0.0, 1.0)
        for a in self.sweep_alphas:
            check_range("sweep_alphas", a, 0.0, 1.0)
        for shape in (self.hidden, *self.sweep_shapes):
            profiles.check_sequence("hidden" if shape is self.hidden else "sweep_shapes", shape)
            for h in shape:
                check_int("hidden" if shape is self.hidden else "sweep_shapes", h, 1)
        object.__setattr__(self, "sweep_shapes", tuple(tuple(h) for h in self.sweep_shapes))  # from JSON lists
        if self.batch % self.samples:
            raise ValueError(f"batch={self.batch} must be divisible by samples={self.samples}")




# --- training and scoring -----------------------------------------------------------------------


def digit_loss(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Cross-entropy over digits: ``out [B, 10 k]`` logits, ``y [B, k]`` digits."""
    return F.cross_entropy(out.reshape(-1, 10), y.reshape(-1))


@torch.no_grad()
def digit_accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor, digits: slice = slice(None)) -> float:
    """Share of problems whose selected ``digits`` are all right: ``x [N, ...]``, ``y [N, k]``."""
    pred = model(x).reshape(len(x), -1, 10).argmax(-1)
    return float((pred[:, digits] == y[:, digits]).all(1).float().mean())


def task_batches(task: str, batch: int, seed: int, device, ops=digits.OPS):
    g = torch.Generator().manual_seed(seed)
    while True:
        if task == "double":
            x, y = digits.double_addition(batch, generator=g)
        else:
            x, y, _ = digits.arithmetic(batch, ops, generator=g)
        yield x.to(device), y.to(device)


class Pairwise(nn.Module):
    """The double-addition FNN as Csordás et al. run it: once per pair, with the other pair's input
    digits set to zero, reading only that pair's output slot. ``x [N, 80]`` (digits of a, b, c, d)
    -> logits ``[N, 40]`` (the two digits of a + b, then of c + d). ``pairs`` lists the pairs run
    (the others' slots are zero): ``(0,)`` while a mask for pair 1 alone is trained."""

    def __init__(self, net: nn.Module):
        super().__init__()
        self.net = net
        self.pairs = (0, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = []
        for p in (0, 1):
            if p in self.pairs:
                alone = torch.zeros_like(x)
                alone[:, 40 * p:40 * (p + 1)] = x[:, 40 * p:40 * (p + 1)]
                out.append(self.net(alone)[:, 20 * p:20 * (p + 1)])
            else:
                out.append(x.new_zeros(len(x), 20))
        return torch.cat(out, dim=1)


@contextmanager
def only_pair(model: Pairwise, pair: int):
    """Within the block, ``model`` runs pair ``pair`` (0 or 1) only."""
    before, model.pairs = model.pairs, (pair,)
    try:
        yield model
    finally:
        model.pairs = before


def train_network(task: str, s: MaskSettings, seed: int, device) -> nn.Module:
    """Train the FNN of ``task`` ("addmul": an MLP ``[N, 42] -> [N, 20]``; "double": a
    :class:`Pairwise` MLP) with Adam on fresh batches, clipping the gradient norm at ``CLIP``. The
    last two networks trained are kept and returned again when only mask settings differ (the sweep
    and the notebook's exercise reuse seed 0's): the same weights, bit for bit, as training again;
    do not change them."""
    lr, steps = (s.double_lr, s.double_steps) if task == "double" else (s.lr, s.base_steps)
    return _network(task, tuple(s.hidden), s.batch, lr, steps, seed, device)


@functools.lru_cache(maxsize=2)
def _network(task: str, hidden: tuple, batch: int, lr: float, steps: int, seed: int, device) -> nn.Module:
    n_in, n_out = (80, 40) if task == "double" else (42, 20)
    with torch.random.fork_rng(devices=[]):  # initial weights from ``seed``; the caller's RNG is left alone
        torch.manual_seed(seed)
        model = mlp(n_in, hidden, n_out)
    model = (Pairwise(model) if task == "double" else model).to(device)
    training.adam(lambda x, y: digit_loss(model(x), y), model.parameters(), task_batches(task, batch, 1000 + seed, device),
                  steps=steps, lr=lr, clip=CLIP, desc=f"{task} network")
    return model.eval()


def train_mask(model: nn.Module, stream, loss_fn, steps: int, alpha: float, s: MaskSettings, seed: int,
               desc: str = "mask", lr: float | None = None, fixed: dict | None = None,
               logits: bool = False):
    """Train a Gumbel-sigmoid mask over ``model``'s weights (frozen) on batches from ``stream``;
    the batch is split across ``s.samples`` mask samples (each forward pass draws one, from a
    generator seeded with ``seed``, so the mask depends on nothing else). ``fixed``: logits (weight
    name -> tensor of its shape) copied into those weights' masks and not trained. Returns the hard
    mask (logit >= 0), and with ``logits=True`` also every mask's final logits (on the CPU). The model
    is left without masks however this ends (an error, Ctrl-C)."""
    ms = masks.attach(model, estimator="gumbel", alpha=alpha, seed=seed)
    try:
        fixed = fixed or {}
        unknown = sorted(set(fixed) - set(ms.names))
        if unknown:
            raise ValueError(f"fixed names {unknown}, which are not masked weights; they are {ms.names}")
        with torch.no_grad():
            for name, param in zip(ms.names, ms.parameters()):
                if name in fixed:
                    param.copy_(fixed[name])
        trained = [p for name, p in zip(ms.names, ms.parameters()) if name not in fixed]
        ms.mode = "train"

        def loss(x, y):
            return masks.sampled_loss(model, loss_fn, x, y, samples=s.samples) + ms.regularizer() / len(x)

        training.adam(loss, trained, stream, steps=steps, lr=lr or s.mask_lr, clip=CLIP, desc=desc)
        hard = ms.hard_masks()
        return (hard, {n: p.detach().cpu().clone() for n, p in zip(ms.names, ms.parameters())}) if logits else hard
    finally:
        ms.remove()


@contextmanager
def applied(model: nn.Module, mask: dict, mode: str = "hard"):
    """Within the block, ``model`` computes with the binary ``mask`` (``mode="hard"``) or with its
    complement (``"complement"``: the mask's weights removed)."""
    ms = masks.attach(model, estimator="gumbel")
    ms.set_masks(mask)
    ms.mode = mode
    try:
        yield model
    finally:
        ms.remove()


def score(model: nn.Module, mask: dict | None, evals: dict, *, complement: bool = False) -> dict:
    """Accuracy on each of ``evals`` (name -> (x, y, digit slice)) with ``mask`` (or its complement)
    applied; ``mask=None`` scores the plain model."""
    if mask is None:
        return {k: digit_accuracy(model, x, y, d) for k, (x, y, d) in evals.items()}
    with applied(model, mask, "complement" if complement else "hard"):
        return score(model, None, evals)


def ablation_table(model, named_masks: dict, evals: dict) -> np.ndarray:
    """``[1 + 2 len(named_masks), len(evals)]``: the plain model, then each mask alone and removed."""
    rows = [score(model, None, evals)]
    for mask in named_masks.values():
        rows += [score(model, mask, evals), score(model, mask, evals, complement=True)]
    return np.array([[row[k] for k in evals] for row in rows])


def random_controls(model, named_masks: dict, evals: dict, seed: int) -> np.ndarray:
    """``[2 len(named_masks), len(evals)]``: for each mask, a random mask with as many weights kept
    in each layer (:func:`modlib.masks.random_like`) alone and removed; the chance a learned mask's
    numbers must be read against."""
    rows = []
    for k, mask in enumerate(named_masks.values()):
        control = masks.random_like(mask, seed=seed + k)
        rows += [score(model, control, evals), score(model, control, evals, complement=True)]
    return np.array([[row[k] for k in evals] for row in rows])


# --- experiment 1: addition / multiplication ------------------------------------------------------

ROWS = ("full model", "+ mask", "+ mask removed", "× mask", "× mask removed")
CONTROL_ROWS = ("random + mask", "random + mask removed", "random × mask", "random × mask removed")
MASKS = ("+", "×", "both")


def op_evals(s: MaskSettings, seed: int, device) -> dict:
    g = torch.Generator().manual_seed(500 + seed)
    evals = {}
    for op in digits.OPS:
        x, y, _ = digits.arithmetic(s.eval_n, (op,), generator=g)
        evals[op] = (x.to(device), y.to(device), slice(None))
    return evals


def trained_op_masks(model, s: MaskSettings, seed: int, alpha: float, steps: int, device, which) -> dict:
    out = {}
    for name in which:
        ops = digits.OPS if name == "both" else (name,)
        stream = task_batches("addmul", s.batch, 2000 + seed, device, ops)
        out[name] = train_mask(model, stream, digit_loss, steps, alpha, s, seed=4000 + 10 * seed + MASKS.index(name),
                               desc=f"mask {name}, alpha {alpha:g}")
    return out


def _specialization(model, op_masks: dict, evals: dict, seed: int) -> dict:
    """``table [5, 2]`` (rows ROWS, columns + and *), ``control [4, 2]`` (rows CONTROL_ROWS) and
    per-layer ``iou [L]`` of the + and × masks."""
    pair = {op: op_masks[op] for op in digits.OPS}
    return {"table": ablation_table(model, pair, evals), "control": random_controls(model, pair, evals, 9000 + seed),
            "iou": np.array(list(masks.iou(op_masks["+"], op_masks["×"]).values()))}


def addmul(s: MaskSettings, seed: int, device) -> tuple[dict, dict]:
    """Train the network and the +, * and both masks; returns ``(metrics, arrays)`` with
    :func:`_specialization`'s arrays, per-layer ``iomin`` of the + and × masks, kept fractions
    ``kept [3, L]`` (+, *, both) and the first layer's masks ``first_layer [3, hidden[0], 42]``."""
    model = train_network("addmul", s, seed, device)
    evals = op_evals(s, seed, device)
    op_masks = trained_op_masks(model, s, seed, s.alpha, s.mask_steps, device, MASKS)
    layers = list(op_masks["+"])
    arrays = {
        **_specialization(model, op_masks, evals, seed),
        "iomin": np.array(list(masks.iomin(op_masks["+"], op_masks["×"]).values())),
        "kept": np.array([list(masks.kept_fraction(op_masks[k]).values()) for k in MASKS]),
        "first_layer": np.stack([op_masks[k][layers[0]].numpy() for k in MASKS]).astype(np.uint8),
    }
    return {"layers": layers, "rows": list(ROWS), "control_rows": list(CONTROL_ROWS), "ops": list(digits.OPS),
            "chance": CHANCE["addmul"]}, arrays


def sweep_point(s: MaskSettings, seed: int, device) -> tuple[dict, dict]:
    """One point of the alpha or shape sweep: the + and × masks, at ``s.alpha`` and trained for
    ``s.sweep_mask_steps`` steps, of the network of shape ``s.hidden`` and ``seed``; returns
    :func:`_specialization`'s arrays."""
    model = train_network("addmul", s, seed, device)
    op_masks = trained_op_masks(model, s, seed, s.alpha, s.sweep_mask_steps, device, digits.OPS)
    return {"layers": list(op_masks["+"]), "rows": list(ROWS), "control_rows": list(CONTROL_ROWS),
            "chance": CHANCE["addmul"]}, _specialization(model, op_masks, op_evals(s, seed, device), seed)


def sweep(res: dict, s: MaskSettings, key: str) -> dict:
    """The alpha sweep (``key="alpha"``) or the shape sweep (``"hidden"``) of seed 0 from :func:`run`'s
    results: ``{value: result}`` sorted by value (a shape as a tuple), each result with ``table [5, 2]``,
    ``control [4, 2]`` and ``iou [L]``. The point at the main setting is ``addmul-seed0`` itself when
    the sweep trains its masks as long as the main experiment (it would be the same computation);
    empty when the sweep was not run."""
    check_choice("key", key, ("alpha", "hidden"))
    points = {_point(r.config[key]): r for r in res["alpha" if key == "alpha" else "shape"]}
    if points and res["addmul"] and main_point_is_addmul(s):
        points.setdefault(_point(getattr(s, key)), res["addmul"][0])
    return dict(sorted(points.items(), key=lambda kv: (np.prod(kv[0]) if isinstance(kv[0], tuple) else kv[0])))


def _point(value):
    return tuple(value) if isinstance(value, (list, tuple)) else value


def sweep_arrays(points: dict) -> tuple[list, np.ndarray, np.ndarray]:
    """An alpha sweep from :func:`sweep` as arrays: ``(values, tables [P, 5, 2], iou [P, L])``."""
    runs = list(points.values())
    return list(points), np.stack([r.arrays["table"] for r in runs]), np.stack([r.arrays["iou"] for r in runs])


def main_point_is_addmul(s: MaskSettings) -> bool:
    """Whether a sweep's point at the main alpha or shape is ``addmul-seed0`` (its masks train as long)."""
    return s.sweep_mask_steps == s.mask_steps


# --- experiment 2: double addition (reuse) --------------------------------------------------------

PAIR_ROWS = ("full model", "both-pairs mask", "both-pairs mask removed", "pair-1 mask", "pair-1 mask removed",
             "pair-2 mask", "pair-2 mask removed")
PAIR_CONTROL_ROWS = ("random pair-1 mask", "random pair-1 mask removed", "random pair-2 mask",
                     "random pair-2 mask removed")
PAIR_MASKS = ("both pairs", "pair 1", "pair 2", "pair 1 again")


def double(s: MaskSettings, seed: int, device) -> tuple[dict, dict]:
    """The double-addition network (:class:`Pairwise`) and four masks: for both pairs, pair 1, pair
    2, and pair 1 again from another mask seed and batch order. Returns ``table [7, 2]`` (rows
    PAIR_ROWS, columns pair 1 and pair 2), ``control [4, 2]`` (PAIR_CONTROL_ROWS), per-layer ``iou``
    and ``iomin`` of the pair-1 and pair-2 masks, ``iou_same``/``iomin_same`` of the two pair-1 masks
    (how much two masks of one sub-task overlap), ``iou_random`` of random masks as dense as the
    pair-1 and pair-2 masks (overlap by chance), and kept fractions ``kept [4, L]`` (PAIR_MASKS)."""
    model = train_network("double", s, seed, device)
    g = torch.Generator().manual_seed(700 + seed)
    x, y = digits.double_addition(s.eval_n, generator=g)
    x, y = x.to(device), y.to(device)
    evals = {"pair 1": (x, y, slice(0, 2)), "pair 2": (x, y, slice(2, 4))}
    found = {}
    for k, name in enumerate(PAIR_MASKS):
        pair = {"pair 1": 0, "pair 2": 1, "pair 1 again": 0}.get(name)
        stream = task_batches("double", s.batch, 3000 + 10 * seed + (k == 3), device)
        if pair is None:  # both pairs, each in its own pass
            loss, scope = digit_loss, contextlib.nullcontext()
        else:  # one pair's pass, and its output slot
            loss = lambda o, t, p=pair: digit_loss(o[:, 20 * p:20 * (p + 1)], t[:, 2 * p:2 * (p + 1)])
            scope = only_pair(model, pair)
        with scope:
            found[name] = train_mask(model, stream, loss, s.mask_steps, s.alpha_double, s,
                                     seed=5000 + 10 * seed + k, desc=f"{name} mask")
    scored = {k: found[k] for k in ("both pairs", "pair 1", "pair 2")}
    pairs = {k: found[k] for k in ("pair 1", "pair 2")}
    random_masks = [masks.random_like(found[k], seed=8000 + 10 * seed + i) for i, k in enumerate(pairs)]
    arrays = {
        "table": ablation_table(model, scored, evals),
        "control": random_controls(model, pairs, evals, 9500 + seed),
        "iou": np.array(list(masks.iou(found["pair 1"], found["pair 2"]).values())),
        "iomin": np.array(list(masks.iomin(found["pair 1"], found["pair 2"]).values())),
        "iou_same": np.array(list(masks.iou(found["pair 1"], found["pair 1 again"]).values())),
        "iomin_same": np.array(list(masks.iomin(found["pair 1"], found["pair 1 again"]).values())),
        "iou_random": np.array(list(masks.iou(*random_masks).values())),
        "kept": np.array([list(masks.kept_fraction(found[k]).values()) for k in PAIR_MASKS]),
    }
    return {"layers": list(found["pair 1"]), "rows": list(PAIR_ROWS), "control_rows": list(PAIR_CONTROL_ROWS),
            "masks": list(PAIR_MASKS), "chance": CHANCE["double"]}, arrays


# --- experiment 3: class removal in a CNN ---------------------------------------------------------


def cnn() -> nn.Sequential:
    """A small CNN for 28x28 digits: ``[N, 1, 28, 28]`` -> logits ``[N, 10]``."""
    return nn.Sequential(nn.Conv2d(1, 16, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 3), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 5 * 5, 64), nn.ReLU(), nn.Linear(64, 10))


def cnn_layer_names(layers: list[str]) -> list[str]:
    """The masked layers of :func:`cnn` (``layers``: PyTorch's
    parameter names, "0.weight", ...) as a reader names them: "conv 1", "conv 2", "dense", and
    "output" for the last."""
    model = cnn()
    kinds = [type(model[int(name.split(".")[0])]).__name__ for name in layers]
    names, convs = [], 0
    for i, kind in enumerate(kinds):
        convs += kind == "Conv2d"
        names.append("output" if i == len(kinds) - 1 else f"conv {convs}" if kind == "Conv2d" else "dense")
    return names


def image_batches(x, y, batch: int, seed: int, keep: torch.Tensor):
    idx = torch.nonzero(keep).squeeze(1)
    g = torch.Generator().manual_seed(seed)
    while True:
        pick = idx[torch.randint(len(idx), (batch,), generator=g)]
        yield x[pick], y[pick]


@torch.no_grad()
def confusion(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> np.ndarray:
    """Row-normalised confusion matrix ``[10, 10]`` (row: true class, column: predicted)."""
    pred = model(x).argmax(1)
    m = torch.zeros(10, 10)
    m.index_put_((y.cpu(), pred.cpu()), torch.ones(len(y)), accumulate=True)
    return (m / m.sum(1, keepdim=True).clamp_min(1)).numpy()


def removal_accuracy(confusion: np.ndarray, random: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """From a ``confusion [11, 10, 10]`` of :func:`class_removal` (index 0: the reference, then the
    mask trained without class c), per class c ``[10]``: ``own``, the accuracy on c with c's mask
    applied; ``others``, the mean accuracy on the other classes then; ``reference``, the accuracy on
    c under the reference; and, given ``random [10, 10, 10]`` (``confusion_random``),
    ``random_own`` and ``random_others``, the same under the random masks as dense."""
    diag = np.stack([np.diag(m) for m in confusion])  # [11, 10]
    removed = diag[1:]
    out = {"own": np.diag(removed).copy(), "others": (removed.sum(1) - np.diag(removed)) / 9, "reference": diag[0]}
    if random is not None:
        rdiag = np.stack([np.diag(m) for m in random])  # [10, 10]
        out.update(random_own=np.diag(rdiag).copy(), random_others=(rdiag.sum(1) - np.diag(rdiag)) / 9)
    return out


def trained_cnn(s: MaskSettings, seed: int, x: torch.Tensor, y: torch.Tensor, device) -> nn.Module:
    """The CNN of ``seed`` (its initial weights from ``seed``; the caller's RNG is left alone),
    trained with Adam for ``s.cnn_steps`` steps on batches of 64 of the images ``x`` and labels
    ``y``, returned in eval mode."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = cnn().to(device)
    stream = image_batches(x, y, 64, seed, torch.ones_like(y, dtype=torch.bool))
    training.adam(lambda xb, yb: F.cross_entropy(model(xb), yb), model.parameters(), stream, steps=s.cnn_steps,
                  lr=s.lr, clip=CLIP, desc="CNN")
    return model.eval()


def class_removal(s: MaskSettings, seed: int, device) -> tuple[dict, dict]:
    """``confusion [11, 10, 10]``: the CNN under the mask trained on all classes (the reference),
    then under the mask trained without class c, whose output layer is the all-classes mask's
    (copied, not trained); ``confusion_random [10, 10, 10]``: under a random mask as dense as each of
    those, layer by layer; ``confusion_plain [10, 10]``: the CNN without a mask."""
    x, y, source = digits.mnist("train", quiet=True)  # the page names the source from metrics["data"]
    x_test, y_test, _ = digits.mnist("test", quiet=True)
    x, y, x_test, y_test = x.to(device), y.to(device), x_test.to(device), y_test.to(device)
    model = trained_cnn(s, seed, x, y, device)
    reference, logits = train_mask(model, image_batches(x, y, s.batch, 100, y >= 0), F.cross_entropy,
                                   s.cnn_mask_steps, s.cnn_alpha, s, seed=6000 + 100 * seed, desc="all classes",
                                   lr=s.cnn_mask_lr, logits=True)
    output = list(reference)[-1]  # the output layer's weight
    with applied(model, reference):
        mats = [confusion(model, x_test, y_test)]
    randoms = []
    for c in range(10):
        stream = image_batches(x, y, s.batch, 101 + c, y != c)
        mask = train_mask(model, stream, F.cross_entropy, s.cnn_mask_steps, s.cnn_alpha, s,
                          seed=6001 + 100 * seed + c, desc=f"without {c}", lr=s.cnn_mask_lr,
                          fixed={output: logits[output]})
        with applied(model, mask):
            mats.append(confusion(model, x_test, y_test))
        with applied(model, masks.random_like(mask, seed=7000 + c)):
            randoms.append(confusion(model, x_test, y_test))
    return {"data": source, "chance": CHANCE["cnn"]}, {
        "confusion": np.array(mats), "confusion_random": np.array(randoms),
        "confusion_plain": confusion(model, x_test, y_test)}
