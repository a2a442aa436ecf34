"""Does a row's result depend on the batch it is computed in? The GEMM kernels vLLM's CPU backend uses, without
a server, on every linear layer of both embedded models (their real weights), bf16 and float32.

vLLM 0.32's CPU path chooses a kernel per layer when the model loads (``dispatch_cpu_unquantized_gemm``: the
SGL ``weight_packed_linear`` for small weights, oneDNN's matmul otherwise, ``torch.nn.functional.linear`` where
neither applies) and oneDNN picks its primitive by the step's token count M. Each layer here is dispatched the same
way, then fed ``x[:M]`` for M in {1, 2, 4, 5, 8, 16, 17, 64, 300} with one shared first row; row 0 of every output
is compared bitwise with row 0 at M = 1. A layer whose row 0 moves with M makes a request's logits depend on which
other requests share its step: the reason a rerun with the same seeds can answer differently.

Run: .venv/bin/python benchmarks/bench_batch_invariance.py [--config configs/embedded.toml]
Writes benchmarks/results/batch_invariance.json. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
import os

from common import ROOT, result_record, write_result  # benchmarks/common.py (this script's folder is on sys.path)

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")

M_VALUES = (1, 2, 4, 5, 8, 16, 17, 64, 300)


class _Layer:
    """What vLLM's dispatch reads and writes on a linear layer: ``weight`` in, ``cpu_linear`` out."""

    def __init__(self, weight):
        import torch

        self.weight = torch.nn.Parameter(weight, requires_grad=False)
        self.bias = None


def _kernel_name(layer) -> str:
    f = layer.cpu_linear
    code = getattr(f, "__code__", None)
    if code is None:
        return getattr(f, "__name__", type(f).__name__)
    names = set(code.co_names)
    for marker, name in (("onednn_mm", "oneDNN"), ("weight_packed_linear_cpu", "SGL weight_packed_linear"),
                         ("zentorch_linear_unary", "zentorch")):  # fmt: skip
        if marker in names:
            return name
    return "torch linear"


def layer_weights(model_dir):
    """(name, 2-D weight) for each linear layer of a model's first decoder layer as vLLM runs it (q, k and v
    fused into one qkv_proj, gate and up into one gate_up_proj), and its output head (the tied embedding, as vLLM
    computes the logits)."""
    import torch
    from safetensors import safe_open

    with safe_open(str(model_dir / "model.safetensors"), "pt") as f:
        keys = sorted(f.keys())
        layer = {k.split(".layers.0.", 1)[1].removesuffix(".weight"): k for k in keys
                 if ".layers.0." in k and k.endswith("proj.weight")}  # fmt: skip
        w = {name: f.get_tensor(k) for name, k in layer.items()}
        out = [
            ("self_attn.qkv_proj", torch.cat([w["self_attn.q_proj"], w["self_attn.k_proj"], w["self_attn.v_proj"]])),
            ("self_attn.o_proj", w["self_attn.o_proj"]),
            ("mlp.gate_up_proj", torch.cat([w["mlp.gate_proj"], w["mlp.up_proj"]])),
            ("mlp.down_proj", w["mlp.down_proj"]),
        ]
        head = next(k for k in keys if k.endswith("embed_tokens.weight"))
        out.append(("lm_head (tied embedding)", f.get_tensor(head)))
    return out


def probe(weight, dtype, seed: int = 0) -> dict:
    import torch
    from vllm.model_executor.layers.utils import dispatch_cpu_unquantized_gemm

    layer = _Layer(weight.to(dtype).contiguous())
    dispatch_cpu_unquantized_gemm(layer, remove_weight=False)
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(max(M_VALUES), weight.shape[1], generator=g).to(dtype)
    with torch.inference_mode():
        ref = layer.cpu_linear(x[:1], layer.weight, None)[0].float()
        moved = {}
        for m in M_VALUES[1:]:
            row = layer.cpu_linear(x[:m], layer.weight, None)[0].float()
            diff = (row - ref).abs()
            moved[m] = {"differs": bool((diff > 0).any()), "max_abs_diff": float(diff.max()),
                        "share_of_outputs_changed": float((diff > 0).float().mean())}  # fmt: skip
    return {"kernel": _kernel_name(layer), "shape": list(weight.shape), "by_m": moved,
            "invariant": not any(v["differs"] for v in moved.values())}  # fmt: skip


def main() -> None:
    import torch

    from vocab.config import load_config
    from vocab.serving.models import prepared_dir

    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default=str(ROOT / "configs" / "embedded.toml"))
    args = ap.parse_args()
    cfg = load_config(args.config)
    torch.set_num_threads(1)  # as each server runs: one OpenMP thread
    models = {}
    for m in cfg.models.values():
        if m.kind != "embedded":
            continue
        rows = []
        for name, w in layer_weights(prepared_dir(cfg.cache_dir, m.asset)):
            for dtype in (torch.bfloat16, torch.float32):
                rows.append({"layer": name, "dtype": str(dtype).removeprefix("torch."), **probe(w, dtype)})
        models[m.name] = rows
    summary = {
        name: {
            dtype: {
                "layers": sum(r["dtype"] == dtype for r in rows),
                "batch_variant": sorted(r["layer"] for r in rows if r["dtype"] == dtype and not r["invariant"]),
            }
            for dtype in ("bfloat16", "float32")
        }  # fmt: skip
        for name, rows in models.items()
    }
    result = result_record("batch_invariance", m_values=list(M_VALUES), torch=torch.__version__,
                           threads=torch.get_num_threads(), summary=summary, models=models)  # fmt: skip
    write_result("batch_invariance", result)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
