"""Chapter 7, the bridge: experiment 1 on chapter 3's MNIST CNNs (notebooks/bridge.ipynb, section
"Experiment 1: is the compositional solution already inside?", subsection "On chapter 3's CNNs").

**The networks** are chapter 3's setting-A CNNs (:mod:`modlib.resists_at_scale`): Li et al.'s CNN
reads two MNIST digits side by side ``[B, 1, 28, 56]`` and names the left one (Y1, 10 classes); in
setting A's training pairs the right digit's label is Y2 = (Y1 + r) mod 10 with r in {0, 1}, so X2
nearly tells the answer, and the held-out pairs are the offsets r + 2 in 2..9 that training never
shows, drawn from MNIST's test digits. They are trained by chapter 3's own function
(:func:`modlib.resists_at_scale.networks.train_digits`) with chapter 3's settings and seeds at the
same profile; that function returns only numbers, so :func:`train_networks` keeps a handle on the
CNN it builds (and a copy of its initial weights) by wrapping the constructor it calls for the
duration of the call, which changes nothing it computes. Its own final accuracies (``final_test``,
``final_train``) are stored beside the bridge's, to be compared with chapter 3's stored ones.

**The mask's data.** Of chapter 3's data, only setting B's training pairs carry no information
about Y1 in X2: Y2 is uniform on 0..9 whatever Y1 is (0 bits; :func:`modlib.data.digits.
offset_information`). The control ``mnist-C`` (offsets 0..8) still carries 0.15 bits, because it
holds out offset 9 to keep a combination unseen. So the masks train on ``n_mask`` setting-B pairs
of MNIST's *training* digits (a generator of their own per seed). Like chapter 1's reveal-0 data
in the toy part (:mod:`modlib.bridge.experiment`), they contain the held-out combinations (offsets
2..9) but never the held-out test points (those are MNIST's test digits): the experiment asks
whether a subnetwork that computes Y1 on every combination *exists* in the trained weights.

**Per network, frozen** (exactly experiment 1 of the toy part, with chapter 3's loss, the
categorical hinge, in :func:`modlib.bridge.experiment.train_mask`): a Y1 mask on the trained
weights; the same mask's kept count per weight tensor placed at random (the random control); a Y1
mask of the same training on the network's *initial* weights (the control for "built by gradient
descent"). Each is scored on ``n_eval`` pairs of each of :data:`SETS`; every mask's kept share is
stored, pooled and per weight tensor.

One stored result, ``mnist-a`` (:func:`fetch`); the networks and masks are not stored (a CNN holds
1.15 million weights), only what is measured on them.
"""

from __future__ import annotations

import contextlib
import copy
from dataclasses import asdict

import numpy as np
import torch

from modlib import masks, profiles, results
from modlib.bridge.experiment import CHAPTER, kept, train_mask
from modlib.data import digits
from modlib.profiles import check_int, check_range, settings_for
from modlib.resists_at_scale import controls
from modlib.resists_at_scale import experiment as rs
from modlib.resists_at_scale import networks
from modlib.runtime import describe

RESULT = "mnist-a"
SETTING = "A"  # chapter 3's setting whose networks are masked
MASK_SETTING = "B"  # the distribution the masks train on: X2 independent of Y1
MASK_KEY, EVAL_KEY = 30_000, 40_000  # generators of the bridge's own, + seed (chapter 3 uses seed, 10_000 + seed)
CHUNK = 250  # pairs per forward pass when scoring (a CNN's activations for 1,000 pairs take ~0.2 GB)
LAYERS = ("0.weight", "3.weight", "6.weight", "8.weight", "10.weight")  # the CNN's masked weights

# what each arm is scored on: (pool, setting, split) of modlib.data.digits.DigitPairs.sample;
# "swapped" is the "train" pairs with each right digit replaced by a random one (chapter 3's swap test)
SETS = ("held_out", "train", "unconfounded", "swapped")
DRAWS = {"held_out": ("test", SETTING, "test"), "train": ("train", SETTING, "train"),
         "unconfounded": ("train", MASK_SETTING, "train")}
