"""What chapter 3's stored results show (notebooks/resists_at_scale.ipynb, MNIST pairs and SCAN): the
page's statements (:func:`resists_at_scale`), computed in one place so that the page's prose and
the claims tests (``tests/test_claims.py``) say the same thing at every profile.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from modlib import claims, stats
from modlib.resists_at_scale.experiment import CHAPTER
from modlib.stats import DOES_NOT_HOLD, HOLDS, UNDECIDED, Finding, Verdict, mean_pm, distinct_units, marked, number, paired, t_interval


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


# an arm *trained* when every seed's final accuracy on training-distribution data reaches this (the
# registry's `trained` of every claim of this chapter says why every seed, and why 0.9)
TRAINED = 0.9
# accuracy at or below this in both arms over a window: the quantity sits at its floor there
FLOOR = 0.02
# chance accuracy: MNIST pairs' label is the left digit (10 classes); SCAN's exact match of a sequence
CHANCE = {"mnist": 0.1, "scan": 0.0}


def trained(a: dict) -> bool:
    """Whether an arm (one setting's arrays) trained: every seed's final training accuracy is at
    least :data:`TRAINED`."""
    return bool((np.asarray(a["final_train"]) >= TRAINED).all())


def _marked(v: Verdict, which: str = "") -> str:
    """A verdict as the page prints it after its interval, in the words for its claim's kind
    (:func:`modlib.claims.statement`'s): ``" — ✓ reproduced"`` for a claim of the paper, ``" — holds"`` /
    ``" — does not hold"`` for the book's own hypothesis, the reason where it cannot be decided.
    ``which``: the arms that did not train, named (:func:`untrained_levels`); where they alone leave
    the verdict open and the interval is clear of 0, the plain words of what was found follow. Where
    the reason already says that the estimate falls short of the margin, the plain words that say it
    again are left out."""
    untrained = f"final training accuracy below {TRAINED:.0%} in {which or 'some seed'}"
    if v.plain and "falls short of the margin" in stats.undecided_reason(v):
        v = replace(v, plain="")  # the reason says it already: each said once
    if which and v.outcome == UNDECIDED and stats.undecided_reason(v).startswith("an arm did not train"):
        d = claims.decisions(CHAPTER).get(v.claim)
        if d is not None and (d.low > 0 or d.high < 0):
            v = replace(v, plain="an effect was found, its interval clear of 0")  # the reason names the arm
    if not claims.get(v.claim).own or v.outcome == UNDECIDED:
        return claims.late(v, marked(v, untrained))
    return claims.late(v, f" — {HOLDS if v.reproduced else DOES_NOT_HOLD}" + (f" ({v.amended})" if v.amended else ""))


def _compare(key: str, x: np.ndarray, y: np.ndarray, *, arms: list[dict], label: str,
             measurable: bool = True, reason: str = "") -> tuple[Verdict, str]:
    """The verdict on the registered claim ``key`` (its id in ``claims.toml``: "``x`` exceeds ``y``")
    paired over seeds (the settings share each seed's initial weights): a t interval of the
    differences and the sign test; the direction and the margin come from the registry
    (:func:`modlib.claims.decide`). ``arms`` must all have :func:`trained`; ``reason``: a further
    condition of the claim that failed, in words (the verdict is then "cannot be decided here").
    Returns the verdict and ``"; <label> <difference> — <verdict>"``."""
    effect = paired(x, y)
    v = claims.decide(f"{CHAPTER}/{key}", effect, trained=all(trained(a) for a in arms), measurable=measurable,
                      reason=reason)
    # a difference that would print as the margin it misses gets the digits to show it ("+4.9 points")
    margin = claims.get(f"{CHAPTER}/{key}").margin
    return v, (f"; {label} {effect.text(margin=margin)}" if len(x) > 1 else "") + _marked(v)


def resists_at_scale(runs, prefix: str = "") -> dict[str, Finding]:
    """Chapter 3's statements about its stored results (:class:`modlib.resists_at_scale.ResistRuns`),
    keyed by name; an experiment not stored is left out. ``prefix``: of each name and claim id (the
    same statements about other results: ``"ablation-"``). Each comparison's ``holds`` is its verdict
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
                name = f"{prefix}{experiment}-{key}"
                v, text = _compare(name, early["A"], early["B"], arms=[a, b], label="A minus B", measurable=not floor)
                out[name] = Finding(
                    name, v.reproduced,
                    f"{label}, steps {low}–{high}: mean training accuracy{what} {mean_pm(early['A'])} in setting A "
                    f"and {mean_pm(early['B'])} in B{text}.")
        gap = {s: r["final_train"] - r["final_test"] for s, r in (("A", a), ("B", b))}
        v, text = _compare(f"{prefix}{experiment}-gap", gap["A"], gap["B"], arms=[a, b], label="A minus B")
        out[f"{prefix}{experiment}-gap"] = Finding(
            f"{prefix}{experiment}-gap", v.reproduced,
            f"{label}, after training: setting A {mean_pm(a['final_train'])} on training-distribution data and "
            f"{mean_pm(a['final_test'])} on test data, setting B {mean_pm(b['final_train'])} and "
            f"{mean_pm(b['final_test'])}; the train-test gap is {mean_pm(gap['A'])} in A and {mean_pm(gap['B'])} in B"
            f"{text}.")
        if seeds > 1:
            _, g_low, g_high = t_interval(gap["B"])
            agrees = bool(trained(b) and distinct_units(gap["B"]) > 1 and -0.05 <= g_low and g_high <= 0.05)
            within = (f"95% t interval over {seeds} seeds {number(100 * g_low, 0, sign=True)} to "
                      f"{number(100 * g_high, 0, sign=True)} points"
                      + (", within 5 points of 0" if -0.05 <= g_low and g_high <= 0.05 else ", not within 5 points of 0"))
        else:
            agrees, within = False, "one seed"
        out[f"{prefix}{experiment}-b-agrees"] = Finding(
            f"{prefix}{experiment}-b-agrees", agrees,
            f"{label}, setting B: training and test accuracy differ by {mean_pm(gap['B'])} ({within})"
            + ("" if trained(b) else "; but setting B did not train") + ".")
        if experiment == "scan":
            out[f"{prefix}scan-test"] = Finding(
                f"{prefix}scan-test", bool(trained(a) and (a["final_test"] < a["final_train"] / 4).all()),
                f"SCAN setting A: test accuracy {mean_pm(a['final_test'])} against {mean_pm(a['final_train'])} on "
                f"training commands" + ("" if trained(a) else " (setting A did not train)") + ".")
            v, text = _compare(f"{prefix}scan-unseen", b["final_unseen"], a["final_unseen"], arms=[a, b],
                               label="B minus A")
            out[f"{prefix}scan-unseen"] = Finding(
                f"{prefix}scan-unseen", v.reproduced,
                f"SCAN, test commands that setting B never trained on: accuracy {mean_pm(b['final_unseen'])} in "
                f"setting B and {mean_pm(a['final_unseen'])} in A{text}.")
        if experiment == "mnist":
            cost = {s: r["final_train"] - r["swapped"] for s, r in (("A", a), ("B", b))}
            explains = bool(cost["A"].mean() >= gap["A"].mean() / 2)  # the claim also needs this
            v, text = _compare(f"{prefix}mnist-swap", cost["A"], cost["B"], arms=[a, b], label="A minus B",
                               reason="" if explains else "setting A's mean swap cost is under half of its mean "
                               "train-test gap, and the claim asks at least half")
            out[f"{prefix}mnist-swap"] = Finding(
                f"{prefix}mnist-swap", v.reproduced,
                f"Replacing the right digit of training-distribution pairs by a random one lowers accuracy "
                f"by {mean_pm(cost['A'])} in setting A and {mean_pm(cost['B'])} in B{text}; A's train-test gap "
                f"is {mean_pm(gap['A'])}.")
    return out


# ---------------------------------------------------------------- the controls (modlib.resists_at_scale.controls)

# a later window for SCAN's multi-word training commands, where exact match has left its floor in both
# settings and neither has converged (the stored A and B: about 0.06 at step 50, 0.8 at step 300)
LATER = {"scan": (50, 300)}
# a control "agrees" when the 95% t interval of its gap lies within this of 0 (as setting B's)
AGREE = 0.05


def reaches(a: dict, window: tuple[int, int]) -> bool:
    """Whether the run ``a`` was evaluated at any step of ``window[0]..window[1]`` (at the smoke
    profile SCAN trains 3 steps: it never reaches the early window, steps 10-25)."""
    low, high = window
    return bool(((a["eval_steps"] >= low) & (a["eval_steps"] <= high)).any())


def window_mean(a: dict, curve: str, window: tuple[int, int]) -> np.ndarray:
    """Mean per seed of ``a[curve]`` over the evaluations at steps ``window[0]..window[1]``: ``[S]``.
    A run never evaluated there (see :func:`reaches`) has no such mean: ``ValueError``."""
    if not reaches(a, window):
        raise ValueError(f"no evaluation at steps {window[0]}-{window[1]}: the run was evaluated at "
                         f"steps {a['eval_steps'].min()}-{a['eval_steps'].max()}; check reaches() first")
    low, high = window
    keep = (a["eval_steps"] >= low) & (a["eval_steps"] <= high)
    return a[curve][:, keep].mean(1)


def _agrees(name: str, gap: np.ndarray, arm: dict, what: str) -> Finding:
    """A check, not a paper's claim: every seed of ``arm`` trained and the t interval of ``gap``
    over seeds lies within :data:`AGREE` of 0."""
    seeds = len(gap)
    if seeds > 1:
        _, low, high = t_interval(gap)
        inside = -AGREE <= low and high <= AGREE
        holds = bool(trained(arm) and distinct_units(gap) > 1 and inside)
        within = (f"95% t interval over {seeds} seeds {number(100 * low, 0, sign=True)} to "
                  f"{number(100 * high, 0, sign=True)} points, "
                  + ("within" if inside else "not within") + f" {100 * AGREE:.0f} points of 0")
    else:
        holds, within = False, "one seed"
    return Finding(name, holds, f"{what} {mean_pm(gap)} ({within})" + ("" if trained(arm) else
                                                                      "; but it did not train") + ".")


# what a failed check means for the verdict printed beside it, in plain words (:func:`check_words`)
FAILED = {f"{e}-control-agrees": "control C's own train-test gap is not shown to be near 0; the verdict on "
          "A's gap against C's rests on the two gaps alone, not on this check" for e in ("mnist", "scan")}


def check_words(key: str, holds: bool) -> str:
    """A check's outcome as the page prints it (a check decides no claim, so it gets no verdict):
    "check passed", or "check failed" with what failed and what that means for the verdict beside
    it where :data:`FAILED` says."""
    if holds:
        return "check passed"
    return "check failed" + (f": {FAILED[key]}" if key in FAILED else "")


def dose_slopes(runs, levels: list[tuple[str, float]], quantity) -> np.ndarray:
    """Per seed, the least-squares slope of ``quantity(arrays) [S]`` against the bits the right digit
    carries about the label, over ``levels`` (``(result, bits)``): ``[S]``, in units per bit."""
    bits = np.array([b for _, b in levels])
    values = np.stack([quantity(runs.arrays(n)) for n, _ in levels], 1)  # [S, L]
    centred = bits - bits.mean()
    return (values - values.mean(1, keepdims=True)) @ centred / (centred @ centred)


def untrained_levels(runs, levels: list[tuple[str, float]]) -> str:
    """The levels among ``levels`` (``(result, bits)``) that did not train (:func:`trained`), each with
    its seeds below :data:`TRAINED`: "the 0.51-bit level, seed 4 at 84.3%"; "" where
    every level trained."""
    said = []
    for name, bits in sorted(levels, key=lambda level: level[1]):
        a = runs.arrays(name)
        final = np.asarray(a["final_train"])
        seeds = np.asarray(a.get("seeds", np.arange(len(final))))
        low = np.flatnonzero(final < TRAINED)
        if low.size:
            said.append(f"the {bits:.2f}-bit level, "
                        + ", ".join(f"seed {int(seeds[i])} at {final[i]:.1%}" for i in low))
    return "; ".join(said)


class _Suffixed:
    """``runs`` whose results ``<name><suffix>`` read as ``<name>`` (e.g. ``scan-A-ablation`` as
    ``scan-A``), so that :func:`resists_at_scale` states the page's findings about them."""

    def __init__(self, runs, suffix: str):
        self.runs, self.suffix = runs, suffix
        self.rows = {n[:-len(suffix)]: r for n, r in runs.rows.items() if n.endswith(suffix)}

    def arrays(self, name: str) -> dict:
        return self.runs.arrays(name + self.suffix)


def controls(runs) -> dict[str, Finding]:
    """Chapter 3's statements about its control results (:mod:`modlib.resists_at_scale.controls`),
    keyed by name; a statement whose results are not in ``runs`` is left out. Comparisons are paired
    over seeds (seed k starts from the same weights in every result of one defaults) and decided by
    the book's rule, the paper's side being the stated margin :data:`modlib.stats.CLEAR`; checks
    (``*-agrees``, ``scan-tf-test``, ``scan-ablation-test``, ``scan-union``) hold or not.

    ``<exp>-control-gap`` (``mnist``, ``scan``): with the correlation removed and the test
    combinations still unseen (control C), the train-test gap is smaller than setting A's;
    ``mnist-control-agrees``: C's accuracy on test digits at the held-out offset agrees with that at
    the training offsets; ``scan-control-agrees``: C's training and test accuracy agree; ``mnist-dose-gap`` / ``mnist-dose-early``: the train-test gap / early training
    accuracy grows with the information the right digit carries (a per-seed slope over the dose levels
    and C); ``scan-tf-test``: setting A's failure stands under the authors' measure (teacher-forced
    sentence accuracy on test below a quarter of that on training commands, on fresh commands and on
    the sample drawn once); ``scan-tf-unseen``: B above A there; ``scan-tf-equals-greedy`` (a check):
    setting A (measured again) trained, and its teacher-forced sentence accuracy equals greedy exact
    match at every evaluation (they are one measure for an argmax decoder); ``scan-early-long-tok``: A ahead of B
    in teacher-forced token accuracy on multi-word training commands over steps 10-25;
    ``scan-later-long`` (the stored A and B) and ``scan-later-long-tf``: A ahead of B in exact match on
    those commands over :data:`LATER`; ``ablation-<key>``: each of :func:`resists_at_scale`'s
    statements about the results trained with the authors' defaults (``*-ablation``); ``scan-union``: the
    authors' setting B, whose test commands are all training commands, scores them as it scores
    training."""
    out = {}
    has = lambda *names: all(n in runs.rows for n in names)  # noqa: E731
    gap = lambda a: a["final_train"] - a["final_test"]  # noqa: E731
    designs = {"mnist": ("MNIST pairs", "training offsets 0-8, test offset 9", "training pairs", "test pairs at the "
                         "held-out offset", ("final_test_seen", "final_test", "on MNIST's test digits, accuracy at the "
                                             "training offsets minus at the held-out one")),
               "scan": ("SCAN", '"jump" held out of one verb-phrase frame, tested there', "training commands",
                        "test commands", ("final_train", "final_test", "training minus test exact match"))}
    for experiment, (label, design, train, test, (high, low, what)) in designs.items():
        if has(f"{experiment}-A", f"{experiment}-C"):
            a, c = runs.arrays(f"{experiment}-A"), runs.arrays(f"{experiment}-C")
            v, text = _compare(f"{experiment}-control-gap", gap(a), gap(c), arms=[a, c], label="A minus C")
            out[f"{experiment}-control-gap"] = Finding(
                f"{experiment}-control-gap", v.reproduced,
                f"{label}, control C ({design}): {mean_pm(c['final_train'])} on {train} and {mean_pm(c['final_test'])} "
                f"on {test}; the train-test gap is {mean_pm(gap(c))} in C and {mean_pm(gap(a))} in setting A{text}.")
        if has(f"{experiment}-C"):
            c = runs.arrays(f"{experiment}-C")
            out[f"{experiment}-control-agrees"] = _agrees(
                f"{experiment}-control-agrees", c[high] - c[low], c, f"{label}, control C: {what}")
    dose = [(n, runs.rows[n].metrics["info_bits"]) for n in sorted(runs.rows)
            if n.startswith("mnist-dose-") or n == "mnist-C"]
    if len(dose) >= 3:
        arms = [runs.arrays(n) for n, _ in dose]
        seeds = len(arms[0]["final_train"])
        for key, what, quantity in (
                ("gap", "train-test gap", gap),
                ("early", f"training accuracy over steps {EARLY['mnist'][0]}–{EARLY['mnist'][1]}",
                 lambda a: window_mean(a, "acc_train", EARLY["mnist"])),
                ("test", "accuracy on MNIST's test digits at the training offsets minus at the test offsets",
                 test_digit_gap)):
            slopes = dose_slopes(runs, dose, quantity)
            effect = paired(slopes, np.zeros_like(slopes))
            v = claims.decide(f"{CHAPTER}/mnist-dose-{key}", effect, trained=all(trained(x) for x in arms))
            mark = _marked(v, untrained_levels(runs, dose))
            levels = ", ".join(f"{b:.2f} bits {mean_pm(quantity(runs.arrays(n)))}" for n, b in sorted(dose, key=lambda d: d[1]))
            out[f"mnist-dose-{key}"] = Finding(
                f"mnist-dose-{key}", v.reproduced,
                f"MNIST pairs, the dose-response: {what} against the information the right digit carries "
                f"about the label in training ({levels}); the slope per bit is "
                + (f"{effect.text(percent=False)}" if seeds > 1 else f"{slopes.mean():+.2f}") + f"{mark}.")
    out.update(followups(runs))
    if has("scan-A-tf"):
        a = runs.arrays("scan-A-tf")
        holds = bool(trained(a) and (a["final_tf_test"] < a["final_tf_train"] / 4).all()
                     and (a["fixed_test"][:, -1] < a["fixed_train"][:, -1] / 4).all())
        out["scan-tf-test"] = Finding(
            "scan-tf-test", holds,
            f"SCAN setting A, the authors' measure (teacher-forced sentence accuracy): {mean_pm(a['final_tf_test'])} "
            f"on test commands against {mean_pm(a['final_tf_train'])} on training commands; on the 100 commands "
            f"drawn once, {mean_pm(a['fixed_test'][:, -1])} against {mean_pm(a['fixed_train'][:, -1])} at the last step"
            + ("" if trained(a) else " (setting A did not train)") + ".")
        diff = max(float(np.abs(a[f"tf_{k}"] - a[f"acc_{k}"]).max()) for k in ("train", "test", "unseen"))
        out["scan-tf-equals-greedy"] = Finding(
            "scan-tf-equals-greedy", bool(trained(a) and diff <= 1e-9),
            "SCAN: the authors' teacher-forced sentence accuracy and greedy exact match are one measure: a "
            "command is right under teacher forcing exactly when every step's most likely action, given the "
            "gold actions before it, is the gold one, and greedy decoding then feeds back those very actions; "
            f"over every evaluation of setting A measured again they differ by at most {diff:.3f} (test "
            f"commands: {mean_pm(a['final_tf_test'])} and {mean_pm(a['final_test'])})"
            + ("" if trained(a) else "; setting A did not train, so this says nothing") + ".")
    if has("scan-A-tf", "scan-B-tf"):
        a, b = runs.arrays("scan-A-tf"), runs.arrays("scan-B-tf")
        v, text = _compare("scan-tf-unseen", b["final_tf_unseen"], a["final_tf_unseen"], arms=[a, b], label="B minus A")
        out["scan-tf-unseen"] = Finding(
            "scan-tf-unseen", v.reproduced,
            f"SCAN, test commands that setting B never trained on, teacher-forced sentence accuracy: "
            f"{mean_pm(b['final_tf_unseen'])} in setting B and {mean_pm(a['final_tf_unseen'])} in A{text}.")
        if a["eval_steps"][-1] >= EARLY["scan"][1]:
            early = {k: window_mean(r, "tok_train_long", EARLY["scan"]) for k, r in (("A", a), ("B", b))}
            v, text = _compare("scan-early-long-tok", early["A"], early["B"], arms=[a, b], label="A minus B")
            out["scan-early-long-tok"] = Finding(
                "scan-early-long-tok", v.reproduced,
                f"SCAN, steps {EARLY['scan'][0]}–{EARLY['scan'][1]}: teacher-forced token accuracy on training "
                f"commands of more than one word {mean_pm(early['A'])} in setting A and {mean_pm(early['B'])} in B{text}.")
    for key, names in (("scan-later-long", ("scan-A", "scan-B")), ("scan-later-long-tf", ("scan-A-tf", "scan-B-tf"))):
        if has(*names) and runs.arrays(names[0])["eval_steps"][-1] >= LATER["scan"][1]:
            a, b = (runs.arrays(n) for n in names)
            later = {k: window_mean(r, "acc_train_long", LATER["scan"]) for k, r in (("A", a), ("B", b))}
            floor = max(later["A"].max(), later["B"].max()) <= FLOOR
            v, text = _compare(key, later["A"], later["B"], arms=[a, b], label="A minus B", measurable=not floor)
            out[key] = Finding(
                key, v.reproduced,
                f"SCAN{' (measured again)' if key.endswith('tf') else ''}, steps {LATER['scan'][0]}–"
                f"{LATER['scan'][1]}: exact match on training commands of more than one word {mean_pm(later['A'])} "
                f"in setting A and {mean_pm(later['B'])} in B{text}.")
    ablation = resists_at_scale(_Suffixed(runs, "-ablation"), "ablation-")  # the page's statements, the authors' defaults
    for key, f in ablation.items():
        text = f.text if f.text[:2].isupper() else f.text[0].lower() + f.text[1:]  # "MNIST ..." stays
        out[key] = Finding(key, f.holds, f"With the authors' defaults: {text}")
    if has("scan-B-union"):
        u = runs.arrays("scan-B-union")
        union_gap = u["final_train"] - u["final_test"]
        inside = bool((np.abs(union_gap) <= AGREE).all())  # a check per seed: both may sit at 1.00 exactly
        out["scan-union"] = Finding(
            "scan-union", bool(trained(u) and inside),
            "SCAN, the authors' setting B (trained on every command, the test commands among them): exact "
            f"match {mean_pm(u['final_test'])} on the test commands ({mean_pm(u['final_tf_test'])} teacher-forced) and "
            f"{mean_pm(u['final_train'])} on training commands; training minus test {mean_pm(union_gap)}, "
            + ("within" if inside else "not within") + f" {100 * AGREE:.0f} points of 0 in every seed"
            + ("" if trained(u) else "; but it did not train") + ".")
    return out


def test_digit_gap(a: dict) -> np.ndarray:
    """Per seed, accuracy on MNIST's test digits at the training combinations minus at the test
    combinations: the digits are new in both, so the lift the shortcut gives on training pairs is
    left out and what remains is the cost of the unseen combination: ``[S]``."""
    return a["final_test_seen"] - a["final_test"]


def at_seeds(a: dict, rows) -> dict:
    """The arrays of result ``a`` at the seed rows ``rows`` only (every per-seed array indexed)."""
    n, rows = len(a["final_train"]), np.asarray(rows, dtype=int)
    return {k: (v[rows] if isinstance(v, np.ndarray) and v.ndim and len(v) == n and k != "eval_steps" else v)
            for k, v in a.items()}


def paired_seeds(x: dict, y: dict) -> tuple[dict, dict, list[int]]:
    """``x`` (one of issue 51's results, its seeds in ``x["seeds"]``) and ``y`` (seeds 0, 1, ...) at
    the seeds both hold, and those seeds: so that a result of three seeds pairs with one of five."""
    seeds = [int(k) for k in x["seeds"] if k < len(y["final_train"])]
    keep = [i for i, k in enumerate(x["seeds"]) if k < len(y["final_train"])]
    return at_seeds(x, keep), at_seeds(y, seeds), seeds


# the fixed-coverage levels of issue 51's MNIST follow-up: five right digits per left digit throughout
COVER = ("mnist-cover-9", "mnist-cover-8", "mnist-dose-5")
FRAMES = ("X", "X left", "X right", "X opposite left", "X opposite right", "X around left", "X around right")


def followups(runs) -> dict[str, Finding]:
    """Issue 51's statements (:data:`modlib.resists_at_scale.controls.FOLLOWUPS`), each the verdict
    on its registered claim; a statement whose results are not in ``runs`` is left out.
    ``mnist-control-gap-9``: setting A tested at offset 9 alone (``mnist-A-9``) against control C;
    ``mnist-cover-gap`` / ``mnist-cover-test``: at fixed coverage (:data:`COVER`) the train-test gap /
    :func:`test_digit_gap` grows with the bits (a per-seed slope); ``scan-frame-hard``: with "X around
    right" held out (``scan-C-around-right``) C's test exact match is lower than with each seed's own
    frame in ``scan-C``; ``scan-control-gap-hard``: A's gap exceeds that C's; ``scan-matched-gap``:
    A's gap exceeds C's matched to A's size (``scan-C-matched``); ``scan-matched-size``: the matched
    C's gap exceeds C's."""
    out = {}
    has = lambda *names: all(n in runs.rows for n in names)  # noqa: E731
    gap = lambda a: a["final_train"] - a["final_test"]  # noqa: E731
    if has("mnist-A-9", "mnist-C"):
        a, c = runs.arrays("mnist-A-9"), runs.arrays("mnist-C")
        v, text = _compare("mnist-control-gap-9", gap(a), gap(c), arms=[a, c], label="A minus C")
        out["mnist-control-gap-9"] = Finding(
            "mnist-control-gap-9", v.reproduced,
            f"MNIST pairs, setting A tested at control C's one test offset (9 past the left digit): "
            f"{mean_pm(a['final_train'])} on training pairs and {mean_pm(a['final_test'])} on test pairs; the "
            f"train-test gap is {mean_pm(gap(a))} against control C's {mean_pm(gap(c))}{text}.")
    if has(*COVER):
        levels = [(n, runs.rows[n].metrics["info_bits"]) for n in COVER]
        arms = [runs.arrays(n) for n, _ in levels]
        for key, what, quantity in (("gap", "train-test gap", gap),
                                    ("test", "accuracy on test digits at the training combinations minus at "
                                     "the others", test_digit_gap)):
            slopes = dose_slopes(runs, levels, quantity)
            effect = paired(slopes, np.zeros_like(slopes))
            v = claims.decide(f"{CHAPTER}/mnist-cover-{key}", effect, trained=all(trained(x) for x in arms))
            shown = ", ".join(f"{b:.2f} bits {mean_pm(quantity(runs.arrays(n)))}" for n, b in levels)
            out[f"mnist-cover-{key}"] = Finding(
                f"mnist-cover-{key}", v.reproduced,
                f"MNIST pairs at fixed coverage (five right digits per left digit, Y2's marginal made "
                f"non-uniform): {what} against the bits the right digit carries ({shown}); the slope per bit "
                f"is " + (effect.text(percent=False) if len(slopes) > 1 else f"{slopes.mean():+.2f}")
                + f"{_marked(v, untrained_levels(runs, levels))}.")
    if has("scan-C", "scan-C-around-right"):
        h, c, seeds = paired_seeds(runs.arrays("scan-C-around-right"), runs.arrays("scan-C"))
        frames = ", ".join(f"seed {k} {FRAMES[int(f)]!r} {t:.2f}" for k, f, t in
                           zip(seeds, c["held_out"], c["final_test"]))
        v, text = _compare("scan-frame-hard", c["final_test"], h["final_test"], arms=[c, h],
                           label="own frame minus \"around right\"")
        out["scan-frame-hard"] = Finding(
            "scan-frame-hard", v.reproduced,
            f"SCAN, control C with \"jump\" held out of \"X around right\" in seeds {seeds}: test exact match "
            f"{mean_pm(h['final_test'])} ({', '.join(f'{t:.2f}' for t in h['final_test'])}), against the same "
            f"seeds with their own held-out frame ({frames}){text}.")
        if has("scan-A"):
            h, a, seeds = paired_seeds(runs.arrays("scan-C-around-right"), runs.arrays("scan-A"))
            v, text = _compare("scan-control-gap-hard", gap(a), gap(h), arms=[a, h], label="A minus C")
            out["scan-control-gap-hard"] = Finding(
                "scan-control-gap-hard", v.reproduced,
                f"SCAN, seeds {seeds}: the train-test gap is {mean_pm(gap(h))} in control C with \"around right\" "
                f"held out and {mean_pm(gap(a))} in setting A{text}.")
    if has("scan-C-matched"):
        m = runs.arrays("scan-C-matched")
        size = (f"{int(m['train_rows'][0]):,} training rows, {int(m['jump_rows'][0]):,} with \"jump\"")
        for key, other, label in (("scan-matched-gap", "scan-A", "A minus matched C"),
                                  ("scan-matched-size", "scan-C", "matched C minus C")):
            if not has(other):
                continue
            m, o, seeds = paired_seeds(runs.arrays("scan-C-matched"), runs.arrays(other))
            x, y, arms = (gap(o), gap(m), [o, m]) if key == "scan-matched-gap" else (gap(m), gap(o), [m, o])
            v, text = _compare(key, x, y, arms=arms, label=label)
            who = "setting A" if other == "scan-A" else "control C at its own size, the same seeds"
            out[key] = Finding(
                key, v.reproduced,
                f"SCAN, control C matched to setting A's size ({size}; seeds {seeds}): "
                f"{mean_pm(m['final_train'])} on training commands and {mean_pm(m['final_test'])} on test commands; "
                f"the train-test gap is {mean_pm(gap(m))}, against {mean_pm(gap(o))} in {who}{text}.")
    out.update(crossed(runs))
    return out


def crossed_cells(runs) -> tuple[tuple[int, ...], np.ndarray, np.ndarray]:
    """Control C's held-out frame crossed with seeds (:data:`modlib.resists_at_scale.controls.CROSSED`):
    ``(seeds, train, test)``, the final exact match on training and on test commands, each
    ``[6 directed frames (FRAMES[1:]), seeds]``, gathered from ``scan-C`` (seed k, its own frame),
    ``scan-C-around-right`` and the ``scan-C-<frame>`` results, over the seeds under which every
    frame is stored (none: empty arrays)."""
    from modlib.resists_at_scale.controls import CROSSED, HARD_FRAME, held_out_frame

    cells: dict[tuple[str, int], tuple[float, float]] = {}
    if "scan-C" in runs.rows:
        c = runs.arrays("scan-C")
        for k, (tr, te) in enumerate(zip(c["final_train"], c["final_test"])):
            cells[held_out_frame(k), k] = float(tr), float(te)
    for name, frame in (("scan-C-around-right", HARD_FRAME), *CROSSED.items()):
        if name in runs.rows:
            a = runs.arrays(name)
            for k, tr, te in zip(a["seeds"], a["final_train"], a["final_test"]):
                cells[frame, int(k)] = float(tr), float(te)
    frames = FRAMES[1:]
    seeds = tuple(k for k in sorted({k for _, k in cells}) if all((f, k) in cells for f in frames))
    table = np.array([[cells[f, k] for k in seeds] for f in frames]).reshape(len(frames), len(seeds), 2)
    return seeds, table[..., 0], table[..., 1]


def crossed(runs) -> dict[str, Finding]:
    """The crossed design's statements, once every frame is stored under at least two seeds
    (:func:`crossed_cells`): ``scan-control-gap-frames``, setting A's train-test gap minus control
    C's, each frame's mean over the seeds, over the six frames; ``scan-frame-hard-crossed``, per seed
    C's test exact match over the five other frames minus with "X around right" held out (the
    spread itself: :func:`frame_spread`)."""
    from modlib.resists_at_scale.controls import HARD_FRAME

    seeds, train, test = crossed_cells(runs)
    if len(seeds) < 2 or "scan-A" not in runs.rows:
        return {}
    a = runs.arrays("scan-A")
    a_gap = (a["final_train"] - a["final_test"])[list(seeds)]  # [seeds]
    c_gap = (train - test).mean(1)  # [frames]: each frame's mean over the seeds
    ok = trained(a) and bool((train >= TRAINED).all())
    shown = ", ".join(f"{f[2:]!r} {m:.2f}" for f, m in zip(FRAMES[1:], test.mean(1)))
    effect = paired(np.full(len(c_gap), a_gap.mean()), c_gap, unit="frame")
    v = claims.decide(f"{CHAPTER}/scan-control-gap-frames", effect, trained=ok)
    out = {"scan-control-gap-frames": Finding(
        "scan-control-gap-frames", v.reproduced,
        f"SCAN, control C with each of the six directed frames held out under seeds {list(seeds)} (mean test "
        f"exact match per frame: {shown}): the train-test gap, each frame's mean over the seeds, is "
        f"{mean_pm(c_gap)} over the frames, against setting A's {a_gap.mean():.2f}; A minus C over the frames "
        f"{effect.text(margin=claims.get(f'{CHAPTER}/scan-control-gap-frames').margin)}{_marked(v)}.")}
    hard = FRAMES[1:].index(HARD_FRAME)
    others = np.delete(test, hard, axis=0).mean(0)  # [seeds]
    effect = paired(others, test[hard])
    v = claims.decide(f"{CHAPTER}/scan-frame-hard-crossed", effect, trained=bool((train >= TRAINED).all()))
    out["scan-frame-hard-crossed"] = Finding(
        "scan-frame-hard-crossed", v.reproduced,
        f"SCAN, control C, seeds {list(seeds)}: test exact match with \"around right\" held out "
        f"{', '.join(f'{x:.2f}' for x in test[hard])}, against the mean over the five other frames "
        f"{', '.join(f'{x:.2f}' for x in others)}; the other frames minus \"around right\" "
        f"{effect.text(margin=claims.get(f'{CHAPTER}/scan-frame-hard-crossed').margin)}"
        f"{_marked(v)}.")
    return out


def frame_spread(runs) -> dict[str, float]:
    """A description of the crossed design (no verdict): how control C's final test exact match over
    six frames × seeds (:func:`crossed_cells`) spreads, as shares of its sum of squares about the
    grand mean: ``frames`` (between the frames' means), ``seeds`` (between the seeds' means) and
    ``interaction`` (the rest: how a frame's score changes with the seed, mixed with run-to-run noise, which one run a cell cannot separate); empty before two seeds
    are stored under every frame."""
    seeds, _, test = crossed_cells(runs)
    total = float(((test - test.mean()) ** 2).sum()) if len(seeds) >= 2 else 0.0
    if total == 0:
        return {}
    frames = len(seeds) * float(((test.mean(1) - test.mean()) ** 2).sum()) / total
    between_seeds = test.shape[0] * float(((test.mean(0) - test.mean()) ** 2).sum()) / total
    return {"frames": frames, "seeds": between_seeds, "interaction": 1 - frames - between_seeds}


# what each result is, for the comparison tables: (label, what training shows)
READINGS = {
    "mnist-A": ("A", "offsets 0, 1"), "mnist-B": ("B", "every offset"),
    "mnist-C": ("C (control)", "offsets 0-8"), "mnist-A-ablation": ("A, Keras's defaults", "offsets 0, 1"),
    "mnist-B-ablation": ("B, Keras's defaults", "every offset"),
    "scan-A": ("A", '"jump" alone'), "scan-B": ("B (this book's)", "action words re-drawn"),
    "scan-A-tf": ("A, measured again", '"jump" alone'),
    "scan-B-tf": ("B (this book's), measured again", "action words re-drawn"),
    "scan-C": ("C (control)", '"jump" in 6 of 7 verb frames'),
    "scan-B-union": ("B (the authors' scripts)", "every command, the test ones too"),
    "scan-A-ablation": ("A, the authors' defaults", '"jump" alone'),
    "scan-B-ablation": ("B, the authors' defaults", "action words re-drawn"),
    "mnist-A-9": ("A, tested at offset 9", "offsets 0, 1"),
    "mnist-cover-9": ("fixed coverage, 9:1", "5 right digits per left; 0-4 common"),
    "mnist-cover-8": ("fixed coverage, 8:2", "5 right digits per left; 0-4 common"),
    "scan-C-around-right": ("C, \"around right\" held out", '"jump" in 6 of 7 verb frames'),
    "scan-C-matched": ("C, matched to A's size", '1,467 "jump" commands, 14,670 rows'),
    **{name: (f"C, \"{frame[2:]}\" held out", '"jump" in 6 of 7 verb frames')
       for name, frame in (("scan-C-left", "X left"), ("scan-C-right", "X right"),
                           ("scan-C-opposite-left", "X opposite left"), ("scan-C-opposite-right", "X opposite right"),
                           ("scan-C-around-left", "X around left"))},
}


def comparison(runs, experiment: str, information: dict[str, dict[str, float]]) -> dict[str, dict[str, str]]:
    """One row per stored result of ``experiment`` (``"mnist"`` or ``"scan"``) in ``runs``: what its
    training shows, the information the redundant input carries about the label there
    (``information``: :func:`modlib.resists_at_scale.controls.information_table`; per seed where a
    result stored it) and its accuracies after training, each "mean ± sd" over seeds ("–" where
    the result does not measure it: the stored A and B have no teacher-forced accuracy). A row whose
    seeds are not the first row's names them (``C, "around right" held out (seeds 0, 2, 3)``)."""
    def cell(a, key, pick=None):
        if key not in a:
            return "–"
        return mean_pm(a[key] if pick is None else pick(a[key]))

    rows = {}
    first = None  # the first row's seeds: a row with others names its own
    names = [n for n in READINGS if n.startswith(experiment)]
    names += sorted(n for n in runs.rows if n.startswith(f"{experiment}-dose-"))
    for name in names:
        if name not in runs.rows:
            continue
        a, meta = runs.arrays(name), runs.rows[name].metrics
        label, shows = READINGS.get(name, (f"dose, offsets 0-{name.split('-')[-1]}", ""))
        if name.startswith(f"{experiment}-dose-"):
            m = int(name.split("-")[-1])
            label, shows = f"dose {m}", f"offsets 0-{m - 1}"
        seeds = [int(k) for k in a.get("seeds", range(len(a["final_train"])))]
        first = seeds if first is None else first
        if seeds != first:
            label += f" (seeds {', '.join(map(str, seeds))})"
        if experiment == "mnist":
            bits = meta.get("info_bits", information.get(f"MNIST {name.split('-')[1]}", {}).get("bits"))
            rows[label] = {"training shows": shows, "I(Y1;Y2), bits": f"{bits:.2f}" if bits is not None else "–",
                           "training pairs": cell(a, "final_train"), "test pairs": cell(a, "final_test"),
                           "test digits, training offsets": cell(a, "final_test_seen"),
                           "right digit replaced": cell(a, "swapped")}
        else:
            if "info_jump" in a:
                bits, share = a["info_word"].mean(), (a["info_jump"] / a["entropy_jump"]).mean()
            elif "info_word" in a:  # issue 51's results store the bits only
                bits, share = a["info_word"].mean(), None
            else:
                info = information.get(f"SCAN {name.split('-')[1]}", {})
                bits, share = info.get("bits"), info.get("share")
            rows[label] = {"training shows": shows,
                           "I(W;F), bits": f"{bits:.3f}" if bits is not None else "–",
                           "share of H(jump)": f"{share:.0%}" if share is not None else "–",
                           "training": cell(a, "final_train"), "test, greedy": cell(a, "final_test"),
                           "test, teacher-forced": cell(a, "final_tf_test"),
                           "test, the authors' (100 drawn once)": cell(a, "fixed_test", lambda v: v[:, -1]),
                           "unseen, greedy": cell(a, "final_unseen")}
    return rows


# ---------------------------------------------------------------- the usual bar for "trained", as a sensitivity reading

# each registered claim (its id in claims.toml) in plain words, for the lists the page gives of them
# (the registry's names are the ids), without commas or brackets, so that a list of them reads; a run with the
# authors' defaults reads as its plain twin
NAMES = {
    "mnist-early": "MNIST: A trains faster early",
    "mnist-gap": "MNIST: A's train-test gap exceeds B's",
    "mnist-swap": "MNIST: replacing the right digit costs A more than B",
    "scan-early": "SCAN: A trains faster early",
    "scan-early-long": "SCAN: A leads early on longer commands in exact match",
    "scan-gap": "SCAN: A's train-test gap exceeds B's",
    "scan-unseen": "SCAN: B beats A on the test commands B never saw",
    "mnist-control-gap": "MNIST: A's gap exceeds control C's",
    "scan-control-gap": "SCAN: A's gap exceeds control C's",
    "mnist-dose-gap": "MNIST: the gap grows with the right digit's information",
    "mnist-dose-early": "MNIST: early training accuracy grows with the information",
    "scan-tf-unseen": "SCAN in the authors' measure: B beats A on the commands B never saw",
    "scan-early-long-tok": "SCAN: A leads early on longer commands in token accuracy",
    "scan-later-long": "SCAN: A leads later on longer commands",
    "scan-later-long-tf": "SCAN measured again: A leads later on longer commands",
    "mnist-control-gap-9": "MNIST: A's gap exceeds C's when both are tested at offset 9",
    "mnist-cover-gap": "MNIST at fixed coverage: the gap grows with the information",
    "mnist-cover-test": "MNIST at fixed coverage: the gap on test digits grows with the information",
    "mnist-dose-test": "MNIST: the gap on test digits grows with the information",
    "scan-frame-hard": "SCAN: \"around right\" is a hard frame for C under three more seeds",
    "scan-control-gap-hard": "SCAN: A's gap exceeds C's with \"around right\" held out",
    "scan-matched-gap": "SCAN: A's gap exceeds C's at A's size",
    "scan-matched-size": "SCAN: C's gap is larger when cut to A's size",
    "scan-control-gap-frames": "SCAN: A's gap exceeds C's with the frames as units",
    "scan-frame-hard-crossed": "SCAN: \"around right\" is hard for C under every crossed seed",
}


def claim_name(key: str) -> str:
    """Claim ``key`` of this chapter (its id in ``claims.toml``) in plain words (:data:`NAMES`): "MNIST:
    A trains faster early"; one run again with the authors' defaults ("ablation-mnist-early") as
    "MNIST with the authors' defaults: A trains faster early"; the id itself where none is given."""
    base = key.removeprefix("ablation-")
    if base != key and base in NAMES:
        data, _, rest = NAMES[base].partition(":")
        return f"{data} with the authors' defaults:{rest}"
    return NAMES.get(key, key)


def reads_arms(runs, key: str) -> list[str]:
    """The stored results that claim ``key`` (its id in ``claims.toml``) compares, as its registry
    entry's ``reads`` names them (``"mnist-dose-*"`` for every dose level stored), in stored order."""
    import fnmatch

    patterns = claims.get(f"{CHAPTER}/{key}").reads
    return [n for n in runs.rows if any(fnmatch.fnmatch(n, p) for p in patterns)]


def seeds_at_bar(runs, name: str, bar: float = stats.TRAINED) -> tuple[int, int]:
    """How many seeds of the stored result ``name`` reach ``bar`` (the book's usual 0.95 by default)
    in final accuracy on their own training-distribution data, and how many seeds it has."""
    final = np.asarray(runs.arrays(name)["final_train"])
    return int((final >= bar).sum()), len(final)


def under_bar(runs, experiment: str = "mnist", bar: float = stats.TRAINED) -> dict[str, Verdict]:
    """A sensitivity reading, not the verdict of any registered claim: the verdict each claim of
    ``experiment`` decided in this process (:func:`modlib.claims.decide`) would reach if "trained"
    meant every seed of every arm it compares at ``bar`` (the book's usual 0.95, :data:`modlib.stats.TRAINED`)
    instead of this chapter's registered :data:`TRAINED`. The rule itself (:func:`modlib.stats.verdict`)
    is applied to the recorded interval with that one condition changed; nothing is recorded."""
    out = {}
    for full_key, d in claims.decisions(CHAPTER).items():
        key = full_key.split("/", 1)[1]
        if not (key.startswith(f"{experiment}-") or key.startswith(f"ablation-{experiment}-")):
            continue
        c = claims.get(full_key)
        arms = reads_arms(runs, key)
        ok = bool(arms) and all(np.equal(*seeds_at_bar(runs, n, bar)) for n in arms)
        if d.conditions.get("reason"):
            out[key] = Verdict(UNDECIDED, d.conditions["reason"])
            continue
        out[key] = stats.verdict(d.low, d.high, units=d.units, estimate=d.estimate, trained=ok and d.conditions["trained"],
                                 controls=d.conditions["controls"], measurable=d.conditions["measurable"],
                                 **c.rule_arguments())
    return out
