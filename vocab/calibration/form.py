"""The human blind rating form's state (``notebooks/rate.ipynb`` draws it): one row at a time, saved as it goes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from vocab.calibration.dataset import read_rubric
from vocab.calibration.raters import validate_ratings
from vocab.calibration.sample import CalibrationError, read_sheet
from vocab.rubric import VERDICTS

# --- the human rating form's state -------------------------------------------------------------------------


class HumanForm:
    """One blind row at a time; every saved row is appended at once, so the form resumes where it stopped.

    Rows are appended to ``calibration/rater_<rater>.jsonl`` (the same format as the LLM rater's answers);
    when the last row is saved, ``ratings_<rater>.csv`` is written and validated like any ratings file.
    """

    def __init__(self, run_dir: str | Path, rater: str = "human"):
        from vocab.records import read_jsonl

        self.run_dir, self.rater = Path(run_dir), rater
        self.sheet = read_sheet(run_dir)
        self.rubric = read_rubric(run_dir)  # what the judge graded: the 12 checks, or an imported judge's question
        self.path = self.run_dir / "calibration" / f"rater_{rater}.jsonl"
        self.done = {a["blind_id"]: a for a in read_jsonl(self.path)}

    @property
    def remaining(self) -> int:
        return sum(b not in self.done for b in self.sheet.blind_id)

    def next_row(self) -> dict | None:
        for row in self.sheet.to_dict(orient="records"):
            if row["blind_id"] not in self.done:
                return row
        return None

    def save(self, blind_id: str, checks: dict[str, str], note: str = "") -> None:
        from vocab.records import JsonlWriter

        if blind_id not in set(self.sheet.blind_id):
            raise CalibrationError(f"{blind_id!r} is not on the blind sheet")
        if blind_id in self.done:
            raise CalibrationError(f"{blind_id!r} is already rated")
        ids = self.rubric.ids
        bad = [
            c.id
            for c in self.rubric.criteria
            if checks.get(c.id) not in VERDICTS and not (c.optional and not checks.get(c.id))
        ]
        if bad:
            raise CalibrationError(f"checks {', '.join(bad)} need PASSED or FAILED")
        row = {
            "blind_id": blind_id,
            "rater": self.rater,
            "checks": {c: checks.get(c, "") for c in ids},
            "note": note,
        }
        w = JsonlWriter(self.path)
        w.write(row)
        w.close()
        self.done[blind_id] = row
        if self.remaining == 0:
            table = pd.DataFrame(
                [
                    {
                        "blind_id": b,
                        **{c.column: self.done[b]["checks"][c.id] for c in self.rubric.criteria},
                        "note": self.done[b].get("note", ""),
                    }
                    for b in self.sheet.blind_id
                ]
            )
            validate_ratings(table, list(self.sheet.blind_id), rubric=self.rubric)
            table.to_csv(self.run_dir / "calibration" / f"ratings_{self.rater}.csv", index=False)
