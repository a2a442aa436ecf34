"""Running the judge exam against real critics, and its tables.

``vocab exam planted`` and ``vocab exam pairwise`` call this module. An exam runs only under a registered
entry (:mod:`vocab.registry`): its parameters are built from the command line by :func:`planted_params` /
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
import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from vocab import exam, pairwise, planted, prompts, rubric
from vocab.loop import call_seed, parse_critic
from vocab.records import JsonlWriter, read_jsonl, read_manifest, write_json_atomic
from vocab.serving.client import BudgetExhausted, ModelCallError

EXAM_VERSION = "1.0"
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
THRESHOLDS = {"tie_rate": exam.TIE_RATE_MIN, "balanced_accuracy": exam.BALANCED_ACCURACY_MIN}
PAIRWISE_MAX_TOKENS = 160


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def prompt_sha(messages: list[dict[str, str]]) -> str:
    return hashlib.sha256(json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def prompt_seed(messages: list[dict[str, str]], base: int | None) -> int | None:
    """A sampling seed fixed by the prompt's bytes (and the model's base seed): identical prompts, same seed."""
    if base is None:
        return None
    digest = hashlib.sha256(f"{base}:{prompt_sha(messages)}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def _run_id(run_dir: Path) -> str:
    return read_manifest(run_dir)["run_id"]


def planted_params(run_dir, judges, n_sources, seed, max_calls, reference_answers, critic_max_tokens) -> dict:
    return {
        "exam": "planted",
        "exam_version": EXAM_VERSION,
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
        "exam_version": EXAM_VERSION,
        "run_id": _run_id(Path(run_dir)),
        "judges": sorted(judges),
        "n_pairs": n_pairs,
        "seed": seed,
        "max_calls": max_calls,
        "reference_answers": reference_answers,
        "variants": [list(v) for v in exam.VARIANTS],
        "max_tokens": PAIRWISE_MAX_TOKENS,
        "prompt": pairwise.pairwise_prompt_hash(),
    }


TOURNAMENT_METRICS = {
    "bradley_terry": "maximum-likelihood Bradley-Terry ratings (ties = half a win), Elo scale, level bootstrap",
    "elo_forward": "online Elo (K 32, start 1000) over the games in level order",
    "elo_reverse": "the same games in reverse order",
    "position_consistency": "share of pairs with the same winner by identity under both orders",
    "prefers_longer": "share of decided games with unequal lengths won by the longer sentence",
}


def tournament_params(run_dir, judges, n_levels, seed, max_calls, reference_answers) -> dict:
    return {
        "exam": "tournament",
        "exam_version": EXAM_VERSION,
        "run_id": _run_id(Path(run_dir)),
        "judges": sorted(judges),
        "n_levels": n_levels,
        "seed": seed,
        "max_calls": max_calls,
        "reference_answers": reference_answers,
        "orders": list(exam.ORDERS),
        "labels": "A/B",
        "max_tokens": PAIRWISE_MAX_TOKENS,
        "prompt": pairwise.pairwise_prompt_hash(),
    }


def writer_answers(run_dir: str | Path) -> dict[tuple[str, int], planted.Source]:
    """Each writer's first attempt per level. The writer's first call does not depend on the critic (same
    prompt, same seed), so it is the same sentence in every cell; it is taken from the first cell by name."""
    from vocab.records import load_run

    run = load_run(run_dir)
    levels = {lv["level"]: lv for lv in read_jsonl(Path(run_dir) / "levels.jsonl")}
    out: dict[tuple[str, int], planted.Source] = {}
    first = run.attempts[run.attempts.attempt == 1].sort_values(["writer", "level", "cell"])
    for a in first.to_dict(orient="records"):
        key = (a["writer"], int(a["level"]))
        if key not in out:
            sid = f"{a['writer']}-{a['level']:04d}"
            out[key] = planted.Source(
                sid, "run", levels[a["level"]], a["sentence"], list(a["answer_key"]), a["cell"], 1
            )
    return out


def tournament_pairs(run_dir, n_levels: int, seed: int, reference_answers: bool) -> list[pairwise.Pair]:
    """Writer against writer on ``n_levels`` levels drawn (sorted, seeded) from those where every writer has a
    first attempt; with reference answers, the reference against each writer on every level it covers."""
    answers = writer_answers(run_dir)
    writers = sorted({w for w, _ in answers})
    common = sorted(lv for lv in {lv for _, lv in answers} if all((w, lv) in answers for w in writers))
    rng = np.random.default_rng(seed)
    chosen = sorted(common[i] for i in rng.choice(len(common), size=min(n_levels, len(common)), replace=False))
    pairs = []
    for lv in chosen:
        for i, wa in enumerate(writers):
            for wb in writers[i + 1 :]:
                a, b = answers[(wa, lv)], answers[(wb, lv)]
                pairs.append(pairwise.Pair(f"{a.source_id}-vs-{b.source_id}", "match", a.level, a, b))
    if reference_answers:
        levels = {lv["level"]: lv for lv in read_jsonl(Path(run_dir) / "levels.jsonl")}
        for ref in sorted(planted.reference_answers(levels), key=lambda s: s.source_id):
            for w in writers:
                b = answers.get((w, ref.level["level"]))
                if b is not None:
                    pairs.append(pairwise.Pair(f"{ref.source_id}-vs-{b.source_id}", "match", ref.level, ref, b))
    return pairs


def player_of(source_id: str) -> str:
    return "reference" if source_id.startswith("ref-") else source_id.rsplit("-", 1)[0]


def tournament_jobs(pairs: list[pairwise.Pair], judges: list[str], sampling_seeds: dict) -> list[Job]:
    jobs = []
    for p in pairs:
        for order in exam.ORDERS:
            msgs = pairwise.pairwise_messages(p, order, "A/B")
            first, second = pairwise.slots(p, order)
            item = {
                "item_id": f"{p.pair_id}/{order}",
                "pair_id": p.pair_id,
                "condition": "match",
                "order": order,
                "labels": "A/B",
                "level": p.level["level"],
                "first": first.source_id,
                "second": second.source_id,
                "first_player": player_of(first.source_id),
                "second_player": player_of(second.source_id),
                "first_words": len(first.sentence.split()),
                "second_words": len(second.sentence.split()),
            }
            for judge in judges:
                seed = prompt_seed(msgs, sampling_seeds.get(judge))
                jobs.append(
                    Job(judge, item, msgs, pairwise.pairwise_schema("A/B"), "verdict", PAIRWISE_MAX_TOKENS, seed)
                )
    return jobs


def source_pool(run_dir: str | Path, reference_answers: bool) -> list[planted.Source]:
    from vocab.records import load_run

    run_dir = Path(run_dir)
    levels = {lv["level"]: lv for lv in read_jsonl(run_dir / "levels.jsonl")}
    pool = planted.run_sources(load_run(run_dir).attempts, levels)
    if reference_answers:
        pool += planted.reference_answers(levels)
    return pool


@dataclasses.dataclass
class Job:
    """One call to make: a judge, an item, its prompt and seed."""

    judge: str
    item: dict[str, Any]
    messages: list[dict[str, str]]
    schema: dict[str, Any]
    schema_name: str
    max_tokens: int | None
    seed: int | None

    @property
    def key(self) -> tuple[str, str]:
        return self.judge, self.item["item_id"]


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
        for order, labels in exam.VARIANTS:
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
    from vocab.loop import _versions

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
            raise exam.ExamError(f"{out}: holds results of another registry entry; use a new exam id")
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
        "versions": _versions(),
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
    """The degenerate judges scored by :func:`vocab.exam.planted_metrics` on this exam's own item set."""
    one = items.drop_duplicates("item_id")
    its = [
        exam.PlantedItem(r["source_id"], r["target"] if isinstance(r["target"], str) else None)
        for r in one.to_dict(orient="records")
        if r["kind"] != "baseline"
    ]
    rows = []
    for name, p in exam.PLANTED_JUDGES.items():
        m = exam.planted_metrics(its, [{c: p for c in rubric.CHECK_IDS}] * len(its))
        rows.append({"judge": name, **m})
    return pd.DataFrame(rows)


