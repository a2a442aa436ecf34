"""Calibrating the critic against blind raters: the judged items and their rubric, from a run or imported from
another harness (`dataset`, `imports`), the stratified blind sample (`sample`), the raters and their
files (`raters`, the human form in `form`; who they are and the pooled people in `blind`), and the whole chain as
the demo runs it (`chain`). What is estimated from them (the corrected rate, agreement, comparisons, the gate) is
the next stage, :mod:`vocab.estimates`; the audit that strings every stage together is :mod:`vocab.audit`."""

from vocab.calibration.chain import (
    calibrate_run,
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
    "KEY_COLUMNS",
    "RATING_COLUMNS",
    "RaterProgress",
    "SCOPE_COLUMNS",
    "SHEET_COLUMNS",
    "Sample",
    "coverage_text",
    "calibrate_run",
    "draw_sample",
    "import_ratings",
    "rate_until_complete",
    "rate_with_model",
    "rater_error_vs_script",
    "rater_passes",
    "read_key",
    "read_sheet",
    "script_ratings",
    "validate_ratings",
    "write_sample",
    "write_script_ratings",
]
