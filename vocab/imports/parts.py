"""A judgments table held as Parquet parts, imported on a Dask cluster: `vocab import table FOLDER --scheduler`.

A folder of ``*.parquet`` files (what Spark, Dask or a warehouse export writes for one table; files and folders
whose names begin with ``_`` or ``.``, such as ``_SUCCESS``, are not parts) is one table: its parts in their paths'
order, each part's rows in its own order. Each part is a task: a worker checks it with the table import's own code
(:func:`vocab.imports.table.stage_table`: the same checks in DuckDB, and a refused row named by its part
and its row there) and writes it, its rows numbered from the part's place in the table, as a part of the dataset's
``items/``. Then on the cluster, over the written parts: no (system, judge, id, epoch) in two parts, and the
dataset's summary (:func:`vocab.datasets.dask_items.summarize`).

So the dataset holds what an import of the same rows as one file on one machine holds: the same items, numbered
alike, so the same counts, digest, blind ids and sample (``tests/unit/test_parts.py``). Every command reads it on
one machine as it reads ``items.parquet`` (DuckDB reads the parts as one table). The dataset's folder must be one
every worker can write and the client can read: a file system the cluster's machines share.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
from pathlib import Path
from typing import Any

from vocab import files
from vocab.datasets import dask_items, items
from vocab.datasets.dataset import (
    CLASSES,
    DATASET_FILE,
    DEFAULT_QUESTION,
    FORMAT_VERSION,
    dataset_of,
    item_files,
    read_meta,
)
from vocab.datasets.errors import CalibrationError
from vocab.files import check_writable, make_dir, write_text_atomic
from vocab.imports.common import JudgmentImportError, first_line
from vocab.imports.labels import check_labels_fit, labels_used, write_labels
from vocab.imports.table import stage_table
from vocab.layout import RunDir

PARTS_DIR = "items"  # the dataset's parts, in its folder
# what a part's checks and numbers depend on (DuckDB checks each part): a worker whose versions differ is refused
CHECKED_PACKAGES = ("vocab", "duckdb", "pandas", "pyarrow", "dask", "python")


def _natural(rel: str) -> list:
    """A part's path as a sort key: its numbers as numbers (Dask names its parts part.0 ... part.11, Spark
    part-00000 ...), so the parts come in the order their writer numbered them."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", rel)]


def part_files(folder: Path) -> list[Path]:
    """The table's parts: the ``.parquet`` files under ``folder`` (any case), in their relative paths' natural
    order; a link to nothing is refused (a part gone missing on a shared file system), never skipped."""
    found = []
    for path in folder.rglob("*"):
        rel = path.relative_to(folder)
        if any(p.startswith(("_", ".")) for p in rel.parts) or path.suffix.lower() != ".parquet" or path.is_dir():
            continue
        if not path.is_file():
            raise JudgmentImportError(f"{path}: not a file (a link to nothing?): a part of the table is missing")
        found.append((_natural(rel.as_posix()), path))
    if not found:
        raise JudgmentImportError(f"{folder}: no .parquet files (a table held as Parquet parts)")
    return [p for _, p in sorted(found)]


def _layout(parts: list[Path]) -> list[int]:
    """Each part's rows, from its footer; every part has the first one's columns, in its order (the hidden
    fields are kept in it) and of its types (a column with no value in a part may have none)."""
    import pyarrow.parquet as pq

    rows, first = [], None
    for path in parts:
        try:
            schema = pq.read_schema(path)
            n = pq.read_metadata(path).num_rows
        except Exception as e:  # noqa: BLE001 - pyarrow's errors differ by what is wrong with the file
            raise JudgmentImportError(f"{path}: not a Parquet file ({first_line(e, 120)})") from None
        cols = [(f.name, str(f.type)) for f in schema]
        if first is None:
            first = (path, cols)
        else:
            names, were = [c for c, _ in cols], [c for c, _ in first[1]]
            if sorted(names) != sorted(were):
                other = sorted(set(names) ^ set(were))
                raise JudgmentImportError(f"{path}: its columns are not those of {first[0]} (column {other[0]!r})")
            if names != were:
                raise JudgmentImportError(
                    f"{path}: its columns are those of {first[0]} in another order; write the parts with one order"
                )
            for (c, t), (_, t0) in zip(cols, first[1], strict=True):
                if t != t0 and "null" not in (t, t0):
                    raise JudgmentImportError(
                        f"{path}: column {c!r} is {t} here and {t0} in {first[0]}; write the parts with one schema"
                    )
        rows.append(n)
    return rows


