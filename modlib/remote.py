"""The book's stored full-profile results, fetched from its repository where they are missing.

In a checkout of the book, every chapter's ``full`` results are committed under
``notebooks/results/full/``. A session without them (Colab, or the package installed with pip)
that asks for ``profile = "full"`` would otherwise compute them, which takes hours on a CPU. There
:func:`offer` (called by :func:`modlib.results.available_profile`) fetches the chapter's stored
results from the repository instead:

- ``MODLIB_FETCH_RESULTS=1``: fetch without asking; ``=0``: never fetch (compute, as asked);
  unset: ask in an interactive session (Colab, Jupyter, a terminal), and elsewhere (papermill, a
  batch job) only say how to fetch them, then compute.
- The repository is ``_config.yml``'s ``repository.url`` and ``branch`` in a checkout, else the
  installed package's ``Homepage`` (``pyproject.toml``, which a test checks against
  ``_config.yml``); ``MODLIB_RESULTS_URL`` overrides the URL, e.g. with
  ``file:///path/to/a/copy/of/the/repository``. Outside a checkout the results come from the
  installed release's tag, :data:`RELEASE` (``v`` and ``modlib.__version__``; ``_config.yml``'s
  branch names the same tag, a test checks): the results stored with the code installed. From
  GitHub the files come from ``<url>/raw/<ref>/notebooks/results/full/<chapter>/<name>.json|.npz``;
  from a ``file://`` copy, from ``<path>/notebooks/results/full/...``.
- Which results a chapter has, and the SHA-256 of each of their files, is read from the index
  ``notebooks/results/full/_index.json`` of the *pinned* commit (:func:`pinned_index`): the one
  committed beside the code in a checkout, else the index at the installed release's tag
  (:data:`RELEASE`, or ``$MODLIB_RESULTS_COMMIT``) in the repository. A downloaded file must have
  the checksum that index records; a file changed on the server (its own checksum recomputed to
  match) is refused. ``python -m modlib.remote index`` rewrites the index (:func:`build_index`), and
  a test checks it against the store. Every name in it must be one of the chapter's jobs
  (:mod:`modlib.jobs`), so no name reaches outside the store. Chapter 6 reads chapter 5's results
  too (:data:`READS`): they are fetched with it.
- Every downloaded result must also read back as stored (:func:`modlib.results.read`: the
  ``.json``'s checksum of itself, its config hash, the ``.npz``'s checksum, and its own name,
  chapter and profile); only when all of them pass are they written into the local store, each
  atomically (``.npz`` first, ``.json`` last). A result already stored here is kept. Anything else
  raises :class:`FetchError`, writing nothing, and says in one line what failed (with the URL) and
  how to compute the results instead. Every request has a timeout (:data:`TIMEOUT_S`), a fetch an
  overall deadline (:data:`DEADLINE_S`) and each file a size cap (:data:`MAX_BYTES`): offline, it
  fails in seconds, naming what it could not reach.
- The code check is the store's own: the chapter's code loads a fetched result only if it was made
  by the code installed here (its fingerprint, :mod:`modlib.fingerprint`); one made by other code
  (a package installed from another branch or version) is reported stale and not used.

Command line: ``python -m modlib.remote fetch CHAPTER [...]`` and ``python -m modlib.remote index``.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from modlib import __version__, results

FETCH_ENV = "MODLIB_FETCH_RESULTS"
URL_ENV = "MODLIB_RESULTS_URL"
DISTRIBUTION = "breaking-it-down-book"
PROFILE = "full"
INDEX = "_index.json"
COMMIT_ENV = "MODLIB_RESULTS_COMMIT"
TIMEOUT_S = 20.0  # per request: connecting, and each read
DEADLINE_S = 600.0  # for a whole fetch (a chapter's results are a few MB)
MAX_BYTES = 64 * 2**20  # per file (the largest stored file is about 2 MB)
# chapters whose pages also read another chapter's stored results
READS = {"pretraining_consistency": ("structural_compositionality",)}
CHECKOUT = results.PACKAGE_DIR.parent  # the repository, when modlib runs from a checkout
RELEASE = f"v{__version__}"  # the tag of the release installed: its stored results match its code


class FetchError(RuntimeError):
    """The book's stored results could not be fetched, or did not check out; nothing was written."""


