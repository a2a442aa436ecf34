"""The harness against a raw load generator: how close does `vocab run` get to what the servers give?

Side by side in one run, on the same servers:

1. **harness, warm-up** — `run_design` on a slice of the study's design into a throwaway run directory, with
   every model call recorded (messages, schema, token budget, sampling) and grouped by the level that made it
   (each level is one asyncio task; its calls run one after another: writer, critic, writer, ...);
2. **raw** — a minimal generator (asyncio + the openai client, nothing of the harness) replays exactly those
   requests: one coroutine per level sending its calls in order, all levels at once, the same per-server
   concurrency limits. No parsing, no validation, no logging;
3. **harness** — `run_design` again into a fresh directory (same seeds, same servers, caches as warm as 2's).

Servers already up (`vocab serve`) are used; otherwise the script starts and stops them. The ratio is 3's
attempts per hour over 2's (an attempt = one writer call + one critic call). Writes
``benchmarks/results/harness.json`` and prints it.

Run: .venv/bin/python benchmarks/bench_harness.py [--tiers 1,5,9,13,17,21,25,28] [--per-tier 1]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import shutil
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import openai
from common import result_record, write_result  # benchmarks/common.py (this script's folder is on sys.path)

from vocab.config import load_config
from vocab.loop import run_design
from vocab.serving import client as client_mod
from vocab.serving.client import Clients, response_format
from vocab.serving.servers import Servers


def record_calls():
    """Wrap ModelClient.structured so that every call's request is kept, keyed by the asyncio task."""
    calls: dict[int, list[dict]] = defaultdict(list)
    original = client_mod.ModelClient.structured

    async def structured(self, messages, schema, schema_name, *, max_tokens=None, sampling=None):
        sampling_used = sampling or self.model.sampling
        top, extra = sampling_used.request_params()
        calls[id(asyncio.current_task())].append(
            {
                "model": self.model.name,
                "base_url": self.model.base_url,
                "body": {
                    "model": self.model.request_model,
                    "messages": messages,
                    "response_format": response_format(schema, schema_name),
                    "max_tokens": max_tokens or self.model.max_tokens,
                    "extra_body": extra or None,
                    **top,
                },
                "role": "writer" if schema_name == "draft" else "critic",
            }
        )
        return await original(self, messages, schema, schema_name, max_tokens=max_tokens, sampling=sampling)

    return calls, original, structured


async def harness(cfg, loop, run_dir: Path) -> dict:
    t0 = time.perf_counter()
    async with Clients.from_config(cfg) as clients:
        summary = await run_design(cfg, loop, run_dir, clients, progress=False)
    wall = time.perf_counter() - t0
    from vocab.records import load_run

    run = load_run(run_dir)
    tokens = int(sum(a.usage["writer"]["completion_tokens"] + a.usage["critic"]["completion_tokens"]
                     for a in run.attempts.itertuples()))  # fmt: skip
    return {
        "attempts": summary.attempts_new,
        "errors": summary.errors_new,
        "calls": summary.calls,
        "wall_s": round(wall, 2),
        "attempts_per_hour": round(3600 * summary.attempts_new / wall, 1),
        "completion_tokens": tokens,
        "completion_tokens_per_s": round(tokens / wall, 1),
    }


async def raw(cfg, chains: list[list[dict]]) -> dict:
    """Replay the recorded chains with the bare openai client under the same per-server limits."""
    sems: dict[str, asyncio.Semaphore] = {}
    for m in cfg.models.values():
        limit = min(x.concurrency for x in cfg.models.values() if x.base_url == m.base_url)
        sems.setdefault(m.base_url, asyncio.Semaphore(limit))
    clients = {url: openai.AsyncOpenAI(base_url=url, api_key="unused", max_retries=0) for url in sems}
    totals = {"calls": 0, "errors": 0, "attempts": 0, "completion_tokens": 0}

    async def chain(calls: list[dict]) -> None:
        for c in calls:
            async with sems[c["base_url"]]:
                try:
                    r = await clients[c["base_url"]].chat.completions.create(**c["body"])
                    totals["completion_tokens"] += r.usage.completion_tokens if r.usage else 0
                except openai.OpenAIError:
                    totals["errors"] += 1
            totals["calls"] += 1
            totals["attempts"] += c["role"] == "critic"

    t0 = time.perf_counter()
    await asyncio.gather(*(chain(c) for c in chains))
    wall = time.perf_counter() - t0
    for cl in clients.values():
        await cl.close()
    return {
        **totals,
        "wall_s": round(wall, 2),
        "attempts_per_hour": round(3600 * totals["attempts"] / wall, 1),
        "completion_tokens_per_s": round(totals["completion_tokens"] / wall, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="configs/embedded.toml")
    ap.add_argument("--tiers", default="1,5,9,13,17,21,25,28", help="the slice: tiers of the sampled design")
    ap.add_argument("--per-tier", type=int, default=1)
    ap.add_argument("--out", default=None, help="where the throwaway runs go (default: a temp dir)")
    args = ap.parse_args()
    cfg = load_config(args.config)
    loop = dataclasses.replace(cfg.loop, tiers=args.tiers, per_tier=args.per_tier)
    out = Path(args.out or tempfile.mkdtemp(prefix="vocab-bench-harness-"))
    shutil.rmtree(out, ignore_errors=True)

    calls, original, recording = record_calls()
    with Servers(cfg):  # reuses servers that are already up (`vocab serve`)
        client_mod.ModelClient.structured = recording
        try:
            warm = asyncio.run(harness(cfg, loop, out / "warm"))
        finally:
            client_mod.ModelClient.structured = original
        chains = [c for c in calls.values() if c]
        raw_side = asyncio.run(raw(cfg, chains))
        measured = asyncio.run(harness(cfg, loop, out / "measured"))
    ratio = measured["attempts_per_hour"] / raw_side["attempts_per_hour"]
    concurrency = {name: m.concurrency for name, m in cfg.models.items()}
    result = result_record(
        "harness",
        engine="vllm",
        concurrency=concurrency,
        ratio=round(ratio, 3),
        attempts_per_hour=measured["attempts_per_hour"],
        design={"tiers": args.tiers, "per_tier": args.per_tier, "cells": [f"{w}__{c}" for w, c in loop.cells]},
        harness=measured,
        harness_warmup=warm,
        raw=raw_side,
        method="raw = the harness's own recorded requests replayed level by level with the bare openai client",
    )
    write_result("harness", result)
    print(json.dumps(result, indent=2))
    shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
