"""Sphinx extension: the chapters' notebooks executed on every core before Sphinx reads the pages.

myst-nb executes notebooks one at a time, while Sphinx reads each page. In its ``cache`` mode it
first looks for the notebook (by the hash of its code) in a jupyter-cache, and executes it only on a
miss. At ``builder-inited`` this extension empties that cache and fills it again with every
notebook named by ``parallel_notebooks`` (globs relative to the book's root), executed at once on
``parallel_workers`` processes (0: one per core), each kernel on one torch thread; myst-nb then
finds them all. The build therefore executes what ``force`` mode would, from scratch every time,
on every core. A notebook that fails here is left out of the cache: myst-nb executes it again
itself and reports its error, so a broken notebook fails the build as before. A MyST Markdown page
in the list (the theory pages) is read into a notebook by myst-nb's own reader, so that its cached
copy matches the one myst-nb reads; a Markdown page that is not a notebook is skipped. Pages that
are not listed are executed by myst-nb as usual.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat
from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn
from jupyter_cache.executors.utils import single_nb_execution
from myst_nb.core.read import create_nb_reader
from sphinx.application import Sphinx
from sphinx.util import logging

LOG = logging.getLogger(__name__)


STARTS = 3  # tries to start a notebook's kernel


def execute(path: str, nb: nbformat.NotebookNode, timeout: int | None
            ) -> tuple[str, nbformat.NotebookNode | None, float, str | None]:
    """Execute the notebook read from ``path`` in its folder (as myst-nb does): ``(path, notebook or
    None, seconds, traceback)``; the notebook is None when a cell failed. A kernel that dies before
    it answers (two kernels started at once on one TCP port: "Address already in use") is started
    again, :data:`STARTS` times at most; after that the notebook is left to myst-nb too."""
    error = None
    for _ in range(STARTS):
        try:
            result = single_nb_execution(nb, cwd=str(Path(path).parent), timeout=timeout, allow_errors=False,
                                         meta_override=True)
        except RuntimeError as e:  # raised before any cell ran: the kernel did not start
            error = f"the kernel did not start: {e}"
            continue
        return path, (nb if result.err is None else None), result.time, result.exc_string
    return path, None, 0.0, error


def read(app: Sphinx, path: str) -> tuple[nbformat.NotebookNode, str | None] | None:
    """The notebook myst-nb reads from ``path`` and the reader's format (None for a .ipynb), or None
    for a Markdown page that is not a notebook."""
    if path.endswith(".ipynb"):
        return nbformat.read(path, as_version=4), None
    text = Path(path).read_text(encoding="utf-8")
    reader = create_nb_reader(path, app.env.myst_config, app.env.mystnb_config, text)
    return None if reader is None else (reader.read(text), reader.read_fmt)


def fill_cache(app: Sphinx) -> None:
    config, nb_config = app.config, app.env.mystnb_config  # myst-nb's, set at builder-inited before this
    if nb_config.execution_mode != "cache" or not config.parallel_notebooks:
        return
    root = Path(app.srcdir)
    paths = list(dict.fromkeys(str(p) for pattern in config.parallel_notebooks  # the order given
                               for p in sorted(root.glob(pattern))))
    if not paths:
        raise ValueError(f"parallel_notebooks={config.parallel_notebooks!r} matches no notebook under {root}")
    cache_path = Path(nb_config.execution_cache_path)
    shutil.rmtree(cache_path, ignore_errors=True)  # from scratch: a page never shows an older run
    cache = get_cache(str(cache_path))
    workers = config.parallel_workers or os.cpu_count() or 1
    os.environ["OMP_NUM_THREADS"] = "1"  # kernels inherit it: two threads per kernel on shared cores
    os.environ["MKL_NUM_THREADS"] = "1"  # make small models many times slower
    notebooks = {path: found for path in paths if (found := read(app, path)) is not None}
    LOG.info(f"parallel_execution: executing {len(notebooks)} notebooks on {workers} processes")
    start = time.perf_counter()
    timeout = nb_config.execution_timeout
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        for path, nb, seconds, error in pool.map(execute, notebooks, [nb for nb, _ in notebooks.values()],
                                                 [timeout] * len(notebooks)):
            name = os.path.relpath(path, root)
            if nb is None:
                LOG.info(f"parallel_execution: {name} failed; myst-nb executes it again and reports "
                         f"the error\n{error}")
                continue
            read_fmt = notebooks[path][1]
            record = cache.add_nb_to_project(path, **({"read_data": read_fmt} if read_fmt else {}))
            cache.cache_notebook_bundle(CacheBundleIn(nb, record.uri, data={"execution_seconds": seconds}),
                                        check_validity=False, overwrite=True)
            LOG.info(f"parallel_execution: {name} in {seconds:.0f} s")
    LOG.info(f"parallel_execution: all in {time.perf_counter() - start:.0f} s")


def executed_pages(app: Sphinx, env, added: set, changed: set, removed: set) -> list[str]:
    """Every page that executes code (a notebook, or a MyST page with a kernel), to be read again on
    every build: what it shows comes from the stored results and the package, which Sphinx does not
    watch, so an unchanged page (the claims ledger, a theory page) would keep an older run's output
    in an incremental build."""
    if app.env.mystnb_config.execution_mode == "off":
        return []
    return [name for name in sorted(env.found_docs) if name not in added | changed
            and read(app, str(env.doc2path(name))) is not None]


def setup(app: Sphinx) -> dict:
    app.add_config_value("parallel_notebooks", [], "env", types=[list])
    app.add_config_value("parallel_workers", 0, "env", types=[int])
    app.connect("builder-inited", fill_cache, priority=900)  # after myst-nb's config
    app.connect("env-get-outdated", executed_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
