"""The coverage grid through a local Dask cluster against the local process pool, side by side in one run: the
same spec, 2 workers each, one task per point either way; wall time of each and their ratio, and whether the two
frames are identical (they must be: each point seeds itself from its coordinates).

The spec is the committed full grid's, restricted to the θ values given (every pile size, critic and spread); the
full grid is θ 0.1, 0.2, ..., 0.9: 1,530 s through the pool on this machine kind, so both runs take about 52 min.

Run: .venv/bin/python benchmarks/bench_grid_dask.py [--thetas 0.3] [--sims 2000]; writes
benchmarks/results/grid_dask.json.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import pandas as pd
from common import result_record, write_result  # benchmarks/common.py (this script's folder is on sys.path)

from vocab.coverage import GridSpec, parse_values, run_grid
from vocab.coverage.grid import GRID_METHODS, LOCAL_WORKER_CONFIG


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--thetas", default="0.3")
    ap.add_argument("--sims", type=int, default=2000)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    qs = (0.1, 0.5, 0.8, 0.95, 1.0)
    spec = GridSpec(GRID_METHODS, (10, 20, 40), parse_values(args.thetas, "--thetas"), qs, qs, (2.0, float("inf")),
                    sims=args.sims)  # fmt: skip
    seconds, frames = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, scheduler in (("process pool", None), ("local dask", "local")):
            t0 = time.perf_counter()
            out = run_grid(spec, Path(tmp) / f"{name.replace(' ', '_')}.csv", jobs=args.jobs, scheduler=scheduler)
            seconds[name] = round(time.perf_counter() - t0, 1)
            frames[name] = pd.read_csv(out)
            print(json.dumps({name: seconds[name]}), flush=True)
    identical = frames["process pool"].equals(frames["local dask"])
    result = result_record(
        "grid_dask",
        spec={"thetas": list(spec.thetas), "piles": list(spec.piles), "q1s": list(qs), "q0s": list(qs),
              "spreads": ["2.0", "inf"], "sims": spec.sims, "n_boot": spec.n_boot, "methods": list(spec.methods)},
        points=len(spec.piles) * len(spec.thetas) * len(qs) ** 2 * 2,
        workers=args.jobs,
        local_worker_config=LOCAL_WORKER_CONFIG,
        seconds=seconds,
        dask_over_pool=round(seconds["local dask"] / seconds["process pool"], 3),
        identical_frames=identical,
    )  # fmt: skip
    print(json.dumps({k: result[k] for k in ("seconds", "dask_over_pool", "identical_frames")}))
    write_result("grid_dask", result)


if __name__ == "__main__":
    main()
