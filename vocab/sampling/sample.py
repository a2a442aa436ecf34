"""The stratified blind sample and the blinding export.

Per cell, the sample draws ``per_pile`` critic-PASSED attempts (the passed pile) and ``per_pile``
critic-FAILED rows (the failed pile: distinct levels, one failed attempt each, weighted by the number of
FAILED attempts the level has in the cell, so a level rejected three times is not undercounted).
Candidates are sorted by (cell, level, attempt) before the seeded draw, so the draw does not depend on the
order of lines on disk.

Two files come out of a draw, in ``<run_dir>/calibration/``:

- ``key.csv`` — ``blind_id, cell, level, attempt, critic_verdict, pile, weight, quotes_judge``, sorted by cell,
  level and attempt (so its row order says nothing about the sheet's): stays with the analyst. ``quotes_judge``
  names what of the judge an answer quotes (:mod:`vocab.sampling.quotes`; empty for most rows; a key drawn
  before it existed gets it from the sheet when read);
- ``blind_sheet.csv`` / ``.jsonl`` — ``blind_id, seed_word, words, settings, sentence, answer_key`` and
  nothing else: no verdict, reason, cell, model or attempt. Rows are shuffled and blind ids are random.

An imported judgments dataset (:mod:`vocab.datasets.dataset`) is drawn the same way: its groups (an
Inspect sample's epochs) take the place of levels, and its sheet holds its visible fields (the input, the
output, a target) instead of a level's.
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from vocab import stats
from vocab.datasets.dataset import FORMAT_VERSION
from vocab.datasets.errors import CalibrationError
from vocab.datasets.items import flatten
from vocab.files import make_dir
from vocab.layout import RunDir
from vocab.records import write_text_atomic
from vocab.sampling.allocation import ALLOCATIONS, allocate, cell_sizes, fit, pile_sizes  # noqa: F401 (importable here)
from vocab.sampling.drawn import (  # noqa: F401 (the sample's readers, importable here)
    KEY_COLUMNS,
    KEY_REQUIRED,
    SHEET_COLUMNS,
    Drawn,
    read_drawn,
    read_key,
    read_sheet,
    sample_stages,
    sheet_sha256,
)
from vocab.sampling.quotes import COLUMN as QUOTES
from vocab.sampling.quotes import quotes_of


@dataclass(frozen=True)
class Sample:
    key: pd.DataFrame
    sheet: pd.DataFrame


def _pick(rng, a: pd.DataFrame, n_passed: int, n_failed: int, taken: set | None = None) -> list[tuple]:
    """One cell's rows: ``n_passed`` PASSED attempts, ``n_failed`` FAILED rows (distinct levels, one failed attempt
    each, weighted by the level's FAILED attempts); ``taken``: (pile, level[, attempt]) already in a sample."""
    taken = taken or set()
    rows = []
    passed = a[a.verdict == "PASSED"]
    passed = passed[[("passed", lv, at) not in taken for lv, at in zip(passed.level, passed.attempt, strict=True)]]
    take = rng.choice(len(passed), size=min(n_passed, len(passed)), replace=False) if len(passed) else []
    for i in sorted(take):
        rows.append((passed.iloc[i], "passed", 1))
    failed = a[a.verdict == "FAILED"]
    levels = [lv for lv in sorted(failed.level.unique()) if ("failed", lv) not in taken]
    take = rng.choice(len(levels), size=min(n_failed, len(levels)), replace=False) if levels else []
    for i in sorted(take):
        lv = failed[failed.level == levels[i]].sort_values("attempt")
        rows.append((lv.iloc[int(rng.integers(len(lv)))], "failed", len(lv)))
    return rows


