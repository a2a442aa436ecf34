"""Running the judge exam against real critics, and its tables.

``vocab exam planted`` and ``vocab exam pairwise`` call this module. An exam runs only under a registered
entry (:mod:`vocab.exam.registry`): its parameters are built from the command line by :func:`planted_params` /
:func:`pairwise_params` and must equal an entry's, for every judge. Results go to
``<run_dir>/exams/<entry id>/``:

- ``items.jsonl``: one line per judged item and judge, with the entry id and hash it ran under, the
  prompt's SHA-256, the seed, the judge's verdicts and reasons, the raw answer text and usage;
- ``errors.jsonl``: each failed call with its kind (an item with an error has no verdict and is not
  scored); ``skipped.jsonl``: what was not asked and why (a defect with no mechanical edit for a source,
  or the call budget);
- ``exam.json``: the entry, the sources, counts, versions and status.

A rerun asks only what has no line in ``items.jsonl`` yet. Every call is seeded from its prompt's hash,
so byte-identical prompts are asked with the same seed and must get the same answer: the determinism
probe (:func:`determinism`) reports every pair of identical requests whose answers differ. A baseline
item judged by the critic that graded its source in the run is asked with the run's own seed, so its
verdict must reproduce the logged one.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pandas as pd

from vocab import prompts, rubric
from vocab.config import ConfigError
from vocab.exam import metrics, pairwise, planted
from vocab.exam.jobs import Job, now, prompt_seed, prompt_sha, run_identity
from vocab.exam.pairwise import PAIRWISE_MAX_TOKENS
from vocab.exam.registry import find, register, verify
from vocab.exam.tournament import (
    TOURNAMENT_METRICS,
    tournament_jobs,
    tournament_pairs,
    tournament_params,
    writer_answers,
)
from vocab.loop import call_seed, parse_critic
from vocab.records import JsonlWriter, load_run, machine, read_jsonl, versions, write_json_atomic
from vocab.serving.client import RETRY_KINDS, BudgetExhausted, ModelCallError

PLANTED_METRICS = {
    "verdict_recall": "share of defect variants the judge FAILED (any of checks 2-12)",
    "on_target_recall": "share of defect variants whose targeted check the judge FAILED",
    "reason_names_edit": (
        "share of defect variants whose targeted check was FAILED with a reason naming the edited word"
    ),
    "false_positive_rate": "share of clean controls the judge FAILED",
    "baseline_reproduced": "share of byte-identical baselines of run sources whose verdict equals the logged one",
}
PAIRWISE_METRICS = {
    "tie_rate": "share of null pairs (same answer twice) answered tie",
    "balanced_accuracy": "mean over the two presentation orders of the share of known pairs answered right",
    "position_consistency": "share of known pairs with the same winner by identity under both orders",
    "first_slot_rate": "share of non-tie answers that pick the first slot",
}
THRESHOLDS = {"tie_rate": metrics.TIE_RATE_MIN, "balanced_accuracy": metrics.BALANCED_ACCURACY_MIN}


def planted_params(run_dir, judges, n_sources, seed, max_calls, reference_answers, critic_max_tokens) -> dict:
    return {
        "exam": "planted",
        "exam_version": metrics.EXAM_VERSION,
        **run_identity(run_dir),
        "judges": sorted(judges),
        "n_sources": n_sources,
        "seed": seed,
        "max_calls": max_calls,
        "reference_answers": reference_answers,
        "critic_max_tokens": critic_max_tokens,
        "rubric": rubric.RUBRIC_VERSION,
        "critic_prompt": prompts.prompt_hashes()["critic"],
    }


def pairwise_params(run_dir, judges, n_pairs, seed, max_calls, reference_answers) -> dict:
    return {
        "exam": "pairwise",
        "exam_version": metrics.EXAM_VERSION,
        **run_identity(run_dir),
        "judges": sorted(judges),
        "n_pairs": n_pairs,
        "seed": seed,
        "max_calls": max_calls,
        "reference_answers": reference_answers,
        "variants": [list(v) for v in metrics.VARIANTS],
        "max_tokens": PAIRWISE_MAX_TOKENS,
        "prompt": pairwise.pairwise_prompt_hash(),
    }


def source_pool(run_dir: str | Path, reference_answers: bool) -> list[planted.Source]:
    run_dir = Path(run_dir)
    levels = {lv["level"]: lv for lv in read_jsonl(run_dir / "levels.jsonl")}
    pool = planted.run_sources(load_run(run_dir).attempts, levels)
    if reference_answers:
        pool += planted.reference_answers(levels)
    return pool


def planted_jobs(sources: list[planted.Source], judges: list[str], sampling_seeds: dict, loop_seed_of) -> tuple:
    """The exam's calls for ``sources``: every variant for every judge, and the skipped defects."""
    jobs, skipped = [], []
    schema = rubric.critic_schema()
    for src in sources:
        variants, skips = planted.build(src)
        skipped += [{**s, "why": "no mechanical edit"} for s in skips]
        for v in variants:
            msgs = prompts.critic_messages(src.level, v.sentence, v.answer_key)
            for judge in judges:
                seed = prompt_seed(msgs, sampling_seeds.get(judge))
                reproduce = v.kind == "baseline" and src.kind == "run" and src.logged["critic"] == judge
                if reproduce:
                    seed = loop_seed_of(judge, src)
                item = {
                    "item_id": v.variant_id,
                    "source_id": src.source_id,
                    "source_kind": src.kind,
                    "level": src.level["level"],
                    "target": v.target,
                    "kind": v.kind,
                    "description": v.description,
                    "sentence": v.sentence,
                    "answer_key": v.answer_key,
                    "edited_word": v.edited_word,
                    "span": v.span,
                    "logged_verdict": src.logged["verdict"] if reproduce else None,
                }
                jobs.append(Job(judge, item, msgs, schema, "grade", None, seed))
    return jobs, skipped


