"""The coverage grid: interval methods over the study's regime, under the level-clustered simulator
(:mod:`vocab.coverage.clustered`: levels of varied difficulty, retried until the critic passes them), run in
processes and written with the command that made it; the summary per method and the choice of 03's default
interval from it. The heterogeneity axis is ``spreads``: inf is levels of one difficulty (independent attempts,
retries only), a small spread is levels that differ a lot."""

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
from vocab.coverage.clustered import NO_SPREAD, ORACLES, POINT_METHODS, clustered_point
from vocab.errors import InputError

# the committed grid's methods: seed 000's, Jeffreys, PPI, fiducial (03's default), and the two yardsticks that
# know the truth
GRID_METHODS = ("seed", "jeffreys", "ppi", "fiducial", *ORACLES)

NOMINAL = 0.95  # the intervals' confidence level
WITHIN = 0.02  # "holds": coverage within NOMINAL ± 2 points


def _spread_code(spread: float) -> int:
    return 10**9 if spread >= NO_SPREAD else round(spread * 1000)


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
        point_seed = int(
            np.random.SeedSequence(
                [
                    seed,
                    n,
                    round(th * 1000),
                    round(a1 * 1000),
                    round(a0 * 1000),
                    _spread_code(spread),
                    levels,
                    max_attempts,
                ]  # fmt: skip
            ).generate_state(1)[0]
        )
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
    except (OSError, TimeoutError, ValueError) as e:
        if cluster is not None:
            cluster.close()
        raise SchedulerError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({e})") from None
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
    from vocab.records import versions

    out = Path(out)
    if out.exists() and not force:
        raise FileExistsError(f"{out} exists; pass --force to replace it")
    spec.validate()
    t0 = time.perf_counter()
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
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    table.to_csv(tmp, index=False, float_format="%.6f")
    tmp.replace(out)
    meta = {
        "command": command,
        "spec": {
            k: ([str(x) if np.isinf(x) else x for x in v] if k == "spreads" else v) for k, v in spec.__dict__.items()
        },
        "jobs": jobs,
        "ran_on": ran,
        "rows": len(table),
        "seconds": round(time.perf_counter() - t0, 1),
        "python": platform.python_version(),
        "versions": versions(),
    }
    out.with_suffix(".json").write_text(json.dumps(meta, indent=1, default=str) + "\n")
    return out


TOL = 1e-9  # the band includes its ends: 0.93 and 0.97 are within, whatever floating point makes of 0.95 - 0.93


def _within(c: pd.Series) -> float:
    return float(((c - NOMINAL).abs() <= WITHIN + TOL).mean())


def _not_under(c: pd.Series) -> float:
    return float((NOMINAL - c <= WITHIN + TOL).mean())


def method_summary(grid: pd.DataFrame) -> pd.DataFrame:
    """Per method and pile size: mean and worst coverage, the share of points within 95 ± 2 %, mean width,
    largest absolute bias."""
    return grid.groupby(["method", "piles"]).agg(
        mean_coverage=("coverage", "mean"),
        worst_coverage=("coverage", "min"),
        within_2pts=("coverage", _within),
        mean_width=("mean_width", "mean"),
        max_abs_bias=("bias", lambda b: b.abs().max()),
    )


def usable_points(grid: pd.DataFrame) -> pd.DataFrame:
    """The points where the estimate is defined in at least half of the simulated studies."""
    return grid[grid.defined >= grid.sims / 2]


def choose_interval(grid: pd.DataFrame) -> pd.DataFrame:
    """Per method, over the usable points: the share within 95 ± 2 %, the share not under it (coverage at least
    93 %: not misleading, if perhaps wider than needed), mean and worst coverage, mean width (and, where the grid
    holds them, the mean width over seed 000's and over each yardstick's at the same points); sorted best first
    (largest share within, then narrower). Its first row is 03's default. The yardsticks
    (:data:`~vocab.coverage.clustered.ORACLES`: they know the truth) are never rows. The columns hold the three
    measures of :data:`BAR` (``at_least_93``, ``within_where_critic_errs``, ``width_vs_oracle-shortest``), which
    :func:`grid_bar` checks for the chosen method, as drawn and with :func:`recheck_bar`'s fresh simulations."""
    usable = usable_points(grid)
    table = (
        usable[~usable.method.isin(ORACLES)]
        .groupby("method")
        .agg(
            points=("coverage", "size"),
            within_2pts=("coverage", _within),
            at_least_93=("coverage", _not_under),
            mean_coverage=("coverage", "mean"),
            worst_coverage=("coverage", "min"),
            mean_width=("mean_width", "mean"),
        )
        .sort_values(["within_2pts", "mean_width"], ascending=[False, True])
    )
    if {"q1", "q0"} <= set(usable.columns):  # the bar's second measure: within the band where the critic errs
        err = usable[erring_critic(usable) & ~usable.method.isin(ORACLES)]
        table.insert(2, "within_where_critic_errs", err.groupby("method").coverage.apply(_within))
    # every method sees the same studies at a point: the same points are usable for each
    widths = usable.groupby("method").mean_width.mean()
    for ref in ("seed", *ORACLES):
        if ref in widths.index:
            table[f"width_vs_{ref}"] = table.mean_width / widths[ref]
    return table


