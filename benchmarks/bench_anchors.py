"""vocab's corrected rate and interval beside the estimators a practitioner would otherwise reach for, on the same
simulated populations, each given the same number of human labels drawn by its own intended design
(:mod:`vocab.coverage.anchors` defines the populations and the designs):

- ``vocab``: 03's default, the fiducial interval on two verdict piles of budget/2 rows (``vocab.stats``, with
  ``--draws`` draws a study, 2,000 by default; 03 takes 4,000);
  ``vocab-proportional`` and ``vocab-pilot``: the same estimator with the piles allocated by ``vocab sample
  --allocation proportional|pilot`` (the allocation measurement of the issue);
- ``vocab-finite``: the report's default since #65, the same piles corrected for the population's own attempts (p
  known, each pile finite). Its target is the population's own share of true passes, not theta: its ``coverage`` is
  of that share (``target`` says which), and it is left out of the narrowest-method count (a narrower answer to
  another question). Every row also holds ``coverage_own``, each method's coverage of the population's own share;
- ``truescore-ppi++``: truescore 0.7.4's ``ppi_estimate`` (PPI++, its tuned lambda), uniform labels;
- ``truescore-rg``: truescore's ``rogan_gladen_estimate`` (delta method), uniform labels;
- ``ppi_py``: ppi-python 0.2.3's ``ppi_mean_ci`` (PPI++ with its lambda tuning), uniform labels;
- ``judgy``: judgy 0.1.0's ``estimate_success_rate`` (Rogan–Gladen, percentile bootstrap of the labelled set),
  uniform labels (its labelled test set); its bootstrap loops in Python, so it runs ``--judgy-boot`` resamples
  (default 200) rather than its default 20,000 (2,000 studies x 60 points x 20,000 would take days here);
- ``lee``: Lee et al. (2025)'s plug-in interval (:func:`vocab.coverage.anchors.lee_interval`; not packaged),
  on a separate calibration set of budget/2 known true passes and budget/2 known true fails.

The anchors run through their own packages (``make bench`` installs them, pinned), never re-implemented, except
Lee et al.'s. A study where a method raises (both classes needed, a judge at or below chance, an empty pile) is
undefined for it; coverage, width and bias are over its defined studies, and the share defined is reported.
Every point and method draws from its own stream, derived from the seed and its names; the population of a study
is the same for every method.

Run: .venv/bin/python benchmarks/bench_anchors.py [--sims 2000] [--jobs 2]; writes benchmarks/results/anchors.json.
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

THETAS = (0.0, 0.05, 0.3, 0.7)
CRITICS = ((0.8, 0.8), (0.97, 0.47), (0.6, 0.95))  # (q1, q0): even, truescore's plan judge, a strict judge
PAIRS = ((48, 20), (140, 20), (140, 40), (400, 40), (400, 80))  # (judged attempts, label budget)
METHODS = ("vocab", "vocab-proportional", "vocab-pilot", "vocab-finite", "truescore-ppi++", "truescore-rg", "ppi_py",
           "judgy", "lee")  # fmt: skip
DESIGN = {"vocab": "piles", "vocab-proportional": "piles", "vocab-pilot": "piles", "vocab-finite": "piles",
          "lee": "by-class"}  # fmt: skip
OWN_TARGET = {"vocab-finite"}  # aims at the population's own share of true passes, not theta
ALPHA = 0.05


def points() -> list[tuple]:
    """(theta, q1, q0, attempts, budget)."""
    return [(t, q1, q0, n, b) for t, (q1, q0), (n, b) in itertools.product(THETAS, CRITICS, PAIRS)]


def one(method: str, pop: an.Population, budget: int, q1: float, q0: float, rng, judgy_boot: int, draws: int):
    """(estimate, low, high) of one study by ``method``, or None where it is undefined."""
    if method == "vocab-finite":
        a, b = an.allocated_piles(pop, budget, "equal", rng)
        return an.vocab_interval(pop, a, b, rng, n_draws=draws, population=stats.FINITE)
    if method.startswith("vocab"):
        allocation = {"vocab": "equal", "vocab-proportional": "proportional", "vocab-pilot": "pilot"}[method]
        a, b = an.allocated_piles(pop, budget, allocation, rng)
        return an.vocab_interval(pop, a, b, rng, n_draws=draws)
    if method == "lee":
        m1 = budget - budget // 2
        m0 = budget // 2
        on_pass, on_fail = an.by_class_calibration(q1, q0, m1, m0, rng)
        return an.lee_interval(float(pop.verdict.mean()), float(1 - on_fail.mean()), float(on_pass.mean()),
                               pop.verdict.size, m0, m1, ALPHA)  # fmt: skip
    idx = an.uniform_labels(pop, budget, rng)
    judge, gold = pop.verdict.astype(float), pop.truth[idx].astype(float)
    rest = np.ones(judge.size, bool)
    rest[idx] = False
    try:
        if method == "truescore-ppi++":
            from truescore import ppi_estimate

            e = ppi_estimate(judge, gold, idx, alpha=ALPHA)
            return e.point, e.low, e.high
        if method == "truescore-rg":
            from truescore import rogan_gladen_estimate

            e = rogan_gladen_estimate(judge.astype(int), gold.astype(int), idx, alpha=ALPHA)
            return e.point, e.low, e.high
        if method == "ppi_py":
            from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

            args = (gold, judge[idx], judge[rest])
            lo, hi = ppi_mean_ci(*args, alpha=ALPHA)
            return float(np.ravel(ppi_mean_pointestimate(*args))[0]), float(np.ravel(lo)[0]), float(np.ravel(hi)[0])
        if method == "judgy":
            from judgy import estimate_success_rate

            np.random.seed(int(rng.integers(2**32)))  # judgy draws from numpy's global generator
            return estimate_success_rate(gold.astype(int), judge[idx].astype(int), judge[rest].astype(int),
                                         bootstrap_iterations=judgy_boot, confidence_level=1 - ALPHA)  # fmt: skip
    except (ValueError, RuntimeError, ZeroDivisionError):
        return None
    raise ValueError(f"unknown method {method!r}")


def _holds(lo, hi, truth) -> float | None:
    """The share of studies whose interval holds its truth (None: no study answered)."""
    return round(float(np.mean((lo <= truth + 1e-12) & (truth - 1e-12 <= hi))), 4) if len(lo) else None


def run_point(args: tuple) -> list[dict]:
    (theta, q1, q0, attempts, budget), sims, seed, judgy_boot, draws = args
    names = ("anchors", theta, q1, q0, attempts)
    pop_rng = stats.stream(seed, *names, "population")  # the budget does not change the populations
    pops = [an.population(theta, q1, q0, attempts, pop_rng) for _ in range(sims)]
    rows = []
    for method in METHODS:
        rng = stats.stream(seed, *names, budget, method)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = [one(method, pop, budget, q1, q0, rng, judgy_boot, draws) for pop in pops]
        keep = [f is not None and all(np.isfinite(f)) for f in found]
        ok = np.array([f for f, k in zip(found, keep, strict=True) if k], dtype=float).reshape(-1, 3)
        own = np.array([pop.truth.mean() for pop, k in zip(pops, keep, strict=True) if k], dtype=float)
        est, lo, hi = ok.T
        target = own if method in OWN_TARGET else np.full(len(ok), theta)
        rows.append(
            {
                "theta": theta, "q1": q1, "q0": q0, "attempts": attempts, "budget": budget, "method": method,
                "design": DESIGN.get(method, "uniform"), "target": "own share" if method in OWN_TARGET else "theta",
                "sims": sims, "defined": int(len(ok)), "coverage": _holds(lo, hi, target),
                "coverage_own": _holds(lo, hi, own),
                "mean_width": round(float(np.mean(hi - lo)), 4) if len(ok) else None,
                "bias": round(float(np.mean(est - target)), 4) if len(ok) else None,
                "seconds": round(time.perf_counter() - t0, 2),
            }
        )  # fmt: skip
    return rows


def answers(r: dict) -> bool:
    """The method answers in at least half the studies at this point (as the coverage grid's usable points)."""
    return r["defined"] >= r["sims"] / 2


def summarise(rows: list[dict]) -> dict:
    """Per method: points, points where it answers in fewer than half the studies (``mostly_undefined``), points
    under 0.93 among the others, worst coverage, and at how many points it is the narrowest of the methods that
    answer and cover at least 0.93 there."""
    out = {m: {"points": 0, "mostly_undefined": 0, "under_93": 0, "worst": None, "narrowest_covering": 0,
               "undefined_share": 0.0, "own_under_93": 0, "own_worst": None} for m in METHODS}  # fmt: skip
    by_point: dict[tuple, list[dict]] = {}
    for r in rows:
        by_point.setdefault((r["theta"], r["q1"], r["q0"], r["attempts"], r["budget"]), []).append(r)
        s = out[r["method"]]
        s["points"] += 1
        s["undefined_share"] += (r["sims"] - r["defined"]) / r["sims"]
        if not answers(r):
            s["mostly_undefined"] += 1
            continue
        s["under_93"] += r["coverage"] < 0.93
        s["worst"] = r["coverage"] if s["worst"] is None else min(s["worst"], r["coverage"])
        s["own_under_93"] += r["coverage_own"] < 0.93
        s["own_worst"] = r["coverage_own"] if s["own_worst"] is None else min(s["own_worst"], r["coverage_own"])
    for rs in by_point.values():
        covering = [r for r in rs if answers(r) and r["coverage"] >= 0.93 and r["method"] not in OWN_TARGET]
        if covering:
            out[min(covering, key=lambda r: r["mean_width"])["method"]]["narrowest_covering"] += 1
    for s in out.values():
        s["undefined_share"] = round(s["undefined_share"] / max(s["points"], 1), 4)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--judgy-boot", type=int, default=200)
    ap.add_argument("--draws", type=int, default=2000, help="vocab's fiducial draws per study (03: 4000)")
    args = ap.parse_args()
    from importlib.metadata import version

    import judgy
    import ppi_py  # noqa: F401
    import truescore

    t0 = time.perf_counter()
    tasks = [(pt, args.sims, args.seed, args.judgy_boot, args.draws) for pt in points()]
    rows = []
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for part in pool.map(run_point, tasks):
            rows.extend(part)
            print(json.dumps({k: part[0][k] for k in ("theta", "q1", "q0", "attempts", "budget")}
                             | {r["method"]: r["coverage"] for r in part}), flush=True)  # fmt: skip
    summary = summarise(rows)
    result = result_record(
        "anchors",
        designs=an.DESIGNS,
        methods={m: DESIGN.get(m, "uniform") for m in METHODS},
        targets={m: "own share" if m in OWN_TARGET else "theta" for m in METHODS},
        versions={"truescore": truescore.__version__, "judgy": judgy.__version__, "ppi-python": version("ppi-python")},
        sims=args.sims,
        seed=args.seed,
        judgy_bootstrap=args.judgy_boot,
        vocab_draws=args.draws,
        seconds=round(time.perf_counter() - t0, 1),
        summary=summary,
        rows=rows,
    )
    print(json.dumps(summary, indent=1))
    write_result("anchors", result)


if __name__ == "__main__":
    main()
