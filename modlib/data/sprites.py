"""Multi-sprite images (chapter 2, Wiedemer et al. 2023): a batched renderer, the two composition
functions, the training supports, and a numerical check of sufficient support.

A scene has K = 2 *slots*; each slot has 5 latents in [0, 1] (x, y, shape, scale, hue), scaled as
the authors scale them (:data:`LATENT_RANGES`), so a scene's latents are ``z [B, 2, 5]``.
Each slot is drawn on its own (:func:`render`), and the composition function C makes the scene
from the slot images; slot 0 lies on top:

``"soft"``   soft occlusion, ``C(a, b) = a * sigmoid(k * sum_rgb a) + b * sigmoid(-k * sum_rgb a)``
             per pixel (the authors' default, ``k = 1``; large ``k`` tends to hard occlusion);
``"alpha"``  each slot is RGBA and slot 0 goes "over" slot 1 "over" a black canvas.

Images are channels first: ``[B, C, H, W]`` for one slot, ``[B, K, C, H, W]`` for the slots of a
scene, ``C = 3`` (RGB) or 4 (RGBA, straight alpha).
"""

from __future__ import annotations

import math

import torch

from modlib.profiles import check_choice, check_int, check_range

SLOTS, LATENTS = 2, 5
LATENT_NAMES = ("x", "y", "shape", "scale", "hue")
SHAPES = ("triangle", "square", "circle")
# how a latent in [0, 1] maps to the drawing (the authors' Spriteworld ranges)
LATENT_RANGES = {"x": (0.1, 0.9), "y": (0.2, 0.8), "scale": (0.09, 0.22), "hue": (0.05, 0.95)}
COMPOSITIONS = ("soft", "alpha")


# ---------------------------------------------------------------- rendering

def scale_latents(z: torch.Tensor) -> torch.Tensor:
    """Latents in [0, 1] ``[..., 5]`` to drawing units ``[..., 5]``: x, y, scale and hue into
    their ranges, shape to 0, 1 or 2 (``round(2 z)``). The models are given these, as in the
    authors' code."""
    out = z.clone()
    for i, name in enumerate(LATENT_NAMES):
        if name == "shape":
            out[..., i] = torch.round(2 * z[..., i])
        else:
            low, high = LATENT_RANGES[name]
            out[..., i] = low + (high - low) * z[..., i]
    return out


def hsv_to_rgb(hue: torch.Tensor) -> torch.Tensor:
    """Fully saturated, full-value colours: ``hue [B]`` in [0, 1] to ``rgb [B, 3]``."""
    k = (torch.tensor([5.0, 3.0, 1.0], device=hue.device) + 6 * hue[:, None]) % 6
    return 1 - torch.clamp(torch.minimum(k, 4 - k), 0, 1)


def _distance(shape: torch.Tensor, dx: torch.Tensor, dy: torch.Tensor,
              scale: torch.Tensor) -> torch.Tensor:
    """Signed distance (image widths; negative inside) from pixel offsets ``dx, dy [B, H, W]``
    to a sprite of area ``scale**2`` (as Spriteworld's shapes): a triangle pointing up, an
    axis-aligned square or a circle, chosen per image by ``shape [B]``."""
    s = scale[:, None, None]
    circle = torch.sqrt(dx ** 2 + dy ** 2) - s / math.sqrt(math.pi)
    square = torch.maximum(dx.abs(), dy.abs()) - s / 2
    # equilateral triangle of area s^2: inradius r = side / (2 sqrt 3), side = s * sqrt(4 / sqrt 3)
    r = s * math.sqrt(4 / math.sqrt(3)) / (2 * math.sqrt(3))
    c, h = math.cos(math.pi / 6), math.sin(math.pi / 6)
    triangle = torch.maximum(torch.maximum(-dy, c * dx + h * dy), -c * dx + h * dy) - r
    shape = shape[:, None, None]
    return torch.where(shape == 0, triangle, torch.where(shape == 1, square, circle))


