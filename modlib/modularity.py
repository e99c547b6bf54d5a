"""Chapter "Are neural nets modular?" (Csordás et al. 2021): binary weight masks on frozen networks.

Three experiments, each stored with :func:`modlib.results.fetch`:

- addition/multiplication: an FNN learns "a + b" and "a * b" (mod 100); masks are trained for +
  only, for * only and for both; each mask and its complement (the ablation) is scored on both ops;
- double addition: an FNN computes two identical additions side by side; masks for pair 1 and
  pair 2 show whether the same weights do both (reuse);
- class removal: a small CNN on MNIST; for each class c a mask is trained on the other nine classes
  only, so that weights needed only by c are dropped; applying it shows what c loses.

Two sweeps repeat the first experiment's + and * masks for seed 0 at other regularisation strengths
and network widths, one stored result per point. ``python -m modlib.modularity`` computes them all
without the notebook (see :func:`main`).
"""

from __future__ import annotations

import argparse
import functools
import time
from contextlib import contextmanager

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from modlib import data, masks, profiles, results, training
from modlib.models import mlp
from modlib.profiles import check_choice, check_int, check_range, settings_for
from modlib.runtime import describe, pick_device

CHAPTER = "weight_masks"
CODE = "modlib.modularity"  # the code its stored results depend on (modlib.results.code_fingerprint)


@profiles.settings
class MaskSettings:
    """Everything that decides a run of the chapter; validated on construction."""

    seeds: int = 1
    width: int = 256
    depth: int = 4
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
    sweep_widths: tuple[int, ...] = ()
    sweep_mask_steps: int = 300
    cnn_steps: int = 600
    cnn_mask_steps: int = 300
    cnn_alpha: float = 1e-4
    cnn_mask_lr: float = 1e-2

    def __post_init__(self):
        for name in ("seeds", "width", "depth", "batch", "samples", "eval_n"):
            check_int(name, getattr(self, name), 1)
        for name in ("base_steps", "double_steps", "mask_steps", "sweep_mask_steps", "cnn_steps", "cnn_mask_steps"):
            check_int(name, getattr(self, name), 0)
        for name in ("lr", "double_lr", "mask_lr", "cnn_mask_lr"):
            check_range(name, getattr(self, name), 0.0, 1.0, open_low=True)
        for name in ("alpha", "alpha_double", "cnn_alpha"):
            check_range(name, getattr(self, name), 0.0, 1.0)
        for a in self.sweep_alphas:
            check_range("sweep_alphas", a, 0.0, 1.0)
        for w in self.sweep_widths:
            check_int("sweep_widths", w, 1)
        if self.batch % self.samples:
            raise ValueError(f"batch={self.batch} must be divisible by samples={self.samples}")


SETTINGS = {
    "smoke": MaskSettings(width=32, base_steps=60, double_steps=60, mask_steps=20, eval_n=500, sweep_alphas=(1e-3,),
                          sweep_mask_steps=10, cnn_steps=20, cnn_mask_steps=5),
    # A 256-wide network trained for 4k steps needs a larger learning rate than the paper's 1e-3
    # for + and * (the double-addition network learns well at 1e-3 and stalls above it), and masks
    # trained for 800 steps instead of 20k need a stronger regulariser to become sparse.
    "default": MaskSettings(lr=3e-3, base_steps=4000, alpha=2e-3, alpha_double=8e-3,
                            sweep_alphas=(1e-4, 1e-2), cnn_mask_steps=150, cnn_alpha=1e-2, cnn_mask_lr=5e-2),
    # the paper's scale: the 2000x4 FNN, 20k steps per network and per mask, 5 seeds (meant for a GPU)
    "full": MaskSettings(seeds=5, width=2000, lr=1e-3, base_steps=20_000, double_steps=20_000,
                         mask_steps=20_000,
                         sweep_alphas=(1e-5, 3e-5, 3e-4, 1e-3), sweep_widths=(400, 800, 4000),
                         sweep_mask_steps=20_000, cnn_steps=3000, cnn_mask_steps=2000),
}


def settings(profile: str | None = None) -> MaskSettings:
    return settings_for(SETTINGS, profile)


# --- training and scoring -----------------------------------------------------------------------


