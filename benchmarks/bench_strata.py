"""A sample drawn by strata within each pile (`vocab audit --strata score|COLUMN`, :mod:`vocab.stats.strata`): the
stratified interval's coverage of the study's own theta (and of the judge's q0) and its mean width, beside the same
number of labels drawn from each pile whole and corrected as today, on the same simulated populations, and the
difference of two such cells (:func:`vocab.coverage.strata.strata_coverage`). Points: pile sizes, how the strata
differ, labels a pile (near-pure strata: 3, 5 and 10 labels a stratum).

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
    # issue #76: strata nearly pure, labelled 3-10 rows a stratum (NEAR_PURE_LABELS)
    "near-pure score bands": (([0.25] * 4, [1, 0.95, 0.9, 0.8]), ([0.25] * 4, [0, 0.02, 0.05, 0.1])),
    "near-pure columns": (([1 / 6] * 6, [1, 1, 0.95, 0.9, 0.9, 0.8]), ([1 / 6] * 6, [0, 0, 0.02, 0.05, 0.1, 0.1])),
}
LABELS = (10, 30, 50)  # rows a pile
NEAR_PURE_LABELS = (3, 5, 10)  # rows a stratum, for the near-pure strata


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
    fields = ("coverage", "width", "whole_coverage", "whole_width", "difference_coverage", "difference_width")
    for f in (*fields, "q0_coverage", "whole_q0_coverage"):
        row[f] = round(sum(getattr(p, f) * p.sims for p in parts) / sims, 6)
    return row


def summarise(rows: list[dict]) -> dict:
    out = {"points": len(rows)}
    kinds = (("stratified", "coverage"), ("whole", "whole_coverage"), ("difference", "difference_coverage"))
    for kind, f in (*kinds, ("stratified q0", "q0_coverage"), ("whole q0", "whole_q0_coverage")):
        cov = [r[f] for r in rows]
        out[kind] = {"under_93": sum(c < 0.93 for c in cov), "worst": min(cov)}
        out[kind]["within_95_2"] = sum(0.93 <= c <= 0.97 for c in cov)
    for strata in STRATA:
        # a pile rated whole (a census point) has no width either way: no ratio
        ratio = [r["width"] / r["whole_width"] for r in rows if r["strata"] == strata and r["whole_width"] > 0]
        spread = {"median": float(np.median(ratio)), "min": min(ratio), "max": max(ratio)}
        out[f"width_stratified_over_whole: {strata}"] = {k: round(v, 3) for k, v in spread.items()}
    # score bands never wider and less covering than no bands
    out["wider_and_less_covering"] = sum(
        r["width"] > r["whole_width"] and r["coverage"] < r["whole_coverage"] for r in rows
    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--draws", type=int, default=1000, help="fiducial draws (the audit: 4000)")
    args = ap.parse_args()
    tasks = []
    for size, strata in itertools.product(SIZES, STRATA):
        pure = strata.startswith("near-pure")
        per = [n * len(STRATA[strata][0][0]) for n in NEAR_PURE_LABELS] if pure else LABELS
        tasks += [(size, strata, n, args.sims, args.seed, args.draws) for n in per]
    simulated_points(
        "strata", run_point, tasks, summarise, jobs=args.jobs, sims=args.sims, seed=args.seed, draws=args.draws
    )


if __name__ == "__main__":
    main()
