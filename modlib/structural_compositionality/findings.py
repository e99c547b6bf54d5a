"""What chapter 5's stored results show (notebooks/structural_compositionality.ipynb): the table of
every subnetwork found (:func:`structure_table`) and the page's statements (:func:`structural`),
beside the paper's numbers (:data:`LEPORI`), computed in one place so that the page's prose and the
claims tests (``tests/test_claims.py``) say the same thing at every profile.
"""

from __future__ import annotations

import numpy as np

from modlib.stats import CLEAR, Finding, _ms, paired_difference


# Lepori et al. (2023), means of 9 runs: (subnetwork target, other, ablated target, other) per
# (rule, subroutine) of their ResNet-50 and BERT-small (scratch) base models
LEPORI = {("inside-contact", "inside"): (0.95, 0.23, 0.71, 0.56),
          ("inside-contact", "contact"): (0.96, 0.37, 0.50, 0.80),
          ("number-contact", "contact"): (1.00, 0.45, 0.55, 0.87),
          ("inside-number", "inside"): (1.00, 0.40, 0.39, 0.57),
          ("sv-plural", "subject"): (1.00, 0.45, 0.62, 0.93)}
GATE_TARGET = 0.9  # the paper's: a subnetwork must reach this on its target (structural_compositionality.GATE)
LOWER = 0.1  # "clearly lower": the subnetwork's other-subroutine accuracy this far below its target's


def structure_table(runs):
    """One row per (rule, base model, subroutine, mask seed) of chapter 5's stored results
    (:class:`modlib.structural_compositionality.StructureRuns`): the subnetwork's accuracy on its own
    mask-training distribution (``own``), on the target and the other subroutine's ablation test set
    (``sub_*``), the ablated model's (``abl_*``), the re-initialising ablation's (``reinit_*``), a
    random subnetwork's of the same size (``random_*``), and the kept fraction."""
    import pandas as pd

    out = []
    for r in runs.rows.values():
        m = r.metrics
        for sub, found in (m.get("subroutines") or {}).items():
            for run in found["runs"]:
                row = {"rule": m["rule"], "model": m["seed"], "trained": m["trained"], "subroutine": sub,
                       "mask_seed": run["seed"], "passed_gate": found["passed_gate"], "own": run["own"],
                       "kept": run["kept"]}
                for mode, label in (("hard", "sub"), ("complement", "abl"), ("reinit", "reinit"),
                                    ("random", "random")):
                    row[f"{label}_target"], row[f"{label}_other"] = run[mode]
                out.append(row)
    return pd.DataFrame(out)


def _by_model(rows, column: str) -> np.ndarray:
    """Per base model, the mean of ``column`` over its mask seeds: ``[models]``."""
    return rows.groupby("model")[column].mean().to_numpy()


def _clear_excess(rows, high: str, low: str, size: float) -> tuple[bool, str]:
    """Whether ``high`` exceeds ``low`` by at least ``size`` on average over runs, with the 95%
    interval over base models (mask seeds averaged within each) clear of 0, and the text."""
    a, b = _by_model(rows, high), _by_model(rows, low)
    mean = float((rows[high] - rows[low]).mean())
    if len(a) < 2:
        return bool(mean >= size), f"{mean:+.2f}"
    _, lo, hi = paired_difference(a, b)
    return bool(lo > 0 and mean >= size), f"{mean:+.2f} (95% interval over base models {lo:+.2f} to {hi:+.2f})"


