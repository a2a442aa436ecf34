"""vocab.stats against the study's published numbers, statsmodels and scipy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.optimize
import scipy.stats
from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa

from vocab import stats

# Seed 000's inputs (p, a, b) and printed outputs (theta, q1, q0, shift in points) per cell.
PUBLISHED = {
    "qwen→qwen": ((0.630, 0.80, 0.87), (0.825, 0.61, 0.28, +19.5)),
    "qwen→gemma": ((0.825, 0.70, 0.69), (0.698, 0.83, 0.18, -12.7)),
    "gemma→qwen": ((0.035, 1.00, 0.40), (0.421, 0.08, 1.00, +38.6)),
    "gemma→gemma": ((0.506, 0.60, 0.22), (0.411, 0.74, 0.66, -9.5)),
}


@pytest.mark.parametrize("cell", PUBLISHED)
def test_reproduces_the_published_correction(cell):
    (p, a, b), (theta, q1, q0, shift) = PUBLISHED[cell]
    c = stats.correct(p, a, b)
    assert c.theta == pytest.approx(theta, abs=0.0015)
    assert c.q1 == pytest.approx(q1, abs=0.006) and c.q0 == pytest.approx(q0, abs=0.006)
    assert c.shift_points == pytest.approx(shift, abs=0.15)


def test_undefined_values_are_nan_not_errors():
    c = stats.correct(0.5, 0.0, 0.0)  # theta = 0: sensitivity undefined
    assert c.theta == 0 and np.isnan(c.q1) and c.q0 == 0.5
    c = stats.correct(0.5, 1.0, 1.0)
    assert np.isnan(c.q0)


def _kappa_from_counts(n: int, pass_1: int, pass_2: int, agree: int) -> float:
    """Cohen's kappa of two binary raters rebuilt from n, each rater's passes and their agreements."""
    both_pass = (pass_1 + pass_2 - (n - agree)) // 2
    both_fail = agree - both_pass
    r1 = [1] * both_pass + [1] * (pass_1 - both_pass) + [0] * (pass_2 - both_pass) + [0] * both_fail
    r2 = [1] * both_pass + [0] * (pass_1 - both_pass) + [1] * (pass_2 - both_pass) + [0] * both_fail
    return stats.cohens_kappa(np.array(r1), np.array(r2))


def test_kappa_from_the_published_counts():
    # 80 rows: one rater passes 55, the other 31, they agree on 50 -> kappa 0.31
    assert _kappa_from_counts(80, 55, 31, 50) == pytest.approx(0.308, abs=0.001)


def test_kappa_matches_statsmodels():
    rng = np.random.default_rng(1)
    for _ in range(20):
        r1 = rng.integers(0, 2, 60)
        r2 = np.where(rng.random(60) < 0.7, r1, 1 - r1)
        table = np.array([[np.sum((r1 == i) & (r2 == j)) for j in (0, 1)] for i in (0, 1)])
        assert stats.cohens_kappa(r1, r2) == pytest.approx(sm_kappa(table).kappa, abs=1e-12)


def test_bootstrap_matches_scipy_percentile_bootstrap():
    passed = np.array([1] * 7 + [0] * 3, dtype=float)
    failed = np.array([1] * 4 + [0] * 6, dtype=float)
    weights = np.array([1, 2, 3, 1, 1, 2, 3, 1, 2, 1], dtype=float)
    p = 0.4
    ours = stats.bootstrap_correction(p, passed, failed, weights, n_resamples=40_000, rng=np.random.default_rng(0))

    def theta(x, idx, axis=-1):
        idx = idx.astype(int)
        b = (failed[idx] * weights[idx]).sum(axis=axis) / weights[idx].sum(axis=axis)
        return p * x.mean(axis=axis) + (1 - p) * b

    ref = scipy.stats.bootstrap(
        (passed, np.arange(failed.size, dtype=float)),
        theta,
        paired=False,
        vectorized=True,
        n_resamples=40_000,
        method="percentile",
        rng=np.random.default_rng(1),
    )
    assert ours.theta_ci[0] == pytest.approx(ref.confidence_interval.low, abs=0.01)
    assert ours.theta_ci[1] == pytest.approx(ref.confidence_interval.high, abs=0.01)
    assert ours.point.theta == pytest.approx(theta(passed, np.arange(10.0)))


def test_bootstrap_is_seeded():
    args = (0.5, [1, 0, 1, 1], [0, 1, 0], [1, 1, 2])
    x = stats.bootstrap_correction(*args, n_resamples=500, rng=np.random.default_rng(3))
    y = stats.bootstrap_correction(*args, n_resamples=500, rng=np.random.default_rng(3))
    assert x.theta_ci == y.theta_ci and x.q1_ci == y.q1_ci


def test_bradley_terry_matches_direct_maximum_likelihood():
    pairs = [
        ("a", "b", 1),
        ("a", "b", 1),
        ("a", "b", 0),
        ("b", "c", 1),
        ("b", "c", 0.5),
        ("c", "a", 1),
        ("a", "c", 1),
        ("c", "b", 0),
        ("a", "c", 0.5),
    ]
    bt = stats.bradley_terry(pairs)
    players = list(bt.players)
    k = {p: i for i, p in enumerate(players)}

    def nll(theta):
        t = np.concatenate([[0.0], theta])
        out = 0.0
        for i, j, s in pairs:
            d = t[k[i]] - t[k[j]]
            out -= s * -np.logaddexp(0, -d) + (1 - s) * -np.logaddexp(0, d)
        return out

    res = scipy.optimize.minimize(nll, np.zeros(len(players) - 1), method="BFGS", options={"gtol": 1e-10})
    direct = np.concatenate([[0.0], res.x])
    direct -= direct.mean()
    assert np.allclose(bt.strengths, direct, atol=1e-5)
    r = bt.ratings()
    assert max(r, key=r.get) == "a"


def test_bradley_terry_refuses_an_unbeaten_player():
    with pytest.raises(ValueError, match="some wins and some losses"):
        stats.bradley_terry([("a", "b", 1), ("a", "b", 1)])


def test_online_elo_depends_on_order_and_matches_the_lesson():
    from vocab import lesson
    from vocab.stats import online_elo

    games = [("A", "B", 1.0), ("A", "B", 1.0), ("A", "B", 0.5), ("A", "B", 0.0)]
    # by hand, k=32, scale 400, start 1000; E = 1 / (1 + 10 ** ((rB - rA) / 400)), A gains 32 * (s - E):
    # forward  win:  E = 0.5,                            +16      -> A 1016,      B 984
    #          win:  E = 1 / (1 + 10 ** -0.08)  = 0.5459, +14.5305 -> A 1030.5305, B 969.4695
    #          tie:  E = 1 / (1 + 10 ** -0.1527) = 0.5870, -2.7834  -> A 1027.7471, B 972.2529
    #          loss: E = 1 / (1 + 10 ** -0.1387) = 0.5792, -18.5341 -> A 1009.2130, B 990.7870
    # reversed loss: E = 0.5,                            -16      -> A 984,       B 1016
    #          tie:  E = 1 / (1 + 10 ** 0.08)   = 0.4541, +1.4695  -> A 985.4695,  B 1014.5305
    #          win:  E = 1 / (1 + 10 ** 0.0727) = 0.4583, +17.3352 -> A 1002.8047, B 997.1953
    #          win:  E = 1 / (1 + 10 ** -0.0140) = 0.5081, +15.7417 -> A 1018.5464, B 981.4536
    assert online_elo(games) == pytest.approx({"A": 1009.2130, "B": 990.7870}, abs=1e-3)
    assert online_elo(games[::-1]) == pytest.approx({"A": 1018.5464, "B": 981.4536}, abs=1e-3)
    steps = lesson.online_elo([(str(n), {1.0: "A", 0.0: "B", 0.5: "Tie"}[s]) for n, (_, _, s) in enumerate(games)])
    assert [s.expected_a for s in steps] == pytest.approx([0.5, 0.5459, 0.5870, 0.5792], abs=1e-4)
    assert [s.after_a for s in steps] == pytest.approx([1016.0, 1030.5305, 1027.7471, 1009.2130], abs=1e-3)
    assert [s.after_b for s in steps] == pytest.approx([984.0, 969.4695, 972.2529, 990.7870], abs=1e-3)


def test_bradley_terry_bootstrap_covers_the_fit_and_reports_failures():
    from vocab.stats import bradley_terry_bootstrap

    games = [("x", "y", 1.0)] * 14 + [("x", "y", 0.0)] * 6 + [("y", "z", 1.0)] * 12 + [("y", "z", 0.5)] * 8
    games += [("x", "z", 1.0)] * 5 + [("x", "z", 0.0)]
    bt = bradley_terry_bootstrap(games, n_resamples=300, seed=1)
    r = bt.fit.ratings()
    assert r["x"] > r["y"] > r["z"]
    for p in r:
        assert bt.low[p] <= r[p] <= bt.high[p]
    assert bt.resamples == 300 and 0 <= bt.failed < 300
    none = bradley_terry_bootstrap([("x", "y", 1.0)] * 3)
    assert none.fit is None and "wins and some losses" in none.reason


def test_jeffreys_correction_point_is_the_correction_and_interval_is_sane():
    from vocab.stats import correct, correction_interval

    rng = np.random.default_rng(0)
    x, y, w = np.array([1, 1, 1, 0, 1.0]), np.array([0, 0, 1, 0.0]), np.array([1, 3, 1, 2.0])
    j = correction_interval("jeffreys", 0.3, 200, x, y, w, n_draws=4000, rng=rng)
    assert j.point == correct(0.3, 0.8, 1 / 7)
    assert j.theta_ci[0] < j.point.theta < j.theta_ci[1]
    # a pile passed in full does not collapse the interval, unlike the percentile bootstrap
    full = correction_interval("jeffreys", 0.3, 200, np.ones(10), np.zeros(10), np.ones(10), rng=rng)
    assert full.theta_ci[1] - full.theta_ci[0] > 0.1 and full.q0_ci[0] < 1.0


def test_jeffreys_interval_holds_the_estimate_at_zero():
    from vocab.stats import correction_interval

    j = correction_interval("jeffreys", 0.3, 300, np.zeros(10), np.zeros(10), np.ones(10), rng=np.random.default_rng(0))
    assert j.point.theta == 0 and j.theta_ci[0] == 0 and j.theta_ci[1] > 0.05


def test_fiducial_correction_point_is_the_correction_and_is_seeded():
    from vocab.stats import correct, fiducial_correction

    x, y, w = np.array([1, 1, 1, 0, 1.0]), np.array([0, 0, 1, 0.0]), np.array([1, 3, 1, 2.0])
    f = fiducial_correction(0.3, 200, x, y, w, n_draws=4000, rng=np.random.default_rng(0))
    assert f.point == correct(0.3, 0.8, 1 / 7) and f.theta_ci[0] < f.theta_ci[1]
    again = fiducial_correction(0.3, 200, x, y, w, n_draws=4000, rng=np.random.default_rng(0))
    assert again.theta_ci == f.theta_ci  # the randomisation is the seed's: a rerun gives the same interval
    full = fiducial_correction(0.3, 200, np.ones(10), np.zeros(10), np.ones(10), rng=np.random.default_rng(1))
    assert full.theta_ci[1] - full.theta_ci[0] > 0.05  # piles at 10 of 10 and 0 of 10 stay uncertain
    with pytest.raises(ValueError, match="both piles"):
        fiducial_correction(0.3, 200, [], y, w, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="p must lie"):
        fiducial_correction(1.3, 200, x, y, w, rng=np.random.default_rng(0))


def test_kish_rows_is_the_weighted_piles_effective_size():
    from vocab.stats import kish_rows

    assert kish_rows([1, 1, 1]) == 3 and kish_rows([1, 3]) == pytest.approx(16 / 10) and kish_rows([]) == 0
    np.testing.assert_allclose(kish_rows(np.array([[2, 2, 0], [1, 3, 0]])), [2, 1.6])  # one value per pile


def test_fiducial_correction_widens_with_the_levels_design_effect():
    """Levels that differ (some pass at once, some fail three times) make p less certain than its attempts
    suggest: the same piles and p get a wider interval when p's attempts come in such levels."""
    from vocab.stats import design_effect, fiducial_correction

    passes, tries = np.array([1, 0] * 60), np.array([1, 3] * 60)  # p = 60 / 240
    assert design_effect(passes, tries) == pytest.approx(1.51, abs=0.01)
    x, y, w = np.ones(200), np.r_[np.ones(20), np.zeros(180)], np.ones(200)  # large piles: p's error shows
    flat = fiducial_correction(0.25, 240, x, y, w, n_draws=20_000, rng=np.random.default_rng(3))
    clustered = fiducial_correction(0.25, 240, x, y, w, level_passes=passes, level_attempts=tries, n_draws=20_000,
                                    rng=np.random.default_rng(3))  # fmt: skip
    width = lambda c: c.theta_ci[1] - c.theta_ci[0]  # noqa: E731
    assert width(clustered) > 1.1 * width(flat)


