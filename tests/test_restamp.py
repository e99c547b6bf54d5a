"""python -m modlib.restamp: stale results are carried over only when the old and the new code
compute the same numbers (chapter 1 at smoke, in a throw-away git repository)."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from modlib import fingerprint, restamp, results


def git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A repository holding a copy of modlib, committed, and chapter 1's smoke results made by it
    (made once for this file: each test edits a copy of it, :func:`repo`)."""
    root = tmp_path_factory.mktemp("made") / "repo"
    shutil.copytree(fingerprint.PACKAGE_DIR, root / "modlib", ignore=shutil.ignore_patterns("__pycache__"))
    # as the project's own .gitignore does: the runs below write bytecode caches into modlib/
    (root / ".gitignore").write_text("__pycache__/\n")
    git(root, "init", "-q")
    git(root, "add", ".gitignore", "modlib")
    git(root, "commit", "-q", "-m", "code that made the results")
    make = ("import torch\nfrom modlib import jobs\n"
            "for _, c in jobs.jobs(['redundant_input_toy'], 'smoke').values(): c(torch.device('cpu'))")
    subprocess.run([sys.executable, "-c", make], env=env(root), check=True, capture_output=True, cwd=root)
    return root


@pytest.fixture
def repo(made, tmp_path):
    """A test's own copy of :func:`made` (the repository, its history and its store)."""
    root = tmp_path / "repo"
    shutil.copytree(made, root, symlinks=True)
    return root


def env(root):
    return {**os.environ, "PYTHONPATH": str(root), "MODLIB_RESULTS": str(root / "store"),
            "OMP_NUM_THREADS": "1", "MODLIB_FULL_FROM_STORE": ""}


def run(root, *args):
    return subprocess.run([sys.executable, "-m", "modlib.restamp", "--profile", "smoke", *args,
                           "redundant_input_toy"], env=env(root), capture_output=True, text=True, cwd=root)


def edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


TOTAL = "member_loss(forward(template, leaves, x), y).sum()"


def test_a_change_that_computes_the_same_numbers_is_carried_over(repo):
    edit(repo / "modlib" / "training.py", TOTAL, f"1.0 * {TOTAL}")  # stale, yet bit for bit the same
    # the sweep's four results and the five studies that train networks with it (mechanism, scale,
    # coverage, mechanism-norm, scale-lr; the baselines and the GD trajectory take no such step)
    assert "9 stale" in run(repo, "--dry-run").stdout
    done = run(repo)
    assert done.returncode == 0, done.stderr
    assert "re-stamped 9" in done.stdout
    assert "every stored result is current" in run(repo, "--dry-run").stdout
    meta = json.loads(next((repo / "store" / "smoke").rglob("sweep-*.json")).read_text())
    assert "bit for bit" in meta["restamped"][-1]["reason"] and "changed: train_seeds" in meta["restamped"][-1]["why_stale"]


def test_a_change_that_computes_other_numbers_is_refused(repo):
    edit(repo / "modlib" / "training.py", TOTAL, f"1.001 * {TOTAL}")
    done = run(repo)
    assert done.returncode == 1
    assert "NOT re-stamped" in done.stdout and "compute different smoke results" in done.stdout
    assert "9 stale" in run(repo, "--dry-run").stdout  # still stale: nothing was stamped


def test_results_the_old_code_did_not_make_are_refused(repo):
    edit(repo / "modlib" / "training.py", TOTAL, f"1.0 * {TOTAL}")
    git(repo, "commit", "-q", "-am", "a later commit, which did not make the stored results")
    edit(repo / "modlib" / "training.py", f"1.0 * {TOTAL}", f"1.0 * 1.0 * {TOTAL}")
    done = run(repo)
    assert done.returncode == 1 and "were not made by it" in done.stdout


