"""Run the book's notebooks in batch with papermill.

    python -m modlib.batch --profile full [NOTEBOOK ...] [--out DIR] [--force] [--threads N]
    python -m modlib.batch --profile paper --executor local|slurm [--workers N] [SLURM options] [NOTEBOOK ...]

Each notebook runs with ``-p profile PROFILE`` into ``DIR/PROFILE/`` (default ``_build/batch``).
A notebook is skipped when its results are current: the manifest
``<results root>/<profile>/<notebook stem>/_batch.json`` written after its last successful run
records a fingerprint of the notebook's code cells, the ``modlib`` sources and the profile, and the
checksum of every result stored in that folder; the fingerprint still matches, and every one of
those results is still there, unchanged, and reads back (:func:`modlib.results.read`). An
interrupted run resumes: finished notebooks are skipped, and inside an unfinished one every
experiment already stored is loaded instead of recomputed (:func:`modlib.results.fetch`). The run
ends with a table of notebook, status, wall time and device, also after Ctrl-C.

On a CPU, ``--threads N`` sets how many threads torch uses in the notebooks' kernels (through
``$OMP_NUM_THREADS``); small models on a shared machine can run many times slower with more threads
than cores free, so choose it deliberately (1 when anything else runs). The run prints the thread
count used, and every stored result's device says it.

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
import os
import sys
import time
from pathlib import Path

from modlib import profiles, results
from modlib.runtime import describe, pick_device

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
MODLIB_DIR = Path(__file__).resolve().parent


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
        status, recorded, listed = meta["status"], meta["fingerprint"], meta["results"]
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


def _kernel_manager(log: Path):
    """A kernel manager whose kernels write their own stderr (start-up and shutdown messages, not the
    cells' output, which the notebook keeps) to ``log`` instead of this terminal."""
    from jupyter_client.manager import AsyncKernelManager

    class LoggedKernelManager(AsyncKernelManager):
        async def _async_launch_kernel(self, kernel_cmd, **kw):
            with log.open("ab") as f:  # the kernel process keeps its own copy of the file handle
                await super()._async_launch_kernel(kernel_cmd, **{**kw, "stderr": f})

    return LoggedKernelManager


def run_one(notebook: Path, profile: str, out_dir: Path, device: str, root: Path | None = None) -> dict:
    """Execute one notebook with papermill into ``out_dir`` (its kernel's log beside it); returns its
    row of the summary table."""
    import papermill

    out_dir = out_dir.resolve()  # papermill runs the notebook from its own folder
    out_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    row = {"notebook": notebook.name, "device": device}
    try:
        papermill.execute_notebook(str(notebook), str(out_dir / notebook.name),
                                   parameters={"profile": profile}, cwd=str(notebook.parent),
                                   progress_bar=False, kernel_name="python3",
                                   kernel_manager_class=_kernel_manager(out_dir / f"{notebook.stem}.kernel.log"))
        row["status"] = "ran"
    except Exception as err:  # papermill raises PapermillExecutionError; keep going with the rest
        if getattr(err, "ename", None) == "KeyboardInterrupt":  # Ctrl-C reached the kernel too
            raise KeyboardInterrupt from None
        row["status"] = "failed"
        row["error"] = str(err).strip().splitlines()[-1][:200] if str(err).strip() else type(err).__name__
    row["wall_s"] = time.perf_counter() - start
    if row["status"] == "ran":
        path = manifest_path(notebook, profile, root)
        meta = {"notebook": notebook.name, "profile": profile, "status": "ok",
                "fingerprint": fingerprint(notebook, profile), "results": _stored(path.parent), "device": device,
                "wall_time_s": round(row["wall_s"], 1),
                "finished": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
        results.atomic_write_bytes(path, (json.dumps(meta, indent=1) + "\n").encode())
    return row


def run(notebooks: list[Path], profile: str, out: Path, *, force: bool = False,
        root: Path | None = None, rows: list[dict] | None = None,
        threads: int | None = None) -> list[dict]:
    """Run (or skip) each notebook in turn and return the summary rows (appended to ``rows`` as
    they finish, when given, so that a caller interrupted midway still has them); ``threads``:
    torch's CPU threads in the kernels (default: torch's own choice)."""
    import torch

    profile = profiles.resolve(profile)
    if threads is not None:
        profiles.check_int("threads", threads, 1)
        os.environ["OMP_NUM_THREADS"] = str(threads)  # the kernels' torch reads it at import
        torch.set_num_threads(threads)
    missing = [str(nb) for nb in notebooks if not nb.is_file()]
    if missing:
        raise FileNotFoundError(f"no such notebook: {', '.join(missing)}")
    root = Path(root).resolve() if root else results.default_root()
    os.environ[results.ROOT_ENV] = str(root)  # the kernels store where the manifest goes
    device = describe(pick_device(quiet=True))
    print(f"device: {device}" + ("" if threads else "; choose the CPU threads with --threads"),
          flush=True)
    rows = [] if rows is None else rows
    for nb in notebooks:
        reason = None if force else stale_reason(nb, profile, root)
        if not force and reason is None:
            rows.append({"notebook": nb.name, "status": "skipped (current)", "wall_s": 0.0, "device": device})
        else:
            print(f"running {nb.name} at profile {profile} ({reason or 'forced'}) ...", flush=True)
            rows.append(run_one(nb, profile, out / profile, device, root))
    return rows


def table(rows: list[dict]) -> str:
    """The summary as a fixed-width text table."""
    head = ("notebook", "status", "wall time", "device")
    body = [(r["notebook"], r["status"], f"{r['wall_s']:.1f} s", r["device"]) for r in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body)]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths))
    out = [line(head), line(["-" * w for w in widths]), *map(line, body)]
    out += [f"{r['notebook']}: {r['error']}" for r in rows if r.get("error")]
    return "\n".join(out)


