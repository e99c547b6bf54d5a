"""The results store: every experiment's metrics and small arrays, saved with the config that made them.

Layout: ``<root>/<profile>/<chapter>/<name>.json`` (config, its hash, metrics, provenance) beside
``<name>.npz`` (arrays). ``<root>`` is ``$MODLIB_RESULTS``, else ``notebooks/results`` in a checkout
of the book, else ``./modlib-results``.

Notebooks call :func:`fetch`, which returns the stored result when it was made with the config asked
for *and by the code that computes it now*, and otherwise computes and stores it. The code is named
by the experiment's module (e.g. ``"modlib.modularity"``): :func:`code_fingerprint` hashes that
module's source and every ``modlib`` module it imports, directly or not, leaving out the modules
that cannot change a number (``NOT_CODE``: the store itself, the batch runner, the settings checks,
plots and widgets). A stored result made with another config or by other code is never reused: it
is recomputed (and what changed is printed), or, while the book is built from stored full-scale
results (``MODLIB_FULL_FROM_STORE=1``), refused with :class:`StaleResultError` naming the command
that remakes it. A result that cannot be read (a truncated file, a hand-edited config whose hash no
longer matches) counts as missing, and the message names the file.

Writes are atomic (temporary file + ``os.replace``); the ``.npz`` is written first and the ``.json``,
which records the ``.npz``'s checksum, last, so an interrupted write leaves no result that loads.
"""

from __future__ import annotations

import ast
import contextlib
import datetime as _dt
import functools
import hashlib
import io
import json
import os
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from modlib import __version__

ROOT_ENV = "MODLIB_RESULTS"
FROM_STORE_ENV = "MODLIB_FULL_FROM_STORE"
PACKAGE_DIR = Path(__file__).resolve().parent
NOT_CODE = ("modlib", "modlib.results", "modlib.batch", "modlib.profiles", "modlib.plots", "modlib.widgets")


class StaleResultError(RuntimeError):
    """A stored result is missing, unreadable, or made with another config or by other code, and
    recomputing is not allowed."""


class UnreadableResultError(ValueError):
    """A stored result's files exist but cannot be read back as they were written."""


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
    has ``"seed"`` in its config; otherwise ``meta["seeds"]`` is its number or list of seeds, or
    None for a single run whose seed the code fixes (``"one run"``)."""
    if not runs:
        raise ValueError("provenance() needs at least one result; got none")
    profiles = " + ".join(sorted({r.meta["profile"] for r in runs}))
    devices = " + ".join(sorted({r.meta["device"].replace("(1 threads)", "(1 thread)") for r in runs}))
    if all("seed" in r.config for r in runs):
        seeds = sorted({r.config["seed"] for r in runs})
        what = f"seed {seeds[0]}" if len(seeds) == 1 else f"{len(seeds)} seeds ({seeds[0]}-{seeds[-1]})"
    elif all(r.meta.get("seeds") is None for r in runs):  # one run each, its seed fixed in the code
        what = "one run" if len(runs) == 1 else "one run each"
    else:
        counts = [r.meta.get("seeds") for r in runs]
        what = f"{sum(c if isinstance(c, int) else len(c or []) for c in counts)} seeds"
    return f"profile {profiles} · {devices} · {what}"


def default_root() -> Path:
    """The store's root, absolute: ``$MODLIB_RESULTS`` (a relative path is resolved against the
    working directory the first time it is seen, so that a later change of directory, such as a
    notebook run in ``notebooks/``, still writes to the same place), else ``notebooks/results`` in a
    checkout of the book, else ``./modlib-results``."""
    if os.environ.get(ROOT_ENV):
        return _resolved(os.environ[ROOT_ENV])
    checkout = PACKAGE_DIR.parent / "notebooks"
    if checkout.is_dir():
        return checkout / "results"
    return _resolved("modlib-results")


@functools.cache
def _resolved(path: str) -> Path:
    return Path(path).resolve()


def _imports(module: str) -> set[str]:
    """The ``modlib`` modules that ``module``'s source imports (anywhere in it)."""
    tree = ast.parse((PACKAGE_DIR / f"{module.split('.')[-1]}.py").read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("modlib.")}
        elif isinstance(node, ast.ImportFrom) and node.module == "modlib":
            found |= {f"modlib.{a.name}" for a in node.names if (PACKAGE_DIR / f"{a.name}.py").exists()}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("modlib."):
            found.add(node.module)
    return found


