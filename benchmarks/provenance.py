"""Where each committed result came from, recovered from git, and written beside it (issue #55).

A result file names the commit and machine of the run that wrote it; a ``--merge`` keeps earlier rows, and rows
merged before each row named its own commit took the file's newest commit instead of theirs. This script reads
the history of every result file and, for each row, finds the first version of the file that holds the row with
its present values: the run that wrote that version measured it, so the row's commit is that version's (the row's
own, else the file's) and its machine that version's, where the version recorded one with its instruction sets
and memory. What cannot be established so is said in the row's ``provenance`` (a machine recorded without them
is kept as recorded, and is evidence for no machine kind; one never recorded is "not recorded"); a commit
measured on a tree with uncommitted changes (``+dirty``) says so too. Only the fields ``commit``, ``machine``,
``when`` (a merged row's: its run's) and ``provenance`` are written; every measured value stays as the harness wrote
it.

    python benchmarks/provenance.py          # rewrite the files' provenance fields (idempotent)
    python benchmarks/provenance.py --check  # exit 1 if a file would change

``tests/unit/test_results.py`` fails on a committed record without commit and machine or a note saying why, and on
a file that differs from what this script establishes (where the checkout holds its history).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
COVERAGE = ROOT / "data" / "coverage"
MERGED = {"needle.json": "configs", "rerun.json": "configurations", "avx2_recipes.json": "configurations"}
COMPLETE = ("cpu", "cores", "isa", "memory_gib")  # what a machine names: its cpu, cores, instruction sets, memory
NOT_RECORDED = "not recorded"
OWN = ("commit", "machine", "when", "provenance")


def files() -> list[Path]:
    """Every committed result: benchmarks/results/*.json and the coverage grid's records."""
    return sorted(RESULTS.glob("*.json")) + sorted(COVERAGE.glob("*.json"))


def complete(machine) -> bool:
    return isinstance(machine, dict) and all(machine.get(k) not in (None, "", []) for k in COMPLETE)


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout


def history(path: Path) -> list[tuple[str, dict]]:
    """The file's committed versions, oldest first: (the commit that wrote the version, its JSON)."""
    rel = path.relative_to(ROOT).as_posix()
    out = []
    for sha in _git("log", "--reverse", "--format=%H", "--", rel).split():
        try:
            out.append((sha, json.loads(_git("show", f"{sha}:{rel}"))))
        except (subprocess.CalledProcessError, json.JSONDecodeError):
            continue  # a version that was not JSON (or was deleted): no row came from it
    return out


def _values(row: dict) -> str:
    return json.dumps({k: v for k, v in row.items() if k not in OWN}, sort_keys=True)


def note(commit: str | None, machine, where: str) -> str | None:
    """What is not established about a run (None: nothing)."""
    said = []
    if not commit or commit == NOT_RECORDED:
        said.append("its commit was not recorded")
    elif commit.endswith("+dirty"):
        said.append(f"measured on a tree with uncommitted changes over {commit.removesuffix('+dirty')}")
    if not complete(machine):
        if isinstance(machine, dict) and machine:
            missing = [k for k in COMPLETE if machine.get(k) in (None, "", [])]
            said.append(f"its machine was recorded as {json.dumps(machine)} (no {', '.join(missing)}): not "
                        "evidence for any machine kind")  # fmt: skip
        else:
            said.append("its machine was not recorded: not evidence for any machine kind")
    return f"{where}: {'; '.join(said)}" if said else None


def runs_origin(row: dict) -> dict | None:
    """A row made from committed runs (``source``: ``data/runs/A and data/runs/B``, ``bench_rerun --from-runs``):
    the runs measured it, so its commit, machine and date are theirs, from their manifests."""
    import re

    dirs = re.findall(r"data/runs/[\w.-]+", str(row.get("source", "")))
    manifests = [
        json.loads((ROOT / d / "manifest.json").read_text()) for d in dirs if (ROOT / d / "manifest.json").exists()
    ]
    if not dirs or len(manifests) != len(dirs):
        return None
    commits = [m.get("git_commit") or NOT_RECORDED for m in manifests]
    short = [c if c == NOT_RECORDED else c[:7] + ("+dirty" if c.endswith("+dirty") else "") for c in commits]
    machines = [m.get("machine") for m in manifests]
    machine = machines[0] if all(x == machines[0] for x in machines) and machines[0] else None
    said = note(
        short[0],
        machine,
        "measured by the runs "
        + ", ".join(
            f"{d} ({c}, started {m.get('started', '?')[:10]})" for d, c, m in zip(dirs, short, manifests, strict=True)
        ),
    )
    out = {"commit": short[0], "machine": machine or NOT_RECORDED, "when": manifests[0].get("started", NOT_RECORDED)}
    return {**out, "provenance": said} if said else out


def row_origin(versions: list[tuple[str, dict]], key: str, name: str, row: dict) -> dict:
    """A merged row's commit, machine and provenance: the runs' it was made from (:func:`runs_origin`), else the
    first version's holding it with these values."""
    made = runs_origin(row)
    if made is not None:
        return made
    values = _values(row)
    for sha, doc in versions:
        old = (doc.get(key) or {}).get(name)
        if isinstance(old, dict) and _values(old) == values:
            commit = old.get("commit") or doc.get("commit")
            machine = old.get("machine") if isinstance(old.get("machine"), dict) else doc.get("machine")
            said = note(commit, machine, f"first written in git {sha[:7]}")
            out = {"commit": commit or NOT_RECORDED, "machine": machine or NOT_RECORDED,
                   "when": old.get("when") or doc.get("when") or NOT_RECORDED}  # fmt: skip
            return {**out, "provenance": said} if said else out
    # not in any committed version (a row measured since the last commit): as the harness wrote it
    return {k: row[k] for k in OWN if k in row}


def top_origin(path: Path, doc: dict) -> dict:
    """A single run's file: its commit and machine as written, and what they do not establish."""
    versions = history(path)
    first = next((sha for sha, old in versions if {k: v for k, v in old.items() if k not in OWN}
                  == {k: v for k, v in doc.items() if k not in OWN}), None)  # fmt: skip
    where = f"written in git {first[:7]}" if first else "written since the last commit"
    commit, machine = doc.get("commit"), doc.get("machine")
    said = note(commit, machine, where)
    out = {"commit": commit or NOT_RECORDED, "machine": machine if machine else NOT_RECORDED}
    return {**out, "provenance": said} if said else out


def establish(path: Path) -> dict:
    """The file with its provenance fields established (values untouched)."""
    doc = json.loads(path.read_text())
    if not isinstance(doc, dict):
        return doc
    doc = {**doc, **top_origin(path, doc)}
    if "provenance" not in doc:
        doc.pop("provenance", None)
    key = MERGED.get(path.name)
    if key:
        versions = history(path)
        doc[key] = {name: {**{k: v for k, v in row.items() if k not in OWN}, **row_origin(versions, key, name, row)}
                    for name, row in doc[key].items()}  # fmt: skip
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a file's provenance fields would change")
    args = ap.parse_args(argv)
    changed = []
    for path in files():
        before = json.loads(path.read_text())
        after = establish(path)
        if after != before:
            changed.append(path.relative_to(ROOT).as_posix())
            if not args.check:
                text = path.read_text().splitlines()
                indent = len(text[1]) - len(text[1].lstrip(" ")) if len(text) > 1 else 1
                path.write_text(json.dumps(after, indent=indent or None, ensure_ascii=False) + "\n")
    for c in changed:
        print(("would change " if args.check else "wrote ") + c)
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
