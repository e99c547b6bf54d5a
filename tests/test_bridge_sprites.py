"""Chapter 7 (the bridge, notebooks/bridge.ipynb), "Chapter 2's decoders": the settings, the
target, the masks and their controls at smoke sizes, the stored result read back, the page's
target cell against modlib's, the findings and figure, and the claims on made-up numbers and on
their degenerate variants (identical seeds, masks that keep everything or nothing, untrained
decoders). The claims on the stored full results are at the end; they skip until ``full`` is
stored."""

import os
from pathlib import Path

import matplotlib
import numpy as np
import pytest
import torch

matplotlib.use("Agg")

from modlib import jobs, masks, results, stats  # noqa: E402
from modlib.bridge import figures, findings  # noqa: E402
from modlib.bridge import sprites as brs  # noqa: E402
from modlib.compositional_sprites import experiment as cs  # noqa: E402
from modlib.data import sprites  # noqa: E402

CPU = torch.device("cpu")
ROOT = Path(__file__).resolve().parents[1]
FULL = ROOT / "notebooks" / "results" / "full"


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """The sprite results at smoke, computed once into a store of the test's own, and the store."""
    store = tmp_path_factory.mktemp("store")
    with jobs.store_at(store):
        return brs.run("smoke", CPU), store


# ---------------------------------------------------------------- settings


def test_the_settings_fail_loudly_naming_the_value_and_the_choices():
    b = brs.settings("smoke")
    with pytest.raises(ValueError, match="mask_batch=10 does not split into samples=4"):
        b.with_(mask_batch=10)
    with pytest.raises(ValueError, match="models='mono'.*'monolithic', 'compositional'"):
        b.with_(models=("mono",))
    with pytest.raises(ValueError, match="epochs=-1 is not valid"):
        b.with_(epochs=-1)
    with pytest.raises(ValueError, match="mono_seeds=0 is not valid"):
        b.with_(mono_seeds=0)
    with pytest.raises(ValueError, match="alpha=2 is not valid"):
        b.with_(alpha=2)
    with pytest.raises(ValueError, match="model='shared'"):
        b.seeds_of("shared")
    with pytest.raises(ValueError, match="model='shared'"):
        brs.fetch("smoke", "shared", CPU)
    with pytest.raises(ValueError, match="k=2 is not valid; choose one of 0, 1"):
        brs.slot_target(torch.rand(1, 2, 5), 2, 8)
    with pytest.raises(TypeError, match="did you mean 'mask_steps'"):
        brs.SpriteMaskSettings(mono_seeds=1, comp_seeds=1, mask_step=3)


def test_full_decoders_are_chapter_twos_full_ones_and_default_says_what_it_changes():
    for model in brs.MODELS:
        s = brs.decoder_settings("full", brs.settings("full"), model)
        assert s.with_(seeds=3, rows=cs.settings("full").rows) == cs.settings("full")
        assert s.rows == (brs.ROWS[model],) and s.seeds == brs.settings("full").seeds_of(model)
    d = brs.decoder_settings("default", brs.settings("default"), "monolithic")
    assert d.epochs == brs.settings("default").epochs and d.mono_hidden == brs.settings("default").mono_hidden
    assert brs.result_names(brs.settings("full")) == ["sprites-monolithic", "sprites-compositional"]


# ---------------------------------------------------------------- the target and the masks


def test_the_slot_target_is_the_scene_with_the_other_slot_empty():
    g = torch.Generator().manual_seed(0)
    z = torch.rand(16, 2, 5, generator=g)
    cover = sprites.render_slots(z, 16, rgba=True)[:, :, 3] > 0  # [N, 2, H, W]
    scene = sprites.scenes(z, 16)
    for k in (0, 1):
        target = brs.slot_target(z, k, 16)
        alone = ~cover[:, 1 - k]  # pixels the other sprite does not touch
        assert torch.allclose(target.permute(0, 2, 3, 1)[alone], scene.permute(0, 2, 3, 1)[alone])
        assert (target.permute(0, 2, 3, 1)[~cover[:, k]] == 0).all()  # nothing outside sprite k
    # under soft occlusion a lone slot-1 sprite is drawn at half brightness
    assert torch.allclose(brs.slot_target(z, 1, 16), sprites.render_slots(z, 16)[:, 1] / 2)


