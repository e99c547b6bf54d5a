import nbformat
import pytest

from modlib import batch

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
results.fetch("{stem}", "first", {{"seeds": 1}}, compute("{stem}/first"), profile=profile, device="cpu")
if pathlib.Path(r"{flag}").exists():
    raise RuntimeError("simulated interruption")
results.fetch("{stem}", "second", {{"seeds": 1}}, compute("{stem}/second"), profile=profile, device="cpu")
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
