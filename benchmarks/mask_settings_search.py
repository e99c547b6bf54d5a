"""The search behind chapter 4's ``full`` profile: one add/multiply setting per call, with trajectories.

    python benchmarks/mask_settings_search.py --width 1024 --depth 2 --net_steps 8000 --net_lr 1e-3 \
        --alpha 5e-4 --mask_steps 2000 --mask_lr 5e-2 --masks + * --tag E --out runs/
    python benchmarks/mask_settings_search.py --collect runs/ > search.csv

A run trains (or loads from ``--out``/nets) one FNN on + and x, then a Gumbel mask per op; every
``--log_every`` steps it records the mask's kept fraction and the accuracy on + and x of the mask
alone and removed, and at the end the 5x2 specialization table and a random mask as dense per layer.
``--collect`` prints one CSV row per run: the settings and the final table. Plain loops over modlib's
pieces (``masks.attach``, ``modlib.weight_masks.digit_loss``...), so that each knob can be varied; the mask
noise comes from torch's global generator (exploration, not a stored result). The chapter's appendix
shows the CSV of the search that chose the profile.
"""
import argparse, csv, glob, json, os, sys, time
import numpy as np, torch

from modlib import masks
from modlib.data import digits
from modlib.weight_masks import protocol as M
from modlib.models import mlp


def collect(folder: str) -> None:
    """Print one CSV row per run in ``folder`` that finished (has its table)."""
    rows = []
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        run = json.load(open(path))
        if "table" not in run:
            continue
        a, t = run["args"], np.array(run["table"])
        times = "*" if "*" in run["masks"] else "×"  # runs made before the code wrote × wrote *
        kept = {k: np.mean(v["kept_per_layer"]) for k, v in run["masks"].items()}
        rows.append({"run": a["tag"], "net": f"{a['width']}x{a['depth']}", "net steps": a["net_steps"],
                     "net lr": a["net_lr"], "net clip": a["net_clip"], "alpha": a["alpha"],
                     "mask steps": a["mask_steps"], "mask lr": a["mask_lr"], "seed": a["seed"],
                     "full +": t[0, 0], "full x": t[0, 1], "+ mask +": t[1, 0], "+ mask x": t[1, 1],
                     "+ removed +": t[2, 0], "+ removed x": t[2, 1], "x mask +": t[3, 0], "x mask x": t[3, 1],
                     "x removed +": t[4, 0], "x removed x": t[4, 1],
                     "random + removed +": run["random_control"]["+"]["random_removed"]["+"],
                     "random + removed x": run["random_control"]["+"]["random_removed"][times],
                     "+ mask kept": kept.get("+"), "x mask kept": kept.get(times),
                     "mask ms/step": 1000 * run["masks"]["+"]["time_s"] / a["mask_steps"],
                     "load": run["load"][0]})
    writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows({k: round(v, 4) if isinstance(v, float) else v for k, v in r.items()} for r in rows)


if "--collect" in sys.argv:
    collect(sys.argv[sys.argv.index("--collect") + 1])
    sys.exit()
torch.set_num_threads(int(os.environ.get("NT", "2")))

p = argparse.ArgumentParser()
p.add_argument("--width", type=int, default=256); p.add_argument("--depth", type=int, default=4)
p.add_argument("--net_steps", type=int, default=4000); p.add_argument("--net_lr", type=float, default=3e-3)
p.add_argument("--net_clip", type=float, default=0.0)
p.add_argument("--alpha", type=float, default=2e-3); p.add_argument("--mask_steps", type=int, default=3000)
p.add_argument("--mask_lr", type=float, default=1e-2); p.add_argument("--masks", nargs="+", default=list(digits.OPS))
p.add_argument("--init", type=float, default=2.0)
p.add_argument("--authors_clip", action="store_true", help="clip over masks + accumulated frozen-weight grads")
p.add_argument("--log_every", type=int, default=250); p.add_argument("--seed", type=int, default=0)
p.add_argument("--eval_n", type=int, default=3000); p.add_argument("--tag", required=True)
p.add_argument("--out", default="runs", help="folder for the run's JSON and the trained networks")
a = p.parse_args()
dev = "cpu"
os.makedirs(os.path.join(a.out, "nets"), exist_ok=True)
out = {"args": vars(a), "load": os.getloadavg()}

def evals(n, seed):
    g = torch.Generator().manual_seed(500 + seed)
    return {op: digits.arithmetic(n, (op,), generator=g)[:2] for op in digits.OPS}
EV = evals(a.eval_n, a.seed)

def acc(model):
    return {op: M.digit_accuracy(model, x, y) for op, (x, y) in EV.items()}

