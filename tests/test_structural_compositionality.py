"""Chapter 5's models, mask search, stored results, findings, figures and explorer (smoke sizes)."""

import copy
import html
import re

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
    batches = list(sc.problem_batches(data, 2, torch.Generator().manual_seed(0), model))
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
        stages, lams, _ = sc.grid_settings(m["rule"], s)
        for sub in subs:
            found = m["subroutines"][sub]
            # the untrained control trains its trained twin's choice: no grid of its own
            grid = len(s.inits) * len(s.mask_lrs) * len(stages) * len(lams) if m["trained"] else 0
            assert len(found["grid"]) == grid
            assert found["chosen_from"] == ("search" if m["trained"] else "given")
            assert len(found["runs"]) == s.mask_seeds
            run = found["runs"][0]
            assert 0 <= run["kept"] <= 1 and len(run["layers"]) == len(run["layer_kept"])
            assert len(run["kept_trajectory"]) == s.mask_epochs and run["kept_trajectory"][-1] == run["kept"]
            assert len(run["random_complement"]) == 2 and isinstance(run["converged"], bool)
            for g in found["grid"]:  # every configuration's kept share, its trajectory, its test accuracies
                assert len(g["kept_trajectory"]) == s.mask_epochs and g["kept"] == g["kept_trajectory"][-1]
                assert set(g["test"]) >= {"hard", "complement", "random", "random_complement", "own"}
            layers = len(m["overlap"]["layers"])
            assert r.arrays[f"kept-{sub}"].shape == (s.mask_seeds, layers)
            assert r.arrays[f"kept-trajectory-{sub}"].shape == (s.mask_seeds, s.mask_epochs, layers)
            assert np.allclose(r.arrays[f"kept-trajectory-{sub}"][:, -1], r.arrays[f"kept-{sub}"])
            assert r.arrays[f"seed-overlap-{sub}"].shape == (layers,) and sub in m["seed_overlap"]
            assert "layer_trajectory" not in run  # per layer: in the arrays only
        assert r.arrays["overlap"].shape == (len(m["overlap"]["layers"]),)


def test_the_untrained_control_trains_its_trained_twins_choice(smoke_runs):
    for rule in sc.settings("smoke").rules:
        twin, control = smoke_runs.rows[f"{rule}-0"], smoke_runs.rows[f"{rule}-untrained-0"]
        for sub, found in control.metrics["subroutines"].items():
            assert found["chosen"] == twin.metrics["subroutines"][sub]["chosen"]
        assert list(control.meta["depends"]) == [f"smoke/{sc.CHAPTER}/{rule}-0"]


def test_train_mask_logs_the_kept_share_and_grows_lambda_on_schedule():
    s = sc.settings("smoke")
    model = sc.make_model("sv-plural", s, 0)
    data = sc.problems("sv-plural", "sub-0", 32, seed=0)
    log = []
    ms = sc.train_mask(model, data, init=0.05, lr=0.1, stages="all", epochs=4, batch=16, seed=0, lam=30.0,
                       lam_delay=1, lam_warmup=2, log=log)
    base = 1e-8 * sc.PAPER_TOTAL_MASKED / ms.stats()["weights"].sum()
    assert [e["lam"] for e in log] == pytest.approx([1.0, 1.0, 15.5, 30.0])
    assert ms.settings["lam"] == pytest.approx(30.0 * base)
    stats = ms.stats()
    assert log[-1]["kept"] == pytest.approx(stats["kept"].sum() / stats["weights"].sum())
    assert log[-1]["layer_kept"] == pytest.approx(stats["kept_fraction"].tolist(), abs=1e-5)
    assert [e["beta"] for e in log] == pytest.approx([200 ** (i / 4) for i in range(4)])
    ms.remove()


