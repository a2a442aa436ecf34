"""Judgments tables (CSV, JSON Lines or Parquet) as judgments datasets: `vocab import table`.

A CSV or Parquet table is read, checked and given the items' columns in DuckDB, in bounded memory at any size: each
check runs over a whole column (the few distinct verdicts, epochs, criteria and labels mapped by the row checks of
:mod:`~vocab.imports.table_rows`), and a refused table is named at its first refused row by those same
checks. A JSON Lines table is read row by row (its rows may differ in their keys), in parts of bounded size."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vocab import files
from vocab.datasets import items
from vocab.datasets.dataset import DEFAULT_QUESTION, cell_of, dataset_of, declared_criteria, rows_of, single_verdict
from vocab.datasets.errors import CalibrationError
from vocab.datasets.names import check_cell_names
from vocab.datasets.values import as_text
from vocab.datasets.write import write_items
from vocab.files import check_writable, sha256_file
from vocab.imports import common
from vocab.imports.common import JudgmentImportError, first_line
from vocab.imports.labels import LabelTable, check_labels_fit, label_table, labels_used, write_labels
from vocab.imports.table_rows import (
    RESERVED,
    TABLE_FAIL,
    TABLE_PASS,
    Table,
    check_row,
    csv_header,
    duckdb_error,
    epoch_of,
    layout,
    table_rows,
    verdict_of,
    word,
)
from vocab.layout import RunDir

# Python's str.strip() whitespace, for the SQL that checks a whole column as the row check checks one value
_SPACE = r"[\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]"
CHUNK, CHUNK_TEXT = 20_000, 8 * 2**20  # rows, and characters of their values, of a JSON Lines table held at a time


def _kind(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".csv", ".jsonl", ".ndjson", ".parquet"):
        return {".ndjson": ".jsonl"}.get(suffix, suffix)
    with path.open("rb") as f:  # another name: Parquet by its magic, JSON Lines if it starts with an object, else CSV
        head = f.read(4096)
    if head.startswith(b"PAR1"):
        return ".parquet"
    return ".jsonl" if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{") else ".csv"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


ROW = "r"  # the raw table's row number (from 0); its columns are c0, c1, ... in the header's order, whatever names


def _raw_source(con, path: Path, kind: str, staging: Path) -> list[str]:
    """The table as text columns in ``staging/raw.parquet``: :data:`ROW` (from 0 in the file's order), then the
    header's columns as ``c0``, ``c1``, ... (a column of any name, `row` or `Row` or none, is the table's own);
    returns the header."""
    if kind == ".csv":
        header = csv_header(path)
        cols = "{" + ", ".join(f"'c{k}': 'VARCHAR'" for k in range(len(header))) + "}"
        # the header read as a row (its names checked above, by Python's reader) and dropped: DuckDB's own header
        # reading would take a name with a line break in it for the end of the header
        src = (
            f"read_csv({items.source_literal(path)}, {items.NO_HIVE}, header=false, delim=',', quote='\"', "
            "escape='\"', "
            f"strict_mode=true, null_padding=false, auto_detect=false, max_line_size={common.MAX_FIELD * 8}, "
            f"columns={cols})"
        )
        names = [f"c{k}" for k in range(len(header))]
        first = 1
    else:
        src = f"read_parquet({items.source_literal(path)}, {items.NO_HIVE})"
        try:
            header = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {src}").fetchall()]
        except Exception as e:  # noqa: BLE001 - duckdb's errors have no common base beyond Exception
            raise JudgmentImportError(f"{path}: not a Parquet file DuckDB reads ({first_line(e, 120)})") from None
        names, first = header, 0
    body = ", ".join(f"coalesce(CAST({_ident(c)} AS VARCHAR), '') AS c{k}" for k, c in enumerate(names))
    try:
        con.execute(
            f"COPY (SELECT * FROM (SELECT row_number() OVER () - 1 - {first} AS {ROW}, {body} FROM {src}) "
            f"WHERE {ROW} >= 0) TO {_lit(str(staging / 'raw.parquet'))} (FORMAT parquet)"
        )
    except JudgmentImportError:
        raise
    except Exception as e:  # noqa: BLE001
        if type(e).__name__ == "OutOfMemoryException":
            raise JudgmentImportError(
                f"{path}: too large to read within {items.MEMORY_LIMIT} ({first_line(e, 80)})"
            ) from None
        raise duckdb_error(path, e) from None
    return header


def _mapping(con, name: str, values: list[tuple[str, Any]]) -> None:
    import pandas as pd

    con.register(name, pd.DataFrame(values, columns=["raw", "out"]).astype({"raw": "object", "out": "object"}))


def _stage_sql(con, t: Table, header: list[str], staging: Path, labels: dict | None, scored: set) -> str:
    """The raw table checked in DuckDB and given the items' columns; returns the relation's name. A check that
    fails names its first row as the row check would: the row is read back and checked in Python."""
    raw = items.parquet_source(staging / "raw.parquet")
    con.execute(f"CREATE VIEW raw AS SELECT * FROM {raw}")
    at = {name: f"raw.c{k}" for k, name in enumerate(header)}  # a column of the table, by its name there
    n_rows = con.execute("SELECT count(*) FROM raw").fetchone()[0]
    if not n_rows:
        raise JudgmentImportError(f"{t.path}: no rows")
    missing = [c for c in ("id", "system", "judge", "verdict", *t.vis) if c not in header]
    if missing:
        raise JudgmentImportError(f"{t.path}: row 1: no column {missing[0]!r}")

    def row_at(row: int) -> dict[str, str]:
        """The table's row (from 0) as the row check reads one: its header's names, its values."""
        got = con.execute(f"SELECT * FROM raw WHERE {ROW} = {int(row)}").fetchone()
        return dict(zip(header, got[1:], strict=True))

    def fail_at(row: int) -> None:
        check_row(t, row + 1, row_at(row), None)
        raise JudgmentImportError(f"{t.path}: row {row + 1}: cannot be imported")  # the SQL and the row check differ

    # each small column's distinct values, mapped by the row check's own functions (None: refused)
    def distinct(col: str, fn) -> list[tuple[str, Any]]:
        out = []
        for (v,) in con.execute(f"SELECT DISTINCT {at[col]} FROM raw").fetchall():
            try:
                out.append((v, fn(v)))
            except JudgmentImportError:
                out.append((v, None))
        return out

    _mapping(con, "vmap", distinct("verdict", lambda v: verdict_of(t, v, "")))
    has_epoch = "epoch" in header
    if has_epoch:
        _mapping(con, "emap", distinct("epoch", lambda v: epoch_of(t, v, "")))
    for k, c in enumerate(t.criteria):
        _mapping(con, f"cmap{k}", distinct(f"criterion:{c}", lambda v: as_text(v).strip().upper()))
    for k, col in enumerate(t.label_cols):
        _mapping(con, f"lmap{k}", distinct(col, lambda v: word(v, t.pass_values, t.fail_values, None, "", "")))
    pairs = con.execute(f"SELECT DISTINCT {at['system']}, {at['judge']} FROM raw").fetchall()
    bad_pairs = []
    for system, judge in pairs:
        try:
            check_cell_names([{"system": system, "judge": judge, "id": ""}])
        except CalibrationError:
            bad_pairs.append(f"{system}\x1f{judge}")
    joins = [f"JOIN vmap ON vmap.raw = {at['verdict']}"]
    epoch = "1"
    if has_epoch:
        joins.append(f"JOIN emap ON emap.raw = {at['epoch']}")
        epoch = "emap.out"
    bad = [f"regexp_full_match({at[c]}, '{_SPACE}*')" for c in ("id", "system", "judge")]
    bad += ["vmap.out IS NULL", f"{epoch} IS NULL" if has_epoch else "false"]
    crit_ok = []
    for k, c in enumerate(t.criteria):
        joins.append(f"JOIN cmap{k} ON cmap{k}.raw = {at['criterion:' + c]}")
        bad.append(f"(cmap{k}.out NOT IN ('PASSED', 'FAILED') AND NOT (vmap.out = 'UNSCORED' AND cmap{k}.out = ''))")
        crit_ok.append(f"cmap{k}.out = 'PASSED'")
    if t.criteria:
        bad.append(f"(vmap.out <> 'UNSCORED' AND (vmap.out = 'PASSED') <> ({' AND '.join(crit_ok)}))")
    for k, col in enumerate(t.label_cols):
        joins.append(f"JOIN lmap{k} ON lmap{k}.raw = {at[col]}")
        bad.append(f"lmap{k}.out IS NULL")
    long = [
        f"length({at[c]}) > {common.MAX_FIELD}"
        for c in ("id", "system", "judge", *t.vis, *(f"criterion:{c}" for c in t.criteria))
    ]
    bad += long
    if bad_pairs:
        bad.append(f"({at['system']} || chr(31) || {at['judge']}) IN (SELECT unnest(?::VARCHAR[]))")
    where = " OR ".join(bad)
    first_bad = con.execute(
        f"SELECT min(raw.{ROW}) FROM raw {' '.join(joins)} WHERE {where}", [bad_pairs] if bad_pairs else []
    ).fetchone()[0]
    dup = con.execute(
        f"SELECT {ROW}, first FROM (SELECT raw.{ROW}, min(raw.{ROW}) OVER w AS first, row_number() OVER w AS k "
        f"FROM raw {joins[1] if has_epoch else ''} WINDOW w AS (PARTITION BY {at['system']}, {at['judge']}, "
        f"{at['id']}, {epoch} ORDER BY raw.{ROW})) WHERE k > 1 ORDER BY {ROW} LIMIT 1"
    ).fetchone()
    if first_bad is not None and (dup is None or first_bad <= dup[0]):
        fail_at(first_bad)
    if dup is not None:
        r = row_at(dup[0])
        raise JudgmentImportError(
            f"{t.path}: row {dup[0] + 1}, column 'id': {r['id']!r} repeats row {dup[1] + 1} (same system, judge, epoch)"
        )
    known = {"id", "system", "judge", "verdict", "group", "epoch", "unscored_reason", *t.vis, *t.label_cols}
    hidden_cols = [c for c in header if c not in known and not c.startswith("criterion:")]
    pairs_sql = lambda cols: ", ".join(f"{_lit(c)}, {at[c]}" for c in cols)  # noqa: E731
    hidden = f"json_object({pairs_sql(hidden_cols)})"
    trimmed = lambda col: f"nullif(regexp_replace({at[col]}, '^{_SPACE}+|{_SPACE}+$', '', 'g'), '')"  # noqa: E731
    reason = f"coalesce({trimmed('unscored_reason')}, 'unscored')" if "unscored_reason" in header else "'unscored'"
    hidden_u = f"json_object({pairs_sql(hidden_cols)}{', ' if hidden_cols else ''}'unscored_reason', {reason})"
    group = f"coalesce({trimmed('group')}, {at['id']})" if "group" in header else at["id"]
    crit = ", ".join(f"{_lit(c)}, cmap{k}.out" for k, c in enumerate(t.criteria))
    criteria = f"CASE WHEN vmap.out = 'UNSCORED' THEN '{{}}' ELSE json_object({crit}) END" if crit else "'{}'"
    visible = f"json_object({pairs_sql(t.vis)})"
    con.execute(
        f"CREATE VIEW staged_items AS SELECT raw.{ROW} AS row, {at['id']} AS id, {group} AS level, "
        f"CAST({epoch} AS BIGINT) AS attempt, {at['system']} AS system, {at['judge']} AS judge, "
        f"{at['system']} || '__' || {at['judge']} AS cell, vmap.out AS verdict, "
        f"CAST({criteria} AS VARCHAR) AS criteria, CAST({visible} AS VARCHAR) AS visible, "
        f"CAST(CASE WHEN vmap.out = 'UNSCORED' THEN {hidden_u} ELSE {hidden} END AS VARCHAR) AS hidden "
        f"FROM raw {' '.join(joins)}"
    )
    if t.label_cols and labels is not None:
        # the labelled rows staged as Parquet in the rows' order, in DuckDB: a table labelled on every row is its
        # sample, and a million labels never become Python objects (a LabelTable), or are read into ``labels``
        said = ", ".join(f"lmap{k}.out AS {_ident('said:' + p)}" for k, p in enumerate(t.label_cols.values()))
        any_said = " OR ".join(f"lmap{k}.out <> ''" for k in range(len(t.label_cols)))
        out = staging / "labels.parquet"
        con.execute(
            f"COPY (SELECT row_number() OVER (ORDER BY raw.{ROW}) - 1 AS k, {at['system']} || '{items.CELL_JOIN}' || "
            f"{at['judge']} AS cell, {at['id']} AS id, CAST({epoch} AS BIGINT) AS attempt, vmap.out <> 'UNSCORED' AS "
            f"scored, {said} FROM raw {' '.join(joins)} WHERE {any_said} ORDER BY raw.{ROW}) TO {_lit(str(out))} "
            "(FORMAT parquet)"
        )
        people = tuple(t.label_cols.values())
        if isinstance(labels, list):  # a LabelTable: the labels stay in the file
            labels.append(label_table(con, out, people))
        else:
            _read_labels(con, out, people, labels, scored)
    return "staged_items"


def _read_labels(con, path: Path, people: tuple[str, ...], labels: dict, scored: set) -> None:
    """The labels staged at ``path`` into ``labels`` ((cell, id, epoch) -> person -> word) and the keys of those the
    judge scored into ``scored``, a batch at a time; each person's words a dict shared by the rows that say them."""
    shared: dict[tuple, dict[str, str]] = {}
    cur = con.execute(
        f"SELECT cell, id, attempt, scored, {', '.join(_ident('said:' + p) for p in people)} FROM "
        f"{items.parquet_source(path)} ORDER BY k"
    )
    while batch := cur.fetchmany(50_000):
        for cell, ident, e, is_scored, *words in batch:
            key = (cell, ident, int(e))
            said = shared.get(tuple(words))
            if said is None:
                said = shared[tuple(words)] = {p: w for p, w in zip(people, words, strict=True) if w}
            labels[key] = said  # a (system, judge, id, epoch) is one row: repeats are refused
            if is_scored:
                scored.add(key)
    return "staged_items"