def test_fiducial_correction_covers_the_truth_of_simulated_studies():
    """Known truth: 300 studies from the level-clustered simulator, each corrected as 03 corrects a cell."""
    from vocab.coverage.clustered import population_theta, simulate_clustered
    from vocab.stats import fiducial_correction

    theta, q1, q0, spread = 0.4, 0.85, 0.75, 2.0
    st = simulate_clustered(theta, q1, q0, levels=140, max_attempts=3, piles=10, spread=spread, sims=300,
                            rng=np.random.default_rng(8))  # fmt: skip
    truth = population_theta(theta, q1, q0, spread, 3)
    rng = np.random.default_rng(9)
    hits = []
    for s in range(300):
        x = st.passed[s][~np.isnan(st.passed[s])]
        keep = ~np.isnan(st.failed[s])
        c = fiducial_correction(st.p[s], int(st.attempts[s]), x, st.failed[s][keep], st.weights[s][keep],
                                level_passes=st.level_passes[s], level_attempts=st.level_attempts[s], n_draws=1000,
                                rng=rng)  # fmt: skip
        hits.append(c.theta_ci[0] <= truth <= c.theta_ci[1])
    assert 0.91 <= np.mean(hits) <= 0.99, np.mean(hits)


def test_kappa_bootstrap_is_kappa_with_a_row_bootstrap_interval():
    from vocab.stats import cohens_kappa, kappa_bootstrap

    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, 60)
    y = np.where(rng.random(60) < 0.8, x, 1 - x)
    k = kappa_bootstrap(x, y, n_resamples=2000, rng=np.random.default_rng(1))
    assert k.kappa == cohens_kappa(x, y) and k.n == 60
    assert k.ci_low < k.kappa < k.ci_high
    # the same resamples by hand
    idx = np.random.default_rng(1).integers(0, 60, size=(2000, 60))
    boot = np.array([cohens_kappa(x[j], y[j]) for j in idx])
    assert (k.ci_low, k.ci_high) == pytest.approx(tuple(np.nanquantile(boot, [0.025, 0.975])))
    with pytest.raises(ValueError):
        kappa_bootstrap(x, y[:-1], rng=np.random.default_rng(0))


