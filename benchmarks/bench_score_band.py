"""The judge's-score curve's band (vocab.estimates.scores.curve): how often its pointwise 95 % band holds the true
pass share at each score, on simulated samples of a known monotone curve.

Each simulated sample has ``rows`` rated items, their scores drawn uniformly from the levels 1..L and people's
verdicts drawn with the known pass share at each level (a logistic curve, or a step); the report's curve is fitted
and its band read at every level. Coverage is per level (the band is pointwise), pooled over levels and samples,
and the worst level's too. Each sample draws from its own stream of the seed and its point.

Run: .venv/bin/python benchmarks/bench_score_band.py [--sims 100]; writes benchmarks/results/score_band.json.
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
    ap.add_argument("--sims", type=int, default=100)
    ap.add_argument("--n-boot", type=int, default=300)
    args = ap.parse_args()
    out = []
    for name, levels, rows in POINTS:
        hits, seen = np.zeros(levels), np.zeros(levels)
        widths = []
        for s in range(args.sims):
            rng = stats.stream(0, "bench-score-band", name, levels, rows, s)
            x = rng.integers(1, levels + 1, rows).astype(float)
            truth = CURVES[name](x, levels)
            y = (rng.random(rows) < truth).astype(float)
            ids = [f"b{i}" for i in range(rows)]
            c = curve(pd.Series(x, index=ids), pd.Series(y, index=ids), seed=s, cell=name, n_boot=args.n_boot)
            t = CURVES[name](c.score.to_numpy(), levels)
            k = c.score.to_numpy(dtype=int) - 1
            hits[k] += (c.fit_low.to_numpy() <= t + 1e-12) & (t <= c.fit_high.to_numpy() + 1e-12)
            seen[k] += 1
            widths.append(float(np.median(c.fit_high - c.fit_low)))
        per = hits / np.maximum(seen, 1)
        row = {"curve": name, "levels": levels, "rows": rows, "coverage": round(float(hits.sum() / seen.sum()), 4),
               "worst_level": round(float(per.min()), 4),
               "median_width": round(float(np.median(widths)), 4)}  # fmt: skip
        out.append(row)
        print(json.dumps(row), flush=True)
    worst = min(r["coverage"] for r in out)
    result = result_record("score_band", sims=args.sims, n_boot=args.n_boot, points=out, worst=worst,
                           worst_level=min(r["worst_level"] for r in out))  # fmt: skip
    write_result("score_band", result)


if __name__ == "__main__":
    main()
