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

import math
from pathlib import Path

import pandas as pd

from vocab import stats
from vocab.datasets.dataset import Dataset, load_dataset
from vocab.datasets.errors import CalibrationError
from vocab.datasets.items import flatten
from vocab.datasets.names import check_name
from vocab.layout import RunDir
from vocab.raters.raters import store_ratings, validate_ratings
from vocab.sampling.labelled import ASSUMPTION, LABELS_ALLOCATION
from vocab.sampling.sample import (
    _blind,
    blind_ids,
    data_id,
    read_key,
    sample_stages,
    write_sample,
    write_sample_manifest,
)


def check_labels_fit(run_dir: str | Path, labels: dict[str, dict[str, str]]) -> None:
    """Before anything is written: every rater's name is one the calibration chain accepts."""
    for name in sorted({n for by in labels.values() for n in by}):
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
    -> rater -> PASSED/FAILED. Returns what was done to people's files, a line each.

    A person's file is theirs once written: an import again whose labels of that person are those the last import
    wrote (``sample.json`` keeps their hash) leaves it alone, whatever it holds now (a corrected hand-in, say); labels
    that changed in the source replace it, the earlier file kept in ``calibration/history/`` and the rows that
    changed counted (:func:`vocab.raters.raters.store_ratings`). ``data``: the dataset as its import is about to
    publish it (its ``dataset.json`` not yet written: the labels are part of the import's commit)."""
    import hashlib

    data = data if data is not None else load_dataset(run_dir)
    if labels and all(isinstance(k, tuple) for k in labels):  # a table's rows: (cell, id, epoch), ids repeat
        found = data.items.where_keys([(c, str(i), int(e)) for c, i, e in labels])
        labels = {"\x1f".join(map(str, k)): v for k, v in labels.items()}
        found["id"] = ["\x1f".join(map(str, k)) for k in zip(found.cell, found["id"], found.attempt, strict=True)]
    else:
        found = data.items.where_ids(sorted(labels))
    # the labelled items with a verdict, in (cell, level, attempt) order (ties in the source's order)
    chosen = flatten(found[found.verdict != "UNSCORED"].reset_index(drop=True), data.rubric, data.visible)
    unscored = sorted(set(labels) - set(chosen.id))
    if chosen.empty:
        raise CalibrationError(f"{run_dir}: every labelled item is UNSCORED by the judge: no pile holds one")
    failed = chosen[chosen.verdict == "FAILED"]
    failed_per_level = data.items.failed_in_levels(sorted(set(zip(failed.cell, failed.level, strict=True))))
    # The failed pile weighs a group by its FAILED items (each stands for its group's failed attempts). Where people
    # labelled k of a group's f FAILED items, each weighs f / k; the weights of a cell are scaled by the least common
    # multiple of its k so they stay whole (a weighted mean and its Kish size do not change with the scale).
    labelled_failed = chosen[chosen.verdict == "FAILED"].groupby(["cell", "level"]).size()
    scale = {cell: math.lcm(*map(int, k)) for cell, k in labelled_failed.groupby(level="cell")}
    rows = []
    for i in range(len(chosen)):
        r = chosen.iloc[i]
        if r.verdict == "PASSED":
            rows.append((r, "passed", 1))
        else:
            f, k = int(failed_per_level[(r.cell, r.level)]), int(labelled_failed[(r.cell, r.level)])
            rows.append((r, "failed", f * scale[r.cell] // k))
    dataset = data_id(data)
    sample = _blind(rows, stats.stream(seed, LABELS_ALLOCATION), data.visible, dataset=dataset)
    item_of = dict(zip(blind_ids(rows, dataset), (r.id for r, _, _ in rows), strict=True))
    rub = data.rubric
    (column,) = rub.columns
    earlier = {}
    if RunDir(run_dir).key.exists():
        earlier = next((s.get("labels_sha256", {}) for s in sample_stages(run_dir) if s.get("stage") == "draw"), {})

    def ratings_of(key: pd.DataFrame) -> dict[str, pd.DataFrame]:
        """Each person's labels under the blind ids of ``key``, checked."""
        if set(key.blind_id) == set(item_of):
            by_id = item_of
        else:  # a sample stored before 2026-12 (random ids): its rows by their place
            place = {(r.cell, r.level, int(r.attempt)): r.id for r, _, _ in rows}
            shared = data.items.scored_at_places(sorted(place))
            if len(place) < len(rows) or any(shared.get(p, 0) > 1 for p in place):
                raise CalibrationError(
                    f"{run_dir}: its sample was drawn before 2026-12, and labelled rows share a "
                    "group and epoch: import into a new directory"
                )
            by_id = {k.blind_id: place[(k.cell, k.level, int(k.attempt))] for k in key.itertuples()}
        out = {}
        for name in sorted({n for by in labels.values() for n in by}):
            rated = [(bid, labels[item][name]) for bid, item in sorted(by_id.items()) if name in labels.get(item, {})]
            if rated:  # else this person labelled only items the judge left UNSCORED
                out[name] = validate_ratings(
                    pd.DataFrame(rated, columns=["blind_id", column]), list(key.blind_id), rubric=rub, partial=True
                )[["blind_id", column]]
        return out

    ratings_of(sample.key)  # checked before anything is written
    write_sample(sample, run_dir)  # a sample stored before (its ids random, before 2026-12) stays: read back
    people = ratings_of(read_key(run_dir))
    digests = {n: hashlib.sha256(df.to_csv(index=False).encode()).hexdigest() for n, df in people.items()}
    said = []
    for name, df in people.items():
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
        for cell, k in sample.key.groupby("cell")
    }
    record = {
        "stage": "draw",
        "allocation": LABELS_ALLOCATION,
        "seed": seed,
        "source": source,
        "rows": piles,
        "labelled_unscored": len(unscored),
        "assumes": ASSUMPTION,
        "labels_sha256": digests,
    }
    write_sample_manifest(run_dir, record)
    return said