ARMS = ("full", "sub", "random_sub", "untrained_sub")
MASKS = ("y1", "untrained")


@profiles.settings
class DigitSettings:
    """The masks' settings; the networks are chapter 3's at the same profile (its ``seeds``,
    ``mnist_steps``, ... ; :func:`modlib.resists_at_scale.settings`)."""

    seeds: int  # how many of chapter 3's seeds (0..seeds-1); at most chapter 3's
    mask_steps: int
    # chapter 4's alpha for its CNN masks at full (modlib.weight_masks, cnn_alpha): the toy's 0.01
    # removes nearly all of the dense layer 17600 -> 64 (98% of the weights) within 100 steps and
    # leaves the subnetwork at chance, a mask that computes nothing
    alpha: float = 3e-4
    mask_lr: float = 0.05  # as the toy part's masks
    mask_batch: int = 64
    samples: int = 4  # mask samples per batch (the batch is split across them)
    n_mask: int = 4_000  # setting-B pairs of MNIST's training digits the masks train on
    n_eval: int = 1_000  # pairs per scored set (chapter 3's mnist_final)

    def __post_init__(self):
        for name in ("seeds", "mask_steps", "mask_batch", "samples", "n_mask", "n_eval"):
            check_int(name, getattr(self, name), 1)
        check_range("alpha", self.alpha, 0.0, 10.0)
        check_range("mask_lr", self.mask_lr, 0.0, 10.0, open_low=True)
        if self.mask_batch % self.samples:
            raise ValueError(f"mask_batch={self.mask_batch} does not split into samples={self.samples}; "
                             f"choose a mask_batch that is a multiple of samples")


SETTINGS = {
    "smoke": DigitSettings(seeds=1, mask_steps=3, n_mask=64, n_eval=32),
    # default: chapter 3's one default seed, masks of 50 steps (a mask step of the 1.1M-weight dense
    # layer costs about 0.2 s; in a trial on seed 0 the Y1 mask's accuracy on fresh unconfounded
    # pairs had settled by step 100, and it kept shrinking the network after that)
    "default": DigitSettings(seeds=1, mask_steps=50, n_eval=500),
    # full: chapter 3's five CNNs; 500 steps keeps the run within about half an hour of one core
    # (timed at default: a CNN trains in about 45 s, a mask step takes about 0.2 s)
    "full": DigitSettings(seeds=5, mask_steps=500),
    "paper": DigitSettings(seeds=5, mask_steps=500),
}


def settings(profile: str | None = None) -> DigitSettings:
    return settings_for(SETTINGS, profile)


def chapter3_settings(profile: str, d: DigitSettings) -> networks.ResistSettings:
    """Chapter 3's settings at ``profile`` (its networks, data and training). ``d.seeds`` may not
    exceed chapter 3's seeds: the networks must be chapter 3's."""
    s = rs.settings(profile)
    if d.seeds > s.seeds:
        raise ValueError(f"seeds={d.seeds} is more than chapter 3's {s.seeds} at profile {profile!r}; "
                         f"choose 1 to {s.seeds}")
    return s


@contextlib.contextmanager
def _keeping_cnns(built: list):
    """Within it, every CNN that chapter 3's code builds (:func:`networks.digit_cnn`) is appended
    to ``built`` as ``(model, initial state_dict)``; the model is the very object trained."""
    make = networks.digit_cnn

    def keep():
        model = make()
        built.append((model, copy.deepcopy(model.state_dict())))
        return model

    networks.digit_cnn = keep
    try:
        yield
    finally:
        networks.digit_cnn = make


def train_network(s: networks.ResistSettings, seed: int, pools: dict, device: torch.device
                  ) -> tuple[torch.nn.Module, torch.nn.Module, dict]:
    """Chapter 3's setting-A CNN of ``seed``, trained by chapter 3's
    :func:`~modlib.resists_at_scale.networks.train_digits`: ``(trained, untrained, numbers)``, the
    untrained one a CNN with the trained one's initial weights, ``numbers`` what ``train_digits``
    returns (``final_test``, ``final_train``, ``swapped``, the curves)."""
    built = []
    with _keeping_cnns(built):
        numbers = networks.train_digits(s, SETTING, seed, pools, device)
    if len(built) != 1:
        raise RuntimeError(f"chapter 3's train_digits built {len(built)} CNNs; expected one")
    net, initial = built[0]
    untrained = networks.digit_cnn().to(device)
    untrained.load_state_dict(initial)
    return net.eval(), untrained.eval(), numbers


