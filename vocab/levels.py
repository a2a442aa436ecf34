"""A deterministic Vocabscapes level generator: a seed word expanded into valid subwords.

A level number (any positive integer) gives its tier, the tier gives the difficulty settings, and a
random generator seeded from the level number (through SHA-256, never Python's ``hash``) draws the seed
word and the target words. A *subword* is a word spelled from a sub-multiset of the seed word's letters
(``stone`` → ``notes``, ``tones``, ``one``, ``set``...). Candidates are always sorted before a draw, so the
output is the same on every machine and in every process.

The lexicon: English words from ``wordfreq`` (with its Zipf frequencies: 7 is "the", 3 is about one per
million words), kept when they are plain ASCII letters and look like ordinary dictionary words:

- a word that ``english-words`` (Webster's 2nd and GCIDE) lists in lower case, or a regular inflection of
  one (``notes`` from ``note``, ``tones`` from ``tone``, ``making`` from ``make``);
- minus words those dictionaries list only capitalised (proper nouns: ``tennessee``, ``barbara``), words with
  no vowel (``tv``, ``mph``), and the offensive words of ``better-profanity``'s list.

Tiers (31) grow harder with: a longer seed word, more target words, a longer minimum word length, rarer
words (a lower Zipf floor, and draws that favour rarer words), a tighter word limit per target word, and
from tier 11 on the seed word itself must be used (the rubric's check 1).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path

import numpy as np

GENERATOR_VERSION = "1.0.0"
N_TIERS = 31
LEVELS_PER_TIER = 20  # tiers 1-30 hold 20 levels each; tier 31 holds every level from 601 on
MIN_ZIPF_LEXICON = 1.5
_ALPHABET = "abcdefghijklmnopqrstuvwxyz"
_VOWELS = set("aeiouy")


class LevelError(ValueError):
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

    def as_dict(self) -> dict:
        d = asdict(self)
        d["words"] = list(self.words)
        return {k: d[k] for k in ("level", "tier", "seed_word", "words", "settings", "lexicon", "generator_version")}


# --- the lexicon index --------------------------------------------------------------------------------

_INFLECTIONS = (
    ("ies", "y"),
    ("ied", "y"),
    ("es", ""),
    ("s", ""),
    ("ed", ""),
    ("ed", "e"),
    ("ing", ""),
    ("ing", "e"),
    ("er", ""),
    ("er", "e"),
    ("est", ""),
    ("est", "e"),
    ("ly", ""),
)


def _is_inflection_of(word: str, dictionary: set[str]) -> bool:
    for suffix, repl in _INFLECTIONS:
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            stem = word[: -len(suffix)] + repl
            if stem in dictionary:
                return True
            # doubled consonant: stopped -> stop, running -> run
            if repl == "" and len(stem) >= 3 and stem[-1] == stem[-2] and stem[:-1] in dictionary:
                return True
    return False


@dataclass(frozen=True)
class Lexicon:
    words: tuple[str, ...]  # sorted by (-zipf, word)
    zipf: np.ndarray  # float, aligned with words
    counts: np.ndarray  # (n, 26) uint8 letter counts
    lengths: np.ndarray
    info: dict

    def index(self) -> dict[str, int]:
        return {w: i for i, w in enumerate(self.words)}


def _dictionary_sets() -> tuple[set[str], set[str]]:
    from english_words import get_english_words_set

    raw = get_english_words_set(["web2", "gcide"], lower=False, alpha=True)
    lower = {w for w in raw if w.islower()}
    capital_only = {w.lower() for w in raw if not w.islower()} - lower
    return lower, capital_only


def _offensive() -> set[str]:
    dist = metadata.distribution("better-profanity")
    path = Path(str(dist.locate_file("better_profanity/profanity_wordlist.txt")))
    return {w.strip().lower() for w in path.read_text().split() if w.strip().isalpha()}


@lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    """Build the index once per process (a few seconds); every level after that is cheap."""
    import wordfreq

    lower, capital_only = _dictionary_sets()
    bad = _offensive()
    picked: list[tuple[float, str]] = []
    for w in wordfreq.iter_wordlist("en"):
        if not (2 <= len(w) <= 15 and w.isascii() and w.isalpha() and w.islower()):
            continue
        z = wordfreq.zipf_frequency(w, "en")
        if z < MIN_ZIPF_LEXICON:
            break  # iter_wordlist yields words in descending frequency
        if w in bad or not (_VOWELS & set(w)):
            continue
        if w in lower or (w not in capital_only and _is_inflection_of(w, lower)):
            picked.append((z, w))
    picked.sort(key=lambda zw: (-zw[0], zw[1]))
    words = tuple(w for _, w in picked)
    counts = np.zeros((len(words), 26), dtype=np.uint8)
    for i, w in enumerate(words):
        for ch in w:
            counts[i, ord(ch) - 97] += 1
    info = {
        "source": "wordfreq (en) filtered by english-words (web2+gcide) and better-profanity",
        "wordfreq": metadata.version("wordfreq"),
        "english_words": metadata.version("english-words"),
        "better_profanity": metadata.version("better-profanity"),
        "min_zipf": MIN_ZIPF_LEXICON,
        "size": len(words),
    }
    return Lexicon(words, np.array([z for z, _ in picked]), counts, np.array([len(w) for w in words]), info)


# --- levels ------------------------------------------------------------------------------------------


def _rng(*parts: object) -> np.random.Generator:
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "little"))


def _check_level(level: int) -> None:
    if isinstance(level, bool) or not isinstance(level, int | np.integer) or level < 1:
        raise LevelError(f"a level number must be a positive integer, got {level!r}")


def subwords(seed: str, lex: Lexicon | None = None) -> list[str]:
    """Every lexicon word (other than the seed) spelled from a sub-multiset of the seed's letters."""
    lex = lex or lexicon()
    c = np.zeros(26, dtype=np.uint8)
    for ch in seed:
        c[ord(ch) - 97] += 1
    ok = np.all(lex.counts <= c, axis=1)
    return sorted(w for w in np.asarray(lex.words, dtype=object)[ok] if w != seed)


