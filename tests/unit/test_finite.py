"""Finite piles (#65 item 1): theta as the share of the cell's own judged items, each pile the finite set it is.

The truth these tests hold an interval to is counted from a fixed table (its items' true labels), never worked out
with the interval's own rules."""

from __future__ import annotations

import numpy as np
import pytest

from tests.unit.test_bad_inputs import refused
from vocab import stats
from vocab.coverage.plan import plan
from vocab.stats import Piles, correction_intervals, finite_shares


def _table(seed: int, items: int = 300, theta: float = 0.4, q1: float = 0.8, q0: float = 0.85):
    """A fixed table: each item's true label and the judge's verdict."""
    rng = np.random.default_rng(seed)
    truth = rng.random(items) < theta
    verdict = np.where(truth, rng.random(items) < q1, rng.random(items) >= q0)
    return truth, verdict


def _audits(truth, verdict, per_pile: int, audits: int, seed: int, *, totals=None) -> Piles:
    """``audits`` audits of one table: ``per_pile`` rows drawn without replacement from each of its piles and
    labelled with the truth. ``totals`` (passed, failed): the piles' sizes as the interval is told them (default the
    table's own; None for the superpopulation)."""
    rng = np.random.default_rng(seed)
    passed, failed = np.flatnonzero(verdict), np.flatnonzero(~verdict)
    xs = np.stack([truth[rng.choice(passed, per_pile, replace=False)] for _ in range(audits)]).astype(float)
    ys = np.stack([truth[rng.choice(failed, per_pile, replace=False)] for _ in range(audits)]).astype(float)
    s = np.ones(audits)
    given = (len(passed), len(failed)) if totals == "table" else totals
    pt, ft = (None, None) if given is None else (s * given[0], s * given[1])
    return Piles(s * verdict.mean(), s * len(verdict), xs, ys, np.ones_like(ys), s, pt, ft)


def test_a_table_labelled_row_by_row_is_known_exactly():
    truth, verdict = _table(0, items=60)
    piles = Piles.one(verdict.mean(), 60, truth[verdict], truth[~verdict], np.ones((~verdict).sum()),
                      passed_total=verdict.sum(), failed_total=(~verdict).sum())  # fmt: skip
    iv = correction_intervals("fiducial", piles, n_draws=2000, rng=np.random.default_rng(1))
    share = truth.sum() / 60  # counted from the table
    assert iv.theta[0] == pytest.approx(share) and iv.low[0] == pytest.approx(share)
    assert iv.high[0] == pytest.approx(share)
    # the superpopulation still carries the binomial width of the same labels
    sp = Piles.one(verdict.mean(), 60, truth[verdict], truth[~verdict], np.ones((~verdict).sum()))
    iv = correction_intervals("fiducial", sp, n_draws=2000, rng=np.random.default_rng(1))
    assert iv.high[0] - iv.low[0] > 0.1


def test_the_finite_interval_covers_the_tables_own_rate_and_is_narrower():
    truth, verdict = _table(3)
    share = truth.mean()  # the table's own rate: what a finite interval aims at
    iv = correction_intervals("fiducial", _audits(truth, verdict, 40, 400, 4, totals="table"), n_draws=2000,
                              rng=np.random.default_rng(5))  # fmt: skip
    covered = np.mean((iv.low <= share) & (share <= iv.high))
    assert 0.92 <= covered <= 0.985, covered  # 400 audits: 0.95 ± 3 standard errors
    sp = correction_intervals("fiducial", _audits(truth, verdict, 40, 400, 4), n_draws=2000,
                              rng=np.random.default_rng(5))  # fmt: skip
    assert np.mean(iv.high - iv.low) < 0.92 * np.mean(sp.high - sp.low)


def test_a_pile_told_it_holds_only_its_labelled_rows_misses_the_tables_rate():
    # the check above can fail: an interval that takes 40 labelled rows for the whole pile has no width left
    truth, verdict = _table(3)
    iv = correction_intervals("fiducial", _audits(truth, verdict, 40, 400, 4, totals=(40, 40)), n_draws=2000,
                              rng=np.random.default_rng(5))  # fmt: skip
    assert np.mean((iv.low <= truth.mean()) & (truth.mean() <= iv.high)) < 0.5


