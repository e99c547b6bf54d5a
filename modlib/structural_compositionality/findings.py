"""What chapter 5's stored results show (notebooks/structural_compositionality.ipynb): the table of
every subnetwork found (:func:`structure_table`) and the page's statements (:func:`structural`),
beside the paper's numbers (:data:`LEPORI`), computed in one place so that the page's prose and the
claims tests (``tests/test_claims.py``) say the same thing at every profile.
"""

from __future__ import annotations

import numpy as np

from dataclasses import dataclass, replace

from modlib import claims, stats
from modlib.plots import count
from modlib.structural_compositionality import draws
from modlib.stats import CLEAR, Finding, mean_pm

CHAPTER = "structural_compositionality"


def _key(name: str) -> str:
    """The registry's key of the statement ``name`` ("inside-contact/inside/ablation" ->
    "structural_compositionality/inside-contact-inside-ablation"; modlib/structural_compositionality/claims.toml)."""
    return f"{CHAPTER}/{name.replace('/', '-')}"


# Lepori et al. (2023), from the authors' result files (mlepori1/Compositional_Subnetworks, results.csv
# per base model and mask; the heat maps of their figures): (subnetwork target, other, ablated target,
# other) per (rule, subroutine) of their ResNet-50s and BERT-small trained from scratch, means of 9 runs
# (3 base models x 3 mask seeds). Inside-Contact: the 6 runs of the two base models the authors keep
# (their configs list the third, which never learned contact, as failed); all 9 give inside
# (0.95, 0.23, 0.71, 0.56) and contact (0.96, 0.37, 0.50, 0.80). Not every subroutine passes the
# ablation test in the paper either: Number-Contact's number and scratch BERT's verb show none.
LEPORI = {("inside-contact", "inside"): (0.99, 0.21, 0.63, 0.74),
          ("inside-contact", "contact"): (0.98, 0.45, 0.64, 0.71),
          ("number-contact", "contact"): (1.00, 0.45, 0.55, 0.87),
          ("number-contact", "number"): (0.99, 0.43, 0.55, 0.56),
          ("inside-number", "inside"): (1.00, 0.40, 0.39, 0.57),
          ("inside-number", "number"): (1.00, 0.46, 0.73, 0.85),
          ("sv-plural", "subject"): (1.00, 0.45, 0.62, 0.93),
          ("sv-plural", "verb"): (0.98, 0.41, 0.76, 0.76)}
GATE_TARGET = 0.9  # the paper's: a subnetwork must reach this on its target (structural_compositionality.GATE)
LOWER = 0.1  # "clearly lower": the subnetwork's other-subroutine accuracy this far below its target's


def structure_table(runs):
    """One row per (rule, base model, subroutine, mask seed) of chapter 5's stored results
    (:class:`modlib.structural_compositionality.StructureRuns`): the subnetwork's accuracy on its own
    mask-training distribution (``own``), on the target and the other subroutine's ablation test set
    (``sub_*``), the ablated model's (``abl_*``), the re-initialising ablation's (``reinit_*``), a
    random subnetwork's of the same size (``random_*``), and the kept fraction. Where the results
    record them (issue 31): the model with a random set of the subnetwork's size per layer removed
    (``rand_abl_*``), whether the mask's kept share converged (``converged``), the chosen multiple
    of lambda (``lam``), and the overlap (intersection over union) of the subroutine's masks from
    mask seeds 0 and 1 (``seed_iou``, the reference for overlap; nan with one seed)."""
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
                                    ("random", "random"), ("random_complement", "rand_abl")):
                    row[f"{label}_target"], row[f"{label}_other"] = run.get(mode, (np.nan, np.nan))
                row.update(converged=run.get("converged", np.nan), lam=found.get("chosen", {}).get("lam", np.nan),
                           seed_iou=(m.get("seed_overlap") or {}).get(sub, np.nan))
                out.append(row)
    return pd.DataFrame(out)


CHANCE = 0.25  # one odd panel of four (structural_compositionality.CHANCE)
CEILING = 0.95  # both arms at or above this: the difference cannot be measured there
FLOOR = CHANCE + 0.1  # both arms at or below this: likewise


def near_cut(value: float) -> str:
    """An accuracy as the page prints it: two decimals, three where two would round it onto a cut the
    rule applies (:data:`GATE_TARGET`, :data:`CEILING`, :data:`FLOOR`), so that a reader can tell on
    which side it lies (0.947 reads under the ceiling of 0.95, 0.950 at it)."""
    two = f"{value:.2f}"
    return f"{value:.3f}" if two in {f"{c:.2f}" for c in (GATE_TARGET, CEILING, FLOOR)} else two


def _by_model(rows, column: str) -> np.ndarray:
    """Per base model, the mean of ``column`` over its mask seeds: ``[models]`` (mask seeds of one
    base model are not independent units)."""
    return rows.groupby("model")[column].mean().to_numpy()


def degenerate(kept) -> bool:
    """Whether any mask keeps (almost) nothing or (almost) everything of the masked weights (the
    paper's sparsest masks keep 0.07 %: :data:`PAPER_KEPT`)."""
    kept = np.asarray(kept, dtype=float)
    return bool(kept.size and ((kept <= 1e-4).any() or (kept >= 0.999).any()))


def measurable(a: np.ndarray, b: np.ndarray) -> bool:
    """Not both arms at the floor (near chance) or both at the ceiling."""
    a, b = np.mean(a), np.mean(b)
    return not ((a >= CEILING and b >= CEILING) or (a <= FLOOR and b <= FLOOR))


def paper_effects(rule: str, sub: str) -> dict[str, tuple[float, str, str]]:
    """What each claim about ``(rule, sub)`` is tested against: per effect (``subnetwork``: target
    minus other, margin :data:`LOWER`; ``ablation``: ablated other minus target, margin
    :data:`CLEAR`) a tuple ``(value, source, words)``. Where :data:`LEPORI` reports the effect at
    least its margin, the paper's difference (``source`` ``"the paper's"``); where the paper does not
    report the subroutine, or its own difference is smaller than the margin or of the other sign,
    the margin stands in (``"the stated margin of"``). ``words`` say which, for the page. The
    verdicts take the same numbers from the registry (``claims.toml``'s ``size`` and ``margin``);
    this function words them."""
    sub_t, sub_o, abl_t, abl_o = LEPORI.get((rule, sub), (np.nan,) * 4)
    out = {}
    for key, v, margin in (("subnetwork", sub_t - sub_o, LOWER), ("ablation", abl_o - abl_t, CLEAR)):
        if not np.isfinite(v):
            out[key] = (margin, "the stated margin of", f"the paper does not report this subroutine; margin {margin:+.2f}")
        elif v < margin:
            out[key] = (margin, "the stated margin of",
                        f"the paper's own {v:+.2f} is {'of the other sign' if v < 0 else 'below the margin'}; "
                        f"margin {margin:+.2f}")
        else:
            out[key] = (round(float(v), 2), "the paper's", f"the paper {v:+.2f}")
    return out


def base_models(runs) -> list[dict]:
    """The stored runs' base models, one dict each: rule, model (seed), trained, searched, task
    (accuracy on the task's test set)."""
    return [{"rule": r.metrics["rule"], "model": r.metrics["seed"], "trained": r.metrics["trained"],
             "searched": r.metrics["searched"], "task": r.metrics["base"]["task"]} for r in runs.rows.values()]


def structural(runs) -> dict[str, Finding]:
    """Chapter 5's statements (:func:`structural_from` on the stored runs' table and base models,
    then :func:`density_from`)."""
    table = structure_table(runs)
    return {**structural_from(table, base_models(runs), runs.settings.base_gate), **density_from(table)}


# The share of masked weights the paper's masks keep (the authors' L0_Reporting files; issue 31), by
# modality: ResNet-50s, BERT-small trained from scratch (chapter 6 has the pretrained BERT's)
PAPER_KEPT = {"vision": (0.004, 0.125), "language": (0.004, 0.10)}
TARGET_KEPT = 0.05  # the book's aim for its masks: at most this share kept (the paper's median: about 1 %)
# Three of the authors' L0_Reporting files for BERT-small trained from scratch on subject-verb agreement
# (plural), as the researcher review of issue 53 read them: the share of the masked weights kept
AUTHORS_KEPT = {"sv-plural": (0.0054, 0.0067, 0.0168)}


def density_against_authors(table, rule: str = "sv-plural") -> str:
    """How dense ``rule``'s trained masks are (:func:`structure_table`'s rows) against the authors'
    own masks for that rule (:data:`AUTHORS_KEPT`): the median kept share, its range per base model
    and subroutine (mask seeds averaged), and how many times the authors' largest and smallest kept
    share the median is. "" where the rule has no trained rows or the authors' files are not read."""
    if rule not in AUTHORS_KEPT or table.empty:
        return ""
    t = table[table["trained"] & (table["rule"] == rule)]
    if t.empty:
        return ""
    per = t.groupby(["subroutine", "model"])["kept"].mean()
    med = float(t["kept"].median())
    authors = AUTHORS_KEPT[rule]
    return (f"a median {med:.1%} of the masked weights (per base model and subroutine {per.min():.1%} to "
            f"{per.max():.1%}), {med / max(authors):.1f} to {med / min(authors):.1f} times the authors' own "
            f"masks for this rule ({', '.join(f'{a:.2%}' for a in authors)} in three of the result files "
            f"the authors released, BERT-small from scratch)")


def pct(kept) -> str:
    """Kept shares as a page prints them: ``"2.31 ± 0.40 %"`` (mean ± sd over runs)."""
    kept = 100 * np.asarray(kept, dtype=float)
    kept = kept[np.isfinite(kept)]
    return f"{kept.mean():.2f} ± {kept.std():.2f} %" if kept.size else "no mask"


def paper_kept(rule: str) -> tuple[float, float]:
    """The range of the paper's kept shares for ``rule``'s modality (:data:`PAPER_KEPT`)."""
    from modlib.structural_compositionality.tasks import VISION

    return PAPER_KEPT["vision" if rule in VISION else "language"]


def density_from(table, suffix: str = "") -> dict[str, Finding]:
    """What the masks' density says, per (rule, subroutine) of :func:`structure_table`'s trained
    rows, keyed ``"{rule}/{subroutine}/{what}"``:

    ``density``          a check (no verdict): the masks keep, on average over runs, a share of the
                         masked weights within the paper's range (:func:`paper_kept`) and none
                         keeps nothing or everything; the text gives how many converged (made
                         only without ``suffix``);
    ``random_ablation``  removing the subnetwork hurts its target subroutine more than removing as
                         many weights per layer at random: random-ablated minus ablated accuracy on
                         the target, paired t over base models (margin :data:`CLEAR`), where the
                         results record the random ablation; keyed ``".../random_ablation{suffix}"``
                         and decided for the registered claim of that name.
    """
    out = {}
    trained = table[table["trained"]] if not table.empty else table
    for (rule, sub), t in trained.groupby(["rule", "subroutine"], sort=False):
        low, high = paper_kept(rule)
        kept = t["kept"].to_numpy(dtype=float)
        converged = int((t["converged"] == True).sum()) if "converged" in t else 0  # noqa: E712 (nan: not recorded)
        masks_ok = not degenerate(kept)
        if not suffix:  # the text states the condition checked, then the book's aim beside it
            within = low <= kept.mean() <= high
            aim = "meeting" if kept.mean() <= TARGET_KEPT else "above"
            out[f"{rule}/{sub}/density"] = stats.Claim(
                f"{rule}/{sub}/density", bool(masks_ok and within),
                f"{rule}, {sub}: the masks keep {pct(kept)} of the masked weights, "
                f"{'within' if within else 'outside'} the paper's {low:.1%} to {high:.1%} (the condition "
                f"checked, with no mask keeping nothing or everything); {aim} the book's aim of at most "
                f"{TARGET_KEPT:.0%} (runs from {kept.min():.2%} to {kept.max():.2%}; {converged} of "
                f"{len(kept)} converged)"
                + (f"; the authors' own for this rule {', '.join(f'{a:.2%}' for a in AUTHORS_KEPT[rule])}"
                   if rule in AUTHORS_KEPT else "")
                + (" (a mask that keeps nothing or everything is no subnetwork)" if not masks_ok else "")
                + _every_searched(t) + ".")
        if "rand_abl_target" not in t or t["rand_abl_target"].isna().any():
            continue
        col = lambda c: _by_model(t, c)  # noqa: E731
        name = f"{rule}/{sub}/random_ablation{suffix}"
        v = claims.decide(_key(name), stats.paired(col("rand_abl_target"), col("abl_target"), unit="base model"),
                          controls=masks_ok, measurable=measurable(col("rand_abl_target"), col("abl_target")))
        out[name] = claims.statement(
            v,
            f"{rule}, {sub}: removing as many weights per layer at random leaves {mean_pm(t['rand_abl_target'])} "
            f"on {sub} problems and {mean_pm(t['rand_abl_other'])} on the other's, against "
            f"{mean_pm(t['abl_target'])} and {mean_pm(t['abl_other'])} without the subnetwork ({pct(kept)} kept"
            f"{_every_searched(t)}); random-ablated minus ablated, on {sub} problems:")
    return out


