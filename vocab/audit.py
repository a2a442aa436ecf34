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

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from vocab import stats
from vocab.audit_sample import (
    check_allocation,
    draw_lines,
    extend_pilot,
    first_call_checks,
    pilot_pending,
    pilot_people,
)
from vocab.datasets.dataset import is_imported
from vocab.estimates.stopping import check_target
from vocab.layout import RunDir
from vocab.sampling.sample import CalibrationError

TABLE_SUFFIXES = (".csv", ".jsonl")
INSPECT_SUFFIXES = (".eval", ".json")


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


def _json_kind(source: Path) -> str:
    """A .json source: promptfoo's results (``results.results`` a list) or an Inspect log. Read whole, within the
    import's own size limit (the import reads it again: a second read of at most 64 MiB)."""
    import json

    from vocab.files import check_json_cost, read_bytes
    from vocab.imports import MAX_JSON_LOG

    if source.stat().st_size > MAX_JSON_LOG:  # too large to read whole: promptfoo's results name their eval first
        with source.open("rb") as f:
            return "promptfoo" if b'"evalId"' in f.read(65536) else "inspect"  # its reader refuses it, with the size
    data = read_bytes(source, MAX_JSON_LOG, "file", CalibrationError)
    check_json_cost(data, source, CalibrationError)
    try:
        doc = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return "inspect"  # its reader names the problem
    inner = doc.get("results") if isinstance(doc, dict) else None
    if isinstance(inner, dict) and isinstance(inner.get("results"), list):
        return "promptfoo"
    if isinstance(doc, dict) and (isinstance(doc.get("traces"), list) or isinstance(doc.get("info"), dict)):
        return "mlflow"
    if isinstance(doc, dict) and ("testCases" in doc or isinstance(doc.get("testRunData"), dict)):
        return "deepeval"
    return "inspect"


def _jsonl_kind(source: Path) -> str:
    """A .jsonl source: MLflow traces (``Trace.to_json()`` a line: an ``info`` object) or a table's rows."""
    import json

    with source.open("rb") as f:
        for line in f:
            if line.strip():
                try:
                    first = json.loads(line)
                except (ValueError, RecursionError):
                    return "table"  # its reader names the problem
                return "mlflow" if isinstance(first, dict) and isinstance(first.get("info"), dict) else "table"
    return "table"