def digit_loss(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Cross-entropy over digits: ``out [B, 10 k]`` logits, ``y [B, k]`` digits."""
    return F.cross_entropy(out.reshape(-1, 10), y.reshape(-1))


@torch.no_grad()
def digit_accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor, digits: slice = slice(None)) -> float:
    """Share of problems whose selected ``digits`` are all right: ``x [N, ...]``, ``y [N, k]``."""
    pred = model(x).reshape(len(x), -1, 10).argmax(-1)
    return float((pred[:, digits] == y[:, digits]).all(1).float().mean())


def _batches(task: str, batch: int, seed: int, device, ops=data.OPS):
    g = torch.Generator().manual_seed(seed)
    while True:
        if task == "double":
            x, y = data.double_addition(batch, generator=g)
        else:
            x, y, _ = data.arithmetic(batch, ops, generator=g)
        yield x.to(device), y.to(device)


def train_network(task: str, s: MaskSettings, seed: int, device) -> nn.Module:
    """Train the FNN of ``task`` ("addmul" or "double") with Adam on fresh batches. The last two
    networks trained are kept and returned again when only mask settings differ (the sweep and the
    notebook's exercise reuse seed 0's); do not change their weights."""
    lr, steps = (s.double_lr, s.double_steps) if task == "double" else (s.lr, s.base_steps)
    return _network(task, s.width, s.depth, s.batch, lr, steps, seed, device)


@functools.lru_cache(maxsize=2)
def _network(task: str, width: int, depth: int, batch: int, lr: float, steps: int, seed: int, device) -> nn.Module:
    n_in, n_out = (80, 40) if task == "double" else (42, 20)
    with torch.random.fork_rng(devices=[]):  # initial weights from ``seed``; the caller's RNG is left alone
        torch.manual_seed(seed)
        model = mlp(n_in, [width] * depth, n_out).to(device)
    training.adam(lambda x, y: digit_loss(model(x), y), model.parameters(), _batches(task, batch, 1000 + seed, device),
                  steps=steps, lr=lr, desc=f"{task} network")
    return model.eval()


def train_mask(model: nn.Module, stream, loss_fn, steps: int, alpha: float, s: MaskSettings, seed: int,
               desc: str = "mask", lr: float | None = None) -> dict[str, torch.Tensor]:
    """Train a Gumbel-sigmoid mask over ``model``'s weights (frozen) on batches from ``stream``;
    the batch is split across ``s.samples`` mask samples (each forward pass draws one, from a
    generator seeded with ``seed``, so the mask depends on nothing else). Returns the hard mask
    (logit >= 0). The model is left without masks however this ends (an error, Ctrl-C)."""
    ms = masks.attach(model, estimator="gumbel", alpha=alpha, seed=seed)
    try:
        ms.mode = "train"

        def loss(x, y):
            return masks.sampled_loss(model, loss_fn, x, y, samples=s.samples) + ms.regularizer() / len(x)

        training.adam(loss, ms.parameters(), stream, steps=steps, lr=lr or s.mask_lr, clip=1.0, desc=desc)
        return ms.hard_masks()
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


# --- experiment 1: addition / multiplication ------------------------------------------------------

ROWS = ("full model", "+ mask", "+ mask removed", "* mask", "* mask removed")


def _op_evals(s: MaskSettings, seed: int, device) -> dict:
    g = torch.Generator().manual_seed(500 + seed)
    evals = {}
    for op in data.OPS:
        x, y, _ = data.arithmetic(s.eval_n, (op,), generator=g)
        evals[op] = (x.to(device), y.to(device), slice(None))
    return evals


def _specialization(model, op_masks: dict, evals: dict) -> np.ndarray:
    """Accuracy table ``[len(ROWS), 2]``: rows as in ROWS, columns + and *."""
    table = [score(model, None, evals)]
    for op in data.OPS:
        table += [score(model, op_masks[op], evals), score(model, op_masks[op], evals, complement=True)]
    return np.array([[row[op] for op in data.OPS] for row in table])


MASKS = ("+", "*", "both")


def _op_masks(model, s: MaskSettings, seed: int, alpha: float, steps: int, device, which) -> dict:
    out = {}
    for name in which:
        ops = data.OPS if name == "both" else (name,)
        stream = _batches("addmul", s.batch, 2000 + seed, device, ops)
        out[name] = train_mask(model, stream, digit_loss, steps, alpha, s, seed=4000 + 10 * seed + MASKS.index(name),
                               desc=f"mask {name}, alpha {alpha:g}")
    return out


def addmul(s: MaskSettings, seed: int, device) -> tuple[dict, dict]:
    """Train the network and the +, * and both masks; returns ``(metrics, arrays)`` with the
    specialization table ``table [5, 2]``, per-layer ``iou``/``iomin`` of the + and * masks, kept
    fractions ``kept [3, L]`` (+, *, both) and the first layer's masks ``first_layer [3, width, 42]``."""
    model = train_network("addmul", s, seed, device)
    evals = _op_evals(s, seed, device)
    op_masks = _op_masks(model, s, seed, s.alpha, s.mask_steps, device, ("+", "*", "both"))
    layers = list(op_masks["+"])
    arrays = {
        "table": _specialization(model, op_masks, evals),
        "iou": np.array(list(masks.iou(op_masks["+"], op_masks["*"]).values())),
        "iomin": np.array(list(masks.iomin(op_masks["+"], op_masks["*"]).values())),
        "kept": np.array([list(masks.kept_fraction(op_masks[k]).values()) for k in ("+", "*", "both")]),
        "first_layer": np.stack([op_masks[k][layers[0]].numpy() for k in ("+", "*", "both")]).astype(np.uint8),
    }
    return {"layers": layers, "rows": list(ROWS), "ops": list(data.OPS)}, arrays


def sweep_point(s: MaskSettings, seed: int, device) -> tuple[dict, dict]:
    """One point of the alpha or width sweep: the + and * masks, at ``s.alpha`` and trained for
    ``s.sweep_mask_steps`` steps, of the network of width ``s.width`` and ``seed``. Returns the
    specialization table ``table [5, 2]`` and per-layer IoU ``iou [L]`` of the two masks."""
    model = train_network("addmul", s, seed, device)
    op_masks = _op_masks(model, s, seed, s.alpha, s.sweep_mask_steps, device, ("+", "*"))
    return {"layers": list(op_masks["+"])}, {
        "table": _specialization(model, op_masks, _op_evals(s, seed, device)),
        "iou": np.array(list(masks.iou(op_masks["+"], op_masks["*"]).values())),
    }


def sweep(res: dict, s: MaskSettings, key: str) -> dict:
    """The alpha sweep (``key="alpha"``) or the width sweep (``"width"``) of seed 0 from :func:`run`'s
    results: ``{value: result}`` sorted by value, each result with ``table [5, 2]`` and ``iou [L]``.
    The point at the main setting is ``addmul-seed0`` itself when the sweep trains its masks as long
    as the main experiment (it would be the same computation); empty when the sweep was not run."""
    check_choice("key", key, ("alpha", "width"))
    points = {r.config[key]: r for r in res[key]}
    if points and res["addmul"] and _main_point_is_addmul(s):
        points.setdefault(getattr(s, key), res["addmul"][0])
    return dict(sorted(points.items()))


def sweep_arrays(points: dict) -> tuple[list, np.ndarray, np.ndarray]:
    """A sweep from :func:`sweep` as arrays: ``(values, tables [P, 5, 2], iou [P, L])``."""
    runs = list(points.values())
    return list(points), np.stack([r.arrays["table"] for r in runs]), np.stack([r.arrays["iou"] for r in runs])


def _main_point_is_addmul(s: MaskSettings) -> bool:
    """Whether a sweep's point at the main alpha or width is ``addmul-seed0`` (its masks train as long)."""
    return s.sweep_mask_steps == s.mask_steps


# --- experiment 2: double addition (reuse) --------------------------------------------------------

PAIR_ROWS = ("full model", "pair-1 mask", "pair-1 mask removed", "pair-2 mask", "pair-2 mask removed")


def double(s: MaskSettings, seed: int, device) -> tuple[dict, dict]:
    """Masks for pair 1 and pair 2 of the double-addition network: table ``[5, 2]`` (rows
    PAIR_ROWS, columns pair 1 and pair 2) and per-layer ``iou``/``iomin`` of the two masks."""
    model = train_network("double", s, seed, device)
    g = torch.Generator().manual_seed(700 + seed)
    x, y = data.double_addition(s.eval_n, generator=g)
    x, y = x.to(device), y.to(device)
    evals = {"pair 1": (x, y, slice(0, 2)), "pair 2": (x, y, slice(2, 4))}
    pair_masks = {}
    for i, (out, dig) in enumerate(((slice(0, 20), slice(0, 2)), (slice(20, 40), slice(2, 4))), start=1):
        loss = lambda o, t, out=out, dig=dig: digit_loss(o[:, out], t[:, dig])
        stream = _batches("double", s.batch, 3000 + seed, device)
        pair_masks[i] = train_mask(model, stream, loss, s.mask_steps, s.alpha_double, s, seed=5000 + 10 * seed + i,
                                   desc=f"pair-{i} mask")
    rows = [score(model, None, evals)]
    for i in (1, 2):
        rows += [score(model, pair_masks[i], evals), score(model, pair_masks[i], evals, complement=True)]
    arrays = {
        "table": np.array([[r["pair 1"], r["pair 2"]] for r in rows]),
        "iou": np.array(list(masks.iou(pair_masks[1], pair_masks[2]).values())),
        "iomin": np.array(list(masks.iomin(pair_masks[1], pair_masks[2]).values())),
        "kept": np.array([list(masks.kept_fraction(pair_masks[i]).values()) for i in (1, 2)]),
    }
    return {"layers": list(pair_masks[1]), "rows": list(PAIR_ROWS)}, arrays


# --- experiment 3: class removal in a CNN ---------------------------------------------------------


def cnn() -> nn.Sequential:
    """A small CNN for 28x28 digits: ``[N, 1, 28, 28]`` -> logits ``[N, 10]``."""
    return nn.Sequential(nn.Conv2d(1, 16, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 3), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 5 * 5, 64), nn.ReLU(), nn.Linear(64, 10))


