"""The level generator's index: the lexicon (the SCOWL word list with wordfreq frequencies, see
:mod:`vocab.levels` for why) as arrays, and each tier's pool of seed words with their candidate target words.

A *subword* of a seed is a word spelled from a sub-multiset of its letters. :func:`subword_pairs` finds every
(seed, word) pair at once on letter bitsets, so that building every tier's pool takes well under a second.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class TierPool:
    """A tier's seed words and, for each seed that can fill a level, its candidate target words.

    ``seeds`` are the tier's seed words (length and frequency as the tier says), in index order; ``fillable``
    those with at least ``n_words + 2`` candidates (a little slack, so the draw is a choice); the candidates of
    ``fillable[i]`` are ``cand[ptr[i]:ptr[i + 1]]``, in index order (-zipf, word).
    """

    tier: int
    seeds: np.ndarray
    fillable: np.ndarray
    ptr: np.ndarray
    cand: np.ndarray


@dataclass(frozen=True)
class Lexicon:
    words: tuple[str, ...]  # sorted by (-zipf, word)
    zipf: np.ndarray  # float, aligned with words
    counts: np.ndarray  # (n, 26) uint8 letter counts
    lengths: np.ndarray
    info: dict
    pools: tuple[TierPool, ...] = ()  # pools[t - 1] is tier t's

    def index(self) -> dict[str, int]:
        return {w: i for i, w in enumerate(self.words)}


def offensive_words() -> set[str]:
    dist = metadata.distribution("better-profanity")
    path = Path(str(dist.locate_file("better_profanity/profanity_wordlist.txt")))
    return {w.strip().lower() for w in path.read_text().split() if w.strip().isalpha()}


def letter_counts(words: tuple[str, ...]) -> np.ndarray:
    """(n, 26) letter counts, vectorised: one pass over a padded byte matrix."""
    width = max(map(len, words), default=1)
    raw = np.frombuffer("".join(w.ljust(width) for w in words).encode("ascii"), dtype=np.uint8)
    codes = raw.reshape(len(words), width).astype(np.int64) - 97  # the pad (space) falls below 0
    rows = np.repeat(np.arange(len(words)), width)
    keep = codes.ravel() >= 0
    counts = np.zeros((len(words), 26), dtype=np.uint8)
    np.add.at(counts, (rows[keep], codes.ravel()[keep]), 1)
    return counts


def pools_of(tiers: list, lex: Lexicon) -> list[TierPool]:
    """The pools of tiers that share a seed length: their (seed, target) pairs are found once."""
    length = tiers[0].seed_length
    seeds = np.flatnonzero((lex.lengths == length) & (lex.zipf >= min(s.seed_min_zipf for s in tiers)))
    targets = np.flatnonzero(
        (lex.lengths >= min(s.min_word_length for s in tiers))
        & (lex.lengths <= length)
        & (lex.zipf >= min(s.min_zipf for s in tiers))
    )
    si, wi = subword_pairs(lex.counts[seeds], lex.counts[targets])
    keep = targets[wi] != seeds[si]
    si, wi = si[keep], wi[keep]
    out = []
    for s in tiers:
        seed_ok = lex.zipf[seeds] >= s.seed_min_zipf
        ok = seed_ok[si] & (lex.zipf[targets[wi]] >= s.min_zipf) & (lex.lengths[targets[wi]] >= s.min_word_length)
        n = np.bincount(si[ok], minlength=len(seeds))
        fill = np.flatnonzero(seed_ok & (n >= s.n_words + 2))
        rows = np.isin(si, fill) & ok  # pairs are seed-major, targets in index order within a seed
        out.append(
            TierPool(
                s.tier,
                seeds[seed_ok],
                seeds[fill],
                np.concatenate([[0], np.cumsum(n[fill])]).astype(np.int64),
                targets[wi[rows]],
            )
        )
    return out


def subword_pairs(seed_counts: np.ndarray, word_counts: np.ndarray, chunk: int = 512) -> tuple:
    """All (seed, word) position pairs where the word is a sub-multiset of the seed's letters, seed-major.

    Letters first, on bitsets: a word qualifies only if no letter it has is missing from the seed, so the
    words' letter sets are packed into one bitset per letter and OR-ed over the letters a seed lacks. The few
    pairs that survive have their letter counts compared.
    """
    n_words = len(word_counts)
    width = -(-n_words // 64) * 64
    has = np.zeros((26, width), dtype=bool)
    has[:, :n_words] = (word_counts > 0).T
    has64 = np.packbits(has, axis=1, bitorder="little").view(np.uint64)  # (26, width / 64)
    out_s, out_w = [], []
    for lo in range(0, len(seed_counts), chunk):
        missing = seed_counts[lo : lo + chunk] == 0
        bad = np.zeros((len(missing), has64.shape[1]), dtype=np.uint64)
        for c in range(26):
            np.bitwise_or(bad, has64[c], out=bad, where=missing[:, c : c + 1])
        good = (~bad).view(np.uint8)  # bits past n_words are set here and dropped below
        r, q = np.nonzero(good)
        k, b = np.nonzero(np.unpackbits(good[r, q][:, None], axis=1, bitorder="little"))
        si, wi = r[k] + lo, q[k] * 8 + b
        ok = wi < n_words
        si, wi = si[ok], wi[ok]
        ok = np.all(word_counts[wi] <= seed_counts[si], axis=1)
        out_s.append(si[ok])
        out_w.append(wi[ok])
    return np.concatenate(out_s), np.concatenate(out_w)
