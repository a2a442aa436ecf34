"""A rater's file as it is read: a CSV (the form's ``ratings.csv``, one written by hand, a Label Studio CSV export) or
a Label Studio JSON export, as strings, within bounds; what is wrong with it one line naming it."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd

from vocab.datasets.errors import CalibrationError
from vocab.files import check_csv_shape, read_bytes
from vocab.raters.label_studio import parse_label_studio_export

MAX_RATINGS_BYTES = 16 * 2**20  # a rating file past this is refused before it is read (a sheet of 62 rows is 6 KB)


MAX_RATINGS_COLUMNS = 1_000  # the form's file has 17, a Label Studio CSV export some 30
MAX_RATINGS_CELLS = 2_000_000


def read_ratings_file(path: str | Path) -> pd.DataFrame:
    """A rater's CSV (or a Label Studio JSON export of their packet's project) as strings, or one line saying why
    not: missing, not a regular file, too large, too wide, not UTF-8, not a table."""

    path = Path(path)
    data = read_bytes(path, MAX_RATINGS_BYTES, "ratings file", CalibrationError)
    if data.lstrip()[:1] in (b"[", b"{"):  # a Label Studio JSON export (a CSV starts with its header)
        return parse_label_studio_export(data, path)
    check_csv_shape(data, path, MAX_RATINGS_COLUMNS, MAX_RATINGS_CELLS, CalibrationError)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise CalibrationError(f"{path}: not UTF-8 text (byte {e.start}); save the sheet as UTF-8 CSV") from None
    if not text.strip():
        raise CalibrationError(f"{path}: empty: no rated rows")
    try:
        df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as e:
        raise CalibrationError(f"{path}: cannot read ratings ({' '.join(str(e).split())[:160]})") from None
    if not len(df) and "blind_id" in df.columns:  # a ratings file's header, and nothing under it
        raise CalibrationError(f"{path}: its header and no rated rows: hand in the file the form saved")
    header = [str(c) for c in df.columns]
    again = next((i for i, row in enumerate(df.itertuples(index=False)) if list(row) == header), None)
    if again is not None:  # a row that is the header again: two files pasted together, or one pasted onto itself
        raise CalibrationError(
            f"{path}: row {again + 1} repeats the header (two files pasted into one?): hand in one file, its header "
            "once"
        )
    # Label Studio's CSV export names the packet's rater and sample under its data fields' names: read as the form's
    return df.rename(columns={f"vocab_{c}": c for c in ("rater", "sample_sha256") if c not in df.columns})
