"""Structural compositionality: subnetworks for the subroutines of a compositional rule (chapter 5,
notebooks/structural_compositionality.ipynb; Lepori, Serre & Pavlick 2023).

A *rule* joins two binary properties (subroutines), e.g. Inside-Contact: a panel follows it when
one shape lies inside another *and* their outlines touch. An odd-one-out problem shows four items:
three follow the rule, one does not, and the model must find that one. Each item is embedded,
the embeddings are L2-normalised, and an item's score is minus its summed cosine similarity to all
four (itself included, as in the authors' code): the odd one should be least like the others
(:func:`odd_scores`).

Per rule, five kinds of problem set (:data:`KINDS`, :func:`layout`) with properties 0 and 1:

``task``     the compositional task: the odd item breaks property 0, property 1 or both;
``sub-k``    the mask-training set for subroutine ``k``: only property ``k`` decides (the three
             followers have it, the odd one lacks it), the other property is random in all four;
``only-k``   the ablation test set for subroutine ``k``: three followers of the rule and an odd one
             that differs in property ``k`` only.

A base model is trained on ``task``. For each subroutine a continuous-sparsification mask
(:mod:`modlib.masks`, estimator ``"sparsify"``) is trained on ``sub-k`` over the frozen model, with
plain cross-entropy and the sparsity penalty: the authors' objective (their "adversarial" pilot held
the other property constant instead, and their final runs do not use it). The selected subnetwork
(:func:`quality`) and its ablation (the model without it) are tested on ``only-k`` (target) and on
the other subroutine's ``only`` set (other). Controls: an untrained network whose masks are trained
with the configuration its trained twin's search chose (as the paper does), ablation that
re-initialises the removed weights, a random subnetwork of the same size per layer, and the
ablation of a random set of that size per layer (damage in general). The overlap of one
subroutine's masks from two mask seeds is the reference for the overlap of two subroutines' masks.

How much of the network a mask keeps is set by the sparsity penalty's weight lambda (issue 31;
``benchmarks/mask_density_search.py``): the search treats multiples of the paper's lambda (scaled to
this model) as one more grid dimension, grows it on a schedule the paper does not use, records the
kept share per epoch (:mod:`modlib.mask_density`) and selects only configurations whose kept share
stopped falling.

Vision items are panels of :mod:`modlib.data.shapes` seen by a ResNet with instance normalisation and an
MLP head; language items are agreement sentences of :mod:`modlib.data.sentences` seen by a BERT built
from a config (its [CLS] vector). Each (rule, base model) is one stored result. The problem sets are built in
:mod:`modlib.structural_compositionality.tasks`; this module holds the models, the settings per
profile, the subnetwork search and the runs.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from modlib import mask_density, masks, profiles, results
from modlib.data import sentences as agreement
from modlib.profiles import check_choice, check_choices, check_int, check_range, settings_for
from modlib.runtime import describe
from modlib.structural_compositionality.tasks import KINDS, RULES, VISION, odd_scores, problems
from modlib.training import bar

CHAPTER = "structural_compositionality"
CHANCE = 0.25
GATE = 0.9  # a subnetwork counts only if it reaches this on its own subroutine (validation)
PAPER_TOTAL_MASKED = 25e6  # the paper's lambda 1e-8 is for about this many masked weights


# ---------------------------------------------------------------- settings

@profiles.settings
class StructureSettings:
    """Everything that decides a run; :data:`PAPER` holds the paper's values. Validated on construction."""

    rules: tuple[str, ...] = ("inside-contact", "number-contact", "sv-plural")
    base_models: int = 3  # base-model seeds per rule
    mask_seeds: int = 3  # the selected mask configuration, trained again with these seeds
    untrained: int = 1  # base-model seeds per rule whose untrained twin is searched (the control)
    # data (problems per set)
    train: int = 10_000
    val: int = 500
    test: int = 1_000
    size: int = 128  # panel width and height, pixels
    # vision model: a ResNet (instance norm) and an MLP head
    resnet: str = "resnet50"
    stem_pool: bool = True  # the ResNet stem's max-pool (False keeps 2x more resolution: small panels)
    mlp_hidden: int = 2048
    embed: int = 128
    # language model: a BERT built from a config
    bert_layers: int = 4
    bert_hidden: int = 512
    bert_heads: int = 8
    # base training
    base_gate: float = 0.95  # masks are searched only in base models this good on the task (test)
    epochs: int = 100
    batch: int = 32
    vision_lr: float = 1e-4
    language_lr: float = 1e-4
    # mask search (continuous sparsification)
    mask_train: int = 10_000  # problems in each subroutine's mask-training set
    mask_epochs: int = 90
    mask_batch: int = 64
    inits: tuple[float, ...] = (0.1, 0.05, 0.0, -0.05)
    mask_lrs: tuple[float, ...] = (1e-2, 1e-4)
    # the rest of the grid, per modality: which layers are masked (+ the head; mask_patterns) and the
    # penalty weight, in multiples of the paper's lambda scaled to the model (train_mask); after
    # lam_delay epochs at 1x it grows linearly over lam_warmup epochs (mask_density.lam_multiplier;
    # the paper: 1x, no schedule)
    vision_stages: tuple[str, ...] = ("all", "later", "last")
    language_stages: tuple[str, ...] = ("all", "later", "last")
    vision_lams: tuple[float, ...] = (1.0,)
    language_lams: tuple[float, ...] = (1.0,)
    vision_lam_schedule: tuple[int, int] = (0, 0)  # (lam_delay, lam_warmup) in epochs
    language_lam_schedule: tuple[int, int] = (0, 0)

    def __post_init__(self):
        check_choices("rules", self.rules, RULES)
        for name in ("base_models", "mask_seeds", "train", "val", "test", "mlp_hidden", "embed",
                     "bert_layers", "bert_hidden", "bert_heads", "epochs", "batch", "mask_train",
                     "mask_epochs", "mask_batch"):
            check_int(name, getattr(self, name), 1)
        check_int("untrained", self.untrained, 0)
        check_range("base_gate", self.base_gate, 0.0, 1.0)
        check_int("size", self.size, 16)
        check_choice("resnet", self.resnet, RESNETS)
        for name in ("vision_lr", "language_lr"):
            check_range(name, getattr(self, name), 0.0, 1.0, open_low=True)
        for lr in self.mask_lrs:
            check_range("mask_lrs", lr, 0.0, 1.0, open_low=True)
        for init in self.inits:
            check_range("inits", init, -1.0, 1.0)
        for name in ("vision_stages", "language_stages"):
            check_choices(name, getattr(self, name), STAGES)
        for name in ("vision_lams", "language_lams"):
            if not getattr(self, name):
                raise ValueError(f"{name}=() is empty; give at least one multiple of lambda, e.g. (1.0,)")
            for lam in getattr(self, name):
                check_range(name, lam, 0.0, 1e6, open_low=True)
        for name in ("vision_lam_schedule", "language_lam_schedule"):
            schedule = getattr(self, name)
            if len(schedule) != 2:
                raise ValueError(f"{name}={schedule!r} must be (lam_delay, lam_warmup), two epoch counts")
            for epochs in schedule:
                check_int(name, epochs, 0)
        if self.untrained > self.base_models:
            raise ValueError(f"untrained={self.untrained} > base_models={self.base_models}: each untrained "
                             "control is searched with its trained twin's chosen configuration")
        if self.bert_hidden % self.bert_heads:
            raise ValueError(f"bert_hidden={self.bert_hidden} is not a multiple of bert_heads={self.bert_heads}")


