"""The pairwise exam's items and prompts: which of two answers to one level is better, or a tie.

Pairs are built from a pool of answers (:class:`vocab.planted.Source`) sorted by id, then drawn without
replacement under a pinned seed:

- **null**: one answer in both slots, byte-identical; the only honest answer is a tie.
- **known**: an answer written for this level against one written for another level (shown as if it were
  for this level); the first is right, whatever a judge thinks of style.

Each pair is asked under the four variants of :data:`vocab.exam.VARIANTS` (presentation order × slot
labels). For a null pair the two orders give byte-identical prompts, which the exam uses as its
determinism probe.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from vocab import prompts
from vocab.exam import metrics as exam
from vocab.exam.planted import Source

PAIRWISE_SYSTEM = (
    "You judge answers to Vocabscapes, a word puzzle. A level gives a list of target words; a good answer is "
    "ONE sentence that uses every target word as given, makes sense, and lets a reader guess each target word "
    "from the rest of the sentence. You see two answers to the same level. Say which answer is better, or "
    "tie if neither is better. Reply with a JSON object with a short reason and the winner."
)
PAIRWISE_MAX_TOKENS = 160  # a winner and a one-line reason
SLOT_LABELS = {"A/B": ("A", "B"), "1/2": ("1", "2")}


@dataclass(frozen=True)
class Pair:
    pair_id: str
    condition: str  # "null" or "known"
    level: dict[str, Any]  # the level both answers are shown for
    right: Source  # the answer for this level (for null pairs: the one answer)
    other: Source  # the answer for another level (for null pairs: the same answer)


def draw_pairs(pool: list[Source], n: int, seed: int) -> list[Pair]:
    """``n`` null pairs and ``n`` known pairs from ``pool`` (sorted by id before the seeded draws).

    Null pairs take ``n`` distinct answers; known pairs take ``n`` distinct answers as the right one, each
    against an answer for a different level drawn without replacement from the rest.
    """
    pool = sorted(pool, key=lambda s: s.source_id)
    if len(pool) < 2:
        raise exam.ExamError(f"a pairwise exam needs at least 2 answers; the pool has {len(pool)}")
    rng = np.random.default_rng(seed)  # the exam's draw (not stats.stream: a committed exam keeps its pairs)
    n = min(n, len(pool))
    nulls = [pool[i] for i in sorted(rng.choice(len(pool), size=n, replace=False))]
    pairs = [Pair(f"null-{s.source_id}", "null", s.level, s, s) for s in nulls]
    rights = [pool[i] for i in sorted(rng.choice(len(pool), size=n, replace=False))]
    used: set[str] = set()
    for r in rights:
        cands = [s for s in pool if s.level["level"] != r.level["level"] and s.source_id not in used]
        if not cands:
            cands = [s for s in pool if s.level["level"] != r.level["level"]]
        o = cands[int(rng.integers(len(cands)))]
        used.add(o.source_id)
        pairs.append(Pair(f"known-{r.source_id}-vs-{o.source_id}", "known", r.level, r, o))
    return pairs


def pairwise_schema(labels: str) -> dict[str, Any]:
    a, b = SLOT_LABELS[labels]
    return {
        "type": "object",
        "properties": {
            "reason": {"type": "string", "maxLength": 120},
            "winner": {"enum": [a, b, "tie"]},
        },
        "required": ["reason", "winner"],
        "additionalProperties": False,
    }


def slots(pair: Pair, order: str) -> tuple[Source, Source]:
    return (pair.right, pair.other) if order == "right-first" else (pair.other, pair.right)


def pairwise_messages(pair: Pair, order: str, labels: str) -> list[dict[str, str]]:
    first, second = slots(pair, order)
    a, b = SLOT_LABELS[labels]
    lines = [f"Target words: {', '.join(pair.level['words'])}"]
    lines.append(f"Word limit: at most {pair.level['settings']['max_sentence_words']} words.")
    lines += ["", f"Answer {a}: {first.sentence}", f"Answer {b}: {second.sentence}", ""]
    lines.append(f"Which answer is better: {a}, {b}, or tie?")
    return [{"role": "system", "content": PAIRWISE_SYSTEM}, {"role": "user", "content": "\n".join(lines)}]


def answer_slots(winner: str, labels: str) -> dict[str, float]:
    """A judge's label → the one-hot answer over displayed slots that :mod:`vocab.exam` scores."""
    a, b = SLOT_LABELS[labels]
    slot = {a: "first", b: "second", "tie": "tie"}[winner]
    return {s: float(s == slot) for s in exam.SLOTS}


def pairwise_prompt_hash() -> str:
    """The hash of the prompt rendered for a fixed probe, for the exam's record."""
    import hashlib
    import json

    probe_level = prompts._PROBE
    s1 = Source("p1", "probe", probe_level, "Stones hold notes in tones.", ["stones", "notes", "tones"])
    s2 = Source("p2", "probe", probe_level, "Notes.", ["notes"])
    msgs = [pairwise_messages(Pair("p", "known", probe_level, s1, s2), o, lab) for o, lab in exam.VARIANTS]
    return hashlib.sha256(json.dumps(msgs, sort_keys=True).encode()).hexdigest()