def pairwise_jobs(pairs: list[pairwise.Pair], judges: list[str], sampling_seeds: dict) -> list[Job]:
    jobs = []
    for p in pairs:
        for order, labels in metrics.VARIANTS:
            msgs = pairwise.pairwise_messages(p, order, labels)
            first, second = pairwise.slots(p, order)
            item = {
                "item_id": f"{p.pair_id}/{order}/{labels}",
                "pair_id": p.pair_id,
                "condition": p.condition,
                "order": order,
                "labels": labels,
                "level": p.level["level"],
                "first": first.source_id,
                "second": second.source_id,
                "right": p.right.source_id,
            }
            for judge in judges:
                seed = prompt_seed(msgs, sampling_seeds.get(judge))
                jobs.append(
                    Job(judge, item, msgs, pairwise.pairwise_schema(labels), "verdict", PAIRWISE_MAX_TOKENS, seed)
                )
    return jobs


def settled(out_dir: Path) -> set[tuple[str, str]]:
    """The (judge, item) pairs an exam does not ask again: those answered, and those whose call failed by the
    judge's own answer (truncated, malformed, off the schema), which its seeded request would repeat. A call lost
    to the infrastructure or the budget is asked again."""
    answered = {(r["judge"], r["item_id"]) for r in read_jsonl(out_dir / "items.jsonl")}
    final = {(e["judge"], e["item_id"]) for e in read_jsonl(out_dir / "errors.jsonl") if e["kind"] not in RETRY_KINDS}
    return answered | final


async def run_jobs(out_dir: Path, entry: dict, jobs: list[Job], clients, kind: str) -> dict[str, int]:
    """Ask every job not yet answered in ``out_dir/items.jsonl`` nor ended by the judge's own answer (see
    :func:`settled`); errors and budget skips are logged."""
    out_dir.mkdir(parents=True, exist_ok=True)
    done = settled(out_dir)
    items, errors, skipped = (JsonlWriter(out_dir / f) for f in ("items.jsonl", "errors.jsonl", "skipped.jsonl"))
    counts = {"asked": 0, "answered": 0, "errors": 0, "budget_skipped": 0}

    async def one(job: Job) -> None:
        client = clients.get(job.judge)
        sampling = dataclasses.replace(client.model.sampling, seed=job.seed)
        base = {"exam_id": entry["id"], "entry_hash": entry["hash"], "judge": job.judge, **job.item}
        try:
            counts["asked"] += 1
            r = await client.structured(
                job.messages, job.schema, job.schema_name, max_tokens=job.max_tokens, sampling=sampling
            )
        except BudgetExhausted as e:
            counts["budget_skipped"] += 1
            skipped.write({"judge": job.judge, "item_id": job.item["item_id"], "why": "budget", "message": e.message})
            return
        except ModelCallError as e:
            counts["errors"] += 1
            item = {("item_kind" if k == "kind" else k): v for k, v in base.items()}  # "kind" is the error's
            errors.write({**item, "kind": e.kind, "message": e.message, "time": now()})
            return
        row = {**base, "prompt_sha": prompt_sha(job.messages), "seed": job.seed, "text": r.text}
        if kind == "planted":
            checks, reasons = parse_critic(r.value)
            row |= {"checks": checks, "reasons": reasons}
            row["verdict"] = "PASSED" if rubric.passes(checks) else "FAILED"
        else:
            row |= {"winner": r.value["winner"], "reason": r.value["reason"]}
        row |= {"usage": r.usage.as_dict(), "time": now()}
        counts["answered"] += 1
        items.write(row)

    try:
        await asyncio.gather(*(one(j) for j in jobs if j.key not in done))
    finally:
        for w in (items, errors, skipped):
            w.close()
    return counts


