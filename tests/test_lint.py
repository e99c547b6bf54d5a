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