def stage_part(path: str, offset: int, out: str, options: dict[str, Any]) -> dict[str, Any]:
    """One part, on a worker: checked and staged by :func:`~vocab.imports.table.stage_table`, and
    written to ``out`` with its rows numbered from ``offset``. Returns its rubric, visible fields, people's labels
    (and which of them the judge scored) and the SHA-256 of the part read."""

    labels: dict = {}
    scored: set = set()
    try:
        con, src, meta, staging = stage_table(path, labels=labels, scored_labels=scored, **options)
    except JudgmentImportError as e:  # returned, not raised: a worker logs a raised one as a failed task
        return {"refused": str(e)}
    try:
        cols = ", ".join(f"row + {int(offset)} AS row" if c == "row" else c for c in items.COLUMNS)
        quoted = str(out).replace("'", "''")
        con.execute(f"COPY (SELECT {cols} FROM {src}) TO '{quoted}' (FORMAT parquet, COMPRESSION zstd)")
    finally:
        con.close()
        shutil.rmtree(staging, ignore_errors=True)
    return {
        "rubric": meta["rubric"],
        "visible": meta["visible"],
        "sha256": meta["source"]["sha256"],
        "labels": labels,
        "scored": sorted(scored),
        "sha256_out": files.sha256_file(Path(out)),
    }


def _repeat_across(frame, parts: list[Path], offsets: list[int]) -> None:
    """No (system, judge, id, epoch) in two parts (a part's own repeats are its check's): the first row that
    repeats an earlier one, named by its part and its row there."""
    import numpy as np

    keyed = frame[["system", "judge", "id", "attempt", "row"]]
    counts = keyed.groupby(["system", "judge", "id", "attempt"]).row.count()
    twice = counts[counts > 1].compute()
    if twice.empty:
        return
    keys = {(s, j, i, int(a)) for s, j, i, a in twice.index}
    held = keyed[keyed.system.isin(sorted({k[0] for k in keys})) & keyed.id.isin(sorted({k[2] for k in keys}))]
    rows = held.compute().sort_values("row")
    starts = np.asarray(offsets)

    def place(row: int) -> str:
        k = int(np.searchsorted(starts, row, side="right")) - 1
        return f"{parts[k]}: row {row - offsets[k] + 1}"

    first: dict[tuple, int] = {}
    for s, j, i, a, r in rows.itertuples(index=False):
        key = (s, j, i, int(a))
        if key not in keys:
            continue
        if key in first:
            raise JudgmentImportError(
                f"{place(int(r))}, column 'id': {i!r} repeats {place(first[key])} (same system, judge, epoch)"
            )
        first[key] = int(r)


