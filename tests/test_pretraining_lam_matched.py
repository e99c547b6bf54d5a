"""Chapter 6's comparison at the common share, by a search for lambda (issue 53,
modlib.pretraining_consistency.lam_matched): the search starts from the stored penalty weight nearest
the common share, the smoke result carries every probe's evaluation, and the claims are read from the
probe nearest the common share; they are undecided where an arm's masks miss the density check or
not every base model is stored, and they move when the arms are swapped."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from modlib import claims, stats
from modlib.pretraining_consistency import findings
from modlib.pretraining_consistency import lam_matched as lm

CPU = torch.device("cpu")
SEEDS = 5


def test_the_chapter_runs_it_for_every_base_model_but_not_in_a_readers_run():
    assert lm.names("default") == []
    smoke = lm.names("smoke")
    assert {init for _, init, _ in smoke} == {"scratch", "pretrained"} and len(smoke) == len(set(smoke))


def test_the_search_starts_at_the_stored_penalty_weight_nearest_the_common_share():
    stored = {"subroutines": {"subject": {"grid": [{"lam": 300.0, "kept": 0.0075}, {"lam": 1000.0, "kept": 0.006}],
                                          "chosen": {"lam": 300.0}}}}
    assert lm.start(stored, None, "subject", 0.06) == 300.0
    extra = {"points": [{"lam": 10.0, "kept": 0.04, "subroutine": "subject"},
                        {"lam": 10.0, "kept": 0.9, "subroutine": "verb"}]}
    assert lm.start(stored, extra, "subject", 0.06) == 10.0  # the extra mask at x10 lies nearer
    empty = {"subroutines": {"subject": {"grid": [{"lam": 300.0, "kept": 0.0}], "chosen": {"lam": 300.0}}}}
    assert lm.start(empty, None, "subject", 0.06) == 300.0  # nothing kept anywhere: the search's choice


def test_smoke_result_holds_every_probe_and_reads_into_the_comparison_table():
    r = lm.fetch("sv-plural", "pretrained", 0, "smoke", CPU)
    assert r.config["init"] == "pretrained" and "pretraining" in r.config
    scratch = lm.fetch("sv-plural", "scratch", 0, "smoke", CPU)
    assert "pretraining" not in scratch.config and scratch.config["targets"] == r.config["targets"]
    for sub, f in r.metrics["subroutines"].items():
        assert f["target_kept"] == r.config["targets"][sub]
        assert 1 <= len(f["probes"]) <= lm.um.PROBES and f["probes"][0]["lam"] == f["start"]
        assert {"hard", "complement", "random", "random_complement"} <= set(f["probes"][0]["test"])
    table = findings.lam_density({r.name: r, scratch.name: scratch})
    assert set(table["init"]) == {"scratch", "pretrained"} and len(table) == 4
    assert set(findings.MEASURED) <= set(table.columns)


def _result(init: str, seed: int, kept: float, target: float, common: float = 0.06):
    """A stored-like lam-matched result for sv-plural: per subroutine one probe far from the common share
    and one at ``kept``, whose removal leaves its own subroutine at ``target`` and the other at 1."""
    probe = {"kept": kept, "converged": True, "passed_gate": True, "lam": 10.0,
             "test": {"hard": [1.0, 0.3 + 0.01 * seed], "complement": [target + 0.01 * seed, 1.0],
                      "random": [0.6, 0.6], "random_complement": [1.0, 1.0]}}
    far = {**probe, "kept": 10 * common, "lam": 1.0, "test": {**probe["test"], "complement": [1.0, 1.0]}}
    subs = {sub: {"target_kept": common, "start": 1.0, "chosen": {"stages": "all"}, "probes": [far, probe]}
            for sub in ("subject", "verb")}
    metrics = {"rule": "sv-plural", "init": init, "seed": seed, "task": 1.0, "searched": True, "subroutines": subs}
    return SimpleNamespace(name=lm.name("sv-plural", init, seed), metrics=metrics,
                           config={"targets": {"subject": common, "verb": common}})


def _decide(results: dict) -> dict:
    with claims.apart():
        return findings.matched_from(findings.lam_density(results), prefix=findings.LAM, seeds=SEEDS)


def _arms(pretrained_kept: float = 0.06, pretrained_target: float = 0.3, scratch_target: float = 0.95) -> dict:
    out = {}
    for k in range(SEEDS):
        for init, kept, target in (("scratch", 0.06, scratch_target), ("pretrained", pretrained_kept, pretrained_target)):
            r = _result(init, k, kept, target)
            out[r.name] = r
    return out


def test_the_probe_nearest_the_common_share_is_read_and_decides_the_effect():
    results = _arms()
    table = findings.lam_density(results)
    assert np.allclose(table["kept"], 0.06)  # the far probe (10x the share) is never read
    found = _decide(results)
    assert found["sv-plural/subject/lam_effect"].outcome == stats.REPRODUCED
    assert found["sv-plural/subject/lam_consistency"].outcome == stats.REPRODUCED


def test_swapped_arms_move_the_verdict():
    found = _decide(_arms(pretrained_target=0.95, scratch_target=0.3))  # the modular arm is now scratch
    assert found["sv-plural/subject/lam_effect"].outcome != stats.REPRODUCED


@pytest.mark.parametrize("kept", [0.02, 0.2])
def test_an_arm_off_the_common_share_fails_the_check(kept):
    f = _decide(_arms(pretrained_kept=kept))["sv-plural/subject/lam_effect"]
    assert f.outcome == stats.UNDECIDED and "check failed" in f.text


def test_claims_wait_for_every_base_model():
    results = _arms()
    results.pop(lm.name("sv-plural", "pretrained", 4))
    f = _decide(results)["sv-plural/verb/lam_effect"]
    assert f.outcome == stats.UNDECIDED and "only 4 of 5 pretrained base models are stored yet" in f.text


def test_the_authors_selection_reads_masks_still_shrinking_and_its_sign_follows_the_arms():
    """Beside the registered reading, a post hoc one (issue 53): the authors' code keeps a mask near the
    common share that had not stopped shrinking, which the book's reading leaves out; its effect is
    pretrained minus scratch, so swapping the arms flips its sign."""
    results = _arms()
    for r in results.values():
        for f in r.metrics["subroutines"].values():
            f["probes"][1]["converged"] = False  # the probe at the share never settled
    assert np.allclose(findings.lam_density(results)["kept"], 0.6)  # the book: the settled one, far off
    authors = findings.lam_density(results, settled=False)
    assert np.allclose(authors["kept"], 0.06)
    words = findings.authors_lam_words(authors)
    swapped = findings.authors_lam_words(findings.lam_density(_arms(pretrained_target=0.95, scratch_target=0.3),
                                                              settled=False))
    assert words["sv-plural-subject"].startswith("+0.65") and swapped["sv-plural-subject"].startswith("-0.65")
    assert "too few" in findings.authors_lam_words(authors[authors["init"] == "scratch"])["sv-plural-subject"]
