"""When to stop labelling: coverage under optional stopping, and the labels used until stopping, side by side.

Each simulated audit (a cell of N judged items, the truth theta, the judge's sensitivity q1 and specificity q0, as
the study's simulator draws them) labels in batches and looks after each of up to 20 batches, stopping at the first
look whose interval meets the target half-width (or at the last). Four labellers on the same populations:

- vocab's confidence sequence (`vocab audit DIR --target-half-width H`, :mod:`vocab.estimates.stopping`, simulated
  by :mod:`vocab.coverage.stopping`): 5 more rows of each of the judge's piles a look, the betting sequence per
  pile, combined;
- the report's fixed-sample interval read at every look (the practice the sequence replaces): the same labels;
- truescore's confidence sequence (PyPI 0.7.4, `truescore.sequential.confidence_sequence`, empirical Bernstein, its
  own function) on people's verdicts of items drawn uniformly at random without the judge, 10 a look: what a
  practitioner watching truescore's `monitor` of people's labels would do;
- fewhumans' confidence sequence (PyPI 1.0.0, `fewhumans.sequential.cs.cs_human_only`, a union-bound Hoeffding
  sequence, its "E6") on the same kind of draws, 10 a look.

At each one's stop: does its interval hold the cell's own rate (the finite population's, every item's truth)?
With the median labels used and the median width at the stop. Each point's streams derive from the seed.

Run: .venv/bin/python benchmarks/bench_stopping.py [--sims 500]; writes benchmarks/results/stopping.json.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from common import result_record, write_result  # benchmarks/common.py (this script's folder is on sys.path)

from vocab import stats
from vocab.coverage.simulate import simulate_studies
from vocab.coverage.stopping import simulate_stopping

POINTS = [  # theta, q1, q0, judged items, target half-width
    (0.3, 0.8, 0.7, 400, 0.10),
    (0.5, 0.9, 0.9, 400, 0.10),
    (0.5, 0.9, 0.9, 400, 0.07),
    (0.1, 0.95, 0.95, 400, 0.05),
    (0.15, 0.6, 0.9, 300, 0.08),
    (0.6, 0.95, 0.5, 200, 0.12),
    (0.7, 0.97, 0.47, 400, 0.10),
]
LOOKS, BATCH = 20, 5  # 5 rows a pile a look: 10 labels a look


def _uniform_side(theta, q1, q0, n, target, sims, seed, name: str, bounds) -> dict:
    """An anchor's sequence on people's verdicts of uniformly drawn items (the same studies' truth, no judge), 10 a
    look: ``bounds(order, t)`` its interval after the first t labels."""
    st = simulate_studies(theta, q1, q0, n, n, sims, stats.stream(seed, "bench-stopping", theta, q1, q0, n, "ts"))
    rng = stats.stream(seed, "bench-stopping", theta, q1, q0, n, f"{name}-order")
    hold, labels, widths = [], [], []
    for i in range(sims):
        people = np.concatenate([st.passed[i][~np.isnan(st.passed[i])], st.failed[i][~np.isnan(st.failed[i])]])
        order = rng.permutation(people)[: LOOKS * 2 * BATCH]
        at = bounds(order)
        for look in range(1, LOOKS + 1):
            t = min(look * 2 * BATCH, len(order))
            lo, hi = at(t)
            if (hi - lo) / 2 <= target or look == LOOKS:
                break
        hold.append(lo <= st.truth[i] <= hi)
        labels.append(t)
        widths.append(hi - lo)
    return {"coverage": round(float(np.mean(hold)), 4), "labels_median": float(np.median(labels)),
            "width_median": round(float(np.median(widths)), 4)}  # fmt: skip


def truescore_side(theta, q1, q0, n, target, sims, seed) -> dict:
    """truescore's sequence (empirical Bernstein, `truescore.sequential.confidence_sequence`)."""
    from truescore.sequential import confidence_sequence

    def bounds(order):
        cs = confidence_sequence(order, alpha=0.05)
        return lambda t: (cs.lower_bounds[t - 1], cs.upper_bounds[t - 1])

    # "ts-order": the stream this side has always drawn its orders from (the committed rows stay as they were)
    return _uniform_side(theta, q1, q0, n, target, sims, seed, "ts", bounds)


def fewhumans_side(theta, q1, q0, n, target, sims, seed) -> dict:
    """fewhumans' sequence (union-bound Hoeffding, `fewhumans.sequential.cs.cs_human_only`, its E6)."""
    from fewhumans.sequential.cs import cs_human_only

    def bounds(order):
        def at(t):
            r = cs_human_only(order[:t], confidence=0.95)
            return max(r.lo, 0.0), min(r.hi, 1.0)

        return at

    return _uniform_side(theta, q1, q0, n, target, sims, seed, "fh", bounds)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=500)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    import fewhumans
    import truescore

    rows = []
    for theta, q1, q0, n, h in POINTS:
        t0 = time.perf_counter()
        r = simulate_stopping(theta, q1, q0, n, looks=LOOKS, batch=BATCH, target=h, sims=args.sims, seed=args.seed,
                              n_boot=args.n_boot)  # fmt: skip
        r["truescore_sequence"] = truescore_side(theta, q1, q0, n, h, args.sims, args.seed)
        r["fewhumans_sequence"] = fewhumans_side(theta, q1, q0, n, h, args.sims, args.seed)
        r["seconds"] = round(time.perf_counter() - t0, 1)
        rows.append(r)
        print(json.dumps(r), flush=True)
    kinds = ("sequence", "fixed_peeking", "truescore_sequence", "fewhumans_sequence")
    worst = {k: min(r[k]["coverage"] for r in rows) for k in kinds}
    under = {k: sum(r[k]["coverage"] < 0.95 - 2 * (0.05 * 0.95 / args.sims) ** 0.5 for r in rows) for k in worst}
    result = result_record(
        "stopping",
        design={
            "looks": LOOKS,
            "batch_per_pile": BATCH,
            "rule": "stop at the first look whose half-width meets the target, else at the last",
            "truth": "the cell's own rate (finite population)",
            "truescore": "confidence_sequence(empirical_bernstein) on people's verdicts of uniformly drawn items, "
            "10 a look",
            "fewhumans": "cs_human_only (union-bound Hoeffding, clipped to [0, 1]) on the same kind of draws, "
            "10 a look",
        },  # fmt: skip
        sims=args.sims,
        n_boot=args.n_boot,
        seed=args.seed,
        versions={"truescore": truescore.__version__, "fewhumans": fewhumans.__version__},
        points=rows,
        worst_coverage=worst,
        under_95_by_two_se=under,
    )
    print(json.dumps({"worst_coverage": worst, "under_95_by_two_se": under}))
    write_result("stopping", result)


if __name__ == "__main__":
    main()
