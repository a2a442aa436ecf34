"""The corrected preferences of a pairwise judge (vocab.stats.pairwise): two classes are θ, draw for draw; three
classes against hand-worked shares and against the simulated truth's lattice."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vocab import stats
from vocab.estimates import correct
from vocab.stats.pairwise import PairPiles, pairwise_intervals, win_rate

ROOT = Path(__file__).resolve().parents[2]


def _as_pairwise(x, y, w, passed_total, failed_total) -> PairPiles:
    """θ's cell as a two-class pairwise cell: the passed pile the judge's B pile, the failed pile its A pile."""
    zeros = np.zeros(0)
    return PairPiles.make(
        (x, y, zeros), (np.zeros(len(x)), np.zeros(len(y)), zeros), (np.ones(len(x)), w, zeros),
        [passed_total, failed_total, 0], False,
    )  # fmt: skip


def test_two_classes_are_the_reference_runs_theta_draw_for_draw(monkeypatch):
    """Every (rater variant, cell) of the reference run's committed correction, recomputed by the pairwise
    function from the piles the correction handed to θ's interval and a generator in the same state: the same
    estimate, the same draws and the same ends, to the bit; and those are the committed report/corrected.csv's."""
    run = ROOT / "data" / "runs" / "reference"
    calls = []
    original = stats.correction_interval

    def capture(method, p, attempts, x, y, w, **kw):
        state = copy.deepcopy(kw["rng"].bit_generator.state)
        v_state = copy.deepcopy(kw["v_rng"].bit_generator.state)
        out = original(method, p, attempts, x, y, w, **kw)
        calls.append((p, x, y, w, kw, (state, v_state), out))
        return out

    monkeypatch.setattr(stats, "correction_interval", capture)
    table = correct.corrected(run).table
    committed = pd.read_csv(run / "report" / "corrected.csv")
    assert len(calls) == len(table) == len(committed) == 16
    for col in ("theta", "ci_low", "ci_high"):
        assert table[col].tolist() == committed[col].tolist(), col
    for p, x, y, w, kw, state, out in calls:
        piles = _as_pairwise(x, y, w, kw["passed_total"], kw["failed_total"])
        assert piles.judge_shares()[0, 0] == p
        rng, v_rng = np.random.default_rng(), np.random.default_rng()
        rng.bit_generator.state, v_rng.bit_generator.state = state
        r = pairwise_intervals(piles, n_draws=kw["n_draws"], rng=rng, v_rng=v_rng)
        assert np.array_equal(r.draws.b[0], out.theta_samples)
        assert (r.b.estimate[0], r.b.low[0], r.b.high[0]) == (out.point.theta, *out.theta_ci)
        # with two classes the win rate (either tie rule) is the share of B
        assert (r.win_rate_b.low[0], r.win_rate_b.high[0]) == out.theta_ci
        assert (r.win_rate_b_dropped.low[0], r.win_rate_b_dropped.high[0]) == out.theta_ci
    # every committed row was one of them
    assert sorted(round(o.point.theta, 12) for *_, o in calls) == sorted(committed.theta.round(12).tolist())


def test_shares_and_win_rates_by_hand():
    """One cell, counted by hand: the judge put 60 items in B, 30 in A, 10 in tie; people labelled
    B pile: b b b a tie (5), A pile: a a b a (4), tie pile: tie a (2).
    share_b = .6·3/5 + .3·1/4 + .1·0 = .435; share_tie = .6·1/5 + .3·0 + .1·1/2 = .17; share_a = .395;
    win rate of B = .435 + .085 = .52; ties dropped = .435 / .83."""
    piles = PairPiles.from_labels([[["b", "b", "b", "a", "tie"]], [["a", "a", "b", "a"]], [["tie", "a"]]], [60, 30, 10])
    r = pairwise_intervals(piles, n_draws=2000, rng=np.random.default_rng(3))
    assert r.b.estimate[0] == pytest.approx(0.435)
    assert r.tie.estimate[0] == pytest.approx(0.17)
    assert r.a.estimate[0] == pytest.approx(0.395)
    assert r.win_rate_b.estimate[0] == pytest.approx(0.52)
    assert r.win_rate_b_dropped.estimate[0] == pytest.approx(0.435 / 0.83)
    assert r.raw["win_rate_b"][0] == pytest.approx(0.65)
    for share in (r.a, r.b, r.tie, r.win_rate_b, r.win_rate_b_dropped):
        assert share.low[0] <= share.estimate[0] <= share.high[0]
    # the draws are shares of the 100 items: each a multiple of 1/100
    for x in (r.draws.a, r.draws.b, r.draws.tie, 2 * r.draws.win):
        assert np.allclose(np.round(x * 100), x * 100)
    # labelled in full, every pile is known: no width
    full = PairPiles.from_labels([[["b", "tie"]], [["a"]], [["tie"]]], [2, 1, 1])
    f = pairwise_intervals(full, n_draws=500, rng=np.random.default_rng(0))
    assert (f.win_rate_b.low[0], f.win_rate_b.high[0]) == (0.5, 0.5)  # (1 + 2·½) / 4


