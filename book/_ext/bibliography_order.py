"""The references page in the order of its labels: "[SC16]" before "[SSM20]".

pybtex's ``alpha`` style labels an entry by its authors and year but sorts the list by the authors'
full names, so that Savarese, Silva and Maire (2020, "[SSM20]") came before Smilkov and Carter
(2016, "[SC16]"), out of the order a reader scans the labels in. ``alpha_by_label`` is ``alpha``
sorted by the labels themselves; ``_config.yml`` names it (``bibtex_default_style``).
"""

from __future__ import annotations

from pybtex.plugin import register_plugin
from pybtex.style.formatting.alpha import Style as Alpha

NAME = "alpha_by_label"


class Style(Alpha):
    """``alpha``, its entries sorted by their labels (ties in the ``alpha`` style's order)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        by_authors = self.sort  # pybtex sets ``sort`` on the instance: the sorting style's

        def by_label(entries):
            entries = list(by_authors(entries))
            labels = list(self.format_labels(entries))
            return [entries[i] for i in sorted(range(len(entries)), key=lambda i: (labels[i].casefold(), i))]

        self.sort = by_label


def setup(app) -> dict:
    register_plugin("pybtex.style.formatting", NAME, Style)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