def _pick_items(rng, data, cell: str, n_passed: int, n_failed: int, taken: set | None = None) -> list[tuple]:
    """:func:`_pick` on a dataset's stored items (:class:`vocab.datasets.items.Items`): the same calls on ``rng``
    in the same order, each pile numbered in the order :func:`_pick` sorts a frame in, so the same rows."""

    taken = taken or set()
    store, flat = data.items, (lambda f: flatten(f, data.rubric, data.visible))
    tp = sorted((t[1], int(t[2])) for t in taken if t[0] == "passed")
    tf = sorted(t[1] for t in taken if t[0] == "failed")
    rows = []
    n = store.count_passed(cell, tp)
    take = rng.choice(n, size=min(n_passed, n), replace=False) if n else []
    got = flat(store.passed_at(cell, sorted(int(i) for i in take), tp))
    rows += [(got.iloc[i], "passed", 1) for i in range(len(got))]
    n = store.count_failed_levels(cell, tf)
    take = rng.choice(n, size=min(n_failed, n), replace=False) if n else []
    for lv in store.failed_levels_at(cell, sorted(int(i) for i in take), tf):
        rows.append((flat(lv).iloc[int(rng.integers(len(lv)))], "failed", len(lv)))
    return rows


def data_id(data) -> str:
    """The identity a dataset's blind ids derive from: a run's :func:`content_hash`, an imported dataset's digest
    (kept at import: every column of every item). A dataset imported before 2026-12 (``judgments.jsonl``, no
    ``items`` in its ``dataset.json``) keeps the content hash its sample's ids were drawn with."""
    if data.items is None or data.manifest.get("format_version") != FORMAT_VERSION:
        return content_hash(data.attempts, data.visible)
    return "items:" + data.manifest["items"]["digest"]


def draw(data, per_pile: int, seed: int, *, sizes: dict[str, tuple[int, int]] | None = None) -> Sample:
    """:func:`draw_sample` of a run or dataset (:class:`~vocab.datasets.dataset.Dataset`); an imported dataset's
    rows picked in its store, never read whole."""
    if data.items is None:
        return draw_sample(data.attempts, per_pile, seed, data.visible, sizes=sizes)
    if per_pile < 1:
        raise CalibrationError(f"per_pile must be positive, got {per_pile}")
    rng = np.random.default_rng(seed)  # the sample's stream (not stats.stream: it would redraw every sample)
    rows = []
    for cell in data.cells.index[data.cells.attempts > 0]:
        rows += _pick_items(rng, data, cell, *(sizes[cell] if sizes else (per_pile, per_pile)))
    return _blind(rows, rng, data.visible, dataset=data_id(data))


def draw_sample(
    attempts: pd.DataFrame,
    per_pile: int,
    seed: int,
    visible: tuple[str, ...] = tuple(SHEET_COLUMNS[1:]),
    *,
    sizes: dict[str, tuple[int, int]] | None = None,
) -> Sample:
    """The stratified blind sample of a run's attempts (one frame row per attempt with a verdict), or of a
    dataset's items (``level`` the group, ``attempt`` the epoch); ``visible``: the fields the sheet shows.
    ``sizes``: per cell, (passed, failed) rows (:func:`pile_sizes`) instead of ``per_pile`` each."""
    if per_pile < 1:
        raise CalibrationError(f"per_pile must be positive, got {per_pile}")
    rng = np.random.default_rng(seed)  # the sample's stream (not stats.stream: it would redraw every sample)
    att = attempts.sort_values(["cell", "level", "attempt"], kind="stable").reset_index(drop=True)
    rows = []
    for cell in sorted(att.cell.unique()):
        rows += _pick(rng, att[att.cell == cell], *(sizes[cell] if sizes else (per_pile, per_pile)))
    return _blind(rows, rng, visible, dataset=content_hash(att, visible))


def content_hash(attempts: pd.DataFrame, visible) -> str:
    """The judged items' content: every item's place, verdict and visible fields, hashed in (cell, level, attempt)
    order. Two datasets of one eval (the same item ids, systems and judges, other answers or verdicts) differ."""
    cols = [c for c in ("cell", "level", "attempt", "verdict", *visible) if c in attempts.columns]
    att = attempts.sort_values(["cell", "level", "attempt"], kind="stable")[cols]
    h = hashlib.sha256()
    for row in att.itertuples(index=False):
        h.update(json.dumps([str(v) for v in row], ensure_ascii=False).encode() + b"\n")
    return h.hexdigest()


def blind_ids(rows: list[tuple], dataset: str, used: set[str] = frozenset()) -> list[str]:
    """Each sample row's blind id, in the rows' order: ``b`` and six hex digits of the sha256 of the dataset's content
    hash, the row's place (cell, level, attempt) and its item's id (two items of a table may share a place), the next
    such hash where two rows would share one."""
    return place_ids(
        [r.cell for r, *_ in rows],
        [r.level for r, *_ in rows],
        [r.attempt for r, *_ in rows],
        [getattr(r, "id", "") for r, *_ in rows],
        dataset,
        used,
    )


