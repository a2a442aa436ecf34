"""The judge's score against people's verdicts: a calibration curve, and the threshold that would match them.

Many judges log a number beside their verdict (a 1–10 grade, a probability, a reward); the importers keep it in each
item's hidden fields (a table's ``score`` column, promptfoo's ``gradingResult.score``, DeepEval's metric score,
Inspect's numeric ``Score.value``, MLflow's numeric feedback value), never on the blind sheet. With people's verdicts
of the sampled items:

- the **curve**: people's pass share at each score the sample holds, fitted non-decreasing in the score (isotonic
  regression, pool-adjacent-violators, weighted by the rows at each score), with a resampled spread from
  resampling the rated rows (each cell its own stream). The sample is drawn by the judge's verdict, which the score
  decides, so people's pass share *at a score* is not bent by the sampling.
- the **threshold**: the score t at which "t or more passes" would pass the share of the cell's scored items
  nearest the corrected share θ (every item's score counted), beside the judge's own verdicts' rate p.

Without scores (a Vocabscapes run; a source that logs none) there is nothing here and the report says nothing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vocab import stats
from vocab.datasets.items import SCORE_SQL

N_BOOT = 1000


def sample_scores(data, key: pd.DataFrame) -> pd.Series:
    """The judge's score of each sampled row (by blind id; NaN where it gave none). Empty for a run, or a dataset
    whose items are not stored for queries."""
    items = getattr(data, "items", None)
    if data.kind == "run" or items is None or not hasattr(items, "con") or key.empty:
        return pd.Series(dtype=float)
    places = [f"{c}\x1f{lv}\x1f{a}" for c, lv, a in zip(key.cell, key.level.astype(str), key.attempt, strict=True)]
    got = items.con.execute(
        f"SELECT cell || chr(31) || level || chr(31) || attempt::VARCHAR AS place, {SCORE_SQL} AS score "
        f"FROM {items.src} WHERE (cell || chr(31) || level || chr(31) || attempt::VARCHAR) IN "
        "(SELECT unnest(?::VARCHAR[]))",
        [places],
    ).df()
    by_place = dict(zip(got.place, got.score, strict=True))
    return pd.Series([by_place.get(p, np.nan) for p in places], index=key.blind_id.astype(str), dtype=float)


def threshold(data, cell: str, theta: float) -> tuple[float, float]:
    """The score t whose "t or more passes" passes the share of the cell's scored items nearest ``theta`` (a tie to
    the higher t), and that share; (NaN, NaN) without scores."""
    items = data.items
    got = items.con.execute(
        f"WITH s AS (SELECT {SCORE_SQL} AS s FROM {items.src} WHERE cell = ? AND verdict <> 'UNSCORED'), "
        "k AS (SELECT s, count(*) AS n FROM s WHERE s IS NOT NULL GROUP BY s) "
        "SELECT s, sum(n) OVER (ORDER BY s DESC) / sum(n) OVER () AS share FROM k ORDER BY s",
        [cell],
    ).fetchall()
    if not got:
        return float("nan"), float("nan")
    t, share = min(got, key=lambda r: (abs(float(r[1]) - theta), -float(r[0])))
    return float(t), float(share)


def isotonic(x, y, w=None) -> np.ndarray:
    """The non-decreasing least-squares fit of ``y`` on sorted, distinct ``x`` (weights ``w``)."""
    from scipy.optimize import isotonic_regression

    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    return isotonic_regression(np.asarray(y, dtype=float), weights=w, increasing=True).x


def curve(scores: pd.Series, people: pd.Series, seed: int = 0, cell: str = "", n_boot: int = N_BOOT) -> pd.DataFrame:
    """People's pass share at each score (``scores``, ``people``: 0/1, both by blind id), its isotonic fit and a
    resampled spread from resampling the rows; one row per distinct score."""
    both = pd.DataFrame({"score": scores, "people": people}).dropna()
    if both.empty:
        return pd.DataFrame(columns=["score", "rows", "people_pass", "fit", "fit_low", "fit_high"])
    g = both.groupby("score").people.agg(["size", "mean"]).sort_index()
    xs = g.index.to_numpy(dtype=float)
    fit = isotonic(xs, g["mean"], g["size"])
    rng = stats.stream(seed, "score-curve", cell)
    x, y = both.score.to_numpy(dtype=float), both.people.to_numpy(dtype=float)
    draws = np.empty((n_boot, len(xs)))
    for b in range(n_boot):
        i = rng.integers(0, len(x), len(x))
        r = pd.DataFrame({"x": x[i], "y": y[i]}).groupby("x").y.agg(["size", "mean"]).sort_index()
        f = isotonic(r.index, r["mean"], r["size"])
        draws[b] = np.interp(xs, r.index.to_numpy(dtype=float), f)  # flat beyond the resample's own scores
    lo, hi = np.quantile(draws, [0.025, 0.975], axis=0)
    return pd.DataFrame({"score": xs, "rows": g["size"].to_numpy(), "people_pass": g["mean"].to_numpy(),
                         "fit": fit, "fit_low": lo, "fit_high": hi})  # fmt: skip
