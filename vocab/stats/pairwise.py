"""Corrected preferences of a pairwise judge ("A, B or tie"), vectorised over studies: the per-pile fiducial draws
of :mod:`vocab.stats.intervals` carried from two classes to three.

A study is a *cell*: one pairing of two systems (A and B) under one judge. The judge put each of the cell's N items
in one of three piles: it preferred B, it preferred A, or it called a tie (N_B, N_A, N_T items; its raw shares are
N_B / N, N_A / N, N_T / N). People labelled a sample of each pile (A, B or tie). Then, over these N items (the
finite population, as θ's default),

    share_c = Σ_pile (N_pile / N) · (the pile's share of items people put in class c)      c ∈ {A, B, tie}
    win rate of B = share_B + share_tie / 2        (ties half; "ties dropped": share_B / (share_A + share_B))

**The draws** (:func:`pairwise_draws`, rule :data:`PAIRED`). Each share is drawn as θ draws a pile's share: per
pile, the randomised binomial confidence distribution of "this class or not" (:func:`~vocab.stats.intervals.
binomial_cd_draws`, k of the n labelled rows), its unlabelled N − n items completed as θ's finite piles are
(:func:`~vocab.stats.intervals.finite_shares`: (k + Binomial(N − n, π)) / N), the piles weighted by the judge's
pile shares. A multinomial's margins are binomials, so each share is the θ of its own class. The **win rate**
(ties half) is the mean of an ordered outcome (A < tie < B): half its share of "not A" plus half its share of B,
each of those two cumulative shares by its own draws, paired rank for rank within each pile (comonotone: the
coupling under which their sum is widest). Ties dropped: B / (A + B) from those draws. The **ties' share**, a rare
class in most cells, takes its low end from each pile's lower bounding distribution, Beta(k, n − k + 1) (Clopper
and Pearson's lower end: 0 at k = 0), its high end from the randomised draws. Every interval is the equal-tailed
95 % of its draws, widened to hold its estimate (:func:`~vocab.stats.intervals.holding_rows`) and clipped to
[0, 1]. The first rule tried, :data:`STICK` (each pile's stick broken after B, the ties' share of the rest drawn
next, A what is left), under-covered A and the win rate; the randomised ties' low end under-covered the ties'
share at 5 labels a pile (docs/statistics.md, ``benchmarks/results/pairwise.json``).

**Two classes are θ.** The random numbers are taken in θ's order first: the B pile's share of B (θ's passed pile,
a), the A pile's share of B (θ's failed pile, b), their finite completions (passed, then failed); then the tie pile,
then the other shares. A study with no tie anywhere (``ties`` False: the judge never said tie and no label is a
tie; the dataset has two classes) has its ties held at 0 and its A at 1 − B, so its share of B and both win
rates are θ of "B won: PASSED", draw for draw and end for end, from the same generator (the B pile the passed
pile, the A pile the failed pile). ``tests/unit/test_pairwise_stats.py`` checks it on the reference run's
committed correction.

A pile's rows may carry weights (θ's failed pile weights a row by its level's failures; a pairwise item weighs 1):
its shares are weighted, and each break is taken on its Kish effective rows, as θ's failed pile is. A label may be
fractional (people pooled: a row's B value and tie value are the shares of people who said so).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vocab.stats.correction import kish_rows
from vocab.stats.intervals import binomial_cd_draws, holding_rows
from vocab.stats.seeds import N_DRAWS

PILES = ("b", "a", "tie")  # the judge's piles in the order their draws are taken (θ's passed, failed, then ties)
CLASSES = ("a", "b", "tie")  # the shares reported
TIE_RULES = ("half", "dropped")  # how a win rate counts ties: half a win each, or left out


@dataclass(frozen=True)
class PairPiles:
    """S cells' calibration data. Per pile (in :data:`PILES` order): each labelled row's B value and tie value
    (1 or 0 for one person's label, a share for people pooled; NaN past the pile's end) and weight (0 past the
    end); ``totals`` (S, 3) the judge's items in each pile; ``ties`` (S,) whether tie is a class at all."""

    b: tuple[np.ndarray, np.ndarray, np.ndarray]  # (S, n_j) each
    tie: tuple[np.ndarray, np.ndarray, np.ndarray]
    weights: tuple[np.ndarray, np.ndarray, np.ndarray]
    totals: np.ndarray  # (S, 3)
    ties: np.ndarray  # (S,) bool

    @classmethod
    def from_labels(cls, labels, totals, *, ties=None, weights=None) -> PairPiles:
        """From class labels: ``labels[j]`` an (S, n_j) array of "a", "b", "tie" (None or "" past a pile's end) or
        one cell's list per pile; ``totals`` (S, 3) or (3,). ``ties`` by default: any tie among a study's labels
        or in its tie pile."""
        totals = np.atleast_2d(np.asarray(totals, dtype=float))
        s = totals.shape[0]
        rows = []
        for lab in labels:
            arr = np.asarray(lab, dtype=object)
            arr = arr.reshape(s, -1) if arr.size else np.empty((s, 0), dtype=object)
            rows.append(arr)
        bad = {v for arr in rows for v in arr.ravel().tolist() if v not in ("a", "b", "tie", None, "")}
        if bad:
            raise ValueError(f"a label must be a, b or tie; got {sorted(map(str, bad))}")
        b = tuple(np.where(np.isin(r, ("a", "b", "tie")), (r == "b").astype(float), np.nan) for r in rows)
        t = tuple(np.where(np.isin(r, ("a", "b", "tie")), (r == "tie").astype(float), np.nan) for r in rows)
        w = tuple((~np.isnan(x)).astype(float) for x in b) if weights is None else weights
        if ties is None:
            ties = (totals[:, 2] > 0) | np.any([np.nansum(x, axis=1) > 0 for x in t], axis=0)
        return cls.make(b, t, w, totals, ties)

    @classmethod
    def make(cls, b, tie, weights, totals, ties) -> PairPiles:
        """Validated: ValueError naming what is wrong."""
        totals = np.atleast_2d(np.asarray(totals, dtype=float))
        s = totals.shape[0]
        b = tuple(np.asarray(x, dtype=float).reshape(s, -1) for x in b)
        tie = tuple(np.asarray(x, dtype=float).reshape(s, -1) for x in tie)
        weights = tuple(np.asarray(x, dtype=float).reshape(s, -1) for x in weights)
        ties = np.broadcast_to(np.asarray(ties, dtype=bool), (s,)).copy()
        if totals.shape != (s, 3) or not np.all(np.isfinite(totals)) or np.any(totals < 0):
            raise ValueError("totals must be (studies, 3) finite counts of items, one a pile (B, A, tie)")
        if len(b) != 3 or len(tie) != 3 or len(weights) != 3:
            raise ValueError("three piles (B, A, tie) of labels, tie values and weights are needed")
        for j, name in enumerate(PILES):
            if not b[j].shape == tie[j].shape == weights[j].shape:
                raise ValueError(f"pile {name}: labels, tie values and weights differ in shape")
            lab = ~np.isnan(b[j])
            if np.any(b[j][lab] + tie[j][lab] > 1 + 1e-12) or np.any(b[j][lab] < 0) or np.any(tie[j][lab] < 0):
                raise ValueError(f"pile {name}: a row's B and tie values must be shares summing to at most 1")
            n = lab.sum(axis=1)
            if np.any((totals[:, j] > 0) & (n > totals[:, j])):
                raise ValueError(f"pile {name}: more labelled rows than items in the pile")
        if np.any(totals.sum(axis=1) <= 0):
            raise ValueError("a cell needs at least one item")
        if np.any(~ties & ((totals[:, 2] > 0) | np.any([np.nansum(x, axis=1) > 0 for x in tie], axis=0))):
            raise ValueError("a study without ties has a tie pile or a tie label")
        return cls(b, tie, weights, totals, ties)

    def rows(self) -> np.ndarray:
        """(S, 3) labelled rows per pile."""
        return np.stack([np.sum(~np.isnan(x), axis=1) for x in self.b], axis=1)

    def pile_shares(self) -> tuple[np.ndarray, np.ndarray]:
        """(S, 3) each pile's weighted share of B and of ties among its labelled rows (NaN for an unlabelled pile)."""
        out_b, out_t = [], []
        for x, t, w in zip(self.b, self.tie, self.weights, strict=True):
            with np.errstate(invalid="ignore", divide="ignore"):
                out_b.append(np.nansum(np.nan_to_num(x) * w, axis=1) / w.sum(axis=1))
                out_t.append(np.nansum(np.nan_to_num(t) * w, axis=1) / w.sum(axis=1))
        return np.stack(out_b, axis=1), np.stack(out_t, axis=1)

    def judge_shares(self) -> np.ndarray:
        """(S, 3) the judge's pile shares in :data:`PILES` order; the A pile's is 1 − the others' (so that with no
        tie pile it is θ's 1 − p to the bit)."""
        n = self.totals.sum(axis=1)
        sb, st = self.totals[:, 0] / n, self.totals[:, 2] / n
        return np.stack([sb, 1 - sb - st, st], axis=1)

    def defined(self) -> np.ndarray:
        """(S,) every pile holding items has a labelled row."""
        return np.all((self.rows() > 0) | (self.totals == 0), axis=1)


