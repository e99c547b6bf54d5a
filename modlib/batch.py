"""Run the book's notebooks in batch with papermill.

    python -m modlib.batch --profile full [NOTEBOOK ...] [--out DIR] [--force] [--threads N] [--cell-timeout S]
    python -m modlib.batch --profile paper --executor local|slurm [--workers N] [SLURM options] [NOTEBOOK ...]

Each notebook runs with ``-p profile PROFILE`` into ``DIR/PROFILE/`` (default ``_build/batch``).
A notebook is skipped when its results are current: the manifest
``<results root>/<profile>/<notebook stem>/_batch.json`` written after its last successful run
records a fingerprint of the notebook's code cells, the ``modlib`` sources and the profile (taken
when the run began: a file edited while it runs leaves the notebook to run again), and the
checksum of every result stored in that folder; the fingerprint still matches, and every one of
those results is still there, unchanged, and reads back (:func:`modlib.results.read`). An
interrupted run resumes: finished notebooks are skipped, and inside an unfinished one every
experiment already stored is loaded instead of recomputed (:func:`modlib.results.fetch`). The run
ends with a table of notebook, status, wall time and device, also after Ctrl-C.

On a CPU, ``--threads N`` sets how many threads torch uses in the notebooks' kernels (through
``$OMP_NUM_THREADS``); small models on a shared machine can run many times slower with more threads
than cores free, so choose it deliberately (1 when anything else runs). The run prints the thread
count used, and every stored result's device says it.

A cell that runs longer than the cell timeout (``--cell-timeout SECONDS``; by default the profile's
``CELL_TIMEOUT``) is stopped with its kernel, and its notebook is run once more: what it stored
before is loaded, not recomputed, so the retry costs little; a second timeout reports the notebook
as failed, naming the cell, and the run goes on with the next one. (A kernel can sit idle for ever
without answering a cell it has finished; without a timeout an unattended run would wait with it.)
Before a notebook runs, its results folder must be writable and have room for its results (an
estimate from its chapter's stored results, with a margin: :func:`space_needed`); the run stops at
once, naming the folder (and the space needed), when it has not.

With ``--executor``, the notebooks are not run: every result of their chapters that is not stored
is computed as a job of its own, by N local processes or on a SLURM cluster (:mod:`modlib.jobs`),
and the notebooks then draw from the store.

The results root is resolved once, to an absolute path, and handed to the notebooks' kernels in
``$MODLIB_RESULTS``, so that results and manifest land in the same place whatever the notebooks'
working directory.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

from modlib import profiles, results
from modlib.runtime import describe, pick_device

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
MODLIB_DIR = Path(__file__).resolve().parent
# Seconds one cell may run before its notebook is stopped and tried again, per profile: well above
# the longest cell (a chapter's computing cell: about 5 minutes at default, 1 to 3.5 hours at full on
# 2 CPU cores; a stored result already made is loaded on the retry, so a long computation still goes
# on). None at paper, where one cell computes for days: give --cell-timeout there.
CELL_TIMEOUT = {"smoke": 600, "default": 1800, "full": 4 * 3600, "paper": None}
TRIES = 2  # a notebook whose cell timed out runs once more


def fingerprint(notebook: Path, profile: str) -> str:
    """Hash of the notebook's code cells, every ``modlib`` source file and the profile."""
    import nbformat

    h = hashlib.sha256(profile.encode())
    nb = nbformat.read(notebook, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            h.update(cell.source.encode())
    for src in sorted(MODLIB_DIR.rglob("*.py")):
        h.update(src.name.encode() + src.read_bytes())
    return h.hexdigest()[:16]


def manifest_path(notebook: Path, profile: str, root: Path | None = None) -> Path:
    return Path(root or results.default_root()) / profile / notebook.stem / "_batch.json"


def _stored(folder: Path) -> dict[str, str]:
    """``{result name: sha256 of its .json}`` for every result in ``folder``."""
    return {p.stem: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.glob("*.json")) if p.name != "_batch.json"}


