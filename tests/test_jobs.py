"""The cluster runner (modlib.jobs): one job per stored result, run locally in parallel or submitted
to SLURM through submitit (up to the script it writes; there is no cluster here)."""

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

from modlib import batch, jobs, results
from modlib import redundant_input_toy as toy
from modlib import structural_compositionality as sc
from modlib.pretraining_consistency import own_runs

SMOKE = "smoke"


def stored_files(root):
    """``{chapter/name: Result}`` of every result stored under ``root`` at the smoke profile."""
    return {f"{p.parent.name}/{p.stem}": results.read(p)
            for p in sorted((root / SMOKE).glob("*/*.json")) if p.name != "_batch.json"}


# Four jobs of two chapters, one needing another (so the workers run in two stages); every job of a
# chapter computes through the same chapter function, so a subset checks the workers as all would.
WORKER_JOBS = [f"{toy.CHAPTER}/sweep-relu-ce", f"{toy.CHAPTER}/gd-trajectory",
               f"{sc.CHAPTER}/sv-plural-untrained-0"]


def test_local_workers_compute_what_the_in_process_run_computes(tmp_path, monkeypatch):
    """Jobs of two chapters at smoke: 2 local worker processes store bit-identical metrics and arrays
    to the chapters' own in-process run (both with one CPU thread)."""
    inline, parallel = tmp_path / "inline", tmp_path / "parallel"
    table = jobs.jobs([toy.CHAPTER, sc.CHAPTER], SMOKE)
    wanted = WORKER_JOBS + [f"{sc.CHAPTER}/sv-plural-0"]  # the untrained control needs its trained twin
    from threadpoolctl import threadpool_limits

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:  # numpy's BLAS too (chapter 1's least squares): a worker runs with OMP_NUM_THREADS=1
        with threadpool_limits(1), jobs.store_at(inline):
            for job in wanted[::-1]:  # needs first
                table[job][1](torch.device("cpu"))
    finally:
        torch.set_num_threads(threads)
    report = jobs.run([toy.CHAPTER, sc.CHAPTER], SMOKE, workers=2, threads=1, out=tmp_path / "out", root=parallel,
                      only=WORKER_JOBS)

    assert {r["status"] for r in report.values()} == {"made"}
    expected, got = stored_files(inline), stored_files(parallel)
    assert sorted(got) == sorted(report) == sorted(expected) == sorted(wanted)
    for key, want in expected.items():
        assert got[key].config == want.config, key
        assert got[key].metrics == want.metrics, key
        assert sorted(got[key].arrays) == sorted(want.arrays), key
        for name, array in want.arrays.items():
            assert np.array_equal(got[key].arrays[name], array), (key, name)
    # a second call finds everything stored and runs nothing
    again = jobs.run([toy.CHAPTER, sc.CHAPTER], SMOKE, workers=2, threads=1, out=tmp_path / "out", root=parallel,
                     only=WORKER_JOBS)
    assert {r["status"] for r in again.values()} == {"stored"}


def test_only_names_a_job_of_the_chapters_or_says_which_are(tmp_path):
    with pytest.raises(ValueError, match="job='redundant_input_toy/nope' is not valid; choose one of.*sweep-relu-ce"):
        jobs.run([toy.CHAPTER], SMOKE, out=tmp_path / "out", root=tmp_path / "store", dry_run=True,
                 only=[f"{toy.CHAPTER}/nope"])


