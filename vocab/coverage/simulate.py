"""A simulator of the study, to measure what its corrected-rate interval is worth.

Ground truth: a writer whose attempts are good with probability ``theta``; a critic with sensitivity
``q1`` and specificity ``q0``, so it passes an attempt with probability p = theta·q1 + (1 − theta)(1 − q0).
One simulated study logs ``attempts`` attempts, draws ``piles`` rows from the critic-passed and from the
critic-failed attempts, has a blind rater re-grade them (perfect, or wrong with probability
``rater_error``), and computes theta and its interval. Everything is vectorised over studies and
seeded through a passed generator.

Methods: the report's intervals (:mod:`vocab.stats.intervals`: ``fiducial``, 03's default; ``jeffreys``; ``seed``,
seed 000's bootstrap with p fixed; ``ppi``), the same code and draws the report uses, on unweighted piles with
independent attempts; and ``attempt-boot``, seed 000's bootstrap with the attempts behind p resampled too
(p* = Binomial(N, p)/N).

The target depends on the population (:data:`vocab.stats.POPULATIONS`, ``vocab coverage --population``): for
``finite`` (the report's default) each study's own share of good attempts, the intervals with p known and each pile
the finite set of its attempts (:func:`study_piles`), as the report and ``vocab plan`` compute them; for
``superpopulation`` the writer's rate ``theta``, the piles drawn as infinite (seed 000's question).

Coverage, mean width and bias are reported over the studies whose estimate is defined (both piles non-empty).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from vocab import stats
from vocab.stats import Piles

METHODS = ("seed", "attempt-boot", "jeffreys", "ppi", "fiducial")


@dataclass(frozen=True)
class Studies:
    p: np.ndarray  # (S,) the critic's observed pass rate
    passed: np.ndarray  # (S, n) the rater's verdict (1 pass) on the passed pile; nan where the pile ran short
    failed: np.ndarray  # (S, n) the same for the failed pile
    defined: np.ndarray  # (S,) both piles non-empty
    attempts: int = 0  # N, the attempts behind p
    truth: np.ndarray | None = None  # (S,) the study's own share of good attempts (the finite population's theta)


def _pile(good: np.ndarray, member: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """For each study, up to n members drawn without replacement; the truth of each drawn row (nan pads)."""
    s, big_n = good.shape
    keys = rng.random((s, big_n)) + (~member) * 2.0  # members first, in random order
    idx = np.argsort(keys, axis=1)[:, :n]
    vals = np.take_along_axis(good, idx, axis=1).astype(float)
    ok = np.take_along_axis(member, idx, axis=1)
    vals[~ok] = np.nan
    return vals


def sample_mask(pile: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Per study (a row), ``n`` members of the boolean ``pile`` drawn uniformly without replacement (all of it if
    fewer): a mask of the drawn ones (the slice and paired simulators draw vocab's piles with it)."""
    keys = rng.random(pile.shape) + (~pile) * 2.0
    idx = np.argsort(keys, axis=1)[:, :n]
    chosen = np.zeros(pile.shape, bool)
    np.put_along_axis(chosen, idx, True, axis=1)
    return chosen & pile


def padded_rows(values: np.ndarray, member: np.ndarray, width: int) -> np.ndarray:
    """Per study, the ``values`` at ``member`` moved to the front in their order and NaN-padded to ``width``
    columns: a pile as :class:`vocab.stats.Piles` holds it."""
    idx = np.argsort(~member, axis=1, kind="stable")[:, :width]
    out = np.take_along_axis(values.astype(float), idx, axis=1)
    out[~np.take_along_axis(member, idx, axis=1)] = np.nan
    return out


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
    return Studies(p, passed, failed, defined, attempts, good.mean(axis=1))


def finite_totals(p: np.ndarray, attempts: float) -> tuple[np.ndarray, np.ndarray]:
    """Each pile's rows in all for the finite population of unweighted, independent attempts: the critic's passes
    and its failures."""
    passes = np.round(np.asarray(p, dtype=float) * attempts)
    return passes, attempts - passes


def study_piles(st: Studies, population: str = stats.SUPERPOPULATION) -> Piles:
    """The studies' piles as :mod:`vocab.stats.intervals` takes them: unweighted, independent attempts (design
    effect 1); for the finite population with each pile's rows in all (:func:`finite_totals`)."""
    s = len(st.p)
    totals = finite_totals(st.p, float(st.attempts)) if population == stats.FINITE else (None, None)
    return Piles(
        st.p,
        np.full(s, float(st.attempts)),
        st.passed,
        st.failed,
        (~np.isnan(st.failed)).astype(float),
        np.ones(s),
        *totals,
    )