def structural(runs) -> dict[str, Finding]:
    """Chapter 5's statements, keyed ``"{rule}/{subroutine}/{what}"`` (and ``"{rule}/base"``):

    ``subnetwork``  the subnetwork reaches 0.9 on its target subroutine's test set (mean over base
                    models and mask seeds) and is lower on the other by :data:`LOWER` on average,
                    with the interval over base models clear of 0;
    ``ablation``    removing the subnetwork hurts the target subroutine more than the other: the
                    ablated model's other-minus-target accuracy is :data:`CLEAR` on average, with the
                    interval over base models clear of 0 (with 3 base models: in every one);
    ``reinit``      the same with the removed weights re-initialised instead of zeroed;
    ``random``      a random subnetwork of the same size per layer is clearly worse on the target
                    than the found one (by :data:`LOWER`);
    ``untrained``   the search in an untrained network does *not* show the pattern (its subnetwork
                    misses 0.9 on the target, or its ablation effect is under :data:`CLEAR`).
    """
    table = structure_table(runs)
    out = {}
    if table.empty:
        return out
    for rule in dict.fromkeys(table["rule"]):
        trained = [r for r in runs.rows.values() if r.metrics["rule"] == rule and r.metrics["trained"]]
        passed = [r.metrics["seed"] for r in trained if r.metrics["searched"]]
        task = np.array([r.metrics["base"]["task"] for r in trained])
        out[f"{rule}/base"] = Finding(
            f"{rule}/base", len(passed) == len(trained),
            f"{rule}: base models reach {_ms(task)} on the task's test set; {len(passed)} of "
            f"{len(trained)} pass {runs.settings.base_gate} and are searched.")
        for sub in dict.fromkeys(table[table["rule"] == rule]["subroutine"]):
            rows = table[(table["rule"] == rule) & (table["subroutine"] == sub)]
            t, u = rows[rows["trained"]], rows[~rows["trained"]]
            name = f"{rule}/{sub}"
            if not t.empty:
                lower, text = _clear_excess(t, "sub_target", "sub_other", LOWER)
                out[f"{name}/subnetwork"] = Finding(
                    f"{name}/subnetwork", bool(t["sub_target"].mean() >= GATE_TARGET and lower),
                    f"{rule}, {sub} subnetwork ({len(t)} runs, {_ms(t['kept'])} of the masked weights kept): "
                    f"{_ms(t['sub_target'])} on {sub} problems, {_ms(t['sub_other'])} on the other "
                    f"subroutine's; target minus other {text}.")
                for key, prefix, what in (("ablation", "abl", "Removing it (zeroed)"),
                                          ("reinit", "reinit", "Removing it (re-initialised)")):
                    holds, text = _clear_excess(t, f"{prefix}_other", f"{prefix}_target", CLEAR)
                    out[f"{name}/{key}"] = Finding(
                        f"{name}/{key}", holds,
                        f"{rule}, {sub}: {what} leaves {_ms(t[f'{prefix}_target'])} on {sub} problems and "
                        f"{_ms(t[f'{prefix}_other'])} on the other subroutine's; other minus target {text}.")
                holds, text = _clear_excess(t, "sub_target", "random_target", LOWER)
                out[f"{name}/random"] = Finding(
                    f"{name}/random", holds,
                    f"{rule}, {sub}: a random subnetwork of the same size per layer gets "
                    f"{_ms(t['random_target'])} on {sub} problems against the found one's "
                    f"{_ms(t['sub_target'])}; difference {text}.")
            if not u.empty:
                effect = float((u["abl_other"] - u["abl_target"]).mean())
                shows = u["sub_target"].mean() >= GATE_TARGET and effect >= CLEAR
                verdict = "both tests pass, as they should not" if shows else "no subnetwork passes both tests"
                out[f"{name}/untrained"] = Finding(
                    f"{name}/untrained", bool(not shows),
                    f"{rule}, {sub}, untrained network ({len(u)} runs, {_ms(u['kept'])} of the masked "
                    f"weights kept): {verdict}; the subnetwork gets {_ms(u['sub_target'])} on {sub} problems "
                    f"and {_ms(u['sub_other'])} on the other's; ablated, {_ms(u['abl_target'])} and "
                    f"{_ms(u['abl_other'])} (other minus target {effect:+.2f}).")
    return out
