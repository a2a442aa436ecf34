"""The side-by-side with the anchors (vocab.coverage.anchors): Lee et al.'s interval against their reference
implementation's outputs, the label allocations, the fiducial interval at a true rate of 0, and the grid bar."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vocab.coverage import anchors as an

# (p, q0, q1, n, m0, m1) -> (estimate, low, high), as printed by Lee et al.'s reference implementation
# (github.com/UW-Madison-Lee-Lab/LLM-judge-reporting at 082884d: llm_judge_reporting.calibration.point_estimator and
# confidence_interval, alpha 0.05), run beside this code, not part of it. The first is their README's example.
LEE_REFERENCE = {
    (0.4, 0.7, 0.9, 1000, 200, 200): (0.1666666666666668, 0.05635072484160894, 0.2627330257859588),
    (0.6, 0.8, 0.9, 100, 20, 20): (0.5714285714285712, 0.3490072256957541, 0.8069648242342893),
    (0.05, 0.95, 0.6, 300, 40, 10): (0.0, 0.0, 0.11753367961277786),  # clipped below
    (0.9, 0.55, 0.99, 50, 8, 30): (0.8333333333333336, 0.5600618820001955, 1.0),  # clipped above
}


@pytest.mark.parametrize("args", LEE_REFERENCE)
def test_lee_interval_is_the_reference_implementations(args):
    assert an.lee_interval(*args) == pytest.approx(LEE_REFERENCE[args], abs=1e-12)


def test_lee_interval_is_undefined_for_a_judge_no_better_than_chance():
    assert an.lee_interval(0.5, 0.4, 0.5, 100, 20, 20) is None  # q0 + q1 <= 1


def test_lee_interval_covers_at_a_plain_point():
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(400):
        pop = an.population(0.4, 0.85, 0.8, 300, rng)
        on_pass, on_fail = an.by_class_calibration(0.85, 0.8, 40, 40, rng)
        _, lo, hi = an.lee_interval(pop.verdict.mean(), 1 - on_fail.mean(), on_pass.mean(), 300, 40, 40)
        hits += lo <= 0.4 <= hi
    assert 0.91 <= hits / 400 <= 0.99


def test_allocations():
    assert an.allocate(20, 0.3) == (10, 10)  # equal: seed 000's 10 + 10
    assert an.allocate(21, 0.3) == (11, 10)
    assert an.allocate(40, 0.25, "proportional") == (10, 30)  # in proportion to the piles' shares
    assert an.allocate(40, 0.01, "proportional") == (2, 38)  # never fewer than 2 rows a pile
    # a pilot whose passed pile is unanimous and whose failed pile is split moves rows to the failed pile
    n_a, n_b = an.allocate(40, 0.5, "pilot", pilot=(10, 10, 10, 5))
    assert n_a + n_b == 40 and n_a >= 10 and n_b > 20
    with pytest.raises(ValueError, match="pilot"):
        an.allocate(40, 0.5, "pilot")
    with pytest.raises(ValueError, match="unknown allocation"):
        an.allocate(40, 0.5, "optimal")
    with pytest.raises(ValueError, match="at least 4"):
        an.allocate(3, 0.5)


def test_allocated_piles_draw_within_their_verdicts_and_keep_the_pilot():
    pop = an.population(0.5, 0.8, 0.8, 400, np.random.default_rng(1))
    for allocation in an.ALLOCATIONS:
        a, b = an.allocated_piles(pop, 40, allocation, np.random.default_rng(2))
        assert pop.verdict[a].all() and not pop.verdict[b].any()
        assert len(set(a)) == len(a) and len(set(b)) == len(b) and len(a) + len(b) == 40
    # the pilot's first rows are the equal draw's 10 + 10 from the same stream
    first = an.pile_rows(pop, (10, 10), np.random.default_rng(2))
    a, b = an.allocated_piles(pop, 40, "pilot", np.random.default_rng(2))
    assert set(first[0]) <= set(a) and set(first[1]) <= set(b)


def test_the_fiducial_interval_holds_a_true_rate_of_zero():
    """At a true rate of 0 every rated row is bad, so the estimate is 0; the interval holds its estimate. Before,
    the propagated draws were 0 only when both piles' randomised draws were, and the interval left out 0 in about
    12 % of studies."""
    from vocab.stats import fiducial_correction

    rng = np.random.default_rng(0)
    lows = [
        fiducial_correction(p, 280, np.zeros(10), np.zeros(10), np.ones(10), n_draws=2000, rng=rng).theta_ci[0]
        for p in rng.uniform(0.05, 0.4, size=200)
    ]
    assert max(lows) == 0.0


def _grid(coverages: dict[str, list[float]]) -> pd.DataFrame:
    rows = []
    for m, cov in coverages.items():
        for i, c in enumerate(cov):
            rows.append({"method": m, "piles": 10, "theta": 0.1 * (i + 1), "q1": 0.8 if i else 1.0, "q0": 0.8,
                         "spread": float("inf"), "levels": 140, "coverage": c, "sims": 2000, "defined": 2000,
                         "bias": 0.0, "mean_width": 0.19 if m.startswith("oracle") else 0.2})  # fmt: skip
    return pd.DataFrame(rows)


def test_grid_bar_counts_misses_and_takes_rechecks():
    from vocab.coverage import grid_bar

    # point 0: the perfect critic (q1 = 1) over-covers and does not count; point 3 is below the band
    grid = _grid({"fiducial": [0.99, 0.95, 0.96, 0.925], "oracle-shortest": [0.95] * 4})
    bar = grid_bar(grid, "fiducial")
    assert bar.loc["within_where_critic_errs", "as_drawn"] == pytest.approx(2 / 3)
    assert bar.loc["at_least_93", "as_drawn"] == pytest.approx(3 / 4)
    assert bar.loc["width_vs_oracle_shortest", "as_drawn"] == pytest.approx(0.2 / 0.19)
    assert not bar.holds.iloc[:2].any()
    rechecked = pd.DataFrame([{"piles": 10, "theta": 0.4, "q1": 0.8, "q0": 0.8, "spread": float("inf"),
                               "coverage": 0.944}])  # fmt: skip
    bar = grid_bar(grid, "fiducial", rechecked)
    assert bar.loc["within_where_critic_errs", "rechecked"] == 1.0
    assert bar.loc["at_least_93", "rechecked"] == 1.0
    assert bar.holds.all()


def test_recheck_bar_takes_the_points_near_an_edge_from_both_sides():
    """Rechecking only the points outside the band could only ever move points in: the ones just inside an edge
    are rechecked too (within one standard error, 0.005), and a near-perfect critic's over-coverage is not."""
    from vocab.coverage import recheck_bar

    grid = _grid({"fiducial": [0.99, 0.95, 0.934, 0.972, 0.966, 0.925, 0.94]})
    grid["levels"] = 20
    found = recheck_bar(grid, "fiducial", sims=20, n_boot=20)
    assert sorted(found.grid_coverage) == [0.925, 0.934, 0.966, 0.972]
    assert (found.sims == 20).all()


