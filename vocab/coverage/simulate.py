"""A simulator of the study, to measure what its corrected-rate interval is worth.

Ground truth: a writer whose attempts are good with probability ``theta``; a critic with sensitivity
``q1`` and specificity ``q0``, so it passes an attempt with probability p = theta·q1 + (1 − theta)(1 − q0).
One simulated study logs ``attempts`` attempts, draws ``piles`` rows from the critic-passed and from the
critic-failed attempts, has a blind rater re-grade them (perfect, or wrong with probability
``rater_error``), and computes seed 000's theta and its interval. Everything is vectorised over studies and
seeded through a passed generator.

Methods (intervals), all at the nominal level ``confidence`` and clipped to [0, 1]:

- ``seed`` — seed 000's: percentile bootstrap of each pile with p held fixed. Resampling n rows of 0/1
  verdicts with replacement gives a pile mean distributed as Binomial(n, k/n)/n, so the bootstrap draws
  the counts directly (:func:`seed_interval`); :func:`seed_interval_rows` resamples rows, as the study's
  code does, and is kept as the reference the fast form is tested and benchmarked against.
- ``attempt-boot`` — the same, and the attempts behind p resampled too (p* = Binomial(N, p)/N).
- ``jeffreys`` — Beta posteriors with the Jeffreys prior Beta(1/2, 1/2) for a, b and p, propagated to
  theta = p·a + (1 − p)·b by sampling; the equal-tailed posterior interval, widened where needed to hold
  the point estimate (Brown, Cai and DasGupta's boundary rule for 0 or n successes, generalised).
- ``fiducial`` — 03's default (chosen on the committed grid, 08): randomised confidence distributions for a, b
  and p (:func:`binomial_cd_draws`), propagated to theta by sampling, the equal-tailed interval. Each one alone
  gives an exact interval for its proportion at every value (the randomisation fills the gaps a binomial count
  leaves); their propagation is approximate. The randomisation comes from the seeded generator, so a rerun
  gives the same interval.
- ``ppi`` — prediction-powered inference at λ = 1 (Angelopoulos et al. 2023), the critic's verdict as the
  prediction, the two piles reweighted to the critic's own pass rate (the ``w`` of ``ppi_py.ppi_mean_ci``):
  point estimate = theta exactly; a Wald interval from the rectifier's and the imputed term's variances.

Coverage, mean width and bias are reported over the studies whose estimate is defined (both piles non-empty).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vocab.stats import binomial_cd_draws

METHODS = ("seed", "attempt-boot", "jeffreys", "ppi", "fiducial")


@dataclass(frozen=True)
class Studies:
    p: np.ndarray  # (S,) the critic's observed pass rate
    passed: np.ndarray  # (S, n) the rater's verdict (1 pass) on the passed pile; nan where the pile ran short
    failed: np.ndarray  # (S, n) the same for the failed pile
    defined: np.ndarray  # (S,) both piles non-empty
    attempts: int = 0  # N, the attempts behind p


def _pile(good: np.ndarray, member: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """For each study, up to n members drawn without replacement; the truth of each drawn row (nan pads)."""
    s, big_n = good.shape
    keys = rng.random((s, big_n)) + (~member) * 2.0  # members first, in random order
    idx = np.argsort(keys, axis=1)[:, :n]
    vals = np.take_along_axis(good, idx, axis=1).astype(float)
    ok = np.take_along_axis(member, idx, axis=1)
    vals[~ok] = np.nan
    return vals


def simulate_studies(
    theta: float,
    q1: float,
    q0: float,
    attempts: int,
    piles: int,
    sims: int,
    rng: np.random.Generator,
    rater_error: float = 0.0,
) -> Studies:
    good = rng.random((sims, attempts)) < theta
    passes = np.where(good, rng.random((sims, attempts)) < q1, rng.random((sims, attempts)) >= q0)
    p = passes.mean(axis=1)
    rated_good = good ^ (rng.random((sims, attempts)) < rater_error)  # the rater's own mistakes
    passed = _pile(rated_good, passes, piles, rng)
    failed = _pile(rated_good, ~passes, piles, rng)
    defined = ~np.isnan(passed[:, 0]) & ~np.isnan(failed[:, 0])
    return Studies(p, passed, failed, defined, attempts)


def _nanmean_rows(x: np.ndarray) -> np.ndarray:
    """Row means ignoring padding; an empty pile gives nan (the study is then undefined)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(x, axis=-1)


