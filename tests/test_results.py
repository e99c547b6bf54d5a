import errno
import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

from modlib import fingerprint, results
from modlib import redundant_input_toy as toy

CONFIG = {"seeds": 3, "steps": 10}
CODE = "modlib.data.digits"  # the module that "computes" these test results


class Counter:
    def __init__(self):
        self.calls = 0

    def __call__(self):
        self.calls += 1
        return {"acc": 0.5 + self.calls}, {"curve": np.arange(4.0) * self.calls}


def fetch(compute, config=CONFIG, profile="default"):
    return results.fetch("chap", "exp", config, compute, profile=profile, device="cpu (test)", code=CODE)


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
                          device="cuda (test)", code=CODE)
            for k in (2, 0, 1)]
    assert runs[1].provenance == "profile default · cuda (test) · seed 0"
    assert results.provenance(runs) == "profile default · cuda (test) · 3 seeds (0-2)"
    with pytest.raises(ValueError, match="at least one"):
        results.provenance([])


def test_caption_provenance_says_each_line_once():
    line = "profile full · CPU (1 thread) · 100 seeds"
    assert results.caption_provenance(line, {"the paper's setting": line}) == line
    other = "profile default · CPU (1 thread) · 8 seeds"
    assert (results.caption_provenance(line, {"the fits": other, "the sweep": line})
            == f"{line} (the fits: {other})")


def test_load_reads_a_matching_result_and_never_computes(store):
    assert results.load("chap", "exp", CONFIG, profile="default", code=CODE) is None
    fetch(Counter())
    assert results.load("chap", "exp", CONFIG, profile="default", code=CODE).metrics == {"acc": 1.5}
    assert results.load("chap", "exp", {"seeds": 3, "steps": 11}, profile="default", code=CODE) is None  # another config
    assert results.load("chap", "exp", CONFIG, profile="full", code=CODE) is None


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


