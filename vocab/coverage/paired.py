"""What the paired comparison of two judges on the same outputs is worth (`vocab compare --paired`,
:mod:`vocab.estimates.paired`), measured by simulation beside the independent comparison it replaces.

One simulated study: ``outputs`` outputs, each good with probability ``theta``; judge a and judge b grade every one
(each with its own sensitivity and specificity, independently given the truth). vocab's sample is drawn as it is
drawn: ``piles`` rows from each judge's PASSED pile and from its FAILED pile, each judge's sample its own. A perfect
blind rater grades the rows. Paired: every rated output serves both judges, post-stratified by the verdict pair
(:func:`vocab.estimates.paired.paired_estimates`, the command's code). Independent: each judge corrected on its own
sample only (:func:`vocab.stats.correction_intervals` with its sensitivity and specificity draws, the finite piles),
the draws differenced (`vocab compare`'s independent rule). The truth is the study's own q1_b − q1_a and
q0_b − q0_a over its outputs. Counted over the studies where both are defined.

Judges that mostly agree (``copies``): judge b is judge a's verdict turned on a few outputs (PASSED to FAILED with
one probability, FAILED to PASSED with another), so their errors are the same errors but for those. Their PF and
FP strata are small and often unrated; the bounded comparison
(:func:`vocab.stats.paired_bounds.bounded_differences`: an unrated stratum's share anywhere in [0, 1]) is counted
over every study, bounded or not (``bounded_*``), beside the paired one where it is defined.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vocab import stats
from vocab.coverage.simulate import check_sizes, padded_rows, sample_mask
from vocab.estimates.paired import STRATA, paired_estimates, stratum_draws
from vocab.stats import Piles
from vocab.stats.differences import difference_interval
from vocab.stats.intervals import holding_rows
from vocab.stats.paired_bounds import bounded_differences


@dataclass(frozen=True)
class PairedCoverage:
    q1_coverage: float  # paired
    q0_coverage: float
    q1_width: float
    q0_width: float
    independent_q1_coverage: float
    independent_q0_coverage: float
    independent_q1_width: float
    independent_q0_width: float
    sims: int
    defined: int
    bounded_q1_coverage: float = float("nan")  # every study: an unrated stratum's share bounded by [0, 1]
    bounded_q0_coverage: float = float("nan")
    bounded_q1_width: float = float("nan")
    bounded_q0_width: float = float("nan")
    bounded: int = 0  # studies with an unrated stratum (the paired comparison undefined), of ``counted``
    counted: int = 0

    def as_dict(self) -> dict:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


def paired_coverage(
    theta: float,
    a: tuple[float, float],
    b: tuple[float, float],
    *,
    outputs: int,
    piles: int,
    sims: int,
    seed: int,
    n_boot: int = 1000,
    confidence: float = 0.95,
    copies: tuple[float, float] | None = None,
) -> PairedCoverage:
    """Coverage and mean width of q1_b − q1_a and q0_b − q0_a, paired and independent (``a``, ``b``: each judge's
    (q1, q0)). ``copies``: judge b is judge a's verdict turned PASSED to FAILED with the first probability and FAILED
    to PASSED with the second (``b`` then unused)."""
    check_sizes(sims=sims, n_boot=4 * n_boot, attempts=outputs, piles=piles)
    rng = stats.stream(seed, "paired-coverage", "population")
    good = rng.random((sims, outputs)) < theta
    va = np.where(good, rng.random((sims, outputs)) < a[0], rng.random((sims, outputs)) >= a[1])
    if copies is None:
        vb = np.where(good, rng.random((sims, outputs)) < b[0], rng.random((sims, outputs)) >= b[1])
    else:
        vb = np.where(va, rng.random((sims, outputs)) >= copies[0], rng.random((sims, outputs)) < copies[1])
    la = sample_mask(va, piles, rng) | sample_mask(~va, piles, rng)
    lb = sample_mask(vb, piles, rng) | sample_mask(~vb, piles, rng)
    labelled = la | lb
    member = {"PP": va & vb, "PF": va & ~vb, "FP": ~va & vb, "FF": ~va & ~vb}
    sizes = {h: member[h].sum(axis=1) for h in STRATA}
    rated = {h: ((labelled & member[h] & good).sum(axis=1), (labelled & member[h]).sum(axis=1)) for h in STRATA}
    est, draws = paired_estimates(sizes, rated, n_boot, stats.stream(seed, "paired-coverage", "paired"))
    alpha = (1 - confidence) / 2
    rb = stats.stream(seed, "paired-coverage", "bounded")  # one stream for the four strata, drawn in order
    tau = {h: stratum_draws(*rated[h], sizes[h], n_boot, rb) for h in STRATA}
    bounds = bounded_differences(sizes, tau, alpha, points={"q1": est[2] - est[1], "q0": est[4] - est[3]})
    short = np.any([(sizes[h] > 0) & (rated[h][1] == 0) for h in STRATA], axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        n_good = good.sum(axis=1)
        truth_q1 = ((good & vb).sum(axis=1) - (good & va).sum(axis=1)) / n_good
        truth_q0 = ((~good & ~vb).sum(axis=1) - (~good & ~va).sum(axis=1)) / (outputs - n_good)
    paired = []
    for i, j in ((1, 2), (3, 4)):
        e, d = est[j] - est[i], draws[j] - draws[i]
        lo, hi = holding_rows(e, d, alpha)
        paired.append((lo, hi))
    # independent: each judge on its own sample, the finite piles, q draws differenced
    ind = {}
    for name, v, lab in (("a", va, la), ("b", vb, lb)):
        npass = v.sum(axis=1)
        x, y = padded_rows(good, lab & v, piles), padded_rows(good, lab & ~v, piles)
        pl = Piles(
            npass / outputs,
            np.full(sims, float(outputs)),
            x,
            y,
            (~np.isnan(y)).astype(float),
            np.ones(sims),
            npass.astype(float),
            (outputs - npass).astype(float),
        )
        ind[name] = stats.correction_intervals(
            "fiducial",
            pl,
            n_draws=n_boot,
            confidence=confidence,
            with_q=True,
            rng=stats.stream(seed, "paired-coverage", "independent", name),
        )
    iq1 = difference_interval(ind["a"].q1, ind["a"].q1_draws, ind["b"].q1, ind["b"].q1_draws, confidence)
    iq0 = difference_interval(ind["a"].q0, ind["a"].q0_draws, ind["b"].q0, ind["b"].q0_draws, confidence)
    ok = np.isfinite(truth_q1) & np.isfinite(truth_q0)
    for lo, hi in (*paired, (iq1.low, iq1.high), (iq0.low, iq0.high)):
        ok &= np.isfinite(lo) & np.isfinite(hi)

    def held(lo, hi, t):
        return float(np.mean(((lo <= t + 1e-12) & (t - 1e-12 <= hi))[ok])) if ok.any() else float("nan")

    def width(lo, hi):
        return float(np.mean((hi - lo)[ok])) if ok.any() else float("nan")

    (p1l, p1h), (p0l, p0h) = paired
    counted = np.isfinite(truth_q1) & np.isfinite(truth_q0)
    for lo, hi in bounds.values():
        counted &= np.isfinite(lo) & np.isfinite(hi)

    def over_all(lo, hi, t):
        if not counted.any():
            return float("nan"), float("nan")
        return float(np.mean(((lo <= t + 1e-12) & (t - 1e-12 <= hi))[counted])), float(np.mean((hi - lo)[counted]))

    (b1, w1), (b0, w0) = over_all(*bounds["q1"], truth_q1), over_all(*bounds["q0"], truth_q0)
    return PairedCoverage(
        held(p1l, p1h, truth_q1),
        held(p0l, p0h, truth_q0),
        width(p1l, p1h),
        width(p0l, p0h),
        held(iq1.low, iq1.high, truth_q1),
        held(iq0.low, iq0.high, truth_q0),
        width(iq1.low, iq1.high),
        width(iq0.low, iq0.high),
        sims,
        int(ok.sum()),
        b1,
        b0,
        w1,
        w0,
        int((short & counted).sum()),
        int(counted.sum()),
    )
