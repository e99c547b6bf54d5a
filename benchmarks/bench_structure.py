"""Chapter 5's costs: problems generated per second for each task family, and the wall time of one
mask-search configuration on the CPU.

    python benchmarks/bench_structure.py [--profile full] [--problems 40] [--threads 1]

1. Generation (`structural_compositionality.problems`): problems of the compositional task per
   second for every rule; vision panels at the profile's size.
2. One configuration of the mask search (`train_mask` for the profile's mask epochs on its
   mask-training set, then `evaluate` on the ``only`` sets), on an untrained model of each
   modality at the profile's size: the unit the search's grid multiplies.

Measured on this project's 2-core CPU machine (torch 2.13, ``--profile full --threads 1``, while
the book was built on the other core, 2026-11-25):

    problems per second (compositional task)    one mask configuration (20 epochs of 1,500)
      inside-contact      95                       inside-contact   32.4 s train, 0.8 s evaluate
      inside-number       26                       sv-plural        13.8 s train, 0.3 s evaluate
      number-contact      29
      sv-plural       11,651

Drawing panels until their pixels say what was asked is the vision rules' cost: Number-Contact's
and Inside-Number's three-shape panels are redrawn more often. A stored full result (a base model,
the 4-configuration grid and 3 mask seeds for each of two subroutines, about 14 mask trainings)
takes 4 to 11 minutes; the chapter's page lists each one's time from its stored result.
"""

from __future__ import annotations

import argparse
import time

import torch

from modlib import structural_compositionality as sc


def generation(profile: str, n: int) -> list[tuple[str, float]]:
    s = sc.settings(profile)
    rows = []
    for rule in sc.RULES:
        start = time.perf_counter()
        sc.problems(rule, "task", n, seed=0, size=s.size)
        rows.append((rule, n / (time.perf_counter() - start)))
    return rows


def search_configuration(profile: str, rule: str) -> tuple[float, float]:
    """Seconds to train one mask configuration and to evaluate it, for ``rule`` at ``profile``."""
    s = sc.settings(profile)
    train = sc.problems(rule, "sub-0", s.mask_train, seed=0, size=s.size)
    val = {k: sc.problems(rule, k, s.val, seed=1, size=s.size) for k in ("sub-0", "only-0", "only-1")}
    model = sc.make_model(rule, s, 0)
    start = time.perf_counter()
    stages, lams, schedule = sc.grid_settings(rule, s)
    ms = sc.train_mask(model, train, init=s.inits[0], lr=s.mask_lrs[0], stages=stages[0], lam=lams[0],
                       **schedule, epochs=s.mask_epochs, batch=s.mask_batch, seed=0)
    trained = time.perf_counter() - start
    start = time.perf_counter()
    sc.evaluate(model, ms, val, 0)
    return trained, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="full")
    parser.add_argument("--problems", type=int, default=40)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"problems per second (compositional task, profile {args.profile!r})")
    for rule, rate in generation(args.profile, args.problems):
        print(f"  {rule:<20} {rate:10.1f}")
    s = sc.settings(args.profile)
    print(f"one mask-search configuration ({s.mask_epochs} epochs of {s.mask_train} problems, "
          f"batch {s.mask_batch}): train s, evaluate s")
    for rule in ("inside-contact", "sv-plural"):
        trained, evaluated = search_configuration(args.profile, rule)
        print(f"  {rule:<20} {trained:8.1f} {evaluated:8.1f}")


if __name__ == "__main__":
    main()
