"""What chapter 3's stored results show (notebooks/resists_at_scale.ipynb, MNIST pairs and SCAN): the
page's statements (:func:`resists_at_scale`), computed in one place so that the page's prose and
the claims tests (``tests/test_claims.py``) say the same thing at every profile.
"""

from __future__ import annotations

import numpy as np

from modlib.stats import CLEAR, Finding, _difference, _ms


# the windows in which training speed is compared: MNIST's first quarter, and the steps in which the
# paper's text sees setting A ahead on SCAN ("steps 10-25")
EARLY = {"mnist": (1, 50), "scan": (10, 25)}


def early_train_accuracy(runs, name: str, curve: str = "acc_train") -> np.ndarray:
    """Mean accuracy per seed on the ``curve`` (training-distribution data by default) over the
    experiment's :data:`EARLY` window of steps: ``[S]``. ``name``: a result of chapter 3, e.g.
    ``"mnist-A"``."""
    a = runs.arrays(name)
    low, high = EARLY[name.split("-")[0]]
    window = (a["eval_steps"] >= low) & (a["eval_steps"] <= high)
    return a[curve][:, window].mean(1)


def _paired_excess(x: np.ndarray, y: np.ndarray, label: str) -> tuple[bool, str]:
    """Whether ``x`` exceeds ``y`` seed for seed with a paired interval clear of 0, and the text
    ``"; <label> <difference>"``; with one seed, ``(True, "")`` (no interval to ask for)."""
    if len(x) < 2:
        return True, ""
    text, clear, sign = _difference(x, y)
    return clear and sign > 0, f"; {label} {text}"


def resists_at_scale(runs) -> dict[str, Finding]:
    """Chapter 3's statements about its stored results (:class:`modlib.resists_at_scale.ResistRuns`),
    keyed by name; an experiment not stored is left out. Settings A and B share each seed's initial
    weights, so differences are paired over seeds (:func:`paired_difference`; with 5 seeds its
    interval clears 0 whenever all seeds agree, so a *clear* effect also needs a size of
    :data:`CLEAR`).

    ``<exp>-early`` (``mnist``, ``scan``): setting A's training accuracy over the :data:`EARLY`
    window is higher than B's (interval clear of 0); ``scan-early-long``: the same on training
    commands of more than one word (no size asked: it is reported either way, and holds if A is
    ahead); ``<exp>-gap``: A's final train-test gap exceeds B's in every seed, clearly;
    ``<exp>-b-agrees``: setting B's final train and test accuracies differ by at most 0.05 on
    average; ``scan-test``: A's final test accuracy is below a quarter of its training accuracy in
    every seed; ``scan-unseen``: on test commands that B never trained on, B's final accuracy is
    clearly above A's; ``mnist-swap``: replacing the right digit costs A clearly more accuracy than
    B, and at least half of A's train-test gap.
    """
    out = {}
    for experiment, label in (("mnist", "MNIST pairs"), ("scan", "SCAN")):
        if f"{experiment}-A" not in runs.rows or f"{experiment}-B" not in runs.rows:
            continue
        a, b = runs.arrays(f"{experiment}-A"), runs.arrays(f"{experiment}-B")
        seeds = len(a["final_train"])
        low, high = EARLY[experiment]
        if seeds > 1 and a["eval_steps"][-1] >= high:
            curves = [("early", "acc_train", "")]
            if experiment == "scan":
                curves.append(("early-long", "acc_train_long", " on training commands of more than one word"))
            for key, curve, what in curves:
                early = {s: early_train_accuracy(runs, f"{experiment}-{s}", curve) for s in "AB"}
                text, clear, sign = _difference(early["A"], early["B"])
                out[f"{experiment}-{key}"] = Finding(
                    f"{experiment}-{key}", clear and sign > 0,
                    f"{label}, steps {low}–{high}: mean training accuracy{what} {_ms(early['A'])} in setting A "
                    f"and {_ms(early['B'])} in B; A minus B {text}.")
        gap = {s: r["final_train"] - r["final_test"] for s, r in (("A", a), ("B", b))}
        paired, text = _paired_excess(gap["A"], gap["B"], "A minus B")
        out[f"{experiment}-gap"] = Finding(
            f"{experiment}-gap",
            bool(paired and gap["A"].min() > gap["B"].max() and gap["A"].mean() - gap["B"].mean() >= CLEAR),
            f"{label}, after training: setting A {_ms(a['final_train'])} on training-distribution data and "
            f"{_ms(a['final_test'])} on test data, setting B {_ms(b['final_train'])} and "
            f"{_ms(b['final_test'])}; the train-test gap is {_ms(gap['A'])} in A and {_ms(gap['B'])} in B"
            f"{text}.")
        out[f"{experiment}-b-agrees"] = Finding(
            f"{experiment}-b-agrees", bool(abs(gap["B"].mean()) <= 0.05),
            f"{label}, setting B: training and test accuracy differ by {_ms(gap['B'])}.")
        if experiment == "scan":
            out["scan-test"] = Finding(
                "scan-test", bool((a["final_test"] < a["final_train"] / 4).all()),
                f"SCAN setting A: test accuracy {_ms(a['final_test'])} against {_ms(a['final_train'])} on "
                f"training commands.")
            paired, text = _paired_excess(b["final_unseen"], a["final_unseen"], "B minus A")
            out["scan-unseen"] = Finding(
                "scan-unseen", bool(paired and b["final_unseen"].mean() - a["final_unseen"].mean() >= CLEAR),
                f"SCAN, test commands that setting B never trained on: accuracy {_ms(b['final_unseen'])} in "
                f"setting B and {_ms(a['final_unseen'])} in A{text}.")
        if experiment == "mnist":
            cost = {s: r["final_train"] - r["swapped"] for s, r in (("A", a), ("B", b))}
            paired, text = _paired_excess(cost["A"], cost["B"], "A minus B")
            out["mnist-swap"] = Finding(
                "mnist-swap", bool(paired and cost["A"].mean() - cost["B"].mean() >= CLEAR
                                   and cost["A"].mean() >= gap["A"].mean() / 2),
                f"Replacing the right digit of training-distribution pairs by a random one lowers accuracy "
                f"by {_ms(cost['A'])} in setting A and {_ms(cost['B'])} in B{text}; A's train-test gap "
                f"is {_ms(gap['A'])}.")
    return out
