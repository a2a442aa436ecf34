"""Pure numeric functions: the bias correction of a critic's pass rate, its bootstrap, agreement, ratings.

Nothing here knows about models or files. Inputs are numbers and numpy arrays; randomness comes from a
passed :class:`numpy.random.Generator`.

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

import hashlib
from dataclasses import dataclass

import numpy as np


def derived_seed(seed: int, *names: object) -> int:
    """A 64-bit seed of its own for one estimate, from ``seed`` and the names that identify it (its table, rater,
    cell, check, ...). The names enter through SHA-256 of their text, never Python's ``hash``, so the seed is the
    same in every process."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"a seed must be a non-negative integer, got {seed!r}")
    digest = hashlib.sha256("\x1f".join(str(n) for n in names).encode()).digest()
    words = np.frombuffer(digest, dtype="<u4").tolist()
    state = np.random.SeedSequence([int(seed), *words]).generate_state(2, dtype=np.uint32)
    return int(state[0]) | int(state[1]) << 32


def stream(seed: int, *names: object) -> np.random.Generator:
    """The random generator of one estimate (:func:`derived_seed`): an estimate drawn from it depends on its own
    data and seed only, not on which other estimates are computed beside it or in which order."""
    return np.random.default_rng(derived_seed(seed, *names))


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


def _piles(passed_pile, failed_pile, failed_weights) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The two piles and the failed pile's weights as float arrays; both piles need a row, and the failed pile
    one weight per row."""
    x = np.asarray(passed_pile, dtype=float)
    y = np.asarray(failed_pile, dtype=float)
    w = np.asarray(failed_weights, dtype=float)
    if x.size == 0 or y.size == 0:
        raise ValueError("both piles need at least one row")
    if w.shape != y.shape:
        raise ValueError(f"the failed pile has {y.size} rows but {w.size} weights")
    return x, y, w


def pile_shares(passed_pile: np.ndarray, failed_pile: np.ndarray, failed_weights: np.ndarray) -> tuple[float, float]:
    """(a, b) from the rater's 0/1 verdicts on each pile; b weighted."""
    passed_pile = np.asarray(passed_pile, dtype=float)
    failed_pile = np.asarray(failed_pile, dtype=float)
    w = np.asarray(failed_weights, dtype=float)
    a = float(passed_pile.mean()) if passed_pile.size else float("nan")
    b = float((failed_pile * w).sum() / w.sum()) if w.sum() > 0 else float("nan")
    return a, b


@dataclass(frozen=True)
class BootstrapCorrection:
    """Percentile intervals of theta, q1 and q0 from resampling each pile with replacement, p fixed."""

    point: Correction
    theta_ci: tuple[float, float]
    q1_ci: tuple[float, float]
    q0_ci: tuple[float, float]
    n_resamples: int
    theta_samples: np.ndarray


def bootstrap_correction(
    p: float,
    passed_pile,
    failed_pile,
    failed_weights,
    *,
    n_resamples: int = 4000,
    confidence: float = 0.95,
    rng: np.random.Generator,
) -> BootstrapCorrection:
    """Vectorised bootstrap of the correction: ``n_resamples`` draws of each pile at once (weights travel
    with their rows). Undefined resampled values (q1 when theta = 0) are left out of that interval."""
    x, y, w = _piles(passed_pile, failed_pile, failed_weights)
    ix = rng.integers(0, x.size, size=(n_resamples, x.size))
    iy = rng.integers(0, y.size, size=(n_resamples, y.size))
    a = x[ix].mean(axis=1)
    ww = w[iy]
    b = _div((y[iy] * ww).sum(axis=1), ww.sum(axis=1))
    theta = corrected_rate(p, a, b)
    q1, q0 = sensitivity(p, a, b), specificity(p, a, b)
    alpha = (1 - confidence) / 2
    point = correct(p, *pile_shares(x, y, w))
    return BootstrapCorrection(
        point,
        percentile_interval(theta, alpha),
        percentile_interval(q1, alpha),
        percentile_interval(q0, alpha),
        n_resamples,
        theta,
    )


