"""The finite population's fiducial ends (theta, q1, q0) computed exactly (vocab.stats.exact) are the ends 300,000
draws give: the expected values come from the draws of vocab.stats.correction_interval, the computation the report
made before (the same randomisation), theta within one step of its lattice (where a tail share sits within the
draws' error of 2.5 % the draws may land on the neighbouring point), q1 and q0 within a point."""

from __future__ import annotations

import numpy as np
import pytest

from vocab import stats
from vocab.stats.exact import difference_distribution, finite_intervals, finite_share, interval_of

CASES = [  # p, attempts, passed pile, failed pile, failed weights, pile totals
    (0.4, 100, [1] * 16 + [0] * 4, [1] * 6 + [0] * 14, np.ones(20), (40, 60)),
    (0.7, 400, [1] * 35 + [0] * 5, [1] * 10 + [0] * 30, np.r_[np.ones(20), 3 * np.ones(20)], (280, 120)),
    (0.0, 50, [0], [1] * 5 + [0] * 5, np.ones(10), (np.nan, 50)),  # a placeholder PASSED pile
    (0.9, 50, [1] * 9 + [0], [0, 0], np.ones(2), (45, 5)),  # a unanimous FAILED pile nearly whole
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_the_exact_ends_are_the_limit_of_the_draws(case):
    p, n, x, y, w, totals = CASES[case]
    drawn = stats.correction_interval("fiducial", p, n, x, y, w, passed_total=totals[0], failed_total=totals[1],
                                      n_draws=300_000, rng=np.random.default_rng(case),
                                      v_rng=stats.randomisation("test", case))  # fmt: skip
    pt = drawn.point
    exact = finite_intervals(p, x, y, w, totals, stats.randomisation("test", case), (pt.theta, pt.q1, pt.q0))
    step = max(p / totals[0] if p else 0, (1 - p) / totals[1])
    assert exact["theta"] == pytest.approx(drawn.theta_ci, abs=step + 1e-12)
    # q1 and q0 move by more than theta where theta is small: their ends within the draws' own error
    for name, ci in (("q1", drawn.q1_ci), ("q0", drawn.q0_ci)):
        assert exact[name] == pytest.approx(ci, abs=0.01, nan_ok=True), name


def test_a_lattice_too_large_is_left_to_the_draws():
    x, y = np.ones(10), np.zeros(10)
    est = (0.5, 1.0, 1.0)
    assert finite_intervals(0.5, x, y, np.ones(10), (5e6, 5e6), stats.randomisation("t"), est) is None
    assert finite_intervals(0.5, x, y, np.ones(10), (np.nan, 50), stats.randomisation("t"), est) is None


def test_a_difference_of_two_known_distributions_is_the_limit_of_their_draws():
    """B − A's interval from the convolution on the grid against 400,000 differenced draws of the two distributions
    (numpy's sampler of each), within a lattice step."""
    rng = np.random.default_rng(0)
    a = finite_share(6, 20, 6, 20, 60, 0.3)
    b = finite_share(12.5, 20, 12.5, 20, 45, 0.8)
    exact = interval_of(difference_distribution(a, b), 12.5 / 45 - 6 / 60)
    draws = rng.choice(b[0], 400_000, p=b[1] / b[1].sum()) - rng.choice(a[0], 400_000, p=a[1] / a[1].sum())
    assert exact == pytest.approx(tuple(np.quantile(draws, [0.025, 0.975])), abs=1 / 45 + 1e-4)
