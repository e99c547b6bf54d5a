"""Chapter 6's exercises (notebooks/pretraining_consistency.ipynb): :func:`check_mask_tokens` and
:func:`check_nt_xent`, each returning a :class:`modlib.checks.Verdict`.
"""

from __future__ import annotations

import torch
from torch.nn import functional as F

from modlib.checks import check, is_close, shape_of
from modlib.data import sentences as agreement
from modlib.pretraining_consistency import pretraining


@check
def check_mask_tokens(mine):
    """``mine(ids, g)``: BERT's masking of token ids ``[N, L]`` -> ``(inputs, labels)``, checked
    on 4,000 generated sentences against BERT's shares (15% of the words picked; of those 80%
    ``[MASK]``, 10% a random word, 10% unchanged)."""
    ids = agreement.encode(pretraining.corpus(4_000, seed=5))[0]
    inputs, labels = mine(ids.clone(), torch.Generator().manual_seed(0))
    if tuple(inputs.shape) != tuple(ids.shape) or tuple(labels.shape) != tuple(ids.shape):
        return f"shapes {shape_of(inputs)}, {shape_of(labels)}; expected {tuple(ids.shape)} for both"
    words, picked = ids >= len(agreement.SPECIAL), labels != -100
    if (picked & ~words).any():
        return "a [CLS], [SEP] or [PAD] position was picked; pick word positions only"
    if not torch.equal(labels[picked], ids[picked]):
        return "labels must hold the original id where picked"
    if not torch.equal(inputs[~picked], ids[~picked]):
        return "a position that was not picked changed"
    masked = inputs[picked] == agreement.IDS["[MASK]"]
    kept = inputs[picked] == ids[picked]
    swapped = ~masked & ~kept
    shares = {"picked / words": (picked.sum() / words.sum(), 0.15),
              "[MASK] / picked": (masked.float().mean(), 0.8),
              "unchanged / picked": (kept.float().mean(), 0.1),
              "random / picked": (swapped.float().mean(), 0.1)}
    for name, (got, want) in shares.items():
        if abs(float(got) - want) > 0.015:
            return f"{name} is {float(got):.3f}; expected about {want}"
    if (inputs[picked][swapped] < len(agreement.SPECIAL)).any():
        return "a random replacement is a special token; draw from the words only"
    return None


def _nt_xent_variant(z1, z2, t, diagonal=False, normalise=True):
    """NT-Xent with one of two common slips (for :func:`check_nt_xent`'s diagnosis)."""
    z = torch.cat([z1, z2])
    z = F.normalize(z, dim=1) if normalise else z
    sim = z @ z.T / t  # [2N, 2N]
    if not diagonal:
        sim.fill_diagonal_(float("-inf"))
    n = len(z1)
    return F.cross_entropy(sim, torch.cat([torch.arange(n, 2 * n), torch.arange(n)]))


@check
def check_nt_xent(mine):
    """``mine(z1, z2, temperature)``: SimCLR's loss of two views' embeddings ``[N, D]``, compared
    with :func:`modlib.pretraining_consistency.pretraining.nt_xent`; a mismatch is matched against the usual slips."""
    mistakes = {"each embedding is its own candidate: mask the diagonal": dict(diagonal=True),
                "normalise the embeddings first": dict(normalise=False)}
    torch.manual_seed(0)
    z1, z2 = torch.randn(6, 8), torch.randn(6, 8)
    cases = {"random views": (z1, z2, 0.5), "long embeddings": (100 * z1, z2, 0.5),
             "temperature 0.07": (z1, z2, 0.07)}
    for name, (a, b, t) in cases.items():
        got, want = mine(a.clone(), b.clone(), t), pretraining.nt_xent(a, b, t)
        if shape_of(got) != ():
            return f"{name}: got shape {shape_of(got)}; return the mean, a single number"
        if not is_close(got, want, 1e-5):
            why = [m for m, kw in mistakes.items() if is_close(got, _nt_xent_variant(a, b, t, **kw), 1e-5)]
            return (f"{name}: got {float(got):.4f}, expected {want.item():.4f}; "
                    + (why[0] if why else "is the partner of row i the row i ± N?"))
    return None