def stale_reason(notebook: Path, profile: str, root: Path | None = None) -> str | None:
    """Why ``notebook`` must run again at ``profile`` (``None`` when its results are current)."""
    path = manifest_path(notebook, profile, root)
    if not path.exists():
        return "not run yet"
    try:
        meta = json.loads(path.read_text())
        if not isinstance(meta, dict):
            raise TypeError(f"it holds a {type(meta).__name__}, not a JSON object")
        status, recorded, listed = meta["status"], meta["fingerprint"], meta["results"]
        if not isinstance(listed, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                   for k, v in listed.items()):
            raise TypeError(f"'results' is a {type(listed).__name__}, not an object of result names and checksums")
    except (ValueError, KeyError, TypeError) as err:
        return (f"its manifest {path} is unreadable or from an older modlib ({type(err).__name__}: {err}); "
                f"running it again rewrites it")
    if status != "ok" or recorded != fingerprint(notebook, profile):
        return "its code or modlib changed"
    for name, digest in listed.items():
        json_path = path.parent / f"{name}.json"
        try:
            ok = results.read(json_path) is not None and hashlib.sha256(json_path.read_bytes()).hexdigest() == digest
        except (results.UnreadableResultError, OSError):
            ok = False
        if not ok:
            return f"its stored result {json_path} is missing, changed or unreadable"
    return None


def is_current(notebook: Path, profile: str, root: Path | None = None) -> bool:
    return stale_reason(notebook, profile, root) is None


def space_needed(notebook: Path, root: Path) -> int:
    """Bytes to find free before running ``notebook``: :data:`modlib.results.SPACE_MARGIN` times
    what its chapter's results take at the largest profile stored under ``root``, and at least
    :data:`modlib.results.MIN_FREE_BYTES`."""
    totals = [sum(results.stored_size(folder, p.stem) for p in folder.glob("*.json") if not p.name.startswith("_"))
              for folder in Path(root).glob(f"*/{notebook.stem}")]
    return max(results.MIN_FREE_BYTES, results.SPACE_MARGIN * max(totals or [0]))


