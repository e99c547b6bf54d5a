"""Chapter 4's stored full results analysed with the framing wrong (:mod:`modlib.mutations`): every
stored table of a learned mask's accuracies, and every overlap of two learned masks, replaced by
those of the random masks of the same per-layer counts that the results already hold beside them
(the page's controls), before the page's findings read them."""

from __future__ import annotations

import numpy as np

from modlib.weight_masks import alpha_matched, cnn_alpha, experiment, findings, reuse_alpha, width_matched
from modlib.weight_masks.causes import mask_sizes
from modlib.weight_masks.protocol import CHANCE, removal_accuracy

MUTATIONS = {
    "random mask as dense": (
        "each learned mask's rows of the accuracy tables replaced by its random mask's (same kept count per "
        "layer): `table` rows after the full network by `control`, `held_table`'s by `held_control`, and "
        "for the double addition the pair masks' rows; the overlap of the pair masks (`iou`, `copy_iou`) by "
        "that of their random masks (`iou_random`, `copy_iou_random`), the two pair-1 masks' (`iou_same`) "
        "by the IoU random masks of their kept shares have (p q / (p + q - p q) per layer), the share of "
        "the + mask's weights the × mask keeps too by its chance level (`overlap_chance`), and each class "
        "mask's confusion by its random mask's (`confusion_random`). Kept shares are the random masks' "
        "too (same counts). No random counterpart is stored for the whole-task and both-pairs masks, the "
        "copied network's pair masks alone (`copy_table`) or the CNN's all-classes mask and layer swaps: "
        "those stay learned"),
}
_NO_DIFFERENCE = ("the stored results hold no random-mask scores for the copied network's pair masks alone "
                  "(copy_table), so the claim's check that those masks do their pair alone cannot be made random; "
                  "and as a claim of no difference (forced reuse not told apart from same-pair reuse), random masks "
                  "meet it by construction: the harness found it ✓ still with every other number random "
                  "(+0.05 to +0.05, over 3 networks at 1024x2 and over the 5 networks at 512x4 whose pair masks' "
                  "α was chosen on a network held aside), so the mutation could not move it")
CANNOT: dict[str, dict[str, str]] = {"random mask as dense": {"control-apart-main": _NO_DIFFERENCE,
                                                              "control-apart-deep": _NO_DIFFERENCE,
                                                              "control-apart-deep-alpha": _NO_DIFFERENCE}}


def random_iou(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Per layer, the IoU of two independent random masks keeping shares ``p`` and ``q`` of a layer's
    weights: their expected intersection ``p q`` over their expected union ``p + q - p q`` (within
    0.004 of the stored ``iou_random`` of the pair-1 and pair-2 masks' random masks)."""
    return p * q / np.maximum(p + q - p * q, 1e-12)


def random_mask_as_dense(a: dict) -> dict:
    """A copy of one stored result's or curve point's arrays ``a`` (leading axes allowed) with each
    learned mask's numbers replaced by its random mask's of the same per-layer counts
    (:data:`MUTATIONS`)."""
    out = dict(a)
    if "iou_same" in a:  # the double addition: rows 3.. of PAIR_ROWS are the pair masks', as control's
        out["table"] = np.concatenate([a["table"][..., :3, :], a["control"]], axis=-2)
        out["iou"] = a["iou_random"]
        out["iou_same"] = random_iou(a["kept"][..., 1, :], a["kept"][..., 3, :])
        if "copy_iou" in a:
            out["copy_iou"] = a["copy_iou_random"]
    elif "control" in a:  # add/multiply: rows after the full network are the masks', as control's
        for table, control in (("table", "control"), ("held_table", "held_control")):
            if table in a:
                out[table] = np.concatenate([a[table][..., :1, :], a[control]], axis=-2)
        if "overlap" in a:
            out["overlap"] = a["overlap_chance"]
    if "confusion_random" in a:  # class removal: index 0 is the all-classes mask
        out["confusion"] = np.concatenate([a["confusion"][..., :1, :, :], a["confusion_random"]], axis=-3)
    return out


def stored():
    """The stored full results by name (:func:`~modlib.weight_masks.experiment.collect`), or None
    where any is missing or stale."""
    found = experiment.collect("full")
    return found if set(experiment.names("full")) <= set(found) else None


def decide(mutation: str | None):
    """Chapter 4's claims decided on the stored full results with ``mutation`` applied (None: as
    stored), as the page decides them (:func:`~modlib.weight_masks.findings.specialization`,
    :func:`~modlib.weight_masks.findings.reuse`, :func:`~modlib.weight_masks.findings.class_removal`
    and :func:`~modlib.weight_masks.findings.added_claims`); None where the results are not stored."""
    if mutation not in (None, *MUTATIONS):
        raise ValueError(f"mutation={mutation!r}; chapter 4 runs: {', '.join(MUTATIONS)}")
    found = stored()
    if found is None:
        return None
    change = random_mask_as_dense if mutation else dict
    s, c = experiment.settings("full"), experiment.causes_settings("full")

    def arrays(name):
        return change(dict(found[name].arrays))

    def stacked(experiment_, *keys):  # the page's arrays of one experiment, [seeds, ...] each
        runs = [arrays(f"{experiment_}-seed{k}") for k in range(s.seeds)]
        return [np.stack([r[k] for r in runs]) for k in keys]

    chance, hidden = CHANCE["addmul"], found["addmul-seed0"].config["hidden"]
    tables, controls, kept = stacked("addmul", "table", "control", "kept")
    findings.specialization(tables, controls, chance, kept, mask_sizes("addmul", hidden))
    iou, same, rand, table, kept = stacked("double", "iou", "iou_same", "iou_random", "table", "kept")
    findings.reuse(iou, same, rand, table, kept, mask_sizes("double", found["double-seed0"].config["hidden"]))
    cnn = arrays("cnn-seed0")
    acc = removal_accuracy(cnn["confusion"], cnn["confusion_random"])
    findings.class_removal(acc["own"], acc["others"], acc["reference"], random_own=acc["random_own"],
                           random_others=acc["random_others"])
    cv = experiment.curves("full", found)
    for key in ("width", "alpha"):
        cv[key] = {k: [change(p) for p in ps] for k, ps in cv[key].items()}
    for key in ("authors", "book", "heldout", "reuse", "copyweight", "cnnlayers"):
        cv[key] = [change(p) for p in cv[key]]
    d = findings.added(cv, c.depth, experiment.shape_name(s.hidden), experiment.shape_name(c.reuse_hidden))
    findings.added_claims(d, chance)
    strong = [change(p) for p in cnn_alpha.points(cnn_alpha.stored("full"))]  # the class masks at a stronger α
    if strong:
        findings.cnn_alpha(cv["cnnlayers"], strong, cnn_alpha.ALPHA, s.cnn_alpha)
    matched = width_matched.stored("full")  # the width curve at matched density (issue 52)
    wide = f"{s.hidden[0]}×{len(s.hidden)} at α {width_matched.wide_alpha('full'):g}"
    for h, cid in zip(width_matched.narrows("full"), width_matched.CLAIMS):
        narrow, wide_points = width_matched.points("full", h, matched)
        findings.width_matched([change(p) for p in narrow], [change(p) for p in wide_points], f"{h[0]}×{len(h)}",
                               wide, len(width_matched.seeds("full")), cid)
    alpha_matched.decided("full", change)  # the α curve's ends at matched density (issue 52)
    reuse_alpha.decided("full", change)  # reuse at depth 4, α chosen on a network held aside (issue 52)
    return found
