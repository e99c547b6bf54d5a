"""The repository's own promises: clean notebooks, one repository URL, Colab-ready first cells."""

import ast
import re
import tomllib
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
URL = CONFIG["repository"]["url"]
RELEASE = CONFIG["repository"]["branch"]  # the release tag the Colab links open


def test_there_are_notebooks_and_each_is_in_the_table_of_contents():
    toc = (ROOT / "_toc.yml").read_text()
    assert NOTEBOOKS
    for nb in NOTEBOOKS:
        assert f"notebooks/{nb.stem}" in toc


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebooks_are_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"cell {i} has outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_first_code_cell_installs_the_package_from_the_configured_repository(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    first = code[0].source
    assert "except ImportError" in first and "%pip install" in first
    assert re.search(rf"git\+{re.escape(URL)}\b", first), "install URL differs from _config.yml"
    # the release the Colab link opens installs itself, not whatever main holds that day
    assert f'@{RELEASE}"' in first, f"the install cell does not pin {RELEASE}, _config.yml's branch"
    params = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1 and 'os.environ.get("MODLIB_PROFILE", "default")' in params[0].source



@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_chapter_opens_in_colab_on_a_gpu_runtime(path):
    # Colab reads the notebook's metadata: without `accelerator: GPU` a chapter opens on a CPU
    nb = nbformat.read(path, as_version=4)
    assert nb.metadata.get("accelerator") == "GPU", f"{path.name}: metadata has no accelerator: GPU"

def test_one_release_version_names_the_tag_colab_opens_installs_and_fetches_from():
    import modlib
    from modlib import remote

    assert re.fullmatch(r"\d+\.\d+\.\d+", modlib.__version__), modlib.__version__
    assert RELEASE == f"v{modlib.__version__}" == remote.RELEASE, (
        f"_config.yml's repository.branch is {RELEASE!r}; modlib.__version__ is {modlib.__version__!r}: "
        f"a release sets both (README, 'Releases')")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["project"]["dynamic"] == ["version"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "modlib.__version__"}


def test_package_metadata_matches_the_configured_repository_and_keeps_colab_packages():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert meta["name"] != "modlib"
    assert meta["urls"]["Homepage"] == URL
    for dep in meta["dependencies"]:
        if dep.split(">")[0] in ("torch", "numpy", "transformers"):
            assert "<" not in dep and "==" not in dep, f"{dep} would make Colab reinstall it"


# The longest code line a notebook page shows without scrolling sideways. Measured in the built
# book in headless Chromium (tests/test_book.py::test_code_column_fits_the_line_limit re-measures
# it): at a 1280 px wide window the code cells' text area is 652 px wide (the 688 px text column
# less the cell's border and 16 px padding each side) and their 14 px monospace font (DejaVu Sans
# Mono here; Menlo, SF Mono, Source Code Pro and Liberation Mono are as wide) takes 8.43 px a
# character: 77 characters. A window with a classic 15 px scrollbar (Windows, most Linux
# desktops) narrows the column to 640 px: 75 characters. Colab's cells are wider.
CODE_LINE_LIMIT = 75
HIDDEN_FROM_THE_PAGE = {"remove-input", "remove-cell"}


def long_code_lines() -> list[str]:
    found = []
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code" or HIDDEN_FROM_THE_PAGE & set(cell.metadata.get("tags", [])):
                continue
            for n, line in enumerate(cell.source.splitlines(), 1):
                if len(line) > CODE_LINE_LIMIT:
                    found.append(f"{path.name} cell {i} line {n}: {len(line)} characters")
    return found


def test_code_lines_fit_the_page_column():
    too_long = long_code_lines()
    assert not too_long, f"{len(too_long)} code lines over {CODE_LINE_LIMIT} characters:\n" + "\n".join(too_long)


SHOWS_SOURCE = ("source_block", "getsource")  # calls that print modlib's code on a page


def shown_sources() -> list[tuple[str, str]]:
    """``(what, text)`` for each library source a notebook shows with ``plots.source_block`` or
    ``inspect.getsource``: the notebooks' own imports (and one-name aliases such as
    ``bl = toy.baselines``) are run to find the functions named."""
    import ast
    import inspect

    from modlib import plots

    found = []
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        trees = []
        for cell in nb.cells:
            if cell.cell_type == "code":
                try:
                    trees.append(ast.parse(cell.source))
                except SyntaxError:  # %pip and other magics
                    continue
        names: dict = {}
        for tree in trees:
            for node in tree.body:
                if isinstance(node, (ast.Import, ast.ImportFrom)) or (
                        isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute)):
                    try:
                        exec(compile(ast.Module([node], []), path.name, "exec"), names)
                    except Exception:  # an alias of something the page computes
                        continue
        for tree in trees:
            for call in ast.walk(tree):
                if not (isinstance(call, ast.Call) and ast.unparse(call.func).split(".")[-1]
                        in SHOWS_SOURCE):
                    continue
                functions = [eval(ast.unparse(a), names) for a in call.args]
                what = f"{path.name}: {ast.unparse(call)}"
                if ast.unparse(call.func).endswith("source_block"):
                    found.append((what, plots.source_block(*functions)))
                else:
                    found.append((what, inspect.getsource(*functions)))
    return found


def test_library_code_a_page_shows_fits_the_page_column():
    """The functions a page prints (``plots.source_block``, ``inspect.getsource``) are shown as
    they are written in ``modlib``: their lines must fit the same column as the page's own code."""
    shown = shown_sources()
    assert any("source_block" in what for what, _ in shown)
    too_long = [f"{what}: {len(line)} characters: {line.strip()[:40]}…"
                for what, text in shown for line in text.splitlines() if len(line) > CODE_LINE_LIMIT]
    assert not too_long, "\n".join(too_long)


def test_what_a_killed_atomic_write_leaves_is_ignored_by_git(tmp_path):
    """kill -9 during ``results.atomic_write_bytes`` leaves ``.<name>.<random>.tmp`` (issue 54, item 8)."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    for path in ("notebooks/results/full/weight_masks/.addmul-seed0.npz.k2j4x.tmp",
                 "notebooks/results/full/.x.json.abc.tmp"):
        done = subprocess.run(["git", "-C", str(root), "check-ignore", "-q", "--no-index", path])
        assert done.returncode == 0, f"{path} is not ignored"


def test_the_slowest_files_named_first_exist_and_xdist_keeps_their_order():
    """conftest.py hands out the slowest test files and notebooks first; a renamed file would
    silently drop out of that order, and without --no-loadscope-reorder pytest-xdist re-sorts the
    files by their number of tests."""
    conftest = ast.parse((ROOT / "conftest.py").read_text())
    slowest = next(ast.literal_eval(node.value) for node in conftest.body if isinstance(node, ast.Assign)
                   and node.targets[0].id == "SLOWEST_FIRST")
    missing = [name for name in slowest if not (ROOT / name).exists()]
    assert missing == [], f"SLOWEST_FIRST names files that do not exist: {missing}"
    assert re.search(r"^PARALLEL := .*--dist loadfile --no-loadscope-reorder", (ROOT / "Makefile").read_text(), re.M)
