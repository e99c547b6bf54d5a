"""Chapter 5's verdicts come from its claims registry (issue 50): every verdict the page prints on the
stored full results is decided for a claim of ``modlib/structural_compositionality/claims.toml``,
every registered claim is printed, the ledger the page saves holds the same claims, the registry's
changes since registration are amendments on the record, and the verdicts without base model 0
(the penalty's multiples were chosen on it) are claims of their own (nothing computed: the stored
results are read)."""

import pytest

from modlib import claims, stats
from modlib.structural_compositionality import findings

CHAPTER = "structural_compositionality"


@pytest.fixture(scope="module")
def printed(structure_runs):
    claims.forget(CHAPTER)
    from modlib.structural_compositionality import draws, fresh_models, second_search, untrained_matched

    table, bases = findings.structure_table(structure_runs), findings.base_models(structure_runs)
    matched = {k: f for wide in (False, True) for k, f in findings.untrained_matched_claims(
        table, bases, structure_runs.settings.base_gate, untrained_matched.stored("full", wide=wide),
        wide=wide).items()}
    found = {**findings.structural(structure_runs), **findings.without_convergence_rule(structure_runs),
             **findings.without_base_model(structure_runs), **findings.draws_claims(draws.stored("full")),
             **matched, **findings.second_claims(second_search.stored("full"), structure_runs.settings.base_gate),
             **findings.fresh_claims(fresh_models.stored("full"), fresh_models.counts("full"))}
    return {k: f for k, f in found.items() if getattr(f, "verdict", None) is not None}, dict(claims.decisions(CHAPTER))


@pytest.fixture(scope="module")
def structure_runs():
    from test_claims import stored_full  # tests/ is on the path (pytest's default import mode)
    from modlib import structural_compositionality as sc

    s = sc.settings("full")
    rows = stored_full(sc.CHAPTER, sc.result_names(s), lambda n: {**sc.experiment.result_config(s, sc.experiment.parse_name(n)[0]), **sc.experiment.identity(n)})
    return sc.StructureRuns(s, rows, "full")


def test_every_printed_verdict_is_a_registered_claim(printed):
    found, _ = printed
    registered = claims.registry(CHAPTER)
    assert all(f.verdict.claim == f"{CHAPTER}/{k.replace('/', '-')}" for k, f in found.items())
    assert {f.name for f in found.values()} == {c.name for c in registered.values()}
    assert len(found) == len(registered)


def test_the_ledger_holds_exactly_the_registered_claims(printed):
    _, decided = printed
    saved = claims.saved(CHAPTER)
    if not saved:
        pytest.skip("book/ledger/structural_compositionality.json is written when the page runs at full")
    assert {k.split("/", 1)[1] for k in saved} == set(claims.registry(CHAPTER))
    assert {k: d.outcome for k, d in saved.items()} == {k: d.outcome for k, d in decided.items()}


def test_the_verdicts_without_base_model_0_are_post_hoc_claims_of_their_own(printed):
    found, _ = printed
    registered = claims.registry(CHAPTER)
    without = [c for c in registered.values() if c.id.endswith(findings.WITHOUT)]
    assert len(without) == 24 and all(c.note.startswith("post hoc, sensitivity") for c in without)
    # over the other two Inside-Contact base models test 1 still passes; agreement keeps one base model
    assert found["inside-contact/inside/subnetwork-without-0"].outcome == stats.REPRODUCED
    assert all(found[f"sv-plural/{sub}/{kind}-without-0"].outcome == stats.UNDECIDED
               for sub in ("subject", "verb") for kind in ("subnetwork", "ablation"))
    assert "one unit only" in found["sv-plural/subject/ablation-without-0"].verdict.why


def test_the_book_own_controls_read_holds_and_the_papers_claims_reproduced(printed):
    found, _ = printed
    assert found["inside-contact/inside/random"].outcome == stats.HOLDS
    assert found["inside-contact/inside/subnetwork"].outcome == stats.REPRODUCED


def test_both_halves_against_chance_are_registered_for_every_drawn_subroutine():
    # issue 53: test 1's target and other half against 20 random subnetworks per mask, one claim each,
    # naming the mutation that exchanges target and other
    registered = claims.registry(CHAPTER)
    for rule, subs in findings.DRAWN.items():
        for sub in subs:
            for half in ("target", "other"):
                c = registered[f"{rule}-{sub}-draws-{half}"]
                assert c.own and "swap target and other" in c.mutations and c.reads == (f"draws-{rule}-[0-9]",)


def test_the_fresh_base_models_claims_were_registered_before_any_was_computed(printed):
    # issue 53 ("enough units to decide"): copies of the page's five tests read only on base models
    # trained after their registration, as many a rule as planned (Inside-Contact 8, agreement 6), a
    # rule's all read at once
    from modlib.structural_compositionality import fresh_models

    found, _ = printed
    fresh = [c for c in claims.registry(CHAPTER).values() if c.id.endswith(findings.FRESH)]
    counts = fresh_models.counts("full")
    assert len(fresh) == 2 * len(counts) * len(findings.FRESH_KINDS)
    assert counts == {"inside-contact": 8, "sv-plural": 6}
    stored = fresh_models.stored("full").rows
    for c in fresh:
        rule = next(r for r in counts if c.id.startswith(r))
        assert c.reads == (f"fresh-{rule}-*",) and claims.written(c) in ("before", None)
        first = claims.get(f"{CHAPTER}/{c.id.removesuffix(findings.FRESH)}")
        assert c.measure.startswith(first.measure.split(" (the claim")[0]) and f"fresh-{rule}-<seed>" in c.measure
        assert f"{counts[rule]} at full" in c.units and "none is replaced" in c.units
        assert ("every searched one" in c.units) == ("every searched one" in first.units)  # the same gate
        if sum(r.metrics["rule"] == rule for r in stored.values()) < counts[rule]:  # none decided on part
            assert found[c.name].marked == findings.PENDING


def test_the_fresh_count_is_what_the_planning_rule_asks_over_the_base_models_trained_before():
    # Inside-Contact's count is the most any of its copied tests asks for over the five base models
    # trained this way before (chapter 5's 0-2 and chapter 6's scratch 3 and 4)
    from modlib.structural_compositionality import fresh_models

    planned = fresh_models.planned_on("full")
    if len(planned.rows) < 10:
        pytest.skip("the base models the count was planned on are not all stored")
    asked = [int(r[findings.NEEDED]) for r in findings.fresh_planning(planned)
             if r["rule"] == "Inside-Contact" and r[findings.NEEDED].isdigit()]
    assert max(asked) == fresh_models.counts("full")["inside-contact"]
