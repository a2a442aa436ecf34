"""A dataset's judged items held as Parquet parts, counted and sampled on a Dask cluster (``dask.dataframe``).

The same numbers as :mod:`vocab.datasets.items` computes in DuckDB on one machine, by other code:

- :func:`summarize` is :func:`vocab.datasets.items.summarize`'s summary (each cell's pile counts, groups, the
  design effect's sums, the unscored items' reasons and the digest): the counts by a groupby over (cell, level),
  then over cell; the digest as each part's XOR of its rows' MD5, XORed again (XOR does not depend on the order
  the rows are met in, so not on how the items are split into parts or tasks).
- :class:`DaskItems` has the four pile queries the sample is drawn with (:func:`vocab.sampling.sample.
  _pick_items`), each pile numbered in the same (level, attempt, row) order by a sort on the cluster, so the same
  seed draws the same rows (``tests/unit/test_parts.py`` compares the two on a local two-worker cluster).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pandas as pd

from vocab import stats
from vocab.datasets.items import COLUMNS, DIGESTED

# what the items' numbers depend on: a worker whose versions differ is refused before a task is sent
CHECKED_PACKAGES = ("vocab", "pandas", "pyarrow", "dask", "python")
SEP = "\x1f"  # as items.SUMMARY joins a row's columns for its digest (chr(31))


def read_parts(paths: list[str]):
    """The items in the Parquet files ``paths`` as one Dask DataFrame (a partition a file, at least)."""
    import dask.dataframe as dd

    return dd.read_parquet(list(paths), columns=list(COLUMNS))


def row_digests(part: pd.DataFrame) -> pd.DataFrame:
    """Each cell's digest in one part: the XOR of its rows' MD5 (as DuckDB's ``md5_number``: the 16 bytes read as a
    little-endian number) of the row's :data:`~vocab.datasets.items.DIGESTED` columns joined as
    ``items.SUMMARY`` joins them; in two 64-bit halves, as Parquet and pandas hold no 128-bit integer."""
    out: dict[str, int] = {}
    cols = [part[c].astype(str).tolist() for c in DIGESTED]
    for cell, *values in zip(part["cell"].tolist(), *cols, strict=True):
        n = int.from_bytes(hashlib.md5(SEP.join(values).encode()).digest(), "little")
        out[cell] = out.get(cell, 0) ^ n
    cells = sorted(out)
    return pd.DataFrame(
        {
            "cell": pd.Series(cells, dtype=object),
            "hi": pd.Series([out[c] >> 64 for c in cells], dtype="uint64"),
            "lo": pd.Series([out[c] & (2**64 - 1) for c in cells], dtype="uint64"),
        }
    )


def _reason(hidden: str) -> str:
    return json.loads(hidden).get("unscored_reason", "unscored")


def summarize(frame) -> dict[str, Any]:
    """:func:`vocab.datasets.items.summarize` of the items in the Dask DataFrame ``frame``, computed on its
    cluster (the client's default)."""
    import dask

    v = frame.verdict
    marked = frame.assign(
        x=(v == "PASSED").astype("int64"), f=(v == "FAILED").astype("int64"), u=(v == "UNSCORED").astype("int64")
    )[["cell", "level", "x", "f", "u"]]
    g = marked.groupby(["cell", "level"]).sum().reset_index()  # a row per (cell, level): its verdicts counted
    n = g.x + g.f
    per_group = g.assign(
        groups=(n > 0).astype("int64"), failed_groups=(g.f > 0).astype("int64"), sxx=g.x * g.x, sxn=g.x * n, snn=n * n
    )[["cell", "x", "f", "u", "groups", "failed_groups", "sxx", "sxn", "snn"]]
    sums = per_group.groupby("cell").sum()
    digests = frame.map_partitions(row_digests, meta={"cell": object, "hi": "uint64", "lo": "uint64"})
    unscored = frame[v == "UNSCORED"].hidden.map(_reason, meta=("hidden", object)).value_counts()
    sums, digests, unscored = dask.compute(sums, digests, unscored)
    per_cell, digest, rows = {}, 0, 0
    cell_digest: dict[str, int] = {}
    for cell, hi, lo in digests.itertuples(index=False):
        cell_digest[cell] = cell_digest.get(cell, 0) ^ ((int(hi) << 64) | int(lo))
    for cell in sorted(sums.index):
        r = sums.loc[cell]
        x, f, u = int(r.x), int(r.f), int(r.u)
        # int64 sums: a cell's sxx, sxn and snn are at most (its scored items)^2, < 2^63 below 3 * 10^9 items
        deff = stats.design_effect_from_sums(int(r.groups), x + f, x, int(r.sxx), int(r.sxn), int(r.snn))
        per_cell[cell] = {
            "passed": x,
            "failed": f,
            "unscored": u,
            "groups": int(r.groups),
            "failed_groups": int(r.failed_groups),
            "deff": deff,
        }
        digest, rows = digest ^ cell_digest[cell], rows + x + f + u
    reasons = {str(k): int(c) for k, c in sorted(unscored.items())}
    return {"rows": rows, "digest": f"{digest:032x}", "cells": per_cell, "reasons": reasons}


def _at_positions(keys, by: list[str], positions: list[int]) -> pd.DataFrame:
    """The rows of the Dask DataFrame ``keys`` at ``positions`` (from 0) of its order by ``by``, in ``positions``'
    order: sorted on the cluster, then each position fetched from the partition that holds it."""
    import dask
    import numpy as np

    if not positions:
        return keys._meta.copy()
    ordered = keys.sort_values(by)
    # its divisions (the key's quantiles, a computation of their own) taken here, on the client: left to the
    # scheduler, dask 2026.8 computes them while it builds the graph, waiting on itself (the command hangs)
    ordered.npartitions  # noqa: B018
    ordered = ordered.persist()  # one sort: the lengths and the rows below are of the same partitions
    lengths = ordered.map_partitions(len).compute().tolist()
    starts = np.cumsum([0, *lengths])
    wanted: dict[int, list[int]] = {}
    for p in positions:
        k = int(np.searchsorted(starts, p, side="right")) - 1
        wanted.setdefault(k, []).append(int(p - starts[k]))
    got = dask.compute(*[ordered.partitions[k] for k in sorted(wanted)])
    rows = {}
    for k, part in zip(sorted(wanted), got, strict=True):
        part = part.sort_values(by, kind="stable")  # within a partition: sorted by every key
        for local in wanted[k]:
            rows[int(starts[k]) + local] = part.iloc[local]
    return pd.DataFrame([rows[int(p)] for p in positions]).reset_index(drop=True)


def _pile(part: pd.DataFrame, cell: str, verdict: str, taken: list[str]) -> pd.DataFrame:
    """A part's items of one pile: the cell's, with the verdict, not at a taken place (a PASSED item's level and
    attempt, a FAILED item's level). Filtered a part at a time, in pandas: a mask built beside the frame it filters
    is aligned by dask's optimizer on partitions that need not be the same."""
    pile = part[(part.cell == cell) & (part.verdict == verdict)]
    if taken:
        place = pile.level + SEP + pile.attempt.astype(str) if verdict == "PASSED" else pile.level
        pile = pile[~place.isin(taken)]
    return pile


class DaskItems:
    """A dataset's judged items as a Dask DataFrame of the items' columns, with the pile queries of
    :class:`vocab.datasets.items.Items` that the sample is drawn with."""

    def __init__(self, frame):
        self.frame = frame

    def _passed(self, cell: str, taken):
        """The cell's PASSED items not at a taken (level, attempt)."""
        return self.frame.map_partitions(_pile, cell, "PASSED", [f"{lv}{SEP}{at}" for lv, at in taken])

    def _failed(self, cell: str, taken):
        """The cell's FAILED items not in a taken level."""
        return self.frame.map_partitions(_pile, cell, "FAILED", list(taken))

    def _fetch(self, rows: list[int]) -> pd.DataFrame:
        f = self.frame
        got = f[f.row.isin(rows)].compute()
        return got.set_index("row", drop=False).loc[rows].reset_index(drop=True)

    def count_passed(self, cell: str, taken=()) -> int:
        return int(len(self._passed(cell, list(taken))))

    def passed_at(self, cell: str, positions, taken=()) -> pd.DataFrame:
        keys = self._passed(cell, list(taken))[["level", "attempt", "row"]]
        at = _at_positions(keys, ["level", "attempt", "row"], [int(p) for p in positions])
        return self._fetch([int(r) for r in at.row])

    def count_failed_levels(self, cell: str, taken=()) -> int:
        return int(self._failed(cell, list(taken)).level.nunique().compute())

    def failed_levels_at(self, cell: str, positions, taken=()) -> list[pd.DataFrame]:
        pile = self._failed(cell, list(taken))
        levels = pile[["level"]].drop_duplicates()
        chosen = _at_positions(levels, ["level"], [int(p) for p in positions]).level.tolist()
        rows = pile[pile.level.isin(chosen)].compute().sort_values(["level", "attempt", "row"], kind="stable")
        rows = rows.astype({"attempt": "int64", "row": "int64"})
        return [g.reset_index(drop=True) for _, g in rows.groupby("level", sort=True)]