def test_compare_finds_any_difference(tmp_path, monkeypatch):
    def store(where, value, metric=1.0):
        monkeypatch.setenv("MODLIB_RESULTS", str(where))
        results.fetch("chap", "r", {"seeds": 1}, lambda: ({"acc": metric}, {"a": np.array([value])}),
                      profile="smoke", device="cpu", code="modlib.data.digits")
        return where / "smoke"

    a, same = store(tmp_path / "a", 0.5), store(tmp_path / "b", 0.5)
    assert restamp.compare(a, same) is None
    assert "array 'a' differs" in restamp.compare(a, store(tmp_path / "c", np.nextafter(0.5, 1)))
    assert "metrics differ" in restamp.compare(a, store(tmp_path / "d", 0.5, metric=1.0000001))
    # a job the change added has nothing old to compare with; a job it dropped is a difference
    monkeypatch.setenv("MODLIB_RESULTS", str(tmp_path / "b"))
    results.fetch("chap", "added", {"seeds": 1}, lambda: ({"acc": 1.0}, {"a": np.array([0.5])}),
                  profile="smoke", device="cpu", code="modlib.data.digits")
    assert restamp.compare(a, same) is None
    assert "no longer makes: ['chap/added.json']" in restamp.compare(same, a)


def test_a_relabelling_is_proven_on_the_smoke_results_before_it_is_applied(tmp_path, monkeypatch):
    def store(where, label):
        monkeypatch.setenv("MODLIB_RESULTS", str(where))
        results.fetch("chap", "r", {"seeds": 1}, lambda: ({"rows": [f"{label} mask"], "n": 2}, {"a": np.ones(2)}),
                      profile="smoke", device="cpu", code="modlib.data")
        return where / "smoke"

    old, new = store(tmp_path / "old", "*"), store(tmp_path / "new", "×")
    assert "metrics differ" in restamp.compare(old, new)
    assert restamp.compare(old, new, {"*": "×"}) is None
    assert restamp.relabel({"* mask": ["+ mask", "* mask removed", 3]}, {"*": "×"}) == {"× mask": ["+ mask", "× mask removed", 3]}


RULE = 'text = f"{unit.name}\\n" + "\\n".join(dumps)'


def test_a_change_of_the_fingerprint_rule_alone_is_carried_over_without_smoke_runs(repo):
    edit(repo / "modlib" / "fingerprint.py", RULE, RULE.replace('{unit.name}', '{unit.name}:'))
    stale = run(repo, "--dry-run").stdout
    done = run(repo, "--rule-only")
    assert done.returncode == 0, done.stderr
    assert "re-stamped" in done.stdout and "stale" in stale
    assert "every stored result is current" in run(repo, "--dry-run").stdout
    meta = json.loads(next((repo / "store" / "smoke").rglob("sweep-*.json")).read_text())
    assert "only modules that compute nothing changed (modlib/fingerprint.py)" in meta["restamped"][-1]["reason"]


def test_rule_only_is_refused_when_code_that_computes_changed(repo):
    edit(repo / "modlib" / "fingerprint.py", RULE, RULE.replace('{unit.name}', '{unit.name}:'))
    edit(repo / "modlib" / "training.py", TOTAL, f"1.0 * {TOTAL}")
    done = run(repo, "--rule-only")
    assert done.returncode == 1
    assert "files that may compute results differ from HEAD: modlib/training.py" in done.stdout


@pytest.mark.parametrize("args, message", [
    (["--profile", "bogus"], "--profile: unknown profile 'bogus'; valid profiles are"),
    (["--against", "no-such-rev"], "--against 'no-such-rev' is not a commit"),
])
def test_bad_arguments_are_usage_errors(args, message, capsys):
    """Issue 54, item 8."""
    with pytest.raises(SystemExit) as err:
        restamp.main([*args, "redundant_input_toy"])
    assert err.value.code == 2 and message in capsys.readouterr().err


