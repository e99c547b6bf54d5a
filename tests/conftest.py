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


# The test files that take longest (seconds of one core, `pytest --durations=0`, 2026-12-02; test_student
# and test_bridge measured again after issue 56 made them smaller: 5 s and about 40 s), run first:
# pytest-xdist hands out whole files (`--dist loadfile`) in collection order, so a long file that
# starts last leaves the other worker idle at the end (longest-first scheduling).
SLOWEST_FIRST = ["test_outside_repo.py", "test_restamp.py", "test_fingerprint.py", "test_batch.py",
                 "test_jobs.py", "test_explorers.py", "test_bridge.py", "test_mutations.py",
                 "test_pretraining_consistency.py", "test_modularity.py", "test_resists_at_scale.py"]


def pytest_collection_modifyitems(config, items):
    """Reorder the collected tests so that the slowest files come first (a stable sort: the order
    inside a file, and of every other file, is kept)."""
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
