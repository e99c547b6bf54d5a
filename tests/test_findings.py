import numpy as np
import pytest

from modlib import stats
from modlib.weight_masks import findings as wm_findings


def table(plus_removed_mul, mul_removed_add, mul_alone=0.98, seeds=3):
    """A [seeds, 5, 2] add/multiply table: the given ablation accuracies, the + mask alone perfect."""
    one = np.array([[1.0, 1.0], [0.99, 0.01], [0.01, plus_removed_mul], [0.01, mul_alone], [mul_removed_add, 0.01]])
    return np.stack([one + 0.001 * k for k in range(seeds)])


def by_name(found):
    return {f.name: f for f in found}


def test_specialization_says_which_half_holds_and_for_which_mask():
    controls = np.full((3, 4, 2), 0.9)  # removing random weights barely hurts
    spares = by_name(wm_findings.specialization(table(0.95, 0.9), controls, chance=0.01))
    assert all(f.holds for f in spares.values())
    partial = by_name(wm_findings.specialization(table(0.3, 0.11, mul_alone=0.77), controls, chance=0.01))
    assert "holds for the + mask only" in partial["each mask alone does its own operation only"].text
    assert partial["removing a mask loses its own operation"].holds
    # removing x leaves + at 0.11: above 10x chance, but about what one right digit of two gives (0.1)
    selective = partial["removing a mask is selective"]
    assert not selective.holds and "holds for the + removed mask only" in selective.text
    assert "0.30" in selective.text and "scores 0.1 " in selective.text
    spare = partial["removing a mask spares the other operation"]
    assert not spare.holds and "is not reproduced at this scale" in spare.text
    both = by_name(wm_findings.specialization(table(0.3, 0.25), controls, chance=0.01))
    assert both["removing a mask is selective"].holds
    weak = by_name(wm_findings.specialization(table(0.03, 0.03), controls, chance=0.01))
    assert "is not reproduced at this scale" in weak["removing a mask is selective"].text


def test_reuse_compares_the_pairs_overlap_with_two_masks_of_one_pair():
    iou = np.array([[0.9, 0.1, 0.1, 0.1, 0.9], [0.9, 0.12, 0.12, 0.12, 0.9]])
    same = np.array([[0.9, 0.4, 0.5, 0.4, 0.9], [0.9, 0.42, 0.5, 0.42, 0.9]])
    rand = np.full((2, 5), 0.05)
    (f,) = wm_findings.reuse(iou, same, rand)
    assert f.holds and "0.11" in f.text and "does not reuse" in f.text
    (g,) = wm_findings.reuse(same, iou, rand)
    assert not g.holds and "not reproduced at this scale" in g.text
    noisy = same.copy()
    noisy[1, 1:4] = 0.13  # one seed's gap is tiny: not clearly lower
    assert not wm_findings.reuse(iou, noisy, rand)[0].holds


def test_class_removal_separates_selective_from_collapsing():
    reference = np.full(10, 0.95)
    own = np.where(np.arange(10) < 7, 0.1, 0.9)  # classes 7-9 survive their removal
    selective, collapse = wm_findings.class_removal(own, np.full(10, 0.93), reference, np.full(10, 0.95))
    assert not selective.holds and "for 7 of the 10 classes" in selective.text and "[7, 8, 9]" in selective.text
    assert not collapse.holds and "7 of the 10 classes fall below half" in collapse.text
    partial = np.full(10, 0.75)
    selective, collapse = wm_findings.class_removal(partial, np.full(10, 0.95), reference, np.full(10, 0.95))
    assert selective.holds and not collapse.holds and "not reproduced in full" in collapse.text


def test_reuse_is_not_read_from_masks_that_fail_their_own_pair():
    iou, same, rand = np.full((2, 5), 0.1), np.full((2, 5), 0.5), np.full((2, 5), 0.05)
    works = np.tile(np.array([[1.0, 1.0], [0.9, 0.9], [0.0, 0.0], [0.95, 0.1], [0.0, 0.9], [0.1, 0.95],
                              [0.9, 0.0]]), (2, 1, 1))
    assert wm_findings.reuse(iou, same + 0.01 * np.arange(2)[:, None], rand, works)[0].holds
    fails = works.copy()
    fails[:, 3, 0] = 0.17  # the pair-1 mask alone gets 0.17 of pair 1 right
    (f,) = wm_findings.reuse(iou, same, rand, fails)
    assert not f.holds and "cannot be read as reuse" in f.text and "0.17" in f.text


def test_class_removal_names_the_random_control():
    reference = np.full(10, 0.95)
    selective, _ = wm_findings.class_removal(np.full(10, 0.2), np.full(10, 0.94), reference, np.full(10, 0.95),
                                          random_own=np.full(10, 0.05), random_others=np.full(10, 0.1))
    assert selective.holds and "damage the whole network" in selective.text and "from 0.05 to 0.05" in selective.text


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
