"""The corrected rate of a cell whose piles were sampled by strata (`vocab audit --strata score|COLUMN`, and `--by
COLUMN` on a first call: each slice × pile a stratum).

Each of the judge's two piles is split into strata — bands of the judge's own score, or the values of a column the
dataset kept — and each stratum h of N_h items is sampled on its own (n_h rows, k_h passing by the rater). The
pile's share is then the strata's shares weighted by their known sizes, Σ_h (N_h / N) · share_h, and theta, q1 and
q0 follow from the two shares as for a pile sampled whole. Each stratum's share is drawn from its two bounding Betas,
completed over its N_h rows (:func:`vocab.stats.shares.strata_bounds`), and every end is read by
:func:`vocab.stats.shares.bounded_ends`: theta's lower end from the draws in which every stratum of both piles draws
low, q1's and q0's from the passed pile's low draws with the failed pile's high ones. (Until 2026-12 each stratum drew
with its own randomisation and the sums' percentiles were read: near-pure strata left theta at 0.83–0.91 and q0 at
0.73–0.92.) The draws a difference or a rank set takes are the even mixture of the two (one coin a draw, shared by
every stratum: :func:`~vocab.stats.shares.mixed`). The items are the population (p known, every verdict seen): the
finite population only, and the fiducial method only. Its coverage is measured in :mod:`vocab.coverage.strata`
(``benchmarks/results/strata.json``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vocab.stats.correction import Correction, corrected_rate, sensitivity, specificity
from vocab.stats.intervals import CorrectionInterval
from vocab.stats.shares import bounded_ends, bounded_q, mixed, strata_bounds


@dataclass(frozen=True)
class StrataIntervals:
    """Per study (S,): theta, q1 and q0 with their ends; the draws differences take (S, n_draws) each."""

    a: np.ndarray
    b: np.ndarray
    theta: np.ndarray
    theta_ci: tuple[np.ndarray, np.ndarray]
    q1: np.ndarray
    q1_ci: tuple[np.ndarray, np.ndarray]
    q0: np.ndarray
    q0_ci: tuple[np.ndarray, np.ndarray]
    theta_draws: np.ndarray
    q1_draws: np.ndarray
    q0_draws: np.ndarray


def stratified_intervals(p, passed, failed, n_draws: int, rng: np.random.Generator, confidence: float = 0.95):
    """S studies' corrections from their strata: ``passed`` and ``failed`` each (values (S, H, m), totals (S, H)) as
    :func:`~vocab.stats.shares.strata_bounds` takes them; ``p`` (S,). The function the simulator measures. Draws in
    this order: the passed pile's bounds, the failed pile's, then the mixing coins."""
    alpha = (1 - confidence) / 2
    p = np.asarray(p, dtype=float)
    a, al, ah = strata_bounds(*passed, n_draws, rng)
    b, bl, bh = strata_bounds(*failed, n_draws, rng)
    pd_ = p[:, None]
    theta, q1, q0 = corrected_rate(p, a, b), sensitivity(p, a, b), specificity(p, a, b)
    theta_ci = bounded_ends(theta, corrected_rate(pd_, al, bl), corrected_rate(pd_, ah, bh), alpha)
    q1_ci, q0_ci = bounded_q(p, (al, ah), (bl, bh), q1, q0, alpha)
    coin = rng.random(n_draws) < 0.5
    # a difference of two cells or a rank set: the even mixture, q's draws pairing a's low with b's high
    am, bm, bq = mixed(al, ah, coin), mixed(bl, bh, coin), mixed(bh, bl, coin)
    return StrataIntervals(
        a,
        b,
        theta,
        theta_ci,
        q1,
        q1_ci,
        q0,
        q0_ci,
        corrected_rate(pd_, am, bm),
        sensitivity(pd_, am, bq),
        specificity(pd_, am, bq),
    )


def padded(strata: list[np.ndarray]) -> np.ndarray:
    """(1, H, n) of one pile's strata (a list of each stratum's 0/1 verdicts), NaN past a stratum's rows."""
    m = max([len(x) for x in strata] + [1])
    out = np.full((1, max(len(strata), 1), m), np.nan)
    for i, x in enumerate(strata):
        out[0, i, : len(x)] = np.asarray(x, dtype=float)
    return out


def stratified_correction(
    p: float,
    passed: list[tuple[np.ndarray, int]],
    failed: list[tuple[np.ndarray, int]],
    *,
    n_draws: int = 4000,
    confidence: float = 0.95,
    rng: np.random.Generator,
) -> CorrectionInterval:
    """One cell's correction from its strata: ``passed`` and ``failed``, each pile's strata as (the rater's 0/1
    verdicts on the stratum's rated rows, the stratum's rows in all). A pile with no rows (p = 0 or 1) is a
    placeholder that p's weight 0 cancels; its share is NaN."""
    piles = []
    for strata in (passed, failed):
        if not strata or sum(t for _, t in strata) == 0:  # a placeholder: one row of 0, rated whole (its share 0)
            piles.append((np.zeros((1, 1, 1)), np.ones((1, 1)), True))
            continue
        piles.append((padded([x for x, _ in strata]), np.array([[t for _, t in strata]], dtype=float), False))
    r = stratified_intervals(np.array([float(p)]), piles[0][:2], piles[1][:2], n_draws, rng, confidence)
    a = np.array([np.nan]) if piles[0][2] else r.a
    b = np.array([np.nan]) if piles[1][2] else r.b
    (lo, hi), (q1l, q1h), (q0l, q0h), est, q1, q0 = r.theta_ci, r.q1_ci, r.q0_ci, r.theta, r.q1, r.q0
    draws, q1d, q0d = r.theta_draws, r.q1_draws, r.q0_draws
    point = Correction(float(p), float(a[0]), float(b[0]), float(est[0]), float(q1[0]), float(q0[0]))
    return CorrectionInterval(
        point,
        (float(lo[0]), float(hi[0])),
        (float(q1l[0]), float(q1h[0])),
        (float(q0l[0]), float(q0h[0])),
        n_draws,
        draws[0],
        np.full(n_draws, float(p)),
        q1d[0],
        q0d[0],
    )
