"""The writer's and the critic's prompts. Their hashes go into every run's manifest.

The writer prompt holds no example sentence: tiny models copy an example from the prompt in most of
their answers, which would measure the prompt, not the model. The critic prompt holds the shared rubric
text (:func:`vocab.rubric.rubric_text`) and the level's facts, and asks for short reasons: the critic's
output is the run's main cost.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from vocab import rubric

PROMPT_VERSION = "1.0"

WRITER_SYSTEM = (
    "You are playing Vocabscapes, a word puzzle. You are given a list of target words. Write ONE English "
    "sentence that uses every target word exactly as it is given, so that a reader could guess each word from "
    "the rest of the sentence. Then list the target words as they appear in your sentence: that list is the "
    "answer key. Reply with a JSON object with the keys sentence and answer_key."
)

# A retry's prompt tells the writer what the critic said; an answer that repeats one of these phrases quotes the
# judge to a blind rater (vocab.sampling.quotes counts such rows)
RETRY_PHRASES = (
    "Your previous sentence was",
    "A grader failed it on these checks",
    "Write a new sentence that fixes these problems",
)

CRITIC_SYSTEM = (
    "You grade answers to Vocabscapes, a word puzzle, against a fixed rubric. Read the level and the "
    "player's answer, then give every check a verdict, PASSED or FAILED. For a FAILED check give a reason of a few "
    "words; for a PASSED check leave the reason empty.\n\n" + rubric.rubric_text()
)


def _parts(level) -> tuple[list[str], str, dict[str, Any]]:
    """Words, seed word and settings of a :class:`vocab.levels.Level`, or of a mapping with those keys (a
    blind sheet's row, a logged level)."""
    if isinstance(level, Mapping):
        return list(level["words"]), level["seed_word"], level["settings"]
    return list(level.words), level.seed_word, level.settings


def _level_facts(level) -> list[str]:
    words, seed_word, s = _parts(level)
    lines = [f"Target words: {', '.join(words)}"]
    if s.get("require_seed_word"):
        lines.append(f"The seed word '{seed_word}' is required and is one of the target words.")
    lines.append(f"Word limit: at most {s['max_sentence_words']} words.")
    return lines


def writer_messages(level, feedback: dict[str, Any] | None = None) -> list[dict[str, str]]:
    """The writer's messages for a level; on a retry, ``feedback`` holds the previous attempt."""
    user = _level_facts(level)
    if feedback:
        user += ["", f"{RETRY_PHRASES[0]}: {feedback['sentence']}", f"{RETRY_PHRASES[1]}:"]
        user += [
            f"- check {c} ({rubric.BY_ID[c].name}): {feedback['reasons'].get(c, '')}".rstrip(": ")
            for c in feedback["failed"]
        ]
        user.append(f"{RETRY_PHRASES[2]}.")
    else:
        user.append("Write the sentence.")
    return [{"role": "system", "content": WRITER_SYSTEM}, {"role": "user", "content": "\n".join(user)}]


def critic_messages(level, sentence: str, answer_key: list[str]) -> list[dict[str, str]]:
    s = _parts(level)[2]
    user = _level_facts(level)
    if not s.get("require_seed_word"):
        user.append("This level does not require the seed word.")
    user += ["", f"Sentence: {sentence}", f"Answer key: {', '.join(answer_key)}", "", "Grade checks 1 to 12."]
    return [{"role": "system", "content": CRITIC_SYSTEM}, {"role": "user", "content": "\n".join(user)}]


# A fixed probe level: hashing the prompts rendered for it tracks their content (any change in wording or
# layout changes the hash) and ignores how the code that builds them is formatted.
_PROBE = {
    "level": 0,
    "tier": 0,
    "seed_word": "stones",
    "words": ["notes", "stones", "tones"],
    "settings": {"require_seed_word": True, "max_sentence_words": 12},
}
_PROBE_FEEDBACK = {"sentence": "Stones.", "reasons": {"9": "no context"}, "failed": ["2", "9"]}


def prompt_hashes() -> dict[str, str]:
    def h(messages: list[dict[str, str]]) -> str:
        return hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()

    free = {**_PROBE, "settings": {**_PROBE["settings"], "require_seed_word": False}}
    return {
        "version": PROMPT_VERSION,
        "writer": h(writer_messages(_PROBE) + writer_messages(free) + writer_messages(_PROBE, _PROBE_FEEDBACK)),
        "critic": h(
            critic_messages(_PROBE, "Stones and notes.", ["stones", "notes"])
            + critic_messages(free, "Tones.", ["tones"])
        ),
    }


RATER_SYSTEM = (
    "You are a blind rater of answers to Vocabscapes, a word puzzle. You see one answer and the level it was "
    "written for, nothing else. Grade every check of the rubric as PASSED or FAILED, with a reason of a few "
    "words for each FAILED check and an empty reason for each PASSED one.\n\n"
    + rubric.rubric_text()
    + "\n\nA listed word missing: "
    + rubric.MISSING_WORD_RULE  # the rule every rater grades by (the form's too)
)


def rater_messages(row: dict[str, Any]) -> list[dict[str, str]]:
    """A blind rater's prompt: built from the blind sheet's fields alone (any other key is ignored)."""
    level = {"seed_word": row["seed_word"], "words": list(row["words"]), "settings": dict(row["settings"])}
    user = critic_messages(level, row["sentence"], list(row["answer_key"]))[1]
    return [{"role": "system", "content": RATER_SYSTEM}, user]


JUDGMENT_RATER_SYSTEM = (
    "You are a blind rater. You see one item that a judge graded — the fields below, nothing else: not the "
    "judge's grade, its explanation or who made the answer. Grade every criterion as PASSED or FAILED, with a "
    "reason of a few words for each FAILED one and an empty reason for each PASSED one."
)


def judgment_rater_messages(rubric, row: dict[str, Any]) -> list[dict[str, str]]:
    """A blind rater's prompt for an imported dataset: the judge's question (the rubric's criteria) and the
    sheet's visible fields alone."""
    crit = "\n".join(f"- {c.id}: {c.question}" for c in rubric.criteria)
    fields = "\n\n".join(f"[{name.upper()}]\n{value}" for name, value in row.items())
    user = f"{fields}\n\nCriteria:\n{crit}\n\nAnswer as JSON with one entry per criterion."
    told = f"\n\nThe judge's instructions: {rubric.instructions}" if rubric.instructions else ""
    system = JUDGMENT_RATER_SYSTEM + told
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]