# ---- network (cached)
key = f"w{a.width}d{a.depth}s{a.net_steps}lr{a.net_lr:g}c{a.net_clip:g}seed{a.seed}"
path = os.path.join(a.out, "nets", f"{key}.pt")
torch.manual_seed(a.seed)
model = mlp(42, [a.width] * a.depth, 20)
if os.path.exists(path):
    model.load_state_dict(torch.load(path)); net_time = json.load(open(path + ".json"))["time"]
    net_curve = json.load(open(path + ".json"))["curve"]
else:
    t0 = time.perf_counter(); net_curve = []
    opt = torch.optim.Adam(model.parameters(), lr=a.net_lr)
    stream = M.task_batches("addmul", 128, 1000 + a.seed, dev)
    for step in range(1, a.net_steps + 1):
        x, y = next(stream)
        opt.zero_grad(); M.digit_loss(model(x), y).backward()
        if a.net_clip: torch.nn.utils.clip_grad_norm_(model.parameters(), a.net_clip)
        opt.step()
        if step % max(1, a.net_steps // 10) == 0:
            model.eval(); net_curve.append((step, acc(model))); print("net", step, net_curve[-1][1], flush=True)
    net_time = time.perf_counter() - t0
    torch.save(model.state_dict(), path)
    json.dump({"time": net_time, "curve": net_curve}, open(path + ".json", "w"))
model.eval()
out["net"] = {"key": key, "acc": acc(model), "time_s": net_time, "curve": net_curve,
              "steps_per_s": a.net_steps / max(net_time, 1e-9)}
print("network", out["net"]["acc"], f"{net_time:.0f}s", flush=True)

def score(mask, mode):
    ms = masks.attach(model, estimator="gumbel"); ms.set_masks(mask); ms.mode = mode
    try: return acc(model)
    finally: ms.remove()

# ---- masks with trajectories
hard, out["masks"] = {}, {}
for name in a.masks:
    ops = digits.OPS if name == "both" else (name,)
    stream = M.task_batches("addmul", 128, 2000 + a.seed, dev, ops)
    ms = masks.attach(model, estimator="gumbel", alpha=a.alpha, init=a.init); ms.mode = "train"
    params = ms.parameters()
    originals = [ms.original(k) for k in ms.names]
    if a.authors_clip:
        for w in originals: w.requires_grad_(True); w.grad = None
    opt = torch.optim.Adam(params, lr=a.mask_lr)
    traj = []; t0 = time.perf_counter(); ttrain = 0.0
    for step in range(1, a.mask_steps + 1):
        ts = time.perf_counter()
        x, y = next(stream)
        opt.zero_grad()
        loss = masks.sampled_loss(model, M.digit_loss, x, y, samples=4) + ms.regularizer() / len(x)
        loss.backward()
        if a.authors_clip:
            tot = torch.nn.utils.clip_grad_norm_(params + originals, 1.0)
        else:
            tot = torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step(); ttrain += time.perf_counter() - ts
        if step % a.log_every == 0 or step == a.mask_steps:
            h = ms.hard_masks()
            with torch.no_grad():
                ms.mode = "hard"; ha = acc(model); ms.mode = "complement"; ca = acc(model); ms.mode = "train"
            kept = masks.kept_fraction(h, per_layer=False)
            traj.append({"step": step, "kept": kept, "hard": ha, "compl": ca, "loss": float(loss.detach()), "gnorm": float(tot)})
            print(f"mask {name} {step}: kept {kept:.3f} hard +{ha['+']:.3f} ×{ha['×']:.3f} | removed +{ca['+']:.3f} ×{ca['×']:.3f} gnorm {float(tot):.3g} ({ttrain/step*1000:.0f} ms/step)", flush=True)
    hard[name] = ms.hard_masks()
    if a.authors_clip:
        for w in originals: w.requires_grad_(False); w.grad = None
    ms.remove()
    out["masks"][name] = {"traj": traj, "time_s": ttrain, "steps_per_s": a.mask_steps / ttrain,
                          "kept_per_layer": list(masks.kept_fraction(hard[name]).values())}

if "+" in hard and "×" in hard:
    table = [acc(model)]
    for op in digits.OPS:
        table += [score(hard[op], "hard"), score(hard[op], "complement")]
    out["table"] = [[r["+"], r["×"]] for r in table]
    ctrl = {}
    for op in digits.OPS:
        r = masks.random_like(hard[op], seed=1)
        ctrl[op] = {"random": score(r, "hard"), "random_removed": score(r, "complement")}
    out["random_control"] = ctrl
    out["iou"] = list(masks.iou(hard["+"], hard["×"]).values())
    print("table (rows full,+,+removed,*,*removed; cols +,*)\n", np.round(np.array(out["table"]), 3))
    print("random control", ctrl); print("iou", np.round(out["iou"], 3))
json.dump(out, open(os.path.join(a.out, f"{a.tag}.json"), "w"), indent=1)