def place_ids(
    cells, levels, attempts, items, dataset: str, used: set[str] = frozenset(), *, taken: set[str] | None = None
) -> list[str]:
    """:func:`blind_ids` of rows given as columns (cell, level, attempt, item id), in their order: each row's id
    checked against a set of those taken, so a million rows take seconds, not hours. ``taken``: the ids of the rows
    before these (rows given a batch at a time), added to."""
    ids: list[str] = []
    taken = set(used) if taken is None else taken
    for cell, level, attempt, item in zip(cells, levels, attempts, items, strict=True):
        head = f"{dataset}\0{cell}\0{level}\0{int(attempt)}\0{item}\0"
        n = 0
        while (bid := "b" + hashlib.sha256(f"{head}{n}".encode()).hexdigest()[:6]) in taken:
            n += 1
        taken.add(bid)
        ids.append(bid)
    return ids


def _blind(rows: list[tuple], rng, visible, used: set[str] = frozenset(), *, dataset: str) -> Sample:
    """Blind ids and the sheet in random order, the key in (cell, level, attempt) order. A row's blind id is derived
    from ``dataset`` (:func:`content_hash`) and the item, so it belongs to this dataset: ratings of another
    dataset's sample (two runs of one eval) never match it; none is one of ``used``. ``rows``: (row, pile,
    weight[, stratum, its size]) (:mod:`vocab.sampling.strata`), made a frame of columns for
    :func:`blind_frame`."""
    picked = [r for r, *_ in rows]
    frame = {
        "cell": [r.cell for r in picked],
        "level": [int(r.level) if isinstance(r.level, (int, np.integer)) else r.level for r in picked],
        "attempt": [int(r.attempt) for r in picked],
        "id": [getattr(r, "id", "") for r in picked],
        "verdict": [r.verdict for r in picked],
        "pile": [p for _, p, *_ in rows],
        "weight": [int(w) for _, _, w, *_ in rows],
        **{f"visible:{f}": [r[f] for r in picked] for f in visible},
    }
    if any(len(r) > 3 for r in rows):  # (row, pile, weight[, stratum, its size]): vocab.sampling.strata
        frame["stratum"] = [r[3] for r in rows]
        frame["stratum_size"] = [int(r[4]) for r in rows]
    return blind_frame(frame, rng, visible, used, dataset=dataset)


def blind_frame(
    rows: dict[str, list], rng, visible, used: set[str] = frozenset(), *, dataset: str, ids: list[str] | None = None
) -> Sample:
    """:func:`_blind` of rows given as columns (``cell``, ``level``, ``attempt``, ``id``, ``verdict``, ``pile``,
    ``weight``, ``visible:<field>`` for each visible field, and ``stratum``, ``stratum_size`` where drawn by
    strata), a column at a time: the same blind ids, key and sheet as row by row, in time and memory linear in the
    rows (a labelled table's million rows are its sample). ``ids``: the rows' blind ids, when the caller made them
    (:func:`place_ids`)."""
    n = len(rows["cell"])
    if ids is None:
        ids = place_ids(rows["cell"], rows["level"], rows["attempt"], rows["id"], dataset, used)
    order = rng.permutation(n)
    stratified = "stratum" in rows
    key = {
        "blind_id": ids,
        "cell": rows["cell"],
        "level": rows["level"],
        "attempt": rows["attempt"],
        "critic_verdict": rows["verdict"],
        "pile": rows["pile"],
        "weight": rows["weight"],
        QUOTES: quotes_of({f: rows[f"visible:{f}"] for f in visible}, n),
        **({"stratum": rows["stratum"], "stratum_size": rows["stratum_size"]} if stratified else {}),
    }
    # The key in (cell, level, attempt) order: key row k is not sheet row k (nor any packet's row k). Rows that share
    # a place keep the sheet's order among them (the key was sorted, stably, from the sheet's order).
    columns = KEY_COLUMNS + (["stratum", "stratum_size"] if stratified else [])  # vocab.sampling.strata's
    key_df = _frame(key, columns, n)
    if n:
        at = np.empty(n, dtype=np.int64)
        at[order] = np.arange(n)  # each row's place on the sheet
        key_df["_at"] = at
        key_df = key_df.sort_values(["cell", "level", "attempt", "_at"], kind="stable").drop(columns="_at")
    sheet = pd.DataFrame({"blind_id": [ids[i] for i in order]}) if n else pd.DataFrame([], columns=["blind_id"])
    for f in visible:
        values = rows[f"visible:{f}"]
        sheet[f] = _frame({f: [_plain(values[i]) for i in order]}, None, n)[f] if n else pd.Series([], dtype=object)
    return Sample(key_df.reset_index(drop=True), sheet)


