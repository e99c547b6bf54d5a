"""Chapter 2's two late-fitting seeds trained twice as long (issue 52): the test of the page's
"whether these seeds would generalize after a longer run is not tested here" (the sharpness
section's dropdown "The seeds that fit and do not generalize").

In the stored recomputed rows (``drawn-sharpness-4``, ``drawn-sharpness-16`` at ``full``) two seeds
fit their training support only at the last evaluation, just above the bar (in-domain R^2 0.85 and
0.82 after 60 epochs, below 0.31 until epoch 26), and do not generalize (whole-cube R^2 0.51 and
0.15). Each is trained again from the same initial network on the same scenes, as
:func:`modlib.compositional_sprites.causes.run_drawn` trains it, with :data:`FACTOR` times the
epochs (the cosine schedule stretched to the longer run), one result per seed:
``drawn-<row>-longer``.

The check (:func:`modlib.compositional_sprites.findings.longer`), written down before these results
were computed: it passes where every seed trained longer fits its training support (final in-domain
R^2 at least :data:`modlib.compositional_sprites.findings.FIT`) and reaches whole-cube R^2 of at
least 0.8 (what the sharpness statement asks of every seed that fits); then the two seeds'
failure to generalize was their training's length, not their sharpness.
"""

from __future__ import annotations

import torch

from modlib import results
from modlib.compositional_sprites import causes
from modlib.compositional_sprites import experiment as ex
from modlib.runtime import describe

LATE = {"sharpness-4": 2, "sharpness-16": 1}  # row -> its seed that fit only at the last evaluation
FACTOR = 2  # the longer run's epochs, as a multiple of the profile's
SUFFIX = "-longer"
PROFILES = ("smoke", "full")  # where the rows exist as recomputed rows (smoke: the tests only)


def name(row: str) -> str:
    return causes.PREFIX + row + SUFFIX


def fetch(profile: str, row: str, device: torch.device) -> results.Result:
    """Load (or compute and store) the seed :data:`LATE` names of ``row``, trained :data:`FACTOR`
    times as long: the arrays of :func:`modlib.compositional_sprites.causes.run_drawn` for that seed."""
    if row not in LATE:
        raise ValueError(f"row={row!r}; choose from {', '.join(LATE)}")
    if profile not in PROFILES:
        raise ValueError(f"profile={profile!r} trains no longer run; choose from {', '.join(PROFILES)}")
    base, c = ex.settings(profile), causes.causes_settings(profile)
    s = base.with_(epochs=FACTOR * base.epochs)
    seeds = range(LATE[row], LATE[row] + 1)
    config = {**causes._config(s, row, c), "seeds": 1, "first_seed": seeds[0]}
    return results.fetch(ex.CHAPTER, name(row), config, lambda: causes.run_drawn(s, row, c, device, seeds),
                         profile=profile, device=describe(device), code=causes.run_drawn)


def stored(profile: str) -> dict[str, results.Result]:
    """The longer runs stored now at ``profile``, by row (none computed)."""
    if profile not in PROFILES:
        return {}
    return causes._stored_rows(LATE, lambda row: fetch(profile, row, torch.device("cpu")))
