"""Rank sets and simultaneous bands over many cells (#76), measured by simulation at the settings the commands use:
4,000 draws a cell (`vocab compare`, `vocab compare --by`), and the draws the family of pairs needs beside them
(:func:`vocab.stats.differences.draws_for_family`, added by :func:`vocab.estimates.compare.family_draws`).

- ``cells``: K equal cells (theta 0.5, a judge right 80 % of the time on both piles, 200 attempts, 10 rows a pile),
  K = 3, 6, 10 and 20 (:func:`vocab.coverage.differences.rank_coverage`). With the superpopulation every true rank is
  tied, so the rank sets hold only where no pair is resolved: the family-wise level itself. With the finite
  population (the commands' default; up to 10 cells, the slices below measure 20 with it) each study's own shares
  rank the cells.
- ``slices``: one cell of K equal slices of 60 items (theta 0.5, the judge right 80 % of the time), 200 rows a pile
  drawn per pile (:func:`vocab.coverage.slices.slice_coverage`), K = 6, 10 and 20 (`--by`'s most): the simultaneous
  bands over the slices, over their pairs' differences, and the rank sets.

Each with ``family`` (the draws the family needs, as the commands draw since #76) and without (4,000 alone, before).
Batches of studies draw from streams of their own (the seed, the batch).

Run: .venv/bin/python benchmarks/bench_ranks.py [--sims 300] [--jobs 2]; writes benchmarks/results/ranks.json.
"""

from __future__ import annotations

import argparse
import itertools

from common import simulated_points  # benchmarks/common.py (this script's folder is on sys.path)

from vocab import stats
from vocab.coverage.differences import Cell, rank_coverage
from vocab.coverage.slices import Slice, slice_coverage
from vocab.stats.differences import draws_for_family, pairs_of

DRAWS = 4000  # what `vocab compare` draws a cell
CELLS = (3, 6, 10, 20)
SLICES = (6, 10, 20)
POPULATIONS = (stats.SUPERPOPULATION, stats.FINITE)


def run_point(args) -> dict:
    kind, k, population, family, sims, seed = args
    pairs = len(pairs_of(k))
    row = {"kind": kind, "k": k, "pairs": pairs, "family": family, "sims": sims, "draws": DRAWS}
    row["family_draws"] = max(DRAWS, draws_for_family(max(k, pairs))) if family else DRAWS
    if kind == "cells":
        r = rank_coverage(
            [Cell(0.5, 0.8, 0.8)] * k,
            attempts=200,
            piles=10,
            sims=sims,
            seed=seed,
            n_boot=DRAWS,
            population=population,
            family=family,
            chunk=5,
        )
        return {**row, "population": population, "ranks": round(r.coverage, 4), "defined": r.defined,
                "mean_set_size": round(r.mean_set_size, 4)}  # fmt: skip
    slices = [Slice(60, 0.5, 0.8, 0.8)] * k
    batch = max(1, 3_900_000 // (k * row["family_draws"]))  # the simulator's bound on one batch's draws
    parts, left, b = [], sims, 0
    while left > 0:
        n = min(batch, left)
        parts.append(slice_coverage(slices, piles=200, sims=n, seed=seed * 1000 + b, n_boot=DRAWS, family=family))
        left, b = left - n, b + 1
    estimable = sum(p.estimable for p in parts)
    row |= {"population": stats.FINITE, "estimable": estimable}
    for key in ("simultaneous", "differences", "ranks", "marginal"):
        got = [(getattr(p, key), p.estimable) for p in parts if p.estimable]
        row[key] = round(sum(v * e for v, e in got) / estimable, 4) if estimable else None
    return row


def summarise(rows: list[dict]) -> dict:
    """Per kind and with or without the family's draws: the worst family-wise coverage (the rank sets'; for slices
    also the simultaneous bands' and the differences'), and how many rows fall under 0.95."""
    out = {}
    for kind, family in itertools.product(("cells", "slices"), (False, True)):
        rs = [r for r in rows if r["kind"] == kind and r["family"] == family]
        keys = ("ranks",) if kind == "cells" else ("simultaneous", "differences", "ranks")
        cov = [r[k] for r in rs for k in keys if r.get(k) is not None]
        out[f"{kind}, {'family draws' if family else f'{DRAWS} draws alone'}"] = {
            "rows": len(rs),
            "worst": min(cov, default=None),
            "under_95": sum(c < 0.95 for c in cov),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    grid = itertools.product(CELLS, POPULATIONS, (False, True))
    tasks = [("cells", k, p, f, args.sims, args.seed) for k, p, f in grid if k <= 10 or p == stats.SUPERPOPULATION]
    tasks += [("slices", k, stats.FINITE, f, args.sims, args.seed) for k, f in itertools.product(SLICES, (False, True))]
    tasks.sort(key=lambda t: -t[1])  # the largest first, so the pool ends together
    simulated_points("ranks", run_point, tasks, summarise, jobs=args.jobs, sims=args.sims, seed=args.seed, draws=DRAWS)


if __name__ == "__main__":
    main()
