"""What chapter 4's stored results show (notebooks/weight_masks.ipynb, weight masks): the page's
statements about specialization (:func:`specialization`), reuse (:func:`reuse`) and class removal
(:func:`class_removal`), computed in one place so that the page's prose and the claims tests
(``tests/test_claims.py``) say the same thing at every profile.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from modlib import claims, stats
from modlib.weight_masks import protocol
from modlib.stats import mean_pm

CHAPTER = "weight_masks"  # the registry's chapter (modlib/weight_masks/claims.toml)


def _key(cid: str) -> str:
    """The registry key of this chapter's claim ``cid``."""
    return f"{CHAPTER}/{cid}"


def _decide(cid: str, effect: stats.Effect, **conditions) -> stats.Verdict:
    return claims.decide(_key(cid), effect, **conditions)


def _say(v: stats.Verdict, text: str) -> stats.Claim:
    """The page's statement of the claim ``v`` decided (:func:`modlib.claims.statement`); where the
    registry labels the claim's reading post hoc (chosen after its results were seen), the label
    follows the verdict, and the verdict as first registered of an amended claim written down after
    its results were seen is labelled post hoc too."""
    c = claims.statement(v, text)
    was = claims.registered_words(v.claim)
    if v.amended and was and claims.post_hoc(v.claim):  # the verdict as registered is post hoc too
        said = stats.amended_sentence(v)
        c = dataclasses.replace(c, text=c.text.replace(
            said, said.replace(f"registered: {was}", f"registered: {was} ({claims.POST_HOC})")))
    note = claims.get(v.claim).note
    if note.startswith("post hoc"):
        note = reader_note(note)
        fields = " and ".join(sorted({a.field for a in claims.get(v.claim).amendments}))
        if note.endswith("; unchanged since") and fields and "margin" not in fields:  # amended, not the margin
            note = note.removesuffix("unchanged since") + f"the {fields} was amended since, not the margin"
        c = dataclasses.replace(c, text=f"{c.text} *{note[0].upper()}{note[1:]}.*")
    return c


def reader_note(note: str) -> str:
    """A registry note (:attr:`modlib.claims.Registered.note`) in a reader's words, for the page: no
    commit hashes ("set in 498d0eb (2026-11-25)" -> "set on 2026-11-25"), no constant names
    ("its allowance SPARES = 0.2" -> "its allowance 0.2", "(COLLAPSE = 0.3)" -> "(0.3)") and no
    stored results' file names ("addmul-seed0..4" -> "the main networks' results of seeds 0 to 4",
    "cnn-seed0" -> "the CNN's result of seed 0"). The registry keeps the note as written (the claims
    ledger shows it)."""
    note = re.sub(r" in [0-9a-f]{7} \((\d{4}-\d\d-\d\d)\)", r" on \1", note)
    note = re.sub(r"\b[A-Z][A-Z_]{2,} = ", "", note)
    note = re.sub(r"\b([a-z]+)-seed(\d+)\.\.(\d+)",
                  lambda m: f"the {_WHOSE.get(m[1], '')}results of seeds {m[2]} to {m[3]}", note)
    return re.sub(r"\b([a-z]+)-seed(\d+)", lambda m: f"the {_WHOSE.get(m[1], '')}result of seed {m[2]}", note)


# a stored result's experiment, as :func:`reader_note` names it for a reader
_WHOSE = {"addmul": "main networks' ", "double": "double addition's ", "cnn": "CNN's ", "cnnlayers": "CNNs' "}


def registered_first(key: str, then: str = "", now: str = "") -> str:
    """Both verdicts of the registered claim ``key`` as last decided, the verdict as first registered
    first, in one short line for every place the page gives them (the box, the sections, the Summary;
    the claim's section says once, in full, why and when it was amended): "as first registered
    (margin 0.5): ✗ not reproduced (post hoc); as amended (margin 0.05): ✓ reproduced (post hoc)".
    Each verdict is labelled post hoc where the claim was written down after its first results were
    seen (:func:`modlib.claims.post_hoc`), so that neither reads as a tested prediction. ``then`` /
    ``now``: what the claim asked as first registered and as amended, in words, where the amendment's
    values do not say it. One verdict for a claim not amended, :data:`modlib.claims.NOT_DECIDED` for
    one not decided."""
    d = claims.decisions(CHAPTER).get(key)
    if d is None:
        return claims.NOT_DECIDED
    late = claims.post_hoc(key)
    tag = f" ({late})" if late else ""
    a = claims.amended(key)
    if a is None or not a.shown or not a.decided:
        return claims.outcome_words(d.outcome, claims.get(key).own) + tag
    shown = a.shown
    if len(shown) == 1 and isinstance(shown[0].old, float):
        then = then or f"{shown[0].field} {shown[0].old:g}"
        now = now or f"{shown[0].field} {shown[0].new:g}"
    first = f"as first registered{f' ({then})' if then else ''}"
    after = f"as amended{f' ({now})' if now else ''}"
    if a.same:
        return f"{a.now}{tag}, {first} and {after}"
    return f"{first}: {a.first}{tag}; {after}: {a.now}{tag}"


def _changed(shown: tuple[claims.Amendment, ...]) -> tuple[str, str, str]:
    """What the amendments ``shown`` of a claim (:attr:`modlib.claims.Amended.shown`) changed, as the
    page says it: (what, for the clause "with <what> after the results were seen"; the new value or
    the date, for its brackets; the claim as first registered, for "as first registered, <then>")."""
    if len(shown) == 1 and isinstance(shown[0].old, float):
        a = shown[0]
        return f"a {a.field} chosen", f"{a.new:g}", f"with a {a.field} of {a.old:g}"
    fields = list(dict.fromkeys(a.field for a in shown))
    dates = ", ".join(dict.fromkeys(a.date for a in shown))
    return f"{' and '.join(claims.FIELD_WORDS.get(f, f'a {f}') for f in fields)} revised", dates, ""


def double(key: str, now: str, plain: str = "", then: str = "", dated: bool = True) -> str:
    """The verdict ``now`` (its mark and outcome) on the registered claim ``key`` as the page prints
    it, by the book-wide convention (:func:`modlib.claims.decide`, the claims ledger): for a claim
    amended after its results were seen, the verdict of the claim as it now stands, marked as changed
    after the results were seen, then the verdict as first registered (``then``: what the claim asked
    then, in words, where the amendment's values do not say it); ``plain``: what the numbers show,
    in the change's brackets. ``now`` alone for a claim not amended. Each verdict is labelled post
    hoc where the claim was written down after its first results were seen
    (:func:`modlib.claims.post_hoc`). ``dated`` false (a revised
    claim): no date and no "see the claims ledger" in the brackets, for a line that links the
    ledger itself (the "What we found" box)."""
    a = claims.amended(key)
    if a is None or not a.shown or not a.decided:
        return now
    what, value, before = _changed(a.shown)
    if "revised" in what and not dated:
        value = ""
    said = f"{value}: {plain}" if plain and value else plain or value
    if "revised" in what and dated:
        said += "; see the claims ledger"
    then = then or before
    reg = f"as first registered{', ' + then if then else ''}"
    late = f" ({claims.post_hoc(key)})" if claims.post_hoc(key) else ""  # both verdicts, where post hoc
    tail = f"the same verdict {reg}" if a.same else f"{reg}, {a.first}{late}"
    said = f" ({said})" if said else ""
    return f"{now}{late}, with {what} after the results were seen{said}; {tail}"


def marked(f: stats.Claim, plain: str = "", then: str = "") -> str:
    """A statement's mark and outcome as the page's prose quotes it (``"✓ reproduced"``, ``"holds"``,
    ``"check passed"``); for a claim amended after its results were seen, by the book-wide
    convention (:func:`double`): the verdict of the claim as it now stands, marked as changed after
    the results were seen, then the verdict as first registered."""
    if f.verdict is None:
        return f.outcome
    if not f.verdict.amended:
        return claims.tagged(f)
    return double(f.verdict.claim, f.marked, plain, then)


def plain_devices(text: str) -> str:
    """Devices as :func:`modlib.results.device_text` names them, shorter for a caption or a sentence:
    ``"GPU (NVIDIA H200)"`` for ``"cuda (NVIDIA H200)"``, ``"CPU (1 and 2 threads)"`` for ``"CPU
    (results computed with 1 and 2 threads)"``. Display only."""
    return text.replace("cuda (", "GPU (").replace("(results computed with ", "(")


def margin(cid: str) -> float:
    """The registered margin of this chapter's claim ``cid`` (what the page's text states)."""
    return claims.get(_key(cid)).margin


def _interval(e: stats.Effect) -> str:
    """An effect's interval in words, without a verdict: ``"paired t interval +0.01 to +0.08 over 5 seeds"``."""
    return f"{e.interval} interval {stats.ends(e.low, e.high, 0)} over {e.over}"


# the label of the dense-layer check of :func:`class_layers` (no registry entry): its present criterion,
# placed against the null mask, was set (178f510) after two of the three CNNs were stored
PLACE_LATE = claims.POST_HOC
FAR_ABOVE_CHANCE = 10  # "well above chance": at least this many times the accuracy of guessing


# The margins, directions and the paper's numbers of every verdict are in the registry
# (modlib/weight_masks/claims.toml, read by modlib.claims.decide); these are the measures' own bars.
TRAINED = stats.TRAINED  # the book's bar; a base network compared has trained: at least this on each of its tasks
SPARES = 0.2  # "spares the other operation": it loses at most this share more than under random removal
# class removal (the paper: removing a class's weights hurts "mostly that class" and its accuracy "drops
# significantly"; it gives no size): selectivity and collapse each at their registered margin
CNN_TRAINED = 0.5  # the CNN trained: its mean per-class accuracy under the all-classes mask reaches this
# issue 52 (the amendment of class-collapses and cnn-collapses): the size claim cannot be decided
NO_SIZE = ("the paper's text gives no number for \"drops significantly\" (its per-class figure, which the authors' "
           "paper/plot_cifar10_drop_per_class.py draws from their CIFAR-10 runs, is not in the text the book has), "
           "so how far a removed class must fall cannot be taken from it")


def span(values, same: str, apart: str) -> str:
    """The range of ``values`` in words for a sentence, to two decimals: ``"1.00 <same>"`` when
    they all agree (e.g. ``same="at every α"``), else ``"0.95 to 1.00 <apart>"`` (e.g.
    ``apart="across the α values"``), never "1.00 to 1.00"."""
    values = np.asarray(values, dtype=float)
    low, high = f"{values.min():.2f}", f"{values.max():.2f}"
    return f"{low} {same}" if low == high else f"{low} to {high} {apart}"


