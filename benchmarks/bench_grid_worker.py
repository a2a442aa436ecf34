"""Where a grid task's time goes in a Dask worker against the process pool: the same 30 points (every 3rd of the
θ = 0.5 slice) in each, 2 workers each, side by side in one run, with each task's own thread measured from inside
(wall time, user and system CPU, minor page faults: getrusage(RUSAGE_THREAD)). Three runners: the process pool, a
local cluster with distributed's default worker settings, and one with ``LOCAL_WORKER_CONFIG`` (what
``--scheduler local`` uses). Wall times here are short and noisy (±5 % between runs); the CPU and fault sums are
what the settings change.

Run: .venv/bin/python benchmarks/bench_grid_worker.py; writes benchmarks/results/grid_worker.json.
"""

from __future__ import annotations

import concurrent.futures
import json
import resource
import time

from common import result_record, write_result  # benchmarks/common.py (this script's folder is on sys.path)

from vocab.cluster import LOCAL_WORKER_CONFIG, local_cluster
from vocab.coverage import GridSpec
from vocab.coverage.grid import GRID_METHODS, grid_point, grid_points

QS = (0.1, 0.5, 0.8, 0.95, 1.0)
SPEC = GridSpec(GRID_METHODS, (10, 20, 40), (0.5,), QS, QS, (2.0, float("inf")), sims=2000)
POINTS = grid_points(SPEC)[::3][:30]


def timed_point(point) -> tuple[float, float, float, int]:
    """One point, measured on the thread that computes it: wall s, user s, system s, minor page faults."""
    r0, t0 = resource.getrusage(resource.RUSAGE_THREAD), time.perf_counter()
    grid_point(SPEC, point)
    r1 = resource.getrusage(resource.RUSAGE_THREAD)
    return time.perf_counter() - t0, r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime, r1.ru_minflt - r0.ru_minflt


def summary(wall: float, rows: list) -> dict:
    return {
        "wall_s": round(wall, 1),
        "task_wall_s": round(sum(r[0] for r in rows), 1),
        "task_user_s": round(sum(r[1] for r in rows), 1),
        "task_sys_s": round(sum(r[2] for r in rows), 1),
        "task_minor_faults": int(sum(r[3] for r in rows)),
    }


def on_pool() -> dict:
    with concurrent.futures.ProcessPoolExecutor(2) as pool:
        list(pool.map(timed_point, POINTS[:2]))  # the workers have imported everything
        t0 = time.perf_counter()
        rows = list(pool.map(timed_point, POINTS))
        return summary(time.perf_counter() - t0, rows)


def on_dask(cluster) -> dict:
    from dask.distributed import Client

    with cluster, Client(cluster) as client:
        client.gather(client.map(timed_point, POINTS[:2], pure=False))
        t0 = time.perf_counter()
        rows = client.gather(client.map(timed_point, POINTS, pure=False))
        return summary(time.perf_counter() - t0, rows)


def main() -> None:
    from dask.distributed import LocalCluster

    runs = {}
    runs["process pool"] = on_pool()
    print(json.dumps(runs), flush=True)
    runs["local dask, distributed's defaults"] = on_dask(
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None)
    )
    print(json.dumps(runs), flush=True)
    runs["local dask, LOCAL_WORKER_CONFIG"] = on_dask(local_cluster(2))
    result = result_record("grid_worker", points=len(POINTS), workers=2, local_worker_config=LOCAL_WORKER_CONFIG,
                           runs=runs)  # fmt: skip
    print(json.dumps(runs, indent=1))
    write_result("grid_worker", result)


if __name__ == "__main__":
    main()
