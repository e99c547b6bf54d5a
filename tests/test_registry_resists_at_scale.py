"""Chapter 3's verdicts and its claims registry (issue 50): every verdict the page's findings give on the
stored full results is decided for a claim registered in ``modlib/resists_at_scale/claims.toml``, the
book's own hypotheses read holds / does not hold (never ✓ / ✗), the checks give no verdict, and the page's
saved decisions (``book/ledger/resists_at_scale.json``) are exactly the registered claims."""

from __future__ import annotations

import re

import pytest

from modlib import claims, stats
from modlib import resists_at_scale as rs
from modlib.resists_at_scale import findings
from test_claims import stored_controls

CHAPTER = rs.CHAPTER
MARKED = re.compile(r" — (✓ |✗ |\? |holds|does not hold)")  # a verdict in a statement


def test_registry_loads_and_is_registered():
    registered = claims.registry(CHAPTER)
    assert registered, "no claims.toml"
    assert claims.unrecorded_changes(CHAPTER) == []
    paper = {c.id for c in registered.values() if c.whose == "paper"}
    assert paper == {"mnist-early", "mnist-gap", "mnist-swap", "scan-early", "scan-gap"}, paper
    # the controls, the unseen commands and the runs with the authors' defaults are the book's own
    for cid in ("mnist-control-gap", "scan-control-gap", "scan-unseen"):
        assert registered[cid].own, cid
    assert all(c.own for c in registered.values() if c.id.startswith("ablation-"))


@pytest.fixture(scope="module")
def page():
    runs = stored_controls()
    claims.forget(CHAPTER)
    found = {**findings.resists_at_scale(runs), **findings.controls(runs)}
    return found, claims.decisions(CHAPTER)


def test_every_verdict_on_the_stored_results_is_a_registered_claim(page):
    found, decided = page
    assert set(decided) == {c.key for c in claims.registry(CHAPTER).values()}
    registered = claims.registry(CHAPTER)
    for name, f in found.items():
        key = f"{CHAPTER}/{name}"
        if MARKED.search(f.text):
            assert key in decided, (name, f.text)
        else:  # a check: no verdict, no claim
            assert key not in decided, name
            continue
        c, outcome = registered[name], decided[key].outcome
        if outcome == stats.UNDECIDED:
            assert f" — ? {stats.UNDECIDED}" in f.text, (name, f.text)
        elif c.own:
            assert re.search(r" — (holds|does not hold)\b", f.text) and "✓" not in f.text and "✗" not in f.text, f.text
        else:
            assert f" — {stats.MARKS[outcome]} {outcome}" in f.text, (name, f.text)
