"""The per-check audit (`03_correct`'s table, ``analysis/check_audit.csv``): per cell and rubric check, the critic's
pass rate on that check against a rater's, estimated from the stratified sample exactly as the correction estimates
the overall verdict (:mod:`vocab.estimates.correct`), with Bonferroni over a cell's checks."""

from __future__ import annotations

import pandas as pd

from vocab import stats
from vocab.datasets.dataset import JudgeRubric
from vocab.estimates.correct import INTERVALS, _cell, _estimate, cell_counts
from vocab.raters.raters import rubric_of
from vocab.sampling.sample import CalibrationError


def check_audit(
    attempts: pd.DataFrame,
    key: pd.DataFrame,
    ratings: pd.DataFrame,
    *,
    rater: str,
    n_boot: int = stats.N_DRAWS,
    seed: int = 0,
    family_alpha: float = 0.05,
    interval: str = stats.DEFAULT_INTERVAL,
    rubric: JudgeRubric | None = None,
    population: str = stats.DEFAULT_POPULATION,
) -> pd.DataFrame:
    """Per cell and rubric check: the critic's pass rate on that check over all logged attempts, against the
    rater's, estimated from the stratified sample exactly as the correction estimates the overall verdict (the
    same function, :func:`vocab.stats.correction_interval`, the check's 0/1 verdicts in place of the overall
    ones), with the ``interval`` method at 1 - family_alpha / (checks tested): Bonferroni over the checks of a
    cell, widened where needed to hold the rater's estimate. ``carries_error``: the critic's rate lies outside
    the rater's interval. Checks the rater left empty are skipped. Each (rater, cell, check) draws from its own
    stream (``seed`` and its own data, never a name: :func:`vocab.estimates.correct._estimate`). ``rubric``: the
    dataset's (by default inferred from the ratings' columns); a criterion's critic verdict is read from each
    attempt's ``checks``.
    """
    if interval not in INTERVALS:
        raise CalibrationError(f"unknown interval {interval!r} (known: {', '.join(INTERVALS)})")
    rubric = rubric or rubric_of(ratings)
    rated = ratings.set_index("blind_id")
    rows = []
    counts = cell_counts(attempts)
    for cell in sorted(key.cell.unique()):
        c = _cell(counts, key, cell, rated.index, population)
        if c is None:
            continue
        ids = c.passed_ids.append(c.failed_ids)
        if c.strata is not None:
            ids = pd.Index([i for pile in c.strata for stratum, _ in pile for i in stratum])
        checks = [cr for cr in rubric.criteria if rated.loc[ids, cr.column].notna().all()]
        level = 1 - family_alpha / max(len(checks), 1)
        att = attempts[attempts.cell == cell]
        for crit in checks:
            critic_rate = float(att.checks.map(lambda x, i=crit.id: x.get(i) == "PASSED").mean())
            verdicts = rated[crit.column].eq("PASSED").astype(float)
            bs = _estimate(c, verdicts, interval, n_boot, level, seed=seed, name="check_audit")
            # widened to hold the rater's own estimate where a randomised interval leaves it out (at a unanimous
            # pile it may): a critic that agrees with the rater's estimate exactly never carries an error
            est = bs.point.theta
            lo, hi = min(bs.theta_ci[0], est), max(bs.theta_ci[1], est)
            rows.append(
                {
                    "cell": cell,
                    "check": int(crit.id) if crit.id.isdigit() else crit.id,
                    "name": crit.name,
                    "kind": crit.kind,
                    "critic_rate": critic_rate,
                    "rater_rate": est,
                    "low": lo,
                    "high": hi,
                    "level": level,
                    "gap_points": 100 * (critic_rate - est),
                    "carries_error": bool(critic_rate < lo or critic_rate > hi),
                }
            )
    return pd.DataFrame(rows, columns=AUDIT_COLUMNS)


AUDIT_COLUMNS = [
    "cell",
    "check",
    "name",
    "kind",
    "critic_rate",
    "rater_rate",
    "low",
    "high",
    "level",
    "gap_points",
    "carries_error",
]