# The interval 03 reports by default: chosen in 08_coverage from the committed coverage grid (level-clustered
# simulator; `coverage.choose_interval`, tested against the file). Every default (03's parameter, `vocab coverage`)
# reads this one name.
DEFAULT_INTERVAL = "fiducial"


def jeffreys_correction(
    p: float,
    attempts: int,
    passed_pile,
    failed_pile,
    failed_weights,
    *,
    n_draws: int = 4000,
    confidence: float = 0.95,
    rng: np.random.Generator,
) -> BootstrapCorrection:
    """The correction with Jeffreys Beta(1/2, 1/2) posteriors for a, b and p, sampled and propagated to
    theta, q1 and q0 (equal-tailed intervals). The failed pile's weighted share b enters as b·n successes
    of its n rows; p as the critic's passes among ``attempts``. An interval is widened, where needed, to hold
    the point estimate (at 0 of n the equal-tailed interval would start just above 0). Under-covers on the
    level-clustered grid where the default (:data:`DEFAULT_INTERVAL`) holds (08)."""
    x, y, w = _piles(passed_pile, failed_pile, failed_weights)
    a_hat, b_hat = pile_shares(x, y, w)
    kp = round(p * attempts)
    a = rng.beta(a_hat * x.size + 0.5, (1 - a_hat) * x.size + 0.5, size=n_draws)
    b = rng.beta(b_hat * y.size + 0.5, (1 - b_hat) * y.size + 0.5, size=n_draws)
    ps = rng.beta(kp + 0.5, attempts - kp + 0.5, size=n_draws)
    theta = corrected_rate(ps, a, b)
    alpha = (1 - confidence) / 2
    point = correct(p, a_hat, b_hat)
    return BootstrapCorrection(
        point,
        holding(point.theta, theta, alpha),
        holding(point.q1, sensitivity(ps, a, b), alpha),
        holding(point.q0, specificity(ps, a, b), alpha),
        n_draws,
        theta,
    )


def holding(value: float, samples, alpha: float = 0.025) -> tuple[float, float]:
    """The equal-tailed percentile interval of ``samples``, widened where needed to hold the point estimate
    ``value``: Brown, Cai and DasGupta's boundary rule, generalised. At 0 of n an interval from draws starts just
    above 0 while the estimate is 0; for theta the fiducial draws are 0 only when both piles' draws are (a
    probability v_a·v_b), so without the rule the interval excluded a true rate of 0 in about 12 % of studies."""
    lo, hi = percentile_interval(samples, alpha)
    if np.isfinite(value) and np.isfinite(lo):
        lo, hi = min(lo, value), max(hi, value)
    return lo, hi


def binomial_cd_draws(
    k: np.ndarray, n: np.ndarray, v: np.ndarray, n_draws: int, rng: np.random.Generator
) -> np.ndarray:
    """Draws from the randomised confidence distribution of a binomial proportion, one row per (k, n, v).

    With k successes of n and a uniform v, H(x) = (1 − v)·I_x(k + 1, n − k) + v·I_x(k, n − k + 1): the
    randomised test's p-value as a function of the proportion x (Stevens 1950; Geyer and Meeden 2005's fuzzy
    intervals). Its equal-tailed quantiles are an exact interval for any true proportion. A draw is Beta(k, n − k
    + 1) with probability v, else Beta(k + 1, n − k); Beta(0, ·) is 0 and Beta(·, 0) is 1.
    """
    k, n, v = (np.asarray(x, dtype=float)[:, None] for x in (k, n, v))
    lower = rng.random((k.shape[0], n_draws)) < v
    a = np.where(lower, k, k + 1.0)
    b = np.where(lower, n - k + 1.0, n - k)
    with np.errstate(invalid="ignore"):
        x = rng.beta(np.maximum(a, 1e-300), np.maximum(b, 1e-300))
    return np.where(a <= 0, 0.0, np.where(b <= 0, 1.0, x))


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