def mask_data(d: DigitSettings, pools: dict, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The masks' ``d.n_mask`` pairs for network ``seed``: setting B's distribution (Y2 uniform,
    independent of Y1) over MNIST's training digits; ``x [n, 1, 28, 56]``, ``y1 [n]``."""
    g = torch.Generator().manual_seed(MASK_KEY + seed)
    x, y1, _ = pools["train"].sample(d.n_mask, MASK_SETTING, "train", g)
    return x, y1


def setting_b(profile: str) -> results.Result | None:
    """Chapter 3's stored ``mnist-B`` result at ``profile``: its CNNs trained in setting B (every
    combination of digits seen), scored on setting A's test pairs (``arrays["final_test"] [seeds]``),
    the held-out pairs' kind; read, never computed (None where it is not stored as chapter 3's code
    makes it now). The page sets the surgery's repairs beside it, for scale."""
    s = rs.settings(profile)
    return results.load(rs.CHAPTER, "mnist-B", rs.result_config(s, "mnist-B"), profile=profile, code=rs.run_one,
                        sources={"data": digits.available_sources()})


def eval_sets(d: DigitSettings, pools: dict, seed: int) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """The scored sets of network ``seed`` (name -> ``(x [n, 1, 28, 56], y1 [n])``, ``n = d.n_eval``,
    drawn once, from a generator of their own): ``held_out``, setting A's test pairs (offsets 2..9,
    MNIST's test digits, never seen by a network or a mask); ``train``, fresh pairs of setting A's
    training distribution; ``unconfounded``, fresh pairs of the masks' distribution (the mask's fit);
    ``swapped``, the ``train`` pairs with each right digit replaced by a random one."""
    g = torch.Generator().manual_seed(EVAL_KEY + seed)
    out = {}
    for name, (pool, setting, split) in DRAWS.items():
        x, y1, _ = pools[pool].sample(d.n_eval, setting, split, g)
        out[name] = (x, y1)
    out["swapped"] = (pools["train"].swap_right(out["train"][0], g), out["train"][1])
    return out


@torch.no_grad()
def accuracy(net: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    """Share of pairs ``x [n, 1, 28, 56]`` whose left digit ``y [n]`` the CNN names (argmax), in
    chunks of :data:`CHUNK` pairs."""
    device = next(net.parameters()).device
    right = sum(int((net(x[i:i + CHUNK].to(device)).argmax(1).cpu() == y[i:i + CHUNK]).sum())
                for i in range(0, len(x), CHUNK))
    return right / len(x)


def scored(net: torch.nn.Module, mask: dict | None, mode: str, sets: dict, seed: int = 0) -> dict:
    """Accuracy on each of ``sets`` (name -> ``(x, y)``) of ``net`` with ``mask`` applied in ``mode``
    (``"hard"``: the subnetwork; ``"random"``: as many weights per tensor as the mask keeps, at random
    places drawn with ``seed``); ``mask=None``: ``net`` as it is."""
    if mask is None:
        return {k: accuracy(net, x, y) for k, (x, y) in sets.items()}
    ms = masks.attach(net, "gumbel")
    try:
        ms.set_masks(mask)
        ms.set_mode(mode, seed=seed)
        return {k: accuracy(net, x, y) for k, (x, y) in sets.items()}
    finally:
        ms.remove()


def measure(d: DigitSettings, seed: int, net: torch.nn.Module, untrained: torch.nn.Module,
            pools: dict) -> dict:
    """Experiment 1 on one frozen network (left unchanged): its two Y1 masks and every arm's scores,
    ``{"scores": {arm: {set: accuracy}}, "kept": {mask: (pooled, per tensor)}}``."""
    device = next(net.parameters()).device
    x, y1 = (t.to(device) for t in mask_data(d, pools, seed))
    sets = eval_sets(d, pools, seed)
    args = (d.mask_steps, d.alpha, d.mask_lr, d.mask_batch, d.samples)
    y1_mask = train_mask(net, x, y1, *args, seed=3 * seed, loss_fn=networks.categorical_hinge)
    u_mask = train_mask(untrained, x, y1, *args, seed=3 * seed + 1, loss_fn=networks.categorical_hinge)
    scores = {"full": scored(net, None, "off", sets),
              "sub": scored(net, y1_mask, "hard", sets),
              "random_sub": scored(net, y1_mask, "random", sets, seed=seed),
              "untrained_sub": scored(untrained, u_mask, "hard", sets)}
    return {"scores": scores, "kept": {"y1": kept(y1_mask), "untrained": kept(u_mask)}}


def compute(s: networks.ResistSettings, d: DigitSettings, device: torch.device) -> tuple[dict, dict]:
    """Train chapter 3's setting-A CNNs (seeds ``0..d.seeds-1``) and measure every one;
    ``(metrics, arrays)``.

    Arrays (S seeds, L = 5 masked weight tensors, :data:`LAYERS`): ``<arm>_<set>`` ``[S]`` for every
    arm of :data:`ARMS` and set of :data:`SETS` (accuracies); ``kept_<mask>`` ``[S]`` and
    ``kept_<mask>_layers`` ``[S, L]`` for the masks ``y1`` and ``untrained``; ``layer_sizes`` ``[L]``
    (weights per tensor); and chapter 3's own numbers for each network, ``ch3_final_test``,
    ``ch3_final_train``, ``ch3_swapped`` ``[S]`` (what :func:`train_digits` measured, comparable
    with chapter 3's stored ``mnist-A``)."""
    pools, source = controls.pools()  # chapter 3's digits, read once per process
    rows, ch3 = [], []
    for seed in range(d.seeds):
        net, untrained, numbers = train_network(s, seed, pools, device)
        ch3.append(numbers)
        rows.append(measure(d, seed, net, untrained, pools))
    arrays = {f"{arm}_{k}": np.array([r["scores"][arm][k] for r in rows], dtype=np.float32)
              for arm in ARMS for k in SETS}
    for name in MASKS:
        arrays[f"kept_{name}"] = np.array([r["kept"][name][0] for r in rows], dtype=np.float32)
        arrays[f"kept_{name}_layers"] = np.array([r["kept"][name][1] for r in rows], dtype=np.float32)
    arrays["layer_sizes"] = np.array([p.numel() for k, p in net.state_dict().items() if k in LAYERS])
    for k in ("final_test", "final_train", "swapped"):
        arrays[f"ch3_{k}"] = np.array([float(n[k]) for n in ch3], dtype=np.float32)
    metrics = {"result": RESULT, "data": source, "seeds": d.seeds,
               **{f"{k}_mean": float(v.mean()) for k, v in arrays.items()
                  if v.ndim == 1 and k != "layer_sizes"}}
    return metrics, arrays


def config(s: networks.ResistSettings, d: DigitSettings) -> dict:
    """The stored config of experiment 1 at settings ``s`` (chapter 3's) and ``d``."""
    ch3 = {k: v for k, v in asdict(s).items() if k.startswith("mnist_")}
    return {"bridge": asdict(d), "resists": ch3, "seeds": d.seeds, "setting": SETTING,
            "mask_setting": MASK_SETTING, "mnist": digits.mnist_source()}


def fetch(profile: str, device: torch.device, d: DigitSettings | None = None) -> results.Result:
    """Load (or compute and store) the result ``mnist-a`` at ``profile``."""
    d = d or settings(profile)
    s = chapter3_settings(profile, d)
    return results.fetch(CHAPTER, RESULT, config(s, d), lambda: compute(s, d, device),
                         profile=profile, device=describe(device), code=compute,
                         sources={"mnist": digits.available_sources()})
