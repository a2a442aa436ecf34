"""The audit's blind sample (`vocab audit`'s step after the import, :func:`sample_step`): what is checked before a
sample is drawn, the plan shown before it is drawn, how a cell's labels are split between the judge's piles
(``--allocation``, ``--budget``: :func:`draw_lines`), the sample read once for the steps after it, and a pilot's
second stage, drawn once the pilot is rated (:func:`extend_pilot`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vocab import stats
from vocab.coverage.simulate import SimulationSizeError, coverage
from vocab.datasets.dataset import cells_table
from vocab.datasets.errors import CalibrationError
from vocab.estimates.slices import check_column
from vocab.layout import RunDir
from vocab.raters.blind import blind_raters
from vocab.raters.chain import _sample_step
from vocab.raters.loaded import load
from vocab.raters.packet import STAGE, check_rater_name
from vocab.sampling import sample as sm
from vocab.sampling.drawn import Drawn, read_drawn
from vocab.sampling.labelled import labels_note
from vocab.sampling.sample import ALLOCATIONS, allocate, sample_stages
from vocab.sampling.strata import SCORE, check_slicing, check_strata, sample_strata, strata_lines
from vocab.stats import DEFAULT_INTERVAL

PLAN_GUESS = 0.9  # before any rating, the plan's stated guess: a judge right 9 times in 10 either way


def plan_lines(
    attempts,
    per_pile: int,
    seed: int,
    sims: int = 300,
    n_boot: int = 300,
    population: str = stats.DEFAULT_POPULATION,
) -> list[str]:
    """``attempts``: a frame of attempts, or a dataset's :attr:`~vocab.datasets.dataset.Dataset.cells`.

    Before the sample is drawn: per cell, the interval's mean half-width that ``per_pile`` rows a pile give, by
    the study's simulator (`vocab coverage`, for the ``population`` the audit corrects for), at the judge's own rate
    and a stated guess of its accuracy (no rating exists yet to estimate it), and how to plan with one's own guesses
    or, later, from the first ratings."""

    lines = []
    if "verdict" in attempts.columns:  # a frame of attempts (each with a verdict)
        attempts = cells_table(attempts).assign(attempts=lambda c: c.passed + c.failed)
    for cell, c in attempts[attempts.attempts > 0].iterrows():
        n, k = int(c.attempts), int(c.passed)
        p = k / n
        rows = (min(per_pile, k), min(per_pile, n - k))  # a pile gives no more rows than it holds
        if n < 2:
            continue
        try:
            c = coverage(
                DEFAULT_INTERVAL,
                theta=p,
                q1=PLAN_GUESS,
                q0=PLAN_GUESS,
                attempts=n,
                piles=min(per_pile, n),
                sims=sims,
                seed=seed,
                n_boot=n_boot,
                population=population,
            )
        except SimulationSizeError:  # a cell too large for the simulator's memory bound: the advice is not worth it
            lines.append(f"plan {cell}: {n} judged, too many for a quick simulation here: `vocab plan` plans it")
            continue
        lines.append(
            f"plan {cell}: {n} judged, the judge says {p:.0%}; {per_pile} rows a pile ({sum(rows)} labels here: "
            f"{rows[0]} of the {k} PASSED, {rows[1]} of the {n - k} FAILED) give about ±{c.mean_width / 2:.2f} if the "
            f"judge is right {PLAN_GUESS:.0%} of the time either way "
            f"(a guess: `vocab plan --theta T --q1 A --q0 B --attempts {n} --half-width H` for yours)"
        )
    if lines:
        lines.append("plan: once some ratings are back, `vocab plan DIR --half-width H` plans from them")
    return lines


DEFAULT_PER_PILE = 10  # seed 000's 10 + 10


def check_allocation(allocation: str | None, per_pile: int | None, budget: int | None) -> None:
    """The audit's allocation options, checked before anything is written (one line each)."""

    if allocation is not None and allocation not in ALLOCATIONS:
        raise CalibrationError(f"unknown allocation {allocation!r} (known: {', '.join(ALLOCATIONS)})")
    if per_pile is not None and per_pile < 1:
        raise CalibrationError(f"--per-pile must be positive, got {per_pile}")
    if budget is not None and budget < 4:
        raise CalibrationError(f"--budget must be at least 4 (2 labels a pile), got {budget}")
    if budget is not None and allocation in (None, "equal"):
        raise CalibrationError("--budget is for --allocation proportional or pilot (equal takes --per-pile)")
    if allocation == "proportional" and per_pile is not None and budget is not None:
        raise CalibrationError("--per-pile and --budget: give one (proportional splits a budget)")
    if allocation == "pilot":
        if budget is None:
            raise CalibrationError(
                "--allocation pilot needs --budget (the labels per cell in all, the pilot's included)"
            )
        pilot = 2 * (per_pile or DEFAULT_PER_PILE)
        if budget <= pilot:
            raise CalibrationError(
                f"--budget {budget} leaves nothing after the pilot's {pilot} labels a cell "
                f"(--per-pile {per_pile or DEFAULT_PER_PILE} a pile): raise it"
            )


