"""A run's or dataset's cells split by a column it kept (`--by COLUMN`): each group's slice, each slice's pile
counts and the sample's key with each row's slice (:mod:`vocab.estimates.slices` corrects each slice as a cell).

An imported dataset's items are split in DuckDB (one row per group at most, never the items themselves); a run's
attempts in pandas (``tier`` or :data:`TIER_BAND`, or any plain column). A slice must hold whole groups (the failed
pile samples groups), and a column may split a cell into at most :data:`MAX_SLICES` slices.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from vocab import stats
from vocab.datasets.errors import CalibrationError
from vocab.datasets.items import CELL_JOIN


def _label(cell: str) -> str:
    return cell.replace(CELL_JOIN, " → ", 1)


MAX_SLICES = 20  # distinct values a column may split a cell into
TIER_BAND = "tier-band"  # a study run's tiers in three bands
TIER_BANDS = ((1, 10), (11, 20), (21, 31))
MISSING = "(none)"  # the slice of an item that holds no value in the column


def band_of(tier: int) -> str:
    for lo, hi in TIER_BANDS:
        if lo <= int(tier) <= hi:
            return f"tiers {lo}–{hi}"
    raise CalibrationError(f"tier {tier} lies in no band of {TIER_BANDS}")


def slice_cell(cell: str, value: str) -> str:
    """A slice's name as a cell: ``system__judge [value]`` (its stream's name too)."""
    return f"{cell} [{value}]"


def natural(value: str) -> tuple:
    """A slice's place in order: its numbers as numbers ("tiers 2–..." before "tiers 11–...", "9" before "10")."""
    import re

    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", str(value)) if t)


LITERAL_MISSING = f'"{MISSING}"'  # a value spelt "(none)" itself, told apart from no value


def _text(v) -> str:
    if v is None or (isinstance(v, float) and not np.isfinite(v)) or (isinstance(v, str) and not v):
        return MISSING
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return LITERAL_MISSING if str(v) == MISSING else str(v)


# --- each group's slice ------------------------------------------------------------------------------------------

_RUN_HIDDEN = {
    "run_id",
    "cell",
    "writer",
    "critic",
    "level",
    "attempt",
    "verdict",
    "checks",
    "reasons",
    "usage",
    "started",
    "finished",
    "id",
    "system",
    "judge",
}


def _frame_levels(attempts: pd.DataFrame, column: str, where) -> pd.DataFrame:
    """Per (cell, level) of a frame of attempts: its slice, passes and attempts."""
    if column == TIER_BAND and "tier" in attempts:
        values = attempts.tier.map(band_of)
    else:
        usable = [
            c
            for c in attempts.columns
            if c not in _RUN_HIDDEN
            and attempts[c].map(lambda v: v is None or isinstance(v, (str, int, float, np.integer, np.floating))).all()
        ]
        if column not in usable:
            extra = [TIER_BAND] if "tier" in attempts else []
            raise CalibrationError(f"{where}: --by {column!r}: no such column (known: {', '.join(usable + extra)})")
        values = attempts[column].map(_text)
    frame = pd.DataFrame(
        {
            "cell": attempts.cell.to_numpy(),
            "level": attempts.level.astype(str).to_numpy(),
            "slice": values.to_numpy(),
            "passed": attempts.verdict.eq("PASSED").to_numpy(),
        }
    )
    g = frame.groupby(["cell", "level"], sort=True)
    mixed = g.slice.nunique(dropna=False)
    if (mixed > 1).any():
        cell, level = mixed[mixed > 1].index[0]
        raise CalibrationError(
            f"{where}: --by {column!r}: group {level} of {cell} holds items of several slices "
            "(a slice must hold whole groups)"
        )
    return g.agg(slice=("slice", "first"), x=("passed", "sum"), n=("passed", "size")).reset_index()


def value_sql(column: str) -> str:
    """The SQL of a stored item's value in ``column`` (its visible fields, else its hidden ones), as text;
    :data:`MISSING` where it holds none, and :data:`LITERAL_MISSING` where it holds that very word."""
    path = "$." + '"' + column.replace('"', '\\"') + '"'
    lit = path.replace("'", "''")  # a column named with a quote stays inside its SQL literal
    visible, hidden = (f"nullif(json_extract_string({f}, '{lit}'), '')" for f in ("visible", "hidden"))
    found = f"coalesce({visible}, {hidden})"
    return f"CASE WHEN {found} = '{MISSING}' THEN '{LITERAL_MISSING}' ELSE coalesce({found}, '{MISSING}') END"


def _store_levels(data, column: str, where) -> str:
    """The SQL of an imported dataset's groups (per cell and level: its slice, passes and items), counted in
    DuckDB over the stored items, once the column is known, holds whole groups and few values."""
    store = data.items
    known = store.con.execute(
        f"SELECT DISTINCT unnest(list_concat(json_keys(visible), json_keys(hidden))) FROM {store.src}"
    ).fetchall()
    known = sorted({k for (k,) in known} - {"unscored_reason"})
    if column not in known:
        raise CalibrationError(
            f"{where}: --by {column!r}: the dataset kept no such column (known: {', '.join(known) or 'none'})"
        )
    value = value_sql(column)
    sql = (
        f"SELECT cell, level, count(DISTINCT {value}) AS k, min({value}) AS slice, "
        "count(*) FILTER (verdict = 'PASSED') AS x, count(*) AS n "
        f"FROM {store.src} WHERE verdict <> 'UNSCORED' GROUP BY cell, level"
    )
    mixed = store.con.execute(f"SELECT cell, level FROM ({sql}) WHERE k > 1 ORDER BY cell, level LIMIT 1").fetchone()
    if mixed:
        raise CalibrationError(
            f"{where}: --by {column!r}: group {mixed[1]} of {mixed[0]} holds items of several "
            "slices (a slice must hold whole groups)"
        )
    many = store.con.execute(
        f"SELECT cell, count(DISTINCT slice) AS s FROM ({sql}) GROUP BY cell ORDER BY s DESC LIMIT 1"
    ).fetchone()
    if many and many[1] > MAX_SLICES:
        raise CalibrationError(
            f"{where}: --by {column!r}: {many[1]} values in {_label(many[0])}, more than "
            f"{MAX_SLICES} slices (slice by a column of fewer values)"
        )
    return sql


