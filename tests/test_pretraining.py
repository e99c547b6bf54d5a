"""Chapter 6's pretraining: the offline language model's corpus, masking and training; SimCLR."""

import random

import pytest
import torch

from modlib.data import sentences as agreement
from modlib.pretraining_consistency import pretraining
from modlib import structural_compositionality as sc


def test_corpus_is_grammatical_in_the_tasks_vocabulary_and_reproducible():
    sentences = pretraining.corpus(2_000, seed=0)
    assert sentences == pretraining.corpus(2_000, seed=0) and sentences != pretraining.corpus(2_000, seed=1)
    agreement.encode(sentences)  # every word in VOCAB, every sentence fits the encoder's length
    number = {**{w: False for w in (*agreement.VERBS, *agreement.TRANSITIVE)},
              **{w: True for w in (*agreement.VERBS.values(), *agreement.TRANSITIVE.values())}}
    plural = set(agreement.NOUNS.values())
    for text in sentences:
        words = text.split()
        subject = words[1] in plural
        if words[-1] in agreement.REFLEXIVES:
            assert (words[-1] == "themselves") == subject, text
        if words[2] == "that":  # a relative clause on the subject, words 2-5
            if words[3] == "the":  # object relative: its verb agrees with its own noun
                assert number[words[5]] == (words[4] in plural), text
            main = words[6:]
        elif "that" in words:  # object-rc: "the N likes the Ns that sing"
            assert number[words[-1]] == (words[4] in plural), text
            main = words[2:3]
        else:
            main = words[2:]
        for verb in (w for w in main if w in number):
            assert number[verb] == subject, text


def test_corpus_holds_every_template_and_more_than_the_tasks():
    rng = random.Random(0)
    for template in pretraining.TEMPLATES:
        assert pretraining.sentence(template, rng)
    sentences = set(pretraining.corpus(3_000, seed=0))
    # transitive main clauses never occur in the tasks, whose main verb is intransitive
    transitive = [t for t in sentences if t.split()[2] in agreement.TRANSITIVE or t.split()[2] in agreement.TRANSITIVE.values()]
    assert len(transitive) > 100
    with pytest.raises(ValueError, match="template"):
        pretraining.sentence("passive", rng)


def test_mask_tokens_masks_words_only_at_berts_rates():
    ids, _ = agreement.encode(pretraining.corpus(4_000, seed=0))
    inputs, labels = pretraining.mask_tokens(ids, torch.Generator().manual_seed(0))
    words = ids >= len(agreement.SPECIAL)
    picked = labels != -100
    assert not (picked & ~words).any()  # [CLS], [SEP], padding never
    assert abs(picked.sum() / words.sum() - 0.15) < 0.01
    assert torch.equal(labels[picked], ids[picked]) and torch.equal(inputs[~picked], ids[~picked])
    masked = (inputs == agreement.IDS["[MASK]"])[picked].float().mean()
    unchanged = (inputs == ids)[picked].float().mean()
    assert abs(masked - 0.8) < 0.02 and 0.08 < unchanged < 0.14  # 10% kept, plus random draws of the same word


def test_pretraining_lowers_the_loss():
    s = sc.settings("smoke")
    mlm, losses = pretraining.pretrain_mlm(s, pretraining.corpus(500, seed=0), steps=150, batch=32,
                                           lr=3e-3, seed=0)
    assert sum(losses[-20:]) / 20 < 0.7 * sum(losses[:20]) / 20, (losses[:5], losses[-5:])


def test_agreement_probe_scores_the_masked_verbs_number():
    class Oracle(torch.nn.Module):  # prefers the plural verb exactly when the subject is plural
        def forward(self, input_ids, attention_mask):
            logits = torch.zeros(*input_ids.shape, len(agreement.VOCAB))
            plural = torch.tensor([[agreement.VOCAB[i] in agreement.NOUNS.values() for i in row]
                                   for row in input_ids.tolist()])[:, 2]  # the subject: [CLS] the N
            at_mask = (input_ids == agreement.IDS["[MASK]"]).float()  # [n, L]: only there
            for plural_form in agreement.VERBS.values():
                logits[..., agreement.IDS[plural_form]] = at_mask * (2 * plural[:, None].float() - 1)
            return type("Out", (), {"logits": logits})

    assert pretraining.agreement_probe(Oracle(), n=40) == 1.0
    s = sc.settings("smoke")
    untrained = pretraining.mlm_model(s, seed=0).eval()
    score = pretraining.agreement_probe(untrained, n=200)
    assert score == pretraining.agreement_probe(untrained, n=200) and 0.3 < score < 0.7


def test_augment_keeps_each_panels_pixels_and_varies_the_view():
    s = sc.settings("smoke")
    panels = sc.problems("inside-contact", "task", 4, seed=0, size=s.size)["images"].flatten(0, 1).float()
    views = pretraining.augment(panels, torch.Generator().manual_seed(0))
    assert views.shape == panels.shape and not torch.equal(views, panels)
    for view, panel in zip(views, panels):  # the same multiset of pixel values: nothing cropped
        assert torch.equal(view.flatten().sort().values, panel.flatten().sort().values)


def test_nt_xent_matches_its_definition():
    torch.manual_seed(0)
    z1, z2 = torch.randn(5, 8), torch.randn(5, 8)
    z = torch.nn.functional.normalize(torch.cat([z1, z2]), dim=1)
    want = 0.0
    for i in range(10):
        j = (i + 5) % 10
        others = [k for k in range(10) if k != i]
        logits = torch.stack([z[i] @ z[k] / 0.5 for k in others])
        want -= torch.log_softmax(logits, 0)[others.index(j)] / 10
    assert torch.allclose(pretraining.nt_xent(z1, z2, 0.5), want, atol=1e-5)
    assert pretraining.nt_xent(z1, z1.clone(), 0.07) < pretraining.nt_xent(z1, z2, 0.07)


def test_simclr_lowers_its_loss():
    s = sc.settings("smoke")
    panels = sc.problems("inside-contact", "task", 16, seed=0, size=s.size)["images"].flatten(0, 1)
    model = sc.make_model("inside-contact", s, seed=0)
    losses = pretraining.pretrain_simclr(model, panels, steps=30, batch=16, lr=1e-3,
                                         temperature=0.07, seed=0)
    assert sum(losses[-5:]) / 5 < sum(losses[:5]) / 5, losses
