"""The coverage of a pairwise judge's corrected preferences (:mod:`vocab.stats.pairwise`) against a known truth,
beside prediction-powered inference (ppi_py's ``ppi_mean_ci`` on the win indicator) on the same studies.

A point: a cell of N items whose people's classes (A, B, tie) are drawn with given shares, and a judge that gives
each item a verdict by its row of a 3×3 matrix (true class → verdict): an erring judge, a judge that favours the
answer shown first (A), one that never says tie (an empty tie pile), one that says tie freely. Each simulated study
draws its population (the truth is *these* items' shares: the finite population the audit corrects for), the
judge's verdicts, then labels ``labels`` items of each pile at random (all of a smaller pile), and corrects the
cell. Coverage is the share of studies whose interval holds the study's own share (up to :data:`TOLERANCE`: the
shares lie on a lattice of 1/N, summed over piles in floating point).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vocab.stats.pairwise import PAIRED, PairPiles, pairwise_intervals, win_rate

TOLERANCE = 1e-9
ESTIMATES = ("a", "b", "tie", "win_rate_b", "win_rate_b_dropped")
# true class (rows: a, b, tie) → the judge's verdict (columns: a, b, tie)
JUDGES = {
    "good": ((0.9, 0.05, 0.05), (0.05, 0.9, 0.05), (0.15, 0.15, 0.7)),
    "erring": ((0.6, 0.25, 0.15), (0.25, 0.6, 0.15), (0.35, 0.35, 0.3)),
    "first-position": ((0.9, 0.05, 0.05), (0.45, 0.5, 0.05), (0.55, 0.1, 0.35)),
    "never-tie": ((0.85, 0.15, 0.0), (0.2, 0.8, 0.0), (0.5, 0.5, 0.0)),
    "tie-happy": ((0.5, 0.1, 0.4), (0.1, 0.5, 0.4), (0.1, 0.1, 0.8)),
}
TWO_CLASS_JUDGES = {"good": ((0.9, 0.1, 0.0), (0.1, 0.9, 0.0)), "first-position": ((0.95, 0.05, 0), (0.4, 0.6, 0))}


@dataclass(frozen=True)
class PairCoverage:
    sims: int
    coverage: dict[str, float]  # per estimate (:data:`ESTIMATES`)
    width: dict[str, float]
    ppi_coverage: float  # ppi_py's interval of the win rate of B (ties half), on the same studies
    ppi_width: float
    piles: tuple[float, float, float]  # mean items in the B, A and tie piles
    labels: float  # mean labelled items a cell


def _cells(rng, n_items: int, truth, judge, sims: int):
    """(sims, 3, 3) counts of items by true class (a, b, tie) and the judge's verdict (a, b, tie)."""
    true = rng.multinomial(n_items, np.asarray(truth, float) / np.sum(truth), size=sims)  # (sims, 3)
    m = np.asarray(judge, float)
    out = np.zeros((sims, 3, 3), dtype=np.int64)
    for c in range(m.shape[0]):
        out[:, c, :] = rng.multinomial(true[:, c], m[c] / m[c].sum())
    return out


def _sample(rng, pile, labels: int):
    """Per study, the labelled items' classes of one pile: (k_a, k_b, k_t) drawn without replacement from the
    pile's ``pile`` (sims, 3) true-class counts, min(labels, pile size) of them."""
    size = pile.sum(axis=1)
    n = np.minimum(labels, size)
    # (an empty pile draws one item of a stand-in pile, thrown away: numpy's draw takes no empty urn)
    k_b = rng.hypergeometric(pile[:, 1], np.where(size > 0, size - pile[:, 1], 1), np.maximum(n, 1)) * (n > 0)
    rest = size - pile[:, 1]
    k_t = rng.hypergeometric(pile[:, 2], np.where(rest > 0, pile[:, 0], 1), np.maximum(n - k_b, 1)) * (n - k_b > 0)
    return n - k_b - k_t, k_b, k_t


def _rows(k_a, k_b, k_t, width: int):
    """(sims, width) B values and tie values of the labelled rows (B rows, then ties, then A; NaN past the end)."""
    j = np.arange(width)[None, :]
    n = (k_a + k_b + k_t)[:, None]
    b = np.where(j < n, (j < k_b[:, None]).astype(float), np.nan)
    t = np.where(j < n, ((j >= k_b[:, None]) & (j < (k_b + k_t)[:, None])).astype(float), np.nan)
    return b, t