def _missed_gate(rows) -> list:
    """The base models among ``rows`` (one subnetwork's trained rows of :func:`structure_table`)
    whose masks missed the selection gate (none where the rows do not record the gate)."""
    if "passed_gate" not in rows:
        return []
    return sorted(set(rows["model"]) - set(rows[rows["passed_gate"] == True]["model"]))  # noqa: E712


def _every_searched(rows) -> str:
    """Where a statement counts every searched base model of ``rows`` (one subnetwork's trained
    rows) and the selection gate left some out of the verdict table: words that say so."""
    left = _missed_gate(rows)
    if not left:
        return ""
    n = rows["model"].nunique()
    return (f"; all {n} searched base models, base model {', '.join(map(str, left))} included, whose masks "
            f"missed the selection gate: the verdict table's other rows count {n - len(left)}")


def gate_words(table, rule: str) -> str:
    """For the check of ``rule``'s base models: which base models the selection gate on their masks
    then leaves out of the verdicts, per subroutine, and how many the verdicts count ("" where it
    leaves none out)."""
    if table.empty:
        return ""
    t = table[(table["rule"] == rule) & table["trained"]]
    groups = {}  # (left out, counted) -> subroutines
    for sub, rows in t.groupby("subroutine", sort=False):
        left = _missed_gate(rows)
        if left:
            groups.setdefault((tuple(left), rows["model"].nunique() - len(left)), []).append(sub)
    said = [f"base model{'s' * (len(left) > 1)} {', '.join(map(str, left))} out of the {' and '.join(subs)} "
            f"verdicts, which count {n}" for (left, n), subs in groups.items()]
    return f"; the selection gate on their masks then leaves {'; '.join(said)}" if said else ""


def structural_from(table, bases: list[dict], base_gate: float, suffix: str = "") -> dict[str, Finding]:
    """Chapter 5's statements from :func:`structure_table`'s ``table`` and the base models
    (``bases``: rule, model, trained, searched, task accuracy), keyed ``"{rule}/{subroutine}/{what}"``
    (and ``"{rule}/base"``), each claim decided by the book's rule (:func:`modlib.stats.verdict`)
    over base models (mask seeds averaged within each), paired t intervals:

    ``subnetwork``  the subnetwork does its target subroutine and not the other: target minus
                    other (margin :data:`LOWER`); needs the subnetwork at 0.9 on its target;
    ``ablation``    removing the subnetwork hurts the target subroutine more than the other:
                    ablated other minus target (margin :data:`CLEAR`);
    ``reinit``      the same with the removed weights re-initialised instead of zeroed;
    ``random``      the found subnetwork beats a random one of the same size per layer on the
                    target (margin :data:`LOWER`);
    ``untrained``   the ablation effect needs training: trained base models' effect minus the
                    untrained networks' (Welch t over base models).

    Every claim needs its base models trained (task accuracy at least ``base_gate``), masks that
    keep neither nothing nor everything, and a difference not at a floor or ceiling in both arms;
    one base model, or fewer than two untrained ones, gives "cannot be decided here". Each claim is
    the registered claim of its name (``modlib/structural_compositionality/claims.toml``), keyed
    with ``suffix`` after its kind (``"-without-0"``: :func:`without_base_model`); the ``base``
    checks are made only without it.
    """
    out = {}
    if table.empty:
        return out
    task = {(b["rule"], b["model"], b["trained"]): b["task"] for b in bases}
    for rule in dict.fromkeys(table["rule"]):
        trained_bases = [b for b in bases if b["rule"] == rule and b["trained"]]
        passed = [b for b in trained_bases if b["searched"] and b["task"] >= base_gate]
        acc = np.array([b["task"] for b in trained_bases])
        if not suffix:
            out[f"{rule}/base"] = stats.Claim(
                f"{rule}/base", len(passed) == len(trained_bases) > 0,
                f"{rule}: base models reach {mean_pm(acc)} on the task's test set; {len(passed)} of "
                f"{len(trained_bases)} pass {base_gate} and are searched{gate_words(table, rule)}.")
        for sub in dict.fromkeys(table[table["rule"] == rule]["subroutine"]):
            rows = table[(table["rule"] == rule) & (table["subroutine"] == sub)]
            trained, u = rows[rows["trained"]], rows[~rows["trained"]]
            t = trained[trained["passed_gate"] == True]  # noqa: E712 (the selection gate, on validation)
            name, paper = f"{rule}/{sub}", paper_effects(rule, sub)  # the paper's numbers, in words
            if trained.empty:
                continue
            left_out = trained["model"].nunique() - t["model"].nunique()
            gated = (f"; {left_out} base model{'s' if left_out > 1 else ''} whose masks missed the selection "
                     "gate left out" if left_out else "")
            if t.empty:  # no unit counts: every claim below is read off all of them and cannot be decided
                t, gated = trained, "; no base model's masks passed the selection gate"
            fit = all(task.get((rule, m, True), 0) >= base_gate for m in dict.fromkeys(t["model"]))
            masks_ok = not degenerate(t["kept"]) and bool((t["passed_gate"] == True).all())  # noqa: E712
            kept = f"{mean_pm(t['kept'])} of the masked weights kept{gated}"
            models = t["model"].nunique()
            col = lambda c: _by_model(t, c)  # noqa: E731
            gate = bool(t["sub_target"].mean() >= GATE_TARGET)
            random = claims.decide(
                _key(f"{name}/random{suffix}"), stats.paired(col("sub_target"), col("random_target"), unit="base model"),
                trained=fit, controls=masks_ok, measurable=measurable(col("sub_target"), col("random_target")))
            words = paper["subnetwork"][2]
            v = claims.decide(
                _key(f"{name}/subnetwork{suffix}"), stats.paired(col("sub_target"), col("sub_other"), unit="base model"),
                trained=fit, controls=masks_ok and gate and random.reproduced,
                measurable=measurable(col("sub_target"), col("sub_other")))
            out[f"{name}/subnetwork{suffix}"] = claims.statement(
                v,
                f"{rule}, {sub} subnetwork ({len(t)} runs over {count(models, 'base model')}, {kept}): "
                f"{mean_pm(t['sub_target'])} on {sub} problems, {mean_pm(t['sub_other'])} on the other "
                f"subroutine's (the gate on the target: {GATE_TARGET}, {'met' if gate else 'missed'}; "
                f"better than a random subnetwork of its size: {'yes' if random.reproduced else 'not shown'}); "
                f"target minus other ({words}):")
            for key, prefix, what in (("ablation", "abl", "Removing it (zeroed)"),
                                      ("reinit", "reinit", "Removing it (re-initialised)")):
                words = paper["ablation"][2]
                v = claims.decide(
                    _key(f"{name}/{key}{suffix}"),
                    stats.paired(col(f"{prefix}_other"), col(f"{prefix}_target"), unit="base model"),
                    trained=fit, controls=masks_ok,
                    measurable=measurable(col(f"{prefix}_other"), col(f"{prefix}_target")))
                out[f"{name}/{key}{suffix}"] = claims.statement(
                    v,
                    f"{rule}, {sub}: {what} leaves {mean_pm(t[f'{prefix}_target'])} on {sub} problems and "
                    f"{mean_pm(t[f'{prefix}_other'])} on the other subroutine's ({kept}); other minus target "
                    f"({words}):")
            out[f"{name}/random{suffix}"] = claims.statement(
                random,
                f"{rule}, {sub}: a random subnetwork of the same size per layer ({kept}) gets "
                f"{mean_pm(t['random_target'])} on {sub} problems against the found one's "
                f"{mean_pm(t['sub_target'])}; found minus random:")
            if not u.empty:
                effect_t = col("abl_other") - col("abl_target")
                effect_u = _by_model(u, "abl_other") - _by_model(u, "abl_target")
                v = claims.decide(_key(f"{name}/untrained{suffix}"), stats.unpaired(effect_t, effect_u, unit="base model"),
                                  trained=fit, controls=masks_ok and not degenerate(u["kept"]))
                shows = u["sub_target"].mean() >= GATE_TARGET and effect_u.mean() >= CLEAR
                out[f"{name}/untrained{suffix}"] = claims.statement(
                    v,
                    f"{rule}, {sub}, untrained network ({len(u)} runs over {u['model'].nunique()} base model"
                    f"{'s' if u['model'].nunique() > 1 else ''}, {mean_pm(u['kept'])} of the masked weights kept"
                    + ((": masks that keep nothing are no control" if u["kept"].mean() < 0.5 else
                        ": masks that keep everything are no control") if degenerate(u["kept"]) else "")
                    + "): " + ("degenerate, not a pass" if degenerate(u["kept"]) else
                               "both tests pass, as they should not" if shows else "no subnetwork passes both tests")
                    + "; "
                    f"the subnetwork gets {mean_pm(u['sub_target'])} on {sub} problems and {mean_pm(u['sub_other'])} on the "
                    f"other's; ablated, {mean_pm(u['abl_target'])} and {mean_pm(u['abl_other'])} (other minus target "
                    f"{effect_u.mean():+.2f}). The ablation effect needs training (trained minus untrained):")
    return out


TUNED_ON = 0  # the base model the penalty multiples were chosen on (benchmarks/mask_density_search.csv)
WITHOUT = f"-without-{TUNED_ON}"  # the suffix of the claims decided without it


def without_tuned(table, bases: list[dict]):
    """``table`` (:func:`structure_table`) and ``bases`` (:func:`base_models`) without the trained
    base model :data:`TUNED_ON` (the untrained networks stay: none was tuned)."""
    keep = lambda m, trained: not (trained and m == TUNED_ON)  # noqa: E731
    return (table[[keep(m, t) for m, t in zip(table["model"], table["trained"])]],
            [b for b in bases if keep(b["model"], b["trained"])])


def without_base_model(runs) -> dict[str, Finding]:
    """Chapter 5's claims again without base model :data:`TUNED_ON` (issue 50): the penalty
    multiples were chosen on it with its test outcomes in view (``benchmarks/mask_density_search.csv``),
    so every verdict over trained base models is also decided over the others, as the registered
    post hoc claims ``"{rule}/{sub}/{kind}-without-0"``. The untrained networks stay (none was tuned)."""
    table, bases = without_tuned(structure_table(runs), base_models(runs))
    found = {**structural_from(table, bases, runs.settings.base_gate, WITHOUT), **density_from(table, WITHOUT)}
    lead = f"Without base model {TUNED_ON} (the penalty multiples were chosen on it): "
    return {k: replace(f, text=lead + f.text) for k, f in found.items()}


# the columns of :func:`verdict_table`: claim key -> heading
VERDICTS = {"subnetwork": "test 1, own better than other (“fails the other”: see ¹)", "ablation": "test 2: removed",
            "random": "vs random subnetwork",
            "random_ablation": "vs random removal", "reinit": "re-initialised", "untrained": "vs untrained"}

# a claim's statement in plain words, for the tables that list claims (:func:`claim_words`)
RULE_WORDS = {"sv-plural": "subject-verb agreement", "inside-contact": "Inside-Contact",
              "number-contact": "Number-Contact"}
CLAIM_WORDS = {
    "subnetwork": "test 1: alone, it does its own subroutine better than the other",
    "ablation": "test 2: removing it costs its own subroutine more than the other",
    "reinit": "test 2 with its weights re-drawn instead of zeroed",
    "random": "alone, it beats a random subnetwork of its size on its own subroutine",
    "untrained": "test 2's effect is larger than in an untrained network",
    "random_ablation": "removing it costs its own subroutine more than removing as many random weights",
    "draws-target": "alone, it beats 20 random subnetworks of its size on its own subroutine",
    "draws-other": "alone, it does the other subroutine worse than 20 random subnetworks of its size",
    "untrained-matched": "test 2's effect is larger than in untrained networks whose masks are as dense",
    "subnetwork-untrained-matched": "test 1's effect is larger than in untrained networks whose masks are as dense",
    "second-found": "without it, a second mask finds another that beats a random subnetwork of its size",
    "second-removal": "without it, removing that second subnetwork too costs its subroutine more than random weights"}


