"""Both halves of chapter 5's first test against chance (issue 53,
modlib.structural_compositionality.draws): at smoke the repeated base model and masks are the
stored ones, each mask gets DRAWS random subnetworks on both subroutines, and a repeat that does
not match its stored source is refused."""

import copy

import numpy as np
import pytest
import torch

from modlib.structural_compositionality import draws
from modlib.structural_compositionality import experiment as ex
from modlib.structural_compositionality.tasks import RULES

CPU = torch.device("cpu")


def test_smoke_draws_repeat_the_stored_masks_and_score_both_halves():
    s = ex.settings("smoke")
    rule = s.rules[0]
    r = draws.fetch(rule, 0, "smoke", CPU)
    for name in RULES[rule]:
        assert r.arrays[f"random-{name}"].shape == (s.mask_seeds, draws.DRAWS, 2)
        target, other = draws.halves(r.arrays, name)
        assert target.shape == other.shape == (s.mask_seeds,) and np.isfinite(target).all()
    # the halves are read off the arrays as documented
    a = {"found-x": np.array([[0.9, 0.3]]), "random-x": np.array([[[0.5, 0.6], [0.7, 0.8]]])}
    np.testing.assert_allclose(draws.halves(a, "x"), ([0.3], [0.4]))


def test_a_repeat_that_does_not_match_its_source_is_refused():
    s = ex.settings("smoke")
    rule = s.rules[0]
    source = ex.run("smoke", CPU, s=s, names=[f"{rule}-0"]).rows[f"{rule}-0"].metrics
    wrong = copy.deepcopy(source)
    wrong["base"]["task"] = source["base"]["task"] + 0.01
    with pytest.raises(ValueError, match="does not repeat"):
        draws.repeat(rule, 0, s, CPU, wrong, draws=1)
