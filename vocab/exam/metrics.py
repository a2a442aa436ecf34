"""The judge exam's metrics, and the degenerate judges every real critic is shown beside.

Metric code works on *answer distributions*: a judge's answer to a pairwise item is a probability for each
of ``first``, ``second`` and ``tie`` (slots as displayed), and its answer to a planted-defect item is a
probability of PASSED for each rubric check. A real critic's answers are one-hot; a uniform random judge's
are uniform — so the same code gives a real critic's score and a random judge's *expected* score.

Pairwise conditions (seed 002):

- **null** — the same sentence in both slots; the only honest answer is a tie. ``tie_rate``.
- **known** — a sentence written for this level against one written for another level; the right answer is
  known. Four prompt variants (presentation order × slot labels) are balanced: half show the right sentence
  first. ``balanced_accuracy`` is the mean of the accuracies within each presentation order, so a judge that
  always picks the first slot scores exactly 0.5 and one that always ties scores 0.
- ``position_consistency``: the same winner (by identity) when the order is swapped; ``first_slot_rate``:
  the share of non-tie answers that pick the first slot.

Planted defects (seed 004): each variant carries one defect aimed at one check, or none (a clean control).
``verdict_recall``: the share of defect variants the judge FAILED overall; ``on_target_recall``: the share
whose targeted check it FAILED; ``false_positive_rate``: the share of clean controls it FAILED.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vocab import rubric
from vocab.errors import InputError

EXAM_VERSION = "1.0"  # recorded in every exam's parameters
SLOTS = ("first", "second", "tie")


class ExamError(InputError):
    """An exam that cannot be built or run as asked: too few answers, a bad source, another entry's results."""


LABELS = ("A/B", "1/2")
ORDERS = ("right-first", "right-second")
VARIANTS = tuple((o, lab) for o in ORDERS for lab in LABELS)  # 4 prompt variants


@dataclass(frozen=True)
class PairItem:
    pair_id: str
    condition: str  # "null" or "known"
    order: str  # "right-first" or "right-second" (for null pairs: which copy is labelled first; no effect)
    labels: str


@dataclass(frozen=True)
class PlantedItem:
    source_id: str
    target: str | None  # the check the defect aims at, or None for a clean control


def _p(answer: dict[str, float], slot: str) -> float:
    return float(answer.get(slot, 0.0))


def pairwise_metrics(items: list[PairItem], answers: list[dict[str, float]]) -> dict[str, float | None]:
    null = [a for it, a in zip(items, answers, strict=True) if it.condition == "null"]
    tie_rate = float(np.mean([_p(a, "tie") for a in null])) if null else None
    acc_by_order = {}
    by_pair: dict[str, dict[str, dict[str, float]]] = {}
    for it, a in zip(items, answers, strict=True):
        if it.condition != "known":
            continue
        right = "first" if it.order == "right-first" else "second"
        acc_by_order.setdefault(it.order, []).append(_p(a, right))
        by_pair.setdefault(f"{it.pair_id}/{it.labels}", {})[it.order] = a
    balanced = float(np.mean([np.mean(v) for v in acc_by_order.values()])) if acc_by_order else None
    # same winner by identity under both orders: right chosen both times, or wrong chosen both times
    cons = [
        _p(d["right-first"], "first") * _p(d["right-second"], "second")
        + _p(d["right-first"], "second") * _p(d["right-second"], "first")
        for d in by_pair.values()
        if len(d) == 2
    ]
    non_tie = [(_p(a, "first"), _p(a, "first") + _p(a, "second")) for a in answers]
    decided = sum(t for _, t in non_tie)
    return {
        "tie_rate": tie_rate,
        "balanced_accuracy": balanced,
        "position_consistency": float(np.mean(cons)) if cons else None,
        "first_slot_rate": float(sum(f for f, _ in non_tie) / decided) if decided > 0 else None,
    }


