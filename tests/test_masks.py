import pytest
import torch
from torch import nn

from modlib import masks


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3))


def cnn():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 3))


class TinyLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(10, 5)
        self.lstm = nn.LSTM(5, 7, batch_first=True)
        self.head = nn.Linear(7, 3)

    def forward(self, tokens):
        return self.head(self.lstm(self.embed(tokens))[0][:, -1])


def tiny_bert():
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    config = BertConfig(vocab_size=50, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=16, num_labels=3,
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return BertForSequenceClassification(config).eval()


class BertLogits(nn.Module):
    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, ids):
        return self.bert(input_ids=ids).logits


MODELS = {
    "mlp": (mlp, lambda: torch.randn(5, 6)),
    "cnn": (cnn, lambda: torch.randn(5, 1, 8, 8)),
    "lstm": (TinyLSTM, lambda: torch.randint(10, (5, 4))),
    "bert": (lambda: BertLogits(tiny_bert()), lambda: torch.randint(50, (5, 6))),
}


@pytest.mark.parametrize("kind", MODELS)
@pytest.mark.parametrize("estimator", masks.ESTIMATORS)
def test_off_and_all_ones_masks_reproduce_the_model_exactly(kind, estimator):
    make, inputs = MODELS[kind]
    model, x = make(), inputs()
    with torch.no_grad():
        expected = model(x)
        ms = masks.attach(model, estimator)
        ms.mode = "off"
        assert torch.equal(model(x), expected)
        ms.set_masks({k: torch.ones_like(v) for k, v in ms.hard_masks().items()})
        ms.mode = "hard"
        assert torch.equal(model(x), expected)
        ms.remove()
        assert torch.equal(model(x), expected)


def test_mask_training_never_changes_the_weights_and_only_masks_get_gradients():
    model = mlp()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    ms = masks.attach(model, "gumbel")
    opt = torch.optim.Adam(ms.parameters(), lr=0.1)
    x, y = torch.randn(64, 6), torch.randint(3, (64,))
    for _ in range(5):
        loss = nn.functional.cross_entropy(model(x), y) + ms.regularizer()
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert all(p.grad is None for p in model.parameters() if not any(p is q for q in ms.parameters()))
    assert any((m.score != 2.0).any() for m in ms._masks.values())  # the masks did learn
    ms.remove()
    for k, v in model.state_dict().items():
        assert torch.equal(v, before[k]), k


def test_straight_through_gradient_reaches_the_logits_through_a_hard_sample():
    model = mlp()
    ms = masks.attach(model, "gumbel", init=0.0)
    ms.mode = "train"
    w = model[0].weight  # the masked weight seen by the forward pass
    assert set(torch.unique(w / ms.original("0.weight")).round().tolist()) <= {0.0, 1.0}
    model(torch.randn(8, 6)).pow(2).sum().backward()
    grads = [p.grad for p in ms.parameters()]
    assert all(g is not None and g.abs().sum() > 0 for g in grads)


def test_continuous_sparsification_soft_mask_anneals_and_is_hard_at_zero():
    model = mlp()
    ms = masks.attach(model, "sparsify", init=0.05)
    ms.mode = "train"
    model(torch.randn(8, 6)).sum().backward()
    assert all(p.grad.abs().sum() > 0 for p in ms.parameters())
    torch.testing.assert_close(model[0].weight, ms.original("0.weight") * torch.sigmoid(torch.tensor(0.05)))
    betas = [ms.anneal() for _ in range(90)]
    assert abs(betas[-1] - 200) < 1e-6 and ms.anneal() == 200
    with torch.no_grad():
        ms.parameters()[0][0, 0] = -0.1
    assert not ms.hard_masks()["0.weight"][0, 0] and ms.hard_masks()["0.weight"][0, 1]
    reg = ms.regularizer()
    assert reg > 0 and reg.requires_grad


def test_mask_and_complement_partition_the_weights():
    model = mlp()
    ms = masks.attach(model, "gumbel", init=0.0)
    with torch.no_grad():
        for p in ms.parameters():
            p.normal_()
    x = torch.randn(5, 6)
    hard = ms.hard_masks()
    for mode, keep in (("hard", hard), ("complement", {k: ~v for k, v in hard.items()})):
        ms.mode = mode
        for name, m in keep.items():
            module = model[int(name.split(".")[0])]
            assert torch.equal(module.weight, ms.original(name) * m)
        with torch.no_grad():
            masked_out = model(x)
            plain = mlp()
            for name, m in keep.items():
                plain[int(name.split(".")[0])].weight.mul_(m)
            assert torch.equal(masked_out, plain(x))
    for k in hard:
        assert not (hard[k] & ~hard[k]).any() and (hard[k] | ~hard[k]).all()


