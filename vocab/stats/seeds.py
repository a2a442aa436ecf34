"""The one way an estimate gets its random numbers: a stream of its own, derived from the seed and its names.

An estimate printed from data (a corrected rate, a difference, an agreement) draws from :func:`data_stream`: the seed,
what it estimates and a digest of its own data, never a rater's or a cell's name; a randomised interval's randomisation
comes from :func:`randomisation`, its data alone. The streams cover estimates (bootstrap intervals, corrections,
agreement) and the planner's and the grid's points (named by their parameters). The sample's draw, the coverage
simulator and the exams draw from ``default_rng(seed)`` directly, each saying so where it draws: moving them onto these
streams would redraw every committed sample and grid point."""

from __future__ import annotations

import hashlib

import numpy as np

# The draws a printed estimate takes by default. The finite population's fiducial ends are computed whole
# (vocab.stats.exact) whatever the draws; the draws serve the superpopulation, the other methods and the rank sets,
# whose ends' Monte-Carlo error on the committed data averages 0.17 points at 20,000 (0.37 at 4,000):
# benchmarks/bench_mc_error.py, benchmarks/results/mc_error.json
N_DRAWS = 20_000


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


def data_digest(*parts: object) -> str:
    """A stable hex digest (SHA-256) of an estimate's data: each part an array (its dtype's kind, shape and
    bytes as float64, or its values as text for strings and objects), a number or a text, in the order given. The
    same data give the same digest in every process, whatever the data's rater or cell is called."""
    h = hashlib.sha256()
    for part in parts:
        a = np.asarray(part)
        if a.dtype.kind in "biuf":
            h.update(b"n" + repr(a.shape).encode() + np.ascontiguousarray(a, dtype="<f8").tobytes())
        else:
            h.update(b"t" + repr(a.shape).encode() + "\x1f".join(map(str, a.ravel().tolist())).encode())
        h.update(b"\x1e")
    return h.hexdigest()


def data_stream(seed: int, name: str, *parts: object) -> np.random.Generator:
    """The random generator of one estimate from ``seed``, the estimate's kind (``name``: what it estimates, never
    a rater or a cell) and its own data (:func:`data_digest` of ``parts``): the same labels draw the same numbers
    whoever gave them, and an estimate does not depend on its neighbours (other cells, other raters)."""
    return stream(seed, name, data_digest(*parts))


def randomisation(name: str, *parts: object) -> np.random.Generator:
    """The randomisation of a randomised interval (the fiducial interval's uniforms, one a proportion), from its
    data alone: the interval then depends on the data only, the seed moving its Monte-Carlo draws and nothing
    else (docs/statistics.md, "An interval that depends only on the data")."""
    return stream(0, "randomisation", name, data_digest(*parts))