def kish_rows(weights):
    """A weighted pile's effective number of rows, (Σw)² / Σw² (Kish): its rows when the weights are equal, fewer
    when they vary; 0 for an empty pile. Over the last axis, so an array of piles gives one value per pile."""
    w = np.asarray(weights, dtype=float)
    sq = (w**2).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sq > 0, w.sum(axis=-1) ** 2 / np.where(sq > 0, sq, 1.0), 0.0)


def fiducial_correction(
    p: float,
    attempts: int,
    passed_pile,
    failed_pile,
    failed_weights,
    *,
    level_passes=None,
    level_attempts=None,
    n_draws: int = 4000,
    confidence: float = 0.95,
    rng: np.random.Generator,
) -> BootstrapCorrection:
    """The correction with randomised binomial confidence distributions (:func:`binomial_cd_draws`) for a (its
    rows), the weighted b (on the failed pile's Kish effective rows) and p (on attempts / the design effect of
    the levels, when ``level_passes`` and ``level_attempts`` are given), sampled and propagated to theta, q1 and
    q0; equal-tailed intervals. 03's default interval: 08 chose it from the committed coverage grid (level-
    clustered attempts). The randomisation comes from ``rng``, so a seed gives the same interval every time;
    each interval holds its estimate (:func:`holding`: at a true rate of 0, unwidened, it covered 0 in 87 %)."""
    x, y, w = _piles(passed_pile, failed_pile, failed_weights)
    if attempts < 1 or not 0 <= p <= 1:
        raise ValueError(f"p must lie in [0, 1] over at least one attempt, got p = {p} over {attempts}")
    a_hat, b_hat = pile_shares(x, y, w)
    deff = 1.0 if level_passes is None else design_effect(level_passes, level_attempts)
    n_p, n_b = attempts / deff, float(kish_rows(w))

    def draws(share, n):
        return binomial_cd_draws([share * n], [n], [rng.random()], n_draws, rng)[0]

    a, b, ps = draws(a_hat, x.size), draws(b_hat, n_b), draws(p, n_p)
    alpha = (1 - confidence) / 2
    theta = corrected_rate(ps, a, b)
    point = correct(p, a_hat, b_hat)
    return BootstrapCorrection(
        point,
        holding(point.theta, theta, alpha),
        holding(point.q1, sensitivity(ps, a, b), alpha),
        holding(point.q0, specificity(ps, a, b), alpha),
        n_draws,
        theta,
    )


# The intervals 03 can report, the default first.
INTERVALS = tuple(dict.fromkeys((DEFAULT_INTERVAL, "fiducial", "jeffreys", "seed")))


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
    n_draws: int = 4000,
    confidence: float = 0.95,
    rng: np.random.Generator,
) -> BootstrapCorrection:
    """The corrected rate of one cell with its interval by ``method`` (one of :data:`INTERVALS`): ``fiducial``
    (:func:`fiducial_correction`, p over the levels' design effect when their counts are given), ``jeffreys``
    (:func:`jeffreys_correction`) or ``seed`` (seed 000's :func:`bootstrap_correction`, p fixed). The one entry
    point 03's tables use, for the overall verdict and for each check alike."""
    if method == "seed":
        return bootstrap_correction(p, passed_pile, failed_pile, failed_weights, n_resamples=n_draws,
                                    confidence=confidence, rng=rng)  # fmt: skip
    if method == "jeffreys":
        return jeffreys_correction(p, attempts, passed_pile, failed_pile, failed_weights, n_draws=n_draws,
                                   confidence=confidence, rng=rng)  # fmt: skip
    if method == "fiducial":
        return fiducial_correction(p, attempts, passed_pile, failed_pile, failed_weights, level_passes=level_passes,
                                   level_attempts=level_attempts, n_draws=n_draws, confidence=confidence,
                                   rng=rng)  # fmt: skip
    raise ValueError(f"unknown interval {method!r} (known: {', '.join(INTERVALS)})")


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


