"""The harnesses vocab reads, listed once: the word that names each (`vocab audit --source`, `vocab import NAME`),
where its reader lives, the option that picks the judge in its files, and the files it reads. The audit's sniffing
and dispatch, the command line's choices and its help read this list (a new importer is one row here:
docs/contributing.md)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Harness:
    name: str  # the --source word
    module: str  # its reader, a module of vocab.imports
    function: str  # the reader's import function: (source, run_dir, **options) -> the dataset's directory
    option: str | None  # the audit's option that picks the judge's grades in its files, if it has one
    keyword: str | None  # that option as the import function's keyword
    files: str  # what it reads, in words

    def reader(self) -> Callable:
        return getattr(importlib.import_module(f"vocab.imports.{self.module}"), self.function)


HARNESSES = (
    Harness("inspect", "inspect_logs", "import_inspect", "--scorer", "scorer", "an Inspect log (.eval/.json)"),
    Harness("promptfoo", "promptfoo", "import_promptfoo", "--assertion", "assertion", "promptfoo results (.json)"),
    Harness("mlflow", "mlflow_traces", "import_mlflow", "--feedback", "feedback", "MLflow traces (.json/.jsonl)"),
    Harness("deepeval", "deepeval_runs", "import_deepeval", "--metric", "metric", "a DeepEval test run (.json)"),
    Harness("table", "table", "import_table", None, None, "a table (.csv/.jsonl/.parquet)"),
)
NAMES = tuple(h.name for h in HARNESSES)


def harness(name: str) -> Harness:
    return next(h for h in HARNESSES if h.name == name)


def files_text() -> str:
    """Every harness's files in one phrase, for the command line's help and the audit's refusal."""
    return ", ".join(h.files for h in HARNESSES)
