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
and the failed pile's rows weigh alike. From a pilot (:func:`plan_from_pilot`, ``vocab plan DIR``): per cell the
corrected estimates of theta, q1 and q0 from the lead rater (people first: see vocab.raters.blind), the
cell's attempts, its piles' sizes and its design effect over the levels are plugged in as if they were the truth.
They are estimates, with the pilot's intervals around them; the plan says so, and a plan made from a handful of
rows is a guess to be made again when more come back.
"""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass, field

import numpy as np

from vocab import stats
from vocab.coverage.simulate import METHODS, check_point, finite_totals, piles_interval, simulate_studies
from vocab.errors import InputError
from vocab.sampling.sample import ALLOCATIONS
from vocab.stats import DEFAULT_INTERVAL, Piles

NO_PILOT = ("attempts independent (design effect 1: a level's retries not clustered), the failed pile's rows "
            "weighing alike")  # fmt: skip


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
        what = (f"theta {self.theta:.3g}, q1 {self.q1:.3g}, q0 {self.q0:.3g}, {of} {self.attempts} {u}, "
                f"{self.method}")  # fmt: skip
        sizes = f"the piles hold about {self.piles['passed']:.0f} PASSED and {self.piles['failed']:.0f} FAILED {u}"
        if not self.reached:
            floor = ("the interval's draws bound it" if self.population == stats.FINITE
                     else f"the {u}' own variance bounds it: log more {u}")  # fmt: skip
            return (f"{what}: no request reaches ±{self.target_half_width:g}: with every row of both piles labelled "
                    f"(about {self.labels:.0f} labels; {sizes}) the half-width is {self.half_width:.3f}; {floor} "
                    f"(assumed: {self.assumed})")  # fmt: skip
        rows = f"{self.pile_rows['passed']:.0f} passed + {self.pile_rows['failed']:.0f} failed"
        short = "".join(f"; the {k.upper()} pile holds only about {self.piles[k]:.0f}, all of them labelled"
                        for k in self._short())  # fmt: skip
        asked = f"{self.per_pile} rows a pile requested, about {self.labels:.0f} labels a cell"
        if self.budget is not None:
            how = {"proportional": "by the piles' shares", "pilot": "by the piles' spreads (Neyman)"}[self.allocation]
            asked = f"{self.budget} labels a cell requested, split {how}"
        return (f"{what}: {asked} ({rows}"
                f"{short}), give a mean half-width of {self.half_width:.3f} (target ±{self.target_half_width:g}), "
                f"coverage {self.coverage:.3f} over {self.sims} simulated studies "
                f"(assumed: {self.assumed})")  # fmt: skip


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
            lines.append(f"{c['cell'].replace('__', ' → ', 1)}: " + (c.get("plan_text") or c["why_none"]))
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
    population: str = stats.DEFAULT_POPULATION,
    allocation: str = "equal",
    loaded=None,
) -> PilotPlan:
    """A plan per cell from a pilot's corrected estimates (see the module's note); ``rater``: whose ratings (by
    default the lead rater, as the report's headline: people before any LLM or script rater). ``allocation``
    ``pilot``: Neyman's split at the spreads of the lead rater's verdicts in each pile, never below its rows.
    ``loaded``: the pilot as the caller read it (:func:`vocab.raters.loaded.load`; by default read here)."""
    from pathlib import Path

    from vocab.estimates import correct
    from vocab.raters.blind import blind_raters
    from vocab.raters.loaded import load

    check_plan(theta=0.5, q1=0.5, q0=0.5, attempts=2, half_width=half_width, method=method, sims=sims, n_boot=n_boot)
    run_dir = Path(run_dir)
    loaded = loaded or load(run_dir)
    data = loaded.data
    b = blind_raters(run_dir, [rater] if rater else None, purpose="no pilot to plan from", read=loaded.ratings)
    lead = b.lead
    grader, groups = ("critic", "levels") if data.kind == "run" else ("judge", "groups")
    key = loaded.drawn.key
    passes = b.passes(lead, rubric=data.rubric)
    corr = correct.correction_table(data, key, {lead: passes}, n_boot=n_boot, seed=seed, population=population)
    rated_rows = key[key.blind_id.isin(set(passes.dropna().index))]
    said = passes.dropna()
    counts = data.cells
    cells = []
    for r in corr[corr.rater == lead].itertuples():
        deff = float(counts.deff[r.cell])
        passes = int(counts.passed[r.cell])
        sizes = (passes, int(counts.attempts[r.cell]) - passes)
        est = {"cell": r.cell, "attempts": int(counts.attempts[r.cell]), "theta": r.theta,
               "theta_ci": [r.ci_low, r.ci_high], "q1": r.q1, "q0": r.q0}  # fmt: skip
        # at theta 0 no item truly passes, so the critic's sensitivity q1 is undefined and plays no part in the
        # simulation (likewise q0 at theta 1): any value gives the same studies
        set_q1, set_q0 = bool(r.theta == 0 and np.isnan(r.q1)), bool(r.theta == 1 and np.isnan(r.q0))
        q1 = 0.5 if set_q1 else r.q1
        q0 = 0.5 if set_q0 else r.q0
        guesses = (r.theta, q1, q0)
        if any(not 0 <= g <= 1 for g in guesses):  # NaN (an empty pile) or an estimate outside [0, 1]
            est["why_none"] = f"no plan: the pilot's theta, q1, q0 are {', '.join(f'{g:.3g}' for g in guesses)}"
        elif est["attempts"] < 2:  # one cell too small to plan leaves the other cells' plans standing
            est["why_none"] = f"no plan: the cell has {est['attempts']} attempt; a plan needs at least 2"
        else:
            mine = rated_rows[rated_rows.cell == r.cell]
            ka, kb = (mine[mine.pile == k] for k in ("passed", "failed"))
            counts_ = (len(ka), int(said[ka.blind_id].sum()), len(kb), int(said[kb.blind_id].sum()))
            p = plan(theta=r.theta, q1=q1, q0=q0, attempts=est["attempts"], half_width=half_width, method=method,
                     sims=sims, seed=seed, n_boot=n_boot, design_effect=deff, pile_sizes=sizes, population=population,
                     assumed=f"the pilot's design effect {deff:.2f} of the {grader}'s pass rate over its {groups}, "
                     f"its piles of {sizes[0]} PASSED and {sizes[1]} FAILED", allocation=allocation,
                     pilot=counts_ if allocation == "pilot" else None)  # fmt: skip
            if data.kind != "run":
                p = dataclasses.replace(p, unit="items")
            est.update(p.as_dict())
            # what the lead rater has rated of each pile already, and what the plan asks beyond it
            rated = {"passed": counts_[0], "failed": counts_[2]}
            more = {k: max(0, round(p.pile_rows[k]) - rated[k]) for k in rated}
            est.update(rated=rated, more_labels=more["passed"] + more["failed"])
            est["plan_text"] = p.text() + (
                f"; rated so far {rated['passed']} passed + {rated['failed']} failed: about {est['more_labels']} "
                f"more labels ({more['passed']} passed + {more['failed']} failed)"
                if p.reached
                else ""
            )
        if set_q1 or set_q0:
            est["note"] = "q1 undefined at theta 0 (q0 at theta 1) and without effect there: 0.5 simulated"
        cells.append({k: _json_number(v) for k, v in est.items()})
    return PilotPlan(str(run_dir), lead, b.rows(lead), cells)


def _json_number(v):
    """A float rounded for the table, NaN as None (NaN is no JSON); lists element by element."""
    if isinstance(v, list):
        return [_json_number(x) for x in v]
    if isinstance(v, float):
        return None if np.isnan(v) else round(v, 6)
    return v


def check_plan(*, theta: float, q1: float, q0: float, attempts: int, half_width: float, method: str, sims: int,
               n_boot: int = 1000) -> None:  # fmt: skip
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
    check_plan(theta=theta, q1=q1, q0=q0, attempts=attempts, half_width=half_width, method=method, sims=sims,
               n_boot=n_boot)  # fmt: skip
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
        piles = Piles(st.p, np.full(sims, float(attempts)), x, y, (~np.isnan(y)).astype(float),
                      np.full(sims, float(design_effect)), *totals)  # fmt: skip
        est, lo, hi = piles_interval(method, piles, n_boot, stats.stream(seed, *names, "draws"))
        d = ~np.isnan(est)
        t = np.broadcast_to(np.asarray(target, dtype=float), est.shape)[d]
        seen[n] = (float(np.mean(hi[d] - lo[d]) / 2), float(np.mean((lo[d] <= t) & (t <= hi[d]))))

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

    if not meets:
        rows = drawn(top)
        return Plan(method, theta, q1, q0, attempts, half_width, None, _pair(expected), _pair(rows),
                    float(rows.sum()), fit[top], seen[top][1], design_effect, assumed, sims, seed,
                    {k: v[0] for k, v in seen.items()}, population=population, allocation=allocation)  # fmt: skip
    hi = meets[0]
    lo = max([n for n in fit if n < hi], default=low - 1)
    while hi - lo > 1:  # bisect between the last request that fails and the first that meets, refitting each time
        mid = (lo + hi) // 2
        at(mid)
        fit = fitted()
        lo, hi = (lo, mid) if fit[mid] <= half_width else (mid, hi)
    rows = drawn(hi)
    per_pile, budget = (hi, None) if allocation == "equal" else (None, hi)
    return Plan(method, theta, q1, q0, attempts, half_width, per_pile, _pair(expected), _pair(rows),
                float(rows.sum()), fit[hi], seen[hi][1], design_effect, assumed, sims, seed,
                {k: v[0] for k, v in seen.items()}, population=population, allocation=allocation,
                budget=budget)  # fmt: skip


def _splitter(allocation: str, theta: float, q1: float, q0: float, piles, pilot):
    """An allocated plan's split of a cell's labels between its piles, and the smallest request it takes (4, or a
    pilot's rows and 2 more). ``piles``: the piles' expected sizes (their shares: the judge's rate)."""
    from vocab.sampling.sample import allocate

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


def plan_request(pilot, *, theta, q1, q0, attempts, rater, half_width, method, sims, seed, n_boot,
                 population=stats.DEFAULT_POPULATION, allocation="equal"):  # fmt: skip
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
            from vocab.raters.loaded import load
            from vocab.sampling.strata import sample_strata

            loaded = load(pilot)  # once: the checks and the plan are handed it
            if (by := sample_strata(pilot, loaded.stages)) is not None:
                raise PlanError(
                    f"{pilot}: its sample was drawn by strata of {by!r}; vocab plan plans a sample drawn per pile (its "
                    "simulated studies draw each pile whole)"
                )
            return plan_from_pilot(pilot, half_width=half_width, rater=rater, method=method, sims=sims, seed=seed,
                                   n_boot=n_boot, population=population, allocation=allocation,
                                   loaded=loaded)  # fmt: skip
        missing = [k for k, v in guesses.items() if v is None]
        if missing:
            raise PlanError(f"{', '.join(missing)} needed (or a pilot directory: vocab plan DIR --half-width H)")
        if rater is not None:
            raise PlanError("--rater is for a pilot (vocab plan DIR --rater NAME)")
        return plan(theta=theta, q1=q1, q0=q0, attempts=attempts, half_width=half_width, method=method, sims=sims,
                    seed=seed, n_boot=n_boot, population=population, allocation=allocation)  # fmt: skip
    except ValueError as e:
        raise PlanError(str(e)) from None