def _cd(share, rows, rng, n_draws, v_rng=None):
    """One break's draws: the fiducial draws of a proportion ``share`` of ``rows`` (effective) rows, randomised by
    ``v_rng`` (None: ``rng``), as :func:`vocab.stats.intervals.share_draws` takes them."""
    v = (rng if v_rng is None else v_rng).random(len(rows))
    return binomial_cd_draws(np.nan_to_num(share) * rows, rows, v, n_draws, rng)


def _complete(draws, k, n, total, rng):
    """(more, completed share) of a pile's unlabelled ``total − n`` rows, ``k`` labelled in the class, the class
    drawn at ``draws``: (k + Binomial(total − n, draw)) / total, as :func:`~vocab.stats.intervals.finite_shares`
    (its very calls), the draws kept where nothing is labelled or the pile is empty."""
    use = np.isfinite(total) & (n > 0) & (total >= n)
    rest = np.where(use, total - n, 0).astype(np.int64)[:, None]
    pi = np.clip(np.nan_to_num(draws), 0, 1)
    more = rng.binomial(rest, pi)
    with np.errstate(invalid="ignore", divide="ignore"):
        done = (k[:, None] + more) / total[:, None]
    return more, np.where(use[:, None], done, draws), use


@dataclass(frozen=True)
class PairDraws:
    """(S, n_draws) draws over the cell (each pile's draws weighted by its judge share): each share's and each win
    rate's own (under :data:`PAIRED` they are not one joint draw of the three shares)."""

    a: np.ndarray
    b: np.ndarray
    tie: np.ndarray
    win: np.ndarray  # the win rate of B, ties half
    dropped: np.ndarray  # ties dropped
    tie_high: np.ndarray | None = None  # the ties' upper bounding draws (``tie`` then its lower ones), if bounded


