"""The corrected rate of a cell whose piles were sampled by strata (`vocab audit --strata score|COLUMN`).

Each of the judge's two piles is split into strata — bands of the judge's own score, or the values of a column the
dataset kept — and each stratum h of N_h items is sampled on its own (n_h rows, k_h passing by the rater). The
pile's share is then the strata's shares weighted by their known sizes, Σ_h (N_h / N) · share_h, and theta, q1 and
q0 follow from the two shares as for a pile sampled whole. Each stratum's share is drawn as the fiducial default
draws a finite pile's (:func:`vocab.stats.intervals.binomial_cd_draws`, completed over its N_h rows by
:func:`~vocab.stats.intervals.finite_shares`), each stratum its own randomisation; the weighted sums of the draws
give the interval, its ends on draws (:func:`holding_lattice`). The items are the population (p known, every verdict
seen): the finite population only, and the fiducial method only. Its coverage is measured in
:mod:`vocab.coverage.strata` (``benchmarks/results/strata.json``).
"""

from __future__ import annotations

import numpy as np

from vocab.stats.correction import Correction, corrected_rate, sensitivity, specificity
from vocab.stats.intervals import CorrectionInterval, binomial_cd_draws, finite_shares


def pile_draws(values: np.ndarray, totals: np.ndarray, n_draws: int, rng: np.random.Generator, lower=None):
    """One pile of S studies sampled by H strata: ``values`` (S, H, n) the rater's 0/1 verdicts (NaN past a
    stratum's rows), ``totals`` (S, H) each stratum's rows in all (0: no such stratum). Returns the pile's share per
    study (S,) and its draws (S, n_draws); NaN where a stratum that holds rows has no rated row, and for a pile with
    no rows. ``lower``: the odds of a draw from a stratum's lower bounding Beta (None: each stratum its own uniform
    randomisation, the fiducial default's; 0.5: either Beta with even odds, wider). Draws in this order: every
    stratum's randomisation, its Beta draws, then its completion."""
    v = np.asarray(values, dtype=float)
    tot = np.asarray(totals, dtype=float)
    s, h, m = v.shape
    flat = v.reshape(s * h, m)
    n = np.sum(~np.isnan(flat), axis=1).astype(float)
    k = np.nansum(flat, axis=1)
    odds = rng.random(s * h) if lower is None else np.full(s * h, lower)  # None: each stratum its own randomisation
    cd = binomial_cd_draws(k, n, odds, n_draws, rng)  # odds: of a draw from the lower bounding Beta
    shares = finite_shares(cd, flat, tot.reshape(-1), rng).reshape(s, h, n_draws)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = (k / n).reshape(s, h)
    size = tot.sum(axis=1)
    w = np.divide(tot, size[:, None], out=np.zeros_like(tot), where=size[:, None] > 0)
    present = tot > 0
    ok = (size > 0) & ~np.any(present & (n.reshape(s, h) == 0), axis=1)
    point = np.where(ok, np.sum(np.where(present, w * np.nan_to_num(share), 0.0), axis=1), np.nan)
    draws = np.einsum("sh,shd->sd", w, np.where(present[:, :, None], np.nan_to_num(shares), 0.0))
    return point, np.where(ok[:, None], draws, np.nan)


def holding_lattice(values, draws, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~vocab.stats.intervals.holding_rows` with its ends on draws themselves (the lower end the draw at or
    below the alpha quantile, the upper at or above 1 − alpha): a finite pile's share lies on a lattice of its rows,
    and an end interpolated between two draws would leave out the lattice point at the edge (near a census it holds
    much of the draws' mass)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a row with no defined draw: NaN
        lo = np.nanquantile(draws, alpha, axis=1, method="lower")
        hi = np.nanquantile(draws, 1 - alpha, axis=1, method="higher")
    v = np.asarray(values, dtype=float)
    ok = np.isfinite(v) & np.isfinite(lo)
    return np.where(ok, np.fmin(lo, v), lo), np.where(ok, np.fmax(hi, v), hi)


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
    alpha = (1 - confidence) / 2
    shares = []
    for strata in (passed, failed):
        if not strata or sum(t for _, t in strata) == 0:
            shares.append((np.array([np.nan]), np.zeros((1, n_draws)), True))
            continue
        totals = np.array([[t for _, t in strata]], dtype=float)
        point, draws = pile_draws(padded([x for x, _ in strata]), totals, n_draws, rng)
        shares.append((point, draws, False))
    (a, ad, a_empty), (b, bd, b_empty) = shares
    pa, pb = (np.zeros(1) if a_empty else a), (np.zeros(1) if b_empty else b)
    est = corrected_rate(p, pa, pb)
    draws = corrected_rate(p, ad, bd)
    lo, hi = holding_lattice(est, draws, alpha)
    q1, q0 = sensitivity(p, pa, pb), specificity(p, pa, pb)
    q1d, q0d = sensitivity(p, ad, bd), specificity(p, ad, bd)
    (q1l, q1h), (q0l, q0h) = holding_lattice(q1, q1d, alpha), holding_lattice(q0, q0d, alpha)
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