def _run_jobs(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``--executor``: every missing result of the notebooks' chapters as a job (:mod:`modlib.jobs`)."""
    from modlib import jobs

    try:
        profile = profiles.resolve(args.profile)
        chapters = [nb.stem for nb in args.notebooks] or list(jobs.CHAPTERS)
        report = jobs.run(chapters, profile, executor=args.executor, workers=args.workers, threads=args.threads,
                          out=args.out, slurm=jobs.slurm_options(args), dry_run=args.dry_run)
    except (ValueError, OSError) as err:
        parser.error(str(err))
    except KeyboardInterrupt:
        print("interrupted: every result stored so far is kept; run the same command again to go on", flush=True)
        return 130
    print(jobs.summary(report))
    if all(r["status"] in ("stored", "made") for r in report.values()):
        named = "".join(f" {nb}" for nb in args.notebooks)
        print(f"every result is stored: python -m modlib.batch --profile {profile}{named} draws the notebooks from the store")
    return 1 if any(r["status"] == "failed" for r in report.values()) else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m modlib.batch", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks to run (default: every notebook in notebooks/)")
    parser.add_argument("--profile", default=None, help=f"one of {', '.join(profiles.PROFILES)} "
                        f"(default: ${profiles.ENV_VAR}, then 'default')")
    parser.add_argument("--out", type=Path, default=Path("_build/batch"), help="output folder")
    parser.add_argument("--force", action="store_true", help="run even notebooks whose results are current")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch's CPU threads in the kernels (default: torch's choice)")
    jobs_ = parser.add_argument_group("one job per stored result (modlib.jobs) instead of the notebooks")
    jobs_.add_argument("--executor", choices=("local", "slurm"), default=None,
                       help="run every missing result as a job: local processes, or SLURM jobs through submitit")
    jobs_.add_argument("--workers", type=int, default=1, help="local jobs at a time (default 1)")
    jobs_.add_argument("--dry-run", action="store_true", help="only report what is stored, running, failed and left")
    jobs_.add_argument("--partition", help="SLURM partition")
    jobs_.add_argument("--gpus", type=int, help="SLURM GPUs per job (a job computes on one)")
    jobs_.add_argument("--time", type=int, help="SLURM time limit per job, minutes (required)")
    jobs_.add_argument("--mem", type=int, help="SLURM memory per job, GB")
    jobs_.add_argument("--cpus", type=int, help="SLURM CPUs per job")
    jobs_.add_argument("--slurm-config", type=Path, help="TOML file of submitit SLURM parameters "
                       "(account, qos, setup, ...); the flags above override it")
    args = parser.parse_args(argv)
    if args.executor and args.force:
        parser.error("--force does not apply to --executor: delete a stored result to have it computed again")
    if args.executor:
        return _run_jobs(parser, args)
    rows: list[dict] = []
    try:
        profile = profiles.resolve(args.profile)
        notebooks = args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb"))
        run(notebooks, profile, args.out, force=args.force, rows=rows, threads=args.threads)
    except (ValueError, FileNotFoundError) as err:
        parser.error(str(err))
    except KeyboardInterrupt:
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
