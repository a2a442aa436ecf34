"""A deterministic Vocabscapes level generator: a seed word expanded into valid subwords.

A level number (any positive integer up to ``MAX_LEVEL``) gives its tier, the tier gives the difficulty
settings, and a random generator seeded from the level number (through SHA-256, never Python's ``hash``) draws
the seed word and the target words. A *subword* is a word spelled from a sub-multiset of the seed word's letters
(``stone`` → ``notes``, ``tones``, ``one``, ``set``...). Candidates are always sorted before a draw, so the
output is the same on every machine and in every process.

The lexicon is a spelling dictionary, with commonness from web text: SCOWL's English and American words up to
size 50 (the word set of Debian's ``wamerican``, committed as ``vocab/data/scowl_en_us_50.txt`` by
``vocab.wordlist``), kept when ``wordfreq`` gives them a Zipf frequency of at least 2 (7 is "the", 3 is about one
per million words), minus the offensive words of ``better-profanity``'s list and words with no vowel.

Why this source, by measurement. ``tests/unit/test_lexicon.py`` checks target words against GCIDE and WordNet 3.0
(with inflections), which the generator does not read; shares below are of the target words of the study's
design (tiers 1-28 × 5 at seed 0) and of levels 1-2,000:

- generator 1.0.0 took wordfreq's web-frequency tokens and kept those that Webster's 2nd or GCIDE list in lower
  case, or that look like a regular inflection of one: 88.9 % and 84.0 %. The rest were words no player would
  accept: fragments (``ings``, ``ers``), misspellings (``belive``), foreign words (``nach``, ``dass``), names
  (``rodman``) and abbreviations (``oled``); web2 lists many obscure lower-case entries, and the inflection rule
  accepts any suffix on them.
- SCOWL is made for spelling, sized by commonness, and keeps proper names, abbreviations and contractions in
  categories of their own. None of the words above is in it up to size 60 (size 70 adds ``ness``, 80 adds
  ``ers``, ``nach``, ``rodman``).
- Size 60 (the spell checkers' default) still admits informal and regional words (``naff``, ``nah``, ``outta``,
  ``hiya``, ``unis``): 98.4 % and 97.4 %. Size 50: 99.3 % and 99.2 %, and every tier fills about as often
  (``fill_table``; against size 60 the largest drop, tier 6, is 0.61 to 0.59 of its seed words).

Tiers (31) grow harder with: a longer seed word, more target words, a longer minimum word length, rarer
words (a lower Zipf floor, and draws that favour rarer words), a tighter word limit per target word, and
from tier 11 on the seed word itself must be used (the rubric's check 1).

Speed: the index (the lexicon, its letter counts, and every tier's pool: its seed words and each seed's
candidate targets) is built once per process, so a level is a few array operations
(``benchmarks/bench_levels.py``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from functools import lru_cache
from importlib import metadata

import numpy as np

from vocab import wordlist
from vocab.errors import InputError
from vocab.lexicon import Lexicon, TierPool, letter_counts, offensive_words, pools_of

GENERATOR_VERSION = "2.0.0"
N_TIERS = 31
LEVELS_PER_TIER = 20  # tiers 1-30 hold 20 levels each; tier 31 holds every level from 601 on
MIN_ZIPF_LEXICON = 2.0  # the lowest floor any tier uses (tier 31's min_zipf)
MAX_LEVEL = 2**53 - 1  # level numbers stay exact in JSON (a double's integer range)
MAX_LEVELS = 1_000_000  # at most this many levels in one range: about 1 GB of JSON Lines
_VOWELS = set("aeiouy")


class LevelError(InputError):
    """A bad level number, range or design request; the message says which."""


@dataclass(frozen=True)
class TierSettings:
    tier: int
    seed_length: int
    n_words: int
    min_word_length: int
    min_zipf: float  # target words at least this frequent
    seed_min_zipf: float
    rarity: float  # draw weight ∝ 10 ** (-rarity * zipf): negative favours common words
    require_seed_word: bool
    max_sentence_words: int


def tier_of(level: int) -> int:
    _check_level(level)
    return min(N_TIERS, 1 + (level - 1) // LEVELS_PER_TIER)


def tier_levels(tier: int) -> range:
    """The level numbers of a tier (tier 31 is open-ended: its first 20 levels are its sampling pool)."""
    if not 1 <= tier <= N_TIERS:
        raise LevelError(f"tier must lie in 1..{N_TIERS}, got {tier}")
    start = (tier - 1) * LEVELS_PER_TIER + 1
    return range(start, start + LEVELS_PER_TIER)


def tier_settings(tier: int) -> TierSettings:
    if not 1 <= tier <= N_TIERS:
        raise LevelError(f"tier must lie in 1..{N_TIERS}, got {tier}")
    x = (tier - 1) / (N_TIERS - 1)  # 0 at tier 1, 1 at tier 31
    n_words = 3 + (tier - 1) * 7 // (N_TIERS - 1)  # 3 .. 10
    return TierSettings(
        tier=tier,
        seed_length=5 + (tier - 1) * 5 // (N_TIERS - 1),  # 5 .. 10
        n_words=n_words,
        min_word_length=3 + (tier - 1) // 15,  # 3 (1-15), 4 (16-30), 5 (31)
        min_zipf=round(3.5 - 1.5 * x, 2),  # 3.5 .. 2.0
        seed_min_zipf=round(3.5 - 1.0 * x, 2),  # 3.5 .. 2.5
        rarity=round(-1.0 + 2.0 * x, 2),  # common-first .. rare-first
        require_seed_word=tier >= 11,
        max_sentence_words=int(round(n_words * (4.0 - 2.0 * x))) + 4,
    )


@dataclass(frozen=True)
class Level:
    level: int
    tier: int
    seed_word: str
    words: tuple[str, ...]
    settings: dict
    lexicon: dict
    generator_version: str = GENERATOR_VERSION

    @classmethod
    def from_dict(cls, d: dict) -> Level:
        """A level as a run logged it (``levels.jsonl``): the same fields, whatever generator made it."""
        return cls(
            int(d["level"]),
            int(d["tier"]),
            d["seed_word"],
            tuple(d["words"]),
            dict(d["settings"]),
            dict(d.get("lexicon") or {}),
            d.get("generator_version", GENERATOR_VERSION),
        )

    def as_dict(self) -> dict:
        return {
            "level": int(self.level),
            "tier": self.tier,
            "seed_word": self.seed_word,
            "words": list(self.words),
            "settings": dict(self.settings),
            "lexicon": dict(self.lexicon),
            "generator_version": self.generator_version,
        }


# --- the index: the lexicon and every tier's pool (vocab.lexicon builds both) ---------------------------


@lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    """Build the index once per process (about a second): the words, then every tier's pool."""
    import wordfreq

    freq = wordfreq.get_frequency_dict("en")  # the table behind wordfreq.zipf_frequency
    bad = offensive_words()
    picked: list[tuple[float, str]] = []
    for w in wordlist.read():
        f = freq.get(w, 0.0)
        if f <= 0 or w in bad or not (_VOWELS & set(w)):
            continue
        z = round(math.log10(f) + 9, 2)  # = wordfreq.zipf_frequency(w, "en"), tested
        if z >= MIN_ZIPF_LEXICON:
            picked.append((z, w))
    picked.sort(key=lambda zw: (-zw[0], zw[1]))
    words = tuple(w for _, w in picked)
    info = {
        "source": "SCOWL en_US size 50 (vocab/data, see vocab.wordlist) with wordfreq (en) frequencies, "
        "minus better-profanity's list",
        "wordlist": wordlist.source_line(),
        "wordfreq": metadata.version("wordfreq"),
        "better_profanity": metadata.version("better-profanity"),
        "min_zipf": MIN_ZIPF_LEXICON,
        "size": len(words),
    }
    zipf = np.array([z for z, _ in picked])
    lex = Lexicon(words, zipf, letter_counts(words), np.array([len(w) for w in words]), info)
    pools: list[TierPool] = []
    for length in sorted({tier_settings(t).seed_length for t in range(1, N_TIERS + 1)}):
        tiers = [s for s in map(tier_settings, range(1, N_TIERS + 1)) if s.seed_length == length]
        pools += pools_of(tiers, lex)
    return dataclasses.replace(lex, pools=tuple(sorted(pools, key=lambda p: p.tier)))


