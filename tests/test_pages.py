"""Static checks of the standard "pages that teach" (issue 34) on the page sources.

Cheap: they read the chapter notebooks' JSON and book/*.md as text (no build, no kernel, no stored
result) and call the concept diagrams, which draw no data. Each rule is a function that returns a
list of problems, one line each, so that a failing test names every problem of a page at once:

1. appendix split (chapters): the last top-level section is ``## Appendix: all results``, labelled
   ``(<short>-all-results)=``; above it no code cell prints a list of findings' statements, at most
   ``MAX_MARKED_ABOVE`` lines with a verdict mark (✓ ✗ ?) in saved outputs or prose, and each
   glued verdict mark (a ``{glue:text}`` key ending in ``-mark``) once;
2. concept diagrams (chapters): a code cell tagged ``diagram`` calls ``diagram_<what>()`` of
   ``modlib/<chapter>/figures.py``, which exists and returns a matplotlib Figure;
3. glossary (chapters and theory pages): every ``{term}`` target is a term of book/glossary.md, and
   no glossary term occurs in plain text before its first ``{term}`` link on the page (see
   :func:`plain_text` and :func:`term_pattern` for what counts as plain text and as an occurrence);
4. exercises: every ``{exercise}`` opens with the Difficulty · Importance · minutes line, every
   chapter has a "Predict, then check" exercise above its appendix, every theory page an exercise;
5. figures: every ``{glue:figure}`` and ``{figure}`` has an ``:alt:`` that is not a file path.

The pages not converted yet are named in ``NOT_YET`` (issue 34): their test is an xfail(strict), so
converting a page without removing it from ``NOT_YET`` fails, as does breaking a converted page.
"""

import importlib
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
THEORY = sorted(p.stem for p in (ROOT / "book").glob("*_theory.md"))

# issue 34: the pages not yet brought to the standard; remove a page when it is converted
NOT_YET = set()  # every page meets the standard

APPENDIX = "## Appendix: all results"
MAX_MARKED_ABOVE = 3  # lines with a verdict mark above the appendix (saved outputs and prose)
MARK_LINE = re.compile(r"(—|--) [✓✗?]")  # how modlib.stats.verdict_text ends a statement
STATEMENT_LIST = re.compile(r"""["']- \{[^"'\n]*\.text\b""")  # f"- {found[k].text}" and the like
SHOWN = ("remove-cell", "remove-output")  # a cell with either tag shows no output on the page
DIFFICULTY = re.compile(r"^\*\*Difficulty\*\* [●○]{3} · \*\*Importance\*\* [●○]{3} · "
                        r"about \d+(–\d+)? minutes(, [^·]+)?$")


# --- reading a page -----------------------------------------------------------------------------

def cells_of(page: str) -> list[dict]:
    """The page as cells {kind, source, tags, outputs}; a .md page is one markdown cell."""
    path = ROOT / f"{page}.ipynb"
    if not path.exists():
        return [{"kind": "markdown", "source": (ROOT / f"{page}.md").read_text(),
                 "tags": [], "outputs": []}]
    return notebook_cells(json.loads(path.read_text()))


def notebook_cells(nb: dict) -> list[dict]:
    def text(value):
        return "".join(value) if isinstance(value, list) else value
    return [{"kind": c["cell_type"], "source": text(c["source"]),
             "tags": c.get("metadata", {}).get("tags", []), "outputs": c.get("outputs", [])}
            for c in nb["cells"]]


def output_text(output: dict) -> str:
    """What a saved output shows as text: a stream, or the markdown/plain of a display."""
    if "text" in output:
        return "".join(output["text"]) if isinstance(output["text"], list) else output["text"]
    data = output.get("data", {})
    for mime in ("text/markdown", "text/plain"):
        if mime in data:
            value = data[mime]
            return "".join(value) if isinstance(value, list) else value
    return ""


def markdown(cells: list[dict]) -> str:
    return "\n\n".join(c["source"] for c in cells if c["kind"] == "markdown")


def appendix_index(cells: list[dict]) -> int | None:
    """The index of the markdown cell that opens the appendix, or None."""
    for i, c in enumerate(cells):
        if c["kind"] == "markdown" and any(line.startswith(APPENDIX)
                                           for line in c["source"].splitlines()):
            return i
    return None


