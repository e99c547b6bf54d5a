"""Chapter 5's data: the shape panels (every relation as asked, checked on pixels), the agreement
sentences (every feature as asked, checked on words) and the odd-one-out problem sets."""

import itertools

import numpy as np
import pytest
import torch

from modlib.data import sentences as agreement
from modlib.data import shapes
from modlib import structural_compositionality as sc


@pytest.mark.parametrize("inside, contact, count", list(itertools.product((True, False), (True, False), (2, 3))))
def test_panels_have_exactly_the_relations_asked_for(inside, contact, count):
    rng = np.random.default_rng(0)
    for _ in range(5):
        image, fills = shapes.panel(rng, 32, inside=inside, contact=contact, count=count)
        got = shapes.relations(fills)
        assert (got["inside"], got["contact"], got["count"], got["others_apart"]) == (inside, contact, count, True)
        assert image.shape == (3, 32, 32) and image.dtype == np.float32
        lit = image.sum(0) > 0
        assert (lit == np.any([shapes.outline(f) for f in fills], 0)).all()  # only the outlines are drawn


def test_relations_on_hand_made_squares():
    def square(x0, y0, w):
        f = np.zeros((20, 20), bool)
        f[y0:y0 + w, x0:x0 + w] = True
        return f
    big = square(2, 2, 14)
    assert shapes.relations([big, square(6, 6, 4)]) == {"count": 2, "inside": True, "contact": False, "others_apart": True}
    assert shapes.relations([big, square(3, 6, 4)])["contact"] is True  # outline at x=2, inner at x=3
    assert shapes.relations([square(2, 2, 4), square(6, 2, 4)])["contact"] is True
    assert shapes.relations([square(2, 2, 4), square(7, 2, 4)])["contact"] is None  # 1 pixel gap: neither
    assert shapes.relations([square(2, 2, 4), square(9, 2, 4)]) == {"count": 2, "inside": False, "contact": False, "others_apart": True}


def test_panel_rejects_bad_settings():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="count=1"):
        shapes.panel(rng, 32, inside=True, contact=True, count=1)
    with pytest.raises(ValueError, match="size=8"):
        shapes.panel(rng, 8, inside=True, contact=True)


@pytest.mark.parametrize("rule", list(shapes.RULES))
def test_items_follow_their_rule_on_pixels(rule):
    rng = np.random.default_rng(1)
    for first, second, n in itertools.product((True, False), (True, False), (2, 3)):
        _, fills = shapes.item(rng, 32, rule, first, second, n)
        got = shapes.relations(fills)
        asked = dict(zip(shapes.RULES[rule], (first, second)))
        for prop, value in asked.items():
            if prop == "number":
                assert (got["count"] == n) == value and got["count"] >= 2
            else:
                assert got[prop] == value
        assert got["others_apart"]


@pytest.mark.parametrize("family", list(agreement.FAMILIES))
def test_sentences_have_the_features_asked_for(family):
    g = torch.Generator().manual_seed(0)
    for template in agreement.TEMPLATES[family]:
        for first, second in itertools.product((True, False), repeat=2):
            for _ in range(10):
                text = agreement.sentence(family, template, first, second, g)
                assert agreement.features(family, text) == (first, second)
                assert agreement.grammatical(family, text) == (first == second)
                assert len(text.split()) <= agreement.MAX_WORDS


def test_attractors_vary_and_relative_clause_verbs_agree_with_them():
    g = torch.Generator().manual_seed(0)
    texts = [agreement.sentence("sv", "orc", True, True, g) for _ in range(200)]
    attractors = {t.split()[4] in agreement.NOUNS.values() for t in texts}
    assert attractors == {True, False}  # singular and plural attractors both occur
    for t in texts:
        words = t.split()  # the N that the N2 V2 V
        assert (words[4] in agreement.NOUNS.values()) == (words[5] in agreement.TRANSITIVE.values())


def test_encode_and_its_errors():
    ids, mask = agreement.encode(["the pilot laughs", "the pilots near the guard laugh"])
    assert ids.shape == mask.shape == (2, agreement.MAX_WORDS + 2)
    assert ids[0, 0] == agreement.IDS["[CLS]"] and ids[0, 4] == agreement.IDS["[SEP]"] and mask[0].sum() == 5
    with pytest.raises(ValueError, match="zebra"):
        agreement.encode(["the zebra laughs"])
    with pytest.raises(ValueError, match="template='xyz'"):
        agreement.sentence("sv", "xyz", True, True, torch.Generator())


@pytest.mark.parametrize("kind", sc.KINDS)
def test_layouts_obey_their_definitions(kind):
    rng = np.random.default_rng(0)
    seen_other = set()
    for _ in range(300):
        items, answer = sc.layout(kind, rng)
        odd, followers = items[answer], items[:answer] + items[answer + 1:]
        if kind == "task":
            assert all(f == (True, True) for f in followers) and odd != (True, True)
        elif kind.startswith("sub"):
            k = int(kind[-1])
            assert all(f[k] for f in followers) and not odd[k]
            seen_other |= {f[1 - k] for f in items}
        else:
            k = int(kind[-1])
            assert all(f == (True, True) for f in followers)
            assert odd[k] is False and odd[1 - k] is True
    if kind.startswith("sub"):
        assert seen_other == {True, False}  # the other property is random, not held fixed


@pytest.mark.parametrize("rule", ["sv-plural", "sv-singular", "anaphora-plural"])
def test_language_problems_carry_the_features_their_layout_says(rule):
    family, number = rule.split("-")
    data = sc.problems(rule, "task", 50, seed=0)
    for texts, props, answer in zip(data["texts"], data["props"], data["answer"]):
        for i, (text, (a, b)) in enumerate(zip(texts, props.tolist())):
            plural = number == "plural"
            assert agreement.features(family, text) == (a == plural, b == plural)
            assert agreement.grammatical(family, text) == (i != answer or (a == b))
    assert data["input_ids"].shape == (50, 4, agreement.MAX_WORDS + 2)


def test_vision_problems_are_reproducible_and_shaped():
    a = sc.problems("inside-contact", "only-1", 3, seed=5, size=32)
    b = sc.problems("inside-contact", "only-1", 3, seed=5, size=32)
    assert a["images"].shape == (3, 4, 3, 32, 32) and a["images"].dtype == torch.uint8
    assert torch.equal(a["images"], b["images"]) and torch.equal(a["answer"], b["answer"])
    with pytest.raises(ValueError, match="rule='inside-colour'"):
        sc.problems("inside-colour", "task", 3, seed=0)


def test_odd_scores_pick_the_item_least_like_the_others():
    emb = torch.tensor([[[1.0, 0.0], [1.0, 0.1], [0.0, 1.0], [0.9, 0.0]]])
    scores = sc.odd_scores(emb * torch.tensor([1.0, 5.0, 2.0, 3.0])[None, :, None])  # scale-free
    assert scores.argmax(1).item() == 2
    assert scores.shape == (1, 4)