# ResNet shapes for transformers' ResNetConfig: (layer type, hidden sizes, depths, stem width)
RESNETS = {"tiny": ("basic", (16, 32, 64), (1, 1, 1), 16),
           "small": ("basic", (32, 64, 128), (1, 1, 1), 32),
           "resnet18": ("basic", (64, 128, 256, 512), (2, 2, 2, 2), 64),
           "resnet50": ("bottleneck", (256, 512, 1024, 2048), (3, 4, 6, 3), 64)}
STAGES = ("all", "later", "last")

PAPER = StructureSettings()
SETTINGS = {
    "smoke": PAPER.with_(rules=("inside-contact", "sv-plural"), base_models=1, mask_seeds=2, train=48,
                         base_gate=0.0,  # smoke: search even an untrained-looking model
                         val=16, test=16, size=32, resnet="tiny", stem_pool=False, mlp_hidden=16, embed=8,
                         bert_layers=1, bert_hidden=16, bert_heads=2, epochs=1, batch=16,
                         vision_lr=1e-3, language_lr=1e-3, mask_train=32, mask_epochs=2, mask_batch=16,
                         inits=(0.05,), mask_lrs=(1e-2,), vision_stages=("all",), language_stages=("all",),
                         vision_lams=(10.0,), language_lams=(1.0, 30.0), language_lam_schedule=(1, 1)),
    "default": PAPER.with_(rules=("inside-contact", "sv-plural"), base_models=1, mask_seeds=1,
                           train=1_200, val=100, test=200, size=32, resnet="tiny", stem_pool=False,
                           mlp_hidden=64, embed=32, bert_layers=2, bert_hidden=64, bert_heads=2,
                           epochs=15, batch=32,
                           vision_lr=1e-3, language_lr=1e-3, mask_train=600, mask_epochs=6,
                           inits=(0.05,), mask_lrs=(1e-2,), vision_stages=("later",), language_stages=("all",),
                           vision_lams=(30.0,), language_lams=(300.0,), vision_lam_schedule=(0, 4),
                           language_lam_schedule=(2, 2)),
    # full: small panels and models, the search grid cut to 2 configurations per subroutine (2
    # multiples of lambda; the ResNet's later stages and head, all of BERT: the other layer sets
    # failed the gate or the ablation test in every timed run) and 1 untrained control; lambda as
    # benchmarks/mask_density_search.py found it reaches the paper's kept shares (about 0.5-3 %
    # vision, 2-6 % language)
    "full": PAPER.with_(train=5_000, val=200, test=400, size=32, resnet="tiny", stem_pool=False,
                        mlp_hidden=128, embed=64, bert_layers=2, bert_hidden=64, bert_heads=2,
                        epochs=60, vision_lr=1e-3, language_lr=1e-3, mask_train=1_500, mask_epochs=20,
                        inits=(0.05,), mask_lrs=(1e-2,), vision_stages=("later",), language_stages=("all",),
                        vision_lams=(30.0, 100.0), vision_lam_schedule=(0, 10),
                        language_lams=(300.0, 1000.0), language_lam_schedule=(5, 5)),
    "paper": PAPER,
}


