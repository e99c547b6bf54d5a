"""What a chapter page says about itself in its "What we found" box: how long its main path takes to
read and how long the chapter takes to run at ``default``, both from measurements, never typed.

- reading time: the main path's words, counted in the notebook's Markdown (code, outputs, collapsed
  blocks and the appendix aside; the book checks measure the built page the same way in headless
  Chromium), read at :data:`WORDS_PER_MINUTE`;
- run time: the chapter's ``default`` CPU seconds as a reader's run takes them
  (``benchmarks/bench_default.py``, ``benchmarks/default_cpu.csv``).

Outside a checkout of the book (e.g. in Colab) neither file is there, and the box says so.
"""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
DEFAULT_CPU = ROOT / "benchmarks" / "default_cpu.csv"  # chapter, cpu_s, wall_s, machine
WORDS_PER_MINUTE = 200  # technical prose read with care
NOT_MEASURED = "not measured here"


def _rows(path: Path, key: str) -> dict[str, dict]:
    if not path.exists():
        return {}
    with path.open() as f:
        return {r[key]: r for r in csv.DictReader(f)}


HIDDEN = {"dropdown", "toggle", "code-cell", "math", ""}  # fenced blocks a reader does not see unopened (or reads as code)
_FENCE = re.compile(r"^(`{3,}|:{3,})(?:\{([a-z-]+)\})?")
_WORD = re.compile(r"[A-Za-z0-9\u00C0-\u024F]+(?:['\u2019-][A-Za-z]+)*")


def main_path_words(markdown_cells: list[str]) -> int:
    """The words a reader sees without opening anything in these Markdown cells: up to the first
    heading that starts "Appendix", leaving out fenced blocks that are collapsed (``dropdown``,
    ``toggle``), code, maths and comments."""
    words, stack = 0, []
    for cell in markdown_cells:
        for line in cell.splitlines():
            if re.match(r"^#{1,2}\s+Appendix", line, re.I):
                return words
            if stack and line.strip() == stack[-1][0]:  # the block's closing fence
                stack.pop()
                continue
            m = _FENCE.match(line.strip())
            if m:
                stack.append((m.group(1), m.group(2) or ""))  # a bare fence (```python) is code
                continue
            if any(name in HIDDEN for _, name in stack):
                continue
            if line.lstrip().startswith(("<!--", ":", "(")):
                continue
            words += len(_WORD.findall(re.sub(r"\$[^$]*\$", " ", line)))
    return words


def reading_minutes(chapter: str) -> int | None:
    """Minutes to read the chapter page's main path (rounded up to 5), or None where the notebook
    is not beside the package (outside a checkout)."""
    path = NOTEBOOKS / f"{chapter}.ipynb"
    if not path.exists():
        return None
    cells = ["".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "markdown"]
    return 5 * math.ceil(main_path_words(cells) / WORDS_PER_MINUTE / 5)


def run_minutes(chapter: str) -> int | None:
    """Minutes of CPU the chapter takes at ``default`` as a reader runs it (rounded up), or None."""
    row = _rows(DEFAULT_CPU, "chapter").get(chapter)
    return None if row is None else math.ceil(float(row["cpu_s"]) / 60)


def times(chapter: str) -> str:
    """The box's line: "about 25 minutes to read; about 3 minutes of CPU to run at default"."""
    read, run = reading_minutes(chapter), run_minutes(chapter)
    return (f"{'about %d minutes to read' % read if read else 'reading time ' + NOT_MEASURED}; "
            f"{'about %d minutes of CPU to run at default' % run if run else 'run time ' + NOT_MEASURED}")
