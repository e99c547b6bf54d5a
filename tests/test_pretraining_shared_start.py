"""Chapter 6's third arm, a shared random start (issue 53, modlib.pretraining_consistency.shared_start):
every base model's encoder is the random encoder of seed 0, base model 0 is scratch base model 0, the
smoke result reads into the common share's table, and the claims (the book's own) compare the
pretrained arm against it, wait for every base model and move when the arms are swapped."""

import numpy as np
import torch

from modlib import claims, stats
from modlib.pretraining_consistency import findings
from modlib.pretraining_consistency import shared_start as ss
from modlib.structural_compositionality import experiment as sc
from test_pretraining_lam_matched import SEEDS, _result  # noqa: E402  (tests/ is on the path)

CPU = torch.device("cpu")


def test_the_bert_only_and_never_in_a_readers_run():
    assert ss.names("default") == []
    assert ss.names("smoke") == [("sv-plural", 1)]
    assert ss.names("full") == [("sv-plural", k) for k in range(1, SEEDS)]


def test_the_shared_start_is_scratch_base_model_0s_encoder():
    start = ss.encoder("sv-plural", "smoke")
    own = sc.make_model("sv-plural", sc.settings("smoke"), 0).bert.state_dict()
    assert set(start) == set(own) and all(np.array_equal(start[k], own[k].numpy()) for k in own)


def test_the_arm_takes_scratch_base_model_0_as_its_first_and_leaves_the_pretrained_arm_as_it_is():
    lam = {r.name: r for r in (_result(init, k, 0.06, 0.5) for init in ("scratch", "pretrained")
                               for k in range(SEEDS))}
    shared = {ss.name("sv-plural", k): _result(ss.INIT, k, 0.06, 0.9) for k in range(1, SEEDS)}
    arm = ss.arm(lam, shared)
    inits = [r.metrics["init"] for r in arm.values()]
    assert inits.count("pretrained") == SEEDS and inits.count(ss.INIT) == SEEDS and "scratch" not in inits
    assert lam["lam-matched-sv-plural-scratch-0"].metrics["init"] == "scratch"  # the stored result untouched


def test_smoke_result_reads_into_the_common_shares_table():
    r = ss.fetch("sv-plural", 1, "smoke", CPU)
    assert r.metrics["init"] == ss.INIT and "run" not in r.metrics and r.config["shared_seed"] == 0
    assert set(r.meta["depends"]) == {"smoke/pretraining_consistency/lam-matched-sv-plural-scratch-1"}
    table = findings.lam_density({r.name: r})
    assert set(table["init"]) == {ss.INIT} and set(table["subroutine"]) == {"subject", "verb"}


def _arms(pretrained_target=0.3, shared_target=0.95, seeds=SEEDS):
    lam = {}
    for k in range(SEEDS):
        for init, target in (("scratch", shared_target), ("pretrained", pretrained_target)):
            r = _result(init, k, 0.06, target)
            lam[r.name] = r
    shared = {ss.name("sv-plural", k): _result(ss.INIT, k, 0.06, shared_target) for k in range(1, seeds)}
    return lam, shared


def _decide(lam, shared) -> dict:
    with claims.apart():
        return findings.shared_from(lam, shared, SEEDS)


def test_the_pretrained_arm_against_the_shared_start_decides_and_moves_when_swapped():
    f = _decide(*_arms())["sv-plural/subject/shared_effect"]
    assert f.outcome == stats.HOLDS and "from the shared random start" in f.text
    assert "pretrained minus the shared random start" in f.text
    swapped = _decide(*_arms(pretrained_target=0.95, shared_target=0.3))["sv-plural/subject/shared_effect"]
    assert swapped.outcome != stats.HOLDS


def test_claims_wait_for_every_base_model():
    f = _decide(*_arms(seeds=SEEDS - 1))["sv-plural/verb/shared_effect"]
    assert f.outcome == stats.UNDECIDED and "only 4 of 5 shared base models are stored yet" in f.text


def test_the_table_names_the_shared_start():
    lam, shared = _arms()
    df = findings.lam_density(ss.arm(lam, shared))
    rows = {r[""]: r for r in findings.lam_rows(df, _decide(lam, shared), findings.SHARED, other=ss.INIT)}
    assert {"kept, shared start", "effect, pretrained, one run", "larger effect"} <= set(rows)
    assert rows["larger effect"]["subject (subject-verb agreement)"] == stats.HOLDS  # its word: no mark