def code_fingerprint(module: str) -> dict[str, str]:
    """The code a result depends on: ``{"modlib/<file>.py": hash (16 hex)}`` for ``module`` (e.g.
    ``"modlib.toy"``) and every ``modlib`` module it imports, directly or through others, except
    ``NOT_CODE`` (modules that store, check or draw results but compute none). Each hash is of the
    file's code without comments, docstrings and settings table (:func:`_code_only`)."""
    if not module.startswith("modlib.") or not (PACKAGE_DIR / f"{module.split('.')[-1]}.py").exists():
        known = sorted(f"modlib.{p.stem}" for p in PACKAGE_DIR.glob("*.py") if p.stem != "__init__")
        raise ValueError(f"code={module!r} is not a module of modlib; choose one of {', '.join(known)}")
    seen, todo = set(), [module]
    while todo:
        name = todo.pop()
        if name in seen or name in NOT_CODE:
            continue
        seen.add(name)
        todo += sorted(_imports(name))
    files = sorted(f"modlib/{name.split('.')[-1]}.py" for name in seen)
    return {f: hashlib.sha256(_code_only((PACKAGE_DIR.parent / f).read_text()).encode()).hexdigest()[:16]
            for f in files}


def _code_only(source: str) -> str:
    """``source`` as the computation sees it: its syntax tree without comments, layout, docstrings
    and the module's ``SETTINGS`` table (each result's config already records the settings it used),
    so that editing those does not make stored results stale."""
    tree = ast.parse(source)
    tree.body = [node for node in tree.body
                 if not (isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "SETTINGS" for t in node.targets))]
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


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


def read(json_path: Path, npz_path: Path | None = None) -> Result | None:
    """The result stored in ``json_path`` and ``npz_path`` (default: beside it), or ``None`` if neither
    file exists. Raises :class:`UnreadableResultError`, naming the file and the fix, when they exist
    but do not read back as written: a missing half, a truncated or corrupt file, an ``.npz`` whose
    checksum differs from the one recorded, or a config that no longer hashes to the recorded hash
    (a hand edit)."""
    json_path = Path(json_path)
    npz_path = Path(npz_path) if npz_path else json_path.with_suffix(".npz")
    if not json_path.exists() and not npz_path.exists():
        return None
    fix = "delete both files (or run again, which recomputes it)"
    if not json_path.exists():
        raise UnreadableResultError(f"{json_path} is missing beside {npz_path.name}; {fix}")
    try:
        meta = json.loads(json_path.read_text())
        config, metrics, recorded = meta["config"], meta["metrics"], meta["config_hash"]
    except (ValueError, KeyError, TypeError) as err:
        raise UnreadableResultError(f"{json_path} is not a complete result file ({type(err).__name__}: "
                                    f"{err}); {fix}") from err
    if config_hash(config) != recorded:
        raise UnreadableResultError(f"{json_path}: its config does not hash to the recorded config_hash "
                                    f"{recorded} (edited by hand?); {fix}")
    if not npz_path.exists():
        raise UnreadableResultError(f"{npz_path} is missing beside {json_path.name}; {fix}")
    blob = npz_path.read_bytes()
    if hashlib.sha256(blob).hexdigest() != meta.get("npz_sha256"):
        raise UnreadableResultError(f"{npz_path} is not the array file its {json_path.name} records "
                                    f"(checksum differs: truncated, or written by an interrupted run); {fix}")
    try:
        with np.load(io.BytesIO(blob)) as z:
            arrays = {k: z[k] for k in z.files}
    except (ValueError, OSError, zipfile.BadZipFile) as err:
        raise UnreadableResultError(f"{npz_path} cannot be read ({err}); {fix}") from err
    return Result(meta.get("name", json_path.stem), config, metrics, arrays, meta)


def _read_or_report(json_path: Path, npz_path: Path) -> tuple[Result | None, str | None]:
    """The stored result (or ``None``) and, when its files exist but cannot be read, why not."""
    try:
        return read(json_path, npz_path), None
    except UnreadableResultError as err:
        return None, str(err)


