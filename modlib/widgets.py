"""Shared wiring for every chapter's ``explorer`` module: ipywidgets explorers over stored results
need a live kernel; the static book page shows the saved first view, and the chapters add a
kernel-free animation beside them.
"""

from __future__ import annotations

import ipywidgets as w
from IPython.display import display


def _wire(controls: dict, redraw, box: w.VBox) -> w.VBox:
    """Redraw on every change of ``controls``, draw once, and show ``box``."""
    for c in controls.values():
        c.observe(redraw, names="value")
    redraw()
    display(box)
    return box
