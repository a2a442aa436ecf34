"""The study simulated with level-clustered attempts: levels of varied difficulty, each retried until the critic
passes it or its attempts run out, so one level's attempts are not independent (a hard level fails three times).

A simulated study: ``levels`` levels, level l's attempts good with probability g_l ~ Beta(theta·s, (1 − theta)·s)
(``spread`` s: smaller is more varied; s → ∞ is no clustering); each attempt passed by the critic with
probability q1 if good, 1 − q0 if not; a level stops at its first pass or after ``max_attempts``. The piles are
drawn as `vocab.sampling.sample` draws them: ``piles`` critic-passed attempts, and ``piles`` levels with a
failed attempt, one failed attempt each, weighted by the level's number of failed attempts. The target depends on
the population (:data:`vocab.stats.POPULATIONS`): for ``finite`` (the report's default) each study's own share of
good attempts (``truth``), the intervals with p known and both piles finite (:class:`vocab.stats.Piles`); for
``superpopulation`` the writer's rate of good attempts over the
population of levels (:func:`population_theta`: E[good attempts] / E[attempts], the retries included), as in the
unclustered simulator.

Intervals (nominal 95 %), each the report's (:mod:`vocab.stats.intervals`, the same code and draws) with the model
of p named:

- ``seed`` — seed 000's bootstrap of the piles' rows with their weights, p fixed;
- ``attempt-boot`` — the same, p resampled as if the attempts were independent (Binomial(N, p)/N);
- ``level-boot`` — the same, p resampled by levels (a cluster bootstrap: levels drawn with replacement);
- ``jeffreys`` — Jeffreys posteriors for a, the weighted b and p (on the attempts);
- ``jeffreys-cluster`` — the same with p's posterior on N / deff attempts, deff the design effect of p estimated
  from the levels (the ratio estimator's variance over the binomial one, at least 1);
- ``ppi`` — prediction-powered inference at λ = 1 with the failed pile's weights, a Wald interval;
- ``fiducial`` — 03's default: randomised binomial confidence distributions for a, b (on its Kish effective rows)
  and p (on N / deff attempts).

Yardsticks, not intervals anyone can compute (they know the truth): ``oracle`` and ``oracle-shortest`` take the
estimate's own error distribution at the point (over its simulated studies) as known, the equal-tailed and the
shortest range holding 95 % of the errors, and return estimate − that range: 95 % coverage by construction (more
where the estimate has atoms, such as exactly 0 when both piles are all bad: the central range then holds them
whole), with one width per point (:func:`oracle_interval`).

``spread`` = inf (or anything from 1e5 up) is no heterogeneity: every level's attempts are good with probability
theta, so the attempts are independent and only the retry structure remains.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from vocab import stats
from vocab.coverage.simulate import AS_INTERVAL, Coverage, coverage_of
from vocab.stats import Piles

CLUSTERED_METHODS = ("seed", "attempt-boot", "level-boot", "jeffreys", "jeffreys-cluster", "ppi", "fiducial")
ORACLES = ("oracle", "oracle-shortest")  # yardsticks that know the truth: for widths, never a choice
POINT_METHODS = CLUSTERED_METHODS + ORACLES
NO_SPREAD = 1e5  # a spread from here up is no heterogeneity


@dataclass(frozen=True)
class ClusteredStudies:
    p: np.ndarray  # (S,) the critic's pass rate over the study's attempts
    attempts: np.ndarray  # (S,) N, attempts logged
    passed: np.ndarray  # (S, n) rater verdicts (1 pass) on the passed pile, nan past its end
    failed: np.ndarray  # (S, n) the same for the failed pile
    weights: np.ndarray  # (S, n) failed-pile weights (0 past its end)
    level_passes: np.ndarray  # (S, L) critic-passed attempts per level
    level_attempts: np.ndarray  # (S, L) attempts per level
    truth: np.ndarray  # (S,) the study's own share of good attempts
    defined: np.ndarray  # (S,) both piles non-empty


def simulate_clustered(
    theta: float,
    q1: float,
    q0: float,
    *,
    levels: int,
    max_attempts: int,
    piles: int,
    spread: float,
    sims: int,
    rng: np.random.Generator,
    rater_error: float = 0.0,
) -> ClusteredStudies:
    s, big_l, k = sims, levels, max_attempts
    if spread >= NO_SPREAD:
        g = np.full((s, big_l, 1), float(theta))
    else:
        g = rng.beta(theta * spread, (1 - theta) * spread, size=(s, big_l, 1))
    good = rng.random((s, big_l, k)) < g
    passes = np.where(good, rng.random((s, big_l, k)) < q1, rng.random((s, big_l, k)) >= q0)
    # attempt j exists when every earlier attempt of its level failed
    exists = np.concatenate([np.ones((s, big_l, 1), bool), np.cumprod(~passes, axis=2)[:, :, :-1] > 0], axis=2)
    rated_good = good ^ (rng.random((s, big_l, k)) < rater_error)
    level_attempts = exists.sum(axis=2)
    level_passes = (passes & exists).sum(axis=2)
    n_att = level_attempts.sum(axis=1)
    p = level_passes.sum(axis=1) / n_att
    truth = (good & exists).sum(axis=(1, 2)) / n_att
    # the passed pile: passed attempts at random (a level passes at most once)
    passed_lv = level_passes > 0
    at_pass = np.argmax(passes & exists, axis=2)[:, :, None]
    good_at_pass = np.take_along_axis(rated_good, at_pass, axis=2)[:, :, 0]
    pick = np.argsort(rng.random((s, big_l)) + (~passed_lv) * 2, axis=1)[:, :piles]
    ok_a = np.take_along_axis(passed_lv, pick, axis=1)
    passed = np.where(ok_a, np.take_along_axis(good_at_pass, pick, axis=1), np.nan)
    # the failed pile: levels with a failed attempt, one of its failed attempts, weighted by their number
    failed_mask = ~passes & exists
    n_failed = failed_mask.sum(axis=2)
    pick = np.argsort(rng.random((s, big_l)) + (n_failed == 0) * 2, axis=1)[:, :piles]
    ok_b = np.take_along_axis(n_failed > 0, pick, axis=1)
    which = np.argmax(rng.random((s, big_l, k)) * failed_mask, axis=2)
    good_failed = np.take_along_axis(rated_good, which[:, :, None], axis=2)[:, :, 0]
    failed = np.where(ok_b, np.take_along_axis(good_failed, pick, axis=1), np.nan)
    weights = np.take_along_axis(n_failed, pick, axis=1) * ok_b
    defined = ok_a.any(axis=1) & ok_b.any(axis=1)
    return ClusteredStudies(
        p, n_att, passed, failed, weights.astype(float), level_passes, level_attempts, truth, defined
    )


def population_theta(theta: float, q1: float, q0: float, spread: float, max_attempts: int) -> float:
    """E[good attempts] / E[attempts] over levels with g ~ Beta(theta·s, (1 − theta)·s): a level's attempt j
    exists with probability f^(j−1), f = g(1 − q1) + (1 − g) q0 its chance to fail, and is good with
    probability g whatever came before, so the ratio is E[g·S(g)] / E[S(g)] with S = Σ_j f^(j−1)."""
    from scipy import integrate, stats

    if spread >= NO_SPREAD:  # no heterogeneity: every level has g = theta
        return float(theta)
    dist = stats.beta(theta * spread, (1 - theta) * spread)

    def s(g):
        f = g * (1 - q1) + (1 - g) * q0
        return sum(f**j for j in range(max_attempts))

    num = integrate.quad(lambda g: g * s(g) * dist.pdf(g), 0, 1, limit=200)[0]
    den = integrate.quad(lambda g: s(g) * dist.pdf(g), 0, 1, limit=200)[0]
    return float(num / den)


def clustered_piles(st: ClusteredStudies, population: str = stats.SUPERPOPULATION) -> Piles:
    """The studies' piles as :mod:`vocab.stats.intervals` takes them, p's design effect from their levels; for the
    finite population with each pile's attempts in all (the critic's passes and failures)."""
    totals = (None, None)
    if population == stats.FINITE:
        passes = st.level_passes.sum(axis=1).astype(float)
        totals = (passes, st.attempts - passes)
    elif population != stats.SUPERPOPULATION:
        raise ValueError(f"unknown population {population!r} (known: {', '.join(stats.POPULATIONS)})")
    return Piles(
        st.p,
        st.attempts.astype(float),
        st.passed,
        st.failed,
        st.weights,
        stats.design_effect(st.level_passes, st.level_attempts),
        *totals,
    )


def clustered_target(
    st: ClusteredStudies, population: str, theta: float, q1: float, q0: float, spread: float, max_attempts: int
):
    """What the intervals aim at: each study's own share of good attempts (finite), or the writer's rate over
    the population of levels (superpopulation, :func:`population_theta`)."""
    if population == stats.FINITE:
        return st.truth
    return population_theta(theta, q1, q0, spread, max_attempts)


def clustered_shares(st: ClusteredStudies):
    """Per study: (passed-pile rows, a, failed-pile rows, the weighted b)."""
    return clustered_piles(st).shares()


def clustered_estimate(st: ClusteredStudies) -> np.ndarray:
    """Per study: the corrected rate p·a + (1 − p)·b (nan where a pile is empty)."""
    return clustered_piles(st).estimate()


def design_effect(st: ClusteredStudies) -> np.ndarray:
    """Per study: :func:`vocab.stats.design_effect` of its levels' counts."""
    return stats.design_effect(st.level_passes, st.level_attempts)


