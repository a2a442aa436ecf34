"""One rate for judges on the same outputs (issue #76 items 3 and 7): the coverage of the pooled rate's interval,
simulated before it is printed (`vocab.coverage.pooled.pooled_coverage`, the command's `vocab.estimates.pooled.pool`).

Two, three and six judges on 350 outputs (the size of the outside data that showed six judges' rates spreading by
0.10-0.15), 10 rows a pile each, erring independently or together (half the outputs' errors one draw for every judge),
at true rates 0.2, 0.55 and 0.8. Coverage of each study's own share of good outputs, the interval's mean width and
how many judges' piles it pooled on average (the judges in order, while every pattern of their verdicts holds a
labelled output).

Run: .venv/bin/python benchmarks/bench_pooled.py [--sims 500] [--jobs 2]; writes benchmarks/results/pooled.json.
"""

from __future__ import annotations

import argparse
import itertools

from common import simulated_points  # benchmarks/common.py (this script's folder is on sys.path)

from vocab.coverage.pooled import pooled_coverage

JUDGES = {
    2: [(0.9, 0.9), (0.95, 0.6)],
    3: [(0.9, 0.9), (0.95, 0.6), (0.7, 0.8)],
    6: [(0.9, 0.9), (0.95, 0.6), (0.7, 0.8), (0.8, 0.8), (0.85, 0.7), (0.6, 0.9)],
}
THETAS = (0.2, 0.55, 0.8)
SHARED = (0.0, 0.5)
OUTPUTS, PER_PILE = 350, 10


def run_point(args) -> dict:
    (m, theta, shared), sims, seed, draws = args
    return pooled_coverage(theta, JUDGES[m], outputs=OUTPUTS, per_pile=PER_PILE, shared=shared, sims=sims,
                           seed=seed, n_draws=draws)  # fmt: skip


def summarise(rows: list[dict]) -> dict:
    cov = [r["coverage"] for r in rows]
    return {"points": len(rows), "min_coverage": min(cov), "mean_coverage": sum(cov) / len(cov),
            "under_93": sum(c < 0.93 for c in cov),
            "min_defined": min(r["defined"] / r["sims"] for r in rows)}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--draws", type=int, default=1000)
    args = ap.parse_args()
    tasks = [(pt, args.sims, args.seed, args.draws) for pt in itertools.product(JUDGES, THETAS, SHARED)]
    simulated_points("pooled", run_point, tasks, summarise, jobs=args.jobs, sims=args.sims, seed=args.seed,
                     draws=args.draws, outputs=OUTPUTS, per_pile=PER_PILE)  # fmt: skip


if __name__ == "__main__":
    main()
