"""vocab.serving.client against a local server that misbehaves on purpose: every fault has its typed error."""

from __future__ import annotations

import asyncio
import socket

import pytest

from vocab.config import ModelConfig, Sampling, load_config
from vocab.serving.client import CallBudget, Clients, ModelCallError, ModelClient

from .fault_server import FaultServer

SCHEMA = {
    "type": "object",
    "properties": {"sentence": {"type": "string"}, "answer_key": {"type": "array", "items": {"type": "string"}}},
    "required": ["sentence", "answer_key"],
    "additionalProperties": False,
}
MESSAGES = [{"role": "user", "content": "Write the sentence."}]


@pytest.fixture
def server():
    with FaultServer(stall_s=3.0) as s:
        yield s


def endpoint(url: str, mode: str = "ok", timeout_s: float = 1.0, concurrency: int = 8, **sampling) -> ModelConfig:
    return ModelConfig(
        name=mode,
        kind="endpoint",
        model=mode,
        base_url_=url,
        timeout_s=timeout_s,
        concurrency=concurrency,
        max_tokens=64,
        sampling=Sampling(**sampling),
    )


async def call(cfg: ModelConfig, budget: CallBudget | None = None):
    client = ModelClient(cfg, budget or CallBudget(100))
    try:
        return await client.structured(MESSAGES, SCHEMA, "draft")
    finally:
        await client.aclose()


def kind_of(cfg: ModelConfig, budget: CallBudget | None = None) -> str:
    with pytest.raises(ModelCallError) as e:
        asyncio.run(call(cfg, budget))
    return e.value.kind


def test_valid_answer_is_parsed_with_usage(server):
    r = asyncio.run(call(endpoint(server.base_url, "ok")))
    assert r.value["answer_key"] == ["stone", "tones", "notes"]
    assert (r.usage.prompt_tokens, r.usage.completion_tokens, r.usage.finish_reason) == (11, 7, "stop")
    assert r.usage.endpoint == server.base_url and r.usage.seconds >= 0


@pytest.mark.parametrize(
    "mode, kind",
    [
        ("drop", "connection"),
        ("stall", "timeout"),
        ("http500", "http_status"),
        ("router_lost", "connection"),  # behind a router: the replica was lost, the call never reached a model
        ("router_none", "connection"),
        ("http502", "connection"),
        ("abort", "aborted"),  # a 200 the server cut off itself: its fault, not the model's malformed answer
        ("not_json", "malformed"),
        ("bad_body", "malformed"),
        ("schema", "schema"),
        ("length", "truncated"),
    ],
)
def test_each_fault_has_its_kind(server, mode, kind):
    assert kind_of(endpoint(server.base_url, mode)) == kind


def test_faults_are_never_retried_inside_the_library(server):
    for mode in ("drop", "http500", "stall"):
        before = len(server.requests)
        kind_of(endpoint(server.base_url, mode))
        assert len(server.requests) - before == 1, mode


def test_connection_refused_is_a_connection_error():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert kind_of(endpoint(f"http://127.0.0.1:{port}/v1")) == "connection"


def test_truncated_and_schema_errors_keep_usage_and_text(server):
    with pytest.raises(ModelCallError) as e:
        asyncio.run(call(endpoint(server.base_url, "length")))
    assert e.value.usage.finish_reason == "length"
    assert e.value.text.startswith('{"sentence"')


def test_budget_is_hard_and_counts_failed_calls(server):
    budget = CallBudget(2)
    assert kind_of(endpoint(server.base_url, "http500"), budget) == "http_status"
    asyncio.run(call(endpoint(server.base_url, "ok"), budget))
    sent = len(server.requests)
    assert kind_of(endpoint(server.base_url, "ok"), budget) == "budget"
    assert len(server.requests) == sent  # nothing was sent past the budget
    assert budget.used == 2 and budget.remaining == 0


def test_sampling_recipe_splits_into_openai_and_vllm_fields(server):
    cfg = endpoint(
        server.base_url, "ok", temperature=0.7, top_p=0.9, top_k=20, min_p=0.05, seed=3, stop_token_ids=(106,)
    )
    asyncio.run(call(cfg))
    body = server.requests[-1]
    assert (body["temperature"], body["top_p"], body["seed"]) == (0.7, 0.9, 3)
    assert (body["top_k"], body["min_p"], body["stop_token_ids"]) == (20, 0.05, [106])
    assert body["max_tokens"] == 64
    rf = body["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["strict"] is True
    assert rf["json_schema"]["schema"] == SCHEMA


def test_concurrency_is_bounded_per_endpoint(tmp_path):
    with FaultServer(slow_s=0.3) as server:
        cfg_path = tmp_path / "c.toml"
        cfg_path.write_text(
            f'[models.a]\nkind = "endpoint"\nmodel = "slow"\nbase_url = "{server.base_url}"\nconcurrency = 2\n'
            f'[models.b]\nkind = "endpoint"\nmodel = "slow"\nbase_url = "{server.base_url}"\nconcurrency = 3\n'
        )
        cfg = load_config(cfg_path)

        async def run():
            async with Clients.from_config(cfg) as clients:
                jobs = [clients.get(n).structured(MESSAGES, SCHEMA, "d") for n in ["a", "b"] * 4]
                out = await asyncio.gather(*jobs)
            assert not clients._clients  # the context closed every client
            return out

        assert len(asyncio.run(run())) == 8
        assert server.max_in_flight == 2  # both models share the endpoint, so its smaller limit holds
