"""Chapter 3's pieces: MNIST pairs in settings A and B, the CNN and its loss, the seq2seq model."""

import pytest
import torch

from modlib import resists_at_scale as rs
from modlib.data import digits, scan


@pytest.fixture(scope="module")
def pool():
    # a small synthetic pool: digit d is an image filled with d / 10, so labels can be read back
    labels = torch.arange(10).repeat(5)
    images = (labels.float() / 10)[:, None, None, None].expand(-1, 1, 28, 28).clone()
    return digits.DigitPairs(images, labels)


@pytest.mark.parametrize("setting", digits.SETTING_NAMES)
@pytest.mark.parametrize("split", digits.SPLITS)
def test_pairs_follow_the_settings_label_relations(pool, setting, split):
    x, y1, y2 = pool.sample(2_000, setting, split, torch.Generator().manual_seed(0))
    assert x.shape == (2_000, 1, 28, 56)
    # the images are the labelled digits: left shows y1, right shows y2
    assert torch.allclose(x[:, 0, 0, 0], y1.float() / 10) and torch.allclose(x[:, 0, 0, 30], y2.float() / 10)
    offset = (y2 - y1) % 10
    if split == "test":
        assert set(offset.tolist()) == set(range(2, 10))
    elif setting == "A":
        assert set(offset.tolist()) == {0, 1}
    else:
        assert set(y2.tolist()) == set(range(10)) and set(offset.tolist()) == set(range(10))
    assert set(y1.tolist()) == set(range(10))


def test_setting_a_training_pairs_never_show_a_test_combination(pool):
    g = torch.Generator().manual_seed(1)
    _, a1, a2 = pool.sample(5_000, "A", "train", g)
    _, t1, t2 = pool.sample(5_000, "A", "test", g)
    seen = set(zip(a1.tolist(), a2.tolist()))
    assert not seen & set(zip(t1.tolist(), t2.tolist()))


def test_swap_right_keeps_the_left_digit(pool):
    g = torch.Generator().manual_seed(2)
    x, _, _ = pool.sample(500, "A", "train", g)
    swapped = pool.swap_right(x, g)
    assert torch.equal(swapped[..., :28], x[..., :28])
    assert (swapped[:, 0, 0, 30] != x[:, 0, 0, 30]).float().mean() > 0.8


def test_pairs_reject_bad_input(pool):
    with pytest.raises(ValueError, match="setting"):
        pool.sample(4, "C", "train", torch.Generator())
    with pytest.raises(ValueError, match="every digit"):
        digits.DigitPairs(torch.zeros(3, 1, 28, 28), torch.tensor([0, 1, 2]))


def test_categorical_hinge_is_keras_formula():
    scores = torch.tensor([[2.0, 0.5, -1.0], [-1.0, -2.0, -3.0], [0.0, 3.0, 1.0]])
    y = torch.tensor([0, 2, 0])
    # pos = true score; neg = max over the others and 0; loss = max(0, neg - pos + 1)
    want = torch.tensor([max(0.0, 0.5 - 2 + 1), max(0.0, 0 - (-3) + 1), max(0.0, 3 - 0 + 1)]).mean()
    assert rs.categorical_hinge(scores, y).item() == pytest.approx(want.item())


def test_digit_cnn_shape():
    assert rs.digit_cnn()(torch.rand(3, 1, 28, 56)).shape == (3, 10)


def test_seq2seq_learns_a_few_commands():
    torch.manual_seed(0)
    pairs = [(c, " ".join(scan.interpret(c))) for c in ("jump", "walk twice", "look left", "run and walk")]
    src, tgt = scan.encode(pairs)
    tgt_in, tgt_out = tgt[:, :8], tgt[:, 1:9]
    model = rs.Seq2Seq(len(scan.COMMAND_VOCAB), len(scan.ACTION_VOCAB), 16, 16, 32)
    assert model(src, tgt_in).shape == (4, 8, len(scan.ACTION_VOCAB))
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    for _ in range(150):
        loss = torch.nn.functional.cross_entropy(model(src, tgt_in).flatten(0, 1), tgt_out.flatten(),
                                                 ignore_index=scan.Vocab.PAD)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert rs.exact_match(model, src, tgt_out).all()
    pred, attention = model.greedy(src)
    assert torch.allclose(attention.sum(-1)[pred != scan.Vocab.PAD], torch.tensor(1.0))
    # attention never lands on padding
    padding = (src == scan.Vocab.PAD)[:, None, :].expand_as(attention)
    assert (attention[padding] == 0).all()


def test_seq2seq_decoder_must_be_twice_the_encoder():
    with pytest.raises(ValueError, match="2 \\* encoder"):
        rs.Seq2Seq(16, 9, 8, 16, 16)


def test_setting_b_redraws_only_training_action_words():
    (a_src, _, _), (a_test, _, a_out) = rs.scan_data("A", 0)
    (b_src, _, _), (b_test, _, b_out) = rs.scan_data("B", 0)
    assert torch.equal(a_test, b_test) and torch.equal(a_out, b_out)
    actions = torch.tensor(scan.COMMAND_VOCAB.ids(list(scan.PRIMITIVES)))
    is_action = torch.isin(a_src, actions)
    assert torch.equal(is_action, torch.isin(b_src, actions))  # the same positions hold action words
    assert torch.equal(a_src[~is_action], b_src[~is_action])  # everything else unchanged
    jump = scan.COMMAND_VOCAB.index["jump"]
    assert (b_src == jump).any(1).float().mean() > 0.2  # "jump" now occurs in many training commands


def test_evaluation_schedule_and_settings_checks():
    s = rs.settings("full")
    steps = rs.scan_eval_steps(s)
    assert steps[:3] == [0, 1, 2] and steps[-1] == s.scan_steps and steps == sorted(set(steps))
    with pytest.raises(ValueError, match="scan_lr"):
        s.with_(scan_lr=0.0)
    with pytest.raises(ValueError, match="result"):
        rs.run_one(s, "mnist-C", torch.device("cpu"))