def tier_pool(tier: int, lex: Lexicon | None = None) -> TierPool:
    if not 1 <= tier <= N_TIERS:
        raise LevelError(f"tier must lie in 1..{N_TIERS}, got {tier}")
    return (lex or lexicon()).pools[tier - 1]


# --- levels ------------------------------------------------------------------------------------------


def _rng(*parts: object) -> np.random.Generator:
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "little"))


def _check_level(level: int) -> None:
    if isinstance(level, bool) or not isinstance(level, int | np.integer) or not 1 <= level <= MAX_LEVEL:
        raise LevelError(f"a level number must be an integer from 1 to {MAX_LEVEL}, got {level!r}")


def subwords(seed: str, lex: Lexicon | None = None) -> list[str]:
    """Every lexicon word (other than the seed) spelled from a sub-multiset of the seed's letters."""
    lex = lex or lexicon()
    c = np.zeros(26, dtype=np.uint8)
    for ch in seed:
        c[ord(ch) - 97] += 1
    ok = np.all(lex.counts <= c, axis=1)
    return sorted(w for w in np.asarray(lex.words, dtype=object)[ok] if w != seed)


def generate(level: int, lex: Lexicon | None = None) -> Level:
    """The level with this number. Deterministic: same number, same level, everywhere.

    The seed word is drawn uniformly from the tier's seeds that can fill a level; the target words are drawn
    without replacement with weights ``10 ** (-rarity * zipf)`` (Gumbel top-k, which is successive weighted
    sampling), then sorted.
    """
    _check_level(level)
    lex = lex or lexicon()
    tier = tier_of(level)
    s = tier_settings(tier)
    pool = tier_pool(tier, lex)
    if not len(pool.fillable):  # pragma: no cover - every tier fills (tested over all tiers)
        raise LevelError(f"level {level}: no seed word of length {s.seed_length} has {s.n_words + 2} subwords")
    rng = _rng("vocab-level", GENERATOR_VERSION, level)
    k = int(rng.integers(len(pool.fillable)))
    seed = lex.words[pool.fillable[k]]
    cand = pool.cand[pool.ptr[k] : pool.ptr[k + 1]]
    log_w = -s.rarity * np.log(10.0) * lex.zipf[cand]
    keys = log_w - np.log(-np.log(rng.random(len(cand))))  # + Gumbel noise
    picked = cand[np.argsort(-keys, kind="stable")[: s.n_words]]
    words = sorted(lex.words[j] for j in picked)
    if s.require_seed_word:
        words = sorted([*words, seed])
    settings = {
        "n_words": len(words),
        "seed_length": s.seed_length,
        "min_word_length": s.min_word_length,
        "min_zipf": s.min_zipf,
        "require_seed_word": s.require_seed_word,
        "max_sentence_words": s.max_sentence_words,
    }
    return Level(level, tier, seed, tuple(words), settings, lex.info)