def test_random_control_keeps_the_same_count_and_reinit_changes_exactly_the_removed_weights():
    model = mlp()
    ms = masks.attach(model, "gumbel", init=0.0)
    with torch.no_grad():
        for p in ms.parameters():
            p.normal_()
    hard, rand = ms.hard_masks(), ms.random_masks(seed=3)
    assert all(int(hard[k].sum()) == int(rand[k].sum()) for k in hard)
    assert any(not torch.equal(hard[k], rand[k]) for k in hard)
    ms.mode = "hard"
    ms.set_removed("reinit", seed=1)
    w, w0, m = model[0].weight, ms.original("0.weight"), hard["0.weight"]
    assert torch.equal(w[m], w0[m]) and (w[~m] != 0).all() and (w[~m] != w0[~m]).all()


def test_selection_masks_linear_and_recurrent_weights_not_embeddings_norms_or_biases():
    lstm = masks.attach(TinyLSTM())
    assert lstm.names == ["lstm.weight_ih_l0", "lstm.weight_hh_l0", "head.weight"]
    bert = masks.attach(tiny_bert())
    assert bert.names and all(n.endswith(".weight") for n in bert.names)
    assert not any(("embeddings" in n) or ("LayerNorm" in n) for n in bert.names)
    assert "bert.encoder.layer.0.attention.self.query.weight" in bert.names
    assert "classifier.weight" in bert.names
    only = masks.attach(tiny_bert(), names=["bert.encoder.layer.1.*"])
    assert only.names and all(n.startswith("bert.encoder.layer.1.") for n in only.names)


def test_save_load_round_trip_and_mismatch(tmp_path):
    ms = masks.attach(mlp(), "gumbel")
    with torch.no_grad():
        for p in ms.parameters():
            p.normal_()
    ms.save(tmp_path / "m.pt")
    other = masks.attach(mlp(), "gumbel")
    other.load(tmp_path / "m.pt")
    assert all(torch.equal(ms.hard_masks()[k], other.hard_masks()[k]) for k in ms.names)
    wrong = masks.attach(nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(),
                                       nn.Linear(16, 4)), "gumbel")
    with pytest.raises(ValueError, match=r"4\.weight.*\(3, 16\).*\(4, 16\)"):
        wrong.load(tmp_path / "m.pt")
    with pytest.raises(ValueError, match="'gumbel' mask"):
        masks.attach(mlp(), "sparsify").load(tmp_path / "m.pt")


def test_comparisons_on_hand_made_masks():
    a = {"w": torch.tensor([1, 1, 1, 1, 0, 0], dtype=torch.bool)}
    b = {"w": torch.tensor([1, 1, 0, 0, 0, 0], dtype=torch.bool)}
    assert masks.iou(a, b) == {"w": 0.5}
    assert masks.iomin(a, b) == {"w": 1.0}
    assert masks.shared_fraction(a, b) == {"w": 0.5} and masks.shared_fraction(b, a) == {"w": 1.0}
    assert masks.kept_fraction(a) == {"w": 4 / 6}
    assert masks.iou({**a, "v": a["w"]}, {**b, "v": a["w"]}, per_layer=False) == 6 / 8
    with pytest.raises(ValueError, match="different weights"):
        masks.iou(a, {"u": a["w"]})


@pytest.mark.parametrize("kwargs, message", [
    ({"estimator": "l0"}, r"estimator='l0' .* 'gumbel', 'sparsify'"),
    ({"tau": 0.0}, r"tau=0.0"),
    ({"init": float("nan")}, r"init=nan"),
    ({"alpha": -1.0}, r"alpha=-1.0"),
    ({"beta": 1.0}, r"unknown setting 'beta' for estimator 'gumbel'; valid settings are init, tau, alpha"),
    ({"names": ["nothing.*"]}, r"no weights to mask"),
])
def test_bad_settings_fail_with_the_value(kwargs, message):
    with pytest.raises(ValueError, match=message):
        masks.attach(mlp(), **kwargs)


def test_bad_mode_fails():
    ms = masks.attach(mlp())
    with pytest.raises(ValueError, match=r"mode='soft' .* 'train', 'hard', 'complement', 'off'"):
        ms.mode = "soft"
