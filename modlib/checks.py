"""Checks for the exercises in which a learner writes a key piece of a chapter's science.

Each ``check_*`` takes the learner's function, runs it beside the book's own on several inputs,
edge cases included, and returns a :class:`Verdict`: ``correct``, or what differs (which input,
expected against got, and the likely slip). A stub that still raises ``NotImplementedError`` gets
``not written yet`` and its hint. In a notebook the verdict shows as one line of text::

    checks.check_iou(my_iou)   # -> correct

Which chapter uses which: :func:`check_mutual_information` and :func:`check_reliance` (chapter 1,
the redundant-input toy); :func:`check_soft_occlusion` and :func:`check_r2_score` (chapter 2);
:func:`check_hinge` and :func:`check_interpret` (chapter 3); :func:`check_gumbel_weight` and
:func:`check_iou` (chapter 4); :func:`check_odd_scores` and :func:`check_quality` (chapter 5);
:func:`check_mask_tokens` and :func:`check_nt_xent` (chapter 6).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import torch
from torch.nn import functional as F

from modlib import agreement, compositional_sprites, data, masks, pretraining, resists_at_scale, scan, sprites
from modlib import structural_compositionality as sc
from modlib import toy, training
from modlib.models import mlp


@dataclass(frozen=True)
class Verdict:
    """A check's outcome: ``ok`` and the one line that says why."""

    ok: bool
    message: str

    def __repr__(self) -> str:
        return self.message

    def __bool__(self) -> bool:
        return self.ok


def _check(body):
    """Turn ``body(mine) -> None | str`` (None: correct; a string: what differs) into a check
    that returns a :class:`Verdict` and reports a stub that raises ``NotImplementedError``."""

    @functools.wraps(body)
    def check(mine) -> Verdict:
        try:
            problem = body(mine)
        except NotImplementedError as stub:
            return Verdict(False, f"not written yet: {stub}" if str(stub) else "not written yet")
        return Verdict(problem is None, "correct" if problem is None else problem)

    return check


def _close(got, want, atol: float) -> bool:
    got = torch.as_tensor(got, dtype=torch.float64)
    want = torch.as_tensor(want, dtype=torch.float64)
    return got.shape == want.shape and bool(torch.allclose(got, want, atol=atol, equal_nan=True))


def _shape(got) -> tuple:
    return tuple(torch.as_tensor(got).shape)


# --- chapter 1: the redundant-input toy -----------------------------------------------------------

@_check
def check_mutual_information(mine):
    """``mine(p)``: I(Y1; Y2) in bits of a joint probability table ``p [a, b]`` (rows Y1, columns
    Y2). Compared with :func:`modlib.data.toy_mutual_information` on the toy's training tables
    (reveal 0, 0.5, 1: independent, partly and fully revealing) and the ternary designs'."""
    tables = {}
    for reveal in (0.0, 0.5, 1.0):
        w = torch.tensor([[1.0, 1.0], [1.0, 1.0 - reveal]], dtype=torch.float64)
        tables[f"binary table, reveal {reveal}"] = (w / w.sum(), data.toy_mutual_information(reveal))
    for design, (weights, _) in toy.TERNARY.items():
        p = torch.zeros(2, 3, dtype=torch.float64)
        for (y1, y2), w in weights.items():
            p[y1, y2] = w
        tables[f"ternary design {design!r}"] = (p / p.sum(), toy.mutual_information(design, 0.0))
    for name, (p, want) in tables.items():
        got = float(mine(p.clone()))
        if math.isnan(got):
            return f"{name}: got nan; a cell with p = 0 adds nothing (0 log 0 = 0), skip it"
        if abs(got - want) > 1e-6:
            if want > 0 and abs(got - want * math.log(2)) < 1e-6:
                return f"{name}: got {got:.4f}, expected {want:.4f} bits; use log2, not the natural log"
            if abs(got - want) > 1e-6 and want == 0:
                return f"{name}: got {got:.4f}, expected 0 (Y1 and Y2 are independent here)"
            return (f"{name}: got {got:.4f}, expected {want:.4f}; the terms are p(y1, y2) log2 "
                    "[p(y1, y2) / (p(y1) p(y2))] with the marginals summed from the table")
    return None


