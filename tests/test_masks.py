import copy
import re
import warnings

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from modlib import masks


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3))


def cnn():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 3))


def convnet():
    """A torchvision-style CNN (convolutions, batch norm, pooling, linear head): ``[N, 1, 8, 8]`` -> ``[N, 3]``."""
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(8, 3)).eval()


class TinyLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(10, 5)
        self.lstm = nn.LSTM(5, 7, batch_first=True)
        self.head = nn.Linear(7, 3)

    def forward(self, tokens):
        return self.head(self.lstm(self.embed(tokens))[0][:, -1])


class BertLogits(nn.Module):
    """A tiny Hugging Face BERT built from a config (no download): token ids ``[N, T]`` -> logits ``[N, 3]``."""

    def __init__(self):
        super().__init__()
        from transformers import BertConfig, BertForSequenceClassification

        torch.manual_seed(0)
        config = BertConfig(vocab_size=50, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                            intermediate_size=64, max_position_embeddings=16, num_labels=3,
                            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
        self.bert = BertForSequenceClassification(config).eval()

    def forward(self, ids):
        return self.bert(input_ids=ids).logits


class GPT2Logits(nn.Module):
    """A tiny Hugging Face GPT-2 language model from a config: token ids ``[N, T]`` -> logits ``[N, T, 50]``.
    Its attention and MLP layers are ``transformers``' ``Conv1D``; ``lm_head.weight`` is the token embedding."""

    def __init__(self):
        super().__init__()
        from transformers import GPT2Config, GPT2LMHeadModel

        torch.manual_seed(0)
        config = GPT2Config(vocab_size=50, n_positions=16, n_embd=32, n_layer=2, n_head=2, bos_token_id=0,
                            eos_token_id=0, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
        self.gpt2 = GPT2LMHeadModel(config).eval()

    def forward(self, ids):
        return self.gpt2(input_ids=ids).logits


class ViTPooled(nn.Module):
    """A tiny Hugging Face ViT from a config: images ``[N, 1, 8, 8]`` (4 patches) -> pooled ``[N, 32]``."""

    def __init__(self):
        super().__init__()
        from transformers import ViTConfig, ViTModel

        torch.manual_seed(0)
        config = ViTConfig(image_size=8, patch_size=4, num_channels=1, hidden_size=32, num_hidden_layers=2,
                           num_attention_heads=2, intermediate_size=64, hidden_dropout_prob=0.0,
                           attention_probs_dropout_prob=0.0)
        self.vit = ViTModel(config).eval()

    def forward(self, images):
        return self.vit(pixel_values=images).pooler_output


def encoder_layer():
    torch.manual_seed(0)
    return nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True).eval()


MODELS = {
    "mlp": (mlp, lambda: torch.randn(5, 6)),
    "cnn": (convnet, lambda: torch.randn(5, 1, 8, 8)),
    "lstm": (TinyLSTM, lambda: torch.randint(10, (5, 4))),
    "bert": (BertLogits, lambda: torch.randint(50, (5, 6))),
    "gpt2": (GPT2Logits, lambda: torch.randint(50, (5, 6))),
    "vit": (ViTPooled, lambda: torch.randn(5, 1, 8, 8)),
    "transformer": (encoder_layer, lambda: torch.randn(5, 4, 8)),
}


def weights_of(model, *types):
    return {f"{n}.weight" for n, m in model.named_modules() if isinstance(m, types)}


FAMILIES = {  # a model of each family -> the weights a default attach masks, and how many there are
    "bert": (lambda m: weights_of(m, nn.Linear), 2 * 6 + 2),  # attention, MLP, pooler, classifier
    "gpt2": (lambda m: {f"{n}.weight" for n, _ in m.named_modules() if n.endswith(("c_attn", "c_proj", "c_fc"))},
             2 * 4),
    "vit": (lambda m: weights_of(m, nn.Linear, nn.Conv2d), 1 + 2 * 6 + 1),  # patches, layers, pooler
    "cnn": (lambda m: weights_of(m, nn.Linear, nn.Conv2d), 3),  # not the batch norms
    "lstm": (lambda m: {"lstm.weight_ih_l0", "lstm.weight_hh_l0", "head.weight"}, 3),
}


def random_scores(ms):
    with torch.no_grad():
        for p in ms.parameters():
            p.normal_()


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


@pytest.mark.parametrize("kind", MODELS)
def test_a_masked_model_is_the_plain_model_with_multiplied_weights(kind):
    make, inputs = MODELS[kind]
    model, x = make(), inputs()
    plain = copy.deepcopy(model)
    ms = masks.attach(model, "gumbel")
    random_scores(ms)
    hard = ms.hard_masks()
    for mode, keep in (("hard", hard), ("complement", {k: ~m for k, m in hard.items()})):
        ms.mode = mode
        reference = copy.deepcopy(plain)
        with torch.no_grad():
            for name, m in keep.items():
                reference.get_parameter(name).mul_(m)
            assert torch.equal(model(x), reference(x))
            assert not torch.equal(model(x), plain(x))  # the mask does act, on every architecture


def test_hard_mask_and_complement_partition_the_weights():
    model = mlp()
    ms = masks.attach(model, "sparsify")
    random_scores(ms)
    with torch.no_grad():
        ms.parameters()[0][0, :3] = torch.tensor([0.0, 1e-3, -1e-3])  # s > 0 is kept, s <= 0 removed
    with ms.use("hard"):
        kept = model[0].weight
    with ms.use("complement"):
        removed = model[0].weight
    w = ms.original("0.weight")
    assert torch.equal(kept + removed, w) and torch.equal(kept * removed, torch.zeros_like(w))
    assert torch.equal(kept[0, :3] != 0, torch.tensor([False, True, False]))
    assert ms.mode == "train"  # use() restored the mode


def test_mask_training_never_changes_the_weights_and_only_masks_get_gradients():
    model = mlp()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    ms = masks.attach(model, "gumbel")
    opt = torch.optim.Adam(ms.parameters(), lr=1e-2)
    x, y = torch.randn(64, 6), torch.randint(3, (64,))
    for _ in range(5):
        loss = masks.sampled_loss(model, F.cross_entropy, x, y, samples=4) + ms.regularizer() / len(x)
        opt.zero_grad()
        loss.backward()
        opt.step()
    scores = {id(p) for p in ms.parameters()}
    assert len(scores) == 3
    for name, p in model.named_parameters():
        assert (p.grad is not None) == (id(p) in scores) == p.requires_grad, name
    assert all((p != 2.0).any() for p in ms.parameters())  # the masks did learn
    ms.remove()
    for k, v in model.state_dict().items():
        assert torch.equal(v, before[k]), k


def test_straight_through_gradient_reaches_the_logits_through_a_hard_sample():
    model = mlp()
    ms = masks.attach(model, "gumbel", init=0.0)
    out = model(torch.randn(8, 6))
    w, w0 = model[0].weight, ms.original("0.weight")
    assert ((w == 0) | (w == w0)).all() and (w == 0).any() and (w == w0).any()  # a hard 0/1 sample
    out.pow(2).sum().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in ms.parameters())
    assert ms.regularizer().item() == 0.0


