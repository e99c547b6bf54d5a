"""The repository's own promises: clean notebooks, one repository URL, Colab-ready first cells."""

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
    params = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1 and 'os.environ.get("MODLIB_PROFILE", "default")' in params[0].source


def test_package_metadata_matches_the_configured_repository_and_keeps_colab_packages():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert meta["name"] != "modlib"
    assert meta["urls"]["Homepage"] == URL
    for dep in meta["dependencies"]:
        if dep.split(">")[0] in ("torch", "numpy", "transformers"):
            assert "<" not in dep and "==" not in dep, f"{dep} would make Colab reinstall it"
