"""What every benchmark's result records, and where it goes: ``benchmarks/results/<name>.json``."""

from __future__ import annotations

import datetime
import json
import subprocess
from pathlib import Path

from vocab.records import machine

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _commit() -> str:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True,
                           text=True).stdout.strip()  # fmt: skip
    return commit.stdout.strip() + ("+dirty" if dirty else "")


# The commit is read when the benchmark starts, not when its result is written (a commit made during an hour-long
# run would otherwise be recorded as the one measured). Processes a benchmark starts later (servers, Dask workers)
# import vocab from the working tree when they start: leave the tree alone while a benchmark runs.
STARTED_ON = _commit()


def result_record(name: str, **fields) -> dict:
    """The benchmark's fields, then the commit it started on, the time and the machine it was measured on."""
    return {
        "benchmark": name,
        **fields,
        "commit": STARTED_ON,
        "when": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine(),
    }


def write_result(name: str, result: dict) -> Path:
    out = HERE / "results" / f"{name}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    return out