# --- a result belongs to the code that made it ------------------------------------------------------


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A copy of modlib's sources that a test may edit, read by the code fingerprint."""
    copy = tmp_path / "src" / "modlib"
    shutil.copytree(fingerprint.PACKAGE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(fingerprint, "PACKAGE_DIR", copy)
    monkeypatch.setattr(fingerprint, "SOURCES", {})  # read the copy, not what this process imported
    return copy


def test_a_result_made_by_other_code_is_recomputed_saying_what_changed(store, package, capsys, monkeypatch):
    def fetch_toy(compute, profile="default"):
        return results.fetch("chap", "exp", CONFIG, compute, profile=profile, device="cpu", code=toy.run_group)

    compute = Counter()
    fetch_toy(compute)
    (package / "plots.py").write_text("CHANGED = 1\n")  # draws results, computes none
    (package / "models.py").write_text((package / "models.py").read_text() + "\nUNUSED = 1\n")
    fetch_toy(compute)
    assert compute.calls == 1
    toy_py = package / "redundant_input_toy" / "experiment.py"
    toy_py.write_text(toy_py.read_text().replace("GENERALIZES = 0.9", "GENERALIZES = 0.8"))
    assert fetch_toy(compute).metrics == {"acc": 2.5} and compute.calls == 2
    assert "was made by other code (changed: GENERALIZES): recomputing" in capsys.readouterr().out
    assert fetch_toy(compute).metrics == {"acc": 2.5} and compute.calls == 2  # current again
    assert results.load("chap", "exp", CONFIG, profile="default", code=toy.run_group) is not None

    fetch_toy(compute, profile="full")
    toy_py.write_text(toy_py.read_text().replace("GENERALIZES = 0.8", "GENERALIZES = 0.7"))
    assert results.load("chap", "exp", CONFIG, profile="full", code=toy.run_group) is None
    monkeypatch.setenv("MODLIB_FULL_FROM_STORE", "1")
    with pytest.raises(results.StaleResultError, match=r"changed: GENERALIZES.*Remake it with: python -m "
                                                        r"modlib.batch --profile full notebooks/chap.ipynb"):
        fetch_toy(compute, profile="full")


def test_a_result_without_a_code_fingerprint_is_recomputed(store, capsys):
    fetch(Counter())
    path = store / "default" / "chap" / "exp.json"
    meta = json.loads(path.read_text())
    del meta["code"]  # as written before results recorded their code
    results.write_meta(path, meta)
    compute = Counter()
    fetch(compute)
    assert compute.calls == 1 and "records no code fingerprint" in capsys.readouterr().out


def test_a_result_of_the_previous_rule_or_without_its_own_checksum_is_recomputed(store, capsys):
    fetch(Counter())
    path = store / "default" / "chap" / "exp.json"
    meta = json.loads(path.read_text())
    meta["code"] = {"modlib/data.py": "0123456789abcdef"}  # per-file hashes, the store's previous rule
    results.write_meta(path, meta)
    compute = Counter()
    fetch(compute)
    assert compute.calls == 1 and "made under the store's previous code rule" in capsys.readouterr().out
    meta = json.loads(path.read_text())
    del meta["sha256"]
    path.write_text(json.dumps(meta))
    fetch(compute)
    assert compute.calls == 2 and "records no checksum of itself" in capsys.readouterr().out


def test_a_result_read_from_another_stored_result_goes_stale_when_that_one_is_remade(store, capsys):
    checkpoint = results.fetch("chap", "ckpt", {"seeds": 1}, Counter(), profile="default", device="cpu",
                               code=CODE)
    compute = Counter()

    def tuned(source):
        return results.fetch("chap", "tuned", CONFIG, compute, profile="default", device="cpu", code=CODE,
                             depends=[source])

    assert tuned(checkpoint).meta["depends"] == {"default/chap/ckpt": results.content(checkpoint)}
    tuned(checkpoint)
    assert compute.calls == 1
    remade = results.fetch("chap", "ckpt", {"seeds": 2}, Counter(), profile="default", device="cpu", code=CODE)
    capsys.readouterr()
    tuned(remade)
    assert compute.calls == 2 and "was made from other stored results (default/chap/ckpt)" in capsys.readouterr().out


# --- errors that name the file ----------------------------------------------------------------------


def test_a_hand_edited_config_is_detected(store, capsys, monkeypatch):
    fetch(Counter())
    path = store / "default" / "chap" / "exp.json"
    meta = json.loads(path.read_text())
    meta["config"]["steps"] = 10_000  # edited by hand; the recorded hash is the old one's
    path.write_text(json.dumps(meta))
    with pytest.raises(results.UnreadableResultError, match=f"{path}.*edited by hand"):
        results.read(path)
    assert results.load("chap", "exp", {"seeds": 3, "steps": 10_000}, profile="default", code=CODE) is None
    compute = Counter()
    fetch(compute, {"seeds": 3, "steps": 10_000})
    assert compute.calls == 1
    assert f"is unreadable: {path}: its content no longer has the checksum" in capsys.readouterr().out


def test_hand_edited_metrics_are_detected_and_recomputed(store, capsys):
    fetch(Counter(), profile="full")
    path = store / "full" / "chap" / "exp.json"
    path.write_text(path.read_text().replace('"acc": 1.5', '"acc": 0.987'))  # a number edited by hand
    with pytest.raises(results.UnreadableResultError, match=f"{path}: its content no longer has the checksum"):
        results.read(path)
    compute = Counter()
    assert fetch(compute, profile="full").metrics == {"acc": 1.5} and compute.calls == 1
    assert "edited by hand, or damaged" in capsys.readouterr().out


def test_a_read_only_store_is_named_before_computing(store, monkeypatch):
    folder = store / "default" / "chap"
    folder.mkdir(parents=True)
    if os.geteuid() == 0:  # root writes through permissions: make the folder refuse as a read-only mount does
        def refuse(*args, dir=None, **kwargs):
            if Path(dir) == folder:
                raise OSError(errno.EROFS, os.strerror(errno.EROFS))
            return real(*args, dir=dir, **kwargs)
        real = tempfile.mkstemp
        monkeypatch.setattr(tempfile, "mkstemp", refuse)
    else:
        folder.chmod(0o555)
    compute = Counter()
    try:
        with pytest.raises(PermissionError, match=f"cannot be written at {folder}"):
            fetch(compute)
        assert compute.calls == 0  # refused before computing, not after
    finally:
        folder.chmod(0o755)


@pytest.mark.parametrize("which", ["json", "npz"])
def test_a_truncated_result_file_is_named_and_recomputed_or_refused(store, capsys, monkeypatch, which):
    fetch(Counter(), profile="full")
    path = store / "full" / "chap" / f"exp.{which}"
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    with pytest.raises(results.UnreadableResultError, match=f"{path}.*delete both files"):
        results.read(path.with_suffix(".json"))
    monkeypatch.setenv("MODLIB_FULL_FROM_STORE", "1")
    with pytest.raises(results.StaleResultError, match=f"unreadable: {path}"):
        fetch(Counter(), profile="full")
    monkeypatch.delenv("MODLIB_FULL_FROM_STORE")
    compute = Counter()
    fetch(compute, profile="full")
    assert compute.calls == 1 and f"unreadable: {path}" in capsys.readouterr().out
    assert results.read(path.with_suffix(".json")).metrics == {"acc": 1.5}


def test_a_relative_results_root_resolves_once(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    name = f"results-{tmp_path.name}"  # relative, and new to this process
    monkeypatch.setenv("MODLIB_RESULTS", name)
    monkeypatch.chdir(tmp_path / "a")
    first = results.default_root()
    monkeypatch.chdir(tmp_path / "b")  # e.g. a notebook kernel running in notebooks/
    assert results.default_root() == first == tmp_path / "a" / name


def test_comments_docstrings_and_the_settings_table_are_not_code(package):
    before = fingerprint.of(toy.run_group)
    source = (package / "redundant_input_toy" / "experiment.py").read_text()
    edited = source.replace('"""The redundant-input toy', '"""An edited docstring. The redundant-input toy', 1)
    edited = edited.replace("SETTINGS = {", "# a new comment\nSETTINGS = {  # and another\n", 1)
    edited = edited.replace("seeds=100", "seeds=101")  # the full profile's table: recorded in each config
    assert edited != source
    (package / "redundant_input_toy" / "experiment.py").write_text(edited)
    assert fingerprint.of(toy.run_group) == before
    (package / "redundant_input_toy" / "experiment.py").write_text(edited.replace("GENERALIZES = 0.9", "GENERALIZES = 0.8"))
    assert fingerprint.of(toy.run_group) != before


def test_available_profile_counts_results_not_the_batch_manifest(store, monkeypatch, capsys):
    fetch(Counter(), profile="full")
    (store / "full" / "chap" / "_batch.json").write_text("{}")  # the batch runner's manifest
    monkeypatch.setenv("MODLIB_FULL_FROM_STORE", "1")
    assert results.available_profile("full", "chap", ["exp", "exp2", "exp3"]) == "default"
    assert "incomplete (1 of 3 stored)" in capsys.readouterr().out
    (store / "full" / "other").mkdir(parents=True)
    (store / "full" / "other" / "_batch.json").write_text("{}")
    assert results.available_profile("full", "other") == "default"  # a manifest alone is no result
    assert "not stored yet" in capsys.readouterr().out


def test_a_changed_config_names_only_what_changed_not_tuples_read_back_as_lists(store, capsys):
    fetch(Counter(), {"hidden": (4, 4), "steps": 10})
    fetch(Counter(), {"hidden": (4, 4), "steps": 20})
    out = capsys.readouterr().out
    assert "steps: 10 -> 20" in out and "hidden" not in out


def test_device_text_reads_thread_counts_in_words():
    assert results.device_text(["cpu (1 threads)"]) == "CPU (1 thread)"
    assert results.device_text(["cpu (2 threads)", "cpu (1 threads)", "cpu (2 threads)"]) == \
        "CPU (results computed with 1 and 2 threads)"
    assert results.device_text(["cuda (test)", "cpu (4 threads)"]) == "CPU (4 threads) and cuda (test)"
    assert results.device_text(["cpu (test)"]) == "cpu (test)"


def test_a_result_copied_over_another_name_is_not_read_as_that_result(store, capsys):
    """Two seeds whose configs are alike (chapter 5's ``sv-plural-1`` and ``-2``): a copy of one
    under the other's name is recomputed, not counted twice (issue 54, item 7)."""
    one, two = Counter(), Counter()
    results.fetch("chap", "run-1", CONFIG, one, profile="full", device="cpu", code=CODE)
    results.fetch("chap", "run-2", CONFIG, two, profile="full", device="cpu", code=CODE)
    folder = store / "full" / "chap"
    for suffix in (".json", ".npz"):
        shutil.copy(folder / f"run-1{suffix}", folder / f"run-2{suffix}")
    assert results.load("chap", "run-2", CONFIG, profile="full", code=CODE) is None
    results.fetch("chap", "run-2", CONFIG, two, profile="full", device="cpu", code=CODE)
    assert two.calls == 2
    assert "holds the result full/chap/run-1, not full/chap/run-2" in capsys.readouterr().out


def test_a_result_records_the_library_versions_and_the_cpu(store):
    """Issue 54, item 8: what a recompute elsewhere may differ by is traceable."""
    import platform

    import torch

    meta = fetch(Counter()).meta
    assert meta["versions"]["torch"] == torch.__version__.split("+")[0] or meta["versions"]["torch"] == torch.__version__
    assert meta["versions"]["numpy"] == np.__version__ and meta["versions"]["python"] == platform.python_version()
    assert "transformers" in meta["versions"] and meta["cpu"] and meta["cpu"] != "unknown"
