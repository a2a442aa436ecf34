"""Simulated studies per second for every interval method, side by side in one run: the unclustered simulator
(the study's regime: 10-row piles, N = 400) and the level-clustered one the committed coverage grid runs (140
levels of up to 3 attempts, spread 2, 10-row piles; the two oracle yardsticks included), every method on the same
studies.

Run: .venv/bin/python benchmarks/bench_simulate.py [--sims 2000] [--n-boot 1000]. Prints one JSON object and
writes it to benchmarks/results/simulate.json. A measurement, not a test: run it on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from common import result_record, write_result  # benchmarks/common.py (this script's folder is on sys.path)

from vocab import coverage as simulate  # the study simulator
from vocab.coverage.clustered import (
    ORACLES,
    POINT_METHODS,
    clustered_estimate,
    clustered_interval,
    oracle_interval,
    population_theta,
    simulate_clustered,
)
from vocab.coverage.simulate import coverage_of
from vocab.stats import SUPERPOPULATION


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=2000)
    ap.add_argument("--n-boot", type=int, default=1000)
    args = ap.parse_args()
    unclustered = {}
    # the superpopulation: what simulate.json recorded before the simulator took a population
    at = {"theta": 0.5, "q1": 0.8, "q0": 0.8, "attempts": 400, "piles": 10, "population": SUPERPOPULATION}
    for method in simulate.METHODS:
        simulate.coverage(method, **at, sims=10, seed=1, n_boot=10)  # warm-up
        t0 = time.perf_counter()
        c = simulate.coverage(method, **at, sims=args.sims, seed=0, n_boot=args.n_boot)
        dt = time.perf_counter() - t0
        unclustered[method] = {"studies_per_s": round(args.sims / dt, 1), "coverage": round(c.coverage, 4)}
    point = {"theta": 0.5, "q1": 0.8, "q0": 0.8, "spread": 2.0}
    design = {"levels": 140, "max_attempts": 3, "piles": 10}
    t0 = time.perf_counter()
    studies = simulate_clustered(**point, **design, sims=args.sims, rng=np.random.default_rng(0))
    clustered = {
        "point": {**point, **design},
        "simulate_studies_per_s": round(args.sims / (time.perf_counter() - t0), 1),
    }
    target = population_theta(point["theta"], point["q1"], point["q0"], point["spread"], design["max_attempts"])
    for method in POINT_METHODS:  # the interval alone, on the same studies
        t0 = time.perf_counter()
        if method in ORACLES:
            est, lo, hi = oracle_interval(
                clustered_estimate(studies), target, studies.defined, shortest=method != "oracle"
            )
        else:
            est, lo, hi = clustered_interval(method, studies, args.n_boot, np.random.default_rng(1))
        dt = time.perf_counter() - t0
        c = coverage_of(method, est, lo, hi, target, studies.defined)
        clustered[method] = {"studies_per_s": round(args.sims / dt, 1), "coverage": round(c.coverage, 4)}
    out = result_record(
        "simulate",
        sims=args.sims,
        n_boot=args.n_boot,
        unclustered=unclustered,
        clustered=clustered,
    )
    write_result("simulate", out)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
