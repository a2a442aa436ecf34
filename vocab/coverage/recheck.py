"""`vocab coverage-recheck GRID.csv`: the bar's recheck of a committed grid, run once and committed beside it.

Every grid point where the simulation's own error can decide :data:`vocab.coverage.BAR` is simulated again with
fresh studies (:func:`vocab.coverage.recheck_bar`, 8,000 a point). That takes minutes, so it is not redone each
time `08_coverage` runs: it is written to ``GRID_recheck.csv`` with ``GRID_recheck.json`` (the command, the grid's
sha256, the method, the draws' seed, the time taken, the versions), and 08 reads it only while the grid is the one
it was made from.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd

from vocab.coverage.choice import choose_interval, recheck_bar
from vocab.coverage.simulate import MAX_ROWS
from vocab.errors import InputError
from vocab.files import check_writable, read_bytes, read_json, sha256_file
from vocab.machine import machine
from vocab.records import dir_lock, git_commit, versions, write_text_atomic

RECHECK_SIMS, RECHECK_SEED = 8000, 1


def recheck_paths(grid_csv: str | Path) -> tuple[Path, Path]:
    grid_csv = Path(grid_csv)
    stem = grid_csv.with_suffix("")
    return Path(f"{stem}_recheck.csv"), Path(f"{stem}_recheck.json")


def run_recheck(
    grid_csv: str | Path,
    *,
    sims: int = RECHECK_SIMS,
    seed: int = RECHECK_SEED,
    force: bool = False,
    command: str | None = None,
) -> Path:
    """Recheck the grid's chosen interval (:func:`vocab.coverage.choose_interval`) and write the two files."""

    grid_csv = Path(grid_csv)
    meta_path = grid_csv.with_suffix(".json")
    if not grid_csv.is_file() or not meta_path.is_file():
        raise InputError(f"{grid_csv}: not a grid (a CSV with its JSON beside it: vocab coverage-grid writes both)")
    if sims < 1 or sims > 100_000:
        raise InputError(f"--sims must lie between 1 and 100000, got {sims}")
    out, out_meta = recheck_paths(grid_csv)
    for path in (out, out_meta):
        if path.exists() and not force:
            raise InputError(f"{path} exists; pass --force to replace it")
    grid, spec = read_grid(grid_csv, meta_path, sims)
    n_boot, max_attempts = spec["n_boot"], spec["max_attempts"]
    try:
        method = choose_interval(grid).index[0]
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as e:
        raise InputError(f"{grid_csv}: not a grid vocab coverage-grid wrote ({type(e).__name__}: {e})") from None
    for path in (out, out_meta):  # before minutes of simulation: the place can take the files
        check_writable(path, error=InputError)
    with dir_lock(out.parent):
        t0 = time.perf_counter()
        started_on = git_commit()
        rechecked = recheck_bar(grid, method, sims=sims, n_boot=n_boot, seed=seed, max_attempts=max_attempts)
        meta = {
            "command": command,
            "grid": grid_csv.name,
            "grid_sha256": sha256_file(grid_csv),
            "method": method,
            "sims": sims,
            "n_boot": n_boot,
            "seed": seed,
            "rows": len(rechecked),
            "seconds": round(time.perf_counter() - t0, 1),
            "versions": versions(),
            "commit": started_on or "not recorded",
            "machine": machine(),
        }
        write_text_atomic(out, rechecked.to_csv(index=False, float_format="%.6f"))
        write_text_atomic(out_meta, json.dumps(meta, indent=1) + "\n")
    return out


MAX_GRID_BYTES = 64 * 2**20  # the committed grid is 0.7 MB (8,100 points); a grid 90 times larger still fits
MAX_RECHECK_DRAWS = 16_000_000  # studies x resamples: twice the committed recheck's 8,000 x 1,000 (128 MB an array)
GRID_COLUMNS = ("method", "piles", "theta", "q1", "q0", "spread", "levels", "coverage", "sims")


