"""Panels of random closed contours with the relations *inside*, *contact* and *number* (chapter 5,
notebooks/structural_compositionality.ipynb, section "Tasks"; Lepori et al. 2023 draw theirs with
the CVR generator, this is the book's own); chapter 6 (notebooks/pretraining_consistency.ipynb)
pretrains on unlabelled panels and searches the same tasks.

A *shape* is a random closed contour: a polygon whose radius wobbles smoothly around its centre
(:func:`contour`). It is filled on the pixel grid (:func:`fill`) and drawn as its 1-pixel outline
(the filled pixels with a 4-neighbour outside), in a random colour, on a black panel
``[3, size, size]``. A panel is made from its properties (:func:`panel`):

``inside``   one shape lies inside another (its filled pixels are a subset of the other's
             interior) or every shape lies apart from the others (filled pixels disjoint);
``contact``  the outlines of the pair touch (8-neighbours, no shared pixel) or stay at least
             ``GAP`` pixels apart;
``count``    how many shapes the panel holds: the pair, plus ``count - 2`` more shapes placed
             apart from everything.

Every relation is decided on pixels, after drawing, by :func:`relations`; :func:`panel` draws at
random until the pixels say what was asked (rejection sampling), so a panel never has a property
it was not meant to have. Random numbers come from a ``numpy.random.Generator``.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from matplotlib.path import Path as PolygonPath

from modlib.profiles import check_int

GAP = 2  # pixels between outlines that do not touch
VERTICES = 48  # polygon vertices of one contour
TRIES = 200  # draws before a panel gives up (then it raises)


def _read_only(array: np.ndarray) -> np.ndarray:
    """``array``, made read-only (it is shared)."""
    array.flags.writeable = False
    return array


_THETA = _read_only(np.linspace(0, 2 * np.pi, VERTICES, endpoint=False))  # the vertices' angles
_COS, _SIN = _read_only(np.cos(_THETA)), _read_only(np.sin(_THETA))


def contour(rng: np.random.Generator, radius: float) -> np.ndarray:
    """A random closed contour around the origin, ``[VERTICES, 2]`` (x, y in pixels): its radius is
    ``radius`` times a smooth random wobble of the angle (3 Fourier terms, between 0.6 and 1.4)."""
    wobble = np.ones(VERTICES)
    for k in (2, 3, 4):
        wobble += rng.uniform(-0.25, 0.25) / (k - 1) * np.cos(k * _THETA + rng.uniform(0, 2 * np.pi))
    r = radius * np.clip(wobble, 0.6, 1.4)
    return np.stack([r * _COS, r * _SIN], 1)


@functools.lru_cache(maxsize=None)
def _centres(size: int) -> np.ndarray:
    """The pixel centres of a ``size`` x ``size`` panel: read-only float ``[size, size, 2]`` (x, y)."""
    ys, xs = np.mgrid[0:size, 0:size]
    return _read_only(np.stack([xs + 0.5, ys + 0.5], -1))


def _span(low: float, high: float, size: int) -> slice:
    """The pixels (rows or columns) of a panel of ``size`` whose centres lie within ``[low, high]``,
    with one pixel to spare on each side."""
    first, stop = math.floor(low - 0.5) - 1, math.ceil(high - 0.5) + 2
    return slice(min(max(first, 0), size), min(max(stop, 0), size))


def fill(polygon: np.ndarray, centre: np.ndarray, size: int) -> np.ndarray:
    """The pixels whose centres lie inside ``polygon + centre``: bool ``[size, size]`` (row = y).
    Only the pixels around the polygon's bounding box are tested (no pixel beyond it lies inside)."""
    vertices = polygon + centre
    (x0, y0), (x1, y1) = vertices.min(0), vertices.max(0)
    rows, cols = _span(y0, y1, size), _span(x0, x1, size)
    filled = np.zeros((size, size), bool)
    box = _centres(size)[rows, cols]  # [h, w, 2]
    if box.size:
        inside = PolygonPath(vertices).contains_points(box.reshape(-1, 2))
        filled[rows, cols] = inside.reshape(box.shape[:2])
    return filled