PAIRED, STICK = "paired", "stick"
RULES = (PAIRED, STICK)  # the default first; STICK the first rule tried, kept for the record (docs/statistics.md)


def _theta_draws(piles: PairPiles, n_draws: int, rng, v_rng=None):
    """Each pile's completed share of B, drawn exactly as θ draws its piles (B pile as passed, A pile as failed,
    then the tie pile); with the draws and completions behind them."""
    kish = [kish_rows(w) for w in piles.weights]
    sb, _ = piles.pile_shares()
    n = piles.rows().astype(float)
    k_b = [np.nansum(x, axis=1) for x in piles.b]  # labelled rows' B values (a share counts its share)
    pb = [_cd(sb[:, j], kish[j], rng, n_draws, v_rng) for j in (0, 1)]
    done_b, more_b, used = [None] * 3, [None] * 3, [None] * 3
    for j in (0, 1):
        more_b[j], done_b[j], used[j] = _complete(pb[j], k_b[j], n[:, j], piles.totals[:, j], rng)
    pb.append(_cd(sb[:, 2], kish[2], rng, n_draws, v_rng))
    more_b[2], done_b[2], used[2] = _complete(pb[2], k_b[2], n[:, 2], piles.totals[:, 2], rng)
    return done_b, pb, more_b, used


def _class_draws(piles: PairPiles, values, n_draws: int, rng, bound: float | None = None, v_rng=None):
    """Each pile's completed share of one class (or union of classes) whose labelled rows' values are ``values``
    (one (S, n_j) array a pile): its own fiducial draws and finite completion, θ's machinery on "the class or
    not"). ``bound`` 1: every draw from the confidence distribution's lower bounding Beta(k, n − k + 1), 0: from
    its upper Beta(k + 1, n − k) (Clopper–Pearson's two ends); None: the randomised mixture."""
    out = []
    for j, (x, w) in enumerate(zip(values, piles.weights, strict=True)):
        rows = kish_rows(w)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.nansum(np.nan_to_num(x) * w, axis=1) / w.sum(axis=1)
        if bound is None:
            draws = _cd(share, rows, rng, n_draws, v_rng)
        else:
            draws = binomial_cd_draws(np.nan_to_num(share) * rows, rows, np.full(len(rows), bound), n_draws, rng)
        n = np.sum(~np.isnan(x), axis=1).astype(float)
        out.append(_complete(draws, np.nansum(x, axis=1), n, piles.totals[:, j], rng)[1])
    return out