def pairwise_items(items: pd.DataFrame) -> tuple[list[exam.PairItem], list[dict[str, float]]]:
    its, answers = [], []
    for r in items.to_dict(orient="records"):
        its.append(exam.PairItem(r["pair_id"], r["condition"], r["order"], r["labels"]))
        answers.append(pairwise.answer_slots(r["winner"], r["labels"]))
    return its, answers


def pairwise_table(items: pd.DataFrame) -> pd.DataFrame:
    """Each judge's pairwise metrics and the pre-registered bar, beside the degenerate judges scored on the
    same items by the same code."""
    rows = []
    for judge, g in items.groupby("judge", sort=True):
        its, answers = pairwise_items(g)
        m = exam.pairwise_metrics(its, answers)
        rows.append({"judge": judge, "n": len(g), **m, "qualifies": exam.qualifies(m)})
    one = items.drop_duplicates("item_id")
    its, _ = pairwise_items(one)
    for name, ans in exam.PAIRWISE_JUDGES.items():
        m = exam.pairwise_metrics(its, [ans] * len(its))
        rows.append({"judge": name, "n": len(its), **m, "qualifies": exam.qualifies(m)})
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


def tournament_games(items: pd.DataFrame) -> pd.DataFrame:
    """One row per judged game: the judge, level, the two players as displayed, the winner (or tie), the
    score of the first-listed player by name order, and whether the longer sentence won."""
    rows = []
    for r in items.sort_values(["judge", "level", "pair_id", "order"]).to_dict(orient="records"):
        fp, sp = r["first_player"], r["second_player"]
        winner = {"A": fp, "B": sp, "tie": "tie"}[r["winner"]]
        i, j = sorted((fp, sp))
        score = 0.5 if winner == "tie" else float(winner == i)
        longer = None
        if r["first_words"] != r["second_words"] and winner != "tie":
            longer = (r["first_words"] > r["second_words"]) == (winner == fp)
        rows.append(
            {
                "judge": r["judge"],
                "level": r["level"],
                "pair_id": r["pair_id"],
                "order": r["order"],
                "i": i,
                "j": j,
                "winner": winner,
                "score_i": score,
                "slot": {"A": "first", "B": "second", "tie": "tie"}[r["winner"]],
                "longer_won": longer,
            }
        )
    return pd.DataFrame(rows)


