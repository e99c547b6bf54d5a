"""Pretrained initialisations for chapter 6 (notebooks/pretraining_consistency.ipynb: pretraining
and the consistency of modular structure; Lepori et al. 2023, section 6): the offline language
model's masked-language-modelling corpus and training; and SimCLR-style contrastive pretraining of
the vision model on unlabelled panels (:func:`pretrain_simclr`).

The paper fine-tunes BERT-small from its masked-language-model weights. Offline, the book makes its
own: a BERT of chapter 5's shape (:class:`modlib.structural_compositionality.LanguageModel`)
pretrained with masked-language modelling on :func:`corpus`, grammatical English sentences in the
agreement tasks' vocabulary (:mod:`modlib.data.sentences`) but from more templates than the tasks use.

    sentences = corpus(20_000, seed=0)
    mlm, losses = pretrain_mlm(settings, sentences, steps=2_000, batch=128, lr=1e-3, seed=0)
    model = LanguageModel(settings)
    model.bert.load_state_dict(mlm.bert.state_dict())   # the [CLS] model, pretrained weights

Measured at `full`'s shape (2 layers, hidden 64) on one CPU thread, 2026-11-25: 8,000 steps of 128
sentences from a 20,000-sentence corpus at lr 1e-3 take 158 s; the MLM loss falls from 3.19 to
1.33 and :func:`agreement_probe` reaches 1.00. After 1,500 steps (loss 1.58) the probe is still at
chance (0.48): agreement is learnt late. SimCLR at `full`'s vision shape (32-pixel panels, batch
128, lr 5e-4, temperature 0.07 as in the paper) takes 0.06 s a step on one thread; in 100 steps
on 1,000 Inside-Contact panels its loss falls from 5.51 (chance: log 255 = 5.54) to 3.93.
"""

from __future__ import annotations

import random

import torch
from torch.nn import functional as F

from modlib.data import sentences as agreement
from modlib.profiles import check_choice, check_int, check_range

# every template of the corpus: the tasks' own (sv and anaphora, with agreeing features) and five
# more that the tasks never show
TEMPLATES = ("sv-simple", "sv-pp", "sv-src", "sv-orc", "anaphora-simple", "anaphora-rc",
             "transitive", "past", "pp-transitive", "object-rc", "anaphora-pp")
MASK_RATE = 0.15  # BERT's: of the word positions, this share is predicted


def _noun(plural: bool, rng: random.Random) -> str:
    singular = rng.choice(sorted(agreement.NOUNS))
    return agreement.NOUNS[singular] if plural else singular


def _verb(table: dict, plural: bool, rng: random.Random) -> str:
    singular = rng.choice(sorted(table))
    return table[singular] if plural else singular


def sentence(template: str, rng: random.Random) -> str:
    """One grammatical sentence of ``template`` (one of :data:`TEMPLATES`), words from ``rng``."""
    check_choice("template", template, TEMPLATES)
    if template.startswith(("sv-", "anaphora-")) and template != "anaphora-pp":
        family, kind = template.split("-")
        plural = rng.random() < 0.5
        g = torch.Generator().manual_seed(rng.randrange(2**31))
        return agreement.sentence(family, kind, plural, plural, g)
    plural = rng.random() < 0.5
    subject, other, third = _noun(plural, rng), _noun(rng.random() < 0.5, rng), _noun(rng.random() < 0.5, rng)
    if template == "transitive":  # the pilot likes the guards
        return f"the {subject} {_verb(agreement.TRANSITIVE, plural, rng)} the {other}"
    if template == "past":  # the pilots admired the guard
        return f"the {subject} {rng.choice(agreement.PAST)} the {other}"
    if template == "pp-transitive":  # the pilot near the guards likes the farmer
        return (f"the {subject} {rng.choice(agreement.PREPOSITIONS)} the {other} "
                f"{_verb(agreement.TRANSITIVE, plural, rng)} the {third}")
    if template == "object-rc":  # the pilot likes the guards that sing
        other_plural = other in agreement.NOUNS.values()
        return (f"the {subject} {_verb(agreement.TRANSITIVE, plural, rng)} the {other} that "
                f"{_verb(agreement.VERBS, other_plural, rng)}")
    # anaphora-pp: the pilots near the guard blamed themselves
    return (f"the {subject} {rng.choice(agreement.PREPOSITIONS)} the {other} "
            f"{rng.choice(agreement.PAST)} {agreement.REFLEXIVES[int(plural)]}")


def corpus(n: int, seed: int) -> list[str]:
    """``n`` grammatical sentences, templates drawn uniformly from :data:`TEMPLATES`."""
    check_int("n", n, 1)
    rng = random.Random(seed)
    return [sentence(rng.choice(TEMPLATES), rng) for _ in range(n)]


