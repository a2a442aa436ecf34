"""The slices' intervals (`vocab compare --by`, :mod:`vocab.estimates.slices`) measured by simulation
(:func:`vocab.coverage.slices.slice_coverage`): one cell whose items fall into 2-4 slices of other sizes, rates and
judge errors; vocab's sample drawn per pile, not per slice; each slice corrected as a cell of its own.

Per point and rows a pile: the worst slice's marginal coverage, the simultaneous bands' (every slice at once), the
simultaneous difference bands' (every pair at once) and the rank sets' (every true rank at once), each over the
studies in which every slice got a number, and how many those were. Batches of studies each draw from their own
stream (the seed, the batch).

Run: .venv/bin/python benchmarks/bench_slices.py [--sims 4000] [--jobs 2]; writes benchmarks/results/slices.json.
"""

from __future__ import annotations

import argparse
import itertools

from common import simulated_points  # benchmarks/common.py (this script's folder is on sys.path)

from vocab.coverage.slices import Slice, slice_coverage
from vocab.stats.differences import draws_for_family, pairs_of

# name: the slices of one cell, (items, theta, q1, q0) each
POINTS = {
    "two equal, a good judge": ((100, 0.4, 0.95, 0.95), (100, 0.6, 0.95, 0.95)),
    "two, no difference, the judge lenient on one": ((120, 0.5, 0.9, 0.9), (120, 0.5, 0.95, 0.6)),
    "two, rare passes": ((150, 0.1, 0.8, 0.95), (150, 0.15, 0.6, 0.9)),
    "three unequal, erring judges": ((60, 0.3, 0.9, 0.8), (120, 0.5, 0.7, 0.9), (40, 0.7, 0.95, 0.6)),
    "three, one small": ((200, 0.5, 0.85, 0.85), (200, 0.6, 0.85, 0.85), (25, 0.4, 0.85, 0.85)),
    "four equal, small": ((30, 0.5, 0.8, 0.8),) * 4,
    "four, a gradient": ((80, 0.2, 0.9, 0.9), (80, 0.4, 0.9, 0.9), (80, 0.6, 0.9, 0.9), (80, 0.8, 0.9, 0.9)),
}
PILES = (10, 20, 50)
KEYS = ("marginal", "simultaneous", "differences", "ranks")


def run_point(args) -> dict:
    name, piles, sims, seed, draws = args
    slices = [Slice(*s) for s in POINTS[name]]
    # the simulator's bound on one batch's draws, the family's among them (draws_for_family, since #76)
    family = max(draws, draws_for_family(max(len(slices), len(pairs_of(len(slices))))))
    batch = max(1, 3_900_000 // (len(slices) * family))
    parts, left, b = [], sims, 0
    while left > 0:
        n = min(batch, left)
        parts.append(slice_coverage(slices, piles=piles, sims=n, seed=seed * 1000 + b, n_boot=draws))
        left, b = left - n, b + 1
    estimable = sum(p.estimable for p in parts)
    row = {
        "point": name,
        "slices": [list(s) for s in POINTS[name]],
        "piles": piles,
        "sims": sims,
        "estimable": estimable,
    }
    for k in (*KEYS, "marginal_width", "simultaneous_width"):
        got = [(getattr(p, k), p.estimable) for p in parts if p.estimable]
        row[k] = round(sum(v * e for v, e in got) / estimable, 6) if estimable else None
    return row


def summarise(rows: list[dict]) -> dict:
    """Per quantity: the points measured (at least 200 estimable studies), how many fall under 0.93, the worst,
    how many lie within 95 ± 2 %."""
    rs = [r for r in rows if r["estimable"] >= 200]
    out = {"points": len(rs), "points_too_few_estimable": len(rows) - len(rs)}
    for k in KEYS:
        cov = [r[k] for r in rs]
        out[k] = {
            "under_93": sum(c < 0.93 for c in cov),
            "worst": min(cov, default=None),
            "within_95_2": sum(0.93 <= c <= 0.97 for c in cov),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--draws", type=int, default=1000, help="fiducial draws per slice (03: 4000)")
    args = ap.parse_args()
    tasks = [(name, piles, args.sims, args.seed, args.draws) for name, piles in itertools.product(POINTS, PILES)]
    simulated_points(
        "slices", run_point, tasks, summarise, jobs=args.jobs, sims=args.sims, seed=args.seed, draws=args.draws
    )


if __name__ == "__main__":
    main()