@dataclass(frozen=True)
class Sampled:
    """The sample as the audit's later steps read it: ``drawn`` (read once), ``first`` (drawn by this call),
    ``pilot`` (a pilot's record whose second stage is not drawn yet, else None) and what to tell the user."""

    drawn: Drawn
    first: bool
    pilot: dict | None
    lines: list[str]


def sample_step(
    d: Path,
    data,
    *,
    raters: tuple[str, ...],
    per_pile: int | None,
    seed: int,
    allocation: str | None,
    budget: int | None,
    population: str,
    by: str | None,
    strata: str | None,
) -> Sampled:
    """`vocab audit`'s sample: every check a sample needs first (:func:`first_call_checks`; the people's names
    against this directory's machine raters), then the first call's draw (:func:`draw_lines`) or the sample kept,
    read once (:func:`vocab.sampling.drawn.read_drawn`)."""

    for name in raters:
        check_rater_name(name, d)
    first = not RunDir(d).key.exists()
    draw_by = first_call_checks(
        d, data, first, by=by, strata=strata, allocation=allocation, budget=budget, population=population
    )
    lines = draw_lines(d, data, per_pile, seed, allocation, budget, draw_by, population) if first else []
    drawn = read_drawn(d)
    if not first:
        kept = "labelled in the source, not drawn by vocab" if labels_note(d, drawn.stages) else "already drawn"
        lines.append(f"blind sample: kept ({len(drawn.sheet)} rows {kept})")
    return Sampled(drawn, first, pilot_pending(d, drawn.stages), lines)


def check_kept_allocation(d: Path, allocation: str | None, budget: int | None) -> None:
    """A sample already drawn keeps its allocation: another one asked for on a later call is one line."""

    if allocation is None and budget is None:
        return
    stages = sample_stages(d)
    first = stages[0] if stages else {}
    had = first.get("allocation", "equal")
    if (allocation or had) != had or (budget is not None and budget != first.get("budget")):
        raise CalibrationError(
            f"{d}'s sample was drawn with allocation {had}"
            + (f", budget {first['budget']}" if first.get("budget") else "")
            + ": it is kept; leave out --allocation and --budget"
        )