def iter_levels(numbers: Iterable[int], lex: Lexicon | None = None) -> Iterator[Level]:
    """Levels one at a time, for ranges too long to hold (``vocab levels 1-1000000`` streams)."""
    lex = lex or lexicon()
    for n in numbers:
        yield generate(n, lex)


# --- ranges and designs --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Spans:
    """Sorted, merged, inclusive ``(lo, hi)`` spans of positive integers: a range held without its members."""

    spans: tuple[tuple[int, int], ...]

    def __len__(self) -> int:
        return sum(hi - lo + 1 for lo, hi in self.spans)

    def __iter__(self) -> Iterator[int]:
        for lo, hi in self.spans:
            yield from range(lo, hi + 1)


_PART = re.compile(r"([0-9]{1,20})(?:\s*-\s*([0-9]{1,20}))?")  # ASCII digits only: \d takes any script's


def parse_spans(text: str, what: str = "level", max_value: int | None = None, max_count: int = MAX_LEVELS) -> Spans:
    """``"7"``, ``"1-140"``, ``"1-3,10"`` as merged spans, checked before anything is allocated.

    Refused (LevelError): an empty or malformed part, 0, an end before its start, a number above
    ``max_value`` (default: MAX_LEVEL for levels, N_TIERS for tiers), and more than ``max_count`` numbers in
    all. Memory is bounded by the text's length, whatever the numbers say.
    """
    if not isinstance(text, str) or not text.strip():
        raise LevelError(f"empty {what} range")
    if max_value is None:
        max_value = N_TIERS if what == "tier" else MAX_LEVEL
    parts = []
    for part in text.split(","):
        part = part.strip()
        m = _PART.fullmatch(part)
        if not m:
            raise LevelError(f"bad {what} range {part!r}: expected N or N-M with positive integers")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        if lo < 1:
            raise LevelError(f"bad {what} range {part!r}: {what} numbers start at 1")
        if hi < lo:
            raise LevelError(f"bad {what} range {part!r}: the end is before the start")
        if hi > max_value:
            raise LevelError(f"bad {what} range {part!r}: {what} numbers go up to {max_value}")
        parts.append((lo, hi))
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(parts):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    spans = Spans(tuple(merged))
    if len(spans) > max_count:
        raise LevelError(f"{what} range {text.strip()!r} holds {len(spans)} {what}s; at most {max_count} at once")
    return spans


