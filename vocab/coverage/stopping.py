"""The stopping rule's coverage under optional stopping (``benchmarks/bench_stopping.py``): simulated audits that
label a batch more of each pile a look and stop at the first look whose interval is narrow enough, read by the
confidence sequence (:func:`vocab.estimates.stopping.cell_sequence`, the rule `vocab audit --target-half-width`
applies) and, beside it, by the report's fixed-sample interval read at every look."""

from __future__ import annotations

import numpy as np

from vocab import stats
from vocab.coverage.simulate import finite_totals, piles_interval, simulate_studies
from vocab.estimates.stopping import cell_sequence
from vocab.stats import Piles


def simulate_stopping(
    theta: float,
    q1: float,
    q0: float,
    attempts: int,
    *,
    looks: int = 20,
    batch: int = 5,
    target: float = 0.1,
    sims: int = 500,
    seed: int = 0,
    n_boot: int = 1000,
    method: str = stats.DEFAULT_INTERVAL,
) -> dict:
    """Coverage under optional stopping. Each simulated audit labels ``batch`` more rows of each pile a look (equal
    piles, each in a random order, without replacement) for up to ``looks`` looks, and stops at the first look whose
    interval meets ``target`` (or at the last). Two labellers: one who reads the confidence sequence, and one who
    reads the report's fixed-sample interval (``method``) at every look. At each one's stop: does the interval it
    read hold the cell's own rate (the finite population)? With the labels used and the widths. The streams derive
    from the seed and the point."""

    names = ("stopping", theta, q1, q0, attempts, looks, batch, target)
    st = simulate_studies(theta, q1, q0, attempts, attempts, sims, stats.stream(seed, *names, "studies"))
    sizes = np.stack([np.sum(~np.isnan(st.passed), axis=1), np.sum(~np.isnan(st.failed), axis=1)]).astype(int)
    truth = np.asarray(st.truth, dtype=float)
    seq = {
        "stop": np.full(sims, looks),
        "hold": np.zeros(sims, bool),
        "width": np.zeros(sims),
        "labels": np.zeros(sims),
    }
    for i in range(sims):
        a, b = st.passed[i, : sizes[0, i]], st.failed[i, : sizes[1, i]]
        at = cell_sequence(a[: looks * batch], b[: looks * batch], len(a), len(b), stats.FINITE)
        for look in range(1, looks + 1):
            t_a, t_b = min(look * batch, len(a)), min(look * batch, len(b))
            lo, hi = at(t_a, t_b)
            if (hi - lo) / 2 <= target or look == looks:
                break
        seq["stop"][i], seq["width"][i], seq["labels"][i] = look, hi - lo, t_a + t_b
        seq["hold"][i] = lo - 1e-9 <= truth[i] <= hi + 1e-9
    passes, failures = finite_totals(st.p, float(attempts))
    totals = (np.where(passes > 0, passes, np.nan), np.where(failures > 0, failures, np.nan))
    fixed = {
        "stop": np.full(sims, looks),
        "hold": np.zeros(sims, bool),
        "width": np.full(sims, np.nan),
        "labels": np.zeros(sims),
    }
    open_ = np.ones(sims, dtype=bool)
    for look in range(1, looks + 1):  # the fixed-sample interval at every look, for every audit still labelling
        n = look * batch
        x, y = st.passed[:, :n].copy(), st.failed[:, :n].copy()
        x[st.p == 0, 0], y[st.p == 1, 0] = 0.0, 0.0
        piles = Piles(st.p, np.full(sims, float(attempts)), x, y, (~np.isnan(y)).astype(float), np.ones(sims), *totals)
        est, lo, hi = piles_interval(method, piles, n_boot, stats.stream(seed, *names, "fixed", look))
        done = open_ & (((hi - lo) / 2 <= target) | (look == looks))
        fixed["stop"][done], fixed["width"][done] = look, (hi - lo)[done]
        fixed["hold"][done] = ((lo <= truth) & (truth <= hi))[done]
        fixed["labels"][done] = np.minimum(sizes, n).sum(axis=0)[done]
        open_ &= ~done
    return {
        "theta": theta,
        "q1": q1,
        "q0": q0,
        "attempts": attempts,
        "looks": looks,
        "batch_per_pile": batch,
        "target": target,
        "sims": sims,
        "seed": seed,
        "method": method,
        "sequence": _summary(seq, looks),
        "fixed_peeking": _summary(fixed, looks),
    }


def _summary(r: dict, looks: int) -> dict:
    return {
        "coverage": round(float(r["hold"].mean()), 4),
        "labels_median": float(np.median(r["labels"])),
        "width_median": round(float(np.nanmedian(r["width"])), 4),
        "met_target": round(float(np.mean(r["stop"] < looks)), 4),
    }
