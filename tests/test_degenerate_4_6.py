"""Degenerate results for chapters 4-6: every claim the pages mark (their ``findings``, which the
claims tests in ``tests/test_claims.py`` use) is decided again on variants of the stored full results
that no real result should pass: a model at chance, base models that never fit, a mask that keeps
everything (the subnetwork is the full model) and one that keeps nothing (the subnetwork is at
chance), all units identical, a control equal to its treatment, and one arm untrained. Each claim
must fail (be ✗ or ?) on at least one variant, and be "cannot be decided here" (?) on every variant
that makes its evidence void (not ✗: nothing was looked for there);
a claim that passed them all could not fail, and is rewritten or dropped with its sentence.

Built from the stored arrays and metrics; nothing is computed or written.
"""

from pathlib import Path

import numpy as np
import pytest

from modlib import results, stats
from modlib import weight_masks as wm
from modlib.pretraining_consistency import findings as pc_findings
from modlib.structural_compositionality import findings as sc_findings
from modlib.weight_masks import findings as wm_findings

FULL = Path(__file__).resolve().parents[1] / "notebooks" / "results" / "full"
VARIANTS = ("chance", "never fit", "keeps everything", "keeps nothing", "identical units",
            "control = treatment", "one arm untrained")
# every claim with a verdict must fail on these: each leaves nothing to compare
VOID = ("chance", "keeps everything", "keeps nothing", "identical units")


def _read(chapter: str, name: str) -> results.Result:
    path = FULL / chapter / f"{name}.json"
    if not path.exists():
        pytest.skip(f"{path} is not stored")
    return results.read(path)


def _failing(claims_by_variant: dict[str, dict]) -> dict[str, list[str]]:
    """For each claim of the stored results, the variants on which it is not reproduced (or, for a
    check with no verdict, does not hold)."""
    stored = claims_by_variant["stored"]
    return {k: [v for v, found in claims_by_variant.items() if v != "stored"
                and (k not in found or not found[k].holds)] for k in stored}


def _check(claims_by_variant: dict[str, dict]):
    failing = _failing(claims_by_variant)
    never = [k for k, v in failing.items() if not v]
    assert not never, f"claims that pass on every degenerate variant (cannot fail): {never}"
    for k, claim in claims_by_variant["stored"].items():
        if getattr(claim, "verdict", None) is None:
            continue
        survived = [v for v in VOID if k in claims_by_variant[v] and claims_by_variant[v][k].holds]
        assert not survived, f"{k} is still reproduced on {survived}: {claims_by_variant[survived[0]][k].text}"
        # void evidence decides nothing: ✗ would say the paper's claim was looked for and not found
        refuted = [v for v in VOID if k in claims_by_variant[v] and claims_by_variant[v][k].mark == "✗"]
        assert not refuted, f"{k} is marked ✗ on {refuted}: {claims_by_variant[refuted[0]][k].text}"
    for found in claims_by_variant.values():  # every mark printed comes from the rule or a check
        for claim in found.values():
            assert isinstance(claim, stats.Claim) and (claim.mark in ("✓", "✗", "?", "check passed", "check failed")
                                                       or claim.own and claim.outcome in (stats.HOLDS,
                                                                                          stats.DOES_NOT_HOLD)), claim
    return failing


# --- chapter 4 ------------------------------------------------------------------------------------


def _chapter4():
    add = [_read(wm.CHAPTER, f"addmul-seed{s}").arrays for s in range(5)]
    dbl = [_read(wm.CHAPTER, f"double-seed{s}").arrays for s in range(5)]
    cnn = _read(wm.CHAPTER, "cnn-seed0").arrays
    st = lambda runs, k: np.stack([a[k] for a in runs]).astype(float)  # noqa: E731
    acc = wm.removal_accuracy(cnn["confusion"], cnn["confusion_random"])
    return {"tables": st(add, "table"), "controls": st(add, "control"), "kept": st(add, "kept"),
            "iou": st(dbl, "iou"), "iou_same": st(dbl, "iou_same"), "iou_random": st(dbl, "iou_random"),
            "dtables": st(dbl, "table"), "dkept": st(dbl, "kept"), "dcontrols": st(dbl, "control"),
            **{k: np.asarray(v, dtype=float) for k, v in acc.items()}}


def claims4(d) -> dict:
    chance = wm.CHANCE["addmul"]
    full = wm.settings("full")
    found = [*wm_findings.specialization(d["tables"], d["controls"], chance, d["kept"],
                                         wm.mask_sizes("addmul", full.hidden)),
             *wm_findings.reuse(d["iou"], d["iou_same"], d["iou_random"], d["dtables"], d["dkept"],
                                wm.mask_sizes("double", full.hidden)),
             *wm_findings.class_removal(d["own"], d["others"], d["reference"], random_own=d["random_own"],
                                        random_others=d["random_others"])]
    return {f.name: f for f in found}


