"""The planted-defect set: single-defect variants of answers known to be good, built mechanically.

Sources (:func:`sources`) are answers that a judge should pass: the run's critic-PASSED attempts that the
script also passes on checks 2 and 3 and, when asked, the committed *reference answers*
(``data/exams/reference_answers.jsonl``: one sentence per level written by the maintainers, each line naming
the generator version whose level it answers, checked by the script at load time). The embedded writers are too
small to produce many good answers — in the v1 reference run one attempt in about 1,200 qualified — so without
the reference answers the exam would have almost nothing to plant defects in.
Every item records which kind of source it came from.

From each source :func:`build` makes one variant per check where a mechanical edit exists, plus a clean
control (a meaning-preserving edit) and a byte-identical baseline. Each edit replaces one span, and the
build fails (:class:`PlantError`) unless that span occurs exactly once in the source, as whole words. A
defect that has no mechanical edit for a source is returned as a *skip* with its reason, never silently
dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from vocab import script
from vocab.exam.metrics import ExamError

REFERENCE_ANSWERS = Path(__file__).resolve().parents[2] / "data" / "exams" / "reference_answers.jsonl"
DEFECTS = {
    "2": "drop a target word",
    "3": "corrupt the answer key",
    "4": "capitalise a target word as a name",
    "5": "leave a target word only inside a longer target word",
    "6": "inflect a target word",
    "7": "write a target word as an acronym",
    "8": "remove the final punctuation",
    "9": "strip the context (best effort: the targets are only mentioned)",
    "10": "pad past the word limit",
    "11": "swap a target word with its neighbour",
    "12": "make it nonsensical (best effort: an incongruous noun)",
}
# Check 12, best effort: a concrete noun swapped for one that makes the statement absurd.
_INCONGRUOUS = {
    "sun": "spoon",
    "stars": "spoons",
    "river": "sandwich",
    "family": "teaspoon",
    "smell": "Tuesday",
    "summer": "pencil",
    "chair": "cloud",
    "swing": "verb",
    "park": "sneeze",
    "water": "silence",
    "lawyer": "pebble",
    "court": "soup",
    "director": "carpet",
    "shop": "thunder",
    "lot": "whisper",
    "strike": "giraffe",
    "station": "yawn",
    "bank": "moon",
    "day": "potato",
    "towel": "echo",
    "floods": "apologise",
}
# The clean control: a synonym swap that keeps the meaning, or a neutral opener when none applies.
_SYNONYMS = {
    "wet": "damp",
    "hat": "cap",
    "old": "aged",
    "gentle": "soft",
    "youngest": "littlest",
    "distant": "faraway",
    "hurt": "pained",
    "cooler": "colder",
    "bring": "take",
    "outside": "outdoors",
}
_PADDING = ["to be perfectly honest", "at the end of the day", "as far as anyone here can tell", "without a doubt"]


class PlantError(ExamError):
    """An edit whose span does not occur exactly once, or a source that cannot carry the set."""


@dataclass(frozen=True)
class Source:
    source_id: str
    kind: str  # "run" (a critic-PASSED attempt) or "reference" (a committed reference answer)
    level: dict[str, Any]
    sentence: str
    answer_key: list[str]
    cell: str | None = None
    attempt: int | None = None
    logged: dict[str, Any] | None = None  # the run's verdict, checks and reasons for this very answer


@dataclass(frozen=True)
class Variant:
    variant_id: str
    source_id: str
    target: str | None  # the check the defect aims at; None for the control and the baseline
    kind: str  # "defect", "control" or "baseline"
    description: str
    sentence: str
    answer_key: list[str]
    edited_word: str | None = None  # the word an on-target reason should name
    span: dict[str, str] = field(default_factory=dict)  # {"old": ..., "new": ...}

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _whole(word: str) -> re.Pattern:
    return re.compile(rf"(?<![^\W_]){re.escape(word)}(?![^\W_])")


def replace_once(text: str, old: str, new: str) -> str:
    """``text`` with the one whole-word occurrence of ``old`` replaced; PlantError unless there is exactly one."""
    hits = list(_whole(old).finditer(text))
    if len(hits) != 1:
        raise PlantError(f"span {old!r} occurs {len(hits)} times in {text!r}; an edit needs exactly one")
    m = hits[0]
    return text[: m.start()] + new + text[m.end() :]


def _count(text: str, word: str, ignore_case: bool = True) -> int:
    flags = re.IGNORECASE if ignore_case else 0
    return len(re.findall(rf"(?<![^\W_]){re.escape(word)}(?![^\W_])", text, flags))


def _pick_target(src: Source) -> tuple[str, str]:
    """The target to edit: the first target (in level order) written once, not as the first word.
    Returns (target, the span as written)."""
    toks = script.tokens(src.sentence)
    for w in src.level["words"]:
        if _count(src.sentence, w) != 1:
            continue
        m = re.search(rf"(?<![^\W_]){re.escape(w)}(?![^\W_])", src.sentence, re.IGNORECASE)
        if toks and m.group(0) == toks[0] and m.start() == src.sentence.find(toks[0]):
            continue
        return w, m.group(0)
    raise PlantError(f"{src.source_id}: no target word occurs exactly once after the first word")


def _key_replace(key: list[str], old: str, new: str | None) -> list[str]:
    idx = [i for i, k in enumerate(key) if k.lower() == old.lower()]
    if len(idx) != 1:
        raise PlantError(f"answer key entry {old!r} occurs {len(idx)} times in {key!r}")
    out = list(key)
    if new is None:
        del out[idx[0]]
    else:
        out[idx[0]] = new
    return out


def _plural(w: str) -> str:
    return w + ("es" if re.search(r"(s|sh|ch|x|z)$", w) else "s")


def build(src: Source) -> tuple[list[Variant], list[dict[str, str]]]:
    """All variants of one source, and the defects skipped for it (each with its reason)."""
    s, key, words = src.sentence, list(src.answer_key), [w.lower() for w in src.level["words"]]
    w, as_written = _pick_target(src)
    out: list[Variant] = []
    skipped: list[dict[str, str]] = []

    def add(target: str | None, kind: str, sentence: str, answer_key: list[str], old: str, new: str, edited=w):
        vid = f"{src.source_id}/{kind if target is None else 'c' + target}"
        desc = DEFECTS[target] if target else ("meaning-preserving edit" if kind == "control" else "unchanged")
        if kind != "baseline" and (sentence, answer_key) == (s, key):
            raise PlantError(f"{vid}: the edit changed nothing")
        out.append(
            Variant(vid, src.source_id, target, kind, desc, sentence, answer_key, edited, {"old": old, "new": new})
        )

    def skip(target: str, why: str) -> None:
        skipped.append({"source_id": src.source_id, "target": target, "reason": why})

    # 2: the target's only occurrence is removed (with the space before it); the key still lists it
    m = _whole(as_written).search(s)
    start = m.start() - 1 if m.start() > 0 and s[m.start() - 1] == " " else m.start()
    old2 = s[start : m.end()]  # unique as whole words: _pick_target counted the target once
    add("2", "defect", s[:start] + s[m.end() :], key, old2, "")
    # 3: one key entry replaced by a non-target word of the sentence
    others = sorted(
        {t.lower() for t in script.tokens(s) if t.lower() not in words and t.lower() not in {k.lower() for k in key}},
        key=lambda t: (-len(t), t),
    )
    if others:
        add("3", "defect", s, _key_replace(key, w, others[0]), w, others[0])
    else:
        skip("3", "no non-target word to put in the key")
    # 4: capitalised mid-sentence, as a name
    add("4", "defect", replace_once(s, as_written, as_written.capitalize()), key, as_written, as_written.capitalize())
    # 5: a target that is part of a longer target, left only inside it
    inner = [(a, b) for a in words for b in words if a != b and a in b and _count(s, a) == 1]
    if inner:
        a, b = inner[0]
        written = _whole(a).search(s.lower())
        span = s[written.start() : written.end()]
        add("5", "defect", replace_once(s, span, b), key, span, b, edited=a)
    else:
        skip("5", "no target word is contained in another target word")
    # 6: inflected
    infl = _plural(as_written)
    if infl.lower() in words:
        infl = as_written + "ing"
    add("6", "defect", replace_once(s, as_written, infl), key, as_written, infl)
    # 7: an acronym
    add("7", "defect", replace_once(s, as_written, as_written.upper()), key, as_written, as_written.upper())
    # 8: no final punctuation
    last = script.tokens(s)[-1]
    m8 = re.search(rf"{re.escape(last)}([.!?]+)\s*$", s)
    if m8:
        old8 = s[m8.start() :]
        add("8", "defect", s[: m8.start()] + last, key, old8, last, edited=None)
    else:
        skip("8", "no final punctuation to remove")
    # 9: best effort: the targets are only mentioned, so nothing lets a player deduce them
    listed = ", ".join(src.level["words"][:-1]) + " and " + src.level["words"][-1]
    add("9", "defect", f"We heard the words {listed}.", key, s, f"We heard the words {listed}.", edited=None)
    # 10: padded past the word limit
    limit = src.level["settings"].get("max_sentence_words")
    if limit and m8:
        pad, n = [], len(script.tokens(s))
        for phrase in _PADDING * 4:
            if n > limit + 2:
                break
            pad.append(phrase)
            n += len(phrase.split())
        body = s[: m8.start()] + last
        new10 = body + ", " + ", ".join(pad) + m8.group(1)
        add("10", "defect", new10, key, old8, new10[m8.start() :], edited=None)
    else:
        skip("10", "the level has no word limit or the sentence no final punctuation")
    # 11: the target swapped with the word after it
    m11 = re.search(rf"(?<![^\W_])({re.escape(as_written)}) ([^\W_]+)(?![^\W_'])", s)
    if m11 and m11.group(2).lower() not in words:
        old11 = m11.group(0)
        new11 = f"{m11.group(2)} {m11.group(1)}"
        add("11", "defect", replace_once(s, old11, new11), key, old11, new11)
    else:
        skip("11", "the target word has no plain word after it")
    # 12: best effort: a concrete noun swapped for an incongruous one
    nouns = [n for n in _INCONGRUOUS if n not in words and _count(s, n, ignore_case=False) == 1]
    if nouns:
        add(
            "12",
            "defect",
            replace_once(s, nouns[0], _INCONGRUOUS[nouns[0]]),
            key,
            nouns[0],
            _INCONGRUOUS[nouns[0]],
            edited=None,
        )
    else:
        skip("12", "no noun from the incongruity table occurs once")
    # the clean control and the baseline
    syn = [x for x in _SYNONYMS if x not in words and _count(s, x, ignore_case=False) == 1]
    if syn:
        add(None, "control", replace_once(s, syn[0], _SYNONYMS[syn[0]]), key, syn[0], _SYNONYMS[syn[0]], edited=None)
    else:
        first = script.tokens(s)[0]
        new_first = first if first == "I" else first[0].lower() + first[1:]
        if not s.startswith(first):
            raise PlantError(f"{src.source_id}: the sentence does not start with a word")
        add(None, "control", "Indeed, " + new_first + s[len(first) :], key, first, "Indeed, " + new_first, edited=None)
    add(None, "baseline", s, key, "", "", edited=None)
    return out, skipped


# --- sources -------------------------------------------------------------------------------------------


def reference_answers(levels: Mapping[int, dict], path: str | Path = REFERENCE_ANSWERS) -> list[Source]:
    """The committed reference answers for the levels of a run (``levels``: level number -> the level as the
    run logged it), each checked by the script (checks 1, 2, 3, 7, 8, 10) at load time.

    A reference answer is written for one level's words: each line names the ``generator_version`` whose level
    it answers, and is read against the run's own logged level, never a level generated afresh. Answers for
    another generator version (other words under the same number) or for levels the run does not hold are left
    out; an answer that claims the run's generator version and no longer fits its level is refused.
    """
    out = []
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        d = json.loads(line)
        if "generator_version" not in d:
            raise PlantError(f"{path}:{n}: reference answer for level {d.get('level')} names no generator_version")
        lv = levels.get(int(d["level"]))
        if lv is None or lv.get("generator_version") != d["generator_version"]:
            continue
        v = script.adjudicate(lv["words"], d["sentence"], d["answer_key"], lv["settings"], lv["seed_word"])
        bad = [c for c in ("1", "2", "3", "7", "8", "10") if v.checks[c] == "FAILED"]
        if bad:
            raise PlantError(
                f"{path}:{n}: reference answer for level {d['level']} fails script checks {bad} on the run's level "
                f"(generator {lv.get('generator_version')}): it was written for other words"
            )
        out.append(Source(f"ref-{lv['level']:04d}", "reference", lv, d["sentence"], list(d["answer_key"])))
    return out


def run_sources(attempts: pd.DataFrame, levels: dict[int, dict]) -> list[Source]:
    """The run's critic-PASSED attempts that the script passes on checks 2 and 3, in a stable order."""
    out = []
    if attempts.empty:
        return out
    passed = attempts[attempts.verdict == "PASSED"].sort_values(["cell", "level", "attempt"])
    for a in passed.to_dict(orient="records"):
        if script.check_targets(a["words"], a["sentence"]) != "PASSED":
            continue
        if script.check_answer_key(a["words"], a["answer_key"], a["sentence"]) != "PASSED":
            continue
        logged = {"verdict": a["verdict"], "checks": a["checks"], "reasons": a["reasons"], "critic": a["critic"]}
        sid = f"run-{a['cell']}-{a['level']:04d}-{a['attempt']}"
        out.append(
            Source(
                sid, "run", levels[a["level"]], a["sentence"], list(a["answer_key"]), a["cell"], a["attempt"], logged
            )
        )
    return out


def draw_sources(pool: list[Source], n: int, seed: int) -> list[Source]:
    """``n`` sources drawn without replacement under ``seed``: the run's own answers first, then reference
    answers to fill up; each group sorted by id before its draw, and only sources whose variants build.
    Returned in id order."""
    rng = np.random.default_rng(seed)  # the exam's draw (not stats.stream: a committed exam keeps its items)
    chosen: list[Source] = []
    for kind in ("run", "reference"):
        group = sorted((s for s in pool if s.kind == kind), key=lambda s: s.source_id)
        for i in rng.permutation(len(group)):
            if len(chosen) == n:
                break
            try:
                build(group[i])
            except PlantError:
                continue
            chosen.append(group[i])
    return sorted(chosen, key=lambda s: s.source_id)