def test_one_gumbel_sample_per_forward_pass_and_sampled_loss_weights_the_chunks():
    class Twice(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin, self.seen = nn.Linear(8, 8), []

        def forward(self, x):
            self.seen.append(self.lin.weight.detach().clone())
            x = self.lin(x)
            self.seen.append(self.lin.weight.detach().clone())
            return self.lin(x)

    model = Twice()
    ms = masks.attach(model, "gumbel", init=0.0)
    model(torch.randn(2, 8))
    model(torch.randn(2, 8))
    a, b, c, d = model.seen
    assert torch.equal(a, b) and torch.equal(c, d) and not torch.equal(a, c)
    assert torch.equal(model.lin.weight, model.lin.weight)
    ms.resample()  # needed only when a submodule runs on its own
    assert not torch.equal(model.lin.weight, d)
    x, y = torch.randn(10, 8), torch.randn(10, 8)
    with ms.use("off"):
        torch.testing.assert_close(masks.sampled_loss(model, F.mse_loss, x, y, 4), F.mse_loss(model(x), y))
    with pytest.raises(ValueError, match="samples=0"):
        masks.sampled_loss(model, F.mse_loss, x, y, 0)


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_one_pass_sampled_loss_equals_the_loop_with_the_same_samples(kind, monkeypatch):
    model = mlp() if kind == "mlp" else cnn()
    ms = masks.attach(model, "gumbel", init=0.5)
    x = torch.randn(64, 6) if kind == "mlp" else torch.randn(64, 1, 8, 8)
    y = torch.randint(3, (64,))
    drawn, rand = [], torch.rand

    def record(*args, **kwargs):  # the noise the one-pass loss draws: one [4, *shape] tensor per mask
        drawn.append(rand(*args, **kwargs))
        return drawn[-1]

    monkeypatch.setattr(torch, "rand", record)
    one_pass = ms.sampled_loss(F.cross_entropy, x, y, samples=4)
    one_pass.backward()
    grads = [p.grad.clone() for p in ms.parameters()]
    assert [tuple(u.shape) for u in drawn] == [(4, *p.shape) for p in ms.parameters()]
    for p in ms.parameters():
        p.grad = None
    replay = [u[s] for s in range(4) for u in drawn]  # the loop draws per pass, layer by layer
    monkeypatch.setattr(torch, "rand", lambda *args, **kwargs: replay.pop(0))
    loop = masks.sampled_loss(model, F.cross_entropy, x, y, samples=4)
    loop.backward()
    torch.testing.assert_close(one_pass, loop)
    for a, p in zip(grads, ms.parameters()):
        torch.testing.assert_close(a, p.grad)
    assert all(p.grad is None for p in model.parameters() if p not in set(ms.parameters()))
    monkeypatch.setattr(torch, "rand", rand)
    with ms.use("off"):  # fixed masks: the plain loss
        torch.testing.assert_close(ms.sampled_loss(F.cross_entropy, x, y, 4), F.cross_entropy(model(x), y))
    with pytest.raises(ValueError, match="batch of 64 inputs .* samples=5"):
        ms.sampled_loss(F.cross_entropy, x, y, 5)


def train_briefly(ms, one_pass, draw_between=0):
    """Five Adam steps on fixed batches, with ``draw_between`` draws from torch's global RNG before each."""
    g = torch.Generator().manual_seed(0)
    opt = torch.optim.Adam(ms.parameters(), lr=0.1)
    for _ in range(5):
        torch.rand(draw_between)
        x, y = torch.randn(16, 6, generator=g), torch.randint(3, (16,), generator=g)
        sampled = ms.sampled_loss if one_pass else lambda *a: masks.sampled_loss(ms.model, *a)
        loss = sampled(F.cross_entropy, x, y, 4)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return [p.detach().clone() for p in ms.parameters()]


@pytest.mark.parametrize("one_pass", [False, True])
def test_a_seed_gives_the_same_masks_whatever_else_draws_random_numbers(one_pass, tmp_path):
    runs = {}
    for seed, draws in ((7, 0), (7, 3), (8, 0)):
        ms = masks.attach(mlp(), "gumbel", init=0.0, seed=seed)
        torch.rand(draws)
        runs[seed, draws] = train_briefly(ms, one_pass, draws)
    assert (ms.seed, ms.generator.device) == (8, torch.device("cpu"))
    assert all(torch.equal(a, b) for a, b in zip(runs[7, 0], runs[7, 3]))  # bit-identical
    assert not all(torch.equal(a, b) for a, b in zip(runs[7, 0], runs[8, 0]))

    x, y = torch.randn(8, 6), torch.randint(3, (8,))
    state = torch.get_rng_state()
    ms.model(x)
    ms.sampled_loss(F.cross_entropy, x, y, 4)
    masks.sampled_loss(ms.model, F.cross_entropy, x, y, 4)
    assert ms.mode == "train" and torch.equal(torch.get_rng_state(), state)  # the global RNG is left alone
    unseeded = masks.attach(mlp(), "gumbel", init=0.0)
    unseeded.model(x)
    assert not torch.equal(torch.get_rng_state(), state)  # without a seed: torch's global RNG

    ms.save(tmp_path / "m.pt")
    outputs = [masks.load(tmp_path / "m.pt", mlp(), seed=3).model(x) for _ in range(2)]
    assert torch.equal(*outputs) and masks.load(tmp_path / "m.pt", mlp(), seed=3).seed == 3


def test_continuous_sparsification_soft_mask_schedule_and_regularizer():
    model = mlp()
    ms = masks.attach(model, "sparsify", init=0.05, lam=1e-3)
    model(torch.randn(8, 6)).sum().backward()
    assert all(p.grad.abs().sum() > 0 for p in ms.parameters())
    soft = torch.sigmoid(torch.tensor(0.05))
    torch.testing.assert_close(model[0].weight, ms.original("0.weight") * soft)
    n = sum(p.numel() for p in ms.parameters())
    torch.testing.assert_close(ms.regularizer(), 1e-3 * n * soft)
    betas = [ms.anneal() for _ in range(90)]
    assert betas[-1] == pytest.approx(200) and ms.anneal() == 200 and ms.beta == 200


def test_random_control_keeps_the_count_and_reinit_changes_exactly_the_removed_weights():
    model = mlp()
    ms = masks.attach(model, "gumbel")
    random_scores(ms)
    hard, rand = ms.hard_masks(), masks.random_like(ms.hard_masks(), seed=3)
    assert all(int(hard[k].sum()) == int(rand[k].sum()) for k in hard)
    assert all(not torch.equal(hard[k], rand[k]) for k in hard)
    assert all(torch.equal(rand[k], masks.random_like(hard, seed=3)[k]) for k in hard)
    with ms.use("random", seed=3):
        assert torch.equal(model[0].weight, ms.original("0.weight") * rand["0.weight"])
    ms.set_mode("reinit", seed=1)
    w, w0, m = model[0].weight, ms.original("0.weight"), hard["0.weight"]
    assert torch.equal(w[m], w0[m]) and (w[~m] != 0).all() and (w[~m] != w0[~m]).all()


@pytest.mark.parametrize("kind", FAMILIES)
def test_a_default_attach_masks_the_weight_layers_of_each_family(kind):
    model = MODELS[kind][0]()
    expected, count = FAMILIES[kind]
    ms = masks.attach(model)
    assert set(ms.names) == expected(model) and len(ms.names) == count
    scores = {id(p) for p in ms.parameters()}
    assert all(p.requires_grad == (id(p) in scores) for p in model.parameters())  # only the masks train


def test_selection_by_name_and_no_weight_tied_to_an_embedding():
    gpt2 = GPT2Logits()
    assert gpt2.gpt2.lm_head.weight is gpt2.gpt2.transformer.wte.weight  # tied: left alone, as the embedding
    assert "gpt2.lm_head.weight" not in masks.attach(gpt2).names
    assert masks.attach(TinyLSTM(), include=[nn.Linear]).names == ["head.weight"]
    only = masks.attach(BertLogits(), names=["*.layer.1.*"], exclude=["*.output.dense"])
    assert len(only.names) == 4 and all(".layer.1.attention." in n or "intermediate" in n for n in only.names)
    assert masks.attach(encoder_layer()).names == ["self_attn.in_proj_weight", "self_attn.out_proj.weight",
                                                   "linear1.weight", "linear2.weight"]


def test_save_load_round_trip_mismatch_and_remove(tmp_path):
    ms = masks.attach(mlp(), "sparsify", init=0.1)
    random_scores(ms)
    ms.anneal()
    ms.save(tmp_path / "m.pt")
    other = masks.load(tmp_path / "m.pt", mlp())
    assert (other.estimator, other.settings, other.beta) == ("sparsify", ms.settings, ms.beta)
    assert all(torch.equal(ms.hard_masks()[k], other.hard_masks()[k]) for k in ms.names)
    given = masks.random_like(ms.hard_masks())
    ms.set_masks(given)
    ms.save(tmp_path / "m.pt")
    assert all(torch.equal(given[k], masks.load(tmp_path / "m.pt", mlp()).hard_masks()[k]) for k in given)

    wrong = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4))
    with pytest.raises(ValueError, match=r"'4\.weight'.* \(3, 16\).* \(4, 16\)"):
        masks.load(tmp_path / "m.pt", wrong)
    with pytest.raises(ValueError, match=r"mask for '2\.weight', which this model does not have"):
        masks.load(tmp_path / "m.pt", nn.Sequential(nn.Linear(6, 16)))
    assert not any(torch.nn.utils.parametrize.is_parametrized(m) for m in wrong)  # left untouched

    model, x = mlp(), torch.randn(4, 6)
    model[2].bias.requires_grad_(False)
    before, out = copy.deepcopy(model.state_dict()), model(x)
    ms = masks.attach(model)
    random_scores(ms)
    ms.mode = "hard"
    assert ms.remove() is model and type(model[0]) is nn.Linear
    assert list(model.state_dict()) == list(before)  # the same names, in the same order
    assert all(torch.equal(v, before[k]) for k, v in model.state_dict().items())
    assert torch.equal(model(x), out)
    assert [p.requires_grad for p in model.parameters()] == [True, True, True, False, True, True]


