"""The write→critique loop and the design runner.

Per level and cell: the writer drafts a sentence (structured output), the critic grades it on the 12
checks (structured output), and the attempt passes when every check in scope (2-12 by default) is PASSED.
On a fail the writer retries with the critic's failed checks and reasons as feedback, up to
``max_attempts``; a level whose attempts all fail is a **Hard FAIL**. A call that fails before a verdict
exists (any :class:`~vocab.serving.client.ModelCallError`) makes the level **ABANDONED** in that cell: the error is
logged with its kind and the level is never counted as a Hard FAIL.

:func:`run_design` runs every cell over every level concurrently (bounded per endpoint by the clients),
appends each attempt to ``results_<cell>.jsonl`` the moment it has a verdict, and resumes: on a rerun it
reads what is logged and continues each level from its next attempt, so no attempt is redone or duplicated.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from vocab import prompts, rubric
from vocab.config import Config, LoopConfig
from vocab.levels import Level
from vocab.records import (
    JsonlWriter,
    RunDirError,
    cell_name,
    diff,
    fingerprint,
    git_commit,
    level_outcomes,
    machine,
    model_records,
    read_jsonl,
    read_manifest,
    results_path,
    versions,
    write_json_atomic,
)
from vocab.serving.client import RETRY_KINDS, ModelCallError, StructuredResult
from vocab.serving.roundtrip import deployment

log = logging.getLogger(__name__)


class Model(Protocol):
    """What the loop needs of a model: :class:`vocab.serving.client.ModelClient` (or a test's stand-in)."""

    name: str

    async def structured(
        self, messages, schema, schema_name, *, max_tokens=None, sampling=None
    ) -> StructuredResult: ...


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def call_seed(base: int | None, level: int, attempt: int, role: str) -> int | None:
    """A per-call sampling seed derived from the level, attempt and role, so a resumed run asks the same."""
    if base is None:
        return None
    digest = hashlib.sha256(f"{base}:{level}:{attempt}:{role}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def parse_critic(value: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    checks = {c: value[c]["verdict"] for c in rubric.CHECK_IDS}
    reasons = {c: value[c]["reason"] for c in rubric.CHECK_IDS}
    return checks, reasons


@dataclass
class CellProgress:
    attempts: int = 0
    passes: int = 0
    errors: int = 0


@dataclass
class Sinks:
    results: dict[str, JsonlWriter]
    errors: JsonlWriter
    progress: dict[str, CellProgress]
    bars: dict[str, Any]

    def result(self, cell: str, row: dict) -> None:
        self.results[cell].write(row)
        p = self.progress[cell]
        p.attempts += 1
        p.passes += row["verdict"] == "PASSED"
        self._tick(cell)

    def error(self, cell: str, row: dict) -> None:
        self.errors.write(row)
        self.progress[cell].errors += 1
        self._tick(cell)

    def level_done(self, cell: str) -> None:
        bar = self.bars.get(cell)
        if bar is not None:
            bar.update(1)

    def _tick(self, cell: str) -> None:
        bar = self.bars.get(cell)
        if bar is not None:
            p = self.progress[cell]
            bar.set_postfix(attempts=p.attempts, passes=p.passes, errors=p.errors, refresh=False)


async def run_level(
    run_id: str,
    level: Level,
    writer: Model,
    critic: Model,
    loop: LoopConfig,
    logged: list[dict],
    sinks: Sinks,
    writer_sampling=None,
    critic_sampling=None,
) -> str:
    """Run one level in one cell from its next attempt; returns PASSED, HARD_FAIL or ABANDONED."""
    cell = cell_name(writer.name, critic.name)
    scope = rubric.CHECK_IDS if loop.seed_word_in_scope else rubric.SCOPE_DEFAULT
    logged = sorted(logged, key=lambda a: a["attempt"])
    if logged and logged[-1]["verdict"] == "PASSED":
        return "PASSED"
    feedback = None
    if logged:
        last = logged[-1]
        feedback = {
            "sentence": last["sentence"],
            "reasons": last["reasons"],
            "failed": rubric.failed_checks(last["checks"], scope),
        }
    wschema = rubric.writer_schema(len(level.words), level.settings.get("max_sentence_words"))
    cschema = rubric.critic_schema()
    for attempt in range(len(logged) + 1, loop.max_attempts + 1):
        started = now()
        role = "writer"
        try:
            ws = _seeded(writer_sampling, loop, level.level, attempt, "writer")
            draft = await writer.structured(
                prompts.writer_messages(level, feedback),
                wschema,
                "draft",
                max_tokens=loop.writer_max_tokens,
                sampling=ws,
            )
            sentence, key = draft.value["sentence"], draft.value["answer_key"]
            role = "critic"
            cs = _seeded(critic_sampling, loop, level.level, attempt, "critic")
            grade = await critic.structured(
                prompts.critic_messages(level, sentence, key),
                cschema,
                "grade",
                max_tokens=loop.critic_max_tokens,
                sampling=cs,
            )
        except ModelCallError as e:
            sinks.error(
                cell,
                {
                    "run_id": run_id,
                    "cell": cell,
                    "level": level.level,
                    "attempt": attempt,
                    "role": role,
                    "kind": e.kind,
                    "message": e.message,
                    "time": now(),
                    "usage": e.usage.as_dict() if e.usage else None,
                },
            )
            return "ABANDONED"
        checks, reasons = parse_critic(grade.value)
        verdict = "PASSED" if rubric.passes(checks, scope) else "FAILED"
        sinks.result(
            cell,
            {
                "run_id": run_id,
                "cell": cell,
                "writer": writer.name,
                "critic": critic.name,
                "level": level.level,
                "tier": level.tier,
                "attempt": attempt,
                "seed_word": level.seed_word,
                "words": list(level.words),
                "settings": level.settings,
                "sentence": sentence,
                "answer_key": key,
                "checks": checks,
                "reasons": reasons,
                "verdict": verdict,
                "usage": {"writer": draft.usage.as_dict(), "critic": grade.usage.as_dict()},
                "started": started,
                "finished": now(),
            },
        )
        if verdict == "PASSED":
            return "PASSED"
        feedback = {"sentence": sentence, "reasons": reasons, "failed": rubric.failed_checks(checks, scope)}
    return "HARD_FAIL"


def _seeded(sampling, loop: LoopConfig, level: int, attempt: int, role: str):
    if sampling is None:
        return None
    return dataclasses.replace(sampling, seed=call_seed(sampling.seed, level, attempt, role))


# --- the run directory ---------------------------------------------------------------------------------


def design_levels(loop: LoopConfig) -> list[Level]:
    # deferred: the level generator and its word list load only when levels are made
    from vocab.levels import design_numbers, iter_levels

    return list(iter_levels(design_numbers(loop.levels, loop.tiers, loop.per_tier, loop.design_seed)))


def prepare_run_dir(cfg: Config, loop: LoopConfig, run_dir: Path) -> tuple[dict, list[Level]]:
    """Create or reopen a run directory; refuse a config whose data would not mix with what is logged."""
    run_dir = Path(run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise RunDirError(f"{run_dir} is a file, not a run directory: give a new or existing directory")
    levels = design_levels(loop)
    as_dicts = [lv.as_dict() for lv in levels]  # as levels.jsonl holds them
    fp = fingerprint(cfg, loop, as_dicts)
    manifest_path = run_dir / "manifest.json"
    if manifest_path.exists():
        manifest = read_manifest(run_dir)
        changed = diff(manifest.get("fingerprint"), fp)
        if changed:
            raise RunDirError(
                f"{run_dir} holds a run made with a different setup ({', '.join(changed[:6])}"
                f"{' …' if len(changed) > 6 else ''}); use a new --run-dir, or restore that setup to resume"
            )
        logged_levels = read_jsonl(run_dir / "levels.jsonl")
        if logged_levels != as_dicts:
            raise RunDirError(f"{run_dir}/levels.jsonl differs from the levels this design generates")
        # Each resume records when, and with which code and packages, so a run made in several sittings
        # keeps its provenance.
        manifest["resumed"] = [
            *manifest.get("resumed", []),
            {"time": now(), "git_commit": git_commit(), "versions": versions(), "machine": machine()},
        ]
    else:
        if run_dir.exists() and any(run_dir.iterdir()):
            raise RunDirError(f"{run_dir} exists and is not a run directory (no manifest.json); choose another")
        run_dir.mkdir(parents=True, exist_ok=True)
        w = JsonlWriter(run_dir / "levels.jsonl")
        for lv in as_dicts:
            w.write(lv)
        w.close()
        names = sorted(set(loop.writers) | set(loop.critics))
        manifest = {
            "run_id": run_dir.name,
            "fingerprint": fp,
            "cells": fp["cells"],
            "loop": fp["loop"],
            "rubric": fp["rubric"],
            "prompts": fp["prompts"],
            "design": {
                "tiers": loop.tiers,
                "per_tier": loop.per_tier,
                "seed": loop.design_seed,
                "levels": [lv.level for lv in levels],
                "generator_version": levels[0].generator_version if levels else None,
                "lexicon": levels[0].lexicon if levels else None,
            },
            "config": {"path": str(cfg.path), "text": Path(cfg.path).read_text()},
            "models": model_records(cfg, names, {n: deployment(cfg.model(n)) for n in names}),
            "versions": versions(),
            "git_commit": git_commit(),
            "machine": machine(),
            "started": now(),
        }
    manifest["status"] = "running"
    manifest.pop("finished", None)
    write_json_atomic(manifest_path, manifest)
    return manifest, levels


@dataclass(frozen=True)
class RunSummary:
    run_dir: Path
    statuses: dict[str, dict[str, int]]  # cell -> status -> count
    attempts_new: int
    errors_new: int
    seconds: float
    calls: int
    kept_abandoned: int = 0  # under --retry-abandoned: levels the model's own answer abandoned, not asked again

    def text(self) -> str:
        """The summary the command line prints: one line for the run, one per cell."""
        lines = [
            f"run {self.run_dir}: {self.attempts_new} new attempts, {self.errors_new} errors, "
            f"{self.calls} calls in {self.seconds:.0f} s"
        ]
        if self.kept_abandoned:
            lines.append(
                f"  --retry-abandoned: {self.kept_abandoned} levels abandoned by the model's own answer (truncated, "
                "malformed, off the schema) not asked again"
            )
        for cell, counts in self.statuses.items():
            lines.append(f"  {cell}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        return "\n".join(lines)


async def run_design(
    cfg: Config, loop: LoopConfig, run_dir: Path, clients, *, retry_abandoned: bool = False, progress: bool = True
) -> RunSummary:
    """Run (or resume) the whole design in ``run_dir`` with ``clients`` (a :class:`vocab.serving.client.Clients`)."""
    run_dir = Path(run_dir)
    manifest, levels = prepare_run_dir(cfg, loop, run_dir)
    run_id = manifest["run_id"]
    cells = manifest["cells"]
    logged: dict[tuple[str, int], list[dict]] = {}
    all_attempts = []
    for cell in cells:
        for a in read_jsonl(results_path(run_dir, cell)):
            logged.setdefault((cell, a["level"]), []).append(a)
            all_attempts.append(a)
    errors = read_jsonl(run_dir / "errors.jsonl")
    prior = {
        (o["cell"], o["level"]): o
        for o in level_outcomes(all_attempts, errors, cells, [lv.level for lv in levels], loop.max_attempts)
    }
    todo, kept = [], 0
    for w, c in loop.cells:
        cell = cell_name(w, c)
        for lv in levels:
            o = prior[(cell, lv.level)]
            if o["status"] == "PENDING":
                todo.append((w, c, lv))
            elif o["status"] == "ABANDONED" and retry_abandoned:
                if o["error_kind"] in RETRY_KINDS:
                    todo.append((w, c, lv))
                else:
                    kept += 1
    sinks = Sinks(
        {cell: JsonlWriter(results_path(run_dir, cell)) for cell in cells},
        JsonlWriter(run_dir / "errors.jsonl"),
        {cell: CellProgress() for cell in cells},
        {},
    )
    if progress:
        from tqdm import tqdm

        for i, cell in enumerate(cells):
            n = sum(1 for w, c, _ in todo if cell_name(w, c) == cell)
            sinks.bars[cell] = tqdm(total=n, desc=cell, position=i, unit="level", leave=True, dynamic_ncols=True)
    t0 = time.perf_counter()
    calls0 = clients.budget.used

    async def one(w: str, c: str, lv: Level) -> tuple[str, str]:
        cell = cell_name(w, c)
        wc, cc = clients.get(w), clients.get(c)
        status = await run_level(
            run_id, lv, wc, cc, loop, logged.get((cell, lv.level), []), sinks, wc.model.sampling, cc.model.sampling
        )
        sinks.level_done(cell)
        return cell, status

    # Interleave cells so that every endpoint has work from the start.
    order = sorted(range(len(todo)), key=lambda i: (todo[i][2].level, i))
    status = "interrupted"
    try:
        await asyncio.gather(*(one(*todo[i]) for i in order))
        status = "complete"
    finally:
        for wr in [*sinks.results.values(), sinks.errors]:
            wr.close()
        for bar in sinks.bars.values():
            bar.close()
        attempts = [a for cell in cells for a in read_jsonl(results_path(run_dir, cell))]
        errors = read_jsonl(run_dir / "errors.jsonl")
        outcomes = level_outcomes(attempts, errors, cells, [lv.level for lv in levels], loop.max_attempts)
        if status == "complete" and any(o["status"] == "PENDING" for o in outcomes):
            status = "interrupted"
        manifest["status"] = status
        manifest["finished"] = now()
        manifest["counts"] = {"attempts": len(attempts), "errors": len(errors)}
        write_json_atomic(run_dir / "manifest.json", manifest)
    statuses: dict[str, dict[str, int]] = {cell: {} for cell in cells}
    for o in outcomes:
        statuses[o["cell"]][o["status"]] = statuses[o["cell"]].get(o["status"], 0) + 1
    return RunSummary(
        run_dir,
        statuses,
        sum(p.attempts for p in sinks.progress.values()),
        sum(p.errors for p in sinks.progress.values()),
        time.perf_counter() - t0,
        clients.budget.used - calls0,
        kept,
    )


def run(
    cfg: Config,
    loop: LoopConfig,
    run_dir: Path,
    *,
    max_calls: int | None = None,
    retry_abandoned: bool = False,
    progress: bool = True,
) -> RunSummary:
    """:func:`run_design` with the config's own clients (one call budget), from synchronous code."""
    # deferred: the model client (openai, httpx) loads only when a model is called
    from vocab.serving.client import Clients

    if max_calls is not None and max_calls < 0:
        raise ValueError(f"max_calls must be non-negative, got {max_calls}")

    async def go() -> RunSummary:
        async with Clients.from_config(cfg, max_calls) as clients:
            return await run_design(cfg, loop, run_dir, clients, retry_abandoned=retry_abandoned, progress=progress)

    return asyncio.run(go())
