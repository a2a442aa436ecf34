"""The calibration chain on a finished run, as the demo runs it: the blind sample (as notebook 02 draws it
with its defaults), the script rater, and each configured model as an isolated LLM blind rater, all at once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from vocab.calibration.raters import rate_until_complete, write_script_ratings
from vocab.calibration.sample import draw_sample, read_sheet, write_sample

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
    from vocab.calibration.dataset import load_dataset
    from vocab.serving.client import Clients

    data = load_dataset(run_dir)
    if data.kind == "judgments":
        say(data.describe())
    write_sample(draw_sample(data.attempts, per_pile, seed, data.visible), run_dir)
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
