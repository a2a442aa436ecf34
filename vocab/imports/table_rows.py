"""A judgments table's rows, one at a time: the columns its first row (a CSV's header) fixes and the checks of one
row (`vocab import table`; :mod:`vocab.imports.table` checks whole columns in DuckDB the same way, and
names a refused row by these checks)."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vocab.datasets.dataset import cell_of
from vocab.datasets.names import check_cell_names
from vocab.datasets.values import as_text
from vocab.imports import common
from vocab.imports.common import VERDICT_WORDS, JudgmentImportError, first_line


def table_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
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


LABEL = "label"  # a person's label of the overall verdict: `label` (one person, --rater) or `label:<name>`
TABLE_PASS, TABLE_FAIL = ("passed",), ("failed",)


def word(value: Any, pass_values, fail_values, pass_at: float | None, where: str, empty: str) -> str:
    """PASSED, FAILED, or ``empty`` for a blank: a verdict word, or a number against ``pass_at``."""
    text = as_text(value).strip()
    if not text:
        return empty
    if text.upper() in ("PASSED", "FAILED", "UNSCORED") and empty == "UNSCORED":
        return text.upper()
    word = text.lower()
    if word in pass_values:
        return "PASSED"
    if word in fail_values:
        return "FAILED"
    if pass_at is not None:
        try:
            x = float(text)
        except ValueError:
            x = None
        if x is not None and x == x and abs(x) != float("inf"):
            return "PASSED" if x >= pass_at else "FAILED"
    words = ", ".join(
        dict.fromkeys(v.upper() if v in ("passed", "failed") else v for v in (*pass_values, *fail_values))
    )
    raise JudgmentImportError(
        f"{where}: {text[:40]!r} is not {words}" + (" or a number" if pass_at is not None else "") + " or empty"
    )


@dataclass
class Table:
    """What a table's first row (a CSV's header) fixes: the visible fields, the criteria, the label columns, and the
    words read as verdicts and labels."""

    path: Path
    vis: list[str]
    criteria: list[str]
    label_cols: dict[str, str]
    pass_values: tuple[str, ...]
    fail_values: tuple[str, ...]
    pass_at: float | None


def layout(path: Path, columns: list[str], visible, rater: str, pv, fv, pass_at) -> Table:
    vis = visible if visible is not None else ["input", "output"] + (["target"] if "target" in columns else [])
    criteria = sorted(k.split(":", 1)[1] for k in columns if k.startswith("criterion:"))
    if any(not c for c in criteria):
        raise JudgmentImportError(f"{path}: column 'criterion:' has no criterion name")
    label_cols = {
        k: (rater if k == LABEL else k.split(":", 1)[1].strip())
        for k in columns
        if k == LABEL or k.startswith(f"{LABEL}:")
    }
    if label_cols and criteria:
        raise JudgmentImportError(
            f"{path}: label columns ({', '.join(label_cols)}) beside criterion:* columns: "
            "people's labels are read of the overall verdict only; drop one, or rename the label columns to "
            "keep them hidden"
        )
    if any(not n for n in label_cols.values()) or len(set(label_cols.values())) < len(label_cols):
        raise JudgmentImportError(
            f"{path}: label columns {', '.join(label_cols)}: each names one person "
            "(label:<name>; label alone is --rater's)"
        )
    return Table(path, list(vis), criteria, label_cols, pv, fv, pass_at)


def verdict_of(t: Table, value: Any, where: str) -> str:
    verdict = VERDICT_WORDS.get(as_text(value).strip().upper())
    return verdict if verdict is not None else word(value, t.pass_values, t.fail_values, t.pass_at, where, "UNSCORED")


def epoch_of(t: Table, value: Any, where: str) -> int:
    epoch_text = as_text(value).strip() or "1"
    whole = epoch_text.isascii() and epoch_text.isdigit() and len(epoch_text) <= 7
    if not whole or not 1 <= int(epoch_text) <= 10**6:
        raise JudgmentImportError(f"{where}: {epoch_text[:40]!r} is not a whole number >= 1")
    return int(epoch_text)


def label_where(t: Table, n: int, col: str) -> str:
    return (
        f"{t.path}: row {n}, column {col!r} (read as {t.label_cols[col]}'s labels of the verdict: "
        "--pass-values/--fail-values for its words, or rename it to keep it hidden)"
    )


def check_row(t: Table, n: int, raw: dict[str, Any], labels: dict | None) -> dict[str, Any]:
    """One table row as a judgment row, or one line naming its row and column (every check but the repeated id,
    which the store checks over all rows)."""
    path = t.path
    for col in ("id", "system", "judge", "verdict", *t.vis):
        if col not in raw:
            raise JudgmentImportError(f"{path}: row {n}: no column {col!r}")
    for col in ("id", "system", "judge"):
        if not as_text(raw[col]).strip():
            raise JudgmentImportError(f"{path}: row {n}, column {col!r}: empty")
    verdict = verdict_of(t, raw["verdict"], f"{path}: row {n}, column 'verdict'")
    epoch = epoch_of(t, raw.get("epoch", "1"), f"{path}: row {n}, column 'epoch'")
    crit = {}
    for c in t.criteria:
        col = f"criterion:{c}"
        if col not in raw:
            raise JudgmentImportError(f"{path}: row {n}: no column {col!r}")
        value = as_text(raw[col]).strip().upper()
        if value not in ("PASSED", "FAILED") and not (verdict == "UNSCORED" and value == ""):
            raise JudgmentImportError(f"{path}: row {n}, column {col!r}: {value[:40]!r} is not PASSED or FAILED")
        crit[c] = value
    if t.criteria and verdict != "UNSCORED" and (verdict == "PASSED") != all(v == "PASSED" for v in crit.values()):
        raise JudgmentImportError(
            f"{path}: row {n}, column 'verdict': {verdict} does not follow from the criteria "
            "(PASSED exactly when every criterion is)"
        )
    for col in ("id", "system", "judge", *t.vis, *(f"criterion:{c}" for c in t.criteria)):
        if len(as_text(raw[col])) > common.MAX_FIELD:
            raise JudgmentImportError(f"{path}: row {n}, column {col!r}: longer than {common.MAX_FIELD:,} characters")
    ident = (as_text(raw["system"]), as_text(raw["judge"]), as_text(raw["id"]), epoch)
    check_cell_names([{"system": ident[0], "judge": ident[1], "id": ident[2]}])
    for col, person in t.label_cols.items():
        said = word(raw.get(col, ""), t.pass_values, t.fail_values, None, label_where(t, n, col), "")
        if said and labels is not None:
            labels.setdefault((cell_of(ident[0], ident[1]), ident[2], ident[3]), {})[person] = said
    known = {"id", "system", "judge", "verdict", "group", "epoch", "unscored_reason", *t.vis, *t.label_cols}
    hidden = {k: raw[k] for k in raw if k not in known and not k.startswith("criterion:")}
    if verdict == "UNSCORED":
        hidden["unscored_reason"] = as_text(raw.get("unscored_reason", "")).strip() or "unscored"
    return {
        "id": ident[2],
        "group": as_text(raw.get("group", "")).strip() or ident[2],
        "epoch": ident[3],
        "system": ident[0],
        "judge": ident[1],
        "verdict": verdict,
        "criteria": crit if verdict != "UNSCORED" else {},
        "visible": {f: as_text(raw[f]) for f in t.vis},
        "hidden": hidden,
    }


def csv_header(path: Path) -> list[str]:
    """A CSV's column names as Python's csv module reads them (a spreadsheet's byte-order mark is not a column)."""
    csv.field_size_limit(common.MAX_FIELD)
    try:
        with path.open(newline="", encoding="utf-8-sig") as f:
            header = next(csv.reader(f), None)
    except csv.Error as e:
        raise JudgmentImportError(f"{path}: row 0 (the header): {e}") from None
    except UnicodeDecodeError:
        raise JudgmentImportError(f"{path}: not UTF-8 text") from None
    if not header:
        raise JudgmentImportError(f"{path}: no rows")
    twice = sorted({c for c in header if header.count(c) > 1})
    if twice:
        raise JudgmentImportError(f"{path}: column {twice[0]!r} appears more than once in the header")
    return header


def row_of_record(path: Path, record: int) -> int:
    """The row number (from 1, as the row checks count: blank lines are not rows) of a CSV's ``record``-th record
    as DuckDB counts them in its errors (from 1, the header first, a blank line one record, a quoted line break
    none). Read again with Python's reader, on this error path only."""
    csv.field_size_limit(common.MAX_FIELD)
    rows = 0
    try:
        with path.open(newline="", encoding="utf-8-sig") as f:
            for k, fields in enumerate(csv.reader(f), start=1):
                if k > 1 and fields:
                    rows += 1
                if k == record:
                    return rows if fields else rows + 1
    except (csv.Error, UnicodeDecodeError):
        pass
    return record - 1


def duckdb_error(path: Path, e: Exception) -> JudgmentImportError:
    """DuckDB's reading error as one line naming the file, the row and what DuckDB found there."""
    text = str(e)
    line = re.search(r"CSV Error on Line: (\d+)", text)
    where = f"{path}: row {row_of_record(path, int(line.group(1)))}" if line else f"{path}"
    found = re.search(r"Expected Number of Columns: (\d+) Found: (\d+)", text)
    if found:
        more = int(found.group(2)) > int(found.group(1))
        return JudgmentImportError(f"{where}: {'more' if more else 'fewer'} fields than the header has columns")
    size = re.search(r"Maximum line size of (\d+) bytes exceeded", text)
    if size:
        return JudgmentImportError(
            f"{where}: longer than {int(size.group(1)):,} bytes (a field holds at most {common.MAX_FIELD:,} characters)"
        )
    if "unicode" in text.lower() or "utf-8" in text.lower() or "utf8" in text.lower():
        return JudgmentImportError(f"{path}: not UTF-8 text")
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    said = next((lines[k + 1] for k, x in enumerate(lines[:-1]) if x.startswith("Original Line:")), lines[0])
    return JudgmentImportError(f"{where}: cannot be read as a table ({first_line(said, 120)})")
