"""A sample drawn by strata within each pile (`vocab audit --strata score|COLUMN`): the strata, and how a pile's
labels are shared out among them.

A pile's strata are the values of a column the dataset kept (``--strata COLUMN``; ``--by COLUMN`` on the first call
draws so, each slice then rated as a cell of its own) or bands of the judge's own score (``--strata score``: at most
:data:`MAX_BANDS` bands of the pile's scores, equal scores never split; items without a score their own stratum).
Each stratum gets at least :data:`MIN_PER_STRATUM` rows (or all it holds), the rest of the pile's labels in
proportion to the strata's sizes (largest remainders), never more than a stratum holds. The estimator that weights
the strata back is :func:`vocab.stats.strata.stratified_correction`.
"""

from __future__ import annotations

import numpy as np

SCORE = "score"  # --strata score: the judge's score in bands
MAX_BANDS = 4
MIN_PER_STRATUM = 3
NO_SCORE = "(no score)"


def allocate_strata(sizes: list[int], n: int) -> list[int]:
    """``n`` rows of a pile over strata of ``sizes``: each stratum min(size, :data:`MIN_PER_STRATUM`) first, the
    rest in proportion to the sizes by largest remainders, never more than a stratum holds (a pile smaller than
    ``n`` is taken whole; floors above ``n`` are kept: every stratum is rated)."""
    sizes = [int(s) for s in sizes]
    take = [min(s, MIN_PER_STRATUM) for s in sizes]
    left = min(n, sum(sizes)) - sum(take)
    while left > 0:
        room = [s - t for s, t in zip(sizes, take, strict=True)]
        open_ = [i for i, r in enumerate(room) if r > 0]
        if not open_:
            break
        total = sum(sizes[i] for i in open_)
        quota = {i: left * sizes[i] / total for i in open_}
        whole = {i: min(int(quota[i]), room[i]) for i in open_}
        given = sum(whole.values())
        for i in open_:
            take[i] += whole[i]
        left -= given
        if left > 0 and given == 0:  # fewer rows left than strata with room: the largest remainders
            for i in sorted(open_, key=lambda i: (-(quota[i] - int(quota[i])), i))[:left]:
                take[i] += 1
            left = 0
    return take


def score_bands(scores) -> list[str]:
    """Each item's band of the judge's score within its pile: the distinct scores in order, cut into at most
    :data:`MAX_BANDS` bands of about equal counts (equal scores in one band), named by their range ("score 0.2–0.5");
    an item without a finite score is :data:`NO_SCORE`."""
    x = np.asarray(scores, dtype=float)
    ok = np.isfinite(x)
    out = np.full(len(x), NO_SCORE, dtype=object)
    if not ok.any():
        return list(out)
    values, counts = np.unique(x[ok], return_counts=True)
    mid = (np.cumsum(counts) - counts / 2) / counts.sum()
    band = np.minimum((mid * MAX_BANDS).astype(int), MAX_BANDS - 1)
    names = {}
    for b in np.unique(band):
        lo, hi = values[band == b].min(), values[band == b].max()
        names[b] = f"score {lo:g}" if lo == hi else f"score {lo:g}–{hi:g}"
    of_value = {v: names[b] for v, b in zip(values, band, strict=True)}
    out[ok] = [of_value[v] for v in x[ok]]
    return list(out)
