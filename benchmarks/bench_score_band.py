"""The judge's-score curve's band (vocab.estimates.scores.curve, :func:`~vocab.estimates.scores.monotone_band`): how
often its simultaneous 95 % band holds the true pass share at every score of a sample at once, and at each score,
on simulated samples of a known monotone curve.

Each simulated sample has ``rows`` rated items, their scores drawn uniformly from the levels 1..L and people's
verdicts drawn with the known pass share at each level (a logistic curve, or a step); the report's curve is fitted
and its band read at every level the sample holds. Coverage: simultaneous (every level of a sample at once), per
level pooled over levels and samples, and the worst level's. Each sample draws from its own stream of the seed and
its point.

Run: .venv/bin/python benchmarks/bench_score_band.py [--sims 1000]; writes benchmarks/results/score_band.json.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import pandas as pd
from common import result_record, write_result  # benchmarks/common.py (this script's folder is on sys.path)

from vocab import stats
from vocab.estimates.scores import curve

CURVES = {
    "logistic": lambda x, levels: 1 / (1 + np.exp(-(x - (levels + 1) / 2))),
    "step": lambda x, levels: np.where(x > levels / 2, 0.9, 0.2),
}
POINTS = [(name, levels, rows) for name in CURVES for levels in (5, 10) for rows in (40, 120)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=1000)
    args = ap.parse_args()
    out = []
    for name, levels, rows in POINTS:
        hits, seen = np.zeros(levels), np.zeros(levels)
        widths, every = [], 0
        for s in range(args.sims):
            rng = stats.stream(0, "bench-score-band", name, levels, rows, s)
            x = rng.integers(1, levels + 1, rows).astype(float)
            truth = CURVES[name](x, levels)
            y = (rng.random(rows) < truth).astype(float)
            ids = [f"b{i}" for i in range(rows)]
            c = curve(pd.Series(x, index=ids), pd.Series(y, index=ids))
            t = CURVES[name](c.score.to_numpy(), levels)
            k = c.score.to_numpy(dtype=int) - 1
            held = (c.fit_low.to_numpy() <= t + 1e-12) & (t <= c.fit_high.to_numpy() + 1e-12)
            hits[k] += held
            seen[k] += 1
            every += bool(held.all())
            widths.append(float(np.median(c.fit_high - c.fit_low)))
        per = hits / np.maximum(seen, 1)
        row = {"curve": name, "levels": levels, "rows": rows, "simultaneous": round(every / args.sims, 4),
               "coverage": round(float(hits.sum() / seen.sum()), 4),
               "worst_level": round(float(per.min()), 4),
               "median_width": round(float(np.median(widths)), 4)}  # fmt: skip
        out.append(row)
        print(json.dumps(row), flush=True)
    worst = min(r["coverage"] for r in out)
    simultaneous = min(r["simultaneous"] for r in out)
    result = result_record("score_band", sims=args.sims, points=out, worst=worst, simultaneous=simultaneous,
                           worst_level=min(r["worst_level"] for r in out))  # fmt: skip
    write_result("score_band", result)


if __name__ == "__main__":
    main()
