"""What the pooled rate of judges on the same outputs is worth (:mod:`vocab.estimates.pooled`), measured by
simulation: ``outputs`` outputs of which a share ``theta`` is good, judged by each judge of ``judges`` (its
sensitivity q1 and specificity q0; with probability ``shared`` an output's errors are one draw for every judge,
so the judges err together), each judge's PASSED and FAILED piles drawn ``per_pile`` rows each (a simple random
sample, the whole pile when smaller), every drawn output labelled with its truth. The truth is each study's own
share of good outputs (the finite population); the rate is :func:`vocab.estimates.pooled.pool`, the command's."""

from __future__ import annotations

import numpy as np

from vocab import stats
from vocab.estimates.pooled import pool


def simulate_pooled(theta: float, judges, outputs: int, per_pile: int, shared: float, rng: np.random.Generator):
    """One study: (marks (N, judges), sampled (N, judges), labels (N,) NaN where not drawn, the true share)."""
    good = rng.random(outputs) < theta
    m = len(judges)
    own = rng.random((outputs, m))
    common = np.repeat(rng.random(outputs)[:, None], m, axis=1)
    u = np.where((rng.random(outputs) < shared)[:, None], common, own)
    q1 = np.array([q for q, _ in judges])
    q0 = np.array([q for _, q in judges])
    passed = np.where(good[:, None], u < q1, u >= q0)
    sampled = np.zeros((outputs, m), dtype=bool)
    for j in range(m):
        for pile in (passed[:, j], ~passed[:, j]):
            idx = np.flatnonzero(pile)
            sampled[rng.choice(idx, size=min(per_pile, idx.size), replace=False), j] = True
    labels = np.where(sampled.any(axis=1), good.astype(float), np.nan)
    return np.where(passed, "P", "F"), sampled, labels, float(good.mean())


def pooled_coverage(
    theta: float,
    judges,
    *,
    outputs: int,
    per_pile: int,
    shared: float = 0.0,
    sims: int = 1000,
    seed: int = 0,
    n_draws: int = 1000,
    confidence: float = 0.95,
) -> dict:
    """Coverage and mean width of the pooled rate's interval over ``sims`` studies (those it defines), with how
    many judges' piles it pooled on average and the share it defined."""
    rng = stats.stream(seed, "pooled-coverage", theta, outputs, per_pile, shared, *map(tuple, judges))
    held, width, used, defined = [], [], [], 0
    for i in range(sims):
        marks, sampled, labels, truth = simulate_pooled(theta, judges, outputs, per_pile, shared, rng)
        judges_used, _, _, est, lo, hi = pool(marks, sampled, labels, n_draws, seed + i, confidence)
        if not np.isfinite(est):
            continue
        defined += 1
        held.append(lo - 1e-12 <= truth <= hi + 1e-12)
        width.append(hi - lo)
        used.append(len(judges_used))
    return {
        "theta": theta,
        "judges": [list(j) for j in judges],
        "outputs": outputs,
        "per_pile": per_pile,
        "shared": shared,
        "sims": sims,
        "defined": defined,
        "coverage": float(np.mean(held)) if held else float("nan"),
        "mean_width": float(np.mean(width)) if width else float("nan"),
        "mean_judges_pooled": float(np.mean(used)) if used else float("nan"),
    }
