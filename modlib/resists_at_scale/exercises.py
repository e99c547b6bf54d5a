"""Chapter 3's exercises (notebooks/resists_at_scale.ipynb): :func:`check_hinge` and
:func:`check_interpret`, each returning a :class:`modlib.checks.Verdict`.
"""

from __future__ import annotations

import torch
from torch.nn import functional as F

from modlib import resists_at_scale
from modlib.checks import check, is_close, shape_of
from modlib.data import scan


@check
def check_hinge(mine):
    """``mine(scores, y)``: the mean categorical hinge loss of scores ``[N, C]`` and labels
    ``[N]``, compared with :func:`modlib.resists_at_scale.categorical_hinge`."""
    torch.manual_seed(0)
    scores = torch.randn(16, 10) * 3
    y = torch.randint(0, 10, (16,))
    confident = F.one_hot(y, 10).float() * 5 - 5  # every wrong score far below: loss 0
    for name, s in {"random scores": scores, "confident scores": confident}.items():
        out, want = mine(s.clone(), y.clone()), resists_at_scale.categorical_hinge(s, y)
        if shape_of(out) != ():
            return f"{name}: expected one number (the mean), got shape {shape_of(out)}"
        if not is_close(out, want, 1e-5):
            no_zero = (1 + s.masked_fill(F.one_hot(y, 10).bool(), -1e9).amax(1)
                       - s.gather(1, y[:, None])[:, 0]).clamp_min(0).mean()
            if is_close(out, no_zero, 1e-5):
                return f"{name}: neg must include 0: the largest of the other scores and 0"
            return f"{name}: got {float(out):.4f}, expected {want.item():.4f}"
    return None


@check
def check_interpret(mine):
    """``mine(command)``: the actions a SCAN command means, a list like ``["I_TURN_LEFT",
    "I_JUMP"]``, compared with :func:`modlib.data.scan.interpret` on commands chosen to exercise every
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