def test_invert_flip_rate_undoes_a_symmetric_flip():
    from vocab.stats import invert_flip_rate

    truth = np.array([0.0, 0.2, 0.5, 0.9, 1.0])
    for e in (0.0, 0.1, 0.3):
        seen = truth * (1 - 2 * e) + e
        assert invert_flip_rate(seen, e) == pytest.approx(truth)
    assert invert_flip_rate(0.02, 0.1) == 0.0  # below what the flip alone gives: clipped
    with pytest.raises(ValueError):
        invert_flip_rate(0.5, 0.5)


def test_elo_updates_are_the_steps_of_online_elo():
    from vocab.stats import elo_updates, online_elo

    games = [("a", "b", 1.0), ("b", "c", 0.5), ("a", "c", 0.0), ("c", "b", 1.0)]
    ups = elo_updates(games)
    # by hand, k=32, scale 400, start 1000; E = 1 / (1 + 10 ** ((r_j - r_i) / 400)), i gains 32 * (s - E):
    # a-b win:  a 1000,      b 1000:      E = 0.5,                              +16      -> a 1016,     b 984
    # b-c tie:  b 984,       c 1000:      E = 1 / (1 + 10 ** 0.04)     = 0.4770, +0.7363  -> b 984.7363, c 999.2637
    # a-c loss: a 1016,      c 999.2637:  E = 1 / (1 + 10 ** -0.0418)  = 0.5241, -16.7701 -> a 999.2299, c 1016.0338
    # c-b win:  c 1016.0338, b 984.7363:  E = 1 / (1 + 10 ** -0.0782)  = 0.5449, +14.5626 -> c 1030.5964, b 970.1737
    assert [(u.i, u.j, u.score_i) for u in ups] == games
    assert [u.before_i for u in ups] == pytest.approx([1000.0, 984.0, 1016.0, 1016.0338], abs=1e-3)
    assert [u.before_j for u in ups] == pytest.approx([1000.0, 1000.0, 999.2637, 984.7363], abs=1e-3)
    assert [u.expected_i for u in ups] == pytest.approx([0.5, 0.4770, 0.5241, 0.5449], abs=1e-4)
    assert [u.delta_i for u in ups] == pytest.approx([16.0, 0.7363, -16.7701, 14.5626], abs=1e-3)
    final = {"a": 999.2299, "b": 970.1737, "c": 1030.5964}
    assert online_elo(games) == pytest.approx(final, abs=1e-3)
    assert sum(online_elo(games).values()) == pytest.approx(3000.0)  # zero-sum


