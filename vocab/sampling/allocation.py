"""How a cell's labels are split between the judge's PASSED and FAILED piles (`--allocation equal|proportional|pilot`,
`--budget`): :func:`allocate` splits a budget at the judge's pass rate, and :func:`fit` keeps the split inside what
each pile holds for the proportional and pilot splits (a pile smaller than its share is taken whole and the rest goes
to the other, so no label of the budget is left unused where the other pile has rows to take it)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from vocab.datasets.errors import CalibrationError

ALLOCATIONS = ("equal", "proportional", "pilot")


def allocate(
    budget: int,
    p: float,
    allocation: str = "equal",
    *,
    pilot: tuple[int, int, int, int] | None = None,
    sigmas: tuple[float, float] | None = None,
) -> tuple[int, int]:
    """Rows for a cell's (passed, failed) piles out of ``budget``. ``equal``: half each (the odd row to the passed
    pile; 20 gives seed 000's 10 + 10). ``proportional``: in proportion to the piles' shares of the attempts,
    n_a ∝ p and n_b ∝ 1 − p: Neyman's split (n_a ∝ p·σ_a, n_b ∝ (1 − p)·σ_b, the variance of theta = p·a + (1 −
    p)·b at its least) only when both piles' σ are equal, as they are at their worst case 1/2 before any rating.
    ``pilot``: Neyman's split with each σ from a rated
    pilot ``(n_a, k_a, n_b, k_b)`` (rows and rater passes per pile; shares smoothed as (k + 1)/(n + 2), as Lee et
    al. smooth theirs), never fewer rows than the pilot has; or, before any pilot (`vocab plan`), at guessed spreads
    ``sigmas`` (σ_a, σ_b). Each pile gets at least 2 rows. ``p``: the critic's pass rate in the cell."""
    if budget < 4:
        raise CalibrationError(f"budget must be at least 4 (2 rows a pile), got {budget}")
    if not 0 <= p <= 1:
        raise CalibrationError(f"p must lie in [0, 1], got {p}")
    if allocation == "equal":
        return budget - budget // 2, budget // 2
    if allocation in ALLOCATIONS and p in (0.0, 1.0):  # one pile only: it takes every label
        return (budget, 0) if p == 1 else (0, budget)
    if allocation == "proportional":
        sa = sb = 0.5
        floor_a = floor_b = 2
    elif allocation == "pilot" and pilot is None and sigmas is not None:  # guessed spreads, before any pilot
        sa, sb = sigmas
        floor_a = floor_b = 2
    elif allocation == "pilot":
        if pilot is None:
            raise CalibrationError("allocation 'pilot' needs the pilot's counts (n_a, k_a, n_b, k_b)")
        na, ka, nb, kb = pilot
        sa, sb = (float(np.sqrt((k + 1) / (n + 2) * (1 - (k + 1) / (n + 2)))) for k, n in ((ka, na), (kb, nb)))
        floor_a, floor_b = max(2, na), max(2, nb)
        if floor_a + floor_b > budget:
            raise CalibrationError(f"the pilot already holds {na + nb} rows, more than the budget of {budget}")
    else:
        raise CalibrationError(f"unknown allocation {allocation!r} (known: {', '.join(ALLOCATIONS)})")
    wa, wb = p * sa, (1 - p) * sb
    n_a = int(round(budget * wa / (wa + wb))) if wa + wb > 0 else budget // 2
    n_a = min(max(n_a, floor_a), budget - floor_b)
    return n_a, budget - n_a


def fit(sizes: tuple[int, int], room: tuple[int, int], allocation: str = "proportional") -> tuple[int, int]:
    """``sizes`` (passed, failed rows) within ``room`` (the rows each pile can give: its items, or for a FAILED pile
    drawn a group at a time its groups): a pile's rows past its room go to the other pile, as far as it has room.
    ``equal`` is left as it is: seed 000's design, half a pile each and a small pile taken whole."""
    if allocation == "equal":
        return sizes
    (a, b), (ra, rb) = sizes, room
    fa, fb = min(a, ra), min(b, rb)
    spare = a + b - fa - fb
    more_a = min(spare, ra - fa)
    return fa + more_a, fb + min(spare - more_a, rb - fb)


def pile_sizes(attempts: pd.DataFrame, budget: int, allocation: str) -> dict[str, tuple[int, int]]:
    """Per cell, the (passed, failed) rows :func:`allocate` gives ``budget`` at the cell's critic pass rate
    (``equal`` or ``proportional``; ``pilot`` needs ratings: :func:`extend_sample`)."""
    if allocation == "pilot":
        raise CalibrationError("allocation 'pilot' extends a rated sample: draw the pilot first (equal)")
    out = {}
    for cell, a in attempts.sort_values("cell", kind="stable").groupby("cell", sort=True):
        room = (int((a.verdict == "PASSED").sum()), int(a[a.verdict == "FAILED"].level.nunique()))
        out[cell] = fit(allocate(budget, float((a.verdict == "PASSED").mean()), allocation), room, allocation)
    return out


def cell_sizes(data, budget: int, allocation: str) -> dict[str, tuple[int, int]]:
    """:func:`pile_sizes` of a run or dataset, from its cells' counts."""
    if allocation == "pilot":
        raise CalibrationError("allocation 'pilot' extends a rated sample: draw the pilot first (equal)")
    c = data.cells[data.cells.attempts > 0]
    out = {}
    for cell, r in c.iterrows():
        sizes = allocate(budget, float(r.passed / r.attempts), allocation)
        out[cell] = fit(sizes, (int(r.passed), int(r.failed_groups)), allocation)
    return out
