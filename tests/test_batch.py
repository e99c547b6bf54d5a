import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
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


def make_notebook(path, log, flag):
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('profile = "default"')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(SOURCE.format(log=log, flag=flag, stem=path.stem))]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path


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
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('profile = "default"')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(SLOW)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "slow.ipynb"
    nbformat.write(nb, path)
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
