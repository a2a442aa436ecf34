"""The full design's wall time on the chosen setup, read from a finished run's own records.

The study's design (140 levels x 4 cells) takes about an hour on 2 cores, so this benchmark does not run it: it
reads the run `make demo-full` made (``data/runs/reference`` by default; every attempt's start and end are
logged by the harness) and writes ``benchmarks/results/full_design.json``: wall and active minutes, attempts
per hour, the engine and the concurrency the run was served with, and the run's own commit and times.

    python benchmarks/bench_full_design.py [--run-dir data/runs/reference]
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

from common import ROOT, result_record, write_result  # benchmarks/common.py (this script's folder is on sys.path)

from vocab import records, tables
from vocab.errors import InputError

TARGET_MINUTES = 30  # the throughput issue's target for the full design on 2 cores


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run-dir", default=str(ROOT / "data" / "runs" / "reference"))
    args = ap.parse_args(argv)
    try:
        run = records.load_run(args.run_dir)
        if run.manifest.get("status") != "complete":
            raise InputError(f"{args.run_dir} is {run.manifest.get('status')!r}, not complete")
    except InputError as e:  # one line naming the problem, exit 2, nothing written
        print(f"bench_full_design: {e}", file=sys.stderr)
        sys.exit(2)
    m = run.manifest
    totals, per_model = tables.time_table(run)
    t = totals.iloc[0]
    cfg = tomllib.loads(m["config"]["text"])
    models = cfg.get("models", {})
    result = result_record(
        "full_design",
        run_dir=str(Path(args.run_dir).resolve().relative_to(ROOT)),
        run_commit=m.get("git_commit"),
        run_started=m.get("started"),
        run_finished=m.get("finished"),
        levels=len(m["design"]["levels"]),
        cells=len(m["cells"]),
        attempts=int(t.attempts),
        failed_calls=len(run.errors),
        wall_minutes=float(t.wall_minutes),
        active_minutes=float(t.active_minutes),
        attempts_per_hour=float(t.attempts_per_hour_wall),
        attempts_per_hour_active=float(t.attempts_per_hour_active),
        engine=f"vllm {m.get('versions', {}).get('vllm')}",
        profile=cfg.get("project", {}).get("profile"),
        concurrency={name: mc.get("concurrency") for name, mc in models.items()},
        per_model=per_model.round(4).to_dict(orient="records"),
        target_minutes=TARGET_MINUTES,
        meets_target=bool(t.wall_minutes <= TARGET_MINUTES),
    )
    print(write_result("full_design", result))
    return result


if __name__ == "__main__":
    main()
