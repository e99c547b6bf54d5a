"""Chapter 5's models, mask search, stored results, findings, figures and explorer (smoke sizes)."""

import numpy as np
import pytest
import torch

from modlib import masks, plots, stats
from modlib.structural_compositionality import experiment as sc
from modlib.structural_compositionality import explorer, figures, findings


@pytest.fixture(scope="module")
def smoke_runs(tmp_path_factory):
    import os
    root = tmp_path_factory.mktemp("store")
    old = os.environ.get("MODLIB_RESULTS")
    os.environ["MODLIB_RESULTS"] = str(root)
    try:
        yield sc.run("smoke", torch.device("cpu"))
    finally:
        if old is None:
            os.environ.pop("MODLIB_RESULTS")
        else:
            os.environ["MODLIB_RESULTS"] = old


def test_models_embed_items_and_use_instance_norm_without_statistics():
    s = sc.settings("smoke")
    vision = sc.make_model("inside-contact", s, 0)
    assert not any(isinstance(m, torch.nn.BatchNorm2d) for m in vision.modules())
    norms = [m for m in vision.modules() if isinstance(m, torch.nn.InstanceNorm2d)]
    assert norms and all(not m.affine and not m.track_running_stats for m in norms)
    assert vision(torch.rand(5, 3, 32, 32)).shape == (5, s.embed)
    language = sc.make_model("sv-plural", s, 0)
    assert language.bert.config.hidden_dropout_prob == 0 and language.bert.config.attention_probs_dropout_prob == 0
    ids, mask = sc.agreement.encode(["the pilot laughs"] * 3)
    assert language(ids, mask).shape == (3, s.bert_hidden)
    paper = sc.settings("paper")
    assert (paper.resnet, paper.bert_layers, paper.bert_hidden, paper.bert_heads) == ("resnet50", 4, 512, 8)


def test_the_same_seed_gives_the_same_model():
    s = sc.settings("smoke")
    a, b = (sc.make_model("sv-plural", s, 3) for _ in range(2))
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


def test_batches_come_on_the_models_device():
    # a GPU run failed here once: the problems stayed on the CPU while the model was on CUDA.
    # A model on the meta device stands in for a GPU: every batch must follow it there.
    data = {"images": torch.zeros(5, 4, 3, 8, 8, dtype=torch.uint8), "answer": torch.arange(5) % 4,
            "words": ["not a tensor"] * 5}
    model = torch.nn.Linear(2, 2, device="meta")
    batches = list(sc._batches(data, 2, torch.Generator().manual_seed(0), model))
    assert [len(b["answer"]) for b in batches] == [2, 2, 1]
    assert all(t.device.type == "meta" for b in batches for t in b.values())
    assert set(batches[0]) == {"images", "answer"}


@pytest.mark.parametrize("rule", ["inside-contact", "sv-plural"])
def test_mask_patterns_cover_the_named_stages_and_the_head(rule):
    s = sc.settings("smoke").with_(bert_layers=2)
    model = sc.make_model(rule, s, 0)
    all_ = masks.attach(model, "sparsify", names=sc.mask_patterns(model, "all"))
    n_all = len(all_.names)
    all_.remove()
    later = masks.attach(model, "sparsify", names=sc.mask_patterns(model, "later"))
    names = later.names
    later.remove()
    assert 0 < len(names) < n_all
    assert not any("embed" in n for n in names)  # the stem is early; BERT's embeddings never masked
    if rule == "inside-contact":
        assert any(n.startswith("head.") for n in names)
    with pytest.raises(ValueError, match="stages='middle'"):
        sc.mask_patterns(model, "middle")


@pytest.mark.parametrize("case, expected", [((0.95, 0.3, 0.8), 0.5), ((0.89, 0.3, 0.8), 0.0),
                                             ((0.9, 0.1, 0.8), 0.55), ((0.95, 0.1, 0.2), 0.0),
                                             ((1.0, 0.8, 0.3), -0.5)])
def test_quality_is_the_papers_selection_rule(case, expected):
    assert sc.quality(*case) == pytest.approx(expected)