# where a claim is read, by an affix of its name's last part: (affix, a prefix?, the words added)
WHERE = (("-argmax", False, ", with the authors' choice of masks"),
         (WITHOUT, False, f", without base model {TUNED_ON}"),
         ("-wide", False, ", the wider search for the penalty"),
         ("-fresh", False, ", on the base models trained after their registration"))  # FRESH


def claim_words(name: str, says: dict[str, str] | None = None, where=WHERE, otherwise: str = "") -> str:
    """A claim of the chapter, by its registered name (``"inside-contact/inside/ablation"``), in plain
    words as a reader's table lists it: the subnetwork and what the claim says of it (``says``,
    default :data:`CLAIM_WORDS`), and where it is read (the first of ``where`` whose affix the name
    carries, else ``otherwise``), e.g. "inside subnetwork (Inside-Contact): test 2: removing it costs
    its own subroutine more than the other, with the authors' choice of masks"; a name it does not
    know, unchanged. Chapter 6 calls it with its own claims and affixes."""
    parts = name.split("/")
    if len(parts) != 3:
        return name
    rule, sub, kind = parts
    said = otherwise
    for affix, prefix, words in where:
        if kind.startswith(affix) if prefix else kind.endswith(affix):
            kind, said = (kind.removeprefix(affix) if prefix else kind.removesuffix(affix)), words
            break
    says = CLAIM_WORDS if says is None else says
    if kind not in says:
        return name
    return f"{sub} subnetwork ({RULE_WORDS.get(rule, rule)}): {says[kind]}{said}"


def verdict_table(table, found: dict[str, Finding], suffix: str = "") -> list[dict[str, str]]:
    """Every verdict of the page, once: one row per (rule, subroutine) of ``table``'s trained runs
    (:func:`structure_table`) with how many base models' masks passed the selection gate (the units
    the verdicts count), their masks' kept share, the subnetwork's and the ablated model's
    accuracies (target / other, means over those runs) and the mark of each claim of ``found``
    (:func:`structural`) in :data:`VERDICTS` ("–" where the claim was not made), keyed with
    ``suffix`` (:data:`WITHOUT` for :func:`without_base_model`'s, with ``table`` without that base
    model). A test-1 ✓ gets :data:`UNSHOWN_OTHER` where a random subnetwork of the masks' size also
    falls under the gate on the other subroutine."""
    rows = []
    trained = table[table["trained"]]
    for (rule, sub), every in trained.groupby(["rule", "subroutine"], sort=False):
        t = every[every["passed_gate"] == True]  # noqa: E712 (the units the verdicts count)
        row = {"rule": rule, "subroutine": sub,
               "base models": f"{t['model'].nunique()} of {every['model'].nunique()}", "kept": pct(t["kept"]).replace(" ", "\u00a0"),  # one line in a narrow column
               "alone: target / other": f"{t['sub_target'].mean():.2f} / {t['sub_other'].mean():.2f}",
               "removed: target / other": f"{t['abl_target'].mean():.2f} / {t['abl_other'].mean():.2f}"}
        for key, heading in VERDICTS.items():
            f = found.get(f"{rule}/{sub}/{key}{suffix}")
            row[heading] = (f.mark or f.outcome) if f is not None else "–"  # the book's own: "holds"
        f = found.get(f"{rule}/{sub}/subnetwork{suffix}")
        if f is not None and f.outcome == stats.REPRODUCED and t["random_other"].mean() < GATE_TARGET:
            row[VERDICTS["subnetwork"]] += UNSHOWN_OTHER  # failing the other is no more than a random one's
        rows.append(row)
    return rows


# beside a test-1 mark where a random subnetwork of the masks' size also falls under the gate on the
# other subroutine: "fails the other" is then not shown to be more than a random subnetwork's
UNSHOWN_OTHER = "¹"


def registered_then_now(cid: str, words: dict[str, str]) -> tuple[str, str]:
    """The verdict on chapter 5's registered claim ``cid`` (``"sv-plural-subject-draws-target"``) as
    first registered and as it now stands, in the words for its kind
    (:func:`modlib.claims.outcome_words`), for a page that gives both (issue 57);
    ``words[cid]`` twice (the page's words, e.g. :data:`NOT_RUN`) where the claim was not decided
    on stored results here or never amended."""
    key = _key(cid)
    made, first = claims.decisions(CHAPTER).get(key), claims.registered_words(key)
    if made is None or first is None or words[cid] == NOT_RUN:
        return words[cid], words[cid]
    return first, claims.outcome_words(made.outcome, claims.get(key).own)


def converged_words(table) -> str:
    """How many of the trained masks of ``table`` (:func:`structure_table`; none: "no trained
    mask is stored") had stopped shrinking by the end of their training, in words, naming those
    still shrinking; a mask whose run did not record it (``converged`` NaN) is counted as not
    stopped but not named."""
    masks = table[table["trained"]] if len(table) else table
    if not len(masks):
        return "no trained mask is stored"
    done = masks["converged"].eq(True)
    still = masks[masks["converged"].eq(False)]
    named = "; ".join(f"{r.rule} {r.subroutine}, base model {r.model}, mask seed {r.mask_seed}"
                      for r in still.itertuples())
    return (f"{int(done.sum())} of {len(done)} trained masks had stopped shrinking"
            + (f" (still shrinking: {named})" if named else ""))


def table_legend(found: dict[str, Finding] | None = None, untrained: bool = True) -> str:
    """The one line under the verdict table (:func:`verdict_table`): what each mark means, from
    :data:`modlib.stats.MARKS`, what the rows of the paper's two controls test, what *holds* asserts
    in the two random rows (the book's own hypotheses), what the row "base models" counts, and what
    :data:`UNSHOWN_OTHER` beside a test-1 mark says; with ``found`` (the claims the table marks),
    how many of them were written down after their results were seen (:func:`modlib.claims.written`),
    since a mark in a table cell cannot carry the "post hoc" tag that their statements do.
    ``untrained=False``: for a table without the row "vs untrained" (:func:`fresh_table`), whose
    words it leaves out."""
    paper = (f"test 2 with the removed weights given fresh random values instead of zeros; \"{VERDICTS['untrained']}\": "
             "test 2's effect, larger than in a never-trained copy of the network (both controls of the paper, "
             "described under Controls)" if untrained else
             "test 2 with the removed weights given fresh random values instead of zeros (a control of the paper, "
             "described under Controls)")
    marks = " · ".join(f"{stats.MARKS[o]} {o}" for o in (stats.REPRODUCED, stats.NOT_REPRODUCED, stats.UNDECIDED))
    return (f"{marks} · – not made. \"{VERDICTS['reinit']}\": {paper}. In the two "
            f"random rows, the book's own hypotheses, *{stats.HOLDS}* means: "
            f"the found subnetwork alone beats a random one of its size on its target by at least {LOWER:g} "
            f"(\"{VERDICTS['random']}\"); removing it costs its target at least {CLEAR:g} more than removing as "
            f"many random weights (\"{VERDICTS['random_ablation']}\", over every searched base model). \"base "
            f"models\", k of n: of the n base models searched, the k whose masks passed the selection gate "
            f"({GATE_TARGET:g} alone on validation problems drawn like the mask-training set), the units of the other "
            "marks. "
            f"\"{UNSHOWN_OTHER}\" beside a {stats.MARKS[stats.REPRODUCED]} in row \"test 1\": that "
            f"{stats.MARKS[stats.REPRODUCED]} decides only that the subnetwork alone does its own subroutine better than "
            "the other (the paper's score: own minus other); the other half of the paper's test 1, that it fails the "
            f"other, is not read there, since a random subnetwork of the masks' size also scores under {GATE_TARGET:g} "
            f"on the other subroutine (\"{VERDICTS['random']}\" tests the first half against a random one). A "
            f"mark in row \"test 1\" is made only where the subnetwork scores at least {GATE_TARGET:g} on its own "
            f"subroutine and row \"{VERDICTS['random']}\" holds; otherwise it reads ?."
            + _post_hoc_words(found))


def _post_hoc_words(found: dict[str, Finding] | None) -> str:
    """For :func:`table_legend`: how many of the table's marked claims (``found``) were written down
    after their results were seen, which the statements below mark "post hoc" (:func:`modlib.claims.post_hoc`)
    and the claims ledger dates; "" where none was (or ``found`` is not given)."""
    keys = [f.verdict.claim for f in (found or {}).values() if getattr(f, "verdict", None) is not None and f.verdict.claim]
    after = sum(bool(claims.post_hoc(k)) for k in keys)
    if not after:
        return ""
    which = f"all {len(keys)}" if after == len(keys) else f"{after} of the {len(keys)}"
    return (f" Marks of claims written down after their results were seen ({which} here) cannot carry the tag in "
            f"this table: the statements in the appendix mark each {claims.POST_HOC}, and the claims ledger dates each.")


def without_convergence_rule(runs) -> dict[str, Finding]:
    """The ablation claim again with the authors' plain selection (the configuration of highest
    quality, the first in grid order on a tie, converged or not), where the book's rule that a
    configuration must have converged changed a choice: per (rule, subroutine), keyed
    ``"{rule}/{sub}/ablation-argmax"``, a claim over the trained base models whose search passed the
    gate, from the seed-0 search masks' test-set results (the only masks stored for a configuration
    that was not chosen; the chosen configuration's are read the same way, so the two are alike)."""
    out = {}
    effects = {}
    for r in runs.rows.values():
        m = r.metrics
        if not m["trained"]:
            continue
        for sub, f in (m.get("subroutines") or {}).items():
            if not (f.get("grid") and f["passed_gate"]):
                continue
            best = max(f["grid"], key=lambda c: c["quality"])  # max keeps the first of equals
            key = lambda c: {k: c[k] for k in f["chosen"]}  # noqa: E731
            chosen = next(c for c in f["grid"] if key(c) == f["chosen"])
            effects.setdefault((m["rule"], sub), []).append(
                (m["seed"], key(best) != f["chosen"], best, chosen))
    for (rule, sub), rows in effects.items():
        if not any(changed for _, changed, _, _ in rows):
            continue
        argmax = np.array([b["test"]["complement"][1] - b["test"]["complement"][0] for _, _, b, _ in rows])
        ablated = [b["test"]["complement"] for _, _, b, _ in rows]
        words = paper_effects(rule, sub)["ablation"][2]
        v = claims.decide(_key(f"{rule}/{sub}/ablation-argmax"),
                          stats.paired(argmax, np.zeros_like(argmax), unit="base model"))
        changed = ", ".join(f"base model {seed}: ×{c['lam']:g}, {c['kept']:.2%} kept, instead of ×{ch['lam']:g}, "
                            f"{ch['kept']:.2%}" for seed, moved, c, ch in rows if moved)
        out[f"{rule}/{sub}/ablation-argmax"] = claims.statement(  # its text ends with the verdict
            v,
            f"{rule}, {sub} masks chosen as the authors' code chooses, converged or not ({changed}): "
            f"removing them leaves {', '.join(f'{a:.2f} / {b:.2f}' for a, b in ablated)} ({sub} / other, "
            f"per base model, the search's seed-0 masks); other minus target ({words}):")
    return out


