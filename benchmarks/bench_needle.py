"""Does a seeded request's answer depend on the requests it shares the server with? A needle test on a real
server, per serving configuration.

One seeded critic request (the study's prompt, schema and sampling) with token logprobs is sent alone (twice: is
the server even repeatable with nothing else in flight?), then among 3, 7 and 15 filler requests (other levels'
critic prompts, other seeds) started a little apart so that the needle lands in mixed prefill/decode steps, then
after a request that shares its prompt up to the sentence (so prefix caching serves part of its prompt from a
cache filled by another request). Each answer's tokens and logprobs are compared bitwise with the first alone.

Configurations are started one after another by this script (nothing may listen on the model's port):
``committed`` is the config as committed; the others change one thing from it (see CONFIGS; each result records
its dtype, arguments and environment, and the commit it was measured at: the first rows, named ``default``, were
measured while the committed config served bfloat16).

Run: .venv/bin/python benchmarks/bench_needle.py [--model gemma3] [--configs default,no-prefix-cache,...]
     [--merge --tag avx2]  (a row measured on another machine, kept beside the others; each row records its CPU)
Writes benchmarks/results/needle.json. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import time

# benchmarks/common.py (this script's folder is on sys.path)
from common import ROOT, STARTED_ON, earlier_rows, result_record, write_result

from vocab import levels as lv
from vocab import prompts, rubric
from vocab.config import load_config
from vocab.records import machine
from vocab.serving.client import response_format
from vocab.serving.recipes import served_dtype
from vocab.serving.servers import Servers

# what each configuration changes: (dtype or None, extra vllm serve arguments, extra environment of the server).
# VLLM_CPU_ATTN_SPLIT_KV=0: vLLM's CPU attention then reduces each sequence's keys and values in one pass instead
# of splitting them into chunks planned from the whole step's batch (with one OpenMP thread a split gains nothing)
CONFIGS = {
    "committed": (None, (), {}),
    "bfloat16": ("bfloat16", (), {}),
    "no-prefix-cache": (None, ("--no-enable-prefix-caching",), {}),
    "float32": ("float32", (), {}),
    "float32-no-prefix-cache": ("float32", ("--no-enable-prefix-caching",), {}),
    "one-seq-per-step": (None, ("--max-num-seqs", "1"), {}),
    "no-kv-split": (None, (), {"VLLM_CPU_ATTN_SPLIT_KV": "0"}),
}

FILLERS = (3, 7, 15)
NEEDLE_LEVEL = 17
SENTENCE = "The stone notes fell on the tones of a stoned set."


def _critic_request(model, level: int, sentence: str, seed: int) -> dict:
    lvl = lv.generate(level)
    msgs = prompts.critic_messages(lvl, sentence, list(lvl.words))
    top, extra = model.sampling.request_params()
    top = {**top, "seed": seed}
    return {"model": model.request_model, "messages": msgs, "max_tokens": model.max_tokens,
            "response_format": response_format(rubric.critic_schema(), "critique"), "logprobs": True,
            "extra_body": extra or None, **top}  # fmt: skip


async def _ask(client, req: dict, delay: float = 0.0) -> dict:
    await asyncio.sleep(delay)
    r = await client.chat.completions.create(**req)
    c = r.choices[0]
    lp = [(t.token, t.logprob) for t in (c.logprobs.content or [])] if c.logprobs else []
    return {"text": c.message.content or "", "logprobs": lp}


def _compare(a: dict, b: dict) -> dict:
    first = next((i for i, (x, y) in enumerate(zip(a["logprobs"], b["logprobs"], strict=False)) if x != y), None)
    if first is None and len(a["logprobs"]) != len(b["logprobs"]):
        first = min(len(a["logprobs"]), len(b["logprobs"]))
    same_tokens = [t for t, _ in a["logprobs"]] == [t for t, _ in b["logprobs"]]
    return {"identical_text": a["text"] == b["text"], "identical_tokens": same_tokens,
            "identical_logprobs": a["logprobs"] == b["logprobs"], "first_logprob_difference": first,
            "tokens": len(b["logprobs"])}  # fmt: skip


async def scenarios(model) -> dict:
    import openai

    client = openai.AsyncOpenAI(base_url=model.base_url, api_key="unused", max_retries=0, timeout=600)
    needle = _critic_request(model, NEEDLE_LEVEL, SENTENCE, seed=0)
    out: dict[str, dict] = {}
    try:
        base = await _ask(client, needle)
        out["alone-again"] = _compare(base, await _ask(client, needle))
        for k in FILLERS:
            fills = [_critic_request(model, 100 + i, SENTENCE, seed=1 + i) for i in range(k)]
            # fillers start 0.3 s apart; the needle joins in the middle, while some are in prefill, some decoding
            tasks = [_ask(client, f, 0.3 * i) for i, f in enumerate(fills)]
            tasks.insert(k // 2, _ask(client, needle, 0.3 * (k // 2) + 0.15))
            answers = await asyncio.gather(*tasks)
            out[f"among-{k}"] = _compare(base, answers[k // 2])
        # a request sharing the needle's prompt up to the sentence, then the needle (its prefix may come from cache)
        sibling = _critic_request(model, NEEDLE_LEVEL, "A different sentence about notes and stones.", seed=7)
        await _ask(client, sibling)
        out["after-shared-prefix"] = _compare(base, await _ask(client, needle))
        sib_task = asyncio.create_task(_ask(client, sibling))
        await asyncio.sleep(0.5)
        out["beside-shared-prefix"] = _compare(base, await _ask(client, needle))
        await sib_task
    finally:
        await client.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default=str(ROOT / "configs" / "embedded.toml"))
    ap.add_argument("--model", default="gemma3")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--merge", action="store_true", help="add to benchmarks/results/needle.json, do not replace it")
    ap.add_argument("--tag", default="", help="stored as <config>@<tag>: the same configuration on another machine")
    args = ap.parse_args()
    cfg = load_config(args.config)
    results = {}
    for name in args.configs.split(","):
        dtype, extra, env = CONFIGS[name]
        m = cfg.model(args.model)
        serve = dataclasses.replace(m.serve, dtype=dtype or m.serve.dtype, extra_args=m.serve.extra_args + extra)
        one = dataclasses.replace(cfg, models={args.model: dataclasses.replace(m, serve=serve)})
        t0 = time.perf_counter()
        servers = Servers(one, names=[args.model])
        servers.specs = [dataclasses.replace(sp, env={**sp.env, **env}) for sp in servers.specs]
        with servers:
            if servers.reused:
                raise SystemExit(f"port {m.port} is already served: stop that server first")
            started = time.perf_counter() - t0
            found = asyncio.run(scenarios(one.model(args.model)))
        key = f"{name}@{args.tag}" if args.tag else name
        results[key] = {"sampling": dataclasses.asdict(m.sampling), "dtype": served_dtype(serve.dtype, cfg.profile),
                        "extra_args": list(extra), "env": env, "startup_s": round(started, 1), "scenarios": found,
                        "machine": machine(),
                        "all_identical": all(v["identical_logprobs"] for v in found.values())}  # fmt: skip
        print(name, json.dumps({k: v["identical_logprobs"] for k, v in found.items()}), flush=True)
    result = result_record("needle", model=args.model, needle_level=NEEDLE_LEVEL, fillers=list(FILLERS),
                           configs=results)  # fmt: skip
    out = ROOT / "benchmarks" / "results" / "needle.json"
    if args.merge:  # keep the configurations measured earlier that this run did not measure, with their commits
        result["configs"] = {
            **earlier_rows(out, "configs"),
            **{k: {**v, "commit": STARTED_ON} for k, v in results.items()},
        }
    write_result("needle", result)


if __name__ == "__main__":
    main()