# ---------------------------------------------------------------- where the results live

def repository() -> tuple[str, str]:
    """``(url, ref)`` of the book's repository: ``$MODLIB_RESULTS_URL`` at :data:`RELEASE`, else
    ``_config.yml``'s URL and branch in a checkout, else the installed package's ``Homepage`` at
    :data:`RELEASE`."""
    if os.environ.get(URL_ENV):
        return os.environ[URL_ENV].rstrip("/"), RELEASE
    config = CHECKOUT / "_config.yml"
    if config.is_file():
        import yaml

        repo = (yaml.safe_load(config.read_text()) or {}).get("repository") or {}
        if repo.get("url"):
            return str(repo["url"]).rstrip("/"), str(repo.get("branch") or RELEASE)
    from importlib import metadata

    try:
        urls = metadata.metadata(DISTRIBUTION).get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        urls = []
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() == "homepage" and url.strip():
            return url.strip().rstrip("/"), RELEASE
    raise FetchError(f"the book's repository is not known here (no _config.yml beside modlib, no "
                     f"installed {DISTRIBUTION} with a Homepage): set {URL_ENV} to its URL")


def base_url(url: str | None = None, branch: str | None = None) -> str:
    """The URL of the repository's ``notebooks/results/full`` folder, file by file."""
    if url is None:
        url, branch = repository()
    url = url.rstrip("/")
    if urllib.parse.urlparse(url).scheme in ("", "file"):
        if "://" not in url:
            url = Path(url).resolve().as_uri()
        return f"{url}/notebooks/results/{PROFILE}"
    return f"{url}/raw/{branch or RELEASE}/notebooks/results/{PROFILE}"


def _get(url: str, deadline: float) -> bytes:
    """The bytes at ``url``, or :class:`FetchError` naming it and why: never past the timeout of a
    read, nor past ``deadline`` (a ``time.monotonic()``), nor over :data:`MAX_BYTES`."""
    try:
        with urllib.request.urlopen(url, timeout=min(TIMEOUT_S, max(deadline - time.monotonic(), 0.01))) as response:
            size = response.headers.get("Content-Length") if hasattr(response, "headers") else None
            if size is not None and int(size) > MAX_BYTES:
                raise FetchError(f"{url} is {int(size)} bytes, over the cap of {MAX_BYTES} per file")
            chunks, got = [], 0
            while True:
                if time.monotonic() > deadline:
                    raise FetchError(f"{url}: the fetch ran past its deadline of {DEADLINE_S:g} s")
                chunk = response.read1(2**16) if hasattr(response, "read1") else response.read(2**16)
                if not chunk:
                    break
                chunks.append(chunk)
                got += len(chunk)
                if got > MAX_BYTES:
                    raise FetchError(f"{url} is over the cap of {MAX_BYTES} bytes per file")
            if size is not None and got != int(size):
                raise FetchError(f"{url}: the download ended after {got} of {int(size)} bytes")
            return b"".join(chunks)
    except urllib.error.HTTPError as err:
        raise FetchError(f"{url} answered {err.code} {err.reason}") from err
    except urllib.error.URLError as err:
        raise FetchError(f"could not reach {url} ({err.reason})") from err
    except (TimeoutError, OSError, http.client.HTTPException, ValueError) as err:
        raise FetchError(f"could not reach {url} ({type(err).__name__}: {err or 'timed out'})") from err


# ---------------------------------------------------------------- the index of stored results

