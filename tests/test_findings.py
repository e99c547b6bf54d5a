import numpy as np

from modlib import findings


def table(plus_removed_mul, mul_removed_add, seeds=3):
    """A [seeds, 5, 2] add/multiply table: perfect masks alone, the given ablation accuracies."""
    one = np.array([[1.0, 1.0], [0.99, 0.01], [0.01, plus_removed_mul], [0.01, 0.98], [mul_removed_add, 0.01]])
    return np.stack([one + 0.001 * k for k in range(seeds)])


def test_specialization_says_which_half_holds():
    controls = np.full((3, 4, 2), 0.5)
    good = {f.name: f for f in findings.specialization(table(0.6, 0.4), controls, chance=0.01)}
    assert all(f.holds for f in good.values())
    assert "holds for both operations" in good["removing a mask keeps the other operation far above chance"].text
    half = findings.specialization(table(0.6, 0.03), controls, chance=0.01)
    assert [f.holds for f in half] == [True, True, False]
    assert "holds only for removing the + mask" in half[2].text and "0.03" in half[2].text
    none = findings.specialization(table(0.02, 0.03), controls, chance=0.01)
    assert "is not reproduced at this scale" in none[2].text


def test_reuse_compares_the_pairs_overlap_with_two_masks_of_one_pair():
    iou = np.array([[0.9, 0.1, 0.1, 0.1, 0.9]] * 2)
    same = np.array([[0.9, 0.4, 0.5, 0.4, 0.9]] * 2)
    rand = np.full((2, 5), 0.05)
    (f,) = findings.reuse(iou, same, rand)
    assert f.holds and "0.10" in f.text and "0.43" in f.text and "does not reuse" in f.text
    (g,) = findings.reuse(same, iou, rand)
    assert not g.holds and "not reproduced at this scale" in g.text


def test_class_removal_counts_the_classes_that_collapse_alone():
    reference = np.full(10, 0.95)
    own = np.where(np.arange(10) < 7, 0.1, 0.9)  # classes 7-9 survive their removal
    (f,) = findings.class_removal(own, np.full(10, 0.93), reference, np.full(10, 0.95))
    assert not f.holds and "for 7 of the 10 classes" in f.text and "[7, 8, 9]" in f.text
