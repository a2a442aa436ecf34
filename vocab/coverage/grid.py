"""The coverage grid: interval methods over the study's regime, under the level-clustered simulator
(:mod:`vocab.coverage.clustered`: levels of varied difficulty, retried until the critic passes them), run in
processes or on Dask and written with the command that made it. What it says (the summary per method, the bar and
the choice of 03's default interval) is :mod:`vocab.coverage.choice`. The heterogeneity axis is ``spreads``: inf
is levels of one difficulty (independent attempts, retries only), a small spread is levels that differ a lot."""

from __future__ import annotations

import concurrent.futures
import itertools
import json
import os
import platform
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from vocab import stats
from vocab.coverage.clustered import ORACLES, POINT_METHODS, clustered_point
from vocab.errors import InputError

# the committed grid's methods: seed 000's, Jeffreys, PPI, fiducial (03's default), and the two yardsticks that
# know the truth
GRID_METHODS = ("seed", "jeffreys", "ppi", "fiducial", *ORACLES)


def coverage_grid(
    *,
    methods=GRID_METHODS,
    piles=(10,),
    thetas=(0.5,),
    q1s=(0.8,),
    q0s=(0.8,),
    spreads=(float("inf"),),
    levels: int = 140,
    max_attempts: int = 3,
    sims: int = 2000,
    seed: int = 0,
    n_boot: int = 1000,
):
    """Coverage, width and bias over a grid (a pandas DataFrame, one row per point and method). Each point
    gets its own seed derived from ``seed`` and its position, so a point's result does not depend on which
    other points are in the grid; every method sees the same simulated studies at a point."""
    rows = []
    for n, th, a1, a0, spread in itertools.product(piles, thetas, q1s, q0s, spreads):
        # a point's coordinates as numbers of one type, so spreads=(2,) and (2.0,) name the same point
        coords = (int(n), float(th), float(a1), float(a0), float(spread), int(levels), int(max_attempts))
        point_seed = stats.derived_seed(seed, "coverage_grid", *coords)
        found = clustered_point(
            methods, theta=th, q1=a1, q0=a0, spread=spread, levels=levels, max_attempts=max_attempts, piles=n,
            sims=sims, seed=point_seed, n_boot=n_boot,
        )  # fmt: skip
        for c in found:
            rows.append(
                {
                    "method": c.method,
                    "piles": n,
                    "theta": th,
                    "q1": a1,
                    "q0": a0,
                    "spread": spread,
                    "levels": levels,
                    "coverage": c.coverage,
                    "mean_width": c.mean_width,
                    "bias": c.bias,
                    "sims": sims,
                    "defined": c.defined,
                }
            )
    return pd.DataFrame(rows)


def parse_values(text: str, what: str, kind=float) -> tuple:
    """``"0.1,0.5"`` → (0.1, 0.5); a ValueError naming ``what`` otherwise."""
    try:
        values = tuple(kind(x) for x in str(text).split(",") if x.strip())
    except ValueError:
        raise ValueError(f"{what}: expected comma-separated numbers, got {text!r}") from None
    if not values:
        raise ValueError(f"{what}: no values in {text!r}")
    return values


