"""Which harness wrote a file, told from its suffix and, for ``.json`` and ``.jsonl``, its contents, and the file
imported by that harness's reader (:data:`vocab.imports.registry.HARNESSES`): `vocab audit SOURCE`'s first step.
A directory already holding a run or an imported dataset is audited in place."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from vocab.datasets.dataset import is_imported
from vocab.datasets.errors import CalibrationError
from vocab.files import check_file, check_json_cost, read_bytes
from vocab.imports.common import MAX_JSON_LOG, summary
from vocab.imports.registry import HARNESSES, files_text, harness

TABLE_SUFFIXES = (".csv", ".jsonl")
INSPECT_SUFFIXES = (".eval", ".json")


@dataclass(frozen=True)
class Imported:
    """Where the audit's dataset is: ``dir``; ``fresh``: this call imported it (into an ``--out`` that held none),
    so a refusal further on leaves nothing behind; ``summary``: the import's one line (None for a directory)."""

    dir: Path
    fresh: bool
    summary: str | None


def json_kind(source: Path) -> str:
    """A .json source: promptfoo's results (``results.results`` a list), MLflow traces, DeepEval's test run or an
    Inspect log. Read whole, within the import's own size limit (the import reads it again: a second read of at most
    64 MiB)."""
    if source.stat().st_size > MAX_JSON_LOG:  # too large to read whole: promptfoo's results name their eval first
        with source.open("rb") as f:
            return "promptfoo" if b'"evalId"' in f.read(65536) else "inspect"  # its reader refuses it, with the size
    data = read_bytes(source, MAX_JSON_LOG, "file", CalibrationError)
    check_json_cost(data, source, CalibrationError)
    try:
        doc = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return "inspect"  # its reader names the problem
    inner = doc.get("results") if isinstance(doc, dict) else None
    if isinstance(inner, dict) and isinstance(inner.get("results"), list):
        return "promptfoo"
    if isinstance(doc, dict) and (isinstance(doc.get("traces"), list) or isinstance(doc.get("info"), dict)):
        return "mlflow"
    if isinstance(doc, dict) and ("testCases" in doc or isinstance(doc.get("testRunData"), dict)):
        return "deepeval"
    return "inspect"


def jsonl_kind(source: Path) -> str:
    """A .jsonl source: MLflow traces (``Trace.to_json()`` a line: an ``info`` object) or a table's rows."""
    with source.open("rb") as f:
        for line in f:
            if line.strip():
                try:
                    first = json.loads(line)
                except (ValueError, RecursionError):
                    return "table"  # its reader names the problem
                return "mlflow" if isinstance(first, dict) and isinstance(first.get("info"), dict) else "table"
    return "table"


def import_source(source: Path, out: Path | None, import_kw: dict, kind: str | None = None) -> Imported:
    """``source`` (a harness's file, or a directory holding a run or dataset) as a dataset directory: a file is
    imported into ``out`` by its harness's reader (``kind``, else told from the file); ``import_kw``: each harness's
    own options (one given for another harness's file is refused, never ignored). One line for a bad source."""
    if source.is_dir():
        if kind is not None:
            raise CalibrationError(f"{source} is a directory: --source is for a file")
        if out is not None and out.resolve() != source.resolve():
            raise CalibrationError(f"{source} is a directory: it is audited in place (leave out --out)")
        if not ((source / "manifest.json").exists() or is_imported(source)):
            raise CalibrationError(
                f"{source} holds neither a run (manifest.json) nor an imported dataset (dataset.json)"
            )
        return Imported(source, False, None)
    if out is None:
        raise CalibrationError(f"{source} is a file: name a new directory for its dataset with --out")
    fresh = not out.exists() or not any(out.iterdir())  # nothing there before: a refusal may remove it whole
    check_file(source, "file", CalibrationError)
    suffix = source.suffix.lower()
    if kind is None and suffix == ".json":
        kind = json_kind(source)
    if kind is None and suffix == ".jsonl":
        kind = jsonl_kind(source)
    kind_of = kind or ("inspect" if suffix in INSPECT_SUFFIXES else "table")
    options = {h.name: h.option for h in HARNESSES if h.option}
    for other, kw in import_kw.items():  # an option of another harness's file is named, never ignored
        given = [k for k, v in kw.items() if v is not None and k != "seed"]
        if other != kind_of and given:
            raise CalibrationError(
                f"{options.get(other, given[0])} is for {other} files; {source} reads as "
                f"{kind_of} (leave it out, or name the kind with --source)"
            )
    if kind is None and suffix in INSPECT_SUFFIXES:
        kind = "inspect"
    elif kind is None and suffix in TABLE_SUFFIXES:
        kind = "table"
    if kind is None:
        raise CalibrationError(
            f"{source}: unknown kind of source {suffix or '(no suffix)'!r} ({files_text()}, or a run or dataset "
            "directory; or say which with --source)"
        )
    harness(kind).reader()(source, out, **import_kw.get(kind, {}))
    return Imported(out, fresh, summary(out))
