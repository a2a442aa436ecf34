"""A simulator of the study, to measure what its corrected-rate interval is worth.

Ground truth: a writer whose attempts are good with probability ``theta``; a critic with sensitivity
``q1`` and specificity ``q0``, so it passes an attempt with probability p = theta·q1 + (1 − theta)(1 − q0).
One simulated study logs ``attempts`` attempts, draws ``piles`` rows from the critic-passed and from the
critic-failed attempts, has a blind rater re-grade them (perfect, or wrong with probability
``rater_error``), and computes seed 000's theta and its interval. Everything is vectorised over studies and
seeded through a passed generator.

Methods (intervals):

- ``seed`` — seed 000's: percentile bootstrap of each pile with p held fixed.

Coverage, mean width and bias are reported over the studies whose estimate is defined (both piles non-empty).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

METHODS = ("seed",)


@dataclass(frozen=True)
class Studies:
    p: np.ndarray  # (S,) the critic's observed pass rate
    passed: np.ndarray  # (S, n) the rater's verdict (1 pass) on the passed pile; nan where the pile ran short
    failed: np.ndarray  # (S, n) the same for the failed pile
    defined: np.ndarray  # (S,) both piles non-empty


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
    return Studies(p, passed, failed, defined)


def _nanmean_rows(x: np.ndarray) -> np.ndarray:
    """Row means ignoring padding; an empty pile gives nan (the study is then undefined)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(x, axis=-1)


def seed_interval(
    st: Studies, n_boot: int, rng: np.random.Generator, confidence: float = 0.95, chunk: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seed 000's estimate and percentile interval for every study: (theta_hat, low, high)."""
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
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r} (known: {', '.join(METHODS)})")
    for name, v in (("theta", theta), ("q1", q1), ("q0", q0), ("rater_error", rater_error)):
        if not 0 <= v <= 1:
            raise ValueError(f"{name} must lie in [0, 1], got {v}")
    for name, v in (("attempts", attempts), ("piles", piles), ("sims", sims), ("n_boot", n_boot)):
        if v < 1:
            raise ValueError(f"{name} must be positive, got {v}")
    rng = np.random.default_rng(seed)
    st = simulate_studies(theta, q1, q0, attempts, piles, sims, rng, rater_error)
    est, lo, hi = seed_interval(st, n_boot, rng)
    d = st.defined
    covered = (lo[d] <= theta) & (theta <= hi[d])
    return Coverage(
        method,
        float(covered.mean()) if d.any() else float("nan"),
        float((hi[d] - lo[d]).mean()) if d.any() else float("nan"),
        float(est[d].mean() - theta) if d.any() else float("nan"),
        sims,
        int(d.sum()),
    )


def coverage_grid(
    *,
    methods=METHODS,
    piles=(10,),
    thetas=(0.5,),
    q1s=(0.8,),
    q0s=(0.8,),
    attempts=(400,),
    sims: int = 2000,
    seed: int = 0,
    n_boot: int = 1000,
    rater_error: float = 0.0,
):
    """Coverage, width and bias over a grid (a pandas DataFrame, one row per point and method). Each point
    gets its own seed derived from ``seed`` and its position, so a point's result does not depend on which
    other points are in the grid."""
    import itertools

    import pandas as pd

    rows = []
    for method, n, th, a1, a0, big_n in itertools.product(methods, piles, thetas, q1s, q0s, attempts):
        point_seed = int(
            np.random.SeedSequence(
                [seed, n, round(th * 1000), round(a1 * 1000), round(a0 * 1000), big_n]
            ).generate_state(1)[0]
        )
        c = coverage(
            method,
            theta=th,
            q1=a1,
            q0=a0,
            attempts=big_n,
            piles=n,
            sims=sims,
            seed=point_seed,
            n_boot=n_boot,
            rater_error=rater_error,
        )
        rows.append(
            {
                "method": method,
                "piles": n,
                "theta": th,
                "q1": a1,
                "q0": a0,
                "attempts": big_n,
                "coverage": c.coverage,
                "mean_width": c.mean_width,
                "bias": c.bias,
                "sims": sims,
                "defined": c.defined,
            }
        )
    return pd.DataFrame(rows)