@dataclass(frozen=True)
class Sliced:
    """A run's or dataset's cells split by ``column``: ``counts`` per slice cell (attempts, passed, failed, deff,
    failed_groups, its cell and slice) and the sample's ``key`` with each row's cell replaced by its slice cell."""

    column: str
    counts: pd.DataFrame
    key: pd.DataFrame


def _counts_of(levels: pd.DataFrame) -> pd.DataFrame:
    rows = {}
    for (cell, value), g in levels.groupby(["cell", "slice"], sort=True):
        x, n = g.x.to_numpy(int), g.n.to_numpy(int)
        rows[slice_cell(cell, value)] = {
            "cell": cell,
            "slice": value,
            "attempts": int(n.sum()),
            "passed": int(x.sum()),
            "failed": int((n - x).sum()),
            "failed_groups": int((n > x).sum()),
            "deff": float(stats.design_effect(x, n)),
        }
    return pd.DataFrame.from_dict(rows, orient="index")


def check_column(data, column: str, where) -> None:
    """CalibrationError (one line) unless ``column`` is one the data kept, holds whole groups and splits no cell into
    more than :data:`MAX_SLICES` slices: what `--by` checks before anything is written."""
    _groups(data, column, where)


def _groups(data, column: str, where):
    """The data's groups by ``column``: for stored items the SQL of one row per (cell, level) with its slice, passes
    ``x`` and items ``n``; for a frame of attempts that frame itself."""
    if not column or not column.strip():
        raise CalibrationError(f"{where}: --by needs a column name")
    if data.items is not None:
        return _store_levels(data, column, where)
    levels = _frame_levels(data.attempts, column, where)
    many = levels.groupby("cell").slice.nunique()
    if (many > MAX_SLICES).any():
        cell = many.idxmax()
        raise CalibrationError(
            f"{where}: --by {column!r}: {int(many.max())} values in {_label(cell)}, more "
            f"than {MAX_SLICES} slices (slice by a column of fewer values"
            + (f", or {TIER_BAND})" if column == "tier" else ")")
        )
    return levels


def slice_data(data, key: pd.DataFrame, column: str, where) -> Sliced:
    """Split ``data``'s cells and the sample's ``key`` by ``column``; CalibrationError (one line) as
    :func:`check_column` says."""
    groups = _groups(data, column, where)
    if isinstance(groups, str):
        sql = groups
        levels = data.items.con.execute(
            f"SELECT cell, slice, sum(x)::BIGINT AS x_sum, count(*) AS groups, sum(n)::BIGINT AS n_sum, "
            "sum(x * x)::HUGEINT AS sxx, sum(x * n)::HUGEINT AS sxn, sum(n * n)::HUGEINT AS snn, "
            f"count(*) FILTER (n > x) AS failed_groups FROM ({sql}) GROUP BY cell, slice ORDER BY cell, slice"
        ).df()
        counts = pd.DataFrame(
            {
                "cell": levels.cell.to_numpy(),
                "slice": levels.slice.to_numpy(),
                "attempts": levels.n_sum.astype(int).to_numpy(),
                "passed": levels.x_sum.astype(int).to_numpy(),
                "failed": (levels.n_sum - levels.x_sum).astype(int).to_numpy(),
                "failed_groups": levels.failed_groups.astype(int).to_numpy(),
                "deff": [
                    float(
                        stats.design_effect_from_sums(
                            int(r.groups), int(r.n_sum), int(r.x_sum), int(r.sxx), int(r.sxn), int(r.snn)
                        )
                    )
                    for r in levels.itertuples()
                ],
            },
            index=[slice_cell(c, v) for c, v in zip(levels.cell, levels.slice, strict=True)],
        )
        wanted = sorted({f"{c}\x1f{lv}" for c, lv in zip(key.cell, key.level.astype(str), strict=True)})
        place = data.items.con.execute(
            f"SELECT cell, level, slice FROM ({sql}) WHERE (cell || chr(31) || level) IN (SELECT unnest(?::VARCHAR[]))",
            [wanted],
        ).df()  # the sample's groups only
    else:
        counts = _counts_of(groups)
        place = groups[["cell", "level", "slice"]]
    at = dict(zip(zip(place.cell, place.level.astype(str), strict=True), place.slice, strict=True))
    values = [at.get((c, str(lv))) for c, lv in zip(key.cell, key.level, strict=True)]
    if any(v is None for v in values):  # a sampled row the items no longer hold: the sample is of other items
        raise CalibrationError(f"{where}: the sample holds rows the items do not: draw the sample again")
    sliced = key.assign(base=key.cell, slice=values)
    sliced["cell"] = [slice_cell(c, v) for c, v in zip(sliced.base, sliced.slice, strict=True)]
    return Sliced(column, counts.sort_index(), sliced)