def _stage_jsonl(
    con, path: Path, visible, rater, pv, fv, pass_at, staging: Path, labels: dict | None, scored: set
) -> list[str]:
    """A JSON Lines table, row by row in Python (each row checked as before), in parts of :data:`CHUNK` rows in
    ``staging``; returns the visible fields. Repeated ids are checked over the rows staged in DuckDB: at the end,
    or at the first refused row (a repeat before it is named first, as the row checks would have)."""
    t = None
    rows: list[dict] = []
    parts = 0
    parts_glob = _lit(items.glob_escaped(staging) + "/part-*.parquet")  # the parts, wherever the staging folder is
    start = 0

    def flush():
        nonlocal rows, parts, start
        if rows:
            con.register("chunk", items.rows_frame(rows, start))
            con.execute(f"COPY chunk TO {_lit(str(staging / f'part-{parts:05d}.parquet'))} (FORMAT parquet)")
            con.unregister("chunk")
            parts, start, rows = parts + 1, start + len(rows), []

    def repeated() -> None:
        """The first row that repeats an earlier one's (system, judge, id, epoch), among the rows staged."""
        if not parts:
            return
        dup = con.execute(
            "SELECT row, first, id FROM (SELECT row, id, min(row) OVER w AS first, row_number() OVER w AS k FROM "
            f"read_parquet({parts_glob}, {items.NO_HIVE}) WINDOW w AS (PARTITION BY system, judge, id, "
            "attempt ORDER BY row)) WHERE k > 1 ORDER BY row LIMIT 1"
        ).fetchone()
        if dup is not None:
            raise JudgmentImportError(
                f"{path}: row {_source_row(path, dup[0])}, column 'id': {dup[2]!r} repeats "
                f"row {_source_row(path, dup[1])} (same system, judge, epoch)"
            )

    held = 0
    for n, raw in table_rows(path):
        if t is None:
            t = layout(path, list(raw), visible, rater, pv, fv, pass_at)
        try:
            row = check_row(t, n, raw, labels)
            rows.append(row)
        except JudgmentImportError:
            flush()  # a row before this one that repeats another is the first refused row
            repeated()
            raise
        key = (cell_of(row["system"], row["judge"]), row["id"], row["epoch"])
        if labels and row["verdict"] != "UNSCORED" and key in labels:
            scored.add(key)
        held += sum(len(v) if isinstance(v, str) else 16 for v in raw.values())
        if len(rows) >= CHUNK or held >= CHUNK_TEXT:
            flush()
            held = 0
    flush()
    if t is None:
        raise JudgmentImportError(f"{path}: no rows")
    repeated()
    con.execute(f"CREATE VIEW staged_items AS SELECT * FROM read_parquet({parts_glob}, {items.NO_HIVE})")
    return t.vis


