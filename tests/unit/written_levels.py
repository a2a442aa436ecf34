"""Levels as the v1 reference run logged them (generator 1.0.0). The maintainers' reference answers and the tests'
hand-written sentences were written for these words, so tests read the levels from that run, never generate them
afresh: a newer generator puts other words under the same level numbers."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

V1_LEVELS = Path(__file__).resolve().parents[2] / "data" / "runs" / "reference-v1" / "levels.jsonl"


@cache
def _levels() -> dict[int, str]:
    return {json.loads(line)["level"]: line for line in V1_LEVELS.read_text().splitlines() if line.strip()}


def v1_level(n: int) -> dict:
    """A fresh copy of level ``n`` as the v1 run logged it."""
    return json.loads(_levels()[n])


def v1_levels() -> dict[int, dict]:
    return {n: v1_level(n) for n in _levels()}
