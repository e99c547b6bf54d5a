"""Chapter 5's fresh base models (issue 53, "enough units to decide";
modlib.structural_compositionality.fresh_models): each is trained and searched as the chapter's own
base model of that seed would be, its claims read only the fresh base models and all of them at once,
and a seed that is not a fresh one is refused by name."""

import dataclasses

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
    runs = fm.run("smoke", CPU)  # one base model a rule at smoke
    keys = {r: {f"{r}/{sub}/{k}{findings.FRESH}" for sub in findings.DRAWN[r] for k in findings.FRESH_KINDS}
            for r in fm.RULES_FRESH}
    first, second = fm.RULES_FRESH
    part = dataclasses.replace(runs, rows={n: r for n, r in runs.rows.items() if r.metrics["rule"] == first})
    with claims.apart():
        waiting = findings.fresh_claims(runs, {first: 2, second: 2})  # one still missing in each rule
        decided = findings.fresh_claims(runs, fm.counts("smoke"))
        half = findings.fresh_claims(part, fm.counts("smoke"))  # the second rule's base model missing
    assert set(waiting) == keys[first] | keys[second]
    assert all(f.marked == findings.PENDING for f in waiting.values())
    assert findings.fresh_status(runs, {first: 2, second: 2}).startswith("Stored now: Inside-Contact, 1 of 2 stored")
    assert "all 1 stored, 1 of them accurate enough on the task to be searched (the base gate); the selection gate" in findings.fresh_status(runs, fm.counts("smoke"))
    assert set(decided) == set(waiting) and not any(isinstance(f, findings.NotRun) for f in decided.values())
    assert all(f.verdict.claim.endswith(findings.FRESH) for f in decided.values())
    assert not any(isinstance(half[k], findings.NotRun) for k in keys[first])  # a rule is read on its own
    assert all(half[k].marked == findings.PENDING for k in keys[second])
    assert {row["rule"] for row in findings.fresh_table(part, fm.counts("smoke"), half)} == {first}


def test_a_seed_that_is_not_fresh_is_refused_by_name():
    with pytest.raises(ValueError, match=r"seed=0 .*choose from 5, 6, 7, 8, 9, 10, 11, 12"):
        fm.fetch("inside-contact", 0, "full", CPU)
    with pytest.raises(ValueError, match="not run at this profile"):
        fm.fetch("inside-contact", 5, "default", CPU)


def test_the_page_counts_the_masks_that_had_not_stopped_shrinking():
    """The fresh section, as the density check, says how many masks had stopped shrinking and names the
    others; a mask that recorded nothing is not counted as stopped."""
    import numpy as np
    import pandas as pd

    t = pd.DataFrame([{"rule": "sv-plural", "subroutine": "subject", "model": 5, "mask_seed": s, "trained": True,
                       "converged": c} for s, c in enumerate((True, False, np.nan))])
    words = findings.converged_words(t)
    assert words.startswith("1 of 3 trained masks had stopped shrinking")
    assert "base model 5, mask seed 1" in words and "mask seed 2" not in words
    assert findings.converged_words(t.assign(trained=False)) == "no trained mask is stored"
    assert "still" not in findings.converged_words(t.assign(converged=True))


def test_open_reasons_groups_the_undecided_fresh_claims_by_the_rules_own_reason():
    """Agreement's reading: a failed control is named before a ceiling, as the rule names it; only an
    interval too wide counts as the kind more base models can close; decided or unrun claims are left out."""
    from modlib import stats

    def d(kind, sub, outcome=stats.UNDECIDED, units=3, **conditions):
        key = findings._key(f"sv-plural/{sub}/{kind}{findings.FRESH}")
        return key, claims.Decision(key, outcome, "", 0.0, 0.0, 0.0, units, conditions=conditions)

    decisions = dict([d("subnetwork", "subject", controls=False, measurable=False), d("ablation", "subject", measurable=False),
                      d("random", "subject"), d("random", "verb", outcome=stats.REPRODUCED), d("ablation", "verb", units=0)])
    words = findings.open_reasons(decisions, "sv-plural")
    assert words.startswith("1 claim at a floor or ceiling in both arms, nothing for the rule to read (subject test 2)")
    assert "1 claim with a control that did not pass (subject test 1)" in words
    assert "1 claim with an interval too wide, the kind more base models can close (subject vs random subnetwork)" in words
    assert "verb" not in words
    assert findings.open_reasons({}, "sv-plural") == ""