def _source_row(path: Path, index: int) -> int:
    """The line number (from 1) of a JSON Lines table's ``index``-th row (blank lines are not rows)."""
    k = -1
    with path.open("rb") as f:
        for n, raw in enumerate(f, start=1):
            if raw.strip():
                k += 1
                if k == index:
                    return n
    return index + 1


def stage_table(
    path: str | Path,
    visible: list[str] | None = None,
    question: str = DEFAULT_QUESTION,
    *,
    rater: str = "person",
    pass_values=TABLE_PASS,
    fail_values=TABLE_FAIL,
    pass_at: float | None = None,
    labels: dict | None = None,
    scored_labels: set | None = None,
) -> tuple[Any, str, dict[str, Any], Any]:
    """A table (CSV, JSON Lines or Parquet) checked and staged for :func:`vocab.datasets.dataset.write_items`:
    (DuckDB connection, the staged relation, the dataset's metadata, the staging folder to remove after). Raises
    :class:`JudgmentImportError` on the first problem, naming its row and column, and writes nothing in the run.
    People's labels of the overall verdict in ``label`` (one person, ``rater``) or ``label:<name>`` columns go
    into ``labels`` (row key (cell, id, epoch) -> person -> PASSED/FAILED) when given, and the keys of those the judge
    scored into ``scored_labels``; ``labels`` a list: a CSV or Parquet table's labels are appended to it as a
    :class:`~vocab.imports.labels.LabelTable` staged in the staging folder (a JSON Lines table's as such a dict), so
    a million of them never become Python objects; ``pass_values``,
    ``fail_values`` (lowercase) and ``pass_at`` read other words, and a numeric verdict, in the verdict and labels.
    CSV and Parquet are read and checked in DuckDB, in bounded memory at any size; JSON Lines row by row."""
    import shutil
    import tempfile

    path = Path(path)
    pv = tuple(dict.fromkeys(("passed", *(v.lower() for v in pass_values))))
    fv = tuple(dict.fromkeys(("failed", *(v.lower() for v in fail_values))))
    if set(pv) & set(fv):
        raise JudgmentImportError(f"{sorted(set(pv) & set(fv))[0]!r} is both a pass and a fail value")
    reserved = sorted(v for v in visible or () if v in RESERVED or v.startswith("criterion:"))
    if reserved:
        raise JudgmentImportError(
            f"--visible {','.join(visible)}: {', '.join(reserved)} can never be shown to a blind rater"
        )
    files.check_file(path, "file", JudgmentImportError)
    kind = _kind(path)
    con = items.connect()
    scored = scored_labels if scored_labels is not None else set()  # the labelled rows the judge scored
    staging = Path(tempfile.mkdtemp(prefix="vocab-import-"))
    try:
        if kind == ".jsonl":
            held = {} if isinstance(labels, list) else labels  # read row by row into a dict
            vis = _stage_jsonl(con, path, visible, rater, pv, fv, pass_at, staging, held, scored)
            if isinstance(labels, list) and held:
                labels.append(held)
            criteria = json.loads(con.execute("SELECT criteria FROM staged_items LIMIT 1").fetchone()[0])
            names = sorted(criteria) if criteria else []
            if not names:  # the first row was UNSCORED: its criteria are not given
                names = sorted(
                    {
                        k
                        for (c,) in con.execute("SELECT DISTINCT criteria FROM staged_items").fetchall()
                        for k in json.loads(c)
                    }
                )
        else:
            header = _raw_source(con, path, kind, staging)
            t = layout(path, header, visible, rater, pv, fv, pass_at)
            _stage_sql(con, t, header, staging, labels, scored)
            vis, names = t.vis, t.criteria
        check_scores(con, "staged_items")
        rub = declared_criteria(names, question) if names else single_verdict(question)
        meta = {
            "name": path.stem,
            "source": {"kind": "table", "path": str(path), "sha256": sha256_file(path)},
            "rubric": rub.as_dict(),
            "visible": list(vis),
        }
    except BaseException:  # an interrupt too: the staging folder is not left behind
        con.close()
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return con, "staged_items", meta, staging