def study_piles(rng, n_items: int, truth, judge, labels: int, sims: int, ties: bool):
    """Simulated cells as :class:`~vocab.stats.pairwise.PairPiles`, with each study's true shares (a, b, tie) and
    the labelled rows' (person's, judge's) classes for the anchor."""
    cells = _cells(rng, n_items, truth, judge, sims)
    truth_shares = cells.sum(axis=2) / n_items  # (sims, 3): a, b, tie
    bs, ts, ws, totals, sampled = [], [], [], [], []
    for verdict in (1, 0, 2):  # the piles in PairPiles' order: B, A, tie
        pile = cells[:, :, verdict]
        k_a, k_b, k_t = _sample(rng, pile, labels)
        b, t = _rows(k_a, k_b, k_t, max(labels, 1))
        bs.append(b)
        ts.append(t)
        ws.append((~np.isnan(b)).astype(float))
        totals.append(pile.sum(axis=1))
        sampled.append((verdict, k_a, k_b, k_t))
    piles = PairPiles.make(bs, ts, ws, np.stack(totals, axis=1).astype(float), np.full(sims, ties))
    return piles, truth_shares, cells, sampled


def _ppi(cells, sampled, confidence):
    """ppi_py's mean of the win indicator (B 1, tie ½, A 0; PPI++'s tuned λ): the labelled rows weighted back
    to their piles' shares (they were sampled by pile), the judge's verdict on every item as the unlabelled
    predictions."""
    from ppi_py import ppi_mean_ci  # deferred: only the anchor needs it

    value = np.array([0.0, 1.0, 0.5])  # a, b, tie
    lows, highs = [], []
    for s in range(cells.shape[0]):
        y, yhat, w = [], [], []
        total = cells[s].sum()
        for verdict, k_a, k_b, k_t in sampled:
            n_pile = k_a[s] + k_b[s] + k_t[s]
            if not n_pile:
                continue
            share = cells[s, :, verdict].sum() / total
            for c, k in ((0, k_a[s]), (1, k_b[s]), (2, k_t[s])):
                y += [value[c]] * int(k)
                yhat += [value[verdict]] * int(k)
                w += [share / n_pile] * int(k)
        w = np.asarray(w) * len(w)
        unl = np.repeat(value, cells[s].sum(axis=0))
        lo, hi = ppi_mean_ci(np.asarray(y), np.asarray(yhat), unl, alpha=1 - confidence, w=w)
        lows.append(float(np.ravel(lo)[0]))
        highs.append(float(np.ravel(hi)[0]))
    return np.asarray(lows), np.asarray(highs)


def pairwise_coverage(
    n_items: int,
    truth,
    judge,
    labels: int,
    *,
    sims: int,
    seed: int,
    n_draws: int = 1000,
    confidence: float = 0.95,
    anchor: bool = True,
    rule: str = PAIRED,
    bound_ties: bool = True,
) -> PairCoverage:
    """One point's coverage: ``truth`` the people's class shares (a, b, tie), ``judge`` the 3×3 verdict matrix
    (:data:`JUDGES`), ``labels`` items labelled a pile. With no tie in the truth and none in the judge's verdicts
    the cell has two classes (θ). ``rule``: :data:`vocab.stats.pairwise.RULES`; ``bound_ties`` False: the ties'
    low end from the randomised draws (the rules first tried, for the record)."""
    rng = np.random.default_rng(seed)
    judge = np.asarray(judge, float)
    if judge.shape == (2, 3):
        judge = np.vstack([judge, [0, 0, 1]])
    ties = bool(truth[2] > 0 or judge[:2, 2].any())
    piles, t, cells, sampled = study_piles(rng, n_items, truth, judge, labels, sims, ties)
    r = pairwise_intervals(piles, n_draws=n_draws, confidence=confidence, rng=rng, rule=rule, bound_ties=bound_ties)
    truths = {
        "a": t[:, 0],
        "b": t[:, 1],
        "tie": t[:, 2],
        "win_rate_b": win_rate(t[:, 1], t[:, 2]),
        "win_rate_b_dropped": win_rate(t[:, 1], t[:, 2], t[:, 0], rule="dropped"),
    }
    cov, width = {}, {}
    for name in ESTIMATES:
        got = getattr(r, name)
        ok = np.isfinite(truths[name]) & np.isfinite(got.low)
        held = (got.low <= truths[name] + TOLERANCE) & (truths[name] <= got.high + TOLERANCE)
        cov[name] = float(np.mean(held[ok])) if ok.any() else float("nan")
        width[name] = float(np.mean((got.high - got.low)[ok])) if ok.any() else float("nan")
    ppi_cov = ppi_width = float("nan")
    if anchor:
        lo, hi = _ppi(cells, sampled, confidence)
        held = (lo <= truths["win_rate_b"] + TOLERANCE) & (truths["win_rate_b"] <= hi + TOLERANCE)
        ppi_cov, ppi_width = float(np.mean(held)), float(np.mean(hi - lo))
    sizes = piles.totals.mean(axis=0)
    return PairCoverage(
        sims, cov, width, ppi_cov, ppi_width, tuple(float(x) for x in sizes), float(piles.rows().sum(axis=1).mean())
    )