def test_random_ablation_removes_as_many_weights_per_layer_as_the_subnetwork(monkeypatch):
    s = sc.settings("smoke")
    model = sc.make_model("sv-plural", s, 0)
    ms = masks.attach(model, "sparsify", init=-1.0)
    with torch.no_grad():
        for p in ms.parameters():
            p[: max(1, len(p) // 3)] = 1.0  # a third of each weight's rows kept
    hard = ms.hard_masks()
    seen = {}
    real_accuracy = sc.accuracy

    def spy(model, data, batch=128):  # what the random ablation keeps, per weight
        if "random_complement" not in seen and ms._masks[ms.names[0]].fixed is not None:
            seen["random_complement"] = {n: m.fixed.clone() for n, m in ms._masks.items()}
        return real_accuracy(model, data, batch)

    sets = {kind: sc.problems("sv-plural", kind, 8, seed=1) for kind in sc.KINDS}
    monkeypatch.setattr(sc, "accuracy", spy)
    acc = sc.evaluate(model, ms, sets, 0, seed=3)
    removed = {n: ~m for n, m in seen["random_complement"].items()}
    for n in hard:
        assert int(removed[n].sum()) == int(hard[n].sum())  # the same count per layer
    assert not all(torch.equal(removed[n], hard[n]) for n in hard)  # at random places
    assert set(acc) == {"hard", "complement", "random", "random_complement", "reinit", "own"}
    ms.remove()


def test_findings_table_figures_and_explorer_work_on_stored_results(smoke_runs):
    table = findings.structure_table(smoke_runs)
    assert len(table) == sum(len(sc.RULES[r.metrics["rule"]]) * smoke_runs.settings.mask_seeds
                             for r in smoke_runs.rows.values())
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
    # every column the console table shows has its key under it, random removal included
    assert all(head in box.children[2].value for head in explorer.COLUMNS.values())
    assert "random removed" in box.children[2].value and "re-drawn:" in box.children[2].value
    # and every line of it fits the text column (the reader saw "random removed" cut to "random")
    shown = html.unescape(re.search(r"<pre>(.*?)</pre>", box.children[2].value, re.S).group(1))
    assert max(map(len, shown.splitlines())) <= explorer.WIDTH, shown


def test_test_2_is_read_base_model_by_base_model_by_the_one_rule():
    """findings.readable_test2: per test 2 claim, the base models (mask seeds averaged, those past the
    selection gate) that removal leaves neither at the ceiling nor at the floor on both subroutines;
    unreadable_words names a claim none of whose base models can be read, and only such a claim."""
    import pandas as pd

    rows = [{"rule": "inside-contact", "subroutine": "contact", "model": m, "trained": True, "passed_gate": True,
             "mask_seed": 0, "abl_target": t, "abl_other": o, "reinit_target": rt, "reinit_other": ro}
            for m, t, o, rt, ro in ((0, 0.95, 0.97, 0.93, 0.95), (1, 0.13, 0.22, 0.14, 0.29), (2, 0.15, 0.28, 0.15, 0.31))]
    rows.append(dict(rows[0], model=3, passed_gate=False, abl_target=0.5, abl_other=0.9))  # missed the gate
    read = findings.readable_test2(pd.DataFrame(rows))
    assert read == {"inside-contact/contact/ablation": (0, 3), "inside-contact/contact/reinit": (1, 3)}
    said = findings.unreadable_words(read)
    assert said.startswith("One of them is Inside-Contact's contact subnetwork in row \u201ctest 2: removed\u201d")
    assert "re-initialised" not in said
    assert findings.unreadable_words({"inside-contact/contact/reinit": (1, 3)}).startswith("No such claim")


def test_the_page_observations_by_lambda_spread_and_sweep_gap_follow_the_numbers():
    """removal_by_lambda groups the masks by the multiple of lambda chosen and counts those removal
    spares; random_removal_spread says whether the per-base-model effects share a sign; untrained_rest
    parts the untrained masks a verdict reads from the others; sweep_other_gap is the worst shortfall
    of the found subnetwork against a random one on the other subroutine, as the page prints them."""
    import pandas as pd

    def row(sub, m, lam, kept, abl, trained=True, gate=True, rule="inside-contact"):
        return {"rule": rule, "subroutine": sub, "model": m, "trained": trained, "passed_gate": gate,
                "mask_seed": 0, "lam": lam, "kept": kept, "abl_target": abl, "rand_abl_target": 1.0}

    t = pd.DataFrame([row("inside", 0, 30, 0.023, 0.45), row("inside", 1, 100, 0.007, 0.95),
                      row("contact", 0, 100, 0.005, 0.95), row("contact", 1, 30, 0.016, 0.13),
                      row("contact", 0, 100, 0.0, 0.3, trained=False, gate=False),
                      row("number", 0, 30, 0.06, 0.2, trained=False, gate=False, rule="number-contact")])
    said = findings.removal_by_lambda(t)
    assert said == ("removal spares the subroutine of each of the 2 masks found at ×100 (0.5 to 0.7 % kept) "
                    "and of none of the 2 found at ×30 (1.6 to 2.3 %)"), said
    spread = findings.random_removal_spread(t)
    assert spread.startswith("2 base models whose effects differ in size, not in sign (inside +0.55, +0.05;"), spread
    rest = findings.untrained_rest(t)
    assert rest.startswith("The other untrained masks that a verdict reads keep nothing"), rest
    assert "Number-Contact's, which no verdict reads, keep 6.00 ± 0.00 % (number) but miss" in rest, rest
    points = [{"subroutine": "verb", "lam": 10.0, "kept": 0.24, "hard": [1.0, 0.9325], "random": [1.0, 0.9975]},
              {"subroutine": "verb", "lam": 100.0, "kept": 0.11, "hard": [1.0, 0.955], "random": [0.95, 0.84]}]
    assert findings.sweep_other_gap({"sv-plural": {"points": points}}) == "0.07"
    assert findings.sweep_schedule({"sv-plural": {"points": points, "configuration": {
        "lam_delay": 5, "lam_warmup": 5}}}) == "λ at ×1 for 5 epochs, then grown over 5 epochs, keeps 24.00% (verb) at ×10"


def test_findings_verdicts_follow_the_numbers():
    class Row:
        def __init__(self, metrics):
            self.metrics = metrics

    def run(sub_t, sub_o, abl_t, abl_o, seed):
        acc = {"hard": [sub_t, sub_o], "complement": [abl_t, abl_o], "reinit": [abl_t, abl_o],
               "random": [0.3, 0.3]}
        return {"seed": seed, "own": 1.0, "kept": 0.1, "layers": [], "layer_kept": [], **acc}

    def rows(values, trained=True):
        return {f"m{i}{trained}": Row({"rule": "inside-contact", "seed": i, "trained": trained, "searched": True,
                                       "base": {"task": 1.0},
                                       "subroutines": {"inside": {"passed_gate": True,
                                                             "runs": [run(*v, j) for j in range(2)]}}})
                for i, v in enumerate(values)}

    class Runs:
        settings = sc.settings("full")

    trained = [(0.95, 0.5, 0.4, 0.9), (0.97, 0.45, 0.35, 0.92), (0.96, 0.55, 0.42, 0.88)]
    Runs.rows = {**rows(trained), **{k.replace("m", "u"): v for k, v in rows(
        [(0.5, 0.5, 0.3, 0.3), (0.52, 0.5, 0.31, 0.3)], trained=False).items()}}
    found = findings.structural(Runs)
    for key in ("subnetwork", "ablation", "untrained"):
        assert found[f"inside-contact/inside/{key}"].outcome == stats.REPRODUCED, found[f"inside-contact/inside/{key}"].text
    Runs.rows = {**rows([(0.95, 0.97, 0.4, 0.9), (0.95, 0.9, 0.9, 0.4), (0.95, 0.5, 0.4, 0.9)]),
                 **rows([(0.95, 0.5, 0.3, 0.9)], trained=False)}
    found = findings.structural(Runs)
    assert not found["inside-contact/inside/subnetwork"].holds  # one base model's subnetwork is better at the other
    assert not found["inside-contact/inside/ablation"].holds  # one base model shows the reverse
    assert found["inside-contact/inside/untrained"].outcome == stats.UNDECIDED  # one untrained network only
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

    def fake_search(model, rule, s, show=False, chosen=None):
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


def test_density_checks_and_the_random_ablation_follow_the_kept_share():
    import pandas as pd

    def table(kept, rand_abl_target=0.9, abl_target=(0.4, 0.35, 0.45), trained=True):
        return pd.DataFrame([{"rule": "sv-plural", "subroutine": "subject", "model": m, "mask_seed": 0,
                              "trained": trained, "kept": kept, "converged": True, "abl_target": a,
                              "abl_other": 0.9, "rand_abl_target": rand_abl_target + 0.01 * m,
                              "rand_abl_other": 0.95} for m, a in enumerate(abl_target)])

    found = findings.density_from(table(0.03))
    assert found["sv-plural/subject/density"].holds and "3.00 ± 0.00 %" in found["sv-plural/subject/density"].text
    assert found["sv-plural/subject/random_ablation"].outcome == stats.HOLDS  # the book's own control
    for kept in (0.0, 1.0, 0.3):  # nothing, everything, denser than any of the paper's masks
        assert not findings.density_from(table(kept))["sv-plural/subject/density"].holds
    for kept in (0.0, 1.0):
        assert findings.density_from(table(kept))["sv-plural/subject/random_ablation"].outcome == stats.UNDECIDED
    # removing a random set of the same size hurts as much: the subnetwork is not special
    same = findings.density_from(table(0.03, rand_abl_target=0.4, abl_target=(0.4, 0.39, 0.38)))
    assert not same["sv-plural/subject/random_ablation"].holds
    assert findings.density_from(table(0.03, trained=False)) == {}  # untrained rows: no density claim


def test_an_untrained_control_that_keeps_nothing_is_degenerate_not_a_pass():
    class Row:
        def __init__(self, metrics):
            self.metrics = metrics

    def run(kept, seed):
        acc = {"hard": [0.25, 0.25], "complement": [0.95, 0.95], "reinit": [0.9, 0.9], "random": [0.25, 0.25]}
        return {"seed": seed, "own": 0.25, "kept": kept, "layers": [], "layer_kept": [], **acc}

    def rows(trained, kept):
        return {f"m{i}{trained}": Row({"rule": "inside-contact", "seed": i, "trained": trained, "searched": True,
                                       "base": {"task": 1.0},
                                       "subroutines": {"inside": {"passed_gate": trained,
                                                             "runs": [run(kept, j) for j in range(2)]}}})
                for i in range(3 if trained else 2)}

    class Runs:
        settings = sc.settings("full")

    Runs.rows = {**rows(True, 0.03), **rows(False, 0.0)}
    f = findings.structural(Runs)["inside-contact/inside/untrained"]
    assert f.outcome == stats.UNDECIDED and "degenerate, not a pass" in f.text
    assert "masks that keep nothing are no control" in f.text


def test_the_density_sweep_retrains_base_model_0_and_repeats_its_grid_where_they_meet(smoke_runs):
    from modlib.structural_compositionality import sweep
    w = sweep.settings("smoke")
    swept = sweep.run("smoke", torch.device("cpu"))
    assert list(swept) == list(w.rules) and sweep.result_names(w) == [f"sweep-{r}" for r in w.rules]
    for rule, r in swept.items():
        twin = smoke_runs.rows[f"{rule}-0"].metrics
        assert r.metrics["base"] == twin["base"]  # the very base model of {rule}-0
        points = r.metrics["points"]
        assert [(p["lam"], p["subroutine"]) for p in points] == [
            (lam, sub) for lam in sweep.lams(rule, w) for sub in sc.RULES[rule]]
        for p in points:
            assert 0 <= p["kept"] <= 1 and p["kept"] == p["kept_trajectory"][-1]
            # where the sweep meets the chapter's grid (same configuration, mask seed 0), it is the grid
            grid = [g for g in twin["subroutines"][p["subroutine"]]["grid"] if g["lam"] == p["lam"]
                    and (g["init"], g["lr"], g["stages"]) == tuple(r.metrics["configuration"][k]
                                                                   for k in ("init", "lr", "stages"))]
            assert grid, "smoke's sweep and grid share their multiples of lambda"
            for g in grid:
                assert g["kept"] == p["kept"] and g["test"]["hard"] == p["hard"]
                assert g["test"]["random"] == p["random"]
    with pytest.raises(ValueError, match="language_lams"):
        sweep.SweepSettings(language_lams=())


def test_the_density_figures_and_the_method_diagram_draw(smoke_runs):
    from modlib.structural_compositionality import sweep
    assert isinstance(figures.diagram_two_tests(), plots.plt.Figure)
    swept = {rule: r.metrics for rule, r in sweep.run("smoke", torch.device("cpu")).items()}
    fig = figures.density_sweep(swept, {rule: findings.paper_kept(rule) for rule in swept})
    assert len([ax for ax in fig.axes if ax.lines]) == sum(len(sc.RULES[r]) for r in swept)
    trajectories = {(m["rule"], sub): [run["kept_trajectory"] for run in f["runs"]]
                    for m in (r.metrics for r in smoke_runs.rows.values() if r.metrics["trained"])
                    for sub, f in m["subroutines"].items()}
    assert len(figures.kept_over_training(trajectories).axes) == len(sc.settings("smoke").rules)


def test_the_verdict_table_holds_each_verdict_once_and_the_sweep_says_where_test_1_can_fail(smoke_runs):
    from modlib.structural_compositionality import sweep
    table = findings.structure_table(smoke_runs)
    found = findings.structural(smoke_runs)
    rows = findings.verdict_table(table, found)
    assert [(r["rule"], r["subroutine"]) for r in rows] == list(
        dict.fromkeys(zip(table[table["trained"]]["rule"], table[table["trained"]]["subroutine"])))
    for r in rows:
        for key, heading in findings.VERDICTS.items():
            f = found.get(f"{r['rule']}/{r['subroutine']}/{key}")
            assert r[heading].removesuffix(findings.UNSHOWN_OTHER) == (f.mark if f else "–")
    # a random subnetwork at the ceiling everywhere: test 1 can fail nowhere; below the gate once: there
    pts = [{"lam": lam, "subroutine": "subject", "kept": kept, "hard": [1.0, 0.5], "random": [1.0, other]}
           for lam, kept, other in ((1.0, 0.3, 1.0), (10.0, 0.05, 1.0), (100.0, 0.01, 0.4))]
    f = findings.sweep_findings({"sv-plural": {"points": pts}})["sv-plural/subject/sweep"]
    assert f.holds and "(1.00% of the weights kept)" in f.text
    flat = [dict(p, random=[1.0, 1.0]) for p in pts]
    assert not findings.sweep_findings({"sv-plural": {"points": flat}})["sv-plural/subject/sweep"].holds
    swept = {rule: r.metrics for rule, r in sweep.run("smoke", torch.device("cpu")).items()}
    assert set(findings.sweep_findings(swept)) == {f"{rule}/{sub}/sweep" for rule in swept for sub in sc.RULES[rule]}
    # the one rule for when a test can be read (findings.read_rule): test 1 where a random subnetwork of
    # the mask's size reaches the gate on the other subroutine, test 2 where the network without the
    # subnetwork is neither at the ceiling nor at the floor on both; the page's windows follow it
    two = [dict(p, complement=c, subroutine=sub) for p, c in zip(pts, ([0.4, 0.8], [0.99, 0.99], [0.5, 0.9]))
           for sub in ("subject", "verb")]
    assert [findings.readable(p) for p in two[::2]] == [(True, True), (True, False), (False, True)]
    said = findings.sweep_readable({"sv-plural": {"points": two}})
    assert said["sweep-both-sv-plural"].startswith("both tests can be read for the subject mask at 30.00% kept (×1), "
                                                   "where the found subnetwork alone scores 0.50"), said
    assert "from 30.00% kept (×1) to 5.00% (×10)" in said["sweep-test1-sv-plural"], said
    none = findings.sweep_readable({"sv-plural": {"points": [dict(p, random=[0.3, 0.6]) for p in two]}})
    assert none["sweep-both-sv-plural"].startswith("at no density swept can both tests be read together: test 1's "
                                                   "\"fails the other\" never can (a random subnetwork of the "
                                                   "subject mask's size scores at most 0.60 on verb problems")
    assert none["sweep-both-sv-plural"].endswith("; test 2 can at some densities"), none  # test 2 alone: where it can
    assert str(findings.GATE_TARGET) in findings.read_rule() and str(findings.CEILING) in findings.read_rule()


def test_the_numbers_the_page_quotes_cover_every_searched_subroutine(smoke_runs):
    # chapter 5 glues these into its prose: one set per trained (rule, subroutine), the untrained
    # control's where it ran, and the overlaps per rule
    table = findings.structure_table(smoke_runs)
    quoted = findings.page_numbers(table)
    for (rule, sub), g in table.groupby(["rule", "subroutine"]):
        if g["trained"].any():
            for what in ("kept", "alone", "removed", "reinit", "random", "random-removed", "removed-models"):
                assert f"{rule}-{sub}-{what}" in quoted, (rule, sub, what)
            assert quoted[f"{rule}-{sub}-kept"] == findings.pct(g[g["trained"]]["kept"])
        if (~g["trained"]).any():
            assert {f"{rule}-{sub}-untrained", f"{rule}-{sub}-untrained-kept"} <= set(quoted)
    overlaps = findings.layer_numbers(smoke_runs)
    searched = {r.metrics["rule"] for r in smoke_runs.rows.values()
                if r.metrics["trained"] and r.metrics.get("subroutines")}
    assert {k.rsplit("-seed-iou", 1)[0] for k in overlaps if k.endswith("-seed-iou")} == searched
    assert all(" to " in v for v in overlaps.values()), overlaps
    one_seed = copy.deepcopy(smoke_runs)  # the default profile trains one mask seed: no seed overlap
    for r in one_seed.rows.values():
        if "seed_overlap" in r.metrics:
            r.metrics["seed_overlap"] = {}
    quoted = findings.layer_numbers(one_seed)
    assert {quoted[f"{rule}-seed-iou"] for rule in searched} == {"not measured"}, quoted


def test_kept_by_layer_leaves_a_gap_where_both_masks_keep_nothing():
    # the chance overlap p q / (p + q - p q) has no union in a layer both masks empty: no point
    # there and no "invalid value encountered in divide" on the page (chapter 5 at default)
    import warnings

    import matplotlib.pyplot as plt

    arrays = {"kept-a": np.array([[0.1, 0.0, 0.2]]), "kept-b": np.array([[0.3, 0.0, 0.0]]),
              "overlap": np.array([0.05, np.nan, 0.0])}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = figures.kept_by_layer(arrays, ("a", "b"), ["l0", "l1", "l2"])
    chance = fig.axes[0].lines[3].get_ydata()
    # a zero is drawn at the log axis's floor (fig-sc-layers' lines stay on the axis, issue 57)
    assert chance[0] == pytest.approx(0.03 / 0.37) and np.isnan(chance[1]) and chance[2] == figures.LAYER_FLOOR
    plt.close(fig)


def test_the_penalty_search_table_ships_with_the_package_with_what_the_page_reads():
    # the page's last cell reads it through importlib.resources: outside the repository too (Colab)
    from importlib import resources

    import pandas as pd

    search = pd.read_csv(resources.files("modlib.structural_compositionality") / "mask_density_search.csv")
    bert = search[(search["rule"] == "sv-plural") & (search["base"] == "trained-0") & (search["epochs"] == 20)
                  & (search["lam_delay"] == 0) & (search["lam_warmup"] == 0)]
    assert {1, 10} <= set(bert["lam_mult"]) and (bert["kept"] < 1e-3).any()
    for tag in ("L-lam100-warm10", "R-lam100-warm10-ep40"):
        assert len(search[(search["tag"] == tag) & (search["sub"] == "subject")]) == 1


def test_the_page_says_why_the_verdicts_count_fewer_base_models_than_were_searched():
    """Issue 57: where the selection gate leaves a base model's masks out, the check of the base
    models and the statements that count every searched one say so; the verdict table's legend is
    one line that says what *holds* asserts in the random rows."""
    import pandas as pd

    t = pd.DataFrame([{"rule": "sv-plural", "subroutine": sub, "model": m, "trained": True, "passed_gate": m != 1}
                      for sub in ("subject", "verb") for m in range(3)])
    assert findings.gate_words(t, "sv-plural") == ("; the selection gate on their masks then leaves base model 1 "
                                                   "out of the subject and verb verdicts, which count 2")
    assert findings.gate_words(t.assign(passed_gate=True), "sv-plural") == ""
    assert "base model 1 included" in findings._every_searched(t[t["subroutine"] == "verb"])
    legend = findings.table_legend()
    assert "\n" not in legend and f"*{stats.HOLDS}* means" in legend and findings.VERDICTS["random"] in legend
    # the fresh table has no row "vs untrained", so its legend does not explain one
    assert findings.VERDICTS["untrained"] in legend
    assert findings.VERDICTS["untrained"] not in findings.table_legend(untrained=False)
    assert findings.VERDICTS["reinit"] in findings.table_legend(untrained=False)
