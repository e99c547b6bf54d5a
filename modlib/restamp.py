"""Carry stored results over a code change that computes the same numbers, by proving it.

    python -m modlib.restamp [--profile full] [--against REV] [--dry-run] [--relabel OLD=NEW]
                             [--rule-only] [--unproven REASON] [CHAPTER ...]

The store's fingerprint (:mod:`modlib.fingerprint`) already sees through renaming locals, moving
code and deleting code nothing calls. A change it cannot see through (a bug fix that no stored
number exercises, a refactor that shares code between two chapters) makes results stale although
they may be right. This command decides, chapter by chapter:

1. which stored results of ``--profile`` the chapter's code now finds stale only because of their
   code fingerprint or the stored results they read (a changed config is never carried over);
2. that the code at ``REV`` (default ``HEAD``, the last commit) is the code that made them: the
   chapter's jobs at ``REV`` load each of them from the store as current;
3. that the code at ``REV`` and the working tree compute the same numbers: every ``smoke`` result
   of the chapter (its own experiments, on the CPU, one thread) is computed by both, in separate
   processes, and every config, metric and array is compared bit for bit.

``--rule-only`` carries results over a change of the fingerprint's rule (:mod:`modlib.fingerprint`)
itself: step 3 is replaced by checking that every file of ``modlib`` that differs from ``REV`` is a
module that computes nothing (:data:`modlib.fingerprint.NOT_FOLLOWED`), so the code that computes
the results is the code at ``REV``, byte for byte.

``--relabel OLD=NEW`` carries over a change of the labels a result's metrics hold (a row name, say):
step 3 then compares the old smoke results with ``OLD`` written ``NEW`` in every string of their
metrics, and the same renaming is applied to the stale results before they are stamped.

Only when all three hold are the stale results stamped with the present fingerprint, the evidence
kept in their ``meta["restamped"]`` (:func:`modlib.results.restamping`); otherwise the command says
which result differs and how to remake it. The proof covers only the kinds of result the smoke
profile computes (:func:`kind`: a result's name with its numbers written ``#``): a stale result of
another kind (chapter 5's Number-Contact, which smoke does not compute) is refused and named, unless
``--unproven REASON`` carries it, the reason kept in the result. Even within a kind, smoke computes
at a small size, and a change that acts only above that size (a branch on the number of seeds, or on
seed 64 and later) is not caught: a stale result whose config is larger than every one the proof
computed of its kind (:func:`beyond`: a whole number or a list's length above the largest the proof
ran, ``seeds 100 > 2``) is refused and named too, and carried only with ``--unproven REASON`` after
reading the diff. At ``--profile smoke``, and with ``--rule-only`` (the code that computes is the same
byte for byte), nothing is larger than what was proven.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import torch

from modlib import fingerprint, jobs, profiles, remote, results

REPO = Path(__file__).resolve().parents[1]

# Run in a subprocess with PYTHONPATH set to one tree: the chapter's smoke jobs into $MODLIB_RESULTS,
# or (with --check) whether each named job loads from the real store as current.
_SCRIPT = """
import json, sys, torch
from modlib import jobs, results
chapter, profile, names = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
todo = jobs.jobs([chapter], profile)
if names is None:
    for name, (needs, compute) in todo.items():
        compute(torch.device("cpu"))
else:
    print(json.dumps({n: jobs.is_stored(todo[n][1]) if n in todo else False for n in names}))
"""


def stale(chapter: str, profile: str) -> dict[str, str]:
    """``{job: why}`` for each stored result of ``chapter`` that is stale only by its code or the
    stored results it reads."""
    found = {}
    for name, (needs, compute) in jobs.jobs([chapter], profile).items():
        def note(stored, why, name=name):
            found[name] = why
            return None
        with results.restamping(note):
            try:
                compute(torch.device("cpu"))
            except results.StaleResultError:
                pass
    return found


def _tree(rev: str, into: Path) -> Path:
    """The package as committed at ``rev``, unpacked under ``into``."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "modlib"], check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=__import__("io").BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def _run(tree: Path, store: Path, args: list[str]) -> str:
    env = {**os.environ, "PYTHONPATH": str(tree), results.ROOT_ENV: str(store), "OMP_NUM_THREADS": "1",
           "MODLIB_DEVICE": "cpu", "TQDM_DISABLE": "1", results.FROM_STORE_ENV: ""}
    done = subprocess.run([sys.executable, "-c", _SCRIPT, *args], env=env, capture_output=True, text=True,
                          cwd=tree)
    if done.returncode != 0:
        raise RuntimeError(f"the code in {tree} failed: {done.stderr[-2000:]}")
    return done.stdout