def variants4(d) -> dict[str, dict]:
    c, cc = wm.CHANCE["addmul"], wm.CHANCE["cnn"]
    out = {}
    v = {k: np.full_like(a, c) if k in ("tables", "controls", "dtables", "dcontrols") else a.copy() for k, a in d.items()}
    for k in ("own", "others", "reference", "random_own", "random_others"):
        v[k] = np.full_like(d[k], cc)
    out["chance"] = v
    v = {k: a.copy() for k, a in d.items()}
    for k in ("tables", "controls", "dtables", "dcontrols"):
        v[k] = d[k] * 0.5  # stopped half way: the full network at 0.5
    v["reference"] = d["reference"] * 0.4
    out["never fit"] = v
    v = {k: a.copy() for k, a in d.items()}  # a mask keeps every weight: alone = full, removed = chance
    full = d["tables"][:, :1]
    v["tables"] = np.concatenate([full, full, np.full_like(full, c), full, np.full_like(full, c)], 1)
    v["controls"] = np.concatenate([full, np.full_like(full, c), full, np.full_like(full, c)], 1)
    dfull = d["dtables"][:, :1]
    v["dtables"] = np.concatenate([dfull] + [dfull, np.full_like(dfull, c)] * 3, 1)
    v["kept"], v["dkept"] = np.ones_like(d["kept"]), np.ones_like(d["dkept"])
    v["iou"] = v["iou_same"] = v["iou_random"] = np.ones_like(d["iou"])
    ref_others = wm_findings.others_reference(d["reference"])  # a class mask that keeps all: nothing removed
    v["own"], v["others"] = d["reference"].copy(), ref_others.copy()
    v["random_own"], v["random_others"] = d["reference"].copy(), ref_others.copy()
    out["keeps everything"] = v
    v = {k: a.copy() for k, a in d.items()}  # a mask keeps nothing: alone = chance, removed = full
    v["tables"] = np.concatenate([full, np.full_like(full, c), full, np.full_like(full, c), full], 1)
    v["controls"] = np.concatenate([np.full_like(full, c), full, np.full_like(full, c), full], 1)
    v["dtables"] = np.concatenate([dfull] + [np.full_like(dfull, c), dfull] * 3, 1)
    v["kept"], v["dkept"] = np.zeros_like(d["kept"]), np.zeros_like(d["dkept"])
    v["iou"] = v["iou_same"] = v["iou_random"] = np.zeros_like(d["iou"])
    v["own"], v["others"] = np.full_like(d["own"], cc), np.full_like(d["others"], cc)  # the CNN is cut
    v["random_own"], v["random_others"] = v["own"].copy(), v["others"].copy()
    out["keeps nothing"] = v
    v = {k: np.repeat(a[:1], len(a), 0) for k, a in d.items()}  # every seed (every class) is the first
    out["identical units"] = v
    v = {k: a.copy() for k, a in d.items()}  # each random control is its learned mask
    v["controls"] = d["tables"][:, 1:].copy()
    v["dcontrols"] = d["dtables"][:, 3:].copy()
    v["iou_random"], v["iou_same"] = d["iou"].copy(), d["iou"].copy()
    v["random_own"], v["random_others"] = d["own"].copy(), d["others"].copy()
    out["control = treatment"] = v
    v = {k: a.copy() for k, a in d.items()}  # the second operation (pair) never trained
    v["tables"][..., 1] = c
    v["controls"][..., 1] = c
    v["dtables"][..., 1] = c
    v["reference"] = d["reference"].copy()
    v["reference"][5:] = cc
    out["one arm untrained"] = v
    return out


def test_chapter4_claims_fail_on_degenerate_results():
    d = _chapter4()
    found = {"stored": claims4(d), **{name: claims4(v) for name, v in variants4(d).items()}}
    failing = _check(found)
    assert set(failing) == {f.name for f in found["stored"].values()}


# --- chapter 5 ------------------------------------------------------------------------------------


def _chapter5():
    from modlib import structural_compositionality as sc

    s = sc.settings("full")
    rows = {n: _read(sc.CHAPTER, n) for n in sc.result_names(s)}
    runs = sc.StructureRuns(s, rows, "full")
    bases = [{"rule": r.metrics["rule"], "model": r.metrics["seed"], "trained": r.metrics["trained"],
              "searched": r.metrics["searched"], "task": r.metrics["base"]["task"]} for r in runs.rows.values()]
    return sc_findings.structure_table(runs), bases, s.base_gate


ACC5 = [f"{p}_{w}" for p in ("sub", "abl", "reinit", "random", "rand_abl") for w in ("target", "other")]


def claims5(table, bases, gate):
    """Every statement chapter 5's page marks: the claims and the density checks (issue 31)."""
    return {**sc_findings.structural_from(table, bases, gate), **sc_findings.density_from(table)}


def variants5(table, bases):
    c = sc_findings.CHANCE
    out = {}
    t = table.copy()
    t[ACC5 + ["own"]] = c
    out["chance"] = (t, [{**b, "task": c} for b in bases])
    out["never fit"] = (table.copy(), [{**b, "task": 0.6, "searched": False} for b in bases])
    t = table.copy()
    t["kept"] = 1.0
    t[["sub_target", "sub_other", "random_target", "random_other"]] = 1.0
    t[["abl_target", "abl_other", "reinit_target", "reinit_other", "rand_abl_target", "rand_abl_other"]] = c
    out["keeps everything"] = (t, bases)
    t = table.copy()
    t["kept"] = 0.0
    t[["sub_target", "sub_other", "random_target", "random_other"]] = c
    t[["abl_target", "abl_other", "reinit_target", "reinit_other", "rand_abl_target", "rand_abl_other"]] = 1.0
    out["keeps nothing"] = (t, bases)
    t = table.copy()
    for (rule, sub, trained), g in table.groupby(["rule", "subroutine", "trained"]):
        first = g[g["model"] == g["model"].min()][ACC5 + ["kept", "own"]].mean()
        t.loc[g.index, ACC5 + ["kept", "own"]] = first.to_numpy()
    out["identical units"] = (t, bases)
    t = table.copy()
    t["random_target"], t["random_other"] = t["sub_target"], t["sub_other"]
    t["rand_abl_target"], t["rand_abl_other"] = t["abl_target"], t["abl_other"]
    for (rule, sub), g in table.groupby(["rule", "subroutine"]):  # the untrained control is the trained arm
        trained = g[g["trained"]][ACC5 + ["kept"]].mean()
        t.loc[g[~g["trained"]].index, ACC5 + ["kept"]] = trained.to_numpy()
    out["control = treatment"] = (t, bases)
    t = table.copy()
    for (rule, sub), g in table.groupby(["rule", "subroutine"]):  # the trained arm is the untrained network
        untrained = g[~g["trained"]][ACC5 + ["kept"]].mean()
        if len(g[~g["trained"]]):
            t.loc[g[g["trained"]].index, ACC5 + ["kept"]] = untrained.to_numpy()
    out["one arm untrained"] = (t, bases)
    return out


