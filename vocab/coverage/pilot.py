"""`vocab plan DIR`: a plan per cell from a pilot's corrected estimates (:func:`plan_from_pilot`): theta, q1 and q0
from the lead rater (people first: see vocab.raters.blind), the cell's attempts, its piles' sizes and its design
effect over the levels, plugged into :func:`vocab.coverage.plan.plan` as if they were the truth. They are estimates,
with the pilot's intervals around them; the plan says so. :func:`plan_request` is the command: a pilot or guesses,
never both, every input checked before any simulation."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from vocab import stats
from vocab.coverage.plan import PilotPlan, PlanError, check_plan, plan
from vocab.estimates import correct
from vocab.raters.blind import blind_raters
from vocab.raters.loaded import load
from vocab.sampling.strata import sample_strata
from vocab.stats import DEFAULT_INTERVAL


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
        est = {
            "cell": r.cell,
            "attempts": int(counts.attempts[r.cell]),
            "theta": r.theta,
            "theta_ci": [r.ci_low, r.ci_high],
            "q1": r.q1,
            "q0": r.q0,
        }
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
            p = plan(
                theta=r.theta,
                q1=q1,
                q0=q0,
                attempts=est["attempts"],
                half_width=half_width,
                method=method,
                sims=sims,
                seed=seed,
                n_boot=n_boot,
                design_effect=deff,
                pile_sizes=sizes,
                population=population,
                assumed=f"the pilot's design effect {deff:.2f} of the {grader}'s pass rate over its {groups}, "
                f"its piles of {sizes[0]} PASSED and {sizes[1]} FAILED",
                allocation=allocation,
                pilot=counts_ if allocation == "pilot" else None,
            )
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


def plan_request(
    pilot,
    *,
    theta,
    q1,
    q0,
    attempts,
    rater,
    half_width,
    method,
    sims,
    seed,
    n_boot,
    population=stats.DEFAULT_POPULATION,
    allocation="equal",
):
    """`vocab plan`: from a pilot directory (its estimates plugged in) or from guessed ``theta``, ``q1``, ``q0`` and
    ``attempts``, never both; every input checked before any simulation."""

    guesses = {"--theta": theta, "--q1": q1, "--q0": q0, "--attempts": attempts}
    try:
        if pilot is not None:
            given = [k for k, v in guesses.items() if v is not None]
            if given:
                raise PlanError(f"{', '.join(given)}: a pilot ({pilot}) gives these; leave them out")
            if not Path(pilot).is_dir():
                raise PlanError(f"{pilot}: not a directory (a run or dataset with some blind ratings)")

            loaded = load(pilot)  # once: the checks and the plan are handed it
            if (by := sample_strata(pilot, loaded.stages)) is not None:
                raise PlanError(
                    f"{pilot}: its sample was drawn by strata of {by!r}; vocab plan plans a sample drawn per pile (its "
                    "simulated studies draw each pile whole)"
                )
            return plan_from_pilot(
                pilot,
                half_width=half_width,
                rater=rater,
                method=method,
                sims=sims,
                seed=seed,
                n_boot=n_boot,
                population=population,
                allocation=allocation,
                loaded=loaded,
            )
        missing = [k for k, v in guesses.items() if v is None]
        if missing:
            raise PlanError(f"{', '.join(missing)} needed (or a pilot directory: vocab plan DIR --half-width H)")
        if rater is not None:
            raise PlanError("--rater is for a pilot (vocab plan DIR --rater NAME)")
        return plan(
            theta=theta,
            q1=q1,
            q0=q0,
            attempts=attempts,
            half_width=half_width,
            method=method,
            sims=sims,
            seed=seed,
            n_boot=n_boot,
            population=population,
            allocation=allocation,
        )
    except ValueError as e:
        raise PlanError(str(e)) from None