def test_a_killed_job_leaves_nothing_that_loads_and_is_redone(tmp_path):
    root, job = tmp_path / "store", f"{toy.CHAPTER}/sweep-relu-ce"
    assert job in jobs.jobs([toy.CHAPTER], SMOKE)
    log = tmp_path / "job.log"
    with log.open("w") as f:
        proc = subprocess.Popen([sys.executable, "-m", "modlib.jobs", "--profile", SMOKE, "--root", str(root), job],
                                stdout=f, stderr=subprocess.STDOUT, env={**os.environ, "OMP_NUM_THREADS": "1"})
    deadline = time.time() + 120
    while "profile smoke" not in log.read_text():  # the job has begun computing
        assert proc.poll() is None and time.time() < deadline, log.read_text()
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert "stored after" not in log.read_text()  # it was killed mid-way
    json_path = root / SMOKE / job.replace("/", os.sep)
    assert not json_path.with_suffix(".json").exists()  # the .json, written last, marks a whole result

    report = jobs.run([toy.CHAPTER], SMOKE, workers=2, threads=1, out=tmp_path / "out", root=root, only=[job])
    assert report == {job: {"status": "made", "log": "", "tried": True}}
    assert results.read(json_path.with_suffix(".json")).metrics["rows"]
    assert os.environ.get(results.ROOT_ENV) != str(root)  # the runner left the caller's store as it was


@pytest.fixture
def fake_slurm(tmp_path, monkeypatch):
    """``srun``, ``sbatch`` (keeps each script, answers job ids 1001, 1002, ...) and ``sacct`` (answers
    the state in ``state.txt``) on the PATH."""
    bin_dir, scripts = tmp_path / "bin", tmp_path / "scripts"
    bin_dir.mkdir()
    scripts.mkdir()
    (tmp_path / "state.txt").write_text("RUNNING")
    tools = {
        "srun": "#!/bin/sh\nexit 0\n",
        "sbatch": f'#!/bin/sh\nn=$(($(ls {scripts} | wc -l) + 1001))\ncp "$1" {scripts}/$n.sh\n'
                  f'echo "Submitted batch job $n"\n',
        "sacct": f'#!/bin/sh\necho "JobID|State|NodeList"\nfor id in $(ls {scripts} | sed "s/.sh//"); do\n'
                 f'  echo "$id|$(cat {tmp_path}/state.txt)|node1"\ndone\n',
    }
    for name, text in tools.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return scripts, tmp_path / "state.txt"


def test_slurm_submits_one_job_per_missing_result_with_the_asked_sbatch_parameters(tmp_path, store, fake_slurm,
                                                                                   capsys):
    scripts, state = fake_slurm
    root, out = store, tmp_path / "out"
    code = batch.main(["--profile", SMOKE, "--executor", "slurm", "--out", str(out), "--partition", "gpu",
                       "--gpus", "2", "--time", "720", "--mem", "32", "--cpus", "8", f"{toy.CHAPTER}.ipynb"])
    assert code == 0
    expected = jobs.jobs([toy.CHAPTER], SMOKE)
    submitted = sorted(scripts.glob("*.sh"))
    assert len(submitted) == len(expected) >= 2
    text = submitted[0].read_text()
    for line in ("#SBATCH --partition=gpu", "#SBATCH --gpus-per-node=2", "#SBATCH --time=720",
                 "#SBATCH --mem=32GB", "#SBATCH --cpus-per-task=8"):
        assert line in text.splitlines(), (line, text)
    assert f"{out / SMOKE / 'jobs' / 'slurm'}" in text  # its logs
    assert "submitted" in capsys.readouterr().out

    # the next call: the jobs are still running, so nothing is submitted twice
    slurm = {"partition": "gpu", "time": 60}
    report = jobs.run([toy.CHAPTER], SMOKE, executor="slurm", out=out, root=root, slurm=slurm)
    assert {r["status"] for r in report.values()} == {"running"}
    state.write_text("UNKNOWN")  # sacct has not caught up, or cannot say: not submitted twice either
    report = jobs.run([toy.CHAPTER], SMOKE, executor="slurm", out=out, root=root, slurm=slurm)
    assert {r["status"] for r in report.values()} == {"running"}
    assert len(list(scripts.glob("*.sh"))) == len(expected)

    # they died: reported failed with their log, and submitted again
    state.write_text("FAILED")
    report = jobs.run([toy.CHAPTER], SMOKE, executor="slurm", out=out, root=root, dry_run=True)
    assert {r["status"] for r in report.values()} == {"failed"}
    assert all("SLURM: FAILED" in r["log"] and str(out) in r["log"] for r in report.values())
    report = jobs.run([toy.CHAPTER], SMOKE, executor="slurm", out=out, root=root, slurm=slurm)
    assert {r["status"] for r in report.values()} == {"submitted"}
    assert len(list(scripts.glob("*.sh"))) == 2 * len(expected)
    assert "submitted again" in jobs.summary(report)


