"""Chapter 7, the bridge (notebooks/bridge.ipynb): does structure found by masks predict, or repair,
compositional generalization? Experiments 1 and 2 on chapter 1's redundant-input toy.

The networks are chapter 1's, retrained by chapter 1's own pieces (its data per member, its initial
weights per seed, its Playground clock, its squared loss and learning rate;
:mod:`modlib.redundant_input_toy`): the ReLU networks of the paper's setting (the binary design,
reveal 1: X2 fully predicts Y1 = 0 in training), both formulations, ``toy.settings(profile)``'s seeds
and epochs. Then, per network, frozen:

1. **Is the compositional solution already inside?** A binary weight mask (:mod:`modlib.masks`,
   Csordás et al.'s Gumbel-sigmoid estimator) is trained to compute Y1 on *unconfounded* data:
   chapter 1's reveal-0 control, in which the four cells (Y1, Y2) are equally common and X2 carries no
   information about Y1. Those data contain points of the held-out cell (1, 1) (not the test points),
   so the experiment asks whether a subnetwork that computes Y1 on the whole cross *exists* inside the
   trained weights, not whether a mask finds it without seeing that cell. The subnetwork is scored on
   the network's own held-out test points against the full network and against a random subnetwork
   with as many weights per layer; the same mask is trained on the network's *initial* (untrained)
   weights as the control for "built by gradient descent".
2. **Surgery.** A mask for "use X2" is trained on the same unconfounded data to compute the X2 rule
   the confounded training data teach ("Y1 = 1 only where Y2 = 0", target 1 - Y2). Its weights are
   removed from the trained network (the mask's complement kept) and the held-out accuracy measured
   before and after, against removing a random set of the same size per layer, and against the
   surgery no mask is needed for: the first layer's weights from x2 set to zero (chapter 1's
   ``zero_x2``).

One stored result per formulation (``toy-a``, ``toy-b``): the networks of every seed and all their
masks. Every mask is read with its kept share (the share of the masked weights it keeps).

The chapter's claims were written down after those results were seen. Their confirmatory copies
(issue 53) read the same experiments on networks nobody had seen when the copies were registered:
:func:`fresh` settings, the next ``seeds`` seeds (at ``full`` seeds 100-199), stored as
``toy-a-fresh`` and ``toy-b-fresh`` (and ``rule2-random-<f>-fresh``), at the profiles of
:data:`FRESH_PROFILES`.
"""

from __future__ import annotations

import copy
from dataclasses import asdict

import numpy as np
import torch

from modlib import masks, profiles, results
from modlib.profiles import check_choices, check_int, check_range, settings_for
from modlib.redundant_input_toy import experiment as toy
from modlib.redundant_input_toy.baselines import json_ready
from modlib.redundant_input_toy.mechanism import zero_x2
from modlib.redundant_input_toy.members import gradients_of, initial_network, member_data
from modlib.runtime import describe
from modlib.training import stack, train_seeds, unstack

CHAPTER = "bridge"
CONDITION = ("binary", 1.0)  # the paper's setting: chapter 1's binary design, reveal 1
ACTIVATION, LOSS = "relu", "mse"  # the paper's network and the Playground's loss
CLIP = 1.0  # gradient clipping of the mask training (Csordás et al.)
MASK_KEY = 99  # the unconfounded data's generator key offset (chapter 1's conditions use 0..10)


