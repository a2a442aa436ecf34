"""What the comparisons' intervals are worth, measured by simulation: the difference of two cells' corrected
rates, the difference of the judge's leniency on them, and the rank sets of K cells.

Each simulated cell is a study of :func:`vocab.coverage.simulate.simulate_studies` (a writer of true rate theta, a
critic of sensitivity q1 and specificity q0, ``attempts`` attempts, ``piles`` rows a pile) drawn from a stream of its
own (the seed and the cell's place); its interval's draws are :func:`vocab.stats.correction_intervals`' — the
report's code and method — and the comparison is :mod:`vocab.stats.differences`', the code `vocab compare` runs.

The truth of a difference is theta_b − theta_a; of a leniency difference (P_b − theta_b) − (P_a − theta_a), with
P = theta·q1 + (1 − theta)(1 − q0) the critic's expected pass rate; of the ranks, each cell's rank among the true
thetas (ties share the best rank). Coverage is counted over the studies where every cell is defined.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vocab import stats
from vocab.coverage.clustered import clustered_piles, population_theta, simulate_clustered
from vocab.coverage.simulate import MAX_DRAWS, check_sizes, simulate_studies, study_piles
from vocab.stats.differences import (
    contrast_interval,
    difference_interval,
    draws_for_family,
    pairs_of,
    rank_sets,
    true_ranks,
)


@dataclass(frozen=True)
class Cell:
    """A simulated cell's truth: the writer's rate and the critic's sensitivity and specificity."""

    theta: float
    q1: float
    q0: float

    @property
    def pass_rate(self) -> float:
        return self.theta * self.q1 + (1 - self.theta) * (1 - self.q0)

    @property
    def leniency(self) -> float:
        return self.pass_rate - self.theta


def _cell_draws(
    cell: Cell,
    *,
    attempts: int,
    piles: int,
    sims: int,
    n_boot: int,
    method: str,
    seed: int,
    place: int,
    population: str = stats.SUPERPOPULATION,
    batch: int = 0,
    extra: int = 0,
):
    """One cell's simulated studies: (theta estimate, theta draws, p, p draws, defined, truth), from its own stream
    (of its place, and of the batch of studies after the first); the truth is the cell's theta, or for the finite
    population each study's own share of good attempts. ``extra``: that many more theta draws of the same studies
    from a stream of their own, after the ``n_boot`` (as :func:`vocab.estimates.compare.family_draws` adds them)."""
    names = (seed, "compare-coverage", place, *([batch] if batch else []))
    rng = stats.stream(*names)
    st = simulate_studies(cell.theta, cell.q1, cell.q0, attempts, piles, sims, rng)
    piles_ = study_piles(st, population)
    r = stats.correction_intervals(method, piles_, n_draws=n_boot, rng=rng)
    draws = r.draws
    if extra:
        more = stats.correction_intervals(method, piles_, n_draws=extra, rng=stats.stream(*names, "ranks"))
        draws = np.concatenate([draws, more.draws], axis=1)
    truth = st.truth if population == stats.FINITE else np.full(sims, cell.theta)
    return r.theta, draws, st.p, r.p_draws, st.defined & np.isfinite(r.theta), truth


@dataclass(frozen=True)
class PairCoverage:
    method: str
    coverage: float  # of theta_b − theta_a
    mean_width: float
    leniency_coverage: float  # of (P_b − theta_b) − (P_a − theta_a)
    leniency_mean_width: float
    resolved: float  # share of studies whose difference interval excludes 0
    sims: int
    defined: int

    def as_dict(self) -> dict:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


def _pair_coverage(method: str, d, lean, truth: float, lean_truth: float, ok: np.ndarray, sims: int) -> PairCoverage:
    """The difference's and the leniency difference's coverage and width over the studies ``ok``."""

    def share(x):
        return float(np.mean(x[ok])) if ok.any() else float("nan")

    return PairCoverage(
        method,
        share((d.low <= truth + 1e-12) & (truth - 1e-12 <= d.high)),
        share(d.high - d.low),
        share((lean.low <= lean_truth + 1e-12) & (lean_truth - 1e-12 <= lean.high)),
        share(lean.high - lean.low),
        share(d.resolved),
        sims,
        int(ok.sum()),
    )


