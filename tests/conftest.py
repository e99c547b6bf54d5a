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
