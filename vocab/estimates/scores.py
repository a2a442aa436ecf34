"""The judge's score against people's verdicts: a calibration curve, and the threshold that would match them.

Many judges log a number beside their verdict (a 1–10 grade, a probability, a reward); the importers keep it in each
item's hidden fields (a table's ``score`` column, promptfoo's ``gradingResult.score``, DeepEval's metric score,
Inspect's numeric ``Score.value``, MLflow's numeric feedback value), never on the blind sheet. With people's verdicts
of the sampled items:

- the **curve**: people's pass share at each score the sample holds, fitted non-decreasing in the score (isotonic
  regression, pool-adjacent-violators, weighted by the rows at each score), with a simultaneous 95 % band for the
  true share at every score at once (:func:`monotone_band`: exact intervals shared out over the scores, bounded by
  the curve's monotonicity; ``benchmarks/results/score_band.json``). The sample is drawn by the judge's verdict, which
  the score decides (and, drawn by score bands, by bands that never split a score), so people's pass share *at a
  score* is not bent by the sampling.
- the **threshold**: the score t at which "t or more passes" would pass the share of the cell's scored items
  nearest the corrected share θ (every item's score counted), beside the judge's own verdicts' rate p.

Without scores (a Vocabscapes run; a source that logs none) there is nothing here and the report says nothing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vocab.datasets.items import SCORE_SQL  # noqa: F401 (importable here: the score an item gives, read in the store)
from vocab.sampling.strata import SCORE, sample_strata


def sample_scores(data, key: pd.DataFrame) -> pd.Series:
    """The judge's score of each sampled row (by blind id; NaN where it gave none). Empty for a run, or a dataset
    whose items are not stored for queries."""
    items = getattr(data, "items", None)
    if data.kind == "run" or items is None or not hasattr(items, "con") or key.empty:
        return pd.Series(dtype=float)
    places = [f"{c}\x1f{lv}\x1f{a}" for c, lv, a in zip(key.cell, key.level.astype(str), key.attempt, strict=True)]
    by_place = items.scores_at(places)
    return pd.Series([by_place.get(p, np.nan) for p in places], index=key.blind_id.astype(str), dtype=float)


def threshold(data, cell: str, theta: float) -> tuple[float, float]:
    """The score t whose "t or more passes" passes the share of the cell's scored items nearest ``theta`` (a tie to
    the higher t), and that share; (NaN, NaN) without scores."""
    got = data.items.score_shares(cell)
    if not got:
        return float("nan"), float("nan")
    t, share = min(got, key=lambda r: (abs(float(r[1]) - theta), -float(r[0])))
    return float(t), float(share)


def isotonic(x, y, w=None) -> np.ndarray:
    """The non-decreasing least-squares fit of ``y`` on sorted, distinct ``x`` (weights ``w``)."""
    from scipy.optimize import isotonic_regression

    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    return isotonic_regression(np.asarray(y, dtype=float), weights=w, increasing=True).x


def monotone_band(rows, passes, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """A simultaneous band for a non-decreasing pass share over the scores in order (``rows`` rated rows at each,
    ``passes`` of them passing): each score's exact (Clopper–Pearson) interval at level 1 − α/L (Bonferroni over the
    L scores), then each lower end raised to the highest lower end at or below its score and each upper end lowered
    to the lowest upper end at or above it. When every score's interval holds its share, the monotone curve lies in
    the band at every score at once, so the band holds with probability at least ``confidence``."""
    from scipy.stats import beta

    n, k = np.asarray(rows, dtype=float), np.asarray(passes, dtype=float)
    alpha = (1 - confidence) / max(len(n), 1)
    with np.errstate(invalid="ignore"):
        lo = np.where(k > 0, beta.ppf(alpha / 2, np.maximum(k, 1e-300), n - k + 1), 0.0)
        hi = np.where(k < n, beta.ppf(1 - alpha / 2, k + 1, np.maximum(n - k, 1e-300)), 1.0)
    return np.maximum.accumulate(lo), np.minimum.accumulate(hi[::-1])[::-1]


def curve(scores: pd.Series, people: pd.Series, confidence: float = 0.95) -> pd.DataFrame:
    """People's pass share at each score (``scores``, ``people``: 0/1, both by blind id), its isotonic fit and a
    simultaneous band for the true pass share at every score (:func:`monotone_band`, widened where needed to hold
    the fit); one row per distinct score."""
    both = pd.DataFrame({"score": scores, "people": people}).dropna()
    if both.empty:
        return pd.DataFrame(columns=["score", "rows", "people_pass", "fit", "fit_low", "fit_high"])
    g = both.groupby("score").people.agg(["size", "sum", "mean"]).sort_index()
    xs = g.index.to_numpy(dtype=float)
    fit = isotonic(xs, g["mean"], g["size"])
    lo, hi = monotone_band(g["size"], g["sum"], confidence)
    return pd.DataFrame(
        {
            "score": xs,
            "rows": g["size"].to_numpy(),
            "people_pass": g["mean"].to_numpy(),
            "fit": fit,
            "fit_low": np.fmin(lo, fit),
            "fit_high": np.fmax(hi, fit),
        }
    )


def curve_refused(run_dir) -> str | None:
    """Why the report draws no score curve for this sample (None: it does): rows drawn by strata of a column were
    drawn at different rates within a score, so people's pass share at a score is not read from them."""

    by = sample_strata(run_dir)
    if by is None or by == SCORE:
        return None
    return (
        f"The judge logged a score, but the sample was drawn by strata of {by}: the rows at one score were drawn at "
        "different rates, so people's pass share at a score is not read from them (a sample drawn per pile, or by "
        "--strata score, gives the curve)."
    )