def build_index(root: Path | None = None) -> dict:
    """``{"profile": "full", "chapters": {chapter: {name: {".json": sha256, ".npz": sha256}}}}`` of
    the store under ``root`` (each file's SHA-256, hex)."""
    folder = Path(root or results.default_root()) / PROFILE
    chapters = {}
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []:
        names = sorted(p.stem for p in sub.glob("*.json") if not p.name.startswith("_"))
        if names:
            chapters[sub.name] = {n: {s: hashlib.sha256((sub / f"{n}{s}").read_bytes()).hexdigest()
                                      for s in (".json", ".npz") if (sub / f"{n}{s}").is_file()}
                                  for n in names}
    return {"about": "The book's stored full-profile results, chapter by chapter, with each file's "
                     "SHA-256, against which fetched results are checked (modlib.remote); rewrite with: "
                     "python -m modlib.remote index",
            "profile": PROFILE, "chapters": chapters}


def write_index(root: Path | None = None) -> Path:
    """Rewrite the index of the store under ``root``; raises ``ValueError`` when it holds no
    full results (a mistyped ``--root`` would otherwise write an empty index)."""
    index = build_index(root)
    path = Path(root or results.default_root()) / PROFILE / INDEX
    if not index["chapters"]:
        raise ValueError(f"{path.parent} holds no stored full results: not writing an empty index "
                         f"(is --root the store, e.g. notebooks/results?)")
    results.atomic_write_bytes(path, (json.dumps(index, indent=1) + "\n").encode())
    return path


def pinned_index(url: str | None = None, deadline: float | None = None) -> dict:
    """``{chapter: {name: {".json": sha256, ".npz": sha256}}}`` of the pinned commit's index: the
    index committed beside the code in a checkout, else the one at the installed release's tag
    (:data:`RELEASE`, or ``$MODLIB_RESULTS_COMMIT`` where set) in the repository ``url``. Raises :class:`FetchError` when there is none, or it is malformed, or it
    names a result that is not one of its chapter's jobs."""
    local = CHECKOUT / "notebooks" / "results" / PROFILE / INDEX
    if local.is_file():
        where, text = str(local), local.read_bytes()
    else:
        commit = os.environ.get(COMMIT_ENV, "").strip() or RELEASE
        if url is None:
            url = repository()[0]
        where = f"{base_url(url, commit)}/{INDEX}"
        text = _get(where, deadline or time.monotonic() + DEADLINE_S)
    try:
        chapters = json.loads(text)["chapters"]
        ok = isinstance(chapters, dict) and all(
            isinstance(names, dict) and all(isinstance(f, dict) and set(f) == {".json", ".npz"}
                                            for f in names.values()) for names in chapters.values())
    except (ValueError, KeyError, TypeError) as err:
        raise FetchError(f"{where} is not an index of stored results ({type(err).__name__}: {err})") from err
    if not ok:
        raise FetchError(f"{where} is not an index of stored results (expected chapters of names with the "
                         f"SHA-256 of their .json and .npz); rewrite it: python -m modlib.remote index")
    return chapters


def _check_names(chapter: str, names, where: str) -> None:
    """Raise :class:`FetchError` unless every name is one of ``chapter``'s jobs (so no path)."""
    from modlib import jobs  # here: the chapters' code is imported only to fetch

    if chapter not in jobs.CHAPTERS:
        raise FetchError(f"{where} lists a chapter {chapter!r} that is not one of {', '.join(jobs.CHAPTERS)}")
    known = {job.split("/", 1)[1] for job in jobs.jobs([chapter], PROFILE) if job.startswith(chapter + "/")}
    bad = [n for n in names if n not in known or "/" in n or "\\" in n or n.startswith(".")]
    if bad:
        raise FetchError(f"{where} lists {bad[0]!r}, which is not a result of '{chapter}' "
                         f"(its jobs: {', '.join(sorted(known))})")


# ---------------------------------------------------------------- what is missing, and fetching it

def _stored(root: Path, chapter: str) -> set[str]:
    folder = root / PROFILE / chapter
    return {p.stem for p in folder.glob("*.json") if not p.name.startswith("_")} if folder.is_dir() else set()


