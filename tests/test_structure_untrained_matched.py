"""Chapter 5's untrained control at matched density (issue 53,
modlib.structural_compositionality.untrained_matched): the search for lambda reads only the kept share
and lands near the target, a mask that keeps nothing is never chosen, the smoke result has the
chapter's metrics so its table and claims are read as the trained ones are, and the claims are
undecided where a network's masks miss the density check."""

import copy
import math

import pytest
import torch

from modlib import claims, stats
from modlib.structural_compositionality import experiment as ex
from modlib.structural_compositionality import findings
from modlib.structural_compositionality import untrained_matched as um
from modlib.structural_compositionality.tasks import RULES

CPU = torch.device("cpu")


def kept_at(scale: float, cliff: float = math.inf):
    """A mask whose kept share falls as ``scale / lam`` and is 0 from ``cliff`` on."""
    return lambda lam: {"kept": 0.0 if lam >= cliff else min(1.0, scale / lam)}


def test_the_search_brackets_the_target_and_stops_close_to_it():
    lam, probes = um.match_lam(kept_at(0.6), 30.0, 0.005)  # kept 2 % at the start: needs a larger lambda
    assert probes[0]["lam"] == 30.0 and probes[1]["lam"] == 90.0  # one STEP up
    assert um.ratio(0.6 / lam, 0.005) <= um.CLOSE
    assert len(probes) <= um.PROBES


def test_a_mask_that_keeps_nothing_is_never_chosen_and_the_bracket_halves_past_a_cliff():
    # a penalty of 100 prunes everything: the search must come back down and bisect
    lam, probes = um.match_lam(kept_at(1.4, cliff=100.0), 100.0, 0.005)
    assert probes[0]["kept"] == 0.0 and probes[1]["lam"] == pytest.approx(100.0 / um.STEP)
    assert lam < 100.0 and um.ratio(1.4 / lam, 0.005) < math.inf
    assert um.ratio(0.0, 0.01) == math.inf and um.ratio(0.02, 0.01) == um.ratio(0.005, 0.01) == 2.0


def test_smoke_result_reads_as_the_chapter_table_reads_its_untrained_controls():
    s = ex.settings("smoke")
    rule = s.rules[0]
    r = um.fetch(rule, 0, "smoke", CPU)
    assert r.config["trained"] is False and r.config["seed"] == 0
    table = findings.untrained_matched_table({r.name: r})
    assert set(table["subroutine"]) == set(RULES[rule]) and not table["trained"].any()
    assert len(table) == len(RULES[rule]) * s.mask_seeds
    for f in r.metrics["subroutines"].values():
        assert 1 <= len(f["probes"]) <= um.PROBES and f["chosen"]["lam"] in [p["lam"] for p in f["probes"]]


def test_claims_are_undecided_where_a_network_misses_the_density_check():
    s = ex.settings("smoke")
    runs = ex.run("smoke", CPU, s=s)
    table, bases = findings.structure_table(runs), findings.base_models(runs)
    table["passed_gate"] = True  # smoke's masks miss the gate; the check is what is tested here
    matched = {f"{um.PREFIX}{rule}-{seed}": um.fetch(rule, seed, "smoke", CPU) for rule, seed in um.names(s)}
    missed = copy.deepcopy(matched)
    for r in missed.values():
        for f in r.metrics["subroutines"].values():
            f["matched"] = False
    with claims.apart():
        found = findings.untrained_matched_claims(table, bases, s.base_gate, missed)
    rule = s.rules[0]
    for sub in RULES[rule]:
        f = found[f"{rule}/{sub}/subnetwork-untrained-matched"]
        assert f.outcome == stats.UNDECIDED and "check failed" in f.text


def test_smoke_second_search_removes_the_first_subnetwork_and_leaves_the_base_model_as_it_was():
    # issue 53's search in what removal leaves (second_search): the retrained base model repeats the
    # stored one, the first mask repeats the stored search's, and the second is scored in the ablated
    # model; after the first subroutine the base model is restored, so the second subroutine's first
    # mask repeats the stored one as well
    from modlib.structural_compositionality import second_search

    s = ex.settings("smoke")
    rule = second_search.RULES_SECOND[0]
    r = second_search.fetch(rule, 0, "smoke", CPU)
    assert r.metrics["task"] == r.metrics["stored_task"]
    stored = ex.run("smoke", CPU, s=s, names=[f"{rule}-0"]).rows[f"{rule}-0"].metrics
    for sub in RULES[rule]:
        first = r.metrics[sub]["first"]
        assert first["kept"] == pytest.approx(first["stored_kept"], abs=1e-9)
        assert first["complement"] == pytest.approx(stored["subroutines"][sub]["runs"][0]["complement"])
        assert set(r.metrics[sub]["second"]) >= {"hard", "complement", "random", "random_complement", "kept"}
    with claims.apart():
        found = findings.second_claims({r.name: r}, s.base_gate)
    assert set(found) == {f"{rule}/{sub}/{k}" for sub in RULES[rule] for k in ("second-found", "second-removal")}
