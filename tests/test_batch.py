import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import numpy as np
import pytest

from modlib import batch, results

# A tiny chapter: two stored experiments; between them it "crashes" while a flag file exists.
# Every computation appends a line to a log, so the test can count what was recomputed.
SOURCE = '''
import pathlib
from modlib import results
log = pathlib.Path(r"{log}")
def compute(name):
    def run():
        with log.open("a") as f:
            f.write(name + "\\n")
        return {{"name": name}}, {{}}
    return run
results.fetch("{stem}", "first", {{"seeds": 1}}, compute("{stem}/first"), profile=profile, device="cpu", code="modlib.data.digits")
if pathlib.Path(r"{flag}").exists():
    raise RuntimeError("simulated interruption")
results.fetch("{stem}", "second", {{"seeds": 1}}, compute("{stem}/second"), profile=profile, device="cpu", code="modlib.data.digits")
'''


def one_cell_notebook(path, source):
    """A notebook of a parameters cell and one code cell, ``source``."""
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('profile = "default"')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(source)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path


def make_notebook(path, log, flag):
    return one_cell_notebook(path, SOURCE.format(log=log, flag=flag, stem=path.stem))


def test_batch_skips_current_notebooks_and_resumes_after_an_interruption(tmp_path, store, capsys):
    log, flag = tmp_path / "computed.log", tmp_path / "crash"
    flag.touch()
    nbs = [make_notebook(tmp_path / f"{n}.ipynb", log, flag) for n in ("one", "two")]
    out = tmp_path / "out"

    rows = batch.run(nbs, "smoke", out)
    assert [r["status"] for r in rows] == ["failed", "failed"]
    assert "simulated interruption" in rows[0]["error"]
    assert log.read_text().split() == ["one/first", "two/first"]

    flag.unlink()  # the interruption is over: run again
    rows = batch.run(nbs, "smoke", out)
    assert [r["status"] for r in rows] == ["ran", "ran"]
    # finished experiments were loaded, not recomputed
    assert log.read_text().split() == ["one/first", "two/first", "one/second", "two/second"]
    assert (out / "smoke" / "one.ipynb").exists()

    rows = batch.run(nbs, "smoke", out)
    assert [r["status"] for r in rows] == ["skipped (current)"] * 2
    text = batch.table(rows)
    assert text.splitlines()[0].split() == ["notebook", "status", "wall", "time", "device"]
    assert "one.ipynb" in text and "cpu" in text

    nb = nbformat.read(nbs[1], as_version=4)  # editing a notebook makes it stale again
    nb.cells[1].source += "\nprint('edited')"
    nbformat.write(nb, nbs[1])
    assert [r["status"] for r in batch.run(nbs, "smoke", out)] == ["skipped (current)", "ran"]


def test_batch_rejects_bad_input(tmp_path, capsys):
    with pytest.raises(SystemExit):
        batch.main(["--profile", "gigantic"])
    assert "unknown profile 'gigantic'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        batch.main(["--profile", "smoke", str(tmp_path / "missing.ipynb")])
    assert "no such notebook" in capsys.readouterr().err


def test_a_deleted_or_changed_result_makes_the_notebook_run_again(tmp_path, store):
    log, flag = tmp_path / "computed.log", tmp_path / "no-crash"
    nb = make_notebook(tmp_path / "one.ipynb", log, flag)
    out = tmp_path / "out"
    assert [r["status"] for r in batch.run([nb], "smoke", out)] == ["ran"]
    assert batch.is_current(nb, "smoke")
    (store / "smoke" / "one" / "second.npz").unlink()  # the manifest calls it current; it no longer loads
    reason = batch.stale_reason(nb, "smoke")
    assert "second.json is missing, changed or unreadable" in reason
    assert [r["status"] for r in batch.run([nb], "smoke", out)] == ["ran"]
    assert log.read_text().split() == ["one/first", "one/second", "one/second"]  # only the lost one again
    assert batch.is_current(nb, "smoke")


def test_a_corrupt_manifest_runs_the_notebook_again_and_says_why(tmp_path, store, capsys):
    nb = make_notebook(tmp_path / "one.ipynb", tmp_path / "log", tmp_path / "no-crash")
    batch.run([nb], "smoke", tmp_path / "out")
    manifest = batch.manifest_path(nb, "smoke")
    manifest.write_text(manifest.read_text()[:40])
    assert f"its manifest {manifest} is unreadable" in batch.stale_reason(nb, "smoke")
    capsys.readouterr()
    assert [r["status"] for r in batch.run([nb], "smoke", tmp_path / "out")] == ["ran"]
    assert "is unreadable" in capsys.readouterr().out
    assert batch.is_current(nb, "smoke")


