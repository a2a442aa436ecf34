"""How many blind labels a target precision needs (``vocab plan``), answered with the interval the report prints.

The design is the study's: from a cell's ``attempts`` logged attempts, up to ``per_pile`` rows are drawn from the
critic-PASSED pile and up to ``per_pile`` from the critic-FAILED one (stratified by the judge's verdict; a pile
holds only the attempts the critic put into it), a blind rater grades them, and the corrected rate gets its interval
from :mod:`vocab.stats.intervals` (03's default method unless told otherwise), the same function the report calls.
For a guessed truth (theta, the critic's q1 and q0) the plan is the smallest ``per_pile`` whose simulated mean
half-width is at most the target, with what it costs: the expected size of each pile, the rows the request draws
from each, and the labels of the cell.

The search does not hinge on simulation noise. The studies are simulated once, each pile in a random order, and a
request of n rows takes each pile's first n (the same studies, nested, for every n); every n's intervals draw from
one stream. The mean half-width of the true design cannot rise with n, so the simulated values are fitted by a
non-increasing (isotonic) regression, and the answer is the smallest n whose fitted half-width meets the target.
Past the larger pile's size more rows change nothing. For the finite population (the report's default,
:data:`vocab.stats.POPULATIONS`) the intervals are the report's with p known and each pile finite, their coverage
measured against each simulated study's own share of good attempts, so labelling every row of both piles leaves no
error. For the superpopulation the attempts' own variance (p's) is the floor. A target below the floor is out of
reach: the plan says so and names the best half-width every row of both piles gives.

Assumed without a pilot: the attempts are independent (a design effect of 1: a level's retries are not clustered)
and the failed pile's rows weigh alike. From a pilot (:func:`vocab.coverage.pilot.plan_from_pilot`, ``vocab plan
DIR``): per cell the corrected estimates of theta, q1 and q0 from the lead rater (people first: see
vocab.raters.blind), the cell's attempts, its piles' sizes and its design effect over the levels are plugged in as
if they were the truth. They are estimates, with the pilot's intervals around them; the plan says so, and a plan
made from a handful of rows is a guess to be made again when more come back.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from vocab import stats
from vocab.coverage.simulate import METHODS, check_point, finite_totals, holds, piles_interval, simulate_studies
from vocab.errors import InputError
from vocab.sampling.sample import ALLOCATIONS, allocate
from vocab.stats import DEFAULT_INTERVAL, Piles

NO_PILOT = (
    "attempts independent (design effect 1: a level's retries not clustered), the failed pile's rows weighing alike"
)


@dataclass(frozen=True)
class Plan:
    method: str
    theta: float
    q1: float
    q0: float
    attempts: int
    target_half_width: float
    per_pile: int | None  # the rows requested from each pile; None: no request reaches the target
    piles: dict[str, float]  # the expected size of each pile (the pilot's own sizes for a pilot)
    pile_rows: dict[str, float]  # the rows the request draws from each pile (capped by it), expected
    labels: float  # the labels of the cell, expected: at per_pile, or with every row labelled when unreachable
    half_width: float  # the fitted mean half-width at per_pile (with every row labelled when unreachable)
    coverage: float  # the interval's simulated coverage there
    design_effect: float
    assumed: str
    sims: int
    seed: int
    searched: dict[int, float] = field(default_factory=dict)  # per_pile -> simulated mean half-width, as drawn
    unit: str = "attempts"  # what the text calls the judged units: an imported dataset's are "items"
    population: str = stats.DEFAULT_POPULATION  # what theta is the rate of (vocab.stats.POPULATIONS)
    allocation: str = "equal"  # how a request splits between the piles (vocab.sampling.sample.allocate)
    budget: int | None = None  # an allocated plan's request: the labels of the cell (per_pile stays None)

    @property
    def reached(self) -> bool:
        return self.per_pile is not None or self.budget is not None

    def as_dict(self) -> dict:
        d = asdict(self)
        d.pop("unit")
        d["searched"] = {str(k): round(v, 6) for k, v in sorted(self.searched.items())}
        d["piles"] = {k: round(v, 2) for k, v in self.piles.items()}
        d["pile_rows"] = {k: round(v, 2) for k, v in self.pile_rows.items()}
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in d.items()}

    def _short(self) -> list[str]:
        if self.budget is not None:  # an allocated request: a pile it labels whole
            return [k for k in ("passed", "failed") if self.piles[k] <= self.pile_rows[k] + 0.5]
        return [k for k in ("passed", "failed") if self.per_pile is not None and self.piles[k] < self.per_pile]

    def text(self) -> str:
        u = self.unit
        of = "the cell's own" if self.population == stats.FINITE else "drawn from a superpopulation:"
        what = f"theta {self.theta:.3g}, q1 {self.q1:.3g}, q0 {self.q0:.3g}, {of} {self.attempts} {u}, {self.method}"
        sizes = f"the piles hold about {self.piles['passed']:.0f} PASSED and {self.piles['failed']:.0f} FAILED {u}"
        if not self.reached:
            floor = (
                "the interval's draws bound it"
                if self.population == stats.FINITE
                else f"the {u}' own variance bounds it: log more {u}"
            )
            return (
                f"{what}: no request reaches ±{self.target_half_width:g}: with every row of both piles labelled "
                f"(about {self.labels:.0f} labels; {sizes}) the half-width is {self.half_width:.3f}; {floor} "
                f"(assumed: {self.assumed})"
            )
        rows = f"{self.pile_rows['passed']:.0f} passed + {self.pile_rows['failed']:.0f} failed"
        short = "".join(
            f"; the {k.upper()} pile holds only about {self.piles[k]:.0f}, all of them labelled" for k in self._short()
        )
        asked = f"{self.per_pile} rows a pile requested, about {self.labels:.0f} labels a cell"
        if self.budget is not None:
            how = {"proportional": "by the piles' shares", "pilot": "by the piles' spreads (Neyman)"}[self.allocation]
            asked = f"{self.budget} labels a cell requested, split {how}"
        return (
            f"{what}: {asked} ({rows}"
            f"{short}), give a mean half-width of {self.half_width:.3f} (target ±{self.target_half_width:g}), "
            f"coverage {self.coverage:.3f} over {self.sims} simulated studies "
            f"(assumed: {self.assumed})"
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
        return {
            "pilot": self.run_dir,
            "rater": self.rater,
            "rows_rated": self.rows_rated,
            "warning": PILOT_WARNING,
            "cells": self.cells,
        }

    def text(self) -> str:
        lines = [f"from the pilot {self.run_dir} ({self.rater}'s {self.rows_rated} rated rows) — {PILOT_WARNING}"]
        for c in self.cells:
            lines.append(f"{c['cell'].replace('__', ' → ', 1)}: " + (c.get("plan_text") or c["why_none"]))
        return "\n".join(lines)


def check_plan(
    *, theta: float, q1: float, q0: float, attempts: int, half_width: float, method: str, sims: int, n_boot: int = 1000
) -> None:
    """ValueError naming the first input out of range, before any work (a pilot's correction included)."""
    if not 0 < half_width <= 0.5:
        raise ValueError(f"--half-width must lie in (0, 0.5], got {half_width}")
    if attempts < 2:
        raise ValueError(f"--attempts must be at least 2, got {attempts}")
    check_point(method, theta=theta, q1=q1, q0=q0, attempts=attempts, piles=attempts, sims=sims, seed=0, n_boot=n_boot)


def _grid(top: int) -> list[int]:
    """The requests first simulated: 1, 2, 3, then about 1.4 times apart, and ``top``."""
    out, n = [1, 2, 3], 3
    while n < top:
        n = max(n + 1, int(round(n * 1.4)))
        out.append(min(n, top))
    return sorted({k for k in out if k <= top} | {top})


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
    design_effect: float = 1.0,
    pile_sizes: tuple[int, int] | None = None,
    assumed: str = NO_PILOT,
    population: str = stats.DEFAULT_POPULATION,
    allocation: str = "equal",
    pilot: tuple[int, int, int, int] | None = None,
) -> Plan:
    """The smallest rows-per-pile request whose fitted mean half-width meets ``half_width`` (see the module's note).
    ``design_effect``: p's over the levels (a pilot's); ``pile_sizes``: the (PASSED, FAILED) piles' sizes when
    known (a pilot's), for the labels a request draws. ``population``: what the interval aims at (its coverage is
    measured against the same). ``allocation``: ``equal`` asks for rows a pile; ``proportional`` and ``pilot`` ask
    for a cell's labels, split by :func:`~vocab.sampling.sample.allocate` at the judge's rate (``pilot``: Neyman's
    split at the spreads of a rated ``pilot``'s (n_a, k_a, n_b, k_b), never below its rows; without one, at the
    spreads the guessed theta, q1 and q0 give)."""
    from scipy.optimize import isotonic_regression

    if method not in METHODS:
        raise ValueError(f"unknown method {method!r} (known: {', '.join(METHODS)})")
    check_plan(
        theta=theta, q1=q1, q0=q0, attempts=attempts, half_width=half_width, method=method, sims=sims, n_boot=n_boot
    )
    if population not in stats.POPULATIONS:
        raise ValueError(f"unknown population {population!r} (known: {', '.join(stats.POPULATIONS)})")
    if allocation not in ALLOCATIONS:
        raise ValueError(f"unknown allocation {allocation!r} (known: {', '.join(ALLOCATIONS)})")
    names = ("plan", theta, q1, q0, attempts, method, design_effect)
    st = simulate_studies(theta, q1, q0, attempts, attempts, sims, stats.stream(seed, *names, "studies"))
    sizes = np.stack([np.sum(~np.isnan(st.passed), axis=1), np.sum(~np.isnan(st.failed), axis=1)])  # (2, S)
    expected = sizes.mean(axis=1) if pile_sizes is None else np.asarray(pile_sizes, dtype=float)
    top = int(max(sizes.max(), 1))  # past the larger pile's size, more rows change nothing
    split, low = (lambda n: (n, n)), 1
    if allocation != "equal":  # a request is a cell's labels, split between the piles
        split, low = _splitter(allocation, theta, q1, q0, expected, pilot)
        top = max(int(sizes[0].max() + sizes[1].max()), low)
    seen: dict[int, tuple[float, float]] = {}

    def at(n: int) -> None:
        if n in seen:
            return
        na, nb = split(n)
        x, y = st.passed[:, :na].copy(), st.failed[:, :nb].copy()
        # a critic that passed nothing (p = 0) has no PASSED pile and needs none (theta = b), likewise p = 1: the
        # placeholder row the report gives it, which p's weight 0 cancels (calibration.correct)
        x[st.p == 0, 0], y[st.p == 1, 0] = 0.0, 0.0
        totals, target = (None, None), theta
        if population == stats.FINITE:
            passes, failures = finite_totals(st.p, float(attempts))
            # a placeholder pile (p = 0 or 1) is no finite set: drawn as the report draws it
            totals = (np.where(passes > 0, passes, np.nan), np.where(failures > 0, failures, np.nan))
            target = st.truth
        piles = Piles(
            st.p,
            np.full(sims, float(attempts)),
            x,
            y,
            (~np.isnan(y)).astype(float),
            np.full(sims, float(design_effect)),
            *totals,
        )
        est, lo, hi = piles_interval(method, piles, n_boot, stats.stream(seed, *names, "draws"))
        d = ~np.isnan(est)
        t = np.broadcast_to(np.asarray(target, dtype=float), est.shape)[d]
        seen[n] = (float(np.mean(hi[d] - lo[d]) / 2), float(np.mean(holds(lo[d], hi[d], t))))

    def fitted() -> dict[int, float]:
        ns = sorted(seen)
        return dict(zip(ns, isotonic_regression([seen[n][0] for n in ns], increasing=False).x, strict=True))

    for n in [low, *_grid(top)]:
        if n >= low:
            at(n)
    fit = fitted()
    meets = [n for n in sorted(fit) if fit[n] <= half_width]

    def drawn(n: int) -> np.ndarray:
        """The rows a request of n draws from each pile: E[min(size, n)], from the known sizes of a pilot."""
        want = np.asarray(split(n), dtype=float)
        if pile_sizes is not None:
            return np.minimum(expected, want)
        return np.minimum(sizes, want[:, None]).mean(axis=1)

    def made(n: int, per_pile: int | None, budget: int | None = None) -> Plan:
        rows = drawn(n)
        return Plan(
            method,
            theta,
            q1,
            q0,
            attempts,
            half_width,
            per_pile,
            _pair(expected),
            _pair(rows),
            float(rows.sum()),
            fit[n],
            seen[n][1],
            design_effect,
            assumed,
            sims,
            seed,
            {k: v[0] for k, v in seen.items()},
            population=population,
            allocation=allocation,
            budget=budget,
        )

    if not meets:
        return made(top, None)
    hi = meets[0]
    lo = max([n for n in fit if n < hi], default=low - 1)
    while hi - lo > 1:  # bisect between the last request that fails and the first that meets, refitting each time
        mid = (lo + hi) // 2
        at(mid)
        fit = fitted()
        lo, hi = (lo, mid) if fit[mid] <= half_width else (mid, hi)
    return made(hi, *((hi, None) if allocation == "equal" else (None, hi)))