def _dataset_dir(source: Path, out: Path | None, say, import_kw: dict, kind: str | None = None) -> Path:
    if source.is_dir():
        if kind is not None:
            raise CalibrationError(f"{source} is a directory: --source is for a file")
        if out is not None and out.resolve() != source.resolve():
            raise CalibrationError(f"{source} is a directory: it is audited in place (leave out --out)")
        if not ((source / "manifest.json").exists() or is_imported(source)):
            raise CalibrationError(
                f"{source} holds neither a run (manifest.json) nor an imported dataset (dataset.json)"
            )
        return source
    if out is None:
        raise CalibrationError(f"{source} is a file: name a new directory for its dataset with --out")
    from vocab.files import check_file

    check_file(source, "file", CalibrationError)
    suffix = source.suffix.lower()
    if kind is None and suffix == ".json":
        kind = _json_kind(source)
    if kind is None and suffix == ".jsonl":
        kind = _jsonl_kind(source)
    from vocab.imports.registry import HARNESSES, files_text, harness

    kind_of = kind or ("inspect" if suffix in INSPECT_SUFFIXES else "table")
    options = {h.name: h.option for h in HARNESSES if h.option}
    for other, kw in import_kw.items():  # an option of another harness's file is named, never ignored
        given = [k for k, v in kw.items() if v is not None and k != "seed"]
        if other != kind_of and given:
            raise CalibrationError(f"{options.get(other, given[0])} is for {other} files; {source} reads as "
                                   f"{kind_of} (leave it out, or name the kind with --source)")  # fmt: skip
    if kind is None and suffix in INSPECT_SUFFIXES:
        kind = "inspect"
    elif kind is None and suffix in TABLE_SUFFIXES:
        kind = "table"
    if kind is None:
        raise CalibrationError(
            f"{source}: unknown kind of source {suffix or '(no suffix)'!r} ({files_text()}, or a run or dataset "
            "directory; or say which with --source)"
        )
    harness(kind).reader()(source, out, **import_kw.get(kind, {}))
    from vocab.imports import summary

    say(summary(out))
    return out


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
    """The audit (see the module's note). ``allocation`` splits a cell's labels between the judge's piles on the
    first call (:func:`draw_lines`); with ``pilot`` a later call, once the pilot's rows are rated, draws the rest of
    ``budget`` (:func:`extend_pilot`). Returns what the CLI prints."""
    import asyncio

    from vocab.datasets.dataset import load_dataset
    from vocab.raters.packet import check_rater_name, make_packet
    from vocab.raters.raters import read_ratings, write_script_ratings
    from vocab.sampling.sample import read_sheet, sample_stages

    source = Path(source)
    check_allocation(allocation, per_pile, budget)
    machines = {"script", *(m.lower() for m in llm_raters)}
    for name in raters:  # before anything is written
        check_rater_name(name)
        if name.lower() in machines:
            raise CalibrationError(f"rater name {name!r} belongs to a machine rater; choose another")
    if llm_raters and cfg is None:
        raise CalibrationError("LLM raters need a config (--config) naming them")
    for name in llm_raters:
        cfg.model(name)
    # a dataset this call imports (a file into an --out that held none) is not kept when a check below refuses
    fresh = not source.is_dir() and out is not None and not is_imported(out)
    d = _dataset_dir(source, Path(out) if out is not None else None, say, import_kw or {}, source_kind)
    for name in raters:
        check_rater_name(name, d)
    data = load_dataset(d)
    first = not RunDir(d).key.exists()
    try:
        draw_by = first_call_checks(d, data, first, by=by, strata=strata, allocation=allocation, budget=budget,
                                    population=population)  # fmt: skip
    except CalibrationError:
        if fresh:
            import shutil

            shutil.rmtree(d)
        raise
    if not first:
        from vocab.sampling.labelled import labels_note

        kept = "labelled in the source, not drawn by vocab" if labels_note(d) else "already drawn"
        say(f"blind sample: kept ({len(read_sheet(d))} rows {kept})")
    else:
        for line in draw_lines(d, data, per_pile, seed, allocation, budget, draw_by):
            say(line)
    result = Audit(d, len(read_sheet(d)))
    if data.rubric.script and not RunDir(d).script_ratings.exists():
        write_script_ratings(d)
        say("script rater: done (the checks a script decides)")

    def hand_out(names) -> None:
        for name in names:
            result.packets[name] = make_packet(d, name, seed=seed)
            say(
                f"packet for {name}: {result.packets[name].with_suffix('.zip')} (hand it to {name}, who opens "
                f"{result.packets[name].name}/rate.html from it in a browser)"
            )

    def rate_by_llms() -> None:
        if not llm_raters:
            return
        from vocab.raters.raters import rate_until_complete
        from vocab.serving.client import Clients

        async def go():
            async with Clients.from_config(cfg, max_calls) as clients:
                return await asyncio.gather(*(rate_until_complete(d, r, clients.get(r)) for r in llm_raters))

        for name, progress in zip(llm_raters, asyncio.run(go()), strict=True):
            say(
                f"LLM rater {name}: {progress.rated} rows"
                + ("" if progress.complete else f", {progress.missing} unanswered")
            )

    hand_out(raters)
    rate_by_llms()
    humans = list(raters)
    pilot = pilot_pending(d)
    if pilot is not None or len(sample_stages(d)) > 1:  # a pilot's people are handed each stage's packet
        humans = sorted({*raters, *pilot_people(d)})
    if pilot is not None:
        extended, lines_ = extend_pilot(d, pilot, seed, humans)
        for line in lines_:
            say(line)
        if extended:
            result.sample_rows = len(read_sheet(d))
            hand_out(humans)
            rate_by_llms()
        else:
            result.pilot_waiting = lines_[-1]
    n = result.sample_rows
    ratings = []
    for f in RunDir(d).ratings_files():
        name = RunDir.rater_of(f)
        rows = len(read_ratings(d, name))
        result.rated[name] = "complete" if rows == n else f"{rows} of {n} rows"
        if name != "script":
            ratings.append(name)
    for name in humans:
        result.rated.setdefault(name, "none")
    if ratings:  # the sentences `vocab report` puts on top, from the same functions (the rest is the report's)
        from vocab import report
        from vocab.estimates.compare import comparisons, lines
        from vocab.estimates.correct import corrected

        c = corrected(d, ratings, population=population)
        result.headline = report.headline_lines(d, c)
        found = comparisons(c.data, c.key, c.passes, raters=[c.lead], seed=c.seed, n_boot=c.n_boot,
                            population=population)[c.lead]  # fmt: skip
        if len(found.pairs):  # two or more cells the lead rater corrects: `vocab compare`'s lines
            result.comparisons = lines(found)
        if by is not None:  # each cell's slices: `vocab compare --by`'s lines
            from vocab.estimates import slices

            s = slices.slice_data(c.data, c.key, by, d)
            result.slices = slices.lines(
                slices.slice_estimates(
                    s, c.passes[c.lead], rater=c.lead, seed=c.seed, n_boot=c.n_boot, population=population
                )
            )
        if target_half_width is not None:  # whether to stop labelling, by the anytime-valid interval
            from vocab.estimates.stopping import stopping

            result.stopping = [s.line() for s in stopping(c, target_half_width)]
    waiting = [n for n in humans if result.rated.get(n) != "complete"]
    machines_waiting = []
    if len(sample_stages(d)) > 1:  # a grown sample: every rater of the pilot has the new rows to rate
        from vocab.raters.packet import llm_raters as machine_raters

        machine = {m.lower() for m in machine_raters(d)} | {"script"}
        late = [n for n, state in sorted(result.rated.items()) if state != "complete"]
        waiting += [n for n in late if n.lower() not in machine and n not in waiting]
        machines_waiting = [n for n in late if n.lower() in machine and n != "script"]
    if result.pilot_waiting and not waiting:
        result.next_step = result.pilot_waiting
    elif machines_waiting and not waiting:
        result.next_step = (f"the LLM raters {', '.join(machines_waiting)} have rows to rate (a pilot's second stage): "
                            f"`vocab audit {d} --llm-raters {','.join(machines_waiting)} --config CONFIG`")  # fmt: skip
    elif waiting:
        result.next_step = (
            f"hand each packet to its rater ({', '.join(waiting)}); then, with the ratings.csv each sends back, "
            + ", ".join(f"`vocab ratings import ratings.csv --run-dir {d} --rater {n} --partial`" for n in waiting)
            + f", and `vocab audit {d}` again "
            + (
                "to draw the rest of the sample once the pilot is rated"
                if result.pilot_waiting
                else "for the corrected rate"
            )
        )
    elif not ratings:
        result.next_step = (
            f"name a human rater (--raters NAME) or an LLM rater (--llm-raters MODEL): `vocab audit {d} ...`"
        )
    else:
        flag, param = "", ""
        if population != stats.DEFAULT_POPULATION:  # the next commands answer the same question
            flag, param = f" --population {population}", f" -p population {population}"
        result.next_step = (
            f"a report to share: `vocab report {d}{flag}`; the full tables: `papermill notebooks/03_correct.ipynb "
            f"out.ipynb --cwd notebooks -p run_dir {Path(d).resolve()} -p raters {','.join(ratings)}{param}`"
        )
    return result