def render(z: torch.Tensor, size: int, rgba: bool = False) -> torch.Tensor:
    """Draw one sprite per row of ``z [B, 5]`` (latents in [0, 1]) on a black ``size x size``
    canvas, anti-aliased by pixel coverage: ``[B, 3, size, size]``, or with ``rgba`` the sprite's
    colour and its coverage as alpha, ``[B, 4, size, size]``. y points up, as in Spriteworld."""
    check_int("size", size, 4)
    if z.ndim != 2 or z.shape[1] != LATENTS:
        raise ValueError(f"z has shape {tuple(z.shape)}; "
                         f"expected [B, {LATENTS}]")
    x, y, shape, scale, hue = scale_latents(z).unbind(1)
    centres = (torch.arange(size, device=z.device, dtype=z.dtype)
               + 0.5) / size
    dx = centres[None, None, :] - x[:, None, None]  # [B, 1, W]
    # [B, H, 1]; row 0 at the top
    dy = (1 - centres)[None, :, None] - y[:, None, None]
    dx, dy = torch.broadcast_tensors(dx, dy)
    # the share of each pixel the sprite covers: [B, H, W]
    cover = torch.clamp(0.5 - _distance(shape, dx, dy, scale) * size,
                        0, 1)
    colour = hsv_to_rgb(hue)[:, :, None, None]  # [B, 3, 1, 1]
    if rgba:
        return torch.cat([colour * (cover[:, None] > 0), cover[:, None]],
                         dim=1)
    return colour * cover[:, None]


def render_slots(z: torch.Tensor, size: int, rgba: bool = False) -> torch.Tensor:
    """Each slot of scenes ``z [B, K, 5]`` drawn on its own: ``[B, K, 3 or 4, size, size]``."""
    b, k, _ = z.shape
    return render(z.reshape(b * k, LATENTS), size, rgba).reshape(b, k, -1, size, size)


# ---------------------------------------------------------------- composition

def soft_occlusion(slots: torch.Tensor,
                   sharpness: float = 1.0) -> torch.Tensor:
    """``slots [B, K, 3, H, W]`` to a scene ``[B, 3, H, W]``: each slot in turn goes under what is
    composed so far, ``out = out * sigmoid(k * sum_rgb out) + next * sigmoid(-k * sum_rgb out)``
    with ``k = sharpness``."""
    out = slots[:, 0]
    for i in range(1, slots.shape[1]):
        mass = sharpness * out.sum(1, keepdim=True)  # [B, 1, H, W]
        out = (out * torch.sigmoid(mass)
               + slots[:, i] * torch.sigmoid(-mass))
    return out


def alpha_over(slots: torch.Tensor) -> torch.Tensor:
    """``slots [B, K, 4, H, W]`` (straight RGBA, alpha clamped to [0, 1]) to a scene
    ``[B, 3, H, W]``: slot K-1 over a black canvas, then each slot above it "over" the result."""
    out = torch.zeros_like(slots[:, 0, :3])
    for i in reversed(range(slots.shape[1])):
        alpha = slots[:, i, 3:].clamp(0, 1)
        out = alpha * slots[:, i, :3] + (1 - alpha) * out
    return out


def compose(slots: torch.Tensor, composition: str, sharpness: float = 1.0) -> torch.Tensor:
    """The composition function C by name: ``"soft"`` (with ``sharpness``) or ``"alpha"``."""
    check_choice("composition", composition, COMPOSITIONS)
    return soft_occlusion(slots, sharpness) if composition == "soft" else alpha_over(slots)


def scenes(z: torch.Tensor, size: int, composition: str = "soft",
           sharpness: float = 1.0) -> torch.Tensor:
    """The data-generating process f(z) = C(phi(z_0), phi(z_1)): ``z [B, K, 5]`` to
    ``[B, 3, size, size]``."""
    return compose(render_slots(z, size, composition == "alpha"), composition, sharpness)


# ---------------------------------------------------------------- training supports

# the authors' orthogonal planes: (slot that varies, fixed latents of the other slot)
PLANES = {
    "orthogonal": ((0, (1, 1, 1, 0, 1)), (1, (0, 0, 0, 0, 0)), (1, (0.5, 0.5, 0.5, 0, 0.5))),
    "orthogonal-broad": ((0, (1, 1, 1, 0, 1)), (0, (0.7, 0.7, 0.7, 0, 0.7)),
                         (1, (0, 0, 0, 0, 0)), (1, (0.3, 0.3, 0.3, 0, 0.3))),
}
PLANES["gap"] = PLANES["normal"] = PLANES["orthogonal"]
SUPPORTS = ("random", "orthogonal", "orthogonal-broad", "gap", "normal", "diagonal")
GAP = (0.05, 0.45)  # "gap": slot 0's x latent never lies in this interval