def test_load_refuses_a_model_with_masks_and_warns_of_the_weights_it_leaves_unmasked(tmp_path):
    masks.attach(mlp(), names=["2"]).save(tmp_path / "middle.pt")
    masks.attach(mlp()).save(tmp_path / "all.pt")
    model = mlp()
    with pytest.warns(UserWarning, match=r"middle\.pt has no masks for \['0\.weight', '4\.weight'\]: these "
                                         r"weights stay unmasked"):
        ms = masks.load(tmp_path / "middle.pt", model)
    assert ms.names == ["2.weight"]
    with pytest.raises(ValueError, match=r"modules \['2'\] are already parametrized .*remove\(\) the other "
                                         r"MaskSet first"):
        masks.load(tmp_path / "all.pt", model)  # no second mask stacked on the first
    assert [torch.nn.utils.parametrize.is_parametrized(m) for m in model[::2]] == [False, True, False]  # untouched
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ms.remove()
        masks.load(tmp_path / "all.pt", model)  # the file covers every weight: no warning


def truncated(path, good):
    path.write_bytes(good.read_bytes()[:-200])


def garbage(path, good):
    path.write_bytes(b"not a torch file " * 20)


def rewritten(change):
    def write(path, good):
        torch.save(change(torch.load(good, weights_only=True)), path)
    return write


