"""The results store: every experiment's metrics and small arrays, saved with the config that made them.

Layout: ``<root>/<profile>/<chapter>/<name>.json`` (config, its hash, metrics, provenance) beside
``<name>.npz`` (arrays). ``<root>`` is ``$MODLIB_RESULTS``, else ``notebooks/results`` in a checkout
of the book, else ``./modlib-results``.

Notebooks call :func:`fetch`, which returns the stored result when its config matches the one asked
for and otherwise computes and stores it. A stored result with a different config is never reused:
it is recomputed (and the change is printed), or, while the book is built from stored full-scale
results (``MODLIB_FULL_FROM_STORE=1``), refused with :class:`StaleResultError`.

Writes are atomic (temporary file + ``os.replace``); the ``.npz`` is written first and the ``.json``,
which records the ``.npz``'s checksum, last, so an interrupted write leaves no result that loads.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import io
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from modlib import __version__

ROOT_ENV = "MODLIB_RESULTS"
FROM_STORE_ENV = "MODLIB_FULL_FROM_STORE"


class StaleResultError(RuntimeError):
    """A stored result is missing or was made with another config, and recomputing is not allowed."""


@dataclass
class Result:
    """One stored experiment: ``metrics`` (JSON values), ``arrays`` (name -> ndarray) and ``meta``."""

    name: str
    config: dict
    metrics: dict
    arrays: dict
    meta: dict

    @property
    def provenance(self) -> str:
        """One line for figure captions, e.g. ``"profile full · cpu (2 threads) · 100 seeds"``."""
        return provenance([self])


def provenance(runs: list[Result]) -> str:
    """One caption line for a figure drawn from ``runs`` (stored results): profile, device(s) and
    seeds, e.g. ``"profile full · cuda (NVIDIA H100) · 5 seeds (0-4)"``. A result made for one seed
    has ``"seed"`` in its config; otherwise ``meta["seeds"]`` is its number or list of seeds."""
    if not runs:
        raise ValueError("provenance() needs at least one result; got none")
    profiles = " + ".join(sorted({r.meta["profile"] for r in runs}))
    devices = " + ".join(sorted({r.meta["device"] for r in runs}))
    if all("seed" in r.config for r in runs):
        seeds = sorted({r.config["seed"] for r in runs})
        what = f"seed {seeds[0]}" if len(seeds) == 1 else f"{len(seeds)} seeds ({seeds[0]}-{seeds[-1]})"
    else:
        counts = [r.meta.get("seeds") for r in runs]
        what = f"{sum(c if isinstance(c, int) else len(c or []) for c in counts)} seeds"
    return f"profile {profiles} · {devices} · {what}"


def default_root() -> Path:
    if os.environ.get(ROOT_ENV):
        return Path(os.environ[ROOT_ENV])
    checkout = Path(__file__).resolve().parents[1] / "notebooks"
    if checkout.is_dir():
        return checkout / "results"
    return Path.cwd() / "modlib-results"


def config_hash(config: dict) -> str:
    """A short hash of a JSON-serialisable config (key order does not matter)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _paths(root: Path, profile: str, chapter: str, name: str) -> tuple[Path, Path]:
    folder = Path(root) / profile / chapter
    return folder / f"{name}.json", folder / f"{name}.npz"


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _read(json_path: Path, npz_path: Path) -> Result | None:
    """The stored result, or ``None`` if it is absent or incomplete."""
    if not json_path.exists() or not npz_path.exists():
        return None
    meta = json.loads(json_path.read_text())
    blob = npz_path.read_bytes()
    if hashlib.sha256(blob).hexdigest() != meta.get("npz_sha256"):
        return None
    with np.load(io.BytesIO(blob)) as z:
        arrays = {k: z[k] for k in z.files}
    return Result(meta["name"], meta["config"], meta["metrics"], arrays, meta)


