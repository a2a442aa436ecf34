"""An imported dataset's judged items read straight from its ``items.parquet`` with DuckDB (not through vocab's
reader), so tests count what the store holds independently of the code under test."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb


def stored_items(run_dir: str | Path) -> list[dict]:
    """Each item as an importer made it (id, group, epoch, system, judge, verdict, criteria, visible, hidden), in the
    source's order."""
    path = str(Path(run_dir) / "items.parquet").replace("'", "''")
    sql = f"SELECT * FROM read_parquet('{path}', hive_partitioning=false) ORDER BY row"  # a key=value folder: a name
    rows = duckdb.connect().execute(sql).fetchall()
    names = ("row", "id", "group", "epoch", "system", "judge", "cell", "verdict", "criteria", "visible", "hidden")
    out = []
    for r in rows:
        d = dict(zip(names, r, strict=True))
        for k in ("criteria", "visible", "hidden"):
            d[k] = json.loads(d[k])
        del d["row"], d["cell"]
        out.append(d)
    return out


def write_table(path: Path, rows: list[dict]) -> Path:
    """``rows`` as a table at ``path``: CSV (pandas) or JSON Lines, by its suffix."""
    import pandas as pd

    if path.suffix == ".csv":
        pd.DataFrame(rows).to_csv(path, index=False)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path
