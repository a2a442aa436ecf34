"""A simulator of the study (`simulate`), to measure what the corrected rate's interval is worth; the coverage
grid over the study's regime (`grid`) and the choice of 03's default interval from it (`choice`) and
the bar's recheck of the committed grid (`recheck`); the rater-error
and retry studies (`studies`); the study with level-clustered attempts (`clustered`); planning (`plan`). The
estimates' own simulators sit beside them, each importing the estimate it measures (`differences`, `paired`,
`slices`, `strata`, `stopping`: the stopping rule under optional stopping); no estimate imports a simulator."""

from vocab.coverage.choice import (
    BAR,
    band_misses,
    choose_interval,
    erring_critic,
    grid_bar,
    method_summary,
    recheck_bar,
    recheck_below,
    usable_points,
    width_by_critic,
    width_yardstick,
    within_by_regime,
)
from vocab.coverage.clustered import (
    CLUSTERED_METHODS,
    ORACLES,
    clustered_coverage,
    clustered_table,
    design_effect,
    population_theta,
    simulate_clustered,
    unanimous_tradeoff,
)
from vocab.coverage.grid import GRID_METHODS, GridSpec, coverage_grid, grid_point, grid_points, parse_values, run_grid
from vocab.coverage.recheck import read_recheck, run_recheck
from vocab.coverage.simulate import (
    METHODS,
    Coverage,
    Studies,
    coverage,
    interval,
    simulate_studies,
    study_piles,
)
from vocab.coverage.studies import rater_error_table, retry_weighting_table

__all__ = [
    "BAR",
    "CLUSTERED_METHODS",
    "GRID_METHODS",
    "METHODS",
    "ORACLES",
    "clustered_coverage",
    "clustered_table",
    "design_effect",
    "population_theta",
    "simulate_clustered",
    "unanimous_tradeoff",
    "Coverage",
    "GridSpec",
    "band_misses",
    "Studies",
    "choose_interval",
    "coverage",
    "coverage_grid",
    "erring_critic",
    "grid_bar",
    "grid_point",
    "grid_points",
    "interval",
    "method_summary",
    "parse_values",
    "rater_error_table",
    "recheck_below",
    "recheck_bar",
    "read_recheck",
    "run_recheck",
    "retry_weighting_table",
    "run_grid",
    "simulate_studies",
    "study_piles",
    "usable_points",
    "width_by_critic",
    "width_yardstick",
    "within_by_regime",
]