def save(chapter: str, name: str, config: dict, metrics: dict, arrays: dict, *, profile: str,
         device: str, wall_time_s: float, root: Path | None = None) -> Result:
    """Store one result atomically and return it."""
    json_path, npz_path = _paths(root or default_root(), profile, chapter, name)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    blob = buf.getvalue()
    meta = {
        "name": name, "chapter": chapter, "profile": profile,
        "config": config, "config_hash": config_hash(config), "metrics": metrics,
        "arrays": {k: {"shape": list(v.shape), "dtype": str(v.dtype)} for k, v in arrays.items()},
        "npz_sha256": hashlib.sha256(blob).hexdigest(),
        "package_version": __version__, "seeds": config.get("seeds"), "device": device,
        "wall_time_s": round(wall_time_s, 3),
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    atomic_write_bytes(npz_path, blob)
    atomic_write_bytes(json_path, (json.dumps(meta, indent=1) + "\n").encode())
    return Result(name, config, metrics, dict(arrays), meta)


def _config_changes(old: dict, new: dict) -> str:
    keys = sorted(set(old) | set(new))
    diffs = [f"{k}: {old.get(k, '<absent>')!r} -> {new.get(k, '<absent>')!r}"
             for k in keys if old.get(k, "<absent>") != new.get(k, "<absent>")]
    return "; ".join(diffs)


def from_store_only(profile: str) -> bool:
    """True while the book is built from stored full-scale results (no full-scale training)."""
    return profile == "full" and os.environ.get(FROM_STORE_ENV, "") not in ("", "0")


def _made_with(stored: Result | None, config: dict) -> bool:
    return stored is not None and stored.meta["config_hash"] == config_hash(config)


def load(chapter: str, name: str, config: dict, *, profile: str, root: Path | None = None) -> Result | None:
    """The stored result ``name`` if it is complete and was made with ``config``, else ``None``
    (never computes)."""
    stored = _read(*_paths(root or default_root(), profile, chapter, name))
    return stored if _made_with(stored, config) else None


def fetch(chapter: str, name: str, config: dict, compute: Callable[[], tuple[dict, dict]], *,
          profile: str, device: str, root: Path | None = None) -> Result:
    """Load the stored result for ``config``, or run ``compute()`` and store what it returns.

    ``compute`` returns ``(metrics, arrays)``: a JSON-serialisable dict and a dict of ndarrays.
    """
    json_path, npz_path = _paths(root or default_root(), profile, chapter, name)
    stored = _read(json_path, npz_path)
    if _made_with(stored, config):
        return stored
    if stored is None:
        reason = f"no stored result {chapter}/{name} at profile {profile!r}"
    else:
        reason = (f"the stored result {chapter}/{name} at profile {profile!r} was made with another "
                  f"config ({_config_changes(stored.config, config)})")
    if from_store_only(profile):
        raise StaleResultError(f"{reason}; this build only reads full-profile results. "
                               f"Recompute them with: python -m modlib.batch --profile full")
    if stored is not None:
        print(f"{reason}: recomputing")
    start = time.perf_counter()
    metrics, arrays = compute()
    return save(chapter, name, config, metrics, arrays, profile=profile, device=device,
                wall_time_s=time.perf_counter() - start, root=root)


def available_profile(profile: str, chapter: str, names: list[str] | None = None,
                      root: Path | None = None) -> str:
    """The profile a page can be computed at: ``profile``, except that a build reading full results
    from the store falls back to ``"default"`` (and says so) where the chapter's full results are
    not all stored: none, or not every one of ``names`` when given."""
    if not from_store_only(profile):
        return profile
    folder = Path(root or default_root()) / "full" / chapter
    stored = {p.stem for p in folder.glob("*.json")} if folder.is_dir() else set()
    missing = [n for n in names if n not in stored] if names else ([] if stored else ["any"])
    if missing:
        what = "not stored yet" if not stored else f"incomplete ({len(stored)} of {len(names)} stored)"
        print(f"Full-profile results for '{chapter}' are {what}: this page was computed at the default profile.")
        return "default"
    return profile
