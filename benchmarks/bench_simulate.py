"""Simulated studies per second: the study simulator plus seed 000's bootstrap interval, in the study's regime.

Run: .venv/bin/python benchmarks/bench_simulate.py [--sims 2000] [--n-boot 1000]. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import time

from vocab.simulate import coverage


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=2000)
    ap.add_argument("--n-boot", type=int, default=1000)
    args = ap.parse_args()
    t0 = time.perf_counter()
    c = coverage("seed", theta=0.5, q1=0.8, q0=0.8, attempts=400, piles=10, sims=args.sims, seed=0, n_boot=args.n_boot)
    dt = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "benchmark": "simulate",
                "sims": args.sims,
                "n_boot": args.n_boot,
                "seconds": round(dt, 3),
                "studies_per_s": round(args.sims / dt, 1),
                "coverage": round(c.coverage, 4),
            }
        )
    )


if __name__ == "__main__":
    main()
