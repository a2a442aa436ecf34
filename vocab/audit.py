"""`vocab audit`: one command from a judge's verdicts to the blind raters' packets, and, once ratings are back, to the
judge's corrected rate.

SOURCE is an Inspect log (``.eval``, or ``.json``), a promptfoo results file (``.json``), a judgments table
(``.csv``, ``.jsonl``) or a directory that already holds a run or an imported dataset; a ``.json`` file is told
apart by its contents (``--source`` says it outright). The audit imports the file into ``--out`` (a directory
is audited in place), draws the stratified blind sample, rates it with the script where the rubric has one,
writes a packet per named human rater, runs the named LLM raters (their servers must be up), and says what comes
next. Run again after ratings come back (``vocab ratings import``), it reports the corrected rate per cell with
its interval (the same functions as ``03_correct``). Nothing already written is redrawn: an existing sample,
packet or rating file is kept.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from vocab import report, reprs, stats
from vocab.audit_rate import Rated, rate_step
from vocab.audit_sample import check_allocation, sample_step
from vocab.config import load_config
from vocab.datasets.dataset import load_dataset
from vocab.estimates import slices
from vocab.estimates.compare import comparisons
from vocab.estimates.compare_text import lines
from vocab.estimates.correct import corrected
from vocab.estimates.stopping import check_target, stopping
from vocab.imports.sniff import import_source
from vocab.raters.packet import check_rater_name
from vocab.records import dir_lock
from vocab.sampling.sample import CalibrationError


def _num(x) -> float | None:
    """A number for JSON: None where it is undefined (NaN)."""
    return None if x is None or x != x else float(x)


@dataclass
class Audit:
    dir: Path
    sample_rows: int
    packets: dict[str, Path] = field(default_factory=dict)
    rated: dict[str, str] = field(default_factory=dict)  # rater -> "complete" | "N of M rows" | "none"
    headline: list[str] = field(default_factory=list)  # one sentence per cell, once a rater has rated
    comparisons: list[str] = field(default_factory=list)  # every pair of cells the lead rater corrects, a line each
    slices: list[str] = field(default_factory=list)  # with --by: each cell's slices (`vocab compare --by`'s lines)
    next_step: str = ""
    pilot_waiting: str = ""  # a pilot allocation whose pilot is not rated yet: what the second stage waits for
    stopping: list[str] = field(default_factory=list)  # with a target half-width: whether to stop, a line a cell
    corrected: object | None = None  # the correction the headline was read from (vocab.estimates.correct.Corrected)

    def json(self) -> dict:
        """`vocab audit --json`: the lead rater's corrected rates as one object (cells empty before any rating)."""
        c = self.corrected
        cells = []
        if c is not None:
            for r in c.table[c.table.rater == c.lead].itertuples():
                cells.append(
                    {
                        "cell": r.cell,
                        "raw": _num(r.p),
                        **{
                            name: {"estimate": _num(est), "ci_low": _num(lo), "ci_high": _num(hi)}
                            for name, est, lo, hi in (
                                ("corrected", r.theta, r.ci_low, r.ci_high),
                                ("q1", r.q1, r.q1_low, r.q1_high),
                                ("q0", r.q0, r.q0_low, r.q0_high),
                            )
                        },
                    }
                )
        return {
            "kind": "binary",
            "rater": None if c is None else c.lead,
            "population": None if c is None else c.population,
            "sample_rows": self.sample_rows,
            "rated": dict(sorted(self.rated.items())),
            "cells": cells,
            "next": self.next_step,
        }

    def lines(self) -> list[str]:
        """What `vocab audit` prints: who has rated, the headline, the comparisons, slices, stopping, the next step."""
        rated = [f"ratings {name}: {state}" for name, state in sorted(self.rated.items())]
        return [*rated, *self.headline, *self.comparisons, *self.slices, *self.stopping, f"next: {self.next_step}"]

    def __repr__(self) -> str:
        return reprs.text([f"audit of {self.dir} ({self.sample_rows} sampled rows)", *self.lines()])

    def _repr_html_(self) -> str:
        return reprs.summary_html(f"audit of {self.dir} ({self.sample_rows} sampled rows)", self.lines())


