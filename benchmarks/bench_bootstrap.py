"""Vectorised bootstrap of the correction vs scipy.stats.bootstrap, side by side in one run, as a ratio.

The workload of one calibration: 4 cells x 4000 resamples x every rater variant (default 3 variants), each
cell with a 10-row passed pile and a weighted 10-row failed pile. Prints one JSON object and writes it to
benchmarks/results/bootstrap.json. A measurement, not a test: nothing here asserts a speed.
Run: .venv/bin/python benchmarks/bench_bootstrap.py [--variants 3] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import scipy.stats
from common import result_record, write_result  # benchmarks/common.py (this script's folder is on sys.path)

from vocab import stats


def workload(rng, cells=4, variants=3, n=10):
    return [
        (
            rng.random(),
            rng.integers(0, 2, n).astype(float),
            rng.integers(0, 2, n).astype(float),
            rng.integers(1, 4, n).astype(float),
        )
        for _ in range(cells * variants)
    ]


def ours(jobs, n_boot, seed):
    rng = np.random.default_rng(seed)
    return [stats.bootstrap_correction(p, x, y, w, n_resamples=n_boot, rng=rng).theta_ci for p, x, y, w in jobs]


def reference(jobs, n_boot, seed):
    rng = np.random.default_rng(seed)
    out = []
    for p, x, y, w in jobs:

        def theta(xs, idx, axis=-1, y=y, w=w, p=p):
            idx = idx.astype(int)
            return p * xs.mean(axis=axis) + (1 - p) * (y[idx] * w[idx]).sum(axis=axis) / w[idx].sum(axis=axis)

        r = scipy.stats.bootstrap(
            (x, np.arange(y.size, dtype=float)),
            theta,
            paired=False,
            vectorized=True,
            n_resamples=n_boot,
            method="percentile",
            rng=rng,
        )
        out.append((r.confidence_interval.low, r.confidence_interval.high))
    return out


def best_of(fn, repeats, *args):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", type=int, default=3)
    ap.add_argument("--n-boot", type=int, default=4000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    jobs = workload(np.random.default_rng(0), variants=args.variants)
    t_ours = best_of(ours, args.repeats, jobs, args.n_boot, 0)
    t_ref = best_of(reference, args.repeats, jobs, args.n_boot, 0)
    result = result_record(
        "bootstrap",
        jobs=len(jobs),
        n_boot=args.n_boot,
        repeats=args.repeats,
        vocab_s=round(t_ours, 4),
        scipy_s=round(t_ref, 4),
        speedup_vs_scipy=round(t_ref / t_ours, 2),
    )
    write_result("bootstrap", result)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