def page_numbers(table) -> dict[str, str]:
    """The numbers chapter 5's prose quotes, per (rule, subroutine) of ``table``'s trained runs
    (:func:`structure_table`; those of base models whose masks passed the selection gate, the units
    of the verdicts and of :func:`verdict_table`, where any did), keyed ``"{rule}-{subroutine}-{what}"`` for the page to glue:
    ``kept`` (mean ± sd, %), ``alone`` (and ``alone-other``, the other alone), ``removed`` and ``reinit`` (the removed weights
    re-initialised) as target / other, means over runs,
    ``random`` and ``random-other`` (a random subnetwork of the same size on the target and on the
    other subroutine), ``random-removed`` (the
    target after removing as many random weights), ``removed-models`` (the ablated target per
    base model, mask seeds averaged), ``removed-pairs`` (the ablated target / other per base model), ``untrained``, ``untrained-other``, ``untrained-random`` and
    ``untrained-kept`` (the untrained network's subnetwork on the target and on the other subroutine,
    a random subnetwork of its size on the target, and its kept share)."""
    out = {}
    if table.empty:
        return out
    for (rule, sub), rows in table.groupby(["rule", "subroutine"], sort=False):
        t, u = rows[rows["trained"]], rows[~rows["trained"]]
        if (t["passed_gate"] == True).any():  # noqa: E712 (the units the verdicts count, as the table)
            t = t[t["passed_gate"] == True]  # noqa: E712
        key = f"{rule}-{sub}"
        if not t.empty:
            per_model = t.groupby("model")["abl_target"].mean()
            out |= {f"{key}-kept": pct(t["kept"]),
                    f"{key}-alone": f"{t['sub_target'].mean():.2f} / {t['sub_other'].mean():.2f}",
                    f"{key}-alone-other": f"{t['sub_other'].mean():.2f}",
                    f"{key}-removed": f"{t['abl_target'].mean():.2f} / {t['abl_other'].mean():.2f}",
                    f"{key}-random": f"{t['random_target'].mean():.2f}",
                    f"{key}-random-other": f"{t['random_other'].mean():.2f}",
                    f"{key}-reinit": f"{t['reinit_target'].mean():.2f} / {t['reinit_other'].mean():.2f}",
                    f"{key}-random-removed": f"{t['rand_abl_target'].mean():.2f}",
                    f"{key}-removed-models": ", ".join(near_cut(v) for v in per_model),
                    f"{key}-removed-pairs": ", ".join(
                        f"{near_cut(a)} / {near_cut(b)} (base model {m})"
                        for m, (a, b) in t.groupby("model")[["abl_target", "abl_other"]].mean().iterrows())}
        if not u.empty:
            out |= {f"{key}-untrained": f"{u['sub_target'].mean():.2f}", f"{key}-untrained-kept": pct(u["kept"]),
                    f"{key}-untrained-other": f"{u['sub_other'].mean():.2f}",
                    f"{key}-untrained-random": f"{u['random_target'].mean():.2f}"}
    return out


def layer_numbers(runs) -> dict[str, str]:
    """How much two masks overlap, as chapter 5's section on layers quotes it, per rule over its
    searched base models (:class:`~modlib.structural_compositionality.StructureRuns` ``runs``):
    ``"{rule}-{group}-ratio"``, the range over base models of the median, over the group's layers,
    of the two subroutines' seed-0 overlap (IoU) divided by the overlap two random masks of those
    sizes would have (groups: a ResNet's ``convolutions`` and ``head``, BERT's ``attention`` and
    ``feed-forward``); and ``"{rule}-seed-iou"``, the range of the overlap of one subroutine's masks
    from mask seeds 0 and 1 over the whole mask, the reference for overlap ("not measured" where the
    profile trains one mask seed, as ``default`` does)."""
    from modlib.structural_compositionality.figures import short_layer

    def group(layer: str) -> str:
        name = short_layer(layer)
        if name.startswith("L"):
            return "feed-forward" if "ffn" in name else "attention"
        return "head" if name.startswith("head") else "convolutions"

    ratios, seeds = {}, {}
    for r in runs.rows.values():
        m = r.metrics
        if not (m["trained"] and m.get("subroutines")):
            continue
        a, b = (r.arrays[f"kept-{sub}"][0] for sub in m["subroutines"])
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = r.arrays["overlap"] / (a * b / (a + b - a * b))
        groups = np.array([group(n) for n in m["overlap"]["layers"]])
        for g in dict.fromkeys(groups):
            ratios.setdefault((m["rule"], g), []).append(np.nanmedian(ratio[groups == g]))
        seeds.setdefault(m["rule"], []).extend(m["seed_overlap"].values())  # {} with one mask seed

    def span(values: list, digits: int) -> str:  # "not measured" where no run has the number
        values = [v for v in values if np.isfinite(v)]
        return f"{min(values):.{digits}f} to {max(values):.{digits}f}" if values else "not measured"

    out = {f"{rule}-{g}-ratio": span(v, 1) for (rule, g), v in ratios.items()}
    return out | {f"{rule}-seed-iou": span(v, 2) for rule, v in seeds.items()}


def sweep_numbers(sweeps: dict) -> dict[str, str]:
    """The density sweeps' points as chapter 5's prose quotes them (``sweeps``: rule -> stored
    metrics), keyed ``"sweep-{rule}-{subroutine}-x{multiple of lambda}-{what}"``: ``kept`` (%),
    ``alone`` (the found subnetwork, target / other), ``random`` (a random one of its size,
    target / other), ``removed`` (the model without the subnetwork, target / other), and
    ``alone-other`` and ``random-other`` (the other subroutine only: the two points
    :func:`figures.density_sweep` draws at that mask)."""
    out = {}
    for rule, m in sweeps.items():
        for p in m["points"]:
            key = f"sweep-{rule}-{p['subroutine']}-x{p['lam']:g}"
            out |= {f"{key}-kept": f"{p['kept']:.2%}",
                    f"{key}-alone": f"{p['hard'][0]:.2f} / {p['hard'][1]:.2f}",
                    f"{key}-random": f"{p['random'][0]:.2f} / {p['random'][1]:.2f}",
                    f"{key}-removed": f"{near_cut(p['complement'][0])} / {near_cut(p['complement'][1])}",
                    f"{key}-alone-other": f"{p['hard'][1]:.2f}", f"{key}-random-other": f"{p['random'][1]:.2f}"}
    return out


def read_rule() -> str:
    """The one rule, in plain words, for when each of the two tests can be read: the rule the verdict
    table's :data:`UNSHOWN_OTHER` (:func:`verdict_table`), the sweep's lines (:func:`sweep_findings`)
    and :func:`readable` apply (the gate :data:`GATE_TARGET`; for test 2 the floor and ceiling of
    :func:`measurable`, as for every verdict)."""
    return (f"that a subnetwork alone fails the other subroutine (test 1) can be read only where a random "
            f"subnetwork of its size still solves that subroutine, scoring at least {GATE_TARGET:g} on it (the "
            f"gate a subnetwork must reach on its own); that removing it costs its own subroutine more than the "
            f"other (test 2) can be read only where the network without it is neither at {CEILING:g} or more "
            f"on both subroutines nor at {FLOOR:g} or less on both")


def readable(p: dict) -> tuple[bool, bool]:
    """For one point of a density sweep (``p``: its ``random`` and ``complement`` accuracies, target /
    other), whether test 1's "fails the other" and test 2 can be read there, by :func:`read_rule`."""
    return bool(p["random"][1] >= GATE_TARGET), measurable(np.array([p["complement"][1]]), np.array([p["complement"][0]]))


def sweep_readable(sweeps: dict) -> dict[str, str]:
    """Where, by :func:`read_rule`, each stored density sweep (``sweeps``: rule -> stored metrics)
    lets the tests be read, for chapter 5's prose: ``sweep-test1-{rule}`` (test 1's "fails the other")
    and ``sweep-both-{rule}`` (both tests at one mask), per subroutine the span of kept shares (and
    multiples of lambda) where it can, and where it can nowhere, how close a random subnetwork of the
    mask's size comes to the gate on the other subroutine; ``sweep-both-{rule}`` also gives what the
    found subnetwork alone scores on the other subroutine where both can be read, and where they can
    nowhere together, that test 1 never can (when so) and whether test 2 can on its own."""
    out = {}
    for rule, m in sweeps.items():
        subs = list(dict.fromkeys(p["subroutine"] for p in m["points"]))
        one, both = [], []
        for sub in subs:
            pts = sorted((p for p in m["points"] if p["subroutine"] == sub), key=lambda p: -p["kept"])
            first = [p for p in pts if readable(p)[0]]
            two = [p for p in pts if all(readable(p))]

            def span(ps):
                hi, lo = ps[0], ps[-1]
                if hi is lo:
                    return f"at {hi['kept']:.2%} kept (×{hi['lam']:g})"
                return f"from {hi['kept']:.2%} kept (×{hi['lam']:g}) to {lo['kept']:.2%} (×{lo['lam']:g})"

            other = next((o for o in subs if o != sub), "the other subroutine's")
            short = (f"a random subnetwork of the {sub} mask's size scores at most "
                     f"{max(p['random'][1] for p in pts):.2f} on {other} problems")
            one.append(f"for the {sub} mask {span(first)}" if first else short)
            if two:
                alone = sorted(p["hard"][1] for p in two)
                said = f"{alone[0]:.2f}" if f"{alone[0]:.2f}" == f"{alone[-1]:.2f}" else f"{alone[0]:.2f} to {alone[-1]:.2f}"
                both.append((True, f"for the {sub} mask {span(two)}, where the found subnetwork alone scores "
                                   f"{said} on the other subroutine"))
            else:
                both.append((False, short if not first else f"for the {sub} mask test 2 cannot be read where "
                                                             "test 1 can"))
        never = not any(p["random"][1] >= GATE_TARGET for p in m["points"])
        if not never:
            out[f"sweep-test1-{rule}"] = "test 1's \"fails the other\" can be read " + "; ".join(one)
        else:
            out[f"sweep-test1-{rule}"] = "test 1's \"fails the other\" can be read at no density swept: " + \
                "; ".join(one)
        if any(ok for ok, _ in both):
            out[f"sweep-both-{rule}"] = "both tests can be read " + "; ".join(t for _, t in both)
            continue
        together = "at no density swept can both tests be read together: "
        if never:  # test 1 nowhere: say so, then where test 2 can be read on its own
            two = [readable(p)[1] for p in m["points"]]
            alone = ("test 2 can at every density swept" if all(two) else
                     "test 2 can at some densities" if any(two) else "nor can test 2")
            out[f"sweep-both-{rule}"] = (together + "test 1's \"fails the other\" never can ("
                                         + "; ".join(one) + "); " + alone)
        else:
            out[f"sweep-both-{rule}"] = together + "; ".join(t for _, t in both)
    return out


def removal_hurts(table, rule: str = "inside-contact") -> str:
    """Chapter 5's Controls, as an observation (no claim decides it): per subroutine of ``rule``, the
    base models (mask seeds averaged; those whose masks passed the selection gate) in which removing
    the subnetwork leaves its own subroutine under :data:`GATE_TARGET`, with what is left of its own
    and of the other subroutine, what removing as many random weights leaves and what re-initialising
    leaves; and the base models it does not cover."""
    t = table[(table["rule"] == rule) & table["trained"] & table["passed_gate"].eq(True)]
    if t.empty:
        return "not run at this profile"
    hurt, spared = [], []
    for sub, rows in t.groupby("subroutine", sort=False):
        per = rows.groupby("model")[["abl_target", "abl_other", "rand_abl_target", "reinit_target"]].mean()
        other = next((o for o in rows["subroutine"].unique() if o != sub), None) or next(
            (o for o in t["subroutine"].unique() if o != sub), "the other")
        h, s = per[per["abl_target"] < GATE_TARGET], per[per["abl_target"] >= GATE_TARGET]
        nums = lambda c, d=h: " and ".join(near_cut(v) for v in d[c])  # noqa: E731
        if len(h):
            hurt.append(f"{_models([int(i) for i in h.index])} for {sub} ({nums('abl_target')} "
                        f"left on {sub} problems and {nums('abl_other')} on {other} ones; after as many random weights removed, {nums('rand_abl_target')}; "
                        f"re-initialised instead of zeroed, {nums('reinit_target')})")
        if len(s):
            spared.append(f"{_models([int(i) for i in s.index])} for {sub} ({nums('abl_target', s)} left on {sub} "
                          f"problems, {nums('abl_other', s)} on {other} ones)")
    said = ("removing the subnetwork takes its own subroutine under "
            f"{GATE_TARGET:g} in {'; in '.join(hurt)}" if hurt else
            f"removing the subnetwork leaves its own subroutine at {GATE_TARGET:g} or more in every base model")
    return said + (f"; it does not in {' and '.join(spared)}" if hurt and spared else "")