def _splitter(allocation: str, theta: float, q1: float, q0: float, piles, pilot):
    """An allocated plan's split of a cell's labels between its piles, and the smallest request it takes (4, or a
    pilot's rows and 2 more). ``piles``: the piles' expected sizes (their shares: the judge's rate)."""

    total = float(piles[0] + piles[1])
    p = float(piles[0]) / total if total else 0.5
    kw: dict = {}
    low = 4
    if allocation == "pilot" and pilot is not None:
        kw["pilot"] = pilot
        low = max(4, max(2, pilot[0]) + max(2, pilot[2]))
    elif allocation == "pilot":  # no pilot yet: the spreads people's verdicts have in each pile at the guesses
        pj = theta * q1 + (1 - theta) * (1 - q0)
        a = theta * q1 / pj if pj > 0 else 0.5
        b = theta * (1 - q1) / (1 - pj) if pj < 1 else 0.5
        kw["sigmas"] = (float(np.sqrt(a * (1 - a))), float(np.sqrt(b * (1 - b))))
    return (lambda n: allocate(max(n, low), p, allocation, **kw)), low


def _pair(x) -> dict[str, float]:
    return {"passed": float(x[0]), "failed": float(x[1])}


class PlanError(InputError):
    """A `vocab plan` request that cannot be planned: one line, exit 2."""