def directives(text: str, names: tuple[str, ...]) -> list[tuple[str, str, list[str]]]:
    """Every fenced MyST directive of these names: (name, title, body lines), options included."""
    found, lines, i = [], text.splitlines(), 0
    opening = re.compile(r"^(`{3,}|:{3,})\{(" + "|".join(map(re.escape, names)) + r")\}\s*(.*)$")
    while i < len(lines):
        m = opening.match(lines[i].strip())
        if not m:
            i += 1
            continue
        fence, body, i = m.group(1), [], i + 1
        while i < len(lines) and lines[i].strip() != fence:
            body.append(lines[i])
            i += 1
        found.append((m.group(2), m.group(3).strip(), body))
        i += 1
    return found


def options(body: list[str]) -> tuple[dict, list[str]]:
    """A directive's options (``:key: value`` lines at the top) and the rest of its body."""
    opts, i = {}, 0
    while i < len(body) and (m := re.match(r"^\s*:([\w-]+):\s*(.*)$", body[i])):
        opts[m.group(1)] = m.group(2).strip()
        i += 1
    return opts, body[i:]


# --- the glossary matcher -----------------------------------------------------------------------

def glossary_terms() -> list[str]:
    """The terms of book/glossary.md's {glossary} directive: the unindented lines inside it."""
    text = (ROOT / "book" / "glossary.md").read_text()
    (_, _, body), = directives(text, ("glossary",))
    return [line.strip() for line in body if line.strip() and not line[0].isspace()]


def term_pattern(term: str) -> re.Pattern:
    """An occurrence of a glossary term in plain text: the term, or its part before a parenthesis
    ("Intersection over union (IoU)" also as "intersection over union"), case-insensitive, on word
    boundaries, with an optional plural s/es ("seeds"). Nothing cleverer: no stemming, no synonyms."""
    names = {term, re.sub(r"\s*\(.*\)$", "", term)}
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?:e?s)?(?![\w-])", re.I)


TERM_ROLE = re.compile(r"\{term\}`([^`]*)`")


def term_target(role_text: str) -> str:
    """``{term}`masks <Weight mask>` `` links Weight mask; ``{term}`seed` `` links seed."""
    m = re.match(r"^(.*?)\s*<([^>]+)>$", role_text, re.S)
    return (m.group(2) if m else role_text).strip()


def plain_text(text: str) -> str:
    """The prose a reader reads as words, with every {term} role kept as a placeholder ``\\x00N\\x00``
    (N its index among the page's term roles). Removed: fenced code and directive fence lines,
    directive option lines (``:alt:`` and the like), indented code, headings, labels ``(x)=``, HTML
    comments,
    math ($...$, $$...$$), inline code, and every other role (glue, ref, numref, doc, cite, eq)."""
    out, fence = [], None
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)  # comments are not rendered
    for line in text.splitlines():
        stripped = line.strip()
        if fence:
            if stripped == fence:
                fence = None
            continue
        m = re.match(r"^(`{3,}|~{3,}|:{3,})(\{?[\w:-]*\}?)", stripped)
        if m:
            if m.group(2) and m.group(2).startswith("{"):
                continue  # a directive: its body is prose, its fence line is not
            if m.group(2) == "" and not stripped[len(m.group(1)):].strip():
                continue  # a closing fence of a directive
            fence = m.group(1)  # a code block
            continue
        if (stripped.startswith("#") or re.match(r"^\(.*\)=$", stripped)
                or re.match(r"^:[\w-]+:", stripped) or line.startswith("    ")):
            continue
        out.append(line)
    prose = "\n".join(out)
    counter = iter(range(10**6))
    prose = TERM_ROLE.sub(lambda m: f"\x00{next(counter)}\x00", prose)
    prose = re.sub(r"\$\$.*?\$\$", " ", prose, flags=re.S)
    prose = re.sub(r"\$[^$\n]+\$", " ", prose)
    prose = re.sub(r"\{[\w:-]+\}`[^`]*`", " ", prose)
    prose = re.sub(r"`[^`]*`", " ", prose)
    return prose


# --- the rules ----------------------------------------------------------------------------------