def test_a_relative_results_root_puts_results_and_manifest_in_one_place(tmp_path, monkeypatch):
    nbs, work = tmp_path / "nbs", tmp_path / "work"
    nbs.mkdir(), work.mkdir()
    nb = make_notebook(nbs / "one.ipynb", tmp_path / "log", tmp_path / "no-crash")
    monkeypatch.chdir(work)
    monkeypatch.setenv("MODLIB_RESULTS", f"rel-{tmp_path.name}")  # the notebook runs in nbs/
    assert [r["status"] for r in batch.run([nb], "smoke", Path("out"))] == ["ran"]
    assert (work / "out" / "smoke" / "one.ipynb").exists() and (work / "out" / "smoke" / "one.kernel.log").exists()
    root = work / f"rel-{tmp_path.name}" / "smoke" / "one"
    assert sorted(p.name for p in root.iterdir()) == ["_batch.json", "first.json", "first.npz",
                                                      "second.json", "second.npz"]
    assert not (nbs / f"rel-{tmp_path.name}").exists()


SLOW = '''
import time
from modlib import results
results.fetch("slow", "first", {"seeds": 1}, lambda: ({}, {}), profile=profile, device="cpu", code="modlib.data.digits")
print("started", flush=True)
time.sleep(60)
'''


def test_ctrl_c_ends_with_the_summary_not_a_traceback(tmp_path, store):
    path = one_cell_notebook(tmp_path / "slow.ipynb", SLOW)
    # as a terminal's Ctrl-C does: SIGINT to the whole process group (the runner and its kernel)
    # (a job started in the background by a non-interactive shell ignores SIGINT, and its children inherit
    # that; a terminal's process does not: restore the default, under which Python raises KeyboardInterrupt)
    proc = subprocess.Popen([sys.executable, "-m", "modlib.batch", "--profile", "smoke", str(path),
                             "--out", str(tmp_path / "out")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    first = store / "smoke" / "slow" / "first.json"
    deadline = time.monotonic() + 120
    while not first.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert first.exists(), proc.communicate()[0]
    time.sleep(1.0)
    os.killpg(proc.pid, signal.SIGINT)
    output, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, output
    assert "interrupted: 0 of 1 notebooks done; not finished: slow.ipynb" in output
    assert "Traceback" not in output and "zmq" not in output.lower(), output
    assert results.read(first) is not None  # what was stored stays


def test_a_bad_thread_count_is_refused_with_the_value(capsys):
    with pytest.raises(SystemExit):
        batch.main(["--profile", "smoke", "--threads", "0", "no_such.ipynb"])
    assert "threads=0" in capsys.readouterr().err


# A cell that stalls on its first ``stalls`` tries (it sleeps past the cell timeout) and returns on the
# next one; every try appends a line to a log.
STALL = '''
import pathlib, time
log = pathlib.Path(r"{log}")
with log.open("a") as f:
    f.write("try\\n")
if len(log.read_text().split()) <= {stalls}:
    time.sleep(120)  # stands for a cell whose kernel never answers
'''


@pytest.mark.parametrize("stalls, status", [(1, "ran"), (2, "failed")])
def test_a_stalled_cell_times_out_and_its_notebook_is_retried_once(tmp_path, store, stalls, status):
    log = tmp_path / "tries.log"
    nb = one_cell_notebook(tmp_path / "stall.ipynb", STALL.format(log=log, stalls=stalls))
    start = time.monotonic()
    rows = batch.run([nb], "smoke", tmp_path / "out", cell_timeout=3)
    assert time.monotonic() - start < 90  # not the cell's 120 s, let alone for ever
    assert [r["status"] for r in rows] == [status]
    assert log.read_text().split() == ["try", "try"]  # one retry, no more
    text = batch.table(rows)
    if status == "ran":
        assert ("the first try stopped after the cell 'import pathlib, time' ran past the cell timeout of 3 s"
                in text)
        assert batch.is_current(nb, "smoke")
    else:
        assert "the cell 'import pathlib, time' ran past the cell timeout of 3 s on both tries" in rows[0]["error"]
        assert "--cell-timeout" in rows[0]["error"]
        assert not batch.is_current(nb, "smoke")


def test_the_cell_timeout_has_a_default_per_profile_and_a_flag(tmp_path, store, monkeypatch):
    assert batch.CELL_TIMEOUT["smoke"] <= batch.CELL_TIMEOUT["default"] <= batch.CELL_TIMEOUT["full"]
    seen = []
    monkeypatch.setattr(batch, "run", lambda *a, **kw: seen.append(kw["cell_timeout"]) or [])
    assert batch.main(["--profile", "smoke", "--cell-timeout", "90"]) == 0
    assert batch.main(["--profile", "smoke"]) == 0
    assert batch.main(["--profile", "smoke", "--cell-timeout", "0"]) == 0
    assert seen == [90, None, 0]  # None: the profile's default; 0: no timeout


def test_the_summary_keeps_the_whole_remake_command(tmp_path, store):
    command = "python -m modlib.batch --profile full " + " ".join(f"notebooks/chapter_{i}.ipynb" for i in range(12))
    source = ("from modlib import results\n"
              f"raise results.StaleResultError('no stored result x; Remake it with: {command}')")
    rows = batch.run([one_cell_notebook(tmp_path / "stale.ipynb", source)], "smoke", tmp_path / "out")
    assert rows[0]["status"] == "failed" and len(command) > 200
    assert rows[0]["error"].endswith(command) and batch.table(rows).endswith(command)


@pytest.mark.parametrize("args, message", [
    (["--workers", "-3", "--dry-run"], "workers=-3 is not valid; give a whole number of at least 1"),
    (["--workers", "2"], "--workers only applies with --executor local"),
    (["--dry-run"], "--dry-run only applies with --executor local or slurm"),
    (["--partition", "gpu", "--time", "60"], "--partition, --time only apply with --executor slurm"),
    (["--executor", "local", "--partition", "gpu", "--cpus", "4"],
     "--partition, --cpus only apply with --executor slurm"),
    (["--executor", "slurm", "--time", "60", "--workers", "2"], "--workers only applies with --executor local"),
    (["--executor", "slurm", "--time", "60", "--threads", "2"],
     "--threads only applies without --executor or with --executor local"),
    (["--executor", "local", "--cell-timeout", "60"], "--cell-timeout only applies without --executor"),
    (["--executor", "local", "--workers", "0"], "workers=0 is not valid; give a whole number of at least 1"),
    (["--executor", "local", "--threads", "-1"], "threads=-1 is not valid; give a whole number of at least 1"),
    (["--threads", "two"], "threads='two' is not valid; give a whole number of at least 1"),
    (["--cell-timeout", "-5"], "cell-timeout=-5 is not valid; give seconds >= 0 (0: no timeout)"),
])
def test_flags_that_do_not_apply_and_bad_counts_are_refused_before_anything_runs(tmp_path, store, capsys, args,
                                                                                 message):
    log = tmp_path / "computed.log"
    nb = make_notebook(tmp_path / "one.ipynb", log, tmp_path / "no-crash")
    with pytest.raises(SystemExit) as exit_:
        batch.main(["--profile", "smoke", *args, "--out", str(tmp_path / "out"), str(nb)])
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err
    assert not log.exists()  # the notebook did not run


def test_a_manifest_of_the_wrong_shape_is_stale_with_a_reason_not_a_traceback(tmp_path, store):
    nb = make_notebook(tmp_path / "one.ipynb", tmp_path / "log", tmp_path / "no-crash")
    batch.run([nb], "smoke", tmp_path / "out")
    manifest = batch.manifest_path(nb, "smoke")
    good = json.loads(manifest.read_text())
    for bad, why in [({**good, "results": list(good["results"])}, "'results' is a list"),
                     ({**good, "results": {"first": 3}}, "'results' is a dict"),
                     ([good], "it holds a list"), ("ok", "it holds a str")]:
        manifest.write_text(json.dumps(bad))
        reason = batch.stale_reason(nb, "smoke")
        assert f"its manifest {manifest} is unreadable" in reason and why in reason, reason
    assert [r["status"] for r in batch.run([nb], "smoke", tmp_path / "out")] == ["ran"]
    assert batch.is_current(nb, "smoke")


def read_only(folder):
    for sub in [folder, *sorted(p for p in folder.rglob("*") if p.is_dir())]:
        sub.chmod(0o555)


def without_root_override():
    """In a child process before it runs: drop root's power to write where the permissions forbid
    (CAP_DAC_OVERRIDE, from the bounding set, so the program it runs starts without it)."""
    import ctypes

    PR_CAPBSET_DROP, CAP_DAC_OVERRIDE = 24, 1
    if ctypes.CDLL(None, use_errno=True).prctl(PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def as_a_user(args, **kw):
    """Run ``args``, without root's override of file permissions when the tests run as root (for root
    no folder is read-only)."""
    if os.geteuid() == 0:
        kw["preexec_fn"] = without_root_override
    return subprocess.run(list(map(str, args)), capture_output=True, text=True, timeout=600, **kw)


@pytest.fixture
def writable_again(tmp_path):
    yield
    for folder in [tmp_path, *(p for p in tmp_path.rglob("*") if p.is_dir())]:
        folder.chmod(0o755)


def test_a_read_only_store_is_refused_before_anything_is_computed_and_named(tmp_path, store, writable_again):
    log = tmp_path / "computed.log"
    current = [make_notebook(tmp_path / f"{n}.ipynb", log, tmp_path / "no-crash") for n in ("one", "two")]
    assert [r["status"] for r in batch.run(current, "smoke", tmp_path / "out")] == ["ran", "ran"]
    new = make_notebook(tmp_path / "three.ipynb", log, tmp_path / "no-crash")
    log.unlink()
    read_only(store)
    if as_a_user(["touch", store / "probe"]).returncode == 0:
        pytest.skip("no folder can be made read-only here (root, and its override cannot be dropped)")
    out = ["--out", tmp_path / "out"]
    cases = [
        # every result current: only the manifests would be written
        (["--profile", "smoke", "--force", *current, *out], store / "smoke" / "one"),
        (["--profile", "smoke", new, *out], store / "smoke" / "three"),
        (["--profile", "smoke", "--executor", "local", "notebooks/redundant_input_toy.ipynb", *out],
         store / "smoke" / "redundant_input_toy"),
    ]
    for args, folder in cases:
        proc = as_a_user([sys.executable, "-m", "modlib.batch", *args])
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert f"the results folder {folder} is not writable" in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr, proc.stderr
        assert not log.exists()  # nothing ran
    # a dry run only reads
    proc = as_a_user([sys.executable, "-m", "modlib.batch", "--profile", "smoke", "--executor", "local",
                      "--dry-run", *out, "notebooks/redundant_input_toy.ipynb"])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_manifest_that_cannot_be_written_fails_its_notebook_and_the_next_one_runs(tmp_path, store, monkeypatch):
    log = tmp_path / "computed.log"
    nbs = [make_notebook(tmp_path / f"{n}.ipynb", log, tmp_path / "no-crash") for n in ("one", "two")]
    write = results.atomic_write_bytes

    def refuse_one(path, data):
        if path.parent.name == "one":
            raise PermissionError(13, "Permission denied", str(path))
        write(path, data)

    monkeypatch.setattr(results, "atomic_write_bytes", refuse_one)
    rows = batch.run(nbs, "smoke", tmp_path / "out")
    assert [r["status"] for r in rows] == ["failed", "ran"]
    assert f"its manifest {batch.manifest_path(nbs[0], 'smoke')} cannot be written" in rows[0]["error"]


def test_a_modlib_file_edited_while_a_notebook_runs_leaves_it_stale(tmp_path, store, monkeypatch):
    """The manifest records the fingerprint of the code that ran, not the files on disk after the
    run (issue 54, item 4)."""
    import shutil

    import papermill

    copy = tmp_path / "modlib"
    shutil.copytree(batch.MODLIB_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(batch, "MODLIB_DIR", copy)
    nb = one_cell_notebook(tmp_path / "chap.ipynb", "x = 1")

    def run_while_someone_edits(*args, **kwargs):
        (copy / "training.py").write_text((copy / "training.py").read_text() + "\nEDITED = 1\n")

    monkeypatch.setattr(papermill, "execute_notebook", run_while_someone_edits)
    assert [r["status"] for r in batch.run([nb], "smoke", tmp_path / "out")] == ["ran"]
    assert batch.stale_reason(nb, "smoke") == "its code or modlib changed"


def test_a_store_without_room_is_refused_before_computing_naming_folder_and_space(tmp_path, store, monkeypatch):
    """Issue 54, item 5: a full disk is found before hours of computing, not after."""
    import shutil

    computed = []
    results.fetch("chap", "run-seed0", {"seeds": 1}, lambda: computed.append(1) or ({}, {"a": np.zeros(10**6)}),
                  profile="smoke", device="cpu", code="modlib.data.digits")
    size = results.stored_size(store / "smoke" / "chap", "run-seed0")
    monkeypatch.setattr(results, "MIN_FREE_BYTES", 1)
    assert results.space_needed("chap", "run-seed7", store) == results.SPACE_MARGIN * size  # its kind's size
    usage = shutil.disk_usage(store)
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage._replace(free=size))
    with pytest.raises(results.StoreFullError, match=rf"the results store at {store / 'smoke' / 'chap'} has 0 MB "
                                                     rf"free; computing smoke/chap/run-seed1 needs about"):
        results.fetch("chap", "run-seed1", {"seeds": 1}, lambda: computed.append(2) or ({}, {}),
                      profile="smoke", device="cpu", code="modlib.data.digits")
    nb = one_cell_notebook(tmp_path / "chap.ipynb", "x = 1")
    proc_rows = []
    with pytest.raises(results.StoreFullError, match=rf"results store at {store / 'smoke' / 'chap'} .* running chap.ipynb"):
        batch.run([nb], "smoke", tmp_path / "out", rows=proc_rows)
    assert computed == [1] and proc_rows == []