def missing(chapter: str, names: list[str] | None = None, root: Path | None = None) -> list[str]:
    """What of ``chapter``'s full results is not in the local store (no network): those of
    ``names`` not stored, else ``["any"]`` when none is; and likewise for the chapters it reads."""
    root = Path(root or results.default_root())
    have = _stored(root, chapter)
    gone = [n for n in names if n not in have] if names else ([] if have else [f"{chapter}: any"])
    gone += [f"{other}: any" for other in READS.get(chapter, ()) if not _stored(root, other)]
    return gone


def _how_to_compute(chapter: str) -> str:
    return (f"To compute them here instead (hours at the full profile on a CPU; the README's table "
            f"gives each chapter's cost), set {FETCH_ENV}=0 (in a notebook: "
            f"os.environ['{FETCH_ENV}'] = '0') and run again, or in a checkout of the book: "
            f"python -m modlib.batch --profile full notebooks/{chapter}.ipynb. "
            f"Or read the chapter at profile 'default' (minutes).")


def fetch_chapter(chapter: str, *, root: Path | None = None, url: str | None = None,
                  branch: str | None = None, quiet: bool = False) -> list[str]:
    """Fetch ``chapter``'s stored full results (and those of the chapters it reads) that are not in
    the local store under ``root``; return the ``chapter/name`` of each result written. Raises
    :class:`FetchError`, having written nothing, when a file cannot be fetched or a result does not
    check out."""
    root = Path(root or results.default_root())
    base = base_url(url, branch)
    how = _how_to_compute(chapter)
    deadline = time.monotonic() + DEADLINE_S
    try:
        listed = pinned_index(url, deadline)
        if chapter not in listed:
            raise FetchError(f"the repository ({base}) stores no full results for '{chapter}'")
        for c in (chapter, *READS.get(chapter, ())):
            _check_names(c, listed.get(c, {}), "the index of stored results")
    except FetchError as err:
        raise FetchError(f"The book's stored full results for '{chapter}' were not fetched: {err}. {how}") from err
    wanted = [(c, n) for c in (chapter, *READS.get(chapter, ())) for n in listed.get(c, {})
              if n not in _stored(root, c)]
    checked = []
    with tempfile.TemporaryDirectory(prefix="modlib-fetch-") as tmp:
        for c, n in wanted:
            files = {}
            for suffix in (".json", ".npz"):
                where = f"{base}/{c}/{n}{suffix}"
                try:
                    files[suffix] = _get(where, deadline)
                    if hashlib.sha256(files[suffix]).hexdigest() != listed[c][n][suffix]:
                        raise FetchError(f"{where} is not the file the pinned index of stored results "
                                         f"records (its SHA-256 differs: changed on the server, or damaged)")
                except FetchError as err:
                    raise FetchError(f"The book's stored full results for '{chapter}' were not fetched: "
                                     f"{err}; nothing was written. {how}") from err
                (Path(tmp) / f"{c}--{n}{suffix}").write_bytes(files[suffix])
            try:
                got = results.read(Path(tmp) / f"{c}--{n}.json", Path(tmp) / f"{c}--{n}.npz")
            except results.UnreadableResultError as err:
                raise FetchError(f"{base}/{c}/{n}: the downloaded result does not check out "
                                 f"({str(err).split('; ')[0]}); nothing was written. Try again later "
                                 f"(the files may be mid-update). {how}") from err
            if got is None or (got.meta.get("profile"), got.meta.get("chapter"), got.name) != (PROFILE, c, n):
                raise FetchError(f"{base}/{c}/{n}.json is not the stored result {PROFILE}/{c}/{n}; "
                                 f"nothing was written. {how}")
            checked.append((c, n, files))
    for c, n, files in checked:
        json_path = root / PROFILE / c / f"{n}.json"
        results.atomic_write_bytes(json_path.with_suffix(".npz"), files[".npz"])
        results.atomic_write_bytes(json_path, files[".json"])
    if not quiet:
        size = sum(len(b) for _, _, files in checked for b in files.values())
        kept = sum(len(listed.get(c, [])) for c in (chapter, *READS.get(chapter, ()))) - len(checked)
        print(f"Fetched {len(checked)} of the book's stored full results for '{chapter}' "
              f"({size / 1e6:.1f} MB, checksums checked) from {base} into {root / PROFILE}"
              + (f"; kept {kept} already here" if kept else "") + ".")
    return [f"{c}/{n}" for c, n, _ in checked]


