"""The files of a run or dataset directory, named in one place: every module asks :class:`RunDir` for a path
instead of spelling it (``calibration/key.csv`` is ``RunDir(d).key``). It only names paths: it reads and writes
nothing, and depends on no other module of vocab.

    <dir>/
      manifest.json, results_<cell>.jsonl, levels.jsonl, errors.jsonl       a Vocabscapes run (vocab.records)
      dataset.json, items.parquet (or items/ parts; judgments.jsonl before 2026-12)   an imported dataset
      pairwise.json, pairwise_items.csv        a pairwise dataset (A, B or tie; its people's labels in label:NAME)
      calibration/
        key.csv, blind_sheet.csv, blind_sheet.jsonl, sample.json, earlier_sheets.txt   the blind sample
        ratings_<rater>.csv, history/                                  each rater's ratings, the earlier hand-ins
        rater_<model>.jsonl, rater_<model>_errors.jsonl                 an LLM rater's log and its failed calls
      analysis/        the notebooks' tables (03 and 04 write them; the library reads none of them)
      packets/<rater>/, packets/<rater>.zip, packets/<rater>-label-studio/   what a human rater is handed
      report/          report.html, report.md, report.png, corrected.csv
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunDir:
    """The paths of one run or dataset directory."""

    root: Path

    def __init__(self, root: str | Path):
        object.__setattr__(self, "root", Path(root))

    # --- the blind sample -------------------------------------------------------------------------------------

    @property
    def calibration(self) -> Path:
        return self.root / "calibration"

    @property
    def key(self) -> Path:
        return self.calibration / "key.csv"

    @property
    def sheet(self) -> Path:
        """The blind sheet as JSON Lines (what the raters' tools read)."""
        return self.calibration / "blind_sheet.jsonl"

    @property
    def sheet_csv(self) -> Path:
        return self.calibration / "blind_sheet.csv"

    @property
    def sample_meta(self) -> Path:
        return self.calibration / "sample.json"

    @property
    def earlier_sheets(self) -> Path:
        return self.calibration / "earlier_sheets.txt"

    # --- the raters --------------------------------------------------------------------------------------------

    def ratings(self, rater: str) -> Path:
        return self.calibration / f"ratings_{rater}.csv"

    def ratings_files(self) -> list[Path]:
        """Every rater's ratings file (the script's among them), sorted by name."""
        return sorted(self.calibration.glob("ratings_*.csv"))

    @staticmethod
    def rater_of(path: Path) -> str:
        """The rater a ratings file is of: ``ratings_ann.csv`` → ``ann``."""
        return path.stem.removeprefix("ratings_")

    @property
    def script_ratings(self) -> Path:
        return self.ratings("script")

    @property
    def history(self) -> Path:
        return self.calibration / "history"

    def rater_log(self, model: str) -> Path:
        return self.calibration / f"rater_{model}.jsonl"

    def rater_errors(self, model: str) -> Path:
        return self.calibration / f"rater_{model}_errors.jsonl"

    def rater_logs(self) -> list[Path]:
        """Every LLM rater's log and error log."""
        return sorted(self.calibration.glob("rater_*.jsonl"))

    # --- a pairwise dataset (vocab.datasets.pairwise) -------------------------------------------------------------

    @property
    def pairwise_meta(self) -> Path:
        """What a pairwise import holds; written last, so its arrival marks a complete import."""
        return self.root / "pairwise.json"

    @property
    def pairwise_items(self) -> Path:
        return self.root / "pairwise_items.csv"

    # --- what comes out -----------------------------------------------------------------------------------------

    @property
    def analysis(self) -> Path:
        return self.root / "analysis"

    @property
    def figures(self) -> Path:
        """A run's own figures (06's, when the run is not the committed reference)."""
        return self.root / "figures"

    @property
    def packets(self) -> Path:
        return self.root / "packets"

    def packet(self, rater: str) -> Path:
        return self.packets / rater

    def label_studio(self, rater: str) -> Path:
        return self.packets / f"{rater}-label-studio"

    @property
    def report(self) -> Path:
        return self.root / "report"
