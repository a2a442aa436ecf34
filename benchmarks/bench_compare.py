"""The comparisons' intervals measured by simulation, beside the anchors a practitioner would reach for, on the same
simulated data: two systems answer the same N examples and one judge grades both (each system with its own
sensitivity and specificity: a judge that favours one system is more lenient on it); each method gets the same
number of human labels per system.

- ``vocab``: `vocab compare`'s difference (:func:`vocab.stats.differences.difference_interval`): each system's
  cell corrected by 03's fiducial interval on two verdict piles of labels/2 rows each, drawn by the system's own
  verdicts, its draws differenced; the leniency difference from the same draws;
- ``truescore``: truescore 0.7.4's ``ppi_compare`` (PPI++ on the per-example difference, paired), a uniform
  labelled subset of ``labels`` examples carrying both systems' labels;
- ``ppi_py``: ppi-python 0.2.3's ``ppi_mean_ci`` on the per-example difference, the same labelled subset.

The truth of a difference is theta_b − theta_a (each system's expected rate), of a leniency difference (P_b −
theta_b) − (P_a − theta_a) with P the judge's expected pass rate on the system. Rank sets: ``vocab``'s (the
family-wise 95 % simultaneous intervals of `vocab compare`) on four systems, held when every true rank is in its
set. ``clustered``: vocab's difference on the study's own design (140 levels of up to 3 retried attempts, each
level's rate drawn with a spread of 2 or 10; 10 or 20 rows a pile), against each cell's population rate.
``vocab-finite``, and the clustered rows at the finite population: `vocab compare`'s default since #65 (p known,
each pile the finite set it is), against each study's own difference of shares of true passes. Beside every
row, ``theta_coverage``: each cell's own interval's coverage on the same studies (the comparison inherits it).
Each point and method draws from its own stream.

Run: .venv/bin/python benchmarks/bench_compare.py [--sims 1000] [--jobs 2]; writes
benchmarks/results/compare_anchors.json.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import itertools
import json
import time
import warnings

import numpy as np
from common import result_record, write_result  # benchmarks/common.py (this script's folder is on sys.path)

from vocab import stats
from vocab.coverage import anchors as an
from vocab.coverage.differences import Cell, clustered_pair_coverage
from vocab.stats.differences import difference_interval, rank_sets, true_ranks

# (theta_a, q1_a, q0_a), (theta_b, q1_b, q0_b): the same judge on two systems; it may be more lenient on one
SYSTEMS = (
    ((0.5, 0.8, 0.8), (0.5, 0.8, 0.8)),  # no difference, an even judge
    ((0.3, 0.9, 0.9), (0.5, 0.9, 0.9)),  # a real difference, a good judge
    ((0.4, 0.8, 0.9), (0.4, 0.95, 0.6)),  # no difference, the judge lenient on b (self-preference)
    ((0.3, 0.6, 0.95), (0.6, 0.97, 0.47)),  # b better and favoured
    ((0.05, 0.9, 0.95), (0.15, 0.9, 0.95)),  # rare passes
    ((0.8, 0.97, 0.47), (0.9, 0.97, 0.47)),  # a lenient judge on both
)
SIZES = ((48, 20), (140, 20), (140, 40), (400, 40), (400, 80))  # (examples, labels per system)
CLUSTERED = tuple(itertools.product((2.0, 10.0), (10, 20)))  # (level spread, rows a pile): 140 levels of <= 3 attempts
RANK_CELLS = ((0.3, 0.9, 0.9), (0.5, 0.9, 0.9), (0.5, 0.8, 0.95), (0.75, 0.9, 0.8))
METHODS = ("vocab", "vocab-finite", "truescore", "ppi_py")  # vocab-finite: `vocab compare`'s default since #65
ALPHA = 0.05


def points() -> list[tuple]:
    return [(a, b, n, m) for (a, b), (n, m) in itertools.product(SYSTEMS, SIZES)]


def _vocab_cell(pop: an.Population, labels: int, rng, draws: int, population: str = stats.SUPERPOPULATION):
    """One system's cell: (theta, theta draws, p, p draws, the interval), or None where a pile is empty; for the
    finite population p known and each pile the finite set of the system's answers it is."""
    passed, failed = an.pile_rows(pop, (labels - labels // 2, labels // 2), rng)
    if passed.size == 0 or failed.size == 0:
        return None
    totals = {}
    if population == stats.FINITE:
        totals = {"passed_total": float(pop.verdict.sum()), "failed_total": float((~pop.verdict).sum())}
    c = stats.fiducial_correction(
        float(pop.verdict.mean()),
        pop.verdict.size,
        pop.truth[passed].astype(float),
        pop.truth[failed].astype(float),
        np.ones(failed.size),
        n_draws=draws,
        rng=rng,
        **totals,
    )
    return c.point.theta, c.theta_samples, c.point.p, c.p_samples, c.theta_ci


def run_point(args) -> list[dict]:
    (a, b, n, m), sims, seed, draws = args
    names = ("compare", *a, *b, n)
    rows = []
    truth = b[0] - a[0]
    lean_truth = (b[0] * b[1] + (1 - b[0]) * (1 - b[2]) - b[0]) - (a[0] * a[1] + (1 - a[0]) * (1 - a[2]) - a[0])
    pops_a = [an.population(*a, n, stats.stream(seed, *names, "a", i)) for i in range(sims)]
    pops_b = [an.population(*b, n, stats.stream(seed, *names, "b", i)) for i in range(sims)]
    for method in METHODS:
        rng = stats.stream(seed, *names, m, method)
        t0 = time.perf_counter()
        found, lean, theta_held, truths, lean_truths = [], [], [], [], []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for pa, pb in zip(pops_a, pops_b, strict=True):
                if method.startswith("vocab"):
                    population = stats.FINITE if method == "vocab-finite" else stats.SUPERPOPULATION
                    ca, cb = _vocab_cell(pa, m, rng, draws, population), _vocab_cell(pb, m, rng, draws, population)
                    if ca is None or cb is None:
                        continue
                    # the truth: each system's expected rate, or (finite) the two tables' own shares of true passes
                    ta, tb = (pa.truth.mean(), pb.truth.mean()) if population == stats.FINITE else (a[0], b[0])
                    truths.append(tb - ta)
                    lean_truths.append((pb.verdict.mean() - tb) - (pa.verdict.mean() - ta)
                                       if population == stats.FINITE else lean_truth)  # fmt: skip
                    d = difference_interval([ca[0]], ca[1][None], [cb[0]], cb[1][None])
                    ln = difference_interval(
                        [ca[2] - ca[0]], (ca[3] - ca[1])[None], [cb[2] - cb[0]], (cb[3] - cb[1])[None]
                    )
                    found.append((d.estimate[0], d.low[0], d.high[0]))
                    lean.append((ln.low[0], ln.high[0]))
                    # to a rounding's width, as every coverage here: a finite pile's ends are counts over N, and
                    # a table's share may equal one
                    theta_held += [
                        ca[4][0] - 1e-12 <= ta <= ca[4][1] + 1e-12,
                        cb[4][0] - 1e-12 <= tb <= cb[4][1] + 1e-12,
                    ]
                    continue
                idx = an.uniform_labels(pa, m, rng)
                ja, jb = pa.verdict.astype(float), pb.verdict.astype(float)
                ga, gb = pa.truth[idx].astype(float), pb.truth[idx].astype(float)
                try:
                    if method == "truescore":
                        from truescore.compare import ppi_compare

                        r = ppi_compare(jb, ja, gb, ga, idx, alpha=ALPHA)  # A − B in its words: b − a here
                        found.append((r.difference, r.low, r.high))
                    else:
                        from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

                        rest = np.ones(n, bool)
                        rest[idx] = False
                        args_ = (gb - ga, (jb - ja)[idx], (jb - ja)[rest])
                        lo, hi = ppi_mean_ci(*args_, alpha=ALPHA)
                        est = ppi_mean_pointestimate(*args_)
                        found.append((float(np.ravel(est)[0]), float(np.ravel(lo)[0]), float(np.ravel(hi)[0])))
                except (ValueError, ZeroDivisionError, np.linalg.LinAlgError):
                    continue
                truths.append(truth)
        keep = [i for i, f in enumerate(found) if all(np.isfinite(f))]
        ok = np.array([found[i] for i in keep], dtype=float).reshape(-1, 3)
        est, lo, hi = ok.T
        held = np.array([truths[i] for i in keep], dtype=float)  # each study's truth (one number but for finite)
        row = {
            "a": list(a),
            "b": list(b),
            "examples": n,
            "labels": m,
            "method": method,
            "sims": sims,
            "defined": int(len(ok)),
            "truth": round(truth if method != "vocab-finite" else float(np.mean(held)), 6),
            "coverage": round(float(np.mean((lo <= held + 1e-12) & (held - 1e-12 <= hi))), 4) if len(ok) else None,
            "mean_width": round(float(np.mean(hi - lo)), 4) if len(ok) else None,
            "resolved": round(float(np.mean((lo > 0) | (hi < 0))), 4) if len(ok) else None,
            "seconds": round(time.perf_counter() - t0, 2),
        }
        if method.startswith("vocab") and lean:
            ll, lt = np.array(lean), np.array(lean_truths)
            row |= {
                "leniency_truth": round(float(np.mean(lt)), 6),
                "leniency_coverage": round(float(np.mean((ll[:, 0] <= lt + 1e-12) & (lt - 1e-12 <= ll[:, 1]))), 4),
                "leniency_mean_width": round(float(np.mean(ll[:, 1] - ll[:, 0])), 4),
                "theta_coverage": round(float(np.mean(theta_held)), 4),
            }
        rows.append(row)
    return rows


def run_ranks(args) -> dict:
    (n, m), sims, seed, draws = args
    rng = stats.stream(seed, "compare-ranks", n, m)
    est, joint, held_theta = [], [], []
    for i in range(sims):
        cells = [
            _vocab_cell(an.population(*c, n, stats.stream(seed, "compare-ranks", n, k, i)), m, rng, draws)
            for k, c in enumerate(RANK_CELLS)
        ]
        if any(c is None for c in cells):
            continue
        est.append([c[0] for c in cells])
        joint.append(np.stack([c[1] for c in cells]))
        held_theta += [c[4][0] - 1e-12 <= t[0] <= c[4][1] + 1e-12 for c, t in zip(cells, RANK_CELLS, strict=True)]
    r = rank_sets(np.array(est), np.stack(joint))
    truth = true_ranks([c[0] for c in RANK_CELLS])[0]
    held = np.all((r.low <= truth) & (truth <= r.high), axis=1)
    return {
        "cells": [list(c) for c in RANK_CELLS],
        "examples": n,
        "labels": m,
        "sims": sims,
        "defined": len(est),
        "true_ranks": truth.tolist(),
        "coverage": round(float(held.mean()), 4),
        "mean_set_size": round(float((r.high - r.low + 1).mean()), 4),
        "theta_coverage": round(float(np.mean(held_theta)), 4),
    }


def run_clustered(args) -> dict:
    """vocab's difference and leniency difference on the study's clustered design (the report's fiducial draws on
    each cell's clustered piles)."""
    (a, b, spread, piles, population), sims, seed, draws = args
    r = clustered_pair_coverage(Cell(*a), Cell(*b), spread=spread, piles=piles, sims=sims, seed=seed, n_boot=draws,
                                population=population)  # fmt: skip
    return {
        "population": population,
        "a": list(a),
        "b": list(b),
        "spread": spread,
        "levels": 140,
        "max_attempts": 3,
        "piles": piles,
        **{k: v for k, v in r.as_dict().items() if k != "method"},
    }


def summarise(rows: list[dict], ranks: list[dict], clustered: list[dict] | None = None) -> dict:
    """Per method: points, points under 0.93, worst coverage, points within 95 ± 2 %, and median width; vocab's
    leniency coverage the same way; the rank sets' worst."""
    out = {}
    for method in METHODS:
        rs = [r for r in rows if r["method"] == method and r["coverage"] is not None and r["defined"] >= r["sims"] / 2]
        cov = [r["coverage"] for r in rs]
        out[method] = {
            "points": len(rs),
            "under_93": sum(c < 0.93 for c in cov),
            "worst": min(cov, default=None),
            "within_95_2": sum(0.93 <= c <= 0.97 for c in cov),
            "median_width": float(np.median([r["mean_width"] for r in rs])) if rs else None,
        }
    for method in ("vocab", "vocab-finite"):
        lean = [r["leniency_coverage"] for r in rows if "leniency_coverage" in r and r["method"] == method]
        out[f"{method}-leniency"] = {
            "points": len(lean),
            "under_93": sum(c < 0.93 for c in lean),
            "worst": min(lean, default=None),
            "within_95_2": sum(0.93 <= c <= 0.97 for c in lean),
        }
    for population, name in ((stats.SUPERPOPULATION, "vocab-clustered"), (stats.FINITE, "vocab-finite-clustered")):
        mine = [r for r in clustered or [] if r.get("population", stats.SUPERPOPULATION) == population]
        cl, cl_lean = [r["coverage"] for r in mine], [r["leniency_coverage"] for r in mine]
        out[name] = {
            "points": len(cl),
            "under_93": sum(c < 0.93 for c in cl),
            "worst": min(cl, default=None),
            "within_95_2": sum(0.93 <= c <= 0.97 for c in cl),
            "leniency_under_93": sum(c < 0.93 for c in cl_lean),
            "leniency_worst": min(cl_lean, default=None),
            "median_width": float(np.median([r["mean_width"] for r in mine])) if mine else None,
        }
    out["vocab-ranks"] = {
        "points": len(ranks),
        "under_95": sum(r["coverage"] < 0.95 for r in ranks),
        "worst": min((r["coverage"] for r in ranks), default=None),
    }
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--draws", type=int, default=2000, help="vocab's fiducial draws per cell (03: 4000)")
    args = ap.parse_args()
    from importlib.metadata import version

    import ppi_py  # noqa: F401
    import truescore

    t0 = time.perf_counter()
    rows, ranks = [], []
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for part in pool.map(run_point, [(pt, args.sims, args.seed, args.draws) for pt in points()]):
            rows.extend(part)
            print(
                json.dumps(
                    {k: part[0][k] for k in ("a", "b", "examples", "labels")}
                    | {r["method"]: r["coverage"] for r in part}
                ),
                flush=True,
            )
        for r in pool.map(run_ranks, [(s, args.sims, args.seed, args.draws) for s in SIZES]):
            ranks.append(r)
            print(json.dumps(r), flush=True)
        clustered = []
        tasks = [((a, b, sp, n, pop), args.sims, args.seed, args.draws) for (a, b), (sp, n), pop in
                 itertools.product(SYSTEMS, CLUSTERED, stats.POPULATIONS)]  # fmt: skip
        for r in pool.map(run_clustered, tasks):
            clustered.append(r)
            print(json.dumps(r), flush=True)
    summary = summarise(rows, ranks, clustered)
    result = result_record(
        "compare_anchors",
        versions={"truescore": truescore.__version__, "ppi-python": version("ppi-python")},
        sims=args.sims,
        seed=args.seed,
        vocab_draws=args.draws,
        seconds=round(time.perf_counter() - t0, 1),
        summary=summary,
        rows=rows,
        ranks=ranks,
        clustered=clustered,
    )
    print(json.dumps(summary, indent=1))
    write_result("compare_anchors", result)


if __name__ == "__main__":
    main()