def generate(level: int, lex: Lexicon | None = None) -> Level:
    """The level with this number. Deterministic: same number, same level, everywhere."""
    _check_level(level)
    lex = lex or lexicon()
    tier = tier_of(level)
    s = tier_settings(tier)
    rng = _rng("vocab-level", GENERATOR_VERSION, level)
    seeds = _seed_pool(lex, s.seed_length, s.seed_min_zipf)
    # Try seeds in a seeded order until one has enough qualifying subwords.
    for i in rng.permutation(len(seeds)):
        seed_idx = seeds[i]
        seed = lex.words[seed_idx]
        ok = np.all(lex.counts <= lex.counts[seed_idx], axis=1)
        ok &= lex.lengths >= s.min_word_length
        ok &= lex.zipf >= s.min_zipf
        ok[seed_idx] = False
        cand = np.flatnonzero(ok)  # index order = (-zipf, word): already a stable sort
        if len(cand) >= s.n_words + 2:  # a little slack, so the draw is a choice
            break
    else:  # pragma: no cover - every tier's pool has qualifying seeds (tested over all tiers)
        raise LevelError(f"level {level}: no seed word of length {s.seed_length} has {s.n_words} subwords")
    w = 10.0 ** (-s.rarity * lex.zipf[cand])
    picked = rng.choice(cand, size=s.n_words, replace=False, p=w / w.sum())
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


def _seed_pool(lex: Lexicon, length: int, min_zipf: float) -> np.ndarray:
    return np.flatnonzero((lex.lengths == length) & (lex.zipf >= min_zipf))


# --- ranges and designs --------------------------------------------------------------------------------


def parse_ranges(text: str, what: str = "level") -> list[int]:
    """``"7"``, ``"1-140"``, ``"1-3,10"`` → sorted unique positive integers. Raises LevelError."""
    if not isinstance(text, str) or not text.strip():
        raise LevelError(f"empty {what} range")
    out: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", part)
        if not m:
            raise LevelError(f"bad {what} range {part!r}: expected N or N-M with positive integers")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        if lo < 1:
            raise LevelError(f"bad {what} range {part!r}: {what} numbers start at 1")
        if hi < lo:
            raise LevelError(f"bad {what} range {part!r}: the end is before the start")
        out.update(range(lo, hi + 1))
    return sorted(out)


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