def test_chapter5_claims_fail_on_degenerate_results():
    table, bases, gate = _chapter5()
    found = {"stored": claims5(table, bases, gate)}
    for name, (t, b) in variants5(table, bases).items():
        found[name] = claims5(t, b, gate)
    _check(found)


# --- chapter 6 ------------------------------------------------------------------------------------


def _runs6():
    import torch

    from modlib import pretraining_consistency as pc

    with pytest.MonkeyPatch.context() as mp:  # read as the book build reads them: nothing computed
        mp.setenv(results.FROM_STORE_ENV, "1")
        mp.setenv(results.ROOT_ENV, str(FULL.parent))
        try:
            return pc.run("full", torch.device("cpu"))
        except results.StaleResultError as err:
            pytest.skip(f"chapter 6's full results are not all stored: {err}")


def _chapter6():
    runs = _runs6()
    return pc_findings.pretraining_effects(runs), {k: r.metrics for k, r in runs.pretraining.items()}


MATCHED = ["sub_target", "sub_other", "target", "other", "kept"]


def test_chapter6_matched_density_claims_fail_on_degenerate_results():
    # issue 31: the claims at equal density, on the matched masks' table
    df = pc_findings.matched_density(_runs6())
    c = sc_findings.CHANCE
    variants = {"chance": {"sub_target": c, "sub_other": c, "target": c, "other": c},
                "never fit": {"task": 0.6, "searched": False},
                "keeps everything": {"kept": 1.0, "sub_target": 1.0, "sub_other": 1.0, "target": c, "other": c},
                "keeps nothing": {"kept": 0.0, "sub_target": c, "sub_other": c, "target": 1.0, "other": 1.0}}
    found = {"stored": pc_findings.matched_from(df)}
    for name, values in variants.items():
        d = df.copy()
        for col, value in values.items():
            d[col] = value
        found[name] = pc_findings.matched_from(d.assign(effect=d["other"] - d["target"]))
    d = df.copy()
    for _, g in df.groupby(["rule", "subroutine", "init"]):  # identical units
        d.loc[g.index, MATCHED] = g[MATCHED].iloc[0].to_numpy()
    found["identical units"] = pc_findings.matched_from(d.assign(effect=d["other"] - d["target"]))
    d = df.copy()
    for _, g in df.groupby(["rule", "subroutine"]):  # the scratch arm is the pretrained arm
        src, dst = (g[g["init"] == i].sort_values("seed") for i in ("pretrained", "scratch"))
        d.loc[dst.index, MATCHED] = src[MATCHED].to_numpy()
    found["control = treatment"] = pc_findings.matched_from(d.assign(effect=d["other"] - d["target"]))
    _check(found)


def _recount(df):
    df = df.copy()
    df["effect"] = df["other"] - df["target"]
    df["modular"] = df["passed_gate"] & (df["effect"] >= pc_findings.MARGIN)
    df["both_tests"] = df["modular"] & (df["sub_target"] - df["sub_other"] >= pc_findings.LOWER)
    return df


ACC6 = ["sub_target", "sub_other", "target", "other", "kept"]


def _copy_arm(df, source: str, target: str):
    """``df`` with the ``target`` init's base models given the ``source`` init's values, seed by seed."""
    d = df.copy()
    for _, g in df.groupby(["rule", "subroutine"]):
        src = g[g["init"] == source].sort_values("seed")
        dst = g[g["init"] == target].sort_values("seed")
        for col in ACC6 + ["passed_gate"]:
            d.loc[dst.index, col] = src[col].to_numpy()
    return d


