"""What the sampling recipe costs and what it changes: top_p = 0.9 (vLLM's CPU sampler sorts the whole vocabulary
for it, every sequence, every step: 262k tokens for gemma-3-270m) against top_k = 64 (a partial top-k, no sort)
and no truncation at all, at the study's temperature of 0.2.

On one server per model, side by side in one run: the same critic requests (the study's prompt, schema, seeds;
sentences the reference run's writers wrote) at the study's concurrency, once per recipe. Per recipe: completion
tokens per second over the batch, and against the committed recipe the share of answers identical in full and
with identical verdicts. What top_p = 0.9 cuts at T = 0.2 is measured as the share of answers it changes.

Run: .venv/bin/python benchmarks/bench_sampler.py [--requests 48] [--models gemma3,smollm2]
Writes benchmarks/results/sampler.json. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import time

from common import ROOT, result_record, write_result  # benchmarks/common.py (this script's folder is on sys.path)

from vocab import prompts, rubric
from vocab.config import load_config
from vocab.loop import call_seed
from vocab.records import load_run
from vocab.serving.client import response_format
from vocab.serving.servers import Servers

RECIPES = {  # each explicit over the model's committed sampling (temperature 0.2 and a seed per call)
    "top_p=0.9 (committed)": {"top_p": 0.9, "top_k": None},
    "top_k=64": {"top_p": None, "top_k": 64},
    "none": {"top_p": None, "top_k": None},
}


def requests(model, n: int, run_dir) -> list[dict]:
    """``n`` critic requests from the reference run's attempts (the first n by cell, level and attempt), each
    with the seed the loop gave it."""
    run = load_run(run_dir)
    levels = {int(r["level"]): r for r in run.levels.to_dict(orient="records")}
    rows = run.attempts.sort_values(["cell", "level", "attempt"]).head(n).to_dict(orient="records")
    return [{"messages": prompts.critic_messages(levels[int(a["level"])], a["sentence"], list(a["answer_key"])),
             "seed": call_seed(model.sampling.seed, int(a["level"]), int(a["attempt"]), "critic")}
            for a in rows]  # fmt: skip


async def batch(model, reqs: list[dict], sampling) -> tuple[list[str], float, int]:
    import openai

    client = openai.AsyncOpenAI(base_url=model.base_url, api_key="unused", max_retries=0, timeout=900)
    sem = asyncio.Semaphore(model.concurrency)
    top, extra = sampling.request_params()

    async def one(r):
        async with sem:
            resp = await client.chat.completions.create(
                model=model.request_model, messages=r["messages"], max_tokens=model.max_tokens,
                response_format=response_format(rubric.critic_schema(), "critique"), extra_body=extra or None,
                **{**top, "seed": r["seed"]},
            )  # fmt: skip
            return resp.choices[0].message.content or "", resp.usage.completion_tokens

    t0 = time.perf_counter()
    try:
        out = await asyncio.gather(*(one(r) for r in reqs))
    finally:
        await client.close()
    return [t for t, _ in out], time.perf_counter() - t0, sum(n for _, n in out)


def verdicts(text: str):
    try:
        v = json.loads(text)
        return tuple(v[c]["verdict"] if isinstance(v[c], dict) else v[c] for c in sorted(v, key=int))
    except (ValueError, KeyError, TypeError):
        return None


def with_dtype(cfg, dtype: str):
    """The config with every model served in ``dtype``."""
    models = {n: dataclasses.replace(m, serve=dataclasses.replace(m.serve, dtype=dtype)) for n, m in cfg.models.items()}
    return dataclasses.replace(cfg, models=models)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default=str(ROOT / "configs" / "embedded.toml"))
    ap.add_argument("--models", default="gemma3,smollm2")
    ap.add_argument("--requests", type=int, default=48)
    ap.add_argument("--run-dir", default=str(ROOT / "data" / "runs" / "reference"))
    ap.add_argument("--dtype", help="serve every model in this dtype instead of the config's (e.g. float32)")
    args = ap.parse_args()
    cfg = load_config(args.config)
    if args.dtype:
        cfg = with_dtype(cfg, args.dtype)
    found = {}
    for name in args.models.split(","):
        model = cfg.model(name)
        reqs = requests(model, args.requests, args.run_dir)
        with Servers(cfg, names=[name]) as servers:
            if servers.reused:
                raise SystemExit(f"{name} is already served: stop that server first")
            asyncio.run(batch(model, reqs[:4], model.sampling))  # warm-up: the grammar compiles once
            per = {}
            for recipe, change in RECIPES.items():
                texts, wall, tokens = asyncio.run(batch(model, reqs, dataclasses.replace(model.sampling, **change)))
                per[recipe] = {"texts": texts, "wall_s": round(wall, 1), "completion_tokens": tokens,
                               "tokens_per_s": round(tokens / wall, 1)}  # fmt: skip
        ref = per["top_p=0.9 (committed)"]["texts"]
        for r in per.values():
            texts = r.pop("texts")
            r["identical_to_committed"] = round(sum(a == b for a, b in zip(ref, texts, strict=True)) / len(ref), 3)
            r["verdicts_identical_to_committed"] = round(
                sum(verdicts(a) == verdicts(b) for a, b in zip(ref, texts, strict=True)) / len(ref), 3
            )
        found[name] = per
        print(name, json.dumps(per), flush=True)
    result = result_record("sampler", requests=args.requests, dtype=args.dtype or "as configured",
                           temperature=cfg.model("gemma3").sampling.temperature,
                           recipes={k: v or "committed" for k, v in RECIPES.items()}, models=found)  # fmt: skip
    write_result("sampler", result)


if __name__ == "__main__":
    main()
