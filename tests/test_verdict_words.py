"""No chapter's prose types a verdict: every verdict a page prints comes from the registry
(``modlib.claims.decide``), and the Markdown of a chapter notebook names one only through a glued key
(``{glue:text}`<short>-v-<id>-mark```, made by :func:`modlib.claims.page_words`, or a chapter's own
``-mark`` keys). A verdict word or mark typed in a Markdown cell agrees with the registry only until
the results change.

Cheap: reads the notebooks' JSON as text. The cells that explain what the marks mean (the legends),
or that read a mark conditionally ("if the row does not read *holds*"), are allowed by their cell id,
each with why; a word used in its plain sense ("holds out a cell") is not a verdict.
"""

import json
import re
from pathlib import Path

import pytest

from modlib import claims

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))

# the rule's outcome words and marks (modlib.stats.MARKS, HOLDS, DOES_NOT_HOLD)
VERDICT = re.compile(r"[✓✗]|\breproduced\b|cannot be decided|\bholds\b|\bdoes not hold\b|\bnot hold\b")
# "holds" and "hold" as plain verbs, not verdicts
PLAIN = re.compile(r"\bholds (out|one|a|an|the|its)\b|\bwhich holds\b|\bcorpus holds\b|\bdoes not hold them\b")

# (notebook, cell id): why its verdict words are allowed
ALLOWED = {
    ("pretraining_consistency", "aa7715d0"): "the verdict table's legend",
    ("pretraining_consistency", "40257664"): "what the page calls reproduced (the rule, in words)",
    ("pretraining_consistency", "161295a2"): "the appendix's legend: what ✗ means",
    ("redundant_input_toy", "33055e4c"): "the verdict rule's legend",
    ("resists_at_scale", "cebb64be"): "the verdict rule's legend",
    ("weight_masks", "c40000000035"): "the verdict rule's legend",
    ("bridge", "113690f1"): "an exercise's solution reading a mark conditionally ('if the row does not read holds')",
    ("bridge", "6ea8a7aa"): "an exercise's solution reading a mark conditionally ('a does not hold is no matter of seed count')",
    ("bridge", "39ed3e45"): "a figure's caption stating the registered rule its title's interval is read by (a legend)",
}


def cells(chapter: str) -> list[dict]:
    return json.loads((ROOT / "notebooks" / f"{chapter}.ipynb").read_text())["cells"]


def typed_verdicts(chapter: str) -> list[str]:
    """Each Markdown line of ``chapter`` that types a verdict word or mark, outside the allowed cells."""
    found = []
    for i, c in enumerate(cells(chapter)):
        if c["cell_type"] != "markdown" or (chapter, c.get("id")) in ALLOWED:
            continue
        text = "".join(c["source"])
        text = re.sub(r"\{[\w:]+\}`[^`]*`", "", text)  # roles: glued keys, refs, terms
        for line in text.splitlines():
            if VERDICT.search(PLAIN.sub("", line)):
                found.append(f"cell {i} ({c.get('id')}): {line.strip()}")
    return found


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_prose_types_no_verdict(chapter):
    found = typed_verdicts(chapter)
    assert not found, "verdict words typed in the prose (glue them from the registry):\n" + "\n".join(found)


def test_allowed_cells_exist_and_still_need_it():
    # an allowance for a cell that is gone, or that no longer has a verdict word, is stale
    for (chapter, cid), why in ALLOWED.items():
        match = [c for c in cells(chapter) if c.get("id") == cid]
        assert match, f"{chapter}: no cell {cid} ({why})"
        assert VERDICT.search(PLAIN.sub("", "".join(match[0]["source"]))), f"{chapter} {cid}: no verdict word left"


def test_the_check_catches_a_typed_verdict(monkeypatch):
    typed = [{"cell_type": "markdown", "id": "x", "source": ["So the claim is reproduced for both."]},
             {"cell_type": "markdown", "id": "y", "source": ["The hypothesis holds there."]},
             {"cell_type": "markdown", "id": "z", "source": ["The weakest ✓ is the subject's."]},
             {"cell_type": "markdown", "id": "w", "source": ["test 2 cannot be decided here"]},
             {"cell_type": "markdown", "id": "v", "source": ["The control holds out a cell; "
                                                             "{glue:text}`t-v-a-mark` (glued)."]}]
    monkeypatch.setattr(__import__(__name__), "cells", lambda chapter: typed)
    found = [line.split(":")[0] for line in typed_verdicts("t")]
    assert found == ["cell 0 (x)", "cell 1 (y)", "cell 2 (z)", "cell 3 (w)"]


