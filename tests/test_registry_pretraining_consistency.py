"""Chapter 6's verdicts come from its claims registry (issue 50): every verdict the page prints on the
stored full results is decided for a claim of ``modlib/pretraining_consistency/claims.toml``, every
registered claim is printed, the ledger the page saves holds the same claims, the registry's changes
since registration are amendments on the record, and the authors' selection of masks (highest
quality, converged or not) is decided beside the book's (nothing computed: the stored results are
read)."""

import pytest
import torch

from modlib import claims, stats
from modlib import pretraining_consistency as pc
from modlib.pretraining_consistency import findings, lam_matched, own_runs, shared_start

CHAPTER = "pretraining_consistency"


@pytest.fixture(scope="module")
def printed():
    from test_claims import _from_store  # tests/ is on the path (pytest's default import mode)

    runs = _from_store(lambda: pc.run("full", torch.device("cpu")), "chapter 6's full results")
    claims.forget(CHAPTER)
    own = own_runs.stored("full"), own_runs.stored_runs("full")  # a pretraining run per base model
    shared = shared_start.stored("full")  # the shared random start
    found = findings.pretraining(runs, lam_matched.stored("full"), own, shared)  # the page's reading, in full
    return ({k: f for k, f in found.items() if getattr(f, "verdict", None) is not None},
            dict(claims.decisions(CHAPTER)), runs)


def test_every_printed_verdict_is_a_registered_claim(printed):
    found, _, _ = printed
    registered = claims.registry(CHAPTER)
    assert all(f.verdict.claim == f"{CHAPTER}/{k.replace('/', '-')}" for k, f in found.items())
    assert {f.name for f in found.values()} == {c.name for c in registered.values()}
    # the paper's claims, quoted; the book's own: the shared random start, a control (issue 53)
    assert all(c.whose == "paper" and c.quote for c in registered.values() if "/shared_" not in c.name)
    assert all(c.whose == "own" for c in registered.values() if "/shared_" in c.name)


def test_the_ledger_holds_exactly_the_registered_claims(printed):
    _, decided, _ = printed
    saved = claims.saved(CHAPTER)
    if not saved:
        pytest.skip("book/ledger/pretraining_consistency.json is written when the page runs at full")
    assert {k.split("/", 1)[1] for k in saved} == set(claims.registry(CHAPTER))
    assert {k: d.outcome for k, d in saved.items()} == {k: d.outcome for k, d in decided.items()}


def test_under_the_authors_selection_the_inside_effect_is_the_opposite_of_the_papers(printed):
    # issue 50: the convergence filter moved 5 inside choices to x100; chosen as the authors choose,
    # the arms' inside masks are comparable (2.3 % and 2.0 %) and pretrained minus scratch is -0.31
    found, _, runs = printed
    argmax = findings.authors_selection(runs)
    inside = argmax[(argmax["rule"] == "inside-contact") & (argmax["subroutine"] == "inside")]
    assert inside["changed"].sum() == 5 and (inside[inside["changed"]]["lam"] == 30).all()
    assert findings.density_ratio(inside[inside["init"] == "scratch"], inside[inside["init"] == "pretrained"]) < 1.2
    v = found["inside-contact/inside/effect-argmax"].verdict
    assert v.outcome == stats.NOT_REPRODUCED and "-0.45 to -0.16" in v.why, v.why
    assert found["inside-contact/inside/effect"].outcome == stats.UNDECIDED  # the book's selection
    assert claims.registry(CHAPTER)["inside-contact-inside-effect-argmax"].note.startswith("sensitivity, post hoc")
    table = findings.verdict_table(findings.pretraining_effects(runs), found, findings.matched_density(runs), argmax)
    row = next(r for r in table if r["subroutine"] == "inside" and r["density"] == findings.AUTHORS)
    assert row["larger effect"] == "✗"
    # issue 57: the subject's ✓ at comparable density needs base model 0, and the table says so
    subject = next(r for r in table if r["subroutine"] == "subject" and r["density"] == "comparable")
    assert subject["larger effect"] == "✓" + findings.RESTS_ON_ONE
