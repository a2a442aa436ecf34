"""What the slices' intervals are worth (`vocab compare --by`), measured by simulation.

One simulated study is one cell whose items fall into K slices of known sizes; slice k's items are good with
probability theta_k and its judge has sensitivity q1_k and specificity q0_k. The sample is drawn as vocab draws it —
``piles`` rows from the cell's PASSED pile and ``piles`` from its FAILED pile, not per slice — and a perfect blind
rater grades them. Each slice is then corrected as :mod:`vocab.estimates.slices` corrects it: its p the judge's
pass share over its items, its piles the rows of the cell's piles that fell into it, each pile the finite set of the
slice's items there, its draws from a stream of its own (:func:`vocab.stats.correction_intervals`, the report's code),
and the simultaneous bands and rank sets of :mod:`vocab.stats.differences`, the functions the command runs.

The truth is each study's own share of good items per slice (the finite population). Counted over the studies in
which every slice gets a number (each pile of each slice rated in at least
:data:`vocab.estimates.slices.MIN_LABELS` rows, or whole): how often each slice's marginal interval holds its truth
(the worst slice), how often the simultaneous bands hold every slice at once, how often the simultaneous difference
bands hold every pairwise difference at once, and how often the rank sets hold every true rank at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vocab import stats
from vocab.coverage.simulate import check_sizes, padded_rows, sample_mask
from vocab.estimates.slices import MIN_LABELS
from vocab.stats import Piles
from vocab.stats.differences import draws_for_family, pairs_of, rank_sets, simultaneous_bands


@dataclass(frozen=True)
class Slice:
    """A simulated slice's truth: its items, the rate of good items and its judge's sensitivity and specificity."""

    items: int
    theta: float
    q1: float
    q0: float


@dataclass(frozen=True)
class SliceCoverage:
    method: str
    marginal: float  # the worst slice's share of studies whose marginal interval holds its truth
    simultaneous: float  # share whose simultaneous bands hold every slice at once
    differences: float  # share whose simultaneous difference bands hold every pairwise difference at once
    ranks: float  # share whose rank sets hold every true rank at once
    marginal_width: float  # mean over slices and studies
    simultaneous_width: float
    sims: int
    estimable: int  # studies in which every slice got a number

    def as_dict(self) -> dict:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


def slice_coverage(
    slices: list[Slice],
    *,
    piles: int,
    sims: int,
    seed: int,
    n_boot: int = 1000,
    method: str = stats.DEFAULT_INTERVAL,
    confidence: float = 0.95,
    family: bool = True,
) -> SliceCoverage:
    """The slices' coverage over ``sims`` studies of one cell (see the module's docstring). ``family``: the bands
    over the slices and their pairs on the draws the family needs, each slice's ``n_boot`` then more from a stream
    of its own (as :func:`vocab.estimates.compare.family_draws` adds them); False: the ``n_boot`` alone (before
    #76)."""
    sizes = [s.items for s in slices]
    n = int(sum(sizes))
    need = draws_for_family(max(len(slices), len(pairs_of(len(slices)))), confidence) if family else 0
    extra = max(0, need - n_boot)
    check_sizes(sims=sims, n_boot=len(slices) * (n_boot + extra), attempts=n, piles=piles)
    rng = stats.stream(seed, "slice-coverage", "population")
    which = np.repeat(np.arange(len(slices)), sizes)  # each item's slice
    theta = np.array([s.theta for s in slices])[which]
    q1, q0 = np.array([s.q1 for s in slices])[which], np.array([s.q0 for s in slices])[which]
    good = rng.random((sims, n)) < theta
    passes = np.where(good, rng.random((sims, n)) < q1, rng.random((sims, n)) >= q0)
    # the cell's sample: `piles` rows of each pile, uniformly without replacement
    labelled = sample_mask(passes, piles, rng)
    labelled |= sample_mask(~passes, piles, rng)
    est, low, high, draws, ok, truth = [], [], [], [], np.ones(sims, bool), []
    for k, s in enumerate(slices):
        at = which == k
        g, ps, lab = good[:, at], passes[:, at], labelled[:, at]
        npass = ps.sum(axis=1)
        rated_a, rated_b = (lab & ps).sum(axis=1), (lab & ~ps).sum(axis=1)
        ok &= (npass > 0) & (npass < s.items)  # both piles hold items (an empty pile: the placeholder, not simulated)
        ok &= rated_a >= np.minimum(MIN_LABELS, npass)
        ok &= rated_b >= np.minimum(MIN_LABELS, s.items - npass)
        x = padded_rows(g, lab & ps, max(piles, 1))
        y = padded_rows(g, lab & ~ps, max(piles, 1))
        p = npass / s.items
        pl = Piles(
            p,
            np.full(sims, float(s.items)),
            x,
            y,
            (~np.isnan(y)).astype(float),
            np.ones(sims),
            npass.astype(float),
            (s.items - npass).astype(float),
        )
        r = stats.correction_intervals(
            method,
            pl,
            n_draws=n_boot,
            confidence=confidence,
            rng=stats.stream(seed, "slice-coverage", method, "slice", k),
        )
        more = [r.draws]
        if extra:
            rng = stats.stream(seed, "slice-coverage", method, "slice", k, "ranks")
            more.append(stats.correction_intervals(method, pl, n_draws=extra, confidence=confidence, rng=rng).draws)
        est.append(r.theta), low.append(r.low), high.append(r.high), draws.append(np.concatenate(more, axis=1))
        truth.append(g.mean(axis=1))
    est, low, high = np.stack(est, 1)[ok], np.stack(low, 1)[ok], np.stack(high, 1)[ok]
    draws, truth = np.stack(draws, 1)[ok], np.stack(truth, 1)[ok]
    nan = float("nan")
    if not ok.any():
        return SliceCoverage(method, nan, nan, nan, nan, nan, nan, sims, 0)
    held = (low <= truth + 1e-12) & (truth - 1e-12 <= high)
    slo, shi, _ = simultaneous_bands(est, draws, confidence)
    all_held = np.all((slo <= truth + 1e-12) & (truth - 1e-12 <= shi), axis=1)
    r = rank_sets(est, draws, confidence)
    pairs = pairs_of(len(slices))
    diffs = np.stack([truth[:, j] - truth[:, i] for i, j in pairs], 1) if pairs else np.zeros((len(est), 0))
    diff_held = np.all((r.pair_low <= diffs + 1e-12) & (diffs - 1e-12 <= r.pair_high), axis=1)
    true = 1 + (truth[:, None, :] > truth[:, :, None]).sum(axis=2)  # each study's own ranks
    rank_held = np.all((r.low <= true) & (true <= r.high), axis=1)
    return SliceCoverage(
        method,
        float(held.mean(axis=0).min()),
        float(all_held.mean()),
        float(diff_held.mean()),
        float(rank_held.mean()),
        float((high - low).mean()),
        float((shi - slo).mean()),
        sims,
        int(ok.sum()),
    )