async def run_exam(kind: str, run_dir, entry: dict, clients, judges: list[str], params: dict) -> Path:
    """Run (or resume) one registered exam on ``run_dir``; returns its directory."""

    run_dir = Path(run_dir)
    out = run_dir / "exams" / entry["id"]
    pool = source_pool(run_dir, params["reference_answers"])
    seeds = {j: clients.get(j).model.sampling.seed for j in judges}
    skipped_build: list[dict] = []
    if kind == "planted":
        sources = planted.draw_sources(pool, params["n_sources"], params["seed"])

        def loop_seed(judge: str, src: planted.Source) -> int | None:
            return call_seed(seeds[judge], src.level["level"], src.attempt, "critic")

        jobs, skipped_build = planted_jobs(sources, judges, seeds, loop_seed)
        for j in jobs:
            j.max_tokens = params["critic_max_tokens"]
        used = [s.source_id for s in sources]
    elif kind == "pairwise":
        pairs = pairwise.draw_pairs(pool, params["n_pairs"], params["seed"])
        jobs = pairwise_jobs(pairs, judges, seeds)
        used = sorted({s for p in pairs for s in (p.right.source_id, p.other.source_id)})
    else:
        pairs = tournament_pairs(run_dir, params["n_levels"], params["seed"], params["reference_answers"])
        jobs = tournament_jobs(pairs, judges, seeds)
        used = sorted({s for p in pairs for s in (p.right.source_id, p.other.source_id)})
        pool = [*pool, *writer_answers(run_dir).values()]
    manifest_path = out / "exam.json"
    started = now()
    if manifest_path.exists():
        old = json.loads(manifest_path.read_text())
        if old["entry"]["hash"] != entry["hash"]:
            raise metrics.ExamError(f"{out}: holds results of another registry entry; use a new exam id")
        started = old["started"]
    out.mkdir(parents=True, exist_ok=True)
    if skipped_build and not (out / "skipped.jsonl").exists():
        w = JsonlWriter(out / "skipped.jsonl")
        for s in skipped_build:
            w.write(s)
        w.close()
    manifest = {
        "exam_id": entry["id"],
        "kind": kind,
        "entry": entry,
        "params": params,
        "sources": used,
        "source_kinds": {
            k: len({s.source_id for s in pool if s.source_id in used and s.kind == k}) for k in ("run", "reference")
        },
        "jobs": len(jobs),
        "versions": versions(),
        "machine": machine(),
        "sampling": {j: dataclasses.asdict(clients.get(j).model.sampling) for j in judges},
        "started": started,
        "status": "running",
    }
    write_json_atomic(manifest_path, manifest)
    # the registered budget covers the whole exam: calls made by earlier runs of it count
    clients.budget.charge(len(read_jsonl(out / "items.jsonl")) + len(read_jsonl(out / "errors.jsonl")))
    counts = await run_jobs(out, entry, jobs, clients, kind)
    answered = {(r["judge"], r["item_id"]) for r in read_jsonl(out / "items.jsonl")}
    skipped_budget = len(
        {
            (s["judge"], s["item_id"])
            for s in read_jsonl(out / "skipped.jsonl")
            if s.get("why") == "budget" and (s["judge"], s["item_id"]) not in answered
        }
    )
    done = settled(out)
    manifest["counts"] = {
        "items": len(answered),
        "missing": sum(j.key not in done for j in jobs),  # a failed answer of the judge's own is not missing
        "answer_errors": len(done - answered),
        "errors": len(read_jsonl(out / "errors.jsonl")),
        "budget_skipped": skipped_budget,
        "last_run": counts,
    }
    manifest["status"] = "complete" if manifest["counts"]["missing"] == 0 else "incomplete"
    manifest["finished"] = now()
    write_json_atomic(manifest_path, manifest)
    return out