def read_grid(grid_csv: Path, meta_path: Path, sims: int = RECHECK_SIMS) -> tuple[pd.DataFrame, dict]:
    """A grid and its spec, read within bounds and range-checked row by row before anything is simulated: every
    point's sizes, with ``sims`` studies, are ones a recheck may hold (:data:`MAX_RECHECK_DRAWS`, and
    :data:`vocab.coverage.simulate.MAX_ROWS` studies x attempts or x piles) and its rates are rates.
    Anything else is one line naming the file and the first bad row."""
    import io

    data = read_bytes(grid_csv, MAX_GRID_BYTES, "grid CSV", InputError)
    meta = read_json(meta_path, 2**20, "grid's JSON", InputError)
    try:
        spec = meta["spec"]
        n_boot, max_attempts = spec["n_boot"], spec.get("max_attempts", 3)
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in (n_boot, max_attempts)):
            raise ValueError(f"n_boot {n_boot!r} and max_attempts {max_attempts!r} must be whole numbers, 1 or more")
        grid = pd.read_csv(io.BytesIO(data))
        missing = [c for c in GRID_COLUMNS if c not in grid.columns]
        if missing:
            raise KeyError(f"no column {missing[0]}")
    except (ValueError, KeyError, TypeError, AttributeError, pd.errors.ParserError, pd.errors.EmptyDataError) as e:
        raise InputError(f"{grid_csv}: not a grid vocab coverage-grid wrote ({type(e).__name__}: {e})") from None
    if grid.empty:
        raise InputError(f"{grid_csv}: no grid points (a header alone): not a grid vocab coverage-grid wrote")
    nums = grid[["piles", "theta", "q1", "q0", "spread", "levels"]].apply(pd.to_numeric, errors="coerce")
    whole = lambda c: (nums[c] >= 1) & (nums[c] == nums[c].round())  # noqa: E731
    bad = ~(
        whole("piles")
        & whole("levels")
        & (nums.spread > 0)
        & nums.theta.between(0, 1, inclusive="neither")
        & nums.q1.between(0, 1)
        & nums.q0.between(0, 1)
    )
    if bad.any():
        row = grid[bad].iloc[0]
        said = ", ".join(f"{c} {row[c]}" for c in ("piles", "levels", "theta", "q1", "q0", "spread"))
        raise InputError(
            f"{grid_csv}: row {int(bad.to_numpy().argmax()) + 2} is no grid point ({said}): piles and "
            "levels are whole numbers from 1, theta inside (0, 1), q1 and q0 in [0, 1], spread over 0"
        )
    sizes = (
        ("studies x resamples", sims * n_boot, MAX_RECHECK_DRAWS),
        ("studies x attempts", sims * int(nums.levels.max()) * max_attempts, MAX_ROWS),
        ("studies x pile rows", sims * int(nums.piles.max()), MAX_ROWS),
    )
    for what, size, bound in sizes:
        if size > bound:
            raise InputError(
                f"{grid_csv}: a point past what a recheck may simulate ({what} {size:,}, over "
                f"{bound:,}): use fewer --sims, or a grid of smaller points"
            )
    return grid, {"n_boot": n_boot, "max_attempts": max_attempts}


def read_recheck(grid_csv: str | Path) -> tuple[pd.DataFrame | None, str]:
    """The committed recheck of ``grid_csv`` and a line saying what it is, or None and why it cannot be read (none
    made yet, or made from another grid than the file now holds)."""
    grid_csv = Path(grid_csv)
    out, out_meta = recheck_paths(grid_csv)
    if not out.exists() or not out_meta.exists():
        return None, f"no recheck of {grid_csv.name} yet: vocab coverage-recheck {grid_csv} writes it"
    meta = json.loads(out_meta.read_text())
    if meta.get("grid_sha256") != sha256_file(grid_csv):
        return None, f"{out.name} was made from another {grid_csv.name}: vocab coverage-recheck {grid_csv} --force"
    said = (
        f"{out.name}: {meta['rows']} points of {meta['method']} simulated again with {meta['sims']:,} fresh "
        f"studies each (seed {meta['seed']}; made by: {meta['command']})"
    )
    return pd.read_csv(out), said
