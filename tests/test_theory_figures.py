"""The theory pages' figures (book/toy_theory.md, book/compositional_theory.md, book/resists_theory.md,
book/structural_theory.md, issue 57): drawn from the
chapters' data code, no wider than the text column, lettering at least 9 pt, and showing what the
data code does. Cheap: no network is trained, no image is read."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from modlib import plots  # noqa: E402
from modlib.bridge import figures as br_figures  # noqa: E402
from modlib.compositional_sprites import figures as cs_figures  # noqa: E402
from modlib.redundant_input_toy import figures as toy_figures  # noqa: E402
from modlib.resists_at_scale import figures as rs_figures  # noqa: E402
from modlib.structural_compositionality import figures as sc_figures  # noqa: E402

MIN_POINTS = 9  # the theory pages' lettering, at the column's width


def lettering(fig):
    """Every piece of text the figure shows: ``(text, size in points)``."""
    fig.canvas.draw()
    return [(t.get_text(), t.get_fontsize()) for t in fig.findobj(matplotlib.text.Text)
            if t.get_visible() and t.get_text().strip()]


@pytest.mark.parametrize("draw", [toy_figures.theory_toy, cs_figures.theory_process, cs_figures.support_schematic,
                                  cs_figures.visibility_figure, rs_figures.theory_pairs, rs_figures.theory_jump,
                                  sc_figures.theory_tests, br_figures.diagram_evidence],
                         ids=["toy", "process", "supports", "visibility", "pairs", "jump", "tests", "bridge"])
def test_a_theory_figure_fits_the_column_and_is_readable(draw):
    fig = draw()
    try:
        assert fig.get_size_inches()[0] <= plots.COLUMN + 1e-9
        small = [(text, size) for text, size in lettering(fig) if size < MIN_POINTS]
        assert not small, small
    finally:
        plt.close(fig)


def test_the_toy_figure_shows_two_networks_that_agree_on_training_and_not_on_the_held_out_cell():
    from modlib.data.toy import redundant_toy

    a, b = (network for _, network in toy_figures.THEORY_NETWORKS.values())
    x, _ = redundant_toy("a", 500, split="train")
    x_test, _ = redundant_toy("a", 100, split="test")
    assert (a(x[:, 0], x[:, 1]) == b(x[:, 0], x[:, 1])).all()
    assert a(x_test[:, 0], x_test[:, 1]).all() and not b(x_test[:, 0], x_test[:, 1]).any()


def test_the_pairs_figure_colours_what_the_data_code_draws():
    fig = rs_figures.theory_pairs()
    try:
        for ax, trained_only, tested in zip(fig.axes, (20, 20), ((80, 0), (0, 80))):
            colours = [p.get_facecolor() for p in ax.patches]
            count = {c: sum(np.allclose(f, matplotlib.colors.to_rgba(c)) for f in colours)
                     for c in (rs_figures._TRAIN, rs_figures._TEST, rs_figures._BOTH)}
            assert count[rs_figures._TRAIN] == trained_only
            assert (count[rs_figures._TEST], count[rs_figures._BOTH]) == tested
    finally:
        plt.close(fig)


def test_the_tests_figure_keeps_removes_and_removes_as_many_at_random():
    """Test 1 draws the mask's weights and switches the rest off; test 2 removes exactly the mask's
    weights; the control removes as many, per layer, none of them the mask's."""
    from collections import Counter

    mask, rand = sc_figures.THEORY_MASK, sc_figures.THEORY_RANDOM
    assert not mask & rand
    assert Counter(l for l, _, _ in mask) == Counter(l for l, _, _ in rand)
    fig = sc_figures.theory_tests()
    try:
        def drawn(ax, colour, dashed):
            return sum(np.allclose(matplotlib.colors.to_rgba(line.get_color()), matplotlib.colors.to_rgba(colour))
                       and (line.get_linestyle() == "--") == dashed for line in ax.lines)

        keep, remove, control = fig.axes
        assert drawn(keep, sc_figures.TARGET, False) == len(mask) and drawn(keep, sc_figures.REMOVED, True) == 0
        assert drawn(remove, sc_figures.REMOVED, True) == len(mask) and drawn(remove, sc_figures.TARGET, False) == 0
        assert drawn(control, sc_figures.REMOVED, True) == len(rand) and drawn(control, sc_figures.TARGET, False) == len(mask)
        shown = {t for t, _ in lettering(fig)}
        assert {"A still works", "A fails", "B survives", "A survives"} <= shown
    finally:
        plt.close(fig)
