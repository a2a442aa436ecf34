"""The corrected rate's intervals: one implementation, vectorised over studies.

The report and 03 call it with one study (a cell's two piles, :func:`correction_interval`); the simulator, the
coverage grid and the planner with thousands (:func:`correction_intervals` on :class:`Piles`). What the grid
measures and the planner plans for is what the report prints: the same function, the same draws in the same order.

A study: the critic's pass rate ``p`` over ``attempts`` attempts, the design effect of p over the levels
(:func:`vocab.stats.correction.design_effect`; 1 when the attempts are independent), the blind rater's 0/1 verdicts
on the passed pile (its share ``a``) and on the failed pile (its weighted share ``b``, each row weighted by the
failed attempts of its level). The corrected rate is theta = p·a + (1 − p)·b.

Methods (equal-tailed, nominal level ``confidence``, each widened where needed to hold its estimate,
:func:`holding`, and clipped to [0, 1]):

- ``fiducial`` — 03's default (08 chose it on the committed coverage grid): randomised binomial confidence
  distributions (:func:`binomial_cd_draws`) for a (its rows), b (on the failed pile's Kish effective rows) and p
  (on attempts / design effect), propagated to theta by sampling. Each alone is an exact interval for its
  proportion; their propagation is approximate.
- ``jeffreys`` — Beta(k + ½, n − k + ½) posteriors for a, b (its weighted share as b·n successes of its n rows) and
  p (on the attempts), propagated to theta.
- ``seed`` — seed 000's percentile bootstrap: each pile's rows resampled with replacement (weights travel with
  their rows), p fixed. A resample of a pile is a multinomial draw over its distinct (weight, verdict) rows
  (:func:`pile_bootstrap`), the same distribution as indexing rows, without S × draws × rows indices.
- ``ppi`` — prediction-powered inference at λ = 1 (Angelopoulos et al. 2023): the critic's verdict as the
  prediction, the piles reweighted to the critic's own pass rate (and the failed pile by its weights); a Wald
  interval. The simulator's comparison; 03 does not offer it.

How p's uncertainty enters is each method's own (``fixed`` for seed, ``cd`` for fiducial, ``beta`` for
jeffreys); the simulator's variants pass another (:data:`P_MODELS`, or a function of the generator).

**The population** (:data:`POPULATIONS`). ``finite`` (the default since 2026-12, issue #65): theta is the share of
*these* attempts that pass, so p — the critic's verdicts on all of them, every one seen — carries no error, and
each pile is the finite set of rows it is. A pile of N rows of which n are labelled, k passing, has its share's
draws completed as (k + Binomial(N − n, π)) / N, π the method's draw of the pile's rate
(:func:`finite_shares`): the hypergeometric analogue of the binomial draws, so a pile labelled in full carries no
sampling error and one labelled in small part is drawn as before. A failed pile whose rows are weighted (one row a
level, weighted by the level's failed attempts) is completed the same way over its attempts: each labelled row is
one attempt known, and the other N − n failed attempts, the rest of a sampled level's failures among them, pass
with the pile's drawn rate π (its weighted share, on the Kish effective rows). Treating a labelled row as pinning
its whole level down instead (its weight's worth of attempts known) narrows the interval below 95 % where a
level's retries are independent, and drawing the pile as infinite over-covers; this way keeps the grid's bar
(docs/statistics.md, `data/coverage/finite_grid.csv`). ``superpopulation``: theta is
the rate of the process that made the attempts (the writer on levels like these), p drawn by the method's model,
the piles infinite: the intervals before 2026-12, unchanged draw for draw.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from vocab.stats.correction import Correction, corrected_rate, design_effect, kish_rows, sensitivity, specificity
from vocab.stats.shares import binomial_cd_draws, bounded_q, finite_shares, pile_bounds

DEFAULT_INTERVAL = "fiducial"
INTERVALS = ("fiducial", "jeffreys", "seed")  # what 03 and the report can print, the default first
METHODS = (*INTERVALS, "ppi")
P_MODELS = ("fixed", "cd", "beta", "beta-deff", "binomial")
METHOD_P = {"fiducial": "cd", "jeffreys": "beta", "seed": "fixed"}
FINITE, SUPERPOPULATION = "finite", "superpopulation"
POPULATIONS = (FINITE, SUPERPOPULATION)  # what theta is the rate of; the default first
DEFAULT_POPULATION = FINITE


@dataclass(frozen=True)
class Piles:
    """The calibration data of S studies. Rows past a pile's end are NaN (verdicts) and 0 (weights)."""

    p: np.ndarray  # (S,) the critic's pass rate
    attempts: np.ndarray  # (S,) the attempts behind p
    passed: np.ndarray  # (S, n) the rater's 0/1 verdicts on the passed pile
    failed: np.ndarray  # (S, m) the same on the failed pile
    weights: np.ndarray  # (S, m) the failed pile's weights
    deff: np.ndarray  # (S,) p's design effect over the levels (1: independent attempts)
    # the finite population (None: superpopulation): each pile's rows in all, labelled or not; NaN where a pile is
    # drawn as infinite (a placeholder)
    passed_total: np.ndarray | None = None  # (S,) the critic-passed attempts
    failed_total: np.ndarray | None = None  # (S,) the critic-failed attempts

    @property
    def finite(self) -> bool:
        """Theta is the rate of the studies' own attempts (p known, the piles finite): :data:`FINITE`."""
        return self.passed_total is not None or self.failed_total is not None

    @classmethod
    def one(
        cls,
        p: float,
        attempts: int,
        passed_pile,
        failed_pile,
        failed_weights,
        *,
        deff: float = 1.0,
        passed_total: float | None = None,
        failed_total: float | None = None,
    ) -> Piles:
        """One study (a cell), validated: ValueError naming what is wrong. ``passed_total`` and ``failed_total``:
        the piles' rows in all for the finite population (both None: the superpopulation; NaN: that pile
        infinite, as a placeholder is)."""
        x = np.asarray(passed_pile, dtype=float)
        y = np.asarray(failed_pile, dtype=float)
        w = np.asarray(failed_weights, dtype=float)
        if x.size == 0 or y.size == 0:
            raise ValueError("both piles need at least one row")
        if w.shape != y.shape:
            raise ValueError(f"the failed pile has {y.size} rows but {w.size} weights")
        if attempts < 1 or not 0 <= p <= 1:
            raise ValueError(f"p must lie in [0, 1] over at least one attempt, got p = {p} over {attempts}")
        finite = passed_total is not None or failed_total is not None
        totals = [np.array([np.nan if t is None else float(t)]) for t in (passed_total, failed_total)]
        for name, t, rows in (("passed", totals[0][0], x.size), ("failed", totals[1][0], y.size)):
            if np.isfinite(t) and t < rows:
                raise ValueError(f"the {name} pile has {rows} labelled rows but {t:g} rows in all")
        return cls(
            np.array([float(p)]),
            np.array([float(attempts)]),
            x[None, :],
            y[None, :],
            w[None, :],
            np.array([float(deff)]),
            *(totals if finite else (None, None)),
        )

    def shares(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per study: (passed-pile rows, a, failed-pile rows, the weighted b); NaN shares for an empty pile."""
        na = np.sum(~np.isnan(self.passed), axis=1)
        nb = np.sum(~np.isnan(self.failed), axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            a = np.nansum(self.passed, axis=1) / na
            b = np.nansum(np.nan_to_num(self.failed) * self.weights, axis=1) / self.weights.sum(axis=1)
        return na, a, nb, b

    def estimate(self) -> np.ndarray:
        """Per study: the corrected rate p·a + (1 − p)·b (NaN where a pile is empty)."""
        _, a, _, b = self.shares()
        return corrected_rate(self.p, a, b)

    def defined(self) -> np.ndarray:
        na, _, nb, _ = self.shares()
        return (na > 0) & (nb > 0)


@dataclass(frozen=True)
class Intervals:
    """Per study: the estimates and their intervals (q1 and q0 NaN unless asked for); theta's draws."""

    method: str
    theta: np.ndarray
    low: np.ndarray
    high: np.ndarray
    a: np.ndarray
    b: np.ndarray
    q1: np.ndarray
    q1_low: np.ndarray
    q1_high: np.ndarray
    q0: np.ndarray
    q0_low: np.ndarray
    q0_high: np.ndarray
    draws: np.ndarray | None  # (S, n_draws); None for ppi
    p_draws: np.ndarray | None = None  # (S, n_draws) the draws of p theta's draws were made with; None for ppi
    q1_draws: np.ndarray | None = None  # (S, n_draws) with ``with_q``
    q0_draws: np.ndarray | None = None


def pile_bootstrap(values: np.ndarray, weights: np.ndarray, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """(S, n_draws) weighted means of each study's pile resampled with replacement: a resample is a multinomial
    draw over the pile's distinct (weight, verdict) rows (NaN rows are past the pile's end)."""
    s = values.shape[0]
    size = np.sum(~np.isnan(values), axis=1)
    kinds = np.unique(weights[~np.isnan(values)]) if size.any() else np.ones(1)
    # verdicts are 0 and 1 (0/1 piles draw as before); a pooled rater's tie (0.5) or a level's mean over several
    # labelled rows is a category of its own
    seen = np.unique(values[~np.isnan(values)]) if size.any() else np.array([])
    cats = [(k, y) for k in kinds for y in (0.0, 1.0, *sorted(set(seen.tolist()) - {0.0, 1.0}))]
    counts = np.stack([((weights == k) & (values == y)).sum(axis=1) for k, y in cats], axis=1).astype(float)
    probs = counts / np.maximum(size, 1)[:, None]
    probs[size == 0] = 1.0 / len(cats)  # an empty pile (the study is undefined): any valid draw
    wk = np.array([k for k, _ in cats])
    yk = np.array([y for _, y in cats])
    num, den = np.empty((s, n_draws)), np.empty((s, n_draws))
    for i, (m, pr) in enumerate(zip(np.maximum(size, 1), probs, strict=True)):
        d = rng.multinomial(m, pr, size=n_draws)  # (n_draws, categories)
        num[i], den[i] = d @ (wk * yk), d @ wk
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / den


def _keep_unanimous(draws: np.ndarray, share: np.ndarray, where: np.ndarray, scale: float) -> np.ndarray:
    """In the studies ``where``, a unanimous pile's draws pulled towards the boundary it sits at: the distance to
    it times ``scale``."""
    top, bottom = (((share == v) & where)[:, None] for v in (1, 0))
    return np.where(top, 1 - scale * (1 - draws), np.where(bottom, scale * draws, draws))


def share_draws(
    method: str,
    piles: Piles,
    n_draws: int,
    rng: np.random.Generator,
    *,
    unanimous_scale: float = 1.0,
    v_rng: np.random.Generator | None = None,
):
    """(a, b) draws, (S, n_draws) each, by ``method`` (one of :data:`INTERVALS`). ``unanimous_scale`` (fiducial
    only, for 08's trade-off table): how much of the piles' uncertainty is kept where both piles are unanimous.
    ``v_rng``: where the fiducial interval's randomisation (one uniform a pile) comes from (None: ``rng``, in
    the order it always has; a printed estimate's, :func:`vocab.stats.seeds.randomisation`)."""
    v_rng = rng if v_rng is None else v_rng
    na, a, nb, b = piles.shares()
    s = len(piles.p)
    if method == "seed":
        return (
            pile_bootstrap(piles.passed, np.ones_like(piles.passed), n_draws, rng),
            pile_bootstrap(piles.failed, piles.weights, n_draws, rng),
        )
    if method == "fiducial":
        nbe = kish_rows(piles.weights)
        ab = binomial_cd_draws(np.nan_to_num(a) * na, na, v_rng.random(s), n_draws, rng)
        bb = binomial_cd_draws(np.nan_to_num(b) * nbe, nbe, v_rng.random(s), n_draws, rng)
        if unanimous_scale != 1.0:
            both = np.isin(a, (0.0, 1.0)) & np.isin(b, (0.0, 1.0))
            ab, bb = _keep_unanimous(ab, a, both, unanimous_scale), _keep_unanimous(bb, b, both, unanimous_scale)
        return ab, bb
    if method == "jeffreys":
        ka, kb = np.nan_to_num(a) * na, np.nan_to_num(b) * nb
        ab = rng.beta((ka + 0.5)[:, None], (na - ka + 0.5)[:, None], size=(s, n_draws))
        bb = rng.beta((kb + 0.5)[:, None], (nb - kb + 0.5)[:, None], size=(s, n_draws))
        return ab, bb
    raise ValueError(f"unknown interval {method!r} (known: {', '.join(INTERVALS)})")


def p_draws(model: str, piles: Piles, n_draws: int, rng: np.random.Generator, v_rng=None) -> np.ndarray:
    """(S, n_draws) draws of p: ``fixed`` (p itself), ``cd`` (its randomised confidence distribution on attempts /
    design effect), ``beta`` (Jeffreys on the attempts), ``beta-deff`` (on attempts / design effect), ``binomial``
    (the attempts resampled as if independent). ``v_rng``: cd's randomisation (None: ``rng``)."""
    s, p = len(piles.p), piles.p
    if model == "fixed":
        return np.repeat(p[:, None], n_draws, axis=1)
    if model == "cd":
        n_eff = piles.attempts / piles.deff
        return binomial_cd_draws(p * n_eff, n_eff, (rng if v_rng is None else v_rng).random(s), n_draws, rng)
    if model in ("beta", "beta-deff"):
        n_eff = piles.attempts / (piles.deff if model == "beta-deff" else 1.0)
        kp = p * n_eff
        return rng.beta((kp + 0.5)[:, None], (n_eff - kp + 0.5)[:, None], size=(s, n_draws))
    if model == "binomial":
        n = piles.attempts.astype(np.int64)[:, None]
        return rng.binomial(n, p[:, None], size=(s, n_draws)) / n
    raise ValueError(f"unknown model of p {model!r} (known: {', '.join(P_MODELS)})")


def holding_rows(values, draws, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``draws``: the equal-tailed percentile interval of its draws (NaN draws left out), widened
    where needed to hold the estimate ``values``: Brown, Cai and DasGupta's boundary rule, generalised. At 0 of n
    an interval from draws starts just above 0 while the estimate is 0; for theta the fiducial draws are 0 only
    when both piles' draws are (a probability v_a·v_b), so without the rule the interval excluded a true rate of
    0 in about 12 % of studies."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a row with no defined draw: NaN, said by the result
        lo, hi = np.nanquantile(draws, [alpha, 1 - alpha], axis=1)
    v = np.asarray(values, dtype=float)
    ok = np.isfinite(v) & np.isfinite(lo)
    return np.where(ok, np.fmin(lo, v), lo), np.where(ok, np.fmax(hi, v), hi)


def holding(value: float, samples, alpha: float = 0.025) -> tuple[float, float]:
    """:func:`holding_rows` of one estimate and its draws."""
    lo, hi = holding_rows([value], np.asarray(samples, dtype=float)[None, :], alpha)
    return float(lo[0]), float(hi[0])


def percentile_interval(samples, alpha: float = 0.025) -> tuple[float, float]:
    """The equal-tailed percentile interval of ``samples`` (NaN left out; NaN when none is left)."""
    s = np.asarray(samples, dtype=float)
    s = s[~np.isnan(s)]
    if s.size == 0:
        return (float("nan"), float("nan"))
    lo, hi = np.quantile(s, [alpha, 1 - alpha])
    return (float(lo), float(hi))


def _finish(method, piles, est, lo, hi, a, b, q=None, draws=None, more=(None, None, None)) -> Intervals:
    """Clipped to [0, 1], NaN where the study is undefined (a pile empty)."""
    undefined = ~piles.defined()
    nan = np.full(len(piles.p), np.nan)
    q = q or (nan, nan, nan, nan, nan, nan)
    out = []
    for x in (est, lo, hi, *q):
        x = np.clip(np.asarray(x, dtype=float), 0, 1)
        x[undefined] = np.nan
        out.append(x)
    est, lo, hi, q1, q1_lo, q1_hi, q0, q0_lo, q0_hi = out
    return Intervals(method, est, lo, hi, a, b, q1, q1_lo, q1_hi, q0, q0_lo, q0_hi, draws, *more)


def ppi_intervals(piles: Piles, confidence: float = 0.95) -> Intervals:
    """Prediction-powered inference at λ = 1 with ppi_py's formulas, the failed pile by its weights. Labelled rows:
    the two piles, prediction 1 in the passed pile and 0 in the failed one, weights p·n / n_a for a passed row and
    (1 − p)·n·w / Σw for a failed row (they sum to n = n_a + n_b); unlabelled: the attempts' verdicts (mean p).
    Estimate = p + mean(w (Y − f)); standard error sqrt(var(w (Y − f)) / n + p(1 − p) / N), population variances."""
    from scipy.stats import norm

    na, a, nb, b = piles.shares()
    p = piles.p
    n = na + nb
    with np.errstate(invalid="ignore", divide="ignore"):
        wa = p * n / na
        wb = (1 - p)[:, None] * n[:, None] * piles.weights / piles.weights.sum(axis=1, keepdims=True)
        ra = np.where(np.isnan(piles.passed), np.nan, wa[:, None] * (piles.passed - 1))
        rb = np.where(np.isnan(piles.failed), np.nan, wb * piles.failed)
        r = np.concatenate([ra, rb], axis=1)
        mean_r = np.nansum(r, axis=1) / n
        var_r = np.nansum(r**2, axis=1) / n - mean_r**2
        est = p + mean_r
        if piles.finite:  # p known; the labelled rows a sample without replacement of the attempts
            se = np.sqrt(np.maximum(var_r, 0) / n * np.clip(1 - n / piles.attempts, 0, 1))
        else:
            se = np.sqrt(np.maximum(var_r, 0) / n + p * (1 - p) / piles.attempts)
    z = norm.ppf(1 - (1 - confidence) / 2)
    return _finish("ppi", piles, est, est - z * se, est + z * se, a, b)


def correction_intervals(
    method: str,
    piles: Piles,
    *,
    n_draws: int = 4000,
    confidence: float = 0.95,
    rng: np.random.Generator,
    p_model: str | Callable[[np.random.Generator], np.ndarray] | None = None,
    with_q: bool = False,
    unanimous_scale: float = 1.0,
    v_rng: np.random.Generator | None = None,
) -> Intervals:
    """Theta and its interval by ``method`` for every study of ``piles``; with ``with_q`` also the critic's
    sensitivity q1 and specificity q0 with theirs. Draws in this order: a, b, then p (``p_model``: the method's own
    by default, :data:`METHOD_P`, or a function of the generator for a model of the simulator's own; ``fixed`` for
    finite piles, whatever ``p_model`` says), then, for finite piles, each pile's completion (:func:`finite_shares`:
    passed, then failed). For finite piles by the fiducial method, q1's and q0's ends are read last from each
    pile's bounding draws (:func:`vocab.stats.shares.bounded_q`; a pile labelled all but a row or two left q0's
    lower end above the truth in 5–8 % of audits with the fiducial draws: ``benchmarks/results/finite.json``); their
    draws (``q1_draws``, ``q0_draws``, what differences take) stay the fiducial ones. ``v_rng``: the
    randomisation's generator (:func:`share_draws`; None: ``rng``)."""
    if method == "ppi":
        return ppi_intervals(piles, confidence)
    if method not in INTERVALS:
        raise ValueError(f"unknown interval {method!r} (known: {', '.join(METHODS)})")
    if not 0 <= unanimous_scale <= 1 or (unanimous_scale != 1 and method != "fiducial"):
        raise ValueError(f"unanimous_scale must lie in [0, 1], for fiducial only; got {unanimous_scale} for {method}")
    ab, bb = share_draws(method, piles, n_draws, rng, unanimous_scale=unanimous_scale, v_rng=v_rng)
    # finite piles: p is every verdict seen, known whatever model of p a method would draw for a superpopulation
    model = "fixed" if piles.finite else (p_model or METHOD_P[method])
    pb = model(rng) if callable(model) else p_draws(model, piles, n_draws, rng, v_rng)
    if piles.finite:
        nan = np.full(len(piles.p), np.nan)
        ab = finite_shares(ab, piles.passed, nan if piles.passed_total is None else piles.passed_total, rng)
        bb = finite_shares(bb, piles.failed, nan if piles.failed_total is None else piles.failed_total, rng)
    _, a, _, b = piles.shares()
    alpha = (1 - confidence) / 2
    est = corrected_rate(piles.p, a, b)
    draws = corrected_rate(pb, ab, bb)
    lo, hi = holding_rows(est, draws, alpha)
    q, q1_draws, q0_draws = None, None, None
    if with_q:
        q1, q0 = sensitivity(piles.p, a, b), specificity(piles.p, a, b)
        q1_draws, q0_draws = sensitivity(pb, ab, bb), specificity(pb, ab, bb)
        q = (q1, *holding_rows(q1, q1_draws, alpha), q0, *holding_rows(q0, q0_draws, alpha))
        if piles.finite and method == "fiducial":  # their ends from the piles' bounding draws, drawn last
            q1_ci, q0_ci = bounded_q(piles.p, *_bounds(piles, n_draws, rng), q1, q0, alpha)
            q = (q1, *q1_ci, q0, *q0_ci)
    return _finish(method, piles, est, lo, hi, a, b, q, draws, (np.broadcast_to(pb, draws.shape), q1_draws, q0_draws))


def _bounds(piles: Piles, n_draws: int, rng: np.random.Generator):
    """Each finite pile's share drawn from its lower and its upper bounding Beta
    (:func:`vocab.stats.shares.pile_bounds`, the failed pile on its Kish rows as the fiducial draws take it):
    ((a low, a high), (b low, b high))."""
    na, a, _, b = piles.shares()
    nbe = kish_rows(piles.weights)
    nan = np.full(len(piles.p), np.nan)
    ta = nan if piles.passed_total is None else piles.passed_total
    tb = nan if piles.failed_total is None else piles.failed_total
    return (
        pile_bounds(np.nan_to_num(a) * na, na, piles.passed, ta, n_draws, rng),
        pile_bounds(np.nan_to_num(b) * nbe, nbe, piles.failed, tb, n_draws, rng),
    )


@dataclass(frozen=True)
class CorrectionInterval:
    """One cell's correction with the intervals of theta, q1 and q0 (:func:`correction_interval`)."""

    point: Correction
    theta_ci: tuple[float, float]
    q1_ci: tuple[float, float]
    q0_ci: tuple[float, float]
    n_resamples: int
    theta_samples: np.ndarray
    p_samples: np.ndarray | None = None  # the draws of p behind theta's (differences of leniency use them)
    q1_samples: np.ndarray | None = None
    q0_samples: np.ndarray | None = None
    # theta's, q1's and q0's distributions computed whole (name -> (values, probabilities); vocab.stats.exact)
    # where they are, else None
    lattices: dict | None = None


def correction_interval(
    method: str,
    p: float,
    attempts: int,
    passed_pile,
    failed_pile,
    failed_weights,
    *,
    level_passes=None,
    level_attempts=None,
    deff: float | None = None,
    passed_total: float | None = None,
    failed_total: float | None = None,
    n_draws: int = 4000,
    confidence: float = 0.95,
    rng: np.random.Generator,
    v_rng: np.random.Generator | None = None,
) -> CorrectionInterval:
    """The corrected rate of one cell with its interval by ``method`` (one of :data:`INTERVALS`): the entry point
    of 03's tables and the report, for the overall verdict and for each check alike. ``level_passes`` and
    ``level_attempts``: the cell's counts per level, for p's design effect (fiducial; 1 without them); or ``deff``, that
    design effect computed already (an imported dataset keeps it). ``passed_total`` and ``failed_total``: the
    piles' rows in all, for the finite population (:class:`Piles`; both None: the superpopulation). ``v_rng``: the
    randomisation's generator (:func:`share_draws`)."""
    if method not in INTERVALS:
        raise ValueError(f"unknown interval {method!r} (known: {', '.join(INTERVALS)})")
    if deff is None:
        deff = 1.0 if level_passes is None else design_effect(level_passes, level_attempts)
    piles = Piles.one(
        p,
        attempts,
        passed_pile,
        failed_pile,
        failed_weights,
        deff=deff,
        passed_total=passed_total,
        failed_total=failed_total,
    )
    r = correction_intervals(method, piles, n_draws=n_draws, confidence=confidence, rng=rng, with_q=True, v_rng=v_rng)
    point = Correction(float(p), float(r.a[0]), float(r.b[0]), float(r.theta[0]), float(r.q1[0]), float(r.q0[0]))
    return CorrectionInterval(
        point,
        (float(r.low[0]), float(r.high[0])),
        (float(r.q1_low[0]), float(r.q1_high[0])),
        (float(r.q0_low[0]), float(r.q0_high[0])),
        n_draws,
        r.draws[0],
        r.p_draws[0],
        r.q1_draws[0],
        r.q0_draws[0],
    )


def fiducial_correction(p, attempts, passed_pile, failed_pile, failed_weights, **kw) -> CorrectionInterval:
    """:func:`correction_interval` by the fiducial method (03's default)."""
    return correction_interval("fiducial", p, attempts, passed_pile, failed_pile, failed_weights, **kw)


def bootstrap_correction(
    p, passed_pile, failed_pile, failed_weights, *, n_resamples: int = 4000, **kw
) -> CorrectionInterval:
    """:func:`correction_interval` by seed 000's bootstrap (p fixed, so the attempts behind it do not enter)."""
    return correction_interval("seed", p, 1, passed_pile, failed_pile, failed_weights, n_draws=n_resamples, **kw)
