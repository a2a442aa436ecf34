"""q1 and q0 under finite piles (issue #76 item 2, :func:`vocab.coverage.finite_q.finite_q_coverage`): fixed piles
audited again and again, the coverage of their own theta, q1 and q0 by the interval `vocab audit` prints (q1's and
q0's ends from each pile's bounding draws), beside the ends of the fiducial draws themselves (the rule until
2026-12) from the same run, and how often q0's (q1's) lower end lies above the truth. Points: a strict judge (a
small PASSED pile labelled all but a row or two: the issue's 11 + 300 items at 10 + 10 labels, 5 + 100 at 4 + 10,
3 + 400 at 2 + 10), a lenient one (the same with the piles' roles swapped), and piles labelled in small part.

Run: .venv/bin/python benchmarks/bench_finite_q.py [--audits 2000] [--jobs 2]; writes
benchmarks/results/finite_q.json.
"""

from __future__ import annotations

import argparse
import dataclasses

from common import simulated_points  # benchmarks/common.py (this script's folder is on sys.path)

from vocab.coverage.finite_q import finite_q_coverage
from vocab.stats.seeds import derived_seed

# name: ((passed rows, true passes), (failed rows, true passes), (labels passed, labels failed))
POINTS = {
    "strict 11+300 at 10+10": ((11, 10), (300, 90), (10, 10)),
    "strict 11+300 at 10+10, pure failed": ((11, 10), (300, 15), (10, 10)),
    "strict 5+100 at 4+10": ((5, 4), (100, 30), (4, 10)),
    "strict 3+400 at 2+10": ((3, 2), (400, 120), (2, 10)),
    "strict 12+300 at 10+10": ((12, 10), (300, 90), (10, 10)),
    "lenient 300+11 at 10+10": ((300, 210), (11, 1), (10, 10)),
    "lenient 100+5 at 10+4": ((100, 70), (5, 1), (10, 4)),
    "lenient 400+3 at 10+2": ((400, 280), (3, 1), (10, 2)),
    "lenient 300+12 at 10+10": ((300, 210), (12, 2), (10, 10)),
    "even 140+210 at 50+50": ((140, 110), (210, 40), (50, 50)),
    "even 300+100 at 30+30": ((300, 240), (100, 20), (30, 30)),
    "small 60+20 at 10+10": ((60, 57), (20, 1), (10, 10)),
}


def run_point(args) -> dict:
    name, audits, seed, draws = args
    passed, failed, labels = POINTS[name]
    r = finite_q_coverage(
        passed, failed, labels, audits=audits, seed=derived_seed(seed, "finite_q", name), n_draws=draws
    )
    row = {"point": name, "passed": list(passed), "failed": list(failed), "labels": list(labels)}
    return row | {k: round(v, 6) if isinstance(v, float) else v for k, v in dataclasses.asdict(r).items()}


def summarise(rows: list[dict]) -> dict:
    out = {"points": len(rows)}
    for f in ("theta", "q1", "q0", "q1_fiducial", "q0_fiducial"):
        cov = [r[f] for r in rows]
        out[f] = {"under_93": sum(c < 0.93 for c in cov), "worst": min(cov)}
    for f in ("q0_low_above", "q0_low_above_fiducial", "q1_low_above", "q1_low_above_fiducial"):
        out[f] = {"worst": max(r[f] for r in rows)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--audits", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--draws", type=int, default=4000, help="fiducial draws (the audit's 4000)")
    args = ap.parse_args()
    tasks = [(name, args.audits, args.seed, args.draws) for name in POINTS]
    simulated_points(
        "finite_q", run_point, tasks, summarise, jobs=args.jobs, audits=args.audits, seed=args.seed, draws=args.draws
    )


if __name__ == "__main__":
    main()