def percentile_interval(samples, alpha: float = 0.025) -> tuple[float, float]:
    s = np.asarray(samples, dtype=float)
    s = s[~np.isnan(s)]
    if s.size == 0:
        return (float("nan"), float("nan"))
    lo, hi = np.quantile(s, [alpha, 1 - alpha])
    return (float(lo), float(hi))


# --- agreement ---------------------------------------------------------------------------------------


def cohens_kappa(r1, r2) -> float:
    """Cohen's kappa of two raters' labels on the same items (any hashable labels)."""
    r1, r2 = np.asarray(r1), np.asarray(r2)
    if r1.shape != r2.shape or r1.size == 0:
        raise ValueError("two equal-length, non-empty label sequences are needed")
    labels = np.unique(np.concatenate([r1, r2]))
    po = float((r1 == r2).mean())
    pe = float(sum((r1 == lab).mean() * (r2 == lab).mean() for lab in labels))
    return float("nan") if pe == 1 else (po - pe) / (1 - pe)


@dataclass(frozen=True)
class KappaInterval:
    kappa: float
    ci_low: float
    ci_high: float
    n: int
    n_resamples: int


def kappa_bootstrap(r1, r2, *, n_resamples: int = 4000, confidence: float = 0.95, rng: np.random.Generator):
    """Cohen's kappa of two raters' 0/1 verdicts on the same rows, with a percentile bootstrap interval over
    rows (a resample where kappa is undefined, one verdict only, is left out of the quantiles)."""
    x, y = np.asarray(r1, dtype=int), np.asarray(r2, dtype=int)
    if x.shape != y.shape:
        raise ValueError("both raters must rate the same rows")
    idx = rng.integers(0, len(x), size=(n_resamples, len(x)))
    boot = np.array([cohens_kappa(x[j], y[j]) for j in idx])
    lo, hi = percentile_interval(boot, (1 - confidence) / 2)
    return KappaInterval(cohens_kappa(x, y), lo, hi, len(x), n_resamples)


def invert_flip_rate(share, error: float):
    """A pile share seen through a rater who flips each verdict with probability ``error``:
    ``share = truth·(1 - 2e) + e``, so the truth is ``(share - e) / (1 - 2e)``, clipped to [0, 1]. Works on
    floats, arrays and Series alike."""
    if not 0 <= error < 0.5:
        raise ValueError(f"a flip rate must lie in [0, 0.5), got {error}")
    return np.clip((share - error) / (1 - 2 * error), 0, 1)


def krippendorff_alpha_nominal(data) -> float:
    """Krippendorff's alpha for nominal data: ``data`` is raters × units (NaN where a rater did not rate a
    unit). From the coincidence matrix of pairable values: alpha = 1 - (n - 1) D_o / D_e. NaN when the data
    hold one value only (no expected disagreement)."""
    x = np.asarray(data, dtype=float)
    values = np.unique(x[~np.isnan(x)])
    counts = np.stack([(x == c).sum(axis=0) for c in values]).astype(float) if len(values) else np.zeros((0, 0))
    m = counts.sum(axis=0)
    ok = m >= 2  # only units rated at least twice hold pairable values
    weighted = counts[:, ok] / (m[ok] - 1)
    o = weighted @ counts[:, ok].T - np.diag(weighted.sum(axis=1))  # the coincidence matrix, all units at once
    n_c = o.sum(axis=1)
    n = n_c.sum()
    off = ~np.eye(len(values), dtype=bool)
    expected = (np.outer(n_c, n_c)[off]).sum()
    if n <= 1 or expected == 0:
        return float("nan")
    return float(1 - (n - 1) * o[off].sum() / expected)


