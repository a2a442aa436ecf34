"""The coverage grid: every interval method over the study's regime, run in processes and written with the
command that made it; the summary per method and the choice of 03's default interval from it."""

from __future__ import annotations

import concurrent.futures
import itertools
import json
import platform
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from vocab.coverage.simulate import METHODS, coverage

WITHIN = 0.02  # "holds": coverage within 95 ± 2 points


def coverage_grid(
    *,
    methods=METHODS,
    piles=(10,),
    thetas=(0.5,),
    q1s=(0.8,),
    q0s=(0.8,),
    attempts=(400,),
    sims: int = 2000,
    seed: int = 0,
    n_boot: int = 1000,
    rater_error: float = 0.0,
):
    """Coverage, width and bias over a grid (a pandas DataFrame, one row per point and method). Each point
    gets its own seed derived from ``seed`` and its position, so a point's result does not depend on which
    other points are in the grid."""
    rows = []
    for method, n, th, a1, a0, big_n in itertools.product(methods, piles, thetas, q1s, q0s, attempts):
        point_seed = int(
            np.random.SeedSequence(
                [seed, n, round(th * 1000), round(a1 * 1000), round(a0 * 1000), big_n]
            ).generate_state(1)[0]
        )
        c = coverage(
            method,
            theta=th,
            q1=a1,
            q0=a0,
            attempts=big_n,
            piles=n,
            sims=sims,
            seed=point_seed,
            n_boot=n_boot,
            rater_error=rater_error,
        )
        rows.append(
            {
                "method": method,
                "piles": n,
                "theta": th,
                "q1": a1,
                "q0": a0,
                "attempts": big_n,
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
    attempts: tuple[int, ...]
    sims: int = 2000
    n_boot: int = 1000
    seed: int = 0

    def validate(self) -> None:
        unknown = [m for m in self.methods if m not in METHODS]
        if unknown or not self.methods:
            raise ValueError(f"methods: unknown {unknown or 'none given'} (known: {', '.join(METHODS)})")
        for th, a1, a0 in itertools.product(self.thetas, self.q1s, self.q0s):
            coverage(self.methods[0], theta=th, q1=a1, q0=a0, attempts=self.attempts[0], piles=self.piles[0],
                     sims=1, seed=0, n_boot=1)  # fmt: skip


def _grid_part(args: tuple[GridSpec, int, int]) -> pd.DataFrame:
    spec, n, big_n = args
    return coverage_grid(
        methods=spec.methods, piles=(n,), thetas=spec.thetas, q1s=spec.q1s, q0s=spec.q0s, attempts=(big_n,),
        sims=spec.sims, seed=spec.seed, n_boot=spec.n_boot,
    )  # fmt: skip


def run_grid(
    spec: GridSpec, out: str | Path, *, jobs: int = 2, force: bool = False, command: str | None = None
) -> Path:
    """The grid into ``out`` (CSV, one row per point and method) and, beside it, a JSON file with the command,
    the spec, the versions and the time taken. Points run in ``jobs`` processes, one (piles, attempts) pair
    each; every point has its own seed, so the result does not depend on ``jobs``. Refuses to replace an
    existing file unless ``force``; validated before any work starts."""
    from vocab.records import versions

    out = Path(out)
    if out.exists() and not force:
        raise FileExistsError(f"{out} exists; pass --force to replace it")
    spec.validate()
    t0 = time.perf_counter()
    parts = [(spec, n, m) for n in spec.piles for m in spec.attempts]
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        frames = list(pool.map(_grid_part, parts))
    table = pd.concat(frames, ignore_index=True).sort_values(
        ["method", "piles", "attempts", "theta", "q1", "q0"], kind="stable"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    table.to_csv(tmp, index=False, float_format="%.6f")
    tmp.replace(out)
    meta = {
        "command": command,
        "spec": spec.__dict__,
        "jobs": jobs,
        "rows": len(table),
        "seconds": round(time.perf_counter() - t0, 1),
        "python": platform.python_version(),
        "versions": versions(),
    }
    out.with_suffix(".json").write_text(json.dumps(meta, indent=1, default=str) + "\n")
    return out


def _within(c: pd.Series) -> float:
    return float(((c - 0.95).abs() <= WITHIN).mean())


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
    """Per method, over the usable points: the share within 95 ± 2 %, mean and worst coverage, mean width;
    sorted best first (largest share within, then narrower). Its first row is 03's default."""
    return (
        usable_points(grid)
        .groupby("method")
        .agg(
            points=("coverage", "size"),
            within_2pts=("coverage", _within),
            mean_coverage=("coverage", "mean"),
            worst_coverage=("coverage", "min"),
            mean_width=("mean_width", "mean"),
        )
        .sort_values(["within_2pts", "mean_width"], ascending=[False, True])
    )


def within_by_regime(grid: pd.DataFrame) -> pd.DataFrame:
    """Share of points within 95 ± 2 % per regime (pile size, attempts) and method (columns)."""
    g = usable_points(grid)
    by = g.assign(regime=[f"n={n}, N={m}" for n, m in zip(g.piles, g.attempts, strict=True)])
    return by.groupby(["regime", "method"]).coverage.apply(_within).unstack("method")
