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


# The test files that take longest (the sum of their tests' durations in one run of the unit phase on
# 2 workers, `pytest -n auto --dist loadfile --durations=0`, after issue 56 made test_student and
# test_bridge smaller; the machine was shared, so the order, not the seconds, is what counts), run first:
# pytest-xdist hands out whole files (`--dist loadfile`) in collection order, so a long file that
# starts last leaves the other worker idle at the end (longest-first scheduling).
SLOWEST_FIRST = ["test_fingerprint.py", "test_restamp.py", "test_jobs.py", "test_outside_repo.py",
                 "test_bridge.py", "test_batch.py", "test_explorers.py", "test_resists_at_scale.py",
                 "test_modularity.py", "test_mutations.py", "test_pretraining_consistency.py",
                 "test_bridge_digits.py"]


def pytest_collection_modifyitems(config, items):
    """Reorder the collected tests so that the slowest files come first (a stable sort: the order
    inside a file, and of every other file, is kept)."""
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