@_check
def check_reliance(mine):
    """``mine(f, x)``: E|∂z/∂x2| / E|∂z/∂x1| of a network ``f`` (points ``[N, 2]`` -> logits
    ``[N, 1]``) over the points ``x [N, 2]``. Compared with :func:`modlib.toy.reliance` on three
    small tanh networks (one of them blind to x2) and on a linear map with a known answer."""
    torch.manual_seed(0)
    nets = [mlp(2, [8, 8], 1, "tanh") for _ in range(3)]
    with torch.no_grad():
        nets[2][0].weight[:, 1] = 0  # this one never reads x2: reliance 0
    template, params = training.stack(nets)
    x = torch.randn(64, 2)
    want = toy.reliance(template, params, x.expand(3, -1, -1))  # [3]
    linear = torch.nn.Linear(2, 1)
    with torch.no_grad():
        linear.weight[:] = torch.tensor([[2.0, -1.0]])
    cases = [(f"tanh network {i}" + (" (blind to x2)" if i == 2 else ""), net, float(want[i]))
             for i, net in enumerate(nets)] + [("z = 2 x1 - x2", linear, 0.5)]
    for name, net, expected in cases:
        got = float(mine(net, x.clone()))
        if abs(got - expected) > 1e-5:
            if expected > 0 and abs(got - 1 / expected) < 1e-4:
                return f"{name}: got {got:.4f}, expected {expected:.4f}; x2 over x1, not x1 over x2"
            if name.startswith("z =") and abs(got + 0.5) < 1e-5:
                return f"{name}: got {got:.4f}, expected 0.5; average the absolute gradients"
            return f"{name}: got {got:.4f}, expected {expected:.4f}"
    return None


# --- chapter 2: compositional generalization ------------------------------------------------------

@_check
def check_soft_occlusion(mine):
    """``mine(slots, k)``: chapter 2's soft occlusion of slot images ``[N, 2, 3, H, W]`` (slot 0
    on top), compared with :func:`modlib.sprites.soft_occlusion` at two sharpnesses."""
    torch.manual_seed(0)
    slots = torch.rand(4, 2, 3, 8, 8)
    slots[:, 0, :, :2] = 0  # an empty (black) band in the top slot: the lower one shows through
    for k in (1.0, 5.0):
        out, want = mine(slots.clone(), k=k), sprites.soft_occlusion(slots, sharpness=k)
        if _shape(out) != tuple(want.shape):
            return f"k={k}: shape {_shape(out)}, expected {tuple(want.shape)}"
        if not torch.allclose(out, want, atol=1e-6):
            if torch.allclose(out, sprites.soft_occlusion(slots.flip(1), sharpness=k), atol=1e-6):
                return f"k={k}: the slots are swapped; slot 0 lies on top"
            return f"k={k}: values differ by up to {(out - want).abs().max():.3g}"
    return None


@_check
def check_r2_score(mine):
    """``mine(x, x_hat)``: variance-weighted R² of images ``[N, ...]``, compared with
    :func:`modlib.compositional_sprites.r2_score` on a perfect prediction, the mean image, noise,
    and outputs whose variances differ by a factor of 100."""
    torch.manual_seed(0)
    x = torch.rand(50, 3, 4, 4)
    x[:, 0] *= 10  # the red channel varies 100 times as much as the others
    noisy = x + 0.3 * torch.randn_like(x)
    cases = {"a perfect prediction": x.clone(), "the mean image": x.mean(0, keepdim=True).expand_as(x),
             "a noisy prediction": noisy}
    for name, x_hat in cases.items():
        got, want = float(mine(x.clone(), x_hat.clone())), compositional_sprites.r2_score(x, x_hat)
        if abs(got - want) > 1e-5:
            flat, flat_hat = x.flatten(1), x_hat.flatten(1)
            per_output = 1 - ((flat - flat_hat) ** 2).sum(0) / ((flat - flat.mean(0)) ** 2).sum(0)
            if abs(got - float(per_output.mean())) < 1e-5:
                return (f"{name}: got {got:.4f}, expected {want:.4f}; that is the plain mean of "
                        "per-output R², weight each output by its variance")
            return f"{name}: got {got:.4f}, expected {want:.4f}"
    return None


# --- chapter 3: gradient descent resists compositionality, at scale -----------------------------

