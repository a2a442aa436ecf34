"""Systems against the field (`vocab.stats.pairwise_field.field_win_rates`): the coverage of each system's
corrected win rate over every item it appears in (ties half, items weighted alike), from its cells' joint draws,
and its mean width (`vocab.coverage.pairwise_field.field_coverage`). Points: four systems of two spreads of
strength, every pair a cell of 150 or 1,000 items, an erring or a first-position judge, 5 or 15 labels a pile.

Run: .venv/bin/python benchmarks/bench_pairwise_field.py [--sims 1000] [--jobs 2]; writes
benchmarks/results/pairwise_field.json.
"""

from __future__ import annotations

import argparse
import itertools

from common import simulated_points  # benchmarks/common.py (this script's folder is on sys.path)

from vocab.coverage.pairwise import JUDGES
from vocab.coverage.pairwise_field import field_coverage
from vocab.stats.seeds import derived_seed

STRENGTHS = {"close": (0.0, 0.2, 0.4, -0.2), "spread": (0.0, 1.0, 2.0, -1.0)}
ITEMS = (150, 1000)
LABELS = (5, 15)
TIE = 0.15  # people's tie share in every pairing
BAR = 0.93


def run_point(args) -> dict:
    spread, items, judge, labels, sims, seed, draws = args
    own = derived_seed(seed, "pairwise_field", spread, items, judge, labels)
    r = field_coverage(STRENGTHS[spread], items, JUDGES[judge], labels, TIE, sims=sims, seed=own, n_draws=draws)
    return {
        "strengths": spread,
        "items": items,
        "judge": judge,
        "labels": labels,
        "sims": sims,
        "coverage": [round(c, 4) for c in r.coverage],
        "width": [round(w, 4) for w in r.width],
    }


def summarise(rows: list[dict]) -> dict:
    cov = [c for r in rows for c in r["coverage"]]
    return {
        "points": len(rows),
        "system_rates": len(cov),
        "at_or_above_93": round(sum(c >= BAR for c in cov) / len(cov), 4),
        "within_95_2": round(sum(0.93 <= c <= 0.97 for c in cov) / len(cov), 4),
        "worst": min(cov),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--draws", type=int, default=1000, help="fiducial draws (the audit: 4000)")
    args = ap.parse_args()
    points = itertools.product(STRENGTHS, ITEMS, ("erring", "first-position"), LABELS)
    tasks = [(s, n, j, k, args.sims, args.seed, args.draws) for s, n, j, k in points]
    simulated_points(
        "pairwise_field", run_point, tasks, summarise, jobs=args.jobs, sims=args.sims, seed=args.seed, draws=args.draws
    )


if __name__ == "__main__":
    main()
