"""Sphinx extension: the book serves MathJax and the ipywidgets manager itself, so it reads offline.

By default Sphinx loads MathJax, and myst-nb loads require.js and @jupyter-widgets/html-manager
(which draws widgets from their saved state), from public CDNs. `make setup` fetches the same
packages from the npm registry into book/_offline/static/offline/vendor/ (book/_offline/fetch.sh); this extension
copies them into the built book (_build/html/_static/offline/) and points every page at those copies.

One setting, the environment variable BOOK_ASSETS:
  local  the pages use the copies (what `make book` builds and `make test` checks); the build
         fails if they have not been fetched (`make assets`).
  cdn    the Sphinx and myst-nb defaults (public CDNs): the pages need the network to show
         maths and widgets.
  unset  local when the copies are there, else cdn (a plain `jupyter-book build .` works).
"""

import os
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ConfigError
from sphinx.util import logging

logger = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parent / "static"  # its contents land in _build/html/_static/
MATHJAX = "offline/vendor/mathjax/tex-mml-chtml.js"  # relative to _static/, as Sphinx reads mathjax_path
REQUIREJS = "offline/vendor/requirejs/require.js"
WIDGETS = "offline/vendor/html-manager/embed-amd.js"
WIDGETS_SETUP = "offline/widgets.js"  # ours: where the manager's fonts are; MathJax 3 for widget labels


def fetched() -> bool:
    return all((STATIC / path).is_file() for path in (MATHJAX, REQUIREJS, WIDGETS))


def configure(app: Sphinx, config: Config) -> None:
    mode = os.environ.get("BOOK_ASSETS", "").strip().lower() or "auto"
    if mode not in ("auto", "local", "cdn"):
        raise ConfigError(f"BOOK_ASSETS={mode!r}: use local, cdn or leave it unset")
    if mode == "local" and not fetched():
        raise ConfigError(f"BOOK_ASSETS=local but the offline assets are missing from {STATIC}: "
                          "run `make assets` (needs npm and the npm registry once)")
    if mode == "cdn" or not fetched():
        logger.info("offline_assets: MathJax and the widget manager load from public CDNs")
        return
    config.html_static_path = [*config.html_static_path, str(STATIC)]
    config.mathjax_path = MATHJAX
    # myst-nb adds these to pages that hold saved widget state, in this order (require.js first).
    # No integrity hash (it belongs to the CDN's files) and no CDN for widget modules: the
    # manager has the standard ipywidgets built in.
    config.nb_ipywidgets_js = {REQUIREJS: {}, WIDGETS_SETUP: {}, WIDGETS: {}}
    logger.info("offline_assets: MathJax and the widget manager are served from _static/offline/")


def drop_duplicate_scripts(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """Each script once per page.

    In this stack (Jupyter Book 1.0.4, Sphinx 7.4) the inline scripts of sphinx-thebe
    (`const THEBE_JS_URL = ...`) and sphinx-togglebutton reach every page twice, and the second
    `const` is a SyntaxError in the reader's console on every page.
    """
    scripts, seen = context.get("script_files"), set()
    if not isinstance(scripts, list):
        return
    unique = []
    for script in scripts:
        key = (getattr(script, "filename", script) or "", tuple(sorted(getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    scripts[:] = unique


def setup(app: Sphinx) -> dict:
    # before myst-nb reads its configuration (at builder-inited) and before Sphinx copies static files
    app.connect("config-inited", configure, priority=300)
    # after the extensions that add a page's own scripts (myst-nb, MathJax)
    app.connect("html-page-context", drop_duplicate_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
