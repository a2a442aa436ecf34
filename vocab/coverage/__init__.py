"""A simulator of the study (`simulate`), to measure what the corrected rate's interval is worth; the coverage
grid over the study's regime and the choice of 03's default interval (`grid`); the rater-error and retry
studies (`studies`); the study with level-clustered attempts (`clustered`)."""

from vocab.coverage.clustered import (
    CLUSTERED_METHODS,
    clustered_coverage,
    clustered_table,
    design_effect,
    population_theta,
    simulate_clustered,
)
from vocab.coverage.grid import (
    GridSpec,
    band_misses,
    choose_interval,
    coverage_grid,
    method_summary,
    parse_values,
    recheck_below,
    run_grid,
    usable_points,
    within_by_regime,
)
from vocab.coverage.simulate import (
    METHODS,
    Coverage,
    Studies,
    coverage,
    interval,
    jeffreys_interval,
    point_estimate,
    ppi_interval,
    seed_interval,
    seed_interval_rows,
    simulate_studies,
)
from vocab.coverage.studies import rater_error_table, retry_weighting_table

__all__ = [
    "CLUSTERED_METHODS",
    "METHODS",
    "clustered_coverage",
    "clustered_table",
    "design_effect",
    "population_theta",
    "simulate_clustered",
    "Coverage",
    "GridSpec",
    "band_misses",
    "Studies",
    "choose_interval",
    "coverage",
    "coverage_grid",
    "interval",
    "jeffreys_interval",
    "method_summary",
    "parse_values",
    "point_estimate",
    "ppi_interval",
    "rater_error_table",
    "recheck_below",
    "retry_weighting_table",
    "run_grid",
    "seed_interval",
    "seed_interval_rows",
    "simulate_studies",
    "usable_points",
    "within_by_regime",
]
