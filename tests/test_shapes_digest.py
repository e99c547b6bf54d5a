"""The panel generator (modlib/data/shapes.py) draws bit-identical panels to the one that made the
book's stored results of chapters 5 and 6 (issue 56: it was made faster, and must not change a bit).

tests/data/shapes_digest.json holds, per case, the sha256 over every seed's image and fill bytes and
the generator's state after it (a ``RuntimeError`` is hashed as its message), computed by the code of
commit "test_shapes_digest" (before the speed-up) with

    PYTHONPATH=. OMP_NUM_THREADS=1 python tests/test_shapes_digest.py

which writes the file anew from the code it runs. The cases (:func:`cases`):

- ``panel``: sizes 16, 32, 64 (seeds 0-29) and 128 (seeds 0-4), each combination of ``inside``,
  ``contact`` and ``count`` in (2, 3); at size 16 some seeds raise, and are hashed as such;
- ``item``: size 32, each rule of ``shapes.RULES``, each (first, second), n in (2, 3), seeds 0-4;
- ``problems``: ``structural_compositionality.tasks.problems`` for each vision rule and kind, n = 2,
  seeds 0 and 1, size 32 (the chapters' own call).
"""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from modlib.data import shapes
from modlib.structural_compositionality import tasks

DIGEST = Path(__file__).parent / "data" / "shapes_digest.json"
SEEDS = {16: 30, 32: 30, 64: 30, 128: 5}  # panel size: how many seeds


def _hash_rng(h, rng: np.random.Generator) -> None:
    """Add the generator's state (its bit generator's state dict, as JSON) to hash ``h``."""
    h.update(json.dumps(rng.bit_generator.state, sort_keys=True, default=int).encode())


def _hash_panel(h, rng: np.random.Generator, draw) -> None:
    """Add ``draw(rng)``'s image and fills (or its RuntimeError's message) and ``rng``'s state after
    it to hash ``h``."""
    try:
        image, fills = draw(rng)
    except RuntimeError as error:
        h.update(str(error).encode())
    else:
        h.update(image.tobytes())
        for f in fills:
            h.update(f.tobytes())
    _hash_rng(h, rng)


def cases() -> dict[str, callable]:
    """Case name: a function of no arguments that returns its sha256 hex digest."""
    out = {}
    for size, (inside, contact, count) in itertools.product(
            SEEDS, itertools.product((True, False), (True, False), (2, 3))):
        def panels(size=size, inside=inside, contact=contact, count=count):
            h = hashlib.sha256()
            for seed in range(SEEDS[size]):
                _hash_panel(h, np.random.default_rng(seed), lambda rng: shapes.panel(
                    rng, size, inside=inside, contact=contact, count=count))
            return h.hexdigest()
        out[f"panel size={size} inside={inside} contact={contact} count={count}"] = panels
    for rule, first, second, n in itertools.product(shapes.RULES, (True, False), (True, False), (2, 3)):
        def items(rule=rule, first=first, second=second, n=n):
            h = hashlib.sha256()
            for seed in range(5):
                _hash_panel(h, np.random.default_rng(seed),
                            lambda rng: shapes.item(rng, 32, rule, first, second, n))
            return h.hexdigest()
        out[f"item rule={rule} first={first} second={second} n={n}"] = items
    for rule, kind in itertools.product(tasks.VISION, tasks.KINDS):
        def problems(rule=rule, kind=kind):
            h = hashlib.sha256()
            for seed in (0, 1):
                got = tasks.problems(rule, kind, 2, seed)
                for key in ("answer", "props", "images"):
                    h.update(got[key].numpy().tobytes())
            return h.hexdigest()
        out[f"problems rule={rule} kind={kind}"] = problems
    return out


CASES = cases()


@pytest.mark.parametrize("name", list(CASES))
def test_panels_are_bit_identical_to_the_stored_digest(name):
    assert CASES[name]() == json.loads(DIGEST.read_text())[name]


def test_digest_covers_every_case():
    assert sorted(json.loads(DIGEST.read_text())) == sorted(CASES)


if __name__ == "__main__":
    DIGEST.parent.mkdir(exist_ok=True)
    DIGEST.write_text(json.dumps({name: digest() for name, digest in CASES.items()}, indent=1) + "\n")
    print(f"wrote {len(CASES)} digests to {DIGEST}")