def settings(profile: str | None = None) -> StructureSettings:
    return settings_for(SETTINGS, profile)


# ---------------------------------------------------------------- models

def _instance_norm(module: nn.Module) -> nn.Module:
    """Replace every BatchNorm2d of ``module`` (in place) with InstanceNorm2d without affine
    parameters or running statistics, as the paper does: a mask search then never sees batch
    statistics of a different data set."""
    for name, child in module.named_children():
        if isinstance(child, nn.BatchNorm2d):
            setattr(module, name, nn.InstanceNorm2d(child.num_features))
        else:
            _instance_norm(child)
    return module


class VisionModel(nn.Module):
    """A ResNet (transformers' ResNetModel from a config, instance norm) and an MLP head: panels
    ``[N, 3, H, W]`` (floats in [0, 1]) to embeddings ``[N, embed]``."""

    def __init__(self, s: StructureSettings):
        super().__init__()
        from transformers import ResNetConfig, ResNetModel

        layer, hidden, depths, stem = RESNETS[s.resnet]
        config = ResNetConfig(num_channels=3, embedding_size=stem, hidden_sizes=list(hidden),
                              depths=list(depths), layer_type=layer, downsample_in_first_stage=False)
        self.resnet = _instance_norm(ResNetModel(config))
        if not s.stem_pool:
            self.resnet.embedder.pooler = nn.Identity()
        self.head = nn.Sequential(nn.Linear(hidden[-1], s.mlp_hidden), nn.ReLU(),
                                  nn.Linear(s.mlp_hidden, s.embed))

    def stage_names(self) -> list[str]:
        """Module-name patterns of the ResNet's stages, first to last (for :func:`mask_patterns`)."""
        return [f"resnet.encoder.stages.{i}.*" for i in range(len(self.resnet.encoder.stages))]

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.resnet(images).pooler_output.flatten(1))  # [N, C] -> [N, embed]