def test_slurm_reports_a_refused_submission_and_a_missing_time_limit(tmp_path, store, fake_slurm):
    scripts, _ = fake_slurm
    sbatch = scripts.parent / "bin" / "sbatch"
    sbatch.write_text("#!/bin/sh\necho 'sbatch: error: invalid partition specified: gpux' >&2\nexit 1\n")
    report = jobs.run([toy.CHAPTER], SMOKE, executor="slurm", out=tmp_path / "out", root=store,
                      slurm={"partition": "gpux", "time": 60})
    failed = [r for r in report.values() if r["status"] == "failed"]
    assert len(failed) == 1 and "invalid partition specified: gpux" in failed[0]["log"]  # it stopped there
    assert {r["status"] for r in report.values()} == {"failed", "left"}
    with pytest.raises(ValueError, match="--time MINUTES"):
        jobs.run([toy.CHAPTER], SMOKE, executor="slurm", out=tmp_path / "out", root=store, slurm={"partition": "gpu"})


def test_chapter_6_jobs_wait_for_pretraining_and_share_chapter_5s_base_models(store):
    table = jobs.jobs(["pretraining_consistency"], SMOKE)
    pre = {"pretraining_consistency/pretrain-language", "pretraining_consistency/pretrain-vision"}
    assert pre <= set(table) and all(not table[k][0] for k in pre)
    shared = [k for k in table if k.startswith(sc.CHAPTER)]
    assert shared and all(not table[k][0] for k in shared)  # chapter 5's scratch base models
    def needs(key: str) -> set[str]:  # every job ``key`` waits for, directly or through another
        out, todo = set(), list(table[key][0])
        while todo:
            k = todo.pop()
            if k not in out:
                out.add(k)
                todo += table.get(k, ((),))[0]
        return out

    runs = {f"pretraining_consistency/{own_runs.pretrain_name(kind, k)}" for kind in ("language", "vision")
            for k in own_runs.runs(SMOKE)}  # the added pretraining runs (issue 53) wait for nothing
    assert runs <= set(table) and all(not table[k][0] for k in runs)
    own = [k for k in table if k.startswith("pretraining_consistency/") and k not in pre | runs]
    assert own and all("pretraining_consistency/pretrain-language" in needs(k) for k in own)
    vision = [k for k in own if k.split("/")[1].rsplit("-", 2)[0] in sc.VISION]  # pc.run loads both checkpoints
    assert any("-scratch-" in k for k in vision) and any("-pretrained-" in k for k in vision)
    assert all("pretraining_consistency/pretrain-vision" in table[k][0] for k in vision)
    for rule, k in own_runs.names(SMOKE):  # a base model from its own run waits for that run
        run = f"pretraining_consistency/{own_runs.pretrain_name(own_runs.kind(rule), k)}"
        assert run in table[f"pretraining_consistency/{own_runs.name(rule, k)}"][0]
    # a dry run on an empty store reports every job, none stored
    report = jobs.run(["pretraining_consistency"], SMOKE, dry_run=True, root=store)
    assert set(report) == set(table) and {r["status"] for r in report.values()} == {"left"}