def _notebook_function(name: str):
    """The function ``name`` as chapter 7's page defines it (the cell that defines it, run alone)."""
    import nbformat

    nb = nbformat.read(ROOT / "notebooks" / "bridge.ipynb", as_version=4)
    cells = [c.source for c in nb.cells if c.cell_type == "code" and f"def {name}(" in c.source]
    assert len(cells) == 1, f"the page should define {name} in exactly one cell; found {len(cells)}"
    scope = {"torch": torch, "sprites": sprites}
    exec(cells[0], scope)
    return scope[name]


def test_the_pages_target_is_the_one_the_experiment_trains_on():
    shown = _notebook_function("slot_target")
    z = torch.rand(8, 2, 5, generator=torch.Generator().manual_seed(3))
    for k in (0, 1):
        assert torch.equal(shown(z, k, 16), brs.slot_target(z, k, 16))


def _decoder(model: str = "monolithic") -> torch.nn.Module:
    s = brs.decoder_settings("smoke", brs.settings("smoke"), model)
    torch.manual_seed(0)
    return cs.build(s, brs.ROWS[model])


def test_a_mask_that_keeps_everything_reproduces_the_decoder():
    for model in brs.MODELS:
        net = _decoder(model)
        z = sprites.scale_latents(torch.rand(32, 2, 5))
        params = dict(net.named_parameters())
        every = {k: torch.ones_like(params[k], dtype=torch.bool) for k in _masked_names(net)}
        assert torch.equal(brs.masked_output(net, every, "hard", z), cs.predict(net, z))
        # and removing all of it leaves the biases' constant image, the same for every scene
        gone = brs.masked_output(net, every, "complement", z)
        assert torch.allclose(gone, gone[:1].expand_as(gone))


def test_the_random_control_keeps_the_same_count_per_layer():
    net = _decoder()
    g = torch.Generator().manual_seed(1)
    params = dict(net.named_parameters())
    mask = {k: torch.rand(params[k].shape, generator=g) < 0.3 for k in _masked_names(net)}
    for seed in (0, 1):
        rnd = masks.random_like(mask, seed)
        assert {k: int(v.sum()) for k, v in rnd.items()} == {k: int(v.sum()) for k, v in mask.items()}
        assert any(not torch.equal(rnd[k], mask[k]) for k in mask)
        # the "random" mode the page scores is that same control
        z = sprites.scale_latents(torch.rand(16, 2, 5))
        assert torch.equal(brs.masked_output(net, mask, "random", z, seed=seed),
                           brs.masked_output(net, rnd, "hard", z))


def test_mask_training_leaves_the_decoder_unchanged_and_removes_weights():
    net = _decoder()
    before = {k: v.clone() for k, v in net.state_dict().items()}
    z = torch.rand(64, 2, 5, generator=torch.Generator().manual_seed(0))
    b = brs.settings("smoke")
    mask = brs.train_slot_mask(net, sprites.scale_latents(z), brs.slot_target(z, 0, 16), b, seed=0)
    for k, v in net.state_dict().items():
        assert torch.equal(v, before[k]), k
    assert all(p.requires_grad for p in net.parameters())
    share, per = brs.kept(mask)
    assert 0 < share < 1 and len(per) == 6


# ---------------------------------------------------------------- the stored smoke result


def test_smoke_stores_and_reloads_every_array(smoke):
    run, store = smoke
    b = brs.settings("smoke")
    assert set(run) == set(b.models)
    with jobs.store_at(store), results.store_only():
        again = brs.run("smoke", CPU)
    for m, r in run.items():
        a, n = r.arrays, b.seeds_of(m)
        assert a["r2_in"].shape == a["r2_whole"].shape == (n,)
        for k in ("slot_in", "slot_whole", "random_in", "full_slot_in", "kept", "region_err"):
            assert a[k].shape == (n, 2), k
        assert a["damage"].shape == a["damage_random"].shape == (n, 2, 2)
        assert a["mask"].shape == (n, 2, int(a["mask_layers"].sum())) and a["mask"].dtype == bool
        assert a["kept_layers"].shape == (n, 2, a["mask_layers"].size)
        assert ((a["kept"] >= 0) & (a["kept"] <= 1)).all()
        assert np.allclose(a["kept"], a["mask"].mean(2))  # the kept shares are the stored masks'
        assert sorted(again[m].arrays) == sorted(a)
        for k, v in a.items():
            assert np.array_equal(again[m].arrays[k], v), (m, k)
        assert r.config["decoder"]["epochs"] == cs.settings("smoke").epochs
    # at a profile built from the store, a missing result is None, not computed
    with jobs.store_at(store / "empty"):
        os.environ[results.FROM_STORE_ENV] = "1"
        try:
            assert brs.runs("full", CPU) is None
        finally:
            del os.environ[results.FROM_STORE_ENV]


