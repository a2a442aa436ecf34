"""What the corrected rates would be under what the data cannot show: a rater that flips verdicts at its error
against the script (:func:`invert_rater_error`, :func:`inverted_rater_error_table`) and units lost before a verdict
all failed or all passed (:func:`abandoned_bounds`). Sensitivity analyses of the correction table
(:mod:`vocab.estimates.correct`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from vocab import stats
from vocab.estimates.correct import corrected
from vocab.layout import RunDir
from vocab.raters.raters import rater_error_vs_script


def invert_rater_error(correction: pd.DataFrame, error: float) -> pd.Series:
    """theta with each pile share inverted for a rater that flips verdicts at rate ``error``:
    share -> (share - e) / (1 - 2e), clipped to [0, 1]. A sensitivity analysis: it assumes the rater errs at
    the same rate on every check, which its error on checks 2 and 3 does not show. ``error`` outside [0, 0.5)
    cannot be inverted: ValueError, as :func:`vocab.stats.invert_flip_rate`."""
    a, b = stats.invert_flip_rate(correction.a, error), stats.invert_flip_rate(correction.b, error)
    p = correction.p
    # a pile whose weight p (or 1 - p) is 0 has no share to invert (its placeholder's is NaN): its term is 0
    passed_term = (p * a).where(p > 0, 0.0)
    failed_term = ((1 - p) * b).where(p < 1, 0.0)
    return (passed_term + failed_term).rename("theta_if_inverted")


def inverted_rater_error_table(run_dir, correction: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per LLM or human rater of a rated run: its disagreement with the script on checks 2 and 3 (the only
    error measurable here) and the corrected theta if every pile share were inverted for that error rate
    (:func:`invert_rater_error`; a sensitivity analysis). ``correction``: the correction table (by default the
    report's, :func:`corrected`: the library reads no table a notebook wrote). Without a script rater (an imported
    dataset) there is nothing to measure the error against: empty."""

    layout = RunDir(run_dir)
    if not layout.script_ratings.exists():
        return pd.DataFrame(columns=["rater", "cell", "theta", "error_vs_script", "theta_if_inverted"])
    script = pd.read_csv(layout.script_ratings, dtype=str)
    corr = corrected(run_dir).table if correction is None else correction
    rows = []
    for f in layout.ratings_files():
        name = RunDir.rater_of(f)
        if name == "script":
            continue
        e = rater_error_vs_script(pd.read_csv(f, dtype=str), script)
        mine = corr[corr.rater == name].reset_index(drop=True)
        # a rater that disagrees with the script on half the checks or more (or rated none of them) cannot be
        # inverted: nan, said so by the error column beside it
        inverted = invert_rater_error(mine, e) if 0 <= e < 0.5 else pd.Series(np.nan, index=mine.index)
        rows.append(mine[["rater", "cell", "theta"]].assign(error_vs_script=e, theta_if_inverted=inverted))
    return pd.concat(rows, ignore_index=True)


def abandoned_bounds(correction: pd.DataFrame, data) -> pd.DataFrame:
    """Per rater variant and cell: how many units were lost before a verdict — a run's abandoned levels (an
    infrastructure fault or an unparsable answer), an imported dataset's unscored items; never counted as a
    FAIL — and the corrected rate if every lost unit had failed (a level: its remaining attempts, up to the
    loop's budget, all failed) or had passed (its next attempt passed), with the interval's ends moved the same
    way (:func:`vocab.stats.lost_attempt_bounds`). ``data``: the :class:`~vocab.datasets.dataset.Dataset`."""
    lost_by_cell = data.lost().set_index("cell")
    rows = []
    for r in correction.itertuples():
        n = int((data.attempts.cell == r.cell).sum()) if data.items is None else int(data.cells.attempts[r.cell])
        n_lost = int(lost_by_cell.lost.get(r.cell, 0))
        failed_if = int(lost_by_cell.failed_if.get(r.cell, 0))
        point = stats.lost_attempt_bounds(r.theta, n, failed_if, n_lost)
        rows.append(
            {
                "rater": r.rater,
                "cell": r.cell,
                "attempts": n,
                data.lost_label: n_lost,
                "theta": r.theta,
                "theta_if_failed": point.low,
                "theta_if_passed": point.high,
                "ci_low_if_failed": stats.lost_attempt_bounds(r.ci_low, n, failed_if, n_lost).low,
                "ci_high_if_passed": stats.lost_attempt_bounds(r.ci_high, n, failed_if, n_lost).high,
            }
        )
    return pd.DataFrame(rows)
