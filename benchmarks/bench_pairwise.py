"""A pairwise judge's corrected preferences (`vocab.stats.pairwise`): the coverage of the corrected shares of A, B
and tie and of the win rate of B (ties half, and ties dropped) of the study's own items, and their mean widths,
beside ppi_py's interval of the win indicator on the same studies (`vocab.coverage.pairwise.pairwise_coverage`).
Points: cell sizes, people's class shares, judges (erring, favouring the first-shown answer, never saying tie,
saying tie freely), labels a pile; and two-class cells (no tie anywhere: θ).

Run: .venv/bin/python benchmarks/bench_pairwise.py [--sims 1000] [--jobs 2]; writes benchmarks/results/pairwise.json.
"""

from __future__ import annotations

import argparse
import itertools

from common import simulated_points  # benchmarks/common.py (this script's folder is on sys.path)

from vocab.coverage.pairwise import ESTIMATES, JUDGES, TWO_CLASS_JUDGES, pairwise_coverage
from vocab.stats.pairwise import PAIRED, STICK
from vocab.stats.seeds import derived_seed

ITEMS = (20, 150, 1000)  # items in a cell (its piles: from 0 to about 600 items)
TRUTHS = ((0.45, 0.45, 0.1), (0.2, 0.6, 0.2), (0.7, 0.25, 0.05), (0.3, 0.3, 0.4), (0.5, 0.5, 0.0))  # a, b, tie
TWO_CLASS_TRUTHS = ((0.6, 0.4, 0.0), (0.15, 0.85, 0.0))
LABELS = (5, 15, 50)  # items labelled a pile (all of a smaller pile)
BAR = 0.93  # every estimate's coverage at least this at 99.5 % of points (issue #79)


RECHECK = 4  # a point under the bar on any estimate is simulated again with this many times the studies, fresh


# the rules first tried, on the points where they fell short, the same studies as the default's rows
# (docs/statistics.md): STICK (each pile's stick broken after B; A what is left), and the ties' low end from the
# randomised draws
TRIED_POINTS = (
    (150, (0.45, 0.45, 0.1), "erring", 5),
    (150, (0.45, 0.45, 0.1), "tie-happy", 5),
    (150, (0.5, 0.5, 0.0), "good", 5),
    (1000, (0.45, 0.45, 0.1), "erring", 5),
    (1000, (0.45, 0.45, 0.1), "good", 5),
    (150, (0.7, 0.25, 0.05), "good", 5),
)


def _point(items, truth, judge, labels, sims, seed, draws, *names, rule=PAIRED, bound_ties=True):
    two = judge.startswith("two-class ")
    matrix = TWO_CLASS_JUDGES[judge.removeprefix("two-class ")] if two else JUDGES[judge]
    own = derived_seed(seed, "pairwise", items, *truth, judge, labels, *names)  # each point its own stream
    return pairwise_coverage(
        items, truth, matrix, labels, sims=sims, seed=own, n_draws=draws, rule=rule, bound_ties=bound_ties
    )


def run_point(args) -> dict:
    items, truth, judge, labels, sims, seed, draws = args
    r = _point(items, truth, judge, labels, sims, seed, draws)
    tried = {}
    if (items, truth, judge, labels) in TRIED_POINTS:
        for name, kw in (("stick", {"rule": STICK}), ("randomised_ties", {"bound_ties": False})):
            again = _point(items, truth, judge, labels, sims, seed, draws, **kw)
            tried[name] = {k: round(v, 4) for k, v in again.coverage.items()}
    row = {"items": items, "truth": list(truth), "judge": judge, "labels": labels, "sims": sims}
    row["piles_mean"] = [round(x, 1) for x in r.piles]
    row["labelled_mean"] = round(r.labels, 1)
    row["coverage"] = {k: round(v, 4) for k, v in r.coverage.items()}
    row["width"] = {k: round(v, 4) for k, v in r.width.items()}
    row["ppi_win_rate_b"] = {"coverage": round(r.ppi_coverage, 4), "width": round(r.ppi_width, 4)}
    if tried:
        row["tried_rules_coverage"] = tried
    if min(r.coverage.values()) < BAR:  # the grid's simulation error or the rule's: fresh studies, RECHECK times more
        again = _point(items, truth, judge, labels, RECHECK * sims, seed, draws, "recheck")
        row["recheck"] = {"sims": RECHECK * sims, "coverage": {k: round(v, 4) for k, v in again.coverage.items()}}
    return row


def summarise(rows: list[dict]) -> dict:
    out = {"points": len(rows), "bar": f"coverage >= {BAR} at >= 99.5 % of points"}
    out["rechecked"] = sum("recheck" in r for r in rows)
    for name in ESTIMATES:
        cov = [r["coverage"][name] for r in rows]
        final = [r["recheck"]["coverage"][name] if "recheck" in r else r["coverage"][name] for r in rows]
        out[name] = {
            "at_or_above_93": round(sum(c >= BAR for c in cov) / len(cov), 4),
            "at_or_above_93_after_recheck": round(sum(c >= BAR for c in final) / len(final), 4),
            "within_95_2": round(sum(0.93 <= c <= 0.97 for c in cov) / len(cov), 4),
            "worst": min(cov),
            "mean_width": round(sum(r["width"][name] for r in rows) / len(rows), 4),
        }
    ppi = [r["ppi_win_rate_b"]["coverage"] for r in rows]
    out["ppi_py win_rate_b (anchor)"] = {
        "at_or_above_93": round(sum(c >= BAR for c in ppi) / len(ppi), 4),
        "within_95_2": round(sum(0.93 <= c <= 0.97 for c in ppi) / len(ppi), 4),
        "worst": min(ppi),
        "mean_width": round(sum(r["ppi_win_rate_b"]["width"] for r in rows) / len(rows), 4),
    }
    out["meets_bar"] = all(out[name]["at_or_above_93_after_recheck"] >= 0.995 for name in ESTIMATES)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--draws", type=int, default=1000, help="fiducial draws (the audit: 4000)")
    args = ap.parse_args()
    three = [p for p in itertools.product(ITEMS, TRUTHS, JUDGES, LABELS) if p[3] < p[0]]  # not labelled in full
    two = [
        p
        for p in itertools.product(ITEMS, TWO_CLASS_TRUTHS, [f"two-class {j}" for j in TWO_CLASS_JUDGES], LABELS)
        if p[3] < p[0]
    ]
    tasks = [(n, t, j, k, args.sims, args.seed, args.draws) for n, t, j, k in (*three, *two)]
    simulated_points(
        "pairwise", run_point, tasks, summarise, jobs=args.jobs, sims=args.sims, seed=args.seed, draws=args.draws
    )


if __name__ == "__main__":
    main()
