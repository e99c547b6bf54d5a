"""Profiles: how big a run is.

``smoke``   CI: a notebook runs in under a minute on 2 CPU cores; numbers are not meaningful.
``default`` what a reader gets in Colab or on a laptop: at most 3 minutes of CPU a chapter, run as
            a reader runs it (one thread; ``benchmarks/bench_default.py`` measures it).
``full``    the scale the book shows and the claims tests check: the papers' effects clear, computed
            on CPU cores one stored result (aim: at most about 30 minutes on one core) at a time,
            so that it can be made over several sittings (the README's generated table gives
            each chapter's hours).
``paper``   the papers' own scale, for readers with a GPU; nothing waits for it. Where a chapter's
            ``full`` already is the paper's scale, ``paper`` has the same settings.

A notebook's ``parameters`` cell reads ``MODLIB_PROFILE`` (then ``"default"``); papermill's
``-p profile full`` overrides it. Each chapter keeps its own settings per profile in a class made
with :func:`settings` (a frozen dataclass) whose ``__post_init__`` calls the ``check_*`` helpers
below, so a bad value fails at once.
"""

from __future__ import annotations

import difflib
import functools
import os
from dataclasses import dataclass, fields, replace
from typing import Iterable, Mapping, TypeVar, get_origin

PROFILES = ("smoke", "default", "full", "paper")
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


def settings(cls: type[T]) -> type[T]:
    """Class decorator: make ``cls`` a frozen dataclass of settings, checked on construction.

    A keyword that is not a field fails naming the closest field and all of them. A field annotated
    ``tuple[...]`` must hold a list or tuple (:func:`check_sequence`); a list becomes a tuple, so a
    config read back from JSON works. Then the class's own ``__post_init__`` runs. Adds
    ``with_(**changes)``: a copy with some settings changed, checked again.
    """
    own_checks = getattr(cls, "__post_init__", None)

    def __post_init__(self):
        for name in sequences:
            value = getattr(self, name)
            check_sequence(name, value)
            object.__setattr__(self, name, tuple(value))
        if own_checks is not None:
            own_checks(self)

    cls.__post_init__ = __post_init__
    cls = dataclass(frozen=True)(cls)
    names = [f.name for f in fields(cls) if f.init]
    sequences = [f.name for f in fields(cls) if _is_tuple(f.type)]
    init = cls.__init__

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        for key in kwargs:
            if key not in names:
                close = difflib.get_close_matches(key, names, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise TypeError(f"{cls.__name__} has no setting {key!r}{hint}; "
                                f"valid settings are {', '.join(names)}")
        init(self, *args, **kwargs)

    def with_(self, **changes):
        """A copy with some settings changed (checked again)."""
        return replace(self, **changes)

    cls.__init__, cls.with_ = __init__, with_
    return cls


def _is_tuple(annotation) -> bool:
    """Whether a field's annotation (a string under ``from __future__ import annotations``) is a tuple."""
    if isinstance(annotation, str):
        return annotation == "tuple" or annotation.startswith("tuple[")
    return annotation is tuple or get_origin(annotation) is tuple


def check_sequence(name: str, value) -> None:
    """Fail unless ``value`` is a list or tuple: a str or a single number is not."""
    if not isinstance(value, (list, tuple)):
        one = f" (for one value write ({value!r},))" if isinstance(value, (str, int, float)) else ""
        raise ValueError(f"{name}={value!r} is not valid; it must be a list or tuple{one}")


def check_choice(name: str, value, choices: Iterable) -> None:
    """Fail with a message naming ``name``, the bad ``value`` and the valid ``choices``."""
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"{name}={value!r} is not valid; choose one of {', '.join(map(repr, choices))}")


def check_choices(name: str, values, choices: Iterable) -> None:
    """Like :func:`check_choice` for every element of a non-empty list or tuple ``values``."""
    check_sequence(name, values)
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