def pair_coverage(
    a: Cell,
    b: Cell,
    *,
    attempts: int,
    piles: int,
    sims: int,
    seed: int,
    n_boot: int = 1000,
    method: str = stats.DEFAULT_INTERVAL,
    confidence: float = 0.95,
) -> PairCoverage:
    """Coverage and mean width of b − a's interval and of its leniency difference's, over ``sims`` studies."""
    check_sizes(sims=sims, n_boot=2 * n_boot, attempts=attempts, piles=piles)
    ta, da, pa, pda, oka, _ = _cell_draws(
        a, attempts=attempts, piles=piles, sims=sims, n_boot=n_boot, method=method, seed=seed, place=0
    )
    tb, db, pb, pdb, okb, _ = _cell_draws(
        b, attempts=attempts, piles=piles, sims=sims, n_boot=n_boot, method=method, seed=seed, place=1
    )
    ok = oka & okb
    d = difference_interval(ta, da, tb, db, confidence)
    lean = difference_interval(pa - ta, pda - da, pb - tb, pdb - db, confidence)
    truth, lean_truth = b.theta - a.theta, b.leniency - a.leniency
    return _pair_coverage(method, d, lean, truth, lean_truth, ok, sims)


@dataclass(frozen=True)
class RankCoverage:
    method: str
    coverage: float  # share of studies whose rank sets hold every true rank at once
    mean_set_size: float  # cells' rank sets, averaged over cells and studies
    sims: int
    defined: int

    def as_dict(self) -> dict:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


