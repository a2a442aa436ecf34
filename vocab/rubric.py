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


# --- the rubric as a person reads it (the form, the page, rubric.txt) -------------------------------------------
# Plain words and an example each way; the study's wording (the critic's, above) stays the check's tooltip for
# reviewers. Neither the critic's text nor the rubric's hash depends on these.


@dataclass(frozen=True)
class Guide:
    plain: str  # the question in plain words
    passing: str  # an answer that passes the check (the level's words in brackets)
    failing: str  # one that fails it


GUIDE: dict[str, Guide] = {
    "1": Guide(
        "If this level asks for the seed word, is it in the sentence as a word of its own?",
        "seed word stone: “The stone sat still.”",
        "seed word stone: “The stones sat still.”",
    ),
    "2": Guide(
        "Is every listed word in the sentence, as a word of its own? (Capitals do not matter; a word found "
        "only inside a longer word does not count.)",
        "[tone, note]: “A low tone ended the note.”",
        "[tone, note]: “A low tone ended the notes.”",
    ),
    "3": Guide(
        "Does the writer's own list of the words (shown as “the writer's word list”) name exactly the "
        "listed words, each once, and is each of them in the sentence?",
        "[tone, note], writer's list tone, note",
        "[tone, note], writer's list tone, note, notes",
    ),
    "4": Guide(
        "Is every listed word used as an ordinary word, not as a name of a person, place, brand or title?",
        "[rose]: “A red rose grew by the door.”",
        "[rose]: “Rose grew tired of waiting.”",
    ),
    "5": Guide(
        "Is each listed word used for its own sake, rather than only counted because it sits inside or "
        "overlaps another word of the sentence?",
        "[tone, stone]: “The old stone gave a warm tone.”",
        "[tone, stone]: “Stone tone stone tone.”",
    ),
    "6": Guide(
        "Is each listed word written exactly as given: not made plural, put in another tense, split, joined "
        "to another word or misspelt?",
        "[run]: “They run home.”",
        "[run]: “They ran home.”",
    ),
    "7": Guide(
        "Is each listed word written as a normal word, not as an abbreviation (all capitals, or with dots)?",
        "[us]: “Join us for dinner.”",
        "[us]: “He moved to the U.S.”",
    ),
    "8": Guide(
        "Is the answer one plain sentence ending in . ! or ?, and nothing else: no second sentence, list, "
        "quotation marks around it, formatting or comments?",
        "“The cat sat on the mat.”",
        "“The cat sat on the mat. Hope this helps!”",
    ),
    "9": Guide(
        "If each listed word were blanked out, could a player guess it from the rest of the sentence?",
        "[umbrella]: “It rained, so she opened her umbrella.”",
        "[umbrella]: “She liked the umbrella.”",
    ),
    "10": Guide(
        "Is the sentence within the level's word limit, and free of padding that is only there to fit the words in?",
        "[tone, note]: “The note had a low tone.”",
        "[tone, note]: “Tone, and note, and also some other words just because.”",
    ),
    "11": Guide("Is the sentence correct English grammar?", "“He has a hat.”", "“He have a hat.”"),
    "12": Guide("Does the sentence make sense?", "“The sun rose over the hill.”", "“The hill ate a loud Tuesday.”"),
}

# The rule for a listed word that is missing, one rule for every rater (the form, the page, rubric.txt and the LLM
# raters' instructions; the script decides checks 1-3 only and fails check 2 for it): the word's absence is check
# 2's failure. The checks about how the listed words are used grade the words the sentence holds.
WORD_CHECKS = ("4", "5", "6", "7", "9")
MISSING_WORD_RULE = (
    "A listed word that is not in the sentence in any form fails check 2 only. Checks 4, 5, 6, 7 and 9 are about "
    "how the listed words are used: grade them on the listed words the sentence does hold (a word there in another "
    "form, such as a plural, is there: check 6 fails it). With no sentence at all, every check fails."
)


def guide_of(rubric_name: str, check: str) -> dict[str, str]:
    """A check as the form and the page show it: for the Vocabscapes rubric its plain question, a passing and a
    failing example and, for a check about how the listed words are used, the rule for a missing word; nothing for
    another rubric (its questions are the dataset's own)."""
    if rubric_name != "vocabscapes" or check not in GUIDE:
        return {}
    g = GUIDE[check]
    extra = {"missing": MISSING_WORD_RULE} if check in WORD_CHECKS else {}
    return {"plain": g.plain, "passing": g.passing, "failing": g.failing, **extra}


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
