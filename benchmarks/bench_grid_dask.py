"""The coverage grid through a local Dask cluster against the local process pool, side by side in one run: the
same spec, 2 workers each, one task per point either way; wall time of each and their ratio, and whether the two
frames are identical (they must be: each point seeds itself from its coordinates).

The spec is the committed full grid's, restricted to the θ values given (every pile size, critic and spread); the
full grid is θ 0.1, 0.2, ..., 0.9: 1,530-1,640 s through the pool on this machine kind, so both take 52-56 min.

The θ values run one at a time, each through both, in alternating order (pool then Dask, then Dask then pool, ...),
so a drift of the machine's speed during the run falls on both alike, and each θ is a paired measurement: the
spread of the per-θ ratios bounds this machine's run-to-run noise, measured in the same run as the ratio (it also
holds the order effect, reported apart, and any change of the ratio with θ). Each θ's Dask run gets a local cluster
of its own (with LOCAL_WORKER_CONFIG, as `--scheduler local` starts it), started and its workers' imports done
before the clock starts and closed after, so nothing of one runs beside the other; the start-up is timed apart and
counted once in Dask's total, as one `vocab coverage-grid --scheduler local` pays it.

Run: .venv/bin/python benchmarks/bench_grid_dask.py [--thetas 0.3] [--sims 2000]; writes
benchmarks/results/grid_dask.json.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import json
import math
import statistics
import tempfile
import time
from pathlib import Path

import pandas as pd
from common import result_record, write_result  # benchmarks/common.py (this script's folder is on sys.path)

from vocab.cluster import LOCAL_WORKER_CONFIG, local_cluster
from vocab.coverage import GridSpec, parse_values, run_grid
from vocab.coverage.grid import GRID_METHODS, grid_points

POOL, DASK = "process pool", "local dask"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--thetas", default="0.3")
    ap.add_argument("--sims", type=int, default=2000)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    qs = (0.1, 0.5, 0.8, 0.95, 1.0)
    full = GridSpec(GRID_METHODS, (10, 20, 40), parse_values(args.thetas, "--thetas"), qs, qs, (2.0, float("inf")),
                    sims=args.sims)  # fmt: skip
    try:
        full.validate()  # a repeated θ among them too: each θ is one paired measurement
    except ValueError as e:
        ap.error(str(e))
    thetas = full.thetas
    specs = {t: dataclasses.replace(full, thetas=(t,)) for t in thetas}
    per_theta, identical = [], True
    with tempfile.TemporaryDirectory() as tmp:
        for i, (theta, spec) in enumerate(specs.items()):
            order = (POOL, DASK) if i % 2 == 0 else (DASK, POOL)
            row, frames = {"theta": theta, "first": order[0]}, {}
            for name in order:
                out = Path(tmp) / f"{theta}_{name.replace(' ', '_')}.csv"
                if name == POOL:
                    t = time.perf_counter()
                    run_grid(spec, out, jobs=args.jobs)
                    row[name] = round(time.perf_counter() - t, 1)
                else:
                    t = time.perf_counter()
                    with warm_cluster(args.jobs) as address:
                        row["dask_startup"] = round(time.perf_counter() - t, 1)
                        t = time.perf_counter()
                        run_grid(spec, out, jobs=args.jobs, scheduler=address)
                        row[name] = round(time.perf_counter() - t, 1)
                frames[name] = pd.read_csv(out)
            row["dask_over_pool"] = round(row[DASK] / row[POOL], 3)
            identical &= frames[POOL].equals(frames[DASK])
            per_theta.append(row)
            print(json.dumps(row), flush=True)
    startup = per_theta[0]["dask_startup"]
    seconds = {POOL: round(sum(r[POOL] for r in per_theta), 1),
               DASK: round(startup + sum(r[DASK] for r in per_theta), 1)}  # fmt: skip
    ratios = [r["dask_over_pool"] for r in per_theta]
    logs = [math.log(x) for x in ratios]
    noise = {
        "per_theta_ratio_min": min(ratios),
        "per_theta_ratio_max": max(ratios),
        "per_theta_ratio_geomean": round(math.exp(statistics.fmean(logs)), 3),
        # the per-θ ratios' spread: a bound on how much one θ's ratio varies between runs on this machine (it
        # also holds the order effect, the two geometric means below, and any change of the ratio with θ)
        "per_theta_ratio_sd_log": round(statistics.stdev(logs), 3) if len(logs) > 1 else None,
        "pool_first_geomean": _geomean([r["dask_over_pool"] for r in per_theta if r["first"] == POOL]),
        "dask_first_geomean": _geomean([r["dask_over_pool"] for r in per_theta if r["first"] == DASK]),
    }
    result = result_record(
        "grid_dask",
        spec={"thetas": list(thetas), "piles": list(full.piles), "q1s": list(qs), "q0s": list(qs),
              "spreads": ["2.0", "inf"], "sims": full.sims, "n_boot": full.n_boot, "methods": list(full.methods)},
        points=len(grid_points(full)),
        workers=args.jobs,
        local_worker_config=LOCAL_WORKER_CONFIG,
        dask_cluster_startup_s=startup,  # the first θ's; each θ's is in per_theta
        per_theta=per_theta,
        seconds=seconds,
        dask_over_pool=round(seconds[DASK] / seconds[POOL], 3),
        noise=noise,
        identical_frames=identical,
    )  # fmt: skip
    print(json.dumps({k: result[k] for k in ("seconds", "dask_over_pool", "noise", "identical_frames")}))
    write_result("grid_dask", result)


@contextlib.contextmanager
def warm_cluster(jobs: int):
    """A local cluster as `--scheduler local` starts it, its workers connected and having imported the grid's
    module; yields its address and closes it after."""
    from dask.distributed import Client

    cluster = local_cluster(jobs)
    try:
        with Client(cluster) as client:
            client.wait_for_workers(jobs, timeout=60)
            client.run(importlib.import_module, "vocab.coverage.grid")
        yield cluster.scheduler_address
    finally:
        cluster.close()


def _geomean(xs: list[float]) -> float | None:
    return round(math.exp(statistics.fmean(math.log(x) for x in xs)), 3) if xs else None


if __name__ == "__main__":
    main()