def _results(folder: Path) -> dict[str, results.Result]:
    return {str(p.relative_to(folder)): results.read(p) for p in sorted(folder.rglob("*.json"))
            if not p.name.startswith("_")}


def relabel(value, labels: dict[str, str]):
    """``value`` (a result's metrics) with every string's ``old`` parts written ``new``."""
    if isinstance(value, str):
        for old, new in labels.items():
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [relabel(v, labels) for v in value]
    if isinstance(value, dict):
        return {relabel(k, labels): relabel(v, labels) for k, v in value.items()}
    return value


def compare(old: Path, new: Path, labels: dict[str, str] | None = None) -> str | None:
    """Where the results stored under ``old`` (their metrics relabelled by ``labels``) and ``new``
    differ (``None``: bit for bit the same). Results only under ``new`` are jobs the change added:
    nothing of the old code to compare them with, so they are left out; a result only under
    ``old`` (a job the change dropped or renamed) is a difference."""
    a, b = _results(old), _results(new)
    if a.keys() - b.keys():
        return f"results the working tree no longer makes: {sorted(a.keys() - b.keys())}"
    for key in a:
        x, y = a[key], b[key]
        if x.config != y.config:
            return f"{key}: configs differ"
        if json.dumps(relabel(x.metrics, labels or {}), sort_keys=True) != json.dumps(y.metrics, sort_keys=True):
            return f"{key}: metrics differ"
        if x.arrays.keys() != y.arrays.keys():
            return f"{key}: array names differ"
        for k in x.arrays:
            u, v = x.arrays[k], y.arrays[k]
            if u.dtype != v.dtype or u.shape != v.shape or u.tobytes() != v.tobytes():
                return f"{key}: array {k!r} differs"
    return None


def changed_files(rev: str) -> list[str]:
    """The files under ``modlib/`` of the working tree (untracked ones too) that differ from ``rev``."""
    def git(*args):
        done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)
        if done.returncode != 0:
            raise ValueError(f"--against {rev!r}: git cannot compare with it ({done.stderr.strip()})")
        return done.stdout.split()
    return sorted(set(git("diff", "--name-only", rev, "--", "modlib"))
                  | set(git("ls-files", "--others", "--exclude-standard", "--", "modlib")))


def computing_changes(rev: str) -> list[str]:
    """The files of :func:`changed_files` that belong to modules that may compute a result (all
    but :data:`modlib.fingerprint.NOT_FOLLOWED`)."""
    return [f for f in changed_files(rev)
            if not f.endswith(".py") or Path(f).stem not in fingerprint.NOT_FOLLOWED]


def prove(chapter: str, names: list[str], profile: str, rev: str, work: Path,
          labels: dict[str, str] | None = None, rule_only: bool = False) -> tuple[str, set[str]]:
    """The evidence that ``names`` (stale results of ``chapter`` at ``profile``) were made by the
    code at ``rev`` and that it computes the chapter's smoke results as the working tree does (or,
    ``rule_only``, that no module that computes differs from ``rev``), and ``{kind: [config, ...]}``
    for each :func:`kind` of result that evidence covers, with the configs the proof computed of it
    (``None``: at any size, as with ``rule_only``); raises ``ValueError`` saying what failed."""
    old = _tree(rev, work / "old")
    loaded = json.loads(_run(old, results.default_root(), [chapter, profile, json.dumps(names)]))
    not_current = [n for n, ok in loaded.items() if not ok]
    if not_current:
        raise ValueError(f"the code at {rev} does not load {', '.join(not_current)} as current either: "
                         f"they were not made by it; remake them")
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", rev], capture_output=True,
                            text=True).stdout.strip() or rev
    if rule_only:
        computing = computing_changes(rev)
        if computing:
            raise ValueError(f"--rule-only: files that may compute results differ from {rev}: "
                             f"{', '.join(computing)}; drop --rule-only to compare the smoke results")
        return (f"made by the code at {commit} (it loads this result as current); since then only modules "
                f"that compute nothing changed ({', '.join(changed_files(rev))}): the fingerprint's rule, "
                f"not the code that computes the result"), {kind(n): None for n in names}
    for which, tree in (("old", old), ("new", REPO)):
        _run(tree, work / f"store-{which}", [chapter, "smoke", "null"])
    difference = compare(work / "store-old" / "smoke", work / "store-new" / "smoke", labels)
    if difference:
        raise ValueError(f"the code at {rev} and the working tree compute different smoke results "
                         f"({difference}); remake the stale results")
    count = len(_results(work / "store-old" / "smoke"))
    added = len(_results(work / "store-new" / "smoke")) - count
    renamed = f", once its labels are renamed ({', '.join(f'{a!r} -> {b!r}' for a, b in labels.items())})" \
        if labels else ""
    also = f"; {added} more that only the re-stamping code makes were not compared" if added else ""
    kinds: dict[str, list[dict]] = {}
    for key, result in _results(work / "store-old" / "smoke").items():
        kinds.setdefault(kind(key.removesuffix(".json")), []).append(result.config)
    return (f"made by the code at {commit} (it loads this result as current), which computes the {count} smoke "
            f"results of {chapter} (of the kinds {', '.join(sorted(kinds))}) bit for bit as the code that "
            f"re-stamped it{renamed}{also}; at the smoke profile's sizes: a change that acts only at larger "
            f"ones (more seeds, say) is not covered"), kinds