def gwet_ac1(data, categories=(0.0, 1.0)) -> float:
    """Gwet's AC1 for nominal data: ``data`` is raters x units (NaN where a rater did not rate a unit).
    pa: the mean, over units with two or more ratings, of the share of agreeing rater pairs; pe: the chance
    agreement sum_k pi_k (1 - pi_k) / (q - 1), pi_k the mean share of category k per rated unit, q the number
    of ``categories`` (two verdicts). Unlike kappa it does not collapse when one verdict dominates."""
    x = np.asarray(data, dtype=float)
    cats = np.asarray(categories, dtype=float)
    counts = np.stack([(x == c).sum(axis=0) for c in cats])  # categories x units
    r = counts.sum(axis=0)
    rated, paired = r >= 1, r >= 2
    if not paired.any() or len(cats) < 2:
        return float("nan")
    pa = float(((counts[:, paired] * (counts[:, paired] - 1)).sum(axis=0) / (r[paired] * (r[paired] - 1))).mean())
    pi = (counts[:, rated] / r[rated]).mean(axis=1)
    pe = float((pi * (1 - pi)).sum() / (len(cats) - 1))
    return float((pa - pe) / (1 - pe)) if pe < 1 else float("nan")


@dataclass(frozen=True)
class AgreementInterval:
    value: float
    ci_low: float
    ci_high: float
    n_units: int
    n_resamples: int


def agreement_bootstrap(
    data, statistic, *, n_resamples: int = 4000, confidence: float = 0.95, rng: np.random.Generator
):
    """An agreement statistic of raters x units data (``krippendorff_alpha_nominal``, ``gwet_ac1``, ...) with a
    percentile bootstrap interval over units (resamples where it is undefined are left out)."""
    x = np.asarray(data, dtype=float)
    n = x.shape[1]
    idx = rng.integers(0, n, size=(n_resamples, n))
    boot = np.array([statistic(x[:, j]) for j in idx])
    lo, hi = percentile_interval(boot, (1 - confidence) / 2)
    return AgreementInterval(statistic(x), lo, hi, n, n_resamples)


def kappa_from_counts(n: int, pass_1: int, pass_2: int, agree: int) -> float:
    """Cohen's kappa for two binary raters from n, each rater's passes and the number of agreements."""
    both_pass2 = pass_1 + pass_2 - (n - agree)
    if both_pass2 % 2:
        raise ValueError("inconsistent counts")
    both_pass = both_pass2 // 2
    both_fail = agree - both_pass
    r1 = np.array([1] * both_pass + [1] * (pass_1 - both_pass) + [0] * (pass_2 - both_pass) + [0] * both_fail)
    r2 = np.array([1] * both_pass + [0] * (pass_1 - both_pass) + [1] * (pass_2 - both_pass) + [0] * both_fail)
    return cohens_kappa(r1, r2)


# --- ratings from pairwise judgments -----------------------------------------------------------------


@dataclass(frozen=True)
class BradleyTerry:
    players: tuple[str, ...]
    strengths: np.ndarray  # log-strengths, mean zero
    iterations: int
    converged: bool  # False: ``max_iter`` was reached before the change fell under ``tol``

    def ratings(self, scale: float = 400.0, base: float = 10.0, center: float = 1000.0) -> dict[str, float]:
        """Strengths on the Elo scale (a 400-point gap = 10:1 odds)."""
        return {p: center + scale * s / np.log(base) for p, s in zip(self.players, self.strengths, strict=True)}


def bradley_terry(pairs: list[tuple[str, str, float]], *, max_iter: int = 10_000, tol: float = 1e-10) -> BradleyTerry:
    """Maximum-likelihood Bradley–Terry fit from (i, j, score of i) with score 1, 0 or 0.5 (a tie counts as
    half a win for each side), by the MM algorithm of Hunter (2004). Players with no games are refused."""
    players = tuple(sorted({p for i, j, _ in pairs for p in (i, j)}))
    k = {p: n for n, p in enumerate(players)}
    m = len(players)
    wins = np.zeros(m)
    games = np.zeros((m, m))
    for i, j, s in pairs:
        if s not in (0, 0.5, 1):
            raise ValueError(f"a score must be 0, 0.5 or 1, got {s}")
        wins[k[i]] += s
        wins[k[j]] += 1 - s
        games[k[i], k[j]] += 1
        games[k[j], k[i]] += 1
    if np.any(wins <= 0) or np.any(wins >= games.sum(axis=1)):
        raise ValueError("every player needs at least some wins and some losses for a finite fit")
    pi = np.ones(m)
    converged = False
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        denom = (games / (pi[:, None] + pi[None, :])).sum(axis=1)
        new = wins / denom
        new /= np.exp(np.log(new).mean())
        converged = bool(np.max(np.abs(np.log(new) - np.log(pi))) < tol)
        pi = new
        if converged:
            break
    return BradleyTerry(players, np.log(pi), it, converged)