def _check_support(support: str, delta: float | None) -> None:
    check_choice("support", support, SUPPORTS)
    if support == "diagonal":
        if delta is None:
            raise ValueError("support 'diagonal' needs delta, the half-width of the band around "
                             "the diagonal, in (0, 0.7)")
        check_range("delta", delta, 0.0, 0.7, open_low=True)
    elif delta is not None:
        raise ValueError(f"delta={delta!r} is only for support 'diagonal', not {support!r}")


def _free_slot(support: str, n: int, g: torch.Generator) -> torch.Tensor:
    """``n`` draws of the varying slot of a plane: uniform, or N(0.5, 1) kept inside the cube
    for ``"normal"``; ``[n, 5]``."""
    if support != "normal":
        return torch.rand(n, LATENTS, generator=g)
    out = torch.empty(0, LATENTS)
    while len(out) < n:
        draw = 0.5 + torch.randn(4 * n, LATENTS, generator=g)
        out = torch.cat([out, draw[((draw >= 0) & (draw <= 1)).all(1)]])
    return out[:n]


def sample_support(support: str, n: int, generator: torch.Generator, *,
                   delta: float | None = None) -> torch.Tensor:
    """``n`` scenes' latents ``z [n, 2, 5]`` from a training support:

    ``"random"``            uniform on the whole cube [0, 1]^10;
    ``"orthogonal"``        the authors' three planes (:data:`PLANES`), equally often: one slot
                            uniform, the other fixed;
    ``"orthogonal-broad"``  four planes, two per slot;
    ``"gap"``               orthogonal, without scenes whose slot-0 x lies in :data:`GAP`;
    ``"normal"``            orthogonal, the varying slot from N(0.5, 1) kept inside the cube;
    ``"diagonal"``          both slots near one shared 5-vector: per latent, the two slots differ
                            by at most ``sqrt(2) * delta`` (the authors' band of radius delta
                            around the diagonal, in each latent's plane).
    """
    _check_support(support, delta)
    check_int("n", n, 1)
    g = generator
    if support == "random":
        return torch.rand(n, SLOTS, LATENTS, generator=g)
    if support == "diagonal":
        out = torch.empty(0, SLOTS, LATENTS)
        while len(out) < n:
            m = 2 * n
            centre = torch.rand(m, LATENTS, generator=g)
            offset = delta * torch.rand(m, LATENTS, generator=g) / math.sqrt(2)
            offset = offset * (2 * torch.randint(0, 2, (m, LATENTS), generator=g) - 1)
            z = torch.stack([centre + offset, centre - offset], dim=1)
            out = torch.cat([out, z[((z >= 0) & (z <= 1)).flatten(1).all(1)]])
        return out[:n]
    planes = PLANES[support]
    out = torch.empty(0, SLOTS, LATENTS)
    while len(out) < n:
        for slot, fixed in planes:
            z = torch.empty(n, SLOTS, LATENTS)
            z[:, slot] = _free_slot(support, n, g)
            z[:, 1 - slot] = torch.tensor(fixed, dtype=torch.float32)
            if support == "gap":
                z = z[(z[:, 0, 0] < GAP[0]) | (z[:, 0, 0] > GAP[1])]
            out = torch.cat([out, z])
    return out[torch.randperm(len(out), generator=g)[:n]]


def contexts(support: str, slot: int, z_slot: torch.Tensor, m: int, generator: torch.Generator, *,
             delta: float | None = None) -> torch.Tensor:
    """The other slot's latents that a support pairs with each ``z_slot [n, 5]`` of ``slot``:
    ``[n, m, 5]``. On a plane family these are the fixed latents of the planes on which ``slot``
    varies (repeated up to ``m``); "random" pairs any latents; "diagonal" those within its band.
    Only meaningful for ``z_slot`` in the support's slot marginal."""
    _check_support(support, delta)
    n, g = len(z_slot), generator
    if support == "random":
        return torch.rand(n, m, LATENTS, generator=g)
    if support == "diagonal":
        spread = math.sqrt(2) * delta * torch.rand(n, m, LATENTS, generator=g)
        sign = 2 * torch.randint(0, 2, (n, m, LATENTS), generator=g) - 1
        return (z_slot[:, None] + sign * spread).clamp(0, 1)
    fixed = torch.tensor([f for s, f in PLANES[support] if s == slot], dtype=torch.float32)
    return fixed[torch.arange(m) % len(fixed)].expand(n, m, LATENTS)