def draw_lines(
    d: Path,
    data,
    per_pile: int | None,
    seed: int,
    allocation: str | None,
    budget: int | None,
    strata: tuple[str, bool] | None = None,
    population: str = stats.DEFAULT_POPULATION,
) -> list[str]:
    """The first call's blind sample, drawn and recorded (``calibration/sample.json``); what to tell the user:
    the plan of an equal split (for ``population``), the piles' rows of a proportional one, the pilot's two stages
    of a pilot, the strata of a sample drawn by strata (``strata``: what by, and whether ``per_pile`` is a stratum's
    rows: :func:`vocab.sampling.strata.strata_lines`)."""

    allocation = allocation or "equal"
    per = per_pile or DEFAULT_PER_PILE
    if strata is not None:
        sample, lines, fields = strata_lines(d, data, per, seed, *strata)
        sm.write_sample(sample, d)
        sm.write_sample_manifest(
            d, {"stage": "draw", "seed": seed, "allocation": "equal", "budget": None, "per_pile": per, **fields}
        )
        return lines
    lines, sizes = [], None
    if allocation == "proportional":
        budget = budget or 2 * per
        sizes = sm.cell_sizes(data, budget, "proportional")
        for cell, (a, b) in sizes.items():
            lines.append(
                f"allocation {cell}: {budget} labels split by the piles' shares: {a} from the PASSED pile, "
                f"{b} from the FAILED"
            )
    else:
        lines += plan_lines(data.cells, per, seed, population=population)
    sm.write_sample(sm.draw(data, per, seed, sizes=sizes), d)
    record = {
        "stage": "draw",
        "seed": seed,
        "allocation": allocation,
        "budget": budget,
        "per_pile": None if sizes else per,
    }
    if sizes:
        record["rows_per_cell"] = {c: {"passed": a, "failed": b} for c, (a, b) in sizes.items()}
    sm.write_sample_manifest(d, record)
    rows = len(sm.read_sheet(d))
    if sizes:
        lines.append(
            f"blind sample: {rows} rows ({budget} a cell, split by the piles' shares where the piles allow, "
            f"seed {seed})"
        )
    else:
        lines.append(f"blind sample: {rows} rows ({per} per pile per cell where the piles allow, seed {seed})")
    if allocation == "pilot":
        lines.append(
            f"pilot: rate these {rows} rows first; then `vocab audit {d}` draws the rest of each cell's "
            f"{budget} labels, split between the piles by the spread the pilot's ratings show (Neyman's "
            f"split: each pile in proportion to its size times the spread of people's verdicts in it)"
        )
        for cell, (more_a, more_b) in guessed_second_stage(data, per, budget).items():
            lines.append(
                f"pilot {cell}: at a guess (a judge right {PLAN_GUESS:.0%} of the time either way) the "
                f"second stage asks about {more_b} more from the FAILED pile and {more_a} more from the "
                f"PASSED; the pilot's ratings decide"
            )
    return lines


def guessed_second_stage(data, per_pile: int, budget: int) -> dict[str, tuple[int, int]]:
    """Per cell, the rows a pilot's second stage would add to each pile (PASSED, FAILED) if the judge were right
    :data:`PLAN_GUESS` of the time either way: the pilot's rater passes at the shares that accuracy implies
    (``theta`` solved from the judge's rate p = theta q1 + (1 - theta)(1 - q0), clipped to [0, 1])."""

    out = {}
    q = PLAN_GUESS
    for cell, c in data.cells[data.cells.attempts > 0].iterrows():
        n, k = int(c.attempts), int(c.passed)
        p = k / n
        na, nb = min(per_pile, k), min(per_pile, n - k)
        if na + nb + 4 > budget or not 0 < p < 1:
            continue
        theta = min(max((p - (1 - q)) / (2 * q - 1), 0.0), 1.0)
        share_a, share_b = theta * q / p, theta * (1 - q) / (1 - p)  # people's pass share in each pile
        a, b = allocate(budget, p, "pilot", pilot=(na, round(share_a * na), nb, round(share_b * nb)))
        out[cell] = (max(min(a, k) - na, 0), max(min(b, n - k) - nb, 0))
    return out


def pilot_pending(d: Path, stages: list[dict] | None = None) -> dict | None:
    """The record of a pilot drawn by `vocab audit --allocation pilot` whose second stage is not drawn yet
    (``stages``: the sample's record as the caller read it; by default read here)."""

    stages = sample_stages(d) if stages is None else stages
    if len(stages) == 1 and stages[0].get("allocation") == "pilot" and stages[0].get("stage") == "draw":
        return stages[0]
    return None


def pilot_people(d: Path) -> list[str]:
    """The people handed a packet of this sample (``packets/NAME/packet.json``; not a later stage's folder)."""

    packets = RunDir(d).packets
    if not packets.is_dir():
        return []
    return sorted(p.name for p in packets.iterdir() if (p / "packet.json").is_file() and not STAGE.fullmatch(p.name))


