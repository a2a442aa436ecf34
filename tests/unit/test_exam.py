"""Exam metrics: the degenerate judges' reference points, asserted before any real judge is scored."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from vocab.exam.metrics import (
    PairItem,
    PlantedItem,
    degenerate_scores,
    pairwise_metrics,
    planted_metrics,
    qualifies,
    reference_items,
)


@pytest.fixture(scope="module")
def scores():
    return {r["judge"]: r for r in degenerate_scores()}


def test_degenerate_pairwise_judges(scores):
    assert scores["always-tie"]["balanced_accuracy"] == 0 and scores["always-tie"]["tie_rate"] == 1
    for j in ("always-first", "always-second"):
        assert scores[j]["balanced_accuracy"] == 0.5 and scores[j]["tie_rate"] == 0
    assert scores["random"]["tie_rate"] == pytest.approx(1 / 3)
    assert scores["random"]["balanced_accuracy"] == pytest.approx(1 / 3)


def test_degenerate_planted_judges(scores):
    assert scores["always-PASS"]["verdict_recall"] == 0
    fail = scores["always-FAIL"]
    assert fail["verdict_recall"] == fail["on_target_recall"] == fail["false_positive_rate"] == 1
    assert scores["random"]["on_target_recall"] == pytest.approx(0.5)


def test_no_degenerate_judge_qualifies(scores):
    assert not any(qualifies(r) for r in scores.values())
    assert qualifies({"tie_rate": 0.95, "balanced_accuracy": 0.85})
    assert not qualifies({"tie_rate": 0.95, "balanced_accuracy": 0.79})


def test_an_unbalanced_design_would_reward_position_bias():
    """Seed 002's mistake: with three of four variants showing the right answer first, always-first scores
    0.75 on plain accuracy; the order-balanced metric keeps it at 0.5."""
    items = [
        PairItem("k", "known", o, lab)
        for o, lab in [("right-first", "A/B"), ("right-first", "1/2"), ("right-first", "X/Y"), ("right-second", "A/B")]
    ]
    m = pairwise_metrics(items, [{"first": 1.0}] * 4)
    assert m["balanced_accuracy"] == 0.5


def test_a_perfect_judge():
    pairs, planted = reference_items(3)
    answers = [
        {"tie": 1.0} if p.condition == "null" else {"first" if p.order == "right-first" else "second": 1.0}
        for p in pairs
    ]
    m = pairwise_metrics(pairs, answers)
    assert m["tie_rate"] == 1 and m["balanced_accuracy"] == 1 and m["position_consistency"] == 1
    checks = [{c: (0.0 if c == it.target else 1.0) for c in map(str, range(1, 13))} for it in planted]
    pm = planted_metrics(planted, checks)
    assert pm == {"verdict_recall": 1.0, "on_target_recall": 1.0, "false_positive_rate": 0.0}


def test_verdict_label_recall_differs_from_on_target_recall():
    """Seed 004's point: a judge can fail the variant for the wrong reason."""
    items = [PlantedItem("s", "9"), PlantedItem("s", "11")]
    wrong_check = [{**{c: 1.0 for c in map(str, range(1, 13))}, "12": 0.0}] * 2
    m = planted_metrics(items, wrong_check)
    assert m["verdict_recall"] == 1.0 and m["on_target_recall"] == 0.0


def test_cli_baselines_json():
    out = subprocess.run(
        [sys.executable, "-m", "vocab.cli", "exam", "baselines", "--json"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    rows = [json.loads(line) for line in out]
    assert [r["judge"] for r in rows] == [
        "always-tie",
        "always-first",
        "always-second",
        "random",
        "always-PASS",
        "always-FAIL",
    ]
    assert list(rows[0])[:6] == [
        "judge",
        "tie_rate",
        "balanced_accuracy",
        "verdict_recall",
        "on_target_recall",
        "false_positive_rate",
    ]