def kept_share(kept: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The share of all of a network's masked weights that a mask keeps, from its per-layer shares
    ``kept [..., L]`` in layers of ``sizes [L]`` weights (:func:`~modlib.weight_masks.causes.mask_sizes`):
    ``[...]``. Each layer counts by its weights, so the wide inner layers weigh most, as they do in
    the network (a mean over layers would count the 42 × 1024 input layer as much as the 1024 ×
    1024 one)."""
    sizes = np.asarray(sizes, dtype=float)
    return np.asarray(kept, dtype=float) @ sizes / sizes.sum()


def degenerate(kept: np.ndarray | None) -> bool:
    """Whether a mask keeps nothing in some layer (the network it leaves is cut) or keeps every
    weight in every layer: ``kept [..., layers]``; ``None`` (not stored) counts as not degenerate."""
    if kept is None:
        return False
    kept = np.asarray(kept, dtype=float)
    return bool((kept.min(-1) <= 0).any() or (kept.min(-1) >= 0.999).any())


def _density(kept, labels, sizes) -> str:
    if kept is None:
        return ""
    if sizes is None:
        raise ValueError("give the layers' sizes with the kept shares (modlib.weight_masks.mask_sizes)")
    share = kept_share(kept, sizes)
    return " Kept share (of all the network's masked weights): " + ", ".join(
        f"{label} mask {_pct(share[:, k])}" for k, label in enumerate(labels)) + "."


def _pct(values) -> str:
    """A kept share over units as a page writes it: ``"1.4% ± 0.1%"`` (mean ± sd)."""
    v = 100 * np.asarray(values, dtype=float).reshape(-1)
    digits = 1 if v.mean() < 10 else 0
    return f"{v.mean():.{digits}f}%" + (f" ± {v.std():.{digits}f}%" if v.size > 1 else "")


def _spares(tables: np.ndarray, controls: np.ndarray) -> tuple[stats.Effect, bool]:
    """The measure of "removing a mask spares the other operation", per seed on the worse mask: what
    the other operation keeps after the mask's removal minus after removing as many random weights,
    plus the allowance :data:`SPARES` (paired against 0); and whether the random removal itself
    spares the other operation (keeps at least half of it), the control the claim needs."""
    full = np.maximum(tables[:, 0][:, None, :], 1e-9)
    rel, crel = tables / full, controls / full
    d = np.min([rel[:, 2 + 2 * k, 1 - k] - crel[:, 1 + 2 * k, 1 - k] for k in range(2)], axis=0) + SPARES
    random_spares = bool(all((crel[:, 1 + 2 * k, 1 - k] >= 0.5).all() for k in range(2)))
    return stats.paired(d, np.zeros(len(tables))), random_spares


def specialization(tables: np.ndarray, controls: np.ndarray, chance: float,
                   kept: np.ndarray | None = None, sizes: np.ndarray | None = None,
                   trained: bool | None = None, suffix: str = "") -> list[stats.Claim]:
    """Chapter 4's add/multiply table: ``tables [seeds, 5, 2]`` (rows ``modularity.ROWS``: full model,
    + mask, + mask removed, × mask, × mask removed; columns +, ×), ``controls [seeds, 4, 2]``
    (``modularity.CONTROL_ROWS``: random masks as dense, alone and removed) and the masks' kept
    shares ``kept [seeds, 3, layers]`` (+, ×, both) in layers of ``sizes [layers]`` weights. Four claims, each decided by the book's rule
    (:func:`modlib.stats.verdict`) over seeds (independent base networks), on the worse of the two
    masks per seed (accuracies as shares of the full network's): each mask alone does its own
    operation and not the other; removing a mask loses its own operation more than removing as many
    random weights; the removal is selective (the other operation keeps more than the own); and the
    paper's claim proper, that the removal spares the other operation (it loses at most
    :data:`SPARES` more than under the random removal, which must itself spare it). Every claim
    needs both base operations trained (:data:`TRAINED` on both in ``tables``' first row, unless
    the caller decides it as ``trained``: a table read on problems the network did not train on)
    and masks that are not degenerate. The claims are the registry's ``alone``, ``own-loss``,
    ``selective`` and ``spares``, each id followed by ``suffix`` (``"-heldout"``: the same claims
    on the held-out problems, :func:`heldout`)."""
    full = tables[:, 0]  # [seeds, 2]
    ops, out = ("+", "×"), []
    rel = tables / np.maximum(full[:, None, :], 1e-9)  # [seeds, 5, 2]: shares of the full network
    crel = controls / np.maximum(full[:, None, :], 1e-9)
    alone = [(tables[:, 1 + 2 * k, k], tables[:, 1 + 2 * k, 1 - k]) for k in range(2)]  # own, other
    removed = [(tables[:, 2 + 2 * k, k], tables[:, 2 + 2 * k, 1 - k]) for k in range(2)]
    random_removed = [controls[:, 1 + 2 * k] for k in range(2)]  # [seeds, 2]: + and × after random removal
    trained = bool((full >= TRAINED).all()) if trained is None else trained
    masks_ok = not degenerate(None if kept is None else np.asarray(kept)[:, :2])
    density = _density(None if kept is None else np.asarray(kept)[:, :2], ops, sizes)
    base = "" if trained else " (a base network did not train)"
    zero = np.zeros(len(tables))

    def per_mask(values):
        return np.min(np.stack(values), axis=0)  # [seeds]: the worse of the two masks

    # 1. alone: own minus other, as shares of the full network
    d = per_mask([rel[:, 1 + 2 * k, k] - rel[:, 1 + 2 * k, 1 - k] for k in range(2)])
    random_alone_fails = bool(all((crel[:, 2 * k, k] < 0.5).all() for k in range(2)))
    v = _decide("alone" + suffix, stats.paired(d, zero), trained=trained, controls=masks_ok and random_alone_fails)
    out.append(_say(v, (
        f"**Each mask alone.** The + mask adds at {mean_pm(alone[0][0])} and multiplies at {mean_pm(alone[0][1])}; the × "
        f"mask multiplies at {mean_pm(alone[1][0])} and adds at {mean_pm(alone[1][1])} (full network: + {mean_pm(full[:, 0])}, "
        f"× {mean_pm(full[:, 1])}){base}; random masks as dense, alone, get + {mean_pm(controls[:, 0, 0])} and "
        f"× {mean_pm(controls[:, 2, 1])}.{density} Measured per seed on the worse mask: its own operation minus the "
        f"other, as shares of the full network (the paper: about 1).")))
    # 2. removal loses its own operation, against removing as many random weights
    d = per_mask([crel[:, 1 + 2 * k, k] - rel[:, 2 + 2 * k, k] for k in range(2)])
    v = _decide("own-loss" + suffix, stats.paired(d, zero), trained=trained, controls=masks_ok)
    out.append(_say(v, (
        f"**Removing a mask, its own operation.** Without the + mask the network adds at {mean_pm(removed[0][0])}; "
        f"without the × mask it multiplies at {mean_pm(removed[1][0])} (chance: {chance:g}; removing as many random "
        f"weights: + {mean_pm(random_removed[0][:, 0])}, × {mean_pm(random_removed[1][:, 1])}). Measured per seed on the "
        f"worse mask: what the random removal keeps of the own operation minus what the mask's removal keeps.")))
    # 3. selective: the other operation keeps more than the own
    each = [stats.paired(rel[:, 2 + 2 * k, 1 - k], rel[:, 2 + 2 * k, k]) for k in range(2)]  # described, not decided
    d = per_mask([rel[:, 2 + 2 * k, 1 - k] - rel[:, 2 + 2 * k, k] for k in range(2)])
    v = _decide("selective" + suffix, stats.paired(d, zero), trained=trained, controls=masks_ok)
    half_answer = float(np.sqrt(chance))  # one digit of two right, the other guessed
    out.append(_say(v, (
        f"**Removing a mask, the other operation.** Without the + mask the network multiplies at "
        f"{mean_pm(removed[0][1])}; without the × mask it adds at {mean_pm(removed[1][1])}. Removing random weights, as "
        f"many in each layer, leaves + {mean_pm(random_removed[0][:, 0])} / × {mean_pm(random_removed[0][:, 1])} (the "
        f"+ mask's count) and + {mean_pm(random_removed[1][:, 0])} / × {mean_pm(random_removed[1][:, 1])} (the × mask's). "
        f"A network that gets one of the two digits right and guesses the other scores {half_answer:g} (the "
        f"ones digit of a sum or a product depends on the ones digits alone, so it is the easy half). Other "
        f"operation minus own, as shares of the full network: + mask removed, {_interval(each[0])}; "
        f"× mask removed, {_interval(each[1])}. Both masks together (the worse per seed):")))
    # 4. the paper's claim: the other operation is spared about as well as by a random removal
    e, random_spares = _spares(tables, controls)  # the allowance is in the measure: its sign decides
    v = _decide("spares" + suffix, e, trained=trained, controls=masks_ok and random_spares)
    out.append(_say(v, (
        f"**The paper's claim.** Removing the + mask should leave multiplication working, near the full "
        f"network's accuracy (and mirrored for ×). Measured per seed on the worse mask: what the other "
        f"operation keeps after the mask's removal minus what it keeps after removing as many random weights "
        f"(which {'spares' if random_spares else 'does not spare'} it), plus the allowance of {SPARES:g}: "
        f"above 0 the removal spares the other operation as the paper found."
        + ("" if v.outcome != stats.NOT_REPRODUCED else
           " Here removing one operation's module costs the other part of its accuracy; whether the network's "
           "size or the mask schedule moves this is what the section on what the verdicts depend on tests."))))
    return out


def hidden_layers(iou: np.ndarray) -> np.ndarray:
    """Per seed, the mean over the hidden layers (all but the first and the last) of a per-layer
    overlap ``iou [seeds, L]``: in the double addition the first and last layers serve one pair by
    construction, so reuse is read on the others."""
    return iou[:, 1:-1].mean(1)


def others_reference(reference: np.ndarray) -> np.ndarray:
    """For each class ``c``, the mean accuracy of the other nine under the all-classes mask, from the
    per-class ``reference [10]``."""
    return (reference.sum() - reference) / (len(reference) - 1)


def reuse(iou: np.ndarray, iou_same: np.ndarray, iou_random: np.ndarray,
          tables: np.ndarray | None = None, kept: np.ndarray | None = None,
          sizes: np.ndarray | None = None, cid: str = "reuse", label: str = "") -> list[stats.Claim]:
    """Chapter 4's double addition: per-layer IoU ``[seeds, L]`` of the pair-1 and pair-2 masks
    (``iou``), of two pair-1 masks from different seeds (``iou_same``) and of random masks as dense
    (``iou_random``), read on the hidden layers (all but the first and the last: there the two
    pairs' inputs and outputs are disjoint by construction). No reuse, as the paper found: the two
    pairs' overlap is below that of two masks of one pair, decided by the rule over seeds (paired t
    interval of the difference). Given the ablation ``tables [seeds, 7, 2]`` (rows
    ``modularity.PAIR_ROWS``), it needs the base network trained (:data:`TRAINED` on both pairs)
    and each pair's mask alone doing its pair (at least half the full network's accuracy): the
    overlap of masks that fail their own task says nothing about reuse. Given ``kept [seeds, 4,
    layers]`` (both pairs, pair 1, pair 2, pair 1 again; with ``sizes [layers]``, the layers'
    weights), masks that keep nothing or everything, and
    a same-pair reference at IoU 1 (two "different" masks that are one), leave it undecided. ``cid``:
    the registry's claim (``"reuse"``, the page's network; ``"reuse-deep"``, the deeper one);
    ``label``: the network, named in a bold lead where the page shows more than one network's test."""
    pairs, same, rand = (hidden_layers(a) for a in (iou, iou_same, iou_random))  # [seeds]
    trained, alone_ok = True, True
    text = (f"**The reuse test in the {label}.** " if label else "") + (
            f"In the hidden layers the pair-1 and pair-2 masks overlap at IoU {mean_pm(pairs)}; two masks trained "
            f"for pair 1 from different mask seeds on one network overlap at {mean_pm(same)}, and random masks as dense at {mean_pm(rand)}. ")
    if tables is not None:
        trained = bool((tables[:, 0] >= TRAINED).all())
        alone = np.stack([tables[:, 3, 0] / tables[:, 0, 0], tables[:, 5, 1] / tables[:, 0, 1]])  # [2, seeds]
        alone_ok = bool((alone >= 0.5).all())
        text += (f"Alone, the pair masks keep {mean_pm(alone[0])} (pair 1) and {mean_pm(alone[1])} (pair 2) of the full "
                 f"network's accuracy" + ("." if alone_ok else ": masks that fail their own task cannot show "
                                          "reuse or its absence.") + ("" if trained else " A base network did not "
                                                                      "learn both additions."))
    if kept is not None:
        text += _density(np.asarray(kept)[:, 1:3], ("pair-1", "pair-2"), sizes)
    reference_ok = bool((same < 0.99).all())
    if not reference_ok:
        text += " The same-pair reference is at IoU 1: the two pair-1 masks are one mask, not a reference."
    e = stats.paired(same, pairs)
    v = _decide(cid, e, trained=trained, controls=reference_ok and not degenerate(kept) and alone_ok)
    if trained and not alone_ok:  # the networks trained; their pair masks do not do their pair
        v = dataclasses.replace(v, why=f"the pair masks do not do their own pair alone ({_interval(e)})")
    return [_say(v, text + (
        " Same-pair minus two-pair IoU per seed (the paper: the two pairs' masks share little):"))]


