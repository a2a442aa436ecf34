"""The one place this project calls a model.

Every model call in ``vocab`` — writer, critic, blind rater, exam judge — goes through
:meth:`ModelClient.structured`: an async chat completion against an OpenAI-compatible endpoint (a ``vllm
serve`` of ours or anyone's API) whose answer is constrained by a JSON schema (``response_format`` of type
``json_schema`` with ``strict``; vLLM enforces it with xgrammar). It returns the parsed object and a
:class:`Usage` record, or raises a :class:`ModelCallError` whose ``kind`` says what went wrong:

==================  ===============================================================================
kind                meaning
==================  ===============================================================================
``timeout``         no complete answer within the model's ``timeout_s``
``connection``      connection refused, reset or dropped before an answer arrived, here or behind a router
                    (an HTTP 502, or vllm-router's 500/503 saying it lost or has no replica)
``http_status``     the server answered with an HTTP error status (4xx/5xx)
``aborted``         the server ended the call unfinished (``finish_reason`` ``abort`` or ``error``: vLLM aborts
                    the requests of an engine that stopped or is shutting down), an infrastructure fault
``malformed``       the answer is not JSON (or the response body itself is unreadable)
``schema``          the answer is JSON but does not match the schema
``truncated``       ``finish_reason == "length"`` before a complete answer: the token budget ran out
``budget``          the run's hard call budget is spent; no request was sent
==================  ===============================================================================

Nothing retries behind the caller's back: the OpenAI library's own retries are off (``max_retries=0``), and
the call budget is counted here, once per request sent, so no library retry can spend calls unseen.
Concurrency is bounded per endpoint by a semaphore.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import httpx
import openai

from vocab.config import Config, ModelConfig, Sampling

ERROR_KINDS = ("timeout", "connection", "http_status", "aborted", "malformed", "schema", "truncated", "budget")
# The kinds that are the infrastructure's fault, not the model's answer (``budget`` is the run's own limit).
INFRA_KINDS = ("timeout", "connection", "http_status", "aborted")
# What ``--retry-abandoned`` retries: a level lost to the infrastructure or to the run's call budget. A level the
# model's own answer abandoned (truncated, malformed, off the schema) is not asked again: with a fixed seed the same
# request gets the same answer, and asking until an answer parses would be an attempt the design does not count.
RETRY_KINDS = (*INFRA_KINDS, "budget")


class ModelCallError(Exception):
    """A model call that produced no usable answer. ``kind`` is one of :data:`ERROR_KINDS`."""

    kind = "unknown"

    def __init__(self, message: str, *, model: str = "", usage: Usage | None = None, text: str | None = None):
        super().__init__(message)
        self.message = message
        self.model = model
        self.usage = usage  # what the server reported, when it answered at all
        self.text = text  # the raw answer text, when there was one

    def as_record(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message}


class CallTimeout(ModelCallError):
    kind = "timeout"


class CallConnectionError(ModelCallError):
    kind = "connection"


class CallHTTPError(ModelCallError):
    kind = "http_status"

    def __init__(self, message: str, *, status: int, **kw):
        super().__init__(message, **kw)
        self.status = status


class CallAborted(ModelCallError):
    kind = "aborted"


class MalformedOutput(ModelCallError):
    kind = "malformed"


class SchemaViolation(ModelCallError):
    kind = "schema"


class TruncatedOutput(ModelCallError):
    kind = "truncated"


class BudgetExhausted(ModelCallError):
    kind = "budget"


@dataclass(frozen=True)
class Usage:
    model: str
    endpoint: str
    prompt_tokens: int | None
    completion_tokens: int | None
    reasoning_tokens: int | None
    finish_reason: str | None
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class StructuredResult:
    value: dict[str, Any]
    text: str
    usage: Usage
    reasoning: str | None = None


class CallBudget:
    """A hard limit on model calls, shared by every client of a run. Past it, calls raise ``budget``."""

    def __init__(self, max_calls: int):
        if max_calls < 0:
            raise ValueError("max_calls must be non-negative")
        self.max_calls = max_calls
        self.used = 0

    @property
    def remaining(self) -> int:
        return self.max_calls - self.used

    def charge(self, calls: int) -> None:
        """Count calls made before this process (a resumed exam's budget covers all its calls)."""
        self.used += max(0, calls)

    def take(self, model: str) -> None:
        if self.used >= self.max_calls:
            raise BudgetExhausted(f"call budget of {self.max_calls} calls is spent", model=model)
        self.used += 1


def response_format(schema: dict[str, Any], name: str) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}