def width_yardstick(grid: pd.DataFrame) -> pd.DataFrame:
    """The yardsticks over the usable points: their coverage (95 % by construction) and mean width, and that width
    over seed 000's: how wide an interval of one width per point, knowing the estimate's errors, is on average. A
    scale, not a floor: an interval whose width follows each study's data can hold while narrower."""
    usable = usable_points(grid)
    widths = usable.groupby("method").mean_width.mean()
    table = (
        usable[usable.method.isin(ORACLES)]
        .groupby("method")
        .agg(mean_coverage=("coverage", "mean"), mean_width=("mean_width", "mean"))
    )
    if "seed" in widths.index:
        table["width_vs_seed"] = table.mean_width / widths["seed"]
    return table


def band_misses(grid: pd.DataFrame, method: str) -> pd.DataFrame:
    """Where ``method`` leaves 95 ± 2 % on the usable points: per critic (rows q1, columns q0), the points below
    the band (``under``: too narrow) and above it (``over``: wider than needed)."""
    g = usable_points(grid)
    g = g[g.method == method]
    flagged = g.assign(under=NOMINAL - g.coverage > WITHIN + TOL, over=g.coverage - NOMINAL > WITHIN + TOL)
    return flagged.groupby(["q1", "q0"])[["under", "over"]].sum().unstack("q0", fill_value=0).astype(int)


def recheck_below(
    grid: pd.DataFrame, method: str, *, sims: int = 8000, n_boot: int = 1000, seed: int = 1, max_attempts: int = 3
) -> pd.DataFrame:
    """The points where ``method`` fell below the band, simulated again with ``sims`` fresh studies (another
    seed, derived per point from its coordinates): is the shortfall the interval's, or the simulation error of the
    grid's own studies? One row per point with both coverages and the new one's standard error."""
    return _recheck(grid, method, "below", sims=sims, n_boot=n_boot, seed=seed, max_attempts=max_attempts)


def recheck_bar(
    grid: pd.DataFrame,
    method: str,
    *,
    sims: int = 8000,
    n_boot: int = 1000,
    seed: int = 1,
    max_attempts: int = 3,
    window: float = 0.005,
) -> pd.DataFrame:
    """As :func:`recheck_below`, for every point where the grid's simulation error can decide :data:`BAR`: outside
    the band where the critic errs (:func:`erring_critic`), below it anywhere, and, so that rechecking does not only
    ever move points into the band, every such point within ``window`` (about one standard error at 2,000 studies)
    of a band edge on either side. A point's fresh studies are the same whichever function rechecks it (the seed
    derives from the point)."""
    return _recheck(grid, method, "bar", sims=sims, n_boot=n_boot, seed=seed, max_attempts=max_attempts,
                    window=window)  # fmt: skip