def test_the_stored_masks_give_the_stored_scores(smoke):
    """Retrained from the same seed, the decoder and the stored mask give the stored slot R^2."""
    run, _ = smoke
    b = brs.settings("smoke")
    s = brs.decoder_settings("smoke", b, "monolithic")
    net = brs.train_decoder(s, "monolithic", 1, CPU)
    a = run["monolithic"].arrays
    assert brs.decoder_r2(s, "monolithic", net, CPU)[0] == pytest.approx(a["r2_in"][1])
    params = dict(net.named_parameters())
    like = {k: params[k] for k in _masked_names(net)}
    z = brs.mask_scenes(1, b.n_mask, b.n_eval)
    for k in (0, 1):
        mask = brs.unflat(a["mask"][1, k], like)
        out = brs.masked_output(net, mask, "hard", sprites.scale_latents(z["in"]))
        assert cs.r2_score(brs.slot_target(z["in"], k, s.size), out) == pytest.approx(a["slot_in"][1, k])


def _masked_names(net) -> list[str]:
    """The weights a default mask covers, in the order the stored masks hold them."""
    ms = masks.attach(net, "gumbel")
    try:
        return ms.names
    finally:
        ms.remove()


def test_findings_and_figures_draw_from_smoke_results(smoke):
    run, _ = smoke
    arrays = {m: r.arrays for m, r in run.items()}
    prov = results.provenance(list(run.values()))
    for m, a in arrays.items():
        cl = findings.sprite_claims(a, m)
        assert [c.name for c in cl] == [f"{k}-{m}" for k in findings.SPRITE_KINDS if k != "vs-reference"]
        assert all(isinstance(s, stats.Finding) for s in findings.sprite_statements(a, m))
        assert len(findings.sprite_table(a, m)) == brs.settings("smoke").seeds_of(m)
    table = findings.sprite_verdict_table(findings.all_sprite_claims(arrays))
    assert len(table) == len(findings.SPRITE_KINDS)  # a row per kind
    assert "vs-reference-monolithic" in [c.name for c in findings.all_sprite_claims(arrays)["monolithic"]]
    for fig in (figures.diagram_slot_targets(), figures.sprite_masks(arrays, prov)):
        assert fig.get_size_inches()[0] <= 6.6 + 1e-9
        matplotlib.pyplot.close(fig)


# ---------------------------------------------------------------- the claims on made-up numbers

LAYERS = (40, 60)


def _positive(seeds: int = 12, most: float = 0.8) -> dict:
    """Made-up arrays of monolithic decoders in which every claim holds: fitted decoders, slot
    subnetworks that draw their sprite, masks in disjoint halves of every layer plus a share of the
    other's half that grows with the whole-cube R^2 (the registered direction), and removals that
    harm their own sprite."""
    rng = np.random.default_rng(0)
    u = lambda lo, hi, *shape: rng.uniform(lo, hi, (seeds, *shape))  # noqa: E731
    q = np.linspace(0.0, most, seeds)  # how much of slot 0's half slot 1's mask also keeps
    mask = np.zeros((seeds, 2, sum(LAYERS)), dtype=bool)
    start = 0
    for n in LAYERS:
        half = np.arange(start, start + n) < start + n // 2
        draw = rng.uniform(size=(seeds, 2, n))
        mask[:, 0, start:start + n] = half & (draw[:, 0] < 0.5)
        mask[:, 1, start:start + n] = (~half & (draw[:, 1] < 0.5)) | (half & (draw[:, 1] < 0.5 * q[:, None]))
        start += n
    cuts = np.cumsum(LAYERS)[:-1]
    return {"r2_in": u(0.85, 0.9), "r2_whole": 2.0 * q - 1.6 + rng.normal(0, 0.1, seeds),
            "slot_in": u(0.7, 0.9, 2), "slot_whole": u(0.0, 0.5, 2), "random_in": u(-1.5, -0.5, 2),
            "full_slot_in": u(-1.0, 0.4, 2), "region_err": u(0.01, 0.02, 2),
            "damage": np.stack([np.stack([u(0.2, 0.3), u(0.0, 0.05)], 1),
                                np.stack([u(0.0, 0.05), u(0.2, 0.3)], 1)], 1),
            "damage_random": u(0.05, 0.1, 2, 2), "mask": mask, "mask_layers": np.array(LAYERS),
            "kept": mask.mean(2),
            "kept_layers": np.stack([p.mean(2) for p in np.split(mask, cuts, axis=2)], axis=2)}


