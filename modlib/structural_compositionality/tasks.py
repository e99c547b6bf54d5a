"""The odd-one-out tasks of chapter 5 (notebooks/structural_compositionality.ipynb, section "Tasks";
Lepori et al. 2023), also searched by chapter 6: for each rule (two subroutines, :data:`RULES`) the
five kinds of problem set (:data:`KINDS`, :func:`layout`), built from panels of
:mod:`modlib.data.shapes` or agreement sentences of :mod:`modlib.data.sentences`
(:func:`problems`), and the odd-one-out decision rule (:func:`odd_scores`). The task and its kinds
are described in :mod:`modlib.structural_compositionality.experiment`.
"""

from __future__ import annotations

import numpy as np
import torch
from torch.nn import functional as F

from modlib.data import sentences as agreement
from modlib.data import shapes
from modlib.profiles import check_choice, check_int

KINDS = ("task", "sub-0", "sub-1", "only-0", "only-1")
RULES = {**shapes.RULES,
         "sv-plural": ("subject", "verb"), "sv-singular": ("subject", "verb"),
         "anaphora-plural": ("subject", "pronoun"), "anaphora-singular": ("subject", "pronoun")}
VISION = tuple(shapes.RULES)


# ---------------------------------------------------------------- problems

def layout(kind: str, rng: np.random.Generator) -> tuple[list[tuple[bool, bool]], int]:
    """Which rule properties each of the four items has (True: as the rule asks), and the odd
    item's position: ``([(p0, p1)] * 4, answer)``. See :data:`KINDS`."""
    check_choice("kind", kind, KINDS)
    if kind == "task":
        odd = [(False, True), (True, False), (False, False)][rng.integers(3)]
        followers = [(True, True)] * 3
    else:
        k = int(kind[-1])
        if kind.startswith("sub"):
            def with_k(value):
                pair = [bool(rng.integers(2)), bool(rng.integers(2))]
                pair[k] = value
                return tuple(pair)
            followers, odd = [with_k(True) for _ in range(3)], with_k(False)
        else:
            followers, odd = [(True, True)] * 3, (k == 1, k == 0)
    answer = int(rng.integers(4))
    items = list(followers)
    items.insert(answer, odd)
    return items, answer


def problems(rule: str, kind: str, n: int, seed: int, size: int = 32) -> dict[str, torch.Tensor]:
    """``n`` problems of ``kind`` for ``rule``, reproducible from ``seed``: ``answer long [n]``,
    ``props bool [n, 4, 2]`` (as the rule asks, per item), and the items: ``images uint8
    [n, 4, 3, size, size]`` (vision) or ``input_ids`` and ``attention_mask long [n, 4, L]`` and
    ``texts`` (language)."""
    check_choice("rule", rule, RULES)
    check_int("n", n, 1)
    rng = np.random.default_rng([seed, KINDS.index(kind), list(RULES).index(rule)])
    answers, props, items = [], [], []
    if rule in VISION:
        for _ in range(n):
            pattern, answer = layout(kind, rng)
            count = int(rng.integers(2, 4))  # rule-following panels' shape count (number rules)
            items.append([shapes.item(rng, size, rule, a, b, count)[0] for a, b in pattern])
            answers.append(answer)
            props.append(pattern)
        images = torch.from_numpy(np.round(np.array(items) * 255).astype(np.uint8))
        return {"answer": torch.tensor(answers), "props": torch.tensor(props), "images": images}
    family, number = rule.split("-")
    g = torch.Generator().manual_seed(int(rng.integers(2**31)))
    plural = number == "plural"
    texts = []
    for _ in range(n):
        pattern, answer = layout(kind, rng)
        texts.append([agreement.item(g, family, a == plural, b == plural) for a, b in pattern])
        answers.append(answer)
        props.append(pattern)
    ids, attention = agreement.encode([t for row in texts for t in row])
    shape = (n, 4, ids.shape[-1])
    return {"answer": torch.tensor(answers), "props": torch.tensor(props), "texts": texts,
            "input_ids": ids.view(shape), "attention_mask": attention.view(shape)}


def odd_scores(embeddings: torch.Tensor) -> torch.Tensor:
    """The odd-one-out decision rule: embeddings ``[B, 4, D]`` to scores ``[B, 4]``, minus each item's
    summed cosine similarity to the four items (itself included). The odd one is the argmax."""
    e = F.normalize(embeddings, dim=-1)
    return -(e @ e.transpose(1, 2)).sum(-1)
