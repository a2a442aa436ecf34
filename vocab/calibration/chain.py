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
    cfg, run_dir: str | Path, raters: list[str], max_calls: int | None, say: Callable[[str], None]
) -> list[str]:
    """Draw the sample, rate it with the script and with every model in ``raters``; returns the raters whose
    ratings are complete (a rater with rows still unanswered after its tries is reported and left out)."""
    from vocab.records import load_run
    from vocab.serving.client import Clients

    write_sample(draw_sample(load_run(run_dir).attempts, SAMPLE_PER_PILE, SAMPLE_SEED), run_dir)
    write_script_ratings(run_dir)
    say(f"blind sample: {len(read_sheet(run_dir))} rows; script rater done")

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
