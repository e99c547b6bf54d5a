"""The GitHub workflow (.github/workflows/book.yml): tests pull requests with the README's command,
publishes the book from main, calls only make targets that `make test` runs itself, and lints clean
with whichever workflow linter is installed (npm's @action-validator/cli, PyPI's check-jsonschema)."""

import importlib.util
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"


def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def make_test_targets() -> set[str]:
    """``test``, its prerequisites and the targets its recipe makes (``$(MAKE) book``)."""
    text = (ROOT / "Makefile").read_text()
    match = re.search(r"^test:([^\n]*)\n((?:\t[^\n]*\n)+)", text, re.M)
    assert match, "no test target in the Makefile"
    return {"test", *match.group(1).split(), *re.findall(r"\$\(MAKE\) ([\w-]+)", match.group(2))}


def runs(job: dict) -> list[str]:
    return [step["run"] for step in job["steps"] if "run" in step]


def test_every_command_is_a_make_target_that_make_test_runs():
    allowed = make_test_targets()
    assert {"setup", "book"} <= allowed
    for name, job in workflow()["jobs"].items():
        for command in runs(job):
            words = shlex.split(command)
            assert words[0] == "make" and len(words) >= 2, f"{name}: {command!r} is not a make target"
            targets = [w for w in words[1:] if "=" not in w and not w.startswith("-")]
            assert set(targets) <= allowed, f"{name}: {command!r} calls a target make test does not run"


def test_pull_requests_run_the_readme_test_command_and_main_publishes_the_book():
    flow = workflow()
    on = flow.get("on", flow.get(True))  # YAML 1.1 reads a bare `on` as True
    assert "pull_request" in on and on["push"]["branches"] == ["main"]
    jobs = flow["jobs"]
    assert "make test" in (ROOT / "README.md").read_text()
    assert runs(jobs["test"]) == ["make test"] and "pull_request" in jobs["test"]["if"]
    assert runs(jobs["build"]) == ["make book"] and "refs/heads/main" in jobs["build"]["if"]
    uploads = [s for s in jobs["build"]["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact")]
    assert uploads and uploads[0]["with"]["path"] == "_build/html"
    assert jobs["deploy"]["needs"] == "build"
    assert any(s.get("uses", "").startswith("actions/deploy-pages") for s in jobs["deploy"]["steps"])
    assert jobs["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    # torch: the CPU build, installed first by the Makefile; never a multi-GB CUDA one
    assert flow["env"]["TORCH"].endswith("+cpu") and "whl/cpu" in flow["env"]["PIP_EXTRA_INDEX_URL"]


def test_the_workflow_lints_clean():
    ran = []
    validator = shutil.which("action-validator")
    if validator:
        done = subprocess.run([validator, str(WORKFLOW)], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        ran.append("action-validator")
    if importlib.util.find_spec("check_jsonschema"):
        done = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema",
                               "vendor.github-workflows", str(WORKFLOW)], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        ran.append("check-jsonschema")
    if not ran:
        pytest.skip("no workflow linter installed (npm install -g @action-validator/cli, "
                    "or pip install check-jsonschema)")
