"""The exercises a learner writes and the student edition (modlib.student, modlib.<chapter>.exercises): every
chapter has at least two, each check passes the book's solution and reports the stub's hint, the
committed student edition is current, and each student notebook runs up to its first exercise."""

import ast

import nbformat
import pytest
from nbclient import NotebookClient

from modlib import checks, student

from test_book import NOTEBOOK_PAGES, ROOT

NOTEBOOKS = [page.split("/")[-1] for page in NOTEBOOK_PAGES]
EXERCISES = [(name, k, *found) for name in NOTEBOOKS
             for k, found in enumerate(student.exercises(nbformat.read(ROOT / f"notebooks/{name}.ipynb", 4)))]


def test_every_chapter_has_at_least_two_exercises_a_learner_writes():
    counts = {name: sum(e[0] == name for e in EXERCISES) for name in NOTEBOOKS}
    assert all(n >= 2 for n in counts.values()), counts


def _namespace(name: str) -> dict:
    """The notebook's imports (every import statement of its code cells), run in a fresh dict."""
    nb = nbformat.read(ROOT / f"notebooks/{name}.ipynb", 4)
    namespace: dict = {}
    for cell in nb.cells:
        if cell.cell_type != "code" or "%pip" in cell.source:
            continue
        tree = ast.parse(cell.source)
        imports = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
        exec(compile(ast.Module(imports, []), name, "exec"), namespace)
    return namespace


def _hint(stub: str) -> str:
    """The message of the ``NotImplementedError`` that a stub raises."""
    raised = [node.exc for node in ast.walk(ast.parse(stub)) if isinstance(node, ast.Raise)]
    assert len(raised) == 1 and raised[0].func.id == "NotImplementedError", stub
    return raised[0].args[0].value


@pytest.mark.parametrize("name, k, stub, solution, check", EXERCISES,
                         ids=[f"{e[0]}-{e[1]}" for e in EXERCISES])
def test_check_passes_the_solution_and_reports_the_stub(name, k, stub, solution, check):
    namespace = _namespace(name)
    exec(stub, namespace)
    verdict = eval(check, namespace)
    assert isinstance(verdict, checks.Verdict) and not verdict.ok
    assert verdict.message == f"not written yet: {_hint(stub)}"
    exec(solution, namespace)
    verdict = eval(check, namespace)
    assert verdict.ok, verdict.message


def test_student_edition_drops_solutions_keeps_stubs_and_clears_outputs(tmp_path):
    for path in student.write(out=tmp_path):
        nb = nbformat.read(path, 4)
        tags = [c.metadata.get("tags", []) for c in nb.cells]
        assert not any("solution" in t for t in tags), path
        assert sum("stub" in t for t in tags) >= 2
        assert not any("{solution}" in c.source for c in nb.cells), path
        assert all(not c.get("outputs") and c.get("execution_count") is None
                   for c in nb.cells if c.cell_type == "code")
        assert student.NOTE in [c.source for c in nb.cells]


def test_committed_student_edition_is_current(tmp_path):
    # `make student` writes notebooks/student/; the book links to it for Colab
    for path in student.write(out=tmp_path):
        committed = ROOT / "notebooks" / "student" / path.name
        assert committed.exists(), f"{committed} is missing: run `make student`"
        fresh, kept = (nbformat.read(p, 4) for p in (path, committed))
        assert [c.source for c in fresh.cells] == [c.source for c in kept.cells], (
            f"{committed} is out of date: run `make student`")


def test_each_chapter_links_its_student_edition_in_colab():
    from test_book import URL
    from test_repository import RELEASE

    for name in NOTEBOOKS:
        text = (ROOT / f"notebooks/{name}.ipynb").read_text()
        repo = URL.split("github.com/")[1]
        assert f"colab.research.google.com/github/{repo}/blob/{RELEASE}/notebooks/student/{name}.ipynb" in text
        # the rocket can only open the page's own notebook: the box says which copy that is
        assert "the rocket icon at the top of the book's page opens the instructor's copy" in text


def test_without_solutions_removes_fenced_blocks_and_names_an_unclosed_one():
    text = "a\n\n````{solution} ex\n:class: dropdown\n\n```python\nx = 1\n```\n````\n\nb\n:::{solution} y\nz\n:::"
    assert student.without_solutions(text) == "a\n\nb"
    with pytest.raises(ValueError, match="never closed"):
        student.without_solutions("```{solution} ex\nnot closed")


def test_write_names_an_unknown_notebook(tmp_path):
    with pytest.raises(ValueError, match=r"no notebook named \['nope'\]; choose from"):
        student.write(["nope"], out=tmp_path)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_student_notebook_runs_up_to_its_first_exercise(name, tmp_path, monkeypatch):
    nb = nbformat.read(student.write([name], out=tmp_path)[0], 4)
    first_check = next(i for i, c in enumerate(nb.cells) if "exercises.check_" in c.source)
    nb.cells = nb.cells[:first_check + 1]
    monkeypatch.setenv("MODLIB_PROFILE", "smoke")
    monkeypatch.setenv("TQDM_DISABLE", "1")
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    shown = "".join(str(o.get("data", {}).get("text/plain", "")) for o in nb.cells[-1].outputs)
    assert "not written yet" in shown, shown
