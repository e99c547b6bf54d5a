"""Sphinx extension: a launch button (the rocket's Colab link) only where it opens a notebook.

sphinx-book-theme gives every executed page a launch button, and for a MyST Markdown page (the
theory pages, the claims ledger) the Colab link points at the ``.md`` file, which Colab cannot open.
After the theme has made the buttons (``html-page-context``, its priority 501), this drops every
launch link that points at anything but an ``.ipynb`` file, and the rocket with them where none is
left: the theory pages show no launch button, and each chapter's notebook page keeps its own.
"""

from sphinx.application import Sphinx


def opens_a_notebook(button: dict) -> bool:
    """A launch entry that is not a link (Thebe), or a link to an ``.ipynb`` file."""
    return button.get("type") != "link" or button.get("url", "").split("?")[0].endswith(".ipynb")


def keep_notebook_launches(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """Remove the launch links of ``pagename`` that open no notebook (``html-page-context``)."""
    buttons = context.get("header_buttons")
    if not buttons:
        return
    kept = []
    for button in buttons:
        if button.get("label") == "launch-buttons":
            button["buttons"] = [b for b in button["buttons"] if opens_a_notebook(b)]
            if not button["buttons"]:
                continue
        kept.append(button)
    buttons[:] = kept


def setup(app: Sphinx) -> dict:
    app.connect("html-page-context", keep_notebook_launches, priority=502)  # after the theme's 501
    return {"parallel_read_safe": True, "parallel_write_safe": True}