def _recheck(grid, method, side, *, sims, n_boot, seed, max_attempts, window: float = 0.0) -> pd.DataFrame:
    g = usable_points(grid)
    g = g[g.method == method]
    low, high = NOMINAL - WITHIN, NOMINAL + WITHIN
    miss = g.coverage < low - TOL
    if side == "bar":
        near = ((g.coverage - low).abs() <= window + TOL) | ((g.coverage - high).abs() <= window + TOL)
        miss |= (g.coverage < low + window + TOL) | (erring_critic(g) & ((g.coverage > high + TOL) | near))
    rows = []
    for r in g[miss].itertuples():
        (c,) = clustered_point(
            [method], theta=r.theta, q1=r.q1, q0=r.q0, spread=r.spread, levels=int(r.levels),
            max_attempts=max_attempts, piles=int(r.piles), sims=sims, n_boot=n_boot,
            seed=stats.derived_seed(seed, "recheck_below", r.piles, r.theta, r.q1, r.q0, r.spread, r.levels),
        )  # fmt: skip
        rows.append(
            {
                "piles": r.piles,
                "theta": r.theta,
                "q1": r.q1,
                "q0": r.q0,
                "spread": r.spread,
                "grid_coverage": r.coverage,
                "grid_sims": r.sims,
                "coverage": c.coverage,
                "sims": sims,
                "se": float(np.sqrt(c.coverage * (1 - c.coverage) / sims)),
            }  # fmt: skip
        )
    return pd.DataFrame(rows, columns=["piles", "theta", "q1", "q0", "spread", "grid_coverage", "grid_sims",
                                       "coverage", "sims", "se"])  # fmt: skip


# The bar the recommended interval must clear on the committed grid (issue #31): never misleading (coverage at
# least 93 % at 99.5 % of all points), within 95 ± 2 % at 99 % of the points whose critic errs (q1 and q0 below
# 0.95; a near-perfect critic's unanimous piles are also an erring critic's, so an interval that holds for the
# latter over-covers the former), and on average at most 1.10 times as wide as the oracle-shortest yardstick.
BAR = {"at_least_93": 0.995, "within_where_critic_errs": 0.99, "width_vs_oracle_shortest": 1.10}


def erring_critic(grid: pd.DataFrame) -> pd.Series:
    """The rows whose critic errs: sensitivity and specificity both below 0.95."""
    return (grid.q1 < 0.95) & (grid.q0 < 0.95)


def grid_bar(grid: pd.DataFrame, method: str, rechecked: pd.DataFrame | None = None) -> pd.DataFrame:
    """:data:`BAR`'s three criteria for ``method`` on the usable points: the required value, the value measured on
    the grid as drawn, and (given ``rechecked``, :func:`recheck_bar`'s table) with each rechecked point's
    coverage taken from its fresh, larger simulation instead, and whether the bar holds on that."""
    usable = usable_points(grid)
    g = usable[usable.method == method].copy()
    keys = ["piles", "theta", "q1", "q0", "spread"]
    fresh = g.coverage.copy()
    if rechecked is not None and len(rechecked):
        new = g[keys].merge(rechecked[[*keys, "coverage"]], on=keys, how="left").coverage.to_numpy()
        fresh = g.coverage.where(np.isnan(new), new)
    widths = usable.groupby("method").mean_width.mean()
    width = float(widths[method] / widths["oracle-shortest"]) if "oracle-shortest" in widths.index else np.nan
    err = erring_critic(g).to_numpy()
    rows = []
    for name, drawn, after in (
        ("at_least_93", _not_under(g.coverage), _not_under(fresh)),
        ("within_where_critic_errs", _within(g.coverage[err]), _within(fresh[err])),
        ("width_vs_oracle_shortest", width, width),
    ):
        ok = after <= BAR[name] + TOL if name.startswith("width") else after >= BAR[name] - TOL
        rows.append({"criterion": name, "required": BAR[name], "as_drawn": drawn, "rechecked": after, "holds": ok})
    return pd.DataFrame(rows).set_index("criterion")


def width_by_critic(grid: pd.DataFrame, method: str, reference: str = "oracle") -> pd.DataFrame:
    """Per critic (rows q1, columns q0), over the usable points: ``method``'s mean width over ``reference``'s at the
    same points (the same simulated studies)."""
    g = usable_points(grid)
    keys = ["piles", "theta", "q1", "q0", "spread"]
    w = g[g.method.isin((method, reference))].pivot_table(index=keys, columns="method", values="mean_width")
    return (w[method] / w[reference]).groupby(["q1", "q0"]).mean().unstack("q0")


def within_by_regime(grid: pd.DataFrame) -> pd.DataFrame:
    """Share of points within 95 ± 2 % per regime (pile size, level heterogeneity) and method (columns); the
    yardsticks left out."""
    g = usable_points(grid)
    g = g[~g.method.isin(ORACLES)]
    by = g.assign(regime=[f"n={n}, spread={s:g}" for n, s in zip(g.piles, g.spread, strict=True)])
    return by.groupby(["regime", "method"]).coverage.apply(_within).unstack("method")
