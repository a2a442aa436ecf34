"""The FAILED pile's weighted rows under the finite population (issue #65 item 1): three ways to complete the pile,
on the study's own design, simulated where the truth is known.

The failed pile draws *levels* with a failed attempt, one failed attempt each, weighted by the level's number of
failed attempts (`vocab sample`, seed 000). With theta the share of the study's own attempts, the pile is the
finite set of the critic's failed attempts; how much of it a labelled row pins down is the question:

- ``attempts`` (vocab's): each labelled row is one attempt known; the pile's other failed attempts (a sampled
  level's other failures among them) pass by Binomial(rest, π), π the fiducial draw of the pile's weighted rate
  (:func:`vocab.stats.finite_shares` over the critic's failed attempts);
- ``levels``: each labelled row stands for its level's failed attempts, all known: the row repeated its weight's
  worth of times, the rest by Binomial(rest, π) (π then drawn on the repeated rows too, not the levels' Kish rows);
- ``infinite``: the pile drawn as infinite (the weighted pile's treatment before this benchmark), the PASSED pile
  still finite.

Per point of the coverage grid's design (140 levels, 3 attempts, 40 rows a pile; θ, q1 = sensitivity, q0 =
specificity, level spread as `vocab coverage-grid` draws them) at the critics that err (q1 and q0 below 0.95):
coverage of each study's own share of good attempts and mean width, beside ``oracle-shortest`` (the grid's width
yardstick: the shortest range of the estimate's own errors, one width a point). Every treatment sees the same
simulated studies and the same draws of the piles' rates.

Run: .venv/bin/python benchmarks/bench_weighted_failed.py [--sims 1000] [--jobs 2]; writes
benchmarks/results/weighted_failed.json.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import itertools
import json
import time

import numpy as np
from common import result_record, write_result  # benchmarks/common.py (this script's folder is on sys.path)

from vocab import stats
from vocab.coverage import clustered as cl

THETAS = (0.2, 0.5, 0.8)
QS = (0.5, 0.7, 0.9)  # q1 and q0 each: the critics that err
SPREADS = (2.0, np.inf)
PILES, LEVELS, MAX_ATTEMPTS = 40, 140, 3
TREATMENTS = ("attempts", "levels", "infinite")


def _levels_pile(st: cl.ClusteredStudies):
    """The failed pile with each labelled row repeated as often as it weighs: its level's failures all known."""
    reps = st.weights.astype(int)  # 0 past the pile's end
    width = max(int(reps.sum(axis=1).max()), 1)
    out = np.full((len(st.p), width), np.nan)
    for i in range(len(st.p)):
        vals = np.repeat(st.failed[i], reps[i])
        out[i, : vals.size] = vals
    return out


def run_point(args) -> dict:
    (theta, q1, q0, spread), sims, seed, draws = args
    names = ("weighted-failed", theta, q1, q0, spread)
    st = cl.simulate_clustered(theta, q1, q0, levels=LEVELS, max_attempts=MAX_ATTEMPTS, piles=PILES, spread=spread,
                               sims=sims, rng=stats.stream(seed, *names, "studies"))  # fmt: skip
    base = cl.clustered_piles(st, stats.FINITE)
    ok = st.defined
    row = {"theta": theta, "q1": q1, "q0": q0, "spread": "inf" if np.isinf(spread) else spread, "sims": sims,
           "defined": int(ok.sum()),
           "mean_weight": float(st.weights[st.weights > 0].mean())}  # fmt: skip
    for t in TREATMENTS:
        piles = base
        if t == "infinite":
            piles = stats.Piles(base.p, base.attempts, base.passed, base.failed, base.weights, base.deff,
                                base.passed_total, np.full_like(base.failed_total, np.nan))  # fmt: skip
        elif t == "levels":
            y = _levels_pile(st)  # the sampled levels' failures, all within the pile's failed attempts
            piles = stats.Piles(base.p, base.attempts, base.passed, y, (~np.isnan(y)).astype(float), base.deff,
                                base.passed_total, base.failed_total)  # fmt: skip
        r = stats.correction_intervals("fiducial", piles, n_draws=draws, rng=stats.stream(seed, *names, "draws"))
        lo, hi, truth = r.low[ok], r.high[ok], st.truth[ok]
        row[t] = {"coverage": float(np.mean((lo <= truth + 1e-12) & (truth - 1e-12 <= hi))),
                  "mean_width": float(np.mean(hi - lo))}  # fmt: skip
    est, lo, hi = cl.oracle_interval(cl.clustered_estimate(st), st.truth, ok, shortest=True)
    row["oracle-shortest"] = {"mean_width": float(np.nanmean((hi - lo)[ok]))}
    return row


def summarise(rows: list[dict]) -> dict:
    out = {}
    for t in TREATMENTS:
        cov = np.array([r[t]["coverage"] for r in rows])
        width = np.array([r[t]["mean_width"] / r["oracle-shortest"]["mean_width"] for r in rows])
        out[t] = {"points": len(rows), "within_95_pm_2": float(np.mean(np.abs(cov - 0.95) <= 0.02)),
                  "under_93": int(np.sum(cov < 0.93)), "mean_coverage": float(cov.mean()),
                  "min_coverage": float(cov.min()), "max_coverage": float(cov.max()),
                  "width_vs_oracle_shortest": float(width.mean())}  # fmt: skip
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--draws", type=int, default=1000, help="fiducial draws per study (the grid's n_boot)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    points = list(itertools.product(THETAS, QS, QS, SPREADS))
    tasks = [(pt, args.sims, args.seed, args.draws) for pt in points]
    rows = []
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for row in pool.map(run_point, tasks):
            rows.append(row)
            print(json.dumps({k: row[k] for k in ("theta", "q1", "q0", "spread")}
                             | {t: round(row[t]["coverage"], 3) for t in TREATMENTS}), flush=True)  # fmt: skip
    summary = summarise(rows)
    result = result_record("weighted_failed", sims=args.sims, seed=args.seed, draws=args.draws, piles=PILES,
                           levels=LEVELS, max_attempts=MAX_ATTEMPTS, seconds=round(time.perf_counter() - t0, 1),
                           summary=summary, rows=rows)  # fmt: skip
    print(json.dumps(summary, indent=1))
    write_result("weighted_failed", result)


if __name__ == "__main__":
    main()
