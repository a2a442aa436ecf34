"""A drawn sample as a command reads it: the blind sheet, the key, the sample's record (its stages) and the two
files' digests, each file of ``calibration/`` opened once (:func:`read_drawn`). A command reads it once and hands it
to each step (``drawn=``); the by-path readers below (:func:`read_sheet`, :func:`read_key`, :func:`sample_stages`,
:func:`sheet_sha256`) are the same reads for a caller that needs one part.

A sample is trusted only whole: ``key.csv`` is written last and must name exactly the rows of
``blind_sheet.jsonl``; a sample cut short, cut mid-line or damaged is one line, never a shorter sheet.
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from vocab.datasets.dataset import is_imported
from vocab.datasets.errors import CalibrationError
from vocab.layout import RunDir
from vocab.records import read_json_object
from vocab.sampling.quotes import COLUMN as QUOTES
from vocab.sampling.quotes import flag_rows

KEY_COLUMNS = ["blind_id", "cell", "level", "attempt", "critic_verdict", "pile", "weight", QUOTES]
KEY_REQUIRED = KEY_COLUMNS[:-1]  # never empty in a row (quotes_judge mostly is)
SHEET_COLUMNS = ["blind_id", "seed_word", "words", "settings", "sentence", "answer_key"]
REDRAW = "move calibration/ away (keep any ratings) and draw the sample again"


@dataclass(frozen=True)
class Drawn:
    """One read of a sample: ``sheet`` (what the raters see), ``key`` (what stays behind, with ``quotes_judge``),
    ``stages`` (``sample.json``'s record, none without one) and the sha256 of ``blind_sheet.jsonl`` and ``key.csv``
    (a packet and the form's ratings carry the first; the report quotes the second)."""

    root: Path
    sheet: pd.DataFrame
    key: pd.DataFrame
    sheet_sha256: str
    key_sha256: str
    _held: dict = field(default_factory=dict, repr=False, compare=False)  # the stages, once read

    @property
    def stages(self) -> list[dict]:
        """``sample.json``'s record, read the first time it is asked for (a command that needs no stages never
        opens it, so a damaged record stops only what reads it)."""
        if "stages" not in self._held:
            self._held["stages"] = sample_stages(self.root)
        return self._held["stages"]

    @property
    def ids(self) -> list[str]:
        """The sheet's blind ids, in its order."""
        return self.sheet.blind_id.astype(str).tolist()


def read_drawn(run_dir: str | Path, stages: list[dict] | None = None) -> Drawn:
    """The sample of ``run_dir``, each of its files read once (see the module's note); ``stages``: its record as the
    caller read it (by default read here). No sample, an incomplete one or a damaged one is one line."""
    layout = RunDir(run_dir)
    cal, key_path, jsonl = layout.calibration, layout.key, layout.sheet
    if not key_path.exists():
        if jsonl.exists():
            raise CalibrationError(f"{cal}: an incomplete sample (no key.csv: drawing it was interrupted); {REDRAW}")
        raise CalibrationError(f"{cal}: no blind sample yet (draw it: vocab sample)")
    try:
        sheet_bytes, key_bytes = jsonl.read_bytes(), key_path.read_bytes()
        rows = [json.loads(line) for line in sheet_bytes.decode("utf-8").splitlines() if line.strip()]
        # an imported dataset's groups are names ("12", "q-07"), a run's levels numbers; keep_default_na=False: an
        # item named "NA" or "null" is a name, not a gap
        dtype = {"blind_id": str, QUOTES: str} | ({"level": str, "stratum": str} if is_imported(run_dir) else {})
        key = pd.read_csv(io.BytesIO(key_bytes), dtype=dtype, keep_default_na=False)
        required = key.reindex(columns=KEY_REQUIRED)
        if (required.isna() | required.astype(str).eq("")).any(axis=None):
            raise ValueError("a key row without all its columns")
    except (
        OSError,
        UnicodeDecodeError,
        json.JSONDecodeError,
        RecursionError,
        ValueError,
        pd.errors.ParserError,
        pd.errors.EmptyDataError,
    ) as e:
        raise CalibrationError(f"{cal}: the sample is damaged ({type(e).__name__}); {REDRAW}") from None
    if not all(isinstance(r, dict) and "blind_id" in r for r in rows):
        raise CalibrationError(f"{jsonl}: a line is not a blind-sheet row; {REDRAW}")
    key_ids = key.blind_id.astype(str).tolist()
    if sorted(str(r["blind_id"]) for r in rows) != sorted(key_ids):
        raise CalibrationError(
            f"{cal}: blind_sheet.jsonl holds {len(rows)} rows and key.csv names {len(key_ids)}, "
            f"not the same: the sample is incomplete or damaged; {REDRAW}"
        )
    sheet = pd.DataFrame(rows, columns=list(rows[0]) if rows else SHEET_COLUMNS)
    if QUOTES not in key.columns:  # a key drawn before the column existed: from the sheet
        key[QUOTES] = flag_rows(sheet).reindex(key.blind_id).to_numpy()
    held = {} if stages is None else {"stages": stages}
    return Drawn(
        Path(run_dir), sheet, key, hashlib.sha256(sheet_bytes).hexdigest(), hashlib.sha256(key_bytes).hexdigest(), held
    )


def read_sheet(run_dir: str | Path) -> pd.DataFrame:
    """The blind sheet, once the sample is known whole (:func:`read_drawn`)."""
    return read_drawn(run_dir).sheet


def read_key(run_dir: str | Path) -> pd.DataFrame:
    """key.csv, with ``quotes_judge`` (from the blind sheet for a key drawn before the column existed)."""
    return read_drawn(run_dir).key


def sample_stages(run_dir: str | Path) -> list[dict]:
    """The stages ``calibration/sample.json`` records (none when there is no record); a record cut short or of
    another shape is one line."""
    path = RunDir(run_dir).sample_meta
    if not path.exists():
        return []
    stages = read_json_object(
        path, ("stages",), "a sample's record", "draw or import the sample again", CalibrationError
    )["stages"]
    if not isinstance(stages, list) or not all(isinstance(s, dict) for s in stages):
        raise CalibrationError(f"{path} is not a sample's record vocab wrote: draw or import the sample again")
    return stages


def sheet_sha256(run_dir: str | Path) -> str | None:
    """The sample's identity: the sha256 of its blind_sheet.jsonl (None without one). A packet and the form's
    ratings file carry it; an import checks it."""
    sheet = RunDir(run_dir).sheet
    return hashlib.sha256(sheet.read_bytes()).hexdigest() if sheet.exists() else None