def identical_seeds(a: dict) -> dict:
    """Every seed a copy of seed 0."""
    return {k: v if k == "mask_layers" else np.repeat(v[:1], len(v), axis=0) for k, v in a.items()}


def keep_everything(a: dict) -> dict:
    """Both masks keep every weight: each subnetwork is the decoder, a removal removes it all."""
    a = dict(a)
    a["mask"] = np.ones_like(a["mask"])
    a["kept"], a["kept_layers"] = np.ones_like(a["kept"]), np.ones_like(a["kept_layers"])
    a["slot_in"] = a["random_in"] = a["full_slot_in"]
    a["damage"] = a["damage_random"] = np.zeros_like(a["damage"])  # neither keeps a weight of its own
    return a


def keep_nothing(a: dict) -> dict:
    """Both masks keep no weight: each subnetwork draws the biases' constant image, nothing removed."""
    a = dict(a)
    a["mask"] = np.zeros_like(a["mask"])
    a["kept"], a["kept_layers"] = np.zeros_like(a["kept"]), np.zeros_like(a["kept_layers"])
    a["slot_in"] = a["random_in"] = np.full_like(a["slot_in"], -0.2)
    a["damage"] = a["damage_random"] = np.zeros_like(a["damage"])
    return a


def untrained_decoders(a: dict) -> dict:
    """Decoders that never fit their training support."""
    a = dict(a)
    a["r2_in"] = np.full_like(a["r2_in"], -0.3)
    return a


DEGENERATE = {"identical seeds": identical_seeds, "keeps everything": keep_everything,
              "keeps nothing": keep_nothing, "untrained decoders": untrained_decoders}


def test_the_overlap_is_iou_against_the_chance_of_the_kept_counts_per_layer():
    # two tensors of 4 weights: slot 0 keeps 2 + 2, slot 1 keeps 1 of those + 0 and 0 + 4
    m = np.array([[[1, 1, 0, 0, 1, 1, 0, 0], [1, 0, 0, 0, 1, 1, 1, 1]]], dtype=bool)
    a = {"mask": m, "mask_layers": np.array([4, 4])}
    iou, chance = findings.slot_overlap(a)
    assert iou[0] == 3 / 6  # 3 shared, of 4 + 5 - 3 kept by either
    expected = 2 * 1 / 4 + 2 * 4 / 4
    assert chance[0] == pytest.approx(expected / (4 + 5 - expected))
    li, lc = findings.slot_overlap(a, per_layer=True)
    assert li[0].tolist() == [1 / 2, 2 / 4] and lc[0, 1] == pytest.approx(2 / 4)
    assert findings.slot_overlap({"mask": m & False, "mask_layers": np.array([4, 4])})[0][0] == 0


def test_the_selectivity_reads_own_against_other_damage():
    d = np.array([[[0.3, 0.0], [0.0, 0.3]], [[0.1, 0.1], [0.1, 0.1]], [[0.0, 0.0], [0.0, 0.0]]])
    assert findings.selectivity(d).tolist() == [1.0, 0.0, 0.0]


def test_the_claims_hold_on_made_up_positive_numbers():
    for c in findings.sprite_claims(_positive(), "monolithic"):
        assert c.verdict.reproduced, c.text
    (c,) = [c for c in findings.sprite_claims(_positive(), "monolithic") if c.name.startswith("predicts")]
    assert "rho +" in c.text  # the made-up overlap rises with whole-cube R²