def sufficient_support(support: str, composition: str, size: int, n: int = 16, m: int = 4, *,
                       sharpness: float = 1.0, delta: float | None = None, seed: int = 0,
                       tol: float = 1e-6) -> torch.Tensor:
    """How much of each slot's output the training support lets the loss see: for ``n`` values
    ``z_k`` of slot k from the support and ``m`` of their contexts (:func:`contexts`), the Gram
    matrix of the Jacobian of C with respect to slot k's output, summed over the contexts; its
    rank over the output's size. C works pixel by pixel, so the rank is summed over pixels of
    ``[channels x channels]`` blocks. Returns ``[2, n]``: per slot and draw, the share of the
    slot's output at which the accumulated Jacobian has full rank (1 everywhere = sufficient).
    Every draw is one: on a plane family, where only some scenes vary slot k, scenes are drawn
    until ``n`` of them do, so the worst draw is ``shares.min()``.
    """
    g = torch.Generator().manual_seed(seed)
    shares = torch.zeros(SLOTS, n)
    for k in range(SLOTS):
        _, gram = accumulated_gram(support, composition, size, k, n, m, g, sharpness=sharpness, delta=delta)
        rank = (torch.linalg.eigvalsh(gram) > tol).sum(-1)  # [n, H*W]
        shares[k] = rank.sum(-1).float() / (size * size * gram.shape[-1])
    return shares


def accumulated_gram(support: str, composition: str, size: int, k: int, n: int, m: int,
                     generator: torch.Generator, *, sharpness: float = 1.0,
                     delta: float | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """For ``n`` values ``z_k`` of slot ``k`` drawn from scenes of ``support`` that vary it, and
    ``m`` of their contexts each (:func:`contexts`), the Gram matrix of the Jacobian of C with
    respect to slot k's output at each pixel, summed over the contexts. Returns ``(z_k [n, 5],
    gram [n, size*size, C, C])`` (C: 3 channels, 4 for ``"alpha"``)."""
    z_k = _draws(support, k, n, generator, delta)  # [n, 5]
    other = contexts(support, k, z_k, m, generator, delta=delta)  # [n, m, 5]
    scene = torch.empty(len(z_k), m, SLOTS, LATENTS)
    scene[:, :, k], scene[:, :, 1 - k] = z_k[:, None], other
    slots = render_slots(scene.reshape(-1, SLOTS, LATENTS), size, composition == "alpha")  # [n*m, K, C, H, W]
    c = slots.shape[2]
    pixels = slots.permute(0, 3, 4, 1, 2).reshape(-1, SLOTS, c)  # [n*m*H*W, K, C]

    def one_pixel(p):  # [K, C] -> [3]
        return compose(p[None, :, :, None, None], composition, sharpness)[0, :, 0, 0]

    jac = torch.func.vmap(torch.func.jacrev(one_pixel))(pixels)[:, :, k]  # [P, 3, C]
    return z_k, (jac.transpose(1, 2) @ jac).reshape(len(z_k), m, size * size, c, c).sum(1)


def _draws(support: str, k: int, n: int, g: torch.Generator, delta: float | None) -> torch.Tensor:
    """``[n, 5]`` values of slot ``k`` from scenes of ``support`` that vary it (on a plane family,
    from a plane on which k is free), drawn in batches of ``4 n`` until there are ``n``."""
    found, count = [], 0
    for _ in range(64):
        z = sample_support(support, 4 * n, g, delta=delta)
        varying = torch.ones(len(z), dtype=torch.bool)
        if support in PLANES:
            fixed = torch.tensor([f for s, f in PLANES[support] if s != k], dtype=torch.float32)
            varying = ~(z[:, k, None] == fixed[None]).all(-1).any(-1)
        found.append(z[varying, k])
        count += int(varying.sum())
        if count >= n:
            return torch.cat(found)[:n]
    raise ValueError(f"support={support!r} gave only {count} scenes that vary slot {k} in {64 * 4 * n} draws")
