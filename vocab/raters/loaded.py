"""What one command reads of a run or dataset, read once and handed on (:func:`load`): the dataset
(:mod:`vocab.datasets`), then its drawn sample (:mod:`vocab.sampling.drawn`) and each rater's ratings, each read the
first time a step asks for it (so a command refuses for the first thing missing, in the order it needs them). The
audit, the report, the gate and the planner take one, so no step re-opens a file by path that the step before it
read."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from vocab.datasets.dataset import Dataset, load_dataset
from vocab.layout import RunDir
from vocab.raters.raters import read_ratings
from vocab.sampling.drawn import Drawn, read_drawn, sample_stages


@dataclass(frozen=True)
class Loaded:
    """A run's or dataset's calibration state as one command reads it: ``data`` (the judged items), then, the first
    time a step asks, ``drawn`` (the sample) and each rater's :meth:`ratings`; each read once."""

    dir: Path
    data: Dataset
    _held: dict = field(default_factory=dict, repr=False, compare=False)  # what has been read so far, by name

    @property
    def drawn(self) -> Drawn:
        """The sample (:func:`vocab.sampling.drawn.read_drawn`), read the first time it is asked for."""
        if "drawn" not in self._held:
            self._held["drawn"] = read_drawn(self.dir, stages=self._held.get("stages"))
        return self._held["drawn"]

    def ratings(self, rater: str) -> pd.DataFrame:
        """``rater``'s ratings (:func:`vocab.raters.raters.read_ratings`), their file read once a command."""
        if ("ratings", rater) not in self._held:
            self._held["ratings", rater] = read_ratings(
                self.dir, rater, sheet_ids=self.drawn.ids, rubric=self.data.rubric
            )
        return self._held["ratings", rater]

    def has(self, rater: str) -> bool:
        """Whether ``rater`` has a ratings file here."""
        return RunDir(self.dir).ratings(rater).exists()

    @property
    def stages(self) -> list[dict]:
        """The sample's record (:func:`vocab.sampling.drawn.sample_stages`), read once, without the sample itself
        when that has not been asked for."""
        if "drawn" in self._held:
            return self._held["drawn"].stages
        if "stages" not in self._held:
            self._held["stages"] = sample_stages(self.dir)
        return self._held["stages"]


def load(run_dir: str | Path, *, data: Dataset | None = None, drawn: Drawn | None = None) -> Loaded:
    """``run_dir`` read for the calibration chain: its dataset now (``data`` when the caller has read it), the rest
    when first asked for (``drawn``: the sample as the caller read it, when nothing has been written since)."""
    return Loaded(Path(run_dir), data or load_dataset(run_dir), {"drawn": drawn} if drawn is not None else {})