@pytest.mark.parametrize("write, problem", [
    (truncated, "torch.load cannot read it: truncated, corrupt or another format"),
    (garbage, "torch.load cannot read it"),
    (lambda path, good: path.write_bytes(b""), "torch.load cannot read it"),
    (rewritten(lambda state: [1, 2]), "it holds a list, not a dict"),
    (rewritten(lambda state: {"weights": torch.ones(3)}), r"it lacks the keys \['estimator', 'settings', 'beta', "
                                                          r"'scores', 'fixed'\]"),
    (rewritten(lambda state: {k: v for k, v in state.items() if k != "scores"}), r"it lacks the keys \['scores'\]"),
    (rewritten(lambda state: {**state, "scores": [1.0]}), "its 'scores' are not a dict of tensors"),
    (rewritten(lambda state: {**state, "fixed": {"0.weight": torch.ones(2)}}), "its 'fixed' masks are not"),
    (rewritten(lambda state: {**state, "estimator": "l0"}), "estimator='l0' is not valid"),
    (rewritten(lambda state: {**state, "beta": "big"}), "beta='big' is not valid"),
], ids=["truncated", "garbage", "empty", "list", "other dict", "no scores", "bad scores", "bad fixed",
        "bad estimator", "bad beta"])
def test_load_rejects_a_file_that_maskset_save_did_not_write(tmp_path, write, problem):
    masks.attach(mlp(), "sparsify").save(tmp_path / "good.pt")
    write(tmp_path / "bad.pt", tmp_path / "good.pt")
    model = mlp()
    path = re.escape(str(tmp_path / "bad.pt"))
    with pytest.raises(ValueError, match=rf"^{path} is not a mask file written by MaskSet\.save \(.*{problem}.*\); "
                                         r"save the masks again with ms\.save\(path\)$"):
        masks.load(tmp_path / "bad.pt", model)
    assert not any(torch.nn.utils.parametrize.is_parametrized(m) for m in model)  # left untouched
    with pytest.raises(FileNotFoundError):
        masks.load(tmp_path / "none.pt", model)