def _image_batches(x, y, batch: int, seed: int, keep: torch.Tensor):
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


def removal_accuracy(confusion: np.ndarray) -> dict[str, np.ndarray]:
    """From :func:`class_removal`'s ``confusion [11, 10, 10]``, per class c ``[10]``: ``own``, the
    accuracy on c with c's mask applied; ``others``, the mean accuracy on the other classes then;
    ``plain``, the plain CNN's accuracy on c."""
    diag = np.stack([np.diag(m) for m in confusion])  # [11, 10]
    removed = diag[1:]
    return {"own": np.diag(removed).copy(), "others": (removed.sum(1) - np.diag(removed)) / 9, "plain": diag[0]}


def class_removal(s: MaskSettings, seed: int, device) -> tuple[dict, dict]:
    """``confusion [11, 10, 10]``: the plain CNN, then with the mask trained without class c;
    ``output_kept [10, 10]``: for each such mask, the share of each output unit's weights it keeps."""
    x, y, source = data.mnist("train")
    x_test, y_test, _ = data.mnist("test", quiet=True)
    x, y, x_test, y_test = x.to(device), y.to(device), x_test.to(device), y_test.to(device)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = cnn().to(device)
    stream = _image_batches(x, y, 64, seed, torch.ones_like(y, dtype=torch.bool))
    training.adam(lambda xb, yb: F.cross_entropy(model(xb), yb), model.parameters(), stream, steps=s.cnn_steps,
                  lr=s.lr, desc="CNN")
    model.eval()
    mats, output_kept = [confusion(model, x_test, y_test)], []
    for c in range(10):
        stream = _image_batches(x, y, s.batch, 100 + c, y != c)
        mask = train_mask(model, stream, F.cross_entropy, s.cnn_mask_steps, s.cnn_alpha, s, seed=6000 + 100 * seed + c,
                          desc=f"without {c}", lr=s.cnn_mask_lr)
        with applied(model, mask):
            mats.append(confusion(model, x_test, y_test))
        output_kept.append(mask[list(mask)[-1]].float().mean(1).numpy())  # [10]: output row kept share
    return {"data": source}, {"confusion": np.array(mats), "output_kept": np.array(output_kept)}


