"""Labels that people already gave in another harness (MLflow's HUMAN feedback) as the blind sample and its ratings.

Where a judge's verdicts and people's labels of the same items sit side by side, the labelled items are the sample:
each in the pile of the judge's verdict (PASSED or FAILED; a labelled item the judge left UNSCORED is in no pile),
each person's labels a rater's ratings. The correction then stands on one assumption vocab's own draw would have
made true: **within each pile, which items got labelled does not depend on whether the judge was right** (labels
missing at random given the judge's verdict). vocab did not draw these rows and the people saw the judge's
verdict or not as their tool showed it; the sample's record (``calibration/sample.json``, allocation ``labels``)
and the report say so.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from vocab import stats
from vocab.datasets.dataset import Dataset, load_dataset
from vocab.datasets.errors import CalibrationError
from vocab.datasets.items import parquet_source
from vocab.datasets.names import check_name
from vocab.layout import RunDir
from vocab.raters.raters import store_ratings, validate_ratings
from vocab.sampling.labelled import ASSUMPTION, LABELS_ALLOCATION
from vocab.sampling.sample import (
    blind_frame,
    data_id,
    place_ids,
    read_key,
    sample_stages,
    write_sample,
    write_sample_manifest,
)


@dataclass(frozen=True)
class LabelTable:
    """People's labels of a table's rows staged as Parquet by the import (:func:`vocab.imports.table.stage_table`),
    never held as Python objects: ``path`` has columns ``k`` (from 0, in the table's order), ``cell``, ``id``,
    ``attempt``, ``scored`` (the judge scored the row) and ``said:<person>`` (PASSED, FAILED or empty) for each of
    ``people``; ``counts``: labels per person, ``used``: of rows the judge scored (people with none left out)."""

    path: Path
    people: tuple[str, ...]
    counts: dict[str, int]
    used: dict[str, int]


def label_table(con, path: Path, people: tuple[str, ...]) -> LabelTable:
    """The :class:`LabelTable` of the labels staged at ``path``, counted in one pass."""
    cols = [_quoted(f"said:{p}") for p in people]
    counts = ", ".join(f"count(*) FILTER ({c} <> ''), count(*) FILTER ({c} <> '' AND scored)" for c in cols)
    got = con.execute(f"SELECT {counts} FROM {parquet_source(path)}").fetchall()[0]
    said, used = got[0::2], got[1::2]
    return LabelTable(
        path,
        people,
        {p: int(n) for p, n in zip(people, said, strict=True) if n},
        {p: int(n) for p, n in zip(people, used, strict=True) if n},
    )


def _people(labels: dict | LabelTable) -> list[str]:
    """The people who gave ``labels``, sorted."""
    if isinstance(labels, LabelTable):
        return sorted(labels.counts)
    return sorted({n for by in labels.values() for n in by})


def check_labels_fit(run_dir: str | Path, labels: dict[str, dict[str, str]] | LabelTable) -> None:
    """Before anything is written: every rater's name is one the calibration chain accepts."""
    for name in _people(labels):
        if name.lower() == "script":
            raise CalibrationError(f"a human source named {name!r} would take the script rater's name; rename it")
        check_name(name)


def labels_used(labels: dict, scored) -> dict[str, int]:
    """Per person, their labels of items the judge scored (``scored``: those items' keys): what the sample and the
    person's ratings hold, recorded in ``dataset.json`` as ``source.labels_used``
    (:func:`vocab.datasets.dataset.check_labels_kept`)."""
    used: dict[str, int] = {}
    for key in scored:
        for name in labels.get(key, ()):
            used[name] = used.get(name, 0) + 1
    return dict(sorted(used.items()))


def write_labels(
    run_dir: str | Path,
    labels: dict[str, dict[str, str]],
    *,
    seed: int,
    source: str,
    data: Dataset | None = None,
) -> list[str]:
    """The labelled items of the dataset at ``run_dir`` as its sample (key.csv, the blind sheet; blind ids and the
    sheet's order from a stream of ``seed``) and each person's labels as ``ratings_<name>.csv``. ``labels``: item id
    (or a table row's (cell, id, epoch)) -> rater -> PASSED/FAILED, or a table's :class:`LabelTable`. Returns what
    was done to people's files, a line each. Its time and memory grow linearly with the labels: the items are found
    by a join in the store, the key and sheet built a column at a time (:func:`~vocab.sampling.sample.blind_frame`).

    A person's file is theirs once written: an import again whose labels of that person are those the last import
    wrote (``sample.json`` keeps their hash) leaves it alone, whatever it holds now (a corrected hand-in, say); labels
    that changed in the source replace it, the earlier file kept in ``calibration/history/`` and the rows that
    changed counted (:func:`vocab.raters.raters.store_ratings`). ``data``: the dataset as its import is about to
    publish it (its ``dataset.json`` not yet written: the labels are part of the import's commit)."""
    import hashlib

    data = data if data is not None else load_dataset(run_dir)
    people = _people(labels)
    dataset = data_id(data)
    rows, ids, unscored = labelled_rows(data, labels, people, dataset)
    if not ids:
        raise CalibrationError(f"{run_dir}: every labelled item is UNSCORED by the judge: no pile holds one")
    sample = blind_frame(rows, stats.stream(seed, LABELS_ALLOCATION), data.visible, dataset=dataset, ids=ids)
    for f in data.visible:  # in the sheet now
        del rows[f"visible:{f}"]
    rub = data.rubric
    (column,) = rub.columns
    earlier = {}
    if RunDir(run_dir).key.exists():
        earlier = next((s.get("labels_sha256", {}) for s in sample_stages(run_dir) if s.get("stage") == "draw"), {})

    def ratings_of(key: pd.DataFrame) -> dict[str, pd.DataFrame]:
        """Each person's labels under the blind ids of ``key``, checked."""
        sheet_ids = ids  # this draw's (held as text already): the key's, in another order
        if key is sample.key or (len(key) == len(ids) and set(key.blind_id) == set(ids)):
            blind = ids
        else:  # a sample stored before 2026-12 (random ids): its rows by their place
            places = list(zip(rows["cell"], rows["level"], rows["attempt"], strict=True))
            shared = data.items.scored_at_places(sorted(set(places)))
            if len(set(places)) < len(places) or any(shared.get(p, 0) > 1 for p in places):
                raise CalibrationError(
                    f"{run_dir}: its sample was drawn before 2026-12, and labelled rows share a "
                    "group and epoch: import into a new directory"
                )
            stored = {(k.cell, k.level, int(k.attempt)): k.blind_id for k in key.itertuples()}
            blind, sheet_ids = [stored[p] for p in places], list(key.blind_id)
        out = {}
        for name in people:
            said = pd.DataFrame({"blind_id": blind, column: rows[f"said:{name}"]})
            said = said[said[column] != ""].sort_values("blind_id").reset_index(drop=True)
            if len(said):  # else this person labelled only items the judge left UNSCORED
                out[name] = validate_ratings(said, sheet_ids, rubric=rub, partial=True)[["blind_id", column]]
        return out

    had_key = RunDir(run_dir).key.exists()
    ratings = ratings_of(sample.key)  # checked before anything is written
    write_sample(sample, run_dir)
    if had_key:  # a sample stored before (its ids random, before 2026-12) stays: read back
        ratings = ratings_of(read_key(run_dir))
    digests = {n: hashlib.sha256(df.to_csv(index=False).encode()).hexdigest() for n, df in ratings.items()}
    said = []
    for name, df in ratings.items():
        if earlier.get(name) == digests[name] and RunDir(run_dir).ratings(name).exists():
            continue  # the source says what it said at the last import: the person's file stays as it is now
        done = store_ratings(run_dir, name, df, rub, replace=True)
        if done.earlier is not None:
            said.append(
                f"{name}: their labels changed in the source ({len(done.changed)} rows changed, "
                f"{len(done.dropped)} dropped); the earlier file is kept as {done.earlier}"
            )
    piles = {
        cell: [int((k.pile == "passed").sum()), int((k.pile == "failed").sum())]
        for cell, k in sample.key[["cell", "pile"]].groupby("cell")
    }
    record = {
        "stage": "draw",
        "allocation": LABELS_ALLOCATION,
        "seed": seed,
        "source": source,
        "rows": piles,
        "labelled_unscored": int(unscored),
        "assumes": ASSUMPTION,
        "labels_sha256": digests,
    }
    write_sample_manifest(run_dir, record)
    return said


BATCH = 50_000  # labelled items read from the store at a time
LABELS_MEMORY = "192MB"  # DuckDB's bound while it finds and sorts them (the sample itself is held in Python)


def labelled_rows(
    data: Dataset, labels: dict | LabelTable, people: list[str], dataset: str
) -> tuple[dict[str, list], list[str], int]:
    """The items people labelled that the judge scored, in (cell, level, attempt, row) order, as the columns
    :func:`~vocab.sampling.sample.blind_frame` takes (each FAILED one weighed, below) and ``said:<person>`` for each
    of ``people`` (their label, or empty); their blind ids; and how many labels' keys found no scored item. Found in
    the store by a join (not a list of a million keys) and read :data:`BATCH` rows at a time, each text a few rows
    share (a cell, a verdict, a label) held once. A label's key is a table row's (cell, id, epoch), or an item id,
    labelled in every cell that holds it; the blind id derives from it as text.

    The failed pile weighs a group by its FAILED items (each stands for its group's failed attempts). Where people
    labelled k of a group's f FAILED items, each weighs f / k; the weights of a cell are scaled by the least common
    multiple of its k so they stay whole (a weighted mean and its Kish size do not change with the scale)."""
    import pyarrow as pa

    con = data.items.con
    said = [f"said:{p}" for p in people]
    if isinstance(labels, LabelTable):
        source, keyed = parquet_source(labels.path), True
    else:
        keys = list(labels)
        keyed = bool(keys) and all(isinstance(k, tuple) for k in keys)
        columns = {"k": pa.array(range(len(keys)), pa.int64())}
        if keyed:
            columns["cell"] = pa.array([str(k[0]) for k in keys], pa.string())
            columns["id"] = pa.array([str(k[1]) for k in keys], pa.string())
            columns["attempt"] = pa.array([int(k[2]) for k in keys], pa.int64())
        else:
            columns["id"] = pa.array([str(k) for k in keys], pa.string())
        for p, col in zip(people, said, strict=True):
            columns[col] = pa.array([by.get(p, "") for by in labels.values()], pa.string())
        con.register("vocab_labelled", pa.table(columns))
        source = "vocab_labelled"
    if keyed:
        on = "s.cell = l.cell AND s.id = l.id AND s.attempt = l.attempt"
        item = "s.cell || chr(31) || s.id || chr(31) || CAST(s.attempt AS VARCHAR)"
    else:
        on, item = "s.id = l.id", "s.id"
    words = "".join(f", coalesce(l.{_quoted(c)}, '') AS {_quoted(c)}" for c in said)
    rows: dict[str, list] = {
        c: []
        for c in ("cell", "level", "attempt", "verdict", "pile", "weight", *(f"visible:{f}" for f in data.visible))
    }
    rows.update({c: [] for c in said})
    ids: list[str] = []
    taken: set[str] = set()
    held: dict = {}  # one object for each text many rows share
    fk: list[tuple[int, int]] = []  # a FAILED row's (f, k)
    limit = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
    con.execute(f"SET memory_limit = '{LABELS_MEMORY}'")  # its sort spills: the rows it hands over are held here
    try:
        n_labelled = int(con.execute(f"SELECT count(*) FROM {source}").fetchall()[0][0])
        found = np.zeros(n_labelled, dtype=bool)
        reader = con.sql(
            f"""WITH lab AS (
                SELECT l.k, s.cell, CAST(s.level AS VARCHAR) AS level, s.attempt, s.row, {item} AS item, s.verdict,
                  s.visible{words}
                FROM {data.items.src} AS s JOIN {source} AS l ON {on} WHERE s.verdict <> 'UNSCORED'),
              fl AS (
                SELECT s.cell, CAST(s.level AS VARCHAR) AS level, count(*) AS f FROM {data.items.src} AS s
                JOIN (SELECT DISTINCT cell, level FROM lab WHERE verdict = 'FAILED') AS g
                  ON s.cell = g.cell AND CAST(s.level AS VARCHAR) = g.level
                WHERE s.verdict = 'FAILED' GROUP BY ALL)
            SELECT lab.* EXCLUDE (row), coalesce(fl.f, 0) AS f,
              count(*) FILTER (WHERE lab.verdict = 'FAILED') OVER (PARTITION BY lab.cell, lab.level) AS k_failed
            FROM lab LEFT JOIN fl ON fl.cell = lab.cell AND fl.level = lab.level
            ORDER BY lab.cell, lab.level, lab.attempt, lab.row"""
        ).to_arrow_reader(BATCH)
        for batch in reader:
            got = batch.to_pydict()
            found[got["k"]] = True
            cells = [held.setdefault(c, c) for c in got["cell"]]
            verdicts = [held.setdefault(v, v) for v in got["verdict"]]
            ids += place_ids(cells, got["level"], got["attempt"], got["item"], dataset, taken=taken)
            rows["cell"] += cells
            rows["level"] += got["level"]
            rows["attempt"] += got["attempt"]
            rows["verdict"] += verdicts
            for v, f, k in zip(verdicts, got["f"], got["k_failed"], strict=True):
                rows["pile"].append("failed" if v == "FAILED" else "passed")
                if v == "FAILED":
                    fk.append((int(f), int(k)))
            for text in got["visible"]:
                shown = json.loads(text)
                for f in data.visible:
                    rows[f"visible:{f}"].append(shown.get(f, ""))
            for c in said:
                rows[c] += [held.setdefault(w, w) for w in got[c]]
        del reader
    finally:
        con.execute(f"SET memory_limit = '{limit}'")
        if source == "vocab_labelled":
            con.unregister("vocab_labelled")
    scale: dict[str, int] = {}
    at = iter(fk)
    for cell, pile in zip(rows["cell"], rows["pile"], strict=True):
        if pile == "failed":
            scale[cell] = math.lcm(scale.get(cell, 1), next(at)[1])
    at = iter(fk)
    for cell, pile in zip(rows["cell"], rows["pile"], strict=True):
        if pile == "failed":
            f, k = next(at)
            rows["weight"].append(f * scale[cell] // k)
        else:
            rows["weight"].append(1)
    return rows, ids, int(n_labelled - found.sum())


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
