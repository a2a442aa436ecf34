"""A table whose rows compare two answers ("A, B or tie") as a pairwise dataset (:mod:`vocab.datasets.pairwise`):
`vocab import table` reads it when the header names ``system_a`` and ``system_b`` (or ``model_a`` and ``model_b``).

==================  =========  ===========================================================================
column              required   meaning
==================  =========  ===========================================================================
``system_a``        yes        the system whose answer was shown first (also ``model_a``)
``system_b``        yes        the other (also ``model_b``)
``verdict``         yes        the judge's preference: one of :data:`VERDICT_WORDS` (empty: no verdict)
``verdict_swapped`` no         the judge's preference with the answers shown the other way round, named by
                               system as ``verdict`` is (A is still ``system_a``'s answer)
``id``              no         the item (default: its row); two rows of one id and judge are its two orders,
                               each row naming the systems in the order shown
``judge``           no         the judge (default ``judge``)
``group``           no         the unit the items came from (default: the id)
``input``, ``output_a``, ``output_b``  no  the prompt and the two answers
``label:NAME``      no         NAME's label of the item (a word of :data:`VERDICT_WORDS`; empty: not labelled);
                               ``label`` is ``--rater``'s (default ``person``)
==================  =========  ===========================================================================

Other columns are kept. A cell is a pairing of two systems under one judge, oriented canonically (A the name that
sorts first): a row logged the other way round has its systems, answers, verdicts and labels flipped. A bad table
(a verdict or label outside the words, a system compared with itself, a row without both systems, two orders of an
item whose systems do not mirror each other, an id thrice) is one line naming the row, and nothing is written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from vocab.datasets.pairwise import CLASSES, KIND, LABEL_PREFIX, cell_name
from vocab.files import sha256_file
from vocab.imports.common import JudgmentImportError
from vocab.imports.table_rows import csv_header
from vocab.layout import RunDir

# every spelling of the three verdicts, lower-cased (MT-Bench / FastChat, Arena-Hard, AlpacaEval, LangSmith)
VERDICT_WORDS = {
    **dict.fromkeys(("a", "model_a", "a>b", "a>>b", "1", "1.0"), "a"),
    **dict.fromkeys(("b", "model_b", "b>a", "b>>a", "2", "2.0"), "b"),
    **dict.fromkeys(("tie", "tie (inconsistent)", "tie (bothbad)", "a=b", "1.5"), "tie"),
    "": "",
}
PAIRS = (("system_a", "system_b"), ("model_a", "model_b"))
FLIP = {"a": "b", "b": "a", "tie": "tie", "": ""}


def pairwise_header(path: Path) -> list[str] | None:
    """The table's columns when they name a pairwise table's two systems, else None (a table of one system)."""
    header = _header(path)
    if any(a in header and b in header for a, b in PAIRS):
        return header
    return None


def _header(path: Path) -> list[str]:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        with path.open("rb") as f:
            for line in f:
                if line.strip():
                    try:
                        first = json.loads(line)
                    except (ValueError, RecursionError):
                        return []  # the table's reader names the problem
                    return list(first) if isinstance(first, dict) else []
        return []
    if suffix == ".parquet":
        import pyarrow.parquet as pq  # deferred: only a Parquet table needs it

        try:
            return list(pq.read_schema(path).names)
        except (OSError, ValueError):  # not Parquet after all (ArrowInvalid is a ValueError): its reader says so
            return []
    if suffix == ".csv":
        return csv_header(path)
    return []


def _read(path: Path) -> pd.DataFrame:
    suffix = path.suffix.lower()
    try:
        if suffix in (".jsonl", ".ndjson"):
            frame = pd.read_json(path, lines=True, dtype=False)
        elif suffix == ".parquet":
            frame = pd.read_parquet(path)
        else:
            frame = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    except (ValueError, UnicodeDecodeError, OSError) as e:
        raise JudgmentImportError(f"{path}: not a readable table: {' '.join(str(e).split())[:120]}") from None
    return frame.astype(object).where(frame.notna(), "").map(lambda v: "" if v is None else str(v).strip())


def _word(path: Path, n: int, column: str, value: str) -> str:
    w = VERDICT_WORDS.get(value.lower())
    if w is None:
        raise JudgmentImportError(
            f"{path}: row {n}, column {column}: {value[:40]!r} is no verdict (A, B or tie; also model_a, model_b, "
            "A>B, A>>B, B>A, B>>A, A=B, tie (inconsistent), tie (bothbad), 1, 2, 1.5; empty: none)"
        )
    return w


def read_pairwise_table(path: str | Path, rater: str = "person") -> tuple[pd.DataFrame, dict]:
    """The table's items in canonical orientation, every row checked (:func:`import_pairwise_table` writes them)."""
    path = Path(path)
    frame = _read(path)
    if frame.empty:
        raise JudgmentImportError(f"{path}: no rows")
    a_col, b_col = next((a, b) for a, b in PAIRS if a in frame.columns and b in frame.columns)
    if "verdict" not in frame.columns:
        raise JudgmentImportError(f"{path}: no verdict column (the judge's A, B or tie)")
    if "label" in frame.columns:
        if LABEL_PREFIX + rater in frame.columns:
            raise JudgmentImportError(f"{path}: columns label and {LABEL_PREFIX}{rater} both hold {rater}'s labels")
        frame = frame.rename(columns={"label": LABEL_PREFIX + rater})
    labels = [c for c in frame.columns if c.startswith(LABEL_PREFIX)]
    rows = []
    for i, r in enumerate(frame.to_dict("records"), start=1):
        a, b = r[a_col], r[b_col]
        if not a or not b:
            said = [c for c in labels if r[c]]
            what = "a label on an item with no pairing" if said else "an item with no pairing"
            raise JudgmentImportError(f"{path}: row {i}: {what} ({a_col} or {b_col} empty)")
        if a == b:
            raise JudgmentImportError(f"{path}: row {i}: compares {a!r} with itself")
        row = dict(r)
        row["row"] = i
        row["verdict"] = _word(path, i, "verdict", r["verdict"])
        if "verdict_swapped" in r:
            row["verdict_swapped"] = _word(path, i, "verdict_swapped", r["verdict_swapped"])
        for c in labels:
            row[c] = _word(path, i, c, r[c])
        row["system_a"], row["system_b"] = a, b
        rows.append(row)
    items = _merge_orders(path, rows)
    out = pd.DataFrame([_canonical(r) for r in items])
    out["cell"] = [cell_name(a, b, j) for a, b, j in zip(out.system_a, out.system_b, out.judge, strict=True)]
    ties = bool((out.verdict == "tie").any() or (out.verdict_swapped == "tie").any())
    ties = ties or any((out[c] == "tie").any() for c in labels)
    front = ["id", "cell", "system_a", "system_b", "judge", "group", "first", "verdict", "verdict_swapped"]
    rest = [c for c in out.columns if c not in front and c not in ("row", a_col, b_col)]
    out = out[front + sorted(rest)]
    meta = {
        "kind": KIND,
        "ties": ties,
        "source": {"path": str(path), "sha256": sha256_file(path), "rows": len(frame), "columns": [a_col, b_col]},
        "items": len(out),
        "unscored": int((out.verdict == "").sum()),
        "cells": sorted(out.cell.unique().tolist()),
        "people": sorted(c.removeprefix(LABEL_PREFIX) for c in labels),
        "both_orders": int((out.verdict_swapped != "").sum()),
    }
    return out, meta