def removal_by_lambda(table, rule: str = "inside-contact") -> str:
    """Chapter 5's box and details, as an observation (no claim decides it, no experiment tests the
    cause): per multiple of lambda the search chose for ``rule``'s masks (one per base model and
    subroutine, mask seeds averaged; those whose masks passed the selection gate), how many of those
    masks removal spares (their own subroutine left at :data:`GATE_TARGET` or more, as in
    :func:`removal_hurts`) and the span of their kept shares, largest multiple first: "removal spares
    the subroutine of each of the 2 masks found at x100 (0.5 to 0.8 % kept) and of none of the 4 found
    at x30 (1.6 to 2.3 %)"."""
    t = table[(table["rule"] == rule) & table["trained"] & table["passed_gate"].eq(True)]
    if t.empty:
        return "not run at this profile"
    per = t.groupby(["subroutine", "model"])[["lam", "kept", "abl_target"]].mean()
    parts = []
    for lam, rows in sorted(per.groupby("lam"), key=lambda x: -x[0]):
        n, spared = len(rows), int((rows["abl_target"] >= GATE_TARGET).sum())
        lo, hi = 100 * rows["kept"].min(), 100 * rows["kept"].max()
        span = f"{lo:.1f} %" if f"{lo:.1f}" == f"{hi:.1f}" else f"{lo:.1f} to {hi:.1f} %"
        which = ({n: f"each of the {n}", 0: f"none of the {n}"}.get(spared, f"{spared} of the {n}")
                 if n > 1 else "the one" if spared else "not the one")
        parts.append(f"{which}{' masks' if not parts else ''} found at ×{lam:g} ({span}{' kept' if not parts else ''})")
    return "removal spares the subroutine of " + " and of ".join(parts)


def untrained_rest(table, shown: tuple[str, str] = ("inside-contact", "inside")) -> str:
    """Chapter 5's Controls, after the untrained mask ``shown`` (rule, subroutine): what the other
    untrained masks keep, those of rules a verdict reads (whose trained base models were searched)
    apart from those of rules none reads, each with whether its masks passed the selection gate."""
    u = table[~table["trained"]] if not table.empty else table
    read = set(table[table["trained"]]["rule"]) if not table.empty else set()
    said, unread = [], {}
    for (rule, sub), rows in u.groupby(["rule", "subroutine"], sort=False):
        if (rule, sub) == tuple(shown):
            continue
        empty = bool((rows["kept"] <= 1e-4).all())
        if rule in read:
            said.append(None if empty else f"{RULE_WORDS.get(rule, rule)}'s {sub} mask keeps {pct(rows['kept'])}")
        else:
            unread.setdefault(rule, []).append((sub, rows))
    kept = [x for x in said if x]
    out = ("The other untrained masks that a verdict reads keep nothing: no subnetwork, so no control"
           if said and not kept else "The other untrained masks that a verdict reads: " + "; ".join(kept)
           if kept else "No other untrained mask is read by a verdict")
    for rule, subs in unread.items():
        gate = [bool(r["passed_gate"].eq(True).any()) for _, r in subs]
        out += (f"; {RULE_WORDS.get(rule, rule)}'s, which no verdict reads, keep "
                + " and ".join(f"{pct(r['kept'])} ({sub})" for sub, r in subs)
                + (" but miss the selection gate" if not any(gate) else ""))
    return out


def random_removal_spread(table, rule: str = "inside-contact") -> str:
    """Chapter 5's Controls: the per-base-model effects of the claims "vs random removal" of ``rule``
    (as many random weights removed minus the subnetwork removed, on the target; every searched base
    model, mask seeds averaged), per subroutine, and whether they share a sign."""
    t = table[(table["rule"] == rule) & table["trained"]] if not table.empty else table
    if t.empty or "rand_abl_target" not in t or t["rand_abl_target"].isna().any():
        return "not measured at this profile"
    effects = {sub: rows.groupby("model")["rand_abl_target"].mean() - rows.groupby("model")["abl_target"].mean()
               for sub, rows in t.groupby("subroutine", sort=False)}
    signs = {sub: set(np.sign(e[e != 0])) for sub, e in effects.items()}
    same = all(len(s) <= 1 for s in signs.values())
    n = max(len(e) for e in effects.values())
    listed = "; ".join(f"{sub} {', '.join(f'{v:+.2f}' for v in e)}" for sub, e in effects.items())
    if n < 2:
        return f"1 base model ({listed}), too few for a t interval"
    return (f"{count(n, 'base model')} whose effects differ in size{', not in sign' if same else ' and sign'} "
            f"({listed}; random removal minus the subnetwork's, on its own subroutine), so the t interval over "
            f"{n} is wide")


def sweep_other_gap(sweeps: dict, rule: str = "sv-plural") -> str:
    """How far, at worst, the found subnetwork alone falls short of a random subnetwork of its size on
    the other subroutine, over every point of ``rule``'s density sweep (``sweeps``: rule -> stored
    metrics), from the two-decimal numbers the page prints: "0.07"."""
    m = sweeps.get(rule)
    if not m:
        return "not swept at this profile"
    gap = max(round(p["random"][1], 2) - round(p["hard"][1], 2) for p in m["points"])
    return f"{max(gap, 0.0):.2f}"


def sweep_schedule(sweeps: dict, rule: str = "sv-plural", lam: float = 10.0) -> str:
    """How ``rule``'s density sweep (``sweeps``: rule -> stored metrics) grew lambda, and what its masks
    at multiple ``lam`` keep, for chapter 5's search for the penalty: "x1 for 5 epochs, then grown over
    5: 24.09 % (subject) and 23.95 % (verb) kept at x10"."""
    m = sweeps.get(rule)
    if not m:
        return "not swept at this profile"
    c = m.get("configuration", {})
    delay, warmup = int(c.get("lam_delay", 0)), int(c.get("lam_warmup", 0))
    how = ("λ at full weight from the first step" if not (delay or warmup) else
           "λ " + (f"at ×1 for {count(delay, 'epoch')}, then " if delay else "")
           + f"grown over {count(warmup, 'epoch')}")
    at = [p for p in m["points"] if p["lam"] == lam]
    kept = " and ".join(f"{p['kept']:.2%} ({p['subroutine']})" for p in at)
    return how + (f", keeps {kept} at ×{lam:g}" if at else f"; it swept no mask at ×{lam:g}")


TEST2 = {"ablation": "abl", "reinit": "reinit"}  # test 2's claims (zeroed, re-initialised): their table prefix


def readable_test2(table, suffix: str = "") -> dict[str, tuple[int, int]]:
    """Test 2 by :func:`read_rule`, base model by base model (a page's reading, no verdict): per claim
    of :data:`TEST2` on ``table``'s trained runs, keyed by its name with ``suffix``
    (``"inside-contact/contact/ablation"``), ``(readable, base models)``: of the base models the claim
    counts (those whose masks passed the selection gate, or every one where none did; mask seeds
    averaged), how many are neither at the ceiling nor at the floor on both subroutines after removal
    (:func:`measurable`)."""
    out = {}
    trained = table[table["trained"]] if not table.empty else table
    for (rule, sub), rows in trained.groupby(["rule", "subroutine"], sort=False):
        if rows["passed_gate"].eq(True).any():
            rows = rows[rows["passed_gate"].eq(True)]
        for kind, prefix in TEST2.items():
            per = rows.groupby("model")[[f"{prefix}_target", f"{prefix}_other"]].mean()
            read = sum(measurable(np.array([a]), np.array([b])) for a, b in per.itertuples(index=False))
            out[f"{rule}/{sub}/{kind}{suffix}"] = (int(read), len(per))
    return out


def unreadable_words(read: dict[str, tuple[int, int]]) -> str:
    """For chapter 5's "Why so many ?": the test 2 claims of :func:`readable_test2` (``read``, those a
    page passes: the ones left open by their interval, without a suffix) none of whose base models the
    rule can read, named by their subnetwork and verdict-table row, each with its statement's reason and
    interval (the decision's ``why``, where it was decided in this process), said to be that reason, and,
    apart from it, that the rule reads none of their base models, so the planning table
    (:func:`modlib.claims.units_frame`, as chapter 5 prints it) leaves them out; a sentence saying
    there are none where there are none."""
    names = []
    for name, (ok, n) in read.items():
        rule, sub, kind = name.split("/")
        if n and not ok and kind in TEST2:
            made = claims.decisions(CHAPTER).get(_key(name))  # its statement's reason, with its interval
            names.append(f"{RULE_WORDS.get(rule, rule)}'s {sub} subnetwork in row \u201c{VERDICTS[kind]}\u201d"
                         + (f" ({made.why})" if made is not None else ""))
    if not names:
        return "No such claim here has every base model at the floor or the ceiling"
    its, one = ("its", "One of them is ") if len(names) == 1 else ("their", "Among them are ")
    it = "it" if len(names) == 1 else "them"
    return (f"{one}{' and '.join(names)}: {its} statement's reason is the interval. Separately, the rule reads "
            f"none of {its} base models: removal leaves each at the floor or the ceiling on both subroutines, "
            f"so the planning table in the appendix leaves {it} out")


def argmax_caveat(found: dict[str, Finding], key: str = "inside-contact/inside/ablation") -> str:
    """What a page says beside the verdict with the authors' choice of masks
    (:func:`without_convergence_rule`): a check chosen after the results were seen, and where the
    registered verdict ``key`` (of :func:`structural`) stands, and that it reads one mask per base model
    (the search's, mask seed 0) where the registered verdict averages three mask seeds; one string for
    every place that gives it."""
    f = found.get(key)
    stands = ("stays open" if f is None or f.outcome == stats.UNDECIDED
              else f"is {claims.outcome_words(f.outcome, False)}")
    return (f"a check chosen after the results were seen, on one mask per base model, the search's mask "
            f"seed 0, where the registered verdict averages three; the registered verdict {stands}")


def sweep_findings(sweeps: dict) -> dict[str, Finding]:
    """What the density sweeps (:mod:`modlib.structural_compositionality.sweep`, ``sweeps``: rule ->
    stored metrics) show, per (rule, subroutine), as checks (no verdict: the paper ran no sweep):
    ``{rule}/{sub}/sweep``: the densest mask at which a random subnetwork of the same size falls
    below the gate on the *other* subroutine, from which on a pass of the first test means less
    and less (held when there is such a mask and the sparsest mask keeps less than the densest)."""
    out = {}
    for rule, m in sweeps.items():
        for sub in dict.fromkeys(p["subroutine"] for p in m["points"]):
            pts = sorted((p for p in m["points"] if p["subroutine"] == sub), key=lambda p: -p["kept"])
            can_fail = [p for p in pts if p["random"][1] < GATE_TARGET]
            spread = pts[-1]["kept"] < pts[0]["kept"]
            every = can_fail and pts[pts.index(can_fail[0]):] == can_fail  # every sparser mask too
            where = (f"a random subnetwork of the mask's size falls under {GATE_TARGET} on the other subroutine "
                     + (f"at every mask from the one at ×{can_fail[0]['lam']:g}" if every else
                        f"at {len(can_fail)} of the {len(pts)} masks, the densest of them at ×{can_fail[0]['lam']:g}")
                     + f" ({can_fail[0]['kept']:.2%} of the weights kept){' down to the sparsest' if every else ''}; "
                     f"at ×{can_fail[0]['lam']:g} it scores {can_fail[0]['random'][1]:.2f}"
                     if can_fail else f"a random subnetwork of the same size stays at {GATE_TARGET} or more on "
                     "the other subroutine at every density swept")
            points = "; ".join(f"×{p['lam']:g}: {p['kept']:.2%} kept, alone {p['hard'][0]:.2f} / "
                               f"{p['hard'][1]:.2f}, random {p['random'][0]:.2f} / {p['random'][1]:.2f}"
                               for p in reversed(pts))
            out[f"{rule}/{sub}/sweep"] = Finding(
                f"{rule}/{sub}/sweep", bool(can_fail) and spread,
                f"{rule}, {sub} mask, base model 0, λ from ×{min(p['lam'] for p in pts):g} to "
                f"×{max(p['lam'] for p in pts):g} "
                f"({points}; accuracies target / other): {where}.")
    return out


# ---------------------------------------------------------------- test 1's two halves against chance (issue 53)

DRAWN = {"inside-contact": ("inside", "contact"), "sv-plural": ("subject", "verb")}
NOT_RUN = "not run here"  # what the page prints, with no mark, for a claim whose results are not stored
REFUSED = "run, but refused by its check: no verdict"  # likewise, where the repeats were run and refused


@dataclass(frozen=True)
class NotRun(stats.Claim):
    """A draws claim whose results are not stored at this profile (not run, or refused by the
    repeat's check): recorded as undecided, like any claim the data leave open, but printed with
    :data:`NOT_RUN` (or :data:`REFUSED`, ``words``, where the repeats were run and refused) and the
    reason in place of a verdict mark, since no data were read (issue 57)."""

    words: str = NOT_RUN

    @property
    def mark(self) -> str:
        return ""

    @property
    def marked(self) -> str:
        return self.words


