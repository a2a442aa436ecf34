"""The calibration chain on a finished run, as the demo runs it: the blind sample (as notebook 02 draws it
with its defaults), the script rater, and each configured model as an isolated LLM blind rater, all at once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from vocab.datasets import dask_items
from vocab.datasets.dataset import is_imported, item_files, load_dataset, read_meta
from vocab.datasets.errors import CalibrationError
from vocab.layout import RunDir
from vocab.raters.blind import blind_raters
from vocab.raters.raters import rate_until_complete, write_script_ratings
from vocab.sampling import sample as sm
from vocab.sampling.sample import draw, read_sheet, write_sample

SAMPLE_PER_PILE, SAMPLE_SEED = 10, 0  # notebook 02's defaults: the chain draws the same sample


def calibrate_run(
    cfg,
    run_dir: str | Path,
    raters: list[str],
    max_calls: int | None,
    say: Callable[[str], None],
    per_pile: int = SAMPLE_PER_PILE,
    seed: int = SAMPLE_SEED,
) -> list[str]:
    """Draw the sample, rate it with the script (where the dataset's rubric has one) and with every model in
    ``raters``; returns the raters whose ratings are complete (a rater with rows still unanswered after its
    tries is reported and left out). ``run_dir``: a run or an imported judgments dataset."""
    # deferred: the model client (openai, httpx) loads only when a model is called
    from vocab.serving.client import Clients

    data = load_dataset(run_dir)
    if data.kind == "judgments":
        say(data.describe())
    write_sample(draw(data, per_pile, seed), run_dir)
    if data.rubric.script:
        write_script_ratings(run_dir)
    say(f"blind sample: {len(read_sheet(run_dir))} rows; script rater " + ("done" if data.rubric.script else "none"))

    async def go():
        async with Clients.from_config(cfg, max_calls) as clients:  # the raters run at once: a server each
            return await asyncio.gather(*(rate_until_complete(run_dir, r, clients.get(r)) for r in raters))

    complete = []
    for name, progress in zip(raters, asyncio.run(go()), strict=True):
        if progress.complete:
            complete.append(name)
            say(f"blind rater {name}: {progress.rated} rows")
        else:
            say(
                f"blind rater {name}: {progress.missing} rows still without an answer after 3 tries "
                f"(calibration/rater_{name}_errors.jsonl); left out of the notebooks"
            )
    return complete


def sample_step(
    run_dir,
    *,
    per_pile: int | None,
    budget: int | None,
    allocation: str | None,
    rater: str | None,
    seed: int,
    scheduler: str | None = None,
    jobs: int = 2,
) -> list[str]:
    """`vocab sample`: draw the blind sample (``per_pile`` rows a pile, or a ``budget`` of rows per cell split by
    ``allocation``), or with allocation ``pilot`` extend a rated pilot by ``rater``'s ratings; record how in
    ``calibration/sample.json``. With ``scheduler``, an imported dataset's items are read and its piles numbered on
    that Dask cluster (:class:`vocab.datasets.dask_items.DaskItems`): the same rows. Returns what to tell the
    user."""

    if scheduler is None:
        return _sample_step(run_dir, per_pile, budget, allocation, rater, seed, None)
    from vocab.cluster import dask_client  # deferred: Dask loads only when a cluster is asked for

    meta = read_meta(run_dir) if is_imported(run_dir) else {}
    if "items" not in meta:
        raise CalibrationError(
            f"--scheduler: {run_dir} is not a dataset imported since 2026-12 (its items are not "
            "Parquet): sample it without --scheduler"
        )
    paths = [str(p) for p in item_files(run_dir, meta["items"])]
    with dask_client(scheduler, jobs, dask_items.CHECKED_PACKAGES) as (_, ran):
        said = _sample_step(
            run_dir, per_pile, budget, allocation, rater, seed, dask_items.DaskItems(dask_items.read_parts(paths))
        )
    return [*said, f"(the piles numbered on {ran['scheduler']}, {len(ran['worker_packages'])} workers)"]


def _sample_step(run_dir, per_pile, budget, allocation, rater, seed, on_dask) -> list[str]:
    import dataclasses

    if budget is not None and per_pile is not None:
        raise CalibrationError("--budget and --per-pile: give one (a budget is split between the piles)")
    if allocation is not None and budget is None:
        raise CalibrationError("--allocation needs --budget (the rows per cell to split)")
    if rater is not None and allocation != "pilot":
        raise CalibrationError("--rater is the pilot's rater: only with --allocation pilot")
    allocation = allocation or "equal"
    data = load_dataset(run_dir)
    if on_dask is not None:
        data = dataclasses.replace(data, items=on_dask)
    layout = RunDir(run_dir)
    record = {"seed": seed, "allocation": allocation, "budget": budget}
    said = []
    if allocation == "pilot":
        b = blind_raters(run_dir, [rater] if rater else None, purpose="there is no pilot to allocate from")
        rater = rater or b.lead
        key, sheet = sm.read_key(run_dir), sm.read_sheet(run_dir)
        extra, sizes = sm.extend_sample(
            data, key, b.passes(rater, rubric=data.rubric), budget, seed, data.visible, set(sheet.blind_id)
        )
        sm.write_extension(extra, key, run_dir)
        if layout.script_ratings.exists():  # the script rater covers every row: its verdicts adjudicate
            write_script_ratings(run_dir)
        record |= {"stage": "pilot extension", "pilot_rater": rater, "added": len(extra.key)}
        said.append(
            f"{layout.calibration}: {len(extra.key)} rows added to the {len(key)} of the pilot (allocated by "
            f"{rater}'s ratings); the new rows are at the end of the blind sheet"
        )
    else:
        sizes = sm.cell_sizes(data, budget, allocation) if budget is not None else None
        fresh = not layout.key.exists()
        per_pile = 10 if per_pile is None else per_pile
        out = write_sample(sm.draw(data, per_pile, seed, sizes=sizes), run_dir)
        if not fresh:
            return [f"{out}: the same sample is already there (key.csv, blind_sheet.csv, blind_sheet.jsonl)"]
        said.append(f"{out}: key.csv, blind_sheet.csv, blind_sheet.jsonl")
        record |= {"stage": "draw", "per_pile": None if sizes else per_pile}
    if sizes:
        record["rows_per_cell"] = {c: {"passed": a, "failed": b} for c, (a, b) in sizes.items()}
    sm.write_sample_manifest(run_dir, record)
    return said
