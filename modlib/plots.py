"""Shared figure helpers for every chapter's ``figures`` module and page: each figure's caption
names the profile, device and seeds that produced it (:func:`glue`); a figure shown without a
caption (an interactive view) carries :func:`stamp`; :data:`COLUMN` is the page's width,
:func:`source_block` shows a function's code on the page, :func:`count` counts things in words,
and :func:`not_stored` stands in for a figure whose results are not stored yet.
"""

from __future__ import annotations

import re
import textwrap

import matplotlib.pyplot as plt
from matplotlib import animation

# Every chapter's figures: at most three panels a row, lettering at least 8 pt, and at most COLUMN
# inches wide: the page's text column is 6.8 in at 100 dpi, and the inline backend's tight bounding
# box adds 0.1 in of padding on each side. Profile, device and seeds go into the captions (glue).
COLUMN = 6.6


def glue(name: str, value) -> None:
    """Hand ``value`` to the book under ``name``: a figure for a ``{glue:figure}`` with a numbered
    caption, text (e.g. a provenance line) for ``{glue:text}`` in a caption or sentence.

    A figure is also shown (and closed) where it is drawn, so a notebook run in Colab or Jupyter, where
    the book's captions are not rendered, still shows it; the book hides that copy (the cell is tagged
    ``remove-output``) and shows the captioned one. Without myst-nb (Colab) text is not shown."""
    try:
        from myst_nb import glue as glue_to_book
    except ImportError:
        glue_to_book = None
    if isinstance(value, plt.Figure):
        if glue_to_book is None:
            from IPython.display import display

            display(value)
        else:
            glue_to_book(name, value)
        plt.close(value)
    elif glue_to_book is not None:
        glue_to_book(name, value, display=False)


def stamp(fig: plt.Figure, provenance: str, size: float = 7) -> plt.Figure:
    """Write ``provenance`` (profile, device, seeds) in the figure's bottom-right corner, in
    ``size`` points."""
    fig.text(0.995, 0.005, provenance, ha="right", va="bottom", fontsize=size, color="0.4")
    return fig


def source_block(*functions) -> str:
    """The source of ``functions`` as one Markdown code block for the page (show it with
    ``IPython.display.Markdown``): each headed by a comment naming it, docstrings left out. The
    functions' code is kept within the page's 75-character code lines in ``modlib`` itself
    (tests/test_repository.py checks every function a page shows)."""
    import ast
    import inspect

    parts = []
    for function in functions:
        source = textwrap.dedent(inspect.getsource(function))
        lines = source.splitlines()
        first = ast.parse(source).body[0].body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                and isinstance(first.value.value, str):
            del lines[first.lineno - 1:first.end_lineno]
        parts.append(f"# {function.__module__}.{function.__qualname__}\n" + "\n".join(lines))
    return "```python\n" + "\n\n".join(parts) + "\n```"


def jshtml(fig: plt.Figure, draw, frames: int, interval: int, alt: str | None = None):
    """``draw(k)`` for each frame as a kernel-free JavaScript animation (``IPython.display.HTML``);
    ``alt``, where given, is the alt text of the animation's image."""
    import html as html_lib

    from IPython.display import HTML

    anim = animation.FuncAnimation(fig, draw, frames=frames, interval=interval, blit=False)
    # each frame is drawn when it is saved; the redraw FuncAnimation asks for after drawing it (for
    # a window on screen) would draw it once more, for nothing: skipped (the same frames)
    fig.canvas.draw_idle = lambda *args, **kwargs: None
    try:
        html = anim.to_jshtml(default_mode="once")
    finally:
        del fig.canvas.draw_idle
    # matplotlib links Font Awesome from a CDN for the player's buttons; the book's theme has it already
    html = re.sub(r"<link[^>]*font-awesome[^>]*>", "", html)
    if alt:
        html = html.replace('<img id="_anim_img', f'<img alt="{html_lib.escape(alt)}" id="_anim_img', 1)
    plt.close(fig)
    return HTML(html)


def roomy(styler):
    """A pandas ``Styler`` with room between its columns: the book's theme pads Markdown tables but
    not a Styler's, whose numbers then run together ("0.0230.000"). Chapters 5 and 6's appendix
    tables use it."""
    return styler.set_table_styles(
        [{"selector": "td, th", "props": "padding: 0.1em 0.45em"}], overwrite=False)


def count(n: int, noun: str) -> str:
    """``n`` things in words for captions and page headers (chapters 5 and 6): ``"1 mask seed"``,
    ``"3 mask seeds"``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def not_stored(what: str, command: str = "") -> plt.Figure:
    """A placeholder where a figure's results are not stored yet: ``what`` and, where given, the
    ``command`` that makes them (chapters 2 and 4, for their added experiments; a page that names
    the command once, in its text, passes none)."""
    wrapped = textwrap.fill(command, 88, break_on_hyphens=False)  # within the page's column
    return notice(f"{what}: not stored yet" + (f"\n{wrapped}" if command else ""), family="monospace")


def notice(text: str, family: str | None = None) -> plt.Figure:
    """A one-line figure that says, in place of a figure, why there is nothing to draw."""
    fig, ax = plt.subplots(figsize=(COLUMN, 0.9))
    ax.text(0.5, 0.5, text, ha="center", va="center", fontsize=8, family=family)
    ax.axis("off")
    return fig


def percent_axis(ax, labelsize: float = 8, axis: str = "x") -> None:
    """A log x-axis of kept shares labelled in percent ("1 %", "10 %"), ticked at each decade, or at
    1, 2 and 5 of each where the axis spans under a decade and a half (call it after setting the
    limits or drawing); ``labelsize`` applies to ``axis`` ("x" or "both")."""
    import numpy as np
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_xscale("log")
    low, high = ax.get_xlim()
    narrow = np.log10(high / low) < 1.5
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if narrow else (1.0,)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{100 * v:.2g} %"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.tick_params(axis=axis, labelsize=labelsize)
