"""The "What we found" box's reading and run times come from measurements (modlib.pages)."""

import json

import pytest

from modlib import pages


def test_collapsed_blocks_code_and_the_appendix_are_not_the_main_path():
    cells = ["# Title\nOne two three.", "```{dropdown} More\nfour five six\n```\nseven",
             ":::{admonition} Found\neight nine\n:::", "```python\nx = 1\n```", "## Appendix\nten eleven"]
    assert pages.main_path_words(cells) == len("Title One two three seven Found eight nine".split()) - 1


def test_a_target_is_not_read_and_a_line_opening_with_a_parenthesis_is():
    cells = ["(sec-a)=\n## Heading\n(This aside is read.) And this."]
    assert pages.main_path_words(cells) == len("Heading This aside is read And this".split())


def test_a_figure_caption_is_read_and_a_collapsed_solution_is_not():
    cells = ["```{glue:figure} fig-key\n:name: fig-a\n\nThe caption, read.\n```",
             "````{solution} ex-a\n:class: dropdown\n\nHidden words here.\n````"]
    assert pages.main_path_words(cells) == 3


def test_a_chapter_without_measurements_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(pages, "NOTEBOOKS", tmp_path)
    monkeypatch.setattr(pages, "DEFAULT_CPU", tmp_path / "none.csv")
    assert pages.times("bridge") == f"reading time {pages.NOT_MEASURED}; run time {pages.NOT_MEASURED}"


def test_times_say_what_the_table_of_profiles_says():
    run = pages.times("redundant_input_toy").split("; ")[-1]
    assert run == f"{pages.default_cpu_text('redundant_input_toy')} to run at default"


def test_times_round_up():
    assert pages.reading_minutes("bridge") % 5 == 0 and pages.reading_minutes("bridge") >= 5


def test_the_instructors_guide_shows_the_measured_times_of_every_chapter():
    """The instructors' guide's and the how-to-run page's table is what modlib.pages writes now
    (python -m modlib.pages --instructors)."""
    block = pages.instructors_table()
    for page in pages.TIMES_PAGES:
        assert block in page.read_text(), f"{page.name}'s table of times is out of date: run python -m modlib.pages --instructors"
    assert all(f"`../notebooks/{chapter}`" in block for chapter in pages.CHAPTERS)
    assert pages.NOT_MEASURED not in block  # in a checkout every time is measured
    with pytest.raises(ValueError, match="no block between"):
        pages.replace_block("no markers", pages.START, pages.END, block, "book/instructors.md")


def test_the_readme_shows_the_stored_full_results_of_every_chapter():
    """The README's table of stored full results is what modlib.pages writes now, with a row per
    chapter counting the results that record their wall time."""
    block = pages.readme_table()
    assert block in pages.README.read_text(), "the README's table of stored full results is out of date: " \
                                               "run python -m modlib.pages --instructors"
    for number, chapter in enumerate(pages.CHAPTERS, 1):
        assert f"| {number}, `{chapter}` | {len(pages.full_seconds(chapter))} |" in block


def test_full_hours_add_up_the_stored_results_wall_times(tmp_path, monkeypatch):
    folder = tmp_path / "ch"
    folder.mkdir()
    for name, seconds in (("a", 1800.0), ("b", 5400.0)):
        (folder / f"{name}.json").write_text(json.dumps({"wall_time_s": seconds}))
    (folder / "_batch.json").write_text(json.dumps({"wall_time_s": 1e9}))  # not a result
    monkeypatch.setattr(pages, "FULL", tmp_path)
    assert pages.full_hours("ch") == 2.0 and pages.full_hours("none") is None


def test_a_figure_on_the_main_path_is_counted_and_one_folded_or_in_the_appendix_is_not():
    cells = ["```{glue:figure} fig-key\n:name: fig-a\n\nCaption.\n```",
             "```{figure} a.png\nSecond.\n```",
             "````{dropdown} More\n```{glue:figure} fig-b\nFolded.\n```\n````",
             "## Appendix\n```{glue:figure} fig-c\nLate.\n```"]
    assert pages.main_path_figures(cells) == 2
    assert pages.main_path_words(cells) == 2  # the two visible captions