def appendix_problems(cells: list[dict]) -> list[str]:
    at = appendix_index(cells)
    if at is None:
        return [f"no markdown cell with a line starting {APPENDIX!r}"]
    problems = []
    lines = cells[at]["source"].splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith(APPENDIX))
    if head == 0 or not re.match(r"^\([\w-]+-all-results\)=$", lines[head - 1].strip()):
        problems.append("the appendix heading is not preceded by its label (<short>-all-results)=")
    after = lines[head + 1:] + [line for c in cells[at + 1:] if c["kind"] == "markdown"
                                for line in c["source"].splitlines()]
    later = [line for line in after if re.match(r"^#{1,2} ", line)]
    if later:
        problems.append(f"the appendix is not the last section: {later}")
    # the cells before the appendix, and what its own cell holds above the heading (a Summary)
    above = cells[:at] + [dict(cells[at], source="\n".join(lines[:head]), outputs=[])]
    for i, c in enumerate(above):
        if c["kind"] == "code" and not set(SHOWN) & set(c["tags"]) \
                and STATEMENT_LIST.search(c["source"]):
            problems.append(f"cell {i} prints a list of statements above the appendix")
    marked = [line for c in above if not set(SHOWN) & set(c["tags"])
              for o in c["outputs"] for line in output_text(o).splitlines()
              if MARK_LINE.search(line)]
    marked += [line for line in markdown(above).splitlines() if MARK_LINE.search(line)]
    if len(marked) > MAX_MARKED_ABOVE:
        problems.append(f"{len(marked)} lines with a verdict mark above the appendix "
                        f"(at most {MAX_MARKED_ABOVE}): {marked[:3]} ...")
    keys = re.findall(r"\{glue(?::text)?\}`([\w-]+-mark)(?::[^`]*)?`", markdown(above))
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        problems.append(f"verdicts given more than once above the appendix: {twice}")
    return problems


def diagram_problems(cells: list[dict], chapter: str) -> list[str]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    at = appendix_index(cells) or len(cells)
    calls = [name for c in cells[:at] if c["kind"] == "code" and "diagram" in c["tags"]
             for name in re.findall(r"\b(diagram_\w+)\(", c["source"])]
    if not calls:
        return ["no cell tagged 'diagram' (above the appendix) calls a diagram_<what>() function"]
    figures = importlib.import_module(f"modlib.{chapter}.figures")
    problems = []
    for name in calls:
        draw = getattr(figures, name, None)
        if draw is None:
            problems.append(f"modlib.{chapter}.figures has no {name}")
            continue
        fig = draw()
        if not isinstance(fig, Figure):
            problems.append(f"{name}() returns {type(fig).__name__}, not a Figure")
        else:
            plt.close(fig)
    return problems


def glossary_problems(cells: list[dict], terms: list[str]) -> list[str]:
    """Unknown {term} targets, and terms that occur in plain text before their first link."""
    text = markdown(cells)
    known = {t.lower(): t for t in terms}
    problems, linked = [], {}
    for n, role in enumerate(TERM_ROLE.findall(text)):
        target = term_target(role).lower()
        if target not in known:
            problems.append(f"{{term}}`{role}` links no term of book/glossary.md")
        linked.setdefault(target, n)
    prose = plain_text(text)
    placeholders = [m.start() for m in re.finditer(r"\x00\d+\x00", prose)]
    for term in terms:
        first = term_pattern(term).search(prose)
        if first is None:
            continue
        n = linked.get(term.lower())
        if n is None or placeholders[n] > first.start():
            where = prose[max(0, first.start() - 40):first.end() + 40].replace("\n", " ")
            problems.append(f"{term!r} is used before its first {{term}} link: ...{where}...")
    return problems


def exercise_problems(cells: list[dict], chapter: bool) -> list[str]:
    at = appendix_index(cells) if chapter else None
    problems, predict = [], False
    for i, c in enumerate(cells):
        if c["kind"] != "markdown":
            continue
        for _, title, body in directives(c["source"], ("exercise",)):
            _, rest = options(body)
            first = next((line.strip() for line in rest if line.strip()), "")
            if not DIFFICULTY.match(first):
                problems.append(f"exercise {title!r} lacks the Difficulty · Importance · minutes "
                                f"line (it opens {first[:60]!r})")
            if title.startswith("Predict, then check") and (at is None or i < at):
                predict = True
    if not any(directives(c["source"], ("exercise",)) for c in cells if c["kind"] == "markdown"):
        problems.append("no {exercise}")
    if chapter and not predict:
        problems.append("no 'Predict, then check' exercise above the appendix")
    return problems