def both_unanimous(st: ClusteredStudies) -> np.ndarray:
    """Per study: both piles unanimous (each all good or all bad), as every study is when the critic never errs."""
    _, a, _, b = clustered_shares(st)
    return np.isin(a, (0.0, 1.0)) & np.isin(b, (0.0, 1.0))


def _level_boot(st: ClusteredStudies, n_boot: int):
    """p resampled by levels (a cluster bootstrap: levels drawn with replacement), as a model of p for
    :func:`vocab.stats.correction_intervals`."""

    def draw(rng):
        s, big_l = st.level_passes.shape
        idx = rng.integers(0, big_l, size=(s, n_boot, big_l))
        x = np.take_along_axis(st.level_passes[:, None, :].repeat(n_boot, 1), idx, axis=2).sum(2)
        m = np.take_along_axis(st.level_attempts[:, None, :].repeat(n_boot, 1), idx, axis=2).sum(2)
        return x / m

    return draw


def clustered_interval(
    method: str,
    st: ClusteredStudies,
    n_boot: int,
    rng: np.random.Generator,
    *,
    unanimous_scale: float = 1.0,
    population: str = stats.SUPERPOPULATION,
    v_rng: np.random.Generator | None = None,
):
    """(estimate, low, high) per study, by :func:`vocab.stats.correction_intervals` (the report's intervals).
    ``unanimous_scale`` (fiducial only, for :func:`unanimous_tradeoff`): how much of the piles' uncertainty the
    interval keeps where both piles are unanimous; 1 is the method as it stands. ``v_rng``: the randomisation's
    generator (None: ``rng``, as the simulator draws it; the report's: :func:`vocab.stats.randomisation`)."""
    if method not in CLUSTERED_METHODS:
        raise ValueError(f"unknown method {method!r} (known: {', '.join(CLUSTERED_METHODS)})")
    interval, p_model = AS_INTERVAL[method]
    if p_model == "levels":
        p_model = _level_boot(st, n_boot)
    r = stats.correction_intervals(
        interval,
        clustered_piles(st, population),
        n_draws=n_boot,
        rng=rng,
        p_model=p_model,
        unanimous_scale=unanimous_scale,
        v_rng=v_rng,
    )
    return r.theta, r.low, r.high


