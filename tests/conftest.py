import os

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


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook reads the groups into the test ids
def pytest_collection_modifyitems(items):
    """The browser checks of one page run on one worker (`make test`: ``--dist loadgroup``), so that
    each worker's Chromium opens a page once and no two workers write one page's screenshots."""
    for item in items:
        page = getattr(item, "callspec", None) and item.callspec.params.get("page")
        if page and item.get_closest_marker("book"):
            item.add_marker(pytest.mark.xdist_group(page))