def parse_ranges(text: str, what: str = "level") -> list[int]:
    """``"7"``, ``"1-140"``, ``"1-3,10"`` → sorted unique positive integers (bounded as ``parse_spans``)."""
    return list(parse_spans(text, what))


def design_numbers(levels: str | None, tiers: str | None, per_tier: int, seed: int) -> Spans | list[int]:
    """The one design parser: an explicit level range (held as spans, to stream) when ``levels`` is given,
    else the sampled design of ``tiers`` × ``per_tier`` under ``seed``. Every bound is checked (LevelError)."""
    if levels:
        return parse_spans(levels)
    if not tiers:
        raise LevelError("give a level range (e.g. 1-140) or tiers (e.g. 1-28) with levels per tier")
    return design(parse_ranges(tiers, "tier"), per_tier, seed)


def design(tiers: list[int], per_tier: int, seed: int) -> list[int]:
    """The study's sampling design: ``per_tier`` levels from each tier's pool, seeded, sorted."""
    if per_tier < 1 or per_tier > LEVELS_PER_TIER:
        raise LevelError(f"per-tier must lie in 1..{LEVELS_PER_TIER}, got {per_tier}")
    chosen: list[int] = []
    for t in sorted(set(tiers)):
        pool = sorted(tier_levels(t))
        rng = _rng("vocab-design", GENERATOR_VERSION, seed, t)
        chosen.extend(int(x) for x in rng.choice(pool, size=per_tier, replace=False))
    return sorted(chosen)


# --- tables for the notebooks -------------------------------------------------------------------------


def tier_table():
    """One row per tier: its level numbers and difficulty settings (a pandas DataFrame)."""
    import pandas as pd

    rows = []
    for t in range(1, N_TIERS + 1):
        r = tier_levels(t)
        last = f"{r.stop - 1}" if t < N_TIERS else "∞"
        rows.append({"tier": t, "levels": f"{r.start}-{last}", **asdict(tier_settings(t))})
    return pd.DataFrame(rows).drop(columns=["tier"]).set_index(pd.Index(range(1, N_TIERS + 1), name="tier"))


def levels_frame(numbers: list[int]):
    """One row per level: tier, seed word, target words and the words' mean Zipf frequency."""
    import pandas as pd

    lex = lexicon()
    idx = lex.index()
    rows = []
    for n in sorted(numbers):
        lv = generate(n, lex)
        zs = [float(lex.zipf[idx[w]]) for w in lv.words]
        rows.append(
            {
                "level": n,
                "tier": lv.tier,
                "seed_word": lv.seed_word,
                "n_words": len(lv.words),
                "words": " ".join(lv.words),
                "mean_zipf": sum(zs) / len(zs),
                "min_zipf": min(zs),
                "mean_length": sum(map(len, lv.words)) / len(lv.words),
            }
        )
    return pd.DataFrame(rows)


def fill_table(lex: Lexicon | None = None):
    """One row per tier: its seed words, how many can fill a level, and the share (a pandas DataFrame)."""
    import pandas as pd

    lex = lex or lexicon()
    rows = []
    for t in range(1, N_TIERS + 1):
        pool = tier_pool(t, lex)
        s = tier_settings(t)
        n_cand = np.diff(pool.ptr)
        rows.append(
            {
                "tier": t,
                "n_words": s.n_words,
                "seed_words": len(pool.seeds),
                "fillable": len(pool.fillable),
                "share": len(pool.fillable) / len(pool.seeds) if len(pool.seeds) else 0.0,
                "median_candidates": float(np.median(n_cand)) if len(n_cand) else 0.0,
            }
        )
    return pd.DataFrame(rows).set_index("tier")