def import_parts(
    folder: str | Path,
    run_dir: str | Path,
    visible: list[str] | None = None,
    question: str | None = None,
    *,
    scheduler: str = "local",
    jobs: int = 2,
    seed: int = 0,
    notes: list[str] | None = None,
    **kw,
) -> Path:
    """`vocab import table FOLDER`: the Parquet parts under ``folder`` as a judgments dataset in ``run_dir``, on the
    Dask cluster at ``scheduler`` (``local``: ``jobs`` workers on this machine); its label columns, as
    :func:`~vocab.imports.table.import_table`'s, to its sample and ratings. Refused before anything is
    kept: a part that is not Parquet or has other columns, a refused row (by its part and row), a repeat across
    parts, a folder that holds a run or another dataset."""
    from vocab.cluster import dask_client  # deferred: Dask loads only when a cluster is asked for

    folder, run_dir = Path(folder), Path(run_dir)
    if run_dir.resolve() == folder.resolve() or folder.resolve() in run_dir.resolve().parents:
        raise JudgmentImportError(
            f"--run-dir {run_dir} is inside the table's folder {folder}: the dataset's parts "
            "would be read as the table's; import into a directory outside it"
        )
    parts = part_files(folder)
    counts = _layout(parts)
    offsets = [sum(counts[:k]) for k in range(len(counts))]
    if not sum(counts):
        raise JudgmentImportError(f"{folder}: no rows in any part")
    if (run_dir / "manifest.json").exists():
        raise CalibrationError(f"{run_dir} holds a run; import into a directory of its own")
    old = read_meta(run_dir) if (run_dir / DATASET_FILE).exists() else None
    if old is None and (run_dir / PARTS_DIR).exists():
        raise CalibrationError(
            f"{run_dir / PARTS_DIR} is there without {DATASET_FILE} (an import that was "
            "interrupted?): move it away, then import again"
        )
    made = not run_dir.exists()
    make_dir(run_dir, None, CalibrationError)
    check_writable(run_dir / DATASET_FILE, run_dir, CalibrationError)
    for stale in run_dir.glob(f".{PARTS_DIR}.*.tmp"):  # what a killed import left: its staging folder
        shutil.rmtree(stale, ignore_errors=True)
    staged = run_dir / f".{PARTS_DIR}.{secrets.token_hex(4)}.tmp"
    options = {"visible": visible, "question": question or DEFAULT_QUESTION, **kw}
    # parts with no rows are part of the table (Dask and Spark write them), with nothing to check or write
    filled = [k for k, n in enumerate(counts) if n]
    try:
        staged.mkdir()
        outs = [str(staged / f"part-{k:05d}.parquet") for k in range(len(filled))]
        with dask_client(scheduler, jobs, CHECKED_PACKAGES) as (client, ran):
            futures = client.map(
                stage_part,
                [str(parts[k]) for k in filled],
                [offsets[k] for k in filled],
                outs,
                [options] * len(filled),
                pure=False,
            )
            staged_parts = client.gather(futures)
            for got in staged_parts:  # the first refused part in the table's order, whichever finished first
                if "refused" in got:
                    raise JudgmentImportError(got["refused"])
            ran["tasks_by_worker"] = {}
            for addrs in client.who_has(futures).values():
                for a in addrs[:1]:
                    ran["tasks_by_worker"][a] = ran["tasks_by_worker"].get(a, 0) + 1
            frame = dask_items.read_parts(outs)
            _repeat_across(frame, parts, offsets)
            summary = dask_items.summarize(frame)
        first = staged_parts[0]
        for k, got in zip(filled, staged_parts, strict=True):
            if (got["rubric"], got["visible"]) != (first["rubric"], first["visible"]):
                raise JudgmentImportError(
                    f"{parts[k]}: its criteria or visible fields are not those of {parts[filled[0]]}"
                )
        if not summary["rows"]:
            raise CalibrationError("no judged items to import")
        labels: dict = {}
        scored: set = set()
        for got in staged_parts:
            labels.update(got["labels"])
            scored.update(tuple(k) for k in got["scored"])
        check_labels_fit(run_dir, labels)
        if labels:
            check_writable(RunDir(run_dir).key, run_dir, JudgmentImportError)
        written = [
            {"file": f"{PARTS_DIR}/{Path(o).name}", "sha256": g["sha256_out"]}
            for o, g in zip(outs, staged_parts, strict=True)
        ]
        if old is not None:
            if old.get("items", {}).get("digest") != summary["digest"]:
                raise CalibrationError(f"{run_dir} holds another dataset; import into a new directory")
            held = old["items"].get("parts")
            if not isinstance(held, list) or _intact(run_dir, held):  # the same import again: its items stay
                shutil.rmtree(staged)
            else:  # the same import again over damaged parts: written anew
                shutil.rmtree(run_dir / PARTS_DIR, ignore_errors=True)
                os.replace(staged, run_dir / PARTS_DIR)
                items_meta = {**old["items"], "parts": written, "sha256": parts_sha256(written)}
                write_text_atomic(
                    run_dir / DATASET_FILE,
                    json.dumps({**old, "items": items_meta}, indent=2, ensure_ascii=False) + "\n",
                )
        else:
            os.replace(staged, run_dir / PARTS_DIR)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        if made and run_dir.exists() and not any(run_dir.iterdir()):  # a folder this import made is not left behind
            run_dir.rmdir()
        raise
    if old is None:
        people: dict[str, int] = {}
        for by in labels.values():
            for name in by:
                people[name] = people.get(name, 0) + 1
        sources = [
            {
                "path": p.relative_to(folder).as_posix(),
                "rows": n,
                **({"sha256": staged_parts[filled.index(k)]["sha256"]} if n else {}),
            }
            for k, (p, n) in enumerate(zip(parts, counts, strict=True))
        ]
        meta = {
            "name": folder.name,
            "source": {
                "kind": "table",
                "path": str(folder),
                "parts": sources,
                "human_labels": dict(sorted(people.items())),
                "labels_used": labels_used(labels, scored),
            },
            "rubric": first["rubric"],
            "visible": first["visible"],
            "format_version": FORMAT_VERSION,
            "counts": {c: sum(v[c.lower()] for v in summary["cells"].values()) for c in CLASSES},
            "items": {
                "file": PARTS_DIR,
                "parts": written,
                "sha256": parts_sha256(written),
                **summary,
                "imported_on": {k: ran[k] for k in ("scheduler", "tasks_by_worker", "worker_packages")},
            },
        }
        if scored:  # people's labels written before dataset.json lands: part of the import's commit
            try:
                _labels(run_dir, labels, seed, notes, dataset_of(run_dir, meta))
            except BaseException:  # refused or cut short: no parts left without their dataset.json
                shutil.rmtree(run_dir / PARTS_DIR, ignore_errors=True)
                raise
        write_text_atomic(run_dir / DATASET_FILE, json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    elif scored:  # as the one-file import: people's labels written, or their change kept with its history
        _labels(run_dir, labels, seed, notes, None)
    return run_dir


def _labels(run_dir: Path, labels: dict, seed: int, notes: list[str] | None, data) -> None:
    said = write_labels(run_dir, labels, seed=seed, source="people's labels in the table's label columns", data=data)
    if notes is not None:
        notes += said


def _intact(run_dir: Path, held: list) -> bool:
    """Whether a dataset's parts are the files its dataset.json names."""

    try:
        item_files(run_dir, {"parts": held})
    except CalibrationError:
        return False
    return True


def parts_sha256(written: list[dict[str, str]]) -> str:
    """One hash of a dataset's parts: of their names and SHA-256s, a line each."""
    import hashlib

    return hashlib.sha256("".join(f"{p['file']}\t{p['sha256']}\n" for p in written).encode()).hexdigest()
