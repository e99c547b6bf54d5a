"""What chapter 6's stored results show (notebooks/pretraining_consistency.ipynb): the ablation effect
per base model (:func:`pretraining_effects`), its consistency per initialisation
(:func:`pretraining_consistency`) and the page's statements (:func:`pretraining`), computed in one
place so that the page's prose and the claims tests (``tests/test_claims.py``) say the same thing
at every profile. The paper's numbers for base models from scratch and the bar a subnetwork must
clear (:data:`LOWER`) are chapter 5's, imported from :mod:`modlib.structural_compositionality.findings`.
"""

from __future__ import annotations

import numpy as np

from modlib.stats import Finding, _ms, permutation_test, spread, unpaired_difference
from modlib.structural_compositionality.findings import LEPORI, LOWER  # chapter 5's, reused by name


# Lepori et al. (2023), means of 9 runs (subnetwork target, other, ablated target, other) of BERT-small
# on SV plural fine-tuned from its MLM weights (from scratch and the ResNet-50s: chapter 5's LEPORI)
LEPORI_PRETRAINED = {("sv-plural", "subject"): (1.00, 0.27, 0.27, 0.74),
                     ("sv-plural", "verb"): (1.00, 0.31, 0.40, 1.00)}


def paper_effects() -> dict[tuple[str, str, str], float]:
    """The paper's mean ablation effect (ablated other minus target) per (rule, subroutine, init),
    where it reports one: ``{("sv-plural", "subject", "pretrained"): 0.47, ...}``."""
    out = {}
    for init, table in (("scratch", LEPORI), ("pretrained", LEPORI_PRETRAINED)):
        for (rule, sub), (_, _, target, other) in table.items():
            out[(rule, sub, init)] = round(other - target, 2)
    return out
MARGIN = 0.1  # the modular pattern: the ablated model keeps the other subroutine this much better