@dataclass(frozen=True)
class GridSpec:
    """What a grid covers; every axis a tuple of values."""

    methods: tuple[str, ...]
    piles: tuple[int, ...]
    thetas: tuple[float, ...]
    q1s: tuple[float, ...]
    q0s: tuple[float, ...]
    spreads: tuple[float, ...] = (float("inf"),)
    levels: int = 140
    max_attempts: int = 3
    sims: int = 2000
    n_boot: int = 1000
    seed: int = 0

    def validate(self) -> None:
        unknown = [m for m in self.methods if m not in POINT_METHODS]
        if unknown or not self.methods:
            raise ValueError(f"methods: unknown {unknown or 'none given'} (known: {', '.join(POINT_METHODS)})")
        for name in ("methods", "piles", "thetas", "q1s", "q0s", "spreads"):
            values = getattr(self, name)
            repeated = sorted({v for v in values if values.count(v) > 1}, key=str)
            if repeated:  # a repeated value would run its points twice and weigh them twice in every summary
                raise ValueError(f"{name}: {repeated[0]} is given more than once")
        for name, values in (("thetas", self.thetas), ("q1s", self.q1s), ("q0s", self.q0s)):
            bad = [v for v in values if not 0 <= v <= 1]
            if bad:
                raise ValueError(f"{name}: {bad[0]} is outside [0, 1]")
        bad = [v for v in self.thetas if v in (0, 1)]
        if bad:
            raise ValueError(f"thetas: {bad[0]} leaves no level of varied difficulty; use values inside (0, 1)")
        for name, values in (("piles", self.piles), ("spreads", self.spreads)):
            if not values or not all(v > 0 for v in values):  # nan is not > 0 either
                raise ValueError(f"{name}: every value must be positive")
        for name, v in (("levels", self.levels), ("max_attempts", self.max_attempts), ("sims", self.sims),
                        ("n_boot", self.n_boot)):  # fmt: skip
            if v < 1:
                raise ValueError(f"{name} must be positive, got {v}")
        if self.seed < 0:
            raise ValueError(f"seed must be non-negative, got {self.seed}")
        from vocab.coverage.simulate import check_sizes

        check_sizes(sims=self.sims, n_boot=self.n_boot, attempts=self.levels * self.max_attempts,
                    piles=int(max(self.piles)))  # fmt: skip


class GridRequestError(InputError):
    """A `vocab coverage-grid` request that cannot run: one line, exit 2."""


def grid_request(methods: str, piles: str, thetas: str, q1s: str, q0s: str, spreads: str, *, levels: int,
                 max_attempts: int, sims: int, n_boot: int, seed: int, jobs: int, scheduler: str | None,
                 jobs_given: bool = False) -> GridSpec:  # fmt: skip
    """The grid the command line asks for, validated with its ``jobs`` and ``scheduler`` before any work."""
    try:
        spec = GridSpec(
            tuple(m.strip() for m in methods.split(",") if m.strip()), parse_values(piles, "--piles", int),
            parse_values(thetas, "--thetas"), parse_values(q1s, "--q1s"), parse_values(q0s, "--q0s"),
            parse_values(spreads, "--spreads"), levels=levels, max_attempts=max_attempts, sims=sims, n_boot=n_boot,
            seed=seed,
        )  # fmt: skip
        spec.validate()
    except ValueError as e:
        raise GridRequestError(str(e)) from None
    cores = len(os.sched_getaffinity(0))
    if not 1 <= jobs <= cores:  # each worker holds one point's arrays: more than the cores only adds memory
        raise GridRequestError(f"--jobs must lie between 1 and {cores} (the cores this process may use), got {jobs}")
    if scheduler is not None and scheduler != "local" and not scheduler.startswith("tcp://"):
        raise GridRequestError(f"--scheduler: an address such as tcp://HOST:8786 (tcp only), or local; got "
                               f"{scheduler[:80]!r}")  # fmt: skip
    if scheduler is not None and scheduler != "local" and jobs_given:
        raise GridRequestError(f"--jobs and --scheduler {scheduler}: the cluster's workers are its own; give one")
    return spec


def grid_points(spec: GridSpec) -> list[tuple[int, float, float, float, float]]:
    """The grid's points, (piles, theta, q1, q0, spread), in :func:`coverage_grid`'s order."""
    return list(itertools.product(spec.piles, spec.thetas, spec.q1s, spec.q0s, spec.spreads))


def grid_point(spec: GridSpec, point: tuple[int, float, float, float, float]) -> pd.DataFrame:
    """One point's rows: the unit of work of a grid, in a process pool or on a Dask worker (each point seeds itself
    from its coordinates, so how the points are split cannot change a number)."""
    n, th, a1, a0, spread = point
    return coverage_grid(
        methods=spec.methods, piles=(n,), thetas=(th,), q1s=(a1,), q0s=(a0,), spreads=(spread,), levels=spec.levels,
        max_attempts=spec.max_attempts, sims=spec.sims, seed=spec.seed, n_boot=spec.n_boot,
    )  # fmt: skip


class SchedulerError(InputError):
    """The Dask scheduler named by ``--scheduler`` could not be reached, or its workers' packages differ."""


