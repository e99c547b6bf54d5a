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