def test_the_committed_side_by_side_holds_the_issues_bar():
    """benchmarks/results/anchors.json: vocab's default and at least three anchors at every point and budget, and
    vocab's default covers at least 0.93 at each of them; the tables read it as the README states."""
    import json
    from pathlib import Path

    result = json.loads((Path(__file__).resolve().parents[2] / "benchmarks/results/anchors.json").read_text())
    rows = pd.DataFrame(result["rows"])
    keys = ["theta", "q1", "q0", "attempts", "budget"]
    per_point = rows.groupby(keys).method.apply(set)
    assert all({"vocab", "truescore-ppi++", "ppi_py", "judgy", "lee"} <= m for m in per_point)
    assert set(rows.budget) == {20, 40, 80} and (rows.sims >= 2000).all()
    assert (rows[rows.method == "vocab"].coverage >= 0.93).all()
    table = an.anchors_table(result)
    assert table.loc["vocab", "under_93"] == 0 and table.loc["vocab", "median_width_vs_vocab"] == 1.0
    # every method's counts, as the file's rows give them (counted here, point by point)
    for method, g in rows.groupby("method"):
        answers = g[g.defined >= g.sims / 2]
        assert table.loc[method, "answers_at"] == len(answers), method
        assert table.loc[method, "under_93"] == int((answers.coverage < 0.93).sum()), method
        assert table.loc[method, "worst_coverage"] == pytest.approx(answers.coverage.min()), method
    narrowest: dict[str, int] = {}
    for _, point in rows.groupby(keys):
        # a method aimed at the population's own share (vocab-finite) answers another question: not a rival
        fine = [
            r
            for r in point.itertuples()
            if r.defined >= r.sims / 2 and r.coverage >= 0.93 and r.mean_width > 0 and r.target == "theta"
        ]
        if fine:
            best = min(fine, key=lambda r: r.mean_width).method
            narrowest[best] = narrowest.get(best, 0) + 1
    assert {m: int(v) for m, v in table.narrowest_covering.items() if v} == narrowest
    # a zero-width interval (ppi_py at theta 0) is never the narrowest that covers
    zero = rows[(rows.mean_width == 0)]
    assert set(zero.method) <= {"ppi_py"} and (zero.theta == 0).all()
    alloc = an.allocation_table(result)
    assert (alloc.loc["equal", "width_vs_equal"] == 1).all() and (alloc.under_93 == 0).all()
