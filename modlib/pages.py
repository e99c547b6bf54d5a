"""What a chapter page says about itself in its "What we found" box: how long its main path takes to
read and how long the chapter takes to run at ``default``, both from measurements, never typed.

- reading time: the main path's words, counted in the notebook's Markdown (code, outputs, collapsed
  blocks and the appendix aside; the book checks measure the built page the same way in headless
  Chromium), read at :data:`WORDS_PER_MINUTE`, and :data:`FIGURE_MINUTES` for each figure on it;
- run time: the chapter's ``default`` CPU seconds as a reader's run takes them
  (``benchmarks/bench_default.py``, ``benchmarks/default_cpu.csv``);
- compute at ``full``: the wall seconds recorded in every stored full result of the chapter
  (almost all computed on one CPU thread).

The instructors' guide and the how-to-run page (:data:`TIMES_PAGES`) show all three per chapter in
a table this module writes (``python -m modlib.pages --instructors``; a test keeps it current), and
the README a table of each chapter's stored full results (:func:`readme_table`: how many, their
hours, the longest, how many took over the 30-minute aim), written by the same command.

Outside a checkout of the book (e.g. in Colab) neither file is there, and the box says so.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
from pathlib import Path

from modlib import results
from modlib.claims import CHAPTERS  # in the book's order

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
FULL = NOTEBOOKS / "results" / "full"
TIMES_PAGES = (ROOT / "book" / "instructors.md", ROOT / "book" / "how_to_run.md")  # both show the table
README = ROOT / "README.md"
DEFAULT_CPU = ROOT / "benchmarks" / "default_cpu.csv"  # chapter, cpu_s, wall_s, machine
WORDS_PER_MINUTE = 200  # technical prose read with care
FIGURE_MINUTES = 1.5  # a figure looked at against its "what to look for", beyond reading its caption
FIGURES = {"glue:figure", "figure"}  # the fences that draw a figure on the page
NOT_MEASURED = "not measured here"


def _rows(path: Path, key: str) -> dict[str, dict]:
    if not path.exists():
        return {}
    with path.open() as f:
        return {r[key]: r for r in csv.DictReader(f)}


# fenced blocks a reader does not see unopened (the book's solutions are all collapsed) or reads as
# code; a figure's caption ({glue:figure}, {figure}) is read, as the browser check counts it
HIDDEN = {"dropdown", "toggle", "solution", "code-cell", "math", ""}
_FENCE = re.compile(r"^(`{3,}|:{3,})(?:\{([a-z:-]+)\})?")
_LABEL = re.compile(r"^\([\w.:-]+\)=$")  # a MyST target, "(rs-controls)=": not read
_WORD = re.compile(r"[A-Za-z0-9\u00C0-\u024F]+(?:['\u2019-][A-Za-z]+)*")


def _main_path(markdown_cells: list[str]):
    """What a reader sees without opening anything in these Markdown cells, in order: ``("line",
    text)`` for each line of prose and ``("figure", None)`` for each figure, up to the first heading
    that starts "Appendix"; fenced blocks that are collapsed (``dropdown``, ``toggle``, the
    exercises' ``solution``), code, maths and comments are left out; figure captions are prose."""
    stack = []
    for cell in markdown_cells:
        for line in cell.splitlines():
            if re.match(r"^#{1,2}\s+Appendix", line, re.I):
                return
            if stack and line.strip() == stack[-1][0]:  # the block's closing fence
                stack.pop()
                continue
            m = _FENCE.match(line.strip())
            if m:
                if m.group(2) in FIGURES and not any(name in HIDDEN for _, name in stack):
                    yield "figure", None
                stack.append((m.group(1), m.group(2) or ""))  # a bare fence (```python) is code
                continue
            if any(name in HIDDEN for _, name in stack):
                continue
            if line.lstrip().startswith(("<!--", ":")) or _LABEL.match(line.strip()):
                continue
            yield "line", line


def main_path_words(markdown_cells: list[str]) -> int:
    """The words of the main path (:func:`_main_path`), maths left out."""
    return sum(len(_WORD.findall(re.sub(r"\$[^$]*\$", " ", text)))
               for kind, text in _main_path(markdown_cells) if kind == "line")


def main_path_figures(markdown_cells: list[str]) -> int:
    """The figures on the main path (:func:`_main_path`): each takes a reader time beyond its caption."""
    return sum(kind == "figure" for kind, _ in _main_path(markdown_cells))


def reading_minutes(chapter: str) -> int | None:
    """Minutes to read the chapter page's main path (rounded up to 5), or None where the notebook
    is not beside the package (outside a checkout)."""
    path = NOTEBOOKS / f"{chapter}.ipynb"
    if not path.exists():
        return None
    cells = ["".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "markdown"]
    minutes = main_path_words(cells) / WORDS_PER_MINUTE + main_path_figures(cells) * FIGURE_MINUTES
    return 5 * math.ceil(minutes / 5)


def default_cpu_text(chapter: str) -> str:
    """The chapter's ``default`` run as the pages state it: "210 s of CPU" (one thread, a reader's run)."""
    row = _rows(DEFAULT_CPU, "chapter").get(chapter)
    return f"{float(row['cpu_s']):.0f} s of CPU" if row else NOT_MEASURED


def full_hours_text(chapter: str) -> str:
    """The chapter's stored ``full`` compute as the pages state it: "6.3 h" (summed over its results)."""
    hours = full_hours(chapter)
    return f"{hours:.1f} h" if hours is not None else NOT_MEASURED


def times(chapter: str) -> str:
    """The box's line: "about 25 minutes to read the main path (the folded boxes and the appendix
    add more); 361 s of CPU to run at default", the run time in the words of the page's table of
    profiles (:func:`default_cpu_text`)."""
    read = reading_minutes(chapter)
    main = "about %d minutes to read the main path (the folded boxes and the appendix add more)"
    ran = (f"{default_cpu_text(chapter)} to run at default" if chapter in _rows(DEFAULT_CPU, "chapter")
           else "run time " + NOT_MEASURED)
    return f"{main % read if read else 'reading time ' + NOT_MEASURED}; {ran}"


def full_seconds_by_result(chapter: str) -> dict[str, float]:
    """The wall seconds each stored ``full`` result of the chapter records (``wall_time_s``), by
    result name; empty where none is stored beside the package."""
    return results.recorded(FULL / chapter, "wall_time_s")


def full_seconds(chapter: str) -> list[float]:
    """The wall seconds each stored ``full`` result of the chapter records, in no particular order
    (:func:`full_seconds_by_result`)."""
    return list(full_seconds_by_result(chapter).values())


def full_part_text(chapter: str, names) -> str:
    """The stored ``full`` compute of the chapter's results ``names`` together, as a page's table
    of times states a part of the chapter: "47 min", "32 s" under a minute and a half; the pieces
    of :func:`full_hours_text`, from the same records."""
    seconds = full_seconds_by_result(chapter)
    if not names or any(n not in seconds for n in names):
        return NOT_MEASURED
    total = sum(seconds[n] for n in names)
    return f"{total:.0f} s" if total < 90 else f"{total / 60:.0f} min"


def full_hours(chapter: str) -> float | None:
    """Hours of computing the chapter's stored ``full`` results took, summed over the results as
    each records it, or None where none is stored beside the package."""
    seconds = full_seconds(chapter)
    return sum(seconds) / 3600 if seconds else None


START, END = "<!-- times: generated by python -m modlib.pages --instructors -->", "<!-- /times -->"


def instructors_table() -> str:
    """The instructors' guide's table: per chapter the reading time of its main path, its ``default``
    CPU time, its stored ``full`` compute and the longest of its stored ``full`` results, each from
    the measurement named in its header (the how-to-run page shows the same table beside the aims
    for each profile, which the measured times may exceed)."""
    rows = _rows(DEFAULT_CPU, "chapter")
    lines = [START, "", "| chapter | reading the page's main path | `default`, CPU as a reader runs it "
             "| `full`, as stored (hours of computing, mostly one core) | `full`, the longest stored result |",
             "|---|---|---|---|---|"]
    for number, chapter in enumerate(CHAPTERS, 1):
        read, hours, seconds = reading_minutes(chapter), full_hours(chapter), full_seconds(chapter)
        cpu = f"{float(rows[chapter]['cpu_s']):.0f} s" if chapter in rows else NOT_MEASURED
        lines.append(f"| {number}, {{doc}}`../notebooks/{chapter}` | "
                     f"{'about %d min' % read if read else NOT_MEASURED} | {cpu} | "
                     f"{'%.1f h' % hours if hours is not None else NOT_MEASURED} | "
                     f"{'%.0f min' % (max(seconds) / 60) if seconds else NOT_MEASURED} |")
    return "\n".join(lines + ["", END])


README_START = "<!-- full-compute: generated by python -m modlib.pages --instructors -->"
README_END = "<!-- /full-compute -->"
AIM_S = 30 * 60  # the aim for one stored result, on one core


def readme_table() -> str:
    """The README's table of each chapter's stored ``full`` results: how many record their wall
    time, their hours in all, the longest, and how many took longer than the 30-minute aim."""
    lines = [README_START, "", "The stored `full` results, as each records its wall time (almost all computed on one CPU "
             "thread of this project's 2-core machines, often beside another job; the aim is at most 30 minutes a "
             "result):", "", "| chapter | stored `full` results | hours in all | the longest | over 30 min |",
             "|---|---|---|---|---|"]
    for number, chapter in enumerate(CHAPTERS, 1):
        seconds = full_seconds(chapter)
        lines.append(f"| {number}, `{chapter}` | {len(seconds)} | {sum(seconds) / 3600:.1f} h | "
                     f"{max(seconds, default=0) / 60:.0f} min | {sum(s > AIM_S for s in seconds)} |")
    return "\n".join(lines + ["", README_END])


def replace_block(text: str, start: str, end: str, block: str, where: str) -> str:
    """``text`` with the part from ``start`` to ``end`` (markers included) replaced by ``block``;
    a ValueError naming ``where`` if the markers are missing."""
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise ValueError(f"{where} has no block between {start!r} and {end!r}")
    return pattern.sub(lambda _: block, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m modlib.pages", description=__doc__.split("\n\n")[0])
    parser.add_argument("--instructors", action="store_true", required=True,
                        help=f"rewrite the table of times in {', '.join(str(p.relative_to(ROOT)) for p in TIMES_PAGES)}"
                             " and the README's table of stored full results")
    parser.parse_args(argv)
    table = instructors_table()
    for page in TIMES_PAGES:
        page.write_text(replace_block(page.read_text(), START, END, table, str(page.relative_to(ROOT))))
    README.write_text(replace_block(README.read_text(), README_START, README_END, readme_table(), "README.md"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