CHECKED_PACKAGES = ("vocab", "numpy", "scipy", "pandas", "python")  # what a point's numbers depend on

# The workers of a local cluster share this machine's cores with the grid's tasks, and distributed's defaults are
# made for long-lived workers of a shared cluster: a statistical profiler sampling the task's thread every 10 ms, system
# and memory monitors every 0.5 s and 0.1 s, an event-loop health tick every 20 ms, and glibc told to hand freed
# memory back at 64 KiB (``MALLOC_TRIM_THRESHOLD_``, which also pins the mmap threshold at 128 KiB, so each of a
# point's large arrays is a fresh mmap). With them a task here took 5-15 % more CPU than in the process pool and its
# thread had up to 4x the page faults (it runs off the main thread, in a malloc arena of its own). So a local cluster's
# workers get these instead: no profiler, slower monitors, one malloc arena (the pool's workers' allocator), no
# trim threshold. None of it changes a number; a cluster at a --scheduler address keeps its own settings.
LOCAL_WORKER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.tick.interval": "500ms",
    "distributed.nanny.pre-spawn-environ": {
        "OMP_NUM_THREADS": 1, "MKL_NUM_THREADS": 1, "OPENBLAS_NUM_THREADS": 1, "MALLOC_ARENA_MAX": 1,
    },
}  # fmt: skip


def local_cluster(jobs: int):
    """A LocalCluster of ``jobs`` one-thread worker processes on 127.0.0.1, no dashboard, with
    :data:`LOCAL_WORKER_CONFIG` (each nanny keeps it for the worker it spawns, and again if it respawns one).

    A worker inherits this process's environment, into which each nanny writes its pre-spawn variables (and which
    an earlier cluster with distributed's defaults leaves ``MALLOC_TRIM_THRESHOLD_`` in): that one is held out
    while the workers start, and the environment is as it was afterwards."""
    import dask
    from dask.distributed import LocalCluster

    before = dict(os.environ)
    os.environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    try:
        with dask.config.set(LOCAL_WORKER_CONFIG):
            return LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, host="127.0.0.1",
                                dashboard_address=None)  # fmt: skip
    finally:
        os.environ.clear()
        os.environ.update(before)


def _on_dask(spec: GridSpec, points: list, scheduler: str, jobs: int) -> tuple[list[pd.DataFrame], dict]:
    """The points as one Dask task each, on the cluster at ``scheduler`` (``local``: a LocalCluster of ``jobs``
    one-thread worker processes on 127.0.0.1). Returns the frames in ``points``' order and what ran them: the
    scheduler, each worker's count of tasks, and the packages every worker reports. A cluster with no worker, or
    one whose workers' :data:`CHECKED_PACKAGES` differ from this process's, is refused before any task is sent
    (distributed's own ``get_versions(check=True)`` only warns)."""
    try:
        from dask.distributed import Client
    except ImportError:
        raise SchedulerError("--scheduler needs Dask: pip install -e '.[cluster]'") from None

    cluster = None
    try:
        if scheduler == "local":
            cluster = local_cluster(jobs)
            client = Client(cluster)
        else:
            client = Client(scheduler, timeout=10)
    except (OSError, TimeoutError, ValueError, EOFError, MemoryError) as e:
        # MemoryError: a server that answers but is not Dask (an HTTP server, say) sends bytes distributed reads as
        # a frame length of exabytes, which numpy refuses to allocate
        if cluster is not None:
            cluster.close()
        why = f"{type(e).__name__}: not a Dask scheduler there?" if isinstance(e, MemoryError) else str(e)[:200]
        raise SchedulerError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({why})") from None
    try:
        try:
            client.wait_for_workers(1, timeout=30)
        except TimeoutError:
            raise SchedulerError(f"--scheduler {scheduler}: the cluster has no worker after 30 s") from None
        found = client.get_versions(packages=["vocab", "scipy"])
        problem = package_mismatch(found)
        if problem:
            raise SchedulerError(f"--scheduler {scheduler}: {problem}")
        futures = client.map(grid_point, [spec] * len(points), points, pure=False)
        frames = client.gather(futures)
        ran: dict[str, int] = {}
        for addrs in client.who_has(futures).values():
            for a in addrs[:1]:
                ran[a] = ran.get(a, 0) + 1
        info = {
            "scheduler": "local Dask cluster" if cluster is not None else scheduler,
            **({"local_worker_config": LOCAL_WORKER_CONFIG} if cluster is not None else {}),
            "tasks_by_worker": dict(sorted(ran.items())),
            "worker_packages": {
                a: {k: _packages(v).get(k) for k in CHECKED_PACKAGES} for a, v in sorted(found["workers"].items())
            },  # fmt: skip
        }
        return frames, info
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def package_mismatch(found: dict) -> str | None:
    """What differs between this process's :data:`CHECKED_PACKAGES` and the first worker's that differ, in
    ``Client.get_versions``' answer; None when every worker matches."""
    mine = _packages(found["client"])
    for address, report in sorted(found["workers"].items()):
        theirs = _packages(report)
        differ = [k for k in CHECKED_PACKAGES if mine.get(k) != theirs.get(k)]
        if differ:
            k = differ[0]
            return f"worker {address} has {k} {theirs.get(k)}, this process {mine.get(k)} ({len(differ)} differ)"
    return None


