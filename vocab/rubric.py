"""The 12-check rubric: one versioned text shared by the critic prompt, blind raters and the human form.

Each check has an id (1-12), a short name, the question it asks, and its kind:

- ``decidable`` — one correct answer that a script computes exactly (:mod:`vocab.script`): 1 (seed word,
  when the level requires it), 2 (target words present), 3 (answer key accurate).
- ``mechanical`` — a rule about the surface of the text that careful raters apply almost identically:
  4 (proper nouns), 6 (lexical integrity), 7 (acronyms), 8 (output format).
- ``judgment`` — needs a reader's judgment: 5, 9, 10, 11, 12.

Check 5 (substring overlap) is filed under ``judgment``, although the study lists it under both. The
mechanical half of it — a target word found only inside a longer word — is already decided exactly by
check 2's word-boundary rule. What is left for check 5 is whether a sentence leans on overlapping words
(``tone`` next to ``stone`` next to ``notes``) in a way that still reads as using each word in its own
right, and that needs a reader. The study's own data agree: two raters matched on it in 65 of 80 rows,
like the judgment checks (58-63) and unlike the mechanical ones (77-79).

A sentence passes when checks 2-12 all pass. Check 1 is recorded but out of the pass rule by default
(``SCOPE_DEFAULT``): in the study a harness quirk made it unreliable, so it was left out of every rate;
:func:`passes` takes the scope as a parameter so a config can put it back.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

RUBRIC_VERSION = "1.0"
VERDICTS = ("PASSED", "FAILED")
CHECK_IDS = tuple(str(i) for i in range(1, 13))
SCOPE_DEFAULT = tuple(str(i) for i in range(2, 13))  # checks that decide the verdict


@dataclass(frozen=True)
class Check:
    id: str
    name: str
    kind: str
    question: str


CHECKS: tuple[Check, ...] = (
    Check(
        "1", "seed word", "decidable", "If the level requires the seed word, does the sentence use it as a whole word?"
    ),
    Check(
        "2",
        "target word existence",
        "decidable",
        "Does every target word appear in the sentence as a whole word (any capitalisation; a word "
        "hidden inside a longer word does not count)?",
    ),
    Check(
        "3",
        "answer key accuracy",
        "decidable",
        "Does the answer key list exactly the target words — none missing, none extra, none twice — and "
        "is each of them in the sentence?",
    ),
    Check(
        "4",
        "proper nouns",
        "mechanical",
        "Is every target word used as an ordinary word, not as the name of a person, place, brand or title?",
    ),
    Check(
        "5",
        "substring overlap",
        "judgment",
        "Is each target word used in its own right, rather than counted because it overlaps with or "
        "sits inside another word of the sentence?",
    ),
    Check(
        "6",
        "lexical integrity",
        "mechanical",
        "Is each target word used in exactly the given form: not inflected, pluralised, split, joined to "
        "another word or misspelt?",
    ),
    Check(
        "7",
        "acronyms",
        "mechanical",
        "Is each target word written as a word, not as an acronym or abbreviation (capitals or dots)?",
    ),
    Check(
        "8",
        "output formatting",
        "mechanical",
        "Is the output exactly one plain sentence with final punctuation: no second sentence, list, "
        "markup, quotation wrapper or commentary?",
    ),
    Check(
        "9",
        "contextual richness",
        "judgment",
        "Could a player deduce each target word from the rest of the sentence, if it were blanked out?",
    ),
    Check(
        "10",
        "word efficiency",
        "judgment",
        "Is the sentence within the level's word limit and free of filler that is only there to "
        "carry the target words?",
    ),
    Check("11", "grammar", "judgment", "Is the sentence grammatical English?"),
    Check("12", "semantic validity", "judgment", "Does the sentence make sense as a statement about the world?"),
)
BY_ID = {c.id: c for c in CHECKS}


# how the judge is told about check 1 (a rater's rubric.txt words it as the form shows it: vocab.raters.packet)
CHECK1_AUTO_PASS = "Check 1 passes automatically when the level does not require the seed word."


def rubric_text() -> str:
    """The rubric as the critic, the blind raters and the human form all read it."""
    lines = [
        f"Vocabscapes sentence rubric, version {RUBRIC_VERSION}.",
        "A level gives a list of target words. The player writes ONE sentence that uses every target word,",
        "and an answer key listing the target words as they appear in the sentence. Grade the sentence on",
        "each check below as PASSED or FAILED.",
        "",
    ]
    lines += [f"{c.id}. {c.name.capitalize()}: {c.question}" for c in CHECKS]
    lines += ["", CHECK1_AUTO_PASS]
    return "\n".join(lines)


def rubric_hash() -> str:
    payload = json.dumps({"version": RUBRIC_VERSION, "checks": [c.__dict__ for c in CHECKS]}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def passes(checks: dict[str, str], scope: tuple[str, ...] = SCOPE_DEFAULT) -> bool:
    """True when every check in ``scope`` is PASSED (a missing check in scope is a fail)."""
    return all(checks.get(c) == "PASSED" for c in scope)


def failed_checks(checks: dict[str, str], scope: tuple[str, ...] = SCOPE_DEFAULT) -> list[str]:
    return [c for c in scope if checks.get(c) != "PASSED"]


# --- output schemas, as JSON Schemas that vLLM's xgrammar accepts with strict=true -------------------

MAX_SENTENCE_CHARS = 400
MAX_REASON_CHARS = 60
MAX_WORD_CHARS = 40


def writer_schema(n_words: int, max_words: int | None = None) -> dict[str, Any]:
    """The writer's answer: the sentence and the answer key (the target words as used in the sentence).

    Bounds are part of the contract: without ``maxItems`` and ``maxLength`` a tiny model can fill a list or
    a string until the token budget runs out. The key may hold two entries more than there are targets,
    so an over-long key is a visible answer-key error (check 3) rather than a schema violation; the
    sentence may run to twice the level's word limit, so an over-long sentence is a check-10 failure.
    """
    chars = MAX_SENTENCE_CHARS if max_words is None else min(MAX_SENTENCE_CHARS, 2 * 8 * max_words)
    return {
        "type": "object",
        "properties": {
            "sentence": {"type": "string", "minLength": 1, "maxLength": chars},
            "answer_key": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": MAX_WORD_CHARS},
                "minItems": 1,
                "maxItems": n_words + 2,
            },
        },
        "required": ["sentence", "answer_key"],
        "additionalProperties": False,
    }


def critic_schema(ids: tuple[str, ...] = CHECK_IDS) -> dict[str, Any]:
    """The critic's answer: for each check "1" ... "12" (or each criterion in ``ids``), a verdict and a
    reason — the reason only where the
    check FAILED (an empty string for PASSED).

    Reasons for passed checks are what made the critic slow (most of its output) and what tiny models
    ran away in (a reason that never closed until the token budget was spent); the analysis needs the
    reasons for failures only: they are the writer's feedback and what the exam inspects.
    """
    passed = {
        "type": "object",
        "properties": {"verdict": {"const": "PASSED"}, "reason": {"type": "string", "maxLength": 0}},
        "required": ["verdict", "reason"],
        "additionalProperties": False,
    }
    failed = {
        "type": "object",
        "properties": {
            "verdict": {"const": "FAILED"},
            "reason": {"type": "string", "minLength": 1, "maxLength": MAX_REASON_CHARS},
        },
        "required": ["verdict", "reason"],
        "additionalProperties": False,
    }
    item = {"anyOf": [passed, failed]}
    return {
        "type": "object",
        "properties": {c: item for c in ids},
        "required": list(ids),
        "additionalProperties": False,
    }
