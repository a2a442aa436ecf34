"""Two judges on the same outputs: their sensitivity and specificity differences from the four verdict-pair strata,
bounded where a stratum holds outputs and no rated one (`vocab compare`, :mod:`vocab.estimates.paired`).

The outputs split by the two verdicts into PP, PF, FP and FF of known sizes N_h; tau_h is a stratum's share of
outputs people pass. With N the outputs and G = sum_h N_h tau_h the good ones::

    q1_b − q1_a = (N_FP tau_FP − N_PF tau_PF) / G
    q0_b − q0_a = (N_PF (1 − tau_PF) − N_FP (1 − tau_FP)) / (N − G)

A stratum with no rated output leaves its tau unknown anywhere in [0, 1]; what the census of verdicts knows still
bounds the differences: each is a ratio of functions linear in every tau, so over the box of the unknown taus it is
monotone in each and its least and greatest values sit at the box's corners. Per draw of the rated strata's taus the
bound is the least and greatest difference over those corners; the interval runs from the alpha quantile of the
least to the 1 − alpha quantile of the greatest (each end holds wherever the draws' percentile end does, whatever
the unknown taus are). With every stratum rated there is one corner and it is the percentile interval of the draws.
Two judges that disagree on few outputs have small PF and FP strata, often unrated, and a narrow bound: the share
of outputs they disagree on bounds how far their sensitivities and specificities can differ. The coverage is
measured by :func:`vocab.coverage.paired.paired_coverage` (``benchmarks/results/paired.json``).
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np

STRATA = ("PP", "PF", "FP", "FF")


def differences(sizes: dict, tau: dict) -> tuple[np.ndarray, np.ndarray]:
    """(q1_b − q1_a, q0_b − q0_a) from each stratum's size and share of good outputs (arrays that broadcast)."""
    good = sum(sizes[h] * tau[h] for h in STRATA)
    n = sum(sizes[h] for h in STRATA)
    with np.errstate(invalid="ignore", divide="ignore"):
        q1 = (sizes["FP"] * tau["FP"] - sizes["PF"] * tau["PF"]) / good
        q0 = (sizes["PF"] * (1 - tau["PF"]) - sizes["FP"] * (1 - tau["FP"])) / (n - good)
    return q1, q0


def bounded_differences(
    sizes: dict, draws: dict, alpha: float, points: dict | None = None
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per study, the ends of q1_b − q1_a and q0_b − q0_a: ``sizes`` each stratum's outputs ((S,) arrays),
    ``draws`` each stratum's draws of tau ((S, D); NaN rows where the stratum has outputs and no rated one). A
    corner's difference that is undefined (no good output at it, or no bad one) is left out of that draw's least
    and greatest; an end with no defined draw is NaN. ``points`` ({"q1": (S,), "q0": (S,)}): the estimates, where
    defined held inside their interval (:func:`~vocab.stats.intervals.holding_rows`' rule)."""
    n_ = {h: np.asarray(sizes[h], dtype=float)[:, None] for h in STRATA}
    unknown = {h: np.isnan(draws[h]).all(axis=1) & (n_[h][:, 0] > 0) for h in STRATA}
    free = [h for h in STRATA if unknown[h].any()]
    lows = {"q1": None, "q0": None}
    highs = {"q1": None, "q0": None}
    for corner in itertools.product((0.0, 1.0), repeat=len(free)):
        tau = {h: np.nan_to_num(draws[h], nan=0.0) for h in STRATA}  # an empty stratum's tau does not count
        for h, v in zip(free, corner, strict=True):
            tau[h] = np.where(unknown[h][:, None], v, tau[h])
        for name, d in zip(("q1", "q0"), differences(n_, tau), strict=True):
            lows[name] = d if lows[name] is None else np.fmin(lows[name], d)
            highs[name] = d if highs[name] is None else np.fmax(highs[name], d)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a study with no defined draw: NaN ends
        for name in ("q1", "q0"):
            lo, hi = np.nanquantile(lows[name], alpha, axis=1), np.nanquantile(highs[name], 1 - alpha, axis=1)
            if points is not None:  # an identified estimate inside its interval
                v = np.asarray(points[name], dtype=float)
                ok = np.isfinite(v) & np.isfinite(lo)
                lo, hi = np.where(ok, np.fmin(lo, v), lo), np.where(ok, np.fmax(hi, v), hi)
            out[name] = (lo, hi)
    return out
