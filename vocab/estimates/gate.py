"""`vocab gate DIR`: a verdict a CI job can act on. For each cell, the lower end of the corrected rate's 95 %
interval (and of the judge's sensitivity q1 and specificity q0, as the blind rater measures them) against the
thresholds given, and the share of units lost before a verdict against a ceiling. The numbers are the report's
(:func:`vocab.estimates.correct.corrected`, same seed and draws), so a gate and the report it stands beside
never disagree. Exit 0 when every check of every cell holds, 1 when one does not, 2 on bad input."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from vocab import stats
from vocab.datasets.errors import CalibrationError
from vocab.datasets.items import cell_label
from vocab.estimates.compare_dir import compare_dir, dataset_cells
from vocab.estimates.compare_text import unrated_text
from vocab.estimates.correct import corrected
from vocab.estimates.pooled import pooled_results
from vocab.estimates.stopping import stopping
from vocab.sampling.labelled import labels_note


@dataclass(frozen=True)
class Check:
    name: str  # "rate", "q1", "q0" or "unscored"
    bound: float  # the threshold: a floor for the rate, q1 and q0, a ceiling for the unscored share
    value: float  # the interval's lower end (rate, q1, q0) or the lost share; NaN when undefined
    holds: bool
    why: str = ""  # why an undefined value has none, where that is known (an anytime-valid bound's reason)

    def text(self) -> str:
        what = {
            "rate": "rate's lower bound",
            "q1": "q1's lower bound",
            "q0": "q0's lower bound",
            "unscored": "unscored share",
            "rate_anytime": "rate's anytime-valid lower bound",
            "rate_pooled": "the one rate's lower bound (judges on the same outputs, labels pooled)",
        }
        what = what[self.name]
        sign = "≤" if self.name == "unscored" else "≥"
        shown = "undefined" if math.isnan(self.value) else f"{self.value:.3f}"
        if math.isnan(self.value) and self.why:
            shown += f" ({self.why})"
        return f"{what} {shown} {sign} {self.bound:g}: {'holds' if self.holds else 'does not hold'}"


@dataclass(frozen=True)
class CellGate:
    cell: str
    rater: str
    checks: tuple[Check, ...]
    ratings: str = "blind ratings"  # or "labels" (people's labels found in the source, not drawn by vocab)

    @property
    def holds(self) -> bool:
        return all(c.holds for c in self.checks)

    def line(self) -> str:
        system, _, judge = self.cell.partition("__")
        head = f"{'PASS' if self.holds else 'FAIL'} {system} → {judge} ({self.rater}'s {self.ratings}): "
        return head + "; ".join(c.text() for c in self.checks)

    def as_dict(self) -> dict:
        """The line's fields in its own words: ``check``, the measured ``lower_bound`` (the ``unscored_share`` for the
        unscored check; None when undefined), the ``threshold`` it is held to, and whether it ``holds``."""
        checks = [
            {
                "check": c.name,
                "unscored_share" if c.name == "unscored" else "lower_bound": None if math.isnan(c.value) else c.value,
                "threshold": c.bound,
                "holds": c.holds,
                **({"why_undefined": c.why} if c.why and math.isnan(c.value) else {}),
            }
            for c in self.checks
        ]
        return {"cell": self.cell, "rater": self.rater, "holds": self.holds, "checks": checks}


def check_thresholds(**bounds: float | None) -> dict[str, float]:
    """The thresholds given, each a share in [0, 1]; at least one. One line on anything else."""
    given = {k: v for k, v in bounds.items() if v is not None}
    if not given:
        raise CalibrationError("give at least one threshold: --min-rate, --min-q1, --min-q0 or --max-unscored")
    for k, v in given.items():
        if not (isinstance(v, (int, float)) and 0 <= v <= 1):
            raise CalibrationError(f"--{k.replace('_', '-')} must be a share between 0 and 1, got {v!r}")
    return given


def lost_shares(data) -> dict[str, float]:
    """Per cell, the share of units lost before a verdict: a run's abandoned levels among its levels, an imported
    dataset's unscored items among its items."""
    lost = data.lost().set_index("cell").lost
    run = data.kind == "run"
    units = data.outcomes.groupby("cell").size() if run else data.cells.attempts + data.cells.unscored
    return {cell: float(lost.get(cell, 0) / n) if n else math.nan for cell, n in units.items()}