def test_train_mask_prunes_and_leaves_the_model_as_it_was():
    s = sc.settings("smoke")
    model = sc.make_model("sv-plural", s, 0)
    before = [p.clone() for p in model.parameters()]
    data = sc.problems("sv-plural", "sub-0", 32, seed=0)
    ms = sc.train_mask(model, data, init=0.05, lr=0.1, stages="all", epochs=3, batch=16, seed=0)
    stats = ms.stats()
    assert ms.mode == "hard" and ms.beta == pytest.approx(200.0)
    assert stats["kept"].sum() < stats["weights"].sum()  # lr 0.1 for 6 steps prunes some weights
    assert ms.settings["lam"] == pytest.approx(1e-8 * sc.PAPER_TOTAL_MASKED / stats["weights"].sum())
    ms.remove()
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), before))


def test_settings_are_checked():
    with pytest.raises(ValueError, match="rules"):
        sc.settings("smoke").with_(rules=("inside-colour",))
    with pytest.raises(ValueError, match="resnet='resnet7'"):
        sc.settings("smoke").with_(resnet="resnet7")
    with pytest.raises(ValueError, match="bert_hidden=30"):
        sc.settings("smoke").with_(bert_hidden=30, bert_heads=4)
    with pytest.raises(TypeError, match="did you mean 'mask_seeds'"):
        sc.StructureSettings(mask_seed=2)


def test_smoke_run_stores_every_result_with_its_search(smoke_runs):
    s = sc.settings("smoke")
    assert list(smoke_runs.rows) == sc.result_names(s)
    for name, r in smoke_runs.rows.items():
        m = r.metrics
        assert m["trained"] == ("untrained" not in name)
        subs = sc.RULES[m["rule"]]
        assert list(m["subroutines"]) == list(subs)
        for sub in subs:
            found = m["subroutines"][sub]
            assert len(found["grid"]) == len(s.inits) * len(s.mask_lrs) * len(s.stages)
            assert len(found["runs"]) == s.mask_seeds
            run = found["runs"][0]
            assert 0 <= run["kept"] <= 1 and len(run["layers"]) == len(run["layer_kept"])
            assert r.arrays[f"kept-{sub}"].shape == (s.mask_seeds, len(run["layers"]))
        assert r.arrays["overlap"].shape == (len(m["subroutines"][subs[0]]["runs"][0]["layers"]),)


def test_findings_table_figures_and_explorer_work_on_stored_results(smoke_runs):
    table = findings.structure_table(smoke_runs)
    assert len(table) == sum(len(sc.RULES[r.metrics["rule"]]) for r in smoke_runs.rows.values())
    found = findings.structural(smoke_runs)
    assert {"inside-contact/base", "inside-contact/inside/subnetwork", "inside-contact/inside/untrained",
            "sv-plural/verb/ablation", "sv-plural/subject/random"} <= set(found)
    assert all(isinstance(f.holds, bool) for f in found.values())
    for fig in (figures.subnetwork_bars(table[table["trained"]], findings.LEPORI), figures.control_bars(table)):
        assert fig.get_size_inches()[0] <= plots.COLUMN
    box = explorer.structure_explorer(smoke_runs)
    box.children[0].children[0].value = "sv-plural-untrained-0"
    assert box.children[0].children[1].options == ("subject", "verb")
    assert "mask seed" not in box.children[2].value and "seed  kept" in box.children[2].value