def test_stats_has_one_row_per_masked_weight():
    ms = masks.attach(mlp(), "gumbel")
    random_scores(ms)
    ms.set_mode("hard", layers=["2.*"])
    table = ms.stats()
    assert list(table.columns) == ["name", "shape", "weights", "kept", "kept_fraction", "mode"]
    assert list(table["name"]) == ms.names and list(table["shape"]) == [(16, 6), (16, 16), (3, 16)]
    assert list(table["weights"]) == [96, 256, 48] and list(table["mode"]) == ["off", "hard", "off"]
    hard = ms.hard_masks()
    assert list(table["kept"]) == [int(hard[k].sum()) for k in ms.names]
    assert list(table["kept_fraction"]) == list(masks.kept_fraction(hard).values())
    ms.set_masks({k: torch.zeros_like(v) for k, v in hard.items()})  # given masks count
    assert ms.stats()["kept"].sum() == 0


def test_a_mode_on_some_layers_leaves_the_others_as_trained():
    model, x = mlp(), torch.randn(5, 6)
    plain = copy.deepcopy(model)
    ms = masks.attach(model, "gumbel")
    random_scores(ms)
    hard = ms.hard_masks()
    with ms.use("complement", layers=["2.*"]):  # ablate the mask in the middle layer only
        assert ms.mode == "complement" and ms.layers == ["2.weight"]
        with torch.no_grad():
            plain[2].weight.mul_(~hard["2.weight"])
            assert torch.equal(model(x), plain(x))
            with ms.use("hard", layers="4.weight"):  # nested: restored afterwards
                assert torch.equal(model[4].weight, ms.original("4.weight") * hard["4.weight"])
                assert torch.equal(model[2].weight, ms.original("2.weight"))
            assert torch.equal(model(x), plain(x))
    assert ms.mode == "train" and ms.layers == ms.names

    ms.set_mode("train", layers=["0.*", "4.*"])  # train some masks; the middle layer computes as trained
    y = torch.randint(3, (8,))
    for loss in (ms.sampled_loss(F.cross_entropy, x.repeat(2, 1)[:8], y, 4),
                 masks.sampled_loss(model, F.cross_entropy, x.repeat(2, 1)[:8], y, 4)):
        assert torch.equal(model[2].weight, ms.original("2.weight"))
        loss.backward()
        assert [p.grad is not None for p in ms.parameters()] == [True, False, True]
        for p in ms.parameters():
            p.grad = None


