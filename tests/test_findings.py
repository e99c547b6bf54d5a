import numpy as np
import pytest

from modlib import stats
from modlib.weight_masks import findings as wm_findings


def table(plus_removed_mul, mul_removed_add, mul_alone=0.98, seeds=3):
    """A [seeds, 5, 2] add/multiply table: the given ablation accuracies, the + mask alone perfect,
    each seed a little apart (identical seeds leave nothing to estimate)."""
    one = np.array([[1.0, 1.0], [0.99, 0.01], [0.01, plus_removed_mul], [0.01, mul_alone], [mul_removed_add, 0.01]])
    rng = np.random.default_rng(0)
    return np.clip(np.stack([one + rng.normal(0, 0.005, one.shape) for _ in range(seeds)]), 0, 1)


def controls(seeds=3):
    """Random masks as dense: alone they do nothing; removing them barely hurts."""
    one = np.array([[0.01, 0.01], [0.9, 0.9], [0.01, 0.01], [0.9, 0.9]])
    return np.stack([one + 0.003 * k for k in range(seeds)])


def by_name(found):
    return {f.name: f for f in found}


def test_specialization_decides_each_claim_by_the_rule():
    spares = by_name(wm_findings.specialization(table(0.95, 0.9), controls(), chance=0.01))
    assert all(f.outcome == stats.REPRODUCED for f in spares.values()), [f.text for f in spares.values()]
    partial = by_name(wm_findings.specialization(table(0.3, 0.11, mul_alone=0.77), controls(), chance=0.01))
    alone = partial["each mask alone does its own operation only"]
    assert alone.outcome == stats.REPRODUCED and "below the paper's +1.00" in alone.text
    assert partial["removing a mask loses its own operation"].outcome == stats.REPRODUCED
    selective = partial["removing a mask is selective"]
    assert "0.30" in selective.text and "scores 0.1 " in selective.text and "paired t" in selective.text
    spare = partial["removing a mask spares the other operation"]
    assert spare.outcome == stats.NOT_REPRODUCED and spare.mark == "✗"
    weak = by_name(wm_findings.specialization(table(0.03, 0.03), controls(), chance=0.01))
    assert not weak["removing a mask is selective"].holds


def test_specialization_needs_trained_networks_and_masks_that_keep_some_weights():
    kept = np.full((3, 3, 3), 0.1)
    sizes = np.array([42 * 8, 8 * 8, 8 * 20])
    ok = by_name(wm_findings.specialization(table(0.95, 0.9), controls(), 0.01, kept, sizes))
    assert all(f.holds for f in ok.values()) and "Kept share" in ok["each mask alone does its own operation only"].text
    kept[:, 0, 1] = 0.0  # the + mask cuts a layer: it keeps nothing there
    cut = by_name(wm_findings.specialization(table(0.95, 0.9), controls(), 0.01, kept, sizes))
    assert all(f.outcome == stats.UNDECIDED for f in cut.values())
    untrained = table(0.95, 0.9)
    untrained[:, 0, 1] = 0.5  # the base network never learnt ×
    found = by_name(wm_findings.specialization(untrained, controls(), 0.01))
    assert all("did not train" in f.text and f.outcome == stats.UNDECIDED for f in found.values())


def test_reuse_compares_the_pairs_overlap_with_two_masks_of_one_pair():
    iou = np.array([[0.9, 0.1, 0.1, 0.1, 0.9], [0.9, 0.12, 0.12, 0.12, 0.9]])
    same = np.array([[0.9, 0.4, 0.5, 0.4, 0.9], [0.9, 0.42, 0.5, 0.42, 0.9]])
    rand = np.full((2, 5), 0.05)
    (f,) = wm_findings.reuse(iou, same, rand)
    assert f.outcome == stats.REPRODUCED and "0.11" in f.text
    (g,) = wm_findings.reuse(same, iou, rand)
    assert g.outcome == stats.NOT_REPRODUCED
    noisy = same.copy()
    noisy[1, 1:4] = 0.13  # one seed's gap is tiny: the interval over two seeds is wide
    assert wm_findings.reuse(iou, noisy, rand)[0].outcome == stats.UNDECIDED
    one = np.ones_like(same)  # two pair-1 masks that are one mask: no reference
    (h,) = wm_findings.reuse(iou, one, rand)
    assert h.outcome == stats.UNDECIDED and "IoU 1" in h.text


