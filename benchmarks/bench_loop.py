"""The loop's concurrency gain and the harness's own cost per attempt, on the real embedded servers.

Runs the same fixed small design twice, side by side on the same servers: once with every endpoint's
concurrency set to 1 (sequential), once with the config's concurrency; reports attempts per hour for both
and their ratio. The sequential run also gives the harness's own time per attempt outside model calls:
(wall time − summed call seconds) / attempts, exact when one endpoint serves both roles (the default
cell, smollm2__smollm2), since its calls then run one at a time. The servers must be up (`vocab serve`);
results go to throwaway run directories under --out. Prints one JSON object and writes it to
benchmarks/results/loop.json. A measurement, not a test: nothing here asserts a speed.

Run: .venv/bin/python benchmarks/bench_loop.py [--levels 1-6] [--writers smollm2] [--critics smollm2]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import shutil
import tempfile
import time
from pathlib import Path

from common import result_record, write_result  # benchmarks/common.py (this script's folder is on sys.path)

from vocab.config import load_config
from vocab.loop import run_design
from vocab.records import load_run
from vocab.serving.client import Clients


async def one(cfg, loop, run_dir: Path):
    t0 = time.perf_counter()
    async with Clients.from_config(cfg) as clients:
        summary = await run_design(cfg, loop, run_dir, clients, progress=False)
    wall = time.perf_counter() - t0
    run = load_run(run_dir)
    call_s = sum(a.usage["writer"]["seconds"] + a.usage["critic"]["seconds"] for a in run.attempts.itertuples())
    return {
        "attempts": summary.attempts_new,
        "errors": summary.errors_new,
        "wall_s": round(wall, 2),
        "attempts_per_hour": round(3600 * summary.attempts_new / wall, 1),
        "call_s": round(call_s, 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="configs/embedded.toml")
    ap.add_argument("--levels", default="1-6")
    ap.add_argument("--writers", default="smollm2")
    ap.add_argument("--critics", default="smollm2")
    ap.add_argument("--out", default=None, help="where the throwaway runs go (default: a temp dir)")
    args = ap.parse_args()
    cfg = load_config(args.config)
    loop = dataclasses.replace(
        cfg.loop, levels=args.levels, writers=tuple(args.writers.split(",")), critics=tuple(args.critics.split(","))
    )
    out = Path(args.out or tempfile.mkdtemp(prefix="vocab-bench-"))
    shutil.rmtree(out, ignore_errors=True)
    seq_models = {k: dataclasses.replace(m, concurrency=1) for k, m in cfg.models.items()}
    seq_cfg = dataclasses.replace(cfg, models=seq_models)
    sequential = asyncio.run(one(seq_cfg, loop, out / "sequential"))
    concurrent = asyncio.run(one(cfg, loop, out / "concurrent"))
    overhead = (sequential["wall_s"] - sequential["call_s"]) / max(1, sequential["attempts"])
    result = result_record(
        "loop",
        levels=args.levels,
        cells=len(loop.cells),
        concurrency={k: m.concurrency for k, m in cfg.models.items()},
        sequential=sequential,
        concurrent=concurrent,
        throughput_ratio=round(concurrent["attempts_per_hour"] / sequential["attempts_per_hour"], 2),
        harness_s_per_attempt=round(overhead, 4),
    )
    write_result("loop", result)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