def _collapse_measure() -> str:
    """The collapse claims' measure in plain words, with the stand-in they were registered with."""
    return ("The measure: the share of its accuracy a removed class loses, minus one half (below 0: the class "
            "keeps more than half of its accuracy). As first registered, a collapse needed "
            f"a class to lose at least {0.5 + margin('class-collapses'):.0%} of its accuracy (one half plus the "
            f"margin {margin('class-collapses'):g}), the book's stand-in, arbitrary since the paper's text gives "
            "no number.")


def collapse_found(e) -> str:
    """What a collapse interval found (``e``: a :class:`modlib.stats.Effect`, or a decision with
    ``low`` and ``high``), in plain words, where it lies clear of 0: its verdict can be "cannot be
    decided here" while the data are clear, since the paper's text gives no number; "" otherwise. A
    description, not a verdict: no bar at one half was registered."""
    if e.high < 0:
        return ("more than half kept on average (a removed class keeps more than half of its accuracy on "
                "average, though a single class may not; the interval lies below 0)")
    if e.low > 0:
        return ("more than half lost on average (a removed class loses more than half of its accuracy on "
                "average, though a single class may not; the interval lies above 0)")
    return ""


def class_removal(own: np.ndarray, others: np.ndarray, reference: np.ndarray,
                  reference_others: np.ndarray | None = None, random_own: np.ndarray | None = None,
                  random_others: np.ndarray | None = None, networks: int = 1) -> list[stats.Claim]:
    """Chapter 4's class removal, per removed class ``[10]``: accuracy on it (``own``) and on the
    others (``others``) with its mask applied; the same under the all-classes mask (``reference``:
    per class; ``reference_others``: mean over the other nine, computed from ``reference`` when not
    given). Two claims: the removal is selective (the removed class loses more than the others), and
    the removed class collapses (its accuracy falls by more than half). The ten classes are
    measurements within one network (``networks``): the rule counts independent networks, so with
    one the verdict is "cannot be decided here" and the interval over classes (paired t; the exact
    sign test beside it) describes this network only. Given the random control (``random_own``,
    ``random_others``: the same under random masks as dense), the text says whether the learned masks
    differ from it; a random control that spares the other classes as well as the learned removal
    (a control equal to its treatment) leaves the claim undecided too."""
    if reference_others is None:
        reference_others = others_reference(reference)
    drop_own, drop_others = reference - own, reference_others - others
    far = drop_own > 2 * drop_others + 0.05
    collapsed = np.flatnonzero(own < 0.5 * reference)
    control, damaged, control_ok = "", False, True
    trained = bool(np.mean(reference) >= CNN_TRAINED)
    if random_own is not None and random_others is not None:
        damaged = bool((random_others < 0.5 * reference_others).any())
        control_ok = bool(np.mean(others - random_others) > 0)  # the learned removal spares the others better than random
        control = (f" A random mask as dense as each class mask leaves the other classes at {mean_pm(random_others)} "
                   f"and the removed class anywhere from {random_own.min():.2f} to {random_own.max():.2f}" + (
                       ": random masks this sparse damage the whole network, and which classes survive looks "
                       "like chance (a reading), so the class masks' selectivity is what sets them apart from damage."
                       if damaged else "."))
    def within(d):
        return f" Over the 10 classes of this network (exact sign test p = {stats.sign_test(d):.3f}):"

    def decide(cid, a, b, reason=""):
        # the ten classes are measurements of one network: the rule counts ``networks``
        effect = stats.paired(a, b, unit="class")
        v = claims.decide(_key(cid), low=effect.low, high=effect.high, units=networks, estimate=effect.mean,
                          trained=trained, controls=control_ok, measurable=effect.measurable, what=effect.interval,
                          over=f"the 10 classes of {networks} network{'s' if networks > 1 else ''}", reason=reason,
                          as_registered={"reason": ""})
        if not trained:
            return dataclasses.replace(v, why=v.why.replace("an arm did not train", (
                f"the CNN did not train: mean accuracy under the all-classes mask below {CNN_TRAINED}"), 1))
        return v

    return [
        _say(decide("class-hurts", drop_own, drop_others), (
            ("In this one CNN, removing" if networks == 1 else "Removing")
            + f" class c's weights drops its accuracy by {mean_pm(drop_own)} (over the ten classes; from "
            f"{drop_own.min():.2f} to {drop_own.max():.2f}) and the other classes' by {mean_pm(drop_others)}. The "
            f"removed class loses more than twice what the others lose, and at least 0.05, for "
            f"{'all 10' if far.all() else f'{int(far.sum())} of the 10'} classes" + ("." if far.all() else f"; not for {np.flatnonzero(~far).tolist()}.") + control + f" The stated margin (the paper gives a direction, not a size; how much "
            f"the class loses is the next statement's): the removed class loses at least {margin('class-hurts'):g} more than the "
            f"others; the CNN counts as trained at {CNN_TRAINED} mean accuracy under the all-classes mask (the "
            "registered reason: far above chance, 0.1, so that a class's drop can be read)."
            + within(drop_own - drop_others))),
        _say(decide("class-collapses", drop_own / np.maximum(reference, 1e-9), 0.5 + 0 * own, NO_SIZE), (
            f"The paper reports that a class's accuracy drops significantly when its weights are removed. Here "
            f"{len(collapsed)} of the 10 classes "
            + ("falls" if len(collapsed) == 1 else "fall")
            + " below half their accuracy under the all-classes mask"
            + (f" (class{'es' if len(collapsed) > 1 else ''} {', '.join(map(str, collapsed.tolist()))})"
               if len(collapsed) else "")
            + (". " if len(collapsed) == 10 else ": for the others the removal is partial. ")
            + _collapse_measure() + within(drop_own / np.maximum(reference, 1e-9) - 0.5))),
    ]



# --- what the verdicts depend on (issue 32: the added experiments of modlib.weight_masks.causes) ------


def stack(points: list[dict]) -> dict[str, np.ndarray]:
    """Points of one curve (one per seed, :func:`modlib.weight_masks.causes.point`) stacked over
    seeds: each array gains a leading ``[seeds]`` axis."""
    return {k: np.stack([np.asarray(p[k], dtype=float) for p in points]) for k in points[0]}


