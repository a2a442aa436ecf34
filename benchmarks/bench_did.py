"""Self-preference's difference of differences (issue #76 item 6): the coverage of its interval, simulated before it
is printed.

Four independent cells of a two-model writer x critic design (writer A under its own critic and under B's, writer B
under its own and under A's), each a study of `vocab.coverage.simulate.simulate_studies` with the reference run's
sizes (350 attempts a cell, 10 rows a pile). The contrast is the judge's leniency L = p − theta,
L(A, own) − L(A, other) + L(B, own) − L(B, other) (`vocab.estimates.compare.self_preference_did`), its interval the
fiducial draws' (`vocab.coverage.differences.did_coverage`). Critics of several sensitivities and specificities,
without self-preference (each critic errs alike on both writers: its leniency then differs between writers of
different rates through those rates only, ``expected_did``) and with it (each critic's specificity lower on its own
model's writing by ``favour``), for the finite population (the default) and the superpopulation. The truth each
interval is checked against is the contrast of the cells' leniencies (each study's own, finite).

Run: .venv/bin/python benchmarks/bench_did.py [--sims 1000] [--jobs 2]; writes benchmarks/results/did.json.
"""

from __future__ import annotations

import argparse
import itertools

from common import simulated_points  # benchmarks/common.py (this script's folder is on sys.path)

from vocab import stats
from vocab.coverage.differences import Cell, did_coverage

ATTEMPTS, PILES = 350, 10
WRITERS = ((0.3, 0.5), (0.1, 0.6))  # the two writers' true rates
CRITICS = (  # (q1, q0) of critic A and critic B on the other model's writing; on their own: q0 lowered by `favour`
    ((0.8, 0.7), (0.9, 0.9)),
    ((0.95, 0.5), (0.6, 0.95)),
)
FAVOUR = (0.0, 0.3)  # how much each critic's specificity drops on its own model's writing (0: no self-preference)


def run_point(args) -> dict:
    (writers, critics, favour, population), sims, seed, draws = args
    (ta, tb), ((q1a, q0a), (q1b, q0b)) = writers, critics
    cells = (
        Cell(ta, q1a, q0a - favour),  # A under its own critic
        Cell(ta, q1b, q0b),  # A under B's
        Cell(tb, q1b, q0b - favour),  # B under its own
        Cell(tb, q1a, q0a),  # B under A's
    )
    r = did_coverage(cells, attempts=ATTEMPTS, piles=PILES, sims=sims, seed=seed, n_boot=draws, population=population)
    truth = sum(s * c.leniency for s, c in zip((1, -1, 1, -1), cells, strict=True))
    return {"writers": list(writers), "critics": [list(c) for c in critics], "favour": favour,
            "expected_did": round(truth, 6), **r.as_dict()}  # fmt: skip


def summarise(rows: list[dict]) -> dict:
    cov = [r["coverage"] for r in rows]
    return {"points": len(rows), "min_coverage": min(cov), "mean_coverage": sum(cov) / len(cov),
            "under_93": sum(c < 0.93 for c in cov)}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--draws", type=int, default=1000)
    args = ap.parse_args()
    points = list(itertools.product(WRITERS, CRITICS, FAVOUR, (stats.FINITE, stats.SUPERPOPULATION)))
    tasks = [(pt, args.sims, args.seed, args.draws) for pt in points]
    simulated_points("did", run_point, tasks, summarise, jobs=args.jobs, sims=args.sims, seed=args.seed,
                     draws=args.draws, attempts=ATTEMPTS, piles=PILES)  # fmt: skip


if __name__ == "__main__":
    main()