def variants6(df, metrics):
    import copy

    c = sc_findings.CHANCE
    out = {}
    d = df.copy()
    d[["sub_target", "sub_other", "target", "other", "task"]] = c
    d["passed_gate"] = False
    out["chance"] = (_recount(d), metrics)
    d = df.copy()
    d["task"], d["searched"] = 0.6, False
    out["never fit"] = (d, metrics)
    d = df.copy()
    d["kept"], d["sub_target"], d["sub_other"], d["target"], d["other"] = 1.0, 1.0, 1.0, c, c
    out["keeps everything"] = (_recount(d), metrics)
    d = df.copy()
    d["kept"], d["sub_target"], d["sub_other"], d["target"], d["other"] = 0.0, c, c, 1.0, 1.0
    d["passed_gate"] = False
    out["keeps nothing"] = (_recount(d), metrics)
    d = df.copy()
    for _, g in df.groupby(["rule", "subroutine", "init"]):
        first = g[g["seed"] == g["seed"].min()].iloc[0]
        for col in ACC6 + ["passed_gate", "task"]:
            d.loc[g.index, col] = first[col]
    out["identical units"] = (_recount(d), metrics)
    d = _copy_arm(df, "pretrained", "scratch")  # the scratch control is the pretrained arm
    out["control = treatment"] = (_recount(d), metrics)
    m = copy.deepcopy(metrics)  # the pretraining did nothing: the pretrained arm is the scratch arm
    if "language" in m:
        m["language"]["probe"] = m["language"]["probe_untrained"]
    if "vision" in m:
        m["vision"]["final_loss"] = m["vision"]["chance_loss"]
        m["vision"]["probe"] = dict(m["vision"]["probe_untrained"])
    d = _copy_arm(df, "scratch", "pretrained")
    out["one arm untrained"] = (_recount(d), m)
    return out


def test_chapter6_claims_fail_on_degenerate_results():
    df, metrics = _chapter6()
    found = {"stored": pc_findings.pretraining_from(df, metrics)}
    for name, (d, m) in variants6(df, metrics).items():
        found[name] = pc_findings.pretraining_from(d, m)
    _check(found)


# --- the claims tests themselves (tests/test_claims.py), run on the same variants ------------------
# Each claims test of chapters 4-6 is called with degenerate results in place of the stored ones (its
# fixtures, or for chapter 4 the results `load` returns); each must fail on at least one.

import test_claims as tc  # noqa: E402  (tests/ is on the path: pytest's default import mode)


def _fails(test, **kwargs) -> bool:
    try:
        test(**kwargs)
    except (AssertionError, pytest.fail.Exception):
        return True
    return False


def _check_tests(tests: dict, args_by_variant: dict[str, dict]):
    """Call each claims test with each variant's fixtures (those its signature names); each must
    fail on at least one."""
    failing = {n: [] for n in tests}
    for name, args in args_by_variant.items():
        for n, test in tests.items():
            params = test.__code__.co_varnames[:test.__code__.co_argcount]
            if _fails(test, **{p: args[p] for p in params}):
                failing[n].append(name)
    never = [n for n, v in failing.items() if not v]
    assert not never, f"claims tests that pass on every degenerate variant: {never}"


def _tests(*prefixes):
    return {n: f for n, f in vars(tc).items() if n.startswith(prefixes) and callable(f)}


def _runs4(d, v, stored):
    """``load``'s answer per pattern for the variant ``v`` of the stacked arrays ``d`` (and of the
    first-layer masks and the CNN's confusions, which the variants above do not stack)."""
    name = next(k for k, x in VARIANTS4_BUILT.items() if x is v)
    out = {}
    for pattern, keys in (("addmul-seed*", {"table": "tables", "control": "controls", "kept": "kept"}),
                          ("double-seed*", {"table": "dtables", "control": "dcontrols", "kept": "dkept",
                                            "iou": "iou", "iou_same": "iou_same", "iou_random": "iou_random"})):
        runs = []
        for k, (meta, arrays) in enumerate(stored[pattern]):
            a = dict(arrays)
            a.update({key: v[stacked][k] for key, stacked in keys.items()})
            if "first_layer" in a:
                first = np.stack([r[1]["first_layer"] for r in stored[pattern]]).astype(float)
                a["first_layer"] = {"keeps everything": np.ones_like(first[k]), "keeps nothing": np.zeros_like(first[k]),
                                    "identical units": first[0]}.get(name, first[k])
            runs.append((meta, a))
        out[pattern] = runs
    ((meta, a),) = stored["cnn-seed0"]
    conf, rand = a["confusion"].astype(float), a["confusion_random"].astype(float)
    uniform = np.full_like(conf[0], 0.1)
    conf, rand = {
        "chance": (np.broadcast_to(uniform, conf.shape), np.broadcast_to(uniform, rand.shape)),
        "never fit": (0.4 * conf + 0.6 * uniform, 0.4 * rand + 0.6 * uniform),
        "keeps everything": (np.broadcast_to(conf[0], conf.shape), np.broadcast_to(conf[0], rand.shape)),
        "keeps nothing": (np.concatenate([conf[:1], np.broadcast_to(uniform, rand.shape)]),
                          np.broadcast_to(uniform, rand.shape)),
        "identical units": (np.concatenate([conf[:1], np.broadcast_to(conf[1], rand.shape)]), rand),
        "control = treatment": (conf, conf[1:]),
        "one arm untrained": (np.where(np.arange(10)[None, :, None] >= 5, uniform, conf), rand),
    }[name]
    out["cnn-seed0"] = [(meta, {**a, "confusion": np.array(conf), "confusion_random": np.array(rand)})]
    return out


VARIANTS4_BUILT = {}


def test_chapter4_claims_tests_fail_on_degenerate_results(monkeypatch):
    d = _chapter4()
    stored = {p: tc.load(wm.CHAPTER, p) for p in ("addmul-seed*", "double-seed*", "cnn-seed0")}
    VARIANTS4_BUILT.clear()
    VARIANTS4_BUILT.update(variants4(d))
    tests = _tests("test_weight_masks", "test_double_addition", "test_class_removal")
    assert len(tests) >= 9
    failing = {n: [] for n in tests}
    for name, v in VARIANTS4_BUILT.items():
        runs = _runs4(d, v, stored)
        monkeypatch.setattr(tc, "load", lambda chapter, pattern, runs=runs: runs[pattern])
        for n, test in tests.items():
            if _fails(test):
                failing[n].append(name)
    never = [n for n, v in failing.items() if not v]
    assert not never, f"claims tests that pass on every degenerate variant: {never}"


