"""Pretraining and the consistency of modular structure (chapter 6,
notebooks/pretraining_consistency.ipynb; Lepori, Serre & Pavlick 2023, section 6).

Chapter 5 trained base models from random weights and searched them for subnetworks. Here the
same base models are trained again from a *pretrained* initialisation, and the same search runs
in them: does pretraining make the modular pattern (ablating a subroutine's subnetwork hurts that
subroutine more than the other) appear in more base models, and vary less from one to the next?

This module reuses chapter 5 (:mod:`modlib.structural_compositionality`) unchanged, the one
place where a chapter module imports another: its problems, models, base training, subnetwork
search and evaluation, and its settings per profile. Its own pieces:

- the pretrained weights, each one stored result (:func:`pretrained`): a BERT of chapter 5's shape
  pretrained with masked-language modelling on :func:`modlib.pretraining_consistency.pretraining.corpus`, and the vision
  model's ResNet pretrained SimCLR-style on unlabelled panels. At ``paper`` the language model is
  the paper's own, ``prajjwal1/bert-small`` from the hub (:class:`HubLanguageModel`), where the
  hub can be reached; otherwise the book's MLM checkpoint of the paper's shape;
- :func:`run_one`: a base model fine-tuned from those weights, then chapter 5's search in it;
- the scratch arm: chapter 5's own results (:func:`modlib.structural_compositionality.run_one`),
  read from chapter 5's store for the base models chapter 5 made, made here for the others;
- at ``default`` (a reader's run, within 3 minutes of CPU: issue 56) the chapter trains and
  searches with its own lighter copy of chapter 5's default settings (:func:`structure`), so both
  arms' base models are made here (:func:`fine_tune`: full's entry :func:`run_one` with those
  settings given), trains no extra masks (:data:`EXTRA_MASKS`) and shows full's stored sweeps
  (:data:`SWEEPS`).

What the results show (the ablation effect per base model, its spread, the statements the page
makes) is computed in :mod:`modlib.pretraining_consistency.findings`, apart from the code that makes the results.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from torch import nn

from modlib import profiles, results
from modlib.data import sentences as agreement
from modlib.pretraining_consistency import pretraining
from modlib.profiles import check_choices, check_int, check_range, settings_for
from modlib.runtime import describe
from modlib.structural_compositionality import experiment as sc  # chapter 5's experiment, reused by name
from modlib.structural_compositionality import sweep as sc_sweep

CHAPTER = "pretraining_consistency"
INITS = ("scratch", "pretrained")
HUB_MODEL = "prajjwal1/bert-small"  # the paper's BERT-small, 4 layers, hidden 512


@profiles.settings
class PretrainingSettings:
    """What chapter 6 adds to chapter 5's settings (which it uses unchanged, per profile)."""

    rules: tuple[str, ...] = ("sv-plural", "inside-contact")
    seeds: int = 5  # base models per initialisation
    # language: masked-language modelling on the generated corpus (offline), or the hub's model
    hub: bool = True  # try the paper's pretrained BERT from the hub first
    corpus: int = 20_000
    mlm_steps: int = 8_000
    mlm_batch: int = 128
    mlm_lr: float = 1e-3
    # vision: SimCLR on unlabelled panels of the task's shape world
    panels: int = 10_000
    simclr_steps: int = 7_800  # 100 epochs of batch 128 over the 10,000 panels here (the paper pooled
    # the training panels of three rules, so its 100 epochs are more steps; its views differ too)
    simclr_batch: int = 128
    simclr_lr: float = 5e-4
    temperature: float = 0.07

    def __post_init__(self):
        check_choices("rules", self.rules, sc.RULES)
        for name in ("seeds", "corpus", "mlm_steps", "mlm_batch", "panels", "simclr_steps"):
            check_int(name, getattr(self, name), 1)
        check_int("simclr_batch", self.simclr_batch, 2)
        for name in ("mlm_lr", "simclr_lr"):
            check_range(name, getattr(self, name), 0.0, 1.0, open_low=True)
        check_range("temperature", self.temperature, 0.0, 10.0, open_low=True)