def _merge_orders(path: Path, rows: list[dict]) -> list[dict]:
    """Rows of one item (its id and judge) logged in both orders as one item: the first row's verdict, the second's
    as ``verdict_swapped``. Each row must name the other's systems in the other order."""
    if "id" not in rows[0]:
        for r in rows:
            r["id"] = str(r["row"])
        return rows
    by: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        if not r["id"]:
            raise JudgmentImportError(f"{path}: row {r['row']}: empty id")
        by.setdefault((r["id"], r.get("judge", "")), []).append(r)
    out = []
    for (item, _), group in by.items():
        if len(group) > 2:
            raise JudgmentImportError(
                f"{path}: rows {', '.join(str(r['row']) for r in group)}: id {item!r} appears more than twice "
                "(once, or once in each order)"
            )
        if len(group) == 1:
            out.append(group[0])
            continue
        one, two = group
        if (one["system_a"], one["system_b"]) != (two["system_b"], two["system_a"]):
            raise JudgmentImportError(
                f"{path}: rows {one['row']} and {two['row']}: id {item!r} twice, but the two orders disagree in "
                f"name ({one['system_a']} / {one['system_b']} against {two['system_a']} / {two['system_b']})"
            )
        if one.get("verdict_swapped") or two.get("verdict_swapped"):
            raise JudgmentImportError(
                f"{path}: rows {one['row']} and {two['row']}: id {item!r} in both orders and a verdict_swapped too"
            )
        merged = dict(one)
        merged["verdict_swapped"] = FLIP[two["verdict"]]  # the second row's A is the first row's B
        # people's labels name systems by the row's own columns: the second row's flip to the first's
        for c in [k for k in two if k.startswith(LABEL_PREFIX)]:
            if not merged[c] and two[c]:
                merged[c] = FLIP[two[c]]
            elif merged[c] and two[c] and FLIP[two[c]] != merged[c]:
                raise JudgmentImportError(
                    f"{path}: rows {one['row']} and {two['row']}: {c.removeprefix(LABEL_PREFIX)} labels id "
                    f"{item!r} differently in its two orders"
                )
        out.append(merged)
    return out