def check_scores(con, src: str) -> None:
    """A ``score`` column holds the judge's numbers: a value that is not a finite number (text, NaN, infinity) is
    one line naming its item; an empty one is an item the judge gave no score."""
    v = "json_extract_string(hidden, '$.score')"
    bad = con.execute(
        f"SELECT id, {v} FROM {src} WHERE {v} IS NOT NULL AND trim({v}) <> '' AND (TRY_CAST({v} AS DOUBLE) IS NULL "
        f"OR NOT isfinite(TRY_CAST({v} AS DOUBLE))) ORDER BY row LIMIT 1"
    ).fetchone()
    if bad is not None:
        raise JudgmentImportError(
            f"item {bad[0]!r}: score {bad[1][:40]!r} is not a finite number (the score column "
            "holds the judge's numbers; leave it empty where the judge gave none)"
        )


def read_table(
    path: str | Path, visible: list[str] | None = None, question: str = DEFAULT_QUESTION, **kw
) -> tuple[list[dict], dict[str, Any]]:
    """Judgment rows and dataset metadata from a table that fits in memory (:func:`stage_table`, read back)."""
    import shutil

    con, src, meta, staging = stage_table(path, visible, question, **kw)
    try:
        frame = con.execute(f"SELECT * FROM {src} ORDER BY row").df()
    finally:
        con.close()
        shutil.rmtree(staging, ignore_errors=True)
    rows = rows_of(frame)
    return rows, meta