@_check
def check_hinge(mine):
    """``mine(scores, y)``: the mean categorical hinge loss of scores ``[N, C]`` and labels
    ``[N]``, compared with :func:`modlib.resists_at_scale.categorical_hinge`."""
    torch.manual_seed(0)
    scores = torch.randn(16, 10) * 3
    y = torch.randint(0, 10, (16,))
    confident = F.one_hot(y, 10).float() * 5 - 5  # every wrong score far below: loss 0
    for name, s in {"random scores": scores, "confident scores": confident}.items():
        out, want = mine(s.clone(), y.clone()), resists_at_scale.categorical_hinge(s, y)
        if _shape(out) != ():
            return f"{name}: expected one number (the mean), got shape {_shape(out)}"
        if not _close(out, want, 1e-5):
            no_zero = (1 + s.masked_fill(F.one_hot(y, 10).bool(), -1e9).amax(1)
                       - s.gather(1, y[:, None])[:, 0]).clamp_min(0).mean()
            if _close(out, no_zero, 1e-5):
                return f"{name}: neg must include 0: the largest of the other scores and 0"
            return f"{name}: got {float(out):.4f}, expected {want.item():.4f}"
    return None


@_check
def check_interpret(mine):
    """``mine(command)``: the actions a SCAN command means, a list like ``["I_TURN_LEFT",
    "I_JUMP"]``, compared with :func:`modlib.scan.interpret` on commands chosen to exercise every
    rule, then on every SCAN command."""
    chosen = ["jump", "turn left", "walk left", "run opposite right", "look around left",
              "jump twice", "walk around right thrice", "turn opposite left twice",
              "jump and walk", "jump after walk", "run left twice after look around right"]
    hints = {"after": "'x after y' does y first", "opposite": "'opposite' turns twice, then acts",
             "around": "'around' is (turn, act) four times", "twice": "a repeat applies to the whole "
             "verb phrase before it", "thrice": "a repeat applies to the whole verb phrase before it"}
    for command in chosen + scan.commands():
        got, want = list(mine(command)), scan.interpret(command)
        if got != want:
            words = command.split()
            hint = next((h for w, h in hints.items() if w in words), "")
            return f"{command!r}: got {got}, expected {want}" + (f" ({hint})" if hint else "")
    return None


# --- chapter 4: weight masks ------------------------------------------------------------------------

@_check
def check_gumbel_weight(mine):
    """``mine(weight, logit, u, tau)``: the straight-through Gumbel-sigmoid masked weight, compared
    with :func:`modlib.masks.gumbel_weight` on random inputs ``[1000]``: the values, then the
    gradients that reach the logits."""
    g = torch.Generator().manual_seed(0)
    w, logit0 = torch.randn(1000, generator=g), 2 * torch.randn(1000, generator=g)
    u = torch.rand(1000, generator=g).clamp(1e-3, 1 - 1e-3)
    for tau in (1.0, 0.5):
        outs, grads = [], []
        for f in (mine, masks.gumbel_weight):
            logit = logit0.clone().requires_grad_()
            out = f(w, logit, u, tau)
            outs.append(out.detach())
            grads.append(torch.autograd.grad(out.sum(), logit)[0] if out.requires_grad else None)
        if not torch.allclose(outs[0], outs[1], atol=1e-6):
            return f"tau={tau}: the values differ; the forward pass gives weight times the hard 0/1 sample"
        if grads[0] is None or not torch.allclose(grads[0], grads[1], atol=1e-5):
            return (f"tau={tau}: the gradients reaching the logits differ; they are those of the soft "
                    "sample (hard + soft - soft.detach())")
    return None


@_check
def check_iou(mine):
    """``mine(a, b)``: the intersection over union of two boolean masks of one weight tensor,
    compared with :func:`modlib.masks.iou`, including nested, disjoint and empty masks."""
    g = torch.Generator().manual_seed(0)
    a, b = torch.rand(20, 30, generator=g) < 0.3, torch.rand(20, 30, generator=g) < 0.6
    empty = torch.zeros(20, 30, dtype=torch.bool)
    cases = {"two random masks": (a, b), "one inside the other": (a, a | b), "disjoint masks": (a, ~a),
             "a mask and itself": (a, a), "two empty masks": (empty, empty)}
    for name, (m1, m2) in cases.items():
        got, want = float(mine(m1.clone(), m2.clone())), masks.iou({"w": m1}, {"w": m2})["w"]
        if math.isnan(want):
            if not math.isnan(got):
                return f"{name}: got {got:.4f}, expected nan (the union is empty: no overlap to measure)"
            continue
        if math.isnan(got) or abs(got - want) > 1e-6:
            smaller = masks.iomin({"w": m1}, {"w": m2})["w"]
            if abs(got - smaller) < 1e-6:
                return f"{name}: got {got:.4f}, expected {want:.4f}; divide by the union, not the smaller mask"
            return f"{name}: got {got:.4f}, expected {want:.4f}; |a and b| / |a or b|"
    return None