def check_writable(folder: Path) -> None:
    """Fail with a ``PermissionError`` naming ``folder`` (created if missing) unless a file can be written
    in it: checked before anything is computed into it."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".write-check.")
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        where = f" ({err.filename})" if err.filename and Path(err.filename) != folder else ""
        raise PermissionError(f"the results folder {folder} is not writable{where}: {err.strerror or err}. "
                              f"Nothing was computed. Make it writable, or choose another store with "
                              f"${results.ROOT_ENV}=DIR") from None


def _kernel_manager(log: Path):
    """A kernel manager whose kernels write their own stderr (start-up and shutdown messages, not the
    cells' output, which the notebook keeps) to ``log`` instead of this terminal."""
    from jupyter_client.manager import AsyncKernelManager

    class LoggedKernelManager(AsyncKernelManager):
        async def _async_launch_kernel(self, kernel_cmd, **kw):
            with log.open("ab") as f:  # the kernel process keeps its own copy of the file handle
                await super()._async_launch_kernel(kernel_cmd, **{**kw, "stderr": f})

    return LoggedKernelManager


def _cell_line(cell) -> str:
    """A cell named by its first line that is not blank or a comment."""
    lines = [l.strip() for l in (cell.source if cell is not None else "").splitlines()]
    code = [l for l in lines if l and not l.startswith("#")]
    return f"the cell {code[0]!r}" if code else "a cell"


def run_one(notebook: Path, profile: str, out_dir: Path, device: str, root: Path | None = None,
            cell_timeout: float | None = None) -> dict:
    """Execute one notebook with papermill into ``out_dir`` (its kernel's log beside it); returns its
    row of the summary table. A cell that runs past ``cell_timeout`` seconds (``None``: no limit)
    stops the notebook and its kernel; it is then run once more (``TRIES``)."""
    import papermill
    from nbclient.exceptions import CellTimeoutError

    out_dir = out_dir.resolve()  # papermill runs the notebook from its own folder
    out_dir.mkdir(parents=True, exist_ok=True)
    ran = fingerprint(notebook, profile)  # the code that runs: a file edited mid-run leaves it stale
    start = time.perf_counter()
    row = {"notebook": notebook.name, "device": device}
    stalled = None  # what stopped the first try, if a cell timed out
    for attempt in range(1, TRIES + 1):
        running = []  # the cell being executed, for the message when it times out

        def on_cell_execute(cell, cell_index, **_):
            running[:] = [cell]

        try:
            papermill.execute_notebook(str(notebook), str(out_dir / notebook.name),
                                       parameters={"profile": profile}, cwd=str(notebook.parent),
                                       progress_bar=False, kernel_name="python3",
                                       execution_timeout=cell_timeout or None, on_cell_execute=on_cell_execute,
                                       kernel_manager_class=_kernel_manager(out_dir / f"{notebook.stem}.kernel.log"))
            row["status"] = "ran"
        except CellTimeoutError:
            what = (f"{_cell_line(running[0] if running else None)} ran past the cell timeout of "
                    f"{cell_timeout:g} s")
            if attempt < TRIES:
                print(f"{notebook.name}: {what}; its kernel was stopped. Running it once more (what it "
                      f"stored is loaded, not computed again) ...", flush=True)
                stalled = what
                continue
            stalled = None  # the error says it
            row["status"] = "failed"
            row["error"] = (f"{what} on both tries (output: {out_dir / notebook.name}); a cell that needs "
                            f"longer: --cell-timeout SECONDS (0: none)")
        except Exception as err:  # papermill raises PapermillExecutionError; keep going with the rest
            if getattr(err, "ename", None) == "KeyboardInterrupt":  # Ctrl-C reached the kernel too
                raise KeyboardInterrupt from None
            row["status"] = "failed"
            # the whole last line: it may end with the command that remakes a result, to be copied
            row["error"] = str(err).strip().splitlines()[-1] if str(err).strip() else type(err).__name__
        break
    if stalled:
        second = "ran through" if row["status"] == "ran" else "failed"
        row["note"] = f"the first try stopped after {stalled}; the second {second}"
    row["wall_s"] = time.perf_counter() - start
    if row["status"] == "ran":
        path = manifest_path(notebook, profile, root)
        meta = {"notebook": notebook.name, "profile": profile, "status": "ok",
                "fingerprint": ran, "results": _stored(path.parent), "device": device,
                "wall_time_s": round(row["wall_s"], 1),
                "finished": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
        try:
            results.atomic_write_bytes(path, (json.dumps(meta, indent=1) + "\n").encode())
        except OSError as err:  # the notebook ran, but the next run cannot know: it runs again
            row["status"] = "failed"
            row["error"] = (f"it ran, but its manifest {path} cannot be written ({err.strerror or err}); "
                            f"make {path.parent} writable")
    return row


def _check_notebook(notebook: Path) -> None:
    """Fail with a ``ValueError`` naming ``notebook`` unless nbformat reads it as a notebook."""
    import nbformat

    try:
        nbformat.read(notebook, as_version=4)
    except Exception as err:  # not JSON, or JSON that is no notebook (nbformat's errors vary)
        lines = str(err).strip().splitlines() or [type(err).__name__]
        raise ValueError(f"{notebook} is not a notebook nbformat can read ({lines[0][:200]}); give notebooks, "
                         f"e.g. notebooks/weight_masks.ipynb") from None


def run(notebooks: list[Path], profile: str, out: Path, *, force: bool = False,
        root: Path | None = None, rows: list[dict] | None = None,
        threads: int | None = None, cell_timeout: float | None = None) -> list[dict]:
    """Run (or skip) each notebook in turn and return the summary rows (appended to ``rows`` as
    they finish, when given, so that a caller interrupted midway still has them); ``threads``:
    torch's CPU threads in the kernels (default: torch's own choice); ``cell_timeout``: seconds a
    cell may run (default: the profile's ``CELL_TIMEOUT``; 0: no limit). Fails with a
    ``PermissionError`` before running anything when a notebook to run cannot write its results
    folder."""
    import torch

    profile = profiles.resolve(profile)
    if cell_timeout is None:
        cell_timeout = CELL_TIMEOUT[profile]
    elif isinstance(cell_timeout, bool) or not isinstance(cell_timeout, (int, float)) or not cell_timeout >= 0:
        raise ValueError(f"cell_timeout={cell_timeout!r} is not valid; give seconds >= 0 (0: no timeout)")
    if threads is not None:
        profiles.check_int("threads", threads, 1)
        os.environ["OMP_NUM_THREADS"] = str(threads)  # the kernels' torch reads it at import
        torch.set_num_threads(threads)
    missing = [str(nb) for nb in notebooks if not nb.is_file()]
    if missing:
        raise FileNotFoundError(f"no such notebook: {', '.join(missing)}")
    other = [str(nb) for nb in notebooks if nb.suffix != ".ipynb"]
    if other:
        raise ValueError(f"{other[0]} is not a notebook (.ipynb); give notebooks, e.g. notebooks/weight_masks.ipynb")
    for nb in notebooks:  # before a store folder is made for it
        _check_notebook(nb)
    root = Path(root).resolve() if root else results.default_root()
    os.environ[results.ROOT_ENV] = str(root)  # the kernels store where the manifest goes
    device = describe(pick_device(quiet=True))
    print(f"device: {device}" + ("" if threads else "; choose the CPU threads with --threads"),
          flush=True)
    rows = [] if rows is None else rows
    reasons = {nb: None if force else stale_reason(nb, profile, root) for nb in notebooks}
    for nb in notebooks:  # before anything runs: each notebook to run writes its results and manifest there
        if force or reasons[nb] is not None:
            folder = manifest_path(nb, profile, root).parent
            check_writable(folder)
            results.check_space(folder, space_needed(nb, root), f"running {nb.name} at profile {profile}")
    for nb in notebooks:
        reason = reasons[nb]
        if not force and reason is None:
            rows.append({"notebook": nb.name, "status": "skipped (current)", "wall_s": 0.0, "device": device})
        else:
            print(f"running {nb.name} at profile {profile} ({reason or 'forced'}) ...", flush=True)
            rows.append(run_one(nb, profile, out / profile, device, root, cell_timeout or None))
    return rows


def table(rows: list[dict]) -> str:
    """The summary as a fixed-width text table."""
    head = ("notebook", "status", "wall time", "device")
    body = [(r["notebook"], r["status"], f"{r['wall_s']:.1f} s", r["device"]) for r in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body)]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths))
    out = [line(head), line(["-" * w for w in widths]), *map(line, body)]
    out += [f"{r['notebook']}: {r['note']}" for r in rows if r.get("note")]
    out += [f"{r['notebook']}: {r['error']}" for r in rows if r.get("error")]  # never cut: it may end in a command
    return "\n".join(out)


