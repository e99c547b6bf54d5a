"""Profiles: how big a run is.

``smoke``   CI: a notebook runs in under a minute on 2 CPU cores; numbers are not meaningful.
``default`` what a reader gets in Colab or on a laptop: at most 5 minutes a notebook on 2 CPU cores.
``full``    the papers' scale, meant for a GPU.

A notebook's ``parameters`` cell reads ``MODLIB_PROFILE`` (then ``"default"``); papermill's
``-p profile full`` overrides it. Each chapter keeps its own settings per profile in a frozen
dataclass whose ``__post_init__`` calls the ``check_*`` helpers below, so a bad value fails at once.
"""

from __future__ import annotations

import os
from typing import Iterable, Mapping, TypeVar

PROFILES = ("smoke", "default", "full")
ENV_VAR = "MODLIB_PROFILE"

T = TypeVar("T")


def resolve(profile: str | None = None) -> str:
    """Return a valid profile name: ``profile``, else ``$MODLIB_PROFILE``, else ``"default"``."""
    name = profile if profile is not None else os.environ.get(ENV_VAR) or "default"
    if name not in PROFILES:
        raise ValueError(f"unknown profile {name!r}; valid profiles are {', '.join(PROFILES)}")
    return name


def settings_for(table: Mapping[str, T], profile: str | None = None) -> T:
    """Look up a chapter's settings for ``profile`` (validated with :func:`resolve`)."""
    return table[resolve(profile)]


def check_choice(name: str, value, choices: Iterable) -> None:
    """Fail with a message naming ``name``, the bad ``value`` and the valid ``choices``."""
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"{name}={value!r} is not valid; choose one of {', '.join(map(repr, choices))}")


def check_choices(name: str, values, choices: Iterable) -> None:
    """Like :func:`check_choice` for every element of a non-empty sequence ``values``."""
    if len(values) == 0:
        raise ValueError(f"{name} is empty; give at least one of {', '.join(map(repr, tuple(choices)))}")
    for v in values:
        check_choice(name, v, choices)


def check_int(name: str, value, minimum: int = 0) -> None:
    """Fail unless ``value`` is an integer ``>= minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name}={value!r} is not valid; it must be an integer >= {minimum}")


def check_range(name: str, value, low: float, high: float, *, open_low: bool = False) -> None:
    """Fail unless ``low <= value <= high`` (``low < value`` when ``open_low``)."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    ok = ok and (value > low if open_low else value >= low) and value <= high
    if not ok:
        bracket = "(" if open_low else "["
        raise ValueError(f"{name}={value!r} is not valid; it must be a number in {bracket}{low}, {high}]")
