"""A structured round-trip through every configured model: the smallest proof that serving works.

Each model gets the same small writing task with a JSON schema; the answer must parse and match the
schema. Used by ``vocab roundtrip`` and by ``make demo`` before the study runs.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from vocab.config import Config, ModelConfig
from vocab.serving.client import Clients, ModelCallError, Usage

ROUNDTRIP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        # Bounds matter for tiny models: without maxItems the base gemma-3-270m fills the list until the
        # token budget runs out; xgrammar enforces both bounds.
        "sentence": {"type": "string", "maxLength": 300},
        "answer_key": {"type": "array", "items": {"type": "string", "maxLength": 40}, "maxItems": 3},
    },
    "required": ["sentence", "answer_key"],
    "additionalProperties": False,
}

ROUNDTRIP_MESSAGES = [
    {
        "role": "system",
        "content": "You write one English sentence that uses every word you are given. "
        "Reply with a JSON object: the sentence, and the list of given words it uses.",
    },
    {"role": "user", "content": "Words: stone, tones, notes. Write the sentence."},
]


@dataclass(frozen=True)
class RoundTrip:
    model: str
    value: dict[str, Any] | None
    usage: Usage | None
    error: dict[str, str] | None


async def roundtrip(config: Config, names: list[str] | None = None) -> list[RoundTrip]:
    names = names or sorted(config.models)

    async def one(clients: Clients, name: str) -> RoundTrip:
        try:
            r = await clients.get(name).structured(ROUNDTRIP_MESSAGES, ROUNDTRIP_SCHEMA, "roundtrip", max_tokens=128)
            return RoundTrip(name, r.value, r.usage, None)
        except ModelCallError as e:
            return RoundTrip(name, None, e.usage, e.as_record())

    async with Clients.from_config(config) as clients:
        return list(await asyncio.gather(*(one(clients, n) for n in names)))


def deployment(model: ModelConfig, timeout: float = 5.0) -> dict[str, Any]:
    """What the server behind ``model``'s endpoint says about itself, for the run's manifest: ``GET /v1/models``
    (each served model's id, ``root``, ``max_model_len`` and ``owned_by``, as vLLM and OpenAI-compatible servers
    answer) and ``GET /version`` at the endpoint's root (vLLM's version), each where it answers; otherwise the
    reason it did not, never an exception: a run is not stopped by a server that does not describe itself. Behind a
    vllm-router (a model's replicas, or an endpoint that is one) also ``GET /workers``: each replica's URL and
    health as the router sees them (and, for replicas vocab started, each one's own ``/version``)."""
    import json
    import os
    import urllib.request

    base = model.base_url.rstrip("/")
    headers = {}
    if model.api_key_env and os.environ.get(model.api_key_env):
        headers["Authorization"] = f"Bearer {os.environ[model.api_key_env]}"

    def get(url: str) -> Any:
        req = urllib.request.Request(url, headers=headers)
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.loads(r.read(1 << 20))  # at most 1 MiB: a description, not a download

    out: dict[str, Any] = {}
    try:
        data = get(f"{base}/models").get("data", [])
        keep = ("id", "root", "max_model_len", "owned_by")
        out["models"] = [{k: d[k] for k in keep if k in d} for d in data if isinstance(d, dict)]
    except Exception as e:  # noqa: BLE001 (anything a server may send back: a description is optional)
        out["models_error"] = f"{type(e).__name__}: {e}"[:200]
    root = base.removesuffix("/v1")

    def version(url: str, into: dict[str, Any]) -> None:
        try:
            into["version"] = get(f"{url}/version").get("version")
        except Exception as e:  # noqa: BLE001
            into["version_error"] = f"{type(e).__name__}: {e}"[:200]

    if model.serve.replicated:
        # Our own replicas: each one's /version asked directly. vllm-router 0.1.17 forwards /version to one replica
        # and counts it among the requests it sent on (measured: one more than the run's calls), which the
        # integration test compares with the calls the run made; /v1/models it answers itself.
        replicas = [{"url": f"http://127.0.0.1:{port}"} for port in model.serve.replica_ports]
        for r in replicas:
            version(r["url"], r)
        seen = {r.get("version") for r in replicas}
        if len(seen) == 1 and None not in seen:
            out["version"] = seen.pop()
        else:
            out["version_error"] = "the replicas report different versions or none: see router_workers"
    else:
        version(root, out)
    if model.serve.replicated or model.kind == "endpoint":
        # a vllm-router lists the replicas behind it; any other server has no such page, and that is no error
        try:
            workers = get(f"{root}/workers").get("workers")
            health = {w.get("url"): w.get("is_healthy") for w in workers}
            if model.serve.replicated:
                out["router_workers"] = [{**r, "is_healthy": health.get(r["url"])} for r in replicas]
            else:
                out["router_workers"] = [{"url": u, "is_healthy": h} for u, h in health.items()]
        except Exception:  # noqa: BLE001, S110
            if model.serve.replicated:
                out["router_workers"] = replicas
    return out