def _fake_runs5(runs, name):
    """Chapter 5's stored runs as the variant ``name`` would have them, for the tests that read the
    runs themselves (base models searched, masks' per-layer overlaps)."""
    from types import SimpleNamespace

    c = sc_findings.CHANCE
    rows = {}
    for key, r in runs.rows.items():
        metrics, arrays = dict(r.metrics), dict(r.arrays)
        if name in ("chance", "never fit"):
            metrics["searched"] = False
        if name in ("keeps everything", "keeps nothing"):
            fill = 1.0 if name == "keeps everything" else 0.0
            arrays = {k: np.full_like(np.asarray(x, dtype=float), fill) if k == "overlap" or k.startswith("kept-")
                      else x for k, x in arrays.items()}
        removed = {"chance": [c, c], "keeps everything": [c, c], "keeps nothing": [1.0, 1.0]}.get(name)
        if removed and metrics.get("subroutines"):  # the search's masks, as the variant would have them
            metrics["subroutines"] = {sub: {**f, "grid": [{**g, "test": {**g["test"], "complement": removed}}
                                                          for g in f.get("grid", [])]}
                                      for sub, f in metrics["subroutines"].items()}
        rows[key] = SimpleNamespace(metrics=metrics, arrays=arrays)
    return SimpleNamespace(rows=rows, settings=runs.settings)


def _sweeps5(name):
    """Chapter 5's stored density sweeps (rule -> metrics) as the variant ``name`` would have them:
    every point at chance, a mask that keeps everything (subnetwork and random one the full
    model) or nothing, the random control equal to the found subnetwork, the found one untrained.
    A sweep has one base model, so "identical units" and "never fit" leave it as stored."""
    from modlib.structural_compositionality import experiment, sweep

    c = sc_findings.CHANCE
    change = {"chance": {"hard": [c, c], "random": [c, c], "complement": [c, c], "random_complement": [c, c]},
              "keeps everything": {"kept": 1.0, "hard": [1.0, 1.0], "random": [1.0, 1.0],
                                   "complement": [c, c], "random_complement": [c, c]},
              "keeps nothing": {"kept": 0.0, "hard": [c, c], "random": [c, c],
                                "complement": [1.0, 1.0], "random_complement": [1.0, 1.0]},
              "one arm untrained": {"hard": [c, c], "complement": [c, c]}}.get(name, {})
    out = {}
    for rule in sweep.settings("full").rules:
        m = _read(experiment.CHAPTER, f"sweep-{rule}").metrics
        points = [dict(p, **change, **({"random": p["hard"], "random_complement": p["complement"]}
                                       if name == "control = treatment" else {}))
                  for p in m["points"]]
        out[rule] = {**m, "points": points}
    return out


def test_chapter5_claims_tests_fail_on_degenerate_results():
    from modlib import structural_compositionality as sc

    table, bases, gate = _chapter5()
    s = sc.settings("full")
    runs = sc.StructureRuns(s, {n: _read(sc.CHAPTER, n) for n in sc.result_names(s)}, "full")
    tests = _tests("test_structure")
    assert len(tests) >= 15
    _check_tests(tests, {name: {"structure_found": claims5(t, b, gate), "structure_table": t,
                                "structure_runs": _fake_runs5(runs, name), "structure_sweeps": _sweeps5(name)}
                         for name, (t, b) in variants5(table, bases).items()})


def _lam6_stored() -> dict:
    """Chapter 6's stored results at the common share, as stored; skipped while they are not all stored."""
    from modlib.pretraining_consistency import lam_matched

    stored = lam_matched.stored("full")
    if len(stored) < len(lam_matched.names("full")):
        pytest.skip("chapter 6's results at the common share are not all stored")
    return stored


def _lam6():
    """Chapter 6's stored results at the common share made degenerate: every pretrained base model's
    searches replaced by the scratch base model's of the same seed (the arms identical), and the claims
    they decide; skipped while they are not all stored."""
    import copy

    from modlib.pretraining_consistency import lam_matched

    stored = _lam6_stored()
    lam = copy.deepcopy(stored)
    for r in lam.values():
        m = r.metrics
        if m["init"] == "pretrained":
            twin = stored[lam_matched.name(m["rule"], "scratch", m["seed"])].metrics
            m["subroutines"] = copy.deepcopy(twin["subroutines"])
    found = pc_findings.matched_from(pc_findings.lam_density(lam), prefix=pc_findings.LAM, seeds=5)
    return lam, found


def _twinned(module, lam: dict, init: str, what: str) -> dict:
    """A copy of ``module``'s stored full base models (own_runs or shared_start) with every one's
    searches replaced by those of ``lam``'s base model of the same rule and seed from ``init``;
    skipped (``what``: the arm, in words) while they are not all stored."""
    import copy

    from modlib.pretraining_consistency import lam_matched

    stored = module.stored("full")
    if len(stored) < len(module.names("full")):
        pytest.skip(f"chapter 6's base models {what} are not all stored")
    out = copy.deepcopy(stored)
    for r in out.values():
        m = r.metrics
        m["subroutines"] = copy.deepcopy(lam[lam_matched.name(m["rule"], init, m["seed"])].metrics["subroutines"])
    return out


