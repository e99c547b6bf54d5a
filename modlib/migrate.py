"""Carry stored results over a change of their config that only writes down what their name says.

    python -m modlib.migrate [--profile full] [--root DIR] [--dry-run] [CHAPTER ...]

A result's config must tell it from every other result of its chapter: otherwise a copy of one
result's files under another's name (chapter 5's ``sv-plural-1`` over ``sv-plural-2``) would stand
for it, one seed counted twice. Chapters 5 and 6 once left the base model's seed (and, in chapter 5,
whether it was trained; in chapter 6, its init) out of the config, because the name held it; their
code now puts it in (:func:`modlib.structural_compositionality.experiment.identity`,
:func:`modlib.pretraining_consistency.experiment.identity`). That makes every stored result of
theirs stale by its config, though its numbers are the ones the new config asks for. Recomputing
them would take hours; this command instead adds the fields to each stored result's config, only
where the result itself proves them:

1. the result is stored under a name of the chapter's job list at the profile, and its ``.json``
   records that name (not a copy of another result's files);
2. each field is what the chapter's ``identity(name)`` gives, and where the config or the metrics
   already record it (``metrics["seed"]``, ``metrics["trained"]``), they agree; any disagreement is
   refused, naming both values, and then nothing is written; a field the name cannot hold but the
   result's own metrics record (chapter 3's data source, :data:`RECORDED`: ``metrics["data"]`` is
   the line :func:`modlib.data.digits.mnist` printed while it computed) is what they record;
3. a stored result that read a migrated one (``depends``: chapter 5's untrained control reads its
   trained twin) has that dependency's checksum replaced only where it is the checksum of the
   result before the migration, i.e. the result it read differs by the added fields alone;
4. afterwards every result written must load as current by the chapter's code as it is now; if one
   does not, every file is put back as it was and the command fails.

Each rewritten result keeps what was done and why in ``meta["migrated"]``, and is written as
:mod:`modlib.restamp` writes a re-stamped one (:func:`modlib.results.write_meta`: the ``.json``'s
checksum of itself recomputed; the ``.npz`` is not touched). Only the ``.json`` changes: rewrite the
index of stored results afterwards (``python -m modlib.remote index``) and commit both.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
from pathlib import Path
from typing import Callable

from modlib import jobs, profiles, results
from modlib.data import digits
from modlib.pretraining_consistency import experiment as pc
from modlib.resists_at_scale import experiment as rs
from modlib.structural_compositionality import experiment as sc

# The chapters whose configs gained the fields that tell one result from another, and the function
# that gives them from a result's name ({} where the config carried them already).
IDENTITY: dict[str, Callable[[str], dict]] = {sc.CHAPTER: sc.identity, pc.CHAPTER: pc.identity}


def mnist_source(name: str, metrics: dict) -> dict:
    """Chapter 3's data source (issue 55): an MNIST-pairs result's config records which digits it
    learnt from (``"data"``: :data:`modlib.data.digits.MNIST_SOURCES`), as its metrics did already
    (``metrics["data"]``, the line :func:`modlib.data.digits.mnist` printed); a SCAN result reads
    no digits. Raises ``ValueError`` where the metrics name no source."""
    if not name.startswith("mnist"):
        return {}
    if "data" not in metrics:
        raise ValueError("its metrics record no data source")
    return {"data": digits.source_named(metrics["data"])}


# The chapters whose configs gained a field the name cannot hold but the result's metrics record, and
# the function that reads it from (name, metrics).
RECORDED: dict[str, Callable[[str, dict], dict]] = {rs.CHAPTER: mnist_source}
CHAPTERS = [*IDENTITY, *(c for c in RECORDED if c not in IDENTITY)]


class MigrationError(ValueError):
    """A stored result cannot be proven to be the result its new config describes."""


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def plan(chapters: list[str], profile: str, root: Path | None = None) -> dict[str, dict]:
    """``{"chapter/name": {field: value}}``: the fields to add to each stored result of ``chapters``
    at ``profile`` whose config lacks them (steps 1-2 of the module's docstring). Raises
    :class:`MigrationError` naming every result whose name, config or metrics disagree."""
    root = Path(root or results.default_root())
    todo, refused = {}, []
    for job in jobs.jobs(chapters, profile):
        chapter, _, name = job.partition("/")
        if chapter not in IDENTITY and chapter not in RECORDED:
            continue
        path = root / profile / chapter / f"{name}.json"
        if not path.exists():
            continue
        stored = results.read(path)  # an unreadable result raises, naming the file
        key = f"{profile}/{chapter}/{name}"
        if results.key_of(stored) != key:
            refused.append(f"{path} holds the result {results.key_of(stored)}, not {key}")
            continue
        fields = IDENTITY[chapter](name) if chapter in IDENTITY else {}
        try:
            recorded = RECORDED[chapter](name, stored.metrics) if chapter in RECORDED else {}
        except ValueError as err:
            refused.append(f"{key}: {err}")
            continue
        for field, value in recorded.items():
            if field in stored.config and stored.config[field] != value:
                refused.append(f"{key}: its config records {field} {stored.config[field]!r}, its metrics "
                               f"say {field} {value!r}")
        for field, value in fields.items():
            for where, record in (("config records", stored.config), ("metrics record", stored.metrics)):
                if field in record and record[field] != value:
                    refused.append(f"{key}: its {where} {field} {record[field]!r}, its name says "
                                   f"{field} {value!r}")
        missing = {f: v for f, v in {**fields, **recorded}.items() if f not in stored.config}
        if missing:
            todo[f"{chapter}/{name}"] = missing
    if refused:
        raise MigrationError("not migrated (nothing was written): " + "; ".join(refused))
    return todo


def _proof(job: str, profile: str, fields: dict, metrics: dict) -> str:
    chapter, _, name = job.partition("/")
    named = {f: v for f, v in fields.items() if f in (IDENTITY[chapter](name) if chapter in IDENTITY else {})}
    said = []
    if named:
        seen = [f for f in named if f in metrics]
        also = (f"; its metrics record the same {', '.join(seen)}" if seen
                else "; its metrics record none of them")
        said.append(f"{json.dumps(named, sort_keys=True)}: what its name {name!r} (a job of {chapter} at "
                    f"profile {profile}) says{also}")
    for f, v in fields.items():
        if f not in named:
            said.append(f"{json.dumps({f: v})}: what its metrics record ({f}: {metrics.get(f)!r})")
    return f"added to the config {'; '.join(said)}; numbers unchanged"


def migrate(chapters: list[str], profile: str = "full", root: Path | None = None,
            dry_run: bool = False) -> dict:
    """Add the identity fields to the stored results of ``chapters`` at ``profile`` (see the module's
    docstring); returns ``{"migrated": [job, ...], "depends": [job, ...]}`` (the results whose
    dependency checksums were carried over). Raises :class:`MigrationError` and writes nothing (or
    puts every file back) when a step fails."""
    profile = profiles.resolve(profile)
    root = Path(root or results.default_root())
    todo = plan(chapters, profile, root)
    report = {"migrated": sorted(todo), "depends": []}
    if dry_run or not todo:
        return report
    originals: dict[Path, bytes] = {}
    metas: dict[Path, dict] = {}
    carried: dict[str, tuple[str, str]] = {}  # "profile/chapter/name" -> (content before, after)
    for job, fields in todo.items():
        chapter, _, name = job.partition("/")
        path = root / profile / chapter / f"{name}.json"
        stored = results.read(path)
        meta = json.loads(path.read_text())
        meta["config"] = {**stored.config, **fields}
        meta["config_hash"] = results.config_hash(meta["config"])
        meta["migrated"] = [*meta.get("migrated", []), {
            "added": fields, "reason": _proof(job, profile, fields, stored.metrics), "when": _now()}]
        after = results.Result(stored.name, meta["config"], stored.metrics, {}, meta)
        carried[results.key_of(stored)] = (results.content(stored), results.content(after))
        originals[path], metas[path] = path.read_bytes(), meta
    for path in sorted((root / profile).glob("*/*.json")):  # step 3: who read a migrated result
        if path.name.startswith("_"):
            continue
        meta = metas.get(path) or json.loads(path.read_text())
        depends = dict(meta.get("depends", {}))
        moved = [k for k, v in depends.items() if k in carried and v == carried[k][0]]
        if not moved:
            continue
        for k in moved:
            depends[k] = carried[k][1]
        meta["depends"] = depends
        if path not in metas:
            results.read(path)  # readable as it is, before it is rewritten
            originals[path] = path.read_bytes()
            meta["migrated"] = [*meta.get("migrated", []), {"reason": "", "when": _now()}]
        note = (f"it reads {', '.join(sorted(moved))}, whose config was migrated (its numbers unchanged): "
                f"the checksum of what it read before the migration carried over to it after")
        meta["migrated"][-1]["reason"] = "; ".join(r for r in (meta["migrated"][-1]["reason"], note) if r)
        metas[path] = meta
        report["depends"].append(f"{path.parent.name}/{path.stem}")
    try:
        for path, meta in metas.items():
            results.write_meta(path, meta)
        _check_current({f"{p.parent.name}/{p.stem}" for p in metas}, profile, root)
    except BaseException:
        for path, data in originals.items():
            results.atomic_write_bytes(path, data)
        raise
    report["depends"].sort()
    return report


def _check_current(written: set[str], profile: str, root: Path) -> None:
    """Step 4: every result in ``written`` (``chapter/name``) loads as current by its chapter's code."""
    table = jobs.jobs(sorted({j.partition("/")[0] for j in written} & set(jobs.CHAPTERS)), profile)
    with jobs.store_at(root):
        stale = sorted(j for j in written if j not in table or not jobs.is_stored(table[j][1]))
    if stale:
        raise MigrationError(f"after the migration the chapter's code does not load {', '.join(stale)} as current "
                             f"(every file was put back): the new config asks for more than the identity fields")


def main(argv: list[str] | None = None) -> int:
    """Add the fields that tell one result from another to the stored results' configs (see the
    module's docstring)."""
    parser = argparse.ArgumentParser(prog="python -m modlib.migrate", description=main.__doc__)
    parser.add_argument("chapters", nargs="*", help=f"default: {', '.join(CHAPTERS)}")
    parser.add_argument("--profile", default="full")
    parser.add_argument("--root", default=None, help="the results store (default: the checkout's)")
    parser.add_argument("--dry-run", action="store_true", help="only list what would be migrated")
    args = parser.parse_args(argv)
    for chapter in args.chapters:
        if chapter not in CHAPTERS:
            parser.error(f"chapter {chapter!r} has no identity fields (or recorded data source) to migrate; "
                         f"choose from {', '.join(CHAPTERS)}")
    try:
        profile = profiles.resolve(args.profile)
    except ValueError as err:
        parser.error(f"--profile: {err}")
    try:
        report = migrate(args.chapters or CHAPTERS, profile, Path(args.root).resolve() if args.root else None,
                         args.dry_run)
    except MigrationError as err:
        print(err, file=sys.stderr)
        return 1
    verb = "would migrate" if args.dry_run else "migrated"
    print(f"{verb} {len(report['migrated'])}: {', '.join(report['migrated']) or '-'}")
    if report["depends"]:
        print(f"dependency checksums carried over in {len(report['depends'])}: {', '.join(report['depends'])}")
    if report["migrated"] and not args.dry_run and profile == "full":
        print("now rewrite the index of stored results: python -m modlib.remote index")
    return 0


if __name__ == "__main__":
    sys.exit(main())
