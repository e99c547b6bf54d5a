"""Chapter 6: the pretrained initialisations, the hub loader and its offline fallback, the two arms."""

import numpy as np
import pytest
import torch

from modlib import pretraining_consistency as pc
from modlib import stats
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


def test_masks_are_compared_at_comparable_density_by_the_configuration_nearest_the_scratch_share():
    from types import SimpleNamespace

    def grid(kept, effect, other, own=1.0, converged=True):
        return {"kept": kept, "lam": kept, "stages": "all", "own": own, "converged": converged,
                "test": {"hard": [1.0, other], "complement": [0.9 - effect, 0.9], "random": [0.9, 0.9]}}

    def row(selected, configs):
        found = {"grid": configs, "runs": [{"kept": selected}]}
        return SimpleNamespace(metrics={"searched": True, "base": {"task": 1.0},
                                        "subroutines": {"subject": found}})

    def extra(kept, effect, other, converged=True):  # a sweep's point, as pc.matched stores it
        point = {"lam": 10.0, "subroutine": "subject", "kept": kept, "own": 1.0, "converged": converged,
                 "hard": [1.0, other], "complement": [0.9 - effect, 0.9], "random": [0.9, 0.9]}
        return SimpleNamespace(metrics={"configuration": {"stages": "all"}, "points": [point]})

    rows, matched = {}, {}
    for i in range(3):
        # scratch selects dense masks (8 %), pretrained sparse ones (0.5 %); pretrained gets 7 % masks apart
        rows[f"sv-plural-scratch-{i}"] = row(0.08, [
            grid(0.08 + 0.001 * i, 0.1 + 0.01 * i, 0.88 + 0.01 * i),
            grid(0.079, 0.9, 0.2, own=0.5), grid(0.081, 0.9, 0.2, converged=False)])  # never matched
        rows[f"sv-plural-pretrained-{i}"] = row(0.005, [grid(0.005, 0.0, 0.3)])
        matched[f"matched-sv-plural-pretrained-{i}"] = extra(0.07 - 0.002 * i, 0.6 + 0.01 * i, 0.3 + 0.02 * i)
    without = pc_findings.matched_density(SimpleNamespace(rows=rows, settings=pc.settings("smoke")))
    assert without["common"].iloc[0] == pytest.approx(0.08)  # the scratch arm's median selected share
    found = pc_findings.matched_from(without, base_gate=0.95)  # pretrained has only its 0.5 % masks
    claim = found["sv-plural/subject/matched_effect"]
    assert claim.outcome == stats.UNDECIDED and "no masks of one density" in claim.text, claim.text
    runs = SimpleNamespace(rows=rows, matched=matched, settings=pc.settings("smoke"))
    table = pc_findings.matched_density(runs)
    assert (table["kept"].between(0.06, 0.085)).all()  # each base model's configuration nearest 8 %
    scratch = table[table["init"] == "scratch"]
    assert scratch["effect"].round(2).tolist() == [0.1, 0.11, 0.12]
    found = pc_findings.matched_from(table, base_gate=0.95)
    for what in ("matched_effect", "matched_specific"):
        claim = found[f"sv-plural/subject/{what}"]
        assert claim.outcome == stats.REPRODUCED and "Without pretrained base model 0" in claim.text, claim.text
    assert "from scratch and" in found["sv-plural/subject/matched_effect"].text
    # every pretrained effect (0.58-0.62) reaches MARGIN; over 3 base models a count is not decided
    count = found["sv-plural/subject/matched_consistency"]
    assert count.outcome == stats.UNDECIDED and "3 of 3 pretrained" in count.text, count.text
    assert found["sv-plural/subject/matched_spread"].outcome in (stats.NOT_REPRODUCED, stats.UNDECIDED)
    fixed = pc_findings.matched_density(runs, kept=0.005)  # at pretrained's density: scratch has no 0.5 % mask
    assert fixed[fixed["init"] == "scratch"]["kept"].min() > 0.07
    from modlib.pretraining_consistency import figures as pc_figures
    import pandas as pd
    effects = pd.DataFrame([{"rule": "sv-plural", "subroutine": "subject", "init": init, "seed": i,
                             "searched": True, "kept": kept, "sub_other": 0.5, "effect": 0.3}
                            for i in range(3) for init, kept in (("scratch", 0.08), ("pretrained", 0.005))])
    effects["modular"] = [True, False] * 3
    rows = pc_findings.verdict_table(effects, found, table)
    assert [r["density"] for r in rows] == ["searched", "comparable"]
    assert rows[0]["modular, scratch"] == "3 of 3" and rows[0]["modular, pretrained"] == "0 of 3"
    assert rows[0]["kept, scratch"] == "8.00 % (8.00–8.00)"
    assert rows[1]["larger effect"] == found["sv-plural/subject/matched_effect"].mark
    assert rows[1]["modular, pretrained"] == "3 of 3"  # the matched masks' own effects
    assert rows[0]["more modular"] == "–"  # not in found
    fig = pc_figures.density_by_arm(effects, table)
    assert len(fig.axes) == 2 and all(len(ax.lines) >= 4 for ax in fig.axes)  # 2 arms, dots and crosses
    fig = pc_figures.density_by_arm(effects, table, margin=0.1)  # issue 57: the margin in the bottom row
    bottom = fig.axes[1]
    assert any(list(line.get_ydata()) == [0.1, 0.1] and line.get_linestyle() == "--" for line in bottom.lines)
    assert not any(list(line.get_ydata()) == [0.1, 0.1] for line in fig.axes[0].lines)
    assert any("modular above 0.1" in t.get_text() for t in fig.legends[0].get_texts())