def _own6(lam: dict, metrics: dict):
    """Chapter 6's pretrained arm with a pretraining run per base model made degenerate as
    :func:`_lam6` makes the common share's (``lam``: its degenerate results): every such base model's
    searches replaced by the scratch base model's of the same seed; with its pretraining runs, and the
    claims they decide."""
    from modlib.pretraining_consistency import own_runs

    own, made = _twinned(own_runs, lam, "scratch", "from their own pretraining runs"), own_runs.stored_runs("full")
    return (own, made), pc_findings.own_from(lam, own, made, metrics, 5)


def _shared6(lam: dict):
    """Chapter 6's shared-random-start arm made degenerate: every base model's searches replaced by
    the pretrained base model's of the same seed in ``lam`` (the arms identical), and the claims they
    decide."""
    import copy

    from modlib.pretraining_consistency import lam_matched, shared_start

    shared = _twinned(shared_start, lam, "pretrained", "from a shared random start")
    twin = copy.deepcopy(lam)  # the arm's base model 0 is scratch base model 0: made the pretrained one's too
    scratch0 = twin[lam_matched.name("sv-plural", "scratch", 0)].metrics
    scratch0["subroutines"] = copy.deepcopy(twin[lam_matched.name("sv-plural", "pretrained", 0)].metrics["subroutines"])
    return shared, pc_findings.shared_from(twin, shared, 5)


def test_chapter6_claims_tests_fail_on_degenerate_results():
    from types import SimpleNamespace

    lam, lam_found = _lam6()
    own, own_found = _own6(lam, _chapter6()[1])
    shared, shared_found = _shared6(_lam6_stored())
    df, metrics = _chapter6()
    matched = pc_findings.matched_density(_runs6())
    scratch = _read("structural_compositionality", "sweep-sv-plural").metrics  # the pretrained arm's sweep is
    sweeps = {"sv-plural": {"scratch": scratch, "pretrained": scratch}}  # its control (also tested below)
    tests = _tests("test_pretraining")
    assert len(tests) >= 5
    _check_tests(tests, {name: {"pretraining_found": {**pc_findings.pretraining_from(d, m),
                                                      **pc_findings.matched_from(matched), **lam_found,
                                                      **own_found, **shared_found},
                                "pretraining_table": d, "pretraining_matched": matched, "pretraining_lam": lam,
                                "pretraining_own": own, "pretraining_shared": shared,
                                "pretraining_sweeps": sweeps, "pretraining_runs": SimpleNamespace(
                                    pretraining={k: SimpleNamespace(metrics=x) for k, x in m.items()})}
                         for name, (d, m) in variants6(df, metrics).items()})


# --- chapter 4's added experiments (issue 32) --------------------------------------------------------

import test_weight_masks_causes as twc  # noqa: E402  (tests/ is on the path: pytest's default import mode)


def _chapter4_added():
    """The added experiments' full results as :func:`findings.added` arranges them (skipped while
    one is not stored for the full profile's present settings)."""
    wanted = [n for e, n, _, _ in wm.all_jobs("full") if e in wm.ADDED]
    found = {n: wm.stored("full", n) for n in wm.names("full")}
    missing = [n for n in wanted if found[n] is None]
    if missing:
        pytest.skip(f"{len(missing)} of the {len(wanted)} added full results are not stored "
                    f"(python -m modlib.weight_masks --profile full --added)")
    c, s = wm.causes_settings("full"), wm.settings("full")
    cv = wm.curves("full", {n: r for n, r in found.items() if r is not None})
    return wm_findings.added(cv, c.depth, wm.shape_name(s.hidden), wm.shape_name(c.reuse_hidden))


def claims4_added(d) -> dict:
    return {f.name: f for f in wm_findings.added_claims(d, wm.CHANCE["addmul"])}


def _each_point(d, fn):
    """``d`` with ``fn`` applied to every add/multiply point (width, alpha, authors, book, and the α
    curve's point at the authors' α where given)."""
    out = {**d, "width": {h: fn(p) for h, p in d["width"].items()}, "alpha": {a: fn(p) for a, p in d["alpha"].items()}}
    for k in ("authors", "book", "matched"):
        if k in d:
            out[k] = fn(d[k])
    return out


def _pattern(full, alone, removed, c, n_masks=2):
    """Rows of a table [seeds, 1 + 2 n, cols]: the full row, then each mask alone and removed."""
    row = {"full": full, "chance": np.full_like(full, c)}
    return np.concatenate([full] + [row[alone], row[removed]] * n_masks, 1)


