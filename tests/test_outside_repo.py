"""Colab, simulated: the package installed non-editable (as a notebook's install cell does), and one
chapter notebook copied out of the repository and run there at the smoke profile, so that nothing
depends on the repository's layout (the results store, data files, paths next to the notebook)."""

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


def test_a_chapter_runs_at_smoke_outside_the_repository(site, tmp_path):
    work, store = tmp_path / "content", tmp_path / "store"
    work.mkdir()
    env = _env(site, MODLIB_RESULTS=str(store), MODLIB_PROFILE="smoke")
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
    ran = nbformat.read(work / "out.ipynb", as_version=4)
    printed = "".join(o.get("text", "") for c in ran.cells if c.cell_type == "code" for o in c.outputs)
    assert "Successfully installed" not in printed  # the install cell found the package installed
    assert list((store / "smoke").glob("*/*.json")), "the chapter stored nothing in $MODLIB_RESULTS"
    assert sorted(p.name for p in work.iterdir()) == sorted([NOTEBOOK.name, "out.ipynb"])  # wrote nothing beside it