# --- the chapter's runs ---------------------------------------------------------------------------


# The settings each experiment depends on: a stored result stays valid while these are unchanged.
_NETWORK = ("width", "depth", "batch", "samples", "mask_lr", "eval_n")
USES = {
    "addmul": _NETWORK + ("lr", "base_steps", "alpha", "mask_steps"),
    "double": _NETWORK + ("double_lr", "double_steps", "alpha_double", "mask_steps"),
    "alpha": _NETWORK + ("lr", "base_steps", "alpha", "sweep_mask_steps"),
    "width": _NETWORK + ("lr", "base_steps", "alpha", "sweep_mask_steps"),
    "cnn": ("batch", "samples", "lr", "cnn_steps", "cnn_mask_steps", "cnn_alpha", "cnn_mask_lr"),
}
EXPERIMENTS = {"addmul": addmul, "double": double, "alpha": sweep_point, "width": sweep_point, "cnn": class_removal}


def jobs(s: MaskSettings) -> list[tuple[str, str, int, MaskSettings]]:
    """The chapter's stored results at settings ``s``: ``(experiment, result name, seed, settings)``,
    seed by seed (an interrupted run leaves whole seeds), the alpha sweep right after
    ``addmul-seed0`` (whose network it reuses), the CNN and the width sweep last. Sweep points at
    the main setting are left out when :func:`sweep` takes them from ``addmul-seed0``."""
    same = _main_point_is_addmul(s)
    alphas = [a for a in sorted({*s.sweep_alphas, s.alpha}) if not (same and a == s.alpha)] if s.sweep_alphas else []
    widths = [w for w in s.sweep_widths if not (same and w == s.width)]
    out = [(e, f"{e}-seed{k}", k, s) for k in range(s.seeds) for e in ("addmul", "double")]
    out[1:1] = [("alpha", f"alpha{a:g}-seed0", 0, s.with_(alpha=a)) for a in alphas]
    out += [("cnn", "cnn-seed0", 0, s)]
    out += [("width", f"width{w}-seed0", 0, s.with_(width=w)) for w in widths]
    return out


