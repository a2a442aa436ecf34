"""Slices are cells too (`vocab compare DIR --by COLUMN`, `vocab audit DIR --by COLUMN`): each cell's items split
by a column the dataset kept (a table's own column, an Inspect sample's metadata, ...; on a study run its ``tier``
or :data:`TIER_BAND`; the split is :mod:`vocab.datasets.slicing`'s), and each slice corrected as a cell of its
own, with its theta, q1 and q0, the differences between a cell's slices and the rank sets of the slices.

The sample was drawn per cell and pile, not per slice: the rows of a pile that fall into a slice are a simple random
sample of that slice's part of the pile (given how many fell there), so each slice's correction is the cell's own,
post-stratified — its p the judge's pass share over the slice's items, each of its piles the finite set of the
slice's items in that pile. A slice must hold whole groups (a group's items share its slice), because the failed
pile samples groups. A slice whose pile holds fewer than :data:`MIN_LABELS` rated rows (and is not rated whole)
gets no number: it says how many more rows that pile wants.

Within a cell the slices' rates carry simultaneous intervals (family-wise 95 % over the cell's slices), and so do
the differences between its slices (over every pair), from the slices' joint draws
(:func:`vocab.stats.differences.simultaneous_bands`, :func:`~vocab.stats.differences.rank_sets`). Across cells,
within one slice, each pair of cells is compared as `vocab compare` compares two cells. Every slice draws from its own
stream: the seed, the interval and the slice's own data (never the rater's or the slice's name). Their coverage
is measured in :func:`vocab.coverage.slices.slice_coverage` (``benchmarks/results/slices.json``). What the commands
print of them is :mod:`vocab.estimates.slices_text`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from vocab import reprs, stats
from vocab.datasets.slicing import MAX_SLICES, TIER_BAND, Sliced, check_column, natural, slice_data
from vocab.estimates.compare import CellDraws, cell_draws, compare_cells, family_draws
from vocab.estimates.correct import corrected
from vocab.estimates.slices_text import lines
from vocab.sampling.sample import CalibrationError
from vocab.sampling.strata import check_slicing
from vocab.stats.differences import RESOLVED_TOLERANCE, pairs_of, rank_sets, simultaneous_bands

MIN_LABELS = 3  # rated rows a slice's pile needs before it gets a number (or the whole pile rated)
SLICE_COLUMNS = [
    "cell",
    "slice",
    "items",
    "passed",
    "failed",
    "rated_passed",
    "rated_failed",
    "status",
    "wanted_passed",
    "wanted_failed",
]
RATE_COLUMNS = [
    "cell",
    "slice",
    "p",
    "theta",
    "ci_low",
    "ci_high",
    "sim_low",
    "sim_high",
    "q1",
    "q0",
    "rank_low",
    "rank_high",
]
DIFFERENCE_COLUMNS = ["cell", "a", "b", "difference", "ci_low", "ci_high", "raw_difference", "resolved"]


__all__ = [
    "MAX_SLICES",
    "MIN_LABELS",
    "TIER_BAND",
    "SliceEstimates",
    "Sliced",
    "check_column",
    "lines",
    "slice_data",
    "slice_estimates",
    "slices_dir",
    "within_cell",
]


# --- the estimates ------------------------------------------------------------------------------------------------


def label_counts(s: Sliced, rated: pd.Index) -> pd.DataFrame:
    """Per slice cell (:data:`SLICE_COLUMNS`): its items and piles, the rows rated in each pile, whether it gets a
    number (``status`` "ok" or "too few labels") and, when it does not, the rows its piles want more."""
    k = s.key[s.key.blind_id.isin(rated)]
    rp = k[k.pile == "passed"].groupby("cell").size()
    rf = k[k.pile == "failed"].groupby("cell").size()
    rows = []
    for name, c in s.counts.iterrows():
        a, b = int(rp.get(name, 0)), int(rf.get(name, 0))
        # a pile it needs: the passed one unless nothing passed, the failed one unless nothing failed
        want_a = 0 if c.passed == 0 else max(0, min(MIN_LABELS, int(c.passed)) - a)
        want_b = 0 if c.failed == 0 else max(0, min(MIN_LABELS, int(c.failed_groups)) - b)
        ok = want_a == 0 and want_b == 0 and a + b > 0
        rows.append(
            {
                "cell": c.cell,
                "slice": c.slice,
                "items": int(c.attempts),
                "passed": int(c.passed),
                "failed": int(c.failed),
                "rated_passed": a,
                "rated_failed": b,
                "status": "ok" if ok else "too few labels",
                "wanted_passed": want_a,
                "wanted_failed": want_b,
                "name": name,
            }
        )
    frame = pd.DataFrame(rows).set_index("name")
    order = sorted(frame.index, key=lambda n: (frame.cell[n], natural(frame.slice[n])))
    return frame.loc[order]


@dataclass(frozen=True)
class SliceEstimates:
    """One rater's slices: the labels per slice, the rates with marginal and simultaneous intervals and rank sets
    within each cell, the differences between a cell's slices, and (per slice) the pairs of cells."""

    rater: str
    interval: str
    column: str
    labels: pd.DataFrame  # SLICE_COLUMNS
    rates: pd.DataFrame  # RATE_COLUMNS
    differences: pd.DataFrame  # DIFFERENCE_COLUMNS
    across: pd.DataFrame  # vocab.estimates.compare's pair rows, with the slice
    min_labels: int = MIN_LABELS  # the rated rows a slice's pile needed for a number (or the whole pile rated)

    def __repr__(self) -> str:
        return reprs.text(lines(self), ": .rates, .differences and .across hold them all")

    def _repr_html_(self) -> str:
        out = lines(self)
        return reprs.summary_html(out[0], out[1:])

    def as_dict(self) -> dict:
        def records(frame):
            return [
                {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in r.items()}
                for r in frame.to_dict("records")
            ]

        return {
            "rater": self.rater,
            "interval": self.interval,
            "by": self.column,
            "slices": records(self.labels.reset_index(drop=True)),
            "rates": records(self.rates),
            "differences": records(self.differences),
            "across": records(self.across),
        }


