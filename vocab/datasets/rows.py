"""Judgment rows as an importer makes them, written into an imported dataset a bounded number at a time."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from vocab.datasets import items
from vocab.datasets.names import check_cell_names
from vocab.datasets.write import write_items

ROWS_AT_ONCE = 20_000  # judgment rows an import holds at a time before they go to a staged part


def write_dataset(
    run_dir: str | Path,
    rows: Iterable[dict[str, Any]],
    meta: dict[str, Any],
    *,
    before_publish: Callable[[dict], Any] | None = None,
) -> Path:
    """Write an imported dataset from judgment rows (the importers that read a harness's log), which may come one
    at a time (a log read sample by sample): checked and staged as Parquet :data:`ROWS_AT_ONCE` rows at a time, so
    no more are held, then :func:`write_items` (``before_publish`` as it takes it)."""
    import shutil
    import tempfile

    con = items.connect()
    staging = Path(tempfile.mkdtemp(prefix="vocab-rows-"))
    try:
        held, start, parts = [], 0, 0

        def flush() -> None:
            nonlocal held, start, parts
            check_cell_names(held)
            con.register("chunk", items.rows_frame(held, start))
            con.execute(f"COPY chunk TO {items.source_literal(staging / f'part-{parts:05d}.parquet')} (FORMAT parquet)")
            con.unregister("chunk")
            held, start, parts = [], start + len(held), parts + 1

        for r in rows:
            held.append(r)
            if len(held) >= ROWS_AT_ONCE:
                flush()
        if held or not parts:
            flush()
        src = f"read_parquet({items.source_literal(staging)[:-1]}/part-*.parquet', {items.NO_HIVE})"
        return write_items(run_dir, con, src, meta, before_publish=before_publish)
    finally:
        con.close()
        shutil.rmtree(staging, ignore_errors=True)
