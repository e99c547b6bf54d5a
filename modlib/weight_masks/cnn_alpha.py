"""Chapter 4: the CNN's class masks at a stronger regulariser (issue 52; notebooks/weight_masks.ipynb,
the dropdown "The class masks' regulariser").

The page said that how much a removed class loses may depend on the regulariser, as a hypothesis: no
α sweep had run on the CNN. A weak α lets a class mask keep any weight that does not hurt the other
nine classes, and what it keeps may still recognise the removed class; a stronger one keeps less. Here
the three CNNs of the class-layer runs (``cnnlayers-seed<k>``, α = 3e-4) are trained again, the same
CNN, data streams and mask seeds (:func:`modlib.weight_masks.causes.class_layers`), with every mask at
:data:`ALPHA` instead: one result per CNN, ``cnnalpha<ALPHA>-seed<k>``.

The claim ``cnn-alpha`` (the book's own hypothesis, registered before these results were computed):
per CNN, the mean over its ten classes of the share of accuracy the removed class loses, at
:data:`ALPHA` minus at the page's α, is above 0 by the margin, paired by CNN
(:func:`modlib.weight_masks.findings.cnn_alpha`).
"""

from __future__ import annotations

from modlib import results
from modlib.weight_masks import experiment as ex

ALPHA = 1e-3  # the stronger regulariser: about three times the page's 3e-4
PROFILES = ("smoke", "full")  # computed at smoke (the tests) and full


def name(seed: int) -> str:
    return f"cnnalpha{ALPHA:g}-seed{seed}"


def seeds(profile: str) -> range:
    """The CNNs: those of the class-layer runs at ``profile`` (none outside :data:`PROFILES`)."""
    return range(ex.causes_settings(profile).cnn_seeds) if profile in PROFILES else range(0)


def _job(profile: str, seed: int) -> tuple:
    s = ex.settings(profile)
    return ("cnnlayers", name(seed), seed, ex.Point(s.with_(cnn_alpha=ALPHA)))


def fetch(profile: str, seed: int, device) -> results.Result:
    """Load (or compute and store) CNN ``seed``'s class masks at :data:`ALPHA`: the arrays of
    :func:`modlib.weight_masks.causes.class_layers`."""
    if seed not in seeds(profile):
        raise ValueError(f"seed={seed}; the CNNs at profile {profile!r} are {list(seeds(profile))}")
    return ex.fetch_job(_job(profile, seed), profile, device)


def stored(profile: str) -> list[results.Result]:
    """The results stored now at ``profile``, in seed order (nothing computed; a missing one ends
    the list, so that the CNNs read are always the first ones)."""
    return results.stored_run(lambda k: fetch(profile, k, "cpu"), seeds(profile))


def points(found: list[results.Result]) -> list[dict]:
    """The results' arrays as :func:`modlib.weight_masks.experiment.curves` gives the class-layer
    runs' (with ``sizes`` and ``layers``), for :func:`modlib.weight_masks.findings.cnn_layers`."""
    return [ex.added_point("cnnlayers", r) for r in found]
