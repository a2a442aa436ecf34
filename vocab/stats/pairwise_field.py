"""Systems against the field: a system's win rate over every item it appears in (its wins plus half its ties, items
weighted alike), from its cells' win rates of B (:mod:`vocab.stats.pairwise`).

In a cell of n items between A and B, B's win rate is w and A's is 1 − w. A system's win rate against the field is
Σ_cells n_c · (its win rate in c) / Σ_cells n_c, and its draws are the same sum of its cells' draws (each cell drawn
on its own stream, so the cells are independent); the interval is the equal-tailed 95 % of those draws, widened to
hold the estimate. ``benchmarks/bench_pairwise_field.py`` measures its coverage before anything prints it: as it
stands it falls short (0.893 at worst, at 5 labels a pile, for the strongest and weakest of spread systems), so
nothing prints it yet.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vocab.stats.intervals import holding_rows


@dataclass(frozen=True)
class FieldRates:
    """Per system (sorted) and study: its items, the judge's raw win rate, the corrected one with its interval."""

    systems: list[str]
    items: np.ndarray  # (systems, S)
    raw: np.ndarray
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    draws: np.ndarray  # (systems, S, n_draws)


def field_win_rates(cells, *, confidence: float = 0.95) -> FieldRates:
    """``cells``: (a, b, items, raw win rate of B, corrected win rate of B, its draws) per cell, vectorised over
    studies (items, rates (S,) or scalars, draws (S, n_draws) or (n_draws,) for one study); a cell whose corrected
    rate is NaN (a pile unlabelled) makes its systems' rates NaN."""
    cells = [
        (a, b, *(np.atleast_1d(np.asarray(x, float)) for x in (n, r, e)), np.asarray(d, float))
        for a, b, n, r, e, d in cells
    ]
    cells = [(a, b, n, r, e, d.reshape(len(e), -1)) for a, b, n, r, e, d in cells]
    systems = sorted({s for c in cells for s in c[:2]})
    s_count, n_draws = cells[0][5].shape
    items, raw, est = (np.zeros((len(systems), s_count)) for _ in range(3))
    draws = np.zeros((len(systems), s_count, n_draws))
    for a, b, n, raw_b, est_b, d in cells:
        for name, won in ((a, False), (b, True)):
            i = systems.index(name)
            items[i] += n
            raw[i] += n * (raw_b if won else 1 - raw_b)
            est[i] += n * (est_b if won else 1 - est_b)
            draws[i] += n[:, None] * (d if won else 1 - d)
    with np.errstate(invalid="ignore", divide="ignore"):
        raw, est, draws = raw / items, est / items, draws / items[:, :, None]
    lo, hi = holding_rows(est.ravel(), draws.reshape(-1, n_draws), (1 - confidence) / 2)
    lo, hi = lo.reshape(est.shape), hi.reshape(est.shape)
    bad = ~np.isfinite(est)
    lo[bad], hi[bad] = np.nan, np.nan
    return FieldRates(systems, items, raw, est, np.clip(lo, 0, 1), np.clip(hi, 0, 1), draws)
