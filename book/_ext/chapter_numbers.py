"""Sphinx extension: figures, tables and exercises numbered per chapter ("Fig. 4.2", "Exercise 1.5").

Sphinx numbers them through the whole book unless the table of contents is numbered, and a numbered
table of contents numbers chapters by their place in the book, which is not the chapter's number
while some chapters are still being written. Here each page names its chapter in the config value
``chapter_numbers`` (``{docname: chapter}``, set in _config.yml); after Sphinx has numbered
everything in reading order, every numbered object on such a page is renumbered ``(chapter, k)``,
``k`` counting per chapter and kind of object across the chapter's pages in reading order. Pages not
listed keep Sphinx's numbers. References ({numref}, solution titles) follow, since they read the
same table.
"""

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment


def renumber(app: Sphinx, env: BuildEnvironment) -> list[str]:
    chapters = app.config.chapter_numbers
    unknown = sorted(set(chapters) - set(env.found_docs))
    if unknown:
        raise ValueError(f"chapter_numbers names pages that do not exist: {unknown}; "
                         f"pages are named like 'notebooks/weight_masks'")
    numbers = env.toc_fignumbers  # {docname: {figtype: {id: (n, ...)}}}
    for figtype in {t for per_doc in numbers.values() for t in per_doc}:
        found = sorted((number, doc, ident) for doc, per_doc in numbers.items() if doc in chapters
                       for ident, number in per_doc.get(figtype, {}).items())
        count: dict[int, int] = {}
        for _, doc, ident in found:
            chapter = chapters[doc]
            count[chapter] = count.get(chapter, 0) + 1
            numbers[doc][figtype][ident] = (chapter, count[chapter])
    return []


def setup(app: Sphinx) -> dict:
    app.add_config_value("chapter_numbers", {}, "env", types=[dict])
    app.connect("env-get-updated", renumber, priority=900)  # after Sphinx assigns its numbers
    return {"parallel_read_safe": True, "parallel_write_safe": True}