def oracle_interval(est, target: float, defined, *, shortest: bool = False, confidence: float = 0.95):
    """(estimate, low, high) per study from the estimate's known error distribution over the defined studies:
    estimate − the central (equal-tailed) range of errors holding ``confidence`` of them, or the shortest such
    range; clipped to [0, 1] as the intervals are. Covers ``confidence`` of the studies by construction (more where
    errors tie at the range's ends); its mean width is a yardstick for intervals built on the same estimate, not
    a floor (an interval whose width follows each study's data can be narrower on average)."""
    est = np.asarray(est, dtype=float)
    d = np.asarray(defined, dtype=bool)
    target = np.broadcast_to(np.asarray(target, dtype=float), est.shape)  # a number, or each study's own truth
    errors = np.sort(est[d] - target[d])
    if errors.size == 0:
        nan = np.full(est.shape, np.nan)
        return est, nan, nan.copy()
    if shortest:
        k = int(np.ceil(confidence * errors.size))
        i = int(np.argmin(errors[k - 1 :] - errors[: errors.size - k + 1]))
        lo, hi = errors[i], errors[i + k - 1]
    else:
        alpha = (1 - confidence) / 2
        lo, hi = np.quantile(errors, [alpha, 1 - alpha])
    low, high = np.clip(est - hi, 0, 1), np.clip(est - lo, 0, 1)
    low[~d] = high[~d] = np.nan
    return est, low, high