def _packages(report: dict) -> dict:
    """A ``get_versions`` entry's packages, with its Python version as ``python``."""
    host = dict(report.get("host", {}))
    return {**report.get("packages", {}), "python": host.get("python")}


def run_grid(
    spec: GridSpec,
    out: str | Path,
    *,
    jobs: int = 2,
    force: bool = False,
    command: str | None = None,
    scheduler: str | None = None,
) -> Path:
    """The grid into ``out`` (CSV, one row per point and method) and, beside it, a JSON file with the command,
    the spec, the versions, what ran it and the time taken. One task per point: in ``jobs`` local processes, or
    on a Dask cluster (``scheduler``: its address, or ``local`` for a local one of ``jobs`` workers). Every point
    has its own seed, so the result depends on neither. Refuses to replace an existing file unless ``force``;
    validated before any work starts."""
    from vocab.machine import machine
    from vocab.records import dir_lock, git_commit, versions, write_text_atomic

    out = Path(out)
    meta_path = out.with_suffix(".json")
    if out.suffix != ".csv":
        raise GridRequestError(f"--out {out}: name the grid's CSV file (NAME.csv; its NAME.json is written beside it)")
    for path in (out, meta_path):
        if path.is_dir():
            raise GridRequestError(f"--out {out}: {path} is a directory")
        if path.exists() and not force:
            raise GridRequestError(f"{path} exists; pass --force to replace it")
    spec.validate()
    with dir_lock(out.parent):  # one grid into one directory at a time: a second is refused at once
        if not force and (out.exists() or meta_path.exists()):  # written by another between the check and the lock
            raise GridRequestError(f"{out if out.exists() else meta_path} exists; pass --force to replace it")
        t0 = time.perf_counter()
        started_on = git_commit()
        points = grid_points(spec)
        if scheduler is None:
            with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
                frames = list(pool.map(grid_point, [spec] * len(points), points))
            ran = {"scheduler": f"process pool of {max(1, jobs)}"}
        else:
            frames, ran = _on_dask(spec, points, scheduler, jobs)
        table = pd.concat(frames, ignore_index=True).sort_values(
            ["method", "piles", "spread", "theta", "q1", "q0"], kind="stable"
        )
        meta = {
            "command": command,
            "spec": {
                k: ([str(x) if np.isinf(x) else x for x in v] if k == "spreads" else v)
                for k, v in spec.__dict__.items()
            },
            "jobs": jobs,
            "ran_on": ran,
            "rows": len(table),
            "seconds": round(time.perf_counter() - t0, 1),
            "python": platform.python_version(),
            "versions": versions(),
            "commit": started_on or "not recorded",  # the code that ran (read as it started)
            "machine": machine(),
        }
        # each file whole or not at all, under a name of its own (two writers never share a temporary file)
        write_text_atomic(out, table.to_csv(index=False, float_format="%.6f"))
        write_text_atomic(meta_path, json.dumps(meta, indent=1, default=str) + "\n")
    return out
