"""A sample drawn by strata within each pile (`vocab audit --strata score|COLUMN`, :mod:`vocab.stats.strata`): the
stratified interval's coverage of the study's own theta and its mean width, beside the same number of labels drawn
from each pile whole and corrected as today, on the same simulated populations, and the difference of two such cells
(:func:`vocab.coverage.strata.strata_coverage`). Points: pile sizes, how the strata differ, labels a pile.

Run: .venv/bin/python benchmarks/bench_strata.py [--sims 2000] [--jobs 2]; writes benchmarks/results/strata.json.
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np
from common import simulated_points  # benchmarks/common.py (this script's folder is on sys.path)

from vocab.coverage.strata import strata_coverage
from vocab.stats.seeds import derived_seed

SIZES = ((60, 20), (300, 100), (1000, 1000))  # (passed, failed) items
STRATA = {  # name: (passed pile's strata (shares, rates), failed pile's)
    "score informative": (([0.4, 0.3, 0.2, 0.1], [0.98, 0.9, 0.7, 0.4]), ([0.4, 0.3, 0.2, 0.1], [0.02, 0.1, 0.3, 0.6])),
    "strata alike": (([0.5, 0.3, 0.2], [0.85, 0.85, 0.85]), ([0.5, 0.3, 0.2], [0.15, 0.15, 0.15])),
    "a small stratum": (([0.9, 0.07, 0.03], [0.95, 0.5, 0.1]), ([0.9, 0.07, 0.03], [0.05, 0.5, 0.9])),
    "erring judge": (([0.34, 0.33, 0.33], [0.7, 0.5, 0.3]), ([0.34, 0.33, 0.33], [0.5, 0.3, 0.1])),
}
LABELS = (10, 30, 50)


def run_point(args) -> dict:
    (n_passed, n_failed), strata, labels, sims, seed, draws = args
    (ps, pr), (fs, fr) = STRATA[strata]
    passed, failed = dict(size=n_passed, shares=ps, rates=pr), dict(size=n_failed, shares=fs, rates=fr)
    batch = max(1, min(sims, 1_000_000 // draws))
    parts, left, n = [], sims, 0
    while left > 0:
        k = min(batch, left)
        own = derived_seed(seed, "strata", n_passed, n_failed, strata, labels, n)  # each point and batch its own stream
        parts.append(strata_coverage(passed, failed, labels, sims=k, seed=own, n_boot=draws))
        left, n = left - k, n + 1
    row = {"passed": n_passed, "failed": n_failed, "strata": strata, "labels": labels, "sims": sims}
    row["rated"] = parts[0].labels
    for f in ("coverage", "width", "whole_coverage", "whole_width", "difference_coverage", "difference_width"):
        row[f] = round(sum(getattr(p, f) * p.sims for p in parts) / sims, 6)
    return row


def summarise(rows: list[dict]) -> dict:
    out = {"points": len(rows)}
    for kind, f in (("stratified", "coverage"), ("whole", "whole_coverage"), ("difference", "difference_coverage")):
        cov = [r[f] for r in rows]
        out[kind] = {"under_93": sum(c < 0.93 for c in cov), "worst": min(cov)}
        out[kind]["within_95_2"] = sum(0.93 <= c <= 0.97 for c in cov)
    for strata in STRATA:
        ratio = [r["width"] / r["whole_width"] for r in rows if r["strata"] == strata]
        spread = {"median": float(np.median(ratio)), "min": min(ratio), "max": max(ratio)}
        out[f"width_stratified_over_whole: {strata}"] = {k: round(v, 3) for k, v in spread.items()}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--draws", type=int, default=1000, help="fiducial draws (the audit: 4000)")
    args = ap.parse_args()
    tasks = [(s, k, n, args.sims, args.seed, args.draws) for s, k, n in itertools.product(SIZES, STRATA, LABELS)]
    simulated_points(
        "strata", run_point, tasks, summarise, jobs=args.jobs, sims=args.sims, seed=args.seed, draws=args.draws
    )


if __name__ == "__main__":
    main()
