"""The claims registry (modlib/claims.py) and the ledger drawn from it (modlib/ledger.py): a claim's
fields are fixed at registration, a change without an amendment fails, an amended claim shows the
verdict it had as registered, and every verdict a page prints at full is a registered claim."""

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from modlib import claims, ledger, stats

ROOT = Path(__file__).resolve().parents[1]

CLAIM = """
[[claim]]
id = "bigger"
name = "the first arm scores more than the second"
whose = "paper"
paper = "csordas2021neural"
quote = "the first arm is better (Section 4)"
measure = "test accuracy, first arm minus second"
units = "seed"
arms = ["first", "second"]
direction = 1
margin = {margin}
margin_why = "the book's smallest effect that counts"
trained = "every seed above 0.9 training accuracy"
reads = ["run-seed*"]
mutations = ["swap arms"]
section = "Results"
"""

AMENDED = CLAIM.format(margin=0.05) + """
[[claim.amendment]]
date = "2026-11-27"
field = "margin"
old = 0.5
new = 0.05
reason = "the margin was moved after the results were seen (abc1234)"
"""


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A package folder of its own for the registry, with one chapter: write(text) sets its claims."""
    chapter = claims.CHAPTERS[3]
    (tmp_path / chapter).mkdir()
    monkeypatch.setattr(claims, "PACKAGE", tmp_path)
    claims.registry.cache_clear()
    claims.forget()

    def write(text: str) -> str:
        (tmp_path / chapter / "claims.toml").write_text(text)
        claims.registry.cache_clear()
        return chapter

    yield write
    claims.registry.cache_clear()
    claims.forget()


def test_a_verdict_takes_direction_and_margin_from_the_registry(package):
    chapter = package(CLAIM.format(margin=0.05))
    up = stats.paired(np.array([0.9, 0.8, 0.85]), np.array([0.5, 0.45, 0.5]))
    v = claims.decide(f"{chapter}/bigger", up)
    assert v.outcome == stats.REPRODUCED and v.claim == f"{chapter}/bigger" and not v.amended
    down = stats.paired(np.array([0.5, 0.45, 0.5]), np.array([0.9, 0.8, 0.85]))  # the arms swapped
    assert claims.decide(f"{chapter}/bigger", down).outcome == stats.NOT_REPRODUCED
    assert set(claims.decisions(chapter)) == {f"{chapter}/bigger"}
    s = claims.statement(v, "The first arm is ahead.")
    assert s.name == "the first arm scores more than the second" and "✓ reproduced" in s.text


def test_a_larger_registered_margin_moves_the_verdict(package):
    chapter = package(CLAIM.format(margin=0.5))
    effect = stats.paired(np.array([0.9, 0.8, 0.85]), np.array([0.7, 0.62, 0.66]))  # +0.19
    assert claims.decide(f"{chapter}/bigger", effect).outcome == stats.NOT_REPRODUCED


def test_an_amended_claim_shows_the_verdict_it_had_as_registered(package):
    chapter = package(AMENDED)
    effect = stats.paired(np.array([0.9, 0.8, 0.85]), np.array([0.7, 0.62, 0.66]))  # +0.19: ✓ at 0.05, ✗ at 0.5
    v = claims.decide(f"{chapter}/bigger", effect)
    assert v.outcome == stats.REPRODUCED
    assert "changed after the results were seen" in v.amended and "✗ not reproduced" in v.amended
    assert claims.decisions(chapter)[f"{chapter}/bigger"].registered_outcome == stats.NOT_REPRODUCED
    text = claims.statement(v, "The first arm is ahead.").text
    assert "margin 0.5 → 0.05" in text and "✗ not reproduced" in text
    assert "changed after the results were seen" in stats.marked(v)


def test_a_margin_changed_after_registration_without_an_amendment_fails(package):
    chapter = package(CLAIM.format(margin=0.5))
    assert claims.register(chapter, today="2026-11-20") == ["bigger"]
    assert claims.unrecorded_changes(chapter) == []
    package(CLAIM.format(margin=0.05))  # moved after registration, no amendment
    [problem] = claims.unrecorded_changes(chapter)
    assert "margin registered as 0.5, now 0.05 without an amendment" in problem
    package(AMENDED)  # the same change on the record
    assert claims.unrecorded_changes(chapter) == []
    assert claims.register(chapter) == []  # a registered claim is never rewritten
    assert claims.snapshot(chapter)["bigger"]["registered"] == "2026-11-20"


def test_an_unregistered_claim_is_named(package):
    chapter = package(CLAIM.format(margin=0.05))
    [problem] = claims.unrecorded_changes(chapter)
    assert "not registered" in problem and "python -m modlib.claims register" in problem
    with pytest.raises(claims.RegistryError, match="'weight_masks/other' is not registered.*bigger"):
        claims.decide(f"{chapter}/other", stats.paired(np.ones(3), np.zeros(3)))


@pytest.mark.parametrize("change, message", [
    (('whose = "paper"', 'whose = "papers"'), "whose='papers'; choose one of paper, own"),
    (("direction = 1", "direction = 2"), "direction=2; choose 1 or -1"),
    (('quote = "the first arm is better (Section 4)"\n', ""), "needs `paper` and `quote`"),
    (('mutations = ["swap arms"]', 'mutations = ["swap arm"]'), "mutations \\['swap arm'\\]; choose from"),
    (('margin_why = "the book\'s smallest effect that counts"\n', ""), "missing margin_why"),
])
def test_a_malformed_claim_is_refused_with_what_is_wrong(package, change, message):
    chapter = package(CLAIM.format(margin=0.05).replace(*change))
    with pytest.raises(claims.RegistryError, match=message):
        claims.registry(chapter)


def test_a_verdict_without_a_registered_claim_cannot_be_printed():
    v = stats.verdict(0.1, 0.3, units=3, paper=0.2)
    with pytest.raises(claims.RegistryError, match="must come from claims.decide"):
        claims.statement(v, "text")


def test_when_a_claim_was_written_is_read_from_the_dates(package, monkeypatch):
    """claims.written, which the chapters' keys and the claims ledger both read: the registration
    (git's commit time, else the snapshot's date, to the day) against when the results it reads were
    computed (their own records)."""
    chapter = package(CLAIM.format(margin=0.05))
    claims.register(chapter, today="2026-11-20")
    c = claims.registry(chapter)["bigger"]

    def written(**made):
        monkeypatch.setattr(claims, "_created", lambda ch: {k.replace("_", "-"): v for k, v in made.items()})
        return claims.written(c)

    monkeypatch.setattr(claims, "registered_at", lambda ch: {})  # no git: the snapshot's date
    assert written(run_seed0="2026-11-21T09:00:00+00:00", other="2026-01-01T00:00:00+00:00") == "before"
    assert written(run_seed0="2026-11-19T09:00:00+00:00") == "after"
    assert written(run_seed0="2026-11-20T09:00:00+00:00") is None  # the same day, and no note orders it
    # a new arm compared with one stored earlier: before its newest data, not before all of it
    assert written(run_seed0="2026-11-21T09:00:00+00:00", run_seed1="2026-11-19T09:00:00+00:00") == "newest"
    assert written(other="2026-01-01T00:00:00+00:00") is None  # none of its results is stored
    # registered before one of the patterns it reads has any result: not dated by its older inputs alone
    c = dataclasses.replace(c, reads=["run-seed*", "new-arm-*"])
    assert written(run_seed0="2026-11-19T09:00:00+00:00") is None
    assert written(run_seed0="2026-11-19T09:00:00+00:00", new_arm_0="2026-11-21T09:00:00+00:00") == "newest"
    c = claims.registry(chapter)["bigger"]
    # git's commit time orders a registration on the day of its data
    monkeypatch.setattr(claims, "registered_at", lambda ch: {c.id: "2026-11-20T08:00:00+00:00"})
    assert written(run_seed0="2026-11-20T09:00:00+00:00") == "before"
    assert written(run_seed0="2026-11-20T07:00:00+00:00") == "after"


def test_save_writes_the_full_decisions_only(package, tmp_path):
    chapter = package(CLAIM.format(margin=0.05))
    claims.decide(f"{chapter}/bigger", stats.paired(np.array([0.9, 0.8, 0.85]), np.array([0.5, 0.45, 0.5])))
    folder = tmp_path / "ledger"
    assert claims.save(chapter, "smoke", folder) is None and not folder.exists()
    path = claims.save(chapter, "full", folder)
    back, made = claims.saved(chapter, folder)[f"{chapter}/bigger"], claims.decisions(chapter)[f"{chapter}/bigger"]
    assert (back.outcome, back.why, back.how) == (made.outcome, made.why, made.how)
    assert back.estimate == pytest.approx(made.estimate, abs=1e-9) and back.low == pytest.approx(made.low, abs=1e-9)
    text = path.read_text()
    claims.save(chapter, "full", folder)
    assert path.read_text() == text


def test_the_register_command_names_a_bad_chapter():
    out = subprocess.run([sys.executable, "-m", "modlib.claims", "register", "chapter_eight"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2 and "unknown chapter chapter_eight; choose from" in out.stderr


# ---------------------------------------------------------------- the book's own registry


@pytest.mark.parametrize("chapter", claims.CHAPTERS)
def test_every_registered_claim_is_as_registered_or_amended(chapter):
    assert claims.unrecorded_changes(chapter) == []


def _with_margin_moved(c: claims.Registered, tmp_path, monkeypatch) -> None:
    """Read the registry from a copy of claim ``c``'s chapter in which its margin moved by 0.1."""
    shutil.copytree(claims.PACKAGE / c.chapter, tmp_path / c.chapter, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    toml = tmp_path / c.chapter / "claims.toml"
    text = toml.read_text()
    at = text.index("margin = ", text.index(f'id = "{c.id}"'))
    toml.write_text(text[:at] + f"margin = {c.margin + 0.1:g}" + text[text.index("\n", at):])
    monkeypatch.setattr(claims, "PACKAGE", tmp_path)
    claims.registry.cache_clear()


@pytest.mark.parametrize("chapter", claims.CHAPTERS)
def test_a_margin_moved_in_the_book_registry_is_caught(chapter, tmp_path, monkeypatch):
    """The amendment test on the real registry: a copy with one claim's margin moved, and no
    amendment, fails it."""
    if not claims.registry(chapter):
        pytest.skip(f"{chapter} registers no claim yet")
    first = next(iter(claims.registry(chapter).values()))
    _with_margin_moved(first, tmp_path, monkeypatch)
    try:
        assert any(f"{chapter}/{first.id}: margin registered as" in p for p in claims.unrecorded_changes(chapter))
    finally:
        claims.registry.cache_clear()


@pytest.mark.parametrize("chapter", claims.CHAPTERS)
def test_the_page_prints_a_verdict_for_every_registered_claim_and_no_other(chapter):
    """The decisions the chapter saved when it ran at full (book/ledger/<chapter>.json, rewritten by
    the book build) are the registered claims: as many verdicts printed as claims registered."""
    registered = {c.key for c in claims.registry(chapter).values()}
    printed = set(claims.saved(chapter))
    assert printed == registered, (f"printed but not registered: {sorted(printed - registered)}; "
                                   f"registered but not printed: {sorted(registered - printed)}")


def test_the_ledger_has_one_row_per_registered_claim_and_menus_that_filter():
    n = sum(len(claims.registry(ch)) for ch in claims.CHAPTERS)
    page = ledger.page()
    assert page.count(" data-chapter=") == n == len(ledger.rows())
    for name in ("chapter", "paper", "verdict", "kind"):
        assert f'select data-ledger="{name}"' in page
    assert all(f'id="chapter-{i}"' in page and f'href="#chapter-{i}"' in page for i in range(1, 8))
    rows = ledger.rows()
    assert all(r["verdict"] != ledger.NOT_DECIDED for r in rows), \
        [r["key"] for r in rows if r["verdict"] == ledger.NOT_DECIDED]
    # the ledger dates each claim by the rule the chapters' keys count by (claims.written)
    for r in rows:
        c = claims.get(r["key"])
        assert r["registration"].endswith(ledger.WRITTEN[claims.written(c)]), r
        assert r["registration"].startswith("amended; ") == bool(c.amendments), r
    assert "overflow-wrap:anywhere" not in page  # words broke mid-word in the 688-px column


def test_ledger_files_are_json_of_registered_keys():
    from modlib import mutations

    for path in sorted(set(claims.LEDGER.glob("*.json")) - {mutations.FILE}):
        assert path.stem in claims.CHAPTERS, f"{path.name}: no such chapter"
        keys = json.loads(path.read_text())
        assert all(k.startswith(path.stem + "/") for k in keys)


# ---------------------------------------------------------------- mutations the verdicts must notice


def test_replayed_mutations_move_a_clear_verdict(package):
    chapter = package(CLAIM.format(margin=0.05).replace('mutations = ["swap arms"]',
                                                        'mutations = ["swap arms", "shuffle units", "arm untrained"]'))
    a, b = np.array([0.9, 0.8, 0.85, 0.88]), np.array([0.5, 0.45, 0.5, 0.52])
    v = claims.decide(f"{chapter}/bigger", stats.paired(a, b, unit="network"))
    d = claims.decisions(chapter)[f"{chapter}/bigger"]
    assert v.outcome == stats.REPRODUCED
    swapped = claims.replay(d, "swap arms")
    assert swapped.outcome == stats.NOT_REPRODUCED and "network" in swapped.why  # the arguments kept
    assert claims.replay(d, "shuffle units").outcome != stats.REPRODUCED
    untrained = claims.replay(d, "arm untrained")
    assert untrained.outcome == stats.UNDECIDED and "did not train" in untrained.why
    assert all(claims.moved(d, claims.replay(d, m)) for m in claims.REPLAYED)
    with pytest.raises(ValueError, match="replayed here: swap arms"):
        claims.replay(d, "swap target and other")


def test_replay_of_saved_decisions_matches_the_decision(package, tmp_path):
    """Replaying a saved decision unchanged gives its own verdict: the saved arms are what was decided."""
    chapter = package(CLAIM.format(margin=0.05))
    rng = np.random.default_rng(0)
    claims.decide(f"{chapter}/bigger", stats.unpaired(rng.normal(0.1, 0.05, 5), rng.normal(0, 0.05, 4)))
    claims.save(chapter, "full", tmp_path)
    d = claims.saved(chapter, tmp_path)[f"{chapter}/bigger"]
    name, pos, kw = d.how
    again = getattr(stats, name)(np.array(d.arms[0]), np.array(d.arms[1]), *pos, **kw)
    assert np.isclose(again.mean, d.estimate) and np.isclose(again.low, d.low)
    assert not claims.moved(d, again.verdict(**claims.get(d.key).rule_arguments()))


# which verdicts each replayed mutation must move: swapping the arms or dealing the units out so
# that neither arm leads destroys an effect, so it must move a verdict that found one (a null result
# stays null); an untrained arm must move every decided verdict to "cannot be decided"
MUST_MOVE = {"swap arms": {stats.REPRODUCED}, "shuffle units": {stats.REPRODUCED},
             "arm untrained": {stats.REPRODUCED, stats.NOT_REPRODUCED}}


@pytest.mark.parametrize("chapter", claims.CHAPTERS)
def test_every_decided_claim_moves_under_each_replayed_mutation_it_names(chapter):
    """The mutation harness, on the chapter's stored full results (its saved decisions): a verdict
    that found an effect must change when its arms are swapped or its units dealt out so that neither
    arm leads, and every decided verdict when an arm is taken as untrained, for each of these its
    registry names (:data:`MUST_MOVE`)."""
    decided = claims.saved(chapter)
    if not decided:
        pytest.skip(f"{chapter} has no saved decisions yet")
    still = []
    for key, d in decided.items():
        for m in claims.get(key).mutations:
            if m in claims.REPLAYED and d.outcome in MUST_MOVE[m] and claims.moved(d, claims.replay(d, m)) is False:
                still.append(f"{key}: {m} leaves {d.outcome}")
    assert not still, "\n".join(still)


def test_an_amended_kind_words_the_registered_verdict_in_the_registered_kind(package):
    """A paper's claim made the book's own after its data: the verdict as registered reads as a
    paper's (✗ not reproduced), the present one as a hypothesis (does not hold)."""
    chapter = package(CLAIM.format(margin=0.05).replace('whose = "paper"', 'whose = "own"') + """
[[claim.amendment]]
date = "2026-11-27"
field = "whose"
old = "paper"
new = "own"
reason = "the paper claims no such difference"
""")
    effect = stats.paired(np.array([0.52, 0.51, 0.53]), np.array([0.5, 0.5, 0.5]))  # +0.02: short of 0.05
    v = claims.decide(f"{chapter}/bigger", effect)
    text = claims.statement(v, "The first arm is a little ahead.").text
    assert "**does not hold**" in text and "under the claim as registered: ✗ not reproduced" in text


def test_a_second_change_after_an_amendment_is_caught(package):
    """An amendment records old -> new; a later change of the same field without one of its own is
    an unrecorded change (the amendment no longer ends where the field stands)."""
    chapter = package(CLAIM.format(margin=0.5))
    claims.register(chapter, today="2026-11-20")
    package(AMENDED.replace("margin = 0.05\n", "margin = 0.2\n", 1))  # 0.5 -> 0.05 recorded, then 0.2
    [problem] = claims.unrecorded_changes(chapter)
    assert "the amendment of margin on 2026-11-27 gives 0.05, but the field then read 0.2" in problem


def test_mutations_are_fixed_at_registration(package):
    chapter = package(CLAIM.format(margin=0.05))
    claims.register(chapter, today="2026-11-20")
    package(CLAIM.format(margin=0.05).replace('mutations = ["swap arms"]', "mutations = []"))
    [problem] = claims.unrecorded_changes(chapter)
    assert "mutations registered as ['swap arms'], now [] without an amendment" in problem


@pytest.mark.parametrize("chapter", claims.CHAPTERS)
def test_a_field_moved_again_after_its_amendment_is_caught_in_the_book_registry(chapter, tmp_path, monkeypatch):
    amended = [c for c in claims.registry(chapter).values() if any(a.field == "margin" for a in c.amendments)]
    if not amended:
        pytest.skip(f"no claim of {chapter} has an amended margin")
    c = amended[0]
    _with_margin_moved(c, tmp_path, monkeypatch)
    try:
        assert any(f"{chapter}/{c.id}: the amendment of margin" in p for p in claims.unrecorded_changes(chapter))
    finally:
        claims.registry.cache_clear()


def test_one_bar_for_trained_and_the_departures_are_named():
    """The book's bar for "trained" is one number (stats.TRAINED), which the chapters that apply it
    import rather than retype; the chapters that depart from it are named with why, and their
    constants differ from it (a departure that is not one would be a second name for the same bar)."""
    from modlib.bridge import findings as bridge
    from modlib.compositional_sprites import findings as sprites
    from modlib.redundant_input_toy import findings as toy
    from modlib.resists_at_scale import findings as scale
    from modlib.structural_compositionality import experiment as structure
    from modlib.weight_masks import findings as masks

    assert toy.TRAINED is stats.TRAINED
    assert masks.TRAINED is stats.TRAINED
    assert bridge.TRAINED is stats.TRAINED
    assert structure.settings("full").base_gate == stats.TRAINED
    assert set(stats.TRAINED_DEPARTURES) == {"compositional_sprites", "resists_at_scale", "weight_masks", "bridge"}
    assert scale.TRAINED != stats.TRAINED and masks.CNN_TRAINED != stats.TRAINED
    assert sprites.FIT != stats.TRAINED
    for chapter in claims.CHAPTERS:
        for c in claims.registry(chapter).values():
            assert c.trained.strip(), f"{c.key} states no bar for trained"


def test_a_registration_rewritten_in_the_snapshot_is_caught_unless_corrected_on_the_record(package, tmp_path):
    """The snapshot only grows: a registered field rewritten in a later commit is named, until the
    entry records the correction (commit, fields, reason); a field the snapshot gained later is not
    a rewrite."""
    chapter = package(CLAIM.format(margin=0.05))
    git = lambda *a: subprocess.run(["git", "-C", str(tmp_path), *a], check=True, capture_output=True)  # noqa: E731
    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "root")
    claims.register(chapter, today="2026-01-01")
    path = claims.snapshot_path(chapter)
    first = json.loads(path.read_text())
    del first["bigger"]["fields"]["mutations"]  # as if the schema gained the field later
    path.write_text(json.dumps(first))
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "register")
    assert claims.snapshot_rewrites(chapter, root=tmp_path) == []
    later = json.loads(path.read_text())
    later["bigger"]["fields"].update(margin=0.5, mutations=["swap arms"])
    path.write_text(json.dumps(later))
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "rewrite")
    found = claims.snapshot_rewrites(chapter, root=tmp_path)
    assert len(found) == 1 and "bigger" in found[0] and "(margin)" in found[0]
    later["bigger"]["corrections"] = [{"commit": "abc1234", "date": "2026-01-02", "fields": ["margin"],
                                       "reason": "set back to the state when its results were first stored"}]
    path.write_text(json.dumps(later))
    assert claims.snapshot_rewrites(chapter, root=tmp_path) == []


@pytest.mark.parametrize("chapter", claims.CHAPTERS)
def test_no_registration_was_rewritten_off_the_record(chapter):
    if not (ROOT / ".git").exists():
        pytest.skip("no git history here (an installed package)")
    assert not claims.snapshot_rewrites(chapter), "\n".join(claims.snapshot_rewrites(chapter))