def _canonical(r: dict) -> dict:
    """A row in its cell's orientation (A the system whose name sorts first), with which side was shown first."""
    row = dict(r)
    row.setdefault("verdict_swapped", "")
    row["judge"] = row.get("judge") or "judge"
    row["group"] = row.get("group") or row["id"]
    flip = row["system_a"] > row["system_b"]
    row["first"] = "b" if flip else "a"
    if flip:
        row["system_a"], row["system_b"] = row["system_b"], row["system_a"]
        if "output_a" in row or "output_b" in row:
            row["output_a"], row["output_b"] = row.get("output_b", ""), row.get("output_a", "")
        for c in ["verdict", "verdict_swapped", *[k for k in row if k.startswith(LABEL_PREFIX)]]:
            row[c] = FLIP[row[c]]
    return row


def import_pairwise_table(path: str | Path, run_dir: str | Path, *, rater: str = "person") -> Path:
    """The table as a pairwise dataset in ``run_dir`` (a new or empty directory): ``pairwise_items.csv``, then
    ``pairwise.json`` last. Nothing is written before every row is checked."""
    d = RunDir(run_dir)
    root = Path(run_dir)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise JudgmentImportError(f"{run_dir}: not empty (a pairwise dataset is imported into a new directory)")
    items, meta = read_pairwise_table(path, rater)
    assert set(items.verdict) <= {*CLASSES, ""}
    root.mkdir(parents=True, exist_ok=True)
    items.to_csv(d.pairwise_items, index=False)
    meta["items_sha256"] = sha256_file(d.pairwise_items)
    d.pairwise_meta.write_text(json.dumps(meta, indent=1) + "\n")
    return root


def pairwise_summary(run_dir: str | Path) -> str:
    """The import's one line."""
    meta = json.loads(RunDir(run_dir).pairwise_meta.read_text())
    cells = len(meta["cells"])
    people = ", ".join(meta["people"]) or "none"
    tie = "A, B or tie" if meta["ties"] else "A or B (no tie anywhere: two classes)"
    return (
        f"pairwise dataset: {meta['items']} items in {cells} cell{'s' * (cells != 1)} ({tie}); "
        f"{meta['unscored']} without a verdict; {meta['both_orders']} judged in both orders; labels by {people}"
    )
