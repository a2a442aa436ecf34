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
from vocab.exam import metrics, pairwise, planted
from vocab.exam.jobs import Job, now, prompt_seed, prompt_sha
from vocab.exam.pairwise import PAIRWISE_MAX_TOKENS
from vocab.exam.tournament import tournament_jobs, tournament_pairs, writer_answers
from vocab.loop import call_seed, parse_critic
from vocab.records import JsonlWriter, read_jsonl, read_manifest, write_json_atomic
from vocab.serving.client import BudgetExhausted, ModelCallError

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


def _run_id(run_dir: Path) -> str:
    return read_manifest(run_dir)["run_id"]


def planted_params(run_dir, judges, n_sources, seed, max_calls, reference_answers, critic_max_tokens) -> dict:
    return {
        "exam": "planted",
        "exam_version": metrics.EXAM_VERSION,
        "run_id": _run_id(Path(run_dir)),
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
        "run_id": _run_id(Path(run_dir)),
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
    from vocab.records import load_run

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


async def run_jobs(out_dir: Path, entry: dict, jobs: list[Job], clients, kind: str) -> dict[str, int]:
    """Ask every job not yet answered in ``out_dir/items.jsonl``; errors and budget skips are logged."""
    out_dir.mkdir(parents=True, exist_ok=True)
    done = {(r["judge"], r["item_id"]) for r in read_jsonl(out_dir / "items.jsonl")}
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
    from vocab.records import versions

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
    manifest["counts"] = {
        "items": len(answered),
        "missing": sum(j.key not in answered for j in jobs),
        "errors": len(read_jsonl(out / "errors.jsonl")),
        "budget_skipped": skipped_budget,
        "last_run": counts,
    }
    manifest["status"] = "complete" if manifest["counts"]["missing"] == 0 else "incomplete"
    manifest["finished"] = now()
    write_json_atomic(manifest_path, manifest)
    return out


# --- reading results -------------------------------------------------------------------------------------


def load_exam(exam_dir: str | Path) -> dict[str, Any]:
    d = Path(exam_dir)
    return {
        "manifest": json.loads((d / "exam.json").read_text()),
        "items": pd.DataFrame(read_jsonl(d / "items.jsonl")),
        "errors": pd.DataFrame(read_jsonl(d / "errors.jsonl")),
        "skipped": pd.DataFrame(read_jsonl(d / "skipped.jsonl")),
    }


def _names_edit(row: dict) -> bool:
    word, target = row.get("edited_word"), row.get("target")
    if not isinstance(word, str) or not isinstance(target, str):
        return False
    return row["checks"][target] == "FAILED" and word.lower() in row["reasons"][target].lower()


def planted_table(items: pd.DataFrame) -> pd.DataFrame:
    """Per judge and defect target: n, verdict-label recall, on-target recall, and reason naming the edit;
    one ``all`` row per judge with the false-positive rate and baseline reproducibility."""
    rows = []
    for judge, g in items.groupby("judge", sort=True):
        recs = g.to_dict(orient="records")
        defects = [r for r in recs if r["kind"] == "defect"]
        for target in sorted({r["target"] for r in defects}, key=int):
            d = [r for r in defects if r["target"] == target]
            rows.append(_planted_row(judge, target, d, [], []))
        controls = [r for r in recs if r["kind"] == "control"]
        base = [r for r in recs if r["kind"] == "baseline" and isinstance(r.get("logged_verdict"), str)]
        rows.append(_planted_row(judge, "all", defects, controls, base))
    return pd.DataFrame(rows)


def _planted_row(judge, target, defects, controls, base) -> dict:
    def share(xs):
        return sum(xs) / len(xs) if xs else None

    with_word = [r for r in defects if isinstance(r.get("edited_word"), str)]
    return {
        "judge": judge,
        "target": target,
        "defect": planted.DEFECTS.get(target, "all defects"),
        "n": len(defects),
        "verdict_recall": share([r["verdict"] == "FAILED" for r in defects]),
        "on_target_recall": share([r["checks"][r["target"]] == "FAILED" for r in defects]),
        "reason_names_edit": share([_names_edit(r) for r in with_word]),
        "n_controls": len(controls),
        "false_positive_rate": share([r["verdict"] == "FAILED" for r in controls]),
        "n_baselines": len(base),
        "baseline_reproduced": share([r["verdict"] == r["logged_verdict"] for r in base]),
    }


def planted_degenerate(items: pd.DataFrame) -> pd.DataFrame:
    """The degenerate judges scored by :func:`vocab.metrics.planted_metrics` on this exam's own item set."""
    one = items.drop_duplicates("item_id")
    its = [
        metrics.PlantedItem(r["source_id"], r["target"] if isinstance(r["target"], str) else None)
        for r in one.to_dict(orient="records")
        if r["kind"] != "baseline"
    ]
    rows = []
    for name, p in metrics.PLANTED_JUDGES.items():
        m = metrics.planted_metrics(its, [{c: p for c in rubric.CHECK_IDS}] * len(its))
        rows.append({"judge": name, **m})
    return pd.DataFrame(rows)


def pairwise_items(items: pd.DataFrame) -> tuple[list[metrics.PairItem], list[dict[str, float]]]:
    its, answers = [], []
    for r in items.to_dict(orient="records"):
        its.append(metrics.PairItem(r["pair_id"], r["condition"], r["order"], r["labels"]))
        answers.append(pairwise.answer_slots(r["winner"], r["labels"]))
    return its, answers


def pairwise_table(items: pd.DataFrame) -> pd.DataFrame:
    """Each judge's pairwise metrics and the pre-registered bar, beside the degenerate judges scored on the
    same items by the same code."""
    rows = []
    for judge, g in items.groupby("judge", sort=True):
        its, answers = pairwise_items(g)
        m = metrics.pairwise_metrics(its, answers)
        rows.append({"judge": judge, "n": len(g), **m, "qualifies": metrics.qualifies(m)})
    one = items.drop_duplicates("item_id")
    its, _ = pairwise_items(one)
    for name, ans in metrics.PAIRWISE_JUDGES.items():
        m = metrics.pairwise_metrics(its, [ans] * len(its))
        rows.append({"judge": name, "n": len(its), **m, "qualifies": metrics.qualifies(m)})
    return pd.DataFrame(rows)


def determinism(items: pd.DataFrame) -> pd.DataFrame:
    """Every group of identical requests (judge, prompt, seed) asked more than once, and whether the
    answers agree byte for byte."""
    rows = []
    for (judge, sha, seed), g in items.groupby(["judge", "prompt_sha", "seed"], sort=True):
        if len(g) < 2:
            continue
        rows.append(
            {
                "judge": judge,
                "prompt_sha": sha[:12],
                "seed": seed,
                "items": ", ".join(sorted(g.item_id)),
                "n": len(g),
                "identical": g.text.nunique() == 1,
            }
        )
    return pd.DataFrame(rows, columns=["judge", "prompt_sha", "seed", "items", "n", "identical"])
