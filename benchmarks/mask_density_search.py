"""How sparse do chapter 5's masks get, and what sets it? (issue 31) One mask schedule per call.

    python benchmarks/mask_density_search.py --rule sv-plural --base-seed 0 --trained \
        --epochs 60 --beta-epoch 60 --lam-mult 10 --lr 1e-2 --init 0.05 --tag L10 --out runs/
    python benchmarks/mask_density_search.py --collect runs/ > modlib/structural_compositionality/mask_density_search.csv

A run takes base model ``--base-seed`` of ``--rule``, trained at the ``full`` profile's settings
(``sc.settings("full")``, as ``experiment.study`` trains it; cached as ``OUT/base/RULE-SEED.pt``,
since the stored results hold no weights) or left untrained (``--untrained``, the control), and
trains a continuous-sparsification mask per subroutine with ``train_mask``'s objective, every knob
exposed: ``--epochs``, ``--mask-train`` (problems per epoch), ``--batch``, ``--lr``, ``--lam-mult``
(times the chapter's lambda, which is the paper's 1e-8 scaled to 25M masked weights),
``--lam-delay``/``--lam-warmup`` (lambda stays the chapter's for ``delay`` epochs, then grows linearly
to the multiplied one over ``warmup`` epochs: not in the paper; it lets the task loss find the
subroutine before the penalty bites, since a large lambda from the start prunes everything while
the soft mask still halves every weight and the model is at chance),
``--beta-epoch`` (the epoch at which beta reaches 200; it stays there after), ``--init``,
``--stages``, ``--mask-seed``. Per epoch it records the kept share (``score > 0``, total and per
weight tensor), the mean task loss (cross-entropy) and the penalty; at the end the chapter's
``evaluate`` on the test sets: the subnetwork alone on its own subroutine's ``only`` set and the
other's, the ablation, the same-size-per-layer random subnetwork, and ``own`` (the subnetwork on
its mask-training distribution ``sub-k``), plus ``quality``. One JSON per run in ``--out``;
``--collect`` prints one CSV row per (run, subroutine).

What the table shows (``modlib/structural_compositionality/mask_density_search.csv``): ``kept`` the final share of masked
weights kept; ``kept@half`` the share halfway through training and ``kept drop last 25%`` how much it
still fell in the last quarter of the epochs (converged: near 0); ``settled epoch`` and ``beta settled``
the first epoch from which the kept share stays within 0.001 of its final value, and beta then (a
low beta: the share froze early as beta grew, not at an equilibrium of the objective); ``loss end`` the task loss in the
last epoch; ``own`` (sub-k, must reach 0.9 for the chapter's gate), ``hard target/other`` (the
subnetwork alone on the only-k / only-other sets), ``random target/other`` (a random subnetwork of
the same size per layer: the first test can only fail if this is low), ``ablated target/other`` and
``s/run`` (wall time of both subroutines' masks on one busy CPU core). Plain loops over modlib's
pieces; nothing here is a stored result and nothing in the chapters changes.

What the search found (Nov 2026; base model 0 of each rule at ``full``, one mask seed, mostly the
first subroutine only; 480 Adam steps = the chapter's 20 epochs x 1,500 problems / 64 unless noted;
times on one CPU core of a loaded 2-core machine, so they vary 2x between runs):

* The chapter's schedule reproduces the stored densities (A, N: 32 % sv-plural, 23 % Inside-Contact)
  and the kept share is not set by the schedule's length: 3x more steps at lambda x10 (E) moves
  sv-plural from 16 % to 14.5 %; the share settles after about 300-600 steps, at beta 8-20, before
  beta freezes it. It is set by lambda. The chapter's lambda keeps the paper's *total* penalty
  (1e-8 x 25M weights) over about 250x fewer weights, but Adam normalises each score's gradient, so
  what matters is the per-weight penalty against the per-weight task gradient, which is far larger
  in a small network: the per-weight lambda has to grow.
* Inside-Contact (ResNet "tiny", stages "later" + head): lambda x10 alone, same schedule (O):
  5.1 % kept, subnetwork 1.00 on Inside / 0.22 on Contact, random same-size 0.29 / 0.28, ablation
  0.39 / 0.76 (the paper's pattern), but still falling at the end (0.0025 in the last quarter):
  the same lambda over 40 epochs (E, 960 steps) settles at 2.5 % (ablation 0.34 / 0.49). x30 from the
  start (D): 1.6 %, no collapse in the ResNet; x30 grown over the first 10 epochs (K): 2.3 %;
  x100 (L): 0.8 % (Inside) and 0.5 % (Contact), own >= 0.975, random 0.28-0.37. The untrained
  ResNet at x100 (grown over 10 epochs) keeps 1.9 % (2.5x the trained one's) with own 0.97; at x10
  from the start it collapses (kept 0, chance), where the chapter's schedule keeps about the same
  share (20-24 %) in both. The Contact mask at x10 keeps 4.1 % (ablation 0.19 / 0.53). Sparser is
  not better for the ablation test: removing a 0.5-0.8 % mask (L) barely hurts either subroutine
  (0.92-0.97), so ``quality`` falls to about 0; at 1.6-5 % it is 0.15-0.37.
* ``loss end`` is the soft mask's cross-entropy; where the penalty dominates (sv-plural V, Y) it stays
  near ln 4 while the hard subnetwork is right on 0.95-0.98 of ``sub-0``: the odd-one-out scores are
  sums of cosines, and a pruned BERT separates them by small margins.
* sv-plural (scratch BERT, 2 layers x 64): lambda x20 or more from the start prunes everything
  (C, D, J: kept 0, chance): at beta 1 the soft mask halves every weight, the model is at chance on
  ``sub-0`` (the full model too: 0.40) and the penalty wins before the task loss finds the
  subject path; lower mask lr (F) or a larger init (G, H) do not help. Growing lambda over 10 epochs
  avoids the collapse: x30 13 %, x100 8.3 % (own 0.965); holding it at x1 for 5 epochs and growing it
  over the next 5: x300 6.2 % (own 0.95), x1000 2.3 % (own 0.72, fails the 0.9 gate). The frontier
  at own >= 0.9 is about 6 % of masked weights; the layer-0 attention matrices keep 20-28 %
  of their weights in every such mask, so a random subnetwork with the same per-layer sizes still
  scores 0.82-0.95 there: this small BERT's first test stays hard to fail at any density it
  reaches. A slower beta (R: 40 epochs with the same lambda ramp) leaves the soft masks near 0.5 longer
  and loses the task (own 0.72); 40 epochs with x300 grown over epochs 10-20 (Y) settles at 8.5 %,
  no better than 20. The verb mask at x100 (grown over 10 epochs) keeps 9.3 %. The untrained BERT
  finds nothing at x10 or x100 (kept 0, chance), where the chapter's schedule kept 20-24 %.
"""
import argparse
import csv
import glob
import json
import os
import sys
import time

