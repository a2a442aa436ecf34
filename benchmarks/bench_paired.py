"""Two judges on the same outputs (`vocab compare --paired`, :mod:`vocab.estimates.paired`): the paired
sensitivity and specificity differences beside the independent ones they replace, on the same simulated studies
(:func:`vocab.coverage.paired.paired_coverage`): coverage of the study's own q1_b − q1_a and q0_b − q0_a and mean
width, per point (theta, the two judges, outputs, rows a pile). Batches of studies draw from their own streams.
Judges that err independently, and judges that mostly agree (``COPIES``: they disagree on 0.5-5 % of outputs, so
the strata of disagreement are often unrated): there the bounded comparison (``bounded_*``, every study) stands
beside the paired one (``defined`` studies only).

Run: .venv/bin/python benchmarks/bench_paired.py [--sims 2000] [--jobs 2]; writes benchmarks/results/paired.json.
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np
from common import simulated_points  # benchmarks/common.py (this script's folder is on sys.path)

from vocab.coverage.paired import paired_coverage

THETAS = (0.1, 0.3, 0.5)
JUDGES = {  # name: ((q1, q0) of judge a, of judge b)
    "one judge twice": ((0.85, 0.85), (0.85, 0.85)),
    "b lenient": ((0.9, 0.9), (0.95, 0.6)),
    "a strict, b good": ((0.6, 0.95), (0.9, 0.9)),
}
# judges that mostly agree: b is a's verdict turned on a few outputs, its errors a's errors but for those (name:
# (q1, q0) of judge a, (P(PASSED turned FAILED), P(FAILED turned PASSED))): they disagree on 0.5-5 % of outputs
COPIES = {
    "agree but 0.5 %": ((0.85, 0.85), (0.00125, 0.005)),
    "agree but 1 %": ((0.85, 0.85), (0.0025, 0.01)),
    "agree but 3 %": ((0.9, 0.7), (0.015, 0.03)),
    "agree but 5 %": ((0.85, 0.85), (0.0125, 0.05)),
}
OUTPUTS = (100, 400)
PILES = (10, 20, 50)
FIELDS = (
    "q1_coverage",
    "q0_coverage",
    "q1_width",
    "q0_width",
    "independent_q1_coverage",
    "independent_q0_coverage",
    "independent_q1_width",
    "independent_q0_width",
)
BOUNDED = ("bounded_q1_coverage", "bounded_q0_coverage", "bounded_q1_width", "bounded_q0_width")


def run_point(args) -> dict:
    theta, judges, outputs, piles, sims, seed, draws = args
    a, b = JUDGES[judges] if judges in JUDGES else (COPIES[judges][0], None)
    copies = COPIES[judges][1] if judges in COPIES else None
    batch = max(1, min(sims, 900_000 // draws, 2_000_000 // outputs))
    parts, left, n = [], sims, 0
    while left > 0:
        k = min(batch, left)
        parts.append(
            paired_coverage(
                theta, a, b, outputs=outputs, piles=piles, sims=k, seed=seed * 1000 + n, n_boot=draws, copies=copies
            )
        )
        left, n = left - k, n + 1
    defined = sum(p.defined for p in parts)
    row = {
        "theta": theta,
        "judges": judges,
        "a": list(a),
        "b": list(b) if b is not None else None,
        "b_turns": list(copies) if copies is not None else None,
        "outputs": outputs,
        "piles": piles,
        "sims": sims,
        "defined": defined,
    }
    for f in FIELDS:
        got = [(getattr(p, f), p.defined) for p in parts if p.defined]
        row[f] = round(sum(v * d for v, d in got) / defined, 6) if defined else None
    counted = sum(p.counted for p in parts)
    row["counted"], row["bounded"] = counted, sum(p.bounded for p in parts)
    for f in BOUNDED:
        got = [(getattr(p, f), p.counted) for p in parts if p.counted]
        row[f] = round(sum(v * c for v, c in got) / counted, 6) if counted else None
    return row


def summarise(rows: list[dict]) -> dict:
    every = [r for r in rows if r["counted"] >= r["sims"] / 2]
    out = {"points_bounded": len(every), "points_mostly_unrated": sum(r["bounded"] > r["counted"] / 2 for r in every)}
    for name in ("q1", "q0"):
        cov = [r[f"bounded_{name}_coverage"] for r in every]
        out[f"bounded_{name}"] = {
            "under_93": sum(c < 0.93 for c in cov),
            "worst": min(cov, default=None),
            "within_95_2": sum(0.93 <= c <= 0.97 for c in cov),
        }
    rs = [r for r in rows if r["defined"] >= r["sims"] / 2]
    out["points"] = len(rs)
    for name in ("q1", "q0"):
        for kind, prefix in (("paired", ""), ("independent", "independent_")):
            cov = [r[f"{prefix}{name}_coverage"] for r in rs]
            out[f"{kind}_{name}"] = {
                "under_93": sum(c < 0.93 for c in cov),
                "worst": min(cov, default=None),
                "within_95_2": sum(0.93 <= c <= 0.97 for c in cov),
            }
        ratio = [r[f"{name}_width"] / r[f"independent_{name}_width"] for r in rs if r[f"independent_{name}_width"]]
        out[f"{name}_width_paired_over_independent"] = {
            "median": round(float(np.median(ratio)), 3),
            "min": round(min(ratio), 3),
            "max": round(max(ratio), 3),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--draws", type=int, default=1000, help="fiducial draws (03: 4000)")
    args = ap.parse_args()
    tasks = [
        (t, j, n, k, args.sims, args.seed, args.draws)
        for t, j, n, k in itertools.product(THETAS, [*JUDGES, *COPIES], OUTPUTS, PILES)
    ]
    simulated_points(
        "paired", run_point, tasks, summarise, jobs=args.jobs, sims=args.sims, seed=args.seed, draws=args.draws
    )


if __name__ == "__main__":
    main()
