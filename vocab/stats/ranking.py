"""Ratings from pairwise judgments: a Bradley–Terry fit (with a bootstrap over groups of games) and online Elo."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class BradleyTerry:
    players: tuple[str, ...]
    strengths: np.ndarray  # log-strengths, mean zero
    iterations: int
    converged: bool  # False: ``max_iter`` was reached before the change fell under ``tol``

    def ratings(self, scale: float = 400.0, base: float = 10.0, center: float = 1000.0) -> dict[str, float]:
        """Strengths on the Elo scale (a 400-point gap = 10:1 odds)."""
        return {p: center + scale * s / np.log(base) for p, s in zip(self.players, self.strengths, strict=True)}


def bradley_terry(pairs: list[tuple[str, str, float]], *, max_iter: int = 10_000, tol: float = 1e-10) -> BradleyTerry:
    """Maximum-likelihood Bradley–Terry fit from (i, j, score of i) with score 1, 0 or 0.5 (a tie counts as
    half a win for each side), by the MM algorithm of Hunter (2004). Players with no games are refused."""
    players = tuple(sorted({p for i, j, _ in pairs for p in (i, j)}))
    k = {p: n for n, p in enumerate(players)}
    m = len(players)
    wins = np.zeros(m)
    games = np.zeros((m, m))
    for i, j, s in pairs:
        if s not in (0, 0.5, 1):
            raise ValueError(f"a score must be 0, 0.5 or 1, got {s}")
        wins[k[i]] += s
        wins[k[j]] += 1 - s
        games[k[i], k[j]] += 1
        games[k[j], k[i]] += 1
    if np.any(wins <= 0) or np.any(wins >= games.sum(axis=1)):
        raise ValueError("every player needs at least some wins and some losses for a finite fit")
    pi = np.ones(m)
    converged = False
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        denom = (games / (pi[:, None] + pi[None, :])).sum(axis=1)
        new = wins / denom
        new /= np.exp(np.log(new).mean())
        converged = bool(np.max(np.abs(np.log(new) - np.log(pi))) < tol)
        pi = new
        if converged:
            break
    return BradleyTerry(players, np.log(pi), it, converged)


@dataclass(frozen=True)
class EloUpdate:
    """One game of sequential Elo: the ratings before it, i's expected and actual score, and i's change (j
    changes by minus it)."""

    i: str
    j: str
    before_i: float
    before_j: float
    expected_i: float
    score_i: float
    delta_i: float


def elo_updates(
    games: list[tuple[str, str, float]], *, k: float = 32.0, scale: float = 400.0, start: float = 1000.0
) -> list[EloUpdate]:
    """Sequential Elo over (i, j, score of i) games in the given order, game by game: every player starts at
    ``start``, the expectation uses the ratings before the game. Order matters."""
    r: dict[str, float] = {}
    out = []
    for i, j, s in games:
        ri, rj = r.setdefault(i, start), r.setdefault(j, start)
        e = 1.0 / (1.0 + 10 ** ((rj - ri) / scale))
        d = k * (s - e)
        out.append(EloUpdate(i, j, ri, rj, e, s, d))
        r[i], r[j] = ri + d, rj - d
    return out


def online_elo(
    games: list[tuple[str, str, float]], *, k: float = 32.0, scale: float = 400.0, start: float = 1000.0
) -> dict[str, float]:
    """The final ratings of :func:`elo_updates`."""
    r: dict[str, float] = {}
    for u in elo_updates(games, k=k, scale=scale, start=start):
        r[u.i], r[u.j] = u.before_i + u.delta_i, u.before_j - u.delta_i
    return r


@dataclass(frozen=True)
class BradleyTerryInterval:
    fit: BradleyTerry | None  # None when the data have no finite maximum-likelihood fit
    low: dict[str, float]  # percentile interval of each rating (Elo scale)
    high: dict[str, float]
    resamples: int
    failed: int  # resamples without a finite fit (a player with only wins or only losses), left out
    reason: str = ""


def bradley_terry_bootstrap(
    games: list[tuple[str, str, float]],
    *,
    groups: list[object] | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> BradleyTerryInterval:
    """The Bradley–Terry fit with percentile intervals from resampling ``groups`` (e.g. the level a game
    was played on, so both orders of a pair travel together; default: each game) with replacement."""
    try:
        fit = bradley_terry(games)
    except ValueError as e:
        return BradleyTerryInterval(None, {}, {}, 0, 0, str(e))
    keys = groups if groups is not None else list(range(len(games)))
    by_group: dict[object, list[tuple[str, str, float]]] = {}
    for g, game in zip(keys, games, strict=True):
        by_group.setdefault(g, []).append(game)
    names = sorted(by_group, key=str)
    rng = np.random.default_rng(seed)  # one estimate's stream: its caller's seed, for this fit alone
    draws: dict[str, list[float]] = {p: [] for p in fit.players}
    failed = 0
    for _ in range(n_resamples):
        pick = rng.integers(0, len(names), size=len(names))
        sample = [game for i in pick for game in by_group[names[i]]]
        try:
            b = bradley_terry(sample)
        except ValueError:
            failed += 1
            continue
        if b.players != fit.players:
            failed += 1
            continue
        for p, v in b.ratings().items():
            draws[p].append(v)
    alpha = (1 - level) / 2
    low = {p: float(np.quantile(v, alpha)) if v else float("nan") for p, v in draws.items()}
    high = {p: float(np.quantile(v, 1 - alpha)) if v else float("nan") for p, v in draws.items()}
    return BradleyTerryInterval(fit, low, high, n_resamples, failed)
