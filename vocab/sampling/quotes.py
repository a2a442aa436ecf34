"""Answers that quote the judge. A writer's retry sometimes repeats its prompt, which tells it what the critic said
("A grader failed it on these checks: … check 3 (answer key accuracy) …"), and an answer may carry a verdict word.
A blind rater who reads one learns that the row is a retry, or what a judge said of it. It is the model's real
answer and is rated as written, never redacted: the sample's key flags such rows (``quotes_judge``: what was
found) and the report says how many rated rows carried one.

Only the answer's fields are read (a run's ``sentence`` and ``answer_key``, an imported item's ``output``): an
input may name a verdict for reasons of its own.
"""

from __future__ import annotations

import re

import pandas as pd

from vocab.datasets.values import as_text
from vocab.prompts import RETRY_PHRASES

ANSWER_FIELDS = ("sentence", "answer_key", "output")
COLUMN = "quotes_judge"
MARKERS = (
    *((f"the retry prompt ({p!r})", re.compile(re.escape(p), re.IGNORECASE)) for p in RETRY_PHRASES),
    ("a rubric check by number", re.compile(r"\bcheck\s*#?\d{1,2}\s*\(", re.IGNORECASE)),
    # capitals, standing alone: the judge's words, not prose ("FAIL-SAFE" is no verdict)
    ("a verdict word", re.compile(r"(?<![\w-])(?:PASSED|FAILED|PASS|FAIL)(?![\w-])")),
)


def judge_quotes(row: dict) -> str:
    """What of the judge an answer quotes, as ``"; "``-joined marker names ("" for none)."""
    text = "\n".join(as_text(row.get(f)) for f in ANSWER_FIELDS if f in row)
    return "; ".join(name for name, rx in MARKERS if rx.search(text))


# any marker at all: one search a row, the markers named only where it finds one
ANY = re.compile(
    "|".join(f"(?i:{rx.pattern})" if rx.flags & re.IGNORECASE else f"(?:{rx.pattern})" for _, rx in MARKERS)
)


def quotes_of(fields: dict[str, list], n: int) -> list[str]:
    """:func:`judge_quotes` of ``n`` rows given as columns (field -> its values), a row's answer fields searched
    once for any marker."""
    answers = [fields[f] for f in ANSWER_FIELDS if f in fields]
    if not answers:
        return [""] * n
    out = []
    for vals in zip(*answers, strict=True):
        text = "\n".join(map(as_text, vals))
        out.append("; ".join(name for name, rx in MARKERS if rx.search(text)) if ANY.search(text) else "")
    return out


def flag_rows(sheet: pd.DataFrame) -> pd.Series:
    """``quotes_judge`` of every row of a blind sheet, indexed by blind id."""
    return pd.Series(
        [judge_quotes(r) for r in sheet.to_dict(orient="records")], index=sheet.blind_id, name=COLUMN, dtype=object
    )


def quotes_text(key: pd.DataFrame, rated: dict[str, set[str]], study: bool = True) -> str:
    """The report's sentence: how many sampled rows quote the judge, and how many of them each rater rated.
    ``study``: a Vocabscapes run, whose writer saw the critic's retry prompts (an imported dataset's answers can
    quote only a verdict word)."""
    flagged = key.loc[key[COLUMN].astype(str).ne(""), "blind_id"]
    what = "a retry prompt's phrase or a verdict word" if study else "a verdict word such as PASSED or FAIL in capitals"
    if not len(flagged):
        return f"No answer in the {len(key)}-row sample quotes the judge ({what})."
    each = ", ".join(f"{name} {len(set(flagged) & ids)}" for name, ids in sorted(rated.items()))
    said = (
        f"{len(flagged)} of the {len(key)} sampled answers quote the judge ({what}; the key's {COLUMN} column "
        "names which) and were rated as written"
    )
    return said + (f"; rated: {each}." if each else ".")