def test_krippendorff_alpha_equals_the_krippendorff_package():
    import krippendorff

    from vocab.stats import krippendorff_alpha_nominal

    rng = np.random.default_rng(3)
    for raters, units, missing in ((2, 30, 0.0), (3, 40, 0.1), (4, 25, 0.3)):
        truth = rng.integers(0, 2, units)
        data = np.array([np.where(rng.random(units) < 0.8, truth, 1 - truth) for _ in range(raters)], dtype=float)
        data[rng.random(data.shape) < missing] = np.nan
        want = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
        assert krippendorff_alpha_nominal(data) == pytest.approx(want, abs=1e-12)
    # Krippendorff's own worked example (nominal, 4 raters, 12 units, values 1-5): alpha = 0.743
    nan = np.nan
    example = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
    assert krippendorff_alpha_nominal(example) == pytest.approx(0.743, abs=5e-4)
    assert np.isnan(krippendorff_alpha_nominal([[1, 1, 1], [1, 1, 1]]))


def test_lost_attempt_bounds_are_the_worst_and_best_case():
    from vocab.stats import lost_attempt_bounds

    b = lost_attempt_bounds(0.5, 100, failed_if_lost=20, passed_if_lost=10)
    assert b.low == pytest.approx(50 / 120) and b.high == pytest.approx(60 / 110)
    assert lost_attempt_bounds(0.3, 50, 0, 0) == type(b)(0.3, 0.3)  # nothing lost: the rate itself
    with pytest.raises(ValueError):
        lost_attempt_bounds(0.5, -1, 0, 0)


