"""What chapter 6's stored results show (notebooks/pretraining_consistency.ipynb): the ablation effect
per base model (:func:`pretraining_effects`), its consistency per initialisation
(:func:`pretraining_consistency`) and the page's statements (:func:`pretraining`), computed in one
place so that the page's prose and the claims tests (``tests/test_claims.py``) say the same thing
at every profile. The paper's numbers for base models from scratch and the bar a subnetwork must
clear (:data:`LOWER`) are chapter 5's, imported from :mod:`modlib.structural_compositionality.findings`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from modlib import claims, stats
from modlib.stats import CLEAR, DENSITY_RATIO, Finding, mean_pm, number, permutation_test, spread
from modlib.structural_compositionality import findings as sc_findings
from modlib.structural_compositionality.findings import LEPORI, LOWER  # chapter 5's, reused
from modlib.structural_compositionality.findings import paper_kept  # noqa: F401 (the notebook calls findings.paper_kept)


# Lepori et al. (2023), means of 9 runs (subnetwork target, other, ablated target, other) of BERT-small
# on SV plural fine-tuned from its MLM weights, from the authors' result files (from scratch and the
# ResNet-50s: chapter 5's LEPORI)
LEPORI_PRETRAINED = {("sv-plural", "subject"): (1.00, 0.27, 0.27, 0.74),
                     ("sv-plural", "verb"): (1.00, 0.31, 0.40, 1.00)}


CHAPTER = "pretraining_consistency"


def _decide(name: str, effect=None, **conditions) -> stats.Verdict:
    """The registered claim ``name`` ("sv-plural/subject/effect"; modlib/pretraining_consistency/claims.toml)
    decided under the rule (:func:`modlib.claims.decide`): its direction, the paper's number and the
    margin come from the registry."""
    return claims.decide(f"{CHAPTER}/{name.replace('/', '-')}", effect, **conditions)


def paper_effects() -> dict[tuple[str, str, str], float]:
    """The paper's mean ablation effect (ablated other minus target) per (rule, subroutine, init),
    where it reports one: ``{("sv-plural", "subject", "pretrained"): 0.47, ...}``."""
    out = {}
    for init, table in (("scratch", LEPORI), ("pretrained", LEPORI_PRETRAINED)):
        for (rule, sub), (_, _, target, other) in table.items():
            out[(rule, sub, init)] = round(other - target, 2)
    return out
MARGIN = 0.1  # the modular pattern: the ablated model keeps the other subroutine this much better

# what a base model measured, per subroutine: two base models are the same unit only where all agree
MEASURED = ["sub_target", "sub_other", "target", "other", "kept"]


def _units(s, p) -> int:
    """Distinct base models in the smaller of two arms' rows (``s``, ``p``), told apart by every
    measurement (:data:`MEASURED`), not only by the compared one: ablated accuracies at the
    ceiling give every base model an effect of 0, yet they are different models."""
    return min(stats.distinct_units(g[MEASURED].to_numpy()) for g in (s, p))


def pretraining_effects(runs):
    """One row per (base model, subroutine) of chapter 6's stored results
    (:class:`modlib.pretraining_consistency.PretrainingRuns`): rule, init, seed, subroutine, the
    base model's task accuracy, whether it was searched and its subnetwork passed the gate, the
    subnetwork's (``sub_*``) and the ablated model's accuracy on the target and the other
    subroutine (means over mask seeds), ``effect`` (ablated other minus target) and ``modular``
    (passed the gate and effect at least :data:`MARGIN`), and ``both_tests`` (modular, and the
    subnetwork passes chapter 5's subnetwork test too: :data:`LOWER` below its target on the other), and
    the random subnetwork's of the same per-layer counts as each learned mask (``random_target``,
    ``random_other``: its stored ``"random"`` evaluation, means over mask seeds as ``sub_*``; nan
    where not stored), the control of the specificity claims (:func:`random_control`)."""
    import pandas as pd

    out = []
    for name, r in runs.rows.items():
        rule, init, seed = name.rsplit("-", 2)
        m = r.metrics
        for sub in m["subroutines"] if m["searched"] else _subroutine_names(rule):
            row = {"rule": rule, "init": init, "seed": int(seed), "subroutine": sub,
                   "task": m["base"]["task"], "searched": m["searched"], "passed_gate": False,
                   "sub_target": np.nan, "sub_other": np.nan, "target": np.nan, "other": np.nan,
                   "kept": np.nan, "random_target": np.nan, "random_other": np.nan,
                   "rand_abl_target": np.nan, "rand_abl_other": np.nan, "lam": np.nan}
            if m["searched"]:
                found = m["subroutines"][sub]
                hard = np.array([run["hard"] for run in found["runs"]])  # [mask seeds, 2]
                ablated = np.array([run["complement"] for run in found["runs"]])
                row.update(passed_gate=bool(found["passed_gate"]), sub_target=hard[:, 0].mean(),
                           kept=float(np.mean([run["kept"] for run in found["runs"]])),
                           sub_other=hard[:, 1].mean(), target=ablated[:, 0].mean(), other=ablated[:, 1].mean(),
                           lam=found.get("chosen", {}).get("lam", np.nan))
                if all("random" in run for run in found["runs"]):  # the random subnetwork of the same counts
                    random = np.array([run["random"] for run in found["runs"]])
                    row.update(random_target=random[:, 0].mean(), random_other=random[:, 1].mean())
                if all("random_complement" in run for run in found["runs"]):  # recorded since issue 31
                    random = np.array([run["random_complement"] for run in found["runs"]])
                    row.update(rand_abl_target=random[:, 0].mean(), rand_abl_other=random[:, 1].mean())
            out.append(row)
    df = pd.DataFrame(out)
    df["effect"] = df["other"] - df["target"]
    df["modular"] = df["passed_gate"] & (df["effect"] >= MARGIN)
    df["both_tests"] = df["modular"] & (df["sub_target"] - df["sub_other"] >= LOWER)
    return df


def _subroutine_names(rule: str) -> tuple[str, str]:
    from modlib.structural_compositionality import RULES

    return RULES[rule]


def pretraining_consistency(df):
    """Per (rule, subroutine, init) of :func:`pretraining_effects`' table: base models, how many
    show the modular pattern, and the mean, standard deviation (over the base models, as in the
    findings' "mean ± sd"), Brown-Forsythe spread (:func:`spread`) and range of the ablation
    effect over the base models whose masks passed the gate, the ones the statements on the effect
    and its spread count (:func:`pretraining_from`); ``models`` and ``modular`` count them all."""
    import pandas as pd

    rows = {}
    for key, g in df.groupby(["rule", "subroutine", "init"], sort=False):
        e = g[g["passed_gate"]]["effect"].dropna()  # as the statements count them
        rows[key] = {"models": len(g), "modular": int(g["modular"].sum()), "mean effect": e.mean(),
                     "sd effect": e.std(ddof=0) if len(e) > 1 else np.nan,
                     "spread (MAD)": spread(e).mean() if len(e) > 1 else np.nan,
                     "min effect": e.min(), "max effect": e.max()}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis(["rule", "subroutine", "init"])


def arm_numbers(df, matched: bool = False) -> dict[str, str]:
    """The per-arm numbers the page's verdict paragraphs quote, from :func:`pretraining_effects`'
    table (or, ``matched``, :func:`matched_density`'s, then keyed ``"matched-..."``), keyed
    ``"{rule}-{sub}-{init}-{what}"`` for it to glue: means over the searched base models (with a
    matched mask) of the subnetwork alone (``sub_target``, ``sub_other``), the random subnetwork of
    the same per-layer counts (``random_target``, ``random_other``, where the table has them), the ablated model
    (``target``, ``other``) and ``effect`` (two decimals), the median ``kept`` share (a percentage, as
    :func:`verdict_table` gives it)
    and the count of ``modular`` base models ("2 of 5"; for ``matched``, of the base models with a
    matched mask)."""
    out = {}
    for (rule, sub, init), g in df.groupby(["rule", "subroutine", "init"], sort=False):
        key = f"{'matched-' if matched else ''}{rule}-{sub}-{init}"
        searched = g[g["kept"].notna()] if matched else g[g["searched"] & g["passed_gate"]]
        for col in ("sub_target", "sub_other", "random_target", "random_other", "target", "other", "effect"):
            if col not in searched:
                continue
            out[f"{key}-{col}"] = f"{searched[col].mean():.2f}" if len(searched) else "none searched"
        out[f"{key}-kept"] = f"{100 * searched['kept'].median():.2f} %" if len(searched) else "no mask"
        if matched:  # a matched mask passed its own gate: modular where its effect reaches MARGIN
            out[f"{key}-modular"] = f"{int((searched['effect'] >= MARGIN).sum())} of {len(searched)}"
        else:
            out[f"{key}-modular"] = f"{int(g['modular'].sum())} of {len(g)}"
    return out


PAPER_COUNT = 0.2  # "more consistent": one more base model of five modular (the paper: 9 of 9 pretrained)
PAPER_SPREAD = 0.05  # a smaller spread: the Brown-Forsythe deviations this much smaller


def pretraining(runs, lam: dict | None = None, own: tuple[dict, dict] | None = None,
                shared: dict | None = None) -> dict[str, Finding]:
    """Chapter 6's statements (:func:`pretraining_from` on the stored runs, then
    :func:`matched_from` on :func:`matched_density` and, given ``lam`` (the stored
    :mod:`~modlib.pretraining_consistency.lam_matched` results by name), on :func:`lam_density`; given
    ``own`` too (:mod:`~modlib.pretraining_consistency.own_runs`' stored base models and pretraining
    runs, by name), :func:`own_from`; given ``shared`` too (:mod:`~modlib.pretraining_consistency.
    shared_start`'s stored base models by name), :func:`shared_from`)."""
    metrics = {kind: r.metrics for kind, r in runs.pretraining.items()}
    base_gate = runs.settings.base_gate if hasattr(runs.settings, "base_gate") else 0.95
    ok = _pretrained_ok(metrics)
    out = {**pretraining_from(pretraining_effects(runs), metrics, base_gate),
           **matched_from(matched_density(runs), base_gate, pretrained_ok=ok),
           **argmax_from(authors_selection(runs), metrics, base_gate)}
    if lam:
        out.update(matched_from(lam_density(lam), base_gate, prefix=LAM, seeds=runs.settings.seeds, pretrained_ok=ok))
        out.update(_unstored(out, LAM, f" (0 of {runs.settings.seeds} per arm)"))
        if own is not None:
            out.update(own_from(lam, *own, metrics, runs.settings.seeds, base_gate))
        if shared is not None:
            out.update(shared_from(lam, shared, runs.settings.seeds, base_gate, ok))
    return out


def shared_from(lam: dict, shared: dict, seeds: int, base_gate: float = 0.95,
                pretrained_ok: dict[str, bool] | None = None) -> dict[str, Finding]:
    """The four comparisons at the common share (:func:`matched_from` with ``prefix``
    :data:`SHARED`) of the pretrained arm (``lam``'s, one pretraining run) against base models that
    share a random start (``shared``: the stored :mod:`~modlib.pretraining_consistency.shared_start`
    base models by name, with ``lam``'s scratch base model 0), keyed
    ``"{rule}/{sub}/shared_{what}"``; nothing is decided until all ``seeds`` base models per arm
    are stored."""
    from modlib.pretraining_consistency import shared_start

    out = matched_from(lam_density(shared_start.arm(lam, shared)), base_gate, prefix=SHARED, seeds=seeds,
                       pretrained_ok=pretrained_ok, other=shared_start.INIT)
    return {**out, **_unstored(out, SHARED)}


def _unstored(found: dict[str, Finding], prefix: str, why: str = "") -> dict[str, Finding]:
    """The registered claims of ``prefix`` (:data:`LAM`, :data:`OWN`, :data:`SHARED`) missing from
    ``found``, each undecided: none of its base models is stored yet (``why``: more words)."""
    out = {}
    for c in claims.registry(CHAPTER).values():
        if f"/{prefix}" in c.name and c.name not in found:
            rule, sub, what = c.name.split("/")
            v = _decide(c.name, low=0.0, high=0.0, units=0, reason=f"none of its base models is stored yet{why}")
            out[c.name] = claims.statement(v, f"{rule}, {sub}, {WHERE_WORDS[prefix]}, "
                                           f"{CLAIM_WORDS[what.removeprefix(prefix)]}:")
    return out


def own_ok(metrics: dict, pretrainings: dict, seeds: int) -> dict[str, bool]:
    """Per rule, whether every pretraining run of its pretrained arm worked (:func:`_pretrained_ok`):
    the chapter's (``metrics``, by kind) and the added runs 1 .. ``seeds`` - 1 (``pretrainings``:
    :mod:`~modlib.pretraining_consistency.own_runs`' stored runs by name), all of them stored."""
    from modlib.pretraining_consistency import own_runs

    out = {}
    for rule in ("sv-plural", "inside-contact"):
        kind = own_runs.kind(rule)
        added = [pretrainings.get(own_runs.pretrain_name(kind, k)) for k in range(1, seeds)]
        out[rule] = all(r is not None and _pretrained_ok({kind: r.metrics})[rule] for r in added) and bool(
            _pretrained_ok(metrics).get(rule, False))
    return out


def own_from(lam: dict, own: dict, pretrainings: dict, metrics: dict, seeds: int,
             base_gate: float = 0.95) -> dict[str, Finding]:
    """The four comparisons at the common share (:func:`matched_from` with ``prefix`` :data:`OWN`)
    with the pretrained arm's base models 1.. each from its own pretraining run (``own``: the stored
    :mod:`~modlib.pretraining_consistency.own_runs` base models by name, read with :func:`lam_density`
    beside ``lam``'s scratch arm and pretrained base model 0), keyed ``"{rule}/{sub}/own_{what}"``;
    every pretraining run must have worked (:func:`own_ok`; ``pretrainings``: the added runs by name,
    ``metrics``: the chapter's run by kind), and nothing is decided until all ``seeds`` base models
    per arm are stored."""
    from modlib.pretraining_consistency import own_runs

    out = matched_from(lam_density(own_runs.arm(lam, own)), base_gate, prefix=OWN, seeds=seeds,
                       pretrained_ok=own_ok(metrics, pretrainings, seeds))
    return {**out, **_unstored(out, OWN)}


def authors_selection(runs):
    """The masks the authors' code would choose (issue 50): per (rule, init, seed, subroutine) of chapter 6's
    stored results, the configuration of the search's grid with the highest quality (the first in
    grid order on a tie), converged or not, instead of the book's rule that a chosen configuration
    must have converged (an absolute tolerance of 0.001 on its kept share), read from its seed-0 mask's
    test-set results (the only masks stored for a configuration that was not chosen). Columns as
    :func:`pretraining_effects` (``kept``, ``target``, ``other``, ``effect``, ``passed_gate``, ``task``,
    ``searched``), with ``lam``, ``converged`` and ``changed`` (whether the book chose otherwise)."""
    import pandas as pd

    rows = []
    for name, r in runs.rows.items():
        rule, init, seed = name.rsplit("-", 2)
        m = r.metrics
        for sub, f in (m.get("subroutines") or {}).items():
            if not f.get("grid"):
                continue
            best = max(f["grid"], key=lambda c: c["quality"])  # max keeps the first of equals
            chosen = {k: best[k] for k in f["chosen"]}
            target, other = best["test"]["complement"]
            rows.append({"rule": rule, "init": init, "seed": int(seed), "subroutine": sub, "task": m["base"]["task"],
                         "searched": m["searched"], "passed_gate": bool(f["passed_gate"]), "lam": best["lam"],
                         "converged": bool(best["converged"]), "changed": chosen != f["chosen"], "kept": best["kept"],
                         "target": target, "other": other})
    df = pd.DataFrame(rows)
    if not df.empty:
        df["effect"] = df["other"] - df["target"]
    return df


def _pretrained_ok(metrics: dict) -> dict[str, bool]:
    """Per rule, whether its pretraining run worked (as :func:`pretraining_from` checks it)."""
    out = {}
    if "language" in metrics:
        out["sv-plural"] = bool(metrics["language"]["probe"] >= 0.9)
    if "vision" in metrics:
        m = metrics["vision"]
        out["inside-contact"] = bool(m["final_loss"] < 0.5 * m["chance_loss"]) and all(
            m["probe"][k] - m["probe_untrained"][k] >= 0.05 for k in m["probe"])
    return out


def argmax_from(df, metrics: dict, base_gate: float = 0.95) -> dict[str, Finding]:
    """The larger-effect claim again under the authors' selection (:func:`authors_selection`'s
    table ``df``), per (rule, subroutine) where it changed a choice, keyed
    ``"{rule}/{sub}/effect-argmax"``: pretrained minus scratch mean ablation effect over the base
    models whose search passed the gate, Welch t, under the same conditions as ``effect`` (both arms
    trained and searched, pretraining worked, masks neither empty nor full, the arms' masks within
    :data:`DENSITY_RATIO` in median kept share)."""
    from modlib.structural_compositionality.findings import degenerate, pct

    out = {}
    if df.empty:
        return out
    pretrained_ok = _pretrained_ok(metrics)
    for (rule, sub), g in df.groupby(["rule", "subroutine"], sort=False):
        if not g["changed"].any():
            continue
        trained = bool(g["searched"].all() and (g["task"] >= base_gate).all()) and pretrained_ok.get(rule, True)
        g = g[g["passed_gate"]]
        s, p = g[g["init"] == "scratch"], g[g["init"] == "pretrained"]
        if len(s) < 2 or len(p) < 2:
            continue
        ratio = density_ratio(s, p)
        name = f"{rule}/{sub}/effect-argmax"
        v = _decide(name, stats.unpaired(p["effect"], s["effect"], unit="base model", units=_units_of(s, p)),
                    trained=trained, controls=not degenerate(g["kept"]),
                    reason=_apart(ratio, s, p) if ratio > DENSITY_RATIO else "")
        moved = "; ".join(f"{init} {seed}: x{lam:g} ({k:.2%} kept{'' if conv else ', not converged'})"
                          for init, seed, lam, k, conv in g[g["changed"]][["init", "seed", "lam", "kept", "converged"]]
                          .itertuples(index=False))
        out[name] = claims.statement(
            v, f"{rule}, {sub} masks chosen as the authors' code chooses (the highest quality, converged or not; "
               f"{int(g['changed'].sum())} of {len(g)} choices differ from the book's: {moved}): they keep "
               f"{pct(s['kept'])} from scratch and {pct(p['kept'])} pretrained (means ± sd; medians {s['kept'].median():.1%} and "
               f"{p['kept'].median():.1%}); ablated, {mean_pm(s['target'])} on {sub} problems and {mean_pm(s['other'])} on "
               f"the other's from scratch, {mean_pm(p['target'])} and {mean_pm(p['other'])} pretrained (the search's seed-0 "
               f"masks); pretrained minus scratch ablation effect (the stated margin {MARGIN:+.2f}):")
    return out


def _units_of(s, p) -> int:
    """Distinct base models in the smaller arm, told apart by every measurement of :func:`authors_selection`."""
    cols = ["kept", "target", "other"]
    return min(stats.distinct_units(g[cols].to_numpy()) for g in (s, p))


def pretraining_numbers(made: dict) -> dict[str, str]:
    """The numbers chapter 6's section on the two pretraining runs quotes, from their stored metrics
    (``made``: ``"language"`` / ``"vision"`` -> metrics), keyed for the page to glue: the masked-word
    loss at the first and last step (``lm-loss-first``, ``lm-loss-last``), the agreement probe
    before and after (``lm-probe-untrained``, ``lm-probe``), SimCLR's last loss (``simclr-loss-last``)
    and the linear probes of each property on an untrained and the pretrained ResNet
    (``probe-{property}-untrained``, ``probe-{property}``), as percentages."""
    lm, vis = made["language"], made["vision"]
    out = {"lm-loss-first": f"{lm['losses'][0]:.2f}", "lm-loss-last": f"{lm['final_loss']:.2f}",
           "lm-probe-untrained": f"{lm['probe_untrained']:.0%}", "lm-probe": f"{lm['probe']:.0%}",
           "simclr-loss-last": f"{vis['final_loss']:.2f}"}
    for prop, acc in vis["probe"].items():
        out |= {f"probe-{prop}": f"{acc:.0%}", f"probe-{prop}-untrained": f"{vis['probe_untrained'][prop]:.0%}"}
    return out


def run_rows(made: dict, pretrainings: dict) -> list[dict[str, str]]:
    """One row per pretraining run of the pretrained arm rebuilt with a run per base model
    (:mod:`~modlib.pretraining_consistency.own_runs`): run 0 the chapter's (``made``: ``"language"``
    / ``"vision"`` -> metrics), runs 1.. the added ones (``pretrainings``: their stored results by
    name), each with the MLM's agreement probe, SimCLR's last loss against a guess's and the linear
    probes of inside and contact on its ResNet (untrained in brackets), as the chapter's bar for a
    pretraining that worked reads them."""
    from modlib.pretraining_consistency import own_runs

    def of(kind: str, k: int) -> dict | None:  # run k's metrics, None where it is not stored
        stored = pretrainings.get(own_runs.pretrain_name(kind, k))
        return made.get(kind) if k == 0 else stored.metrics if stored else None

    rows = []
    for k in sorted({0, *(r.metrics["run"] for r in pretrainings.values())}):
        lm, vis = of("language", k), of("vision", k)
        row = {"run": f"{k} (the chapter's)" if k == 0 else str(k),
               "MLM agreement probe": f"{lm['probe']:.0%}" if lm else "not stored",
               "SimCLR loss (a guess's)": f"{vis['final_loss']:.2f} ({vis['chance_loss']:.2f})" if vis else "not stored"}
        for prop in ("inside", "contact"):
            row[f"{prop} probe (untrained)"] = (f"{vis['probe'][prop]:.0%} ({vis['probe_untrained'][prop]:.0%})"
                                                if vis else "not stored")
        rows.append(row)
    return rows


# The share of masked weights the paper's masks keep in BERT-small fine-tuned from its MLM weights (the
# authors' L0_Reporting files; issue 31); from scratch and the ResNets: chapter 5's PAPER_KEPT
PAPER_KEPT_PRETRAINED = (0.0007, 0.015)


def _as_configuration(point: dict, configuration: dict) -> dict:
    """A sweep's point (:func:`modlib.structural_compositionality.sweep.sweep_model`) written as an
    entry of a search's grid, for :func:`matched_density`."""
    return {"lam": point["lam"], "stages": configuration["stages"], "kept": point["kept"], "own": point["own"],
            "converged": point["converged"],
            "test": {k: point[k] for k in ("hard", "complement", "random") if k in point}}


def matched_density(runs, kept: float | None = None):
    """Pretrained and scratch masks at comparable density (issue 31): one row per (rule, subroutine,
    init, base model) of chapter 6's stored results, from the searched grid (each configuration's
    seed-0 mask, tested on the test sets) and, for the pretrained base models, their masks at
    :data:`modlib.pretraining_consistency.MATCH_LAMS` (``runs.matched``, the same mask seed and
    configuration at another lambda): the configuration whose kept share is nearest (by ratio)
    a common share, among those that passed the 0.9 gate (on validation problems in the search's
    grid, on test problems for the extra masks, as a sweep measures them) and converged; chosen by
    density alone, never by a test accuracy. The common share, per (rule, subroutine): ``kept`` if
    given, else the median kept share of the scratch arm's selected masks (the arm the search's
    penalties were set for), so that scratch base models keep their selected configuration where
    it qualifies.
    Columns: the common share (``common``), the matched mask's ``kept``, ``lam`` and ``stages``,
    ``extra`` (whether it is one of the masks at MATCH_LAMS rather than of the search's grid),
    the subnetwork's (``sub_target``, ``sub_other``), the random subnetwork's of the same per-layer
    counts (``random_target``, ``random_other``: the mask's stored ``"random"`` evaluation, nan where
    none is stored) and the ablated model's (``target``, ``other``) accuracies, ``effect`` (other
    minus target), and the base model's ``task`` and ``searched``; nan where no configuration
    qualifies."""
    import pandas as pd

    rows = []
    for name, r in runs.rows.items():
        rule, init, seed = name.rsplit("-", 2)
        m = r.metrics
        more = getattr(runs, "matched", {}).get(f"matched-{name}")  # masks at MATCH_LAMS, pretrained
        for sub, found in (m.get("subroutines") or {}).items():
            chosen = np.mean([run["kept"] for run in found["runs"]])
            grid = list(found.get("grid", []))
            if more is not None:
                grid += [{**_as_configuration(q, more.metrics["configuration"]), "extra": True}
                         for q in more.metrics["points"] if q["subroutine"] == sub]
            fit = [g for g in grid if "test" in g and g["own"] >= 0.9 and g["converged"]]
            rows.append({"rule": rule, "init": init, "seed": int(seed), "subroutine": sub, "selected": chosen,
                         "task": m["base"]["task"], "searched": m["searched"], "grid": fit})
    if not rows:
        return pd.DataFrame()
    df = pd.DataFrame(rows)
    out = []
    for (rule, sub), g in df.groupby(["rule", "subroutine"], sort=False):
        common = kept if kept is not None else float(g[g["init"] == "scratch"]["selected"].median())
        for _, row in g.iterrows():
            rec = {k: row[k] for k in ("rule", "init", "seed", "subroutine", "task", "searched")}
            rec.update(common=common, kept=np.nan, lam=np.nan, stages="", extra=False, sub_target=np.nan,
                       sub_other=np.nan, random_target=np.nan, random_other=np.nan, target=np.nan, other=np.nan)
            if row["grid"] and np.isfinite(common):
                best = min(row["grid"], key=lambda c: abs(np.log(max(c["kept"], 1e-6) / common)))
                rec.update(kept=best["kept"], lam=best["lam"], stages=best["stages"], extra=best.get("extra", False),
                           sub_target=best["test"]["hard"][0], sub_other=best["test"]["hard"][1],
                           target=best["test"]["complement"][0], other=best["test"]["complement"][1])
                if "random" in best["test"]:
                    rec.update(random_target=best["test"]["random"][0], random_other=best["test"]["random"][1])
            out.append(rec)
    out = pd.DataFrame(out)
    out["effect"] = out["other"] - out["target"]
    return out


def effect_text(name: str) -> str:
    """The difference behind the registered claim ``name`` ("inside-contact/inside/effect") with its
    95% interval, as its statement prints it: "-0.19 (95% Welch t interval over 5 base models -0.41
    to +0.03)", computed again from the decision's own arms (:func:`modlib.claims.decisions`);
    "not computed at this profile" where it was not decided on an interval."""
    d = claims.decisions(CHAPTER).get(f"{CHAPTER}/{name.replace('/', '-')}")
    if d is None or not d.how or not d.units:
        return "not computed at this profile"
    how, args, kwargs = d.how
    arms = (np.asarray(arm, dtype=float) for arm in d.arms)
    return getattr(stats, how)(*arms, *args, **kwargs).text(percent=False)


def _median(kept) -> str:
    """The median of a column of kept shares (nan left out) as :func:`matched_from`'s statements
    and the verdict table print it: "1.98 %"; "no mask" where there is none."""
    kept = kept.dropna()
    return f"{100 * kept.median():.2f} %" if len(kept) else "no mask"


def masked_weights(rule: str, s, stages: str = "all") -> int:
    """How many weights chapter 5's masks cover in ``rule``'s model at settings ``s`` (chapter 5's
    :class:`~modlib.structural_compositionality.StructureSettings`) for the layer set ``stages``:
    a kept share times this is the number of weights a mask keeps."""
    from modlib import masks
    from modlib.structural_compositionality import experiment as sc

    model = sc.make_model(rule, s, 0)
    return int(masks.attach(model, "sparsify", names=sc.mask_patterns(model, stages)).stats()["weights"].sum())




def density_ratio(s, p) -> float:
    """How many times more the denser of two arms' masks keep than the sparser, by the medians of
    their ``kept`` columns (``s``, ``p``: rows of one rule and subroutine); over
    :data:`DENSITY_RATIO`, a comparison of the arms' masks compares densities as much as
    pretraining (chapter 5's sweep: removing masks of 1 % or less costs nothing), and cannot be
    decided."""
    return float(_fold(s["kept"].median(), p["kept"].median()))


def _fold(a, b):
    """How many times larger the larger of ``a`` and ``b`` is (elementwise for arrays)."""
    return np.exp(np.abs(np.log(a / b)))


def _apart(ratio: float, s, p) -> str:
    """Why a comparison whose arms' masks are ``ratio`` (> :data:`DENSITY_RATIO`) apart cannot be decided."""
    return (f"the two arms' masks are {ratio:.0f} times apart in density "
                         f"(median kept {s['kept'].median():.2%} from scratch and {p['kept'].median():.2%} "
                         f"pretrained; comparable: median kept shares within a factor of {DENSITY_RATIO:.0f}): see the comparison "
            "at comparable density")


def _no_effect(es, ep, other: str = "scratch") -> str:
    """Where either arm's mean ablation effect (``es``: the ``other`` arm's, ``ep``: pretrained)
    stays under :data:`MARGIN`, a spread compares the scatter of no effect: why it cannot be decided
    (the count says more); "" otherwise."""
    if min(es.mean(), ep.mean()) < MARGIN:
        arm = "pretrained" if ep.mean() < MARGIN else {"shared": "shared-start"}.get(other, other)
        low = min(es.mean(), ep.mean())
        places = 3 if round(low, 2) >= MARGIN else 2  # +0.098 would print as the +0.10 it misses
        return (f"the {arm} models show too little mean effect to compare spreads "
                f"({number(low, places, sign=True)}, under the {MARGIN} needed)")
    return ""


def random_control(name: str, s, p, other: str = "scratch") -> tuple[bool, str]:
    """The control of a specificity claim (``name``: ``"{rule}/{sub}/specific"`` or
    ``".../matched_specific"``; issue 50): its learned subnetworks must be more specific than random
    subnetworks of the same per-layer counts, whose accuracies fall with density alone. On the rows
    ``s`` and ``p`` it compares (scratch, pretrained; those with a learned ``sub_other``), the
    claim's difference, scratch minus pretrained mean accuracy on the other subroutine's problems,
    is computed on the learned subnetworks (``sub_other``) and on the random ones (``random_other``);
    the control passes when the learned difference minus the random one reaches the claim's margin
    (the registry's), and fails where it falls short or a base model has no stored random
    evaluation. Returns whether it passed and the words the statement quotes (the random
    subnetworks' numbers; ``other``: the arm ``s`` is, :data:`ARM_WORDS`)."""
    s, p = s[s["sub_other"].notna()], p[p["sub_other"].notna()]
    margin = claims.get(f"{CHAPTER}/{name.replace('/', '-')}").margin
    if not (len(s) and len(p) and all("random_other" in arm and arm["random_other"].notna().all() for arm in (s, p))):
        return False, ("no random subnetwork of the same per-layer counts is stored for every base model, so the "
                       "control (specific beyond a random subnetwork) cannot be run")
    learned = s["sub_other"].mean() - p["sub_other"].mean()
    chance = s["random_other"].mean() - p["random_other"].mean()
    beyond = learned - chance
    shown = f"{beyond:+.3f}" if round(beyond, 2) == round(margin, 2) else number(beyond, sign=True)  # at the margin: 3 places
    return bool(beyond >= margin), (
        f"random subnetworks of the same per-layer counts get {mean_pm(s['random_other'])} on the other subroutine's "
        f"problems {_from(other)} and {mean_pm(p['random_other'])} pretrained (on their own, {mean_pm(s['random_target'])} "
        f"and {mean_pm(p['random_target'])}), a gap of {number(chance, sign=True)} beside the learned subnetworks' {number(learned, sign=True)}: "
        f"the learned gap beyond the random one, {shown}, must reach the margin of {margin:+.2f} (the control)")


def near_numbers(matched) -> dict[str, str]:
    """Per (rule, subroutine) of :func:`matched_density`'s table ``matched``, the pretrained base
    models whose matched mask lies within :data:`DENSITY_RATIO` of the scratch arm's median kept
    share, for the page to glue where the arms as a whole are too far apart to compare, keyed
    ``"near-{rule}-{sub}"`` (how many: "2 of 5"), ``"near-{rule}-{sub}-kept"`` and
    ``"near-{rule}-{sub}-effect"`` (their kept shares and ablation effects, listed)."""
    out = {}
    for (rule, sub), g in matched.groupby(["rule", "subroutine"], sort=False):
        s, p = g[g["init"] == "scratch"], g[g["init"] == "pretrained"]
        common = s["kept"].median()
        near = p[_fold(p["kept"], common) <= DENSITY_RATIO]
        key = f"near-{rule}-{sub}"
        out[key] = f"{len(near)} of {len(p)}"
        out[f"{key}-kept"] = " and ".join(f"{100 * k:.2f} %" for k in near["kept"]) or "none"
        out[f"{key}-effect"] = " and ".join(number(e, sign=True) for e in near["effect"]) or "none"
        out[f"{key}-scratch-kept"] = f"{100 * common:.2f} %"  # as the verdict table gives it
    return out


def held_out(matched) -> dict[tuple[str, str], stats.Effect]:
    """Per (rule, subroutine) of :func:`matched_density`'s table ``matched`` whose pretrained masks
    include the extra penalty weight and whose arms are of comparable density: the larger effect at
    comparable density (pretrained minus scratch, Welch t) without pretrained base model 0, on whose
    sweep that weight was chosen."""
    out = {}
    for (rule, sub), g in matched.groupby(["rule", "subroutine"], sort=False):
        s, p = g[g["init"] == "scratch"], g[g["init"] == "pretrained"]
        s, p = s[s["kept"].notna()], p[p["kept"].notna()]
        if not (len(s) and len(p) and p["extra"].any()) or density_ratio(s, p) > DENSITY_RATIO:
            continue
        out[rule, sub] = stats.unpaired(p["effect"][p["seed"] != 0], s["effect"], unit="base model")
    return out


def held_out_numbers(matched) -> dict[str, str]:
    """For the page's prose (glued): per (rule, subroutine) of :func:`held_out`, the larger effect at
    comparable density without pretrained base model 0, as :func:`matched_from`'s statement gives
    it: ``"held-{rule}-{sub}-effect"`` (the pretrained minus scratch effect, "+0.19 (95% ... -0.04 to
    +0.42)") and ``"held-{rule}-{sub}-interval"`` ("-0.04 to +0.42, which reaches 0: ..." where the
    interval's low end is not above 0, or "..., clear of 0")."""
    out = {}
    for (rule, sub), e in held_out(matched).items():
        key = f"held-{rule}-{sub}"
        out[f"{key}-effect"] = e.text(percent=False)
        reach = ("which reaches 0: its verdict rests on base model 0, and is fragile" if e.low <= 0
                 else "clear of 0")
        out[f"{key}-interval"] = f"{number(e.low, sign=True)} to {number(e.high, sign=True)}, {reach}"
    return out


MATCHED = ("matched_effect", "matched_specific", "matched_consistency", "matched_spread")
MATCHED_PREFIX, LAM = "matched_", "lam_"  # the claims at comparable density; at the common share, by lambda
OWN = "own_"  # at the common share, each pretrained base model from its own pretraining run (own_runs)
SHARED = "shared_"  # at the common share, pretrained against a shared random start (shared_start)
WHERE_WORDS = {MATCHED_PREFIX: "at comparable density", LAM: "at the common share",
               OWN: "at the common share, each pretrained base model from its own pretraining run",
               SHARED: "at the common share, against base models that share a random start"}
ARM_WORDS = {"scratch": "scratch", "shared": "the shared random start"}  # the arm compared with pretrained
PRETRAINED_WORDS = {OWN: "pretrained, a run each", SHARED: "pretrained, one run"}  # lam_rows' row names


def _from(other: str) -> str:
    """Where the compared arm's base models come from, in words: "from scratch"."""
    return f"from {ARM_WORDS[other]}"


def read_probe(probes: list[dict], target: float, gated: bool = True) -> dict | None:
    """The mask of a search for the common share that the page reads (``probes``: a lam-matched
    result's, ``target``: the share): the one whose kept share lies nearest ``target`` (by ratio;
    ties: the first) among those that passed the 0.9 gate and converged (``gated`` false: among all
    that keep anything); None where none qualifies."""
    fit = [q for q in probes if q["kept"] > 0 and (not gated or (q["passed_gate"] and q["converged"]))]
    return min(fit, key=lambda q: abs(np.log(q["kept"] / target))) if fit else None


def authors_probe(probes: list[dict], target: float) -> dict | None:
    """As :func:`read_probe`, but as the authors' code would choose (a reading after the results):
    among the masks that passed the 0.9 gate, whether or not their kept share had stopped falling.
    (A function of its own: :func:`read_probe` is reached by the stored own-run results' computation,
    so a new argument there would make them stale.)"""
    fit = [q for q in probes if q["kept"] > 0 and q["passed_gate"]]
    return min(fit, key=lambda q: abs(np.log(q["kept"] / target))) if fit else None


def lam_density(stored: dict, settled: bool = True):
    """Both arms at the common share, by a search for lambda (issue 53,
    :mod:`~modlib.pretraining_consistency.lam_matched`; ``stored``: its results by name), in
    :func:`matched_density`'s columns: one row per (rule, subroutine, init, base model), the base
    model as trained again (``task``, ``searched``: the base gate), ``common`` (the share searched
    for), and the probe nearest it (by ratio) among those that passed the 0.9 gate and converged: its
    ``kept``, ``lam``, accuracies and ``effect``; nan where none qualifies. ``probes`` counts the
    masks the search trained. ``settled=False``: the probe :func:`authors_probe` reads instead
    (converged or not), a reading after the results beside the registered one."""
    import pandas as pd

    from modlib.structural_compositionality.tasks import RULES

    rows = []
    for r in stored.values():
        m = r.metrics
        for sub in RULES[m["rule"]]:  # a base model that missed the base gate: a row without a mask
            f = (m.get("subroutines") or {}).get(sub, {"target_kept": r.config["targets"][sub], "chosen": {},
                                                        "probes": []})
            rec = {"rule": m["rule"], "init": m["init"], "seed": m["seed"], "subroutine": sub, "task": m["task"],
                   "searched": m["searched"], "common": f["target_kept"], "kept": np.nan, "lam": np.nan,
                   "stages": f["chosen"].get("stages", ""), "extra": False, "probes": len(f["probes"]),
                   **dict.fromkeys(("sub_target", "sub_other", "random_target", "random_other", "target", "other"),
                                   np.nan)}
            best = (read_probe if settled else authors_probe)(f["probes"], f["target_kept"])
            if best is not None:
                test = best["test"]
                rec.update(kept=best["kept"], lam=best["lam"], sub_target=test["hard"][0], sub_other=test["hard"][1],
                           random_target=test["random"][0], random_other=test["random"][1],
                           target=test["complement"][0], other=test["complement"][1])
            rows.append(rec)
    out = pd.DataFrame(rows)
    if not out.empty:
        out["effect"] = out["other"] - out["target"]
    return out


def authors_lam_words(df, other: str = "scratch") -> dict[str, str]:
    """The larger ablation effect at the common share with the authors' selection (``df``:
    :func:`lam_density` with ``settled=False``; a reading after the results, no claim), keyed
    ``"{rule}-{sub}"``: pretrained minus ``other`` mean effect (other minus target accuracy with
    the subnetwork removed) over base models, Welch's 95% interval, and how many base models each
    arm counts ("-0.21 (-0.36 to -0.07), 5 pretrained and 5 scratch base models")."""
    out = {}
    for (rule, sub), t in df.groupby(["rule", "subroutine"], sort=False):
        a = t[(t["init"] == "pretrained") & t["effect"].notna()]["effect"]
        b = t[(t["init"] == other) & t["effect"].notna()]["effect"]
        if min(len(a), len(b)) < 2:
            out[f"{rule}-{sub}"] = f"too few base models with a mask ({len(a)} pretrained, {len(b)} {other})"
            continue
        e = stats.unpaired(a.to_numpy(), b.to_numpy(), unit="base model")
        out[f"{rule}-{sub}"] = (f"{number(e.mean, sign=True)} ({number(e.low, sign=True)} to "
                                f"{number(e.high, sign=True)}), {len(a)} pretrained and {len(b)} {other} base models")
    return out


def lam_rows(df, found: dict[str, Finding], prefix: str = LAM, other: str = "scratch") -> list[dict[str, str]]:
    """The page's table at the common share, one dict per quantity (a row) with a column per
    subnetwork ("subject (agreement)"), from :func:`lam_density`'s table ``df`` and the claims
    ``found`` (keyed ``"{rule}/{sub}/{prefix}..."``; :data:`OWN`: with a pretraining run per base
    model; :data:`SHARED`: against the shared random start, ``other`` "shared"): the common share,
    each arm's kept share (median over the base models with a mask), its modular base models and its
    mean ablation effect, and the four claims' marks."""
    from modlib.structural_compositionality.findings import RULE_WORDS

    rows: dict[str, dict[str, str]] = {}
    for (rule, sub), g in df.groupby(["rule", "subroutine"], sort=False):
        col = f"{sub} ({RULE_WORDS.get(rule, rule)})"
        rows.setdefault("common share", {})[col] = f"{100 * g['common'].iloc[0]:.2f} %"
        for init in (other, "pretrained"):
            a = g[g["init"] == init]
            masked = a[a["kept"].notna()]
            label = "shared start" if init == "shared" else PRETRAINED_WORDS.get(prefix, "pretrained") \
                if init == "pretrained" else init
            rows.setdefault(f"kept, {label}", {})[col] = _median(a["kept"])
            rows.setdefault(f"modular, {label}", {})[col] = (f"{int((masked['effect'] >= MARGIN).sum())} of "
                                                             f"{len(masked)}")
            rows.setdefault(f"effect, {label}", {})[col] = (number(masked["effect"].mean(), sign=True)
                                                            if len(masked) else "no mask")
        for key, heading in VERDICTS.items():
            f = found.get(f"{rule}/{sub}/{prefix}{key}")  # a hypothesis of the book's own: its word, no mark
            rows.setdefault(heading, {})[col] = (f.mark or f.outcome) if f is not None else "–"
    return [{"": name, **cols} for name, cols in rows.items()]


def lam_notes(stored: dict, rows: dict) -> dict[str, str]:
    """What the page says of the search for the common share, from its stored results (``stored``,
    by name) and the base models they trained again (``rows``: the chapter's stored results by name,
    ``{rule}-{init}-{seed}``), keyed for glue: ``lam-repeats`` (how many base models' training losses
    repeat the stored ones exactly: "0 of 10"), ``lam-loss-gap`` (the largest difference in the first
    epoch's loss), ``lam-probes`` (masks trained per base model and subroutine: "1–5") and
    ``lam-{sub}-scratch-all`` (the scratch arm's mean ablation effect with the base models that have
    no mask read counted on their mask nearest the common share, which missed the gate) and
    ``lam-left-out`` (:func:`left_out`)."""
    ms = [r.metrics for r in stored.values()]
    probes = [len(f["probes"]) for m in ms for f in (m.get("subroutines") or {}).values()]
    first = {n: r.metrics["losses"][0] for n, r in rows.items() if r.metrics.get("losses")}
    gaps = [abs(m["losses"][0] - first[k]) for m in ms if (k := f"{m['rule']}-{m['init']}-{m['seed']}") in first]
    out = {"lam-repeats": f"{sum(bool(m['repeats']) for m in ms)} of {len(ms)}",
           "lam-loss-gap": f"{max(gaps):.1g}" if gaps else "not computed",
           "lam-probes": f"{min(probes)}–{max(probes)}" if probes else "none"}
    # per subroutine, the scratch arm's mean effect with the base models that have no mask read counted
    # on their mask nearest the common share, gate missed (a reading after the results: what leaving
    # them out does)
    nearest: dict[str, list[float]] = {}
    for m in ms:
        for sub, f in (m.get("subroutines") or {}).items():
            q = read_probe(f["probes"], f["target_kept"]) or read_probe(f["probes"], f["target_kept"], gated=False)
            if m["init"] == "scratch" and q is not None:
                nearest.setdefault(sub, []).append(q["test"]["complement"][1] - q["test"]["complement"][0])
    out.update({f"lam-{sub}-scratch-all": number(np.mean(e), sign=True) for sub, e in nearest.items()})
    out["lam-left-out"] = left_out(ms)
    return out


def left_out(ms: list[dict]) -> str:
    """The base models of the lam-matched results (``ms``: their metrics) left without a mask at the
    common share, per rule and subroutine, and why: none of the search's masks converged, or none
    that converged passed the 0.9 gate ("none" where every base model has one)."""
    from modlib.structural_compositionality.findings import RULE_WORDS

    said = []
    for rule in dict.fromkeys(m["rule"] for m in ms):
        for sub in dict.fromkeys(s for m in ms if m["rule"] == rule for s in (m.get("subroutines") or {})):
            why: dict[str, list[str]] = {}
            for m in sorted((m for m in ms if m["rule"] == rule), key=lambda m: (m["init"] != "scratch", m["seed"])):
                probes = (m.get("subroutines") or {}).get(sub, {}).get("probes", [])
                if read_probe(probes, 1.0) is not None:
                    continue
                reason = ("still shrinking when training stopped" if not any(q["converged"] for q in probes)
                          else "missed the 0.9 gate")
                why.setdefault(reason, []).append(f"{m['init']} {m['seed']}")
            if why:
                said.append(f"{RULE_WORDS.get(rule, rule)}, {sub}: " + "; ".join(
                    f"base model{'s' * (len(who) > 1)} {', '.join(who)} ({reason})" for reason, who in why.items()))
    return ". ".join(said) if said else "none"


def lam_check(s, p) -> float:
    """How far from the common share the farther of two arms' masks lie (``s``, ``p``: rows of
    :func:`lam_density` with a mask), as a factor >= 1 of the arm's median kept share; over
    :data:`~modlib.pretraining_consistency.lam_matched.MATCHED` the check fails."""
    common = float(s["common"].iloc[0])
    return float(max(_fold(arm["kept"].median(), common) for arm in (s, p)))


def _apart_reason(s, p, prefix: str, other: str = "scratch") -> str:
    """Why :func:`matched_from` cannot decide a comparison of the masks ``s`` and ``p`` (scratch,
    pretrained) for their density, or "": at comparable density, the arms' medians more than
    :data:`DENSITY_RATIO` apart; at the common share, either arm's median more than
    :data:`~modlib.pretraining_consistency.lam_matched.MATCHED` from it (check failed); ``other``:
    the compared arm (:data:`ARM_WORDS`)."""
    if prefix in (LAM, OWN, SHARED):
        from modlib.pretraining_consistency.lam_matched import MATCHED as CLOSE_ENOUGH

        far = lam_check(s, p)
        if far > CLOSE_ENOUGH:
            return (f"check failed: the masks searched for the common share keep {_median(s['kept'])} {_from(other)} "
                    f"and {_median(p['kept'])} pretrained (medians), one arm {far:.1f} times off the common "
                    f"{100 * s['common'].iloc[0]:.2f} %, over the {CLOSE_ENOUGH} allowed")
        return ""
    ratio = density_ratio(s, p)
    if ratio > DENSITY_RATIO:
        return ("the searched configurations hold no masks of one density: the nearest keep "
                f"{ratio:.0f} times more in one arm than in the other")
    return ""


def matched_from(df, base_gate: float = 0.95, prefix: str = "matched_", seeds: int | None = None,
                 pretrained_ok: dict[str, bool] | None = None, other: str = "scratch") -> dict[str, Finding]:
    """Chapter 6's four comparisons of the pretrained masks again at comparable density, from
    :func:`matched_density`'s table, keyed ``"{rule}/{sub}/{what}"``, each decided by the book's
    rule over base models (Welch t, pretrained against scratch), recording both arms' kept shares;
    with ``prefix`` :data:`LAM` (``"lam_"``), the same four from :func:`lam_density`'s table, at the
    common share by a search for lambda, whose check is :func:`lam_check` instead of the arms'
    density ratio, and which cannot be decided until all ``seeds`` base models per arm are stored.
    ``pretrained_ok`` (per rule, :func:`_pretrained_ok`): whether the rule's pretraining worked, a
    condition of every claim's bar for "trained" (where given). ``other``: the arm the pretrained
    one is compared with, its ``init`` in ``df`` ("scratch"; "shared", the shared random start, with
    ``prefix`` :data:`SHARED`), named in the statements as :data:`ARM_WORDS` says:

    ``matched_effect``    the pretrained models' ablation effect is larger (margin :data:`MARGIN`);
    ``matched_specific``  their subnetworks are lower on the other subroutine's problems (scratch
                          minus pretrained; margin :data:`LOWER`, which stands in
                          for the paper's size);
    ``matched_consistency``  more pretrained base models are modular (effect at least
                          :data:`MARGIN`; margin :data:`PAPER_COUNT`);
    ``matched_spread``    the pretrained models' effect varies less (Brown-Forsythe; margin
                          :data:`PAPER_SPREAD`; read only where both arms' mean effects reach
                          :data:`MARGIN`).

    Each needs every base model trained and searched and a matched mask for each that keeps
    neither nothing nor everything, and the two arms' matched masks within :data:`DENSITY_RATIO`
    of each other (medians); otherwise it cannot be decided. Base models without a matched mask
    are left out.
    """
    from modlib.structural_compositionality.findings import CEILING, measurable, degenerate

    out = {}
    if df.empty:
        return out
    where = WHERE_WORDS[prefix]
    for (rule, sub), g in df.groupby(["rule", "subroutine"], sort=False):
        s, p = g[g["init"] == other], g[g["init"] == "pretrained"]
        frm, minus = _from(other), ARM_WORDS[other]
        trained = bool(g["searched"].all() and (g["task"] >= base_gate).all()
                       and (pretrained_ok or {}).get(rule, True))
        masks_ok = not degenerate(g["kept"].dropna())
        kept = (f"common share {100 * g['common'].iloc[0]:.2f} %, the scratch arm's median as the search chose its "
                f"masks; the {'nearest masks' if prefix == MATCHED_PREFIX else 'masks searched for it'} keep "
                f"{_median(s['kept'])} {frm} and {_median(p['kept'])} "
                "pretrained, medians over base models as the verdict table gives them")
        name = f"{rule}/{sub}"
        whats = [prefix + what for what in VERDICTS]
        short = [f"{len(arm)} of {seeds} {init}" for init, arm in ((other, s), ("pretrained", p))
                 if seeds is not None and len(arm) < seeds]
        if short:
            for what in whats:
                v = _decide(f"{name}/{what}", low=0.0, high=0.0, units=0,
                            reason="only " + " and ".join(short) + " base models are stored yet")
                out[f"{name}/{what}"] = claims.statement(v, f"{rule}, {sub}, {where}, {CLAIM_WORDS[what.removeprefix(prefix)]}:")
            continue
        if s["kept"].isna().all() or p["kept"].isna().all():
            missing = [init for init, arm in ((other, s), ("pretrained", p)) if arm["kept"].isna().all()]
            for what in whats:
                v = _decide(f"{name}/{what}", low=0.0, high=0.0, units=0, reason="no mask to match: none passed "
                            "the gate and converged in " + " and ".join(missing))
                out[f"{name}/{what}"] = claims.statement(
                    v, f"{rule}, {sub}, {where}, {CLAIM_WORDS[what.removeprefix(prefix)]}:")
            continue
        s, p = s[s["kept"].notna()], p[p["kept"].notna()]
        apart = _apart_reason(s, p, prefix, other)
        if apart:
            for what in whats:
                v = _decide(f"{name}/{what}", low=0.0, high=0.0, units=0, reason=apart)
                out[f"{name}/{what}"] = claims.statement(
                    v, f"{rule}, {sub}, {where} ({kept}), {CLAIM_WORDS[what.removeprefix(prefix)]}:")
            continue
        # specific beyond a random subnetwork of the same per-layer counts (issue 50; amended)
        random_ok, control = random_control(f"{name}/{prefix}specific", s, p, other)
        compared = ((f"{prefix}effect", p["effect"], s["effect"],
                   f"ablated, {mean_pm(s['target'])} on {sub} problems and {mean_pm(s['other'])} on the other's "
                   f"{frm}, {mean_pm(p['target'])} and {mean_pm(p['other'])} pretrained; pretrained minus {minus} "
                   "ablation effect:"),
                  (f"{prefix}specific", s["sub_other"], p["sub_other"],
                   f"the subnetwork alone gets {mean_pm(s['sub_other'])} on the other subroutine's problems "
                   f"{frm} and {mean_pm(p['sub_other'])} pretrained (on its own, {mean_pm(s['sub_target'])} and "
                   f"{mean_pm(p['sub_target'])}); {control}; {minus} minus pretrained:"))
        held = p["seed"] != 0  # base model 0's sweep chose the extra penalty weight: the others are held out
        extra = bool(p["extra"].any())
        for what, a, b, text in compared:
            v = _decide(f"{name}/{what}", stats.unpaired(a, b, unit="base model", units=_units(s, p)), trained=trained,
                        controls=masks_ok and (random_ok or what != f"{prefix}specific"),
                        as_registered={"controls": masks_ok},
                        measurable=what != f"{prefix}specific" or measurable(a, b))
            first = a if what == f"{prefix}effect" else b  # the pretrained arm
            rest = (first[held], b) if what == f"{prefix}effect" else (a, first[held])
            found = claims.statement(v, f"{rule}, {sub}, {where} ({kept}): {text}")
            if extra:
                out_of = stats.unpaired(*rest, unit="base model").text(percent=False)
                found = replace(found, text=f"{found.text} Without pretrained base model 0, whose sweep chose the "
                                f"extra penalty weight: {out_of}.")
            out[f"{name}/{what}"] = found
        # the paper's own claims, the count of modular base models and the effect's spread, on these masks
        # (each passed its own gate, 0.9, so a base model is modular where its effect reaches MARGIN)
        ms, mp = (s["effect"] >= MARGIN).astype(float), (p["effect"] >= MARGIN).astype(float)
        v = _decide(f"{name}/{prefix}consistency", stats.unpaired(mp, ms, unit="base model", shares=True,
                                                                  units=_units(s, p)),
                    trained=trained, controls=masks_ok)
        out[f"{name}/{prefix}consistency"] = claims.statement(
            v,
            f"{rule}, {sub}, {where} ({kept}): {int(ms.sum())} of {len(ms)} base models modular "
            f"{frm} and {int(mp.sum())} of {len(mp)} pretrained (effect at least {MARGIN}); share of "
            f"modular base models, pretrained minus {minus}:")
        readable = not all((arm["target"] >= CEILING).all() for arm in (s, p))
        v = _decide(f"{name}/{prefix}spread",
                    stats.unpaired(spread(s["effect"]), spread(p["effect"]), unit="base model", units=_units(s, p)),
                    trained=trained, controls=masks_ok, measurable=readable,
                    reason=_no_effect(s["effect"], p["effect"], other) if readable else "")
        out[f"{name}/{prefix}spread"] = claims.statement(
            v,
            f"{rule}, {sub}, {where} ({kept}): the ablation effect's mean absolute deviation from "
            f"its median is {spread(s['effect']).mean():.2f} {frm} and {spread(p['effect']).mean():.2f} "
            f"pretrained (Brown-Forsythe; mean effect {number(s['effect'].mean(), sign=True)} and {number(p['effect'].mean(), sign=True)}, read "
            f"only where both reach {MARGIN}); {minus} minus pretrained:")
    return out


def pretraining_from(df, metrics: dict, base_gate: float = 0.95) -> dict[str, Finding]:
    """Chapter 6's statements from :func:`pretraining_effects`' table ``df`` and the pretraining
    runs' ``metrics`` (``{"language": ..., "vision": ...}``), keyed by name. Checks that an arm
    trained (no verdict; ✓ where it did):

    ``language/pretraining``  the MLM learnt agreement: its probe reaches 0.9 (untrained: about 0.5);
    ``vision/pretraining``    SimCLR's loss ends below half a guess's;
    ``vision/features``       the SimCLR ResNet's pooled features tell inside and contact apart
                              (linear probe) better than the untrained ResNet's, by 0.05 each;
    ``{rule}/base``           base models from both inits reach the task (all searched).

    The paper's claims, each decided by the book's rule (:func:`modlib.stats.verdict`) over base
    models (5 per arm; mask seeds averaged within each), pretrained against scratch, Welch t
    intervals; each needs both arms' base models trained (searched, task at least ``base_gate``),
    the pretraining itself to have worked, masks that keep neither nothing nor everything, and the
    arms' masks within :data:`DENSITY_RATIO` of each other in density (:func:`density_ratio`); the
    effect and its spread also need a removal that costs something in one arm at least (where every
    ablated model of both arms keeps its target at the ceiling, 0.95, they cannot be decided):

    ``{rule}/{sub}/consistency``  more pretrained base models show the modular pattern (share of
                              modular base models; margin :data:`PAPER_COUNT`); all or none in both
                              arms is a ceiling or floor: cannot be decided;
    ``{rule}/{sub}/spread``   the pretrained models' ablation effect varies less (Brown-Forsythe
                              deviations from the median, scratch minus pretrained; the exact
                              permutation p beside it; margin :data:`PAPER_SPREAD`; read only where
                              both arms' mean effects reach :data:`MARGIN`);
    ``{rule}/{sub}/effect``   the pretrained models' mean ablation effect is larger (the paper's
                              difference where it reports both, else :data:`MARGIN`);
    ``{rule}/{sub}/specific`` the pretrained models' subnetworks are more specific: lower accuracy
                              on the other subroutine's problems (scratch minus pretrained).
    """
    from modlib.structural_compositionality.findings import CEILING, measurable, degenerate, pct

    out = {}
    paper = paper_effects()
    pretrained_ok = {}
    if "language" in metrics:
        m = metrics["language"]
        pretrained_ok["sv-plural"] = bool(m["probe"] >= 0.9)
        out["language/pretraining"] = stats.Claim(
            "language/pretraining", pretrained_ok["sv-plural"],
            f"Masked-language modelling on {m['sentences']:,} generated sentences ({len(m['templates'])} "
            f"templates): the loss falls from {m['losses'][0]:.2f} to {m['final_loss']:.2f} (mean of the "
            f"last 100 steps); the agreement probe prefers the agreeing verb in {m['probe']:.0%} of "
            f"sentences (untrained: {m['probe_untrained']:.0%}).")
    if "vision" in metrics:
        m = metrics["vision"]
        pre, raw = m["probe"], m["probe_untrained"]
        learnt = bool(m["final_loss"] < 0.5 * m["chance_loss"])
        features = all(pre[k] - raw[k] >= 0.05 for k in pre)
        pretrained_ok["inside-contact"] = learnt and features
        out["vision/pretraining"] = stats.Claim(
            "vision/pretraining", learnt,
            f"SimCLR on {m['panels']:,} unlabelled panels: the contrastive loss falls from "
            f"{m['losses'][0]:.2f} to {m['final_loss']:.2f} (a guess: {m['chance_loss']:.2f}).")
        out["vision/features"] = stats.Claim(
            "vision/features", features,
            "A linear probe on the ResNet's pooled features tells "
            + " and ".join(f"{k} ({pre[k]:.2f} after SimCLR, {raw[k]:.2f} untrained)" for k in pre)
            + " apart on single panels (chance 0.5).")
    for rule in dict.fromkeys(df["rule"]):
        r = df[df["rule"] == rule].drop_duplicates(["init", "seed"])
        parts, ok = [], True
        for init in ("scratch", "pretrained"):
            g = r[r["init"] == init]
            ok &= bool(g["searched"].all() and (g["task"] >= base_gate).all() and len(g) > 0)
            arm = "from scratch" if init == "scratch" else init
            parts.append(f"{mean_pm(g['task'])} {arm} ({int(g['searched'].sum())} of {len(g)} searched)")
        out[f"{rule}/base"] = stats.Claim(f"{rule}/base", ok, f"{rule}: the base models score " + " and ".join(parts)
                                          + " on the task's test set.")
        trained = ok and pretrained_ok.get(rule, True)
        for sub in dict.fromkeys(df[df["rule"] == rule]["subroutine"]):
            rows = df[(df["rule"] == rule) & (df["subroutine"] == sub)]
            s, p = rows[rows["init"] == "scratch"], rows[rows["init"] == "pretrained"]
            es, ep = s["effect"].dropna(), p["effect"].dropna()
            masks_ok = not degenerate(rows["kept"].dropna())
            gap = paper.get((rule, sub, "pretrained"), np.nan) - paper.get((rule, sub, "scratch"), np.nan)
            paper_gap = round(float(gap), 2) if np.isfinite(gap) and gap >= CLEAR else MARGIN  # (the registry's size)

            def describe(g, e, init):
                if e.empty:
                    return f"{init}: none of {len(g)} base models reached the gate, none searched"
                searched = g[g["searched"]]
                note = "" if len(searched) == len(g) else f" ({len(searched)} searched)"
                missed = int((searched["effect"].notna() & ~searched["passed_gate"]).sum())
                over = (f"; over all {len(e)}, the {missed} whose mask missed the gate included"
                        if missed else "")  # the effect's other statements average those that passed it
                return (f"{init}: {int(g['modular'].sum())} of {len(g)} base models modular{note} "
                        f"({int(g['both_tests'].sum())} with chapter 5's subnetwork test too), "
                        f"{pct(searched['kept'])} of the masked weights kept (mean ± sd), ablated "
                        f"{mean_pm(searched['target'])} on {sub} problems and {mean_pm(searched['other'])} on the "
                        f"other's, effect "
                        f"{mean_pm(e)} (range {number(e.min(), sign=True)} to {number(e.max(), sign=True)}{over})")

            name = f"{rule}/{sub}"
            ratio = density_ratio(s[s["searched"]], p[p["searched"]])
            apart = _apart(ratio, s, p) if ratio > DENSITY_RATIO else ""  # then no comparison is decided
            v = _decide(f"{name}/consistency", stats.unpaired(p["modular"].astype(float), s["modular"].astype(float),
                                                             unit="base model", shares=True, units=_units(s, p)),
                        trained=trained, controls=masks_ok, reason=apart)
            out[f"{name}/consistency"] = claims.statement(
                v,
                f"{rule}, {sub} mask. {describe(s, es, 'Scratch')}. {describe(p, ep, 'Pretrained')}. "
                f"Share of modular base models, pretrained minus scratch:")
            # the effect, its spread and the subnetwork alone: base models whose masks passed the gate
            s, p = s[s["passed_gate"]], p[p["passed_gate"]]
            es, ep = s["effect"].dropna(), p["effect"].dropna()
            if len(ep) > 1 and len(es) > 1:
                units = _units(s, p)
                # removal costs nothing in either arm: no effect or spread to compare
                readable = not all((arm["target"] >= CEILING).all() for arm in (s, p))
                no_effect = _no_effect(es, ep) if readable else ""  # a spread of no effect says nothing
                consistent = readable and not no_effect
                _, p_value = permutation_test(spread(es), spread(ep))
                v = _decide(f"{name}/spread", stats.unpaired(spread(es), spread(ep), unit="base model", units=units),
                            trained=trained, controls=masks_ok, measurable=readable, reason=apart or no_effect)
                exact = f"; one-sided exact permutation p = {p_value:.2f}" if consistent else ""
                out[f"{name}/spread"] = claims.statement(
                    v,
                    f"{rule}, {sub}: over the {len(es)} and {len(ep)} base models whose masks passed the gate, the ablation "
                    f"effect's mean absolute deviation from its median is "
                    f"{spread(es).mean():.2f} from scratch and {spread(ep).mean():.2f} pretrained (Brown-Forsythe"
                    f"{exact}; mean effect {number(es.mean(), sign=True)} from scratch and {number(ep.mean(), sign=True)} pretrained, and a spread "
                    f"is read only where both reach {MARGIN}); scratch minus pretrained:")
                effect = stats.unpaired(ep, es, unit="base model", units=units)
                v = _decide(f"{name}/effect", effect,
                            trained=trained, controls=masks_ok, measurable=readable, reason=apart)
                # undecided by density, the verdict gives no interval: the statement does
                shown = effect.text(percent=False) if apart else number(ep.mean() - es.mean(), sign=True)
                out[f"{name}/effect"] = claims.statement(
                    v,
                    f"{rule}, {sub}: pretrained minus scratch mean ablation effect {shown} "
                    f"({'the paper' if paper_gap != MARGIN else 'the stated margin'} {paper_gap:+.2f}; "
                    f"{len(es)} and {len(ep)} base models whose masks passed the gate, keeping {pct(s['kept'])} of "
                    f"the masked weights from scratch and {pct(p['kept'])} pretrained):")
                ss, sp = s["sub_other"].dropna(), p["sub_other"].dropna()
                # specific beyond a random subnetwork of the same per-layer counts (issue 50; amended)
                random_ok, control = random_control(f"{name}/specific", s, p)
                v = _decide(f"{name}/specific", stats.unpaired(ss, sp, unit="base model", units=units),
                            trained=trained, controls=masks_ok and random_ok, reason=apart,
                            as_registered={"controls": masks_ok},
                            measurable=measurable(ss, sp))  # both at chance: nothing to be more specific than
                out[f"{name}/specific"] = claims.statement(
                    v,
                    f"{rule}, {sub}: the subnetwork alone gets {mean_pm(ss)} on the other subroutine's "
                    f"problems from scratch and {mean_pm(sp)} pretrained (on its own, {mean_pm(s['sub_target'])} "
                    f"and {mean_pm(p['sub_target'])}; kept {pct(s['kept'])} and {pct(p['kept'])}); {control}; "
                    f"scratch minus pretrained:")
    return out


def both_words(first: str, second: str, names: tuple[str, str] = ("subject", "verb"), why: bool = True) -> str:
    """The verdicts of two registered claims, by key, as prose names them
    (:func:`modlib.claims.words`, with the reason unless ``why`` is false): once, "subject and verb
    both ✓ reproduced" ("both hold"), where their words are the same; else each after its name, "subject ✓
    reproduced; verb ? cannot be decided here (...)"."""
    said = [claims.words(key, why=why) for key in (first, second)]
    if said[0] == said[1]:  # a hypothesis's words made plural: "both hold"
        for one, two in ((stats.DOES_NOT_HOLD, "do not hold"), (stats.HOLDS, "hold")):
            if said[0].startswith(one):
                return f"{names[0]} and {names[1]} both {two}{said[0].removeprefix(one)}"
        return f"{names[0]} and {names[1]} both {said[0]}"
    return "; ".join(f"{name} {words}" for name, words in zip(names, said))


RESTS_ON_ONE = "*"  # beside a ✓ of the verdict table that needs pretrained base model 0 (:func:`held_out`)


def table_legend(authors: bool = False, rests_on_one: bool = False, found: dict[str, Finding] | None = None) -> str:
    """The lines under the verdict table (:func:`verdict_table`) that say what its marks mean, from
    :data:`modlib.stats.MARKS`, where the rule decides a comparison, and which columns average the
    mask seeds (the search's) and which read one mask per base model (seed 0: the comparable
    density's and the authors' selection's, from the masks stored for every configuration tried);
    ``authors``: the table has a column of the authors' selection, whose reading it says too;
    ``rests_on_one``: a mark carries :data:`RESTS_ON_ONE`, which it explains; ``found`` (the claims
    the table marks): how many were written down after their results were seen
    (:func:`modlib.claims.post_hoc`), since a mark in a table cell cannot carry that tag."""
    marks = " · ".join(f"{stats.MARKS[o]} {o}" for o in (stats.REPRODUCED, stats.NOT_REPRODUCED, stats.UNDECIDED))
    return (f"{marks} · – not made{_post_hoc_words(found)}. A comparison is decided only at comparable density (the "
            f"arms' median kept shares within {DENSITY_RATIO:.0f}× of each other). The \"searched\" columns average "
            "each base model's mask seeds; the \"comparable\"" + (f" and \"{AUTHORS}\"" if authors else "") +
            " columns read its mask of seed 0 alone, the only one stored for every configuration tried." +
            (f" \"{AUTHORS}\": the masks the authors' code would choose (the best-scoring ones, some still "
             "shrinking when training stopped), a sensitivity check of the book's choice of masks." if authors else "") +
            (f"\n\n\\{RESTS_ON_ONE} A ✓ so marked rests on one base model: the comparable masks' penalty weight "
             "was chosen on pretrained base model 0's sweep, and without that base model the interval reaches 0."
             if rests_on_one else ""))


def _post_hoc_words(found: dict[str, Finding] | None) -> str:
    """For :func:`table_legend`: " (all post hoc: ...)", or " (3 of 34 post hoc: ...)", where claims
    the table marks (``found``) were written down after their results were seen; "" where none was."""
    told = [bool(claims.post_hoc(f.verdict.claim)) for f in (found or {}).values() if getattr(f, "verdict", None)]
    if not any(told):
        return ""
    which = "all" if all(told) else f"{sum(told)} of {len(told)}"
    return f" ({which} {claims.POST_HOC}: written down after the results were seen)"


AUTHORS = "authors' selection"  # the verdict table's column of the authors' selection of masks
COMMON = "common share, λ searched"  # its rows at the common share (lam_density)


# the columns of :func:`verdict_table`: claim key -> heading
VERDICTS = {"consistency": "more modular", "spread": "smaller spread", "effect": "larger effect",
            "specific": "more specific"}

# a claim's statement in plain words, for the tables that list claims (:func:`claim_words`)
CLAIM_WORDS = {"consistency": "more pretrained base models are modular",
               "spread": "the pretrained effects vary less",
               "effect": "the pretrained ablation effect is larger",
               "specific": "the pretrained subnetwork alone is more specific"}
WHERE = (("-argmax", False, ", with the authors' choice of masks"), ("matched_", True, ", at comparable density"),
         ("lam_", True, ", at the common share (λ searched)"),
         ("own_", True, ", at the common share, a pretraining run per base model"),
         ("shared_", True, ", at the common share, against a shared random start"))


def claim_words(name: str) -> str:
    """A claim of the chapter, by its registered name (``"inside-contact/contact/matched_effect"``),
    in plain words as a reader's table lists it, as chapter 5 words its own
    (:func:`modlib.structural_compositionality.findings.claim_words`): "contact subnetwork
    (Inside-Contact): the pretrained ablation effect is larger, at comparable density"; a name it
    does not know, unchanged."""
    return sc_findings.claim_words(name, CLAIM_WORDS, WHERE, ", at the search's density")


def verdict_table(df, found: dict[str, Finding], matched=None, argmax=None, lam=None) -> list[dict[str, str]]:
    """Every verdict of chapter 6 once: one row per (rule, subroutine) of ``df``
    (:func:`pretraining_effects`) at the search's density and, given :func:`matched_density`'s
    table ``matched``, one more at comparable density, each with both arms' kept shares (median and
    range over the base models with a mask), their counts of modular base models, and the mark of
    each claim of ``found`` (:func:`pretraining`) in :data:`VERDICTS` (``matched_`` ones in the
    comparable rows; "–" where the claim was not made) and, given :func:`authors_selection`'s table
    ``argmax``, one more under the authors' selection (:data:`AUTHORS`) where it changed a choice (its
    ``effect-argmax`` claim in the "larger effect" column). A ✓ for the larger effect at comparable
    density whose interval reaches 0 without pretrained base model 0 (:func:`held_out`) carries
    :data:`RESTS_ON_ONE`."""
    tables = [("searched", df, "")] + ([("comparable", matched, "matched_")] if matched is not None else [])
    if lam is not None and not lam.empty:
        tables.append((COMMON, lam, LAM))
    if argmax is not None and not argmax.empty:
        tables.append((AUTHORS, argmax[argmax["passed_gate"]], "argmax"))
    # the larger effects at comparable density whose interval reaches 0 without base model 0
    one = set() if matched is None else {k for k, e in held_out(matched).items() if e.low <= 0}
    rows = []
    for (rule, sub), _ in df.groupby(["rule", "subroutine"], sort=False):
        for density, table, prefix in tables:
            if prefix == "argmax" and found.get(f"{rule}/{sub}/effect-argmax") is None:
                continue  # the authors' selection chose as the book did
            g = table[(table["rule"] == rule) & (table["subroutine"] == sub)]
            row = {"rule": rule, "subroutine": sub,
                   "density": density}
            for init in ("scratch", "pretrained"):
                a = g[g["init"] == init]
                kept = 100 * a["kept"].dropna()
                row[f"kept, {init}"] = (f"{kept.median():.2f} % ({kept.min():.2f}–{kept.max():.2f})" if len(kept)
                                        else "no mask")
                if "modular" in a:  # the search's masks: every base model
                    row[f"modular, {init}"] = f"{int(a['modular'].sum())} of {len(a)}"
                else:  # the matched masks: the base models that have one
                    row[f"modular, {init}"] = f"{int((a['effect'] >= MARGIN).sum())} of {int(a['kept'].notna().sum())}"
            kept = {init: g[g["init"] == init]["kept"].dropna() for init in ("scratch", "pretrained")}
            if density == "comparable" and all(len(k) for k in kept.values()) \
                    and _fold(kept["scratch"].median(), kept["pretrained"].median()) > DENSITY_RATIO:
                ratio = _fold(kept["scratch"].median(), kept["pretrained"].median())
                row["kept, pretrained"] += f"; not comparable: the arms' medians {ratio:.0f}× apart (over {DENSITY_RATIO:.0f}×)"
            for key, heading in VERDICTS.items():
                f = found.get(f"{rule}/{sub}/{key}-argmax" if prefix == "argmax" else f"{rule}/{sub}/{prefix}{key}")
                row[heading] = f.mark if f is not None else "–"
                if prefix == "matched_" and key == "effect" and (rule, sub) in one \
                        and f is not None and f.outcome == stats.REPRODUCED:
                    row[heading] += RESTS_ON_ONE
            rows.append(row)
    return rows
