"""The chapters' exercise checks (modlib.<chapter>.exercises, on modlib.checks): each check names
the usual slip, not just "wrong" (tests/test_student.py runs every check on the book's solutions
and on the stubs)."""

import math

import pytest
import torch
from torch.nn import functional as F

from modlib import checks, masks
from modlib import structural_compositionality as sc
from modlib.compositional_sprites import exercises as cs_ex
from modlib.data import scan
from modlib.pretraining_consistency import exercises as pc_ex
from modlib.pretraining_consistency import pretraining
from modlib.redundant_input_toy import exercises as toy_ex
from modlib.resists_at_scale import exercises as rs_ex
from modlib.structural_compositionality import exercises as sc_ex
from modlib.weight_masks import exercises as wm_ex


def mi_natural_log(p):
    outer = p.sum(1, keepdim=True) * p.sum(0, keepdim=True)
    seen = p > 0
    return float((p[seen] * torch.log(p[seen] / outer[seen])).sum())


def mi_with_zero_cells(p):
    outer = p.sum(1, keepdim=True) * p.sum(0, keepdim=True)
    return float((p * torch.log2(p / outer)).sum())


def cmi_without_conditioning(p):
    return mi_natural_log(p.sum(2)) / math.log(2)  # I(A; B), C summed out


def cmi_natural_log(p):
    pc, pac, pbc = p.sum((0, 1), keepdim=True), p.sum(1, keepdim=True), p.sum(0, keepdim=True)
    seen = p > 0
    return float((p[seen] * torch.log((p * pc / (pac * pbc))[seen])).sum())


def reliance_upside_down(f, x):
    x = x.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(f(x).sum(), x)
    return float(g.abs().mean(0)[0] / g.abs().mean(0)[1])


def occlusion_swapped(slots, k=1.0):
    top, lower = slots[:, 1], slots[:, 0]
    mass = k * top.sum(1, keepdim=True)
    return top * torch.sigmoid(mass) + lower * torch.sigmoid(-mass)


def r2_unweighted(x, x_hat):
    x, x_hat = x.flatten(1), x_hat.flatten(1)
    return float((1 - ((x - x_hat) ** 2).sum(0) / ((x - x.mean(0)) ** 2).sum(0)).mean())


def hinge_without_zero(scores, y):
    pos = scores.gather(1, y[:, None])[:, 0]
    neg = scores.masked_fill(F.one_hot(y, scores.shape[1]).bool(), -1e9).amax(1)
    return (1 + neg - pos).clamp_min(0).mean()


def interpret_after_in_order(command):
    words = command.split()
    if "after" in words:
        i = words.index("after")
        return scan.interpret(" ".join(words[:i])) + scan.interpret(" ".join(words[i + 1:]))
    return scan.interpret(command)


def gumbel_hard_gradient(weight, logit, u, tau):
    soft = torch.sigmoid((logit + torch.log(u / (1 - u))) / tau)
    return weight * (soft > 0.5).float() * (logit * 0 + 1)


def iou_over_smaller(a, b):
    return float((a & b).sum() / min(a.sum(), b.sum()))


def odd_scores_unnormalised(embeddings):
    return -(embeddings @ embeddings.transpose(1, 2)).sum(-1)


def quality_strict_gate(own, target, other):
    return 0.0 if own <= 0.9 else max(other, 0.25) - max(target, 0.25)


def mask_tokens_everywhere(ids, g):
    picked = torch.rand(ids.shape, generator=g) < 0.15
    inputs = ids.clone()
    inputs[picked] = 4
    return inputs, torch.where(picked, ids, -100)


def nt_xent_with_diagonal(z1, z2, t):
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    n = len(z1)
    return F.cross_entropy(z @ z.T / t, torch.cat([torch.arange(n, 2 * n), torch.arange(n)]))