def test_an_empty_pile_needs_no_label_and_an_unlabelled_one_is_undefined():
    empty = PairPiles.from_labels([[["b", "a"]], [["a"]], [[]]], [10, 5, 0])
    r = pairwise_intervals(empty, n_draws=500, rng=np.random.default_rng(0))
    assert r.b.estimate[0] == pytest.approx(10 / 15 * 0.5)
    assert not empty.ties[0] and r.tie.high[0] == 0
    unlabelled = PairPiles.from_labels([[["b"]], [[]], [["tie"]]], [10, 5, 2])
    u = pairwise_intervals(unlabelled, n_draws=500, rng=np.random.default_rng(0))
    assert np.isnan(u.win_rate_b.estimate[0]) and np.isnan(u.win_rate_b.low[0])


def test_bad_piles_are_named():
    with pytest.raises(ValueError, match="a, b or tie"):
        PairPiles.from_labels([[["b", "B>A"]], [["a"]], [[]]], [10, 5, 0])
    with pytest.raises(ValueError, match="more labelled rows"):
        PairPiles.from_labels([[["b", "a"]], [["a"]], [[]]], [1, 5, 0])
    with pytest.raises(ValueError, match="without ties"):
        PairPiles.from_labels([[["b", "tie"]], [["a"]], [[]]], [10, 5, 0], ties=False)
    with pytest.raises(ValueError, match="tie rule"):
        win_rate(0.5, 0.1, rule="thirds")


def test_the_simulators_two_class_cells_are_thetas_studies():
    """Cells simulated with no tie anywhere, corrected by the pairwise function and by θ's vectorised interval
    (vocab.stats.correction_intervals on the same piles: B pile passed, A pile failed) from generators in one
    state: the same ends, study by study; and each study's truth is its own items' share (the cells' counts)."""
    from vocab.coverage.pairwise import TWO_CLASS_JUDGES, study_piles

    judge = np.vstack([TWO_CLASS_JUDGES["first-position"], [0, 0, 1]])
    rng = np.random.default_rng(11)
    piles, truth, cells, _ = study_piles(rng, 60, (0.55, 0.45, 0.0), judge, 6, 40, False)
    assert np.allclose(truth[:, 1] * 60, cells[:, 1, :].sum(axis=1)) and not piles.ties.any()
    state = rng.bit_generator.state
    r = pairwise_intervals(piles, n_draws=300, rng=rng)
    theta = stats.Piles(
        piles.judge_shares()[:, 0],
        piles.totals.sum(axis=1),
        piles.b[0],
        piles.b[1],
        piles.weights[1],
        np.ones(40),
        piles.totals[:, 0],
        piles.totals[:, 1],
    )
    again = np.random.default_rng()
    again.bit_generator.state = state
    t = stats.correction_intervals("fiducial", theta, n_draws=300, rng=again)
    ok = np.isfinite(t.theta)
    assert ok.sum() > 30
    assert np.array_equal(r.win_rate_b.low[ok], t.low[ok]) and np.array_equal(r.win_rate_b.high[ok], t.high[ok])


def test_a_systems_rate_against_the_field_weights_its_cells_by_items():
    """Two studies of two cells, x vs y (10 items) and x vs z (30): x is A in both, so its rate is
    (10 (1 - w_xy) + 30 (1 - w_xz)) / 40, draw by draw; y and z have one cell each."""
    from vocab.stats.pairwise_field import field_win_rates

    d1 = np.array([[0.4, 0.5, 0.6], [0.1, 0.2, 0.3]])
    d2 = np.array([[0.2, 0.2, 0.2], [0.9, 0.8, 0.7]])
    f = field_win_rates([("x", "y", 10, [0.6, 0.6], [0.5, 0.2], d1), ("x", "z", 30, [0.3, 0.3], [0.2, 0.8], d2)])
    assert f.systems == ["x", "y", "z"] and f.items[:, 0].tolist() == [40, 10, 30]
    assert f.estimate[0] == pytest.approx([(10 * 0.5 + 30 * 0.8) / 40, (10 * 0.8 + 30 * 0.2) / 40])
    assert f.raw[0] == pytest.approx([(10 * 0.4 + 30 * 0.7) / 40] * 2)
    assert f.draws[0, 1] == pytest.approx((10 * (1 - d1[1]) + 30 * (1 - d2[1])) / 40)
    assert f.estimate[2].tolist() == [0.2, 0.8] and f.low[2, 0] <= 0.2 <= f.high[2, 0]
    undefined = field_win_rates([("x", "y", 5, 0.5, float("nan"), [0.5, 0.6])])
    assert np.isnan(undefined.estimate).all() and np.isnan(undefined.low).all()
