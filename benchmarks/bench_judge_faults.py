"""The judge's faults as rates (`vocab.estimates.pairwise.judge_faults`): the swap inconsistency and the
first-position preference are each k of n items with an exact (Clopper–Pearson) interval for the judge's rate on
items like them. Its coverage is computed exactly, not simulated: for each n and true rate, the binomial
probability of the k whose interval holds the rate. Points: n from 3 to 500 items, rates from 0.01 to 0.99.

Run: .venv/bin/python benchmarks/bench_judge_faults.py; writes benchmarks/results/judge_faults.json.
"""

from __future__ import annotations

import numpy as np
from common import result_record, write_result  # benchmarks/common.py (this script's folder is on sys.path)
from scipy.stats import binom

from vocab.estimates.pairwise import clopper_pearson

ITEMS = (3, 5, 10, 20, 50, 100, 200, 500)
RATES = tuple(np.round(np.concatenate([[0.01, 0.02, 0.05], np.arange(0.1, 0.91, 0.05), [0.95, 0.98, 0.99]]), 2))


def coverage(n: int, rate: float) -> float:
    k = np.arange(n + 1)
    ends = np.array([clopper_pearson(int(x), n) for x in k])
    holds = (ends[:, 0] <= rate) & (rate <= ends[:, 1])
    return float(binom.pmf(k, n, rate)[holds].sum())


def main() -> None:
    rows = [{"items": n, "rate": float(r), "coverage": round(coverage(n, float(r)), 6)} for n in ITEMS for r in RATES]
    cov = [r["coverage"] for r in rows]
    summary = {"points": len(rows), "worst": min(cov), "at_or_above_95": sum(c >= 0.95 for c in cov) / len(cov)}
    print(summary)
    write_result("judge_faults", result_record("judge_faults", summary=summary, rows=rows))


if __name__ == "__main__":
    main()