@pytest.mark.parametrize("call, message", [
    (lambda: jobs.run([toy.CHAPTER], SMOKE, executor="pbs", dry_run=True), "executor='pbs' is not valid; choose one of 'local', 'slurm'"),
    (lambda: jobs.run(["no_such_chapter"], SMOKE, dry_run=True), "chapter='no_such_chapter' is not valid"),
    (lambda: jobs.run([toy.CHAPTER], SMOKE, workers=0), "workers=0 is not valid"),
    (lambda: jobs.compute(f"{toy.CHAPTER}/sweep-nope", SMOKE, "."), "job='redundant_input_toy/sweep-nope' is not valid"),
])
def test_bad_input_names_the_value_and_the_choices(call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()


def test_local_workers_spread_over_the_gpus_and_share_the_cores(monkeypatch):
    assert [jobs.worker_env(slot, 4, gpus=2)["CUDA_VISIBLE_DEVICES"] for slot in range(4)] == ["0", "1", "0", "1"]
    assert jobs.worker_env(0, 4, gpus=2)["OMP_NUM_THREADS"] == "4"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")  # the caller's own choice of GPUs is kept
    assert [jobs.worker_env(slot, 4, gpus=2)["CUDA_VISIBLE_DEVICES"] for slot in range(3)] == ["2", "3", "2"]
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    # no GPU: the variable is left as it was
    assert jobs.worker_env(1, 1, gpus=0).get("CUDA_VISIBLE_DEVICES") == os.environ.get("CUDA_VISIBLE_DEVICES")


def test_a_bad_slurm_option_is_named(tmp_path, fake_slurm):
    with pytest.raises(ValueError, match="SLURM option is not valid.*partitionn"):
        jobs.slurm_executor(tmp_path, {"partitionn": "gpu", "time": 60})


@pytest.mark.parametrize("args, message", [
    (["--executor", "local", "--dry-run", "no_such_chapter.ipynb"], "chapter='no_such_chapter' is not valid"),
    (["--executor", "local", "--force"], "--force does not apply to --executor"),
    (["--executor", "slurm", "--partition", "gpu"], "--time MINUTES"),
])
def test_the_command_line_names_what_is_wrong(store, capsys, args, message):
    with pytest.raises(SystemExit):
        batch.main(["--profile", SMOKE, *args])
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("text, problem", [
    ('{"redundant_input_toy/sweep-relu-mse": {"job_id": "1001", "log": "a\tb"}}',
     "is not valid JSON (Invalid control character"),
    ('["redundant_input_toy/sweep-relu-mse"]', "is not a record of submitted jobs"),
    ('{"redundant_input_toy/sweep-relu-mse": "1001"}', "is not a record of submitted jobs"),
])
def test_a_corrupt_job_list_is_named_with_its_fix_and_does_not_block_the_local_executor(tmp_path, store, capsys,
                                                                                       text, problem):
    ledger = tmp_path / "out" / SMOKE / "jobs" / "submitted.json"
    ledger.parent.mkdir(parents=True)
    ledger.write_text(text)
    report = jobs.run([toy.CHAPTER], SMOKE, executor="local", dry_run=True, out=tmp_path / "out", root=store)
    assert {r["status"] for r in report.values()} == {"left"}
    with pytest.raises(SystemExit):
        batch.main(["--profile", SMOKE, "--executor", "slurm", "--dry-run", "--out", str(tmp_path / "out"),
                    f"notebooks/{toy.CHAPTER}.ipynb"])
    err = capsys.readouterr().err
    assert f"{ledger} (the SLURM jobs submitted so far) {problem}" in err, err
    assert f"delete it (rm {ledger})" in err


def test_an_unavailable_device_is_refused_before_local_jobs_start(tmp_path, store, monkeypatch):
    monkeypatch.setenv("MODLIB_DEVICE", "cuda:99")  # no machine the tests run on has 100 GPUs
    monkeypatch.setattr(jobs, "_run_local", lambda *a, **kw: pytest.fail("the jobs were started"))
    with pytest.raises(ValueError, match=r"\$MODLIB_DEVICE='cuda:99' asks for a device that is not available "
                                         r"here; available: .*every local job would fail on it"):
        jobs.run([toy.CHAPTER], SMOKE, executor="local", root=store, out=tmp_path)
    jobs.run([toy.CHAPTER], SMOKE, executor="local", dry_run=True, root=store, out=tmp_path)  # only reads


def test_a_bad_thread_count_for_local_jobs_is_refused(tmp_path, store, monkeypatch):
    monkeypatch.setattr(jobs, "_run_local", lambda *a, **kw: pytest.fail("the jobs were started"))
    with pytest.raises(ValueError, match=r"threads=0 is not valid"):
        jobs.run([toy.CHAPTER], SMOKE, executor="local", threads=0, root=store, out=tmp_path)


def test_the_command_line_names_an_unknown_job_without_a_traceback(capsys):
    """Issue 54, item 8: a chapter's unknown result is a usage error naming the jobs."""
    with pytest.raises(SystemExit) as err:
        jobs.main([f"{toy.CHAPTER}/no-such-result", "--profile", "smoke"])
    printed = capsys.readouterr().err
    assert err.value.code == 2 and "Traceback" not in printed
    assert f"job='{toy.CHAPTER}/no-such-result'" in printed and f"{toy.CHAPTER}/baselines" in printed


@pytest.mark.parametrize("flag", ["--gpus", "--time", "--mem", "--cpus"])
def test_slurm_counts_are_checked(flag, capsys):
    with pytest.raises(SystemExit):
        batch.main(["--executor", "slurm", flag, "-3", "--time", "60"] if flag != "--time" else
                   ["--executor", "slurm", "--time", "-3"])
    assert f"{flag.lstrip('-')}=-3 is not valid" in capsys.readouterr().err


def test_the_batch_refuses_a_file_that_is_not_a_notebook(tmp_path, store, capsys):
    script = tmp_path / "chap.py"
    script.write_text("x = 1\n")
    with pytest.raises(SystemExit):
        batch.main(["--profile", "smoke", str(script)])
    assert f"{script} is not a notebook (.ipynb)" in capsys.readouterr().err
    assert not store.exists() or not list(store.rglob("chap"))


@pytest.mark.parametrize("text", ["{}", "not json at all", '{"cells": 3}'])
def test_the_batch_refuses_an_ipynb_that_is_not_a_notebook_before_making_its_store_folder(
        tmp_path, store, capsys, text):
    """A file named .ipynb that nbformat cannot read is a usage error, not a traceback after its
    store folder was made (issue 54's probe: ``{}`` made ``smoke/fake`` and ended in a traceback)."""
    fake = tmp_path / "fake.ipynb"
    fake.write_text(text)
    with pytest.raises(SystemExit) as err:
        batch.main(["--profile", "smoke", str(fake)])
    printed = capsys.readouterr().err
    assert err.value.code == 2 and "Traceback" not in printed
    assert f"{fake} is not a notebook nbformat can read" in printed
    assert not store.exists() or not list(store.rglob("fake"))


def test_tiny_network_jobs_run_on_the_cpu_where_cuda_exists_and_the_others_on_cuda(monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "a mocked GPU")
    monkeypatch.delenv("MODLIB_DEVICE", raising=False)
    every = jobs.jobs(list(jobs.CHAPTERS), "smoke")
    tiny = {job for job in every if jobs.work(job) == "tiny"}
    assert {job.split("/")[0] for job in tiny} == {"redundant_input_toy", "bridge"}
    assert tiny >= {job for job in every if job.startswith("redundant_input_toy/")}
    toys = {"bridge/toy-a", "bridge/toy-b", "bridge/rule2-random-a", "bridge/rule2-random-b"}  # and rule 2's control
    blind = {f"bridge/{p}-{f}" for p in ("unseen", "matched", "unseen-controls", "unseen-random")
             for f in "ab"}  # blind masks, their controls, rule 2's random masks; "built" matched
    assert {job for job in tiny if job.startswith("bridge/")} == toys | {t + "-fresh" for t in toys} | blind
    picked = {}  # the device each job's computation is given, not run
    monkeypatch.setattr(jobs, "jobs", lambda chapters, profile: {
        job: ((), lambda d, job=job: picked.setdefault(job, d)) for job in every})
    for job in ("redundant_input_toy/scale", "bridge/toy-b", "bridge/mnist-a", "weight_masks/addmul-seed0"):
        jobs.compute(job, "smoke", "unused")
    assert picked == {"redundant_input_toy/scale": torch.device("cpu"), "bridge/toy-b": torch.device("cpu"),
                      "bridge/mnist-a": torch.device("cuda"), "weight_masks/addmul-seed0": torch.device("cuda")}
    assert "job bridge/toy-b: profile smoke, cpu (" in capsys.readouterr().out
