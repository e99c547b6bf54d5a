"""Two processes that fetch the same missing result at once (two test workers running notebooks that
share a chapter's results, two batch jobs): one computes it, the other waits and loads it."""

import multiprocessing
import time

import numpy as np

from modlib import results

CODE = "modlib.data.digits"  # the module that "computes" these test results


def slow_fetch(root, calls, out):
    def compute():
        with open(calls, "a") as f:
            f.write("computed\n")
        time.sleep(1.0)  # long enough for the other process to ask for it meanwhile
        return {"acc": 0.5}, {"curve": np.arange(3.0)}

    r = results.fetch("chap", "exp", {"seeds": 1}, compute, profile="smoke", device="cpu (test)", code=CODE,
                      root=root)
    with open(out, "a") as f:
        f.write(f"{r.meta['created']} {r.metrics['acc']}\n")


def test_a_result_two_processes_ask_for_at_once_is_computed_once(tmp_path):
    root, calls, out = tmp_path / "results", tmp_path / "calls", tmp_path / "out"
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=slow_fetch, args=(root, calls, out)) for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    assert [w.exitcode for w in workers] == [0, 0]
    assert calls.read_text() == "computed\n"
    loaded = out.read_text().splitlines()
    assert len(loaded) == 2 and loaded[0] == loaded[1]  # the same stored result, read by both