# --- reading results -------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ExamResults:
    """An exam directory read back: its manifest (``exam.json``) and its judged items, failed calls and skips."""

    manifest: dict[str, Any]
    items: pd.DataFrame
    errors: pd.DataFrame
    skipped: pd.DataFrame


def load_exam(exam_dir: str | Path) -> ExamResults:
    d = Path(exam_dir)
    return ExamResults(
        json.loads((d / "exam.json").read_text()),
        pd.DataFrame(read_jsonl(d / "items.jsonl")),
        pd.DataFrame(read_jsonl(d / "errors.jsonl")),
        pd.DataFrame(read_jsonl(d / "skipped.jsonl")),
    )


# --- from the command line: parameters, registration, a registered run -----------------------------------


@dataclasses.dataclass(frozen=True)
class ExamRequest:
    """What the command line asks of an exam; :func:`exam_params` turns it into the registered parameters."""

    kind: str  # planted, pairwise or tournament
    run_dir: str
    judges: str  # comma-separated model names
    sources: int = 12  # planted: sources drawn
    pairs: int = 12  # pairwise: pairs drawn
    levels: int = 30  # tournament: writer-vs-writer levels
    seed: int = 0
    max_calls: int = 2000
    reference: bool = True  # draw on the reference answers too


def exam_params(req: ExamRequest, cfg) -> dict:
    """The registered parameters of ``req`` (validated; :class:`~vocab.exam.metrics.ExamError` on bad input)."""

    if not (Path(req.run_dir) / "manifest.json").exists():
        raise metrics.ExamError(f"{req.run_dir}: not a run directory (no manifest.json)")
    judges = [j.strip() for j in req.judges.split(",") if j.strip()]
    if not judges:
        raise metrics.ExamError("--judges names no judge")
    try:
        for j in judges:
            cfg.model(j)
    except ConfigError as e:
        raise metrics.ExamError(str(e)) from None
    for name in ("max_calls", "seed"):
        if getattr(req, name) < 0:
            raise metrics.ExamError(f"--{name.replace('_', '-')} must be non-negative, got {getattr(req, name)}")
    count = {"planted": "sources", "pairwise": "pairs", "tournament": "levels"}[req.kind]
    if getattr(req, count) < 1:
        raise metrics.ExamError(f"--{count} must be at least 1, got {getattr(req, count)}")
    if req.kind == "planted":
        critic_max = (cfg.loop.critic_max_tokens if cfg.loop else None) or cfg.model(judges[0]).max_tokens
        return planted_params(req.run_dir, judges, req.sources, req.seed, req.max_calls, req.reference, critic_max)
    if req.kind == "tournament":
        return tournament_params(req.run_dir, judges, req.levels, req.seed, req.max_calls, req.reference)
    return pairwise_params(req.run_dir, judges, req.pairs, req.seed, req.max_calls, req.reference)


def register_exam(registry_path, exam_id: str, kind: str, params: dict, prediction: str, corrects=None) -> dict:
    """Register an exam's parameters, thresholds, metrics and prediction before it runs."""

    named = {"planted": PLANTED_METRICS, "pairwise": PAIRWISE_METRICS, "tournament": TOURNAMENT_METRICS}[kind]
    return register(
        registry_path,
        exam_id,
        params,
        thresholds=THRESHOLDS,
        metrics=named,
        judges=params["judges"],
        prediction=prediction,
        corrects=corrects,
    )


def run_registered(kind: str, cfg, run_dir, params: dict, registry_path) -> Path:
    """Run an exam whose parameters equal one registered entry for every judge (else RegistryError/ExamError)."""
    # deferred: the model client (openai, httpx) loads only when a model is called
    from vocab.serving.client import Clients

    entries = {find(registry_path, params, j)["id"] for j in params["judges"]}
    if len(entries) != 1:
        raise metrics.ExamError(f"the judges are registered under different entries: {sorted(entries)}")
    entry = next(e for e in verify(registry_path) if e["id"] in entries)

    async def go() -> Path:
        async with Clients.from_config(cfg, params["max_calls"]) as clients:
            return await run_exam(kind, run_dir, entry, clients, params["judges"], params)

    return asyncio.run(go())