def figure_problems(cells: list[dict]) -> list[str]:
    problems = []
    for kind, title, body in directives(markdown(cells), ("glue:figure", "figure")):
        alt = options(body)[0].get("alt", "")
        if not alt:
            problems.append(f"{{{kind}}} {title} has no :alt:")
        elif re.search(r"\.(png|svg|jpe?g|pdf)\b|/", alt):
            problems.append(f"{{{kind}}} {title}: the alt text is a file path: {alt!r}")
    return problems


def page_problems(page: str, cells: list[dict]) -> list[str]:
    chapter = page.startswith("notebooks/")
    problems = []
    if chapter:
        problems += appendix_problems(cells)
        problems += diagram_problems(cells, page.split("/")[1])
    problems += glossary_problems(cells, glossary_terms())
    problems += exercise_problems(cells, chapter)
    problems += figure_problems(cells)
    return problems


# --- the tests ----------------------------------------------------------------------------------

PAGES = [f"notebooks/{c}" for c in CHAPTERS] + [f"book/{t}" for t in THEORY]


def test_not_yet_names_real_pages():
    assert NOT_YET <= set(PAGES), NOT_YET - set(PAGES)


@pytest.mark.parametrize("page", [
    pytest.param(p, marks=pytest.mark.xfail(strict=True, reason="issue 34: not converted yet"))
    if p in NOT_YET else p for p in PAGES])
def test_page_meets_the_standard(page):
    problems = page_problems(page, cells_of(page))
    assert not problems, f"{page}:\n" + "\n".join(problems)


@pytest.mark.parametrize("page", PAGES + ["book/welcome", "book/how_to_run", "book/instructors"])
def test_every_term_role_links_a_glossary_term(page):
    """Converted or not, a {term} role with no target breaks the build (-W)."""
    if not (ROOT / f"{page}.ipynb").exists() and not (ROOT / f"{page}.md").exists():
        pytest.skip(f"{page} does not exist")
    problems = [p for p in glossary_problems(cells_of(page), glossary_terms())
                if "links no term" in p]
    assert not problems, problems


def test_the_glossary_jump_bar_links_the_first_term_of_every_letter():
    """The "Jump to" bar of book/glossary.md is typed: it must name every initial letter of the
    glossary's terms once, in order, each linking that letter's first term (the terms are sorted)."""
    terms = glossary_terms()
    assert terms == sorted(terms, key=str.lower), "the glossary's terms are not in alphabetical order"
    first = {}
    for term in terms:
        first.setdefault(term[0].upper(), term)
    bar = next(line for line in (ROOT / "book" / "glossary.md").read_text().splitlines()
               if line.startswith("**Jump to:**"))
    linked = [(m.group(1), m.group(2)) for m in re.finditer(r"\{term\}`(\w) <([^>]+)>`", bar)]
    assert linked == sorted(first.items()), f"the bar should read {sorted(first.items())}"


# --- each rule catches a page that breaks it (synthetic pages) -----------------------------------

def md(text):
    return {"kind": "markdown", "source": text, "tags": [], "outputs": []}


def code(text, tags=(), outputs=()):
    return {"kind": "code", "source": text, "tags": list(tags), "outputs": list(outputs)}


GOOD_APPENDIX = "(t-all-results)=\n## Appendix: all results\n\nEverything."


def test_appendix_rule_accepts_a_good_page():
    cells = [md("# T\n\n## A section\n\nThe verdict: {glue:text}`t-x-mark`."),
             md(GOOD_APPENDIX),
             code('Markdown("\\n".join(f"- {f.text}" for f in found.values()))',
                  ["hide-output"])]
    assert appendix_problems(cells) == []
    summary_then_appendix = [md("# T\n\n## Summary\n\nSaid.\n\n" + GOOD_APPENDIX)]
    assert appendix_problems(summary_then_appendix) == []  # a section may share the appendix's cell