class ModelClient:
    """Structured calls to one configured model."""

    def __init__(
        self,
        model: ModelConfig,
        budget: CallBudget,
        semaphore: asyncio.Semaphore | None = None,
        api_key: str | None = None,
    ):
        self.model = model
        self.budget = budget
        self.semaphore = semaphore or asyncio.Semaphore(model.concurrency)
        if api_key is None:
            api_key = os.environ.get(model.api_key_env, "") if model.api_key_env else "unused"
        self._client = openai.AsyncOpenAI(
            base_url=model.base_url,
            api_key=api_key or "unused",
            max_retries=0,  # retries are the caller's decision, and each one is a counted call
            timeout=httpx.Timeout(model.timeout_s),
        )

    @property
    def name(self) -> str:
        return self.model.name

    async def aclose(self) -> None:
        await self._client.close()

    async def structured(
        self,
        messages: list[dict[str, str]],
        schema: dict[str, Any],
        schema_name: str,
        *,
        max_tokens: int | None = None,
        sampling: Sampling | None = None,
    ) -> StructuredResult:
        """One chat completion constrained by ``schema``; the parsed answer, or a typed error."""
        sampling = sampling or self.model.sampling
        top, extra = sampling.request_params()
        max_tokens = max_tokens or self.model.max_tokens
        name = self.model.name
        endpoint = self.model.base_url
        async with self.semaphore:
            self.budget.take(name)
            t0 = time.perf_counter()
            try:
                resp = await self._client.chat.completions.create(
                    model=self.model.request_model,
                    messages=messages,
                    response_format=response_format(schema, schema_name),
                    max_tokens=max_tokens,
                    extra_body=extra or None,
                    **top,
                )
            except openai.APITimeoutError as e:
                raise CallTimeout(f"no answer within {self.model.timeout_s:g} s ({e})", model=name) from None
            except openai.APIConnectionError as e:
                cause = e.__cause__ or e
                raise CallConnectionError(f"{type(cause).__name__}: {cause}", model=name) from None
            except openai.APIStatusError as e:
                body = _short(getattr(e.response, "text", "") or str(e))
                if lost_upstream(e.status_code, body):
                    raise CallConnectionError(f"behind a router, HTTP {e.status_code}: {body}", model=name) from None
                raise CallHTTPError(f"HTTP {e.status_code}: {body}", status=e.status_code, model=name) from None
            except (openai.APIResponseValidationError, json.JSONDecodeError) as e:
                raise MalformedOutput(f"unreadable response body: {_short(str(e))}", model=name) from e
            seconds = time.perf_counter() - t0
        if not getattr(resp, "choices", None):
            raise MalformedOutput("response has no choices", model=name)
        choice = resp.choices[0]
        usage = _usage(resp, choice, name, endpoint, seconds)
        text = choice.message.content or ""
        if choice.finish_reason in ("abort", "error"):
            # An HTTP 200 whose answer the server cut off itself: seen when a data-parallel engine died and vLLM shut
            # its sibling down, answering each request in flight with the tokens so far. Parsed, that partial text
            # would be a "malformed" answer: a model's fault, where it is the server's.
            raise CallAborted(
                f"the server ended the call unfinished (finish_reason={choice.finish_reason}) after "
                f"{usage.completion_tokens} tokens",
                model=name,
                usage=usage,
                text=text,
            )
        reasoning = getattr(choice.message, "reasoning_content", None) or getattr(choice.message, "reasoning", None)
        value = parse_answer(text, schema, usage, max_tokens)
        return StructuredResult(value=value, text=text, usage=usage, reasoning=reasoning)


