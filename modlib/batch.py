"""Run the book's notebooks in batch with papermill.

    python -m modlib.batch --profile full [NOTEBOOK ...] [--out DIR] [--force]

Each notebook runs with ``-p profile PROFILE`` into ``DIR/PROFILE/`` (default ``_build/batch``).
A notebook is skipped when its results are current: the manifest
``<results root>/<profile>/<notebook stem>/_batch.json`` written after its last successful run
records a fingerprint of the notebook's code cells, the ``modlib`` sources and the profile, and that
fingerprint still matches. An interrupted run resumes: finished notebooks are skipped, and inside an
unfinished one every experiment already stored is loaded instead of recomputed
(:func:`modlib.results.fetch`). The run ends with a table of notebook, status, wall time and device.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
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
    for src in sorted(MODLIB_DIR.glob("*.py")):
        h.update(src.name.encode() + src.read_bytes())
    return h.hexdigest()[:16]


def manifest_path(notebook: Path, profile: str, root: Path | None = None) -> Path:
    return Path(root or results.default_root()) / profile / notebook.stem / "_batch.json"


def is_current(notebook: Path, profile: str, root: Path | None = None) -> bool:
    path = manifest_path(notebook, profile, root)
    if not path.exists():
        return False
    meta = json.loads(path.read_text())
    return meta.get("status") == "ok" and meta.get("fingerprint") == fingerprint(notebook, profile)


def run_one(notebook: Path, profile: str, out_dir: Path, device: str, root: Path | None = None) -> dict:
    """Execute one notebook with papermill; returns its row of the summary table."""
    import papermill

    out_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    row = {"notebook": notebook.name, "device": device}
    try:
        papermill.execute_notebook(str(notebook), str(out_dir / notebook.name),
                                   parameters={"profile": profile}, cwd=str(notebook.parent),
                                   progress_bar=False, kernel_name="python3")
        row["status"] = "ran"
    except Exception as err:  # papermill raises PapermillExecutionError; keep going with the rest
        row["status"] = "failed"
        row["error"] = str(err).strip().splitlines()[-1][:200] if str(err).strip() else type(err).__name__
    row["wall_s"] = time.perf_counter() - start
    if row["status"] == "ran":
        meta = {"notebook": notebook.name, "profile": profile, "status": "ok",
                "fingerprint": fingerprint(notebook, profile), "device": device,
                "wall_time_s": round(row["wall_s"], 1),
                "finished": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
        results.atomic_write_bytes(manifest_path(notebook, profile, root),
                                   (json.dumps(meta, indent=1) + "\n").encode())
    return row


def run(notebooks: list[Path], profile: str, out: Path, *, force: bool = False,
        root: Path | None = None) -> list[dict]:
    """Run (or skip) each notebook in turn and return the summary rows."""
    profile = profiles.resolve(profile)
    missing = [str(nb) for nb in notebooks if not nb.is_file()]
    if missing:
        raise FileNotFoundError(f"no such notebook: {', '.join(missing)}")
    device = describe(pick_device(quiet=True))
    rows = []
    for nb in notebooks:
        if not force and is_current(nb, profile, root):
            rows.append({"notebook": nb.name, "status": "skipped (current)", "wall_s": 0.0, "device": device})
        else:
            print(f"running {nb.name} at profile {profile} ...", flush=True)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m modlib.batch", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks to run (default: every notebook in notebooks/)")
    parser.add_argument("--profile", default=None, help=f"one of {', '.join(profiles.PROFILES)} "
                        f"(default: ${profiles.ENV_VAR}, then 'default')")
    parser.add_argument("--out", type=Path, default=Path("_build/batch"), help="output folder")
    parser.add_argument("--force", action="store_true", help="run even notebooks whose results are current")
    args = parser.parse_args(argv)
    try:
        profile = profiles.resolve(args.profile)
        notebooks = args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb"))
        rows = run(notebooks, profile, args.out, force=args.force)
    except (ValueError, FileNotFoundError) as err:
        parser.error(str(err))
    print(table(rows))
    return 1 if any(r["status"] == "failed" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