def test_finite_shares_complete_each_pile_by_its_unlabelled_rows():
    rng = np.random.default_rng(0)
    values = np.array([[1.0, 0.0, 1.0, np.nan], [0.0, 0.0, np.nan, np.nan]])
    # a rate drawn as 1: every unlabelled row passes; a NaN total (an infinite pile) keeps its draws
    out = finite_shares(np.ones((2, 3)), values, np.array([10.0, np.nan]), rng)
    assert out[0].tolist() == [(2 + 7) / 10] * 3 and out[1].tolist() == [1.0] * 3
    out = finite_shares(np.zeros((2, 3)), values, np.array([3.0, 5.0]), rng)
    assert out[0].tolist() == [2 / 3] * 3 and out[1].tolist() == [0.0] * 3


def test_a_finite_pile_must_hold_its_labelled_rows():
    with pytest.raises(ValueError, match="3 labelled rows but 2 rows in all"):
        Piles.one(0.5, 10, [1, 0, 1], [0], [1], passed_total=2, failed_total=5)
    with pytest.raises(ValueError, match="2 labelled rows but 1 rows in all"):
        Piles.one(0.5, 10, [1], [0, 1], [2, 1], passed_total=5, failed_total=1)


def test_a_weighted_failed_pile_leaves_its_levels_other_failures_unknown():
    # two levels sampled from a pile of 5 failed attempts, one of them standing for 3: the labelled rows are two
    # attempts known, the other three (two of them the first level's) as unknown as any unlabelled one
    piles = Piles.one(0.5, 10, [1, 1, 1, 1, 1], [1.0, 1.0], [3.0, 1.0], passed_total=5, failed_total=5)
    iv = correction_intervals("fiducial", piles, n_draws=4000, rng=np.random.default_rng(0))
    b = (iv.draws[0] - 0.5 * 1.0) / 0.5  # the failed pile's completed share in each draw (a is known: 1)
    done = np.round(b * 5).astype(int)
    assert set(done) <= {2, 3, 4, 5} and np.mean(b < 1) > 0.05
    # a row pinning its level down (4 of the 5 known) would leave only 4 or 5: the first level's others are unknown
    assert np.mean(done <= 3) > 0.01


def test_the_planner_finds_a_small_cell_labelled_whole_reaches_a_tight_target():
    kw = {"theta": 0.5, "q1": 0.8, "q0": 0.9, "attempts": 30, "half_width": 0.02, "sims": 100, "n_boot": 200}
    finite = plan(**kw, population=stats.FINITE)
    assert finite.per_pile is not None and finite.half_width <= 0.02
    superpopulation = plan(**kw, population=stats.SUPERPOPULATION)
    assert superpopulation.per_pile is None and superpopulation.half_width > 0.1


@pytest.mark.parametrize("command", ["report", "gate", "compare", "plan", "audit"])
def test_an_unknown_population_is_one_line(command, tmp_path, capsys):
    refused([command, str(tmp_path), "--population", "everyone"], capsys, [tmp_path], "--population")


def test_finite_piles_keep_p_known_whatever_model_of_p_a_method_brings():
    """A simulator method's own model of p (attempt-boot's binomial, jeffreys-cluster's beta) is for the
    superpopulation: with finite piles p is every verdict seen, so the draws are those of p fixed."""
    truth, verdict = _table(7)
    finite = _audits(truth, verdict, 20, 50, 8, totals="table")
    superpopulation = _audits(truth, verdict, 20, 50, 8)

    def ends(piles, p_model):
        iv = correction_intervals("fiducial", piles, n_draws=500, rng=np.random.default_rng(9), p_model=p_model)
        return np.concatenate([iv.low, iv.high])

    for model in ("binomial", "beta-deff"):
        assert np.array_equal(ends(finite, model), ends(finite, None))
        assert not np.array_equal(ends(superpopulation, model), ends(superpopulation, None))
