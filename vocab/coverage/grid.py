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
from vocab.cluster import CHECKED_PACKAGES, dask_client
from vocab.coverage.clustered import ORACLES, POINT_METHODS, clustered_point
from vocab.coverage.simulate import check_sizes
from vocab.errors import InputError
from vocab.machine import machine
from vocab.records import dir_lock, git_commit, versions, write_text_atomic

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
    population: str = stats.SUPERPOPULATION,
):
    """Coverage, width and bias over a grid (a pandas DataFrame, one row per point and method). Each point
    gets its own seed derived from ``seed`` and its position, so a point's result does not depend on which
    other points are in the grid; every method sees the same simulated studies at a point, and so does either
    ``population`` (what the intervals aim at: :func:`vocab.coverage.clustered.clustered_target`)."""
    rows = []
    for n, th, a1, a0, spread in itertools.product(piles, thetas, q1s, q0s, spreads):
        # a point's coordinates as numbers of one type, so spreads=(2,) and (2.0,) name the same point
        coords = (int(n), float(th), float(a1), float(a0), float(spread), int(levels), int(max_attempts))
        point_seed = stats.derived_seed(seed, "coverage_grid", *coords)
        found = clustered_point(
            methods,
            theta=th,
            q1=a1,
            q0=a0,
            spread=spread,
            levels=levels,
            max_attempts=max_attempts,
            piles=n,
            sims=sims,
            seed=point_seed,
            n_boot=n_boot,
            population=population,
        )
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
                    "population": population,
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
    population: str = stats.SUPERPOPULATION

    def validate(self) -> None:
        if self.population not in stats.POPULATIONS:
            raise ValueError(f"population: {self.population!r} is not one of {', '.join(stats.POPULATIONS)}")
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
        for name, v in (
            ("levels", self.levels),
            ("max_attempts", self.max_attempts),
            ("sims", self.sims),
            ("n_boot", self.n_boot),
        ):
            if v < 1:
                raise ValueError(f"{name} must be positive, got {v}")
        if self.seed < 0:
            raise ValueError(f"seed must be non-negative, got {self.seed}")

        check_sizes(
            sims=self.sims, n_boot=self.n_boot, attempts=self.levels * self.max_attempts, piles=int(max(self.piles))
        )


class GridRequestError(InputError):
    """A `vocab coverage-grid` request that cannot run: one line, exit 2."""


def grid_request(
    methods: str,
    piles: str,
    thetas: str,
    q1s: str,
    q0s: str,
    spreads: str,
    *,
    levels: int,
    max_attempts: int,
    sims: int,
    n_boot: int,
    seed: int,
    jobs: int,
    scheduler: str | None,
    jobs_given: bool = False,
    population: str = stats.SUPERPOPULATION,
) -> GridSpec:
    """The grid the command line asks for, validated with its ``jobs`` and ``scheduler`` before any work."""
    try:
        spec = GridSpec(
            tuple(m.strip() for m in methods.split(",") if m.strip()),
            parse_values(piles, "--piles", int),
            parse_values(thetas, "--thetas"),
            parse_values(q1s, "--q1s"),
            parse_values(q0s, "--q0s"),
            parse_values(spreads, "--spreads"),
            levels=levels,
            max_attempts=max_attempts,
            sims=sims,
            n_boot=n_boot,
            seed=seed,
            population=population,
        )
        spec.validate()
    except ValueError as e:
        raise GridRequestError(str(e)) from None
    cores = len(os.sched_getaffinity(0))
    if not 1 <= jobs <= cores:  # each worker holds one point's arrays: more than the cores only adds memory
        raise GridRequestError(f"--jobs must lie between 1 and {cores} (the cores this process may use), got {jobs}")
    if scheduler is not None and scheduler != "local" and not scheduler.startswith("tcp://"):
        raise GridRequestError(
            f"--scheduler: an address such as tcp://HOST:8786 (tcp only), or local; got {scheduler[:80]!r}"
        )
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
        methods=spec.methods,
        piles=(n,),
        thetas=(th,),
        q1s=(a1,),
        q0s=(a0,),
        spreads=(spread,),
        levels=spec.levels,
        max_attempts=spec.max_attempts,
        sims=spec.sims,
        seed=spec.seed,
        n_boot=spec.n_boot,
        population=spec.population,
    )


def _on_dask(spec: GridSpec, points: list, scheduler: str, jobs: int) -> tuple[list[pd.DataFrame], dict]:
    """The points as one Dask task each, on the cluster at ``scheduler`` (:func:`vocab.cluster.dask_client`).
    Returns the frames in ``points``' order and what ran them: the scheduler, each worker's count of tasks, and the
    packages every worker reports."""
    with dask_client(scheduler, jobs, CHECKED_PACKAGES) as (client, info):
        futures = client.map(grid_point, [spec] * len(points), points, pure=False)
        frames = client.gather(futures)
        ran: dict[str, int] = {}
        for addrs in client.who_has(futures).values():
            for a in addrs[:1]:
                ran[a] = ran.get(a, 0) + 1
        info = {**info, "tasks_by_worker": dict(sorted(ran.items()))}
        info = {
            k: info[k] for k in ("scheduler", "local_worker_config", "tasks_by_worker", "worker_packages") if k in info
        }  # the grid's .json keeps its keys' order
        return frames, info


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
