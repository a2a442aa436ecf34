"""Differences between cells, and rank sets, from the draws behind each cell's interval: vectorised over studies.

A cell's corrected rate theta has draws (:attr:`vocab.stats.intervals.Intervals.draws`: the fiducial confidence
distribution's, Jeffreys' posterior's or the bootstrap's, by the cell's interval method), each cell from its own
random stream. Two independent cells' draws, differenced draw by draw, are draws of theta_b − theta_a: its
equal-tailed percentile interval, widened to hold the estimate (:func:`~vocab.stats.intervals.holding_rows`), is
the difference's interval, by the same machinery as each theta's. The judge's leniency on a cell, p − theta (how
far its pass rate sits above the corrected rate), is differenced the same way from the (p, theta) draws.

Ranks as sets (Mogstad, Romano, Shaikh and Wilhelm, "Inference for ranks", 2024): simultaneous intervals over every
pairwise difference at family-wise level ``confidence``; a cell's rank set runs from 1 + the cells resolved above
it to K − the cells resolved below it. The simultaneous intervals are percentile bands calibrated on the joint
draws (:func:`simultaneous_bands`): one tail share gamma for every pair, the largest at which the share of draws
lying outside some pair's band is at most 1 − confidence — between Bonferroni's (1 − confidence) / (2 · pairs)
and the marginal (1 − confidence) / 2, and asymmetric where the draws are.

Nothing here knows about cells or files: inputs are arrays whose first axis is the study.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vocab.stats.intervals import holding_rows


@dataclass(frozen=True)
class Difference:
    """Per study: the estimate b − a and its interval (NaN where either side is undefined)."""

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray

    @property
    def resolved(self) -> np.ndarray:
        """The interval excludes 0."""
        return (self.low > RESOLVED_TOLERANCE) | (self.high < -RESOLVED_TOLERANCE)


def difference_interval(est_a, draws_a, est_b, draws_b, confidence: float = 0.95) -> Difference:
    """b − a per study from two independent sets of draws, (S,) estimates and (S, D) draws each (D equal): the
    percentile interval of the differenced draws, widened to hold the estimate. NaN where either is undefined."""
    est_a, est_b = np.asarray(est_a, dtype=float), np.asarray(est_b, dtype=float)
    draws_a, draws_b = np.atleast_2d(np.asarray(draws_a, dtype=float)), np.atleast_2d(np.asarray(draws_b, dtype=float))
    if draws_a.shape != draws_b.shape or draws_a.shape[0] != est_a.shape[0] or est_a.shape != est_b.shape:
        raise ValueError(f"draws of one shape per side, one row per estimate: {draws_a.shape} and {draws_b.shape}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    est = est_b - est_a
    lo, hi = holding_rows(est, draws_b - draws_a, (1 - confidence) / 2)
    undefined = ~np.isfinite(est)
    lo[undefined], hi[undefined] = np.nan, np.nan
    return Difference(est, lo, hi)


def contrast_interval(ests, draws, signs, confidence: float = 0.95) -> Difference:
    """Σ signs_i · x_i per study over independent quantities x_i (``ests``: K arrays (S,); ``draws``: K arrays
    (S, D)), e.g. a difference of differences: the percentile interval of the combined draws, widened to hold the
    estimate; NaN where any part is undefined."""
    est = sum(s * np.asarray(e, dtype=float) for s, e in zip(signs, ests, strict=True))
    comb = sum(s * np.atleast_2d(np.asarray(d, dtype=float)) for s, d in zip(signs, draws, strict=True))
    lo, hi = holding_rows(est, comb, (1 - confidence) / 2)
    undefined = ~np.isfinite(est)
    lo[undefined], hi[undefined] = np.nan, np.nan
    return Difference(np.asarray(est, dtype=float), lo, hi)


# a difference is resolved when its interval clears 0 by more than this: shares known exactly (piles labelled whole)
# differ from each other only in the last digits of their sums, which is no difference
RESOLVED_TOLERANCE = 1e-9
TAIL_DRAWS = 5  # joint draws beyond a band's end at Bonferroni's tail share, at the least (:func:`draws_for_family`)


def draws_for_family(quantities: int, confidence: float = 0.95, tail: int = TAIL_DRAWS) -> int:
    """The joint draws simultaneous bands over ``quantities`` need (:func:`simultaneous_bands`): enough that
    Bonferroni's tail share (1 − confidence) / (2 · quantities), the least the calibration may reach, holds ``tail``
    draws, so that no band's end rests on the one or two most extreme draws. 6 cells' 15 pairs need 3,000 at 95 %,
    10 cells' 45 pairs 9,000 and 20 cells' 190 pairs 38,000 (`vocab compare` draws 4,000 a cell, and more for the
    ranks where the family needs them)."""
    return math.ceil(tail * 2 * quantities / (1 - confidence))


def pairs_of(k: int) -> list[tuple[int, int]]:
    """Every pair (i, j), i < j, of k cells, in order."""
    return [(i, j) for i in range(k) for j in range(i + 1, k)]


def simultaneous_bands(est, draws, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Simultaneous intervals for P quantities per study: ``est`` (S, P), ``draws`` (S, P, D). Per study one tail
    share gamma: the largest at which at most a share 1 − confidence of the D joint draws lies outside the
    [gamma, 1 − gamma] percentile band of some quantity. Each band is then widened to hold its estimate. Returns
    (low, high, gamma): (S, P), (S, P), (S,). NaN draws (an undefined cell) make their quantity's band NaN and are
    left out of the calibration."""
    est = np.asarray(est, dtype=float)
    draws = np.asarray(draws, dtype=float)
    if draws.ndim != 3 or draws.shape[:2] != est.shape:
        raise ValueError(f"draws (studies, quantities, draws) against estimates (studies, quantities): {draws.shape}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    s, q, d = draws.shape
    alpha = 1 - confidence
    ok = np.isfinite(draws).all(axis=2)  # (S, P): a quantity with every draw defined
    # each draw's place among its quantity's draws, as a two-sided tail share: (min(rank, D - 1 - rank) + 1) / D
    order = np.argsort(np.where(np.isfinite(draws), draws, np.inf), axis=2, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(d)[None, None, :].repeat(s, 0).repeat(q, 1), axis=2)
    tail = (np.minimum(rank, d - 1 - rank) + 1) / d
    tail = np.where(ok[:, :, None], tail, np.inf)  # an undefined quantity does not calibrate
    extreme = tail.min(axis=1)  # (S, D): the draw's most extreme place over the quantities
    with np.errstate(invalid="ignore"):
        # gamma: at most alpha of the draws fall strictly below it (their place is more extreme than gamma)
        srt = np.sort(extreme, axis=1)
        k = int(np.floor(alpha * d))
        gamma = np.where(np.isfinite(srt[:, k]), srt[:, k], alpha / 2)
    gamma = np.clip(gamma, 0.5 / d, alpha / 2)
    srt_draws = np.take_along_axis(draws, order, axis=2)
    lo, hi = (_sorted_quantile(srt_draws, g) for g in (gamma, 1 - gamma))
    lo, hi = np.where(ok, lo, np.nan), np.where(ok, hi, np.nan)
    finite = np.isfinite(est) & ok
    lo = np.where(finite, np.fmin(lo, est), np.nan)
    hi = np.where(finite, np.fmax(hi, est), np.nan)
    return lo, hi, gamma


def _sorted_quantile(srt: np.ndarray, q: np.ndarray) -> np.ndarray:
    """numpy's default (linear) quantile ``q`` (S,) of each row of ``srt`` (S, P, D), already sorted on its last
    axis: the value at position q·(D − 1), interpolated."""
    d = srt.shape[2]
    h = np.asarray(q, dtype=float)[:, None, None] * (d - 1)
    f = np.clip(np.floor(h).astype(int), 0, d - 1)
    c = np.clip(f + 1, 0, d - 1)
    below = np.take_along_axis(srt, np.broadcast_to(f, srt.shape[:2] + (1,)), axis=2)
    above = np.take_along_axis(srt, np.broadcast_to(c, srt.shape[:2] + (1,)), axis=2)
    return (below + (h - f) * (above - below))[:, :, 0]


@dataclass(frozen=True)
class RankSets:
    """Per study and cell: the estimate and the rank set [low, high] (1 is the highest rate); the pairs'
    simultaneous intervals of theta_j − theta_i (i < j, :func:`pairs_of`) and the tail share they used."""

    low: np.ndarray  # (S, K) int
    high: np.ndarray  # (S, K) int
    pair_low: np.ndarray  # (S, P)
    pair_high: np.ndarray  # (S, P)
    gamma: np.ndarray  # (S,)


def rank_sets(est, draws, confidence: float = 0.95, tied=None) -> RankSets:
    """Rank sets of K cells per study from their estimates (S, K) and independent draws (S, K, D): simultaneous
    intervals over every theta_j − theta_i at family-wise ``confidence`` (:func:`simultaneous_bands`); cell i's
    set is [1 + #{j resolved above i}, K − #{j resolved below i}]. An undefined cell's set is [1, K] and it
    resolves nothing. ``tied``: per pair of :func:`pairs_of` (P,), whether the two cells are known to share one
    theta (two judges on the same outputs): such a pair is never resolved, and is left out of the family (its
    interval NaN)."""
    est = np.asarray(est, dtype=float)
    draws = np.asarray(draws, dtype=float)
    if draws.ndim != 3 or draws.shape[:2] != est.shape:
        raise ValueError(f"draws (studies, cells, draws) against estimates (studies, cells): {draws.shape}")
    s, k, _ = draws.shape
    pairs = pairs_of(k)
    if not pairs:
        return RankSets(
            np.ones((s, k), int), np.ones((s, k), int), np.empty((s, 0)), np.empty((s, 0)), np.full(s, np.nan)
        )
    tied = np.zeros(len(pairs), bool) if tied is None else np.asarray(tied, dtype=bool)
    if tied.shape != (len(pairs),):
        raise ValueError(f"tied: one flag per pair of the {k} cells ({len(pairs)}), got {tied.shape}")
    lo, hi = np.full((s, len(pairs)), np.nan), np.full((s, len(pairs)), np.nan)
    gamma = np.full(s, np.nan)
    tested = [n for n in range(len(pairs)) if not tied[n]]
    if tested:
        pd_est = np.stack([est[:, pairs[n][1]] - est[:, pairs[n][0]] for n in tested], axis=1)
        pd_draws = np.stack([draws[:, pairs[n][1]] - draws[:, pairs[n][0]] for n in tested], axis=1)
        lo[:, tested], hi[:, tested], gamma = simultaneous_bands(pd_est, pd_draws, confidence)
    above = np.zeros((s, k), int)  # cells resolved above (higher rate than) each cell
    below = np.zeros((s, k), int)
    for n, (i, j) in enumerate(pairs):
        j_above = lo[:, n] > RESOLVED_TOLERANCE  # theta_j − theta_i resolved positive
        j_below = hi[:, n] < -RESOLVED_TOLERANCE
        above[:, i] += j_above
        below[:, j] += j_above
        above[:, j] += j_below
        below[:, i] += j_below
    return RankSets(1 + above, k - below, lo, hi, gamma)


def true_ranks(theta) -> np.ndarray:
    """Each value's rank among its row, 1 for the highest, ties sharing the best rank: 1 + #{j: theta_j > theta_i}."""
    t = np.atleast_2d(np.asarray(theta, dtype=float))
    return 1 + (t[:, None, :] > t[:, :, None]).sum(axis=2)