def seed_interval_rows(
    st: Studies, n_boot: int, rng: np.random.Generator, confidence: float = 0.95, chunk: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seed 000's estimate and percentile interval for every study, resampling rows (the reference form)."""
    a = _nanmean_rows(st.passed)
    b = _nanmean_rows(st.failed)
    theta_hat = st.p * a + (1 - st.p) * b
    lows = np.full(st.p.shape, np.nan)
    highs = np.full(st.p.shape, np.nan)
    alpha = (1 - confidence) / 2
    n = st.passed.shape[1]
    chunk = chunk or max(1, 4_000_000 // (n_boot * n))  # bounds memory: a few hundred MB at most
    for start in range(0, len(st.p), chunk):
        sl = slice(start, start + chunk)
        x, y = st.passed[sl], st.failed[sl]
        nx = np.sum(~np.isnan(x), axis=1)
        ny = np.sum(~np.isnan(y), axis=1)
        # resample within each study's actual pile size (rows are packed to the left)
        ix = (rng.random((x.shape[0], n_boot, n)) * np.maximum(nx, 1)[:, None, None]).astype(np.int64)
        iy = (rng.random((y.shape[0], n_boot, n)) * np.maximum(ny, 1)[:, None, None]).astype(np.int64)
        xs = np.take_along_axis(np.nan_to_num(x)[:, None, :].repeat(n_boot, 1), ix, axis=2)
        ys = np.take_along_axis(np.nan_to_num(y)[:, None, :].repeat(n_boot, 1), iy, axis=2)
        use_x = np.arange(n)[None, None, :] < nx[:, None, None]
        use_y = np.arange(n)[None, None, :] < ny[:, None, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            a_b = (xs * use_x).sum(2) / use_x.sum(2)
            b_b = (ys * use_y).sum(2) / use_y.sum(2)
        t = st.p[sl, None] * a_b + (1 - st.p[sl, None]) * b_b
        lo, hi = np.quantile(t, [alpha, 1 - alpha], axis=1)
        lows[sl], highs[sl] = lo, hi
    undefined = ~st.defined
    theta_hat[undefined] = lows[undefined] = highs[undefined] = np.nan
    return theta_hat, lows, highs


def _counts(st: Studies) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per study: rows and rater-passed rows in each pile (na, ka, nb, kb)."""
    na, nb = np.sum(~np.isnan(st.passed), axis=1), np.sum(~np.isnan(st.failed), axis=1)
    ka, kb = np.nansum(st.passed, axis=1), np.nansum(st.failed, axis=1)
    return na, ka, nb, kb


def _quantiles(t: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(t, [alpha, 1 - alpha], axis=1)
    return lo, hi


def _finish(st, est, lo, hi):
    est, lo, hi = est.astype(float), np.clip(lo, 0, 1), np.clip(hi, 0, 1)
    undefined = ~st.defined
    est[undefined] = lo[undefined] = hi[undefined] = np.nan
    return est, lo, hi


def point_estimate(st: Studies) -> np.ndarray:
    na, ka, nb, kb = _counts(st)
    with np.errstate(invalid="ignore", divide="ignore"):
        return st.p * ka / na + (1 - st.p) * kb / nb


def seed_interval(
    st: Studies, n_boot: int, rng: np.random.Generator, confidence: float = 0.95, resample_p: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seed 000's estimate and percentile interval (``resample_p``: the attempts behind p resampled too)."""
    na, ka, nb, kb = _counts(st)
    est = point_estimate(st)
    s = len(st.p)
    with np.errstate(invalid="ignore", divide="ignore"):
        ah, bh = np.where(na > 0, ka / np.maximum(na, 1), 0), np.where(nb > 0, kb / np.maximum(nb, 1), 0)
    a = rng.binomial(np.maximum(na, 1)[:, None], ah[:, None], size=(s, n_boot)) / np.maximum(na, 1)[:, None]
    b = rng.binomial(np.maximum(nb, 1)[:, None], bh[:, None], size=(s, n_boot)) / np.maximum(nb, 1)[:, None]
    p = st.p[:, None]
    if resample_p:
        p = rng.binomial(st.attempts, st.p[:, None], size=(s, n_boot)) / st.attempts
    lo, hi = _quantiles(p * a + (1 - p) * b, confidence)
    return _finish(st, est, lo, hi)


def jeffreys_interval(
    st: Studies, n_draws: int, rng: np.random.Generator, confidence: float = 0.95
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Jeffreys Beta(1/2, 1/2) posteriors for a, b and p, sampled and propagated to theta."""
    na, ka, nb, kb = _counts(st)
    s = len(st.p)
    big_n = st.attempts
    kp = np.rint(st.p * big_n)
    a = rng.beta((ka + 0.5)[:, None], (na - ka + 0.5)[:, None], size=(s, n_draws))
    b = rng.beta((kb + 0.5)[:, None], (nb - kb + 0.5)[:, None], size=(s, n_draws))
    p = rng.beta((kp + 0.5)[:, None], (big_n - kp + 0.5)[:, None], size=(s, n_draws))
    lo, hi = _quantiles(p * a + (1 - p) * b, confidence)
    est = point_estimate(st)
    with np.errstate(invalid="ignore"):
        lo, hi = np.fmin(lo, est), np.fmax(hi, est)  # the interval holds the estimate (as in vocab.stats)
    return _finish(st, est, lo, hi)


def fiducial_interval(
    st: Studies, n_draws: int, rng: np.random.Generator, confidence: float = 0.95
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Randomised confidence distributions of a, b and p (:func:`binomial_cd_draws`), propagated to theta."""
    na, ka, nb, kb = _counts(st)
    s = len(st.p)
    kp = np.rint(st.p * st.attempts)
    a = binomial_cd_draws(ka, na, rng.random(s), n_draws, rng)
    b = binomial_cd_draws(kb, nb, rng.random(s), n_draws, rng)
    p = binomial_cd_draws(kp, np.full(s, st.attempts), rng.random(s), n_draws, rng)
    lo, hi = _quantiles(p * a + (1 - p) * b, confidence)
    est = point_estimate(st)
    with np.errstate(invalid="ignore"):
        lo, hi = np.fmin(lo, est), np.fmax(hi, est)  # the interval holds the estimate (as in vocab.stats)
    return _finish(st, est, lo, hi)


def ppi_interval(st: Studies, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Prediction-powered inference at lambda = 1, vectorised over studies, with ppi_py's formulas.

    Labelled rows: the two piles, prediction f = 1 in the passed pile and 0 in the failed pile, weights
    proportional to p / n_a and (1 - p) / n_b, normalised to sum to n = n_a + n_b. Unlabelled: the N
    attempts' verdicts (mean p). Estimate = mean(f_unlabelled) + mean(w (Y - f)); standard error =
    sqrt(var(f_unlabelled) / N + var(w (Y - f)) / n), population variances as in ppi_py.
    """
    from scipy.stats import norm

    na, ka, nb, kb = _counts(st)
    n = na + nb
    with np.errstate(invalid="ignore", divide="ignore"):
        wa, wb = st.p * n / na, (1 - st.p) * n / nb  # weights of a passed / failed row (sum: n)
        # residual values w (Y - f): passed rows w_a (Y - 1), failed rows w_b Y
        ra1, ra0 = 0.0, -wa  # passed row rated pass / fail
        rb1, rb0 = wb, 0.0
        mean_r = (ka * ra1 + (na - ka) * ra0 + kb * rb1 + (nb - kb) * rb0) / n
        sq = ka * ra1**2 + (na - ka) * ra0**2 + kb * rb1**2 + (nb - kb) * rb0**2
        var_r = sq / n - mean_r**2
        est = st.p + mean_r
        se = np.sqrt(np.maximum(var_r, 0) / n + st.p * (1 - st.p) / st.attempts)
    z = norm.ppf(1 - (1 - confidence) / 2)
    return _finish(st, est, est - z * se, est + z * se)


def interval(method: str, st: Studies, n_boot: int, rng: np.random.Generator, confidence: float = 0.95):
    """(estimate, low, high) per study by ``method``."""
    if method == "seed":
        return seed_interval(st, n_boot, rng, confidence)
    if method == "attempt-boot":
        return seed_interval(st, n_boot, rng, confidence, resample_p=True)
    if method == "jeffreys":
        return jeffreys_interval(st, n_boot, rng, confidence)
    if method == "ppi":
        return ppi_interval(st, confidence)
    if method == "fiducial":
        return fiducial_interval(st, n_boot, rng, confidence)
    raise ValueError(f"unknown method {method!r} (known: {', '.join(METHODS)})")


@dataclass(frozen=True)
class Coverage:
    method: str
    coverage: float
    mean_width: float
    bias: float
    sims: int
    defined: int

    def as_dict(self) -> dict:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


def check_point(
    method: str,
    *,
    theta: float,
    q1: float,
    q0: float,
    attempts: int,
    piles: int,
    sims: int,
    seed: int,
    n_boot: int = 1000,
    rater_error: float = 0.0,
) -> None:
    """The parameters of :func:`coverage`, validated: ValueError naming the first one out of range."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r} (known: {', '.join(METHODS)})")
    for name, v in (("theta", theta), ("q1", q1), ("q0", q0), ("rater_error", rater_error)):
        if not 0 <= v <= 1:
            raise ValueError(f"{name} must lie in [0, 1], got {v}")
    for name, v in (("attempts", attempts), ("piles", piles), ("sims", sims), ("n_boot", n_boot)):
        if v < 1:
            raise ValueError(f"{name} must be positive, got {v}")
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    check_sizes(sims=sims, n_boot=n_boot, attempts=attempts, piles=piles)


MAX_DRAWS = 4_000_000  # studies x resamples held at once: about 250 MB for the fiducial interval
MAX_ROWS = 20_000_000  # studies x attempts (or x pile rows, or x levels x attempts) drawn at once


def check_sizes(*, sims: int, n_boot: int, attempts: int, piles: int) -> None:
    """A simulation's sizes, bounded before any array is made (so memory stays under 1 GiB): ValueError naming
    the product past its bound."""
    for what, size, bound in (("sims x n_boot", sims * n_boot, MAX_DRAWS), ("sims x attempts", sims * attempts,
                              MAX_ROWS), ("sims x piles", sims * piles, MAX_ROWS)):  # fmt: skip
        if size > bound:
            raise ValueError(f"{what} is {size:,}, over the {bound:,} one simulation may hold; use fewer")


def coverage(
    method: str,
    *,
    theta: float,
    q1: float,
    q0: float,
    attempts: int,
    piles: int,
    sims: int,
    seed: int,
    n_boot: int = 1000,
    rater_error: float = 0.0,
) -> Coverage:
    check_point(method, theta=theta, q1=q1, q0=q0, attempts=attempts, piles=piles, sims=sims, seed=seed,
                n_boot=n_boot, rater_error=rater_error)  # fmt: skip
    rng = np.random.default_rng(seed)
    st = simulate_studies(theta, q1, q0, attempts, piles, sims, rng, rater_error)
    est, lo, hi = interval(method, st, n_boot, rng)
    return coverage_of(method, est, lo, hi, theta, st.defined)


def coverage_of(method: str, est, lo, hi, target: float, defined) -> Coverage:
    """Coverage, mean width and bias over the studies where the estimate is defined."""
    d = np.asarray(defined)
    nan = float("nan")
    covered = (lo[d] <= target) & (target <= hi[d])
    return Coverage(
        method,
        float(covered.mean()) if d.any() else nan,
        float((hi[d] - lo[d]).mean()) if d.any() else nan,
        float(est[d].mean() - target) if d.any() else nan,
        len(d),
        int(d.sum()),
    )