def test_comparisons_on_hand_made_masks():
    a = {"w": torch.tensor([1, 1, 1, 1, 0, 0], dtype=torch.bool)}
    b = {"w": torch.tensor([1, 1, 0, 0, 0, 0], dtype=torch.bool)}
    assert masks.iou(a, b) == {"w": 0.5}
    assert masks.iomin(a, b) == {"w": 1.0}
    assert masks.shared_fraction(a, b) == {"w": 0.5} and masks.shared_fraction(b, a) == {"w": 1.0}
    assert masks.kept_fraction(a) == {"w": 4 / 6}
    c = {"w": torch.tensor([0, 0, 1, 1, 1, 0], dtype=torch.bool)}
    assert masks.iou(a, c) == {"w": 2 / 5} and masks.iomin(a, c) == {"w": 2 / 3}
    two_a, two_b = {**a, "v": c["w"]}, {**b, "v": c["w"]}
    assert masks.iou(two_a, two_b, per_layer=False) == (2 + 3) / (4 + 3)
    assert masks.iomin(two_a, two_b, per_layer=False) == 5 / 5
    assert masks.shared_fraction(two_a, two_b, per_layer=False) == 5 / 7
    assert masks.kept_fraction(two_a, per_layer=False) == 7 / 12
    empty = {"w": torch.zeros(6, dtype=torch.bool)}
    assert torch.isnan(torch.tensor(masks.iou(empty, empty)["w"]))
    with pytest.raises(ValueError, match="cover"):
        masks.iou(a, {"u": a["w"]})


@pytest.mark.parametrize("estimator, kwargs, message", [
    ("l0", {}, r"estimator='l0' is not valid; choose one of 'gumbel', 'sparsify'"),
    ("gumbel", {"tau": 0.0}, r"tau=0.0"),
    ("gumbel", {"init": float("nan")}, r"init=nan"),
    ("gumbel", {"alpha": -1.0}, r"alpha=-1.0"),
    ("gumbel", {"beta": 1.0}, r"gumbel setting='beta' is not valid; choose one of 'init', 'tau', 'alpha'"),
    ("sparsify", {"beta": 0}, r"beta=0 "),
    ("sparsify", {"beta_growth": 0.5}, r"beta_growth=0.5"),
    ("sparsify", {"lam": "big"}, r"lam='big'"),
    ("gumbel", {"names": ["nothing.*"]}, r"no weights to mask.*'nothing\.\*'.*modules include \['0', '1'"),
    ("gumbel", {"seed": -1}, r"seed=-1 is not valid"),
])
def test_bad_settings_fail_with_the_value(estimator, kwargs, message):
    with pytest.raises(ValueError, match=message):
        masks.attach(mlp(), estimator, **kwargs)


