"""The Monte-Carlo error of every printed end (issue #76 item 5): how far an interval's printed end moves with the
seed alone, at the draws the commands use.

Since #76 an estimate's draws come from the seed and its own data (`vocab.stats.data_stream`) and a randomised
interval's randomisation from its data alone (`vocab.stats.randomisation`), so the seed moves nothing but the
Monte-Carlo draws. On the committed data (the reference runs, the imported mlflow audit), for each number of draws,
every printed end is recomputed under ``--seeds`` seeds, for the finite population (the default: its fiducial ends are
computed exactly where the piles' lattice allows, `vocab.stats.exact`) and the superpopulation (drawn): the correction
table's θ, q1 and q0 ends for every rater variant and cell (printed in whole percent, to 0.1 under 10 %:
`vocab.report`), and the ends of every difference between two cells under each rater (`vocab compare`: whole points)
with its leniency gap and its q1 and q0 differences. Per end: its standard
deviation across the seeds in points (the Monte-Carlo error) and whether its printed text is the same under every
seed. The summary gives, per number of draws, the largest standard deviation against the printed unit.

Run: .venv/bin/python benchmarks/bench_mc_error.py [--seeds 20] [--draws 4000 20000]; writes
benchmarks/results/mc_error.json.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from common import ROOT, result_record, write_result  # benchmarks/common.py (this script's folder is on sys.path)

from vocab import stats
from vocab.estimates.compare import comparisons
from vocab.estimates.correct import corrected, correction_table

SOURCES = ("data/runs/reference", "data/runs/reference-v1", "data/audits/mlflow-reviewers")
RATE_ENDS = ("ci_low", "ci_high", "q1_low", "q1_high", "q0_low", "q0_high")
DIFF_ENDS = (
    "ci_low",
    "ci_high",
    "leniency_ci_low",
    "leniency_ci_high",
    "q1_ci_low",
    "q1_ci_high",
    "q0_ci_low",
    "q0_ci_high",
)
POPULATIONS = (stats.FINITE, stats.SUPERPOPULATION)


def rate_text(x: float) -> str:
    """As the report prints a rate (vocab.report._num): whole percent, one decimal under 10 %."""
    v = 100 * x
    return f"{v:.1f}".removesuffix(".0") if 0 < v < 9.95 else f"{v:.0f}"


def rate_unit(x: float) -> float:
    return 0.1 if 0 < 100 * x < 9.95 else 1.0


def ends(source: str, draws: int, seed: int, population: str) -> dict[tuple, float]:
    """Every printed end of the source's correction table and comparisons at ``draws`` and ``seed``."""
    c = corrected(ROOT / source)
    out = {}
    table = correction_table(c.data, c.key, c.passes, n_boot=draws, seed=seed, population=population)
    for r in table.itertuples():
        for e in RATE_ENDS:
            out[("rate", population, source, r.rater, r.cell, e)] = float(getattr(r, e))
    pairs = comparisons(c.data, c.key, c.passes, n_boot=draws, seed=seed, population=population)
    for rater, comp in pairs.items():
        for r in comp.pairs.itertuples():
            for e in DIFF_ENDS:
                out[("difference", population, source, rater, f"{r.b} - {r.a}", e)] = float(getattr(r, e))
    return out


def measure(draws: int, seeds: int, population: str) -> dict:
    per_seed = [{k: v for s in SOURCES for k, v in ends(s, draws, seed, population).items()} for seed in range(seeds)]
    rows = []
    for k in per_seed[0]:
        v = np.array([d[k] for d in per_seed])
        if not np.isfinite(v).all():
            continue
        kind = k[0]
        if kind == "rate":
            texts = {rate_text(x) for x in v}
            unit = min(rate_unit(x) for x in v)
        else:
            texts = {f"{100 * x:+.0f}" for x in v}
            unit = 1.0
        sd = float(np.std(100 * v, ddof=1))
        rows.append({"end": list(k), "sd_points": round(sd, 4), "unit_points": unit, "printed": sorted(texts)})
    sd = np.array([r["sd_points"] for r in rows])
    rel = np.array([r["sd_points"] / r["unit_points"] for r in rows])
    stable = np.array([len(r["printed"]) == 1 for r in rows])
    worst = rows[int(np.argmax(rel))]
    return {
        "population": population,
        "draws": draws,
        "ends": len(rows),
        "max_sd_points": float(sd.max()),
        "mean_sd_points": float(sd.mean()),
        "max_sd_per_unit": float(rel.max()),
        "ends_sd_over_a_third_unit": int(np.sum(rel > 1 / 3)),
        "printed_the_same_under_every_seed": float(stable.mean()),
        "worst": worst,
        "rows": rows,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--draws", type=int, nargs="+", default=[4000, stats.N_DRAWS])
    args = ap.parse_args()
    t0 = time.perf_counter()
    results = []
    for population in POPULATIONS:
        for d in args.draws:
            r = measure(d, args.seeds, population)
            print({k: v for k, v in r.items() if k != "rows"}, flush=True)
            results.append(r)
    summary = [{k: v for k, v in r.items() if k not in ("rows",)} for r in results]
    write_result(
        "mc_error",
        result_record(
            "mc_error",
            seeds=args.seeds,
            sources=list(SOURCES),
            command_draws=stats.N_DRAWS,
            seconds=round(time.perf_counter() - t0, 1),
            summary=summary,
            rows=[r["rows"] for r in results],
        ),
    )


if __name__ == "__main__":
    main()
