"""The calibration chain's public names in one place, for the notebooks and for scripts written against it
(``from vocab import calibration``; ``calibration.read_ratings(...)``). Nothing lives here: each name is its room's.

- :mod:`vocab.datasets` — the judged items and their rubric, from a run or imported from another harness;
- :mod:`vocab.sampling` — the stratified blind sample, its sheet and its key;
- :mod:`vocab.raters` — the raters' files, the LLM and script raters, the packet, the form and the page, and the
  whole chain as the demo runs it;
- :mod:`vocab.estimates` — what is estimated from them (not re-exported here).

Library code imports from the rooms, never from here (the layer test holds the order)."""

from vocab.datasets.dataset import (
    VOCABSCAPES,
    Dataset,
    JudgeRubric,
    load_dataset,
    read_rubric,
)
from vocab.raters.chain import (
    calibrate_run,
)
from vocab.raters.form import (
    RatingSession,
    form_widget,
)
from vocab.raters.packet import (
    check_rater_name,
    make_packet,
    rater_order,
)
from vocab.raters.raters import (
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
from vocab.sampling.sample import (
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