def _frame(columns: dict[str, list], order: list[str] | None, n: int) -> pd.DataFrame:
    """A frame of ``columns`` (lists of ``n`` values each), typed as a frame of the rows as records would be."""
    names = order if order is not None else list(columns)
    if not n:
        return pd.DataFrame([], columns=names)
    return pd.DataFrame({c: columns[c] for c in names}, columns=names)


def extend_sample(
    attempts: pd.DataFrame,
    key: pd.DataFrame,
    passes: pd.Series,
    budget: int,
    seed: int,
    visible: tuple[str, ...],
    used_ids: set[str],
) -> tuple[Sample, dict[str, tuple[int, int]]]:
    """The second stage of a ``pilot`` allocation (``attempts``: a frame of every attempt, or a
    :class:`~vocab.datasets.dataset.Dataset`): per cell, the rated pilot in ``key`` (``passes``: the pilot
    rater's verdict per blind id, every pilot row rated) allocates ``budget`` rows (:func:`allocate`), and the rows
    each pile lacks are drawn from the ones not yet in the sample, from a stream of the seed and the cell's name.
    Returns the new rows only (fresh blind ids, none of ``used_ids``; the sheet in random order) and the sizes."""

    data = None
    if not isinstance(attempts, pd.DataFrame):  # a Dataset
        data = attempts
        if data.items is None:
            attempts = data.attempts
    if data is None or data.items is None:
        att = attempts.sort_values(["cell", "level", "attempt"], kind="stable").reset_index(drop=True)
        counts = {cell: (int((a.verdict == "PASSED").sum()), len(a)) for cell, a in att.groupby("cell", sort=True)}
    else:
        c = data.cells[data.cells.attempts > 0]
        counts = {cell: (int(r.passed), int(r.attempts)) for cell, r in c.iterrows()}
    unrated = key[~key.blind_id.isin(passes.index)]
    if "stratum" in key.columns:  # a pilot extends piles drawn whole
        raise CalibrationError("the sample was drawn by strata: a pilot allocation extends a sample drawn per pile")
    elif len(unrated):
        raise CalibrationError(
            f"the pilot rater has rated {len(key) - len(unrated)} of the sample's {len(key)} rows; a pilot allocation "
            "needs them all"
        )
    rows, sizes = [], {}
    for cell in sorted(counts):
        k = key[key.cell == cell]
        ka, kb = k[k.pile == "passed"], k[k.pile == "failed"]
        pilot = (len(ka), int(passes[ka.blind_id].sum()), len(kb), int(passes[kb.blind_id].sum()))
        if data is not None and data.items is not None:
            room_b = int(data.cells.failed_groups[cell])
        else:
            room_b = int(att[(att.cell == cell) & (att.verdict == "FAILED")].level.nunique())
        split = allocate(budget, counts[cell][0] / counts[cell][1], "pilot", pilot=pilot)
        sizes[cell] = fit(split, (counts[cell][0], room_b), "pilot")  # within each pile's rows
        taken = {("passed", lv, at) for lv, at in zip(ka.level, ka.attempt, strict=True)} | {
            ("failed", lv) for lv in kb.level
        }
        more = (max(sizes[cell][0] - len(ka), 0), max(sizes[cell][1] - len(kb), 0))
        rng = stats.stream(seed, "sample-pilot", cell)
        if data is not None and data.items is not None:
            taken = {(t[0], str(t[1]), *t[2:]) for t in taken}
            rows += _pick_items(rng, data, cell, *more, taken=taken)
        else:
            rows += _pick(rng, att[att.cell == cell], *more, taken=taken)
    ident = data_id(data) if data is not None else content_hash(attempts, visible)
    blind = _blind(rows, stats.stream(seed, "sample-pilot", "blind"), visible, used_ids, dataset=ident)
    return blind, sizes