def _specificity_tables(random_gap: bool):
    """A chapter 6 table (:func:`pc_findings.pretraining_effects`' columns) and a matched one
    (:func:`pc_findings.matched_density`'s) of 5 base models per arm whose learned subnetworks are
    clearly lower on the other subroutine pretrained (0.3 against 0.9); their random subnetworks of
    the same per-layer counts show the same gap (``random_gap``) or none (both arms 0.9)."""
    import pandas as pd

    rows = []
    for init, other in (("scratch", 0.9), ("pretrained", 0.3)):
        for seed in range(5):
            learned = other + 0.01 * seed
            rows.append({"rule": "sv-plural", "init": init, "seed": seed, "subroutine": "subject", "task": 1.0,
                         "searched": True, "passed_gate": True, "kept": 0.05 + 0.002 * seed,
                         "sub_target": 1.0, "sub_other": learned, "target": 0.5, "other": 0.9,
                         "random_target": 0.8, "random_other": learned if random_gap else 0.9 - 0.01 * seed,
                         "lam": 1.0})
    df = pd.DataFrame(rows)
    df["effect"] = df["other"] - df["target"]
    df["modular"] = df["passed_gate"] & (df["effect"] >= pc_findings.MARGIN)
    df["both_tests"] = df["modular"] & (df["sub_target"] - df["sub_other"] >= pc_findings.LOWER)
    matched = df.drop(columns=["passed_gate", "modular", "both_tests"]).assign(common=0.05, stages="all", extra=False)
    return df, matched