def import_table(
    path: str | Path,
    run_dir: str | Path,
    visible: list[str] | None = None,
    question: str = DEFAULT_QUESTION,
    *,
    seed: int = 0,
    notes: list[str] | None = None,
    **kw,
) -> Path:
    """`vocab import table`: a table to a judgments dataset, and its label columns (people's labels of the overall
    verdict) to its sample and ratings, as MLflow's people's feedback (:func:`vocab.imports.labels.
    write_labels`: the labelled rows are the sample, allocation ``labels``)."""
    import shutil

    found: list = []
    scored_labels: set = set()  # a JSON Lines table's: a CSV or Parquet table's are in its LabelTable
    con, src, meta, staging = stage_table(path, visible, question, labels=found, scored_labels=scored_labels, **kw)
    labels = found[0] if found else {}

    def with_labels(published: dict) -> None:
        """People's labels written before ``dataset.json`` lands: part of the import's commit."""
        said = write_labels(
            run_dir,
            labels,
            seed=seed,
            source="people's labels in the table's label columns",
            data=dataset_of(run_dir, published),
        )
        if notes is not None:
            notes.extend(said)

    try:
        if isinstance(labels, LabelTable):
            meta["source"]["human_labels"] = dict(sorted(labels.counts.items()))
            used = dict(sorted(labels.used.items()))
        else:
            people: dict[str, int] = {}
            for by in labels.values():
                for name in by:
                    people[name] = people.get(name, 0) + 1
            meta["source"]["human_labels"] = dict(sorted(people.items()))
            used = labels_used(labels, scored_labels)
        meta["source"]["labels_used"] = used
        check_labels_fit(run_dir, labels)
        if meta["source"]["human_labels"]:
            check_writable(RunDir(run_dir).key, run_dir, JudgmentImportError)
        out = write_items(run_dir, con, src, meta, before_publish=with_labels if any(used.values()) else None)
    finally:
        con.close()
        shutil.rmtree(staging, ignore_errors=True)
    return out
