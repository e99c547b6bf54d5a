"""The "What we found" box's reading and run times come from measurements (modlib.pages)."""

from modlib import pages


def test_collapsed_blocks_code_and_the_appendix_are_not_the_main_path():
    cells = ["# Title\nOne two three.", "```{dropdown} More\nfour five six\n```\nseven",
             ":::{admonition} Found\neight nine\n:::", "```python\nx = 1\n```", "## Appendix\nten eleven"]
    assert pages.main_path_words(cells) == len("Title One two three seven Found eight nine".split()) - 1


def test_a_chapter_without_measurements_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(pages, "NOTEBOOKS", tmp_path)
    monkeypatch.setattr(pages, "DEFAULT_CPU", tmp_path / "none.csv")
    assert pages.times("bridge") == f"reading time {pages.NOT_MEASURED}; run time {pages.NOT_MEASURED}"


def test_times_round_up():
    assert pages.reading_minutes("bridge") % 5 == 0 and pages.reading_minutes("bridge") >= 5