def tournament_table(items: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per judge and player: Bradley-Terry rating with a level-bootstrap interval, online Elo forward and
    reversed; and per judge: position consistency, first-slot rate, tie rate and prefers-the-longer rate."""
    from vocab import stats

    games = tournament_games(items)
    ratings, biases = [], []
    for judge, g in games.groupby("judge", sort=True):
        triples = list(zip(g.i, g.j, g.score_i, strict=True))
        bt = stats.bradley_terry_bootstrap(triples, groups=list(g.level), n_resamples=n_boot, seed=seed)
        fwd, rev = stats.online_elo(triples), stats.online_elo(triples[::-1])
        fit = bt.fit.ratings() if bt.fit is not None else {}
        for p in sorted(set(g.i) | set(g.j)):
            ratings.append(
                {
                    "judge": judge,
                    "player": p,
                    "games": int(((g.i == p) | (g.j == p)).sum()),
                    "score": float(g[g.i == p].score_i.sum() + (1 - g[g.j == p].score_i).sum()),
                    "bt_rating": fit.get(p),
                    "bt_low": bt.low.get(p),
                    "bt_high": bt.high.get(p),
                    "elo_forward": fwd[p],
                    "elo_reverse": rev[p],
                    "bt_note": bt.reason
                    or (f"{bt.failed} of {bt.resamples} resamples had no finite fit" if bt.failed else ""),
                }
            )
        both = g.groupby("pair_id").filter(lambda x: len(x) == 2)
        same = [x.winner.nunique() == 1 for _, x in both.groupby("pair_id")]  # a tie twice is consistent too
        decided = g[g.slot != "tie"]
        longer = g.longer_won.dropna()
        biases.append(
            {
                "judge": judge,
                "games": len(g),
                "tie_rate": float((g.slot == "tie").mean()),
                "first_slot_rate": float((decided.slot == "first").mean()) if len(decided) else None,
                "position_consistency": float(np.mean(same)) if same else None,
                "prefers_longer": float(longer.astype(float).mean()) if len(longer) else None,
                "n_length_decided": len(longer),
            }
        )
    return pd.DataFrame(ratings), pd.DataFrame(biases)