class LanguageModel(nn.Module):
    """A BERT built from a config (dropout 0): token ids ``[N, L]`` to its [CLS] vector ``[N, hidden]``."""

    def __init__(self, s: StructureSettings):
        super().__init__()
        from transformers import BertConfig, BertModel

        config = BertConfig(vocab_size=len(agreement.VOCAB), hidden_size=s.bert_hidden,
                            num_hidden_layers=s.bert_layers, num_attention_heads=s.bert_heads,
                            intermediate_size=4 * s.bert_hidden, max_position_embeddings=32,
                            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
        self.bert = BertModel(config, add_pooling_layer=False)

    def stage_names(self) -> list[str]:
        return [f"bert.encoder.layer.{i}.*" for i in range(len(self.bert.encoder.layer))]

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state[:, 0]


def make_model(rule: str, s: StructureSettings, seed: int) -> nn.Module:
    """A fresh (untrained) model for ``rule``, its weights drawn from ``seed``."""
    torch.manual_seed(seed)
    return VisionModel(s) if rule in VISION else LanguageModel(s)


def mask_patterns(model: nn.Module, stages: str) -> list[str]:
    """Which modules a mask covers: ``"all"`` the whole network, ``"later"`` its second half of
    stages (ResNet stages or BERT layers), ``"last"`` its last stage; the MLP head always (vision).
    Embeddings, normalisation and biases never are (:func:`modlib.masks.attach`)."""
    check_choice("stages", stages, STAGES)
    names = model.stage_names()
    chosen = {"all": ["*"], "later": names[len(names) // 2:], "last": names[-1:]}[stages]
    return chosen if stages == "all" or not hasattr(model, "head") else chosen + ["head.*"]


def score(model: nn.Module, batch: dict) -> torch.Tensor:
    """Odd-one-out scores ``[B, 4]`` of a batch of problems (as :func:`problems` returns)."""
    if "images" in batch:
        x = batch["images"].float().div(255)  # [B, 4, 3, H, W]
        emb = model(x.flatten(0, 1))
    else:
        emb = model(batch["input_ids"].flatten(0, 1), batch["attention_mask"].flatten(0, 1))
    return odd_scores(emb.view(len(batch["answer"]), 4, -1))


def problem_batches(data: dict, batch: int, g: torch.Generator | None, model: nn.Module):
    """``data``'s problems in batches of ``batch`` (shuffled by ``g``; in order if None), on
    ``model``'s device."""
    device = next(model.parameters()).device
    n = len(data["answer"])
    order = torch.randperm(n, generator=g) if g is not None else torch.arange(n)
    for i in range(0, n, batch):
        idx = order[i:i + batch]
        yield {k: v[idx].to(device) for k, v in data.items() if isinstance(v, torch.Tensor)}


@torch.no_grad()
def accuracy(model: nn.Module, data: dict, batch: int = 128) -> float:
    """Share of ``data``'s problems whose odd one the model picks."""
    model.eval()
    right = sum((score(model, b).argmax(1) == b["answer"]).sum().item()
                for b in problem_batches(data, batch, None, model))
    return right / len(data["answer"])


def train_base(model: nn.Module, data: dict, *, epochs: int, batch: int, lr: float, seed: int,
               show: bool = False) -> list[float]:
    """Train all of ``model`` on ``data`` with Adam and cross-entropy over the four items; the mean
    loss of each epoch."""
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in bar(range(epochs), "base model", show):
        model.train()
        total = 0.0
        for b in problem_batches(data, batch, g, model):
            loss = F.cross_entropy(score(model, b), b["answer"])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(b["answer"])
        losses.append(total / len(data["answer"]))
    return losses


# ---------------------------------------------------------------- subnetwork search

def train_mask(model: nn.Module, data: dict, *, init: float, lr: float,
               stages: str, epochs: int, batch: int, seed: int,
               lam: float = 1.0, lam_delay: int = 0, lam_warmup: int = 0,
               log: list | None = None,
               show: bool = False) -> masks.MaskSet:
    """Continuous sparsification over the frozen ``model``: attach masks (scores ``s = init``) to the
    layers ``stages`` names, train them on ``data`` with Adam for ``epochs`` epochs, minimising
    cross-entropy plus ``lam * sum(sigmoid(beta * s))``, with ``beta`` multiplied once per epoch so
    that it reaches 200 at the end. The penalty's weight is ``lam`` times the paper's 1e-8 scaled
    to the same total weight over this model's masked weights (the paper masked about 25 million);
    with ``lam_delay``/``lam_warmup`` it is 1x for ``lam_delay`` epochs and then grows linearly to
    ``lam`` times over ``lam_warmup`` epochs (:func:`modlib.mask_density.lam_multiplier`; not in
    the paper). ``log``: if a list, one record per epoch is appended: ``beta`` and the multiple of
    lambda in that epoch, and the share of masked weights kept after it (``kept``, in total;
    ``layer_kept``, per masked weight). Returns the MaskSet, attached and in ``"hard"`` mode;
    ``ms.remove()`` takes it off."""
    ms = masks.attach(model, "sparsify",
                      names=mask_patterns(model, stages), init=init,
                      beta_growth=200 ** (1 / epochs))
    base = 1e-8 * PAPER_TOTAL_MASKED / int(ms.stats()["weights"].sum())
    opt = torch.optim.Adam(ms.parameters(), lr=lr)
    g = torch.Generator().manual_seed(seed)
    model.eval()  # no dropout, no batch statistics: only the masks change
    for epoch in bar(range(epochs),
                     f"mask s0={init} lr={lr} {stages} lam x{lam:g}",
                     show):
        mult = mask_density.lam_multiplier(epoch, lam, lam_delay,
                                           lam_warmup)
        ms.settings["lam"] = base * mult
        ms.mode = "train"
        for b in problem_batches(data, batch, g, model):
            loss = (F.cross_entropy(score(model, b), b["answer"])
                    + ms.regularizer())
            opt.zero_grad()
            loss.backward()
            opt.step()
        beta = ms.beta
        ms.anneal()
        if log is not None:
            kept, layer_kept = mask_density.kept_share(ms)
            log.append({"beta": beta, "lam": mult, "kept": kept,
                        "layer_kept": layer_kept})
    ms.mode = "hard"
    return ms


def evaluate(model: nn.Module, ms: masks.MaskSet, sets: dict, k: int, seed: int = 0) -> dict:
    """Accuracies of the subnetwork for subroutine ``k`` and of the controls on the ``only``
    sets: ``{test: (target, other)}`` for ``hard`` (the subnetwork alone), ``complement`` (the
    model with the subnetwork's weights zeroed: the ablation), ``reinit`` (the ablation with the
    subnetwork's weights replaced by fresh random values, drawn with ``seed`` from a normal with
    each weight tensor's spread), ``random`` (a random subnetwork of the same size per layer) and
    ``random_complement`` (the model with that random subnetwork's weights zeroed: as many weights
    removed per layer as the ablation removes, at random; damage in general), plus ``own``: the
    subnetwork on its mask-training distribution (``sub-k``)."""
    target, other = sets[f"only-{k}"], sets[f"only-{1 - k}"]
    out = {}
    for mode in ("hard", "complement", "random"):
        with ms.use(mode, seed=seed):
            out[mode] = (accuracy(model, target), accuracy(model, other))
    # the "random" mode's subnetwork (masks.random_like with the same seed), removed
    ms.set_masks({name: ~kept for name, kept in masks.random_like(ms.hard_masks(), seed).items()})
    with ms.use("hard"):
        out["random_complement"] = (accuracy(model, target), accuracy(model, other))
    # MaskSet's "reinit" keeps its mask and redraws the rest: given the complement as the mask,
    # it keeps everything but the subnetwork and redraws the subnetwork's weights
    ms.set_masks(None)
    ms.set_masks({name: ~kept for name, kept in ms.hard_masks().items()})
    with ms.use("reinit", seed=seed):
        out["reinit"] = (accuracy(model, target), accuracy(model, other))
    ms.set_masks(None)
    with ms.use("hard"):
        out["own"] = accuracy(model, sets[f"sub-{k}"])
    return out


def quality(own: float, ablated_target: float, ablated_other: float) -> float:
    """The paper's selection rule: 0 unless the subnetwork reaches :data:`GATE` on its own
    subroutine; else ``max(ablated_other, 0.25) - max(ablated_target, 0.25)``, how much more of the
    other subroutine than of its own the model keeps once the subnetwork is removed."""
    if own < GATE:
        return 0.0
    return max(ablated_other, CHANCE) - max(ablated_target, CHANCE)


def problem_sets(rule: str, s: StructureSettings) -> dict:
    """Every problem set one rule needs: ``{(split, kind): problems}``, reproducible."""
    key = (rule, s.train, s.val, s.test, s.mask_train, s.size)
    if key not in _DATA:
        sizes = {"train": {"task": s.train, "sub-0": s.mask_train, "sub-1": s.mask_train},
                 "val": dict.fromkeys(KINDS, s.val), "test": dict.fromkeys(KINDS, s.test)}
        _DATA.clear()  # one rule at a time in memory
        _DATA[key] = {(split, kind): problems(rule, kind, n, seed, s.size)
                      for seed, (split, kinds) in enumerate(sizes.items()) for kind, n in kinds.items()}
    return _DATA[key]


_DATA: dict = {}


CONFIGURATION = ("init", "lr", "stages", "lam")  # what the search chooses per subroutine


def grid_settings(rule: str, s: StructureSettings) -> tuple[tuple[str, ...], tuple[float, ...], dict]:
    """The layer sets and multiples of lambda searched for ``rule``'s modality, and lambda's
    schedule as :func:`train_mask`'s keywords: ``(stages, lams, {"lam_delay": ..., "lam_warmup": ...})``."""
    if rule in VISION:
        stages, lams, (delay, warmup) = s.vision_stages, s.vision_lams, s.vision_lam_schedule
    else:
        stages, lams, (delay, warmup) = s.language_stages, s.language_lams, s.language_lam_schedule
    return stages, lams, {"lam_delay": delay, "lam_warmup": warmup}


def _listed(acc: dict) -> dict:
    return {m: list(v) if isinstance(v, tuple) else v for m, v in acc.items()}


def search(model: nn.Module, rule: str, s: StructureSettings, show: bool = False,
           chosen: dict | None = None) -> dict:
    """Search both subroutines' subnetworks in ``model`` (frozen, trained or not): the grid
    (``inits x mask_lrs x`` the rule's layer sets and multiples of lambda, :func:`grid_settings`;
    mask seed 0) scored on
    validation sets by :func:`quality` among the configurations whose kept share converged
    (:func:`modlib.mask_density.converged`; all of them if none did); the best configuration
    trained with ``mask_seeds`` seeds and tested. ``chosen`` (``{subroutine: configuration}``, as
    a search returns it) skips the grid and trains those configurations instead: the untrained
    control, searched with its trained twin's choice as in the paper. Returns ``{subroutine name:
    {"grid": [...], "chosen": {...}, "chosen_from": "search" or "given", "chosen_converged",
    "passed_gate", "runs": [per seed: accuracies, kept share and its trajectory], "masks",
    "seed_masks"}}``: each grid entry holds its configuration, its validation accuracies and
    quality, its kept share and trajectory (one value per epoch), whether that converged, and the
    seed-0 mask's accuracies on the test sets (``"test"``, as :func:`evaluate` gives them: chapter
    6 compares masks at equal kept share with them); each run its per-layer kept shares, final
    (``layer_kept``) and per epoch (``layer_trajectory``); ``masks`` is seed 0's hard masks and
    ``seed_masks`` those of seeds 0 and 1 (where there are two)."""
    data = problem_sets(rule, s)
    val = {k: v for (split, k), v in data.items() if split == "val"}
    test = {k: v for (split, k), v in data.items() if split == "test"}
    stages_searched, lams, schedule = grid_settings(rule, s)
    out = {}
    for k, name in enumerate(RULES[rule]):
        train = data[("train", f"sub-{k}")]

        def fit(config: dict, seed: int) -> tuple[masks.MaskSet, list]:
            log = []
            ms = train_mask(model, train, **config, **schedule, epochs=s.mask_epochs,
                            batch=s.mask_batch, seed=seed, log=log, show=show)
            return ms, log

        grid = []
        if chosen is None:
            for init, lr, stages, lam in itertools.product(s.inits, s.mask_lrs, stages_searched, lams):
                config = {"init": init, "lr": lr, "stages": stages, "lam": lam}
                ms, log = fit(config, 0)
                acc = evaluate(model, ms, val, k)
                trajectory = [e["kept"] for e in log]
                grid.append({**config, "own": acc["own"], "ablated": acc["complement"],
                             "quality": quality(acc["own"], *acc["complement"]), "kept": trajectory[-1],
                             "kept_trajectory": trajectory, "converged": mask_density.converged(trajectory),
                             "test": _listed(evaluate(model, ms, test, k))})
                ms.remove()
            pool = [i for i, g in enumerate(grid) if g["converged"]] or list(range(len(grid)))
            best = max(pool, key=lambda i: grid[i]["quality"])  # ties: the first
            config = {key: grid[best][key] for key in CONFIGURATION}
            passed, converged = grid[best]["own"] >= GATE, grid[best]["converged"]
        else:
            config = {key: chosen[name][key] for key in CONFIGURATION}
        runs, seed_masks = [], []
        for seed in range(s.mask_seeds):
            ms, log = fit(config, seed)
            acc = evaluate(model, ms, test, k, seed=seed)
            if chosen is not None and seed == 0:  # the gate, on validation, for the given configuration
                passed = evaluate(model, ms, val, k)["own"] >= GATE
                converged = mask_density.converged([e["kept"] for e in log])
            trajectory = [e["kept"] for e in log]
            runs.append({"seed": seed, **_listed(acc), "kept": trajectory[-1], "layers": ms.names,
                         "layer_kept": log[-1]["layer_kept"], "kept_trajectory": trajectory,
                         "converged": mask_density.converged(trajectory),
                         "layer_trajectory": [e["layer_kept"] for e in log]})
            if seed < 2:
                seed_masks.append(ms.hard_masks())
            ms.remove()
        out[name] = {"grid": grid, "chosen": config, "chosen_from": "search" if chosen is None else "given",
                     "chosen_converged": bool(converged), "passed_gate": bool(passed), "runs": runs,
                     "masks": seed_masks[0], "seed_masks": seed_masks}
    return out


# ---------------------------------------------------------------- stored results

def run_one(rule: str, seed: int, trained: bool, s: StructureSettings, device: torch.device,
            show: bool = False, chosen: dict | None = None) -> tuple[dict, dict]:
    """One stored result: base model ``seed`` for ``rule``, trained on the task (or, for the control,
    left untrained), its task accuracy, and :func:`search` in it (``chosen``: the configurations
    to train instead of searching, the untrained control's, from its trained twin). ``(metrics,
    arrays)``: the arrays are, over the layers either subroutine's chosen configuration masks
    (``metrics["overlap"]["layers"]``, in the model's order), each subroutine's per-layer kept
    shares ``kept-{sub} [mask_seeds, layers]`` and their trajectories ``kept-trajectory-{sub}
    [mask_seeds, epochs, layers]``, the per-layer overlap (intersection over union) of the two
    subroutines' seed-0 masks ``overlap [layers]`` and, where there are two mask seeds, of one
    subroutine's masks from seeds 0 and 1 ``seed-overlap-{sub} [layers]`` (the reference for
    overlap: how alike two masks of the same subroutine are). A layer a configuration leaves
    unmasked is whole in its subnetwork: kept 1."""
    data = problem_sets(rule, s)
    return study(make_model(rule, s, seed).to(device), data, rule, seed, trained, s, show, chosen)


def study(model: nn.Module, data: dict, rule: str, seed: int, trained: bool, s: StructureSettings,
          show: bool = False, chosen: dict | None = None) -> tuple[dict, dict]:
    """What :func:`run_one` does with a base model it has made: train ``model`` on ``data``'s task
    (data order ``seed``) if ``trained``, measure it, and search it when it passes the base gate.
    Chapter 6 calls it with a model that starts from pretrained weights."""
    losses = []
    if trained:
        lr = s.vision_lr if rule in VISION else s.language_lr
        losses = train_base(model, data[("train", "task")], epochs=s.epochs, batch=s.batch, lr=lr,
                            seed=seed, show=show)
    base = {kind: accuracy(model, data[("test", kind)]) for kind in KINDS}
    metrics = {"rule": rule, "seed": seed, "trained": trained, "losses": losses, "base": base,
               "searched": (not trained) or base["task"] >= s.base_gate}
    arrays = {}
    if metrics["searched"]:
        found = search(model, rule, s, show=show, chosen=chosen)
        names = RULES[rule]
        # the two subroutines may have chosen different layer sets ("all" or "later")
        seed_masks = [found[name].pop("seed_masks", []) for name in names]
        chosen_masks = [found[name].pop("masks") for name in names]
        weights = dict(model.named_parameters())
        layers = [n for n in weights if any(n in m for m in chosen_masks)]

        def whole(m: dict) -> dict:  # a layer the mask leaves out is kept whole
            return {n: m[n] if n in m else torch.ones_like(weights[n], dtype=torch.bool) for n in layers}

        overlap = masks.iou(*map(whole, chosen_masks))
        metrics["subroutines"] = found
        metrics["overlap"] = {"layers": layers, "iou": [float(overlap[n]) for n in layers]}
        metrics["seed_overlap"] = {}
        for name, pair in zip(names, seed_masks):
            runs = found[name]["runs"]
            kept = [dict(zip(r["layers"], r["layer_kept"])) for r in runs]
            arrays[f"kept-{name}"] = np.array([[k.get(n, 1.0) for n in layers] for k in kept])
            per_epoch = [[dict(zip(r["layers"], e)) for e in r.pop("layer_trajectory", [])] for r in runs]
            if all(per_epoch):
                arrays[f"kept-trajectory-{name}"] = np.array(
                    [[[e.get(n, 1.0) for n in layers] for e in run] for run in per_epoch])
            if len(pair) == 2:
                same = masks.iou(*map(whole, pair))
                arrays[f"seed-overlap-{name}"] = np.array([float(same[n]) for n in layers])
                metrics["seed_overlap"][name] = float(masks.iou(*pair, per_layer=False))
        arrays["overlap"] = np.array(metrics["overlap"]["iou"])
    return metrics, arrays


def result_names(s: StructureSettings) -> list[str]:
    """Every stored result of ``s``: per rule, ``{rule}-{seed}`` for the base models and
    ``{rule}-untrained-{seed}`` for the control."""
    return [name for rule in s.rules for name in
            [f"{rule}-{i}" for i in range(s.base_models)]
            + [f"{rule}-untrained-{i}" for i in range(s.untrained)]]


def parse_name(name: str) -> tuple[str, int, bool]:
    rule, _, rest = name.rpartition("-")
    if rule.endswith("-untrained"):
        return rule[: -len("-untrained")], int(rest), False
    return rule, int(rest), True


def result_config(s: StructureSettings, rule: str) -> dict:
    """What decides a result of ``rule``: the settings that apply to it."""
    config = asdict(s)
    config["rules"] = [rule]
    return config


def identity(name: str) -> dict:
    """What tells the stored result ``name`` (:func:`result_names`) from the others of its rule, as
    its config records it: the base model's seed and whether it was trained (``sv-plural-1`` and
    ``sv-plural-2`` have the same settings; without these a copy of one would stand for the other).
    A sweep (``sweep-{rule}``, :mod:`~modlib.structural_compositionality.sweep`) has none to add:
    its config holds its rule, and its base model is always seed 0."""
    rule, _, rest = name.rpartition("-")
    if rule.removesuffix("-untrained") not in RULES or not rest.isdigit():
        return {}
    _, seed, trained = parse_name(name)
    return {"seed": seed, "trained": trained}


@dataclass
class StructureRuns:
    """The stored results of a profile: ``rows`` by result name (:func:`result_names`)."""

    settings: StructureSettings
    rows: dict
    profile: str


def searched(profile: str, device: torch.device, s: StructureSettings, rule: str, seed: int,
             needs: str) -> results.Result:
    """The result ``{rule}-{seed}`` (loaded, or computed and stored) that an added experiment reads;
    ValueError where its base model was not searched, saying so and what is missing (``needs``)."""
    source = run(profile, device, s=s, names=[f"{rule}-{seed}"]).rows[f"{rule}-{seed}"]
    if not source.metrics.get("searched"):
        raise ValueError(f"{rule}-{seed} was not searched (its base model missed the gate): {needs}")
    return source


def read_stored(fetches: dict) -> dict[str, results.Result]:
    """The results of ``fetches`` (``{name: a call that loads or computes it}``) stored now, read
    without computing any: one not stored, stale, or whose source was not searched is left out (the
    page decides the claims of the added experiments from what is there; each runs as a job)."""
    out = {}
    for name, fetch in fetches.items():
        with results.store_only():
            try:
                out[name] = fetch()
            except (results.StaleResultError, ValueError):
                continue
    return out


def run(profile: str, device: torch.device, *, s: StructureSettings | None = None,
        names: list[str] | None = None, show: bool = False) -> StructureRuns:
    """Load (or compute and store) the results ``names`` (default: all of ``s``) at ``profile``.
    An untrained control ``{rule}-untrained-{i}`` reads its trained twin ``{rule}-{i}`` (fetched
    first) and trains the masks its search chose (its own search where the twin was not searched)."""
    s = s or settings(profile)
    rows = {}

    def fetch(name: str, chosen: dict | None = None, depends: tuple = ()) -> results.Result:
        rule, seed, trained = parse_name(name)
        return results.fetch(CHAPTER, name, {**result_config(s, rule), **identity(name)},
                             lambda: run_one(rule, seed, trained, s, device, show, chosen),
                             profile=profile, device=describe(device), code=run_one, depends=list(depends))

    for name in names or result_names(s):
        rule, seed, trained = parse_name(name)
        if trained:
            rows[name] = fetch(name)
            continue
        twin = f"{rule}-{seed}"
        twin_result = rows.get(twin) or fetch(twin)
        found = twin_result.metrics.get("subroutines") or {}
        chosen = {sub: f["chosen"] for sub, f in found.items()} or None
        rows[name] = fetch(name, chosen, [twin_result])
    return StructureRuns(s, rows, profile)