def gate(
    run_dir: str | Path,
    *,
    min_rate: float | None = None,
    min_q1: float | None = None,
    min_q0: float | None = None,
    max_unscored: float | None = None,
    rater: str | None = None,
    seed: int = 0,
    n_boot: int = stats.N_DRAWS,
    population: str = stats.DEFAULT_POPULATION,
    anytime: bool = False,
) -> list[CellGate]:
    """Each cell's checks against the thresholds given, read with ``rater``'s blind ratings (a variant of the
    report's table, e.g. ``ann`` or ``ann+script``; by default the report's lead rater). An undefined bound (a pile
    with no rated row) does not hold: the gate cannot vouch for what it could not measure. ``anytime``: the rate's
    floor is held by the confidence sequence's lower bound (:mod:`vocab.estimates.stopping`), so a gate run after
    every batch of ratings keeps its error rate however often it runs."""

    bounds = check_thresholds(min_rate=min_rate, min_q1=min_q1, min_q0=min_q0, max_unscored=max_unscored)
    if anytime and set(bounds) - {"min_rate", "max_unscored"}:
        raise CalibrationError("--anytime holds the rate's floor (--min-rate) only; q1 and q0 have no sequence yet")
    if anytime and "min_rate" not in bounds:
        raise CalibrationError("--anytime holds the rate's floor: give --min-rate")
    if anytime and population != stats.FINITE:
        raise CalibrationError("--anytime holds the finite population's rate (the default): leave out --population")
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise CalibrationError(f"{run_dir}: not a directory (a run or an imported dataset)")

    c = corrected(run_dir, None, seed=seed, n_boot=n_boot, population=population)
    name = c.rater(rater, run_dir)
    # every cell of the dataset: one the rater's rows cannot correct (a pile without a rated row, every unit lost)
    # has no row in the table, and its bounds are undefined: they do not hold
    table = c.table[c.table.rater == name].set_index("cell")
    if anytime:  # each cell's sequence, or why it has none (pooled labels, a pile drawn a group at a time, ...)
        seq = {s.cell: s for s in stopping(c, 0.5, name)}
    shares = lost_shares(c.data)
    # judges on the same outputs have one rate: their floor is held by it, the rate the report prints once
    pooled = pooled_results(c, name) if "min_rate" in bounds and not anytime else {}
    floors = (("min_rate", "ci_low", "rate"), ("min_q1", "q1_low", "q1"), ("min_q0", "q0_low", "q0"))
    kind = "labels" if labels_note(run_dir, c.loaded.stages) else "blind ratings"
    out = []
    for cell in dataset_cells(c.data):
        checks = []
        for key, column, check in floors:
            if key in bounds:
                v = float(table.loc[cell, column]) if cell in table.index else math.nan
                if check == "rate" and cell in pooled:
                    check, v = "rate_pooled", pooled[cell].ci_low
                why = ""
                if anytime and check == "rate":
                    got = seq.get(cell)
                    check, v = "rate_anytime", got.low if got is not None else math.nan
                    why = got.why_none if got is not None else "no item of this cell has a verdict"
                    if not why and math.isnan(v):  # the sequence ruled out every rate (a chance of at most 5 %)
                        why = "the confidence sequence ruled out every rate at this look"
                checks.append(Check(check, bounds[key], v, not math.isnan(v) and v >= bounds[key] - 1e-12, why))
        if "max_unscored" in bounds:
            v, most = shares.get(cell, math.nan), bounds["max_unscored"]
            checks.append(Check("unscored", most, v, not math.isnan(v) and v <= most + 1e-12))
        out.append(CellGate(cell, name, tuple(checks), kind))
    return out


# --- a gate on a difference: the new system not worse than the old, the new judge not less specific ------------

