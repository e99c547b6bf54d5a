"""Issue 55: the code passes ruff's defect rules (pyproject.toml's [tool.ruff]: syntax errors and
pyflakes' undefined or unused names), here in `make test` and in the pre-commit hook
(.pre-commit-config.yaml), with the ruff version of the lock."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINTED = ("modlib", "tests", "benchmarks")


def _locked(name: str) -> str:
    found = re.search(rf"^{name}==(\S+)$", (ROOT / "constraints.txt").read_text(), re.M)
    assert found, f"{name} is not in constraints.txt"
    return found[1]


def test_the_code_passes_ruff():
    if importlib.util.find_spec("ruff") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("ruff is missing: make setup installs it from constraints.txt")
        pytest.skip("ruff is not installed here (make setup installs it from constraints.txt)")
    run = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", *LINTED],
                         cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, f"ruff found defects (fix them, or run `ruff check --fix`):\n{run.stdout}{run.stderr}"


def test_the_pre_commit_hooks_use_the_locked_ruff_and_strip_notebooks():
    config = (ROOT / ".pre-commit-config.yaml").read_text()
    assert f'"ruff=={_locked("ruff")}"' in config, "keep the hook's ruff pin equal to constraints.txt's"
    assert "id: strip-notebook-outputs" in config and "outputs=[], execution_count=None" in config
    assert re.search(r"^select = \[.*\"F\".*\]$", (ROOT / "pyproject.toml").read_text(), re.M)


def _notebook_names(source: str) -> dict[str, str]:
    """``{name: module}`` for the modlib modules a notebook's code binds to a name."""
    import ast

    bound = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("modlib") and a.asname:
                    bound[a.asname] = a.name
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("modlib"):
            for a in node.names:
                bound[a.asname or a.name] = f"{node.module}.{a.name}"
    return bound


def test_every_modlib_name_a_notebook_reads_exists():
    """Ruff sees no notebook: a name a module only imports for a notebook to read (``figures.not_stored``)
    looks unused to it. Each ``module.name`` the pages read must be there (before any cell runs)."""
    import ast
    import importlib
    import json

    pages = [(p, "\n".join("".join(c["source"]) for c in json.loads(p.read_text())["cells"] if c["cell_type"] == "code"))
             for p in sorted((ROOT / "notebooks").glob("*.ipynb"))]
    missing = []
    for path, source in pages:
        source = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
        modules = {}
        for name, target in _notebook_names(source).items():
            try:
                modules[name] = importlib.import_module(target)
            except ImportError:
                continue  # a function or class imported by name: pyflakes-style checks do not apply
        tree = ast.parse(source)
        for node in ast.walk(tree):  # a name the page also assigns is not only the module
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                modules.pop(node.id, None)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
                if not hasattr(modules[node.value.id], node.attr):
                    missing.append(f"{path.name}: {node.value.id}.{node.attr}")
    assert not missing, "the notebooks read names their modules do not have: " + ", ".join(sorted(set(missing)))