# ---------------------------------------------------------------- the offer, where a page starts

def _ask(prompt: str) -> bool | None:
    """The reader's yes or no, or ``None`` where no one can be asked (papermill, a batch job, CI)."""
    if os.environ.get("CI", "") not in ("", "0", "false"):
        return None
    try:
        from IPython import get_ipython

        in_kernel = getattr(get_ipython(), "kernel", None) is not None
    except ImportError:
        in_kernel = False
    if not in_kernel and not (sys.stdin is not None and sys.stdin.isatty()):
        return None
    try:
        answer = input(prompt)
    except (EOFError, NotImplementedError, OSError):  # a kernel with no stdin (papermill) raises
        return None                                    # StdinNotImplementedError, a NotImplementedError
    return answer.strip().lower() in ("", "y", "yes")


def offer(chapter: str, names: list[str] | None = None, root: Path | None = None) -> None:
    """Where ``chapter``'s full results are not all stored here, fetch the book's (asking first,
    unless ``$MODLIB_FETCH_RESULTS`` says; see the module's docstring). Returns quietly when they
    are stored or when the reader chose to compute them; raises :class:`FetchError` when fetching
    was asked for and failed."""
    root = Path(root or results.default_root())
    if not missing(chapter, names, root):
        return
    mode = os.environ.get(FETCH_ENV, "").strip().lower()
    if mode in ("0", "no", "false"):
        return
    if mode not in ("1", "yes", "true", ""):
        raise FetchError(f"{FETCH_ENV}={mode!r}: use 1 (fetch the book's stored results) or 0 (compute them)")
    if mode == "":
        if results.from_store_only(PROFILE):  # the book build says itself what it falls back to
            return
        try:
            where = repository()[0]
        except FetchError:
            where = "the book's repository"
        answer = _ask(f"The full-profile results of '{chapter}' are not stored in {root}. Computing them "
                      f"takes hours on a CPU. Fetch the book's stored results from {where} instead "
                      f"(checked against their checksums)? [Y/n] ")
        if answer is None:
            print(f"The full-profile results of '{chapter}' are not stored in {root}: they will be "
                  f"computed. To fetch the book's stored ones instead, set {FETCH_ENV}=1 (or run: "
                  f"python -m modlib.remote fetch {chapter}).")
            return
        if not answer:
            print(f"Computing the full-profile results of '{chapter}' here (set {FETCH_ENV}=1 to fetch them).")
            return
    fetch_chapter(chapter, root=root)


# ---------------------------------------------------------------- command line

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m modlib.remote", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    get = sub.add_parser("fetch", help="fetch chapters' stored full results into the local store")
    get.add_argument("chapters", nargs="+")
    get.add_argument("--url", help=f"the repository (default: ${URL_ENV}, _config.yml or the package's Homepage)")
    get.add_argument("--branch", default=None, help=f"the tag or branch (default: {RELEASE}, or _config.yml's)")
    get.add_argument("--root", type=Path, default=None, help=f"the local store (default: ${results.ROOT_ENV} or ...)")
    idx = sub.add_parser("index", help=f"rewrite notebooks/results/full/{INDEX} from the store")
    idx.add_argument("--root", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.command == "index":
        try:
            print(f"wrote {write_index(args.root)}")
        except ValueError as err:
            parser.error(str(err))
        return 0
    try:
        for chapter in args.chapters:
            fetch_chapter(chapter, root=args.root, url=args.url, branch=args.branch)
    except FetchError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