@profiles.settings
class BridgeSettings:
    """The masks' settings; the networks are chapter 1's at the same profile."""

    seeds: int  # how many of chapter 1's seeds (0..seeds-1)
    mask_steps: int
    alpha: float = 0.01  # the mask's sparsity penalty, times sum(logits) / batch
    mask_lr: float = 0.05
    mask_batch: int = 64
    samples: int = 4  # mask samples per batch (the batch is split across them)
    n_mask: int = 2000  # unconfounded points the masks train on
    n_eval: int = 1000  # fresh unconfounded points the masks' fit is scored on
    formulations: tuple[str, ...] = ("a", "b")
    first_seed: int = 0  # the first network's seed: seeds first_seed..first_seed+seeds-1 (fresh: see fresh())

    def __post_init__(self):
        for name in ("seeds", "mask_steps", "mask_batch", "samples", "n_mask", "n_eval"):
            check_int(name, getattr(self, name), 1)
        check_int("first_seed", self.first_seed, 0)
        check_range("alpha", self.alpha, 0.0, 10.0)
        check_range("mask_lr", self.mask_lr, 0.0, 10.0, open_low=True)
        check_choices("formulations", self.formulations, ("a", "b"))
        if self.mask_batch % self.samples:
            raise ValueError(f"mask_batch={self.mask_batch} does not split into samples={self.samples}")


SETTINGS = {
    "smoke": BridgeSettings(seeds=2, mask_steps=20, n_mask=256, n_eval=128),
    "default": BridgeSettings(seeds=4, mask_steps=120),  # a reader's first run: at most 3 min of CPU for the page
    "full": BridgeSettings(seeds=100, mask_steps=1000),
    "paper": BridgeSettings(seeds=100, mask_steps=1000),
}


def settings(profile: str | None = None) -> BridgeSettings:
    return settings_for(SETTINGS, profile)


FRESH = "-fresh"  # the suffix of the confirmatory copies' results (and of their claims' ids)
FRESH_PROFILES = ("smoke", "full", "paper")  # where they are computed: not at default (a reader's first run)


def fresh(b: BridgeSettings) -> BridgeSettings:
    """``b`` for the confirmatory networks: the next ``b.seeds`` seeds after ``b``'s own (at ``full``,
    seeds 100-199), trained and masked exactly as ``b``'s."""
    return b.with_(first_seed=b.first_seed + b.seeds)


def suffix(b: BridgeSettings) -> str:
    """The suffix of ``b``'s result names: :data:`FRESH` for the confirmatory networks, else ""."""
    return FRESH if b.first_seed else ""


def toy_settings(profile: str, b: BridgeSettings) -> toy.ToySettings:
    """Chapter 1's settings at ``profile``: its networks, data and clock. ``b.seeds`` may not exceed
    chapter 1's seeds (the networks must be chapter 1's)."""
    s = toy.settings(profile)
    if b.seeds > s.seeds:
        raise ValueError(f"seeds={b.seeds} is more than chapter 1's {s.seeds} at profile {profile!r}")
    return s


def train_networks(s: toy.ToySettings, formulation: str, seeds: range,
                   device: torch.device) -> tuple[torch.nn.Module, dict, list]:
    """Chapter 1's ReLU networks of the paper's setting, one per seed of ``seeds``, trained as
    chapter 1 trains them (its member data, initial weights, Playground batches, loss and learning
    rate); returns the stacked ``(template, params)`` (member ``i``: ``seeds[i]``) and each member's
    data ``(x, y, x_test, y_test)``."""
    data = [member_data(s, formulation, CONDITION, seed) for seed in seeds]
    template, params = stack([initial_network(s, seed).to(device) for seed in seeds])
    x = torch.stack([d[0] for d in data]).to(device)
    y = torch.stack([d[1] for d in data]).to(device)
    updates = [torch.tensor(u, device=device)
               for u in toy.playground_batches(s.n_train, s.batch, s.epochs)[0]]
    params = train_seeds(template, params, lambda t: (x[:, updates[t]], y[:, updates[t]]),
                         toy.loss_fn(LOSS), steps=len(updates), lr=s.lr, progress=False)
    return template, params, data