# What vllm-router answers when the replica it chose is unreachable or died mid-call (its HTTP client's error, as a
# 500) and when no replica is healthy (503). The call never reached a model: a connection fault, not a server error.
ROUTER_UPSTREAM_ERRORS = ("error sending request for url", "No available workers")


def lost_upstream(status: int, body: str) -> bool:
    """True when an HTTP error status is a gateway reporting that it could not reach the server behind it."""
    return status == 502 or (status in (500, 503) and any(p in body for p in ROUTER_UPSTREAM_ERRORS))


def parse_answer(text: str, schema: dict[str, Any], usage: Usage, max_tokens: int) -> dict[str, Any]:
    """The answer text → the parsed object, or ``malformed`` / ``schema`` / ``truncated``."""
    name = usage.model
    cut = usage.finish_reason == "length"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        if cut:
            raise TruncatedOutput(
                f"finish_reason=length after {usage.completion_tokens} tokens (max_tokens={max_tokens}) "
                "before a complete answer",
                model=name,
                usage=usage,
                text=text,
            ) from None
        raise MalformedOutput(
            f"answer is not JSON ({e.msg} at char {e.pos}): {_short(text)}", model=name, usage=usage, text=text
        ) from None
    import jsonschema  # here, not at the top: its import compiles grammars for 7 s where rfc3987-syntax is installed,
    # and every command that records versions (report, audit) imports this module

    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(value), key=lambda x: list(x.path))
    if errors:
        where = "/".join(str(p) for p in errors[0].path) or "(root)"
        if cut:
            raise TruncatedOutput(
                f"finish_reason=length; partial answer fails the schema at {where}", model=name, usage=usage, text=text
            )
        raise SchemaViolation(
            f"answer violates the schema at {where}: {_short(errors[0].message)}", model=name, usage=usage, text=text
        )
    return value


def _usage(resp: Any, choice: Any, name: str, endpoint: str, seconds: float) -> Usage:
    u = getattr(resp, "usage", None)
    details = getattr(u, "completion_tokens_details", None) if u else None
    return Usage(
        model=name,
        endpoint=endpoint,
        prompt_tokens=getattr(u, "prompt_tokens", None),
        completion_tokens=getattr(u, "completion_tokens", None),
        reasoning_tokens=getattr(details, "reasoning_tokens", None) if details else None,
        finish_reason=choice.finish_reason,
        seconds=round(seconds, 4),
    )


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "…"


@dataclass
class Clients:
    """One :class:`ModelClient` per configured model, sharing one call budget and per-endpoint semaphores.

    An async context manager: ``async with Clients.from_config(cfg) as clients: ...`` closes every client.
    """

    config: Config
    budget: CallBudget
    _clients: dict[str, ModelClient] = field(default_factory=dict)
    _semaphores: dict[str, asyncio.Semaphore] = field(default_factory=dict)

    @classmethod
    def from_config(cls, config: Config, max_calls: int | None = None) -> Clients:
        return cls(config, CallBudget(config.max_calls if max_calls is None else max_calls))

    def get(self, name: str) -> ModelClient:
        if name not in self._clients:
            m = self.config.model(name)
            limit = min(x.concurrency for x in self.config.models.values() if x.base_url == m.base_url)
            sem = self._semaphores.setdefault(m.base_url, asyncio.Semaphore(limit))
            self._clients[name] = ModelClient(m, self.budget, sem)
        return self._clients[name]

    async def aclose(self) -> None:
        for c in self._clients.values():
            await c.aclose()
        self._clients.clear()

    async def __aenter__(self) -> Clients:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()
