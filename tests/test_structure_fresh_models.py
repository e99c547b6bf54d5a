"""Chapter 5's fresh base models (issue 53, "enough units to decide";
modlib.structural_compositionality.fresh_models): each is trained and searched as the chapter's own
base model of that seed would be, its claims read only the fresh base models and all of them at once,
and a seed that is not a fresh one is refused by name."""

import pytest
import torch

from modlib import claims
from modlib.structural_compositionality import experiment as ex
from modlib.structural_compositionality import findings
from modlib.structural_compositionality import fresh_models as fm

CPU = torch.device("cpu")


def test_a_fresh_base_model_is_the_chapters_own_of_its_seed(store):
    rule, seed = fm.names("smoke")[0]
    fresh = fm.fetch(rule, seed, "smoke", CPU)
    own = ex.run("smoke", CPU, names=[f"{rule}-{seed}"]).rows[f"{rule}-{seed}"]  # the chapter's, same seed
    assert fresh.name == f"{fm.PREFIX}{rule}-{seed}" and fresh.config["seed"] == seed
    assert {k: v for k, v in fresh.config.items() if k != "fresh"} == own.config
    assert fresh.metrics["subroutines"] == own.metrics["subroutines"]
    assert set(fm.stored("smoke").rows) == {fresh.name}


def test_the_fresh_claims_wait_for_every_base_model_then_read_only_them(store):
    runs = fm.run("smoke", CPU)
    keys = {f"{r}/{sub}/{k}{findings.FRESH}" for r in fm.RULES_FRESH for sub in findings.DRAWN[r]
            for k in findings.FRESH_KINDS}
    with claims.apart():
        waiting = findings.fresh_claims(runs, len(runs.rows) + 1)  # one still missing
        decided = findings.fresh_claims(runs, len(runs.rows))
    assert set(waiting) == keys and all(f.marked == findings.PENDING for f in waiting.values())
    assert findings.fresh_status(runs, 2).startswith("Stored now: 1 of 2")
    assert set(decided) == keys and not any(isinstance(f, findings.NotRun) for f in decided.values())
    assert all(f.verdict.claim.endswith(findings.FRESH) for f in decided.values())


def test_a_seed_that_is_not_fresh_is_refused_by_name():
    with pytest.raises(ValueError, match=r"seed=0 .*choose from 5, 6, 7, 8, 9, 10"):
        fm.fetch("inside-contact", 0, "full", CPU)
    with pytest.raises(ValueError, match="not run at this profile"):
        fm.fetch("inside-contact", 5, "default", CPU)