def test_page_words_are_the_registry_s(monkeypatch):
    # the glued words follow the recorded decision, in the words for the claim's kind
    from modlib import stats

    paper, own = "redundant_input_toy/cell-b", "redundant_input_toy/even-b"
    monkeypatch.setattr(claims, "written", lambda c: "before")  # untagged: registered before its data
    with claims.apart():
        assert claims.words(paper) == claims.NOT_DECIDED
        claims.decide(paper, low=0.2, high=0.4, units=5)
        claims.decide(own, low=-0.01, high=0.01, units=5)
        assert claims.words(paper) == f"{stats.MARKS[stats.REPRODUCED]} {stats.REPRODUCED}"
        assert claims.words(own) == stats.DOES_NOT_HOLD
        claims.decide(own, low=0.2, high=0.4, units=5, trained=False)
        assert claims.words(own) == f"? {stats.UNDECIDED}"
        assert claims.words(own, why=True) == f"? {stats.UNDECIDED} (an arm did not train)"
        words = claims.page_words("redundant_input_toy")
        assert set(words) == set(claims.registry("redundant_input_toy"))
        assert words["cell-b"].endswith(stats.REPRODUCED) and words["formulation"] == claims.NOT_DECIDED


def test_a_claim_written_down_after_its_results_says_so_beside_every_verdict_it_prints(monkeypatch):
    # issue 57: a post-hoc claim's verdict is labelled where it is printed, in prose (claims.words) and
    # in a statement (claims.statement), not only counted in the box's key; a claim registered before
    # its data is not labelled
    from modlib import stats

    key = "redundant_input_toy/cell-b"
    for when, tagged in (("after", True), ("before", False), ("newest", False), (None, False)):
        monkeypatch.setattr(claims, "written", lambda c, w=when: w)
        with claims.apart():
            v = claims.decide(key, low=-0.1, high=0.4, units=5)  # an interval across 0: undecided
            assert claims.words(key).endswith(f" ({claims.POST_HOC})") == tagged, when
            why = claims.words(key, why=True)
            assert why.startswith(f"? {stats.UNDECIDED} ({claims.POST_HOC}; ") == tagged, (when, why)
            text = claims.statement(v, "the text").text
            assert (f"** ({claims.POST_HOC}):" in text) == tagged, (when, text)
            assert text.count(claims.POST_HOC) == int(tagged)
            # chapters 1-3's own statements (stats.marked), and a mark quoted in prose (chapters 4, 7)
            said = claims.late(v, stats.marked(v))
            assert said.startswith(f" — ? {stats.UNDECIDED} ({claims.POST_HOC}; ") == tagged, (when, said)
            assert claims.tagged(claims.statement(v, "t")).endswith(f" ({claims.POST_HOC})") == tagged
            assert claims.untagged(said) == stats.marked(v)


def test_the_boxes_key_names_every_outcome_and_every_chapter_shows_it():
    # issue 57: one line of plain words keys the marks of a "What we found" box, the same words in
    # every chapter that shows it (glued from claims.MARKS_KEY, so no verdict word is typed)
    from modlib import stats

    for word in (stats.REPRODUCED, stats.NOT_REPRODUCED, stats.UNDECIDED, stats.HOLDS,
                 stats.DOES_NOT_HOLD, *stats.MARKS.values()):
        assert word in claims.MARKS_KEY, word
    shorts = {"redundant_input_toy": "toy", "compositional_sprites": "cs", "resists_at_scale": "rs",
              "weight_masks": "wm", "structural_compositionality": "sc", "pretraining_consistency": "pc",
              "bridge": "br"}
    assert set(shorts) == set(claims.CHAPTERS)
    for chapter, short in shorts.items():
        text = "".join("".join(c["source"]) for c in cells(chapter))
        box = next("".join(c["source"]) for c in cells(chapter) if "What we found" in "".join(c["source"])
                   and c["cell_type"] == "markdown")
        assert f"{{glue:text}}`{short}-marks-key`" in box, chapter
        # the one wording, whatever name the page gives the registry module (or the part of it
        # the chapter's claims can take: claims.marks_key)
        assert re.search(rf'plots\.glue\("{short}-marks-key", [\w.]*(claims|registry)\.'
                         rf'(MARKS_KEY|marks_key\(([\w.]*CHAPTER|"{chapter}")\))\)', text), chapter