def not_run_words(found: dict[str, Finding]) -> dict[str, str]:
    """For the page's glued words (:func:`modlib.claims.page_words`, by claim id), the claims of
    ``found`` whose results are not stored (:class:`NotRun`): "not run here", or "run, but refused by
    its check: no verdict", never a verdict mark."""
    return {k.replace("/", "-"): f.marked for k, f in found.items() if isinstance(f, NotRun)}


def draws_claims(drawn: dict, swap: bool = False, refused: tuple[str, ...] = ()) -> dict[str, Finding]:
    """Both halves of the first test against chance, per (rule, subroutine) of :data:`DRAWN`,
    keyed ``"{rule}/{sub}/draws-target"`` and ``".../draws-other"``, from the stored draws results
    ``drawn`` (``{"draws-{rule}-{seed}": Result}``, :mod:`~modlib.structural_compositionality.draws`;
    the base models whose masks passed the selection gate; mask seeds and draws averaged per base
    model): target, the found subnetwork minus the random ones on the target; other, the random
    ones minus the found one on the other subroutine (not measurable where both sit at chance).
    Where no result of a rule is stored, its claims cannot be decided here, for that reason.
    ``swap``: each subnetwork's target and other exchanged (the mutation). ``refused``: the results
    whose repeats were run at this profile and refused by their check (:data:`draws.REFUSED` at full):
    a rule's claims then read :data:`REFUSED`, not :data:`NOT_RUN`."""
    out = {}
    for rule, subs in DRAWN.items():
        mine = [r for n, r in sorted(drawn.items()) if n.rsplit("-", 1)[0] == f"draws-{rule}"]
        for sub in subs:
            rows = [r for r in mine if r.metrics[sub]["passed_gate"]]
            found = np.array([r.arrays[f"found-{sub}"].mean(axis=0) for r in rows]).reshape(-1, 2)
            rand = np.array([r.arrays[f"random-{sub}"].mean(axis=(0, 1)) for r in rows]).reshape(-1, 2)
            if swap:
                found, rand = found[:, ::-1], rand[:, ::-1]
            for half, (a, b), says in (
                    ("target", (found[:, 0], rand[:, 0]), f"the found {sub} subnetwork on {sub} problems minus "
                                                          "random subnetworks of its per-layer counts"),
                    ("other", (rand[:, 1], found[:, 1]), "random subnetworks of its per-layer counts on the other "
                                                         f"subroutine's problems minus the found {sub} subnetwork")):
                name = f"{rule}/{sub}/draws-{half}"
                text = f"{rule}, {sub}: test 1's {half} half against 20 random subnetworks per mask, {says}"
                if not rows:
                    gone = [n for n in draws.REFUSED if n.rsplit("-", 1)[0] == f"draws-{rule}"]
                    why = (f"no base model's {sub} masks passed the selection gate" if mine else
                           f"the results `draws-{rule}-<base model>` are not stored at this profile"
                           + (f": at full, the repeats {', '.join(gone)} were run and refused by their check "
                              f"(a mask further from the stored one than the tolerance)" if gone else
                              " (modlib.structural_compositionality.draws.fetch makes them)"))
                    said = REFUSED if not mine and any(n in refused for n in gone) else NOT_RUN
                    v = claims.decide(_key(name), low=-1.0, high=1.0, units=0, reason=why)
                    c = claims.statement(v, text + ".")
                    out[name] = NotRun(c.name, c.holds, f"{text}: {said}: {why}.", c.verdict, c.own, said)
                    continue
                e = stats.paired(a, b, unit="base model")
                v = claims.decide(_key(name), e, measurable=measurable(a, b),
                                  as_registered=_as_registered(rows, subs, (a, b), name))
                out[name] = claims.statement(v, f"{text}: {e.text()}.")
    return out


def _as_registered(rows: list, subs: tuple[str, ...], arms: tuple[np.ndarray, np.ndarray], name: str) -> dict:
    """The draws claims as first registered refused a repeat unless each mask's kept share and
    accuracies alone lay within 1e-6 of the stored ones (amended 2026-12-03 to
    ``draws.KEPT_TOLERANCE`` and ``draws.ACCURACY_TOLERANCE``): the effect over the ``rows`` that
    rule would have stored (``arms`` restricted to them), or the reason none would be."""
    def repeats(r, sub: str, kind: str) -> bool:  # a result without the stored numbers: exact
        stored = r.arrays.get(f"stored-{kind}-{sub}")
        return stored is None or np.allclose(r.arrays[f"{kind}-{sub}"], stored, atol=draws.TOLERANCE, rtol=0)

    exact = [all(repeats(r, sub, kind) for sub in subs for kind in ("kept", "found")) for r in rows]
    if all(exact):
        return {}
    if not any(exact):
        return {"reason": f"as first registered, every repeat for {name} is refused: a mask's kept share or "
                          f"accuracy alone differs from the stored one by more than {draws.TOLERANCE:g}"}
    keep = np.array(exact)
    return {"effect": stats.paired(arms[0][keep], arms[1][keep], unit="base model")}


def _models(seeds: list[int]) -> str:
    """``[0]`` -> "base model 0", ``[0, 2]`` -> "base models 0 and 2", ``[0, 1, 2]`` -> "base models 0, 1 and 2"."""
    return f"base model{'' if len(seeds) == 1 else 's'} {stats.listing(seeds)}"


def draws_status(drawn: dict, table, pairs: list[tuple[str, int]], refused: tuple[str, ...] = ()) -> str:
    """Where the draws results stand, in plain words for the page (issue 57): per rule of ``pairs``
    (``draws.names``), the base models whose repeat was computed (``drawn``, the stored results),
    those refused by the repeat's check (``refused``, :data:`draws.REFUSED` at full), those whose masks
    missed the selection gate (``table``, :func:`structure_table`: no claim reads them) and those not
    run, e.g. "for Inside-Contact, the repeats of base models 0 and 1 were refused by their check (their
    masks did not repeat the stored ones closely enough); base model 2 was not run. For subject-verb
    agreement, the repeats of base models 0 and 2 were computed and stored; base model 1's masks missed
    the selection gate, so no claim reads it, and none was computed" (no final full stop)."""
    parts = []
    for rule in dict.fromkeys(r for r, _ in pairs):
        computed, refusals, missed, not_run = [], [], [], []
        for seed in (s for r, s in pairs if r == rule):
            name = f"{draws.PREFIX}{rule}-{seed}"
            rows = table[(table["rule"] == rule) & (table["model"] == seed) & table["trained"]] if len(table) else table
            gate_missed = len(rows) > 0 and not rows["passed_gate"].eq(True).any()
            if gate_missed:
                missed.append(seed)
            elif name in drawn:
                computed.append(seed)
            elif name in refused:
                refusals.append(seed)
            else:
                not_run.append(seed)
        words = []
        if computed:
            words.append(f"the repeats of {_models(computed)} were computed and stored")
        if refusals:
            words.append(f"the repeats of {_models(refusals)} were refused by their check (their masks did not "
                         "repeat the stored ones closely enough)")
        if missed:
            stored = all(f"{draws.PREFIX}{rule}-{s}" in drawn for s in missed)
            whose = f"{_models(missed)}'s masks" if len(missed) == 1 else f"the masks of {_models(missed)}"
            words.append(f"{whose} missed the selection gate, so no claim reads {'it' if len(missed) == 1 else 'them'}"
                         + ("" if stored else ", and none was computed"))
        if not_run:
            words.append(f"{_models(not_run)} {'was' if len(not_run) == 1 else 'were'} not run")
        parts.append(f"{RULE_WORDS.get(rule, rule)}, " + "; ".join(words))
    return "for " + ". For ".join(parts)


# ---------------------------------------------------------------- the untrained control at matched density (issue 53)

def untrained_matched_table(matched: dict):
    """:func:`structure_table` of the matched untrained results ``matched`` (``{name: Result}``,
    :mod:`~modlib.structural_compositionality.untrained_matched`): one row per (rule, network,
    subroutine, mask seed), ``trained`` False."""
    from types import SimpleNamespace

    return structure_table(SimpleNamespace(rows=matched))


def _matched_arms(table, untrained, rule: str, sub: str):
    """The two groups the untrained control at matched density compares for ``rule`` and ``sub``:
    the trained base models' masks that passed the selection gate (rows of :func:`structure_table`'s
    ``table``) and the untrained networks' masks (rows of :func:`untrained_matched_table`'s
    ``untrained``, which may be empty)."""
    t = table[(table["rule"] == rule) & (table["subroutine"] == sub) & table["trained"]]
    t = t[t["passed_gate"] == True]  # noqa: E712 (the selection gate, on validation)
    u = untrained[(untrained["rule"] == rule) & (untrained["subroutine"] == sub)] if not untrained.empty else untrained
    return t, u


def untrained_matched_claims(table, bases: list[dict], base_gate: float, matched: dict,
                             change=None, wide: bool = False) -> dict[str, Finding]:
    """The untrained control at matched density, per (rule, subroutine) of :data:`DRAWN`, keyed
    ``"{rule}/{sub}/untrained-matched"`` (the paper's: test 2's ablation effect, other minus target,
    trained base models minus untrained networks) and ``".../subnetwork-untrained-matched"`` (the
    book's: test 1's effect, target minus other, likewise), Welch t over networks (mask seeds
    averaged). ``table`` and ``bases`` are the trained base models' (:func:`structure_table`,
    :func:`base_models`; the masks that passed the selection gate), ``matched`` the stored matched
    untrained results; ``change`` (a table's function, the mutations') is applied to their table.
    Decided only where every untrained network's masks kept within the registered factor of its
    twin's share (the check, recorded in each result) and no mask set keeps nothing or everything.
    ``wide``: the wider search's results and claims (keyed ``...-wide``; its rules only)."""
    from modlib.structural_compositionality import untrained_matched as um

    u_all = untrained_matched_table(matched)
    if change is not None and not u_all.empty:
        u_all = change(u_all)
    task = {(b["rule"], b["model"]): b["task"] for b in bases if b["trained"]}
    out = {}
    for rule, subs in DRAWN.items():
        if wide and rule not in um.RULES_WIDE:
            continue
        mine = {n: r for n, r in matched.items() if r.metrics["rule"] == rule}
        for sub in subs:
            t, u = _matched_arms(table, u_all, rule, sub)
            for kind, arms, says in (
                    ("untrained-matched", ("abl_other", "abl_target"), "test 2's ablation effect (other minus target)"),
                    ("subnetwork-untrained-matched", ("sub_target", "sub_other"),
                     "test 1's effect (the subnetwork alone, target minus other)")):
                name = f"{rule}/{sub}/{kind}{'-wide' if wide else ''}"
                text = (f"{rule}, {sub}: {says}, trained base models minus untrained networks at matched density"
                        + (f" (the wider search, up to {um.PROBES_WIDE} masks)" if wide else ""))
                if u.empty or t.empty:
                    why = (f"the results `{um.name(rule, 0, wide)[:-2]}-<network>` are not stored at this profile"
                           if u.empty else f"no trained base model's {sub} masks passed the selection gate")
                    v = claims.decide(_key(name), low=-1.0, high=1.0, units=0, reason=why)
                    c = claims.statement(v, text + (f": {why}:" if t.empty else "."))
                    out[name] = c if t.empty else NotRun(c.name, c.holds, f"{text}: {NOT_RUN}: {why}.", c.verdict,
                                                         c.own, NOT_RUN)
                    continue
                a, b = arms
                effect_t, effect_u = _by_model(t, a) - _by_model(t, b), _by_model(u, a) - _by_model(u, b)
                fit = all(task.get((rule, m), 0) >= base_gate for m in dict.fromkeys(t["model"]))
                twin = [r.metrics["subroutines"][sub] for r in mine.values()]
                matched_ok = all(f["matched"] for f in twin)
                ok = matched_ok and not degenerate(t["kept"]) and not degenerate(u["kept"])
                v = claims.decide(_key(name), stats.unpaired(effect_t, effect_u, unit="network"),
                                  trained=fit, controls=ok)
                target = 100 * np.mean([f["target_kept"] for f in twin])
                out[name] = claims.statement(
                    v,
                    f"{text} ({t['model'].nunique()} trained, {count(u['model'].nunique(), 'untrained network')}; "
                    f"the untrained masks keep {pct(u['kept'])} of the masked weights against their twins' "
                    f"{target:.2f} %, check {'passed' if matched_ok else 'failed'}{_kept_nothing(u)}): untrained, the subnetwork "
                    f"alone gets {mean_pm(u['sub_target'])} on {sub} problems and {mean_pm(u['sub_other'])} on the "
                    f"other's; ablated, {mean_pm(u['abl_target'])} and {mean_pm(u['abl_other'])}; the effect, "
                    f"trained {mean_pm(effect_t)} against untrained {mean_pm(effect_u)}; trained minus untrained:")
    return out


