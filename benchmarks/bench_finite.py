"""Finite piles measured (issue #65 item 1) on the audits practitioners run: one fixed table of judged items (a
table is one set of items, not a draw of many), audited again and again with a fresh blind sample each time, so
the only randomness is the sample's, as in the seeded audits the issue measured. The truth is the table's own
share of true passes.

Per table: ``items`` judged items, true pass with probability ``theta``, the judge's verdict PASSED with
probability q1 for a true pass and 1 − q0 for a true fail (one table per judge, from the seed and its names).
Per audit: ``per_pile`` rows from each verdict pile (`vocab audit --per-pile`; a pile smaller than that labelled
in full), the rows' true labels as the ratings, and

- ``finite``: vocab's default since #65, :func:`vocab.stats.fiducial_correction` with the piles' rows in all (p
  known, each pile finite: :func:`vocab.stats.finite_shares`);
- ``superpopulation``: the same interval as before #65 (p drawn, the piles infinite), on the same sample and the
  same draws of the piles' rates;
- ``wilson``: Wilson's interval on as many labels drawn uniformly from the table (statsmodels), the yardstick the
  issue named, with the finite-population correction it lacks left out (as people use it);
- ``truescore-ppi++``: truescore 0.7.4's ``ppi_estimate`` on the same uniform labels.

Coverage of the table's truth, mean width, and the width ratio finite / superpopulation per judge.

Run: .venv/bin/python benchmarks/bench_finite.py [--audits 400] [--jobs 2]; writes benchmarks/results/finite.json.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import time
import warnings

import numpy as np
from common import result_record, write_result  # benchmarks/common.py (this script's folder is on sys.path)

from vocab import stats
from vocab.coverage import anchors as an

# (q1, q0): the judge (errors in one pile), an even one, truescore's plan judge, a strict one, two good ones
JUDGES = ((0.63, 0.92), (0.8, 0.8), (0.97, 0.47), (0.6, 0.95), (0.9, 0.9), (0.95, 0.75))
TABLES = ((350, 0.5, 50), (350, 0.3, 50), (350, 0.5, 25), (140, 0.5, 20), (1000, 0.5, 50))  # items, theta, per pile
METHODS = ("finite", "superpopulation", "wilson", "truescore-ppi++")
ALPHA = 0.05


def run_table(args) -> list[dict]:
    (items, theta, per_pile, (q1, q0)), audits, seed, draws = args
    from statsmodels.stats.proportion import proportion_confint
    from truescore import ppi_estimate

    pop = an.population(theta, q1, q0, items, stats.stream(seed, "finite", "table", items, theta, q1, q0))
    truth = float(pop.truth.mean())
    found = {m: [] for m in METHODS}
    for i in range(audits):
        rng = stats.stream(seed, "finite", "audit", items, theta, q1, q0, per_pile, i)
        a, b = an.pile_rows(pop, (per_pile, per_pile), rng)
        for population in ("finite", "superpopulation"):  # the same draws of the piles' rates for both
            r = an.vocab_interval(pop, a, b, stats.stream(seed, "finite", "draws", items, theta, q1, q0, per_pile, i),
                                  n_draws=draws, population=population)  # fmt: skip
            found[population].append(r)
        labels = a.size + b.size
        idx = an.uniform_labels(pop, labels, stats.stream(seed, "finite", "uniform", items, theta, q1, q0, per_pile, i))
        gold = pop.truth[idx].astype(float)
        lo, hi = proportion_confint(int(gold.sum()), labels, alpha=ALPHA, method="wilson")
        found["wilson"].append((float(gold.mean()), float(lo), float(hi)))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                e = ppi_estimate(pop.verdict.astype(float), gold, idx, alpha=ALPHA)
            found["truescore-ppi++"].append((e.point, e.low, e.high))
        except (ValueError, RuntimeError, ZeroDivisionError):
            found["truescore-ppi++"].append(None)
    rows = []
    for m, got in found.items():
        ok = [g for g in got if g is not None]
        lo, hi = np.array([g[1] for g in ok]), np.array([g[2] for g in ok])
        rows.append({
            "items": items, "theta": theta, "q1": q1, "q0": q0, "per_pile": per_pile, "method": m,
            "truth": truth, "passed_pile": int(pop.verdict.sum()), "failed_pile": int((~pop.verdict).sum()),
            "labels": int(min(per_pile, pop.verdict.sum()) + min(per_pile, (~pop.verdict).sum())),
            "audits": audits, "defined": len(ok),
            "coverage": float(np.mean((lo <= truth + 1e-12) & (truth - 1e-12 <= hi))) if ok else float("nan"),
            "mean_width": float(np.mean(hi - lo)) if ok else float("nan"),
        })  # fmt: skip
    return rows


def summarise(rows: list[dict]) -> dict:
    out = {}
    for m in METHODS:
        mine = [r for r in rows if r["method"] == m]
        out[m] = {"tables": len(mine), "under_93": sum(r["coverage"] < 0.93 for r in mine),
                  "worst": min(r["coverage"] for r in mine)}  # fmt: skip
    key = lambda r: (r["items"], r["theta"], r["q1"], r["q0"], r["per_pile"])  # noqa: E731
    sup = {key(r): r["mean_width"] for r in rows if r["method"] == "superpopulation"}
    ratios = [r["mean_width"] / sup[key(r)] for r in rows if r["method"] == "finite"]
    out["finite"]["width_vs_superpopulation"] = {"mean": float(np.mean(ratios)), "max": float(np.max(ratios)),
                                                 "min": float(np.min(ratios))}  # fmt: skip
    at_350 = [r["mean_width"] / sup[key(r)] for r in rows if r["method"] == "finite" and key(r)[0] == 350
              and key(r)[4] == 50]  # fmt: skip
    out["finite"]["width_vs_superpopulation_350_items_50_a_pile"] = {"mean": float(np.mean(at_350)),
                                                                      "max": float(np.max(at_350))}  # fmt: skip
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--audits", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--draws", type=int, default=4000, help="vocab's fiducial draws per cell (03's 4000)")
    args = ap.parse_args()
    import truescore

    t0 = time.perf_counter()
    tasks = [((n, th, k, j), args.audits, args.seed, args.draws) for (n, th, k) in TABLES for j in JUDGES]
    rows = []
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for part in pool.map(run_table, tasks):
            rows.extend(part)
            print(json.dumps({k: part[0][k] for k in ("items", "theta", "q1", "q0", "per_pile")}
                             | {r["method"]: [round(r["coverage"], 3), round(r["mean_width"], 3)] for r in part}),
                  flush=True)  # fmt: skip
    summary = summarise(rows)
    result = result_record("finite", versions={"truescore": truescore.__version__}, audits=args.audits,
                           seed=args.seed, vocab_draws=args.draws, seconds=round(time.perf_counter() - t0, 1),
                           summary=summary, rows=rows)  # fmt: skip
    print(json.dumps(summary, indent=1))
    write_result("finite", result)


if __name__ == "__main__":
    main()