# --- chapter 5: structural compositionality --------------------------------------------------------

@_check
def check_odd_scores(mine):
    """``mine(embeddings)``: the odd-one-out scores ``[N, 4]`` of embeddings ``[N, 4, D]``,
    compared with :func:`modlib.structural_compositionality.odd_scores`."""
    torch.manual_seed(0)
    spread = torch.logspace(-2, 2, 4)[None, :, None]
    cases = {"random": torch.randn(8, 4, 16), "lengths from 0.01 to 100": torch.randn(8, 4, 16) * spread}
    for name, e in cases.items():
        got, want = mine(e.clone()), sc.odd_scores(e)
        if _shape(got) != tuple(want.shape):
            return f"{name}: shape {_shape(got)}, expected {tuple(want.shape)}"
        if not torch.allclose(got, want, atol=1e-5):
            unnormalised = -(e @ e.transpose(1, 2)).sum(-1)
            hint = ("; normalise the embeddings first (cosine, not dot products)"
                    if torch.allclose(got, unnormalised, rtol=1e-4, atol=1e-4) else "")
            return f"{name}: scores differ by up to {(got - want).abs().max():.3g}{hint}"
    seen = torch.tensor([[[1.0, 0], [1, 0.1], [0, 1], [1, -0.1]]])
    if mine(seen).argmax(1).item() != 2:
        return "the item at [0, 2] is the odd one out; is your sign right?"
    return None


@_check
def check_quality(mine):
    """``mine(own, ablated_target, ablated_other)``: the selection rule's score of a subnetwork,
    compared with :func:`modlib.structural_compositionality.quality` at and around the gate."""
    cases = [(0.95, 0.3, 0.8), (0.89, 0.3, 0.8), (0.9, 0.3, 0.8), (0.95, 0.1, 0.8), (0.95, 0.1, 0.2),
             (1.0, 0.8, 0.3)]
    for case in cases:
        got, want = mine(*case), sc.quality(*case)
        if abs(got - want) > 1e-9:
            if case[0] in (0.89, 0.9):
                hint = "the gate is 'at least 0.9'"
            elif min(case[1:]) < 0.25:
                hint = "floor both accuracies at chance (0.25)"
            else:
                hint = "other minus target, not the reverse"
            return f"quality{case}: got {got:.3f}, expected {want:.3f} ({hint})"
    return None


# --- chapter 6: pretraining and consistency --------------------------------------------------------

@_check
def check_mask_tokens(mine):
    """``mine(ids, g)``: BERT's masking of token ids ``[N, L]`` -> ``(inputs, labels)``, checked
    on 4,000 generated sentences against BERT's shares (15% of the words picked; of those 80%
    ``[MASK]``, 10% a random word, 10% unchanged)."""
    ids = agreement.encode(pretraining.corpus(4_000, seed=5))[0]
    inputs, labels = mine(ids.clone(), torch.Generator().manual_seed(0))
    if tuple(inputs.shape) != tuple(ids.shape) or tuple(labels.shape) != tuple(ids.shape):
        return f"shapes {_shape(inputs)}, {_shape(labels)}; expected {tuple(ids.shape)} for both"
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


@_check
def check_nt_xent(mine):
    """``mine(z1, z2, temperature)``: SimCLR's loss of two views' embeddings ``[N, D]``, compared
    with :func:`modlib.pretraining.nt_xent`; a mismatch is matched against the usual slips."""
    mistakes = {"each embedding is its own candidate: mask the diagonal": dict(diagonal=True),
                "normalise the embeddings first": dict(normalise=False)}
    torch.manual_seed(0)
    z1, z2 = torch.randn(6, 8), torch.randn(6, 8)
    cases = {"random views": (z1, z2, 0.5), "long embeddings": (100 * z1, z2, 0.5),
             "temperature 0.07": (z1, z2, 0.07)}
    for name, (a, b, t) in cases.items():
        got, want = mine(a.clone(), b.clone(), t), pretraining.nt_xent(a, b, t)
        if _shape(got) != ():
            return f"{name}: got shape {_shape(got)}; return the mean, a single number"
        if not _close(got, want, 1e-5):
            why = [m for m, kw in mistakes.items() if _close(got, _nt_xent_variant(a, b, t, **kw), 1e-5)]
            return (f"{name}: got {float(got):.4f}, expected {want.item():.4f}; "
                    + (why[0] if why else "is the partner of row i the row i ± N?"))
    return None
