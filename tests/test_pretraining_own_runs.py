"""Chapter 6's pretrained arm rebuilt with a pretraining run per base model (issue 53,
modlib.pretraining_consistency.own_runs): which runs and base models exist at each profile, the search
starts from kept shares alone, the smoke result reads into the common share's table, and the claims
wait for every base model, fail their bar where one pretraining run did not work, and move when the
arms are swapped."""

from types import SimpleNamespace

import pytest
import torch

from modlib import claims, stats
from modlib.pretraining_consistency import findings
from modlib.pretraining_consistency import own_runs as o
from test_pretraining_lam_matched import SEEDS, _result  # noqa: E402  (tests/ is on the path)

CPU = torch.device("cpu")
WORKED = {"language": {"probe": 0.99}, "vision": {"final_loss": 1.0, "chance_loss": 5.5,
                                                   "probe": {"inside": 0.9, "contact": 0.9},
                                                   "probe_untrained": {"inside": 0.6, "contact": 0.6}}}


def test_runs_exist_where_the_common_share_does_and_never_for_the_hubs_bert():
    assert o.names("default") == [] and list(o.runs("default")) == []
    assert o.names("smoke") == [("sv-plural", 1), ("inside-contact", 1)]
    assert {k for _, k in o.names("full")} == {1, 2, 3, 4}
    assert all(rule == "inside-contact" for rule, _ in o.names("paper"))  # paper's BERT is the hub's
    with pytest.raises(ValueError, match="pretraining runs at smoke are \\[1\\]"):
        o.pretrain("language", 0, "smoke")  # run 0 is the chapter's own


def test_the_search_starts_where_the_chapters_base_model_came_nearest_by_kept_share_alone():
    probes = [{"lam": 1.0, "kept": 0.2, "passed_gate": True, "converged": True},
              {"lam": 3.0, "kept": 0.05, "passed_gate": False, "converged": False},  # nearest, gate missed
              {"lam": 9.0, "kept": 0.0, "passed_gate": True, "converged": True}]
    searched = {"subroutines": {"subject": {"target_kept": 0.06, "probes": probes}}}
    assert o.start(searched, "subject") == 3.0
    nothing = {"subroutines": {"subject": {"target_kept": 0.06, "probes": [probes[2]]}}}
    assert o.start(nothing, "subject") == 9.0


def test_the_arm_keeps_scratch_and_pretrained_base_model_0_and_takes_the_rest_from_own_runs():
    lam = {r.name: r for r in (_result(init, k, 0.06, 0.5) for init in ("scratch", "pretrained")
                               for k in range(SEEDS))}
    own = {o.name("sv-plural", k): _result("pretrained", k, 0.06, 0.3) for k in range(1, SEEDS)}
    arm = o.arm(lam, own)
    pretrained = [r for r in arm.values() if r.metrics["init"] == "pretrained"]
    assert len(arm) == 2 * SEEDS and len(pretrained) == SEEDS
    assert [n for n in arm if "pretrained" in n] == ["lam-matched-sv-plural-pretrained-0"]


def test_smoke_result_has_the_common_shares_shape_and_reads_into_its_table():
    r = o.fetch("sv-plural", 1, "smoke", CPU)
    run = o.pretrain("language", 1, "smoke")
    assert r.config["run"] == 1 and run.config["run"] == 1 and run.metrics["run"] == 1
    assert set(r.meta["depends"]) == {"smoke/pretraining_consistency/own-run-pretrain-language-1",
                                      "smoke/pretraining_consistency/lam-matched-sv-plural-pretrained-1"}
    assert r.metrics["init"] == "pretrained" and r.metrics["seed"] == 1
    for sub, f in r.metrics["subroutines"].items():
        assert f["target_kept"] == r.config["targets"][sub] and f["probes"][0]["lam"] == f["start"]
    table = findings.lam_density({r.name: r})
    assert set(table["subroutine"]) == {"subject", "verb"} and set(findings.MEASURED) <= set(table.columns)


def _arms(pretrained_target=0.3, scratch_target=0.95, seeds=SEEDS):
    lam = {}
    for k in range(SEEDS):
        for init, target in (("scratch", scratch_target), ("pretrained", 0.95)):  # lam's pretrained 1..: unused
            r = _result(init, k, 0.06, pretrained_target if (init, k) == ("pretrained", 0) else target)
            lam[r.name] = r
    own = {o.name("sv-plural", k): _result("pretrained", k, 0.06, pretrained_target) for k in range(1, seeds)}
    return lam, own


def _runs(probe: float = 0.99, seeds=SEEDS) -> dict:
    return {o.pretrain_name("language", k): SimpleNamespace(name=o.pretrain_name("language", k),
                                                             metrics={"run": k, "probe": probe})
            for k in range(1, seeds)}


def _decide(lam, own, runs) -> dict:
    with claims.apart():
        return findings.own_from(lam, own, runs, WORKED, SEEDS)


def test_the_own_runs_decide_the_effect_where_the_lam_matched_pretrained_arm_would_not():
    lam, own = _arms()
    found = _decide(lam, own, _runs())
    assert found["sv-plural/subject/own_effect"].outcome == stats.REPRODUCED
    swapped = _decide(*_arms(pretrained_target=0.95, scratch_target=0.3), _runs())
    assert swapped["sv-plural/subject/own_effect"].outcome != stats.REPRODUCED


def test_a_pretraining_run_that_did_not_work_or_is_missing_leaves_the_claims_undecided():
    lam, own = _arms()
    failed = _decide(lam, own, _runs(probe=0.5))["sv-plural/subject/own_effect"]
    assert failed.outcome == stats.UNDECIDED
    missing = _runs()
    missing.pop(o.pretrain_name("language", 2))
    assert _decide(lam, own, missing)["sv-plural/subject/own_effect"].outcome == stats.UNDECIDED


def test_claims_wait_for_every_base_model():
    lam, own = _arms(seeds=SEEDS - 1)
    f = _decide(lam, own, _runs())["sv-plural/verb/own_effect"]
    assert f.outcome == stats.UNDECIDED and "only 4 of 5 pretrained base models are stored yet" in f.text


def test_the_pretraining_runs_table_has_a_column_per_run():
    rows = findings.run_rows(WORKED, {n: SimpleNamespace(name=n, metrics={**WORKED["language"], "run": 1})
                                      for n in [o.pretrain_name("language", 1)]})
    assert [r["run"] for r in rows] == ["0 (the chapter's)", "1"]
    assert rows[1]["MLM agreement probe"] == "99%" and rows[1]["SimCLR loss (a guess's)"] == "not stored"
