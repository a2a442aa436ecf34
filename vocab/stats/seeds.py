"""The one way an estimate gets its random numbers: a stream of its own, derived from the seed and its names.

It covers the streams of estimates (bootstrap intervals, corrections, agreement, the planner's and the grid's
points). The sample's draw, the coverage simulator and the exams draw from ``default_rng(seed)`` directly, each
saying so where it draws: moving them onto these streams would redraw every committed sample and grid point."""

from __future__ import annotations

import hashlib

import numpy as np


def derived_seed(seed: int, *names: object) -> int:
    """A 64-bit seed of its own for one estimate, from ``seed`` and the names that identify it (its table, rater,
    cell, check, ...). The names enter through SHA-256 of their text, never Python's ``hash``, so the seed is the
    same in every process. Names are compared as text (``1`` and ``"1"`` name one stream) and joined by U+001F, so
    a name holding U+001F is refused: ("a", "b") and ("a\x1fb",) would be one stream."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"a seed must be a non-negative integer, got {seed!r}")
    texts = [str(n) for n in names]
    if any("\x1f" in t for t in texts):
        raise ValueError(f"a stream's name holds U+001F, the names' separator: {texts!r}")
    digest = hashlib.sha256("\x1f".join(texts).encode()).digest()
    words = np.frombuffer(digest, dtype="<u4").tolist()
    state = np.random.SeedSequence([int(seed), *words]).generate_state(2, dtype=np.uint32)
    return int(state[0]) | int(state[1]) << 32


def stream(seed: int, *names: object) -> np.random.Generator:
    """The random generator of one estimate (:func:`derived_seed`): an estimate drawn from it depends on its own
    data and seed only, not on which other estimates are computed beside it or in which order."""
    return np.random.default_rng(derived_seed(seed, *names))
