"""The finite population's fiducial intervals of theta, q1 and q0 computed exactly, not by drawing (issue #76 item 5).

For the finite population (:data:`vocab.stats.intervals.FINITE`) the fiducial draws of a pile's share are (k +
Binomial(R, π)) / N, π a draw of the randomised binomial confidence distribution (Beta(k, n − k + 1) with probability v,
else Beta(k + 1, n − k): :func:`vocab.stats.intervals.binomial_cd_draws`), k the labelled rows' passes, R = N − n the
pile's rows not labelled. Given v that share has a known distribution: the mixture v · BetaBinomial(R; k, n − k + 1) +
(1 − v) · BetaBinomial(R; k + 1, n − k) on the lattice (k + j) / N. p is known, so theta = p·A + (1 − p)·B, q1 = p·A /
theta and q0 = (1 − p)(1 − B) / (1 − theta) are functions of two independent lattice variables whose joint distribution
is computed whole: their equal-tailed quantiles are what :func:`vocab.stats.intervals.correction_intervals` estimates
from its draws (q1's and q0's ends, as there, from each pile's bounding shares, v = 1 and v = 0, paired so that each
end is the farther one: :func:`vocab.stats.shares.bounded_q`), without their Monte-Carlo error (which on a lattice
moves an end by a whole lattice step when the tail share sits near α). Used where the two lattices together hold at
most :data:`MAX_POINTS` points; beyond that the lattice is fine enough that the draws' error is small
(benchmarks/results/mc_error.json).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import betabinom

from vocab.stats.correction import corrected_rate, kish_rows, sensitivity, specificity

MAX_POINTS = 4_000_000  # (R_a + 1)·(R_b + 1) at most: a few tens of MB and well under a second


def _beta_binomial(rest: int, a: float, b: float) -> np.ndarray:
    """P(j), j = 0..rest, of Binomial(rest, π) with π ~ Beta(a, b); Beta(0, ·) is 0 and Beta(·, 0) is 1."""
    if a <= 0:
        return np.eye(1, rest + 1, 0).ravel()
    if b <= 0:
        return np.eye(1, rest + 1, rest).ravel()
    return betabinom.pmf(np.arange(rest + 1), rest, a, b)


def finite_share(k: float, n: float, labelled_passes: float, labelled: int, total: int, v: float):
    """(values, probabilities) of one pile's fiducial share over its ``total`` rows: the confidence distribution's
    ``k`` of ``n`` (the pile's rate, on its Kish rows for a weighted pile), ``labelled`` rows labelled with
    ``labelled_passes`` passes, randomised by ``v``."""
    rest = int(total - labelled)
    pmf = v * _beta_binomial(rest, k, n - k + 1) + (1 - v) * _beta_binomial(rest, k + 1, n - k)
    return (labelled_passes + np.arange(rest + 1)) / total, pmf


def lattice_quantiles(values: np.ndarray, probs: np.ndarray, alpha: float) -> tuple[float, float]:
    """The α and 1 − α quantiles of a discrete distribution: the smallest value whose cumulative probability
    reaches each (the limit of the draws' percentile as their number grows)."""
    order = np.argsort(values, kind="stable")
    v, cum = values[order], np.cumsum(probs[order])
    cum /= cum[-1]
    lo = v[min(np.searchsorted(cum, alpha - 1e-12), v.size - 1)]
    hi = v[min(np.searchsorted(cum, 1 - alpha - 1e-12), v.size - 1)]
    return float(lo), float(hi)


def joint_shares(passed, failed):
    """(A, B, probabilities) over the joint lattice of the two piles' shares (each (values, probabilities) from
    :func:`finite_share`); None past :data:`MAX_POINTS`."""
    if passed[0].size * failed[0].size > MAX_POINTS:
        return None
    a = np.repeat(passed[0], failed[0].size)
    b = np.tile(failed[0], passed[0].size)
    return a, b, np.outer(passed[1], failed[1]).ravel()


def finite_intervals(
    p: float, passed, failed, weights, totals, v_rng: np.random.Generator, estimates, confidence: float = 0.95
) -> dict[str, tuple[float, float]] | None:
    """Theta's, q1's and q0's fiducial intervals for the finite population, exactly: the quantiles of their
    distributions over :func:`joint_shares` with the uniforms ``v_rng`` gives first (the passed pile's, then the
    failed pile's, as :func:`vocab.stats.intervals.share_draws` takes them), an undefined q1 or q0 left out as the
    draws leave it out, each widened to hold its estimate (``estimates``: theta, q1, q0) and clipped to [0, 1] as the
    drawn intervals are. ``passed``, ``failed``, ``weights``: the piles' labelled verdicts and the failed pile's
    weights; ``totals``: each pile's rows in all (NaN for a placeholder pile, which p's weight 0 cancels). None where
    it does not apply (an infinite pile, a lattice past :data:`MAX_POINTS`). Also theta's distribution on the grid
    of :data:`GRID` and q1's and q0's where defined (``lattice``: name -> (values, probabilities)), for the
    differences (:func:`difference_distribution`)."""
    x, y, w = (np.asarray(a, dtype=float) for a in (passed, failed, weights))
    v_a, v_b = float(v_rng.random(1)[0]), float(v_rng.random(1)[0])
    n_b = float(kish_rows(w))  # the failed pile's rate on its Kish rows, as the draws take it
    piles = (
        (x, x.sum(), x.size, totals[0], v_a, p),
        (y, (w * y).sum() / w.sum() * n_b, n_b, totals[1], v_b, 1 - p),
    )
    shares = []
    for vals, k, n, total, v, weight in piles:
        if weight == 0:
            shares.append((np.zeros(1), np.ones(1)))  # a placeholder pile: p's weight 0 cancels whatever it holds
            continue
        if total is None or not np.isfinite(total) or total < vals.size or total - vals.size + 1 > MAX_POINTS:
            return None
        shares.append(finite_share(k, n, vals.sum(), vals.size, int(round(total)), v))
    joint = joint_shares(*shares)
    if joint is None:
        return None
    a, b, prob = joint
    theta = corrected_rate(p, a, b)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = {"theta": theta, "q1": sensitivity(p, a, b), "q0": specificity(p, a, b)}
    out = {"lattice": {}}  # each one's distribution on the grid (where it is defined), for the differences
    bounds = _bounding_q(p, piles, shares)
    if bounds is None:
        return None
    for (name, v), est in zip(values.items(), estimates, strict=True):
        ok = np.isfinite(v)
        if ok.any():
            start, pmf = binned((v[ok], prob[ok] / prob[ok].sum()))
            out["lattice"][name] = ((start + np.arange(pmf.size)) * GRID, pmf)
        if name == "theta":
            lo, hi = lattice_quantiles(v[ok], prob[ok], (1 - confidence) / 2) if ok.any() else (np.nan, np.nan)
        else:
            lo, hi = _bounded_ends(*bounds[name], (1 - confidence) / 2)
        if np.isfinite(est) and np.isfinite(lo):
            lo, hi = min(lo, est), max(hi, est)
        out[name] = (float(np.clip(lo, 0, 1)), float(np.clip(hi, 0, 1)))
    return out


def _bounding_q(p: float, piles, mixed_shares):
    """q1's and q0's distributions on the two sides :func:`vocab.stats.shares.bounded_q` reads their ends from: the
    lower end from the passed pile's lower bounding share with the failed pile's upper one (both rise with the
    passed pile's share and fall with the failed pile's), the upper end the other way round; each side a
    (values, probabilities) of the joint lattice. A placeholder pile keeps its one point. None past
    :data:`MAX_POINTS`."""
    sides = []
    for v in (1.0, 0.0):  # 1: every draw from the lower bounding Beta; 0: from the upper
        one = []
        for (vals, k, n, total, _, weight), mixed_share in zip(piles, mixed_shares, strict=True):
            if weight == 0:
                one.append(mixed_share)
            else:
                one.append(finite_share(k, n, vals.sum(), vals.size, int(round(total)), v))
        sides.append(one)
    (a_low, b_low), (a_high, b_high) = sides
    low, high = joint_shares(a_low, b_high), joint_shares(a_high, b_low)
    if low is None or high is None:
        return None
    out = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        for name, f in (("q1", sensitivity), ("q0", specificity)):
            out[name] = ((f(p, low[0], low[1]), low[2]), (f(p, high[0], high[1]), high[2]))
    return out


def _bounded_ends(low, high, alpha: float) -> tuple[float, float]:
    """The lower end the α quantile of the low side's distribution, the upper the 1 − α quantile of the high
    side's (each (values, probabilities), undefined values left out); where one side holds no defined value both
    ends are read from the other's, as :func:`vocab.stats.shares.bounded_ends` reads its draws."""

    def ends(side):
        v, pr = side
        ok = np.isfinite(v)
        return lattice_quantiles(v[ok], pr[ok], alpha) if ok.any() and pr[ok].sum() > 0 else (np.nan, np.nan)

    lo_side, hi_side = ends(low), ends(high)
    lo = lo_side[0] if np.isfinite(lo_side[0]) else hi_side[0]
    hi = hi_side[1] if np.isfinite(hi_side[1]) else lo_side[1]
    return lo, hi


GRID = 1e-4  # a difference's distribution is binned to this step (0.01 points), below any printed digit


def binned(dist) -> tuple[np.ndarray, np.ndarray]:
    """A distribution's (values, probabilities) as (first grid index, probabilities on the grid of :data:`GRID`)."""
    idx = np.rint(np.asarray(dist[0]) / GRID).astype(np.int64)
    start = int(idx.min())
    return start, np.bincount(idx - start, weights=np.asarray(dist[1], dtype=float))


def difference_distribution(dist_a, dist_b) -> tuple[np.ndarray, np.ndarray]:
    """(values, probabilities) of B − A for independent A and B (each (values, probabilities)), on the grid of
    :data:`GRID`: the convolution of B's distribution with A's reflected."""
    from scipy.signal import fftconvolve  # deferred: only when a difference is computed exactly

    sa, pa = binned(dist_a)
    sb, pb = binned(dist_b)
    conv = np.clip(fftconvolve(pb, pa[::-1]), 0, None)
    first = sb - (sa + pa.size - 1)
    return (first + np.arange(conv.size)) * GRID, conv


def interval_of(dist, estimate: float, confidence: float = 0.95) -> tuple[float, float]:
    """The equal-tailed interval of a distribution, widened to hold ``estimate`` (as the draws' interval is)."""
    lo, hi = lattice_quantiles(dist[0], dist[1], (1 - confidence) / 2)
    return (min(lo, estimate), max(hi, estimate)) if np.isfinite(estimate) else (lo, hi)


def sum_distribution(dist_a, dist_b) -> tuple[np.ndarray, np.ndarray]:
    """(values, probabilities) of A + B for independent A and B, on the grid of :data:`GRID`."""
    from scipy.signal import fftconvolve  # deferred: only when a sum is computed exactly

    sa, pa = binned(dist_a)
    sb, pb = binned(dist_b)
    conv = np.clip(fftconvolve(pa, pb), 0, None)
    return (sa + sb + np.arange(conv.size)) * GRID, conv
