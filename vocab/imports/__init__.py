"""Verdicts from other harnesses, as judgments datasets (:mod:`vocab.datasets.dataset`): one module per source
(`table`, `inspect_logs`, `promptfoo`), the limits and checks they share in `common`.

``vocab import inspect LOG --run-dir D`` reads an Inspect log (``.eval`` or ``.json``) with inspect_ai's own
reader, one judged item per sample x epoch for one scorer. ``vocab import table FILE --run-dir D`` reads a CSV,
JSON Lines or Parquet table of any size (:mod:`~vocab.imports.table`) with these columns:

==================  =========  ===========================================================================
column              required   meaning
==================  =========  ===========================================================================
``id``              yes        the judged item
``system``          yes        the system under test (the model that answered)
``judge``           yes        the judge (the grader)
``verdict``         yes        PASSED, FAILED, or UNSCORED / empty: the judge gave no usable verdict
``group``           no         the unit the judge saw several times (default: the id)
``epoch``           no         1, 2, ... within a group (default 1)
``criterion:NAME``  no         a per-criterion verdict, PASSED or FAILED; the overall verdict must be PASSED
                               exactly when every criterion is
``unscored_reason`` no         why an UNSCORED item has no verdict
``score``           no         the judge's number beside its verdict (a finite number, or empty): kept hidden,
                               drawn against people's verdicts by the report (:mod:`vocab.estimates.scores`)
``label``           no         a person's label of the verdict (``--rater``; ``label:NAME`` for each named
                               person): the labelled rows become the sample, the labels their ratings
visible fields      yes        what a blind rater sees, ``--visible`` (default ``input,output``, and
                               ``target`` when the table has one)
anything else       no         kept hidden (never on the blind sheet)
==================  =========  ===========================================================================

A table whose header names ``system_a`` and ``system_b`` (or ``model_a`` and ``model_b``) compares two answers a row
("A, B or tie"): it is read as a pairwise dataset (:mod:`~vocab.imports.pairwise_table`, its columns there).

An UNSCORED item is its own class: counted and reported, excluded from the judge's pass rate, bounded in
``03_correct`` (had they all failed / passed), never a FAIL. A bad file gets one line naming the row and the
column, and nothing is written.
"""

from vocab.imports.common import (
    MAX_FIELD,
    MAX_JSON_LOG,
    MAX_MEMBER,
    MAX_RATIO,
    MAX_ROWS,
    JudgmentImportError,
    summary,
)
from vocab.imports.inspect_logs import (
    INSPECT_FAIL,
    INSPECT_PASS,
    INSPECT_QUESTION,
    import_inspect,
    read_inspect,
)
from vocab.imports.promptfoo import MODEL_GRADED, PROMPTFOO_QUESTION, import_promptfoo, read_promptfoo
from vocab.imports.table import RESERVED, import_table, read_table

__all__ = [
    "INSPECT_FAIL",
    "INSPECT_PASS",
    "INSPECT_QUESTION",
    "MAX_FIELD",
    "MAX_JSON_LOG",
    "MAX_MEMBER",
    "MAX_RATIO",
    "MAX_ROWS",
    "MODEL_GRADED",
    "PROMPTFOO_QUESTION",
    "RESERVED",
    "JudgmentImportError",
    "import_inspect",
    "import_promptfoo",
    "import_table",
    "read_inspect",
    "read_promptfoo",
    "read_table",
    "summary",
]
