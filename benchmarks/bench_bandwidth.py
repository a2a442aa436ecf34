"""The memory-bandwidth limit of a decode step: bytes a step reads per model, the bandwidth one core reaches here
(a STREAM-like copy and a read-only sum in numpy), and the tokens per second that allows at 16 sequences per step.

A decode step reads every weight once (the output head: the whole tied embedding, 262k x 640 for gemma-3-270m) and
each sequence's KV cache; at 16 sequences per step the weights are read once for 16 tokens. This is the ceiling
the engine's measured tokens/s is set against (benchmarks/results/full_design.json, needle.json).

Run: .venv/bin/python benchmarks/bench_bandwidth.py [--mib 1024] [--repeats 5]
Writes benchmarks/results/bandwidth.json. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
from common import ROOT, result_record, write_result  # benchmarks/common.py (this script's folder is on sys.path)

SEQUENCES = 16  # the study's requests in flight per server
CONTEXT = 1000  # tokens of context per sequence in a critic call (about 740 prompt + 250 answer)


def bandwidth(mib: int, repeats: int) -> dict:
    """GB/s of a copy (read + write counted) and of a read-only sum, best of ``repeats``, on one core; the memory
    traffic one core moves is the larger of the two."""
    n = mib * 2**20 // 8
    a = np.ones(n)
    b = np.empty_like(a)
    copy, read = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.copyto(b, a)
        copy.append(2 * a.nbytes / (time.perf_counter() - t0) / 1e9)
        t0 = time.perf_counter()
        a.sum()
        read.append(a.nbytes / (time.perf_counter() - t0) / 1e9)
    # the limit uses the larger: a single-threaded sum is bounded by its adds, not by memory, on some cores
    return {"mib": mib, "copy_gb_s": round(max(copy), 2), "read_gb_s": round(max(read), 2),
            "traffic_gb_s": round(max(max(copy), max(read)), 2)}  # fmt: skip


def model_bytes(model_dir, dtype_bytes: int) -> dict:
    """Bytes a decode step reads for one model served with ``dtype_bytes`` per value: its weights (embedding
    counted once, as the output head reads all of it) and, per sequence, the KV cache of CONTEXT tokens."""
    cfg = json.loads((model_dir / "config.json").read_text())
    from safetensors import safe_open

    params = 0
    with safe_open(str(model_dir / "model.safetensors"), "np") as f:
        for k in f.keys():  # noqa: SIM118 - safetensors' handle is not iterable
            params += int(np.prod(f.get_slice(k).get_shape()))
    layers, kv_heads = cfg["num_hidden_layers"], cfg["num_key_value_heads"]
    head_dim = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    kv_per_token = 2 * layers * kv_heads * head_dim * dtype_bytes  # K and V
    return {"parameters": params, "bytes_per_value": dtype_bytes, "weight_bytes": dtype_bytes * params,
            "kv_bytes_per_token": kv_per_token,
            "vocabulary": cfg["vocab_size"]}  # fmt: skip


def main() -> None:
    from vocab.config import load_config
    from vocab.serving.models import prepared_dir
    from vocab.serving.recipes import served_dtype

    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default=str(ROOT / "configs" / "embedded.toml"))
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    os.sched_setaffinity(0, {0})  # one core, as each server runs
    bw = bandwidth(args.mib, args.repeats)
    cfg = load_config(args.config)
    models = {}
    for m in cfg.models.values():
        if m.kind != "embedded":
            continue
        dtype = served_dtype(m.serve.dtype, cfg.profile)
        b = model_bytes(prepared_dir(cfg.cache_dir, m.asset), {"float32": 4}.get(dtype, 2))
        step = b["weight_bytes"] + SEQUENCES * CONTEXT * b["kv_bytes_per_token"]
        limit = round(SEQUENCES * bw["traffic_gb_s"] * 1e9 / step, 1)
        models[m.name] = {**b, "dtype": dtype, "bytes_per_step_at_16": step, "tokens_per_s_limit_at_16": limit}
    result = result_record("bandwidth", sequences=SEQUENCES, context_tokens=CONTEXT, bandwidth=bw, models=models)
    write_result("bandwidth", result)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
