"""Judged items stored for their size: an imported dataset's ``items.parquet``, read through DuckDB.

A dataset of ten million judged items is a few hundred megabytes of Parquet, and every command needs only each
cell's pile counts (kept in ``dataset.json`` at import) and the few hundred rows of its sample. So no command reads
the items into Python: DuckDB counts, numbers and picks them in the file, within :data:`MEMORY_LIMIT`
(docs/audit.md, "At scale", says why DuckDB and not pyarrow: measured side by side in
``benchmarks/results/store_engines.json``).

One row per judged item, in the order the source held them (``row``, from 0)::

    row      the item's place in the source (the tie-break of every order: a stable sort)
    id       the item
    level    its group (the unit the judge may have seen several times); text
    attempt  its epoch (1, 2, ...)
    system, judge, cell
    verdict  PASSED, FAILED or UNSCORED
    criteria, visible, hidden   JSON objects, as text

A dataset written before 2026-12 (``judgments.jsonl``) is read into the same shape in memory and queried alike.

The sample is drawn here as :func:`vocab.sampling.sample.draw_sample` draws it from a frame of every item: the
same seeded stream, the same calls in the same order, each pile numbered in (level, attempt, row) order, so the
same seed gives the same rows whichever holds the items (``tests/unit/test_items.py`` compares the two).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from vocab import stats

COLUMNS = ("row", "id", "level", "attempt", "system", "judge", "cell", "verdict", "criteria", "visible", "hidden")
ITEMS_FILE = "items.parquet"
MEMORY_LIMIT = "512MB"  # DuckDB's own bound; the command's Python and its sample come on top (<= 1 GiB in all)
CELL_JOIN = "__"  # a cell's name: its system and its judge, joined


def cell_label(cell: str) -> str:
    """A cell as people read it: ``system → judge`` (a study's ``writer → critic``); stored as ``system__judge``."""
    return cell.replace(CELL_JOIN, " → ", 1)


# a row's columns as its digest joins them (chr(31) between; the cell is its system and judge)
DIGESTED = ("row", "id", "level", "attempt", "system", "judge", "verdict", "criteria", "visible", "hidden")


SCORE_SQL = (  # an item's score, from its hidden fields: a number, else NULL (text grades, booleans, NaN, inf)
    "CASE WHEN isfinite(coalesce(TRY_CAST(json_extract_string(hidden, '$.score') AS DOUBLE), "
    "TRY_CAST(json_extract_string(hidden, '$.feedback_value') AS DOUBLE))) THEN coalesce(TRY_CAST("
    "json_extract_string(hidden, '$.score') AS DOUBLE), TRY_CAST(json_extract_string(hidden, '$.feedback_value') AS "
    "DOUBLE)) END"
)


def cell_of(system: str, judge: str) -> str:
    """The cell of a (system, judge) pair. No name holds :data:`CELL_JOIN` or begins or ends with ``_`` (an import
    refuses it), so the first ``__`` of a cell's name is where its system ends and two pairs never share a cell:
    `a__b` judged by `c` and `a` judged by `b__c` would both be `a__b__c`, `a_` judged by `b` and `a` judged by `_b`
    both `a___b`."""
    return f"{system}{CELL_JOIN}{judge}"


def connect():
    """A DuckDB connection bounded in memory, spilling (if it must) to a folder of the system's temporary place,
    never to the current folder."""
    import duckdb

    spill = Path(tempfile.gettempdir()) / f"vocab-duckdb-{os.getuid()}"
    con = duckdb.connect(
        config={"memory_limit": MEMORY_LIMIT, "temp_directory": str(spill), "preserve_insertion_order": True}
    )
    con.execute("SET enable_progress_bar = false")  # a long import prints no bar of its own on the terminal
    return con


def json_text(obj: dict[str, Any]) -> str:
    """A JSON object as the items keep it: as DuckDB's ``json_object`` writes it (no spaces, text as it is), so a
    table read in DuckDB and the same rows read in Python are the same items, with the same digest."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def rows_frame(rows: Iterable[dict[str, Any]], start: int = 0) -> pd.DataFrame:
    """Judgment rows (the dicts the importers make) in the items' columns."""
    out = {c: [] for c in COLUMNS}
    for n, r in enumerate(rows, start=start):
        out["row"].append(n)
        out["id"].append(str(r["id"]))
        out["level"].append(str(r["group"]))
        out["attempt"].append(int(r["epoch"]))
        out["system"].append(str(r["system"]))
        out["judge"].append(str(r["judge"]))
        out["cell"].append(cell_of(r["system"], r["judge"]))
        out["verdict"].append(r["verdict"])
        out["criteria"].append(json_text(r.get("criteria") or {}))
        out["visible"].append(json_text(r.get("visible") or {}))
        out["hidden"].append(json_text(r.get("hidden") or {}))
    frame = pd.DataFrame(out, columns=list(COLUMNS))
    return frame.astype({"row": "int64", "attempt": "int64"})


# One pass over the items: per cell and group, the judge's verdicts counted and the items' digests XORed, then per
# cell its pile counts, groups, the exact integer sums the design effect needs
# (:func:`vocab.stats.design_effect_from_sums`) and the digest XORed again. The digest is the XOR of each row's MD5
# (a 128-bit number) over every column, so it does not depend on the order DuckDB meets the rows in: the same import
# again is a no-op, and the blind ids derive from it (two datasets of one eval with other answers, verdicts or
# hidden fields differ, and so do their ids).
SUMMARY = """WITH g AS (
  SELECT cell, level,
    count(*) FILTER (verdict = 'PASSED') AS x, count(*) FILTER (verdict = 'FAILED') AS f,
    count(*) FILTER (verdict = 'UNSCORED') AS u,
    bit_xor(md5_number(concat_ws(chr(31), {digested}))) AS digest
  FROM {src} GROUP BY cell, level)
SELECT cell, sum(x)::HUGEINT AS passed, sum(f)::HUGEINT AS failed, sum(u)::HUGEINT AS unscored,
  count(*) FILTER (x + f > 0) AS groups, count(*) FILTER (f > 0) AS failed_groups,
  sum(x * x)::HUGEINT AS sxx, sum(x * (x + f))::HUGEINT AS sxn, sum((x + f) * (x + f))::HUGEINT AS snn,
  bit_xor(digest) AS digest
FROM g GROUP BY cell ORDER BY cell"""


_DIGESTED_SQL = ", ".join(f"{c}::VARCHAR" if c in ("row", "attempt") else c for c in DIGESTED)


def summarize(con, src: str) -> dict[str, Any]:
    """What ``dataset.json`` keeps of the items at ``src`` (a table or ``read_parquet(...)``), from one pass: per
    cell its pile counts, groups and the design effect of its pass rate over groups, the unscored items' reasons,
    and the digests."""

    per_cell, digest, rows = {}, 0, 0
    got = con.execute(SUMMARY.format(src=src, digested=_DIGESTED_SQL)).fetchall()
    for c, x, f, u, groups, failed_groups, sxx, sxn, snn, dg in got:
        x, f, u = int(x), int(f), int(u)
        deff = stats.design_effect_from_sums(int(groups), x + f, x, int(sxx), int(sxn), int(snn))
        per_cell[c] = {
            "passed": x,
            "failed": f,
            "unscored": u,
            "groups": int(groups),
            "failed_groups": int(failed_groups),
            "deff": deff,
        }
        digest, rows = digest ^ int(dg), rows + x + f + u
    reasons = con.execute(
        f"SELECT coalesce(json_extract_string(hidden, '$.unscored_reason'), 'unscored') AS r, count(*) FROM {src} "
        "WHERE verdict = 'UNSCORED' GROUP BY r ORDER BY r"
    ).fetchall()
    return {"rows": rows, "digest": f"{digest:032x}", "cells": per_cell, "reasons": {k: int(v) for k, v in reasons}}


def write_parquet(con, src: str, path: Path) -> None:
    """The items at ``src`` to ``path`` (Parquet, zstd). Not sorted (a sort of every item's text would need memory
    in proportion to them): every reader that needs an order asks for it, by ``row``."""
    cols = ", ".join(COLUMNS)
    con.execute(f"COPY (SELECT {cols} FROM {src}) TO '{_quote(path)}' (FORMAT parquet, COMPRESSION zstd)")


def _quote(path: Path | str) -> str:
    return str(path).replace("'", "''")


def glob_escaped(path: Path | str) -> str:
    """A path as DuckDB's readers take it literally: absolute (no ``~``, no ``s3://`` read into a name), and its
    glob characters (``*``, ``?``, ``[``) each in a class of its own, so `m*.csv` or a folder `q[12]` is that file,
    not the files the pattern would match."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in str(Path(path).absolute()))


def source_literal(path: Path | str) -> str:
    """A path to one file, as a SQL string literal for DuckDB's ``read_*`` functions (:func:`glob_escaped`)."""
    return "'" + _quote(glob_escaped(path)) + "'"


# every read of a file in DuckDB: a folder named `key=value` on its path (`judge=gpt4/`, `seed=3/`) is a name, not a
# column DuckDB adds to the rows (or puts over a column of that name)
NO_HIVE = "hive_partitioning=false"


def parquet_source(path: Path) -> str:
    return f"read_parquet({source_literal(path)}, {NO_HIVE})"


class Items:
    """A dataset's judged items as DuckDB sees them (``src``: a relation or ``read_parquet(...)``), with the
    queries the sample, the labels and a frame of them need."""

    def __init__(self, con, src: str):
        self.con, self.src = con, src

    def _frame(self, sql: str, params=()) -> pd.DataFrame:
        return self.con.execute(sql, list(params)).df()

    # --- the sample's piles, numbered as draw_sample numbers a frame's ------------------------------------------

    def _passed(self, cell: str, taken: list[tuple[str, int]]) -> tuple[str, list]:
        """The cell's PASSED items not at a taken (level, attempt), as SQL and its parameters."""
        sql = f"SELECT * FROM {self.src} WHERE cell = ? AND verdict = 'PASSED'"
        params: list = [cell]
        if taken:
            sql += " AND (level || chr(31) || attempt::VARCHAR) NOT IN (SELECT unnest(?::VARCHAR[]))"
            params.append([f"{lv}\x1f{at}" for lv, at in taken])
        return sql, params

    def _failed(self, cell: str, taken: list[str]) -> tuple[str, list]:
        sql = f"SELECT * FROM {self.src} WHERE cell = ? AND verdict = 'FAILED'"
        params: list = [cell]
        if taken:
            sql += " AND level NOT IN (SELECT unnest(?::VARCHAR[]))"
            params.append(list(taken))
        return sql, params

    def count_passed(self, cell: str, taken=()) -> int:
        sql, params = self._passed(cell, list(taken))
        return int(self.con.execute(f"SELECT count(*) FROM ({sql})", params).fetchone()[0])

    def passed_at(self, cell: str, positions, taken=()) -> pd.DataFrame:
        """The PASSED items at ``positions`` of the cell's passed pile in (level, attempt, row) order."""
        sql, params = self._passed(cell, list(taken))
        sql = sql.replace("SELECT *", "SELECT row, level, attempt", 1)  # numbered on its keys, then fetched
        return self._frame(
            f"WITH pile AS (SELECT row, row_number() OVER (ORDER BY level, attempt, row) - 1 AS pos FROM ({sql})), "
            "chosen AS (SELECT row, pos FROM pile WHERE pos IN (SELECT unnest(?::BIGINT[]))) "
            f"SELECT s.* FROM {self.src} AS s JOIN chosen USING (row) ORDER BY chosen.pos",
            [*params, [int(p) for p in positions]],
        )

    def count_failed_levels(self, cell: str, taken=()) -> int:
        sql, params = self._failed(cell, list(taken))
        return int(self.con.execute(f"SELECT count(DISTINCT level) FROM ({sql})", params).fetchone()[0])

    def failed_levels_at(self, cell: str, positions, taken=()) -> list[pd.DataFrame]:
        """For each of ``positions`` (in the cell's failed levels in level order), that level's FAILED items in
        (attempt, row) order."""
        sql, params = self._failed(cell, list(taken))
        sql = sql.replace("SELECT *", "SELECT row, level", 1)
        rows = self._frame(
            f"WITH pile AS (SELECT row, dense_rank() OVER (ORDER BY level) - 1 AS lpos FROM ({sql})), "
            "chosen AS (SELECT row FROM pile WHERE lpos IN (SELECT unnest(?::BIGINT[]))) "
            f"SELECT s.* FROM {self.src} AS s JOIN chosen USING (row) ORDER BY s.level, s.attempt, s.row",
            [*params, [int(p) for p in positions]],
        )
        return [g.reset_index(drop=True) for _, g in rows.groupby("level", sort=True)]

    # --- items by key ----------------------------------------------------------------------------------------

    def where_keys(self, keys: list[tuple[str, str, int]]) -> pd.DataFrame:
        """The items at (cell, id, attempt) ``keys``."""
        keyed = [f"{c}\x1f{i}\x1f{a}" for c, i, a in keys]
        return self._frame(
            f"SELECT * FROM {self.src} WHERE (cell || chr(31) || id || chr(31) || attempt::VARCHAR) IN "
            "(SELECT unnest(?::VARCHAR[])) ORDER BY cell, level, attempt, row",
            [keyed],
        )

    def where_ids(self, ids: list[str]) -> pd.DataFrame:
        return self._frame(
            f"SELECT * FROM {self.src} WHERE id IN (SELECT unnest(?::VARCHAR[])) ORDER BY cell, level, attempt, row",
            [list(ids)],
        )

    def failed_in_levels(self, places: list[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """The FAILED items of each (cell, level) in ``places``."""
        got = self.con.execute(
            f"SELECT cell, level, count(*) FROM {self.src} WHERE verdict = 'FAILED' AND "
            "(cell || chr(31) || level) IN (SELECT unnest(?::VARCHAR[])) GROUP BY cell, level",
            [[f"{c}\x1f{lv}" for c, lv in places]],
        ).fetchall()
        return {(c, lv): int(k) for c, lv, k in got}

    def scored_at_places(self, places: list[tuple[str, str, int]]) -> dict[tuple[str, str, int], int]:
        """The scored items at each (cell, level, attempt) of ``places``."""
        got = self.con.execute(
            f"SELECT cell, level, attempt, count(*) FROM {self.src} WHERE verdict <> 'UNSCORED' AND "
            "(cell || chr(31) || level || chr(31) || attempt::VARCHAR) IN (SELECT unnest(?::VARCHAR[])) "
            "GROUP BY ALL",
            [[f"{c}\x1f{lv}\x1f{a}" for c, lv, a in places]],
        ).fetchall()
        return {(c, lv, int(a)): int(k) for c, lv, a, k in got}

    # --- what the estimates read (vocab.estimates: the judge's score, two judges on the same outputs) -------------

    def scores_at(self, places: list[str]) -> dict[str, float]:
        """The judge's score (:data:`SCORE_SQL`; NaN where it logged none) of the items at ``places``, each
        ``cell␟level␟attempt`` (joined by chr(31)), keyed the same way."""
        got = self._frame(
            f"SELECT cell || chr(31) || level || chr(31) || attempt::VARCHAR AS place, {SCORE_SQL} AS score "
            f"FROM {self.src} WHERE (cell || chr(31) || level || chr(31) || attempt::VARCHAR) IN "
            "(SELECT unnest(?::VARCHAR[]))",
            [places],
        )
        return dict(zip(got.place, got.score, strict=True))

    def score_shares(self, cell: str) -> list[tuple]:
        """Per score the cell's scored items hold (ascending): (score, the share of its scored items scored at
        least that)."""
        return self.con.execute(
            f"WITH s AS (SELECT {SCORE_SQL} AS s FROM {self.src} WHERE cell = ? AND verdict <> 'UNSCORED'), "
            "k AS (SELECT s, count(*) AS n FROM s WHERE s IS NOT NULL GROUP BY s) "
            "SELECT s, sum(n) OVER (ORDER BY s DESC) / sum(n) OVER () AS share FROM k ORDER BY s",
            [cell],
        ).fetchall()

    def verdict_patterns(self, cells) -> list[tuple]:
        """Per scored output (level, attempt) of ``cells``: (level, attempt as text, its verdicts by the cells in
        their sorted order, 'P' passed or 'F' not, and how many of the cells scored it)."""
        marks = ", ".join("?" for _ in cells)
        return self.con.execute(
            "SELECT level, attempt::VARCHAR, string_agg(CASE WHEN verdict = 'PASSED' THEN 'P' ELSE 'F' END, '' "
            f"ORDER BY cell), count(*) FROM {self.src} WHERE cell IN ({marks}) AND verdict <> 'UNSCORED' "
            "GROUP BY level, attempt",
            list(cells),
        ).fetchall()

    def shared_verdicts(self, a: str, b: str, strata, wanted: list[str]) -> tuple[dict[str, int], list] | None:
        """Cells ``a`` and ``b``'s scored items at the same (level, attempt). None where one is judged twice in a
        cell, shown to the rater otherwise in the other (its visible fields differ), or none is shared; else the
        shared items counted per stratum of ``strata`` (two letters each, P passed or F not: ``a``'s verdict, then
        ``b``'s), and (level, attempt, a's verdict, b's verdict) of those at ``wanted`` (``level␟attempt``)."""

        def side(v: str, x: str, t: str) -> str:
            return (
                f"SELECT level, attempt::VARCHAR AS attempt, verdict AS {v}, visible AS {x}, count(*) OVER "
                f"(PARTITION BY level, attempt) AS {t} FROM {self.src} WHERE cell = ? AND verdict <> 'UNSCORED'"
            )

        joined = (
            f"WITH x AS ({side('va', 'xa', 'ta')}), y AS ({side('vb', 'xb', 'tb')}) "
            "SELECT * FROM x JOIN y USING (level, attempt)"
        )
        got = self.con.execute(
            "SELECT count(*) FILTER (ta > 1 OR tb > 1 OR xa <> xb), "
            + ", ".join(
                f"count(*) FILTER (va {'=' if s[0] == 'P' else '<>'} 'PASSED' AND vb "
                f"{'=' if s[1] == 'P' else '<>'} 'PASSED')"
                for s in strata
            )
            + f" FROM ({joined})",
            [a, b],
        ).fetchone()
        if got[0] or not sum(got[1:]):
            return None
        rows = self.con.execute(
            f"SELECT level, attempt, va, vb FROM ({joined}) WHERE (level || chr(31) || attempt) IN "
            "(SELECT unnest(?::VARCHAR[]))",
            [a, b, wanted],
        ).fetchall()
        return dict(zip(strata, map(int, got[1:]), strict=True)), rows

    def all(self) -> pd.DataFrame:
        """Every item, in (cell, level, attempt, row) order: for a dataset that fits in memory (the notebooks)."""
        return self._frame(f"SELECT * FROM {self.src} ORDER BY cell, level, attempt, row")

    def in_source_order(self, limit: int | None = None) -> pd.DataFrame:
        return self._frame(f"SELECT * FROM {self.src} ORDER BY row" + (f" LIMIT {int(limit)}" if limit else ""))


def flatten(items: pd.DataFrame, rubric, visible: tuple[str, ...]) -> pd.DataFrame:
    """Items as the calibration chain's frame of attempts: cell, level, attempt, id, system, judge, verdict, checks
    (a dict: the criteria, or every rubric criterion as the verdict) and the visible fields (``reason``, why an
    UNSCORED item has none, where there are such)."""
    cols = ["cell", "level", "attempt", "id", "system", "judge", "verdict", "checks", *visible]
    if items.empty:
        return pd.DataFrame(columns=cols)
    vis = [json.loads(v) for v in items.visible]
    crit = [json.loads(c) for c in items.criteria]
    out = pd.DataFrame(
        {
            "cell": items.cell.tolist(),
            "level": [str(v) for v in items.level],
            "attempt": [int(v) for v in items.attempt],
            "id": [str(v) for v in items["id"]],
            "system": items.system.tolist(),
            "judge": items.judge.tolist(),
            "verdict": items.verdict.tolist(),
            "checks": [c or {k.id: v for k in rubric.criteria} for c, v in zip(crit, items.verdict, strict=True)],
            **{f: [v.get(f, "") for v in vis] for f in visible},
        },
        columns=cols,
    )
    if (items.verdict == "UNSCORED").any():
        hidden = [json.loads(h) for h in items.hidden]
        out["reason"] = [h.get("unscored_reason", "unscored") for h in hidden]
    return out