def test_abandoned_bounds_per_cell():
    import pandas as pd

    from vocab.calibration import VOCABSCAPES, Dataset
    from vocab.estimates import abandoned_bounds

    corr = pd.DataFrame([{"rater": "r", "cell": "x", "theta": 0.5, "ci_low": 0.4, "ci_high": 0.6}])
    attempts = pd.DataFrame({"cell": ["x"] * 10})
    outcomes = pd.DataFrame({"cell": ["x", "x", "x"], "level": [1, 2, 3], "attempts": [1, 0, 3],
                             "status": ["ABANDONED", "ABANDONED", "HARD_FAIL"]})  # fmt: skip
    run = Dataset(Path("run"), "run", "r", "complete", VOCABSCAPES, (), attempts, pd.DataFrame(), {}, outcomes, 3)
    row = abandoned_bounds(corr, run).iloc[0]
    assert row.abandoned_levels == 2 and row.attempts == 10
    assert row.theta_if_failed == pytest.approx(5 / (10 + 2 + 3))  # their remaining 2 and 3 attempts failed
    assert row.theta_if_passed == pytest.approx(7 / 12)  # one more passed attempt each
    assert row.ci_low_if_failed == pytest.approx(4 / 15) and row.ci_high_if_passed == pytest.approx(8 / 12)


def _verdicts(rng, raters: int, units: int, p_pass: float, agree: float) -> np.ndarray:
    truth = rng.random(units) < p_pass
    flips = rng.random((raters, units)) > agree
    return (truth ^ flips).astype(float)