def pretraining_effects(runs):
    """One row per (base model, subroutine) of chapter 6's stored results
    (:class:`modlib.pretraining_consistency.PretrainingRuns`): rule, init, seed, subroutine, the
    base model's task accuracy, whether it was searched and its subnetwork passed the gate, the
    subnetwork's (``sub_*``) and the ablated model's accuracy on the target and the other
    subroutine (means over mask seeds), ``effect`` (ablated other minus target) and ``modular``
    (passed the gate and effect at least :data:`MARGIN`), and ``both_tests`` (modular, and the
    subnetwork passes chapter 5's first test too: :data:`LOWER` below its target on the other)."""
    import pandas as pd

    out = []
    for name, r in runs.rows.items():
        rule, init, seed = name.rsplit("-", 2)
        m = r.metrics
        for sub in m["subroutines"] if m["searched"] else _subroutine_names(rule):
            row = {"rule": rule, "init": init, "seed": int(seed), "subroutine": sub,
                   "task": m["base"]["task"], "searched": m["searched"], "passed_gate": False,
                   "sub_target": np.nan, "sub_other": np.nan, "target": np.nan, "other": np.nan}
            if m["searched"]:
                found = m["subroutines"][sub]
                hard = np.array([run["hard"] for run in found["runs"]])  # [mask seeds, 2]
                ablated = np.array([run["complement"] for run in found["runs"]])
                row.update(passed_gate=bool(found["passed_gate"]), sub_target=hard[:, 0].mean(),
                           sub_other=hard[:, 1].mean(), target=ablated[:, 0].mean(), other=ablated[:, 1].mean())
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
    effect over the searched ones."""
    import pandas as pd

    rows = {}
    for key, g in df.groupby(["rule", "subroutine", "init"], sort=False):
        e = g["effect"].dropna()
        rows[key] = {"models": len(g), "modular": int(g["modular"].sum()), "mean effect": e.mean(),
                     "sd effect": e.std(ddof=0) if len(e) > 1 else np.nan,
                     "spread (MAD)": spread(e).mean() if len(e) > 1 else np.nan,
                     "min effect": e.min(), "max effect": e.max()}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis(["rule", "subroutine", "init"])


def pretraining(runs) -> dict[str, Finding]:
    """Chapter 6's statements, keyed by name:

    ``language/pretraining``  the MLM learnt agreement: its probe reaches 0.9 (untrained: about 0.5);
    ``vision/pretraining``    SimCLR's loss ends below a guess's;
    ``vision/features``       the SimCLR ResNet's pooled features tell inside and contact apart
                              (linear probe) better than the untrained ResNet's, by 0.05 each;
    ``{rule}/base``           base models from both inits reach the task (all searched);
    ``{rule}/{sub}/consistency``  pretrained base models show the modular pattern, and in at
                              least as many base models as scratch ones;
    ``{rule}/{sub}/spread``   the pretrained models' ablation effect varies less: their mean absolute
                              deviation from the median (the Brown-Forsythe spread, robust with 5
                              values) is smaller, one-sided exact permutation p below 0.05;
    ``{rule}/{sub}/effect``   the pretrained models' mean ablation effect is larger, with the 95%
                              bootstrap interval of the difference clear of 0;
    ``{rule}/{sub}/specific`` the pretrained models' subnetworks are more specific: their accuracy
                              on the other subroutine's problems is lower, the 95% bootstrap
                              interval of the difference clear of 0.
    """
    out = {}
    df = pretraining_effects(runs)
    if "language" in runs.pretraining:
        m = runs.pretraining["language"].metrics
        out["language/pretraining"] = Finding(
            "language/pretraining", m["probe"] >= 0.9,
            f"Masked-language modelling on {m['sentences']:,} generated sentences ({len(m['templates'])} "
            f"templates): the loss falls from {m['losses'][0]:.2f} to {m['final_loss']:.2f} (mean of the "
            f"last 100 steps); the agreement probe prefers the agreeing verb in {m['probe']:.0%} of "
            f"sentences (untrained: {m['probe_untrained']:.0%}).")
    if "vision" in runs.pretraining:
        m = runs.pretraining["vision"].metrics
        out["vision/pretraining"] = Finding(
            "vision/pretraining", m["final_loss"] < m["chance_loss"],
            f"SimCLR on {m['panels']:,} unlabelled panels: the contrastive loss falls from "
            f"{m['losses'][0]:.2f} to {m['final_loss']:.2f} (a guess: {m['chance_loss']:.2f}).")
        pre, raw = m["probe"], m["probe_untrained"]
        out["vision/features"] = Finding(
            "vision/features", all(pre[k] - raw[k] >= 0.05 for k in pre),
            "A linear probe on the ResNet's pooled features tells "
            + " and ".join(f"{k} ({pre[k]:.2f} after SimCLR, {raw[k]:.2f} untrained)" for k in pre)
            + " apart on single panels (chance 0.5).")
    for rule in dict.fromkeys(df["rule"]):
        r = df[df["rule"] == rule].drop_duplicates(["init", "seed"])
        parts, ok = [], True
        for init in ("scratch", "pretrained"):
            g = r[r["init"] == init]
            ok &= bool(g["searched"].all())
            parts.append(f"{init}, {_ms(g['task'])} ({int(g['searched'].sum())} of {len(g)} searched)")
        out[f"{rule}/base"] = Finding(f"{rule}/base", ok, f"{rule}: base models reach " + "; ".join(parts) + ".")
        for sub in dict.fromkeys(df[df["rule"] == rule]["subroutine"]):
            rows = df[(df["rule"] == rule) & (df["subroutine"] == sub)]
            s, p = rows[rows["init"] == "scratch"], rows[rows["init"] == "pretrained"]
            es, ep = s["effect"].dropna(), p["effect"].dropna()

            def describe(g, e, init):
                if e.empty:
                    return f"{init}: none of {len(g)} base models reached the gate, none searched"
                searched = g[g["searched"]]
                note = "" if len(searched) == len(g) else f" ({len(searched)} searched)"
                return (f"{init}: {int(g['modular'].sum())} of {len(g)} base models modular{note} "
                        f"({int(g['both_tests'].sum())} with chapter 5's subnetwork test too), ablated "
                        f"{_ms(searched['target'])} on {sub} problems and {_ms(searched['other'])} on the "
                        f"other's, effect "
                        f"{_ms(e)} (range {e.min():+.2f} to {e.max():+.2f})")

            name = f"{rule}/{sub}"
            out[f"{name}/consistency"] = Finding(
                f"{name}/consistency", bool(p["modular"].sum() >= max(1, s["modular"].sum())),
                f"{rule}, {sub} mask. {describe(s, es, 'Scratch')}. {describe(p, ep, 'Pretrained')}.")
            if len(ep) > 1 and len(es) > 1:
                d, p_value = permutation_test(spread(es), spread(ep))
                out[f"{name}/spread"] = Finding(
                    f"{name}/spread", bool(p_value < 0.05),
                    f"{rule}, {sub}: the ablation effect's mean absolute deviation from its median is "
                    f"{spread(es).mean():.2f} from scratch and {spread(ep).mean():.2f} pretrained; "
                    f"scratch minus pretrained {d:+.2f} (Brown-Forsythe, one-sided permutation p = "
                    f"{p_value:.2f}).")
                d, lo, hi = unpaired_difference(ep, es)
                out[f"{name}/effect"] = Finding(
                    f"{name}/effect", bool(lo > 0),
                    f"{rule}, {sub}: pretrained minus scratch mean ablation effect {d:+.2f} "
                    f"(95% bootstrap interval {lo:+.2f} to {hi:+.2f}).")
                ss, sp = s["sub_other"].dropna(), p["sub_other"].dropna()
                d, lo, hi = unpaired_difference(ss, sp)
                out[f"{name}/specific"] = Finding(
                    f"{name}/specific", bool(lo > 0),
                    f"{rule}, {sub}: the subnetwork alone gets {_ms(ss)} on the other subroutine's "
                    f"problems from scratch and {_ms(sp)} pretrained (on its own, {_ms(s['sub_target'])} "
                    f"and {_ms(p['sub_target'])}); scratch minus pretrained {d:+.2f} (95% bootstrap "
                    f"interval {lo:+.2f} to {hi:+.2f}).")
    return out