def stage_ids(run_dir: str | Path, drawn: Drawn | None = None) -> list[list[str]]:
    """The blind ids of each stage of the sample, in the sheet's order: one list for a sample drawn at once; after
    a pilot's extension (``calibration/sample.json`` records the rows each added, at the sheet's end) the pilot's
    rows first, then each extension's. A record that does not add up to the sheet is one line. ``drawn``: the
    sample as the caller read it (:func:`read_drawn`)."""
    drawn = drawn or read_drawn(run_dir)
    ids = drawn.ids
    added = [int(s.get("added", 0)) for s in drawn.stages if s.get("stage") == "pilot extension"]
    if sum(added) > len(ids) or any(a < 0 for a in added):
        raise CalibrationError(
            f"{RunDir(run_dir).sample_meta}: its extensions add {sum(added)} rows to a sheet of "
            f"{len(ids)}: not this sample's record (draw the sample again)"
        )
    out, end = [], len(ids)
    for a in reversed(added):
        out.insert(0, ids[end - a : end])
        end -= a
    return [ids[:end], *out]


def write_sample_manifest(run_dir: str | Path, record: dict) -> Path:
    """``calibration/sample.json``: how the sample was drawn (seed, allocation, budget, rows per pile and cell, and
    for a pilot's second stage the rater whose ratings allocated it), one record per stage."""

    path = RunDir(run_dir).sample_meta
    # a new draw starts the record afresh (a sample moved away may have left its record behind)
    stages = sample_stages(run_dir) if record.get("stage") != "draw" else []
    write_text_atomic(path, json.dumps({"stages": [*stages, record]}, indent=1, sort_keys=True) + "\n")
    return path


def write_extension(extra: Sample, before: pd.DataFrame, run_dir: str | Path) -> Path:
    """Append a pilot's second stage to the sample on disk: the new rows at the end of the blind sheet (ratings of
    the first rows stay valid), the key re-sorted. Refused if the key on disk is not ``before``."""
    layout = RunDir(run_dir)
    out = layout.calibration
    if layout.key.read_text() != _as_stored(before, layout.key).to_csv(index=False):
        raise CalibrationError(f"{layout.key} changed while the extension was drawn; draw it again")
    key = pd.concat([before, extra.key], ignore_index=True).sort_values(["cell", "level", "attempt"], kind="stable")
    rows = _jsonl(extra.sheet)
    staged = {  # every file written whole beside its target first, then each moved into place
        layout.sheet_csv: layout.sheet_csv.read_text() + _sheet_csv(extra.sheet).to_csv(index=False, header=False),
        layout.sheet: layout.sheet.read_text() + rows,
        layout.key: key.to_csv(index=False),  # last: the key names the rows the sheet holds
    }

    # the first stage's sheet stays valid for its rows: a hand-in stamped with its hash is still this sample's
    before_hash = sheet_sha256(run_dir)
    earlier = layout.earlier_sheets
    known = earlier.read_text().split() if earlier.exists() else []
    write_text_atomic(earlier, "".join(f"{h}\n" for h in dict.fromkeys([*known, before_hash])))
    for path, text in staged.items():  # in order, each whole: the key last
        write_text_atomic(path, text)
    return out


def _plain(v):
    """A sheet value as JSON holds it: lists and dicts as such, everything else as it is."""
    if isinstance(v, (list, tuple, np.ndarray)):
        return list(v)
    return dict(v) if isinstance(v, dict) else v


def _sheet_csv(sheet: pd.DataFrame) -> pd.DataFrame:
    out = sheet.copy()
    for col in out.columns:
        if out[col].map(lambda v: isinstance(v, (list, dict))).any():
            out[col] = out[col].map(lambda v: json.dumps(v, sort_keys=True))
    return out


