"""`vocab coverage-recheck GRID.csv`: the bar's recheck of a committed grid, run once and committed beside it.

Every grid point where the simulation's own error can decide :data:`vocab.coverage.BAR` is simulated again with
fresh studies (:func:`vocab.coverage.recheck_bar`, 8,000 a point). That takes minutes, so it is not redone each
time `08_coverage` runs: it is written to ``GRID_recheck.csv`` with ``GRID_recheck.json`` (the command, the grid's
sha256, the method, the draws' seed, the time taken, the versions), and 08 reads it only while the grid is the one
it was made from.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pandas as pd

from vocab.errors import InputError

RECHECK_SIMS, RECHECK_SEED = 8000, 1


def recheck_paths(grid_csv: str | Path) -> tuple[Path, Path]:
    grid_csv = Path(grid_csv)
    stem = grid_csv.with_suffix("")
    return Path(f"{stem}_recheck.csv"), Path(f"{stem}_recheck.json")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_recheck(grid_csv: str | Path, *, sims: int = RECHECK_SIMS, seed: int = RECHECK_SEED, force: bool = False,
                command: str | None = None) -> Path:  # fmt: skip
    """Recheck the grid's chosen interval (:func:`vocab.coverage.choose_interval`) and write the two files."""
    from vocab.coverage.choice import choose_interval, recheck_bar
    from vocab.records import dir_lock, versions, write_text_atomic

    grid_csv = Path(grid_csv)
    meta_path = grid_csv.with_suffix(".json")
    if not grid_csv.is_file() or not meta_path.is_file():
        raise InputError(f"{grid_csv}: not a grid (a CSV with its JSON beside it: vocab coverage-grid writes both)")
    if sims < 1 or sims > 100_000:
        raise InputError(f"--sims must lie between 1 and 100000, got {sims}")
    out, out_meta = recheck_paths(grid_csv)
    for path in (out, out_meta):
        if path.exists() and not force:
            raise FileExistsError(f"{path} exists; pass --force to replace it")
    try:
        grid = pd.read_csv(grid_csv)
        spec = json.loads(meta_path.read_text())["spec"]
        n_boot = int(spec["n_boot"])
        method = choose_interval(grid).index[0]
    except (ValueError, KeyError, TypeError, IndexError, AttributeError, pd.errors.ParserError) as e:
        raise InputError(f"{grid_csv}: not a grid vocab coverage-grid wrote ({type(e).__name__}: {e})") from None
    with dir_lock(out.parent):
        t0 = time.perf_counter()
        rechecked = recheck_bar(grid, method, sims=sims, n_boot=n_boot, seed=seed, max_attempts=int(spec.get(
            "max_attempts", 3)))  # fmt: skip
        meta = {"command": command, "grid": grid_csv.name, "grid_sha256": _sha256(grid_csv), "method": method,
                "sims": sims, "n_boot": n_boot, "seed": seed, "rows": len(rechecked),
                "seconds": round(time.perf_counter() - t0, 1), "versions": versions()}  # fmt: skip
        write_text_atomic(out, rechecked.to_csv(index=False, float_format="%.6f"))
        write_text_atomic(out_meta, json.dumps(meta, indent=1) + "\n")
    return out


def read_recheck(grid_csv: str | Path) -> tuple[pd.DataFrame | None, str]:
    """The committed recheck of ``grid_csv`` and a line saying what it is, or None and why it cannot be read (none
    made yet, or made from another grid than the file now holds)."""
    grid_csv = Path(grid_csv)
    out, out_meta = recheck_paths(grid_csv)
    if not out.exists() or not out_meta.exists():
        return None, f"no recheck of {grid_csv.name} yet: vocab coverage-recheck {grid_csv} writes it"
    meta = json.loads(out_meta.read_text())
    if meta.get("grid_sha256") != _sha256(grid_csv):
        return None, f"{out.name} was made from another {grid_csv.name}: vocab coverage-recheck {grid_csv} --force"
    said = (f"{out.name}: {meta['rows']} points of {meta['method']} simulated again with {meta['sims']:,} fresh "
            f"studies each (seed {meta['seed']}; made by: {meta['command']})")  # fmt: skip
    return pd.read_csv(out), said