def audit_locked(source: Path, out: Path | None, *, raters, llm_raters, config, per_pile: int | None, seed: int,
                 max_calls, source_kind, scorer, assertion, feedback=None, metric=None,
                 population: str = stats.DEFAULT_POPULATION, allocation: str | None = None,
                 budget: int | None = None, target_half_width: float | None = None,
                 by: str | None = None, strata: str | None = None) -> Audit:  # fmt: skip
    """`vocab audit`: :func:`audit` with its options checked and the dataset directory's lock held while it runs."""
    from vocab.config import load_config
    from vocab.records import dir_lock

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
            raise CalibrationError(f"{source} is a directory: --scorer, --assertion, --feedback and --metric are for "
                                   "an imported file")  # fmt: skip
        kw = {"inspect": {"scorer": scorer}, "promptfoo": {"assertion": assertion},
              "mlflow": {"feedback": feedback, "seed": seed}, "deepeval": {"metric": metric}}  # fmt: skip
        return audit(source, out, raters=raters, llm_raters=llm_raters, cfg=cfg, per_pile=per_pile, seed=seed,
                     max_calls=max_calls, source_kind=source_kind, import_kw=kw, population=population,
                     allocation=allocation, budget=budget, target_half_width=target_half_width, by=by,
                     strata=strata)  # fmt: skip
