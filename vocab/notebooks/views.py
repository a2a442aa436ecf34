"""Tables as a reader reads them: the answer first (the cell as ``writer → critic``, the rate or difference with
its interval as one column, resolved or not), narrow enough for a laptop's 1366 px. The raw frames, with their
storage keys and every number, are what the notebooks save; these are what they show."""

from __future__ import annotations

import pandas as pd

from vocab.datasets.items import cell_label

__all__ = ["cell_label", "pairs_view", "rates_view", "self_preference_view"]


def _pct(x: float) -> str:
    return "–" if pd.isna(x) else f"{100 * x:.1f} %"


def _with(est: float, lo: float, hi: float, unit: str = "%") -> str:
    if pd.isna(est):
        return "undefined"
    if unit == "%":
        return f"{100 * est:.1f} ({100 * lo:.1f}–{100 * hi:.1f})"
    return f"{100 * est:+.0f} [{100 * lo:+.0f}, {100 * hi:+.0f}]"


def rates_view(corr: pd.DataFrame) -> pd.DataFrame:
    """A correction table as read: per cell and rater, the judge's own rate, the corrected rate, q1 and q0, each
    with its 95 % interval (in %), and the flags."""
    return pd.DataFrame(
        {
            "cell": [cell_label(c) for c in corr.cell],
            "rater": corr.rater,
            "judge %": [_pct(p).removesuffix(" %") for p in corr.p],
            "corrected % (95 %)": [_with(*v) for v in zip(corr.theta, corr.ci_low, corr.ci_high, strict=True)],
            "q1 %": [_with(*v) for v in zip(corr.q1, corr.q1_low, corr.q1_high, strict=True)],
            "q0 %": [_with(*v) for v in zip(corr.q0, corr.q0_low, corr.q0_high, strict=True)],
            "flags": corr["flags"].fillna(""),
        }
    ).reset_index(drop=True)


def pairs_view(pairs: pd.DataFrame) -> pd.DataFrame:
    """Comparisons as read, in points: the pair (b − a), the corrected difference and the critic's leniency gap
    with their 95 % intervals, the critic's own gap, and whether the difference is resolved."""
    return pd.DataFrame(
        {
            "rater": pairs.rater,
            "b − a": [f"{cell_label(b)} − {cell_label(a)}" for a, b in zip(pairs.a, pairs.b, strict=True)],
            "difference, pts": [
                _with(*v, unit="pts") for v in zip(pairs.difference, pairs.ci_low, pairs.ci_high, strict=True)
            ],
            "resolved": pairs.resolved,
            "judge's gap": [f"{100 * x:+.0f}" for x in pairs.raw_difference],
            "leniency gap, pts": [
                _with(*v, unit="pts")
                for v in zip(pairs.leniency_difference, pairs.leniency_ci_low, pairs.leniency_ci_high, strict=True)
            ],
        }
    ).reset_index(drop=True)


def self_preference_view(sp: pd.DataFrame) -> pd.DataFrame:
    """Self-preference as read, in points: each writer's own critic minus the other critic."""
    return pd.DataFrame(
        {
            "rater": sp.rater,
            "writer": sp.writer,
            "own critic − other, pts": [
                _with(*v, unit="pts") for v in zip(sp.difference, sp.ci_low, sp.ci_high, strict=True)
            ],
            "resolved": sp.resolved,
            "raw gap": [f"{100 * x:+.0f}" for x in sp.raw_gap],
            "leniency gap, pts": [
                _with(*v, unit="pts")
                for v in zip(sp.leniency_difference, sp.leniency_ci_low, sp.leniency_ci_high, strict=True)
            ],
        }
    ).reset_index(drop=True)
