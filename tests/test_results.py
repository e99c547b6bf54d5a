import json
import os

import numpy as np
import pytest

from modlib import results

CONFIG = {"seeds": 3, "steps": 10}


class Counter:
    def __init__(self):
        self.calls = 0

    def __call__(self):
        self.calls += 1
        return {"acc": 0.5 + self.calls}, {"curve": np.arange(4.0) * self.calls}


def fetch(compute, config=CONFIG, profile="default"):
    return results.fetch("chap", "exp", config, compute, profile=profile, device="cpu (test)")


def test_fetch_computes_once_then_loads_with_provenance(store):
    compute = Counter()
    first = fetch(compute)
    again = fetch(compute)
    assert compute.calls == 1
    assert again.metrics == first.metrics == {"acc": 1.5}
    np.testing.assert_array_equal(again.arrays["curve"], np.arange(4.0))
    meta = json.loads((store / "default" / "chap" / "exp.json").read_text())
    for key in ("config", "config_hash", "package_version", "seeds", "device", "wall_time_s", "created"):
        assert key in meta
    assert meta["seeds"] == 3 and meta["device"] == "cpu (test)"
    assert again.provenance == "profile default · cpu (test) · 3 seeds"


def test_provenance_of_per_seed_results_names_the_seeds(store):
    runs = [results.fetch("chap", f"exp-seed{k}", {"seed": k}, Counter(), profile="default",
                          device="cuda (test)")
            for k in (2, 0, 1)]
    assert runs[1].provenance == "profile default · cuda (test) · seed 0"
    assert results.provenance(runs) == "profile default · cuda (test) · 3 seeds (0-2)"
    with pytest.raises(ValueError, match="at least one"):
        results.provenance([])


def test_load_reads_a_matching_result_and_never_computes(store):
    assert results.load("chap", "exp", CONFIG, profile="default") is None
    fetch(Counter())
    assert results.load("chap", "exp", CONFIG, profile="default").metrics == {"acc": 1.5}
    assert results.load("chap", "exp", {"seeds": 3, "steps": 11}, profile="default") is None  # another config
    assert results.load("chap", "exp", CONFIG, profile="full") is None


def test_a_stale_config_is_recomputed_never_reused(store, capsys):
    compute = Counter()
    fetch(compute)
    changed = fetch(compute, {"seeds": 3, "steps": 20})
    assert compute.calls == 2 and changed.metrics == {"acc": 2.5}
    assert "steps: 10 -> 20" in capsys.readouterr().out
    assert results.config_hash({"steps": 20, "seeds": 3}) == changed.meta["config_hash"]


def test_book_build_refuses_missing_or_stale_full_results(store, monkeypatch):
    compute = Counter()
    fetch(compute, profile="full")
    monkeypatch.setenv("MODLIB_FULL_FROM_STORE", "1")
    assert fetch(compute, profile="full").metrics == {"acc": 1.5}  # matching: loaded
    with pytest.raises(results.StaleResultError, match="steps: 10 -> 99"):
        fetch(compute, {"seeds": 3, "steps": 99}, profile="full")
    assert compute.calls == 1
    assert fetch(compute, profile="default").metrics == {"acc": 2.5}  # other profiles still compute


def test_available_profile_falls_back_to_default_when_full_is_not_stored(store, monkeypatch, capsys):
    monkeypatch.setenv("MODLIB_FULL_FROM_STORE", "1")
    assert results.available_profile("full", "chap") == "default"
    assert "not stored yet" in capsys.readouterr().out
    monkeypatch.delenv("MODLIB_FULL_FROM_STORE")
    assert results.available_profile("full", "other") == "full"  # outside a book build: no fallback
    fetch(Counter(), profile="full")
    monkeypatch.setenv("MODLIB_FULL_FROM_STORE", "1")
    assert results.available_profile("full", "chap") == "full"
    assert results.available_profile("full", "chap", ["exp"]) == "full"
    capsys.readouterr()
    assert results.available_profile("full", "chap", ["exp", "exp2"]) == "default"  # one still missing
    assert "incomplete (1 of 2 stored)" in capsys.readouterr().out


def test_a_failed_computation_writes_nothing(store):
    def broken():
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        fetch(broken)
    assert not list(store.rglob("*.json")) and not list(store.rglob("*.npz"))


def test_an_interrupted_write_keeps_the_old_result_and_leaves_no_partial_file(store, monkeypatch):
    fetch(Counter())
    real_replace = os.replace

    def crash_on_json(src, dst):
        if str(dst).endswith(".json"):
            raise KeyboardInterrupt
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", crash_on_json)
    with pytest.raises(KeyboardInterrupt):
        fetch(Counter(), {"seeds": 3, "steps": 20})
    monkeypatch.setattr(os, "replace", real_replace)
    folder = store / "default" / "chap"
    assert sorted(p.name for p in folder.iterdir()) == ["exp.json", "exp.npz"]  # no temporary files
    # the .npz was replaced but the .json was not: the checksum no longer matches, so nothing stale
    # or half-written loads; the next fetch recomputes
    compute = Counter()
    assert fetch(compute, {"seeds": 3, "steps": 20}).metrics == {"acc": 1.5} and compute.calls == 1


def test_corrupt_array_file_is_not_loaded(store):
    fetch(Counter())
    (store / "default" / "chap" / "exp.npz").write_bytes(b"garbage")
    compute = Counter()
    fetch(compute)
    assert compute.calls == 1