def _sizes(config, prefix: str = "") -> dict[str, int]:
    """The sizes in a result's config: each whole number, and each list's length (nested configs'
    keys written ``outer.inner``)."""
    out = {}
    for key, value in (config or {}).items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out |= _sizes(value, f"{name}.")
        elif isinstance(value, (list, tuple)):
            out[name] = len(value)
        elif isinstance(value, int) and not isinstance(value, bool):
            out[name] = value
    return out


def beyond(config: dict, proven: list[dict]) -> list[str]:
    """Where a stale result's ``config`` is larger than every config the proof computed of its kind
    (``proven``): ``["seeds 100 > 2", ...]`` for each whole number, or list's length, above the
    largest the proof ran (a seed number counts: a change acting only on seed 64 and later is not
    caught by seeds 0 and 1). Empty: the proof ran it at this size."""
    ran = [_sizes(c) for c in proven]
    out = []
    for name, size in sorted(_sizes(config).items()):
        seen = [r[name] for r in ran if name in r]
        if seen and size > max(seen):
            out.append(f"{name} {size} > {max(seen)}")
    return out


def stored_config(name: str, profile: str) -> dict | None:
    """The config the stored result ``chapter/name`` records (``None``: not readable)."""
    try:
        return json.loads((results.default_root() / profile / f"{name}.json").read_text())["config"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def kind(job: str) -> str:
    """``chapter/kind`` of a job ``chapter/name`` (:func:`modlib.results.kind`: numbers written #)."""
    chapter, _, name = job.partition("/")
    return f"{chapter}/{results.kind(name)}"


def restamp(chapters: list[str], profile: str = "full", rev: str = "HEAD", dry_run: bool = False,
            labels: dict[str, str] | None = None, rule_only: bool = False, unproven: str | None = None) -> dict:
    """Re-stamp the stale results of ``chapters`` that :func:`prove` carries; returns
    ``{chapter: {"stale": [...], "restamped": [...], "refused": reason or None}}``. A stale result
    whose :func:`kind` the proof did not compute, or whose config is larger than every one the proof
    computed of its kind (:func:`beyond`: more seeds, say), is refused (and named), unless
    ``unproven`` gives the reason to carry it all the same, which its ``meta["restamped"]`` then
    keeps."""
    report = {}
    for chapter in chapters:
        found = stale(chapter, profile)
        entry = {"stale": sorted(found), "restamped": [], "refused": None}
        report[chapter] = entry
        if not found or dry_run:
            continue
        with tempfile.TemporaryDirectory() as work:
            try:
                reason, kinds = prove(chapter, sorted(found), profile, rev, Path(work), labels, rule_only)
            except ValueError as err:
                entry["refused"] = str(err)
                continue
        outside = sorted(n for n in found if kind(n) not in kinds)
        larger = {}  # the stale results of a proven kind whose sizes the proof did not reach
        for n in sorted(set(found) - set(outside)):
            if kinds[kind(n)] is not None:
                config = stored_config(n, profile)
                larger[n] = beyond(config, kinds[kind(n)]) if config is not None else ["its config (unreadable)"]
        larger = {n: b for n, b in larger.items() if b}
        if (outside or larger) and not unproven:
            why = []
            if outside:
                why.append(f"the proof computed no result of the kind of {', '.join(outside)}")
            if larger:
                why.append("the proof computed " + "; ".join(f"{n} at a smaller size only ({', '.join(b)})"
                                                             for n, b in larger.items()))
            entry["refused"] = (f"{'; '.join(why)}: a change acting only beyond what the proof ran would not be "
                                f"caught; remake them, or read the diff and carry them with --unproven REASON")
            found = {n: why for n, why in found.items() if n not in outside and n not in larger}
        reasons = {n: reason + (f"; its kind ({kind(n)}) was not computed by the proof, carried because: "
                                f"{unproven}" if n in outside else
                                f"; the proof computed its kind at a smaller size only ({', '.join(larger[n])}), "
                                f"carried because: {unproven}" if n in larger else "") for n in found}
        todo = jobs.jobs([chapter], profile)
        if labels:  # the proven renaming, applied to the stale results before they are stamped
            for name in found:
                path = results.default_root() / profile / f"{name}.json"
                meta = json.loads(path.read_text())
                meta["metrics"] = relabel(meta["metrics"], labels)
                results.write_meta(path, meta)
        for name in sorted(found):
            with results.restamping(lambda stored, why, name=name: reasons[name]):
                todo[name][1](torch.device("cpu"))
            entry["restamped"].append(name)
    if profile == remote.PROFILE and any(entry["restamped"] for entry in report.values()):
        remote.write_index()  # stamping rewrote files whose checksums the pinned index records
    return report


def main(argv: list[str] | None = None) -> int:
    """Carry stored results over a change that computes the same numbers (see the module's docstring)."""
    parser = argparse.ArgumentParser(prog="python -m modlib.restamp", description=main.__doc__)
    parser.add_argument("chapters", nargs="*", help=f"default: all of {', '.join(jobs.CHAPTERS)}")
    parser.add_argument("--profile", default="full")
    parser.add_argument("--against", default="HEAD", help="the commit whose code made the results")
    parser.add_argument("--dry-run", action="store_true", help="only list the stale results")
    parser.add_argument("--relabel", action="append", default=[], metavar="OLD=NEW",
                        help="a label the new code writes differently (e.g. '* mask=× mask'): proven on the "
                             "smoke results, then applied to the stale results' metrics")
    parser.add_argument("--rule-only", action="store_true",
                        help="the change is to the fingerprint's rule only: no module that computes differs "
                             "from --against (checked), so no smoke results are compared")
    parser.add_argument("--unproven", metavar="REASON", default=None,
                        help="carry stale results of kinds the proof did not compute, or larger than it "
                             "computed them, too, for this reason (kept in each result)")
    args = parser.parse_args(argv)
    if args.unproven is not None and not args.unproven.strip():
        parser.error("--unproven needs a reason, e.g. --unproven 'the change only renames a label'")
    for chapter in args.chapters:
        if chapter not in jobs.CHAPTERS:
            parser.error(f"unknown chapter {chapter!r}; choose from {', '.join(jobs.CHAPTERS)}")
    try:
        profiles.resolve(args.profile)
    except ValueError as err:
        parser.error(f"--profile: {err}")
    known = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--verify", "--quiet", f"{args.against}^{{commit}}"],
                           capture_output=True)
    if known.returncode != 0:
        parser.error(f"--against {args.against!r} is not a commit of {REPO}; give a commit, branch or tag (e.g. HEAD)")
    bad = [r for r in args.relabel if "=" not in r or not r.split("=", 1)[0]]
    if bad:
        parser.error(f"--relabel {bad[0]!r}: expected OLD=NEW with OLD not empty")
    labels = dict(r.split("=", 1) for r in args.relabel)
    report = restamp(args.chapters or list(jobs.CHAPTERS), args.profile, args.against, args.dry_run, labels,
                     args.rule_only, args.unproven)
    failed = False
    for chapter, entry in report.items():
        if not entry["stale"]:
            print(f"{chapter}: every stored result is current")
        elif entry["refused"]:
            failed = True
            done = f"re-stamped {len(entry['restamped'])}, " if entry["restamped"] else ""
            print(f"{chapter}: {len(entry['stale'])} stale, {done}NOT re-stamped: {entry['refused']}")
        elif args.dry_run:
            print(f"{chapter}: {len(entry['stale'])} stale: {', '.join(entry['stale'])}")
        else:
            print(f"{chapter}: re-stamped {len(entry['restamped'])}: {', '.join(entry['restamped'])}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