def check_request(raters: tuple[str, ...], llm_raters: tuple[str, ...], cfg) -> None:
    """The raters asked for, checked before anything is written (one line each): each person's name by the form's
    rule and not a machine rater's, and a config naming every LLM rater."""
    machines = {"script", *(m.lower() for m in llm_raters)}
    for name in raters:
        check_rater_name(name)
        if name.lower() in machines:
            raise CalibrationError(f"rater name {name!r} belongs to a machine rater; choose another")
    if llm_raters and cfg is None:
        raise CalibrationError("LLM raters need a config (--config) naming them")
    for name in llm_raters:
        cfg.model(name)


def audit(
    source: str | Path,
    out: str | Path | None = None,
    *,
    raters: tuple[str, ...] = (),
    llm_raters: tuple[str, ...] = (),
    cfg=None,
    per_pile: int | None = None,
    seed: int = 0,
    max_calls: int | None = None,
    say: Callable[[str], None] = print,
    import_kw: dict | None = None,
    source_kind: str | None = None,
    population: str = stats.DEFAULT_POPULATION,
    allocation: str | None = None,
    budget: int | None = None,
    target_half_width: float | None = None,
    by: str | None = None,
    strata: str | None = None,
) -> Audit:
    """The audit (see the module's note), its options checked (:func:`audit_locked` checks them). It strings the
    stages together, each handed what the one before read: the import (:func:`vocab.imports.sniff.import_source`),
    the dataset (read once), the sample (:func:`vocab.audit_sample.sample_step`: drawn on the first call, read
    once), the raters (:func:`vocab.audit_rate.rate_step`), then the estimates from what those read. ``allocation``
    splits a cell's labels between the judge's piles on the first call; with ``pilot`` a later call, once the
    pilot's rows are rated, draws the rest of ``budget``. Returns what the CLI prints; ``say`` gets each step's
    lines as it ends."""
    imported = import_source(Path(source), Path(out) if out is not None else None, import_kw or {}, source_kind)
    d = imported.dir
    if imported.summary is not None:
        say(imported.summary)
    data = load_dataset(d)
    try:
        sampled = sample_step(
            d,
            data,
            raters=raters,
            per_pile=per_pile,
            seed=seed,
            allocation=allocation,
            budget=budget,
            population=population,
            by=by,
            strata=strata,
        )
    except CalibrationError:  # refused before anything was drawn: a dataset this call imported is not kept
        if imported.fresh:
            shutil.rmtree(d)
        raise
    for line in sampled.lines:
        say(line)
    rated = rate_step(
        d, data, sampled, raters=raters, llm_raters=llm_raters, cfg=cfg, max_calls=max_calls, seed=seed, say=say
    )
    result = Audit(d, rated.sample_rows, rated.packets, rated.rated, pilot_waiting=rated.pilot_waiting)
    if rated.ratings:  # the sentences `vocab report` puts on top, from the same functions (the rest is the report's)
        c = corrected(d, rated.ratings, population=population, loaded=rated.loaded)
        found = comparisons(
            c.data, c.key, c.passes, raters=[c.lead], seed=c.seed, n_boot=c.n_boot, population=population
        )[c.lead]
        if len(found.pairs):  # two or more cells the lead rater corrects: `vocab compare`'s lines
            result.comparisons = lines(found)
        if by is not None:  # each cell's slices: `vocab compare --by`'s lines
            s = slices.slice_data(c.data, c.key, by, d)
            result.slices = slices.lines(
                slices.slice_estimates(
                    s, c.passes[c.lead], rater=c.lead, seed=c.seed, n_boot=c.n_boot, population=population
                )
            )
        if target_half_width is not None:  # whether to stop labelling, by the anytime-valid interval
            result.stopping = [s.line() for s in stopping(c, target_half_width)]
        result.headline = report.headline_lines(d, c)
        result.corrected = c
    result.next_step = next_step(d, rated, population, data.kind)
    return result