def test_bad_use_fails_clearly():
    model = mlp()
    ms = masks.attach(model)
    with pytest.raises(ValueError, match=r"mode='soft' is not valid; choose one of 'train', 'hard', 'complement'"):
        ms.mode = "soft"
    with pytest.raises(ValueError, match=r"seed=-1"):
        ms.set_mode("random", seed=-1)
    with pytest.raises(ValueError, match=r"anneal\(\) is for estimator='sparsify'"):
        ms.anneal()
    with pytest.raises(ValueError, match=r"mask for '0\.weight': the given masks has shape \(2,\)"):
        ms.set_masks({k: torch.ones(2, dtype=torch.bool) for k in ms.names})
    with pytest.raises(ValueError, match=r"modules \['0', '2', '4'\] are already parametrized .*remove\(\)"):
        masks.attach(model)
    with pytest.raises(ValueError, match=r"layers pattern '1\.\*' matches no masked weight; the masked weights "
                                         r"are \['0\.weight', '2\.weight', '4\.weight'\]"):
        ms.set_mode("complement", layers=["0.*", "1.*"])
    with pytest.raises(ValueError, match=r"layers=\[\] selects no weight"):
        ms.set_mode("complement", layers=[])
    assert ms.mode == "train" and ms.layers == ms.names  # a failed set_mode changed nothing


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
@pytest.mark.parametrize("one_pass", [False, True])
def test_mask_training_on_a_gpu_keeps_the_weights(one_pass):
    from modlib.training import adam

    model = mlp().cuda()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    ms = masks.attach(model, "gumbel", seed=0)
    assert ms.generator.device.type == "cuda"
    g = torch.Generator().manual_seed(0)
    data = [(torch.randn(64, 6, generator=g).cuda(), torch.randint(3, (64,), generator=g).cuda()) for _ in range(8)]
    sampled = ms.sampled_loss if one_pass else lambda *a: masks.sampled_loss(model, *a)
    adam(lambda x, y: sampled(F.cross_entropy, x, y) + ms.regularizer() / len(x),
         ms.parameters(), iter(data), steps=8, lr=1e-2, clip=1.0)
    assert all((p != 2.0).any() for p in ms.parameters())
    samples = []
    for _ in range(2):
        ms.resample()
        samples.append(ms._masks["0.weight"].train_mask(torch.ones(16, 6, device="cuda")))
    assert not torch.equal(*samples)  # each pass draws a new sample
    ms.remove()
    for k, v in model.state_dict().items():
        assert torch.equal(v, before[k]), k


def test_a_removed_maskset_refuses_every_further_use(tmp_path):
    model, x = mlp(), torch.randn(4, 6)
    old = masks.attach(model)
    old.remove()
    new = masks.attach(model, "sparsify")  # the same model, masked again
    frozen = {n: p.requires_grad for n, p in model.named_parameters()}
    assert not any(v for n, v in frozen.items() if not n.endswith(".score"))  # only the masks train
    uses = {
        "remove": old.remove, "save": lambda: old.save(tmp_path / "m.pt"),
        "mode": lambda: setattr(old, "mode", "hard"), "set_mode": lambda: old.set_mode("complement"),
        "use": lambda: old.use("hard").__enter__(), "set_masks": lambda: old.set_masks(None),
        "resample": old.resample, "parameters": old.parameters, "regularizer": old.regularizer,
        "sampled_loss": lambda: old.sampled_loss(F.cross_entropy, x, torch.zeros(4, dtype=torch.long), 2),
        "anneal": old.anneal, "stats": old.stats, "hard_masks": old.hard_masks, "names": lambda: old.names,
        "layers": lambda: old.layers, "original": lambda: old.original("0.weight"),
    }
    for name, use in uses.items():
        with pytest.raises(RuntimeError, match=r"this MaskSet was removed from its model \(remove\(\)\); "
                                               r"attach new masks with masks\.attach"):
            use()
    assert {n: p.requires_grad for n, p in model.named_parameters()} == frozen  # the new masks' weights stay frozen
    assert not (tmp_path / "m.pt").exists()
    assert "removed" in repr(old)
    new.mode = "hard"
    new.save(tmp_path / "new.pt")  # the new MaskSet works
    assert new.remove() is model and all(p.requires_grad for p in model.parameters())