import torch
from torch.nn import functional as F

from modlib import masks
from modlib.structural_compositionality import experiment as sc
from modlib.structural_compositionality.tasks import RULES, VISION


def collect(folder: str) -> None:
    rows = []
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        run = json.load(open(path))
        a = run["args"]
        for name, r in run["subroutines"].items():
            if "final" not in r:
                continue
            kept = [e["kept"] for e in r["epochs"]]
            n = len(kept)
            f = r["final"]
            # the first epoch from which the kept share stays within 0.001 of its final value, and beta there
            settle = next(e for e in range(n) if all(abs(k - kept[-1]) < 1e-3 for k in kept[e:]))
            rows.append({
                "tag": a["tag"], "rule": a["rule"], "base": ("trained" if a["trained"] else "untrained") + f"-{a['base_seed']}",
                "sub": name, "epochs": a["epochs"], "steps": r["steps"], "mask_train": a["mask_train"],
                "batch": a["batch"], "lr": a["lr"], "lam_mult": a["lam_mult"], "beta_epoch": a["beta_epoch"],
                "lam_delay": a.get("lam_delay", 0.0), "lam_warmup": a.get("lam_warmup", 0.0),
                "init": a["init"], "stages": a["stages"], "mask_seed": a["mask_seed"],
                "kept": f["kept"], "kept@half": kept[n // 2 - 1] if n > 1 else kept[0],
                "kept drop last 25%": kept[max(0, n - 1 - n // 4)] - kept[-1],
                "settled epoch": settle + 1, "beta settled": r["epochs"][settle]["beta"],
                "loss end": r["epochs"][-1]["loss"], "own": f["own"],
                "hard target": f["hard"][0], "hard other": f["hard"][1],
                "random target": f["random"][0], "random other": f["random"][1],
                "ablated target": f["complement"][0], "ablated other": f["complement"][1],
                "quality": f["quality"], "s/run": run.get("seconds")})
    writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows({k: round(v, 4) if isinstance(v, float) else v for k, v in r.items()} for r in rows)


def base_model(rule: str, seed: int, trained: bool, s, out: str):
    """Base model ``seed`` as ``experiment.study`` makes it (trained at ``s``), cached under ``out/base``."""
    model = sc.make_model(rule, s, seed)
    if not trained:
        return model, None
    path = os.path.join(out, "base", f"{rule}-{seed}.pt")
    if os.path.exists(path):
        saved = torch.load(path, weights_only=False)
        model.load_state_dict(saved["state"])
        return model, saved["info"]
    data = problem_sets(rule, s, out)
    t0 = time.time()
    lr = s.vision_lr if rule in VISION else s.language_lr
    losses = sc.train_base(model, data[("train", "task")], epochs=s.epochs, batch=s.batch, lr=lr, seed=seed)
    info = {"losses": losses, "seconds": time.time() - t0,
            "base": {kind: sc.accuracy(model, data[("test", kind)]) for kind in sc.KINDS}}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.save({"state": model.state_dict(), "info": info}, path)
    return model, info


def problem_sets(rule: str, s, out: str) -> dict:
    """``experiment.problem_sets(rule, s)``, cached as ``out/data/RULE-MASKTRAIN.pt`` (rendering the panels
    takes minutes; every run is a fresh process)."""
    path = os.path.join(out, "data", f"{rule}-{s.mask_train}.pt")
    if os.path.exists(path):
        return torch.load(path, weights_only=False)
    data = sc.problem_sets(rule, s)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.save(data, path + ".tmp")
    os.replace(path + ".tmp", path)
    return data


def kept_now(ms) -> tuple[float, list[float]]:
    st = ms.stats()
    return float(st["kept"].sum() / st["weights"].sum()), st["kept_fraction"].round(5).tolist()


def train_mask(model, data, a, log):
    """``experiment.train_mask`` with every knob exposed; appends one record per epoch to ``log``."""
    growth = 200 ** (1 / a.beta_epoch)
    ms = masks.attach(model, "sparsify", names=sc.mask_patterns(model, a.stages), init=a.init, beta_growth=growth)
    lam = 1e-8 * sc.PAPER_TOTAL_MASKED / int(ms.stats()["weights"].sum())  # the chapter's lambda
    opt = torch.optim.Adam(ms.parameters(), lr=a.lr)
    g = torch.Generator().manual_seed(a.mask_seed)
    model.eval()
    steps = 0
    for epoch in range(a.epochs):
        ms.mode = "train"
        # --lam-delay D --lam-warmup W: the chapter's lambda for D epochs, then growing linearly to
        # lam_mult times it over W epochs
        ramp = 1.0 if not a.lam_warmup else min(1.0, max(0.0, epoch - a.lam_delay) / a.lam_warmup)
        mult = 1 + (a.lam_mult - 1) * ramp if (a.lam_warmup or a.lam_delay) else a.lam_mult
        if epoch < a.lam_delay:
            mult = 1.0
        ms.settings["lam"] = mult * lam
        ce = reg = 0.0
        n = 0
        for b in sc.problem_batches(data, a.batch, g):
            task = F.cross_entropy(sc.score(model, b), b["answer"])
            penalty = ms.regularizer()
            loss = task + penalty
            opt.zero_grad()
            loss.backward()
            opt.step()
            ce += task.item() * len(b["answer"])
            reg += penalty.item() * len(b["answer"])
            n += len(b["answer"])
            steps += 1
        beta = ms.beta
        ms.anneal()
        total, layers = kept_now(ms)
        log.append({"epoch": epoch + 1, "beta": beta, "lam_mult": mult, "loss": ce / n, "penalty": reg / n,
                    "kept": total, "layer_kept": layers})
        print(f"  epoch {epoch + 1:3d} beta {beta:7.2f} loss {ce / n:.4f} penalty {reg / n:.4f} "
              f"kept {total:.4f}", flush=True)
    ms.mode = "hard"
    return ms, steps


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rule", required=True, choices=["sv-plural", "inside-contact", "number-contact"])
    p.add_argument("--base-seed", type=int, default=0)
    t = p.add_mutually_exclusive_group()
    t.add_argument("--trained", dest="trained", action="store_true", default=True)
    t.add_argument("--untrained", dest="trained", action="store_false")
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--mask-train", type=int, default=1500)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--lam-mult", type=float, default=1.0)
    p.add_argument("--lam-warmup", type=float, default=0.0,
                   help="epochs over which lambda grows from the chapter's to --lam-mult times it (0: none)")
    p.add_argument("--lam-delay", type=float, default=0.0,
                   help="epochs at the chapter's lambda before --lam-warmup starts")
    p.add_argument("--beta-epoch", type=float, default=None, help="epoch at which beta reaches 200 (default: --epochs)")
    p.add_argument("--init", type=float, default=0.05)
    p.add_argument("--stages", default="all", choices=sc.STAGES)
    p.add_argument("--mask-seed", type=int, default=0)
    p.add_argument("--subroutines", type=int, nargs="+", default=[0, 1])
    p.add_argument("--tag", default="run")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    a.beta_epoch = a.beta_epoch or a.epochs
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))

    s = sc.settings("full")
    name = f"{a.tag}-{a.rule}-{'trained' if a.trained else 'untrained'}{a.base_seed}"
    path = os.path.join(a.out, name + ".json")
    os.makedirs(a.out, exist_ok=True)
    model, info = base_model(a.rule, a.base_seed, a.trained, s, a.out)
    data = problem_sets(a.rule, s.with_(mask_train=a.mask_train), a.out)
    test = {k: v for (split, k), v in data.items() if split == "test"}
    run = {"args": vars(a), "base": info and {k: v for k, v in info.items() if k != "losses"}, "subroutines": {}}
    t0 = time.time()
    for k in a.subroutines:
        sub = RULES[a.rule][k]
        print(f"{name}: {sub}", flush=True)
        log = []
        run["subroutines"][sub] = {"epochs": log}
        ms, steps = train_mask(model, data[("train", f"sub-{k}")], a, log)
        acc = sc.evaluate(model, ms, test, k, seed=a.mask_seed)
        total, layers = kept_now(ms)
        run["subroutines"][sub].update(steps=steps, layers=ms.stats()["name"].tolist(), final={
            **{m: list(v) if isinstance(v, tuple) else v for m, v in acc.items()},
            "kept": total, "layer_kept": layers, "quality": sc.quality(acc["own"], *acc["complement"])})
        ms.remove()
        print(f"  kept {total:.4f} own {acc['own']:.3f} hard {acc['hard']} random {acc['random']} "
              f"ablated {acc['complement']}", flush=True)
    run["seconds"] = time.time() - t0
    print(f"{name}: {run['seconds']:.0f} s for {len(a.subroutines)} mask(s)", flush=True)
    with open(path, "w") as f:
        json.dump(run, f)


if __name__ == "__main__":
    if "--collect" in sys.argv:
        collect(sys.argv[sys.argv.index("--collect") + 1])
    else:
        main()