def variants4_added(d) -> dict[str, dict]:
    c, cc = wm.CHANCE["addmul"], wm.CHANCE["cnn"]
    copy = lambda x: {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in x.items()}  # noqa: E731
    out = {}

    def cnn(accs=None, swap=None, dropped=None, **more):
        base = d["cnn"]
        return {**base, "accs": accs if accs is not None else base["accs"],
                "swap_in": base["swap_in"] if swap is None else swap,
                "dropped": base["dropped"] if dropped is None else dropped, **more}

    def double(x, fn):
        x = copy(x)
        for k in ("copy_table", "whole", "table"):
            if k in x:
                x[k] = fn(x[k], k)
        return x

    # chance: every network at chance
    v = _each_point(d, lambda p: {**copy(p), "table": np.full_like(p["table"], c), "control": np.full_like(p["control"], c)})
    v["heldout"] = {**d["heldout"], **{k: np.full_like(d["heldout"][k], c) for k in
                                       ("table", "control", "held_table", "held_control")}}
    v["copy"], v["reuse"] = (double(d[k], lambda t, _: np.full_like(t, c)) for k in ("copy", "reuse"))
    v["cnn"] = cnn([{k: np.full_like(a, cc) for k, a in acc.items()} for acc in d["cnn"]["accs"]],
                   np.full_like(d["cnn"]["swap_in"], cc))
    out["chance"] = v
    # never fit: every network stopped half way
    v = _each_point(d, lambda p: {**copy(p), "table": p["table"] * 0.5, "control": p["control"] * 0.5})
    v["heldout"] = {**d["heldout"], **{k: d["heldout"][k] * 0.5 for k in ("table", "control", "held_table", "held_control")}}
    v["copy"], v["reuse"] = (double(d[k], lambda t, _: t * 0.5) for k in ("copy", "reuse"))
    v["cnn"] = cnn([{**acc, "reference": acc["reference"] * 0.4} for acc in d["cnn"]["accs"]])
    out["never fit"] = v

    # a mask keeps everything: alone = full, removed = chance; overlaps 1; the class masks remove nothing
    def everything(p):
        full = p["table"][:, :1]
        return {**copy(p), "table": _pattern(full, "full", "chance", c),
                "control": _pattern(full, "full", "chance", c)[:, 1:], "kept": np.ones_like(p["kept"]),
                **{k: np.ones_like(p[k]) for k in ("iou", "share", "overlap", "overlap_chance")}}

    def nothing(p):
        full = p["table"][:, :1]
        return {**copy(p), "table": _pattern(full, "chance", "full", c),
                "control": _pattern(full, "chance", "full", c)[:, 1:], "kept": np.zeros_like(p["kept"]),
                **{k: np.zeros_like(p[k]) for k in ("iou", "share", "overlap", "overlap_chance")}}

    for name, fn, keep in (("keeps everything", everything, "full"), ("keeps nothing", nothing, "chance")):
        v = _each_point(d, fn)
        h = d["heldout"]
        shape = {"kept": h["kept"], "iou": h["kept"][:, 0], "share": h["kept"][:, :, 0],
                 "overlap": h["kept"][:, 0, 0], "overlap_chance": h["kept"][:, 0, 0]}
        pt = fn({"table": h["table"], "control": h["control"], **shape})
        held = fn({"table": h["held_table"], "control": h["held_control"], **shape})
        v["heldout"] = {"table": pt["table"], "control": pt["control"], "held_table": held["table"],
                        "held_control": held["control"], "kept": pt["kept"], "sizes": h["sizes"]}
        value = 1.0 if keep == "full" else 0.0
        for k in ("copy", "reuse"):
            x = double(d[k], lambda t, key: _pattern(t[:, :1], keep, "chance" if keep == "full" else "full", c,
                                                     (t.shape[1] - 1) // 2))
            for key in ("copy_iou", "iou", "iou_same", "iou_random", "copy_iou_random"):
                if key in x:
                    x[key] = np.full_like(x[key], value)
            for key in ("kept", "copy_kept", "whole_kept"):
                if key in x:
                    x[key] = np.full_like(x[key], value)
            v[k] = x
        accs = []
        for acc in d["cnn"]["accs"]:
            ref_others = wm_findings.others_reference(acc["reference"])
            if keep == "full":
                accs.append({**acc, "own": acc["reference"].copy(), "others": ref_others.copy(),
                             "random_own": acc["reference"].copy(), "random_others": ref_others.copy()})
            else:
                accs.append({**acc, **{k: np.full_like(acc[k], cc) for k in ("own", "others", "random_own",
                                                                            "random_others")}})
        ref = np.stack([a["reference"] for a in d["cnn"]["accs"]])
        swap = np.repeat(ref[..., None, None], d["cnn"]["swap_in"].shape[2], 2).repeat(2, 3) if keep == "full" \
            else np.full_like(d["cnn"]["swap_in"], cc)
        v["cnn"] = cnn(accs, swap, np.zeros_like(d["cnn"]["dropped"]) if keep == "full" else None,
                       kept=np.full_like(d["cnn"]["kept"], value))
        out[name] = v

    # identical units: every network is the first
    first = lambda x: {k: (np.repeat(a[:1], len(a), 0) if isinstance(a, np.ndarray) else a)  # noqa: E731
                       for k, a in x.items()}
    v = _each_point(d, first)
    v["heldout"], v["copy"], v["reuse"] = (first(d[k]) for k in ("heldout", "copy", "reuse"))
    v["cnn"] = {**first(d["cnn"]), "accs": [d["cnn"]["accs"][0]] * len(d["cnn"]["accs"])}
    out["identical units"] = v
    # each control is its treatment
    v = _each_point(d, lambda p: {**copy(p), "control": p["table"][:, 1:].copy()})
    h = d["heldout"]
    v["heldout"] = {**h, "control": h["table"][:, 1:].copy(), "held_control": h["held_table"][:, 1:].copy()}
    v["copy"] = {**d["copy"], "copy_iou": d["copy"]["iou"].copy(), "copy_iou_random": d["copy"]["iou"].copy()}
    v["reuse"] = {**d["reuse"], "copy_iou": d["reuse"]["iou"].copy(), "iou_same": d["reuse"]["iou"].copy(),
                  "iou_random": d["reuse"]["iou"].copy(), "copy_iou_random": d["reuse"]["iou"].copy()}
    v["book"] = copy(d["authors"])
    v["width"] = {h: (d["width"][min(d["width"])] if len(h) == d["depth"] else p) for h, p in v["width"].items()}
    v["alpha"] = {a: v["alpha"][min(v["alpha"])] for a in v["alpha"]}
    v["cnn"] = cnn([{**acc, "random_own": acc["own"].copy(), "random_others": acc["others"].copy()}
                    for acc in d["cnn"]["accs"]])
    out["control = treatment"] = v
    # one arm untrained: the second operation (pair) never trained; half the classes at chance
    def untrained(p):
        p = copy(p)
        p["table"][..., 1] = c
        p["control"][..., 1] = c
        return p
    v = _each_point(d, untrained)
    h = copy(d["heldout"])
    for k in ("table", "control", "held_table", "held_control"):
        h[k][..., 1] = c
    v["heldout"] = h
    v["copy"], v["reuse"] = (double(d[k], lambda t, _: np.concatenate([t[..., :1], np.full_like(t[..., 1:], c)], -1))
                             for k in ("copy", "reuse"))
    accs = []
    for acc in d["cnn"]["accs"]:
        ref = acc["reference"].copy()
        ref[5:] = cc
        accs.append({**acc, "reference": ref})
    v["cnn"] = cnn(accs)
    out["one arm untrained"] = v
    return out


def _check_added(d):
    found = {"stored": claims4_added(d), **{name: claims4_added(v) for name, v in variants4_added(d).items()}}
    failing = _check(found)
    assert set(failing) == set(found["stored"])
    return found


def test_chapter4_added_claims_fail_on_degenerate_results():
    _check_added(_chapter4_added())


def test_chapter4_added_claims_fail_on_degenerate_synthetic_results():
    """Until the added full results are stored, the same variants of made-up numbers on which every
    statement holds (tests/test_weight_masks_causes.py's ``synthetic``)."""
    found = _check_added(twc.synthetic())
    # all but the one network at the authors' schedule and the collapse's size, which the paper does not
    # give (issue 52: cannot be decided)
    assert sum(f.holds for f in found["stored"].values()) == len(found["stored"]) - 2


def _check_added_tests(d, monkeypatch, must_pass: bool):
    """Each claims test of the added experiments (tests/test_claims.py's ``test_added_*``), called with
    ``d`` and with each of its degenerate variants in place of the stored results: each must fail on
    at least one variant (and, with ``must_pass``, pass on ``d``: then the tests that pin the stored
    outcomes, ``test_added_stored_*``, are left out)."""
    tests = _tests("test_added_")
    assert len(tests) >= 6
    if must_pass:  # made-up numbers on which every statement holds: not the stored outcomes
        tests = {n: t for n, t in tests.items() if not n.startswith("test_added_stored_")}
    failing = {n: [] for n in tests}
    for name, v in {"stored": d, **variants4_added(d)}.items():
        monkeypatch.setattr(tc, "_added", lambda *patterns, v=v: (v, claims4_added(v)))
        for n, test in tests.items():
            if _fails(test):
                failing[n].append(name)
    if must_pass:
        assert not [n for n, v in failing.items() if "stored" in v], failing
    never = [n for n, v in failing.items() if not v]
    assert not never, f"claims tests that pass on every degenerate variant: {never}"


def test_chapter4_added_claims_tests_fail_on_degenerate_results(monkeypatch):
    _check_added_tests(_chapter4_added(), monkeypatch, must_pass=False)


def test_chapter4_added_claims_tests_fail_on_degenerate_synthetic_results(monkeypatch):
    _check_added_tests(twc.synthetic(), monkeypatch, must_pass=True)


def test_chapter6_sweep_claims_fail_on_degenerate_sweeps():
    # the page's reading of the BERT's two sweeps (one base model per arm; no verdict): each statement
    # must fail on some degenerate variant of the stored sweeps
    import copy

    from test_claims import language_sweep_claims

    curves = {"sv-plural": {"scratch": _read("structural_compositionality", "sweep-sv-plural").metrics,
                            "pretrained": _read("pretraining_consistency", "sweep-sv-plural-pretrained").metrics}}

    def each(values: dict, init: str | None = None):
        out = copy.deepcopy(curves)
        for arm, m in out["sv-plural"].items():
            if init in (None, arm):
                for q in m["points"]:
                    q.update(copy.deepcopy(values))
        return out

    c = sc_findings.CHANCE
    variants = {
        "pretrained = scratch": {"sv-plural": {"scratch": curves["sv-plural"]["scratch"],
                                               "pretrained": curves["sv-plural"]["scratch"]}},
        "scratch = pretrained": {"sv-plural": {"scratch": curves["sv-plural"]["pretrained"],
                                               "pretrained": curves["sv-plural"]["pretrained"]}},
        "keeps everything": each({"kept": 1.0, "hard": [1.0, 1.0], "random": [1.0, 1.0], "complement": [c, c]}),
        "keeps nothing": each({"kept": 0.0, "hard": [c, c], "random": [c, c], "complement": [1.0, 1.0]}),
        "chance": each({"hard": [c, c], "random": [c, c], "complement": [c, c], "own": c}),
    }
    stored = language_sweep_claims(curves)
    assert all(stored.values()), stored
    found = {name: language_sweep_claims(v) for name, v in variants.items()}
    never = [k for k in stored if all(f[k] for f in found.values())]
    assert not never, f"sweep statements that hold on every degenerate variant (cannot fail): {never}"