def test_a_chapter_of_one_kind_of_claim_keys_only_its_marks(monkeypatch):
    # issue 57: chapter 7's claims are all the book's own; a chapter whose claims were all the paper's
    # (chapter 6's, before its shared-start control added the book's own) keys only the paper's marks:
    # each box keys only the marks its claims can take, in the one wording of claims.MARKS_KEY
    from modlib import stats

    own = claims.marks_key("bridge")
    registry = claims.registry
    papers = {k: c for k, c in registry("pretraining_consistency").items() if not c.own}
    monkeypatch.setattr(claims, "registry", lambda ch: papers if ch == "pretraining_consistency" else registry(ch))
    paper = claims.marks_key("pretraining_consistency")
    assert stats.HOLDS in own and stats.MARKS[stats.REPRODUCED] not in own and claims.KEY_UNDECIDED in own
    assert claims.KEY_PAPER in paper and stats.DOES_NOT_HOLD not in paper
    toy = claims.marks_key("redundant_input_toy")
    assert toy == f"{claims.MARKS_KEY} {claims.when_registered('redundant_input_toy')}"  # both kinds
    for chapter, key in (("bridge", own), ("pretraining_consistency", paper)):
        marks = key.removesuffix(f" {claims.when_registered(chapter)}")
        assert all(part in claims.MARKS_KEY for part in marks.removeprefix("Marks: ").split("; "))


def test_each_chapters_key_says_how_many_of_its_claims_were_written_down_after_their_data(monkeypatch, tmp_path):
    """The key no longer promises claims registered in advance: it counts, per chapter, the claims
    written down after their first results were seen (claims.when_registered), by the registry's
    notes and the stored results' own dates, and says so where it cannot date them (no store)."""
    assert "registered before its data" not in claims.MARKS_KEY
    for chapter in claims.CHAPTERS:
        key = claims.marks_key(chapter)
        assert key.endswith(claims.when_registered(chapter)) and "post hoc" in key, chapter
    # chapter 2: its conditioning claim was registered before its result was computed (its note and the
    # ledger say so), its monolithic claim after (its note), alpha-open-more and the four claims on the
    # crossed rows (issue 52) before their newest results (their notes, and the commits that registered
    # them), slots-constant (issue 52) before its result; the rest by the commit that registered them against the times their results were computed,
    # as the claims ledger dates them. One claim is "its", not "their" (issue 57)
    assert claims.post_hoc("compositional_sprites/monolithic") == claims.POST_HOC
    assert claims.post_hoc("compositional_sprites/conditioning") == ""
    said = claims.when_registered("compositional_sprites")
    assert "2 before their results were computed" in said and "(post hoc)" in said, said  # + slots-constant
    assert "5 before the newest results they read were computed (older ones were already stored)" in said, said
    assert "not dated" not in said, said
    # chapter 4: every claim after its first results, but four before their newest: cnn-alpha (issue 52),
    # spares-authors (registered on seed 0's results, networks 1 and 2 computed after it) and the two
    # width-spares-matched claims (issue 52: their narrow networks computed after them, the wide ones before)
    assert claims.when_registered("weight_masks").startswith("23 of this chapter's 32 claims")
    # ... and five before any of their results (issue 52): the two alpha-spares claims at matched density
    # and the three claims on the 512x4 networks whose pair masks' α was chosen on a network held aside
    assert "5 before their results were computed" in claims.when_registered("weight_masks")
    assert "4 before the newest results they read were computed" in claims.when_registered("weight_masks")
    monkeypatch.setenv("MODLIB_RESULTS", str(tmp_path))  # no stored results: only the notes tell
    claims._created.cache_clear()
    try:
        by_note = [c for c in claims.registry("bridge").values()  # post hoc by their notes (8)
                   if c.note.lower().startswith(claims.POST_HOC) or "registered after" in c.note]
        undated = len(claims.registry("bridge")) - len(by_note)
        assert len(by_note) == 8 and f"{undated} not dated here, having no stored full result" in \
            claims.when_registered("bridge")
    finally:
        claims._created.cache_clear()
