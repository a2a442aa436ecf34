"""A pairwise dataset's audit: per cell the judge's raw shares of A, B and tie beside the shares people's labels
correct them to, and the win rate of B (ties half; ties dropped beside it), each with its interval
(:mod:`vocab.stats.pairwise`, each cell on its own stream); the judge's swap inconsistency and first-position
preference where both orders are logged. ``vocab audit DIR`` prints it, ``vocab audit DIR --json`` as one object."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import betaincinv

from vocab import stats
from vocab.datasets.errors import CalibrationError
from vocab.datasets.pairwise import Cell, PairwiseDataset, load_pairwise, pile_counts
from vocab.stats.pairwise import PILES, PairPiles, pairwise_intervals

PEOPLE = "people"  # several people's labels pooled: a row's B and tie values are the shares of them who said so
TIE_RULES = ("half", "dropped")  # a tie counts half a win (the default), or ties are left out of the win rate
TIE_RULE_TEXT = "a tie counts half a win (ties dropped: wins among the items not tied)"


def _values(labels: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row of ``labels`` (one column a person; empty: not labelled): the share saying B, saying tie, and
    whether anyone labelled it."""
    said = labels.ne("")
    n = said.sum(axis=1).to_numpy(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        b = labels.eq("b").sum(axis=1).to_numpy(float) / n
        t = labels.eq("tie").sum(axis=1).to_numpy(float) / n
    return b, t, n > 0


def cell_piles(cell: Cell, labels: pd.DataFrame, ties: bool) -> PairPiles:
    """One cell's three piles with ``labels`` (the rater's columns, indexed as the dataset's items)."""
    b, t, some = _values(labels.loc[cell.items.index])
    bs, ts = [], []
    for verdict in PILES:  # the piles are named by the judge's verdict
        keep = (cell.items.verdict.to_numpy() == verdict) & some
        bs.append(b[keep])
        ts.append(t[keep])
    return PairPiles.make(bs, ts, [np.ones(len(x)) for x in bs], pile_counts(cell), ties)


@dataclass(frozen=True)
class Share:
    estimate: float | None
    ci_low: float | None
    ci_high: float | None

    def json(self) -> dict:
        return {"estimate": self.estimate, "ci_low": self.ci_low, "ci_high": self.ci_high}


@dataclass(frozen=True)
class CellResult:
    cell: Cell
    items: int
    labelled: tuple[int, int, int]  # labelled rows in the B, A and tie piles
    raw: dict[str, float]  # the judge's shares: a, b, tie
    corrected: dict[str, Share]
    win_raw: float
    win: Share
    win_dropped_raw: float | None
    win_dropped: Share

    def json(self, ties: str = "half") -> dict:
        raw, est = (self.win_raw, self.win) if ties == "half" else (self.win_dropped_raw, self.win_dropped)
        return {
            "a": self.cell.a,
            "b": self.cell.b,
            "judge": self.cell.judge,
            "items": self.items,
            "raw": self.raw,
            "corrected": {k: v.json() for k, v in self.corrected.items()},
            "win_rate_b": {"raw": raw, **est.json()},
        }


@dataclass(frozen=True)
class Census:
    """A share counted over these items (a census), with an exact (Clopper–Pearson) interval for the judge's
    rate on items like them."""

    estimate: float
    ci_low: float
    ci_high: float
    items: int

    def json(self) -> dict:
        return {"estimate": self.estimate, "ci_low": self.ci_low, "ci_high": self.ci_high, "items": self.items}


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact equal-tailed interval of k successes in n trials."""
    alpha = (1 - confidence) / 2
    lo = 0.0 if k == 0 else float(betaincinv(k, n - k + 1, alpha))
    hi = 1.0 if k == n else float(betaincinv(k + 1, n - k, 1 - alpha))
    return lo, hi


def _census(k: int, n: int) -> Census | None:
    return None if n == 0 else Census(k / n, *clopper_pearson(k, n), n)


def judge_faults(items: pd.DataFrame) -> tuple[Census | None, Census | None]:
    """Over the items judged in both orders: the swap inconsistency (the two verdicts disagree) and, among the
    inconsistent items, the first-position preference (the answer shown first won both times). None without such
    items."""
    both = items[(items.verdict != "") & (items.verdict_swapped != "")]
    differ = both[both.verdict != both.verdict_swapped]
    other = differ["first"].map({"a": "b", "b": "a"})
    first_won = (differ.verdict == differ["first"]) & (differ.verdict_swapped == other)
    return _census(len(differ), len(both)), _census(int(first_won.sum()), len(differ))


def _share(r, name: str) -> Share:
    x = getattr(r, name)
    vals = [float(v[0]) for v in (x.estimate, x.low, x.high)]
    return Share(*[None if np.isnan(v) else v for v in vals])


@dataclass(frozen=True)
class PairwiseAudit:
    data: PairwiseDataset
    rater: str
    cells: list[CellResult]
    swap_inconsistency: Census | None
    first_position: Census | None
    left_out: int  # labelled items without a verdict (in no pile)

    def json(self, ties: str = "half") -> dict:
        """`vocab audit --json` (issue #79's object); ``ties``: the win rate's tie rule (:data:`TIE_RULES`)."""
        if ties not in TIE_RULES:
            raise CalibrationError(f"unknown tie rule {ties!r} (known: {', '.join(TIE_RULES)})")
        return {
            "kind": "pairwise",
            "rater": self.rater,
            "ties": ties,
            "cells": [c.json(ties) for c in self.cells],
            # systems against the field: simulated and short of the bar at 5 labels a pile (benchmarks/results/
            # pairwise_field.json), so not printed; rank sets: not yet (issue #79)
            "systems": [],
            "judge": {
                "swap_inconsistency": self.swap_inconsistency and self.swap_inconsistency.json(),
                "first_position": self.first_position and self.first_position.json(),
            },
        }

    def lines(self) -> list[str]:
        def pct(x):
            return "—" if x is None else f"{100 * x:.1f} %"

        def ci(s: Share):
            if s.estimate is None:
                return "undefined: a pile holding items has no label"
            return f"{pct(s.estimate)} ({pct(s.ci_low)}–{pct(s.ci_high)})"

        out = [
            f"pairwise dataset {self.data.dir}: corrected against {self.rater}'s labels (finite population; "
            f"tie rule: {TIE_RULE_TEXT}; 95 % intervals)"
        ]
        for c in self.cells:
            raw = " / ".join(f"{k} {pct(c.raw[k])}" for k in ("a", "b", "tie"))
            cor = " / ".join(f"{k} {ci(c.corrected[k])}" for k in ("a", "b", "tie"))
            out.append(f"{c.cell.name}: {c.items} items, labelled {'/'.join(map(str, c.labelled))} (B/A/tie piles)")
            out.append(f"  the judge's shares {raw}; corrected {cor}")
            out.append(
                f"  win rate of {c.cell.b}: the judge's {pct(c.win_raw)}, corrected {ci(c.win)}; "
                f"ties dropped: the judge's {pct(c.win_dropped_raw)}, corrected {ci(c.win_dropped)}"
            )
        for name, f in (
            ("swap inconsistency", self.swap_inconsistency),
            ("first-position preference", self.first_position),
        ):
            if f is not None:
                what = "items judged in both orders" if name == "swap inconsistency" else "inconsistent items"
                out.append(
                    f"the judge's {name}: {pct(f.estimate)} of {f.items} {what} "
                    f"({pct(f.ci_low)}–{pct(f.ci_high)} for items like them, exact)"
                )
        if self.left_out:
            out.append(f"{self.left_out} labelled items had no verdict from the judge: in no pile, left out")
        return out


def pairwise_audit(
    path: str | Path, rater: str | None = None, *, seed: int = 0, n_draws: int = stats.N_DRAWS, data=None
) -> PairwiseAudit:
    """The audit of the pairwise dataset in ``path`` against ``rater``'s labels (default: the one person, or
    :data:`PEOPLE` pooled when several labelled)."""
    data = data or load_pairwise(path)
    people = data.people
    if not people:
        raise CalibrationError(f"{path}: no people's labels yet (label:NAME columns in the table)")
    rater = rater or (people[0] if len(people) == 1 else PEOPLE)
    cols = [f"label:{p}" for p in people] if rater == PEOPLE else [data.labels(rater).name]
    labels = data.items[cols]
    results = []
    for cell in data.cells():
        piles = cell_piles(cell, labels, data.ties)
        # from the seed and the cell's own labels and piles, never the rater's or the cell's name (as θ's)
        content = (piles.totals, piles.ties, *piles.b, *piles.tie, *piles.weights)
        rng, v_rng = stats.data_stream(seed, "pairwise", *content), stats.randomisation("fiducial", *content)
        r = pairwise_intervals(piles, n_draws=n_draws, rng=rng, v_rng=v_rng)
        raw = {k: float(r.raw[k][0]) for k in ("a", "b", "tie")}
        dropped = float(r.raw["win_rate_b_dropped"][0])
        results.append(
            CellResult(
                cell,
                len(cell.items),
                tuple(int(x) for x in piles.rows()[0]),
                raw,
                {k: _share(r, k) for k in ("a", "b", "tie")},
                float(r.raw["win_rate_b"][0]),
                _share(r, "win_rate_b"),
                None if np.isnan(dropped) else dropped,
                _share(r, "win_rate_b_dropped"),
            )
        )
    swap, first = judge_faults(data.items)
    unscored = data.items.verdict == ""
    left_out = int((labels[unscored] != "").any(axis=1).sum())
    return PairwiseAudit(data, rater, results, swap, first, left_out)