def _rel(tables: np.ndarray, controls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    full = np.maximum(tables[:, 0][:, None, :], 1e-9)
    return tables / full, controls / full


def random_kept(tables: np.ndarray, controls: np.ndarray) -> np.ndarray:
    """``[seeds, 2]``: what the other operation keeps after a random removal as dense as each mask (as a
    share of the full network's accuracy): × after one as dense as the + mask, + after one as dense
    as the × mask. The control of "removing a mask spares the other operation" needs both at least
    half (:func:`_spares`)."""
    _, crel = _rel(tables, controls)
    return np.stack([crel[:, 1, 1], crel[:, 3, 0]], axis=1)


def mask_sparing(tables: np.ndarray, controls: np.ndarray) -> np.ndarray:
    """``[2, seeds]``, for the + mask then the × mask: what the other operation keeps once the mask is
    removed minus what it keeps once as many random weights are removed, as shares of the full
    network's accuracy."""
    rel, crel = _rel(tables, controls)
    return np.stack([rel[:, 2 + 2 * k, 1 - k] - crel[:, 1 + 2 * k, 1 - k] for k in range(2)])


def sparing(tables: np.ndarray, controls: np.ndarray) -> np.ndarray:
    """Per seed ``[seeds]``, on the worse of the + and × masks, :func:`mask_sparing` (the measure of
    the "spares the other operation" claim of :func:`specialization`, without its allowance): about 0
    where the removal spares the other operation as a random one does, below 0 where it costs it more."""
    return mask_sparing(tables, controls).min(0)


def own_loss(tables: np.ndarray, controls: np.ndarray) -> np.ndarray:
    """Per seed, on the worse mask: what the random removal keeps of the own operation minus what
    the mask's removal keeps (the measure of "removing a mask loses its own operation")."""
    rel, crel = _rel(tables, controls)
    return np.min([crel[:, 1 + 2 * k, k] - rel[:, 2 + 2 * k, k] for k in range(2)], axis=0)


def retention(tables: np.ndarray, controls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per seed ``[seeds]``, on the mask :func:`sparing` reads (the one whose removal costs the
    other operation most against a random removal as dense): what the other operation keeps once
    the mask is removed, and once as many random weights are removed (both as shares of the full
    network's accuracy), so that sparing is their difference. The plain measure beside sparing: a
    sparser mask's removal keeps more of the other operation, but a random removal as sparse keeps
    more too, so the two can move in opposite directions (the width and α curves)."""
    rel, crel = _rel(tables, controls)
    learned = np.stack([rel[:, 2 + 2 * k, 1 - k] for k in range(2)])  # [2 masks, seeds]
    rand = np.stack([crel[:, 1 + 2 * k, 1 - k] for k in range(2)])
    k, idx = (learned - rand).argmin(0), np.arange(learned.shape[1])
    return learned[k, idx], rand[k, idx]


def mask_alone(tables: np.ndarray) -> np.ndarray:
    """``[2, seeds]``: the + mask, then the × mask, alone on its own operation, as a share of the full
    network's accuracy."""
    rel = tables / np.maximum(tables[:, 0][:, None, :], 1e-9)
    return np.stack([rel[:, 1 + 2 * k, k] for k in range(2)])


def alone(tables: np.ndarray) -> np.ndarray:
    """Per seed, the worse mask alone on its own operation (:func:`mask_alone`)."""
    return mask_alone(tables).min(0)


def _usable(p: dict) -> bool:
    """A point's masks can be read: every network trained (:data:`TRAINED` on both operations), no
    mask keeps nothing or everything, each mask alone keeps at least half of its own operation and
    its removal loses its own operation more than a random removal does."""
    return bool((p["table"][:, 0] >= TRAINED).all() and not degenerate(p["kept"]) and (alone(p["table"]) >= 0.5).all()
                and (own_loss(p["table"], p["control"]) > 0).all())


def _shape(h) -> str:
    h = tuple(int(v) for v in h)
    return f"{h[0]}×{len(h)}" if len(set(h)) == 1 else "-".join(map(str, h))


def _point_line(label: str, p: dict) -> str:
    t, c = p["table"], p["control"]
    return (f"{label}: raw accuracies, without the + mask × keeps {mean_pm(t[:, 2, 1])} (random removal {mean_pm(c[:, 1, 1])}), without the "
            f"× mask + keeps {mean_pm(t[:, 4, 0])} (random {mean_pm(c[:, 3, 0])}); sparing (in shares of the full network's accuracy) {mean_pm(sparing(t, c))}; "
            f"alone, the worse mask keeps {mean_pm(alone(t))} of its own operation; "
            f"kept share + {_pct(p['share'][:, 0])}, × {_pct(p['share'][:, 1])}; "
            f"share of the + mask's weights the × mask keeps too {mean_pm(p['overlap'])} (chance "
            f"{mean_pm(p['overlap_chance'])})")


def _raw(a: dict, b: dict, la: str, lb: str) -> str:
    """The plain measure beside sparing at two points (:func:`retention`), and how good their masks
    are alone (:func:`alone`): the two ends of a curve need not have masks of equal quality."""
    (ra, ca), (rb, cb) = retention(a["table"], a["control"]), retention(b["table"], b["control"])
    return (f"As shares of the full network's accuracy (not raw accuracies), after the worse mask's removal the other operation keeps {mean_pm(ra)} at {la} and {mean_pm(rb)} "
            f"at {lb} (after a random removal as dense: {mean_pm(ca)} and {mean_pm(cb)}); alone, the worse mask keeps "
            f"{mean_pm(alone(a['table']))} and {mean_pm(alone(b['table']))} of its own operation (lowest network "
            f"{alone(a['table']).min():.2f} and {alone(b['table']).min():.2f}; a mask is read only where it keeps at least 0.5).")


def _compared_widths(points: dict, depth: int) -> tuple[dict, dict]:
    """The widths of ``depth`` hidden layers, and those of them compared: every network trained
    (:data:`TRAINED` on both operations) and at least two networks."""
    main = {h: p for h, p in points.items() if len(h) == depth}
    used = {h: p for h, p in main.items() if (p["table"][:, 0] >= TRAINED).all() and len(p["table"]) >= 2}
    return main, used


def width_ends(points: dict, depth: int = 2) -> tuple[tuple, tuple]:
    """The two shapes :func:`width_curve` compares: the narrowest and the widest of ``depth``
    hidden layers whose networks all trained, with at least two of them (all widths of that depth
    where fewer than two qualify)."""
    main, used = _compared_widths(points, depth)
    pool = used if len(used) >= 2 else main
    return min(pool), max(pool)


def curve_table(points: dict, name: str, label=_shape):
    """The width or α curve's points as a table, one row a point (``points``: key -> :func:`stack`'d
    arrays over networks; ``name`` heads the key's column, ``label`` writes a key): the networks
    stored, the share of the weights the + and × masks keep, what the other operation keeps after
    the worse mask's removal and after a random removal as dense (:func:`retention`), the worse mask
    alone on its own operation (:func:`alone`), all as shares of the full network's accuracy, and
    the share of the + mask's weights the × mask keeps too beside its chance level. Means over
    networks; the statements below the table give the spreads."""
    import pandas as pd

    rows = []
    for key, p in points.items():
        kept, rand = retention(p["table"], p["control"])
        plus, times = 100 * p["share"].mean(0)
        rows.append({
            name: label(key), "networks": len(p["table"]),
            "weights kept, + / × mask (%)": f"{plus:.1f} / {times:.1f}",
            "other operation kept: mask removed": kept.mean(),
            "other operation kept: random removal": rand.mean(),
            "own operation kept by the worse mask alone": alone(p["table"]).mean(),
            "+ weights × keeps too (chance)": f"{p['overlap'].mean():.2f} ({p['overlap_chance'].mean():.2f})"})
    return pd.DataFrame(rows)


def _seeds(p: dict) -> tuple[int, ...]:
    """The seeds of a :func:`stack`'d point (its ``seed``; 0, 1, ... where not given)."""
    return tuple(p["seed"].astype(int)) if "seed" in p else tuple(range(len(p["table"])))


def alpha_ends(points: dict) -> tuple[float, float] | None:
    """The two α values :func:`alpha_curve` compares (the weakest and the strongest whose masks
    can be read, among those with every seed stored), or None where fewer than two have every
    seed."""
    seeds = {a: _seeds(p) for a, p in points.items()}
    full = max(seeds.values(), key=len)
    compared = sorted(a for a in points if seeds[a] == full)
    usable = [a for a in compared if _usable(points[a])]
    if len(compared) < 2:
        return None
    return (usable[0], usable[-1]) if len(usable) >= 2 else (compared[0], compared[-1])


def width_curve(points: dict, depth: int = 2, listed: bool = True) -> list[stats.Claim]:
    """The width curve at one mask schedule: ``points`` shape -> :func:`stack`'d arrays over seeds
    (each seed an independent network). Three comparisons between the narrowest width of ``depth``
    hidden layers that trained (:data:`TRAINED` on both operations, every seed; the text names
    those that did not, and those with one network so far) and the widest (Welch's t interval over networks; the paper gives no size,
    so the registered margin stands in): the paper's (Csordás et al. 2021, appendix: the + and
    × masks share fewer weights as the network grows), on the share of the + mask's weights the ×
    mask keeps too, pooled over layers as the authors plot it (:func:`~modlib.weight_masks.causes.total_shared`;
    its chance level beside it: sparser masks share less by chance alone); the page's check of the
    paper's reading, on the same share relative to its chance level (it falls too only if the wider
    network's masks share fewer weights than their density makes); and the page's own hypothesis
    that a wider network's removal spares the other operation more (:func:`sparing`, with the raw
    :func:`retention` and the masks alone beside it).
    The text gives Spearman's rank correlation with the width over every network that trained, as
    a description (the widths, not the networks, are the replicates of a trend). Each needs both
    ends trained and masks that can be read (:func:`_usable`). Then each other depth against
    ``depth`` layers at its width (the page's hypothesis too). ``listed`` false leaves each width's
    numbers out of the first statement's text, for a page that shows them in :func:`curve_table`."""
    main, used = _compared_widths(points, depth)
    other = {h: p for h, p in points.items() if len(h) != depth}
    lines = [_point_line(f"{_shape(h)}", p) for h, p in points.items()]
    text = ("**The width curve** (one mask schedule; per network the worse of the two masks; mean ± sd over "
            "networks)" + (". " + "; ".join(lines) + ". " if listed else ": each width's numbers are in the "
                           "table above. "))
    out = []
    untrained = {h: p for h, p in points.items() if not (p["table"][:, 0] >= TRAINED).all()}
    if untrained:
        text += (f"Networks below {TRAINED} on an operation, left out of the comparisons: " + ", ".join(
            f"{_shape(h)} (+ {mean_pm(p['table'][:, 0, 0])}, × {mean_pm(p['table'][:, 0, 1])})" for h, p in untrained.items())
            + ". ")
    few = {h: p for h, p in main.items() if h not in untrained and len(p["table"]) < 2}
    if few:
        text += ("Widths with one network so far, shown but not compared: " + ", ".join(map(_shape, few)) + ". ")
    if len(main) >= 2:
        low, high = width_ends(points, depth)
        narrow, wide = main[low], main[high]
        trained = len(used) >= 2
        ok = _usable(narrow) and _usable(wide)
        width = np.concatenate([np.full(len(p["table"]), float(h[0])) for h, p in used.items()] or [np.zeros(0)])
        rho = stats.correlation(width, np.concatenate([p["overlap"] for p in used.values()] or [np.zeros(0)]),
                                unit="network")
        ratio = ", ".join(f"{_shape(h)} {np.mean(p['overlap'] / np.maximum(p['overlap_chance'], 1e-9)):.1f}×"
                          for h, p in used.items())
        e = stats.unpaired(narrow["overlap"], wide["overlap"], unit="network")
        v = _decide("width-shared", e, trained=trained, controls=ok)
        out.append(_say(v, text + (
            f"The share of the + mask's weights that the × mask keeps too (all layers, as the authors plot it), "
            f"{_shape(low)} minus {_shape(high)}: {e.text()} (the paper: sharing falls as the network grows; its "
            f"2000×4 network is the closest to {_shape(max(main))}). Sparser masks share less by chance alone: "
            f"relative to its chance level the share is {ratio or 'not measured'}. Over every network that "
            f"trained, the rank correlation of width and share is {rho.text(percent=False)}.")))
        over = {h: p["overlap"] / np.maximum(p["overlap_chance"], 1e-9) for h, p in (("narrow", narrow), ("wide", wide))}
        e = stats.unpaired(over["narrow"], over["wide"], unit="network")
        v = _decide("width-density", e, trained=trained, controls=ok)
        out.append(_say(v, (
            f"The page's check of the paper's reading (fewer shared weights: more separate modules) against "
            f"density: the share relative to its chance level, {_shape(low)} minus {_shape(high)}: "
            f"{e.text(percent=False)} (as ratios to chance, margin {margin('width-density'):g}; where this does not "
            f"hold, the raw share's fall is what sparser masks give by chance).")))
        e = stats.unpaired(sparing(wide["table"], wide["control"]), sparing(narrow["table"], narrow["control"]),
                           unit="network")
        v = _decide("width-spares", e, trained=trained, controls=ok)
        out.append(_say(v, (
            f"The page's hypothesis. Sparing (the other operation after the mask's removal "
            f"minus after a random removal as dense), {_shape(high)} minus {_shape(low)}: {e.text()}. "
            + _raw(wide, narrow, _shape(high), _shape(low)))))
    for h, deep in other.items():
        shallow = main.get((h[0],) * depth)
        if shallow is None:
            continue
        trained = bool((deep["table"][:, 0] >= TRAINED).all() and (shallow["table"][:, 0] >= TRAINED).all())
        e = stats.unpaired(sparing(deep["table"], deep["control"]), sparing(shallow["table"], shallow["control"]),
                           unit="network")
        v = _decide("depth-spares", e, trained=trained, controls=_usable(deep) and _usable(shallow))
        out.append(_say(v, (
            f"The page's hypothesis. At width {h[0]}, sparing with {len(h)} hidden layers minus with {depth}: "
            f"{e.text()}.")))
    return out


def alpha_curve(points: dict, devices: dict | None = None, listed: bool = True) -> list[stats.Claim]:
    """The α curve on one network per seed: ``points`` α -> :func:`stack`'d arrays over seeds (the
    same networks at every α; each point's ``seed [seeds]``, where given, pairs them). The page's
    explanation that the mask schedule moves the verdict: the strongest α's removal spares the
    other operation more than the weakest's (:func:`sparing`), paired by seed over networks (t
    interval), needing every network trained and both ends' masks readable (:func:`_usable`: a
    mask too sparse to do its own operation spares everything by keeping nothing); the text lists
    each α's numbers and kept shares, and the plain measure at both ends (:func:`retention`). An α
    with fewer networks stored than the others is shown, not compared. ``devices`` ({α: the
    devices that made its networks, in words}): where one α's differ from the others', its
    networks of one seed may differ in weights, which the text says. ``listed`` false leaves each
    α's numbers out of the text (as :func:`width_curve`)."""
    alphas = sorted(points)
    seeds = {a: _seeds(points[a]) for a in alphas}
    full = max(seeds.values(), key=len)
    compared = [a for a in alphas if seeds[a] == full]  # the same networks (seeds) at each
    usable = [a for a in compared if _usable(points[a])]
    ends = alpha_ends(points)
    lines = [_point_line(f"α = {a:g}", points[a]) + ("" if a in compared else f" ({len(seeds[a])} "
             f"network{'s' * (len(seeds[a]) > 1)} stored so far: shown, not compared)") for a in alphas]
    if not listed:  # the table above gives each α's numbers; name only those not compared
        lines = ["Each α's numbers are in the table above"] + [
            f"α = {a:g} has {len(seeds[a])} network{'s' * (len(seeds[a]) > 1)} stored so far: shown, not compared"
            for a in alphas if a not in compared]
    devices = devices or {}
    usual = max(set(devices.values()), key=list(devices.values()).count) if devices else ""
    odd = [a for a in alphas if devices.get(a, usual) != usual]

    def made(ends=()) -> str:
        if not odd:
            return ""
        which = "one of them is an end compared below" if set(odd) & set(ends) else "neither end compared below is"
        return (f" The networks of α = {', '.join(f'{a:g}' for a in odd)} were made on "
                f"{', '.join(devices[a] for a in odd)}, the others on {usual}: a seed trained with another thread "
                f"count or device can differ in weights, so those points hold the same seeds, not always the same "
                f"networks ({which}).")
    if ends is None:  # nothing to compare: no interval, no units
        v = claims.decide(_key("alpha-spares"), low=0.0, high=0.0, units=0, estimate=0.0)
        v = dataclasses.replace(v, why="fewer than two α values with every network stored")
        return [_say(v, (
            "**The α curve** (the worse mask per network; mean ± sd over networks). " + "; ".join(lines) + "." + made()))]
    low, high = ends
    lo, hi = points[low], points[high]
    e = stats.paired(sparing(hi["table"], hi["control"]), sparing(lo["table"], lo["control"]), unit="network")
    trained = bool((lo["table"][:, 0] >= TRAINED).all())
    v = _decide("alpha-spares", e, trained=trained, controls=_usable(lo) and _usable(hi))
    return [_say(v, (
        "**The α curve** (the same seeds at every α; the worse mask per network; mean ± sd over networks). "
        + "; ".join(lines) + "." + made((low, high)) + f" Masks that can be read (trained, neither empty nor full, doing their "
        f"own operation alone and losing it when removed) at α = {', '.join(f'{a:g}' for a in usable) or 'none'}. "
        f"Sparing at α = {high:g} minus at α = {low:g} (the strongest and the weakest α whose masks can be "
        f"read), paired by seed: {e.text()}. " + _raw(hi, lo, f"α = {high:g}", f"α = {low:g}")))]


def authors_schedule(authors: dict, book: dict, chance: float, devices: dict | None = None,
                     matched: dict | None = None, network: str = "") -> list[stats.Claim]:
    """The network(s) at the authors' mask schedule (α 1e-4, mask lr 1e-2, 20,000 steps) beside the
    networks of the same seeds at the page's schedule: :func:`stack`'d ``authors`` and ``book``. The
    paper's claim that removing a mask spares the other operation (:func:`specialization`'s), at the
    authors' schedule; with one network the rule cannot decide it. ``devices`` ({"authors" /
    "book": device in words}, from :func:`modlib.weight_masks.curves`): where they differ, the two
    schedules ran on networks trained from one seed on two devices, which the text says.
    ``matched``: the α curve's point at the authors' α (:func:`stack`'d, the page's steps and mask
    learning rate), so that the schedule is compared at one α: ``book`` holds the page's α.
    ``network``: which network(s) the schedule ran on, in words (shape and steps), for the text.
    ``devices["matched"]``, where given: the device that made ``matched``'s networks."""
    t, b = authors["table"], book["table"]
    e, random_spares = _spares(t, authors["control"])  # as :func:`specialization` measures it
    v = _decide("spares-authors", e, trained=bool((t[:, 0] >= TRAINED).all()),
                controls=not degenerate(np.asarray(authors["kept"])[:, :2]) and random_spares)
    devices = devices or {}
    same = "The same network"
    if devices.get("authors", "") != devices.get("book", ""):  # one seed, two devices: two networks
        same = (f"The network of the same seed (made on {devices.get('book')}, the one above on "
                f"{devices.get('authors')}: their weights differ)")
    text = (f"**At the authors' mask schedule** ({network or f'{len(t)} network' + 's' * (len(t) > 1)}; raw accuracies): without the + "
            f"mask × "
            f"keeps {mean_pm(t[:, 2, 1])} and + {mean_pm(t[:, 2, 0])}; without the × mask + keeps {mean_pm(t[:, 4, 0])} and "
            f"× {mean_pm(t[:, 4, 1])}; alone, the + mask adds at {mean_pm(t[:, 1, 0])} and the × mask multiplies at "
            f"{mean_pm(t[:, 3, 1])}; kept share + {_pct(authors['share'][:, 0])}, × "
            f"{_pct(authors['share'][:, 1])}. {same} at the page's schedule: without + × keeps "
            f"{mean_pm(b[:, 2, 1])}, without × + keeps {mean_pm(b[:, 4, 0])} (kept share + "
            f"{_pct(book['share'][:, 0])}, × {_pct(book['share'][:, 1])}). Sparing "
            f"{mean_pm(sparing(t, authors['control']))} at the authors' schedule, {mean_pm(sparing(b, book['control']))} at "
            f"the page's (its α is not the authors'). As shares of the full network's accuracy, after the worse mask's removal the other "
            f"operation keeps {mean_pm(retention(t, authors['control'])[0])} at the authors' schedule and "
            f"{mean_pm(retention(b, book['control'])[0])} at the page's. ")
    if matched is not None:
        m, mc = matched["table"], matched["control"]
        same_seed = np.isin(_seeds(matched), _seeds(authors))  # the α curve's networks of the authors' seeds
        same_seed = same_seed if same_seed.any() else np.ones_like(same_seed)
        text += (f"At the authors' α with the page's steps and mask learning rate (the α curve's point, "
                 f"trained on {devices.get('matched') or devices.get('book', 'the page’s device')}): sparing "
                 f"{mean_pm(sparing(m, mc)[same_seed])}, share kept {mean_pm(retention(m, mc)[0][same_seed])} on the network"
                 f"{'s' * int(same_seed.sum() > 1)} of the same seed (over all {len(m)} of its networks: sparing "
                 f"{mean_pm(sparing(m, mc))}); kept share + {_pct(matched['share'][same_seed, 0])}, × "
                 f"{_pct(matched['share'][same_seed, 1])}: at one α, the steps and the learning rate alone "
                 f"differ (and the networks' weights). ")
    rand = random_kept(t, authors["control"])  # [networks, 2]
    control = (f" Its control (a random removal as dense as a mask must leave the other operation at least half its "
               f"accuracy; shares of the full network's accuracy): × after a random removal as dense as the + mask "
               f"{mean_pm(rand[:, 0])}, "
               f"+ after one as dense as the × mask {mean_pm(rand[:, 1])}"
               + (" (check passed)." if random_spares else " (check failed: below half).")
               if len(t) > 1 else "")
    return [_say(v, text + (
        f"Measured per network on the worse mask: the other operation after the mask's removal minus after a "
        f"random removal as dense, plus the allowance of {SPARES:g} (as in the page's claim), so its interval "
        f"below sits {SPARES:g} above the sparing printed above.{control}"))]


ANSWERS = 0.5  # a network answers the held-out problems: at least half of each operation's right


def heldout(h: dict, chance: float) -> list[stats.Claim]:
    """The networks trained without a held-out share of the problems (:func:`stack`'d arrays of
    :func:`~modlib.weight_masks.causes.heldout` with ``sizes``): a check that they answer the
    held-out problems (:data:`ANSWERS` on both operations, having trained on the others to
    :data:`TRAINED`: an answer they could not have memorised), then :func:`specialization`'s
    claims decided on the held-out problems (``held_table [seeds, 5, 2]``, ``held_control [seeds,
    4, 2]``) as shares of the network's held-out accuracy, each named "... (held-out problems)";
    beside them the same network's numbers on the problems it trained on."""
    tables, held_tables = h["table"], h["held_table"]
    full, held = tables[:, 0], held_tables[:, 0]
    seen = bool((full >= TRAINED).all())
    answers = bool(seen and (held >= ANSWERS).all())
    text = (f"**Held-out problems.** Trained on all but a held-out share of the problems, the networks answer the "
            f"problems they trained on at + {mean_pm(full[:, 0])}, × {mean_pm(full[:, 1])}, and the held-out ones at + "
            f"{mean_pm(held[:, 0])}, × {mean_pm(held[:, 1])} (chance {chance:g}; a network counts as answering them at "
            f"{ANSWERS:g} on each operation: one that memorised its table shows nothing on problems it never "
            "saw). On the problems trained on, without the + "
            f"mask × keeps {mean_pm(tables[:, 2, 1])} and without the × mask + keeps {mean_pm(tables[:, 4, 0])}; on the "
            f"held-out ones {mean_pm(held_tables[:, 2, 1])} and {mean_pm(held_tables[:, 4, 0])}."
            + ("" if answers else " A network that does not answer the held-out problems has memorised the table "
               "of those it saw: its masks' numbers on held-out problems say nothing about modules."))
    out = [stats.Claim("the networks answer held-out problems", answers, text)]
    said = specialization(held_tables, h["held_control"], chance, h["kept"], h["sizes"][0], trained=answers,
                          suffix="-heldout")
    # each statement reads the held-out columns: its lead says so ("**Each mask alone, held-out problems.**")
    return out + [dataclasses.replace(c, text=re.sub(r"^\*\*(.+?)\.\*\*", r"**\1, held-out problems.**", c.text, count=1))
                  for c in said]


def reuse_control(r: dict, label: str = "", where: str = "main") -> list[stats.Claim]:
    """The positive control for reuse, per network (seed), from :func:`stack`'d arrays of
    :func:`~modlib.weight_masks.causes.reuse_control` (with ``original`` and ``sizes``):
    ``copy_iou [seeds, L]``, the IoU of the pair-1 and pair-2 masks of the network whose pair 1 was
    made to run on pair 2's weights (:func:`~modlib.weight_masks.causes.copy_pairs`: reuse forced),
    read on the hidden layers (:func:`hidden_layers`) beside the ceiling, two masks of one pair
    (``iou_same``), and random masks as dense (``copy_iou_random``). The overlap measure finds reuse
    where it is forced when two claims of the book's own hold, each decided by the rule (paired over
    networks) and printed with its own verdict: the reuse claim (:func:`reuse`) would not call the
    forced pairs apart (the claim's margin minus the same-pair minus forced IoU, above 0: the
    interval of the gap lies below the margin), and the forced IoU stands clear above random. Both
    need the copied network trained (``copy_table [seeds, 5, 2]``) and its pair masks doing their
    pair alone. ``where``: ``"main"`` (the page's network) or ``"deep"`` (the deeper one), the
    registry's ``control-apart-<where>`` and ``control-random-<where>``. Beside it a check on the whole-task
    mask at the authors' α (``whole [seeds, 3, 2]``: the network, the mask alone, removed; its kept
    shares ``whole_kept [seeds, L]``): it does both pairs and is neither empty nor full."""
    forced, own, same, rand = (hidden_layers(r[k]) for k in ("copy_iou", "iou", "iou_same", "copy_iou_random"))
    copy_tables, whole, sizes = r["copy_table"], r["whole"], r["sizes"][0]
    trained = bool((copy_tables[:, 0] >= TRAINED).all())
    alone = copy_alone(r)
    ok = bool((alone >= 0.5).all() and (same < 0.99).all() and (forced < 0.99).all()) and not degenerate(r["copy_kept"])
    allowed = margin("reuse")  # the reuse claim's margin: a gap below it is not "apart"
    gap = stats.paired(same, forced, unit="network")
    apart = _decide(f"control-apart-{where}", stats.paired(allowed - (same - forced), np.zeros(len(same)),
                                                          unit="network"), trained=trained, controls=ok)
    above = stats.paired(forced, rand, unit="network")
    clear = _decide(f"control-random-{where}", above, trained=trained, controls=ok)
    reach = (forced - rand) / np.maximum(same - rand, 1e-9)
    at = f" ({label})" if label else ""
    share = kept_share(r["copy_kept"], sizes)
    text = (f"**A positive control for reuse{at}.** Pair 1 made to run on pair 2's weights (the authors' "
            f"copied-weights network: one set of hidden weights computes both sums, so reuse is built in) gives pair "
            f"masks that overlap at IoU {mean_pm(forced)} in the hidden layers; two masks of pair 1 of the network itself "
            f"(the ceiling) at {mean_pm(same)}, its own pair masks at {mean_pm(own)}, random masks as dense at "
            f"{mean_pm(rand)}: the built-in overlap goes {mean_pm(reach)} of the way from random to the ceiling. The "
            f"copied network adds at {mean_pm(copy_tables[:, 0, 0])} / {mean_pm(copy_tables[:, 0, 1])} (pair 1 / pair 2); "
            f"alone its pair masks keep {mean_pm(alone[0])} and {mean_pm(alone[1])} of their pair; kept share pair 1 "
            f"{_pct(share[:, 0])}, pair 2 {_pct(share[:, 1])}. Two checks ask whether the overlap test sees reuse where "
            f"it is built in: check 1, the reuse claim would not call the built-in pairs apart (same-pair minus built-in "
            f"IoU below the claim's margin of {allowed:g}: {gap.text(percent=False)}); check 2, the built-in overlap is "
            f"clear of random (built-in minus random: {above.text(percent=False)}). "
            + _control_reading(apart, clear, trained_apart=where == "main"))
    reasons = [why for bad, why in (
        ((alone < 0.5).any(), "the copied network's pair masks alone keep less than half of their pair's accuracy "
                              "in some network, so they do not do their task and their overlap says nothing"),
        ((same >= 0.99).any(), "two masks of one pair are identical in some network, which leaves no ceiling"),
        ((forced >= 0.99).any(), "the copied network's two pair masks are identical in some network: one mask "
                                 "trained twice the same way, not two masks that were free to differ"),
        (degenerate(r["copy_kept"]), "a pair mask keeps nothing or everything")) if bad]
    rel = whole / np.maximum(whole[:, :1], 1e-9)
    does = bool((rel[:, 1] >= 0.5).all() and (whole[:, 0] >= TRAINED).all() and not degenerate(r["whole_kept"]))
    check = (f"**The whole-task mask at the authors' α for the double addition{at}** adds at {mean_pm(whole[:, 1, 0])} / {mean_pm(whole[:, 1, 1])} "
             f"(pair 1 / pair 2; the network {mean_pm(whole[:, 0, 0])} / {mean_pm(whole[:, 0, 1])}) keeping "
             f"{_pct(kept_share(r['whole_kept'], sizes))} of the weights; removed, it leaves "
             f"{mean_pm(whole[:, 2, 0])} / {mean_pm(whole[:, 2, 1])}.")
    return [_as_check(_say(apart, text + " Check 1, the test sees built-in reuse as reuse (the claim's margin "
                                         "minus the same-pair minus built-in IoU, per network, above 0):"),
                      "; ".join(reasons)),
            _as_check(_say(clear, "Check 2, the built-in overlap stands clear of random (built-in minus random "
                                  "IoU, per network):"), "for the same reason" if reasons else ""),
            stats.Claim(f"the whole-task mask at the authors' α does both pairs{at}", does, check)]


def _control_reading(*checks: stats.Verdict, trained_apart: bool = True) -> str:
    """What the positive control's ``checks`` (:func:`reuse_control`'s two, as decided) say for the
    reuse verdict, from their outcomes: good news only where every one passed. ``trained_apart``: the copied
    networks were trained apart from the page's (the main control), not copied from the networks
    whose reuse test they back."""
    outcomes = [v.outcome for v in checks]
    if any(o in (stats.NOT_REPRODUCED, stats.DOES_NOT_HOLD) for o in outcomes):
        return ("A check failed: the test may miss reuse where it is built in, so a low overlap of the real pair "
                "masks need not mean no reuse.")
    if all(o in (stats.REPRODUCED, stats.HOLDS) for o in outcomes):
        return ("Both checks passed: the test finds reuse where it is built in whole, the copied network running "
                "pair 1 on pair 2's very weights. Check 1 passes with random masks too (the mutations ledger), so check "
                "2 carries the evidence; and the control shows exact duplication found, not partial reuse, on "
                + ("networks trained apart from the page's. " if trained_apart else "copies of the networks whose reuse "
                   "test it backs. ") + "So a low overlap of the real pair masks speaks against "
                "reuse of the built-in kind; a partial reuse could still be missed.")
    which = "Neither check" if all(o == stats.UNDECIDED for o in outcomes) else "Not every check"
    return (f"{which} can be read here, so this control backs neither reading of the reuse verdict: it does not "
            "show that a low overlap of the real pair masks means no reuse.")


def deep_label(shape: str) -> str:
    """The deeper double-addition network (``shape``, e.g. "512×4") as the lead of its reuse test
    names it (:func:`reuse`'s ``label``), apart from the page's own network."""
    return f"FNN {shape}, the deeper network"


def copy_alone(r: dict) -> np.ndarray:
    """The positive control's copied network (:func:`reuse_control`): what its pair-1 and pair-2
    masks alone keep of their own pair's accuracy, as shares of the copied network's ``[2, seeds]``.
    The control is read only where every one keeps at least half."""
    t = r["copy_table"]
    return np.stack([t[:, 1, 0], t[:, 3, 1]]) / np.maximum(t[:, 0].T, 1e-9)


def _as_check(c: stats.Claim, unreadable: str = "") -> stats.Claim:
    """A condition of a control decided by the rule (the book's own claim), as the page prints it: a
    check, "check passed" or "check failed", in place of "holds" / "does not hold" (its outcome and
    verdict unchanged, for the ledger and the tests). An undecided one was not checked: it reads
    "this control cannot be read here" and why in plain words (``unreadable``, the control's own
    reasons, else the verdict's), its interval beside it in brackets, not "check failed"."""
    if c.verdict is None or not c.own:
        return c
    late = f" ({claims.POST_HOC})" if f"**{c.marked}** ({claims.POST_HOC}): " in c.text else ""  # claims.statement
    mark = f"**{c.marked}**{late}: "
    if c.verdict.outcome != stats.UNDECIDED:
        return dataclasses.replace(c, text=c.text.replace(mark, f"**check {'passed' if c.holds else 'failed'}**{late}: ",
                                                          1))
    head, _, rest = c.text.partition(mark)
    why, dot, tail = rest.partition(". ")  # the verdict's why ends its sentence
    if not dot:
        why, tail = rest.rstrip("."), ""
    reason = stats.undecided_reason(c.verdict)
    interval = why.replace(reason, "", 1).strip(" :()")  # the interval, as the text printed it
    said = f"**this control cannot be read here**{late}: {unreadable or reason}" + (f" ({interval})" if interval else "")
    return dataclasses.replace(c, text=f"{head}{said}." + (f" {tail}" if tail else ""))


def check_words(cid: str) -> str:
    """The verdict last decided on this chapter's control ``cid`` (a condition of a control, the book's
    own claim) in the words :func:`_as_check` prints for it: "check passed", "check failed", or "this
    control cannot be read here", with "(post hoc)" after it where the registry dates the claim after
    its results (:func:`modlib.claims.post_hoc`); :data:`modlib.claims.NOT_DECIDED` where it was not
    decided. For a page's one-line answer on its main path."""
    d = claims.decisions(CHAPTER).get(_key(cid))
    if d is None:
        return claims.NOT_DECIDED
    late = f" ({claims.post_hoc(_key(cid))})" if claims.post_hoc(_key(cid)) else ""  # as _as_check labels it
    if d.outcome == stats.UNDECIDED:
        return f"this control cannot be read here{late}"
    return f"check {'passed' if d.outcome == stats.REPRODUCED else 'failed'}{late}"


PLACE = 0.5  # a class's removal is placed in a layer when that layer's swap alone makes this share of its drop


def removal_places(reference: np.ndarray, own: np.ndarray, swap_in: np.ndarray,
                   swap_again: np.ndarray) -> np.ndarray:
    """Per network and class ``[nets, 10]``, the layer (index) where the class is removed: the layer
    whose class mask alone, the all-classes mask elsewhere, loses the class at least :data:`PLACE`
    of its drop under its whole mask more than the null does there (a second all-classes mask in
    that layer alone, ``swap_again [nets, L, 10]``: two masks of one task differ), while the other
    classes lose at most half as much; the largest such excess; -1 where no layer does (or the
    class did not drop). From the per-class accuracy under the all-classes mask ``reference [nets,
    10]``, under the class's mask ``own [nets, 10]`` and ``swap_in [nets, 10, L, 2]`` (the class,
    the others' mean; :func:`~modlib.weight_masks.causes.class_layers`)."""
    drop = reference - own  # [nets, 10]
    null = reference[..., None] - np.swapaxes(swap_again, -1, -2)  # [nets, 10, L]: the null's loss
    excess = reference[..., None] - swap_in[..., 0] - null  # [nets, 10, L]
    ref_others = np.stack([others_reference(r) for r in reference])  # [nets, 10]
    others = ref_others[..., None] - swap_in[..., 1]  # [nets, 10, L]
    best = excess.argmax(-1)
    take = lambda a: np.take_along_axis(a, best[..., None], -1)[..., 0]  # noqa: E731
    placed = (take(excess) >= PLACE * drop) & (take(others) <= 0.5 * take(excess)) & (drop > 0.05)
    return np.where(placed, best, -1)


def cnn_layers(runs: list[dict]) -> dict:
    """The CNNs' arrays of :func:`~modlib.weight_masks.causes.class_layers` (one dict per network,
    with ``layers`` and ``sizes``) as :func:`class_layers` reads them: ``accs`` (per network,
    :func:`~modlib.weight_masks.removal_accuracy` with the random control), ``swap_in [nets, 10, L,
    2]``, ``swap_again [nets, L, 10]``, ``dropped [nets, 10, L]``, ``dropped_again [nets, L]``,
    ``kept [nets, 11, L]``, ``kept_again [nets, L]``, ``layers`` and ``sizes [L]``."""
    from modlib.weight_masks.protocol import removal_accuracy

    out = {k: np.stack([np.asarray(r[k], dtype=float) for r in runs])
           for k in ("swap_in", "swap_again", "dropped", "dropped_again", "kept", "kept_again")}
    return {**out, "accs": [removal_accuracy(r["confusion"], r["confusion_random"]) for r in runs],
            "layers": list(runs[0]["layers"]), "sizes": np.asarray(runs[0]["sizes"])}


def class_layers(c: dict) -> list[stats.Claim]:
    """Class removal over several CNNs (one per seed), from :func:`cnn_layers`' ``c``. The two
    class-removal claims of :func:`class_removal`, now over networks (per network the mean over its
    ten classes; paired t interval over networks), and a check of where the removal happens
    (:func:`removal_places`, against the null mask), which the page asks of the 64-unit dense layer
    just before the kept output layer; with every mask's kept share."""
    accs, layers, sizes = c["accs"], c["layers"], c["sizes"]
    get = lambda k: np.stack([a[k] for a in accs])  # noqa: E731
    own, others, reference = get("own"), get("others"), get("reference")  # [nets, 10]
    ref_others = np.stack([others_reference(r) for r in reference])
    drop_own, drop_others = (reference - own).mean(1), (ref_others - others).mean(1)
    trained = bool((reference.mean(1) >= CNN_TRAINED).all())
    control_ok = bool((others - get("random_others")).mean() > 0) and not degenerate(c["kept"])
    n = len(accs)
    e = stats.paired(drop_own, drop_others, unit="network")
    v1 = _decide("cnn-hurts", e, trained=trained, controls=control_ok)
    lost = ((reference - own) / np.maximum(reference, 1e-9)).mean(1)
    e2 = stats.paired(lost, 0.5 + 0 * lost, unit="network")
    v2 = _decide("cnn-collapses", e2, trained=trained, controls=control_ok, reason=NO_SIZE,
                 as_registered={"reason": ""})
    dropped, dropped_again = c["dropped"], c["dropped_again"]  # [nets, 10, L], [nets, L]
    places = removal_places(reference, own, c["swap_in"], c["swap_again"])
    names = protocol.cnn_layer_names(layers)  # "conv 1", ..., as the figure names them
    share = [(places == i).mean() for i in range(len(layers))]
    dense = len(layers) - 2  # the 64-unit layer before the output layer
    holds = bool(share[dense] > 0.5)
    where = ", ".join(f"{names[i]} {share[i]:.0%}" for i in range(len(layers)) if share[i] > 0)
    kept = kept_share(c["kept"], sizes)  # [nets, 11]: the all-classes mask, then each class's
    again = kept_share(c["kept_again"], sizes)  # [nets]
    text = (f"Over {n} CNN{'s' if n > 1 else ''} (mean over each network's ten classes): removing a class's mask drops "
            f"it by {mean_pm(drop_own)} and the other classes by {mean_pm(drop_others)}; a class loses {mean_pm(lost)} of its "
            f"accuracy. Kept share: the all-classes mask {_pct(kept[:, 0])}, the class masks {_pct(kept[:, 1:])}, a "
            f"second all-classes mask trained as a class mask is (the null) {_pct(again)}. ")
    place = (f"**Where a class is removed.** Putting a class's mask in one layer alone (the all-classes mask "
             f"elsewhere) loses at least {PLACE:.0%} of the class's drop more than the null mask does in that layer, "
             f"the other classes losing at most half as much, in: {where or 'no layer'} of the "
             f"{places.size} removals ({(places < 0).mean():.0%} in no single layer). Share of the all-classes "
             f"mask's weights a class mask drops, per layer (the null's beside it): "
             + ", ".join(f"{names[i]} {mean_pm(dropped[..., i])} ({mean_pm(dropped_again[:, i])})" for i in range(len(layers)))
             + f" (the output layer's mask is the all-classes mask's, fixed). The {names[dense]} layer is the "
             f"64-unit layer just before the output layer; it holds {sizes[dense] / sizes.sum():.0%} of the masked "
             "weights, so a mask's changes fall mostly there whatever it does: the null sets the bar, not the share. "
             f"The check, that more than half of the removals are placed in the {names[dense]} layer: "
             f"**check {'passed' if holds else 'failed'}** ({PLACE_LATE}: its criterion against the null was set "
             f"after the first CNNs were stored; {share[dense]:.0%}).")
    return [
        _say(v1, text + f"Own drop minus the others', per network: {e.text()}."),
        _say(v2, (f"Found: {collapse_found(e2)}. " if collapse_found(e2) else "") + _collapse_measure()
             + f" Per network: {e2.text()}."),
        stats.Claim("classes are removed mostly in the dense layer before the output", holds, place),
    ]


def added(cv: dict, depth: int, main: str, deep: str) -> dict:
    """The added experiments' numbers from :func:`modlib.weight_masks.curves`' ``cv``, stacked over
    seeds (:func:`stack`), for :func:`added_claims`: ``width`` and ``alpha`` ({value: point}),
    ``authors`` and ``book`` (points), ``matched`` (the α curve's point at the authors' α),
    ``heldout``, ``copy`` and ``reuse`` (arrays), ``cnn`` (:func:`cnn_layers`), each left out while
    not stored; ``devices`` and ``alpha_devices`` (who made them); ``depth`` (the width curve's), and
    ``main`` and ``deep``, the shapes of the main and the deeper double-addition network as the
    page writes them."""
    d = {"depth": depth, "main": main, "deep": deep,
         "width": {h: stack(p) for h, p in cv["width"].items()}, "alpha": {a: stack(p) for a, p in cv["alpha"].items()}}
    for key, name in (("authors", "authors"), ("book", "book"), ("heldout", "heldout"), ("copy", "copyweight"),
                      ("reuse", "reuse")):
        if cv[name]:
            d[key] = stack(cv[name])
    if cv["cnnlayers"]:
        d["cnn"] = cnn_layers(cv["cnnlayers"])
    d["devices"] = cv.get("devices", {})
    d["alpha_devices"] = cv.get("alpha_devices", {})
    if cv.get("authors_alpha") in d["alpha"]:  # the α curve's point at the authors' α
        d["matched"] = d["alpha"][cv["authors_alpha"]]
    return d


def added_claims(d: dict, chance: float = 0.01) -> list[stats.Claim]:
    """Every statement of the added experiments (:func:`added`'s ``d``), as the page prints them."""
    out = []
    if len(d["width"]) >= 2:
        out += width_curve(d["width"], d["depth"])
    if len(d["alpha"]) >= 2:
        out += alpha_curve(d["alpha"], d.get("alpha_devices"))
    if "authors" in d and "book" in d:
        out += authors_schedule(d["authors"], d["book"], chance, d.get("devices"), d.get("matched"))
    if "heldout" in d:
        out += heldout(d["heldout"], chance)
    if "copy" in d:
        out += reuse_control(d["copy"], d["main"])
    if "reuse" in d:
        r = d["reuse"]
        out += reuse(r["iou"], r["iou_same"], r["iou_random"], r["table"], r["kept"], r["sizes"][0], cid="reuse-deep",
                     label=deep_label(d["deep"]))
        out += reuse_control(r, d["deep"], where="deep")
    if "cnn" in d:
        out += class_layers(d["cnn"])
    return out


def cnn_alpha(page: list[dict], stronger: list[dict], alpha: float, page_alpha: float) -> stats.Claim:
    """The book's hypothesis ``cnn-alpha`` (issue 52; :mod:`modlib.weight_masks.cnn_alpha`): the
    class-layer runs' CNNs at the page's α (``page``, as :func:`cnn_layers` reads them) and the same
    CNNs' masks at the stronger ``alpha`` (``stronger``), paired by CNN over the first
    ``len(stronger)``: per CNN, the mean over its ten classes of the share of accuracy (under the
    all-classes mask of the same α) the removed class loses, stronger minus page's."""
    n = len(stronger)
    a, b = cnn_layers(page[:n]), cnn_layers(stronger)

    def lost(c: dict) -> tuple[np.ndarray, np.ndarray]:  # [nets] share lost, [nets] mean under the reference
        own, reference = (np.stack([x[k] for x in c["accs"]]) for k in ("own", "reference"))
        return ((reference - own) / np.maximum(reference, 1e-9)).mean(1), reference.mean(1)

    (lost_a, ref_a), (lost_b, ref_b) = lost(a), lost(b)
    e = stats.paired(lost_b, lost_a, unit="network")
    kept_a, kept_b = (kept_share(c["kept"], c["sizes"]) for c in (a, b))  # [nets, 11]
    v = _decide("cnn-alpha", e, trained=bool(min(ref_a.min(), ref_b.min()) >= CNN_TRAINED),
                controls=not (degenerate(a["kept"]) or degenerate(b["kept"])))
    return _say(v, (
        f"The same {n} CNN{'s' if n > 1 else ''} and mask seeds, every mask at α = {alpha:g} against the page's "
        f"{page_alpha:g}: a removed class loses a share of {mean_pm(lost_b)} of its accuracy against {mean_pm(lost_a)} (per "
        f"CNN, the mean over its ten classes); the class masks keep {_pct(kept_b[:, 1:])} of the masked weights "
        f"against {_pct(kept_a[:, 1:])}, the all-classes masks {_pct(kept_b[:, 0])} against {_pct(kept_a[:, 0])}; "
        f"mean accuracy under the all-classes mask {mean_pm(ref_b)} against {mean_pm(ref_a)}. Stronger minus "
        f"the page's, per CNN: {e.text()}."))


def width_matched(narrow: list[dict], wide: list[dict], narrow_label: str, wide_label: str,
                  seeds: int, cid: str = "width-spares-matched") -> stats.Claim:
    """The width claim at matched density (``width-spares-matched``, issue 52): sparing (:func:`sparing`)
    of the wide networks (``wide``: points of :func:`modlib.weight_masks.width_matched.points`, one per
    seed) minus the narrow ones whose masks' α was searched to the wide masks' kept shares (``narrow``,
    each with ``matched``: its check), Welch t over networks; undecided until all ``seeds`` networks of
    both ends are stored, where a network did not train (:data:`TRAINED`), where either end's masks
    cannot be read (:func:`_usable`) or where a narrow mask missed its density (the check). ``cid``:
    the claim (``width-spares-matched``, 256×2; ``width-spares-matched-512``, 512×2)."""
    if len(narrow) < seeds or len(wide) < seeds:
        v = _decide(cid, None, low=0.0, high=0.0, units=0,
                    reason=f"only {len(narrow)} of {seeds} narrow networks are stored yet")
        return _say(v, f"At matched density, sparing at {wide_label} minus at {narrow_label}:")
    n, w = stack(narrow), stack(wide)
    trained = bool((n["table"][:, 0] >= TRAINED).all() and (w["table"][:, 0] >= TRAINED).all())
    matched = bool(n["matched"].all())
    e = stats.unpaired(sparing(w["table"], w["control"]), sparing(n["table"], n["control"]), unit="network")
    v = _decide(cid, e, trained=trained, controls=matched and _usable(n) and _usable(w))
    return _say(v, (
        f"The page's hypothesis at matched density: the {narrow_label} masks' α searched per operation so that "
        f"each keeps what the {wide_label} mask of its seed keeps (kept share + {_pct(n['share'][:, 0])} against "
        f"{_pct(w['share'][:, 0])}, × {_pct(n['share'][:, 1])} against {_pct(w['share'][:, 1])}; check "
        f"{'passed' if matched else 'failed'}). Sparing, {wide_label} minus {narrow_label}: {e.text()}. "
        + _raw(w, n, wide_label, narrow_label)))


def alpha_matched(points: dict[str, list[dict]], cid: str, arms: tuple[str, str], labels: dict[str, str],
                  seeds: int) -> stats.Claim:
    """The α curve's ends at matched density (``alpha-spares-cut``, ``alpha-spares-grown``; issue 52):
    sparing (:func:`sparing`) of the arm ``arms[0]`` minus ``arms[1]``, paired by network (t interval).
    ``points``: arm -> points of :func:`modlib.weight_masks.alpha_matched.points`, one per network (the
    arms ``weak`` and ``strong``, the masks as trained, and the two moved to the other's counts);
    ``labels``: arm -> its words. Undecided until all ``seeds`` networks are stored, where a network
    did not train (:data:`TRAINED`), where either end's masks as trained cannot be read
    (:func:`_usable`) or a moved mask keeps nothing or everything in a layer (:func:`degenerate`); as
    amended (after the results), also where the worse moved mask alone keeps less than half of its own
    operation in a network (:func:`alone`). The text gives the two arms' kept shares, how the moved mask
    does alone and the plain measure (:func:`retention`)."""
    a, b = arms
    moved = a if a not in ("weak", "strong") else b
    if len(points[a]) < seeds:
        v = _decide(cid, None, low=0.0, high=0.0, units=0,
                    reason=f"only {len(points[a])} of {seeds} networks are stored yet")
        return _say(v, f"At matched density, sparing of {labels[a]} minus {labels[b]}:")
    p = {arm: stack(points[arm]) for arm in points}
    trained = bool((p["weak"]["table"][:, 0] >= TRAINED).all())
    controls = _usable(p["weak"]) and _usable(p["strong"]) and not degenerate(p[moved]["kept"])
    works = bool((alone(p[moved]["table"]) >= 0.5).all())  # amended: the moved masks do their own operation
    e = stats.paired(sparing(p[a]["table"], p[a]["control"]), sparing(p[b]["table"], p[b]["control"]),
                     unit="network")
    v = _decide(cid, e, trained=trained, controls=controls and works, as_registered={"controls": controls})
    at = "strong" if moved == "weak_cut" else "weak"
    return _say(v, (
        f"**At the {at} masks' density** ({labels[moved]}), the page's hypothesis: sparing of {labels[a]} minus "
        f"{labels[b]}, paired by network: {e.text()}. Both arms keep as many weights in each layer (the + masks "
        f"{_pct(p[a]['share'][:, 0])} of the network's, the × masks {_pct(p[a]['share'][:, 1])}). Alone, the "
        f"worse of {labels[moved]} keeps {mean_pm(alone(p[moved]['table']))} of its own operation (the masks as "
        f"trained: {mean_pm(alone(p['weak']['table']))} at the weak α, {mean_pm(alone(p['strong']['table']))} at "
        "the strong one; the amended bar asks at least 0.5). " + _raw(p[a], p[b], labels[a], labels[b])))


def near_density(widths: dict, alphas: dict, hidden: tuple, factor: float = 1.5) -> str:
    """Width read at about matched density, after the fact (issue 52's review), from points already
    stored: for each width-curve network narrower than ``hidden`` (``widths``: shape -> :func:`stack`'d
    point), the α-curve point of the ``hidden`` network (``alphas``: α -> stacked point) whose masks'
    kept share (mean over seeds of the + and × masks' mean) is nearest its own, where the two lie within
    ``factor`` of each other; each with its kept shares and :func:`sparing`. "" where none is near."""
    def kept(p: dict) -> float:
        return float(p["share"].mean())

    def said(label: str, p: dict) -> str:
        return (f"{label} (kept share + {_pct(p['share'][:, 0])}, × {_pct(p['share'][:, 1])}): sparing "
                f"{mean_pm(sparing(p['table'], p['control']))}")

    wide = "×".join(map(str, hidden))
    parts = []
    for h, p in widths.items():
        if sum(h) >= sum(hidden) or not alphas:
            continue
        a = min(alphas, key=lambda a: abs(np.log(kept(alphas[a]) / kept(p))))
        if max(kept(alphas[a]), kept(p)) / min(kept(alphas[a]), kept(p)) <= factor:
            parts.append(f"{said('×'.join(map(str, h)), p)}, against {said(f'{wide} at α = {a:g}', alphas[a])}")
    return "; ".join(parts)