# each simulator method (this module's and the clustered simulator's): the interval of vocab.stats.intervals it is,
# and its model of p (None: the interval's own)
AS_INTERVAL = {
    "seed": ("seed", None),
    "attempt-boot": ("seed", "binomial"),
    "level-boot": ("seed", "levels"),
    "jeffreys": ("jeffreys", None),
    "jeffreys-cluster": ("jeffreys", "beta-deff"),
    "ppi": ("ppi", None),
    "fiducial": ("fiducial", None),
}


def piles_interval(method: str, piles: Piles, n_boot: int, rng: np.random.Generator, confidence: float = 0.95):
    """(estimate, low, high) per study of ``piles`` by ``method``, from :func:`vocab.stats.correction_intervals`."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r} (known: {', '.join(METHODS)})")
    name, p_model = AS_INTERVAL[method]
    r = stats.correction_intervals(name, piles, n_draws=n_boot, confidence=confidence, rng=rng, p_model=p_model)
    return r.theta, r.low, r.high


def interval(
    method: str,
    st: Studies,
    n_boot: int,
    rng: np.random.Generator,
    confidence: float = 0.95,
    population: str = stats.SUPERPOPULATION,
):
    """(estimate, low, high) per study by ``method``, from :func:`vocab.stats.correction_intervals` (the report's
    intervals), for ``population`` (:func:`study_piles`)."""
    return piles_interval(method, study_piles(st, population), n_boot, rng, confidence)


@dataclass(frozen=True)
class Coverage:
    method: str
    coverage: float
    mean_width: float
    bias: float
    sims: int
    defined: int
    population: str | None = None  # what it aimed at (vocab.stats.POPULATIONS), where the simulator says

    def as_dict(self) -> dict:
        return {
            k: (round(v, 6) if isinstance(v, float) else v)
            for k, v in self.__dict__.items()
            if v is not None or k != "population"
        }


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
    population: str = stats.DEFAULT_POPULATION,
) -> None:
    """The parameters of :func:`coverage`, validated: ValueError naming the first one out of range."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r} (known: {', '.join(METHODS)})")
    if population not in stats.POPULATIONS:
        raise ValueError(f"unknown population {population!r} (known: {', '.join(stats.POPULATIONS)})")
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


class SimulationSizeError(ValueError):
    """A simulation past the sizes one may hold (:func:`check_sizes`)."""


def check_sizes(*, sims: int, n_boot: int, attempts: int, piles: int) -> None:
    """A simulation's sizes, bounded before any array is made (so memory stays under 1 GiB): ValueError naming
    the product past its bound."""
    for what, size, bound in (
        ("sims x n_boot", sims * n_boot, MAX_DRAWS),
        ("sims x attempts", sims * attempts, MAX_ROWS),
        ("sims x piles", sims * piles, MAX_ROWS),
    ):
        if size > bound:
            raise SimulationSizeError(f"{what} is {size:,}, over the {bound:,} one simulation may hold; use fewer")


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
    population: str = stats.DEFAULT_POPULATION,
) -> Coverage:
    """``method``'s coverage, mean width and bias over ``sims`` simulated studies of the point. ``population``: what
    the interval aims at and is measured against (the finite population, the report's default: each study's own
    share of good attempts; the superpopulation: ``theta``)."""
    check_point(
        method,
        theta=theta,
        q1=q1,
        q0=q0,
        attempts=attempts,
        piles=piles,
        sims=sims,
        seed=seed,
        n_boot=n_boot,
        rater_error=rater_error,
        population=population,
    )
    rng = np.random.default_rng(seed)  # the simulator's stream (not stats.stream: it would move every grid point)
    st = simulate_studies(theta, q1, q0, attempts, piles, sims, rng, rater_error)
    est, lo, hi = interval(method, st, n_boot, rng, population=population)
    c = coverage_of(method, est, lo, hi, st.truth if population == stats.FINITE else theta, st.defined)
    return replace(c, population=population)


TOLERANCE = 1e-9  # a finite population labelled whole has an interval of width 0 at its own share, up to rounding


def holds(lo, hi, target) -> np.ndarray:
    """Whether each interval holds its target, up to :data:`TOLERANCE`: an interval of width 0 at a finite
    population's own share (every row of both piles labelled) holds it, however the share's sum was rounded."""
    return (lo <= target + TOLERANCE) & (target <= hi + TOLERANCE)


def coverage_of(method: str, est, lo, hi, target, defined) -> Coverage:
    """Coverage (:func:`holds`), mean width and bias over the studies where the estimate is defined; ``target`` one
    number, or each study's own (the finite population's truth)."""
    d = np.asarray(defined)
    nan = float("nan")
    target = np.broadcast_to(np.asarray(target, dtype=float), np.shape(est))[d]
    covered = holds(lo[d], hi[d], target)
    return Coverage(
        method,
        float(covered.mean()) if d.any() else nan,
        float((hi[d] - lo[d]).mean()) if d.any() else nan,
        float((est[d] - target).mean()) if d.any() else nan,
        len(d),
        int(d.sum()),
    )