PAPER = PretrainingSettings()
FULL = PAPER.with_(hub=False, simclr_steps=3_000)
SETTINGS = {
    "smoke": PAPER.with_(seeds=2, hub=False, corpus=200, mlm_steps=5, mlm_batch=16, panels=64,
                         simclr_steps=3, simclr_batch=16),
    # default: a reader's run within 3 minutes of CPU (issue 56): the paper's own case, language,
    # fine-tuned from full's stored checkpoints (SOURCE), with chapter 5's default search in
    # lighter base models (STRUCTURE); the sweeps are full's, stored (SWEEPS)
    "default": FULL.with_(rules=("sv-plural",), seeds=2),
    "full": FULL,
    "paper": PAPER,
}
SOURCE = {"smoke": "smoke", "default": "full", "full": "full", "paper": "paper"}  # whose checkpoints
SWEEPS = {"smoke": "smoke", "default": "full", "full": "full", "paper": "paper"}  # whose sweeps the page shows
# Chapter 5's settings this chapter trains and searches with where they are not chapter 5's own
# (:func:`structure`): at default, chapter 5's default search with a quarter of its base training (5
# epochs: its BERTs reached 1.00 on the task's test set after 5, in the run measured for issue 56), so
# that both arms' base models are this chapter's own, trained alike
STRUCTURE = {"default": sc.SETTINGS["default"].with_(rules=("sv-plural",), epochs=5)}


def settings(profile: str | None = None) -> PretrainingSettings:
    return settings_for(SETTINGS, profile)


def structure(profile: str | None = None) -> sc.StructureSettings:
    """Chapter 5's settings (:class:`modlib.structural_compositionality.StructureSettings`) that
    this chapter's base models of ``profile`` are trained and searched with: :data:`STRUCTURE`'s
    where it has the profile (then every base model of both arms is this chapter's own, trained by
    :func:`fine_tune` or chapter 5's :func:`~modlib.structural_compositionality.run_one` with them),
    else chapter 5's own, whose scratch base models are read from chapter 5's store."""
    profile = profiles.resolve(profile)
    return STRUCTURE.get(profile) or sc.settings(profile)


def own_structure(profile: str | None = None) -> bool:
    """Whether ``profile``'s base models are this chapter's own (:data:`STRUCTURE`), none of them
    chapter 5's."""
    return profiles.resolve(profile) in STRUCTURE


def borrowed(profile: str | None = None) -> set[str]:
    """The scratch base models of ``profile`` that are chapter 5's, read from its store
    (``{rule}-scratch-{seed}``, :func:`result_names`); none where the profile has its own
    :func:`structure`."""
    if own_structure(profile):
        return set()
    p, s = settings(profile), sc.settings(profile)
    return {f"{rule}-scratch-{i}" for rule in p.rules for i in range(s.base_models)}


RULE_NAMES = {"sv-plural": "subject-verb agreement", "inside-contact": "Inside-Contact",
              "number-contact": "Number-Contact"}


def profile_text(profile: str | None = None) -> str:
    """What ``profile`` trains and searches, in words, from its settings (the page's box glues it):
    its rules, base models per initialisation, chapter 5's search and how this chapter's settings
    differ from chapter 5's there (:data:`STRUCTURE`), and what it reads from another profile
    (:data:`SOURCE`, :data:`SWEEPS`)."""
    profile = profiles.resolve(profile)
    p, s = settings(profile), structure(profile)
    parts = [f"{' and '.join(RULE_NAMES.get(r, r) for r in p.rules)}, "
             f"{p.seeds} base models per initialisation, chapter 5's `{profile}` search"]
    if own_structure(profile):
        ours, theirs = asdict(s), asdict(sc.settings(profile))
        words = {"epochs": "base-training epochs", "train": "training problems", "mask_epochs": "mask epochs"}
        changed = [f"{ours[k]} {words.get(k, k.replace('_', ' '))} (chapter 5's: {theirs[k]})" for k in ours
                   if k != "rules" and ours[k] != theirs[k]]
        parts[0] += (f" with {', '.join(changed)}" if changed else "")
        parts.append("both arms' base models made here")
    if SOURCE[profile] != profile:
        parts.append(f"fine-tunes from the stored `{SOURCE[profile]}` checkpoints")
    if not EXTRA_MASKS[profile] and any(r in MATCH_LAMS for r in p.rules):
        parts.append("no extra masks at comparable density")
    if SWEEPS[profile] != profile:
        parts.append(f"the sweeps of the penalty weight are `{SWEEPS[profile]}`'s, stored")
    return "; ".join(parts)


