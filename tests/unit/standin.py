"""A stand-in model at the unit-test boundary of vocab.serving.client — never used outside unit tests.

It answers the loop's writer and critic calls from a script instead of a network, and runs each answer
text through the client's own parser (:func:`vocab.serving.client.parse_answer`), so a malformed answer fails
exactly as it would from a real server.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from vocab import rubric
from vocab.serving.client import CallBudget, ModelCallError, StructuredResult, Usage, parse_answer

ALL_PASS = {c: {"verdict": "PASSED", "reason": ""} for c in rubric.CHECK_IDS}


def grade(**failed: str) -> dict:
    """A critic answer: every check PASSED except the given ones (c9="reason")."""
    out = {c: dict(v) for c, v in ALL_PASS.items()}
    for key, reason in failed.items():
        out[key.removeprefix("c")] = {"verdict": "FAILED", "reason": reason}
    return out


class StandInModel:
    """``respond(role, messages, call_no)`` returns an answer dict, a raw text, or raises a ModelCallError."""

    def __init__(self, name: str, respond: Callable, budget: CallBudget | None = None):
        self.name = name
        self.respond = respond
        self.calls: list[dict] = []
        self.budget = budget

    async def structured(self, messages, schema, schema_name, *, max_tokens=None, sampling=None):
        if self.budget is not None:
            self.budget.take(self.name)
        role = "writer" if schema_name == "draft" else "critic"
        self.calls.append({"role": role, "messages": messages, "seed": getattr(sampling, "seed", None)})
        answer = self.respond(role, messages, len(self.calls))
        text = answer if isinstance(answer, str) else json.dumps(answer)
        usage = Usage(self.name, "stand-in://", 10, 5, None, "stop", 0.0)
        return StructuredResult(parse_answer(text, schema, usage, max_tokens or 64), text, usage)


def writer_of(sentence: str = "A stone fell.", key: list[str] | None = None):
    return {"sentence": sentence, "answer_key": key or ["stone"]}


class Fail(ModelCallError):
    kind = "connection"