def planted_metrics(
    items: list[PlantedItem], answers: list[dict[str, float]], scope: tuple[str, ...] = rubric.SCOPE_DEFAULT
) -> dict[str, float | None]:
    """``answers``: per item, the probability that each check is PASSED (1.0 / 0.0 for a real critic)."""

    def p_fail_overall(a: dict[str, float]) -> float:
        return 1.0 - float(np.prod([a[c] for c in scope]))

    defects = [(it, a) for it, a in zip(items, answers, strict=True) if it.target is not None]
    clean = [a for it, a in zip(items, answers, strict=True) if it.target is None]
    return {
        "verdict_recall": float(np.mean([p_fail_overall(a) for _, a in defects])) if defects else None,
        "on_target_recall": float(np.mean([1.0 - a[it.target] for it, a in defects])) if defects else None,
        "false_positive_rate": float(np.mean([p_fail_overall(a) for a in clean])) if clean else None,
    }


# --- degenerate judges ---------------------------------------------------------------------------------

PAIRWISE_JUDGES = {
    "always-tie": {"tie": 1.0},
    "always-first": {"first": 1.0},
    "always-second": {"second": 1.0},
    "random": {"first": 1 / 3, "second": 1 / 3, "tie": 1 / 3},
}
PLANTED_JUDGES = {
    "always-PASS": 1.0,  # probability of PASSED on every check
    "always-FAIL": 0.0,
    "random": 0.5,
}


def reference_items(n_pairs: int = 6) -> tuple[list[PairItem], list[PlantedItem]]:
    """A balanced item set in the exam's design: ``n_pairs`` null and known pairs under all 4 variants,
    and one defect per check 2-12 plus a clean control per source."""
    pairs = [PairItem(f"n{i}", "null", o, lab) for i in range(n_pairs) for o, lab in VARIANTS]
    pairs += [PairItem(f"k{i}", "known", o, lab) for i in range(n_pairs) for o, lab in VARIANTS]
    planted = [PlantedItem(f"s{i}", t) for i in range(n_pairs) for t in [*rubric.SCOPE_DEFAULT, None]]
    return pairs, planted


def degenerate_scores(n_pairs: int = 6) -> list[dict]:
    """Each degenerate judge's metrics on the reference item set, by the same metric code as real critics
    (random: the expected values)."""
    pairs, planted = reference_items(n_pairs)
    names = ["always-tie", "always-first", "always-second", "random", "always-PASS", "always-FAIL"]
    out = []
    for name in names:
        row = {
            "judge": name,
            "tie_rate": None,
            "balanced_accuracy": None,
            "position_consistency": None,
            "first_slot_rate": None,
            "verdict_recall": None,
            "on_target_recall": None,
            "false_positive_rate": None,
        }
        if name in PAIRWISE_JUDGES:
            row |= pairwise_metrics(pairs, [PAIRWISE_JUDGES[name]] * len(pairs))
        if name in PLANTED_JUDGES:
            p = PLANTED_JUDGES[name]
            row |= planted_metrics(planted, [{c: p for c in rubric.CHECK_IDS}] * len(planted))
        out.append(row)
    return out


TIE_RATE_MIN = 0.90  # honest: a tie on at least 90 % of identical pairs
BALANCED_ACCURACY_MIN = 0.80  # discriminating: at least 80 % on known answers, order-balanced


def qualifies(metrics: dict) -> bool:
    """The pre-registered bar: both thresholds, on the same judge."""
    tie, acc = metrics.get("tie_rate"), metrics.get("balanced_accuracy")
    return tie is not None and acc is not None and tie >= TIE_RATE_MIN and acc >= BALANCED_ACCURACY_MIN


def baseline_lines(*, as_json: bool) -> list[str]:
    """`vocab exam baselines`: each degenerate judge's scores, one line each (JSON objects with ``as_json``)."""
    import json

    keys = ["judge", "tie_rate", "balanced_accuracy", "verdict_recall", "on_target_recall", "false_positive_rate"]
    out = []
    for r in degenerate_scores():
        if as_json:
            out.append(json.dumps({k: r[k] for k in keys} | {k: v for k, v in r.items() if k not in keys}))
        else:
            vals = ", ".join(f"{k} {v:.3f}" for k, v in r.items() if k != "judge" and v is not None)
            out.append(f"{r['judge']:14} {vals}; qualifies: {qualifies(r)}")
    return out
