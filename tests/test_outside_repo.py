"""Colab, simulated: the package installed non-editable (as a notebook's install cell does), and one
chapter notebook copied out of the repository and run there at the smoke profile, so that nothing
depends on the repository's layout (the results store, data files, paths next to the notebook); and
at the full profile, with the book's stored results fetched from a file:// copy of the repository."""

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "redundant_input_toy.ipynb"  # the cheapest chapter at smoke (~15 s)
FULL = ROOT / "notebooks" / "results" / "full"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """``modlib`` installed, not editable, into a folder of its own, from a copy of the sources a
    ``pip install git+URL`` builds from (built outside the checkout, which it leaves untouched)."""
    tmp = tmp_path_factory.mktemp("colab")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "modlib", src / "modlib", ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp / "site"
    # with setuptools at hand (make setup's venv), built offline; else pip fetches it to build
    offline = ["--no-build-isolation", "--no-index"] if importlib.util.find_spec("setuptools") else []
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", *offline, "--no-compile",
                    "--target", str(target), str(src)], check=True, capture_output=True, text=True, cwd=tmp)
    return target


def _env(site: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("MODLIB_RESULTS", "MODLIB_FULL_FROM_STORE",
                                                            "MODLIB_FETCH_RESULTS", "PYTHONPATH")}
    return {**env, "PYTHONPATH": str(site), "OMP_NUM_THREADS": "1", "TQDM_DISABLE": "1", **extra}


def test_the_installed_package_has_every_file_of_modlib(site):
    here = {p.relative_to(ROOT / "modlib") for p in (ROOT / "modlib").rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}
    installed = {p.relative_to(site / "modlib") for p in (site / "modlib").rglob("*")
                 if p.is_file() and "__pycache__" not in p.parts}
    assert here - installed == set(), "files of modlib that a pip install leaves out (package data?)"


def run_copied_notebook(site: Path, tmp_path: Path, **env) -> tuple[Path, str]:
    """Run chapter 1's notebook, copied to a folder of its own, against the installed package;
    return the results store it used and the text it printed."""
    work, store = tmp_path / "content", tmp_path / "store"
    work.mkdir()
    env = _env(site, MODLIB_RESULTS=str(store), **env)
    found = subprocess.run([sys.executable, "-c", "import modlib, modlib.results as r; "
                            "print(modlib.__file__); print(r.default_root())"],
                           env=env, cwd=work, capture_output=True, text=True, check=True).stdout.split()
    assert found == [str(site / "modlib" / "__init__.py"), str(store)], "modlib came from elsewhere"
    notebook = work / NOTEBOOK.name
    shutil.copy(NOTEBOOK, notebook)
    done = subprocess.run([sys.executable, "-m", "papermill", notebook.name, "out.ipynb", "-k", "python3",
                           "--cwd", str(work), "--execution-timeout", "600", "--no-progress-bar"],
                          env=env, cwd=work, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    assert sorted(p.name for p in work.iterdir()) == sorted([NOTEBOOK.name, "out.ipynb"])  # wrote nothing beside it
    ran = nbformat.read(work / "out.ipynb", as_version=4)
    printed = "".join(o.get("text", "") + o.get("data", {}).get("text/markdown", "")
                      for c in ran.cells if c.cell_type == "code" for o in c.outputs)
    assert "Successfully installed" not in printed  # the install cell found the package installed
    return store, printed


def test_a_chapter_runs_at_smoke_outside_the_repository(site, tmp_path):
    store, _ = run_copied_notebook(site, tmp_path, MODLIB_PROFILE="smoke")
    assert list((store / "smoke").glob("*/*.json")), "the chapter stored nothing in $MODLIB_RESULTS"


def test_at_full_it_fetches_the_books_results_from_a_file_copy_and_draws_the_page_from_them(site, tmp_path):
    copy = tmp_path / "repo" / "notebooks" / "results" / "full"
    copy.mkdir(parents=True)
    shutil.copy(FULL / "_index.json", copy)
    shutil.copytree(FULL / "redundant_input_toy", copy / "redundant_input_toy")
    store, printed = run_copied_notebook(
        site, tmp_path, MODLIB_PROFILE="full", MODLIB_FETCH_RESULTS="1",
        MODLIB_RESULTS_URL=(tmp_path / "repo").as_uri(),
        MODLIB_FULL_FROM_STORE="1",  # a result that is missing or stale raises: hours are never spent
        # the explorer's pre-rendered views are drawn from these results by the book build (make test
        # checks them in the built page, tests/test_explorers.py); here the live one is enough, as in Colab
        MODLIB_STATIC_EXPLORERS="0")
    assert "This page was computed at profile: full" in printed
    assert "Fetched 11 of the book's stored full results for 'redundant_input_toy'" in printed
    for path in (FULL / "redundant_input_toy").glob("[!_]*.*"):  # the sweep's four results and the studies' three
        assert (store / "full" / "redundant_input_toy" / path.name).read_bytes() == path.read_bytes()
