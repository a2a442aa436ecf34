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


LABEL = "label"  # a person's label of the overall verdict: `label` (one person, --rater) or `label:<name>`
TABLE_PASS, TABLE_FAIL = ("passed",), ("failed",)


def _word(value: Any, pass_values, fail_values, pass_at: float | None, where: str, empty: str) -> str:
    """PASSED, FAILED, or ``empty`` for a blank: a verdict word, or a number against ``pass_at``."""
    text = _text(value).strip()
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
    words = ", ".join(dict.fromkeys(v.upper() if v in ("passed", "failed") else v for v in (*pass_values,
                                                                                           *fail_values)))  # fmt: skip
    raise JudgmentImportError(f"{where}: {text[:40]!r} is not {words}" + (" or a number" if pass_at is not None else "")
                              + " or empty")  # fmt: skip


def read_table(
    path: str | Path, visible: list[str] | None = None, question: str = DEFAULT_QUESTION, *, rater: str = "person",
    pass_values=TABLE_PASS, fail_values=TABLE_FAIL, pass_at: float | None = None,
    labels: dict | None = None,
) -> tuple[list[dict], dict[str, Any]]:  # fmt: skip
    """Judgment rows and dataset metadata from a table; raises :class:`JudgmentImportError` on the first problem.
    People's labels of the overall verdict in ``label`` (one person, ``rater``) or ``label:<name>`` columns go into
    ``labels`` (row key (cell, id, epoch) -> person -> PASSED/FAILED) when given; ``pass_values``,
    ``fail_values`` (lowercase) and ``pass_at`` read other words, and a numeric verdict, in the verdict and labels."""
    path = Path(path)
    pass_values = tuple(dict.fromkeys(("passed", *(v.lower() for v in pass_values))))
    fail_values = tuple(dict.fromkeys(("failed", *(v.lower() for v in fail_values))))
    if set(pass_values) & set(fail_values):
        raise JudgmentImportError(f"{sorted(set(pass_values) & set(fail_values))[0]!r} is both a pass and a fail value")
    label_cols: dict[str, str] | None = None
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
        if label_cols is None:
            label_cols = {k: (rater if k == LABEL else k.split(":", 1)[1].strip()) for k in raw
                          if k == LABEL or k.startswith(f"{LABEL}:")}  # fmt: skip
            if label_cols and criteria:
                raise JudgmentImportError(
                    f"{path}: label columns ({', '.join(label_cols)}) beside criterion:* columns: "
                    "people's labels are read of the overall verdict only; drop one, or rename the label columns to "
                    "keep them hidden"
                )
            if any(not n for n in label_cols.values()) or len(set(label_cols.values())) < len(label_cols):
                raise JudgmentImportError(f"{path}: label columns {', '.join(label_cols)}: each names one person "
                                          "(label:<name>; label alone is --rater's)")  # fmt: skip
        for col in ("id", "system", "judge", "verdict", *vis):
            if col not in raw:
                raise JudgmentImportError(f"{path}: row {n}: no column {col!r}")
        for col in ("id", "system", "judge"):
            if not _text(raw[col]).strip():
                raise JudgmentImportError(f"{path}: row {n}, column {col!r}: empty")
        verdict = VERDICT_WORDS.get(_text(raw["verdict"]).strip().upper())
        if verdict is None:
            verdict = _word(raw["verdict"], pass_values, fail_values, pass_at, f"{path}: row {n}, column 'verdict'",
                            "UNSCORED")  # fmt: skip
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
        for col, person in label_cols.items():
            said = _word(raw.get(col, ""), pass_values, fail_values, None,
                         f"{path}: row {n}, column {col!r} (read as {person}'s labels of the verdict: "
                         "--pass-values/--fail-values for its words, or rename it to keep it hidden)", "")  # fmt: skip
            if said and labels is not None:
                labels.setdefault((f"{ident[0]}__{ident[1]}", ident[2], ident[3]), {})[person] = said
        known = {"id", "system", "judge", "verdict", "group", "epoch", "unscored_reason", *vis, *label_cols}
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
    path: str | Path, run_dir: str | Path, visible: list[str] | None = None, question: str = DEFAULT_QUESTION, *,
    seed: int = 0, notes: list[str] | None = None, **kw,
) -> Path:  # fmt: skip
    """`vocab import table`: a table to a judgments dataset, and its label columns (people's labels of the overall
    verdict) to its sample and ratings, as MLflow's people's feedback (:func:`vocab.calibration.imports.labels.
    write_labels`: the labelled rows are the sample, allocation ``labels``)."""
    from vocab.calibration.imports.labels import check_labels_fit, write_labels
    from vocab.files import check_writable

    labels: dict = {}
    rows, meta = read_table(path, visible, question, labels=labels, **kw)
    people: dict[str, int] = {}
    for by in labels.values():
        for name in by:
            people[name] = people.get(name, 0) + 1
    meta["source"]["human_labels"] = dict(sorted(people.items()))
    check_labels_fit(run_dir, {k: v for k, v in labels.items()})
    if labels:
        check_writable(Path(run_dir) / "calibration" / "key.csv", run_dir, JudgmentImportError)
    out = write_dataset(run_dir, rows, meta)
    scored = {(f"{r['system']}__{r['judge']}", r["id"], r["epoch"]) for r in rows if r["verdict"] != "UNSCORED"}
    if scored & set(labels):
        said = write_labels(out, labels, seed=seed, source="people's labels in the table's label columns")
        if notes is not None:
            notes += said
    return out
