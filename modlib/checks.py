"""Checks for the exercises in which a learner writes a key piece of a chapter's science: the shared
machinery of every chapter's ``exercises`` module.

Each ``check_*`` (in ``modlib.<chapter>.exercises``) takes the learner's function, runs it beside the
book's own on several inputs, edge cases included, and returns a :class:`Verdict`: ``correct``, or
what differs (which input, expected against got, and the likely slip). A stub that still raises
``NotImplementedError`` gets ``not written yet`` and its hint (:func:`check`). In a notebook the
verdict shows as one line of text::

    exercises.check_iou(my_iou)   # -> correct
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Verdict:
    """A check's outcome: ``ok`` and the one line that says why."""

    ok: bool
    message: str

    def __repr__(self) -> str:
        return self.message

    def __bool__(self) -> bool:
        return self.ok


BOOK_SOLUTION = "correct (this checked the book's solution, hidden above; replace it with yours)"


def book_solution(function):
    """Mark ``function`` as the book's own solution (a decorator in a notebook's hidden solution
    cell, which runs before the check in the book's build): its check then says so
    (:data:`BOOK_SOLUTION`), rather than a bare ``correct`` the learner did not earn. The student
    edition drops solution cells, so a learner's function is never marked."""
    function.__book_solution__ = True
    return function


def check(body):
    """Turn ``body(mine) -> None | str`` (None: correct; a string: what differs) into a check
    that returns a :class:`Verdict` and reports a stub that raises ``NotImplementedError``."""

    @functools.wraps(body)
    def checked(mine) -> Verdict:
        try:
            problem = body(mine)
        except NotImplementedError as stub:
            return Verdict(False, f"not written yet: {stub}" if str(stub) else "not written yet")
        if problem is not None:
            return Verdict(False, problem)
        return Verdict(True, BOOK_SOLUTION if getattr(mine, "__book_solution__", False)
                       else "correct")

    return checked


def is_close(got, want, atol: float) -> bool:
    """Whether ``got`` has ``want``'s shape and values within ``atol`` (NaN equal to NaN)."""
    got = torch.as_tensor(got, dtype=torch.float64)
    want = torch.as_tensor(want, dtype=torch.float64)
    return got.shape == want.shape and bool(torch.allclose(got, want, atol=atol, equal_nan=True))


def shape_of(got) -> tuple:
    """The shape of ``got`` (a tensor, an array or nested lists), as a tuple."""
    return tuple(torch.as_tensor(got).shape)
