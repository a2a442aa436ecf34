"""Calibrating the critic against blind raters: the judged items and their rubric, from a run or imported from
another harness (`dataset`, `imports`), the stratified blind sample (`sample`), the raters and their
files (`raters`, the human form in `form`; who they are and the pooled people in `blind`), the bias-corrected
rate with its interval (`correct`), the agreement between raters and critic (`agreement`), and the whole chain as
the demo runs it (`chain`)."""

from vocab.calibration.agreement import (
    KAPPA_COLUMNS,
    agreement_table,
    checks_table,
    kappa_table,
    script_adjudication,
)
from vocab.calibration.chain import (
    calibrate_run,
)
from vocab.calibration.correct import (
    CORRECTION_COLUMNS,
    INTERVALS,
    abandoned_bounds,
    check_audit,
    correction_table,
    interval_text,
    invert_rater_error,
    inverted_rater_error_table,
    rank_table,
    self_preference,
    variants,
)
from vocab.calibration.dataset import (
    VOCABSCAPES,
    Dataset,
    JudgeRubric,
    load_dataset,
    read_rubric,
)
from vocab.calibration.form import (
    RatingSession,
    form_widget,
)
from vocab.calibration.packet import (
    check_rater_name,
    make_packet,
    rater_order,
)
from vocab.calibration.raters import (
    RATING_COLUMNS,
    SCOPE_COLUMNS,
    RaterProgress,
    coverage_text,
    import_ratings,
    rate_until_complete,
    rate_with_model,
    rater_error_vs_script,
    rater_passes,
    read_ratings,
    script_ratings,
    validate_ratings,
    write_script_ratings,
)
from vocab.calibration.sample import (
    KEY_COLUMNS,
    SHEET_COLUMNS,
    CalibrationError,
    Sample,
    allocate,
    draw_sample,
    pile_sizes,
    read_key,
    read_sheet,
    write_sample,
)

__all__ = [
    "allocate",
    "pile_sizes",
    "CORRECTION_COLUMNS",
    "KAPPA_COLUMNS",
    "agreement_table",
    "CalibrationError",
    "Dataset",
    "JudgeRubric",
    "VOCABSCAPES",
    "load_dataset",
    "read_ratings",
    "read_rubric",
    "RatingSession",
    "check_rater_name",
    "form_widget",
    "make_packet",
    "rater_order",
    "INTERVALS",
    "KEY_COLUMNS",
    "RATING_COLUMNS",
    "RaterProgress",
    "SCOPE_COLUMNS",
    "SHEET_COLUMNS",
    "Sample",
    "abandoned_bounds",
    "coverage_text",
    "calibrate_run",
    "check_audit",
    "checks_table",
    "correction_table",
    "draw_sample",
    "import_ratings",
    "interval_text",
    "invert_rater_error",
    "inverted_rater_error_table",
    "kappa_table",
    "rank_table",
    "rate_until_complete",
    "rate_with_model",
    "rater_error_vs_script",
    "rater_passes",
    "read_key",
    "read_sheet",
    "script_adjudication",
    "script_ratings",
    "self_preference",
    "validate_ratings",
    "variants",
    "write_sample",
    "write_script_ratings",
]
