"""How many blind labels a target precision needs (``vocab plan``), answered by the study's own simulator.

The design is the study's: from a cell's ``attempts`` logged attempts, ``per_pile`` rows are drawn from the
critic-PASSED pile and ``per_pile`` from the critic-FAILED one (stratified by the judge's verdict), a blind rater
grades them, and the corrected rate gets its interval (03's default method unless told otherwise). For a guessed
truth (theta, the critic's q1 and q0) the plan is the smallest ``per_pile`` whose simulated mean half-width is at
most the target, with the interval's coverage at that size.

The search evaluates sizes with one seed for all of them (common random numbers: each size sees the same
simulated studies up to the rows it draws), doubling until the target is met and then bisecting, so the answer
``n`` meets the target and ``n - 1`` does not, in the same simulation. A pile never holds more rows than the
attempts the critic put into it, so past some size more labels change nothing: the attempts' own sampling
variance (p's) is then the floor, and the plan says the target is out of reach.

From a pilot (:func:`plan_from_pilot`, ``vocab plan DIR``): the corrected estimates of a run or dataset that already
has some blind ratings — per cell theta, q1 and q0 from the rater with most rows rated, and the cell's attempts —
are plugged in as if they were the truth. They are estimates, with the pilot's intervals around them; the plan
says so, and a plan made from a handful of rows is a guess to be made again when more come back.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from vocab.coverage.simulate import METHODS, check_point, coverage
from vocab.errors import InputError
from vocab.stats import DEFAULT_INTERVAL


@dataclass(frozen=True)
class Plan:
    method: str
    theta: float
    q1: float
    q0: float
    attempts: int
    target_half_width: float
    per_pile: int | None  # None: no size up to `attempts` reaches the target
    half_width: float  # the simulated mean half-width at per_pile (at the largest size tried when unreachable)
    coverage: float  # the interval's simulated coverage there
    sims: int
    seed: int
    searched: dict[int, float] = field(default_factory=dict)  # per_pile -> simulated mean half-width

    @property
    def labels(self) -> int | None:
        """Rows a blind rater grades per cell (both piles)."""
        return None if self.per_pile is None else 2 * self.per_pile

    def as_dict(self) -> dict:
        d = asdict(self)
        d["labels"] = self.labels
        d["searched"] = {str(k): round(v, 6) for k, v in sorted(self.searched.items())}
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in d.items()}

    def text(self) -> str:
        what = f"theta {self.theta:g}, q1 {self.q1:g}, q0 {self.q0:g}, {self.attempts} attempts, {self.method}"
        if self.per_pile is None:
            return (
                f"{what}: no pile size reaches ±{self.target_half_width:g} (at {max(self.searched)} rows a pile the "
                f"half-width is {self.half_width:.3f}: the attempts' own variance bounds it; log more attempts)"
            )
        return (
            f"{what}: {self.per_pile} rows a pile ({self.labels} labels a cell) give a mean half-width of "
            f"{self.half_width:.3f} (target ±{self.target_half_width:g}; {self.per_pile - 1} a pile do not), "
            f"coverage {self.coverage:.3f} over {self.sims} simulated studies"
        )


PILOT_WARNING = (
    "the pilot's estimates are plugged in as if true: they are estimates (their intervals are in 03 and the "
    "report), so this plan is a guess; plan again when more ratings come back"
)


@dataclass(frozen=True)
class PilotPlan:
    run_dir: str
    rater: str
    rows_rated: int
    cells: list[dict]  # per cell: the pilot's estimates and their interval, then the plan (or why none)

    def as_dict(self) -> dict:
        return {"pilot": self.run_dir, "rater": self.rater, "rows_rated": self.rows_rated, "warning": PILOT_WARNING,
                "cells": self.cells}  # fmt: skip

    def text(self) -> str:
        lines = [f"from the pilot {self.run_dir} ({self.rater}'s {self.rows_rated} rated rows) — {PILOT_WARNING}"]
        for c in self.cells:
            lines.append(f"{c['cell']}: " + (c["plan_text"] if c.get("plan_text") else c["why_none"]))
        return "\n".join(lines)


def plan_from_pilot(
    run_dir,
    *,
    half_width: float,
    rater: str | None = None,
    method: str = DEFAULT_INTERVAL,
    sims: int = 1000,
    seed: int = 0,
    n_boot: int = 1000,
) -> PilotPlan:
    """A plan per cell from a pilot's corrected estimates (see the module's note); ``rater``: whose ratings (by
    default the rater with most rows rated, then by name, as the report's headline)."""
    from pathlib import Path

    from vocab.calibration import correct
    from vocab.calibration.dataset import load_dataset
    from vocab.calibration.raters import blind_ratings
    from vocab.calibration.sample import read_key

    check_plan(theta=0.5, q1=0.5, q0=0.5, attempts=2, half_width=half_width, method=method, sims=sims)
    run_dir = Path(run_dir)
    data = load_dataset(run_dir)
    ratings, lead = blind_ratings(run_dir, [rater] if rater else None, purpose="no pilot to plan from")
    corr = correct.correction_table(data.attempts, read_key(run_dir), correct.variants({lead: ratings[lead]}, None,
                                    data.rubric), n_boot=n_boot, seed=seed)  # fmt: skip
    counts = data.attempts.groupby("cell").size()
    cells = []
    for r in corr[corr.rater == lead].itertuples():
        est = {"cell": r.cell, "attempts": int(counts[r.cell]), "theta": r.theta, "theta_ci": [r.ci_low, r.ci_high],
               "q1": r.q1, "q0": r.q0}  # fmt: skip
        # at theta 0 no item truly passes, so the critic's sensitivity q1 is undefined and plays no part in the
        # simulation (likewise q0 at theta 1): any value gives the same studies
        set_q1, set_q0 = bool(r.theta == 0 and np.isnan(r.q1)), bool(r.theta == 1 and np.isnan(r.q0))
        q1 = 0.5 if set_q1 else r.q1
        q0 = 0.5 if set_q0 else r.q0
        guesses = (r.theta, q1, q0)
        if any(not 0 <= g <= 1 for g in guesses):  # NaN (an empty pile) or an estimate outside [0, 1]
            est["why_none"] = f"no plan: the pilot's theta, q1, q0 are {', '.join(f'{g:.3g}' for g in guesses)}"
        else:
            p = plan(theta=r.theta, q1=q1, q0=q0, attempts=est["attempts"], half_width=half_width,
                     method=method, sims=sims, seed=seed, n_boot=n_boot)  # fmt: skip
            est.update(p.as_dict())
            est["plan_text"] = p.text()
        if set_q1 or set_q0:
            est["note"] = "q1 undefined at theta 0 (q0 at theta 1) and without effect there: 0.5 simulated"
        cells.append({k: _json_number(v) for k, v in est.items()})
    return PilotPlan(str(run_dir), lead, len(ratings[lead]), cells)


def _json_number(v):
    """A float rounded for the table, NaN as None (NaN is no JSON); lists element by element."""
    if isinstance(v, list):
        return [_json_number(x) for x in v]
    if isinstance(v, float):
        return None if np.isnan(v) else round(v, 6)
    return v


def check_plan(*, theta: float, q1: float, q0: float, attempts: int, half_width: float, method: str, sims: int) -> None:
    """ValueError naming the first input out of range."""
    if not 0 < half_width <= 0.5:
        raise ValueError(f"--half-width must lie in (0, 0.5], got {half_width}")
    if attempts < 2:
        raise ValueError(f"--attempts must be at least 2, got {attempts}")
    check_point(method, theta=theta, q1=q1, q0=q0, attempts=attempts, piles=attempts, sims=sims, seed=0)


def plan(
    *,
    theta: float,
    q1: float,
    q0: float,
    attempts: int,
    half_width: float,
    method: str = DEFAULT_INTERVAL,
    sims: int = 1000,
    seed: int = 0,
    n_boot: int = 1000,
) -> Plan:
    """The smallest rows-per-pile whose simulated mean half-width is at most ``half_width``."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r} (known: {', '.join(METHODS)})")
    check_plan(theta=theta, q1=q1, q0=q0, attempts=attempts, half_width=half_width, method=method, sims=sims)
    seen: dict[int, tuple[float, float]] = {}

    def at(n: int) -> float:
        if n not in seen:
            c = coverage(method, theta=theta, q1=q1, q0=q0, attempts=attempts, piles=n, sims=sims, seed=seed,
                         n_boot=n_boot)  # fmt: skip
            seen[n] = (c.mean_width / 2, c.coverage)
        return seen[n][0]

    lo, hi = 0, 1  # at(lo) > target (lo = 0: no rows, never enough), at(hi) to be found <= target
    while at(hi) > half_width:
        if hi >= attempts:
            hw, cov = seen[hi]
            return Plan(method, theta, q1, q0, attempts, half_width, None, hw, cov, sims, seed,
                        {k: v[0] for k, v in seen.items()})  # fmt: skip
        lo, hi = hi, min(2 * hi, attempts)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if at(mid) <= half_width else (mid, hi)
    hw, cov = seen[hi]
    return Plan(
        method, theta, q1, q0, attempts, half_width, hi, hw, cov, sims, seed, {k: v[0] for k, v in seen.items()}
    )


class PlanError(InputError):
    """A `vocab plan` request that cannot be planned: one line, exit 2."""


def plan_request(pilot, *, theta, q1, q0, attempts, rater, half_width, method, sims, seed, n_boot):
    """`vocab plan`: from a pilot directory (its estimates plugged in) or from guessed ``theta``, ``q1``, ``q0`` and
    ``attempts``, never both; every input checked before any simulation."""
    from pathlib import Path

    guesses = {"--theta": theta, "--q1": q1, "--q0": q0, "--attempts": attempts}
    try:
        if pilot is not None:
            given = [k for k, v in guesses.items() if v is not None]
            if given:
                raise PlanError(f"{', '.join(given)}: a pilot ({pilot}) gives these; leave them out")
            if not Path(pilot).is_dir():
                raise PlanError(f"{pilot}: not a directory (a run or dataset with some blind ratings)")
            return plan_from_pilot(pilot, half_width=half_width, rater=rater, method=method, sims=sims, seed=seed,
                                   n_boot=n_boot)  # fmt: skip
        missing = [k for k, v in guesses.items() if v is None]
        if missing:
            raise PlanError(f"{', '.join(missing)} needed (or a pilot directory: vocab plan DIR --half-width H)")
        if rater is not None:
            raise PlanError("--rater is for a pilot (vocab plan DIR --rater NAME)")
        return plan(theta=theta, q1=q1, q0=q0, attempts=attempts, half_width=half_width, method=method, sims=sims,
                    seed=seed, n_boot=n_boot)  # fmt: skip
    except ValueError as e:
        raise PlanError(str(e)) from None
