"""The coverage of the stratified correction (:func:`vocab.stats.strata.stratified_correction`), beside the
correction of the same piles sampled whole with the same number of labels, on the same simulated populations.

A point: the judge's two piles of given sizes, each split into strata of given shares whose items pass (by a
person) at given rates. Each simulated study draws its population (every item's truth: theta is the share of *these*
items that pass), then for the stratified sample each stratum's rows (:func:`vocab.sampling.strata.allocate_strata`
of the pile's labels), and for the whole-pile sample as many rows from the pile at random. Both are corrected by the
fiducial method over the finite piles (the strata by their bounding draws, :mod:`vocab.stats.shares`); coverage is the
share of studies whose interval holds the study's own theta (and, beside it, the judge's q0).
A second cell of the same make gives the difference b − a its coverage (each cell's draws differenced, as `vocab
compare` differences two cells).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vocab import stats
from vocab.sampling.strata import allocate_strata
from vocab.stats.differences import difference_interval
from vocab.stats.strata import stratified_intervals


@dataclass(frozen=True)
class StrataCoverage:
    sims: int
    coverage: float  # the stratified interval's
    width: float
    whole_coverage: float  # the same labels drawn from each pile at random, corrected as today
    whole_width: float
    labels: int  # rows rated per study (both piles, stratified)
    difference_coverage: float  # b − a of two such cells, each stratified
    difference_width: float
    q0_coverage: float  # the judge's specificity, stratified (studies where some item truly fails)
    whole_q0_coverage: float


TOLERANCE = 1e-9  # theta lies on a lattice of 1/N; a share summed over strata can miss its point by a rounding


def _holds(lo, hi, truth):
    """Whether each interval holds its study's theta, up to :data:`TOLERANCE` (an end on the lattice point itself
    counts: summed in floating point over strata and piles it can land a rounding away)."""
    return (lo <= truth + TOLERANCE) & (truth <= hi + TOLERANCE)


def _sizes(total: int, shares) -> list[int]:
    raw = np.asarray(shares, dtype=float) / np.sum(shares) * total
    n = np.floor(raw).astype(int)
    n[np.argsort(-(raw - n), kind="stable")[: total - n.sum()]] += 1
    return [max(int(v), 1) for v in n]


def _population(rng, sizes, rates, sims):
    """(sims, H) true passes per stratum."""
    return rng.binomial(np.asarray(sizes)[None, :], np.asarray(rates)[None, :], size=(sims, len(sizes)))


def _stratified_values(rng, sizes, truth, take):
    """(sims, H, max take) the rated rows' verdicts: k_h ~ Hypergeometric(T_h, N_h − T_h, n_h) ones, then zeros."""
    sims, h = truth.shape
    m = max(take)
    out = np.full((sims, h, m), np.nan)
    for j, (size, n) in enumerate(zip(sizes, take, strict=True)):
        k = rng.hypergeometric(truth[:, j], size - truth[:, j], n) if n else np.zeros(sims, int)
        out[:, j, :n] = (np.arange(n)[None, :] < k[:, None]).astype(float)
    return out


def _whole_values(rng, sizes, truth, n):
    """(sims, n) verdicts of n rows drawn from the pile whole (its strata pooled)."""
    total = int(np.sum(sizes))
    k = rng.hypergeometric(truth.sum(axis=1), total - truth.sum(axis=1), min(n, total))
    return (np.arange(min(n, total))[None, :] < k[:, None]).astype(float)


def _stratified_cell(rng, piles, p, sims, n_boot, confidence):
    """One simulated cell's stratified corrections (:func:`vocab.stats.strata.stratified_intervals`)."""
    drawn = [
        (_stratified_values(rng, sizes, t, take), np.repeat(np.asarray(sizes, float)[None, :], sims, axis=0))
        for sizes, t, take in piles
    ]
    return stratified_intervals(np.full(sims, p), drawn[0], drawn[1], n_boot, rng, confidence)


def _cell_piles(rng, passed, failed, labels, sims):
    piles = []
    for pile in (passed, failed):
        sizes = _sizes(pile["size"], pile["shares"])
        piles.append((sizes, _population(rng, sizes, pile["rates"], sims), allocate_strata(sizes, labels)))
    n_items = sum(sum(s) for s, _, _ in piles)
    truth = (piles[0][1].sum(axis=1) + piles[1][1].sum(axis=1)) / n_items
    return piles, sum(piles[0][0]) / n_items, n_items, truth


def strata_coverage(
    passed: dict, failed: dict, labels: int, *, sims: int, seed: int, n_boot: int = 2000, confidence: float = 0.95
) -> StrataCoverage:
    """``passed`` and ``failed``: each pile's ``size``, its strata's ``shares`` and their true pass ``rates``;
    ``labels``: rows a pile (shared out over its strata as the sampler shares them). The difference is that of a
    second cell of the same make, its own population and sample (`vocab compare`'s independent cells)."""
    rng = np.random.default_rng(seed)
    piles, p, n_items, truth = _cell_piles(rng, passed, failed, labels, sims)
    ta, tb = (piles[i][1].sum(axis=1) / sum(piles[i][0]) for i in (0, 1))
    true_q0 = stats.specificity(p, ta, tb)
    r = _stratified_cell(rng, piles, p, sims, n_boot, confidence)
    lo, hi = r.theta_ci
    # the same labels drawn from each pile whole
    x = _whole_values(rng, piles[0][0], piles[0][1], sum(piles[0][2]))
    y = _whole_values(rng, piles[1][0], piles[1][1], sum(piles[1][2]))
    totals = [np.full(sims, float(sum(sizes))) for sizes, _, _ in piles]
    whole = stats.Piles(np.full(sims, p), np.full(sims, float(n_items)), x, y, np.ones_like(y), np.ones(sims), *totals)
    w = stats.correction_intervals("fiducial", whole, n_draws=n_boot, confidence=confidence, rng=rng, with_q=True)
    # a second cell, and the difference of the two (compare_cells's interval)
    piles_b, p_b, _, truth_b = _cell_piles(rng, passed, failed, labels, sims)
    r_b = _stratified_cell(rng, piles_b, p_b, sims, n_boot, confidence)
    d = difference_interval(r.theta, r.theta_draws, r_b.theta, r_b.theta_draws, confidence)
    q0_held = np.isfinite(true_q0)  # q0 is undefined where no item truly fails
    return StrataCoverage(
        sims,
        float(np.mean(_holds(lo, hi, truth))),
        float(np.mean(hi - lo)),
        float(np.mean(_holds(w.low, w.high, truth))),
        float(np.mean(w.high - w.low)),
        int(sum(sum(t) for _, _, t in piles)),
        float(np.mean(_holds(d.low, d.high, truth_b - truth))),
        float(np.mean(d.high - d.low)),
        float(np.mean(_holds(*r.q0_ci, true_q0)[q0_held])),
        float(np.mean(_holds(w.q0_low, w.q0_high, true_q0)[q0_held])),
    )
