"""The multi-sprite data of chapter 2: renderer, compositions, supports, sufficient support."""

import math

import pytest
import torch

from modlib.data import sprites as sp


def one(x=0.5, y=0.5, shape=1.0, scale=1.0, hue=0.0) -> torch.Tensor:
    return torch.tensor([[x, y, shape, scale, hue]])


def centre_of_mass(img: torch.Tensor) -> tuple[float, float]:
    """Column and row (in pixels) of the mass of ``img [3, H, W]``."""
    mass = img.sum(0)
    rows, cols = torch.meshgrid(torch.arange(mass.shape[0]), torch.arange(mass.shape[1]), indexing="ij")
    return float((mass * cols).sum() / mass.sum()), float((mass * rows).sum() / mass.sum())


@pytest.mark.parametrize("shape", [0.0, 0.5, 1.0])
def test_each_shape_lands_where_its_latents_say(shape):
    size = 64
    for x, y in [(0.0, 0.0), (1.0, 1.0), (0.25, 0.75)]:  # the smallest sprites: none is clipped
        img = sp.render(one(x=x, y=y, shape=shape, scale=0.0), size)[0]
        cx, cy = centre_of_mass(img)
        # x in (0.1, 0.9) left to right; y in (0.2, 0.8) bottom to top, rows counted from the top
        want_x = (0.1 + 0.8 * x) * size - 0.5
        want_y = (1 - (0.2 + 0.6 * y)) * size - 0.5
        assert abs(cx - want_x) < 0.3 and abs(cy - want_y) < 0.3, (shape, x, y, cx, cy)


@pytest.mark.parametrize("shape", [0.0, 0.5, 1.0])
def test_each_shape_covers_its_area(shape):
    # Spriteworld's shapes have area scale**2; anti-aliased coverage keeps that to a pixel's worth
    size, scale = 64, 0.22
    cover = sp.render(one(shape=shape, scale=1.0, hue=0.0), size, rgba=True)[0, 3]
    assert cover.sum().item() == pytest.approx(scale ** 2 * size ** 2, rel=0.05)


def test_the_three_shapes_differ_and_are_what_they_say():
    imgs = sp.render(torch.cat([one(shape=s, scale=1.0) for s in (0.0, 0.5, 1.0)]), 64, rgba=True)[:, 3]
    triangle, square, circle = (i > 0.5 for i in imgs)
    # the square fills its bounding box, the circle about pi/4 of it, the triangle half of it
    def fill(m):
        rows, cols = m.any(1).nonzero(), m.any(0).nonzero()
        box = (rows.max() - rows.min() + 1) * (cols.max() - cols.min() + 1)
        return m.sum().item() / box.item()
    assert fill(square) > 0.95
    assert fill(circle) == pytest.approx(math.pi / 4, abs=0.06)
    assert fill(triangle) == pytest.approx(0.5, abs=0.08)
    # the triangle points up: its top rows are narrower than its bottom rows
    rows = triangle.any(1).nonzero().flatten()
    assert triangle[rows[1]].sum() < triangle[rows[-2]].sum()


def test_every_latent_changes_the_image():
    base = torch.tensor([[0.3, 0.6, 0.4, 0.5, 0.2]])
    ref = sp.render(base, 32)
    for i, name in enumerate(sp.LATENT_NAMES):
        moved = base.clone()
        moved[0, i] += 0.4
        assert not torch.allclose(sp.render(moved, 32), ref), name


def test_hue_gives_the_hsv_colour():
    colours = sp.hsv_to_rgb(torch.tensor([0.0, 1 / 3, 2 / 3, 1 / 6]))
    assert torch.allclose(colours, torch.tensor([[1.0, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0]]), atol=1e-6)


def test_rendering_is_deterministic_and_batched():
    z = sp.sample_support("random", 6, torch.Generator().manual_seed(3))
    a = sp.scenes(z, 16)
    assert a.shape == (6, 3, 16, 16)
    assert torch.equal(a, sp.scenes(z, 16))
    # a batch gives the same images as one scene at a time
    assert torch.allclose(a, torch.cat([sp.scenes(z[i:i + 1], 16) for i in range(6)]))


def test_render_names_a_bad_shape_of_input():
    with pytest.raises(ValueError, match=r"expected \[B, 5\]"):
        sp.render(torch.zeros(2, 4), 16)


