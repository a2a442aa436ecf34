"""What every benchmark's result records, and where it goes: ``benchmarks/results/<name>.json``."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
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

# A result names the commit that made it: a benchmark started on a tree with uncommitted changes to tracked files
# refuses at once (one line, exit 2), unless told --allow-dirty, which its result then records. The flag is taken out
# of the command line here, before the benchmark's own parser reads it.
ALLOW_DIRTY = "--allow-dirty" in sys.argv
if ALLOW_DIRTY:
    sys.argv.remove("--allow-dirty")


def refuse_dirty(commit: str = STARTED_ON, allow: bool = ALLOW_DIRTY) -> None:
    if commit.endswith("+dirty") and not allow:
        sys.stderr.write(
            f"benchmark: error: the tree has uncommitted changes ({commit}); commit them first (so the result names "
            "the code that made it) or pass --allow-dirty (the result says so)\n"
        )
        raise SystemExit(2)


if not os.environ.get("VOCAB_BENCH_NO_CHECK"):  # set by the unit test of this check only
    refuse_dirty()


def result_record(name: str, **fields) -> dict:
    """The benchmark's fields, then the commit it started on, the time and the machine it was measured on."""
    return {
        "benchmark": name,
        **fields,
        "commit": STARTED_ON,
        **({"dirty_allowed": True} if STARTED_ON.endswith("+dirty") else {}),
        "when": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine(),
    }


UNRECORDED = "not recorded (measured before each row named its machine)"


def earlier_rows(path: Path, key: str) -> dict:
    """The rows (``result[key]``) of a result file that a ``--merge`` keeps, each naming the commit it was measured
    at: a row without its own ``commit`` takes the file's (the commit of the run that wrote it), so the new file's
    top-level commit never speaks for rows measured before it. Its machine cannot be recovered so: a row without
    its own ``machine`` (written before rows named theirs) says so, and the new file's machine is not taken for
    it."""
    if not path.exists():
        return {}
    old = json.loads(path.read_text())
    rows = old.get(key, {})
    return {name: {**row, "commit": row.get("commit", old.get("commit")), "machine": row.get("machine", UNRECORDED)}
            for name, row in rows.items()}  # fmt: skip


def write_result(name: str, result: dict) -> Path:
    out = HERE / "results" / f"{name}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    return out


def simulated_points(name: str, run_point, tasks: list, summarise, *, jobs: int, **fields) -> dict:
    """A simulation benchmark's body: each task's row from ``run_point`` in a pool of ``jobs`` processes (printed as
    it comes), the rows summarised, the result written to ``results/<name>.json`` (``fields`` among its record)."""
    import concurrent.futures
    import time

    t0 = time.perf_counter()
    rows = []
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs) as pool:
        for r in pool.map(run_point, tasks):
            rows.append(r)
            print(json.dumps(r), flush=True)
    summary = summarise(rows)
    result = result_record(name, **fields, seconds=round(time.perf_counter() - t0, 1), summary=summary, rows=rows)
    print(json.dumps(summary, indent=1))
    write_result(name, result)
    return result