def _paired(lead: np.ndarray, other: np.ndarray) -> np.ndarray:
    """``other``'s draws reordered so that each row's rank follows ``lead``'s: the two comonotone (the coupling
    under which their sum is widest), each keeping its own distribution."""
    ranks = np.argsort(np.argsort(lead, axis=1, kind="stable"), axis=1, kind="stable")
    return np.take_along_axis(np.sort(other, axis=1), ranks, axis=1)


def pairwise_draws(
    piles: PairPiles,
    n_draws: int,
    rng: np.random.Generator,
    rule: str = PAIRED,
    bound_ties: bool = True,
    v_rng: np.random.Generator | None = None,
) -> PairDraws:
    """The corrected shares' and win rates' draws, θ's first (the module's docstring); ``v_rng``: where the
    fiducial randomisation comes from (None: ``rng``; a printed estimate's: :func:`vocab.stats.seeds.randomisation`,
    as θ's)."""
    done_b, pb, more_b, used = _theta_draws(piles, n_draws, rng, v_rng)
    w = piles.judge_shares()
    share_b = _weighted(w, done_b)
    ties = piles.ties[:, None]
    if rule == STICK:
        share_a, share_t = _stick(piles, n_draws, rng, done_b, pb, more_b, used)
        win = win_rate(share_b, share_t)
        return PairDraws(share_a, share_b, share_t, win, win_rate(share_b, share_t, share_a, rule="dropped"))
    if rule != PAIRED:
        raise ValueError(f"unknown rule {rule!r} (known: {', '.join(RULES)})")
    # the items that are not A (B or tie), each pile by its own draws, paired with its B draws rank for rank
    not_a = [np.nan_to_num(b) + np.nan_to_num(t) for b, t in zip(piles.b, piles.tie, strict=True)]
    not_a = [np.where(np.isnan(b), np.nan, x) for b, x in zip(piles.b, not_a, strict=True)]
    done_na = _class_draws(piles, not_a, n_draws, rng, v_rng=v_rng)
    if bound_ties:  # the ties' interval from each pile's two bounding distributions: its low end, its high end
        done_t = _class_draws(piles, piles.tie, n_draws, rng, bound=1.0)
        high = _class_draws(piles, piles.tie, n_draws, rng, v_rng=v_rng)
        tie_high = np.where(ties, _weighted(piles.judge_shares(), high), 0.0)
    else:
        done_t, tie_high = _class_draws(piles, piles.tie, n_draws, rng, v_rng=v_rng), None
    paired = [np.where(ties, _paired(done_b[j], done_na[j]), done_b[j]) for j in range(3)]
    share_a = _weighted(w, [1 - x for x in paired])
    share_t = np.where(ties, _weighted(w, done_t), 0.0)
    # the win rate is the mean of an ordered outcome (A < tie < B): half its share of "not A" plus half its share
    # of B, the two cumulative shares each by its own exact draws, paired
    win = _weighted(w, [(done_b[j] + paired[j]) / 2 for j in range(3)])
    dropped = win_rate(share_b, None, share_a, rule="dropped")
    return PairDraws(share_a, share_b, share_t, win, dropped, tie_high)


def _stick(piles, n_draws, rng, done_b, pb, more_b, used):
    """The first rule tried (:data:`STICK`): each pile's stick broken after B, the ties' share of the rest by its
    fiducial draws (k_T of the n − k_B rows not B), completed among the unlabelled rest; A what is left. It
    under-covers A and the win rate (docs/statistics.md)."""
    kish = [kish_rows(w) for w in piles.weights]
    sb, stie = piles.pile_shares()
    n = piles.rows().astype(float)
    k_t = [np.nansum(x, axis=1) for x in piles.tie]
    done_t = []
    for j in range(3):
        with np.errstate(invalid="ignore", divide="ignore"):
            among = np.where(sb[:, j] < 1, stie[:, j] / (1 - sb[:, j]), 0.0)
        q = _cd(among, kish[j] * (1 - np.nan_to_num(sb[:, j])), rng, n_draws)
        rest = np.where(used[j][:, None], (piles.totals[:, j] - n[:, j])[:, None] - more_b[j], 0).astype(np.int64)
        more_t = rng.binomial(np.maximum(rest, 0), np.clip(q, 0, 1))
        with np.errstate(invalid="ignore", divide="ignore"):
            fin = (k_t[j][:, None] + more_t) / piles.totals[:, j][:, None]
        t = np.where(used[j][:, None], fin, (1 - pb[j]) * q)
        done_t.append(np.where(piles.ties[:, None], t, 0.0))
    w = piles.judge_shares()
    return _weighted(w, [1 - done_b[j] - done_t[j] for j in range(3)]), _weighted(w, done_t)


