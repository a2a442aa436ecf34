"""The bias correction of a critic's pass rate (its point estimate; the intervals are in
:mod:`vocab.stats.intervals`), the levels' design effect, the failed pile's effective rows, the flip-rate
inversion and the bounds for lost attempts.

The correction (one cell). The critic passed a share ``p`` of all attempts with a verdict. A blind rater
re-grades a sample drawn from the critic-PASSED attempts (the passed pile) and from the critic-FAILED
attempts (the failed pile). ``a`` is the share of the passed pile that the rater passes; ``b`` the
weighted share of the failed pile that the rater passes (each row weighted by the number of FAILED
attempts its level has in the cell). Then

    theta = p·a + (1 − p)·b              the corrected pass rate
    q1    = p·a / theta                  sensitivity: the critic's pass rate on genuinely good sentences
    q0    = (1 − p)(1 − b) / (1 − theta) specificity: its fail rate on genuinely bad ones

``a`` and ``b`` are predictive values: they depend on the writer's true quality, so they hold for the run
they were sampled from only. Sensitivity and specificity are what can carry over.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Correction:
    p: float
    a: float
    b: float
    theta: float
    q1: float  # nan when undefined (theta = 0)
    q0: float  # nan when undefined (theta = 1)

    @property
    def shift_points(self) -> float:
        return 100.0 * (self.theta - self.p)


def _div(num, den):
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def corrected_rate(p, a, b):
    """theta = p·a + (1 − p)·b (vectorised over arrays)."""
    return np.asarray(p) * np.asarray(a) + (1 - np.asarray(p)) * np.asarray(b)


def sensitivity(p, a, b):
    return _div(np.asarray(p) * np.asarray(a), corrected_rate(p, a, b))


def specificity(p, a, b):
    return _div((1 - np.asarray(p)) * (1 - np.asarray(b)), 1 - corrected_rate(p, a, b))


def correct(p: float, a: float, b: float) -> Correction:
    return Correction(p, a, b, float(corrected_rate(p, a, b)), float(sensitivity(p, a, b)), float(specificity(p, a, b)))


def design_effect(level_passes, level_attempts):
    """The critic's pass rate p over levels (clusters of retried attempts): the variance of p as a ratio
    estimator over levels divided by the binomial variance p(1 − p)/N; at least 1 (1 when it cannot be
    estimated: fewer than two levels, no attempts, or p at 0 or 1). Over the last axis: 1-D counts give a
    float, a (studies, levels) array one value per study."""
    x = np.asarray(level_passes, dtype=float)
    n = np.asarray(level_attempts, dtype=float)
    if x.shape != n.shape or x.ndim not in (1, 2):
        raise ValueError("level_passes and level_attempts must have one shape: (levels,) or (studies, levels)")
    big_l, big_n = x.shape[-1], n.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = x.sum(axis=-1) / big_n
        v_binom = p * (1 - p) / big_n
        v_cluster = big_l / max(big_l - 1, 1) * ((x - p[..., None] * n) ** 2).sum(axis=-1) / big_n**2
        ratio = np.where((big_l >= 2) & (big_n > 0) & (v_binom > 0), np.maximum(v_cluster / v_binom, 1.0), 1.0)
    return float(ratio) if x.ndim == 1 else ratio


def design_effect_from_sums(levels: int, n: int, x: int, sxx: int, sxn: int, snn: int) -> float:
    """:func:`design_effect` of one cell from exact integer sums over its levels: ``levels`` (L), ``n`` = Σn (the
    attempts), ``x`` = Σx (the passes), ``sxx`` = Σx², ``sxn`` = Σxn, ``snn`` = Σn². What a dataset too large to
    hold its per-level counts keeps (a query sums them, in any order, exactly); computed in exact rational
    arithmetic, so it is the exact value :func:`design_effect` rounds (the two differ in the last bit or so)."""
    from fractions import Fraction

    if levels < 2 or n <= 0 or x <= 0 or x >= n:
        return 1.0
    ss = Fraction(n * n * sxx - 2 * x * n * sxn + x * x * snn, n * n)  # Σ (x - p·n)², p = x / n
    p = Fraction(x, n)
    v_cluster = Fraction(levels, levels - 1) * ss / (n * n)
    return float(max(v_cluster / (p * (1 - p) / n), 1))


def kish_rows(weights):
    """A weighted pile's effective number of rows, (Σw)² / Σw² (Kish): its rows when the weights are equal, fewer
    when they vary; 0 for an empty pile. Over the last axis, so an array of piles gives one value per pile."""
    w = np.asarray(weights, dtype=float)
    sq = (w**2).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sq > 0, w.sum(axis=-1) ** 2 / np.where(sq > 0, sq, 1.0), 0.0)


@dataclass(frozen=True)
class LostAttemptBounds:
    low: float  # the rate had every lost unit failed
    high: float  # the rate had every lost unit passed


def lost_attempt_bounds(rate: float, n: int, failed_if_lost: int, passed_if_lost: int) -> LostAttemptBounds:
    """Worst and best case for a pass rate over ``n`` attempts when some units were lost before a verdict
    (Manski's bounds for outcomes missing not at random): had they failed, ``failed_if_lost`` more failed
    attempts; had they passed, ``passed_if_lost`` more passed attempts. Nothing is assumed about why they
    were lost, so the truth lies between the two whatever the reason."""
    if n < 0 or failed_if_lost < 0 or passed_if_lost < 0:
        raise ValueError("counts must be non-negative")
    if n + failed_if_lost == 0 or n + passed_if_lost == 0:
        return LostAttemptBounds(float("nan"), float("nan"))
    return LostAttemptBounds(rate * n / (n + failed_if_lost), (rate * n + passed_if_lost) / (n + passed_if_lost))


def invert_flip_rate(share, error: float):
    """A pile share seen through a rater who flips each verdict with probability ``error``:
    ``share = truth·(1 - 2e) + e``, so the truth is ``(share - e) / (1 - 2e)``, clipped to [0, 1]. Works on
    floats, arrays and Series alike."""
    if not 0 <= error < 0.5:
        raise ValueError(f"a flip rate must lie in [0, 0.5), got {error}")
    return np.clip((share - error) / (1 - 2 * error), 0, 1)