def write_sample(sample: Sample, run_dir: str | Path) -> Path:
    """Write key.csv and the blind sheet. An existing, different sample is never overwritten: its ratings
    would no longer match it."""
    layout = RunDir(run_dir)
    out = layout.calibration
    # each text made when it is wanted and let go once written: a labelled table's sample is its million rows
    key_csv = lambda: sample.key.to_csv(index=False)  # noqa: E731
    sheet_csv = lambda: _sheet_csv(sample.sheet).to_csv(index=False)  # noqa: E731
    existing = layout.key
    left = sorted(p.name for p in (layout.sheet, layout.sheet_csv, *layout.ratings_files()) if p.exists())
    if (
        not existing.exists()
        and left
        and _holds(layout.sheet_csv, sheet_csv)
        and _holds(layout.sheet, lambda: _jsonl(sample.sheet))
    ):
        # the key alone went missing, and the sheets are byte for byte this draw's: the same rows under the same
        # blind ids, so their ratings stay valid and the key that names them is written again
        write_text_atomic(existing, key_csv())
        return out
    if not existing.exists() and left:
        # a sample whose drawing was cut short, or whose key went missing: its sheet may have been handed out and
        # rated, so a new draw over it would leave ratings of rows that are no longer there
        raise CalibrationError(
            f"{out}: an incomplete sample ({', '.join(left)} without key.csv); move calibration/ "
            "away (keep any ratings) and draw the sample again"
        )
    if existing.exists():
        old = existing.read_text()
        key_csv = _as_stored(sample.key, existing).to_csv(index=False)  # a key drawn before quotes_judge stays so
        if old != key_csv:
            stored = pd.read_csv(io.StringIO(old), dtype=str, keep_default_na=False)
            drawn = pd.read_csv(io.StringIO(key_csv), dtype=str, keep_default_na=False)
            rows = [c for c in drawn.columns if c != "blind_id"]  # a sample drawn before 2026-12 has random ids
            same_rows = set(stored.columns) == set(drawn.columns) and sorted(
                map(tuple, stored[rows].to_numpy().tolist())
            ) == sorted(map(tuple, drawn[rows].to_numpy().tolist()))
            if not same_rows:
                raise CalibrationError(f"{existing} holds another sample; move it away (and its ratings) to draw anew")
            if sorted(old.splitlines()) == sorted(key_csv.splitlines()):
                existing.write_text(key_csv)  # the same rows in the sheet's order (before 2026-12): re-sorted
        return out

    make_dir(out, run_dir, CalibrationError)
    # each file whole or not at all; the key last: a sample is complete when key.csv exists and names the rows
    # both sheets hold (read_sheet checks it, so a sample a kill interrupted is never trusted)
    write_text_atomic(layout.sheet_csv, sheet_csv())
    write_text_atomic(layout.sheet, _jsonl(sample.sheet))
    write_text_atomic(existing, key_csv())
    return out


def _jsonl(sheet: pd.DataFrame) -> str:
    """The sheet as JSON Lines, a row an object (as ``json.dumps(row, ensure_ascii=False)`` writes each of
    ``to_dict(orient="records")``), made a column at a time and joined a block of rows at a time, never a dict a row
    held for every row."""
    encode = json.JSONEncoder(ensure_ascii=False).encode
    names = list(sheet.columns)
    blocks, step = [], 50_000
    for start in range(0, len(sheet), step):
        part = [sheet[c].iloc[start : start + step].tolist() for c in names]
        blocks.append("".join(encode(dict(zip(names, row, strict=True))) + "\n" for row in zip(*part, strict=True)))
    return "".join(blocks)


def _holds(path: Path, text) -> bool:
    """Whether the file at ``path`` holds the text ``text()`` makes, exactly (made only if the file is there)."""
    return path.is_file() and path.read_bytes() == text().encode()


def earlier_sheet_hashes(run_dir: str | Path) -> set[str]:
    """The hashes of the sheets a pilot's extension grew from: their rows stay this sample's."""
    earlier = RunDir(run_dir).earlier_sheets
    return set(earlier.read_text().split()) if earlier.exists() else set()


def _as_stored(key: pd.DataFrame, path: Path) -> pd.DataFrame:
    """``key`` with the columns of the key.csv at ``path``: one drawn before ``quotes_judge`` is not rewritten for
    it (its hash, which reports and packets quote, stays)."""
    with path.open(encoding="utf-8") as f:
        header = f.readline().strip().split(",")
    return key if QUOTES in header else key.drop(columns=[QUOTES], errors="ignore")
