"""How many human labels a target precision needs: `vocab plan` beside `truescore plan`, at the same inputs.

The two answer differently-posed questions, and the table says how: `vocab plan` draws its labels stratified by
the judge's verdict (rows per pile from the judge-PASSED and judge-FAILED piles, as `vocab sample` does) and finds
the smallest size whose *simulated* mean half-width of the study's default interval meets the target (with that
interval's simulated coverage); truescore (PyPI 0.7.4, `truescore.power.required_gold_labels`, the function behind
its `plan` command) draws its labels uniformly at random and uses PPI++'s *asymptotic* (normal) half-width, and also
says what the same precision costs without the judge. Both are given the same truth (theta, the judge's
sensitivity q1 and specificity q0) and the same number of judged items. truescore runs through its own package
(`make bench` installs it, pinned), not a re-implementation.

Beside vocab's equal piles, its two allocated plans (`vocab plan --allocation proportional|pilot`, #65 item 2): a
cell's labels split by the piles' shares, and by Neyman's split at the spreads the truth gives each pile (before
any pilot, as `vocab plan --allocation pilot` plans from guesses). vocab plans at its default population (the
finite piles). ``fewer`` compares equal piles with truescore, ``fewer_neyman`` the Neyman split with truescore.

Also truescore's published anchor (its README: sensitivity 0.97, specificity 0.47, ±0.05 → 232 labels with the
judge, 317 without) recomputed offline at rate 0.70 and 4,000 judged items.

Run: .venv/bin/python benchmarks/bench_plan.py [--sims 1000]; writes benchmarks/results/plan.json.
"""

from __future__ import annotations

import argparse
import json
import time

from common import result_record, write_result  # benchmarks/common.py (this script's folder is on sys.path)

from vocab import stats
from vocab.coverage.plan import plan

POINTS = [  # theta, q1, q0, judged items, target half-width
    (0.3, 0.8, 0.7, 400, 0.10),
    (0.3, 0.8, 0.7, 400, 0.07),
    (0.5, 0.9, 0.9, 400, 0.10),
    (0.5, 0.9, 0.9, 400, 0.07),
    (0.1, 0.95, 0.95, 400, 0.05),
    (0.15, 0.6, 0.9, 300, 0.08),
    (0.6, 0.95, 0.5, 200, 0.12),
    (0.7, 0.97, 0.47, 400, 0.10),
    (0.7, 0.97, 0.47, 4000, 0.05),  # truescore's judge and target
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=1000)
    ap.add_argument("--n-boot", type=int, default=1000)
    args = ap.parse_args()
    import truescore
    from truescore.power import required_gold_labels

    rows = []
    for theta, q1, q0, n, h in POINTS:
        t0 = time.perf_counter()
        ours = plan(theta=theta, q1=q1, q0=q0, attempts=n, half_width=h, sims=args.sims, n_boot=args.n_boot)
        seconds = time.perf_counter() - t0
        split = {a: plan(theta=theta, q1=q1, q0=q0, attempts=n, half_width=h, sims=args.sims, n_boot=args.n_boot,
                         allocation=a) for a in ("proportional", "pilot")}  # fmt: skip
        ts = required_gold_labels(n, target_half_width=h, true_rate=theta, sensitivity=q1, specificity=q0)
        rows.append(
            {
                "theta": theta, "q1": q1, "q0": q0, "judged": n, "target": h,
                "vocab_labels": ours.labels, "vocab_half_width": round(ours.half_width, 4),
                "vocab_coverage": round(ours.coverage, 4), "vocab_seconds": round(seconds, 1),
                "vocab_proportional_labels": split["proportional"].labels,
                "vocab_proportional_coverage": round(split["proportional"].coverage, 4),
                "vocab_neyman_labels": split["pilot"].labels,
                "vocab_neyman_rows": {k: round(v) for k, v in split["pilot"].pile_rows.items()},
                "vocab_neyman_half_width": round(split["pilot"].half_width, 4),
                "vocab_neyman_coverage": round(split["pilot"].coverage, 4),
                "truescore_labels": ts.required_gold if ts.feasible else None,
                "truescore_half_width": round(ts.achieved_half_width, 4),
                "truescore_without_judge": ts.gold_only_required,
                "fewer": None if ours.labels is None or not ts.feasible else
                ("vocab" if ours.labels < ts.required_gold else "truescore" if ts.required_gold < ours.labels
                 else "same"),
                "fewer_neyman": None if not split["pilot"].reached or not ts.feasible else
                ("vocab" if split["pilot"].labels < ts.required_gold else "truescore"
                 if ts.required_gold < split["pilot"].labels else "same"),
            }
        )  # fmt: skip
        print(json.dumps(rows[-1]), flush=True)
    anchor = required_gold_labels(4000, target_half_width=0.05, true_rate=0.70, sensitivity=0.97, specificity=0.47)
    counts = {k: sum(r["fewer"] == k for r in rows) for k in ("vocab", "truescore", "same")}
    counts_neyman = {k: sum(r["fewer_neyman"] == k for r in rows) for k in ("vocab", "truescore", "same")}
    result = result_record(
        "plan",
        design={
            "vocab": "labels stratified by the judge's verdict (rows per pile x 2); simulated mean half-width of the "
            "default interval (fiducial), the smallest size meeting the target",
            "vocab_proportional": "the same, a cell's labels split by the piles' shares",
            "vocab_neyman": "the same, a cell's labels split by Neyman's rule at the spreads the truth gives each pile",
            "truescore": "labels uniformly at random; PPI++ asymptotic (normal) half-width at alpha 0.05",
        },
        population=stats.DEFAULT_POPULATION,
        sims=args.sims,
        n_boot=args.n_boot,
        versions={"truescore": truescore.__version__},
        points=rows,
        fewer_labels=counts,
        fewer_labels_neyman=counts_neyman,
        truescore_anchor={"published": {"with_judge": 232, "without_judge": 317},
                          "recomputed": {"with_judge": anchor.required_gold,
                                         "without_judge": anchor.gold_only_required,
                                         "inputs": "rate 0.70, 4000 judged, sensitivity 0.97, specificity 0.47, "
                                                   "±0.05"}},
    )  # fmt: skip
    print(
        json.dumps(
            {
                "fewer_labels": counts,
                "fewer_labels_neyman": counts_neyman,
                "truescore_anchor": result["truescore_anchor"],
            }
        )
    )
    write_result("plan", result)


if __name__ == "__main__":
    main()
