"""How well each training support conditions the lower slot's Jacobians (issue 52): the test of the
page's sentence that the narrow diagonal's accumulated Jacobians "have full rank but are poorly
conditioned" (notebooks/compositional_sprites.ipynb, the row-by-row dropdown of "The support
ablations, beside the paper"; the claim ``conditioning`` in ``claims.toml``).

No model is trained and no stored model is read: like the sufficient-support check
(:func:`modlib.data.sprites.sufficient_support`), the measure reads the renderer and the composition
C only. For each draw seed, :attr:`ConditioningSettings.n` values of the lower slot's latents (slot 1)
are drawn from scenes of the support that vary it, each with :attr:`ConditioningSettings.m` contexts
the support pairs with it (:func:`modlib.data.sprites.contexts`). At every pixel the Gram matrix of
``∂C/∂φ₁`` is averaged over the contexts (:func:`modlib.data.sprites.accumulated_gram` divided by m;
an uncovered pixel under soft occlusion with k = 1 gives ``σ(0)² = 0.25`` on each axis), and its
smallest eigenvalue is taken on the lower slot's own pixels (where the renderer draws its sprite
alone). A seed's value is the :attr:`ConditioningSettings.quantile` quantile of those eigenvalues,
pooled over its draws and their own pixels.
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import torch

from modlib import profiles, results
from modlib.compositional_sprites.experiment import CHAPTER
from modlib.data import sprites
from modlib.profiles import check_int, check_range
from modlib.runtime import describe

RESULT = "conditioning"
# the supports compared, as the rows of the paper's table name them: (row, support, delta)
ARMS = (("orthogonal", "orthogonal", None), ("diagonal-0.2", "diagonal", 0.2),
        ("diagonal-0.1", "diagonal", 0.1), ("diagonal-0.05", "diagonal", 0.05))
SLOT = 1  # the lower slot: the one the composition can hide


@profiles.settings
class ConditioningSettings:
    """How many draws the conditioning measure takes, at what size, and which quantile it reads."""

    seeds: int = 5  # independent draws of latents and contexts (the claim's units)
    n: int = 64  # values of the lower slot's latents per seed
    m: int = 4  # contexts per value (as the sufficient-support check uses)
    size: int = 16  # pixels a side (the full profile's training size)
    quantile: float = 0.05  # of the smallest eigenvalues on the slot's own pixels
    sharpness: float = 1.0  # soft occlusion's k (the paper's)

    def __post_init__(self):
        check_int("seeds", self.seeds, 1)
        check_int("n", self.n, 1)
        check_int("m", self.m, 1)
        check_int("size", self.size, 4)
        check_range("quantile", self.quantile, 0.0, 1.0)
        check_range("sharpness", self.sharpness, 0.0, 1000.0, open_low=True)


SETTINGS = {
    "smoke": ConditioningSettings(seeds=2, n=8),
    "default": ConditioningSettings(),
    "full": ConditioningSettings(),
    "paper": ConditioningSettings(size=64, n=16),
}


def settings(profile: str | None = None) -> ConditioningSettings:
    return profiles.settings_for(SETTINGS, profile)


def own_pixel_eigenvalues(support: str, delta: float | None, c: ConditioningSettings, seed: int) -> np.ndarray:
    """The smallest eigenvalue of the context-averaged Gram matrix of ``∂C/∂φ₁`` at each of the
    lower slot's own pixels, over ``c.n`` draws of its latents from ``support``: a flat array."""
    g = torch.Generator().manual_seed(seed)
    z_k, gram = sprites.accumulated_gram(support, "soft", c.size, SLOT, c.n, c.m, g,
                                         sharpness=c.sharpness, delta=delta)
    smallest = torch.linalg.eigvalsh(gram / c.m)[..., 0]  # [n, H*W]
    own = sprites.render(z_k, c.size, rgba=True)[:, 3].flatten(1) > 0  # [n, H*W]
    return smallest[own].numpy()


def run(c: ConditioningSettings) -> tuple[dict, dict]:
    """``(metrics, arrays)``: ``quantile [arms, seeds]``, each seed's quantile of the smallest
    eigenvalues on the lower slot's own pixels, per arm of :data:`ARMS`, and ``pixels [arms,
    seeds]``, how many own pixels each pooled."""
    q = np.zeros((len(ARMS), c.seeds))
    pixels = np.zeros((len(ARMS), c.seeds), dtype=int)
    for i, (_, support, delta) in enumerate(ARMS):
        for seed in range(c.seeds):
            values = own_pixel_eigenvalues(support, delta, c, seed)
            q[i, seed], pixels[i, seed] = np.quantile(values, c.quantile), len(values)
    metrics = {row: float(q[i].mean()) for i, (row, _, _) in enumerate(ARMS)}
    return metrics, {"quantile": q, "pixels": pixels}


def fetch(profile: str, device: torch.device | None = None) -> results.Result:
    """Load (or compute, in seconds on a CPU, and store) the conditioning result at ``profile``."""
    c = settings(profile)
    config = {**asdict(c), "arms": [list(a) for a in ARMS], "slot": SLOT, "composition": "soft"}
    return results.fetch(CHAPTER, RESULT, config, lambda: run(c), profile=profile,
                         device=describe(device or torch.device("cpu")), code=run)
