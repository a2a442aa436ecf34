"""The script adjudicator: the checks a program can decide, decided exactly.

Always decided: check 2 (every target word present as a whole word) and check 3 (the answer key lists
exactly the target words, each present). Decided when the inputs allow it: check 1 (the seed word, given
the level's settings), check 7 (acronyms: a target written in capitals or with dots fails; targets written
as words pass) and certain failures of checks 8 (format) and 10 (the level's word limit). Every other check
is ``None``: the script does not guess.

Word rule (checks 1-3): the sentence is split into tokens — runs of letters and digits, with apostrophes
inside a token kept (``don't`` is one token) and hyphens splitting tokens (``stone-cold`` holds ``stone``).
A target is present when some token equals it, ignoring case, or equals it plus a possessive ending
(``stone's``, ``stones'``). A target that only occurs inside a longer token (``tone`` in ``stones``) is absent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from vocab.errors import InputError

# Letters (any script) and digits, with internal apostrophes (straight or curly).
_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)*['’]?")
_ABBREVIATIONS = {"mr", "mrs", "ms", "dr", "st", "jr", "sr", "vs", "etc", "e.g", "i.e", "prof", "mt"}
_SENTENCE_BREAK = re.compile(r"([.!?]+)[\"'’”)\]]*\s+(?=[\"'“(]*[A-Z0-9])")


def tokens(sentence: str) -> list[str]:
    return [m.group(0) for m in _TOKEN.finditer(sentence)]


def _normal(token: str) -> str:
    return _strip_possessive(token).lower()


def word_forms(sentence: str) -> dict[str, list[str]]:
    """Each normalised word of the sentence → the raw tokens it was written as."""
    forms: dict[str, list[str]] = {}
    for tok in tokens(sentence):
        forms.setdefault(_normal(tok), []).append(tok)
    return forms


def present(word: str, sentence: str) -> bool:
    return word.lower().strip() in word_forms(sentence)


def check_targets(words: list[str], sentence: str) -> str:
    forms = word_forms(sentence)
    return "PASSED" if all(w.lower().strip() in forms for w in words) else "FAILED"


def check_answer_key(words: list[str], answer_key: list[str], sentence: str) -> str:
    key = [k.lower().strip() for k in answer_key]
    targets = [w.lower().strip() for w in words]
    forms = word_forms(sentence)
    exact = sorted(key) == sorted(set(targets)) and len(key) == len(set(key))
    return "PASSED" if exact and all(k in forms for k in key) else "FAILED"


def check_seed_word(seed_word: str | None, settings: dict[str, Any] | None, sentence: str) -> str | None:
    required = (settings or {}).get("require_seed_word")
    if required is None:
        return None
    if not required:
        return "PASSED"
    if not seed_word:
        return None
    return "PASSED" if present(seed_word, sentence) else "FAILED"


def check_acronyms(words: list[str], sentence: str) -> str | None:
    """FAILED when a target is written in capitals (``TONE``) or with dots (``T.O.N.E.``); PASSED when
    every target that occurs is written as a word; None when no target occurs at all."""
    targets = {w.lower().strip() for w in words if len(w.strip()) >= 2}
    for m in re.finditer(r"\b(?:[^\W\d_]\.){2,}(?:[^\W\d_]\b)?", sentence):
        if m.group(0).replace(".", "").lower() in targets:
            return "FAILED"
    forms = word_forms(sentence)
    seen = False
    for w in {w.lower().strip() for w in words}:
        for tok in forms.get(w, []):
            seen = True
            if len(w) >= 2 and _strip_possessive(tok).isupper():
                return "FAILED"
    return "PASSED" if seen else None


def _strip_possessive(tok: str) -> str:
    if tok[-2:] in ("'s", "’s", "'S", "’S"):
        return tok[:-2]
    return tok.rstrip("'’")


def check_format(sentence: str) -> str | None:
    """Certain failures only: empty, several lines, no final punctuation, or a second sentence."""
    s = sentence.strip()
    if not s or "\n" in s:
        return "FAILED"
    if not re.search(r"[.!?][\"'’”)\]]*$", s):
        return "FAILED"
    for m in _SENTENCE_BREAK.finditer(s):
        before = s[: m.start(1)].split()
        last = before[-1].lower().rstrip(".") if before else ""
        if m.group(1) == "." and (last in _ABBREVIATIONS or len(last) == 1):
            continue
        return "FAILED"
    return None


def check_length(sentence: str, settings: dict[str, Any] | None) -> str | None:
    """FAILED when the sentence has more words than the level allows; otherwise a judgment (None)."""
    limit = (settings or {}).get("max_sentence_words")
    if limit is None:
        return None
    return "FAILED" if len(tokens(sentence)) > int(limit) else None


@dataclass(frozen=True)
class ScriptVerdict:
    checks: dict[str, str | None]

    @property
    def passed(self) -> bool | None:
        decided = [v for v in self.checks.values() if v is not None]
        if not decided:
            return None
        return all(v == "PASSED" for v in decided)


def adjudicate(
    words: list[str],
    sentence: str,
    answer_key: list[str],
    settings: dict[str, Any] | None = None,
    seed_word: str | None = None,
) -> ScriptVerdict:
    checks: dict[str, str | None] = {str(i): None for i in range(1, 13)}
    checks["1"] = check_seed_word(seed_word or (settings or {}).get("seed_word"), settings, sentence)
    checks["2"] = check_targets(words, sentence)
    checks["3"] = check_answer_key(words, answer_key, sentence)
    checks["7"] = check_acronyms(words, sentence)
    checks["8"] = check_format(sentence)
    checks["10"] = check_length(sentence, settings)
    return ScriptVerdict(checks)


class ScriptInputError(InputError):
    """A `vocab check` input line that is not a valid object."""


def adjudicate_record(obj: Any) -> dict[str, Any]:
    """One `vocab check` input object → its output object. Raises ScriptInputError naming the problem."""
    if not isinstance(obj, dict):
        raise ScriptInputError("expected a JSON object")
    for key, typ in (("words", list), ("sentence", str), ("answer_key", list)):
        if key not in obj:
            raise ScriptInputError(f"missing key {key!r}")
        if not isinstance(obj[key], typ):
            raise ScriptInputError(f"{key!r} must be a {'list' if typ is list else 'string'}")
    for key in ("words", "answer_key"):
        if not all(isinstance(x, str) for x in obj[key]):
            raise ScriptInputError(f"{key!r} must be a list of strings")
    settings = obj.get("settings")
    if settings is not None and not isinstance(settings, dict):
        raise ScriptInputError("'settings' must be an object")
    limit = (settings or {}).get("max_sentence_words")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ScriptInputError(f"'settings.max_sentence_words' must be a whole number >= 0, got {str(limit)[:40]!r}")
    for key in ("require_seed_word",):
        if (settings or {}).get(key) is not None and not isinstance(settings[key], bool):
            raise ScriptInputError(f"'settings.{key}' must be true or false")
    for key in ("seed_word",):
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise ScriptInputError(f"{key!r} must be a string")
    v = adjudicate(obj["words"], obj["sentence"], obj["answer_key"], settings, obj.get("seed_word"))
    return {"checks": v.checks, "passed": v.passed}


MAX_LINE = 1 << 20  # characters in one `vocab check` input line (a level's sentence is a few hundred)
MAX_LINES = 100_000  # input lines to one `vocab check`


def check_lines(lines: Iterable[str]) -> list[dict[str, Any]]:
    """`vocab check`: every non-empty JSON Lines input → its output object; the first bad line raises
    ScriptInputError naming the line, before any output exists. A line longer than ``MAX_LINE`` or more than
    ``MAX_LINES`` lines are refused as they arrive, so memory stays bounded."""
    import json

    outputs = []
    for i, line in enumerate(lines, 1):
        if i > MAX_LINES:
            raise ScriptInputError(f"more than {MAX_LINES:,} input lines; split the input")
        if len(line) > MAX_LINE:
            raise ScriptInputError(f"stdin line {i}: longer than {MAX_LINE:,} characters")
        if not line.strip():
            continue
        try:
            outputs.append(adjudicate_record(json.loads(line)))
        except json.JSONDecodeError as e:
            raise ScriptInputError(f"stdin line {i}: not JSON ({e.msg})") from None
        except RecursionError:
            raise ScriptInputError(f"stdin line {i}: JSON nested too deeply") from None
        except ScriptInputError as e:
            raise ScriptInputError(f"stdin line {i}: {e}") from None
    return outputs


def read_lines(stream):
    """Lines of ``stream`` a line at a time, never more than one line's limit (a 100 MB line is refused early)."""
    while line := stream.readline(MAX_LINE + 2):
        yield line.rstrip("\r\n") if line.endswith("\n") or len(line) <= MAX_LINE else line