def clustered_point(
    methods,
    *,
    theta: float,
    q1: float,
    q0: float,
    spread: float,
    levels: int = 140,
    max_attempts: int = 3,
    piles: int = 10,
    sims: int = 1000,
    seed: int = 0,
    n_boot: int = 500,
    population: str = stats.SUPERPOPULATION,
) -> list[Coverage]:
    """Coverage of several methods on the same simulated studies (paired): the studies from ``seed``, each
    method's draws from ``seed`` and the method's name, so a method's result does not depend on the others.
    ``methods`` may include the :data:`ORACLES` (yardsticks from the point's own studies, no draws).
    ``population``: what the intervals aim at (:func:`clustered_target`)."""
    unknown = [m for m in methods if m not in POINT_METHODS]
    if unknown:
        raise ValueError(f"unknown method {unknown[0]!r} (known: {', '.join(POINT_METHODS)})")
    st = simulate_clustered(
        theta,
        q1,
        q0,
        levels=levels,
        max_attempts=max_attempts,
        piles=piles,
        spread=spread,
        sims=sims,
        rng=np.random.default_rng(seed),
    )
    # (the simulator's stream from the seed alone, not stats.stream: that would move every committed grid point)
    target = clustered_target(st, population, theta, q1, q0, spread, max_attempts)
    out = []
    for m in methods:
        if m in ORACLES:
            est, lo, hi = oracle_interval(clustered_estimate(st), target, st.defined, shortest=m != "oracle")
            out.append(coverage_of(m, est, lo, hi, target, st.defined))
            continue
        rng = stats.stream(seed, "method", m)
        est, lo, hi = clustered_interval(m, st, n_boot, rng, population=population)
        out.append(coverage_of(m, est, lo, hi, target, st.defined))
    return out


def unanimous_tradeoff(
    points,
    scales=(1.0, 0.7, 0.5, 0.3),
    *,
    piles: int = 10,
    spread: float = float("inf"),
    levels: int = 140,
    max_attempts: int = 3,
    sims: int = 1000,
    n_boot: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """The fiducial interval with the piles' uncertainty scaled by each of ``scales`` where both piles are
    unanimous (1: as it stands; smaller: their draws pulled towards the boundaries they sit at), at each (theta,
    q1, q0) of ``points``: its coverage and mean width, and the share of studies whose piles are both unanimous.
    Every scale sees the same studies and the same draws before scaling. Where the critic never errs both piles
    are always unanimous and the interval over-covers; the same unanimous piles come from critics that do err,
    and there the interval needs that uncertainty: this table shows what trading one for the other costs."""
    rows = []
    for theta, q1, q0 in points:
        names = ("unanimous_tradeoff", theta, q1, q0, piles, spread, levels, max_attempts)
        st = simulate_clustered(
            theta,
            q1,
            q0,
            levels=levels,
            max_attempts=max_attempts,
            piles=piles,
            spread=spread,
            sims=sims,
            rng=stats.stream(seed, *names, "studies"),
        )
        target = population_theta(theta, q1, q0, spread, max_attempts)
        both = float(both_unanimous(st)[st.defined].mean())
        for scale in scales:
            rng = stats.stream(seed, *names, "draws")  # every scale the same draws
            est, lo, hi = clustered_interval("fiducial", st, n_boot, rng, unanimous_scale=scale)
            c = coverage_of("fiducial", est, lo, hi, target, st.defined)
            rows.append(
                {
                    "theta": theta,
                    "q1": q1,
                    "q0": q0,
                    "piles": piles,
                    "spread": spread,
                    "scale": scale,
                    "both_unanimous": both,
                    "coverage": c.coverage,
                    "mean_width": c.mean_width,
                }
            )
    return pd.DataFrame(rows)


def clustered_coverage(method: str, **point) -> Coverage:
    """Coverage of the writer's population rate of good attempts (:func:`population_theta`) by ``method`` at one
    point (the keywords of :func:`clustered_point`)."""
    return clustered_point([method], **point)[0]


def clustered_table(
    *,
    thetas=(0.2, 0.5),
    qs=(0.8,),
    spreads=(0.5, 2.0, 1000.0),
    methods=CLUSTERED_METHODS,
    piles: int = 10,
    levels: int = 140,
    sims: int = 400,
    seed: int = 0,
    n_boot: int = 300,
) -> pd.DataFrame:
    """Coverage of every method under level-clustered attempts, per true rate, critic (q1 = q0) and spread
    (each point with its own seed derived from ``seed`` and its coordinates, the same for every method: paired
    comparisons; a point does not depend on which others are in the table)."""
    rows = []
    for theta, q, spread in ((t, q, s) for t in thetas for q in qs for s in spreads):
        point_seed = stats.derived_seed(seed, "clustered_table", theta, q, spread, levels, piles)
        for method in methods:
            c = clustered_coverage(
                method,
                theta=theta,
                q1=q,
                q0=q,
                spread=spread,
                levels=levels,
                piles=piles,
                sims=sims,
                seed=point_seed,
                n_boot=n_boot,
            )
            rows.append({"theta": theta, "q": q, "spread": spread, "levels": levels, "piles": piles, **c.as_dict()})
    return pd.DataFrame(rows)