def test_class_removal_from_one_network_cannot_be_decided():
    reference = np.full(10, 0.95)
    own = np.where(np.arange(10) < 7, 0.1, 0.9)  # classes 7-9 survive their removal
    selective, collapse = wm_findings.class_removal(own, np.full(10, 0.93), reference, np.full(10, 0.95))
    assert "for 7 of the 10 classes" in selective.text and "[7, 8, 9]" in selective.text
    assert "7 of the 10 classes fall below half" in collapse.text
    assert selective.outcome == collapse.outcome == stats.UNDECIDED and "one unit only" in selective.text
    partial = np.full(10, 0.75) + 0.01 * np.arange(10)
    selective, collapse = wm_findings.class_removal(partial, np.full(10, 0.95), reference, np.full(10, 0.95),
                                                    networks=2)
    # the collapse claim cannot be decided (issue 52: the paper gives no size for "drops significantly");
    # under the stand-in it was registered with, the partial drop is not a collapse
    assert selective.outcome == stats.REPRODUCED and collapse.outcome == stats.UNDECIDED
    assert "gives no number" in collapse.text and "as registered: ✗ not reproduced" in collapse.text, collapse.text


def test_reuse_is_not_read_from_masks_that_fail_their_own_pair():
    iou, same, rand = np.full((2, 5), 0.1), np.full((2, 5), 0.5), np.full((2, 5), 0.05)
    works = np.tile(np.array([[1.0, 1.0], [0.9, 0.9], [0.0, 0.0], [0.95, 0.1], [0.0, 0.9], [0.1, 0.95],
                              [0.9, 0.0]]), (2, 1, 1))
    assert wm_findings.reuse(iou, same + 0.01 * np.arange(2)[:, None], rand, works)[0].holds
    fails = works.copy()
    fails[:, 3, 0] = 0.17  # the pair-1 mask alone gets 0.17 of pair 1 right
    (f,) = wm_findings.reuse(iou, same + 0.01 * np.arange(2)[:, None], rand, fails)
    assert f.outcome == stats.UNDECIDED and "cannot show reuse" in f.text and "0.17" in f.text


def test_class_removal_names_the_random_control():
    reference = np.full(10, 0.95)
    selective, _ = wm_findings.class_removal(np.full(10, 0.2), np.full(10, 0.94), reference, np.full(10, 0.95),
                                          random_own=np.full(10, 0.05), random_others=np.full(10, 0.1))
    assert "damage the whole network" in selective.text and "from 0.05 to 0.05" in selective.text


def test_permutation_test_is_exact_and_one_sided():
    # 5 and 5 values: 252 splits; the observed split is the most extreme one, so p = 1/252
    d, p = stats.permutation_test([5, 6, 7, 8, 9], [0, 1, 2, 3, 4])
    assert d == 5 and p == pytest.approx(1 / 252)
    d, p = stats.permutation_test([0, 1, 2, 3, 4], [5, 6, 7, 8, 9])
    assert d == -5 and p == 1.0
    with pytest.raises(ValueError, match="at least 2 values; got 1 and 3"):
        stats.permutation_test([1], [1, 2, 3])


def test_spread_is_the_absolute_deviation_from_the_median():
    assert stats.spread([1.0, 2.0, 10.0]).tolist() == [1.0, 0.0, 8.0]


def test_paired_and_unpaired_verdicts_name_their_test_and_refuse_flat_units():
    v = stats.paired([0.9, 0.8, 0.85], [0.1, 0.2, 0.1], unit="base model").verdict(paper=0.8)
    assert v.outcome == stats.REPRODUCED and "paired t interval +0.46 to +0.98 over 3 base models" in v.why
    flat = stats.paired([0.9] * 5, [0.1] * 5).verdict(paper=0.8)  # five identical seeds: one unit in effect
    assert flat.outcome == stats.UNDECIDED
    assert stats.paired([0.9], [0.1]).verdict(paper=0.8).outcome == stats.UNDECIDED  # one unit
    ceiling = stats.unpaired([1.0] * 5, [1.0] * 5).verdict(paper=0.2)  # 5 of 5 against 5 of 5
    assert ceiling.outcome == stats.UNDECIDED and "floor or ceiling" in ceiling.why
    v = stats.unpaired([0.5, 0.52, 0.48, 0.51, 0.49], [0.5, 0.49, 0.51, 0.5, 0.52], unit="base model").verdict(paper=0.3)
    assert v.outcome == stats.NOT_REPRODUCED and "Welch t interval" in v.why and "over 5 base models" in v.why
    c = stats.claim("x", v, "Some text.")
    assert not c.holds and c.mark == "✗" and c.text.startswith("Some text. **✗ not reproduced**")


@pytest.mark.parametrize("chapter", ["structural_compositionality", "pretraining_consistency"])
def test_every_claim_of_chapters_5_and_6_has_plain_words_for_the_power_table(chapter):
    """Issue 57: the power tables name their rows by the claim's words, not its registered name."""
    import importlib

    from modlib import claims

    words = importlib.import_module(f"modlib.{chapter}.findings").claim_words
    said = {c.name: words(c.name) for c in claims.registry(chapter).values()}
    assert all(w != name and "/" not in w and "_" not in w for name, w in said.items()), said
    assert len(set(said.values())) == len(said)  # no two claims read alike