# ---------------------------------------------------------------- pretrained weights

def _state_arrays(module: nn.Module) -> dict[str, np.ndarray]:
    return {name: t.detach().cpu().numpy() for name, t in module.state_dict().items()}


def _pretrain_language(p: PretrainingSettings, s: sc.StructureSettings) -> tuple[dict, dict]:
    sentences = pretraining.corpus(p.corpus, seed=0)
    chance = pretraining.agreement_probe(pretraining.mlm_model(s, seed=0))
    mlm, losses = pretraining.pretrain_mlm(s, sentences, steps=p.mlm_steps, batch=p.mlm_batch,
                                          lr=p.mlm_lr, seed=0)
    metrics = {"sentences": p.corpus, "templates": list(pretraining.TEMPLATES), "losses": losses[::50],
               "final_loss": float(np.mean(losses[-100:])), "probe_untrained": chance,
               "probe": pretraining.agreement_probe(mlm), "examples": sentences[:8]}
    return metrics, _state_arrays(mlm.bert)


def _pretrain_vision(p: PretrainingSettings, s: sc.StructureSettings) -> tuple[dict, dict]:
    # unlabelled panels: the items of Inside-Contact task problems drawn for this (not for training)
    items = sc.problems("inside-contact", "task", -(-p.panels // 4), seed=100, size=s.size)["images"]
    panels = items.flatten(0, 1)[:p.panels]  # [panels, 3, size, size]
    model = sc.make_model("inside-contact", s, seed=0)
    losses = pretraining.pretrain_simclr(model, panels, steps=p.simclr_steps, batch=p.simclr_batch,
                                         lr=p.simclr_lr, temperature=p.temperature, seed=0)
    metrics = {"panels": len(panels), "losses": losses[::25], "final_loss": float(np.mean(losses[-100:])),
               "chance_loss": float(np.log(2 * p.simclr_batch - 1)),
               "probe": property_probe(model.resnet, s),
               "probe_untrained": property_probe(sc.make_model("inside-contact", s, seed=0).resnet, s)}
    return metrics, _state_arrays(model.resnet)  # the projection head is dropped, as in SimCLR


@torch.no_grad()
def _features(resnet: nn.Module, images: torch.Tensor) -> torch.Tensor:
    resnet.eval()
    return torch.cat([resnet(images[i:i + 256].float().div(255)).pooler_output.flatten(1)
                      for i in range(0, len(images), 256)])  # [N, C]


def property_probe(resnet: nn.Module, s: sc.StructureSettings, n: int = 500) -> dict[str, float]:
    """What a frozen ResNet's pooled features say about single panels: per property (inside,
    contact), a logistic regression on the panels of ``n`` Inside-Contact problems in which that
    property is random in every item (the other subroutine's ``sub`` set, seed 101), tested on
    ``n // 2`` more (seed 102). Test accuracy per property; about half the panels have it, so
    chance is about 0.5."""
    out = {}
    for k, name in enumerate(sc.RULES["inside-contact"]):
        train, test = (sc.problems("inside-contact", f"sub-{1 - k}", m, seed=seed, size=s.size)
                       for m, seed in ((n, 101), (n // 2, 102)))
        x, x_test = (_features(resnet, d["images"].flatten(0, 1)) for d in (train, test))  # [4m, C]
        y, y_test = (d["props"].flatten(0, 1)[:, k].float() for d in (train, test))  # [4m]
        mean, std = x.mean(0), x.std(0) + 1e-6
        x, x_test = (x - mean) / std, (x_test - mean) / std
        torch.manual_seed(0)
        probe = nn.Linear(x.shape[1], 1)
        opt = torch.optim.Adam(probe.parameters(), lr=1e-2, weight_decay=1e-4)
        for _ in range(500):
            loss = nn.functional.binary_cross_entropy_with_logits(probe(x).squeeze(1), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            out[name] = float(((probe(x_test).squeeze(1) > 0).float() == y_test).float().mean())
    return out


def _pretraining_config(kind: str, p: PretrainingSettings, s: sc.StructureSettings) -> dict:
    if kind == "language":
        return {"bert": [s.bert_layers, s.bert_hidden, s.bert_heads], "corpus": p.corpus,
                "steps": p.mlm_steps, "batch": p.mlm_batch, "lr": p.mlm_lr}
    return {"resnet": s.resnet, "stem_pool": s.stem_pool, "size": s.size, "mlp_hidden": s.mlp_hidden,
            "embed": s.embed, "panels": p.panels, "steps": p.simclr_steps, "batch": p.simclr_batch,
            "lr": p.simclr_lr, "temperature": p.temperature}


def pretrained(kind: str, profile: str, device: torch.device | None = None) -> results.Result:
    """The stored pretraining result ``kind`` (``"language"``: MLM; ``"vision"``: SimCLR) that
    ``profile`` fine-tunes from, made at profile :data:`SOURCE` ``[profile]``: metrics (losses,
    probe) and the pretrained encoder's state dict as arrays."""
    profiles.check_choice("kind", kind, ("language", "vision"))
    source = SOURCE[profiles.resolve(profile)]
    p, s = settings(source), sc.settings(source)
    make = _pretrain_language if kind == "language" else _pretrain_vision
    return results.fetch(CHAPTER, f"pretrain-{kind}", _pretraining_config(kind, p, s),
                         lambda: make(p, s), profile=source,
                         device=describe(device or torch.device("cpu")), code=make)


class HubLanguageModel(nn.Module):
    """A hub BERT (``BertModel``) in place of chapter 5's :class:`LanguageModel`: it takes the
    agreement vocabulary's token ids ``[N, L]`` (as :func:`modlib.data.sentences.encode` makes them),
    spells each word in the hub tokenizer's word pieces, and returns the [CLS] vector ``[N, hidden]``."""

    def __init__(self, bert, tokenizer):
        super().__init__()
        self.bert = bert
        special = {"[PAD]": tokenizer.pad_token_id, "[UNK]": tokenizer.unk_token_id,
                   "[CLS]": tokenizer.cls_token_id, "[SEP]": tokenizer.sep_token_id,
                   "[MASK]": tokenizer.mask_token_id}
        self.pieces = [[special[w]] if w in special else tokenizer(w, add_special_tokens=False)["input_ids"]
                       for w in agreement.VOCAB]
        self.pad = tokenizer.pad_token_id

    stage_names = sc.LanguageModel.stage_names

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        rows = [[piece for i, m in zip(ids, mask) if m for piece in self.pieces[i]]
                for ids, mask in zip(input_ids.tolist(), attention_mask.tolist())]
        length = max(map(len, rows))
        ids = torch.tensor([r + [self.pad] * (length - len(r)) for r in rows], device=input_ids.device)
        attention = torch.tensor([[1] * len(r) + [0] * (length - len(r)) for r in rows], device=input_ids.device)
        return self.bert(input_ids=ids, attention_mask=attention).last_hidden_state[:, 0]


def hub_language_model(source: str = HUB_MODEL) -> HubLanguageModel:
    """The pretrained BERT ``source`` (a hub name or a local
    ``save_pretrained`` directory holding the model and its tokenizer)
    through ``from_pretrained``, dropout 0, as a :class:`HubLanguageModel`."""
    from transformers import AutoTokenizer, BertModel

    bert = BertModel.from_pretrained(source, add_pooling_layer=False,
                                     hidden_dropout_prob=0.0,
                                     attention_probs_dropout_prob=0.0)
    return HubLanguageModel(bert, AutoTokenizer.from_pretrained(source))


def language_init(profile: str, device: torch.device | None = None,
                  hub: str = HUB_MODEL):
    """Where the pretrained language model comes from at ``profile``:
    ``(hub model or None, stored MLM result or None, a line saying which)``.
    Tries ``hub`` when the profile's settings ask for it, then falls back to
    the book's own MLM checkpoint (:func:`pretrained`)."""
    if settings(profile).hub:
        try:
            return (hub_language_model(hub), None,
                    f"pretrained language model: {hub} (from the hub)")
        except OSError as err:  # offline, or no such model
            reason = (f"{hub} could not be loaded ({type(err).__name__}: "
                      f"{str(err).splitlines()[0]})")
        stored = pretrained("language", profile, device)
        return (None, stored,
                f"{reason}; using the book's own MLM checkpoint instead")
    return (None, pretrained("language", profile, device),
            "pretrained language model: the book's own MLM checkpoint "
            "(masked-language modelling on the generated corpus)")


# ---------------------------------------------------------------- base models

def pretrained_model(rule: str, seed: int, profile: str,
                     device: torch.device) -> nn.Module:
    """Chapter 5's model for ``rule`` (weights drawn from ``seed``) with its encoder replaced by the
    pretrained one: the BERT wholly, the vision model's ResNet (its MLP head stays random)."""
    s = sc.settings(profile)
    model = sc.make_model(rule, s, seed)
    if rule in sc.VISION:
        stored = pretrained("vision", profile, device)
        model.resnet.load_state_dict(
            {k: torch.from_numpy(v) for k, v in stored.arrays.items()})
        return model
    hub, stored, _ = language_init(profile, device)
    if hub is not None:
        return hub
    model.bert.load_state_dict(
        {k: torch.from_numpy(v) for k, v in stored.arrays.items()})
    return model


def run_one(rule: str, seed: int, profile: str, device: torch.device,
            show: bool = False) -> tuple[dict, dict]:
    """A base model for ``rule`` fine-tuned from the pretrained weights (:func:`pretrained_model`)
    on the task with data order ``seed``, then chapter 5's search in it if it passes the base gate;
    the metrics and arrays (kept shares and their trajectories, the masks' overlaps) as
    :func:`modlib.structural_compositionality.run_one` gives them."""
    s = sc.settings(profile)
    data = sc.problem_sets(rule, s)  # chapter 5's problem sets, shared
    model = pretrained_model(rule, seed, profile, device).to(device)
    return sc.study(model, data, rule, seed, True, s, show)


def fine_tune(rule: str, seed: int, s: sc.StructureSettings, profile: str, device: torch.device,
              show: bool = False) -> tuple[dict, dict]:
    """:func:`run_one` with chapter 5's settings ``s`` given (:func:`structure`), not chapter 5's
    own at ``profile``; ``profile`` still picks the checkpoints (:data:`SOURCE`) and the model's
    shape, which ``s`` must share."""
    model = pretrained_model(rule, seed, profile, device).to(device)
    return sc.study(model, sc.problem_sets(rule, s), rule, seed, True, s, show)


# ---------------------------------------------------------------- the two tests against density

def sweep_pretrained(rule: str, profile: str, device: torch.device, show: bool = False) -> tuple[dict, dict]:
    """Chapter 5's sweep of lambda (:func:`modlib.structural_compositionality.sweep.sweep_model`)
    in base model 0 of ``rule`` fine-tuned from the pretrained weights: the pretrained arm's masks
    at every density, to set beside chapter 5's sweep of the same base model from scratch."""
    model = pretrained_model(rule, 0, profile, device).to(device)
    return sc_sweep.sweep_model(model, rule, sc.settings(profile), sc_sweep.settings(profile), show)


def sweep_names(profile: str) -> list[str]:
    """The pretrained sweeps made at ``profile``: ``sweep-{rule}-pretrained`` for each rule chapter 5
    sweeps (:data:`modlib.structural_compositionality.sweep.SETTINGS`) that this chapter studies;
    none where the page shows another profile's (:data:`SWEEPS`)."""
    if SWEEPS[profiles.resolve(profile)] != profiles.resolve(profile):
        return []
    rules = settings(profile).rules
    return [f"sweep-{rule}-pretrained" for rule in sc_sweep.settings(profile).rules if rule in rules]


def sweep(rule: str, profile: str, device: torch.device, show: bool = False) -> results.Result:
    """Load (or compute and store) the pretrained sweep of ``rule`` at ``profile``."""
    p, s, w = settings(profile), sc.settings(profile), sc_sweep.settings(profile)
    checkpoint = pretrained("vision" if rule in sc.VISION else "language", profile, device)
    config = {"structure": sc.result_config(s, rule), "lams": list(sc_sweep.lams(rule, w)),
              "pretraining": {k: v for k, v in asdict(p).items() if k not in ("rules", "seeds")}}
    return results.fetch(CHAPTER, f"sweep-{rule}-pretrained", config,
                         lambda: sweep_pretrained(rule, profile, device, show), profile=profile,
                         device=describe(device), code=sweep_pretrained, depends=[checkpoint])


# The multiples of lambda at which every pretrained base model of a rule gets one more mask per
# subroutine, so that the two arms can be compared at comparable density (findings.matched_density): the
# search's own multiples (x300, x1000) leave the pretrained BERT's masks about eight times sparser than
# the scratch arm's; at x10 they keep about as much (base model 0's sweep: 4-5 %, scratch 4-8 %)
MATCH_LAMS = {"sv-plural": (10.0,)}


# Whether a profile's pretrained base models get those masks: not at default, where they cost a third of
# the reader's run (each fine-tunes its base model again) and, in the run measured for issue 56, none of
# them qualified for the comparison at comparable density (findings.matched_density); full's are stored
EXTRA_MASKS = {"smoke": True, "default": False, "full": True, "paper": True}


def matched_names(profile: str) -> dict[str, tuple[str, int]]:
    """The pretrained base models' masks at :data:`MATCH_LAMS`: ``{"matched-{rule}-pretrained-{seed}":
    (rule, seed)}``; none where :data:`EXTRA_MASKS` says so."""
    p = settings(profile)
    if not EXTRA_MASKS[profiles.resolve(profile)]:
        return {}
    return {f"matched-{rule}-pretrained-{i}": (rule, i) for rule in p.rules if rule in MATCH_LAMS
            for i in range(p.seeds)}


def matched_masks(rule: str, seed: int, profile: str, device: torch.device,
                  show: bool = False) -> tuple[dict, dict]:
    """Pretrained base model ``seed`` of ``rule``, fine-tuned as :func:`run_one` fine-tunes it (the
    same model), with one mask per subroutine at each multiple of :data:`MATCH_LAMS` ``[rule]``
    (mask seed 0, the search's first configuration), measured as a sweep measures them."""
    s = sc.settings(profile)
    w = sc_sweep.SweepSettings(rules=(rule,), language_lams=MATCH_LAMS[rule], vision_lams=MATCH_LAMS[rule])
    model = pretrained_model(rule, seed, profile, device).to(device)
    return sc_sweep.sweep_model(model, rule, s, w, show, seed=seed)


def matched(rule: str, seed: int, profile: str, device: torch.device, show: bool = False) -> results.Result:
    """Load (or compute and store) :func:`matched_masks` at ``profile``."""
    p, s = settings(profile), sc.settings(profile)
    checkpoint = pretrained("vision" if rule in sc.VISION else "language", profile, device)
    config = {"structure": sc.result_config(s, rule), "lams": list(MATCH_LAMS[rule]), "seed": seed,
              "pretraining": {k: v for k, v in asdict(p).items() if k not in ("rules", "seeds")}}
    return results.fetch(CHAPTER, f"matched-{rule}-pretrained-{seed}", config,
                         lambda: matched_masks(rule, seed, profile, device, show), profile=profile,
                         device=describe(device), code=matched_masks, depends=[checkpoint])


def sweeps(profile: str, device: torch.device, show: bool = False) -> dict[str, dict[str, results.Result]]:
    """Both arms' sweeps that the page of ``profile`` shows, by rule: ``{rule: {"scratch": chapter
    5's, "pretrained": this chapter's}}``, made at :data:`SWEEPS` ``[profile]`` (at default: full's,
    stored; their provenance says so)."""
    source = SWEEPS[profiles.resolve(profile)]
    rules = [name.split("-", 1)[1].rsplit("-", 1)[0] for name in sweep_names(source)]
    rules = [rule for rule in rules if rule in settings(profile).rules]
    return {rule: {"scratch": sc_sweep.fetch(rule, source, device, show),
                   "pretrained": sweep(rule, source, device, show)} for rule in rules}


# ---------------------------------------------------------------- stored results

def result_names(p: PretrainingSettings) -> list[str]:
    """Every base model of ``p``: ``{rule}-{init}-{seed}``, for each rule, init and seed."""
    return [f"{rule}-{init}-{i}" for rule in p.rules for init in INITS for i in range(p.seeds)]


def identity(name: str) -> dict:
    """What tells the stored base model ``name`` (``{rule}-{init}-{seed}``, :func:`result_names`)
    from the others of its rule, as its config records it: its seed and init (the five seeds of a
    rule and init have the same settings; without these a copy of one would stand for another).
    The other results of the chapter carry theirs already (``matched-...``: its seed; a sweep or a
    pretraining result: its rule or kind), so they have none to add."""
    parts = name.rsplit("-", 2)
    if len(parts) != 3 or parts[0] not in sc.RULES or parts[1] not in INITS or not parts[2].isdigit():
        return {}
    return {"seed": int(parts[2]), "init": parts[1]}


@dataclass
class PretrainingRuns:
    """The stored results of a profile: ``rows`` by result name (:func:`result_names`), the two
    pretraining results, the line that says where the language model came from, and the pretrained
    base models' masks at :data:`MATCH_LAMS` (``matched``, by name: :func:`matched_names`)."""

    settings: PretrainingSettings
    rows: dict
    pretraining: dict
    language_source: str
    profile: str
    matched: dict = field(default_factory=dict)  # name -> the masks at MATCH_LAMS (the whole chapter only)


def run(profile: str, device: torch.device, *, names: list[str] | None = None,
        show: bool = False) -> PretrainingRuns:
    """Load (or compute and store) the results ``names`` (default: all, and then the pretrained
    masks at :data:`MATCH_LAMS` too) at ``profile``. The scratch base models that chapter 5 made are
    read from its store; the rest are stored here."""
    p, s = settings(profile), structure(profile)
    whole = names is None
    names = names or result_names(p)
    _, _, source = language_init(profile, device)
    made = {}
    if any(n.rsplit("-", 2)[0] in sc.VISION for n in names):
        made["vision"] = pretrained("vision", profile, device)
    if any(n.rsplit("-", 2)[0] not in sc.VISION for n in names):
        made["language"] = pretrained("language", profile, device)
    rows = {}
    for name in names:
        rule, init, seed = name.rsplit("-", 2)
        seed = int(seed)
        profiles.check_choice("init", init, INITS)
        if init == "scratch" and seed < s.base_models and not own_structure(profile):
            rows[name] = sc.run(profile, device, names=[f"{rule}-{seed}"], show=show).rows[f"{rule}-{seed}"]
        elif init == "scratch":
            rows[name] = results.fetch(CHAPTER, name, {**sc.result_config(s, rule), **identity(name)},
                                       lambda r=rule, i=seed: sc.run_one(r, i, True, s, device, show),
                                       profile=profile, device=describe(device),
                                       code=sc.run_one)
        else:
            config = {**sc.result_config(s, rule), **identity(name),
                      "pretraining": {k: v for k, v in asdict(p).items() if k not in ("rules", "seeds")}}
            checkpoint = made["vision" if rule in sc.VISION else "language"]  # run_one reads it
            if own_structure(profile):
                compute, code = (lambda r=rule, i=seed: fine_tune(r, i, s, profile, device, show)), fine_tune
            else:
                compute, code = (lambda r=rule, i=seed: run_one(r, i, profile, device, show)), run_one
            rows[name] = results.fetch(CHAPTER, name, config, compute, profile=profile,
                                       device=describe(device), code=code, depends=[checkpoint])
    extra = {name: matched(rule, seed, profile, device, show)
             for name, (rule, seed) in (matched_names(profile) if whole else {}).items()}
    return PretrainingRuns(p, rows, made, source, profile, extra)
