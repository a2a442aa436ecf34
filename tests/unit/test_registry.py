"""Pre-registration: an append-only hash chain; edits are detected; exams run only under registered params."""

from __future__ import annotations

import json

import pytest

from vocab.exam.registry import RegistryError, find, register, verify

PARAMS = {"exam": "pairwise", "pairs": 18, "seed": 0, "variants": 4}
BAR = {"tie_rate": 0.9, "balanced_accuracy": 0.8}
METRICS = {"tie_rate": "ties / null pairs", "balanced_accuracy": "mean accuracy over presentation orders"}


def test_register_find_and_correct(tmp_path):
    reg = tmp_path / "registry.jsonl"
    e1 = register(
        reg,
        "pairwise-1",
        PARAMS,
        thresholds=BAR,
        metrics=METRICS,
        judges=["gemma3"],
        prediction="ties on null pairs, chance on known pairs",
    )
    assert find(reg, PARAMS, "gemma3")["id"] == "pairwise-1"
    with pytest.raises(RegistryError, match="no registered exam entry"):
        find(reg, {**PARAMS, "pairs": 19}, "gemma3")
    with pytest.raises(RegistryError, match="no registered exam entry"):
        find(reg, PARAMS, "smollm2")
    with pytest.raises(RegistryError, match="already registered"):
        register(reg, "pairwise-1", PARAMS, thresholds=BAR, metrics=METRICS, judges=["gemma3"])
    e2 = register(
        reg,
        "pairwise-1b",
        PARAMS,
        thresholds=BAR,
        metrics={**METRICS, "note": "fixed wording"},
        judges=["gemma3"],
        corrects="pairwise-1",
    )
    assert e2["prev"] == e1["hash"]
    assert find(reg, PARAMS, "gemma3")["id"] == "pairwise-1b"
    assert [e["id"] for e in verify(reg)] == ["pairwise-1", "pairwise-1b"]


def test_an_edited_earlier_entry_is_detected(tmp_path):
    reg = tmp_path / "registry.jsonl"
    register(reg, "a", PARAMS, thresholds=BAR, metrics=METRICS, judges=["gemma3"])
    register(reg, "b", PARAMS, thresholds=BAR, metrics=METRICS, judges=["smollm2"])
    lines = reg.read_text().splitlines()
    first = json.loads(lines[0])
    first["thresholds"]["balanced_accuracy"] = 0.6  # moving the bar after seeing data
    reg.write_text(json.dumps(first) + "\n" + lines[1] + "\n")
    with pytest.raises(RegistryError, match="does not match its hash"):
        verify(reg)


def test_the_committed_registry_is_intact():
    """Every committed entry still matches its hash and follows the previous one (no entry was edited)."""
    from pathlib import Path

    committed = Path(__file__).resolve().parents[2] / "data" / "exams" / "registry.jsonl"
    entries = verify(committed)
    assert {"planted-ref-1", "pairwise-ref-1", "tournament-ref-1"} <= {e["id"] for e in entries}
    for e in entries:
        assert e["thresholds"] == {"tie_rate": 0.9, "balanced_accuracy": 0.8} and e["prediction"]