def _pad(mask: np.ndarray, width: int) -> np.ndarray:
    """``mask`` (bool ``[H, W]``) with ``width`` False pixels around it: ``[H + 2 width, W + 2 width]``."""
    padded = np.zeros((mask.shape[0] + 2 * width, mask.shape[1] + 2 * width), bool)
    padded[width:width + mask.shape[0], width:width + mask.shape[1]] = mask
    return padded


def outline(filled: np.ndarray) -> np.ndarray:
    """The filled pixels with at least one 4-neighbour outside (pixels beyond the panel count as
    outside): bool ``[size, size]``."""
    p = _pad(filled, 1)
    return filled & ~(p[:-2, 1:-1] & p[2:, 1:-1] & p[1:-1, :-2] & p[1:-1, 2:])


def dilate(mask: np.ndarray, radius: int = 1) -> np.ndarray:
    """The pixels within chessboard distance ``radius`` of a pixel of ``mask`` (bool ``[H, W]``): bool
    ``[H, W]``, as ``radius`` dilations by the 3 x 3 square (8-neighbours)."""
    h, w = mask.shape
    padded = _pad(mask, radius)
    rows = np.zeros((h + 2 * radius, w), bool)
    for d in range(2 * radius + 1):
        rows |= padded[:, d:d + w]
    out = np.zeros((h, w), bool)
    for d in range(2 * radius + 1):
        out |= rows[d:d + h]
    return out