def test_gwet_ac1_and_alpha_equal_irrcac():
    """irrCAC (Gwet's own formulas, PyPI) on complete binary data: AC1 and Krippendorff's alpha to its 5
    decimals, for 2-4 raters and balanced to lopsided verdicts."""
    import pandas as pd
    from irrCAC.raw import CAC

    from vocab.stats import gwet_ac1, krippendorff_alpha_nominal

    rng = np.random.default_rng(7)
    for raters, units, p_pass in [(2, 20, 0.5), (3, 40, 0.1), (4, 15, 0.9), (2, 63, 0.05), (3, 30, 0.3)]:
        data = _verdicts(rng, raters, units, p_pass, 0.85)
        cac = CAC(pd.DataFrame(data.T).replace({1.0: "PASSED", 0.0: "FAILED"}))
        assert gwet_ac1(data) == pytest.approx(cac.gwet()["est"]["coefficient_value"], abs=6e-6)
        assert krippendorff_alpha_nominal(data) == pytest.approx(
            cac.krippendorff()["est"]["coefficient_value"], abs=6e-6
        )


def test_ac1_does_not_collapse_when_one_verdict_dominates():
    """Two raters who fail 60 of 63 rows and disagree on the other 3: they agree on 95 % of rows, yet kappa is
    about 0 (and alpha below it), while AC1 stays near the raw agreement."""
    from vocab.stats import cohens_kappa, gwet_ac1, krippendorff_alpha_nominal

    a = np.zeros(63)
    b = np.zeros(63)
    a[:2], b[2] = 1, 1  # a passes rows 0 and 1, b passes row 2
    assert cohens_kappa(a.astype(int), b.astype(int)) < 0.01
    assert krippendorff_alpha_nominal(np.vstack([a, b])) < 0
    assert gwet_ac1(np.vstack([a, b])) > 0.9
    assert gwet_ac1(np.vstack([a, a])) == 1.0  # perfect agreement on one verdict: AC1 is defined, kappa is not


def test_agreement_bootstrap_intervals_cover_the_population_value():
    """Seeded: raters who agree with a latent truth at rate 0.85 on 80 rows; over 200 simulated studies the
    95 % percentile intervals of AC1 and alpha cover the statistic of a 20,000-row population about 95 % of
    the time (0.88-0.99 allowed at this size: the percentile bootstrap runs a little narrow on 80 rows), and
    the interval is reproducible from the seed."""
    from vocab.stats import agreement_bootstrap, gwet_ac1, krippendorff_alpha_nominal

    rng = np.random.default_rng(11)
    for fn in (gwet_ac1, krippendorff_alpha_nominal):
        population = fn(_verdicts(np.random.default_rng(0), 3, 20_000, 0.3, 0.85))
        hits = 0
        for _ in range(200):
            ci = agreement_bootstrap(_verdicts(rng, 3, 80, 0.3, 0.85), fn, n_resamples=300, rng=rng)
            hits += ci.ci_low <= population <= ci.ci_high
        assert 0.88 <= hits / 200 <= 0.99, (fn.__name__, hits)
    data = _verdicts(np.random.default_rng(3), 2, 30, 0.5, 0.8)
    one = agreement_bootstrap(data, gwet_ac1, n_resamples=500, rng=np.random.default_rng(5))
    two = agreement_bootstrap(data, gwet_ac1, n_resamples=500, rng=np.random.default_rng(5))
    assert one == two and one.ci_low < one.value < one.ci_high


def test_design_effect_from_sums_is_the_exact_value_design_effect_rounds():
    """From exact integer sums (what a large dataset keeps per cell), the same design effect as from the levels'
    counts: equal to about 1e-15, and 1 where design_effect says 1 (fewer than two levels, p at 0 or 1)."""
    from vocab.stats import design_effect, design_effect_from_sums

    rng = np.random.default_rng(3)
    for _ in range(200):
        n = rng.integers(1, 6, size=int(rng.integers(1, 60)))
        x = rng.binomial(n, rng.random())
        sums = (len(n), int(n.sum()), int(x.sum()), int((x * x).sum()), int((x * n).sum()), int((n * n).sum()))
        assert design_effect_from_sums(*sums) == pytest.approx(design_effect(x, n), rel=1e-13, abs=0)
    assert design_effect_from_sums(1, 3, 1, 1, 3, 9) == 1.0  # one level
    assert design_effect_from_sums(4, 8, 0, 0, 0, 16) == 1.0  # p = 0
    # two levels, one passing both its attempts and one failing both: p = 1/2, Σ(x - p·n)² = 2, v_cluster = 2·2/16,
    # v_binom = (1/4)/4: the ratio 4, worked by hand
    assert design_effect_from_sums(2, 4, 2, 4, 4, 8) == 4.0