def _run_jobs(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``--executor``: every missing result of the notebooks' chapters as a job (:mod:`modlib.jobs`)."""
    from modlib import jobs

    try:
        profile = profiles.resolve(args.profile)
        chapters = [nb.stem for nb in args.notebooks] or list(jobs.CHAPTERS)
        report = jobs.run(chapters, profile, executor=args.executor, workers=args.workers or 1, threads=args.threads,
                          out=args.out, slurm=jobs.slurm_options(args), dry_run=args.dry_run)
    except (ValueError, OSError) as err:
        parser.error(str(err))
    except KeyboardInterrupt:
        _quiet_dead_kernel()
        print("interrupted: every result stored so far is kept; run the same command again to go on", flush=True)
        return 130
    print(jobs.summary(report))
    if all(r["status"] in ("stored", "made") for r in report.values()):
        named = "".join(f" {nb}" for nb in args.notebooks)
        print(f"every result is stored: python -m modlib.batch --profile {profile}{named} draws the notebooks from the store")
    return 1 if any(r["status"] == "failed" for r in report.values()) else 0


def _count(name: str):
    """An argparse type: a whole number >= 1, refused naming the flag and the value."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < 1:
            shown = repr(text) if value is None else text
            raise argparse.ArgumentTypeError(f"{name}={shown} is not valid; give a whole number of at least 1")
        return value
    return parse


def _seconds(text: str) -> float:
    """An argparse type: seconds >= 0 (0: no timeout)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"cell-timeout={text} is not valid; give seconds >= 0 (0: no timeout)")
    return int(value) if value.is_integer() else value


# Where each flag applies: without --executor (the notebooks run with papermill), or with which executor.
NOTEBOOK_RUN = None
APPLIES = {"cell_timeout": (NOTEBOOK_RUN,), "threads": (NOTEBOOK_RUN, "local"), "workers": ("local",),
           "dry_run": ("local", "slurm"), "partition": ("slurm",), "gpus": ("slurm",), "time": ("slurm",),
           "mem": ("slurm",), "cpus": ("slurm",), "slurm_config": ("slurm",)}