def touching(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether outlines ``a`` and ``b`` (bool ``[size, size]``) touch: 8-neighbours, no shared pixel."""
    return not (a & b).any() and (dilate(a) & b).any()


def apart(a: np.ndarray, b: np.ndarray, gap: int = GAP) -> bool:
    """Whether outlines ``a`` and ``b`` are more than ``gap`` pixels apart (chessboard distance)."""
    return not (dilate(a, gap) & b).any()


def relations(fills: list[np.ndarray]) -> dict:
    """What the pixels of a panel's shapes (filled masks, the pair first) say: ``count``, whether
    shape 1 is ``inside`` shape 0 (inside its interior, outlines excluded) or every pair is
    disjoint (``inside=False``; ``None`` if neither), whether the pair's outlines ``contact`` (touch)
    or lie apart (``False``; ``None`` if neither), and whether every other pair of shapes lies apart
    (``others_apart``)."""
    lines = [outline(f) for f in fills]
    interior = fills[0] & ~lines[0]
    if (fills[1] & ~interior).sum() == 0:
        inside = True
    elif not (fills[0] & fills[1]).any():
        inside = False
    else:
        inside = None
    contact = True if touching(lines[0], lines[1]) else False if apart(lines[0], lines[1]) else None
    others = all(apart(lines[i], lines[j]) and not (fills[i] & fills[j]).any()
                 for i in range(len(fills)) for j in range(i + 1, len(fills)) if j >= 2)
    return {"count": len(fills), "inside": inside, "contact": contact, "others_apart": others}


def _slide(size, outer, outer_fill, poly, start, direction, inside):
    """Move ``poly`` from ``start`` along ``direction`` in half-pixel steps; the fills of the last
    position apart from ``outer`` and of the first touching it, or ``None``. (:func:`touching` and
    :func:`apart` of ``outer`` and each position's outline, with ``outer``'s dilations made once.)"""
    near, around = dilate(outer), dilate(outer, GAP)
    last_apart, touch = None, None
    for step in np.arange(0, size, 0.5):
        f = fill(poly, start + step * direction, size)
        if f.sum() < 4:  # still off the panel
            continue
        if not inside and (f & outer_fill).any():
            break
        if inside and (f & ~outer_fill).any():
            break
        line = outline(f)
        overlap = (line & outer).any()
        if not overlap and (line & near).any():  # touching
            touch = f
            break
        if not (line & around).any():  # apart
            last_apart = f
        elif overlap:
            break
    return last_apart, touch


def _pair(rng: np.random.Generator, size: int, inside: bool, contact: bool):
    """Try once to draw the pair: two filled masks, or ``None``."""
    if inside:
        outer_poly = contour(rng, rng.uniform(0.26, 0.36) * size)
        centre = rng.uniform(0.4, 0.6, 2) * size
        inner_poly = contour(rng, rng.uniform(0.08, 0.13) * size)
        start = centre + rng.uniform(-1, 1, 2)
    else:
        outer_poly = contour(rng, rng.uniform(0.14, 0.2) * size)
        centre = rng.uniform(0.25, 0.75, 2) * size
        inner_poly = contour(rng, rng.uniform(0.12, 0.18) * size)
    outer_fill = fill(outer_poly, centre, size)
    if outer_fill.sum() < 9 or outer_fill[0].any() or outer_fill[-1].any() \
            or outer_fill[:, 0].any() or outer_fill[:, -1].any():
        return None
    angle = rng.uniform(0, 2 * np.pi)
    direction = np.array([np.cos(angle), np.sin(angle)])
    if inside:
        gap_fill, touch_fill = _slide(size, outline(outer_fill), outer_fill, inner_poly, start,
                                      direction, True)
    else:  # come in from beyond both radii, towards the first shape
        far = centre + direction * (np.abs(outer_poly).max() + np.abs(inner_poly).max() + GAP + 2) * 1.45
        gap_fill, touch_fill = _slide(size, outline(outer_fill), outer_fill, inner_poly, far,
                                      -direction, False)
    second = touch_fill if contact else gap_fill
    if second is None or second[0].any() or second[-1].any() or second[:, 0].any() or second[:, -1].any():
        return None
    return [outer_fill, second]


def _add_apart(rng: np.random.Generator, size: int, fills: list[np.ndarray]) -> bool:
    """Add one more shape apart from every drawn one (in place); whether it fitted."""
    taken = dilate(np.any(fills, 0), GAP + 1)
    for _ in range(20):
        f = fill(contour(rng, rng.uniform(0.08, 0.13) * size), rng.uniform(0.12, 0.88, 2) * size, size)
        if f.sum() >= 4 and not (f & taken).any() and not (f[0].any() or f[-1].any()
                                                          or f[:, 0].any() or f[:, -1].any()):
            fills.append(f)
            return True
    return False


def panel(rng: np.random.Generator, size: int, *, inside: bool, contact: bool, count: int = 2):
    """One panel with these properties: the image ``float32 [3, size, size]`` (outlines in random
    colours on black) and the shapes' filled masks (the pair first), whose :func:`relations` are
    ``inside``, ``contact`` and ``count`` with every further shape apart."""
    check_int("size", size, 16)
    check_int("count", count, 2)
    for _ in range(TRIES):
        fills = _pair(rng, size, inside, contact)
        if fills is None or not all(_add_apart(rng, size, fills) for _ in range(count - 2)):
            continue
        got = relations(fills)
        if (got["inside"], got["contact"], got["count"], got["others_apart"]) == (inside, contact, count, True):
            return draw(rng, fills), fills
    raise RuntimeError(f"no panel with inside={inside}, contact={contact}, count={count} at size={size} "
                       f"after {TRIES} draws; use a larger size or a smaller count")


def draw(rng: np.random.Generator, fills: list[np.ndarray]) -> np.ndarray:
    """The outlines of ``fills`` in random bright colours on black: ``float32 [3, size, size]``."""
    image = np.zeros((3, *fills[0].shape), np.float32)
    for f in fills:
        colour = rng.uniform(0.3, 1.0, 3).astype(np.float32)
        image[:, outline(f)] = colour[:, None]
    return image


# ---------------------------------------------------------------- odd-one-out problems

RULES = {"inside-contact": ("inside", "contact"), "inside-number": ("inside", "number"),
         "number-contact": ("number", "contact")}


def _counts(rng: np.random.Generator, follows: bool, n: int) -> int:
    """A panel's shape count for a problem whose rule-following panels hold ``n`` (2 or 3) shapes:
    ``n`` if it follows the number property, else ``n - 1`` or ``n + 1`` (never fewer than 2)."""
    if follows:
        return n
    return n + 1 if n == 2 else int(rng.choice([n - 1, n + 1]))


def item(rng: np.random.Generator, size: int, rule: str, first: bool, second: bool, n: int):
    """One panel of ``rule`` whose two properties (in the order of :data:`RULES`) hold where
    ``first`` / ``second`` is True: the image and the shapes' fills, as :func:`panel`. A rule without
    ``inside`` draws the shapes apart; one without ``contact`` draws the pair apart."""
    props = dict(zip(RULES[rule], (first, second)))
    count = _counts(rng, props["number"], n) if "number" in props else 2
    return panel(rng, size, inside=props.get("inside", False), contact=props.get("contact", False),
                 count=count)
