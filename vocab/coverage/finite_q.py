"""The coverage of q1 and q0 (and theta beside them) under finite piles, on fixed piles audited again and again:
the regime of a strict judge (a small PASSED pile labelled all but a row or two) and of a lenient one (a small
FAILED pile so labelled), where q0's (q1's) end rests on the one or two rows left unlabelled (issue #76).

A point: each pile's rows in all and its true passes — fixed, one population audited many times, so the only
randomness is the sample's — and the rows labelled a pile. Each audit draws its rows from each pile without
replacement (their true labels the ratings) and corrects them as `vocab audit` does by default (the fiducial
interval over the finite piles, :func:`vocab.stats.correction_intervals` with q1 and q0). Beside the ends printed
today (q1's and q0's from each pile's bounding draws, :func:`vocab.stats.shares.bounded_q`), the ends the fiducial
draws themselves give (the rule until 2026-12) from the same run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vocab import stats
from vocab.stats.intervals import holding_rows

TOLERANCE = 1e-9  # a share summed in floating point can miss its lattice point by a rounding


@dataclass(frozen=True)
class FiniteQCoverage:
    audits: int
    theta: float  # coverage of the piles' own theta
    theta_width: float
    q1: float  # the printed ends' (bounding)
    q1_width: float
    q0: float
    q0_width: float
    q1_fiducial: float  # the fiducial draws' own ends (the rule until 2026-12)
    q0_fiducial: float
    q1_width_fiducial: float
    q0_width_fiducial: float
    q0_low_above: float  # the share of audits whose q0 lower end lies above the truth (2.5 % promised)
    q0_low_above_fiducial: float
    q1_low_above: float
    q1_low_above_fiducial: float


def _rows(rng, size: int, passes: int, n: int, audits: int) -> np.ndarray:
    """(audits, n) the true labels of n rows drawn without replacement from a pile of ``size`` with ``passes``."""
    k = rng.hypergeometric(passes, size - passes, n, size=audits)
    return (np.arange(n)[None, :] < k[:, None]).astype(float)


def _cover(lo, hi, truth):
    return float(np.mean((lo <= truth + TOLERANCE) & (truth <= hi + TOLERANCE)))


def finite_q_coverage(
    passed: tuple[int, int],
    failed: tuple[int, int],
    labels: tuple[int, int],
    *,
    audits: int,
    seed: int,
    n_draws: int = 4000,
    confidence: float = 0.95,
) -> FiniteQCoverage:
    """``passed`` and ``failed``: each pile's (rows, true passes); ``labels``: rows labelled from each."""
    rng = np.random.default_rng(seed)
    (na, ta), (nb, tb) = passed, failed
    la, lb = min(labels[0], na), min(labels[1], nb)
    x, y = _rows(rng, na, ta, la, audits), _rows(rng, nb, tb, lb, audits)
    p = na / (na + nb)
    a, b = ta / na, tb / nb
    truth = stats.corrected_rate(p, a, b), stats.sensitivity(p, a, b), stats.specificity(p, a, b)
    piles = stats.Piles(
        np.full(audits, p),
        np.full(audits, float(na + nb)),
        x,
        y,
        np.ones_like(y),
        np.ones(audits),
        np.full(audits, float(na)),
        np.full(audits, float(nb)),
    )
    r = stats.correction_intervals("fiducial", piles, n_draws=n_draws, confidence=confidence, rng=rng, with_q=True)
    alpha = (1 - confidence) / 2
    q1f, q0f = holding_rows(r.q1, r.q1_draws, alpha), holding_rows(r.q0, r.q0_draws, alpha)
    return FiniteQCoverage(
        audits,
        _cover(r.low, r.high, truth[0]),
        float(np.mean(r.high - r.low)),
        _cover(r.q1_low, r.q1_high, truth[1]),
        float(np.mean(r.q1_high - r.q1_low)),
        _cover(r.q0_low, r.q0_high, truth[2]),
        float(np.mean(r.q0_high - r.q0_low)),
        _cover(*q1f, truth[1]),
        _cover(*q0f, truth[2]),
        float(np.mean(q1f[1] - q1f[0])),
        float(np.mean(q0f[1] - q0f[0])),
        float(np.mean(r.q0_low > truth[2] + TOLERANCE)),
        float(np.mean(q0f[0] > truth[2] + TOLERANCE)),
        float(np.mean(r.q1_low > truth[1] + TOLERANCE)),
        float(np.mean(q1f[0] > truth[1] + TOLERANCE)),
    )