def within_cell(draws: list[CellDraws], confidence: float = 0.95):
    """A cell's slices (their draws, in slice order): per slice (sim_low, sim_high, rank_low, rank_high), the
    rates' bands simultaneous over the slices; per pair (i, j) of :func:`~vocab.stats.differences.pairs_of`, the
    difference theta_j − theta_i with its band simultaneous over the pairs. The function the simulator measures."""
    est = np.array([[d.theta for d in draws]])
    joint = np.stack([d.theta_draws for d in draws])[None]
    lo, hi, _ = simultaneous_bands(est, joint, confidence)
    r = rank_sets(est, joint, confidence)
    return lo[0], hi[0], r.low[0], r.high[0], r.pair_low[0], r.pair_high[0]


def slice_estimates(
    s: Sliced,
    verdicts: pd.Series,
    *,
    rater: str,
    interval: str = stats.DEFAULT_INTERVAL,
    n_boot: int = stats.N_DRAWS,
    seed: int = 0,
    population: str = stats.DEFAULT_POPULATION,
    confidence: float = 0.95,
) -> SliceEstimates:
    """Every slice of ``s`` the rater's ``verdicts`` give enough labels, corrected as a cell (its draws from the
    stream of the seed, ``interval`` and the slice's own data)."""
    labels = label_counts(s, verdicts.index)
    ok = labels.index[labels.status == "ok"]
    key = s.key[s.key.cell.isin(ok)]
    draws = cell_draws(
        s.counts, key, verdicts, rater=rater, interval=interval, n_boot=n_boot, seed=seed, population=population
    )
    rates, diffs = [], []
    for cell in sorted(set(labels.cell)):
        names = [n for n in labels.index[labels.cell == cell] if n in draws]
        if not names:
            continue
        own, mine = {n: draws[n] for n in names}, key[key.cell.isin(names)]
        # the bands over the cell's slices and their pairs rest on enough draws (:func:`family_draws`)
        ranked = family_draws(
            own,
            max(len(names), len(pairs_of(len(names)))),
            lambda m, ks=mine: cell_draws(
                s.counts,
                ks,
                verdicts,
                rater=rater,
                interval=interval,
                n_boot=m,
                seed=seed,
                population=population,
                stream="ranks",
            ),
            confidence,
        )
        d = [draws[n] for n in names]
        lo, hi, rlo, rhi, plo, phi = within_cell([ranked[n] for n in names], confidence)
        for i, n in enumerate(names):
            rates.append(
                {
                    "cell": cell,
                    "slice": labels.slice[n],
                    "p": d[i].p,
                    "theta": d[i].theta,
                    "ci_low": d[i].ci[0],
                    "ci_high": d[i].ci[1],
                    "sim_low": float(lo[i]),
                    "sim_high": float(hi[i]),
                    "q1": d[i].q1,
                    "q0": d[i].q0,
                    "rank_low": int(rlo[i]),
                    "rank_high": int(rhi[i]),
                }
            )
        for m, (i, j) in enumerate(pairs_of(len(names))):
            lo_, hi_ = float(plo[m]), float(phi[m])
            diffs.append(
                {
                    "cell": cell,
                    "a": labels.slice[names[i]],
                    "b": labels.slice[names[j]],
                    "difference": d[j].theta - d[i].theta,
                    "ci_low": lo_,
                    "ci_high": hi_,
                    "raw_difference": d[j].p - d[i].p,
                    "resolved": bool(lo_ > RESOLVED_TOLERANCE or hi_ < -RESOLVED_TOLERANCE),
                }
            )
    across = []
    for value in sorted(set(labels.slice), key=natural):
        names = sorted(n for n in labels.index[labels.slice == value] if n in draws)
        for i, j in pairs_of(len(names)):
            r = compare_cells(draws[names[i]], draws[names[j]], confidence)
            across.append({"slice": value, **r, "a": labels.cell[names[i]], "b": labels.cell[names[j]]})
    return SliceEstimates(
        rater,
        interval,
        s.column,
        labels.reset_index(drop=True),
        pd.DataFrame(rates, columns=RATE_COLUMNS),
        pd.DataFrame(diffs, columns=DIFFERENCE_COLUMNS),
        pd.DataFrame(across),
    )


def slices_dir(
    run_dir,
    column: str,
    *,
    rater: str | None = None,
    seed: int = 0,
    n_boot: int = stats.N_DRAWS,
    population: str = stats.DEFAULT_POPULATION,
) -> SliceEstimates:
    """`vocab compare DIR --by COLUMN`: the slices of one rater's correction (by default the report's lead)."""
    from pathlib import Path

    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise CalibrationError(f"{run_dir}: not a directory (a run or an imported dataset)")
    c = corrected(run_dir, None, seed=seed, n_boot=n_boot, population=population)
    name = c.rater(rater, run_dir)

    check_slicing(run_dir, column)
    s = slice_data(c.data, c.key, column, run_dir)
    return slice_estimates(s, c.passes[name], rater=name, seed=seed, n_boot=n_boot, population=population)