def save(chapter: str, name: str, config: dict, metrics: dict, arrays: dict, *, profile: str,
         device: str, wall_time_s: float, code: str, fingerprint: dict | None = None,
         root: Path | None = None) -> Result:
    """Store one result atomically and return it; ``code`` names the module that computed it and
    ``fingerprint`` is :func:`code_fingerprint` of it as it was when the computation began (default:
    now)."""
    json_path, npz_path = _paths(root or default_root(), profile, chapter, name)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    blob = buf.getvalue()
    meta = {
        "name": name, "chapter": chapter, "profile": profile,
        "config": config, "config_hash": config_hash(config), "metrics": metrics,
        "code_module": code, "code": fingerprint or code_fingerprint(code),
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


_READ_ONLY = False  # set by store_only()


@contextlib.contextmanager
def store_only():
    """Within it, :func:`fetch` computes nothing, at any profile: a result that is not stored (or
    is stale) raises :class:`StaleResultError`. The job runner (:mod:`modlib.jobs`) asks a
    chapter's own code this way whether a result is stored."""
    global _READ_ONLY
    before, _READ_ONLY = _READ_ONLY, True
    try:
        yield
    finally:
        _READ_ONLY = before


def from_store_only(profile: str) -> bool:
    """True while nothing may be computed at ``profile``: inside :func:`store_only`, or while the
    book is built from stored full-scale results (no full-scale training)."""
    return _READ_ONLY or (profile == "full" and os.environ.get(FROM_STORE_ENV, "") not in ("", "0"))


def _code_changes(old: dict | None, new: dict) -> str:
    if not old:
        return "it records no code fingerprint"
    changed = sorted(f for f in set(old) | set(new) if old.get(f) != new.get(f))
    return "changed: " + ", ".join(changed)


def _why_not(stored: Result, config: dict, now: dict) -> str | None:
    """Why ``stored`` cannot stand for a result of ``config`` computed by the code whose fingerprint
    is ``now`` (``None``: it can)."""
    if stored.meta["config_hash"] != config_hash(config):
        return f"was made with another config ({_config_changes(stored.config, config)})"
    if stored.meta.get("code") != now:
        return f"was made by other code ({_code_changes(stored.meta.get('code'), now)})"
    return None


def load(chapter: str, name: str, config: dict, *, profile: str, code: str,
         root: Path | None = None) -> Result | None:
    """The stored result ``name`` if it is readable and was made with ``config`` by ``code`` as it is
    now, else ``None`` (never computes)."""
    stored, _ = _read_or_report(*_paths(root or default_root(), profile, chapter, name))
    return stored if stored is not None and _why_not(stored, config, code_fingerprint(code)) is None else None


def fetch(chapter: str, name: str, config: dict, compute: Callable[[], tuple[dict, dict]], *,
          profile: str, device: str, code: str, remake: str | None = None,
          root: Path | None = None) -> Result:
    """Load the stored result for ``config`` made by ``code`` (a module of modlib, see
    :func:`code_fingerprint`), or run ``compute()`` and store what it returns.

    ``compute`` returns ``(metrics, arrays)``: a JSON-serialisable dict and a dict of ndarrays.
    ``remake`` is the command that remakes the result, named when a build that only reads stored
    results refuses to compute it (default: the batch runner on the chapter's notebook).
    """
    json_path, npz_path = _paths(root or default_root(), profile, chapter, name)
    stored, unreadable = _read_or_report(json_path, npz_path)
    now = code_fingerprint(code)  # before computing: the code as it runs, even if a file changes meanwhile
    why = _why_not(stored, config, now) if stored is not None else None
    if stored is not None and why is None:
        return stored
    if unreadable:
        reason = f"the stored result {chapter}/{name} at profile {profile!r} is unreadable: {unreadable}"
    elif stored is None:
        reason = f"no stored result {chapter}/{name} at profile {profile!r}"
    else:
        reason = f"the stored result {chapter}/{name} at profile {profile!r} {why}"
    if from_store_only(profile):
        remake = remake or f"python -m modlib.batch --profile {profile} notebooks/{chapter}.ipynb"
        where = "only stored results are read here" if _READ_ONLY else "this build only reads full-profile results"
        raise StaleResultError(f"{reason}; {where}. Remake it with: {remake}")
    if stored is not None or unreadable:
        print(f"{reason}: recomputing")
    start = time.perf_counter()
    metrics, arrays = compute()
    return save(chapter, name, config, metrics, arrays, profile=profile, device=device,
                wall_time_s=time.perf_counter() - start, code=code, fingerprint=now, root=root)


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
