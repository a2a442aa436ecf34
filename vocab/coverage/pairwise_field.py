"""The coverage of systems' win rates against the field (:func:`vocab.stats.pairwise_field.field_win_rates`): K
systems of given strengths, every pair a cell under one judge, each cell simulated and corrected as
:mod:`vocab.coverage.pairwise` does (its own items, its own labels a pile); a system's truth is its people's win
rate over every item it appears in (wins plus half its ties, items weighted alike)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from vocab.coverage.pairwise import TOLERANCE, study_piles
from vocab.stats.pairwise import pairwise_intervals, win_rate
from vocab.stats.pairwise_field import field_win_rates


@dataclass(frozen=True)
class FieldCoverage:
    sims: int
    coverage: list[float]  # per system (sorted by name: s0, s1, ...)
    width: list[float]


def cell_truth(strength_a: float, strength_b: float, tie: float) -> tuple[float, float, float]:
    """People's class shares (a, b, tie) of a pairing: B beats A with the Bradley–Terry odds among the items not
    tied."""
    p_b = 1 / (1 + np.exp(strength_a - strength_b))
    return ((1 - tie) * (1 - p_b), (1 - tie) * p_b, tie)


def field_coverage(
    strengths, n_items: int, judge, labels: int, tie: float, *, sims: int, seed: int, n_draws: int = 1000
) -> FieldCoverage:
    rng = np.random.default_rng(seed)
    names = [f"s{i}" for i in range(len(strengths))]
    cells, truth_num, truth_den = [], {s: 0.0 for s in names}, {s: 0.0 for s in names}
    for i, j in combinations(range(len(strengths)), 2):
        piles, t, _, _ = study_piles(
            rng, n_items, cell_truth(strengths[i], strengths[j], tie), np.asarray(judge), labels, sims, True
        )
        r = pairwise_intervals(piles, n_draws=n_draws, rng=rng)
        true_b = win_rate(t[:, 1], t[:, 2])
        truth_num[names[j]] = truth_num[names[j]] + n_items * true_b
        truth_num[names[i]] = truth_num[names[i]] + n_items * (1 - true_b)
        truth_den[names[i]] += n_items
        truth_den[names[j]] += n_items
        cells.append((names[i], names[j], n_items, r.raw["win_rate_b"], r.win_rate_b.estimate, r.win_draws))
    f = field_win_rates(cells)
    cov, width = [], []
    for k, s in enumerate(f.systems):
        truth = truth_num[s] / truth_den[s]
        ok = np.isfinite(f.low[k])
        held = (f.low[k] <= truth + TOLERANCE) & (truth <= f.high[k] + TOLERANCE)
        cov.append(float(np.mean(held[ok])))
        width.append(float(np.mean((f.high[k] - f.low[k])[ok])))
    return FieldCoverage(sims, cov, width)
