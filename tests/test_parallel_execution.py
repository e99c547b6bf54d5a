"""The book's notebooks executed on every core before Sphinx reads them (book/_ext/parallel_execution.py):
the cache it fills is the one myst-nb's ``cache`` mode reads, from scratch, and a failing notebook is
left for myst-nb to execute and report."""

import sys
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from jupyter_cache import get_cache
from myst_nb.core.config import NbParserConfig
from myst_nb.core.read import create_nb_reader
from myst_parser.config.main import MdParserConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
import parallel_execution  # noqa: E402


def notebook(path: Path, *sources: str) -> Path:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path


def app(root: Path, mode: str = "cache", pages: tuple[str, ...] = ("notebooks/*.ipynb",)) -> SimpleNamespace:
    mystnb = NbParserConfig(execution_mode=mode, execution_cache_path=str(root / "_build" / ".jupyter_cache"),
                            execution_timeout=120)
    return SimpleNamespace(srcdir=str(root), env=SimpleNamespace(mystnb_config=mystnb, myst_config=MdParserConfig()),
                           config=SimpleNamespace(parallel_notebooks=list(pages), parallel_workers=2))


MYST_PAGE = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A theory page

```{code-cell} ipython3
print(6 * 7)
```
"""


def test_it_fills_myst_nbs_cache_from_scratch_and_leaves_a_failing_notebook_out(tmp_path):
    (tmp_path / "notebooks").mkdir()
    good = notebook(tmp_path / "notebooks" / "good.ipynb", "import os\nprint(os.getcwd(), os.environ['OMP_NUM_THREADS'])")
    bad = notebook(tmp_path / "notebooks" / "bad.ipynb", "raise RuntimeError('broken page')")
    cache_path = tmp_path / "_build" / ".jupyter_cache"
    old = get_cache(str(cache_path))
    earlier = notebook(tmp_path / "earlier.ipynb", "1 + 1")
    old.cache_notebook_file(str(earlier), check_validity=False)
    assert old.match_cache_notebook(nbformat.read(earlier, as_version=4))
    parallel_execution.fill_cache(app(tmp_path))

    cache = get_cache(str(cache_path))
    with pytest.raises(KeyError):
        cache.match_cache_notebook(nbformat.read(earlier, as_version=4))  # emptied first: nothing from an earlier build is read
    executed = cache.merge_match_into_notebook(nbformat.read(good, as_version=4))[1]
    out = executed.cells[0].outputs[0].text.split()
    assert out == [str(good.parent), "1"]  # run in its own folder (as myst-nb runs it), on one thread
    with pytest.raises(KeyError):
        cache.match_cache_notebook(nbformat.read(bad, as_version=4))  # myst-nb executes it and reports the error


def test_a_myst_markdown_page_is_cached_as_myst_nb_reads_it_and_a_plain_page_is_skipped(tmp_path):
    (tmp_path / "book").mkdir()
    page = tmp_path / "book" / "a_theory.md"
    page.write_text(MYST_PAGE)
    (tmp_path / "book" / "b_theory.md").write_text("# Not a notebook\n\nJust text.\n")
    config = app(tmp_path, pages=("book/*_theory.md",))
    parallel_execution.fill_cache(config)

    reader = create_nb_reader(str(page), config.env.myst_config, config.env.mystnb_config, MYST_PAGE)
    cache = get_cache(config.env.mystnb_config.execution_cache_path)
    executed = cache.merge_match_into_notebook(reader.read(MYST_PAGE))[1]  # what myst-nb looks up
    assert executed.cells[-1].outputs[0].text == "42\n"
    assert len(cache.list_cache_records()) == 1  # the plain page was not executed


def test_outside_cache_mode_it_does_nothing_and_a_glob_matching_nothing_is_an_error(tmp_path):
    parallel_execution.fill_cache(app(tmp_path, mode="force"))
    assert not (tmp_path / "_build").exists()
    with pytest.raises(ValueError, match=r"parallel_notebooks=\['notebooks/\*.ipynb'\] matches no notebook"):
        parallel_execution.fill_cache(app(tmp_path))


def test_the_books_config_executes_every_chapter_through_it():
    import yaml

    config = yaml.safe_load((Path(__file__).resolve().parents[1] / "_config.yml").read_text())
    assert config["execute"]["execute_notebooks"] == "cache"
    assert config["sphinx"]["local_extensions"]["parallel_execution"] == "book/_ext"
    root = Path(__file__).resolve().parents[1]
    pages = {p for pattern in config["sphinx"]["config"]["parallel_notebooks"] for p in root.glob(pattern)}
    chapters = set((root / "notebooks").glob("*.ipynb"))
    assert chapters <= pages and len(chapters) == 7
    theory = {p for p in (root / "book").glob("*.md") if "{code-cell}" in p.read_text()} - {root / "book" / "ledger.md"}
    assert theory <= pages and len(theory) >= 4  # ledger.md is left to myst-nb: it reads what the chapters write
    assert root / "book" / "ledger.md" not in pages


def test_a_kernel_that_does_not_start_is_started_again_then_left_to_myst_nb(monkeypatch):
    # two kernels started at once may pick one TCP port; the loser dies before kernel_info (a build failed so)
    calls = []

    def flaky(nb, **kwargs):
        calls.append(1)
        if len(calls) < 2:
            raise RuntimeError("Kernel died before replying to kernel_info")
        return SimpleNamespace(err=None, time=1.5, exc_string=None)

    nb = nbformat.v4.new_notebook()
    monkeypatch.setattr(parallel_execution, "single_nb_execution", flaky)
    assert parallel_execution.execute("/x/a.ipynb", nb, 10) == ("/x/a.ipynb", nb, 1.5, None) and len(calls) == 2

    def dead(nb, **kwargs):
        raise RuntimeError("Kernel died before replying to kernel_info")

    monkeypatch.setattr(parallel_execution, "single_nb_execution", dead)
    path, got, _, error = parallel_execution.execute("/x/a.ipynb", nb, 10)
    assert got is None and "the kernel did not start" in error and "kernel_info" in error


def test_every_page_that_executes_code_is_read_again_and_a_plain_page_is_not(tmp_path):
    """An incremental build re-reads the pages that execute code even when their source is unchanged
    (the claims ledger reads the stored verdicts); a plain Markdown page, and one already being read,
    are left to Sphinx."""
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "ledger.md").write_text(MYST_PAGE)
    (tmp_path / "book" / "glossary.md").write_text("# Glossary\n\nJust text.\n")
    (tmp_path / "notebooks").mkdir()
    notebook(tmp_path / "notebooks" / "chapter.ipynb", "1 + 1")
    notebook(tmp_path / "notebooks" / "edited.ipynb", "2 + 2")
    found = {"book/ledger": "book/ledger.md", "book/glossary": "book/glossary.md",
             "notebooks/chapter": "notebooks/chapter.ipynb", "notebooks/edited": "notebooks/edited.ipynb"}
    config = app(tmp_path)
    env = SimpleNamespace(found_docs=set(found), doc2path=lambda name: tmp_path / found[name])
    again = parallel_execution.executed_pages(config, env, set(), {"notebooks/edited"}, set())
    assert again == ["book/ledger", "notebooks/chapter"]
    assert parallel_execution.executed_pages(app(tmp_path, mode="off"), env, set(), set(), set()) == []
