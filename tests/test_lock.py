"""The lock (constraints.txt): exact versions for everything requirements.txt installs, torch aside,
each inside requirements.txt's range, and used by make setup."""

import re
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
NOT_LOCKED = re.compile(r"^(torch|triton|nvidia-.*)$")  # the Makefile's TORCH installs torch, first


def pins() -> dict[str, Version]:
    out = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, sep, version = line.partition("==")
            assert sep and re.fullmatch(r"[A-Za-z0-9._-]+", name), f"not an exact pin: {line!r}"
            out[canonicalize_name(name)] = Version(version)
    return out


def requirements() -> list[Requirement]:
    lines = [line.split("#")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    return [Requirement(line) for line in lines if line and not line.startswith("-")]


def test_every_requirement_is_pinned_inside_its_range_and_torch_is_left_to_the_makefile():
    locked = pins()
    assert not [n for n in locked if NOT_LOCKED.match(n)], "torch and its CUDA libraries are not locked"
    for req in requirements():
        name = canonicalize_name(req.name)
        if NOT_LOCKED.match(name):
            continue
        assert name in locked, f"{req.name} is not in constraints.txt: make lock"
        assert req.specifier.contains(locked[name], prereleases=True), \
            f"constraints.txt pins {req.name}=={locked[name]}, outside requirements.txt's {req.specifier}"


def test_make_setup_installs_from_the_lock():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^LOCK := constraints\.txt$", makefile, re.M)
    assert re.search(r"^\$\(STAMP\):.*\$\(LOCK\)", makefile, re.M), "the venv is not remade when the lock changes"
    assert "pip install -q --no-compile -c $(LOCK) -r requirements.txt" in makefile
    assert 'pip install -q --no-compile -c $(LOCK) "$(TORCH)"' in makefile