@pytest.mark.parametrize("cells, problem", [
    ([md("# T\n\n## A section")], "no markdown cell"),
    ([md("## Appendix: all results")], "preceded by its label"),
    ([md(GOOD_APPENDIX), md("## Summary")], "not the last section"),
    ([code('Markdown("\\n".join(f"- {found[k].text}" for k in found))'), md(GOOD_APPENDIX)],
     "prints a list of statements"),
    ([code("show()", outputs=[{"output_type": "stream", "name": "stdout",
                               "text": "- a — ✓ reproduced\n" * 4}]), md(GOOD_APPENDIX)],
     "4 lines with a verdict mark"),
    ([md("{glue:text}`t-x-mark` and again {glue:text}`t-x-mark`"), md(GOOD_APPENDIX)],
     "more than once"),
])
def test_appendix_rule_rejects(cells, problem):
    assert any(problem in p for p in appendix_problems(cells)), appendix_problems(cells)


def test_diagram_rule_rejects_a_page_without_one_and_an_unknown_function():
    assert diagram_problems([md("# T"), code("plt.plot()")], "redundant_input_toy")
    problems = diagram_problems([code("figures.diagram_nothing_at_all()", ["diagram"])],
                                "redundant_input_toy")
    assert any("has no diagram_nothing_at_all" in p for p in problems), problems


def test_glossary_matcher():
    terms = ["Seed", "Held-out cell", "Intersection over union (IoU)", "Weight mask"]
    good = [md("# Seeds everywhere\n\nEach {term}`seed` trains; `seed` in code and $seed$ in "
               "maths do not count.\n\n```python\nseed = 0\n```\n\nSeeds again; the "
               "{term}`masks <Weight mask>` keep weights, a weight mask.")]
    assert glossary_problems(good, terms) == []
    early = [md("Every seed trains. Then a {term}`seed`.")]
    assert any("'Seed' is used before" in p for p in glossary_problems(early, terms))
    plural = [md("Two held-out cells, then the {term}`held-out cell`.")]
    assert any("'Held-out cell'" in p for p in glossary_problems(plural, terms))
    short = [md("The intersection over union is high.")]
    assert any("Intersection over union" in p for p in glossary_problems(short, terms))
    unknown = [md("A {term}`supermask`.")]
    assert any("links no term" in p for p in glossary_problems(unknown, terms))
    assert glossary_problems([md("Reseeded, seedless, seed-based.")], terms) == []


EXERCISE = ("```{{exercise}} {title}\n:label: ex-t\n\n{first}\n\nThe question.\n```\n")
TAGS = "**Difficulty** ●○○ · **Importance** ●●○ · about 5 minutes"


def test_exercise_rule():
    good = [md(EXERCISE.format(title="Predict, then check: x", first=TAGS)), md(GOOD_APPENDIX)]
    assert exercise_problems(good, chapter=True) == []
    untagged = [md(EXERCISE.format(title="Predict, then check: x", first="The question."))]
    assert any("lacks the Difficulty" in p for p in exercise_problems(untagged, chapter=False))
    no_predict = [md(EXERCISE.format(title="Think", first=TAGS)), md(GOOD_APPENDIX)]
    assert any("Predict, then check" in p for p in exercise_problems(no_predict, chapter=True))
    below = [md(GOOD_APPENDIX), md(EXERCISE.format(title="Predict, then check: x", first=TAGS))]
    assert any("Predict, then check" in p for p in exercise_problems(below, chapter=True))
    assert exercise_problems([md("# Theory, no exercise")], chapter=False) == ["no {exercise}"]
    no_code = [md(EXERCISE.format(title="Think", first=TAGS + ", no code"))]
    assert exercise_problems(no_code, chapter=False) == []


def test_figure_rule():
    fig = "```{{glue:figure}} fig-t\n:name: fig-t\n{alt}\n\nCaption.\n```"
    assert figure_problems([md(fig.format(alt=":alt: Two panels; the orange line falls."))]) == []
    assert any("no :alt:" in p for p in figure_problems([md(fig.format(alt=""))]))
    path = fig.format(alt=":alt: _build/fig-t.png")
    assert any("file path" in p for p in figure_problems([md(path)]))
    plain = "```{figure} ../img/x.png\n:name: fig-x\n\nCaption.\n```"
    assert any("no :alt:" in p for p in figure_problems([md(plain)]))