def mask_tokens(ids: torch.Tensor, g: torch.Generator, rate: float = MASK_RATE) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's masking of token ids ``long [N, L]`` (as :func:`modlib.data.sentences.encode` makes them):
    ``rate`` of the word positions (never [CLS], [SEP] or padding) are picked; of those, 80% become
    [MASK], 10% a random word and 10% stay. Returns ``(inputs, labels)``, both ``[N, L]``; labels
    are -100 where nothing is predicted."""
    check_range("rate", rate, 0.0, 1.0)
    words = ids >= len(agreement.SPECIAL)
    picked = words & (torch.rand(ids.shape, generator=g) < rate)
    labels = torch.where(picked, ids, torch.full_like(ids, -100))
    roll = torch.rand(ids.shape, generator=g)
    inputs = ids.clone()
    inputs[picked & (roll < 0.8)] = agreement.IDS["[MASK]"]
    swap = picked & (roll >= 0.8) & (roll < 0.9)
    inputs[swap] = torch.randint(len(agreement.SPECIAL), len(agreement.VOCAB), (int(swap.sum()),), generator=g)
    return inputs, labels


def mlm_model(s, seed: int):
    """A ``BertForMaskedLM`` with the config of chapter 5's language model for settings ``s``
    (:class:`modlib.structural_compositionality.LanguageModel`), its weights drawn from ``seed``."""
    from transformers import BertForMaskedLM

    from modlib.structural_compositionality import LanguageModel  # chapter 6 reuses chapter 5's model

    config = LanguageModel(s).bert.config
    torch.manual_seed(seed)
    return BertForMaskedLM(config)


def pretrain_mlm(s, sentences: list[str], *, steps: int, batch: int, lr: float, seed: int):
    """Masked-language modelling on ``sentences`` for ``steps`` Adam steps of ``batch`` sentences
    (drawn with replacement, masked afresh each step). Returns ``(model, losses)``: the
    ``BertForMaskedLM`` and the loss of every step."""
    check_int("steps", steps, 1)
    check_int("batch", batch, 1)
    model = mlm_model(s, seed)
    ids, attention = agreement.encode(sentences)  # [N, L]
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    losses = []
    for _ in range(steps):
        idx = torch.randint(len(sentences), (batch,), generator=g)
        inputs, labels = mask_tokens(ids[idx], g)
        logits = model(input_ids=inputs, attention_mask=attention[idx]).logits  # [batch, L, vocab]
        loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    return model, losses


def agreement_probe(mlm, n: int = 400, seed: int = 0) -> float:
    """How often ``mlm`` (a ``BertForMaskedLM`` over :data:`modlib.data.sentences.VOCAB`) prefers the
    agreeing form of a masked main verb: ``n`` grammatical subject-verb sentences (the four task
    templates in turn, singular and plural alternating), the last word replaced by [MASK], the
    singular and plural forms' logits compared there. 0.5 is chance."""
    check_int("n", n, 1)
    g = torch.Generator().manual_seed(seed)
    singular_of = {plural: singular for singular, plural in agreement.VERBS.items()}
    texts, forms, plural = [], [], []
    for i in range(n):
        wants = bool(i % 2)
        words = agreement.sentence("sv", agreement.TEMPLATES["sv"][i % 4], wants, wants, g).split()
        singular = singular_of.get(words[-1], words[-1])
        texts.append(" ".join(words[:-1] + ["[MASK]"]))
        forms.append((agreement.IDS[singular], agreement.IDS[agreement.VERBS[singular]]))
        plural.append(wants)
    ids, attention = agreement.encode(texts)  # [n, L]
    where = attention.sum(1) - 2  # the [MASK]: the last word, before [SEP]
    with torch.no_grad():
        logits = mlm(input_ids=ids, attention_mask=attention).logits[torch.arange(n), where]  # [n, vocab]
    forms = torch.tensor(forms)  # [n, 2]: singular, plural ids
    picks = logits.gather(1, forms)  # [n, 2]
    return float(((picks[:, 1] > picks[:, 0]) == torch.tensor(plural)).float().mean())


# --- vision: SimCLR on unlabelled panels -------------------------------------------------------

def augment(images: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    """A random view of each panel ``float [N, 3, H, W]`` that keeps inside, contact and number:
    a flip, a rotation by a multiple of 90 degrees and a permutation of the colour channels, each
    drawn per panel from ``g``. (Crops, the usual SimCLR view, could cut a shape off a panel.)"""
    out = torch.empty_like(images)
    n = len(images)
    flips = torch.rand(n, generator=g) < 0.5
    turns = torch.randint(4, (n,), generator=g)
    channels = torch.argsort(torch.rand(n, 3, generator=g), dim=1)  # [N, 3]
    for i in range(n):
        x = images[i, channels[i]]
        x = x.flip(-1) if flips[i] else x
        out[i] = torch.rot90(x, int(turns[i]), dims=(-2, -1))
    return out


def nt_xent(z1: torch.Tensor, z2: torch.Tensor, temperature: float) -> torch.Tensor:
    """SimCLR's loss for two views' embeddings ``[N, D]``: each embedding's positive is the other
    view of the same panel, its negatives the other 2N - 2 embeddings; cosine similarity over
    ``temperature``, cross-entropy averaged over all 2N."""
    z = F.normalize(torch.cat([z1, z2]), dim=1)  # [2N, D]
    sim = z @ z.T / temperature  # [2N, 2N]
    sim.fill_diagonal_(float("-inf"))
    n = len(z1)
    positive = torch.cat([torch.arange(n, 2 * n), torch.arange(n)])
    return F.cross_entropy(sim, positive)


def pretrain_simclr(model, panels: torch.Tensor, *, steps: int, batch: int, lr: float,
                    temperature: float, seed: int) -> list[float]:
    """Contrastive pretraining of ``model`` (chapter 5's vision model: panels to embeddings) in
    place, on unlabelled panels ``uint8 [N, 3, H, W]``: ``steps`` Adam steps, each on ``batch``
    panels drawn with replacement and two :func:`augment` views of each. Returns each step's loss."""
    check_int("steps", steps, 1)
    check_int("batch", batch, 2)
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    losses = []
    for _ in range(steps):
        x = panels[torch.randint(len(panels), (batch,), generator=g)].float().div(255)  # [b, 3, H, W]
        loss = nt_xent(model(augment(x, g)), model(augment(x, g)), temperature)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    return losses
