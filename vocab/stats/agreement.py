"""Agreement between raters: Cohen's kappa, Krippendorff's alpha and Gwet's AC1, with bootstrap intervals."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vocab.stats.intervals import percentile_interval


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