def _kept_nothing(rows) -> str:
    """Where masks of ``rows`` keep (almost) nothing (:func:`degenerate`), how many, in words: such a
    mask set is no control, whatever its mean kept share."""
    empty = int((np.asarray(rows["kept"], dtype=float) <= 1e-4).sum())
    return f"; {empty} of {len(rows)} untrained masks kept nothing, so they are no control" if empty else ""


def search_words(wide: bool) -> str:
    """The column that names a search for lambda in the untrained control's table
    (:func:`untrained_matched_rows`): the first, or the wider one registered after it."""
    from modlib.structural_compositionality import untrained_matched as um

    return f"wider search, up to {um.PROBES_WIDE} masks" if wide else f"first search, up to {um.PROBES} masks"


def untrained_matched_rows(table, searches: list[tuple[dict, dict, bool]]) -> list[dict]:
    """The page's table of the untrained control at matched density: per search (``searches``: the
    matched results, their claims as :func:`untrained_matched_claims` decides them, and whether it
    is the wider search), one row per (rule, subroutine) of :data:`DRAWN` with stored results: the
    mean kept share of each arm (trained base models past the selection gate / untrained networks),
    each arm's subnetwork alone on its target and on the other subroutine (test 1), the removal
    effect, other minus target (test 2), per arm, and the two claims' marks."""
    out = []
    for matched, found, wide in searches:
        u_all = untrained_matched_table(matched)
        for rule, subs in DRAWN.items():
            for sub in subs:
                t, u = _matched_arms(table, u_all, rule, sub)
                if u.empty or t.empty:
                    continue
                alone = {arm: f"{_by_model(r, 'sub_target').mean():.2f} / {_by_model(r, 'sub_other').mean():.2f}"
                         for arm, r in (("trained", t), ("untrained", u))}
                effect = {arm: (_by_model(r, "abl_other") - _by_model(r, "abl_target")).mean()
                          for arm, r in (("trained", t), ("untrained", u))}
                end = "-wide" if wide else ""
                out.append({
                    "rule": rule, "subnetwork": sub, "search": search_words(wide),
                    "kept: trained / untrained": f"{100 * t['kept'].mean():.2f} % / {100 * u['kept'].mean():.2f} %",
                    "alone, target / other: trained": alone["trained"],
                    "alone, target / other: untrained": alone["untrained"],
                    "removal effect: trained / untrained": f"{effect['trained']:+.2f} / {effect['untrained']:+.2f}",
                    "test 1 needs training": found[f"{rule}/{sub}/subnetwork-untrained-matched{end}"].marked,
                    "test 2 vs untrained": found[f"{rule}/{sub}/untrained-matched{end}"].marked})
    return out


def untrained_matched_search(matched: dict) -> str:
    """How the search for lambda went in the matched untrained results ``matched``, per rule, in words
    for the page: the masks tried per subroutine and the multiples of lambda, how far the chosen
    masks' mean kept share lies from the twin's (the worst factor) or that they kept nothing, and
    whether every mask set passed the registered density check."""
    from modlib.structural_compositionality import untrained_matched as um

    said = []
    for rule in DRAWN:
        found = [f for r in matched.values() if r.metrics["rule"] == rule for f in r.metrics["subroutines"].values()]
        if not found:
            continue
        tried = sorted({len(f["probes"]) for f in found})
        lams = [p["lam"] for f in found for p in f["probes"]]
        factors = [um.ratio(np.mean([run["kept"] for run in f["runs"]]), f["target_kept"]) for f in found]
        kept = [x for x in factors if np.isfinite(x)]
        passed = sum(f["matched"] for f in found)
        masks = [run["kept"] for f in found for run in f["runs"]]
        empty = sum(k <= 1e-4 for k in masks)
        how = (f"the chosen masks keep within a factor {max(kept):.2f} of their twins' share"
               + (f" on average ({empty} of {len(masks)} masks of the untrained networks kept nothing)" if empty else "")
               if len(kept) == len(found) else "every mask kept nothing" if not kept
               else f"{len(found) - len(kept)} of {len(found)} mask sets kept nothing")
        tries = f"{tried[0]}" if len(tried) == 1 else f"{tried[0]} to {tried[-1]}"
        said.append(f"{rule}, {tries} search masks per subroutine, λ ×{min(lams):.2g} to "
                    f"×{max(lams):.3g}: {how}; {passed} of {len(found)} mask sets within a factor {um.MATCHED:g}, "
                    f"check {'passed' if passed == len(found) else 'failed'}")
    return "; ".join(said) if said else "not run at this profile"


# ---------------------------------------------------------------- a second search in what removal leaves (issue 53)

SECOND_RULES = {"inside-contact": ("inside", "contact")}  # second_search.RULES_SECOND's subroutines


def second_rows(second: dict, swap: bool = False, random_as_found: bool = False):
    """One row per (base model, subroutine) of the second-search results ``second`` (``{name:
    Result}``, :mod:`~modlib.structural_compositionality.second_search`): the first mask's kept share
    and the stored one's, its removal (``first_removed``: target, other), the second mask's kept share
    and gate, and in the model without the first: the second subnetwork alone (``second``), a random
    one of its counts (``second_random``), both removed (``both_removed``) and the first with as many
    random weights removed (``first_random_removed``), each (target, other). ``swap``: target and
    other exchanged; ``random_as_found``: the second mask's columns replaced by its random mask's
    (the mutations)."""
    import pandas as pd

    out = []
    for r in second.values():
        m = r.metrics
        for sub in SECOND_RULES.get(m["rule"], ()):
            first, then = m[sub]["first"], m[sub]["second"]
            hard, removed = ("random", "random_complement") if random_as_found else ("hard", "complement")
            row = {"rule": m["rule"], "model": m["seed"], "subroutine": sub, "task": m["task"],
                   "stored_task": m["stored_task"], "first_passed_gate": m[sub]["first_passed_gate"],
                   "first_kept": first["kept"], "stored_kept": first["stored_kept"], "second_kept": then["kept"],
                   "second_passed_gate": then["passed_gate"], "second_own": then["own"],
                   "first_removed": first["complement"],
                   "second": then[hard], "second_random": then["random"], "both_removed": then[removed],
                   "first_random_removed": then["random_complement"]}
            for key in ("first_removed", "second", "second_random", "both_removed", "first_random_removed"):
                target, other = row.pop(key)
                row[f"{key}_target"], row[f"{key}_other"] = (other, target) if swap else (target, other)
            out.append(row)
    return pd.DataFrame(out)


def second_claims(second: dict, base_gate: float, swap: bool = False,
                  random_as_found: bool = False) -> dict[str, Finding]:
    """The search in what removal leaves, per subroutine of :data:`SECOND_RULES`, keyed
    ``"{rule}/{sub}/second-found"`` (the second subnetwork alone minus a random one of its counts, on
    the target, margin :data:`LOWER`) and ``".../second-removal"`` (the target with the first
    subnetwork and as many random weights as the second removed, minus with both removed, margin
    :data:`CLEAR`), paired over the base models whose stored first masks passed the selection gate.
    ``swap`` and ``random_as_found``: the mutations (:func:`second_rows`)."""
    table = second_rows(second, swap, random_as_found)
    out = {}
    for rule, subs in SECOND_RULES.items():
        for sub in subs:
            rows = table[(table["rule"] == rule) & (table["subroutine"] == sub)] if len(table) else table
            t = rows[rows["first_passed_gate"]] if len(rows) else rows
            for kind, (a, b), says in (
                    ("second-found", ("second_target", "second_random_target"),
                     "the second subnetwork alone minus a random one of its per-layer counts, on target"),
                    ("second-removal", ("first_random_removed_target", "both_removed_target"),
                     "the target with the first subnetwork and random weights removed, minus with both "
                     "subnetworks removed")):
                name = f"{rule}/{sub}/{kind}"
                text = f"{rule}, {sub}: a second search in the model without the first subnetwork: {says}"
                if t.empty:
                    why = (f"the results `second-{rule}-<base model>` are not stored at this profile" if rows.empty
                           else f"no base model's first {sub} mask passed the selection gate")
                    v = claims.decide(_key(name), low=-1.0, high=1.0, units=0, reason=why)
                    c = claims.statement(v, text + ".")
                    out[name] = (NotRun(c.name, c.holds, f"{text}: {NOT_RUN}: {why}.", c.verdict, c.own, NOT_RUN)
                                 if rows.empty else claims.statement(v, f"{text}: {why}:"))
                    continue
                fit = bool((t["task"] >= base_gate).all())
                e = stats.paired(t[a].to_numpy(), t[b].to_numpy(), unit="base model")
                v = claims.decide(_key(name), e, trained=fit, controls=not degenerate(t["second_kept"]),
                                  measurable=measurable(t[a], t[b]))
                out[name] = claims.statement(v, (
                    f"{text} ({count(len(t), 'base model')}; the first masks keep {pct(t['first_kept'])} of the "
                    f"masked weights, the second {pct(t['second_kept'])}; without the first, {sub} accuracy is "
                    f"{mean_pm(t['first_removed_target'])}; the second alone scores {mean_pm(t['second_target'])} "
                    f"on {sub} problems and {mean_pm(t['second_other'])} on the other's, a random one of its "
                    f"counts {mean_pm(t['second_random_target'])}; with both removed {mean_pm(t['both_removed_target'])}, "
                    f"with the first and random weights removed {mean_pm(t['first_random_removed_target'])}):"))
    return out


def second_table(second: dict, stored):
    """The page's table of the second search: one row per (subroutine, base model) of
    :func:`second_rows`, accuracies on the target subroutine's ablation test set (the second
    subnetwork alone also on the other's), with the stored first mask's (``stored``: the chapter's
    :func:`structure_table`; mask seed 0) kept share and removal beside the retrained one's."""
    table = second_rows(second)
    if table.empty:
        return table
    first = stored[stored["trained"] & (stored["mask_seed"] == 0)].set_index(["rule", "model", "subroutine"])
    at = [first.loc[(r, m, s)] for r, m, s in zip(table["rule"], table["model"], table["subroutine"])]
    out = table.assign(**{
        "first kept (stored)": [f"{100 * k:.2f} % ({100 * a['kept']:.2f} %)" for k, a in zip(table["first_kept"], at)],
        "without the first, target / other (stored)": [
            f"{k:.2f} / {o:.2f} ({a['abl_target']:.2f} / {a['abl_other']:.2f})"
            for k, o, a in zip(table["first_removed_target"], table["first_removed_other"], at)],
        "second on its mask set": table["second_own"].map("{:.2f}".format),
        "second kept": [f"{100 * k:.2f} %" for k in table["second_kept"]],
        "second alone (target / other)": [f"{a:.2f} / {b:.2f}" for a, b in zip(table["second_target"],
                                                                           table["second_other"])],
        "random of its size": table["second_random_target"].map("{:.2f}".format),
        "both removed": table["both_removed_target"].map("{:.2f}".format),
        "first and random removed": table["first_random_removed_target"].map("{:.2f}".format)})
    cols = ["first kept (stored)", "without the first, target / other (stored)", "second kept",
            "second on its mask set", "second alone (target / other)", "random of its size", "both removed",
            "first and random removed"]
    out = out.rename(columns={"model": "base model"}).set_index(["subroutine", "base model"])[cols]
    return out.sort_index(level=0, ascending=False, sort_remaining=False)  # inside before contact