@pytest.mark.parametrize("random_gap", [False, True])
def test_a_specificity_claim_whose_random_subnetworks_show_the_same_gap_cannot_be_decided(random_gap):
    # issue 50: a pretrained subnetwork this sparse may be weaker at everything; the specificity claims
    # count the arms' gap on the other subroutine only beyond a random subnetwork's of the same counts
    from modlib import claims

    df, matched = _specificity_tables(random_gap)
    found = {**pc_findings.pretraining_from(df, {}, base_gate=0.95), **pc_findings.matched_from(matched, base_gate=0.95)}
    for what in ("specific", "matched_specific"):
        claim = found[f"sv-plural/subject/{what}"]
        decision = claims.decisions()[f"pretraining_consistency/sv-plural-subject-{what}"]
        assert "random subnetworks of the same per-layer counts get" in claim.text, claim.text
        assert decision.registered_outcome == stats.REPRODUCED  # as registered, without the control
        if random_gap:
            assert claim.outcome == stats.UNDECIDED and "a control did not pass" in claim.text, claim.text
            assert "beyond the random one, 0.00," in claim.text, claim.text  # a rounded zero: no sign
            assert claims.words(decision.key).startswith("? cannot be decided here")
        else:
            assert claim.outcome == stats.REPRODUCED, claim.text
            assert decision.conditions["controls"]
    # the control is not run, so it does not pass, where no random subnetwork is stored
    found = pc_findings.matched_from(matched.assign(random_other=np.nan), base_gate=0.95)
    claim = found["sv-plural/subject/matched_specific"]
    assert claim.outcome == stats.UNDECIDED and "no random subnetwork" in claim.text, claim.text


def test_the_pretraining_numbers_the_page_quotes():
    made = {"language": {"losses": [4.2451, 2.0], "final_loss": 1.3276, "probe_untrained": 0.56, "probe": 1.0},
            "vision": {"final_loss": 0.0719, "probe": {"inside": 0.974, "contact": 0.71},
                       "probe_untrained": {"inside": 0.751, "contact": 0.526}}}
    quoted = pc_findings.pretraining_numbers(made)
    assert quoted == {"lm-loss-first": "4.25", "lm-loss-last": "1.33", "lm-probe-untrained": "56%",
                      "lm-probe": "100%", "simclr-loss-last": "0.07", "probe-inside": "97%",
                      "probe-inside-untrained": "75%", "probe-contact": "71%", "probe-contact-untrained": "53%"}


def test_default_trains_both_arms_itself_in_chapter_5s_shape():
    """`default` (issue 56: a reader's run within 3 minutes of CPU) trains and searches with its own
    copy of chapter 5's default settings: the same model shapes (so that the stored `full`
    checkpoints load), both arms' base models made by this chapter, no chapter 5 job and no sweep
    of its own, no extra masks; the other profiles are chapter 5's, as before."""
    from modlib import jobs

    own, theirs = pc.structure("default"), sc.settings("default")
    for name in ("size", "resnet", "stem_pool", "mlp_hidden", "embed", "bert_layers", "bert_hidden", "bert_heads"):
        assert getattr(own, name) == getattr(theirs, name), name
    assert pc.own_structure("default") and pc.borrowed("default") == set()
    for profile in ("smoke", "full", "paper"):
        assert not pc.own_structure(profile) and pc.structure(profile) == sc.settings(profile)
    assert pc.borrowed("full") == {f"{rule}-scratch-{i}" for rule in pc.settings("full").rules
                                   for i in range(sc.settings("full").base_models)}
    table = jobs.jobs([pc.CHAPTER], "default")
    assert not any(k.startswith(sc.CHAPTER) for k in table) and pc.sweep_names("default") == []
    assert pc.matched_names("default") == {} and pc.matched_names("full")  # no extra masks at default
    assert all(f"{pc.CHAPTER}/{n}" in table for n in pc.result_names(pc.settings("default")))
    text = pc.profile_text("default")  # the box's row, glued
    assert f"{pc.settings('default').seeds} base models per initialisation" in text
    assert f"{own.epochs} base-training epochs (chapter 5's: {theirs.epochs})" in text


def test_fine_tune_with_chapter_5s_settings_is_run_one(store):
    """The default's entry (:func:`pc.fine_tune`) given chapter 5's own settings computes what
    full's (:func:`pc.run_one`) computes."""
    s = sc.settings("smoke")
    want, got = pc.run_one("sv-plural", 1, "smoke", CPU), pc.fine_tune("sv-plural", 1, s, "smoke", CPU)
    assert want[0] == got[0] and want[1].keys() == got[1].keys()
    assert all(np.array_equal(want[1][k], got[1][k]) for k in want[1])
