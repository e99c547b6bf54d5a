"""The order in which `make test` hands out work to its pytest-xdist workers (this file sits at the
repository's root so that it orders both the unit tests and the notebooks; the tests' fixtures are in
tests/conftest.py)."""

# The files that take longest, run first: pytest-xdist hands out whole files (`--dist loadfile`) in
# collection order (the Makefile passes --no-loadscope-reorder, else xdist sorts the files by their
# number of tests), so a long file that starts last leaves the other worker idle at the end
# (longest-first scheduling). Measured as the sum of each file's tests' durations in one run of each
# phase on 2 workers (`pytest -n auto --dist loadfile --durations=0`, 2026-12-03; the machine was
# shared, so the order, not the seconds, is what counts).
SLOWEST_FIRST = [
    "tests/test_outside_repo.py", "tests/test_restamp.py", "tests/test_fingerprint.py",
    "tests/test_pretraining_consistency.py", "tests/test_jobs.py", "tests/test_resists_at_scale.py",
    "tests/test_batch.py", "tests/test_mutations.py", "tests/test_bridge.py", "tests/test_modularity.py",
    "tests/test_bridge_digits.py", "tests/test_bridge_stored.py", "tests/test_structural_compositionality.py",
    # the notebooks at smoke (chapter 1's runs in tests/test_outside_repo.py; see the Makefile)
    "notebooks/resists_at_scale.ipynb", "notebooks/compositional_sprites.ipynb",
    "notebooks/pretraining_consistency.ipynb", "notebooks/weight_masks.ipynb", "notebooks/bridge.ipynb",
]


def pytest_collection_modifyitems(config, items):
    """Reorder the collected tests so that the slowest files come first (a stable sort: the order
    inside a file, and of every other file, is kept)."""
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    root = config.rootpath
    items.sort(key=lambda item: rank.get(item.path.relative_to(root).as_posix(), len(rank)))