def extend_pilot(d: Path, record: dict, seed: int, people: list[str] = (), loaded=None) -> tuple[bool, list[str]]:
    """A pilot's second stage, once the lead rater (people first, as the report's headline; a person whenever
    ``people`` were handed packets) has rated every pilot row: the rest of the recorded budget drawn by `vocab
    sample --allocation pilot`'s function. Returns whether it was drawn and what to tell the user (the last line,
    when it was not, says what it waits for). ``loaded``: the dataset, sample and ratings as the audit read them."""

    loaded = loaded or load(d)
    key = loaded.drawn.key
    try:
        b = blind_raters(d, purpose="the pilot waits for its ratings", read=loaded.ratings)
    except CalibrationError:
        return False, [
            f"pilot: the second stage waits for ratings of the pilot's {len(key)} rows; then `vocab audit {d}` draws it"
        ]
    lead, rated = b.lead, b.rows(b.lead)
    if people and not b.people:
        return False, [
            f"pilot: the second stage waits for people's ratings of the pilot's {len(key)} rows "
            f"({', '.join(people)}); then `vocab audit {d}` draws it"
        ]
    if rated < len(key):
        return False, [
            f"pilot: {lead} has rated {rated} of the pilot's {len(key)} rows; once every one is rated, "
            f"`vocab audit {d}` draws the second stage"
        ]
    said = _sample_step(d, None, int(record["budget"]), "pilot", lead, seed, None)
    stage = sample_stages(d)[-1]
    lines = [f"pilot: {line}" for line in said]
    for cell, r in sorted(stage.get("rows_per_cell", {}).items()):
        k = key[key.cell == cell].pile.value_counts()
        lines.append(
            f"pilot {cell}: {lead}'s ratings of the pilot split its {record['budget']} labels "
            f"{r['passed']} PASSED + {r['failed']} FAILED: {max(r['passed'] - int(k.get('passed', 0)), 0)} "
            f"more from the PASSED pile, {max(r['failed'] - int(k.get('failed', 0)), 0)} more from the "
            "FAILED (where the piles hold them)"
        )
    return True, lines


def first_call_checks(d: Path, data, first: bool, *, by, strata, allocation, budget, population):
    """What `vocab audit` checks before it draws or reads a sample (CalibrationError, one line; the caller keeps no
    directory it created): the slices' column, an allocation kept, and what a first call's sample is drawn by
    (:func:`strata_of_first_call`), which it returns."""

    if by is not None:  # the slices' column, checked before a sample is drawn
        check_column(data, by, d)
    draw_by = strata_of_first_call(data, strata, by, first)
    if draw_by is not None:
        check_strata(data, draw_by[0], d)
        if allocation not in (None, "equal") or budget is not None:
            what = (
                "--strata shares each pile's --per-pile rows over its strata"
                if strata is not None
                else ("--by on a first call draws --per-pile rows for each slice and pile")
            )
            raise CalibrationError(f"{what}; --allocation and --budget split them otherwise: choose one")
        if population != stats.FINITE:
            raise CalibrationError("a sample drawn by strata is corrected for these items only: leave out --population")
        if by is not None and strata is not None and (strata == SCORE or strata != by):
            raise CalibrationError(f"--by {by!r} slices a sample drawn by strata of {by!r} only: give --strata or --by")
    elif strata is not None and sample_strata(d) != strata:
        raise CalibrationError(
            f"{d}: the sample is kept, drawn {drawn(sample_strata(d))}: --strata {strata!r} applies on the first call "
            "(a new directory draws anew)"
        )
    if by is not None and not first:
        check_slicing(d, by)
    if not first:
        check_kept_allocation(d, allocation, budget)
    return draw_by


def strata_of_first_call(data, strata: str | None, by: str | None, first: bool) -> tuple[str, bool] | None:
    """What a first call's sample is drawn by: ``--strata`` (a pile's rows shared over its strata), else an
    imported dataset's ``--by`` column (each slice × pile a stratum of ``--per-pile`` rows: each slice a cell);
    None for a sample drawn per pile (a study run's, seed 000's design; a kept sample)."""
    if not first:
        return None
    if strata is not None:
        return (strata, False)
    stored = data.kind != "run" and data.items is not None and hasattr(data.items, "con")
    return (by, True) if by is not None and stored else None


def drawn(by: str | None) -> str:
    return "per pile" if by is None else f"by strata of {by!r}"
