"""Where a server's time goes under the study's load: py-spy (PyPI) on the model's engine-core process while the
study's critic requests keep its concurrency full.

The server is started with the committed config (or with --sampling changes); a load of the reference run's critic
requests (bench_sampler.requests) is kept at the model's concurrency for the whole recording. py-spy samples the
``VLLM::EngineCore`` process (Python frames, and native ones with --native) into collapsed stacks; the summary gives
each part's share of the samples (a sample counts for a part when any of its frames matches the part's patterns,
so shares are inclusive) and the most frequent leaf frames. A flame graph (SVG) is recorded after it, under the
same load.

Run: .venv/bin/python benchmarks/bench_profile.py [--model gemma3] [--seconds 45] [--native] [--tag default]
Writes benchmarks/results/profile_<model>_<tag>.json and .svg. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import dataclasses
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

from bench_sampler import batch, requests, with_dtype
from common import ROOT, result_record, write_result  # benchmarks/common.py (this script's folder is on sys.path)

from vocab.config import load_config
from vocab.serving.recipes import served_dtype
from vocab.serving.servers import Servers

# part -> substrings of a frame ("function (file:line)") that put a sample in it; first match per part
PARTS = {
    "sampler: top-k/top-p (sorts the vocabulary)": ("apply_top_k_top_p", "apply_top_k_only"),
    "sampler: all": ("v1/sample/",),
    "model forward": ("execute_model", "_model_forward"),
    "attention": ("cpu_attn", "attention"),
    "linear layers": ("linear", "onednn_mm", "weight_packed_linear"),
    "output head (logits)": ("compute_logits", "logits_processor"),
    "structured output (grammar bitmask)": ("structured_output", "xgrammar", "bitmask"),
    "scheduler": ("v1/core/sched",),
    "waiting for work (idle)": ("_process_input_queue", "wait (threading", "get (queue", "poll", "select"),
}


def engine_core_pid(server_pid: int) -> int:
    out = subprocess.run(["pgrep", "-P", str(server_pid), "-f", "EngineCore"], capture_output=True, text=True)
    pids = [int(p) for p in out.stdout.split()]
    if not pids:
        raise SystemExit(f"no VLLM::EngineCore child of {server_pid}")
    return pids[0]


# The engine's own thread: its busy loop runs every step. With --native py-spy also samples the engine's helper
# threads (sockets, signals, tqdm's monitor), idle all the time; they are left out so shares are of the engine's time.
ENGINE_THREAD = "run_busy_loop"


def summarise(collapsed: Path) -> dict:
    total, parts, leaves = 0, collections.Counter(), collections.Counter()
    for line in collapsed.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or ENGINE_THREAD not in stack:
            continue
        count = int(n)
        total += count
        frames = stack.split(";")
        leaves[frames[-1]] += count
        for part, pats in PARTS.items():
            if any(p in f for f in frames for p in pats):
                parts[part] += count
    return {
        "samples": total,
        "thread": f"the engine-core thread (stacks through {ENGINE_THREAD})",
        "parts": {p: round(parts[p] / total, 4) for p in PARTS} if total else {},
        "top_leaf_frames": [{"frame": f, "share": round(c / total, 4)} for f, c in leaves.most_common(15)],
    }


def keep_busy(model, reqs, sampling, stop: threading.Event) -> None:
    while not stop.is_set():
        asyncio.run(batch(model, reqs, sampling))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default=str(ROOT / "configs" / "embedded.toml"))
    ap.add_argument("--model", default="gemma3")
    ap.add_argument("--seconds", type=int, default=45)
    ap.add_argument("--native", action="store_true")
    ap.add_argument("--tag", default="committed")
    ap.add_argument("--sampling", default="{}", help="JSON changes to the sampling, e.g. '{\"top_p\": null}'")
    ap.add_argument("--dtype", help="serve the model in this dtype instead of the config's (e.g. bfloat16)")
    args = ap.parse_args()
    cfg = load_config(args.config)
    if args.dtype:
        cfg = with_dtype(cfg, args.dtype)
    model = cfg.model(args.model)
    sampling = dataclasses.replace(model.sampling, **json.loads(args.sampling))
    reqs = requests(model, 64, ROOT / "data" / "runs" / "reference")
    spy = Path(sys.executable).with_name("py-spy")
    out = ROOT / "benchmarks" / "results" / f"profile_{args.model}_{args.tag}"
    with Servers(cfg, names=[args.model]) as servers:
        if servers.reused:
            raise SystemExit(f"{args.model} is already served: stop that server first")
        pid = engine_core_pid(servers.procs[args.model].pid)
        asyncio.run(batch(model, reqs[:4], sampling))  # the grammar compiles once
        stop = threading.Event()
        load = threading.Thread(target=keep_busy, args=(model, reqs, sampling, stop), daemon=True)
        load.start()
        time.sleep(20)  # the load reaches the model's concurrency
        # py-spy cannot read native stacks without pausing the process: --native samples blocking, else not
        mode = ["--native"] if args.native else ["--nonblocking"]
        raw = Path(f"/tmp/profile_{args.model}_{args.tag}.txt")
        for fmt, path in (("raw", raw), ("flamegraph", out.with_suffix(".svg"))):
            done = subprocess.run([str(spy), "record", "--pid", str(pid), "--duration", str(args.seconds), "--rate",
                                   "50", "--format", fmt, "--output", str(path), *mode],
                                  capture_output=True, text=True)  # fmt: skip
            if done.returncode:
                raise SystemExit(f"py-spy failed: {done.stderr.strip()[-500:]}")
        stop.set()
        load.join(timeout=5)  # its last batch may still run; the servers stop under it
    summary = summarise(raw)
    result = result_record(f"profile_{args.model}_{args.tag}", model=args.model, seconds=args.seconds,
                           native=args.native, dtype=served_dtype(model.serve.dtype, cfg.profile),
                           sampling=dataclasses.asdict(sampling), concurrency=model.concurrency, **summary)  # fmt: skip
    write_result(f"profile_{args.model}_{args.tag}", result)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
