"""The student edition of the book's notebooks: ``python -m modlib.student`` (``make student``).

The notebooks in ``notebooks/`` are the instructor's copies: each exercise a learner writes has a
*stub* cell (tag ``stub``) that raises ``NotImplementedError`` with a one-line hint, then a
*solution* cell (tags ``solution`` and ``hide-input``: a collapsed dropdown in the book) that
defines the same function, then a cell that runs its check from the chapter's ``exercises`` module
(``modlib.<chapter>.exercises``, built on :mod:`modlib.checks`). The student edition of a notebook
keeps the stubs, drops the solution cells and the ``{solution}`` blocks of the text, clears every
output and says at the top what it is. It is written to ``notebooks/student/NAME.ipynb``, which the
book links to for Colab.
"""

from __future__ import annotations

import argparse
import copy
import re
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
STUDENT = NOTEBOOKS / "student"
_FENCE = re.compile(r"^(`{3,}|:{3,})\{solution\}")

NOTE = ("> **Student edition.** The exercises you write are stubs that raise `NotImplementedError`; "
        "replace each body with your own code and run the check below it. The solutions are in the "
        "book's instructor copy of this notebook.")


def without_solutions(markdown: str) -> str:
    """``markdown`` with every ``{solution}`` block (fenced by backticks or colons) removed."""
    out, fence = [], None
    for line in markdown.split("\n"):
        if fence is None:
            opened = _FENCE.match(line)
            if opened:
                fence = opened.group(1)
                continue
            out.append(line)
        elif line.strip() == fence:
            fence = None
    if fence is not None:
        raise ValueError(f"a {{solution}} block opened with {fence} is never closed")
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n")


def student_edition(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The student edition of one notebook (a new object; ``nb`` is left as it is)."""
    nb = copy.deepcopy(nb)
    cells = []
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if "solution" in tags:
            continue
        if cell.cell_type == "markdown":
            cell.source = without_solutions(cell.source)
            if not cell.source:
                continue
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        cells.append(cell)
    title = next(i for i, c in enumerate(cells) if c.cell_type == "markdown")
    cells.insert(title + 1, nbformat.v4.new_markdown_cell(NOTE, id="student-edition-note"))
    nb.cells = cells
    return nb


def exercises(nb: nbformat.NotebookNode) -> list[tuple[str, str, str]]:
    """The exercises a learner writes in one notebook: ``(stub source, solution source, check
    source)`` per exercise, in order. Raises ``ValueError`` naming the cell when a stub is not
    followed by its solution and a check."""
    found = []
    for i, cell in enumerate(nb.cells):
        if "stub" not in cell.metadata.get("tags", []):
            continue
        following = nb.cells[i + 1:i + 3]
        if (len(following) < 2 or "solution" not in following[0].metadata.get("tags", [])
                or "exercises.check_" not in following[1].source):
            raise ValueError(f"cell {i}: a stub must be followed by a cell tagged 'solution' and a "
                             "cell that runs exercises.check_...")
        found.append((cell.source, following[0].source, following[1].source))
    return found


def write(names: list[str] | None = None, out: Path = STUDENT) -> list[Path]:
    """Write the student edition of each named notebook (``NAME`` or ``NAME.ipynb``; default:
    every notebook in ``notebooks/``) to ``out``, atomically; returns the paths written."""
    available = sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb"))
    chosen = [Path(n).stem for n in names] if names else available
    unknown = [n for n in chosen if n not in available]
    if unknown:
        raise ValueError(f"no notebook named {unknown}; choose from {available}")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in chosen:
        nb = student_edition(nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4))
        path = out / f"{name}.ipynb"
        tmp = path.with_suffix(".ipynb.tmp")
        nbformat.write(nb, tmp)
        tmp.replace(path)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="*", help="names of notebooks (default: all)")
    parser.add_argument("--out", type=Path, default=STUDENT, help=f"folder to write to ({STUDENT})")
    args = parser.parse_args(argv)
    for path in write(args.notebooks or None, args.out):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