def names(profile: str) -> list[str]:
    """The names of the results a complete run at ``profile`` stores."""
    return [name for _, name, _, _ in jobs(settings(profile))]


def _config(job) -> dict:
    """A result's key: the settings its experiment uses, the experiment, the seed and, for the CNN,
    which digits it learns from (:func:`modlib.data.mnist_source`)."""
    experiment, _, seed, s = job
    extra = {"data": data.mnist_source()} if experiment == "cnn" else {}
    return {**{k: getattr(s, k) for k in USES[experiment]}, "experiment": experiment, "seed": seed, **extra}


def _fetch(job, profile: str, device) -> results.Result:
    experiment, name, seed, s = job
    return results.fetch(CHAPTER, name, _config(job), lambda: EXPERIMENTS[experiment](s, seed, device),
                         profile=profile, device=describe(torch.device(device)), code=CODE,
                         remake=f"python -m modlib.modularity --profile {profile} --only {name}")


def stored(profile: str, name: str) -> results.Result | None:
    """The result ``name`` of ``profile`` if it is stored and made with the profile's present
    settings, else ``None``; never computes (a page at one profile can show another's result)."""
    todo = {job[1]: job for job in jobs(settings(profile))}
    check_choice("name", name, todo)
    return results.load(CHAPTER, name, _config(todo[name]), profile=profile, code=CODE)


def run(profile: str, device, *, s: MaskSettings | None = None) -> dict[str, list[results.Result]]:
    """Load (or compute and store) every experiment of the chapter at ``profile``; returns
    ``{"addmul": [per seed], "double": [per seed], "alpha": [per alpha], "width": [per width],
    "cnn": [one]}`` (read the sweeps with :func:`sweep`). Each result is stored on its own, so an
    interrupted run loses at most the one in progress."""
    out = {name: [] for name in EXPERIMENTS}
    for job in jobs(s or settings(profile)):
        out[job[0]].append(_fetch(job, profile, device))
    return out


def main(argv: list[str] | None = None) -> None:
    """``python -m modlib.modularity --profile full [--stop-after SECONDS] [--only NAME ...]``: compute
    and store the chapter's results without the notebook, printing each one's wall time.
    ``--stop-after`` starts no result after that many seconds, so that a machine with a per-command
    time limit can make the full profile over several commands (each resumes where the last
    stopped); ``--only`` computes just the named results (say, the cheap ones on a CPU)."""
    parser = argparse.ArgumentParser(prog="python -m modlib.modularity", description=main.__doc__)
    parser.add_argument("--profile", default=None, help="smoke, default or full (default: $MODLIB_PROFILE or default)")
    parser.add_argument("--stop-after", type=float, default=None, metavar="SECONDS")
    parser.add_argument("--only", nargs="+", default=None, metavar="NAME",
                        help="compute only these results (e.g. cnn-seed0 width400-seed0)")
    args = parser.parse_args(argv)
    try:
        profile = profiles.resolve(args.profile)
    except ValueError as err:
        parser.error(str(err))
    if args.stop_after is not None and args.stop_after < 0:
        parser.error(f"--stop-after={args.stop_after} is not valid; it must be >= 0 seconds")
    todo = jobs(settings(profile))
    if args.only:
        valid = [job[1] for job in todo]
        for name in args.only:
            if name not in valid:
                parser.error(f"--only {name!r} is not a result of profile {profile}; choose from {', '.join(valid)}")
        todo = [job for job in todo if job[1] in args.only]
    device, start = pick_device(), time.perf_counter()
    for k, job in enumerate(todo):
        if args.stop_after is not None and time.perf_counter() - start > args.stop_after:
            print(f"stopped after {time.perf_counter() - start:.0f} s: {len(todo) - k} of {len(todo)} results left")
            return
        began = time.perf_counter()
        r = _fetch(job, profile, device)
        print(f"{r.name:<18} {time.perf_counter() - began:8.1f} s now; computed in {r.meta['wall_time_s']:.1f} s "
              f"on {r.meta['device']} ({r.meta['created']})", flush=True)
    asked = "asked for " if args.only else ""
    print(f"all {len(todo)} results {asked}of {CHAPTER} at profile {profile} are stored")


if __name__ == "__main__":
    main()
