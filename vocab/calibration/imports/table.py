"""Judgments tables (CSV or JSON Lines) as judgments datasets: `vocab import table`."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vocab.calibration.dataset import DEFAULT_QUESTION, declared_criteria, single_verdict, write_dataset
from vocab.calibration.imports import common
from vocab.calibration.imports.common import VERDICT_WORDS, JudgmentImportError, _check_file, _sha256, _text


def _table_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(row number, row) from a CSV or JSON Lines file, streamed; row 1 is the first data row."""
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl", ".ndjson"):  # another name: JSON Lines if it starts with an object, else CSV
        with path.open("rb") as f:
            suffix = ".jsonl" if f.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{") else ".csv"
    if suffix == ".csv":
        csv.field_size_limit(common.MAX_FIELD)
        with path.open(newline="", encoding="utf-8-sig") as f:  # a spreadsheet's byte-order mark is not a column
            reader = csv.DictReader(f)
            try:
                for n, row in enumerate(reader, start=1):
                    if None in row:
                        raise JudgmentImportError(f"{path}: row {n}: more fields than the header has columns")
                    if any(v is None for v in row.values()):
                        raise JudgmentImportError(f"{path}: row {n}: fewer fields than the header has columns")
                    yield n, row
            except csv.Error as e:
                raise JudgmentImportError(f"{path}: row {reader.line_num}: {e}") from None
            except UnicodeDecodeError:
                raise JudgmentImportError(f"{path}: not UTF-8 text") from None
    elif suffix in (".jsonl", ".ndjson"):
        with path.open("rb") as f:
            for n, raw in enumerate(f, start=1):
                if len(raw) > common.MAX_FIELD * 4:
                    raise JudgmentImportError(f"{path}: row {n}: a line of {len(raw)} bytes is longer than the limit")
                if not raw.strip():
                    continue
                try:
                    obj = json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError) as e:
                    raise JudgmentImportError(f"{path}: row {n}: not a JSON object ({e})") from None
                except RecursionError:
                    raise JudgmentImportError(f"{path}: row {n}: JSON nested too deep to read") from None
                if not isinstance(obj, dict):
                    raise JudgmentImportError(f"{path}: row {n}: not a JSON object")
                yield n, obj


# columns that carry the judge's side of a row: showing any of them to a blind rater would break the blinding
RESERVED = ("id", "system", "judge", "verdict", "group", "epoch", "criteria")


def read_table(
    path: str | Path, visible: list[str] | None = None, question: str = DEFAULT_QUESTION
) -> tuple[list[dict], dict[str, Any]]:
    """Judgment rows and dataset metadata from a table; raises :class:`JudgmentImportError` on the first problem."""
    path = Path(path)
    _check_file(path)
    rows: list[dict] = []
    seen: dict[tuple, int] = {}
    criteria: list[str] | None = None
    vis = visible
    reserved = sorted(v for v in vis or () if v in RESERVED or v.startswith("criterion:"))
    if reserved:
        raise JudgmentImportError(
            f"--visible {','.join(vis)}: {', '.join(reserved)} can never be shown to a blind rater"
        )
    cells = 0
    for n, raw in _table_rows(path):
        if n > common.MAX_ROWS:
            raise JudgmentImportError(f"{path}: more than {common.MAX_ROWS} rows; split the file")
        cells += len(raw)
        if cells > common.MAX_CELLS:
            raise JudgmentImportError(
                f"{path}: more than {common.MAX_CELLS:,} cells by row {n} ({len(raw)} columns a row); drop the "
                "columns the audit does not need, or split the file"
            )
        if vis is None:
            vis = ["input", "output"] + (["target"] if "target" in raw else [])
        if criteria is None:
            criteria = sorted(k.split(":", 1)[1] for k in raw if k.startswith("criterion:"))
            if any(not c for c in criteria):
                raise JudgmentImportError(f"{path}: column 'criterion:' has no criterion name")
        for col in ("id", "system", "judge", "verdict", *vis):
            if col not in raw:
                raise JudgmentImportError(f"{path}: row {n}: no column {col!r}")
        for col in ("id", "system", "judge"):
            if not _text(raw[col]).strip():
                raise JudgmentImportError(f"{path}: row {n}, column {col!r}: empty")
        verdict = VERDICT_WORDS.get(_text(raw["verdict"]).strip().upper())
        if verdict is None:
            raise JudgmentImportError(
                f"{path}: row {n}, column 'verdict': {_text(raw['verdict'])[:40]!r} is not PASSED, FAILED, UNSCORED "
                "or empty"
            )
        epoch_text = _text(raw.get("epoch", "1")).strip() or "1"
        if (
            not (epoch_text.isascii() and epoch_text.isdigit() and len(epoch_text) <= 7)
            or not 1 <= int(epoch_text) <= 10**6
        ):
            raise JudgmentImportError(
                f"{path}: row {n}, column 'epoch': {epoch_text[:40]!r} is not a whole number >= 1"
            )
        crit = {}
        for c in criteria:
            col = f"criterion:{c}"
            if col not in raw:
                raise JudgmentImportError(f"{path}: row {n}: no column {col!r}")
            value = _text(raw[col]).strip().upper()
            if value not in ("PASSED", "FAILED") and not (verdict == "UNSCORED" and value == ""):
                raise JudgmentImportError(f"{path}: row {n}, column {col!r}: {value[:40]!r} is not PASSED or FAILED")
            crit[c] = value
        if criteria and verdict != "UNSCORED" and (verdict == "PASSED") != all(v == "PASSED" for v in crit.values()):
            raise JudgmentImportError(
                f"{path}: row {n}, column 'verdict': {verdict} does not follow from the criteria "
                "(PASSED exactly when every criterion is)"
            )
        ident = (_text(raw["system"]), _text(raw["judge"]), _text(raw["id"]), int(epoch_text))
        if ident in seen:
            raise JudgmentImportError(
                f"{path}: row {n}, column 'id': {ident[2]!r} repeats row {seen[ident]} (same system, judge, epoch)"
            )
        seen[ident] = n
        known = {"id", "system", "judge", "verdict", "group", "epoch", "unscored_reason", *vis}
        hidden = {k: raw[k] for k in raw if k not in known and not k.startswith("criterion:")}
        if verdict == "UNSCORED":
            hidden["unscored_reason"] = _text(raw.get("unscored_reason", "")).strip() or "unscored"
        rows.append(
            {
                "id": ident[2],
                "group": _text(raw.get("group", "")).strip() or ident[2],
                "epoch": ident[3],
                "system": ident[0],
                "judge": ident[1],
                "verdict": verdict,
                "criteria": crit if verdict != "UNSCORED" else {},
                "visible": {f: _text(raw[f]) for f in vis},
                "hidden": hidden,
            }
        )
    if not rows:
        raise JudgmentImportError(f"{path}: no rows")
    rub = declared_criteria(criteria, question) if criteria else single_verdict(question)
    meta = {
        "name": path.stem,
        "source": {"kind": "table", "path": str(path), "sha256": _sha256(path)},
        "rubric": rub.as_dict(),
        "visible": list(vis),
    }
    return rows, meta


def import_table(
    path: str | Path, run_dir: str | Path, visible: list[str] | None = None, question: str = DEFAULT_QUESTION
) -> Path:
    rows, meta = read_table(path, visible, question)
    return write_dataset(run_dir, rows, meta)
