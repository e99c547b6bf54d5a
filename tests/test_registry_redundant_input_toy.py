"""Chapter 1's verdicts and its claims registry (issue 50): every verdict the page's findings give on the
stored full results is decided for a claim registered in ``modlib/redundant_input_toy/claims.toml``, and the
page's saved decisions (``book/ledger/redundant_input_toy.json``) are exactly the registered claims."""

from __future__ import annotations

import re

import pytest

from modlib import claims, stats
from modlib import redundant_input_toy as toy
from modlib.redundant_input_toy import findings
from test_claims import sweep, toy_studies  # noqa: F401 (the stored full results, as fixtures)

CHAPTER = toy.CHAPTER
MARKED = re.compile(r" — (✓ |✗ |\? |holds|does not hold)")  # a verdict at the end of a statement


def test_registry_loads_and_is_registered():
    registered = claims.registry(CHAPTER)
    assert registered, "no claims.toml"
    assert claims.unrecorded_changes(CHAPTER) == []
    paper = {c.id for c in registered.values() if c.whose == "paper"}
    assert paper == {"cell-a", "cell-b", "acc-cell-a", "acc-cell-b", "built-a", "built-b"}, paper


@pytest.fixture(scope="module")
def page(sweep, toy_studies):
    claims.forget(CHAPTER)
    found = {**findings.redundant_input(sweep, toy.GENERALIZES, toy.PAPER_EPOCHS),
             **findings.distribution(sweep, toy.GENERALIZES), **findings.studies(toy_studies),
             **findings.issue51(toy_studies)}
    arms = [sweep.arrays("tanh", "mse", "a", 1.0, d) for d in ("corner", "binary")]  # the appendix's tanh in (a)
    findings.compare("tanh-corner-a", *(a["test_acc"] >= toy.GENERALIZES for a in arms), arms)
    return found, claims.decisions(CHAPTER)


def test_every_verdict_on_the_stored_results_is_a_registered_claim(page):
    found, decided = page
    assert set(decided) == {c.key for c in claims.registry(CHAPTER).values()}
    for name, f in found.items():
        key = f"{CHAPTER}/{name}"
        if MARKED.search(f.text):  # a statement that prints a verdict: it is the registered claim's
            assert key in decided, (name, f.text)
        else:  # a check or a description: no verdict, and no claim
            assert key not in decided, name
    # the wording follows the kind: a paper's claim gets a mark, the book's own hypothesis holds or not
    for name, f in found.items():
        c = claims.registry(CHAPTER).get(name)
        if c is not None and decided[c.key].outcome != stats.UNDECIDED:
            words = (stats.HOLDS, stats.DOES_NOT_HOLD) if c.own else (f"✓ {stats.REPRODUCED}", f"✗ {stats.NOT_REPRODUCED}")
            assert any(f" — {w}" in f.text for w in words), (name, f.text)
