"""The stratified blind sample and the blinding export.

Per cell, the sample draws ``per_pile`` critic-PASSED attempts (the passed pile) and ``per_pile``
critic-FAILED rows (the failed pile: distinct levels, one failed attempt each, weighted by the number of
FAILED attempts the level has in the cell, so a level rejected three times is not undercounted).
Candidates are sorted by (cell, level, attempt) before the seeded draw, so the draw does not depend on the
order of lines on disk.

Two files come out of a draw, in ``<run_dir>/calibration/``:

- ``key.csv`` — ``blind_id, cell, level, attempt, critic_verdict, pile, weight``, sorted by cell, level and
  attempt (so its row order says nothing about the sheet's): stays with the analyst;
- ``blind_sheet.csv`` / ``.jsonl`` — ``blind_id, seed_word, words, settings, sentence, answer_key`` and
  nothing else: no verdict, reason, cell, model or attempt. Rows are shuffled and blind ids are random.

An imported judgments dataset (:mod:`vocab.calibration.dataset`) is drawn the same way: its groups (an
Inspect sample's epochs) take the place of levels, and its sheet holds its visible fields (the input, the
output, a target) instead of a level's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from vocab.errors import InputError

KEY_COLUMNS = ["blind_id", "cell", "level", "attempt", "critic_verdict", "pile", "weight"]
SHEET_COLUMNS = ["blind_id", "seed_word", "words", "settings", "sentence", "answer_key"]


class CalibrationError(InputError):
    """A sample that would overwrite another, or a ratings file that does not fit its sheet."""


@dataclass(frozen=True)
class Sample:
    key: pd.DataFrame
    sheet: pd.DataFrame


def draw_sample(
    attempts: pd.DataFrame, per_pile: int, seed: int, visible: tuple[str, ...] = tuple(SHEET_COLUMNS[1:])
) -> Sample:
    """The stratified blind sample of a run's attempts (one frame row per attempt with a verdict), or of a
    dataset's items (``level`` the group, ``attempt`` the epoch); ``visible``: the fields the sheet shows."""
    if per_pile < 1:
        raise CalibrationError(f"per_pile must be positive, got {per_pile}")
    rng = np.random.default_rng(seed)
    att = attempts.sort_values(["cell", "level", "attempt"], kind="stable").reset_index(drop=True)
    rows = []
    for cell in sorted(att.cell.unique()):
        a = att[att.cell == cell]
        passed = a[a.verdict == "PASSED"]
        take = rng.choice(len(passed), size=min(per_pile, len(passed)), replace=False) if len(passed) else []
        for i in sorted(take):
            r = passed.iloc[i]
            rows.append((r, "passed", 1))
        failed = a[a.verdict == "FAILED"]
        levels = sorted(failed.level.unique())
        take = rng.choice(len(levels), size=min(per_pile, len(levels)), replace=False) if levels else []
        for i in sorted(take):
            lv = failed[failed.level == levels[i]].sort_values("attempt")
            r = lv.iloc[int(rng.integers(len(lv)))]
            rows.append((r, "failed", len(lv)))
    ids = [f"b{x:06x}" for x in rng.choice(16**6, size=len(rows), replace=False)]
    order = rng.permutation(len(rows))
    key, sheet = [], []
    for pos in order:
        r, pile, weight = rows[pos]
        bid = ids[pos]
        key.append(
            {
                "blind_id": bid,
                "cell": r.cell,
                "level": int(r.level) if isinstance(r.level, (int, np.integer)) else r.level,
                "attempt": int(r.attempt),
                "critic_verdict": r.verdict,
                "pile": pile,
                "weight": int(weight),
            }
        )
        sheet.append({"blind_id": bid, **{f: _plain(r[f]) for f in visible}})
    # The key in (cell, level, attempt) order: key row k is not sheet row k (nor any packet's row k).
    key_df = pd.DataFrame(key, columns=KEY_COLUMNS).sort_values(["cell", "level", "attempt"], kind="stable")
    return Sample(key_df.reset_index(drop=True), pd.DataFrame(sheet, columns=["blind_id", *visible]))


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
    out = Path(run_dir) / "calibration"
    key_csv = sample.key.to_csv(index=False)
    sheet_csv = _sheet_csv(sample.sheet).to_csv(index=False)
    existing = out / "key.csv"
    if existing.exists():
        old = existing.read_text()
        if old != key_csv:
            if sorted(old.splitlines()) != sorted(key_csv.splitlines()):
                raise CalibrationError(f"{existing} holds another sample; move it away (and its ratings) to draw anew")
            existing.write_text(key_csv)  # the same rows in the sheet's order (before 2026-12): re-sorted
        return out
    out.mkdir(parents=True, exist_ok=True)
    (out / "blind_sheet.csv").write_text(sheet_csv)
    with (out / "blind_sheet.jsonl").open("w") as f:
        for row in sample.sheet.to_dict(orient="records"):
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    existing.write_text(key_csv)  # last: its presence marks a complete sample
    return out


def read_sheet(run_dir: str | Path) -> pd.DataFrame:
    rows = [
        json.loads(line)
        for line in (Path(run_dir) / "calibration" / "blind_sheet.jsonl").read_text().splitlines()
        if line.strip()
    ]
    return pd.DataFrame(rows, columns=list(rows[0]) if rows else SHEET_COLUMNS)


def read_key(run_dir: str | Path) -> pd.DataFrame:
    from vocab.calibration.dataset import is_imported

    # an imported dataset's groups are names ("12", "q-07"), a run's levels numbers
    dtype = {"level": str} if is_imported(run_dir) else None
    return pd.read_csv(Path(run_dir) / "calibration" / "key.csv", dtype=dtype)