def test_a_stale_result_of_a_kind_the_proof_did_not_compute_is_refused_unless_a_reason_is_given(monkeypatch):
    """Issue 54, item 3: chapter 5's smoke computes no Number-Contact result, so its proof carries none."""
    stamped = []

    def compute(name):
        def run(device):
            stored = results.Result(name, {}, {}, {}, {})
            stamped.append((name, results._RESTAMP(stored, "changed: x")))
        return run

    names = ["chap/sv-plural-0", "chap/sv-plural-7", "chap/number-contact-1"]
    indexed = []  # the pinned index of stored full results is rewritten once results are stamped
    monkeypatch.setattr(restamp.remote, "write_index", lambda: indexed.append(True))
    monkeypatch.setattr(restamp, "stale", lambda chapter, profile: {n: "changed: x" for n in names})
    monkeypatch.setattr(restamp, "prove", lambda *args: ("smoke proof", {"chap/sv-plural-#": None}))
    monkeypatch.setattr(restamp.jobs, "jobs", lambda chapters, profile: {n: ((), compute(n)) for n in names})
    report = restamp.restamp(["chap"])["chap"]
    assert report["restamped"] == ["chap/sv-plural-0", "chap/sv-plural-7"]
    assert "computed no result of the kind of chap/number-contact-1" in report["refused"]
    assert stamped == [("chap/sv-plural-0", "smoke proof"), ("chap/sv-plural-7", "smoke proof")]
    assert indexed == [True]
    stamped.clear()
    report = restamp.restamp(["chap"], unproven="only a label changed")["chap"]
    assert report["refused"] is None and len(report["restamped"]) == 3
    assert stamped[0] == ("chap/number-contact-1", "smoke proof; its kind (chap/number-contact-#) was not "
                                                   "computed by the proof, carried because: only a label changed")


def test_a_stale_result_larger_than_the_proof_computed_is_refused_unless_a_reason_is_given(monkeypatch, store):
    """Issue 54's probe 3: a change acting only on seeds 64 and later leaves chapter 1's smoke sweep
    (2 seeds) bit for bit alike, so the proof holds, yet the stored full sweep (100 seeds) computes
    otherwise; it was re-stamped with rc 0, the caveat only inside the result. A result whose config
    is larger than every one the proof computed of its kind is now refused and named, like one of a
    kind it did not compute."""
    stamped = []

    def compute(name):
        def run(device):
            stamped.append((name, results._RESTAMP(results.Result(name, {}, {}, {}, {}), "changed: x")))
        return run

    configs = {"chap/sweep-7": {"seeds": 100, "lr": 0.5, "hidden": [8, 8, 8]},
               "chap/sweep-0": {"seeds": 2, "lr": 0.1, "hidden": [8, 8]},  # the size the proof ran
               "chap/study": {"seeds": 2, "inner": {"epochs": 90}}}
    for name, config in configs.items():
        path = store / "full" / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"config": config}))
    proven = {"chap/sweep-#": [{"seeds": 2, "lr": 0.1, "hidden": [8, 8]}],
              "chap/study": [{"seeds": 2, "inner": {"epochs": 8}}, {"seeds": 1, "inner": {"epochs": 9}}]}
    monkeypatch.setattr(restamp, "stale", lambda chapter, profile: {n: "changed: x" for n in configs})
    monkeypatch.setattr(restamp, "prove", lambda *args: ("smoke proof", proven))
    monkeypatch.setattr(restamp.jobs, "jobs", lambda chapters, profile: {n: ((), compute(n)) for n in configs})
    report = restamp.restamp(["chap"])["chap"]
    assert report["restamped"] == ["chap/sweep-0"]
    assert "chap/sweep-7 at a smaller size only (hidden 3 > 2, seeds 100 > 2)" in report["refused"]
    assert "chap/study at a smaller size only (inner.epochs 90 > 9)" in report["refused"]
    assert "--unproven REASON" in report["refused"]
    stamped.clear()
    report = restamp.restamp(["chap"], unproven="the change only renames a label")["chap"]
    assert report["refused"] is None and len(report["restamped"]) == 3
    assert ("chap/sweep-7", "smoke proof; the proof computed its kind at a smaller size only (hidden 3 > 2, "
                            "seeds 100 > 2), carried because: the change only renames a label") in stamped
    assert ("chap/sweep-0", "smoke proof") in stamped