@dataclass(frozen=True)
class EloUpdate:
    """One game of sequential Elo: the ratings before it, i's expected and actual score, and i's change (j
    changes by minus it)."""

    i: str
    j: str
    before_i: float
    before_j: float
    expected_i: float
    score_i: float
    delta_i: float


def elo_updates(
    games: list[tuple[str, str, float]], *, k: float = 32.0, scale: float = 400.0, start: float = 1000.0
) -> list[EloUpdate]:
    """Sequential Elo over (i, j, score of i) games in the given order, game by game: every player starts at
    ``start``, the expectation uses the ratings before the game. Order matters."""
    r: dict[str, float] = {}
    out = []
    for i, j, s in games:
        ri, rj = r.setdefault(i, start), r.setdefault(j, start)
        e = 1.0 / (1.0 + 10 ** ((rj - ri) / scale))
        d = k * (s - e)
        out.append(EloUpdate(i, j, ri, rj, e, s, d))
        r[i], r[j] = ri + d, rj - d
    return out


def online_elo(
    games: list[tuple[str, str, float]], *, k: float = 32.0, scale: float = 400.0, start: float = 1000.0
) -> dict[str, float]:
    """The final ratings of :func:`elo_updates`."""
    r: dict[str, float] = {}
    for u in elo_updates(games, k=k, scale=scale, start=start):
        r[u.i], r[u.j] = u.before_i + u.delta_i, u.before_j - u.delta_i
    return r


@dataclass(frozen=True)
class BradleyTerryInterval:
    fit: BradleyTerry | None  # None when the data have no finite maximum-likelihood fit
    low: dict[str, float]  # percentile interval of each rating (Elo scale)
    high: dict[str, float]
    resamples: int
    failed: int  # resamples without a finite fit (a player with only wins or only losses), left out
    reason: str = ""


def bradley_terry_bootstrap(
    games: list[tuple[str, str, float]],
    *,
    groups: list[object] | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> BradleyTerryInterval:
    """The Bradley–Terry fit with percentile intervals from resampling ``groups`` (e.g. the level a game
    was played on, so both orders of a pair travel together; default: each game) with replacement."""
    try:
        fit = bradley_terry(games)
    except ValueError as e:
        return BradleyTerryInterval(None, {}, {}, 0, 0, str(e))
    keys = groups if groups is not None else list(range(len(games)))
    by_group: dict[object, list[tuple[str, str, float]]] = {}
    for g, game in zip(keys, games, strict=True):
        by_group.setdefault(g, []).append(game)
    names = sorted(by_group, key=str)
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float]] = {p: [] for p in fit.players}
    failed = 0
    for _ in range(n_resamples):
        pick = rng.integers(0, len(names), size=len(names))
        sample = [game for i in pick for game in by_group[names[i]]]
        try:
            b = bradley_terry(sample)
        except ValueError:
            failed += 1
            continue
        if b.players != fit.players:
            failed += 1
            continue
        for p, v in b.ratings().items():
            draws[p].append(v)
    alpha = (1 - level) / 2
    low = {p: float(np.quantile(v, alpha)) if v else float("nan") for p, v in draws.items()}
    high = {p: float(np.quantile(v, 1 - alpha)) if v else float("nan") for p, v in draws.items()}
    return BradleyTerryInterval(fit, low, high, n_resamples, failed)
