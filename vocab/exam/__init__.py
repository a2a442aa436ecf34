"""Qualifying a judge before it is trusted: planted defects (`planted`), identical-pair null tests and
known-answer pairs (`pairwise`), the writer tournament (`tournament`), the pre-registration (`registry`), the
runner and its tables (`run`), and the metrics with the degenerate judges they are compared to (`metrics`)."""

from vocab.exam import metrics, pairwise, planted, registry, run, tables, tournament
from vocab.exam.metrics import (
    BALANCED_ACCURACY_MIN,
    TIE_RATE_MIN,
    ExamError,
    degenerate_scores,
    pairwise_metrics,
    planted_metrics,
    qualifies,
)
from vocab.exam.run import ExamResults, load_exam, run_exam
from vocab.exam.tables import determinism, pairwise_table, planted_degenerate, planted_table
from vocab.exam.tournament import tournament_table

__all__ = [
    "ExamResults",
    "BALANCED_ACCURACY_MIN",
    "TIE_RATE_MIN",
    "ExamError",
    "degenerate_scores",
    "determinism",
    "load_exam",
    "metrics",
    "pairwise",
    "pairwise_metrics",
    "pairwise_table",
    "planted",
    "planted_degenerate",
    "planted_metrics",
    "planted_table",
    "qualifies",
    "registry",
    "run",
    "run_exam",
    "tables",
    "tournament",
    "tournament_table",
]
