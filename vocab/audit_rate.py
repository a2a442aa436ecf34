"""The audit's raters (`vocab audit`'s step after the sample): the script rater where the rubric has one, a packet
for each person named, the LLM raters (their servers must be up), a pilot's second stage once the pilot is rated,
and who has rated how much. Handed the dataset and the sample as the audit read them (:class:`Sampled`); returns
what it did and what the estimates read (:class:`Rated`), printing nothing but the progress lines it hands ``say``."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from vocab.audit_sample import Sampled, extend_pilot, pilot_people
from vocab.layout import RunDir
from vocab.raters.loaded import Loaded, load
from vocab.raters.packet import llm_raters as machine_raters
from vocab.raters.packet import make_packet
from vocab.raters.raters import rate_until_complete, write_script_ratings
from vocab.sampling.drawn import read_drawn


@dataclass
class Rated:
    """``loaded``: the dataset, the sample and the ratings, each read once (read again only after a pilot's second
    stage grew the sample); ``rated``: each rater's state (``complete``, ``N of M rows`` or ``none``); ``ratings``:
    the blind raters with a file (the script's left out); ``waiting``: the people, and ``machines_waiting`` the LLM
    raters, with rows still to rate; ``pilot_waiting``: what a pilot's second stage waits for."""

    loaded: Loaded
    packets: dict[str, Path] = field(default_factory=dict)
    rated: dict[str, str] = field(default_factory=dict)
    ratings: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    machines_waiting: list[str] = field(default_factory=list)
    pilot_waiting: str = ""

    @property
    def sample_rows(self) -> int:
        return len(self.loaded.drawn.sheet)


def rate_step(
    d: Path,
    data,
    sampled: Sampled,
    *,
    raters: tuple[str, ...],
    llm_raters: tuple[str, ...],
    cfg,
    max_calls: int | None,
    seed: int,
    say: Callable[[str], None],
) -> Rated:
    """The raters' step of `vocab audit` (see the module's note)."""
    drawn = sampled.drawn
    if data.rubric.script and not RunDir(d).script_ratings.exists():
        write_script_ratings(d, drawn.sheet)
        say("script rater: done (the checks a script decides)")
    packets: dict[str, Path] = {}

    def hand_out(names) -> None:
        for name in names:
            packets[name] = make_packet(d, name, seed=seed, drawn=drawn)
            say(
                f"packet for {name}: {packets[name].with_suffix('.zip')} (hand it to {name}, who opens "
                f"{packets[name].name}/rate.html from it in a browser)"
            )

    def rate_by_llms() -> None:
        if not llm_raters:
            return
        from vocab.serving.client import Clients  # the model client: only when an LLM rater is named

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
    if sampled.pilot is not None or len(drawn.stages) > 1:  # a pilot's people are handed each stage's packet
        humans = sorted({*raters, *pilot_people(d)})
    loaded = load(d, data=data, drawn=drawn)  # the ratings as well, each file read once from here on
    pilot_waiting = ""
    if sampled.pilot is not None:
        extended, lines = extend_pilot(d, sampled.pilot, seed, humans, loaded)
        for line in lines:
            say(line)
        if extended:  # the sample grew: read anew
            drawn = read_drawn(d)
            loaded = load(d, data=data, drawn=drawn)
            hand_out(humans)
            rate_by_llms()
        else:
            pilot_waiting = lines[-1]
    result = Rated(loaded, packets, pilot_waiting=pilot_waiting)
    n = result.sample_rows
    for f in RunDir(d).ratings_files():
        name = RunDir.rater_of(f)
        rows = len(loaded.ratings(name))
        result.rated[name] = "complete" if rows == n else f"{rows} of {n} rows"
        if name != "script":
            result.ratings.append(name)
    for name in humans:
        result.rated.setdefault(name, "none")
    result.waiting = [n for n in humans if result.rated.get(n) != "complete"]
    if len(drawn.stages) > 1:  # a grown sample: every rater of the pilot has the new rows to rate
        machine = {m.lower() for m in machine_raters(d)} | {"script"}
        late = [n for n, state in sorted(result.rated.items()) if state != "complete"]
        result.waiting += [n for n in late if n.lower() not in machine and n not in result.waiting]
        result.machines_waiting = [n for n in late if n.lower() in machine and n != "script"]
    return result
