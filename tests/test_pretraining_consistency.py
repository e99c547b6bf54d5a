"""Chapter 6: the pretrained initialisations, the hub loader and its offline fallback, the two arms."""

import numpy as np
import pytest
import torch

from modlib import pretraining_consistency as pc
from modlib import results
from modlib.data import sentences as agreement
from modlib.pretraining_consistency import findings as pc_findings
from modlib.structural_compositionality import experiment as sc

CPU = torch.device("cpu")


def _save_hub_like_model(path):
    """A tiny BERT and its WordPiece tokenizer in save_pretrained format, as the hub serves them:
    plural nouns are not in its vocabulary, so they are spelt as two pieces ("pilot", "##s")."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    plural = set(agreement.NOUNS.values())
    words = [w for w in agreement.VOCAB if w not in plural]
    path.mkdir()
    tokenizer = BertTokenizerFast(vocab={w: i for i, w in enumerate(words + ["##s", "##es"])})
    torch.manual_seed(0)
    bert = BertModel(BertConfig(vocab_size=len(words) + 2, hidden_size=16, num_hidden_layers=2,
                                num_attention_heads=2, intermediate_size=32), add_pooling_layer=False)
    bert.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return bert.eval(), tokenizer


def test_hub_model_reads_the_tasks_token_ids_through_its_own_tokenizer(tmp_path):
    bert, tokenizer = _save_hub_like_model(tmp_path / "hub")
    model = pc.hub_language_model(str(tmp_path / "hub")).eval()  # the real from_pretrained path
    texts = ["the pilot laughs", "the pilots near the guard sing", "the guards that the pilot likes sing"]
    assert len(tokenizer(texts[1])["input_ids"]) > len(texts[1].split()) + 2  # "pilots" is two pieces
    ids, attention = agreement.encode(texts)
    enc = tokenizer(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        want = bert(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).last_hidden_state[:, 0]
        assert torch.allclose(model(ids, attention), want, atol=1e-5)
    assert sc.mask_patterns(model, "later") == ["bert.encoder.layer.1.*"]


def test_language_init_uses_the_hub_and_falls_back_offline(tmp_path, store, monkeypatch):
    _save_hub_like_model(tmp_path / "hub")
    monkeypatch.setitem(pc.SETTINGS, "smoke", pc.SETTINGS["smoke"].with_(hub=True))
    hub, stored, line = pc.language_init("smoke", hub=str(tmp_path / "hub"))
    assert isinstance(hub, pc.HubLanguageModel) and stored is None and "from the hub" in line
    missing = "modlib-tests/no-such-model"  # HF_HUB_OFFLINE=1 (conftest): the hub is not asked
    hub, stored, line = pc.language_init("smoke", hub=missing)
    assert hub is None and missing in line and "could not be loaded" in line and "book's own MLM" in line
    model = sc.make_model("sv-plural", sc.settings("smoke"), seed=3)
    model.bert.load_state_dict({k: torch.from_numpy(v) for k, v in stored.arrays.items()})  # strict: all of it


def test_pretrained_arm_starts_from_the_stored_weights_and_scratch_reuses_chapter_5(store):
    runs = pc.run("smoke", CPU, names=["sv-plural-scratch-0", "sv-plural-scratch-1",
                                       "inside-contact-pretrained-0"])
    assert runs.rows["sv-plural-scratch-0"].name == "sv-plural-0"  # chapter 5's own result
    assert (store / "smoke" / sc.CHAPTER / "sv-plural-0.json").exists()
    assert (store / "smoke" / pc.CHAPTER / "sv-plural-scratch-1.json").exists()
    assert runs.rows["sv-plural-scratch-1"].meta["code_module"] == "modlib.structural_compositionality.experiment:run_one"
    assert set(runs.pretraining) == {"language", "vision"} and "book's own" in runs.language_source
    vision = pc.pretrained_model("inside-contact", 5, "smoke", CPU)
    stored = runs.pretraining["vision"].arrays
    for name, value in vision.resnet.state_dict().items():
        assert np.array_equal(value.numpy(), stored[name]), name
    fresh = sc.make_model("inside-contact", sc.settings("smoke"), seed=5)
    assert torch.equal(vision.head[0].weight, fresh.head[0].weight)  # the head stays random, per seed
    language = pc.pretrained_model("sv-plural", 5, "smoke", CPU)
    for name, value in language.bert.state_dict().items():
        assert np.array_equal(value.numpy(), runs.pretraining["language"].arrays[name]), name
    table = pc_findings.pretraining_effects(runs)
    assert len(table) == 6 and set(table["init"]) == {"scratch", "pretrained"}


def test_bad_names_say_what_is_valid(store):
    with pytest.raises(ValueError, match="init.*scratch"):
        pc.run("smoke", CPU, names=["sv-plural-warm-0"])
    with pytest.raises(ValueError, match="kind"):
        pc.pretrained("audio", "smoke")
    with pytest.raises(ValueError, match="rules"):
        pc.PretrainingSettings(rules=("sv-plural", "odd"))
