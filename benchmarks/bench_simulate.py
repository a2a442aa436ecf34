"""Simulated studies per second for every interval method, and the fast seed interval against the
row-resampling reference, side by side in one run (the study's regime: 10-row piles, N = 400).

Run: .venv/bin/python benchmarks/bench_simulate.py [--sims 2000] [--n-boot 1000]. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from vocab import coverage as simulate  # the study simulator


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=2000)
    ap.add_argument("--n-boot", type=int, default=1000)
    args = ap.parse_args()
    out = {"benchmark": "simulate", "sims": args.sims, "n_boot": args.n_boot}
    for method in simulate.METHODS:
        simulate.coverage(
            method, theta=0.5, q1=0.8, q0=0.8, attempts=400, piles=10, sims=10, seed=1, n_boot=10
        )  # warm-up
        t0 = time.perf_counter()
        c = simulate.coverage(
            method, theta=0.5, q1=0.8, q0=0.8, attempts=400, piles=10, sims=args.sims, seed=0, n_boot=args.n_boot
        )
        dt = time.perf_counter() - t0
        out[method] = {"studies_per_s": round(args.sims / dt, 1), "coverage": round(c.coverage, 4)}
    st = simulate.simulate_studies(0.5, 0.8, 0.8, 400, 10, args.sims, np.random.default_rng(0))
    t0 = time.perf_counter()
    simulate.seed_interval_rows(st, args.n_boot, np.random.default_rng(1))
    rows_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    simulate.seed_interval(st, args.n_boot, np.random.default_rng(1))
    fast_s = time.perf_counter() - t0
    out["seed_interval"] = {
        "rows_s": round(rows_s, 3),
        "counts_s": round(fast_s, 3),
        "ratio": round(rows_s / fast_s, 1),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
