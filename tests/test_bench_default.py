"""The README's table of `default` CPU times is generated from benchmarks/default_cpu.csv (what
benchmarks/bench_default.py measured), not typed."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("bench_default", ROOT / "benchmarks" / "bench_default.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def test_the_readme_table_is_the_measured_one():
    readme = (ROOT / "README.md").read_text()
    assert bench.readme_text(readme, *bench.readme_rows()) == readme, \
        "run `python benchmarks/bench_default.py --readme` after measuring"


def test_the_table_marks_a_chapter_over_budget():
    rows = [{"chapter": "bridge", "cpu_s": "181", "wall_s": "200", "machine": "m"},
            {"chapter": "redundant_input_toy", "cpu_s": "179", "wall_s": "200", "machine": "m"}]
    lines = bench.table(rows).splitlines()
    assert any(line.startswith("| 7,") and line.endswith("**no** |") for line in lines)
    assert any(line.startswith("| 1,") and line.endswith("yes |") for line in lines)


def test_the_gpu_table_puts_the_forced_wall_time_beside_the_rule():
    rows = [{"chapter": "bridge", "cpu_s": "136.4", "wall_s": "137.1", "machine": "m", "device": "rule"},
            {"chapter": "weight_masks", "cpu_s": "188.5", "wall_s": "190.2", "machine": "m", "device": "rule"}]
    forced = [{"chapter": "bridge", "cpu_s": "196.0", "wall_s": "199.4", "machine": "m", "device": "cuda"}]
    lines = bench.gpu_table(rows, forced).splitlines()
    assert "| 7, `bridge` | 136 | 137 | 199 |" in lines
    assert "| 4, `weight_masks` | 188 | 190 | – |" in lines


def test_a_bad_chapter_is_named_with_the_choices(capsys):
    import pytest

    with pytest.raises(SystemExit):
        bench.main(["chapter_eight"])
    err = capsys.readouterr().err
    assert "chapter_eight" in err and "bridge" in err


def test_the_machine_speed_beside_each_time_is_a_small_op_in_microseconds():
    speed = bench.op_us(seconds=0.05)
    assert 0.1 < speed < 1000, speed  # one elementwise op on a [10, 8] tensor: microseconds, not seconds
    rows = [{"chapter": "bridge", "cpu_s": "150", "wall_s": "160", "machine": "m", "op_us": "4.2"},
            {"chapter": "redundant_input_toy", "cpu_s": "170", "wall_s": "171", "machine": "m"}]
    lines = bench.table(rows).splitlines()
    assert any(line.startswith("| 7,") and "| 4.2 |" in line for line in lines)
    assert any(line.startswith("| 1,") and "| – |" in line for line in lines)  # a row measured before the column


def test_a_failed_chapter_is_reported_and_the_others_are_kept(tmp_path, monkeypatch, capsys):
    def run(chapter):
        if chapter == "bridge":
            raise SystemExit("bridge failed at default: boom")
        return {"chapter": chapter, "cpu_s": 1.0, "wall_s": 2.0, "op_us": 3.0, "slowest": "cell 1"}

    monkeypatch.setattr(bench, "run", run)
    monkeypatch.delenv("MODLIB_DEVICE", raising=False)
    out = tmp_path / "t.csv"
    assert bench.main(["redundant_input_toy", "bridge", "weight_masks", "--csv", str(out)]) == 1
    assert "bridge failed at default: boom" in capsys.readouterr().err
    rows = bench.read_csv(out)
    assert [r["chapter"] for r in rows] == ["redundant_input_toy", "weight_masks"]
    assert rows[0]["device"] in {"cpu"} or rows[0]["device"].startswith("cuda (")


def test_a_forced_device_is_named_in_the_csv(monkeypatch):
    monkeypatch.setenv("MODLIB_DEVICE", "cpu")
    assert bench.device_rule() == "cpu (forced by $MODLIB_DEVICE)"
