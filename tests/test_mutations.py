"""Mutations the verdicts must notice, where a mutation changes the data upstream of the verdict
(:mod:`modlib.mutations`; the ones computed again from a decision's own arms, swapped arms, shuffled
units and an untrained arm, are in tests/test_registry.py): on each chapter's stored full results, a
claim that names the mutation and found an effect must read otherwise when its analysis is framed
that way, and a claim the stored results cannot show it for must say why."""

import copy
import functools

import pytest

from modlib import claims, mutations, stats
from modlib.structural_compositionality import mutations as sc_mutations

PAIRS = [(ch, m) for ch in claims.CHAPTERS for m in mutations.DATA_LEVEL
         if any(m in c.mutations for c in claims.registry(ch).values())]


@functools.cache
def _decided(chapter: str, mutation: str | None, decide=mutations.decide):  # decide: never the patched one
    return decide(chapter, mutation)


def _decide(chapter: str, mutation: str | None):
    """:func:`mutations.decide`, computed once per process for each chapter and mutation (issue 56:
    the tests below and :func:`mutations.compute` asked for the same ones up to three times, chapter
    7's taking 5-12 s each). Each decision reads the stored results from disk afresh (nothing in
    modlib keeps them), so a second call decides as the first; each caller gets a deep copy, so a
    test that edits its decisions reaches no other. The tests of decide's own side effects and of a
    mutation patched in call it directly."""
    return copy.deepcopy(_decided(chapter, mutation))


def _as_stored(chapter: str) -> dict:
    made = _decide(chapter, None)
    if made is None or not claims.saved(chapter):
        pytest.skip(f"{chapter}: no stored full results or saved decisions here")
    return made


@pytest.mark.parametrize("chapter", [ch for ch in claims.CHAPTERS if mutations.chapter_module(ch)])
def test_the_harness_unmutated_decides_as_the_page_did(chapter):
    """With no mutation the harness decides every claim the page saved, as the page did (else a
    moved verdict could be the harness's own difference)."""
    made = _as_stored(chapter)
    saved = claims.saved(chapter)
    differ = [f"{k}: page {d.outcome}, harness {made[k].outcome if k in made else 'not decided'}"
              for k, d in saved.items() if k not in made or (made[k].outcome, made[k].open) != (d.outcome, d.open)]
    assert not differ, "\n".join(differ)


@pytest.mark.parametrize("chapter,mutation", PAIRS)
def test_each_data_level_mutation_moves_the_verdicts_that_name_it(chapter, mutation):
    assert mutations.chapter_module(chapter), f"{chapter}: claims name {mutation!r} but modlib.{chapter}.mutations is missing"
    _as_stored(chapter)
    made = _decide(chapter, mutation)
    assert made is not None, (f"{chapter}: claims name {mutation!r} but modlib.{chapter}.mutations does not "
                              "run it on the stored results")
    problems = mutations.unmoved(chapter, mutation, made)
    assert not problems, "\n".join(problems)


def test_an_analysis_the_mutation_does_not_reach_is_caught(monkeypatch):
    """The negative case: chapter 5 with its "random mask as dense" a no-op (the learned masks'
    columns left in place) must fail the rule, naming the claims that found an effect."""
    _as_stored("structural_compositionality")
    monkeypatch.setattr(sc_mutations, "random_mask_as_dense", lambda table: table)
    made = mutations.decide("structural_compositionality", "random mask as dense")
    problems = mutations.unmoved("structural_compositionality", "random mask as dense", made)
    reproduced = [k for k, d in claims.saved("structural_compositionality").items() if d.outcome == stats.REPRODUCED
                  and "random mask as dense" in claims.get(k).mutations
                  and k.split("/")[1] not in sc_mutations.CANNOT["random mask as dense"]]
    named = {p.split(":")[0] for p in problems}
    assert named and named <= set(reproduced), problems  # (the search's argmax masks move all the same)


def test_a_claim_not_run_without_a_reason_is_named():
    made = _decide("structural_compositionality", "swap target and other")
    if made is None:
        pytest.skip("chapter 5's full results are not stored")
    some = next(k for k in made if "swap target and other" in claims.get(k).mutations)
    del made[some]
    assert any(p.startswith(some) and "no reason" in p
               for p in mutations.unmoved("structural_compositionality", "swap target and other", made))


def test_the_page_record_is_left_alone():
    claims.forget()
    mutations.decide("structural_compositionality", "random mask as dense")
    assert claims.decisions() == {}


def test_a_bad_mutation_or_chapter_is_named():
    with pytest.raises(ValueError, match="swap target and other"):
        mutations.decide("structural_compositionality", "swap arms")
    with pytest.raises(ValueError, match="redundant_input_toy"):
        mutations.decide("chapter_eight", None)


def test_the_committed_mutation_outcomes_are_what_the_harness_finds(monkeypatch):
    """``book/ledger/mutations.json`` (which the ledger page reads) is what ``python -m
    modlib.mutations`` computes from the stored results today (its decisions those of
    :func:`_decide`: the same, computed once)."""
    monkeypatch.setattr(mutations, "decide", _decide)
    found = mutations.compute()
    if not found:
        pytest.skip("no stored full results here")
    assert mutations.saved() == found, "run `python -m modlib.mutations` and commit book/ledger/mutations.json"


@pytest.mark.parametrize("chapter", claims.CHAPTERS)
def test_every_claim_names_a_mutation_and_every_decided_one_is_moved_by_one(chapter):
    """The harness's report (:func:`modlib.mutations.unmoved_by_any`) is empty: a claim whose verdict
    no framing error can move is a claim the analysis does not test."""
    if not claims.saved(chapter):
        pytest.skip(f"{chapter} has no saved decisions here")
    assert not mutations.unmoved_by_any(chapter), "\n".join(mutations.unmoved_by_any(chapter))
