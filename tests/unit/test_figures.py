"""Every figure is a function of tables that returns a Figure; saving it twice writes the same bytes."""

from __future__ import annotations

import pandas as pd
import pytest
from matplotlib.figure import Figure

from vocab import figures

CORR = pd.DataFrame(
    [
        {"rater": r, "cell": c, "p": p, "theta": t, "ci_low": t - 0.1, "ci_high": t + 0.1, "q1": 0.8, "q1_low": 0.6,
         "q1_high": 0.9, "q0": q0, "q0_low": 0.5, "q0_high": 0.95}
        for r in ("a", "a+script") for c, p, t, q0 in (("x__x", 0.5, 0.3, 0.7), ("x__y", 0.2, 0.25, None))
    ]
)  # fmt: skip


def _figures():
    from vocab.calibration import rank_table

    checks = pd.DataFrame({"check": [1, 2, 3], "kind": ["mechanical", "decidable", "judgment"], "agree": [5, 9, 3],
                           "n": [10, 10, 10]})  # fmt: skip
    grid = pd.DataFrame([{"method": m, "piles": 10, "theta": th, "q1": 0.8, "coverage": 0.9} for m in ("seed", "ppi")
                         for th in (0.2, 0.5)])  # fmt: skip
    by_tier = pd.DataFrame({"n_words": [3, 4], "mean_zipf": [5, 4], "min_zipf": [4, 3], "mean_length": [3, 4]},
                           index=[1, 2])  # fmt: skip
    settings = pd.DataFrame(
        {"seed_length": [5, 6], "min_zipf": [3.5, 3.4], "max_sentence_words": [16, 15]}, index=[1, 2]
    )
    planted = pd.DataFrame({"judge": ["j"], "verdict_recall": [1.0], "on_target_recall": [0.5],
                            "false_positive_rate": [1.0]})  # fmt: skip
    degenerate = planted.assign(judge="always-FAIL")
    pairwise = pd.DataFrame({"judge": ["j"], "tie_rate": [0.1], "balanced_accuracy": [0.5]})
    return {  # name: (a function that draws it, its number of axes)
        "raw_vs_corrected": (lambda: figures.raw_vs_corrected_figure(CORR), 1),
        "sensitivity_specificity": (lambda: figures.sensitivity_specificity_figure(CORR), 2),
        "check_agreement": (lambda: figures.check_agreement_figure(checks), 1),
        "rank_stability": (lambda: figures.rank_stability_figure(CORR, rank_table(CORR)), 1),
        "coverage_methods": (lambda: figures.coverage_methods_figure(grid, ("seed", "ppi")), 2),
        "within_by_regime": (lambda: figures.within_by_regime_figure(pd.DataFrame({"seed": [0.5]}, index=["n=10"])), 1),
        "difficulty": (lambda: figures.difficulty_figure(by_tier, settings), 3),
        "exam": (lambda: figures.exam_figure(planted, degenerate, pairwise, ["j"], 0.9, 0.8), 3),
    }


@pytest.mark.parametrize("name", list(_figures()))
def test_figure_functions_return_figures_that_save_byte_stably(name, tmp_path):
    figures.style()
    draw, n_axes = _figures()[name]
    fig = draw()
    assert isinstance(fig, Figure) and len(fig.axes) == n_axes
    first = [p.read_bytes() for p in figures.save(fig, name, tmp_path / "a")]  # save closes the figure
    again = [p.read_bytes() for p in figures.save(draw(), name, tmp_path / "b")]
    assert first == again