def _flags_that_do_not_apply(args: argparse.Namespace) -> str | None:
    """Why some flags given do not apply to this run (``None``: they all do), grouped by where they apply."""
    groups: dict[tuple, list[str]] = {}
    for name, where in APPLIES.items():
        if getattr(args, name) not in (None, False) and args.executor not in where:
            groups.setdefault(where, []).append("--" + name.replace("_", "-"))
    if not groups:
        return None
    reasons = []
    for where, flags in groups.items():
        verb = "applies" if len(flags) == 1 else "apply"
        executors = " or ".join(w for w in where if w)
        place = " or ".join((["without --executor"] if NOTEBOOK_RUN in where else [])
                            + ([f"with --executor {executors}"] if executors else []))
        reasons.append(f"{', '.join(flags)} only {verb} {place}")
    run = f"--executor {args.executor}" if args.executor else "without --executor the notebooks run with papermill"
    return f"{'; '.join(reasons)} ({run}); leave {'it' if sum(map(len, groups.values())) == 1 else 'them'} out"


def _quiet_dead_kernel() -> None:
    """After Ctrl-C: the same SIGINT can kill the kernel while nbclient still awaits its reply, and
    the task that raised ``DeadKernelError`` is never awaited again, so asyncio would print its
    traceback at exit. The interruption's own message says what happened; keep that one."""
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m modlib.batch", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks to run (default: every notebook in notebooks/)")
    parser.add_argument("--profile", default=None, help=f"one of {', '.join(profiles.PROFILES)} "
                        f"(default: ${profiles.ENV_VAR}, then 'default')")
    parser.add_argument("--out", type=Path, default=Path("_build/batch"), help="output folder")
    parser.add_argument("--force", action="store_true", help="run even notebooks whose results are current")
    parser.add_argument("--threads", type=_count("threads"), default=None,
                        help="torch's CPU threads in the kernels, or in each local job (default: torch's choice)")
    parser.add_argument("--cell-timeout", type=_seconds, default=None, metavar="SECONDS",
                        help="seconds a cell may run before its notebook is stopped and run once more (default "
                             "per profile: " + ", ".join(f"{p} {'none' if t is None else f'{t} s'}"
                                                         for p, t in CELL_TIMEOUT.items()) + "; 0: none)")
    jobs_ = parser.add_argument_group("one job per stored result (modlib.jobs) instead of the notebooks")
    jobs_.add_argument("--executor", choices=("local", "slurm"), default=None,
                       help="run every missing result as a job: local processes, or SLURM jobs through submitit")
    jobs_.add_argument("--workers", type=_count("workers"), default=None, help="local jobs at a time (default 1)")
    jobs_.add_argument("--dry-run", action="store_true", help="only report what is stored, running, failed and left")
    jobs_.add_argument("--partition", help="SLURM partition")
    jobs_.add_argument("--gpus", type=_count("gpus"), help="SLURM GPUs per job (a job computes on one)")
    jobs_.add_argument("--time", type=_count("time"), help="SLURM time limit per job, minutes (required)")
    jobs_.add_argument("--mem", type=_count("mem"), help="SLURM memory per job, GB")
    jobs_.add_argument("--cpus", type=_count("cpus"), help="SLURM CPUs per job")
    jobs_.add_argument("--slurm-config", type=Path, help="TOML file of submitit SLURM parameters "
                       "(account, qos, setup, ...); the flags above override it")
    args = parser.parse_args(argv)
    if args.executor and args.force:
        parser.error("--force does not apply to --executor: delete a stored result to have it computed again")
    stray = _flags_that_do_not_apply(args)
    if stray:
        parser.error(stray)
    if args.executor:
        return _run_jobs(parser, args)
    rows: list[dict] = []
    try:
        profile = profiles.resolve(args.profile)
        notebooks = args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb"))
        run(notebooks, profile, args.out, force=args.force, rows=rows, threads=args.threads,
            cell_timeout=args.cell_timeout)
    except (ValueError, OSError) as err:  # a bad value, a missing notebook, a results folder not writable
        parser.error(str(err))
    except KeyboardInterrupt:
        _quiet_dead_kernel()
        done = {r["notebook"] for r in rows}
        left = [nb.name for nb in notebooks if nb.name not in done]
        if rows:
            print(table(rows))
        print(f"interrupted: {len(done)} of {len(notebooks)} notebooks done; not finished: {', '.join(left)}. "
              f"Every result stored so far is kept; run the same command again to resume.", flush=True)
        return 130
    print(table(rows))
    return 1 if any(r["status"] == "failed" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