def train_network(s: toy.ToySettings, formulation: str, seed: int
                  ) -> tuple[torch.nn.Module, tuple]:
    """Network ``seed`` of :func:`train_networks`, trained alone on the CPU with a plain loop: the
    same data, initial weights, Playground batches, loss and SGD steps, so the same network up to
    float rounding (a test compares them), in about a third of the time for one network (the
    page's live demo; the experiments train their networks with :func:`train_networks`). Returns
    the network and its data ``(x, y, x_test, y_test)``."""
    data = member_data(s, formulation, CONDITION, seed)
    x, y = data[0], data[1]
    net = initial_network(s, seed)
    params = list(net.parameters())
    loss_fn = toy.loss_fn(LOSS)
    for batch in toy.playground_batches(s.n_train, s.batch, s.epochs)[0]:
        i = torch.tensor(batch)
        grads = torch.autograd.grad(loss_fn(net(x[i]), y[i]), params)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p.sub_(s.lr * g)
    return net, data


def unconfounded(s: toy.ToySettings, formulation: str, seed: int, n: int
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``n`` points of chapter 1's reveal-0 control for network ``seed``: all four cells equally
    common, so X2 tells nothing about Y1. Returns ``x [n, 2]``, ``y1 [n]`` and ``y2 [n]`` (the sign
    of x2, which is Y2 in both formulations). From a generator of its own, keyed by seed."""
    key = 10_000 * seed + 100 * s.formulations.index(formulation) + MASK_KEY
    g = torch.Generator().manual_seed(key)
    x, y1 = toy.training_set(formulation, "binary", 0.0, n, g)
    return x, y1, (x[:, 1] > 0).float()


def train_mask(net, x, y, steps, alpha, lr, batch, samples, seed, *, loss_fn=None, init=None):
    """Train a binary weight mask over the frozen ``net`` so that it
    computes ``y`` from ``x``; return the hard mask (weight name ->
    bool tensor). The loss is the network's own (``loss_fn``; default
    the Playground's squared error, chapter 1's networks; chapter 3's
    CNNs pass their categorical hinge, :mod:`modlib.bridge.digits`,
    chapter 2's decoders theirs, :mod:`modlib.bridge.sprites`) plus
    Csordás et al.'s penalty alpha * sum(logits) / batch, which pushes
    weights out. ``init``: the logits' start (default
    ``masks.DEFAULTS``)."""
    start = {} if init is None else {"init": init}
    ms = masks.attach(net, "gumbel", alpha=alpha, seed=seed, **start)
    try:
        opt = torch.optim.Adam(ms.parameters(), lr=lr)
        g = torch.Generator().manual_seed(seed)
        loss_fn = loss_fn or toy.loss_fn("mse")
        for _ in range(steps):
            i = torch.randint(len(x), (batch,), generator=g)
            loss = ms.sampled_loss(loss_fn, x[i], y[i], samples)
            loss = loss + ms.regularizer() / batch
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(ms.parameters(), CLIP)
            opt.step()
        return ms.hard_masks()
    finally:
        ms.remove()


def train_mask_scores(net, x, y, steps, alpha, lr, batch, samples, seed, *, loss_fn):
    """:func:`train_mask`'s mask and its logits: ``(hard, scores)``, weight name -> bool tensor and
    -> float tensor (on the CPU; ``hard`` is ``scores >= 0``), for a caller that ranks the weights
    by the mask's own preference (:mod:`modlib.bridge.surgery_ranked`). The same steps, draws and
    penalty as :func:`train_mask`, so the hard mask is the one it returns for the same arguments
    (kept apart from it: the stored results' fingerprints reach :func:`train_mask`)."""
    ms = masks.attach(net, "gumbel", alpha=alpha, seed=seed)
    try:
        opt = torch.optim.Adam(ms.parameters(), lr=lr)
        g = torch.Generator().manual_seed(seed)
        for _ in range(steps):
            i = torch.randint(len(x), (batch,), generator=g)
            loss = ms.sampled_loss(loss_fn, x[i], y[i], samples) + ms.regularizer() / batch
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(ms.parameters(), CLIP)
            opt.step()
        scores = {k: p.detach().cpu().clone() for k, p in zip(ms.names, ms.parameters())}
        return ms.hard_masks(), scores
    finally:
        ms.remove()


def scored(net: torch.nn.Module, mask: dict | None, mode: str, sets: dict, seed: int = 0) -> dict:
    """Accuracy (logit > 0 against the 0/1 target) on each of ``sets`` (name -> (x, y)) and the
    reliance E|dz/dx2| / E|dz/dx1| on the set ``"held_out"``, with ``mask`` applied in ``mode``
    (``"hard"``: the subnetwork; ``"complement"``: the mask's weights removed; ``"random"``: as many
    weights per layer as the mask keeps, at random, drawn with ``seed``); ``mask=None``: ``net``."""
    if mask is None:
        with torch.no_grad():
            out = {k: float(((net(x)[:, 0] > 0).float() == y).float().mean()) for k, (x, y) in sets.items()}
        g = gradients_of(lambda v: net(v)[:, 0], sets["held_out"][0])
        out["reliance"] = float(g[1] / g[0].clamp_min(1e-12))
        return out
    ms = masks.attach(net, "gumbel")
    try:
        ms.set_masks(mask)
        ms.set_mode(mode, seed=seed)
        return scored(net, None, mode, sets)
    finally:
        ms.remove()


def kept(mask: dict) -> tuple[float, list[float]]:
    """The share of the masked weights ``mask`` keeps: pooled, and per weight tensor in order."""
    per = masks.kept_fraction(mask)
    return float(masks.kept_fraction(mask, per_layer=False)), [per[k] for k in mask]


# the measurements per network: (arm, set) -> name of the stored array
ARMS = ("full", "sub", "random_sub", "untrained_sub", "ablated", "random_ablated", "zero_x2")
SETS = ("held_out", "train", "unconfounded", "reliance")


def measure(s: toy.ToySettings, b: BridgeSettings, formulation: str, seed: int,
            net: torch.nn.Module, data: tuple) -> dict:
    """Every mask and score of one trained network ``net`` (frozen; left unchanged)."""
    x, y, x_test, y_test = (t.cpu() for t in data)
    xm, y1, y2 = unconfounded(s, formulation, seed, b.n_mask + b.n_eval)
    fit_x, fit_y1, fit_y2 = xm[b.n_mask:], y1[b.n_mask:], y2[b.n_mask:]
    xm, y1, y2 = xm[:b.n_mask], y1[:b.n_mask], y2[:b.n_mask]
    sets = {"held_out": (x_test, y_test), "train": (x, y), "unconfounded": (fit_x, fit_y1)}
    args = (b.mask_steps, b.alpha, b.mask_lr, b.mask_batch, b.samples)
    untrained = initial_network(s, seed)
    y1_mask = train_mask(net, xm, y1, *args, seed=3 * seed)
    u_mask = train_mask(untrained, xm, y1, *args, seed=3 * seed + 1)
    x2_mask = train_mask(net, xm, 1 - y2, *args, seed=3 * seed + 2)
    out = {
        "full": scored(net, None, "off", sets),
        "sub": scored(net, y1_mask, "hard", sets),
        "random_sub": scored(net, y1_mask, "random", sets, seed=seed),
        "untrained_sub": scored(untrained, u_mask, "hard", sets),
        "ablated": scored(net, x2_mask, "complement", sets),
        "random_ablated": scored(net, masks.random_like(x2_mask, seed), "complement", sets),
        "zero_x2": scored(zero_x2(copy.deepcopy(net)), None, "off", sets),
    }
    with torch.no_grad():  # how well the "use X2" mask computes its own task
        x2_fit = scored(net, x2_mask, "hard", {"held_out": (fit_x, 1 - fit_y2)})["held_out"]
    return {"scores": out, "kept": {"y1": kept(y1_mask), "untrained": kept(u_mask), "x2": kept(x2_mask)},
            "x2_fit": x2_fit, "net": flat(net.state_dict()),
            "masks": {"y1": flat(y1_mask), "untrained": flat(u_mask), "x2": flat(x2_mask)}}


MASKS = ("y1", "untrained", "x2")  # the stored masks: experiment 1's two, experiment 2's "use X2"


def flat(tensors: dict) -> np.ndarray:
    """``tensors`` (name -> tensor, in order) as one flat numpy vector."""
    return torch.cat([v.detach().reshape(-1).cpu() for v in tensors.values()]).numpy()


def unflat(vector, like: dict) -> dict:
    """:func:`flat`'s inverse: ``vector`` cut into tensors of ``like``'s names, shapes and order."""
    out, i = {}, 0
    for k, v in like.items():
        out[k] = torch.as_tensor(np.asarray(vector[i:i + v.numel()])).reshape(v.shape).to(v.dtype)
        i += v.numel()
    return out


def network(s: toy.ToySettings, arrays: dict, row: int, first: int = 0) -> torch.nn.Module:
    """The stored trained network of row ``row`` (array ``net``; its seed ``first + row``, ``first``
    the result's ``first_seed``), rebuilt: nothing is trained."""
    net = initial_network(s, first + row)
    net.load_state_dict(unflat(arrays["net"][row], net.state_dict()))
    return net


def stored_mask(net: torch.nn.Module, arrays: dict, name: str, row: int) -> dict:
    """The stored mask ``name`` (of :data:`MASKS`) of row ``row`` over ``net``'s weights."""
    like = {k: v.bool() for k, v in net.state_dict().items() if k.endswith("weight")}
    return unflat(arrays[f"mask_{name}"][row], like)


EXCLUSIVE = ("ablated_excl", "random_ablated_excl")  # experiment 2's second removal, and its control
DRAWS = 3  # random removals per network for the second removal's control (their scores averaged)


def outside(mask: dict, keep: dict, seed: int) -> dict:
    """A random mask with as many weights per tensor as ``mask``, drawn only among the weights
    ``keep`` does not keep (``mask``'s own weights lie there too)."""
    g = torch.Generator().manual_seed(seed)
    out = {}
    for k, m in mask.items():
        free = torch.nonzero(~keep[k].reshape(-1)).flatten()
        flat = torch.zeros(m.numel(), dtype=torch.bool)
        flat[free[torch.randperm(free.numel(), generator=g)[: int(m.sum())]]] = True
        out[k] = flat.reshape(m.shape)
    return out


def surgery_inputs(s: toy.ToySettings, arrays: dict, formulation: str, first: int = 0):
    """Per stored network of ``arrays`` (one result of :func:`compute`, its
    seeds counted from ``first``): ``(seed, network, sets, y1 mask,
    "use X2" mask)``, the sets its own ``held_out`` and ``train`` points;
    what experiment 2's second removal and its controls read."""
    for row in range(arrays["full_held_out"].size):
        net = network(s, arrays, row, first)
        x, y, x_test, y_test = member_data(s, formulation, CONDITION, first + row)
        sets = {"held_out": (x_test, y_test), "train": (x, y)}
        y1, x2 = (stored_mask(net, arrays, m, row) for m in ("y1", "x2"))
        yield first + row, net, sets, y1, x2


def with_exclusive(s: toy.ToySettings, arrays: dict, formulation: str, first: int = 0) -> dict:
    """``arrays`` (one stored result of :func:`compute`) with experiment 2's second removal added,
    scored from the stored networks and masks (nothing is trained, nothing stored): per seed, the
    weights the "use X2" mask keeps *and the Y1 mask does not* are removed (the X2 mask minus the
    Y1 mask). Its control removes as many random weights per layer, drawn like it from outside the
    Y1 mask (:func:`outside`; :data:`DRAWS` draws, scores averaged), so that both spare what Y1
    needs and the comparison asks what the "use X2" mask adds. The rule leans on the Y1 mask,
    whose unconfounded data hold points of the held-out cell; its limit, removing every weight
    outside the Y1 mask, is experiment 1's Y1 subnetwork.

    Adds ``<arm>_<set>`` ``[S]`` for the arms of :data:`EXCLUSIVE` and the sets ``held_out``,
    ``train``, ``reliance``, and ``kept_excl`` ``[S]``: the share of the masked weights removed.
    ``first``: the result's first seed (``first_seed`` of its settings)."""
    out = dict(arrays)
    rows, shares = [], []
    for seed, net, sets, y1, x2 in surgery_inputs(s, arrays, formulation, first):
        excl = {k: x2[k] & ~y1[k] for k in x2}
        shares.append(kept(excl)[0])
        draws = [scored(net, outside(excl, y1, DRAWS * seed + d), "complement", sets) for d in range(DRAWS)]
        rows.append({"ablated_excl": scored(net, excl, "complement", sets),
                     "random_ablated_excl": {k: float(np.mean([r[k] for r in draws])) for k in draws[0]}})
    for arm in EXCLUSIVE:
        for k in ("held_out", "train", "reliance"):
            out[f"{arm}_{k}"] = np.array([r[arm][k] for r in rows], dtype=np.float32)
    out["kept_excl"] = np.array(shares, dtype=np.float32)
    return out


RANDOM_X2 = "rule2-random"  # the stored control of experiment 2's second removal (issue 53)
RANDOM_X2_DRAWS = 20  # random "use X2" masks per network
RANDOM_X2_KEY = 70_000  # their seeds: RANDOM_X2_KEY + RANDOM_X2_DRAWS * seed + draw


def random_exclusive(s: toy.ToySettings, arrays: dict, formulation: str,
                     draws: int = RANDOM_X2_DRAWS, first: int = 0) -> tuple[dict, dict]:
    """Rule 2 without its mask: per stored network, the "use X2" mask
    replaced by ``draws`` random masks of its per-layer counts
    (:func:`modlib.masks.random_like`), and each one's weights that the
    Y1 mask does not keep removed, as :func:`with_exclusive` removes the
    mask's. Nothing is trained. Asks whether the repair needs the mask's
    choice of weights, or only as many weights per layer outside the Y1
    mask. ``(metrics, arrays)``: ``random_x2_excl_<set>`` ``[S]`` (the
    draws' mean per set: ``held_out``, ``train``, ``reliance``), the
    draws themselves ``random_x2_excl_<set>_draws`` ``[S, draws]`` and
    ``kept_random_x2_excl`` ``[S, draws]`` (the share removed). ``first``: the result's first seed."""
    rows, shares = [], []
    for seed, net, sets, y1, x2 in surgery_inputs(s, arrays, formulation, first):
        one, kept_d = [], []
        for d in range(draws):
            r = masks.random_like(x2, RANDOM_X2_KEY + draws * seed + d)
            removed = {k: r[k] & ~y1[k] for k in r}
            kept_d.append(kept(removed)[0])
            one.append(scored(net, removed, "complement", sets))
        rows.append(one)
        shares.append(kept_d)
    out = {}
    for k in ("held_out", "train", "reliance"):
        per = np.array([[r[k] for r in one] for one in rows], dtype=np.float32)
        out[f"random_x2_excl_{k}_draws"] = per
        out[f"random_x2_excl_{k}"] = per.mean(axis=1).astype(np.float32)
    out["kept_random_x2_excl"] = np.array(shares, dtype=np.float32)
    metrics = {"formulation": formulation, "draws": draws,
               **{f"{k}_mean": float(v.mean()) for k, v in out.items()}}
    return metrics, out


def fetch_random_exclusive(profile: str, formulation: str, device: torch.device,
                           b: BridgeSettings | None = None) -> results.Result:
    """Load (or compute from the stored ``toy-<formulation>`` and store)
    the result ``rule2-random-<formulation>`` (:func:`random_exclusive`;
    ``...-fresh`` for :func:`fresh` settings)."""
    b = b or settings(profile)
    s = toy_settings(profile, b)
    toy_result = fetch(profile, formulation, device, b)
    cfg = {**toy_config(s, b, formulation), "draws": RANDOM_X2_DRAWS, "key": RANDOM_X2_KEY}
    return results.fetch(CHAPTER, f"{RANDOM_X2}-{formulation}{suffix(b)}", cfg,
                         lambda: random_exclusive(s, toy_result.arrays, formulation, first=b.first_seed),
                         profile=profile, device=describe(device), code=random_exclusive,
                         depends=[toy_result])


def with_random_exclusive(arrays: dict, control: dict) -> dict:
    """``arrays`` (of :func:`with_exclusive`) with the arm
    ``random_x2_excl`` of a stored ``rule2-random-<f>`` result's
    ``control`` arrays added (``<arm>_<set>`` ``[S]``; ``kept_random_x2_excl``
    ``[S]``, the draws' mean; ``random_x2_draws``, how many draws)."""
    out = dict(arrays)
    out["random_x2_draws"] = np.array(control["kept_random_x2_excl"].shape[1])
    for k in ("held_out", "train", "reliance"):
        out[f"random_x2_excl_{k}"] = control[f"random_x2_excl_{k}"]
    out["kept_random_x2_excl"] = control["kept_random_x2_excl"].mean(axis=1)
    return out


def merged(arrays: dict, other: dict) -> dict:
    """``arrays`` (a toy result's) with the arrays of a result computed from it (``unseen-<f>``,
    ``matched-<f>``) added, for the findings that compare their arms; their names may not collide."""
    shared = sorted(set(arrays) & set(other))
    if shared:
        raise ValueError(f"arrays {shared} are in both results: pass a toy-<f> result's arrays and one computed "
                         "from it (unseen-<f>, matched-<f>)")
    return {**arrays, **other}


def compute(s: toy.ToySettings, b: BridgeSettings, formulation: str,
            device: torch.device) -> tuple[dict, dict]:
    """Train chapter 1's networks for ``formulation`` and measure every one; ``(metrics, arrays)``.

    The seeds are ``b.first_seed`` on, row ``i`` of every array seed ``b.first_seed + i``.
    Arrays (S seeds, L masked weight tensors): ``<arm>_<set>`` ``[S]`` for every arm of ``ARMS``
    and set of ``SETS`` (accuracies, and the reliance on the held-out points); ``kept_<mask>`` ``[S]``
    and ``kept_<mask>_layers`` ``[S, L]`` for the masks ``y1``, ``untrained``, ``x2``;
    ``x2_fit`` ``[S]`` (the "use X2" subnetwork's accuracy on its own task); ``net`` ``[S, P]``
    (every trained network's parameters, :func:`flat`; :func:`network` rebuilds one) and
    ``mask_<mask>`` ``[S, W]`` bool (every mask, over the masked weights in order;
    :func:`stored_mask`) and ``mask_layers`` ``[L]`` (how many of the W weights each tensor holds),
    from which experiment 3 and the explorer read the structure."""
    seeds = range(b.first_seed, b.first_seed + b.seeds)
    template, params, data = train_networks(s, formulation, seeds, device)
    nets = [unstack(template, params, i) for i in range(b.seeds)]
    rows = [measure(s, b, formulation, seed, net, data[i]) for i, (seed, net) in enumerate(zip(seeds, nets))]
    arrays = {f"{arm}_{k}": np.array([r["scores"][arm][k] for r in rows], dtype=np.float32)
              for arm in ARMS for k in SETS}
    for name in MASKS:
        arrays[f"kept_{name}"] = np.array([r["kept"][name][0] for r in rows], dtype=np.float32)
        arrays[f"kept_{name}_layers"] = np.array([r["kept"][name][1] for r in rows], dtype=np.float32)
    arrays["x2_fit"] = np.array([r["x2_fit"] for r in rows], dtype=np.float32)
    arrays["net"] = np.stack([r["net"] for r in rows]).astype(np.float32)
    for name in MASKS:
        arrays[f"mask_{name}"] = np.stack([r["masks"][name] for r in rows]).astype(bool)
    arrays["mask_layers"] = np.array([v.numel() for v in stored_mask(nets[0], arrays, "y1", 0).values()])
    metrics = {"formulation": formulation, "seeds": b.seeds,
               "share_generalizing": float((arrays["full_held_out"] >= toy.GENERALIZES).mean()),
               **{f"{k}_mean": float(v.mean()) for k, v in arrays.items() if v.ndim == 1 and k != "mask_layers"}}
    return metrics, arrays


def toy_config(s: toy.ToySettings, b: BridgeSettings, formulation: str) -> dict:
    """The stored config of a result on the toy's networks: the bridge's settings and chapter 1's
    (``first_seed`` left out where it is 0, as the chapter's own results were first stored)."""
    cfg = {"bridge": asdict(b), "toy": asdict(s), "formulation": formulation, "seeds": b.seeds,
           "condition": list(CONDITION), "activation": ACTIVATION, "loss": LOSS}
    cfg["bridge"].pop("formulations")
    if not b.first_seed:  # chapter 7's own networks, seeds from 0, as their results were first stored
        cfg["bridge"].pop("first_seed")
    return json_ready(cfg)


def result_names(b: BridgeSettings) -> list[str]:
    return [f"toy-{f}{suffix(b)}" for f in b.formulations]


def fetch(profile: str, formulation: str, device: torch.device,
          b: BridgeSettings | None = None) -> results.Result:
    """Load (or compute and store) the result ``toy-<formulation>`` at ``profile`` (``...-fresh`` for
    :func:`fresh` settings)."""
    b = b or settings(profile)
    s = toy_settings(profile, b)
    return results.fetch(CHAPTER, f"toy-{formulation}{suffix(b)}", toy_config(s, b, formulation),
                         lambda: compute(s, b, formulation, device), profile=profile,
                         device=describe(device), code=compute)


def run(profile: str, device: torch.device, b: BridgeSettings | None = None) -> dict[str, results.Result]:
    """Every result of the chapter at ``profile``: ``{formulation: Result}``."""
    b = b or settings(profile)
    return {f: fetch(profile, f, device, b) for f in b.formulations}


def fetch_from_toy(name: str, compute, extra: dict, profile: str, formulation: str, device: torch.device,
                   b: BridgeSettings | None = None) -> results.Result:
    """Load (or compute from the stored ``toy-<formulation>`` and store) the result
    ``<name>-<formulation>`` (``...-fresh`` for :func:`fresh` settings): a part of experiments 1 and 2
    computed from the stored networks (:mod:`modlib.bridge.unseen`, :mod:`modlib.bridge.matched`),
    ``compute(s, b, toy_arrays, formulation) -> (metrics, arrays)``, its config the toy's with
    ``extra``."""
    b = b or settings(profile)
    s = toy_settings(profile, b)
    toy_result = fetch(profile, formulation, device, b)
    return results.fetch(CHAPTER, f"{name}-{formulation}{suffix(b)}", {**toy_config(s, b, formulation), **extra},
                         lambda: compute(s, b, toy_result.arrays, formulation),
                         profile=profile, device=describe(device), code=compute, depends=[toy_result])


def run_random_exclusive(profile: str, device: torch.device,
                         b: BridgeSettings | None = None) -> dict[str, results.Result]:
    """The stored controls of rule 2 without its mask:
    ``{formulation: Result}`` (:func:`fetch_random_exclusive`)."""
    b = b or settings(profile)
    return {f: fetch_random_exclusive(profile, f, device, b) for f in b.formulations}