def _weighted(w, per_pile):
    """Σ_j w_j · x_j in :data:`PILES` order, an empty pile's term 0 (its draws are no estimate)."""
    out = None
    for j, x in enumerate(per_pile):
        term = np.where(w[:, j : j + 1] > 0, w[:, j : j + 1] * x, 0.0)
        out = term if out is None else out + term
    return out


@dataclass(frozen=True)
class Ranged:
    """(S,) estimates with their intervals."""

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray


@dataclass(frozen=True)
class PairIntervals:
    """Per cell: the judge's raw shares, the corrected shares and win rates of B, each with its interval."""

    raw: dict[str, np.ndarray]  # "a", "b", "tie", "win_rate_b", "win_rate_b_dropped"
    a: Ranged
    b: Ranged
    tie: Ranged
    win_rate_b: Ranged  # ties half
    win_rate_b_dropped: Ranged  # ties left out
    draws: PairDraws
    win_draws: np.ndarray  # (S, n_draws) win rate of B (ties half)


def win_rate(b, tie=None, a=None, *, rule: str = "half"):
    """The win rate of B: its wins plus half the ties (``half``), or its wins among the decided items
    (``dropped``: b / (a + b), NaN when nothing is decided)."""
    if rule == "half":
        return np.asarray(b) + np.asarray(tie) / 2
    if rule == "dropped":
        den = np.asarray(a) + np.asarray(b)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, np.asarray(b) / np.where(den > 0, den, 1), np.nan)
    raise ValueError(f"unknown tie rule {rule!r} (known: {', '.join(TIE_RULES)})")


def _ranged(est, draws, alpha, undefined, high=None) -> Ranged:
    """The estimates' intervals from their draws (the high end from ``high``'s draws when given)."""
    lo, hi = holding_rows(est, draws, alpha)
    if high is not None:
        hi = holding_rows(est, high, alpha)[1]
    out = []
    for x in (est, lo, hi):
        x = np.clip(np.asarray(x, dtype=float), 0, 1)
        x[undefined] = np.nan
        out.append(x)
    return Ranged(*out)


def pairwise_intervals(
    piles: PairPiles,
    *,
    n_draws: int = N_DRAWS,
    confidence: float = 0.95,
    rng: np.random.Generator,
    rule: str = PAIRED,
    bound_ties: bool = True,
    v_rng: np.random.Generator | None = None,
) -> PairIntervals:
    """Every cell's corrected shares and win rates of B with their intervals (the module's docstring); ``rule``
    one of :data:`RULES`; ``v_rng`` the randomisation's generator (:func:`pairwise_draws`)."""
    alpha = (1 - confidence) / 2
    d = pairwise_draws(piles, n_draws, rng, rule, bound_ties, v_rng)
    w = piles.judge_shares()
    sb, st = piles.pile_shares()
    est_b = _weighted(w, [sb[:, j : j + 1] for j in range(3)])[:, 0]
    est_t = np.where(piles.ties, _weighted(w, [st[:, j : j + 1] for j in range(3)])[:, 0], 0.0)
    est_a = _weighted(w, [1 - sb[:, j : j + 1] - st[:, j : j + 1] for j in range(3)])[:, 0]
    undefined = ~piles.defined()
    # with two classes the win rates are the share of B itself (θ), not a sum or ratio that could move a bit
    two = ~piles.ties
    win = np.where(two, est_b, win_rate(est_b, est_t))
    win_draws = np.where(two[:, None], d.b, d.win)
    drop = np.where(two, est_b, win_rate(est_b, est_t, est_a, rule="dropped"))
    drop_draws = np.where(two[:, None], d.b, d.dropped)
    raw = {"b": w[:, 0], "a": w[:, 1], "tie": w[:, 2]}
    raw["win_rate_b"] = win_rate(raw["b"], raw["tie"])
    raw["win_rate_b_dropped"] = win_rate(raw["b"], raw["tie"], raw["a"], rule="dropped")
    return PairIntervals(
        raw,
        _ranged(est_a, d.a, alpha, undefined),
        _ranged(est_b, d.b, alpha, undefined),
        _ranged(est_t, d.tie, alpha, undefined, d.tie_high),
        _ranged(win, win_draws, alpha, undefined),
        _ranged(drop, drop_draws, alpha, undefined),
        d,
        win_draws,
    )
