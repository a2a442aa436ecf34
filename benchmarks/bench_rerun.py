"""Does a rerun repeat, and at what speed? Per serving configuration: the same slice of the study's design run twice
on the same servers (same config, seeds, servers; the second run finds the caches the first left), compared
attempt by attempt with :mod:`vocab.rerun` (an attempt is identical in full when the writer's sentence and key
and the critic's 12 verdicts are, or the same error ended it), with each run's attempts per hour measured
alongside.

Configurations (see CONFIGS) change the servers' environment, their vllm serve arguments or the sampling; the
servers are started and stopped by this script for each (nothing may listen on the models' ports).

Run: .venv/bin/python benchmarks/bench_rerun.py --configs committed [--every 4] [--merge [--tag avx2]]
     .venv/bin/python benchmarks/bench_rerun.py --configs committed,bfloat16,... --passes 1 --every 14 --name NAME
     (speed only, side by side: one pass of a smaller slice per configuration)
Writes benchmarks/results/rerun.json or NAME.json (one row per configuration, each with the machine it ran on). A
measurement, not a test: nothing asserts.
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

# benchmarks/common.py (this script's folder is on sys.path)
from common import ROOT, STARTED_ON, earlier_rows, result_record, write_result

from vocab import levels as lv
from vocab import rerun
from vocab.config import load_config
from vocab.loop import run_design
from vocab.machine import machine
from vocab.records import load_run
from vocab.serving.client import Clients
from vocab.serving.servers import Servers

# name: (what differs from the committed config, in words; environment for every server; extra vllm serve args;
# dtype per model; sampling changes per model; serve options per model; changes to one server's process, by server
# name: its CPUs and environment). The last three are for the AVX2 side by side (#46): gemma-3-270m is the slower
# model (its 262k-token output head), so its server idles SmolLM2's core half the time unless it may use it.
CONFIGS = {
    "committed": ("the config as committed", {}, (), {}, {}),
    "bfloat16": ("both models served in bfloat16", {}, (), {"smollm2": "bfloat16", "gemma3": "bfloat16"}, {}),
    "gemma-bfloat16": ("gemma3 served in bfloat16, SmolLM2 as committed", {}, (), {"gemma3": "bfloat16"}, {}),
    "no-prefix-cache": ("--no-enable-prefix-caching", {}, ("--no-enable-prefix-caching",), {}, {}),
    "gemma-2-threads": ("gemma3 on both cores with two OpenMP threads (passive wait), SmolLM2 pinned to core 0",
                        {}, (), {}, {}, {},
                        {"gemma3": {"cpus": (0, 1), "env": {"OMP_NUM_THREADS": "2", "OMP_WAIT_POLICY": "passive"}}}),
    "gemma-replicas": ("two gemma3 servers (cores 1 and 0) behind vllm-router, SmolLM2 on core 0 beside one",
                       {}, (), {}, {}, {"gemma3": {"replicas": 2, "replica_ports": (8112, 8122),
                                                   "replica_cores": (1, 0), "router_metrics_port": 8132}}),
}  # fmt: skip


def configured(cfg, env: dict, args: tuple, dtypes: dict, sampling: dict, serve_changes: dict | None = None):
    models = {}
    for name, m in cfg.models.items():
        dtype = dtypes.get(name, m.serve.dtype)
        serve = dataclasses.replace(m.serve, dtype=dtype, extra_args=m.serve.extra_args + args,
                                    **(serve_changes or {}).get(name, {}))  # fmt: skip
        samp = dataclasses.replace(m.sampling, **sampling.get(name, {}))
        models[name] = dataclasses.replace(m, serve=serve, sampling=samp)
    return dataclasses.replace(cfg, models=models)


async def one_run(cfg, loop, run_dir: Path) -> dict:
    t0 = time.perf_counter()
    async with Clients.from_config(cfg) as clients:
        s = await run_design(cfg, loop, run_dir, clients, progress=False)
    wall = time.perf_counter() - t0
    return {"attempts": s.attempts_new, "errors": s.errors_new, "wall_s": round(wall, 1),
            "attempts_per_hour": round(3600 * s.attempts_new / wall, 1)}  # fmt: skip


def agreement(run, again) -> dict:
    """:func:`vocab.rerun.summary` of a run and its rerun, over all cells and per cell."""
    s = rerun.summary(run, again).set_index("cell")
    total, n = s.loc["all"], int(s.loc["all", "attempts"])
    return {
        "attempts": n,
        "identical_share": round(float(total.attempt_same), 4),
        "identical": int(round(float(total.attempt_same) * n)),
        "writer_same": round(float(total.writer_same), 4),
        "critic_same": round(float(total.critic_same), 4),
        "levels_same": round(float(total.level_same), 4),
        "by_cell": {c: round(float(s.loc[c, "attempt_same"]), 4) for c in s.index if c != "all"},
    }


def measure(cfg, loop, env: dict, out: Path, process: dict | None = None, passes: int = 2) -> dict:
    servers = Servers(cfg)
    process = process or {}

    def changed(sp):
        own = process.get(sp.name, {})
        return dataclasses.replace(sp, env={**sp.env, **env, **own.get("env", {})}, cpus=own.get("cpus", sp.cpus))

    servers.specs = [changed(sp) for sp in servers.specs]
    with servers:
        if servers.reused:
            raise SystemExit(f"servers already up for {servers.reused}: stop them first")
        first = asyncio.run(one_run(cfg, loop, out / "run"))
        if passes == 1:
            return {"runs": [first], "attempts_per_hour": first["attempts_per_hour"]}
        second = asyncio.run(one_run(cfg, loop, out / "rerun"))
    return {**agreement(load_run(out / "run"), load_run(out / "rerun")), "runs": [first, second],
            "attempts_per_hour": round((first["attempts"] + second["attempts"]) * 3600
                                       / (first["wall_s"] + second["wall_s"]), 1)}  # fmt: skip


def from_runs(run_dir: Path, rerun_dir: Path) -> dict:
    """The same comparison for a committed run and its rerun slice, the rerun's speed from its manifest (its start
    to its end): a configuration measured before this benchmark existed."""
    import pandas as pd

    run, again = load_run(run_dir), load_run(rerun_dir)
    wall = (pd.Timestamp(again.manifest["finished"]) - pd.Timestamp(again.manifest["started"])).total_seconds()
    return {**agreement(run, again), "attempts_per_hour": round(3600 * len(again.attempts) / wall, 1),
            "source": f"{run_dir.relative_to(ROOT)} and {rerun_dir.relative_to(ROOT)}"}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default=str(ROOT / "configs" / "embedded.toml"))
    ap.add_argument("--configs", default="committed")
    ap.add_argument("--every", type=int, default=4, help="every n-th level of the study's design (4: 35 levels)")
    ap.add_argument("--passes", type=int, choices=(1, 2), default=2,
                    help="1: speed only (one pass, no comparison); 2: the slice run twice and compared")  # fmt: skip
    ap.add_argument("--name", default="rerun", help="the result's name: benchmarks/results/NAME.json")
    ap.add_argument("--merge", action="store_true", help="add to benchmarks/results/NAME.json, do not replace it")
    ap.add_argument("--tag", default="", help="stored as <config>@<tag>: the same configuration on another machine")
    ap.add_argument("--keep", help="keep the run directories under this folder")
    ap.add_argument("--from-runs", nargs=3, metavar=("NAME", "RUN", "RERUN"),
                    help="a row from a committed run and its rerun slice instead of running servers")  # fmt: skip
    ap.add_argument("--what", default="bfloat16 for both models, unbound servers (the previous reference run's)",
                    help="with --from-runs: the row's config, what differs from the committed one")  # fmt: skip
    args = ap.parse_args()
    path = ROOT / "benchmarks" / "results" / f"{args.name}.json"
    if args.from_runs:
        name, a, b = args.from_runs
        found = from_runs(ROOT / a, ROOT / b)
        rows = earlier_rows(path, "configurations") if args.merge else {}
        rows[name] = {"config": args.what, "default": False, **found, "commit": STARTED_ON}
        write_result(args.name, result_record(args.name, design_every=args.every, configurations=rows))
        print(name, json.dumps({k: found[k] for k in ("attempts", "identical_share", "attempts_per_hour")}))
        return
    base = load_config(args.config)
    design = lv.design(lv.parse_ranges(base.loop.tiers, "tier"), base.loop.per_tier, base.loop.design_seed)
    levels = sorted(design)[:: args.every]
    loop = dataclasses.replace(base.loop, levels=",".join(map(str, levels)), tiers=None)
    earlier = earlier_rows(path, "configurations") if args.merge else {}
    rows = {}
    for name in args.configs.split(","):
        what, env, extra, dtypes, sampling, *more = CONFIGS[name]
        serve_changes, process = (more + [{}, {}])[:2]
        cfg = configured(base, env, extra, dtypes, sampling, serve_changes)
        out = Path(args.keep) / name if args.keep else Path(tempfile.mkdtemp(prefix=f"vocab-rerun-{name}-"))
        shutil.rmtree(out, ignore_errors=True)
        found = measure(cfg, loop, env, out, process, args.passes)
        key = f"{name}@{args.tag}" if args.tag else name
        rows[key] = {"config": what, "default": name == "committed", "levels": len(levels), "every": args.every,
                      "passes": args.passes, **found, "machine": machine(), "commit": STARTED_ON}  # fmt: skip
        print(key, json.dumps({k: found.get(k) for k in ("attempts", "identical_share", "attempts_per_hour")}),
              flush=True)  # fmt: skip
        # written after every configuration: one that fails to start later loses none measured before it
        write_result(args.name, result_record(args.name, design_every=args.every, configurations={**earlier, **rows}))


if __name__ == "__main__":
    main()