DIFFERENCE_CHECKS = (
    ("min_difference", "difference", "ci_low", "the difference's lower bound"),
    ("min_q1_difference", "q1_difference", "q1_ci_low", "the q1 difference's lower bound"),
    ("min_q0_difference", "q0_difference", "q0_ci_low", "the q0 difference's lower bound"),
)


@dataclass(frozen=True)
class DifferenceGate:
    """B − A's checks: each a margin M against the lower end of the difference's 95 % interval (M < 0: a
    non-inferiority margin, B at most −M worse than A)."""

    a: str
    b: str
    rater: str
    checks: tuple[Check, ...]
    comparison: dict  # the comparison's row (vocab.estimates.compare.compare_cells)
    why: str = (
        ""  # two judges on the same outputs whose q1 and q0 differences are only bounded: why, and what narrows them
    )

    @property
    def holds(self) -> bool:
        return all(c.holds for c in self.checks)

    def line(self) -> str:
        what = {n: text for _, n, _, text in DIFFERENCE_CHECKS}
        parts = []
        for c in self.checks:
            shown = "undefined" if math.isnan(c.value) else f"{c.value:+.3f}"
            parts.append(f"{what[c.name]} {shown} ≥ {c.bound:+g}: {'holds' if c.holds else 'does not hold'}")
        pair = f"{cell_label(self.b)} − {cell_label(self.a)}"
        head = f"{'PASS' if self.holds else 'FAIL'} {pair} ({self.rater}'s ratings): "
        return head + "; ".join(parts) + (f" ({self.why})" if self.why else "")

    def as_dict(self) -> dict:
        checks = [
            {
                "check": c.name,
                "lower_bound": None if math.isnan(c.value) else c.value,
                "margin": c.bound,
                "holds": c.holds,
            }
            for c in self.checks
        ]
        return {"a": self.a, "b": self.b, "rater": self.rater, "holds": self.holds, "checks": checks}


def check_margins(**margins: float | None) -> dict[str, float]:
    """The margins given, each in [−1, 1]; at least one. One line on anything else."""
    given = {k: v for k, v in margins.items() if v is not None}
    if not given:
        raise CalibrationError(
            "with --a and --b give a margin: --min-difference, --min-q1-difference or --min-q0-difference"
        )
    for k, v in given.items():
        if not (isinstance(v, (int, float)) and -1 <= v <= 1):
            raise CalibrationError(f"--{k.replace('_', '-')} must be a difference between -1 and 1, got {v!r}")
    return given


def difference_gate(
    run_dir: str | Path,
    *,
    a: str,
    b: str,
    min_difference: float | None = None,
    min_q1_difference: float | None = None,
    min_q0_difference: float | None = None,
    rater: str | None = None,
    seed: int = 0,
    n_boot: int = stats.N_DRAWS,
    population: str = stats.DEFAULT_POPULATION,
) -> DifferenceGate:
    """`vocab gate DIR --a OLD --b NEW --min-difference M`: holds when the lower end of NEW − OLD's 95 % interval
    (:func:`vocab.estimates.compare_dir.compare_dir`, the report's draws) is at least M; likewise for the judge's q1
    and q0 differences. An undefined bound does not hold."""

    margins = check_margins(
        min_difference=min_difference, min_q1_difference=min_q1_difference, min_q0_difference=min_q0_difference
    )
    found = compare_dir(run_dir, rater=rater, a=a, b=b, seed=seed, n_boot=n_boot, population=population)
    row = found.pairs.iloc[0].to_dict()
    checks = []
    for key, name, column, _ in DIFFERENCE_CHECKS:
        if key in margins:
            v = float(row[column])
            checks.append(Check(name, margins[key], v, not math.isnan(v) and v >= margins[key] - 1e-12))
    short = found.unrated.get((row["a"], row["b"]))
    judges = (row["a"].split("__", 1)[-1], row["b"].split("__", 1)[-1])
    why = unrated_text(*judges, short, found.rater, row) if short else ""
    return DifferenceGate(row["a"], row["b"], found.rater, tuple(checks), row, why)
