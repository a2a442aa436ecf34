"""What is estimated from the judged items and the blind raters' verdicts: the bias-corrected pass rate per rater
and cell with its interval (`correct`), the agreement between raters and judge (`agreement`), differences between
cells, the judge's leniency and rank sets (`compare`), and the verdicts a CI job acts on (`gate`). The estimators
themselves are pure functions in :mod:`vocab.stats`; this stage reads them off a run's or dataset's piles.

The stages below are :mod:`vocab.datasets` (the store), :mod:`vocab.sampling` (the sample) and :mod:`vocab.raters`;
above it the report and the audit (:mod:`vocab.report`, :mod:`vocab.audit`) string the stages together."""

from vocab.estimates.agreement import (
    KAPPA_COLUMNS,
    agreement_table,
    checks_table,
    kappa_table,
    script_adjudication,
)
from vocab.estimates.checks import check_audit
from vocab.estimates.compare import (
    COMPARISON_COLUMNS,
    RANK_COLUMNS,
    SELF_PREFERENCE_COLUMNS,
    Comparisons,
    compare_cells,
    comparison_tables,
    comparisons,
    rank_sets,
    self_preference_intervals,
)
from vocab.estimates.correct import (
    CORRECTION_COLUMNS,
    INTERVALS,
    correction_table,
    interval_text,
    variants,
)
from vocab.estimates.what_if import abandoned_bounds, invert_rater_error, inverted_rater_error_table

__all__ = [
    "COMPARISON_COLUMNS",
    "CORRECTION_COLUMNS",
    "INTERVALS",
    "KAPPA_COLUMNS",
    "RANK_COLUMNS",
    "SELF_PREFERENCE_COLUMNS",
    "Comparisons",
    "abandoned_bounds",
    "agreement_table",
    "check_audit",
    "checks_table",
    "compare_cells",
    "comparison_tables",
    "comparisons",
    "correction_table",
    "interval_text",
    "invert_rater_error",
    "inverted_rater_error_table",
    "kappa_table",
    "rank_sets",
    "script_adjudication",
    "self_preference_intervals",
    "variants",
]
