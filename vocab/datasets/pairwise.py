"""A pairwise dataset: items on which a judge compared two systems' answers and said A, B or tie
(`vocab import table` of a table with ``system_a``/``system_b`` columns, :mod:`vocab.imports.pairwise_table`).

Its directory holds ``pairwise_items.csv`` (one row an item, in each cell's canonical orientation) and
``pairwise.json`` (what the import read; written last). A **cell** is one pairing of two systems under one judge:
its A is the system whose name sorts first, its B the other; an item logged the other way round had its systems,
answers, verdicts and labels flipped with it, and ``first`` says which of the cell's sides was shown first when the
judge gave ``verdict``. Verdicts and labels are ``a``, ``b``, ``tie`` (empty: no verdict / not labelled);
``verdict_swapped`` is the judge's verdict with the order of the answers reversed, named by system like ``verdict``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from vocab.datasets.errors import CalibrationError
from vocab.layout import RunDir

KIND = "pairwise"
CLASSES = ("a", "b", "tie")
LABEL_PREFIX = "label:"
ITEM_COLUMNS = ("id", "cell", "system_a", "system_b", "judge", "group", "first", "verdict", "verdict_swapped")


def is_pairwise(path: str | Path) -> bool:
    """Whether ``path`` is a directory holding a pairwise dataset."""
    return Path(path).is_dir() and RunDir(path).pairwise_meta.is_file()


def cell_name(a: str, b: str, judge: str) -> str:
    return f"{a} vs {b} ({judge})"


@dataclass(frozen=True)
class Cell:
    """One pairing under one judge: its systems, judge, the judge's three piles' sizes and the rows of each."""

    name: str
    a: str
    b: str
    judge: str
    items: pd.DataFrame  # the cell's rows with a verdict


@dataclass(frozen=True)
class PairwiseDataset:
    dir: Path
    meta: dict
    items: pd.DataFrame  # every item, text columns ("" empty)

    @property
    def people(self) -> list[str]:
        """The raters whose labels the table held (``label:NAME`` columns), sorted."""
        return sorted(c.removeprefix(LABEL_PREFIX) for c in self.items.columns if c.startswith(LABEL_PREFIX))

    @property
    def ties(self) -> bool:
        """Whether tie is a class: the judge said tie, or someone labelled one (else two classes: θ)."""
        return bool(self.meta["ties"])

    def cells(self) -> list[Cell]:
        scored = self.items[self.items.verdict != ""]
        out = []
        for name, g in scored.groupby("cell", sort=True):
            first = g.iloc[0]
            out.append(Cell(str(name), first.system_a, first.system_b, first.judge, g))
        return out

    def labels(self, rater: str) -> pd.Series:
        """A rater's labels by row (``a``, ``b``, ``tie``; empty: not labelled)."""
        col = LABEL_PREFIX + rater
        if col not in self.items.columns:
            raise CalibrationError(f"{self.dir}: no labels by {rater!r} (known: {', '.join(self.people) or 'none'})")
        return self.items[col]


def load_pairwise(path: str | Path) -> PairwiseDataset:
    """The pairwise dataset in ``path``; one line when it is not one."""
    d = RunDir(path)
    if not is_pairwise(path):
        raise CalibrationError(f"{path}: no pairwise dataset ({d.pairwise_meta.name} missing)")
    meta = json.loads(d.pairwise_meta.read_text())
    items = pd.read_csv(d.pairwise_items, dtype=str, keep_default_na=False)
    return PairwiseDataset(Path(path), meta, items)


def pile_counts(cell: Cell) -> np.ndarray:
    """The judge's items in its B, A and tie piles (the order of :data:`vocab.stats.pairwise.PILES`)."""
    v = cell.items.verdict
    return np.array([(v == "b").sum(), (v == "a").sum(), (v == "tie").sum()], dtype=float)