def test_the_correlation_claim_reads_the_registered_direction_not_the_data_sign():
    """The same correlation against the registered direction (whole-cube R² negated) does not hold."""
    a = _positive()
    a["r2_whole"] = -a["r2_whole"]
    (c,) = [c for c in findings.sprite_claims(a, "monolithic") if c.name.startswith("predicts")]
    assert c.verdict.outcome == stats.NOT_REPRODUCED and "rho -" in c.text, c.text


@pytest.mark.parametrize("variant", DEGENERATE)
def test_no_claim_holds_on_a_degenerate_variant(variant):
    for c in findings.sprite_claims(DEGENERATE[variant](_positive()), "monolithic"):
        assert not c.verdict.reproduced, f"{variant}: {c.text}"
        assert c.verdict.outcome == stats.UNDECIDED, f"{variant} is void, never ✗: {c.text}"


def test_the_comparison_with_the_reference_holds_on_made_up_numbers_and_fails_on_degenerate_ones():
    mono, comp = _positive(), _positive(most=0.0)  # the reference's masks overlap less
    assert findings.reference_claim(mono, comp).verdict.reproduced, findings.reference_claim(mono, comp).text
    assert not findings.reference_claim(comp, mono).verdict.reproduced
    for name, variant in DEGENERATE.items():
        for c in (findings.reference_claim(variant(mono), comp), findings.reference_claim(mono, variant(comp))):
            assert c.verdict.outcome == stats.UNDECIDED, f"{name}: {c.text}"


def test_three_seeds_cannot_decide_a_correlation():
    a = {k: v if k == "mask_layers" else v[:3] for k, v in _positive().items()}
    (c,) = [c for c in findings.sprite_claims(a, "compositional") if c.name.startswith("predicts")]
    assert c.verdict.outcome == stats.UNDECIDED, c.text


# ---------------------------------------------------------------- claims on the stored full results


def _full() -> dict[str, dict]:
    """The stored full arrays per model, loaded as the page loads them (nothing computed); skipped
    while any is missing, failing when one was made by other code."""
    b = brs.settings("full")
    if not all((FULL / brs.CHAPTER / f"{n}.json").exists() for n in brs.result_names(b)):
        pytest.skip("the sprite results of chapter 7 are not stored at full; make them with "
                    "`python -m modlib.batch --profile full --executor local --workers 2 notebooks/bridge.ipynb`")
    with results.store_only():
        return {m: r.arrays for m, r in brs.run("full", CPU).items()}


def test_full_decoders_are_chapter_twos_stored_ones():
    """Seeds 0-2 of the full decoders are chapter 2's stored rows' networks: the same final R^2 per
    seed, in-domain and on the whole cube (to 1e-3: chapter 2 measured them during training on
    possibly another BLAS thread count)."""
    full = _full()
    for model, row in brs.ROWS.items():
        ch2 = results.read(FULL / cs.CHAPTER / f"{row}.json")
        n = ch2.arrays["r2_in"].shape[0]
        assert np.allclose(full[model]["r2_in"][:n], ch2.arrays["r2_in"][:, -1], atol=1e-3), model
        assert np.allclose(full[model]["r2_whole"][:n], ch2.arrays["r2_whole"][:, -1], atol=1e-3), model


def test_full_decoders_fit_their_support():
    """Chapter 2's full decoders fit the orthogonal support (its stored rows do), so no claim is
    undecided because a decoder did not train (whether the masks fit is the measurement's)."""
    for m, a in _full().items():
        assert float(np.median(a["r2_in"])) >= findings._decoder_fit(), m


@pytest.mark.parametrize("variant", DEGENERATE)
def test_full_no_claim_holds_on_a_degenerate_variant(variant):
    full = _full()
    for m, a in full.items():
        for c in findings.sprite_claims(DEGENERATE[variant](a), m):
            assert not c.verdict.reproduced, f"{variant}: {c.text}"
    c = findings.reference_claim(DEGENERATE[variant](full["monolithic"]), full["compositional"])
    assert not c.verdict.reproduced, f"{variant}: {c.text}"
