"""What chapter 3's stored results show (notebooks/resists_at_scale.ipynb, MNIST pairs and SCAN): the
page's statements (:func:`resists_at_scale`), computed in one place so that the page's prose and
the claims tests (``tests/test_claims.py``) say the same thing at every profile.
"""

from __future__ import annotations

import numpy as np

from modlib.stats import CLEAR, Finding, Verdict, _ms, distinct_units, marked, paired, t_interval


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


# an arm *trained* when every seed's final accuracy on training-distribution data reaches this
TRAINED = 0.9
# accuracy at or below this in both arms over a window: the quantity sits at its floor there
FLOOR = 0.02
# chance accuracy: MNIST pairs' label is the left digit (10 classes); SCAN's exact match of a sequence
CHANCE = {"mnist": 0.1, "scan": 0.0}


def trained(a: dict) -> bool:
    """Whether an arm (one setting's arrays) trained: every seed's final training accuracy is at
    least :data:`TRAINED`."""
    return bool((np.asarray(a["final_train"]) >= TRAINED).all())


def _compare(x: np.ndarray, y: np.ndarray, *, arms: list[dict], label: str, measurable: bool = True,
             paper: float = CLEAR) -> tuple[Verdict, str]:
    """The verdict (:func:`modlib.stats.verdict`) on "``x`` exceeds ``y``" paired over seeds (the
    settings share each seed's initial weights): a t interval of the differences and the sign test;
    the paper reports a direction, not a size, so ``paper`` is :data:`CLEAR`. ``arms`` must all have
    :func:`trained`. Returns the verdict and ``"; <label> <difference> — <mark> <outcome>"``."""
    effect = paired(x, y)
    v = effect.verdict(paper=paper, trained=all(trained(a) for a in arms), measurable=measurable,
                       source="the stated margin of" if paper == CLEAR else "the paper's")
    mark = marked(v, f"final training accuracy below {TRAINED:.0%} in some seed")
    return v, (f"; {label} {effect.text()}" if len(x) > 1 else "") + mark


def resists_at_scale(runs) -> dict[str, Finding]:
    """Chapter 3's statements about its stored results (:class:`modlib.resists_at_scale.ResistRuns`),
    keyed by name; an experiment not stored is left out. Each comparison's ``holds`` is its verdict
    under the book's rule (:data:`modlib.stats.RULE`, :func:`modlib.stats.verdict`) being
    *reproduced*; its text ends with the mark. Settings A and B share each seed's initial weights, so
    differences are paired over seeds (the unit): a t interval and the exact sign test (with five
    seeds, 5 of 5 on one side gives p = 0.0625), and every arm compared must have trained
    (:func:`trained`).

    ``<exp>-early`` (``mnist``, ``scan``): setting A's training accuracy over the :data:`EARLY`
    window is higher than B's; ``scan-early-long``: the same on training commands of more than one
    word (cannot be decided where both arms sit at :data:`FLOOR` over the window);
    ``<exp>-gap``: A's final train-test gap exceeds B's; ``<exp>-b-agrees``: setting B trained and
    the t interval of its train-test gap lies within 0.05 of 0; ``scan-test``: A trained and its
    final test accuracy is below a quarter of its training accuracy in every seed; ``scan-unseen``:
    on test commands that B never trained on, B's final accuracy is above A's; ``mnist-swap``:
    replacing the right digit costs A more accuracy than B, and at least half of A's train-test gap.
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
                floor = max(early["A"].max(), early["B"].max()) <= FLOOR
                v, text = _compare(early["A"], early["B"], arms=[a, b], label="A minus B", measurable=not floor)
                out[f"{experiment}-{key}"] = Finding(
                    f"{experiment}-{key}", v.reproduced,
                    f"{label}, steps {low}–{high}: mean training accuracy{what} {_ms(early['A'])} in setting A "
                    f"and {_ms(early['B'])} in B{text}.")
        gap = {s: r["final_train"] - r["final_test"] for s, r in (("A", a), ("B", b))}
        v, text = _compare(gap["A"], gap["B"], arms=[a, b], label="A minus B")
        out[f"{experiment}-gap"] = Finding(
            f"{experiment}-gap", v.reproduced,
            f"{label}, after training: setting A {_ms(a['final_train'])} on training-distribution data and "
            f"{_ms(a['final_test'])} on test data, setting B {_ms(b['final_train'])} and "
            f"{_ms(b['final_test'])}; the train-test gap is {_ms(gap['A'])} in A and {_ms(gap['B'])} in B"
            f"{text}.")
        if seeds > 1:
            _, g_low, g_high = t_interval(gap["B"])
            agrees = bool(trained(b) and distinct_units(gap["B"]) > 1 and -0.05 <= g_low and g_high <= 0.05)
            within = (f"95% t interval over {seeds} seeds {100 * g_low:+.0f} to {100 * g_high:+.0f} points"
                      + (", within 5 points of 0" if -0.05 <= g_low and g_high <= 0.05 else ", not within 5 points of 0"))
        else:
            agrees, within = False, "one seed"
        out[f"{experiment}-b-agrees"] = Finding(
            f"{experiment}-b-agrees", agrees,
            f"{label}, setting B: training and test accuracy differ by {_ms(gap['B'])} ({within})"
            + ("" if trained(b) else "; but setting B did not train") + ".")
        if experiment == "scan":
            out["scan-test"] = Finding(
                "scan-test", bool(trained(a) and (a["final_test"] < a["final_train"] / 4).all()),
                f"SCAN setting A: test accuracy {_ms(a['final_test'])} against {_ms(a['final_train'])} on "
                f"training commands" + ("" if trained(a) else " (setting A did not train)") + ".")
            v, text = _compare(b["final_unseen"], a["final_unseen"], arms=[a, b], label="B minus A")
            out["scan-unseen"] = Finding(
                "scan-unseen", v.reproduced,
                f"SCAN, test commands that setting B never trained on: accuracy {_ms(b['final_unseen'])} in "
                f"setting B and {_ms(a['final_unseen'])} in A{text}.")
        if experiment == "mnist":
            cost = {s: r["final_train"] - r["swapped"] for s, r in (("A", a), ("B", b))}
            v, text = _compare(cost["A"], cost["B"], arms=[a, b], label="A minus B")
            explains = bool(cost["A"].mean() >= gap["A"].mean() / 2)  # the claim also needs this
            out["mnist-swap"] = Finding(
                "mnist-swap", bool(v.reproduced and explains),
                f"Replacing the right digit of training-distribution pairs by a random one lowers accuracy "
                f"by {_ms(cost['A'])} in setting A and {_ms(cost['B'])} in B{text}; A's train-test gap "
                f"is {_ms(gap['A'])}" + ("" if explains or not v.reproduced else
                                         " (but the claim does not hold: the swap cost is under half of that gap)")
                + ".")
    return out
