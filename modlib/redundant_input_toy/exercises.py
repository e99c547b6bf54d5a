"""Chapter 1's exercises (notebooks/redundant_input_toy.ipynb): :func:`check_mutual_information` and
:func:`check_reliance`, each returning a :class:`modlib.checks.Verdict`.
"""

from __future__ import annotations

import math

import torch

from modlib import redundant_input_toy as toy
from modlib import training
from modlib.checks import check
from modlib.data import toy as toy_data
from modlib.models import mlp


def _information_slip(name: str, got: float, want: float) -> str | None:
    """The slips an information in bits shares: nan from the cells with p = 0, the natural log."""
    if math.isnan(got):
        return f"{name}: got nan; a cell with p = 0 adds nothing (0 log 0 = 0), skip it"
    if want > 0 and abs(got - want) > 1e-6 and abs(got - want * math.log(2)) < 1e-6:
        return f"{name}: got {got:.4f}, expected {want:.4f} bits; use log2, not the natural log"
    return None


@check
def check_mutual_information(mine):
    """``mine(p)``: I(Y1; Y2) in bits of a joint probability table ``p [a, b]`` (rows Y1, columns
    Y2). Compared with :func:`modlib.data.toy.toy_mutual_information` on the toy's training tables
    (reveal 0, 0.5, 1: independent, partly and fully revealing) and the ternary designs'."""
    tables = {}
    for reveal in (0.0, 0.5, 1.0):
        w = torch.tensor([[1.0, 1.0], [1.0, 1.0 - reveal]], dtype=torch.float64)
        tables[f"binary table, reveal {reveal}"] = (w / w.sum(), toy_data.toy_mutual_information(reveal))
    for design, (weights, _) in toy.TERNARY.items():
        p = torch.zeros(2, 3, dtype=torch.float64)
        for (y1, y2), w in weights.items():
            p[y1, y2] = w
        tables[f"ternary design {design!r}"] = (p / p.sum(), toy.mutual_information(design, 0.0))
    for name, (p, want) in tables.items():
        got = float(mine(p.clone()))
        slip = _information_slip(name, got, want)
        if slip:
            return slip
        if abs(got - want) > 1e-6:
            if abs(got - want) > 1e-6 and want == 0:
                return f"{name}: got {got:.4f}, expected 0 (Y1 and Y2 are independent here)"
            return (f"{name}: got {got:.4f}, expected {want:.4f}; the terms are p(y1, y2) log2 "
                    "[p(y1, y2) / (p(y1) p(y2))] with the marginals summed from the table")
    return None


@check
def check_reliance(mine):
    """``mine(f, x)``: E|∂z/∂x2| / E|∂z/∂x1| of a network ``f`` (points ``[N, 2]`` -> logits
    ``[N, 1]``) over the points ``x [N, 2]``. Compared with :func:`modlib.redundant_input_toy.reliance` on three
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


def _cmi(p: torch.Tensor) -> float:
    """I(A; B | C) in bits of a joint table ``p [a, b, c]`` (the book's reference)."""
    pc = p.sum((0, 1), keepdim=True)  # [1, 1, c]
    pac, pbc = p.sum(1, keepdim=True), p.sum(0, keepdim=True)  # [a, 1, c], [1, b, c]
    seen = p > 0
    ratio = p * pc / (pac * pbc)
    return float((p[seen] * torch.log2(ratio[seen])).sum())


def _toy_table(prediction) -> torch.Tensor:
    """The paper's training cells (Y1, Y2), uniform on (0,0), (0,1), (1,0), as a table
    ``p [y2, yhat, y1]`` for a prediction ``yhat = prediction(y1, y2)``: the sign of X2 is Y2, the
    sign of X1 is Y1."""
    p = torch.zeros(2, 2, 2, dtype=torch.float64)
    for y1, y2 in ((0, 0), (0, 1), (1, 0)):
        p[y2, prediction(y1, y2), y1] += 1 / 3
    return p


@check
def check_conditional_information(mine):
    """``mine(p)``: I(A; B | C) in bits of a joint table ``p [a, b, c]``. Compared with the book's on
    the toy's training cells for a network that reads only X1 (I(X2; Yhat) = 0.252 bits, but
    I(X2; Yhat | X1) = 0), one that reads only X2 (2/3 bits), a table whose C takes one value (then
    it is I(A; B)) and a random table."""
    g = torch.Generator().manual_seed(0)
    random = torch.rand(2, 3, 2, generator=g, dtype=torch.float64)
    tables = {
        "toy, Yhat = Y1 (reads X1 only)": _toy_table(lambda y1, y2: y1),
        "toy, Yhat = 1 - Y2 (reads X2 only)": _toy_table(lambda y1, y2: 1 - y2),
        "C constant": _toy_table(lambda y1, y2: y1).sum(2, keepdim=True),
        "a random 2x3x2 table": random / random.sum(),
    }
    for name, p in tables.items():
        want = _cmi(p)
        got = float(mine(p.clone()))
        slip = _information_slip(name, got, want)
        if slip:
            return slip
        if abs(got - want) > 1e-6:
            plain = _cmi(p.sum(2, keepdim=True))  # I(A; B), C summed out
            if abs(got - plain) < 1e-6:
                return (f"{name}: got {got:.4f} = I(A; B), expected I(A; B | C) = {want:.4f}; "
                        "condition on C: the terms are p(a,b,c) log2 [p(a,b,c) p(c) / (p(a,c) p(b,c))]")
            return (f"{name}: got {got:.4f}, expected {want:.4f}; the terms are p(a, b, c) log2 "
                    "[p(a, b, c) p(c) / (p(a, c) p(b, c))] over the cells with p > 0")
    return None
