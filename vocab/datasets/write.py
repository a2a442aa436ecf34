"""Writing an imported dataset: its items as ``items.parquet`` and ``dataset.json`` with their counts and digests,
written last, so its presence marks a complete import (:func:`write_items`), and a dataset's name
(:func:`name_dataset`). The importers call these; the readers are :mod:`vocab.datasets.dataset`'s."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vocab.datasets import items
from vocab.datasets.dataset import (
    CLASSES,
    DATASET_FILE,
    FORMAT_VERSION,
    JUDGMENTS_FILE,
    _file_sha256,
    _legacy_items,
    read_meta,
)
from vocab.datasets.errors import CalibrationError
from vocab.files import check_writable, make_dir, write_text_atomic


def name_dataset(run_dir: str | Path, name: str) -> None:
    """An imported dataset's name (its report's title), written into ``dataset.json``."""

    path = Path(run_dir) / DATASET_FILE
    meta = read_meta(run_dir)
    if meta.get("name") != name:
        write_text_atomic(
            path, json.dumps({**meta, "name": name}, indent=2, ensure_ascii=False) + "\n", run_dir, CalibrationError
        )


def write_items(
    run_dir: str | Path, con, src: str, meta: dict[str, Any], *, before_publish: Callable[[dict], Any] | None = None
) -> Path:
    """Write an imported dataset: the items at ``src`` (a DuckDB relation in the items' columns, checked) as
    ``items.parquet``, then ``dataset.json`` with their counts and digests (last: its presence marks a complete
    import). A directory holding a run, or another dataset, is never overwritten; the same import again is a no-op
    (a damaged items file is written anew). ``before_publish``: called with ``dataset.json``'s content once the
    items are in place and before it is written (or, the same import again, before it returns), so what it writes
    (people's labels, :func:`vocab.imports.labels.write_labels`) is part of the import's commit: a kill before
    ``dataset.json`` lands leaves no dataset any command opens."""

    run_dir = Path(run_dir)
    for name in (JUDGMENTS_FILE, DATASET_FILE, items.ITEMS_FILE):  # what a killed import left: its temporary files
        for stale in run_dir.glob(f".{name}.*.tmp"):
            stale.unlink(missing_ok=True)
    if (run_dir / "manifest.json").exists():
        raise CalibrationError(f"{run_dir} holds a run; import into a directory of its own")
    made = not run_dir.exists()
    make_dir(run_dir, None, CalibrationError)
    target = run_dir / items.ITEMS_FILE
    check_writable(target, run_dir, CalibrationError)
    # the items written once, beside their place (hidden), and summarized from that file: one pass over columns
    staged = run_dir / f".{items.ITEMS_FILE}.{secrets.token_hex(4)}.tmp"
    try:
        items.write_parquet(con, src, staged)
        summary = items.summarize(con, items.parquet_source(staged))
        if not summary["rows"]:
            raise CalibrationError("no judged items to import")
        existing = old = None
        if (run_dir / DATASET_FILE).exists():
            old = read_meta(run_dir)
            existing = old["items"]["digest"] if "items" in old else _legacy_items(run_dir, old)[1]["digest"]
            if existing != summary["digest"]:
                raise CalibrationError(f"{run_dir} holds another dataset; import into a new directory")
            if "items" not in old or "parts" in old["items"] or _file_sha256(target) == old["items"]["sha256"]:
                if before_publish is not None:  # the same import again: its labels restored if they went missing
                    before_publish(old)
                return run_dir
        summary["sha256"] = _file_sha256(staged)
        os.replace(staged, target)
    except BaseException:
        staged.unlink(missing_ok=True)
        if made and not any(run_dir.iterdir()):  # a folder this import made is not left behind
            run_dir.rmdir()
        raise
    finally:
        staged.unlink(missing_ok=True)
    totals = {c: sum(v[c.lower()] for v in summary["cells"].values()) for c in CLASSES}
    if existing is not None:  # the same import again over a damaged items file: the file it describes now
        meta = {**old, "items": {**old["items"], "sha256": summary["sha256"]}}
    else:
        meta = {
            **meta,
            "format_version": FORMAT_VERSION,
            "counts": totals,
            "items": {"file": items.ITEMS_FILE, **summary},
        }
    if before_publish is not None and existing is None:
        try:
            before_publish(meta)
        except BaseException:  # refused, or cut short: no dataset, and no items file left for none
            target.unlink(missing_ok=True)
            if made and not any(run_dir.iterdir()):
                run_dir.rmdir()
            raise
    elif before_publish is not None:
        before_publish(meta)
    write_text_atomic(run_dir / DATASET_FILE, json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    return run_dir