def rank_coverage(
    cells: list[Cell],
    *,
    attempts: int,
    piles: int,
    sims: int,
    seed: int,
    n_boot: int = 1000,
    method: str = stats.DEFAULT_INTERVAL,
    confidence: float = 0.95,
    population: str = stats.SUPERPOPULATION,
    chunk: int = 20,
    family: bool = True,
) -> RankCoverage:
    """How often the rank sets of ``cells`` (family-wise ``confidence``) hold every cell's true rank at once: the
    ranks of the cells' thetas (ties share the best rank), or for the finite population (`vocab compare`'s default)
    of each study's own shares. The studies are drawn in batches whose draws fit in memory (each batch from streams of
    its own), and their rank sets computed ``chunk`` studies at a time (20 cells are 190 pairs of draws). ``family``:
    as `vocab compare` ranks, with the draws the family of pairs needs
    (:func:`vocab.stats.differences.draws_for_family`); False: the ``n_boot`` draws alone (before #76)."""
    need = draws_for_family(len(pairs_of(len(cells))), confidence) if family else 0
    extra = max(0, need - n_boot)
    per = max(1, min(sims, MAX_DRAWS // (len(cells) * (n_boot + extra))))  # studies a batch: its draws held at once
    check_sizes(sims=per, n_boot=len(cells) * (n_boot + extra), attempts=attempts, piles=piles)
    held, size, ok = np.zeros(sims, bool), np.zeros(sims), np.zeros(sims, bool)
    for b, at in enumerate(range(0, sims, per)):
        n = min(per, sims - at)
        parts = [
            _cell_draws(
                c,
                attempts=attempts,
                piles=piles,
                sims=n,
                n_boot=n_boot,
                method=method,
                seed=seed,
                place=i,
                population=population,
                batch=b,
                extra=extra,
            )
            for i, c in enumerate(cells)
        ]
        est = np.stack([p[0] for p in parts], axis=1)
        draws = np.stack([p[1] for p in parts], axis=1)
        ok[at : at + n] = np.all(np.stack([p[4] for p in parts], axis=1), axis=1)
        truth = true_ranks(np.stack([p[5] for p in parts], axis=1))
        for c0 in range(0, n, chunk):
            part = slice(c0, c0 + chunk)
            r = rank_sets(est[part], draws[part], confidence)
            held[at + c0 : at + c0 + len(r.low)] = np.all((r.low <= truth[part]) & (truth[part] <= r.high), axis=1)
            size[at + c0 : at + c0 + len(r.low)] = (r.high - r.low + 1).mean(axis=1)
    nan = float("nan")
    return RankCoverage(
        method,
        float(held[ok].mean()) if ok.any() else nan,
        float(size[ok].mean()) if ok.any() else nan,
        sims,
        int(ok.sum()),
    )


def clustered_pair_coverage(
    a: Cell,
    b: Cell,
    *,
    spread: float,
    levels: int = 140,
    max_attempts: int = 3,
    piles: int = 10,
    sims: int,
    seed: int,
    n_boot: int = 1000,
    confidence: float = 0.95,
    population: str = stats.SUPERPOPULATION,
) -> PairCoverage:
    """:func:`pair_coverage` on the study's clustered design (:func:`vocab.coverage.clustered.simulate_clustered`:
    levels of up to ``max_attempts`` retried attempts, each level's true rate drawn with ``spread``): each cell's
    fiducial draws on its clustered piles (p on attempts / the levels' design effect, the failed pile weighted by its
    levels' failed attempts), as the report computes them. The truth is each cell's population rate over attempts
    (:func:`~vocab.coverage.clustered.population_theta`); the leniency truth its expected pass rate minus it, the
    pass rate counted over the same attempts. With ``population`` finite (`vocab compare`'s default) each cell's
    draws are the finite piles' (p known, each pile completed over its attempts) and the truth is each study's own:
    its share of good attempts, and the critic's pass rate over them minus that share."""

    check_sizes(sims=sims, n_boot=2 * n_boot, attempts=levels * max_attempts, piles=piles)
    parts = []
    for place, c in enumerate((a, b)):
        rng = stats.stream(seed, "compare-clustered", place)
        st = simulate_clustered(
            c.theta,
            c.q1,
            c.q0,
            levels=levels,
            max_attempts=max_attempts,
            piles=piles,
            spread=spread,
            sims=sims,
            rng=rng,
        )
        r = stats.correction_intervals(stats.DEFAULT_INTERVAL, clustered_piles(st, population), n_draws=n_boot, rng=rng)
        if population == stats.FINITE:  # each study's own share, and the critic's pass rate over its attempts
            truth, lenient = st.truth, st.p - st.truth
        else:  # the judge's pass rate as a population rate: P = theta·q1 + (1 − theta)(1 − q0) on the attempts
            truth = population_theta(c.theta, c.q1, c.q0, spread, max_attempts)
            lenient = truth * c.q1 + (1 - truth) * (1 - c.q0) - truth
        parts.append((r.theta, r.draws, st.p, r.p_draws, st.defined & np.isfinite(r.theta), truth, lenient))
    (ta, da, pa, pda, oka, truth_a, lean_a), (tb, db, pb, pdb, okb, truth_b, lean_b) = parts
    ok = oka & okb
    d = difference_interval(ta, da, tb, db, confidence)
    lean = difference_interval(pa - ta, pda - da, pb - tb, pdb - db, confidence)
    return _pair_coverage(stats.DEFAULT_INTERVAL, d, lean, truth_b - truth_a, lean_b - lean_a, ok, sims)


@dataclass(frozen=True)
class ContrastCoverage:
    method: str
    population: str
    coverage: float  # of the leniency's difference of differences
    mean_width: float
    shown: float  # share of studies whose interval excludes 0
    sims: int
    defined: int

    def as_dict(self) -> dict:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


def did_coverage(
    cells: tuple[Cell, Cell, Cell, Cell],
    *,
    attempts: int,
    piles: int,
    sims: int,
    seed: int,
    n_boot: int = 1000,
    method: str = stats.DEFAULT_INTERVAL,
    population: str = stats.FINITE,
    confidence: float = 0.95,
) -> ContrastCoverage:
    """Coverage of self-preference's difference of differences (:func:`vocab.estimates.compare.self_preference_did`)
    over ``sims`` studies of four independent cells, in its order: writer A's own critic, A under the other critic,
    B's own, B under the other; the contrast L1 − L2 + L3 − L4 of the judge's leniency L = p − theta. Its truth: the
    cells' expected leniencies for the superpopulation, each study's own (its p minus its share of good attempts)
    for the finite population."""
    check_sizes(sims=sims, n_boot=4 * n_boot, attempts=attempts, piles=piles)
    got = [
        _cell_draws(
            c,
            attempts=attempts,
            piles=piles,
            sims=sims,
            n_boot=n_boot,
            method=method,
            seed=seed,
            place=i,
            population=population,
        )
        for i, c in enumerate(cells)
    ]
    signs = [1, -1, 1, -1]
    est = [p - t for t, _, p, _, _, _ in got]
    draws = [pd_ - d for _, d, _, pd_, _, _ in got]
    d = contrast_interval(est, draws, signs, confidence)
    if population == stats.FINITE:
        truth = sum(s * (p - tr) for s, (_, _, p, _, _, tr) in zip(signs, got, strict=True))
    else:
        truth = np.full(sims, sum(s * c.leniency for s, c in zip(signs, cells, strict=True)))
    ok = np.logical_and.reduce([g[4] for g in got])

    def share(x):
        return float(np.mean(x[ok])) if ok.any() else float("nan")

    held = (d.low <= truth + 1e-12) & (truth - 1e-12 <= d.high)
    return ContrastCoverage(
        method, population, share(held), share(d.high - d.low), share(d.resolved), sims, int(ok.sum())
    )