def untrained_matched_notes(matched: dict) -> dict[str, str]:
    """What the page says about the matched untrained results ``matched`` beside the claims, keyed
    for its glue (issue 53's review): per (rule, subroutine) of :data:`DRAWN`, ``masks-{rule}-{sub}``
    (each network's masks' kept shares, by mask seed, against its twin's mean), ``gap-{rule}-{sub}``
    (each unmasked untrained network's accuracy on the other subroutine's ablation test set minus on
    the target's: the removal effect a network at chance shows with nothing removed) and, per rule,
    ``empty-{rule}`` (the epoch after which every mask that ended empty already was)."""
    from modlib.structural_compositionality.tasks import RULES

    out = {}
    for rule, subs in DRAWN.items():
        mine = sorted((r for r in matched.values() if r.metrics["rule"] == rule), key=lambda r: r.metrics["seed"])
        if not mine:
            continue
        firsts = []
        for sub in subs:
            k = RULES[rule].index(sub)
            shares, gaps = [], []
            for r in mine:
                f, base = r.metrics["subroutines"][sub], r.metrics["base"]
                seeds = f"mask seeds 0-{len(f['runs']) - 1}" if len(f["runs"]) > 1 else "mask seed 0"
                shares.append(f"network {r.metrics['seed']} ({seeds}): "
                              + ", ".join(f"{100 * run['kept']:.2f}" for run in f["runs"])
                              + f" % (twin {100 * f['target_kept']:.2f} %)")
                gaps.append(f"{base[f'only-{1 - k}'] - base[f'only-{k}']:+.3f}")
                firsts += [next(i for i, x in enumerate(run["kept_trajectory"]) if x <= 1e-4) + 1
                           for run in f["runs"] if run["kept"] <= 1e-4]
            out[f"masks-{rule}-{sub}"] = "; ".join(shares)
            out[f"gap-{rule}-{sub}"] = " and ".join(gaps)
        epochs = len(mine[0].metrics["subroutines"][subs[0]]["runs"][0]["kept_trajectory"])
        out[f"empty-{rule}"] = (f"after epoch {max(firsts)} of {epochs}" if firsts else "none")
    return out


# ---------------------------------------------------------------- fresh base models (issue 53: enough units)

FRESH = "-fresh"  # the suffix of the claims read on base models trained after their registration
FRESH_KINDS = ("subnetwork", "ablation", "reinit", "random", "random_ablation")  # as structural_from decides
PENDING = "not decided until every fresh base model is stored"  # printed, with no mark, meanwhile
NEEDED = "fresh base models needed"  # fresh_planning's column: the count, read on the fresh ones alone


def fresh_claims(fresh, expected: dict[str, int], change=None) -> dict[str, Finding]:
    """Chapter 5's tests on the fresh base models (:mod:`~modlib.structural_compositionality.fresh_models`,
    ``fresh`` their stored runs), decided as the page decides its own (:func:`structural_from`,
    :func:`density_from`), keyed ``"{rule}/{sub}/{kind}-fresh"`` for each kind of :data:`FRESH_KINDS`.
    A rule's claims read all ``expected[rule]`` of its base models at once
    (:func:`~modlib.structural_compositionality.fresh_models.counts`): while fewer are stored none is
    decided on them (a look at part of the units would be a look before the data are in), and each
    reads :data:`PENDING` with how many are stored. ``change`` (a table's function, the mutations')
    is applied to their table."""
    from modlib.structural_compositionality import fresh_models

    out = {}
    for rule in fresh_models.RULES_FRESH:
        mine = _rule_rows(fresh, rule)
        if expected.get(rule) and len(mine) == expected[rule]:
            runs = replace(fresh, rows=mine)
            table = structure_table(runs)
            table = change(table) if change else table
            found = {**structural_from(table, base_models(runs), fresh.settings.base_gate, FRESH),
                     **density_from(table, FRESH)}
            out.update({k: f for k, f in found.items() if k.endswith(FRESH)})
            continue
        why = (f"{len(mine)} of {expected.get(rule, 0)} fresh base models of this rule are stored at this "
               "profile (modlib.structural_compositionality.fresh_models.fetch makes them)")
        for sub in DRAWN[rule]:
            for kind in FRESH_KINDS:
                name = f"{rule}/{sub}/{kind}{FRESH}"
                v = claims.decide(_key(name), low=-1.0, high=1.0, units=0, reason=why)
                text = f"{RULE_WORDS[rule]}, {sub} subnetwork: {CLAIM_WORDS[kind]}, on the fresh base models"
                c = claims.statement(v, text + ".")
                said = PENDING if expected.get(rule) else NOT_RUN
                out[name] = NotRun(c.name, c.holds, f"{text}: {said}: {why}.", c.verdict, c.own, said)
    return out


def _rule_rows(runs, rule: str) -> dict:
    """The results of ``runs`` (by name) whose base model is of ``rule``."""
    return {n: r for n, r in runs.rows.items() if r.metrics["rule"] == rule}


def fresh_status(fresh, expected: dict[str, int]) -> str:
    """Where the fresh base models stand, in words for the page: per rule of ``expected``
    (:func:`~modlib.structural_compositionality.fresh_models.counts`), how many are stored and, once
    all are, how many passed the base gate (the rest are left out, not replaced); or what their
    claims read meanwhile (:data:`PENDING`)."""
    if not any(expected.values()):
        return "They are not run at this profile (only full, and smoke for the tests, train them)."
    said = []
    for rule, n in expected.items():
        mine = _rule_rows(fresh, rule)
        kinds = len(DRAWN[rule]) * len(FRESH_KINDS)
        if len(mine) < n:
            said.append(f"{RULE_WORDS[rule]}, {len(mine)} of {n} stored (its {kinds} claims get their marks once all {n} are)")
            continue
        passed = sum(r.metrics["searched"] for r in mine.values())  # the base gate decides the search
        table = structure_table(replace(fresh, rows=mine))
        table = table[table["trained"]] if len(table) else table
        kept = [f"{int(past_gate(rows).sum())} for {sub}"
                for sub, rows in table.groupby("subroutine", sort=False)] if len(table) else []
        masks = f"; the selection gate on their masks then passed {' and '.join(kept)}" if kept else ""
        said.append(f"{RULE_WORDS[rule]}, all {n} stored, {passed} of them accurate enough on the task to be "
                    f"searched (the base gate){masks}")
    return "Stored now: " + "; ".join(said) + "."


def past_gate(rows):
    """Per base model of ``rows`` (one rule and subroutine's trained masks, :func:`structure_table`):
    whether its masks passed the selection gate (a bool Series by model)."""
    return rows["passed_gate"].eq(True).groupby(rows["model"]).all()


def fresh_ceiling(table, rule: str) -> dict[str, dict[str, str]]:
    """Where ``rule``'s fresh tests sit (a reading after the results; ``table``: :func:`structure_table`
    of the fresh runs): per subroutine with trained masks, ``"gate"``, the base models past the
    selection gate ("2 of 6"), and ``"ceiling"``, the subnetwork alone on its own and the other
    subroutine, a random subnetwork as large on its own, and the model without it on both, means over
    the base models past the gate (every one where none passed)."""
    out = {}
    trained = table[(table["rule"] == rule) & table["trained"]] if len(table) else table
    for sub, rows in (trained.groupby("subroutine", sort=False) if len(trained) else ()):
        gated = past_gate(rows)
        m = rows[rows["model"].isin(gated[gated].index)] if gated.any() else rows
        out[sub] = {"gate": f"{int(gated.sum())} of {len(gated)}", "ceiling": (
            f"alone, {m['sub_target'].mean():.2f} on {sub} problems and {m['sub_other'].mean():.2f} on the other "
            f"subroutine's; a random subnetwork as large, {m['random_target'].mean():.2f} on {sub} problems; "
            f"without it, {m['abl_target'].mean():.2f} and {m['abl_other'].mean():.2f}")}
    return out


def fresh_table(fresh, expected: dict[str, int], found: dict[str, Finding]) -> list[dict[str, str]]:
    """:func:`verdict_table`'s rows for the fresh base models' claims (``found``:
    :func:`fresh_claims`), for the rules whose ``expected`` base models are all stored, with the
    base models the rule under ``sc-read-rule`` can read for test 2 (:func:`readable_test2`)."""
    done = [rule for rule, n in expected.items() if n and len(_rule_rows(fresh, rule)) == n]
    if not done:
        return []
    table = structure_table(fresh)
    table = table[table["rule"].isin(done)]
    read = readable_test2(table, FRESH)
    rows = verdict_table(table, found, FRESH)
    for row in rows:
        row.pop(VERDICTS["untrained"], None)  # no untrained network is read on the fresh base models
        r, n = read.get(f"{row['rule']}/{row['subroutine']}/ablation{FRESH}", (0, 0))
        row["test 2 readable"] = f"{r} of {n}"
    return rows


def fresh_legend(fresh, expected: dict[str, int], found: dict[str, Finding]) -> str:
    """The line under :func:`fresh_table`: :func:`table_legend` without the row it drops, what its
    row "test 2 readable" counts, and each rule of ``expected`` whose fresh base models are not all
    stored yet, so that it has no column (its claims are marked once all are); "" where no rule is
    run at this profile."""
    if not any(expected.values()):
        return ""
    waiting = [f"{RULE_WORDS[rule][0].upper()}{RULE_WORDS[rule][1:]} has no column yet: {len(_rule_rows(fresh, rule))} of its {n} fresh base "
               f"models are stored, and its {len(DRAWN[rule]) * len(FRESH_KINDS)} claims are marked once all {n} are."
               for rule, n in expected.items() if n and len(_rule_rows(fresh, rule)) < n]
    return " ".join([
        table_legend(found, untrained=False),
        "\"test 2 readable\", k of n: of the n base models test 2 counts, the k that removal leaves neither at "
        "the ceiling nor at the floor on both subroutines (the rule under \"How sparse must a subnetwork be?\"); "
        "only these can show the effect test 2 asks for.", *waiting])


SHORT = {"subnetwork": "test 1", "ablation": "test 2", "reinit": "test 2 re-initialised",
         "random": "vs random subnetwork", "random_ablation": "vs random removal"}  # open_reasons' names


def open_reasons(decisions: dict, rule: str) -> str:
    """Why ``rule``'s undecided fresh claims (``decisions``: :func:`modlib.claims.decisions` of the
    chapter) are undecided, grouped by the reason the rule gave, in words for the page: both arms
    at a floor or ceiling, a control that did not pass (named first, as the rule names it), or an
    interval too wide (the only kind more base models can close); "" where none is decided yet."""
    groups = {"ceiling": [], "control": [], "width": []}
    for sub in DRAWN[rule]:
        for kind in FRESH_KINDS:
            d = decisions.get(_key(f"{rule}/{sub}/{kind}{FRESH}"))
            if d is None or d.outcome != stats.UNDECIDED or not d.units:
                continue
            c = d.conditions
            # the rule's own order: a failed control is named before a floor or ceiling
            group = "control" if not c.get("controls", True) else "ceiling" if not c.get("measurable", True) else "width"
            groups[group].append(f"{sub} {SHORT[kind]}")
    words = {"ceiling": "at a floor or ceiling in both arms, nothing for the rule to read",
             "control": "with a control that did not pass",
             "width": "with an interval too wide, the kind more base models can close"}
    return "; ".join(f"{count(len(names), 'claim')} {words[g]} ({', '.join(names)})"
                     for g, names in groups.items() if names)


def fresh_planning(planned) -> list[dict[str, str]]:
    """What the fresh base models' count was planned on: for each (rule, subroutine, kind of
    :data:`FRESH_KINDS`), over the base models of ``planned``
    (:func:`~modlib.structural_compositionality.fresh_models.planned_on`; the units each claim
    counts), the estimate and the base models the planning rule asks for
    (:func:`modlib.stats.units_to_decide`, under the claim's margin; "more than 200" where none up to
    that many would), in the column :data:`NEEDED`; "base models read" counts those of ``planned``
    the claim reads (past the selection gate, or every one for removal against random weights)."""
    arms = {"subnetwork": ("sub_target", "sub_other", LOWER, True), "random": ("sub_target", "random_target", LOWER, True),
            "ablation": ("abl_other", "abl_target", CLEAR, True), "reinit": ("reinit_other", "reinit_target", CLEAR, True),
            "random_ablation": ("rand_abl_target", "abl_target", CLEAR, False)}  # (a, b, margin, gated)
    table = structure_table(planned)
    rows = []
    for (rule, sub), t in table[table["trained"]].groupby(["rule", "subroutine"], sort=False):
        for kind in FRESH_KINDS:
            a, b, margin, gated = arms[kind]
            u = t[t["passed_gate"] == True] if gated else t  # noqa: E712
            x, y = _by_model(u, a), _by_model(u, b)
            need = stats.units_to_decide("paired", x, y, margin)
            rows.append({"rule": RULE_WORDS[rule], "subroutine": sub, "test": CLAIM_WORDS.get(kind, kind),
                         "base models read": str(len(x)), "estimate": stats.number(float((x - y).mean()), sign=True),
                         NEEDED: "more than 200" if need is None else str(need)})
    return rows
