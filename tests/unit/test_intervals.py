"""One implementation of each interval: what the simulator (and so the coverage grid and the planner) computes for a
study is, to the bit, what the report prints for the same piles and seed."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from vocab import stats
from vocab.calibration import draw_sample
from vocab.coverage.clustered import ClusteredStudies, clustered_interval, clustered_piles
from vocab.estimates import correction_table, variants
from vocab.estimates.correct import _cell, cell_content, cell_counts
from vocab.stats.exact import finite_intervals

from .test_calibration import synthetic_attempts


def _as_study(att: pd.DataFrame, key: pd.DataFrame, verdicts: pd.Series, cell: str) -> ClusteredStudies:
    """One cell of a sampled, rated run as the simulator holds a study: p over the cell's attempts, the levels'
    counts, the piles' verdicts (in the key's blind-id order) and the failed pile's weights."""
    a = att[att.cell == cell]
    levels = a.assign(passed=a.verdict.eq("PASSED")).groupby("level", sort=True).passed.agg(["sum", "size"])
    k = key[key.cell == cell].sort_values("blind_id")
    passed = verdicts.loc[k[k.pile == "passed"].blind_id].to_numpy(float)
    failed_rows = k[k.pile == "failed"]
    failed = verdicts.loc[failed_rows.blind_id].to_numpy(float)
    one = np.ones(1, bool)
    return ClusteredStudies(
        p=np.array([a.verdict.eq("PASSED").mean()]), attempts=np.array([len(a)]), passed=passed[None, :],
        failed=failed[None, :], weights=failed_rows.weight.to_numpy(float)[None, :],
        level_passes=levels["sum"].to_numpy()[None, :], level_attempts=levels["size"].to_numpy()[None, :],
        truth=np.full(1, np.nan), defined=one,
    )  # fmt: skip


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_the_simulator_computes_what_the_report_prints(seed):
    rng = np.random.default_rng(seed)
    att = synthetic_attempts(seed, levels=int(rng.integers(12, 40)))
    key = draw_sample(att, per_pile=int(rng.integers(3, 15)), seed=seed).key
    # a rater that disagrees with the critic on a share of rows that differs per study
    flip = rng.random(len(key)) < rng.uniform(0.05, 0.4)
    verdicts = pd.Series((key.critic_verdict.eq("PASSED") ^ flip).astype(float).to_numpy(), index=key.blind_id)
    ratings = {"r": pd.DataFrame({"blind_id": key.blind_id, "verdict": np.where(verdicts, "PASSED", "FAILED")})}
    for interval, population in itertools.product(stats.INTERVALS, stats.POPULATIONS):
        table = correction_table(att, key, variants(ratings, None), n_boot=300, seed=seed, interval=interval,
                                 population=population)  # fmt: skip
        assert len(table) == 4
        for row in table.itertuples():
            study = _as_study(att, key, verdicts, row.cell)
            # the report's streams for that row: the seed and the cell's own data
            content = cell_content(_cell(cell_counts(att), key, row.cell, verdicts.index, population), verdicts)
            rng = stats.data_stream(seed, "correction", interval, *content)
            v_rng = stats.randomisation(interval, *content)
            est, lo, hi = clustered_interval(interval, study, 300, rng, population=population, v_rng=v_rng)
            if (interval, population) == ("fiducial", stats.FINITE):
                # the report prints theta's ends computed exactly (vocab.stats.exact, checked against 300,000 draws in
                # test_exact.py) where the draws would estimate them: the same from the simulator's piles
                pl = clustered_piles(study, population)
                totals = (pl.passed_total[0], pl.failed_total[0])
                x, y = (v[0][~np.isnan(v[0])] for v in (pl.passed, pl.failed))
                w = pl.weights[0][~np.isnan(pl.failed[0])]
                again = stats.randomisation(interval, *content)
                r = (x.mean(), (w * y).sum() / w.sum())
                q1, q0 = stats.sensitivity(pl.p[0], *r), stats.specificity(pl.p[0], *r)
                exact = finite_intervals(pl.p[0], x, y, w, totals, again, (est[0], q1, q0))
                lo[0], hi[0] = exact["theta"]
            assert (est[0], lo[0], hi[0]) == (row.theta, row.ci_low, row.ci_high), (interval, population, row.cell)