# --- modlib.mask_density: the kept share, its convergence, lambda's schedule (issue 31) -----------------


def test_kept_share_counts_positive_scores_in_total_and_per_weight():
    from modlib import mask_density

    ms = masks.attach(mlp(), "sparsify", init=-1.0)
    with torch.no_grad():
        ms.parameters()[0][:4] = 1.0  # 4 rows of 6 in the first layer: 24 of 96
        ms.parameters()[2][0, 0] = 0.0  # score 0 is removed (s > 0 keeps)
    total, layers = mask_density.kept_share(ms)
    sizes = [p.numel() for p in ms.parameters()]
    assert layers == [24 / 96, 0.0, 0.0] and total == pytest.approx(24 / sum(sizes))


@pytest.mark.parametrize("delay, warmup, expected", [
    (0, 0, [10, 10, 10, 10, 10]),
    (0, 2, [1, 5.5, 10, 10, 10]),
    (2, 2, [1, 1, 1, 5.5, 10]),
    (2, 0, [1, 1, 10, 10, 10])])
def test_lambda_stays_at_its_base_then_grows_linearly(delay, warmup, expected):
    from modlib import mask_density

    got = [mask_density.lam_multiplier(e, 10.0, delay, warmup) for e in range(5)]
    assert got == pytest.approx(expected)


def test_a_kept_share_still_falling_in_its_last_quarter_has_not_converged():
    from modlib import mask_density

    assert mask_density.converged([0.5, 0.2, 0.1, 0.05, 0.0502, 0.0501, 0.05, 0.05])
    assert not mask_density.converged([0.5, 0.2, 0.1, 0.08, 0.06, 0.055, 0.052, 0.05])
    assert mask_density.last_quarter_drop([0.5, 0.2, 0.1, 0.08, 0.06, 0.055, 0.052, 0.05]) == pytest.approx(0.005)
    assert mask_density.converged([0.3])  # one epoch: nothing to fall over


def test_the_relative_convergence_rule_scales_with_the_kept_share_and_says_where_it_moves_a_choice():
    from types import SimpleNamespace

    from modlib import mask_density

    # five epochs: the last quarter is the last step
    sparse = [0.05, 0.02, 0.01, 0.006, 0.004]  # fell 0.002: neither rule passes it
    dense = [0.5, 0.3, 0.2, 0.1995, 0.199]  # fell 0.0005 of 0.2: both rules pass it
    tiny = [0.05, 0.01, 0.006, 0.0045, 0.004]  # fell 0.0005 of 0.004 (12%): only the absolute rule passes it
    assert not mask_density.converged(sparse) and not mask_density.converged_relative(sparse)
    assert mask_density.converged(dense) and mask_density.converged_relative(dense)
    assert mask_density.converged(tiny) and not mask_density.converged_relative(tiny)

    def entry(lam, trajectory, quality):
        return {"lam": lam, "kept": trajectory[-1], "kept_trajectory": trajectory, "quality": quality,
                "test": {"complement": [0.2, 0.9]}}

    grid = [entry(30, dense, 0.5), entry(100, tiny, 0.9)]  # the book's rule takes the sparser, better one
    rows = {"m-0": SimpleNamespace(metrics={"subroutines": {"inside": {"grid": grid}}}),
            "m-1": SimpleNamespace(metrics={"subroutines": {"inside": {"grid": grid[:1]}}})}
    searched, changed = mask_density.relative_rule_changes(rows)
    assert searched == 2 and [(c["name"], c["book"]["lam"], c["relative"]["lam"]) for c in changed] == [("m-0", 100, 30)]
    text = mask_density.relative_rule_text(rows)
    assert "in 1 of 2 searches" in text and "m-0, inside: ×30" in text
    assert mask_density.relative_rule_text({}) == "no search is stored at this profile"