SLIPS = [
    (toy_ex.check_mutual_information, mi_natural_log, "use log2, not the natural log"),
    (toy_ex.check_mutual_information, mi_with_zero_cells, "got nan; a cell with p = 0 adds nothing"),
    (toy_ex.check_reliance, reliance_upside_down, "x2 over x1, not x1 over x2"),
    (toy_ex.check_conditional_information, cmi_without_conditioning, "= I(A; B), expected I(A; B | C)"),
    (toy_ex.check_conditional_information, cmi_natural_log, "use log2, not the natural log"),
    (cs_ex.check_soft_occlusion, occlusion_swapped, "the slots are swapped"),
    (cs_ex.check_r2_score, r2_unweighted, "weight each output by its variance"),
    (rs_ex.check_hinge, hinge_without_zero, "neg must include 0"),
    (rs_ex.check_interpret, interpret_after_in_order,
     "'jump after walk': got ['I_JUMP', 'I_WALK'], expected ['I_WALK', 'I_JUMP'] ('x after y' does y first)"),
    (wm_ex.check_gumbel_weight, gumbel_hard_gradient, "the gradients reaching the logits differ"),
    (wm_ex.check_iou, iou_over_smaller, "divide by the union, not the smaller mask"),
    (sc_ex.check_odd_scores, odd_scores_unnormalised, "normalise the embeddings first"),
    (sc_ex.check_quality, quality_strict_gate, "the gate is 'at least 0.9'"),
    (pc_ex.check_mask_tokens, mask_tokens_everywhere, "a [CLS], [SEP] or [PAD] position was picked"),
    (pc_ex.check_nt_xent, nt_xent_with_diagonal, "mask the diagonal"),
]


@pytest.mark.parametrize("check, slip, says", SLIPS, ids=[s[1].__name__ for s in SLIPS])
def test_check_names_the_slip(check, slip, says):
    verdict = check(slip)
    assert not verdict.ok and says in verdict.message, verdict.message


@pytest.mark.parametrize("check, reference", [
    (rs_ex.check_interpret, scan.interpret), (sc_ex.check_odd_scores, sc.odd_scores),
    (sc_ex.check_quality, sc.quality), (pc_ex.check_mask_tokens, pretraining.mask_tokens),
    (pc_ex.check_nt_xent, pretraining.nt_xent), (wm_ex.check_gumbel_weight, masks.gumbel_weight)])
def test_check_passes_the_books_own_function(check, reference):
    verdict = check(reference)
    assert verdict.ok and repr(verdict) == "correct" and bool(verdict)


def test_a_stub_without_a_hint_is_not_written_yet():
    def stub(*args, **kwargs):
        raise NotImplementedError

    assert repr(wm_ex.check_iou(stub)) == "not written yet"


def test_empty_masks_must_give_nan():
    verdict = wm_ex.check_iou(lambda a, b: float((a & b).sum()) / max(int((a | b).sum()), 1))
    assert not verdict.ok and "expected nan" in verdict.message and "two empty masks" in verdict.message
    assert math.isnan(masks.iou({"w": torch.zeros(2, dtype=torch.bool)}, {"w": torch.zeros(2, dtype=torch.bool)})["w"])


def test_a_check_of_the_books_marked_solution_says_so():
    mine = checks.book_solution(lambda weight, logit, u, tau: masks.gumbel_weight(weight, logit, u, tau))
    verdict = wm_ex.check_gumbel_weight(mine)
    assert verdict.ok and repr(verdict) == checks.BOOK_SOLUTION and "replace it with yours" in repr(verdict)


def test_every_checked_solution_is_marked_as_the_books():
    """Issue 57: a check run on the book's own solution says so, in every chapter: each solution
    cell that defines a function an ``exercises.check_*`` cell then checks carries
    ``@checks.book_solution`` (else the page prints a bare "correct" the reader did not earn), or
    the check cell says so in a comment the page shows (chapter 7: "... on its hidden solution")."""
    import json
    import re
    from pathlib import Path

    unmarked = []
    for path in sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb")):
        cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
        checked = {m for c in cells for m in re.findall(r"exercises\.check_\w+\((\w+)\)", "".join(c["source"]))
                   if "hidden solution" not in "".join(c["source"])}
        for c in cells:
            source = "".join(c["source"])
            if "solution" not in c.get("metadata", {}).get("tags", []):
                continue
            for name in re.findall(r"^def (\w+)\(", source, re.M):
                if name in checked and not re.search(rf"^@checks\.book_solution\b.*\ndef {name}\(", source, re.M):
                    unmarked.append(f"{path.stem}: {name}")
    assert not unmarked, f"solutions checked without @checks.book_solution: {unmarked}"