def test_findings_verdicts_follow_the_numbers():
    class Row:
        def __init__(self, metrics):
            self.metrics = metrics

    def run(sub_t, sub_o, abl_t, abl_o, seed):
        acc = {"hard": [sub_t, sub_o], "complement": [abl_t, abl_o], "reinit": [abl_t, abl_o],
               "random": [0.3, 0.3]}
        return {"seed": seed, "own": 1.0, "kept": 0.1, "layers": [], "layer_kept": [], **acc}

    def rows(values, trained=True):
        return {f"m{i}{trained}": Row({"rule": "r", "seed": i, "trained": trained, "searched": True,
                                       "base": {"task": 1.0},
                                       "subroutines": {"a": {"passed_gate": True,
                                                             "runs": [run(*v, j) for j in range(2)]}}})
                for i, v in enumerate(values)}

    class Runs:
        settings = sc.settings("full")

    trained = [(0.95, 0.5, 0.4, 0.9), (0.97, 0.45, 0.35, 0.92), (0.96, 0.55, 0.42, 0.88)]
    Runs.rows = {**rows(trained), **{k.replace("m", "u"): v for k, v in rows(
        [(0.5, 0.5, 0.3, 0.3), (0.52, 0.5, 0.31, 0.3)], trained=False).items()}}
    found = findings.structural(Runs)
    for key in ("subnetwork", "ablation", "untrained"):
        assert found[f"r/a/{key}"].outcome == stats.REPRODUCED, found[f"r/a/{key}"].text
    Runs.rows = {**rows([(0.95, 0.97, 0.4, 0.9), (0.95, 0.9, 0.9, 0.4), (0.95, 0.5, 0.4, 0.9)]),
                 **rows([(0.95, 0.5, 0.3, 0.9)], trained=False)}
    found = findings.structural(Runs)
    assert not found["r/a/subnetwork"].holds  # one base model's subnetwork is better at the other
    assert not found["r/a/ablation"].holds  # one base model shows the reverse
    assert found["r/a/untrained"].outcome == stats.UNDECIDED  # one untrained network only
    Runs.rows = rows([(0.95, 0.5, 0.4, 0.9)] * 3)  # three identical base models: nothing to estimate
    assert all(not f.holds for f in findings.structural(Runs).values() if f.verdict is not None)


def test_short_layer_names():
    assert figures.short_layer("resnet.encoder.stages.1.layers.0.layer.1.convolution.weight") == "s1.b0.conv1"
    assert figures.short_layer("bert.encoder.layer.1.intermediate.dense.weight") == "L1.ffn-in"
    assert figures.short_layer("bert.encoder.layer.0.attention.output.dense.weight") == "L0.attn-out"


def test_subroutines_masking_different_layers_are_compared_over_both(monkeypatch):
    # one subroutine's best configuration masks every layer, the other's only the later ones: a
    # layer left unmasked is whole in that subnetwork (kept 1), and the overlap covers both sets
    s = sc.settings("smoke").with_(rules=("inside-contact",))
    model = sc.make_model("inside-contact", s, 0)
    weights = dict(model.named_parameters())

    def covered(stages):  # the weights a configuration masks, by name
        ms = masks.attach(model, "sparsify", names=sc.mask_patterns(model, stages))
        names = ms.stats()["name"].tolist()
        ms.remove()
        return names

    later = covered("later")
    monkeypatch.setattr(sc, "make_model", lambda *a, **k: model)

    def fake_search(model, rule, s, show=False):
        out = {}
        # "inside" keeps every weight, "contact" none of those it masks
        for name, names, keep in (("inside", covered("all"), True), ("contact", later, False)):
            m = {n: torch.full_like(weights[n], keep, dtype=torch.bool) for n in names}
            run = {"layers": names, "layer_kept": [float(keep)] * len(names)}
            out[name] = {"runs": [run], "masks": m}
        return out

    monkeypatch.setattr(sc, "search", fake_search)
    metrics, arrays = sc.run_one("inside-contact", 0, False, s, torch.device("cpu"))
    layers = metrics["overlap"]["layers"]
    assert layers == [n for n in weights if n in layers] and set(later) < set(layers)
    unmasked = [i for i, n in enumerate(layers) if n not in later]
    masked = [i for i, n in enumerate(layers) if n in later]
    assert (arrays["kept-contact"][0, unmasked] == 1).all() and (arrays["kept-contact"][0, masked] == 0).all()
    assert (arrays["kept-inside"] == 1).all()
    assert (arrays["overlap"][unmasked] == 1).all() and (arrays["overlap"][masked] == 0).all()
    assert arrays["kept-inside"].shape == arrays["kept-contact"].shape == (1, len(layers))