def test_an_interval_of_one_study_does_not_depend_on_the_studies_beside_it_in_the_scalar_entry():
    """The report's entry point is the vectorised function with one study: the same numbers as calling that
    function directly, q1 and q0 included."""
    x, y, w = np.array([1, 1, 0, 1.0]), np.array([0, 1, 0.0]), np.array([1, 3, 2.0])
    one = stats.correction_interval("fiducial", 0.4, 50, x, y, w, n_draws=500, rng=np.random.default_rng(5))
    piles = stats.Piles.one(0.4, 50, x, y, w)
    many = stats.correction_intervals("fiducial", piles, n_draws=500, rng=np.random.default_rng(5), with_q=True)
    assert one.theta_ci == (many.low[0], many.high[0]) and one.q1_ci == (many.q1_low[0], many.q1_high[0])
    assert one.point.theta == pytest.approx(0.4 * 0.75 + 0.6 * (3 / 6))


def test_the_placeholder_pile_moves_no_printed_digit_where_the_committed_runs_have_one():
    """A critic that passed nothing (p = 0) has no PASSED pile; the correction gives it a placeholder row that p's
    weight 0 cancels in the estimate, but its share's draws still enter the interval's draws through p's. Measured
    on the committed cells that have one (reference-v1's gemma3 → gemma3, every rater variant, 411 attempts), with
    the same draws of b and p over five seeds: the interval with the placeholder's draws (checked to be the
    correction's own interval, draw for draw, to 1e-12) and with that share held at 0 (out of the draws) print the
    same three decimals (for the superpopulation; for the finite population p = 0 is known and the placeholder moves
    no draw at all)."""
    from pathlib import Path

    from vocab import calibration
    from vocab.estimates import correct
    from vocab.stats.intervals import binomial_cd_draws, holding_rows

    run = Path(__file__).resolve().parents[2] / "data" / "runs" / "reference-v1"
    data, key = calibration.load_dataset(run), calibration.read_key(run)
    raters = {
        f.stem.removeprefix("ratings_"): pd.read_csv(f, dtype=str) for f in (run / "calibration").glob("ratings_*")
    }
    script = raters.pop("script")
    cells = 0
    for variant, ok in correct.variants(raters, script, data.rubric).items():
        c = correct._cell(correct.cell_counts(data), key, "gemma3__gemma3", ok.index, stats.SUPERPOPULATION)
        if c is None or c.empty != "passed":
            continue
        # for the finite population p = 0 is known: every draw of p is 0, so the placeholder's share has weight 0 in
        # every draw of theta
        fin = correct._cell(correct.cell_counts(data), key, "gemma3__gemma3", ok.index, stats.FINITE)
        own = correct._estimate(fin, ok, "fiducial", 4000, 0.95, np.random.default_rng(0))
        assert np.isnan(fin.passed_total) and not own.p_samples.any(), variant
        cells += 1
        y, w = ok.loc[c.failed_ids].to_numpy(float), c.failed_weights
        b_hat, n_b = (y * w).sum() / w.sum(), float(stats.kish_rows(w))
        levels = correct.level_counts(data.attempts, "gemma3__gemma3")
        assert c.deff == stats.design_effect(levels.passes, levels.attempts)
        n_p = c.attempts / c.deff
        for seed in range(5):
            rng = np.random.default_rng(seed)
            a = binomial_cd_draws([0.0], [1.0], [rng.random()], 4000, rng)[0]  # the placeholder: 0 of 1 row
            b = binomial_cd_draws([b_hat * n_b], [n_b], [rng.random()], 4000, rng)[0]
            p = binomial_cd_draws([0.0], [n_p], [rng.random()], 4000, rng)[0]
            with_it = holding_rows([b_hat], (p * a + (1 - p) * b)[None, :], 0.025)
            without = holding_rows([b_hat], ((1 - p) * b)[None, :], 0.025)
            # the draws rebuilt here are the correction's own: its interval for the cell, from the same stream
            own = correct._estimate(c, ok, "fiducial", 4000, 0.95, np.random.default_rng(seed))
            # (to the last bits: the correction adds the two shares' draws in another order)
            assert own.theta_ci == pytest.approx((with_it[0][0], with_it[1][0]), rel=1e-12, abs=1e-15), (variant, seed)
            assert np.round(with_it, 3).tolist() == np.round(without, 3).tolist(), (variant, seed)
    assert cells == 4