def test_soft_occlusion_puts_slot_0_on_top_and_softens_with_k():
    a = torch.zeros(1, 3, 1, 1)
    a[0, 0] = 1.0  # a red pixel on top
    b = torch.ones(1, 3, 1, 1) * 0.5
    slots = torch.stack([a, b], dim=1)
    out1 = sp.soft_occlusion(slots, 1.0)[0, :, 0, 0]
    s = torch.sigmoid(torch.tensor(1.0))
    assert torch.allclose(out1, torch.tensor([s + 0.5 * (1 - s), 0.5 * (1 - s), 0.5 * (1 - s)]))
    hard = sp.soft_occlusion(slots, 100.0)[0, :, 0, 0]
    assert torch.allclose(hard, torch.tensor([1.0, 0, 0]), atol=1e-6)


def test_alpha_over_composites_onto_black():
    top = torch.tensor([1.0, 0, 0, 0.25]).view(1, 4, 1, 1)
    under = torch.tensor([0, 0, 1.0, 1.0]).view(1, 4, 1, 1)
    out = sp.alpha_over(torch.stack([top, under], dim=1))[0, :, 0, 0]
    assert torch.allclose(out, torch.tensor([0.25, 0, 0.75]))


@pytest.mark.parametrize("support", sp.SUPPORTS)
def test_supports_stay_in_the_cube(support):
    z = sp.sample_support(support, 500, torch.Generator().manual_seed(0),
                          delta=0.1 if support == "diagonal" else None)
    assert z.shape == (500, 2, 5) and z.min() >= 0 and z.max() <= 1


def test_orthogonal_support_is_the_authors_three_planes():
    z = sp.sample_support("orthogonal", 3000, torch.Generator().manual_seed(0))
    on = [(z[:, 1 - slot] == torch.tensor(fixed)).all(1) for slot, fixed in sp.PLANES["orthogonal"]]
    assert torch.stack(on).any(0).all()  # every scene lies on a plane
    assert all(abs(o.float().mean() - 1 / 3) < 0.05 for o in on)  # equally often


def test_gap_and_diagonal_keep_their_shape():
    g = torch.Generator().manual_seed(0)
    gap = sp.sample_support("gap", 2000, g)
    assert not ((gap[:, 0, 0] > sp.GAP[0]) & (gap[:, 0, 0] < sp.GAP[1])).any()
    for delta in (0.2, 0.05):
        d = sp.sample_support("diagonal", 2000, g, delta=delta)
        assert (d[:, 0] - d[:, 1]).abs().max() <= math.sqrt(2) * delta + 1e-6


def test_bad_supports_are_named():
    g = torch.Generator()
    with pytest.raises(ValueError, match="'random'.*'diagonal'"):
        sp.sample_support("grid", 10, g)
    with pytest.raises(ValueError, match="needs delta"):
        sp.sample_support("diagonal", 10, g)
    with pytest.raises(ValueError, match="delta"):
        sp.sample_support("diagonal", 10, g, delta=0.9)
    with pytest.raises(ValueError, match="only for support 'diagonal'"):
        sp.sample_support("random", 10, g, delta=0.1)


def test_sufficient_support_check():
    # soft occlusion: every pixel of both slots shows in every scene
    assert sp.sufficient_support("orthogonal", "soft", 16, n=4).min() == 1.0
    # near-hard occlusion: still sufficient on the authors' planes (the third plane uncovers what
    # the second hides) ...
    assert sp.sufficient_support("orthogonal", "soft", 16, n=4, sharpness=200.0).min() == 1.0
    # ... but not on a narrow diagonal, where the other sprite always sits nearby
    assert sp.sufficient_support("diagonal", "soft", 16, n=8, sharpness=200.0, delta=0.05).min() < 1.0
    # alpha compositing: a slot's colour where it is transparent never reaches the image
    alpha = sp.sufficient_support("orthogonal", "alpha", 16, n=4)
    assert alpha.max() < 0.5


def test_sufficient_support_supplies_every_draw():
    # 4n scenes of the orthogonal planes vary slot 0 in fewer than n of them (seed 0, n = 8): more
    # are drawn, so every one of the n draws per slot is real (a slot's own sprite always reaches
    # the loss, so no real draw is 0), and here every draw has full rank
    shares = sp.sufficient_support("orthogonal", "soft", 16, n=8)
    assert shares.shape == (2, 8) and (shares == 1.0).all()