def next_step(d: Path, rated: Rated, population: str, kind: str = "judgments") -> str:
    """What the user does next: hand out packets, run the LLM raters on a pilot's new rows, draw a pilot's second
    stage, name a rater, or (everything rated) share the report."""
    waiting, machines_waiting = rated.waiting, rated.machines_waiting
    if rated.pilot_waiting and not waiting:
        return rated.pilot_waiting
    if machines_waiting and not waiting:
        return (
            f"the LLM raters {', '.join(machines_waiting)} have rows to rate (a pilot's second stage): "
            f"`vocab audit {d} --llm-raters {','.join(machines_waiting)} --config CONFIG`"
        )
    if waiting:
        return (
            f"hand each packet to its rater ({', '.join(waiting)}); then, with the ratings.csv each sends back, "
            + ", ".join(f"`vocab ratings import ratings.csv --run-dir {d} --rater {n} --partial`" for n in waiting)
            + f", and `vocab audit {d}` again "
            + (
                "to draw the rest of the sample once the pilot is rated"
                if rated.pilot_waiting
                else "for the corrected rate"
            )
        )
    if not rated.ratings:
        return f"name a human rater (--raters NAME) or an LLM rater (--llm-raters MODEL): `vocab audit {d} ...`"
    flag, param = "", ""
    if population != stats.DEFAULT_POPULATION:  # the next commands answer the same question
        flag, param = f" --population {population}", f" -p population {population}"
    if kind != "run":  # an imported dataset: the auditor's notebook, in the dataset's own words
        return (
            f"a report to share: `vocab report {d}{flag}`; to explore it: `papermill notebooks/10_audit.ipynb "
            f"out/10_audit.ipynb --cwd notebooks -p dataset_dir {Path(d).resolve()}{param}` "
            f"(or `vocab.open({str(d)!r})` in Python)"
        )
    return (
        f"a report to share: `vocab report {d}{flag}`; the full tables: `papermill notebooks/03_correct.ipynb "
        f"out/03_correct.ipynb --cwd notebooks -p run_dir {Path(d).resolve()} -p raters {','.join(rated.ratings)}"
        f"{param}`"
    )


def audit_locked(
    source: Path,
    out: Path | None,
    *,
    raters,
    llm_raters,
    config,
    per_pile: int | None,
    seed: int,
    max_calls,
    source_kind,
    scorer,
    assertion,
    feedback=None,
    metric=None,
    population: str = stats.DEFAULT_POPULATION,
    allocation: str | None = None,
    budget: int | None = None,
    target_half_width: float | None = None,
    by: str | None = None,
    strata: str | None = None,
    say: Callable[[str], None] = print,
) -> Audit:
    """`vocab audit`: :func:`audit` with its options checked (before anything is written) and the dataset
    directory's lock held while it runs."""
    check_allocation(allocation, per_pile, budget)
    check_target(target_half_width)
    if max_calls is not None and max_calls < 0:
        raise CalibrationError(f"--max-calls must be non-negative, got {max_calls}")
    cfg = load_config(config) if llm_raters else None
    target = source if source.is_dir() else out
    if target is None:
        raise CalibrationError(f"{source} is a file: name a new directory for its dataset with --out")
    with dir_lock(target):
        if source.is_dir() and (scorer or assertion or feedback or metric):
            raise CalibrationError(
                f"{source} is a directory: --scorer, --assertion, --feedback and --metric are for an imported file"
            )
        check_request(raters, llm_raters, cfg)
        kw = {
            "inspect": {"scorer": scorer},
            "promptfoo": {"assertion": assertion},
            "mlflow": {"feedback": feedback, "seed": seed},
            "deepeval": {"metric": metric},
        }
        return audit(
            source,
            out,
            raters=raters,
            llm_raters=llm_raters,
            cfg=cfg,
            per_pile=per_pile,
            seed=seed,
            max_calls=max_calls,
            source_kind=source_kind,
            import_kw=kw,
            population=population,
            allocation=allocation,
            budget=budget,
            target_half_width=target_half_width,
            by=by,
            strata=strata,
            say=say,
        )
