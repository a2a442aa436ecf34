"""Comparisons between cells with intervals: which system is better and by how much, how much more the judge
inflates one than another (its leniency), whether a critic favours its own model, and which ranks hold.

Every number is read off the draws behind each cell's own interval in the correction table
(:func:`vocab.estimates.correct.correction_table`): the same piles, the same method, the same random stream of
the seed, the rater and the cell, so a difference and the two rates beside it come from one set of draws. For a
pair (a, b) of independent cells (their attempts and sampled rows are their own, as in a writer x critic run or two
systems under one judge):

- ``difference`` theta_b − theta_a with the percentile interval of the differenced draws
  (:func:`vocab.stats.differences.difference_interval`); *resolved* when the interval excludes 0;
- ``raw_difference`` p_b − p_a, the judge's own gap;
- ``leniency_difference`` (p_b − theta_b) − (p_a − theta_a): how many points more the judge inflates b than a,
  with its interval from the (p, theta) draws;
- the judge's sensitivity and specificity differences, q1_b − q1_a and q0_b − q0_a, for a gate on a judge.

Ranks as sets from simultaneous intervals over every pair (:func:`vocab.stats.differences.rank_sets`), and for a
writer x critic design the self-preference per writer: the same-model critic's cell minus each cross-model critic's.

Two judges' cells on the same outputs are compared paired wherever they can be (:mod:`vocab.estimates.paired`: one
person's label serves both judges' rows; ``paired`` true); every other pair as independent.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd

from vocab import reprs, stats
from vocab.datasets.names import PEOPLE
from vocab.estimates.compare_text import lines, pairs_shown
from vocab.estimates.correct import _cell, _estimate, cell_counts
from vocab.estimates.paired import (
    Shared,
    conflicting_label,
    paired_comparison,
    rated_strata,
    same_outputs,
    shared_outputs,
    unrated,
)
from vocab.stats.differences import (
    RESOLVED_TOLERANCE,
    contrast_interval,
    difference_interval,
    draws_for_family,
    pairs_of,
)
from vocab.stats.differences import rank_sets as stats_rank_sets
from vocab.stats.exact import difference_distribution, interval_of, sum_distribution

COMPARISON_COLUMNS = [
    "rater",
    "a",
    "b",
    "theta_a",
    "theta_b",
    "difference",
    "ci_low",
    "ci_high",
    "raw_difference",
    "leniency_difference",
    "leniency_ci_low",
    "leniency_ci_high",
    "q1_difference",
    "q1_ci_low",
    "q1_ci_high",
    "q0_difference",
    "q0_ci_low",
    "q0_ci_high",
    "paired",
    "resolved",
]
RANK_COLUMNS = ["rater", "cell", "theta", "ci_low", "ci_high", "rank_low", "rank_high"]
SELF_PREFERENCE_COLUMNS = [
    "rater",
    "writer",
    "same_critic",
    "cross_critic",
    "raw_gap",
    "difference",
    "ci_low",
    "ci_high",
    "leniency_difference",
    "leniency_ci_low",
    "leniency_ci_high",
    "resolved",
]


@dataclass(frozen=True)
class CellDraws:
    """One cell under one rater: its point estimates and the draws behind their intervals."""

    cell: str
    p: float
    theta: float
    q1: float
    q0: float
    ci: tuple[float, float]
    theta_draws: np.ndarray
    p_draws: np.ndarray
    q1_draws: np.ndarray
    q0_draws: np.ndarray
    lattices: dict | None = None  # theta's, q1's and q0's distributions computed whole, where they are


def cell_draws(
    counts,
    key: pd.DataFrame,
    verdicts: pd.Series,
    *,
    rater: str,
    interval: str = stats.DEFAULT_INTERVAL,
    n_boot: int = stats.N_DRAWS,
    seed: int = 0,
    population: str = stats.DEFAULT_POPULATION,
    stream: str = "correction",
) -> dict[str, CellDraws]:
    """Every cell the rater's ``verdicts`` can correct, with its draws: the correction table's own (the same
    stream of ``seed``, ``interval`` and the cell's own data), so each theta and its interval are the table's;
    ``stream`` another name draws others (:func:`family_draws`' extra draws)."""
    counts = cell_counts(counts)
    out = {}
    for cell in sorted(key.cell.unique()):
        c = _cell(counts, key, cell, verdicts.index, population)
        if c is None:
            continue
        bs = _estimate(c, verdicts, interval, n_boot, 0.95, seed=seed, name=stream)
        pt = bs.point
        out[cell] = CellDraws(
            cell,
            pt.p,
            pt.theta,
            pt.q1,
            pt.q0,
            bs.theta_ci,
            bs.theta_samples,
            bs.p_samples,
            bs.q1_samples,
            bs.q0_samples,
            bs.lattices,
        )
    return out


def family_draws(draws: dict[str, CellDraws], quantities: int, extra, confidence: float = 0.95) -> dict[str, CellDraws]:
    """``draws`` with enough theta draws for simultaneous bands over ``quantities``
    (:func:`~vocab.stats.differences.draws_for_family`): each cell's own draws (its line's), then, where the family
    needs more, ``extra(n)``'s n more (:func:`cell_draws` from a stream of its own), so a band's end never rests on
    the one or two most extreme draws. As they are where the draws suffice (up to 14 cells at 20,000 draws)."""
    have = min((len(d.theta_draws) for d in draws.values()), default=0)
    need = draws_for_family(quantities, confidence)
    if not draws or need <= have:
        return draws
    more = extra(need - have)
    return {
        c: dataclasses.replace(d, theta_draws=np.concatenate([d.theta_draws[:have], more[c].theta_draws]))
        for c, d in draws.items()
    }


def compare_cells(a: CellDraws, b: CellDraws, confidence: float = 0.95) -> dict:
    """b − a: the corrected difference, the raw one, the leniency difference and the q1 and q0 differences, each
    with its interval at ``confidence`` (one row of :data:`COMPARISON_COLUMNS` but the rater)."""
    d = difference_interval([a.theta], a.theta_draws[None], [b.theta], b.theta_draws[None], confidence)
    len_a, len_b = a.p - a.theta, b.p - b.theta
    lean = difference_interval(
        [len_a], (a.p_draws - a.theta_draws)[None], [len_b], (b.p_draws - b.theta_draws)[None], confidence
    )
    q1 = difference_interval([a.q1], a.q1_draws[None], [b.q1], b.q1_draws[None], confidence)
    q0 = difference_interval([a.q0], a.q0_draws[None], [b.q0], b.q0_draws[None], confidence)
    d_ci, lean_ci = (float(d.low[0]), float(d.high[0])), (float(lean.low[0]), float(lean.high[0]))
    qs = {"q1": q1, "q0": q0}
    q_ci = {n: (float(q.low[0]), float(q.high[0])) for n, q in qs.items()}
    if a.lattices is not None and b.lattices is not None and np.isfinite(d.estimate[0]):
        # both cells' distributions are known whole (the finite population's fiducial interval): the differences'
        # ends computed, not drawn (vocab.stats.exact); p is known, so the leniency gap is (p_b − p_a) − the
        # difference
        dist = difference_distribution(a.lattices["theta"], b.lattices["theta"])
        d_ci = interval_of(dist, float(d.estimate[0]), confidence)
        lean_ci = interval_of((b.p - a.p - dist[0], dist[1]), float(lean.estimate[0]), confidence)
        for name, q in qs.items():
            if name in a.lattices and name in b.lattices and np.isfinite(q.estimate[0]):
                both = difference_distribution(a.lattices[name], b.lattices[name])
                q_ci[name] = interval_of(both, float(q.estimate[0]), confidence)
    return {
        "a": a.cell,
        "b": b.cell,
        "theta_a": a.theta,
        "theta_b": b.theta,
        "difference": float(d.estimate[0]),
        "ci_low": d_ci[0],
        "ci_high": d_ci[1],
        "raw_difference": b.p - a.p,
        "leniency_difference": float(lean.estimate[0]),
        "leniency_ci_low": lean_ci[0],
        "leniency_ci_high": lean_ci[1],
        "q1_difference": float(q1.estimate[0]),
        "q1_ci_low": q_ci["q1"][0],
        "q1_ci_high": q_ci["q1"][1],
        "q0_difference": float(q0.estimate[0]),
        "q0_ci_low": q_ci["q0"][0],
        "q0_ci_high": q_ci["q0"][1],
        "paired": False,
        "resolved": bool(d_ci[0] > RESOLVED_TOLERANCE or d_ci[1] < -RESOLVED_TOLERANCE),
    }


def rank_sets(draws: dict[str, CellDraws], confidence: float = 0.95, same=frozenset()) -> pd.DataFrame:
    """Each cell's rank set (1 the highest corrected rate) from simultaneous intervals over every pairwise
    difference at family-wise ``confidence``; without the rater name (:data:`RANK_COLUMNS` but it). ``same``: pairs
    (a, b) of cells on the same outputs, whose rate is one: never ranked apart."""
    cells = sorted(draws)
    if not cells:
        return pd.DataFrame(columns=RANK_COLUMNS[1:])
    est = np.array([[draws[c].theta for c in cells]])
    joint = np.stack([draws[c].theta_draws for c in cells])[None]
    tied = [(cells[i], cells[j]) in same or (cells[j], cells[i]) in same for i, j in pairs_of(len(cells))]
    r = stats_rank_sets(est, joint, confidence, tied)
    rows = [
        {
            "cell": c,
            "theta": draws[c].theta,
            "ci_low": draws[c].ci[0],
            "ci_high": draws[c].ci[1],
            "rank_low": int(r.low[0, i]),
            "rank_high": int(r.high[0, i]),
        }
        for i, c in enumerate(cells)
    ]
    return pd.DataFrame(rows).sort_values(
        ["rank_low", "rank_high", "theta", "cell"], ascending=[True, True, False, True], ignore_index=True
    )


def self_preference_pairs(cells) -> list[tuple[str, str, str]]:
    """A writer x critic design's (writer, same-model cell, cross-model cell) triples: cells named writer__critic
    where a writer is also a critic; empty for any other design."""
    split = {c: tuple(c.split("__", 1)) for c in cells if "__" in c}
    out = []
    for same, (writer, critic) in sorted(split.items()):
        if writer != critic:
            continue
        out += [(writer, same, cross) for cross, (w2, c2) in sorted(split.items()) if w2 == writer and c2 != writer]
    return out


def self_preference_intervals(draws: dict[str, CellDraws], confidence: float = 0.95) -> pd.DataFrame:
    """Per writer of a writer x critic design: same-model critic minus cross-model critic, the corrected gap and
    the leniency gap with their intervals, the raw gap beside them (:data:`SELF_PREFERENCE_COLUMNS` but the
    rater). A positive leniency gap is self-preference measured: the critic inflates its own model more."""
    rows = []
    for writer, same, cross in self_preference_pairs(draws):
        r = compare_cells(draws[cross], draws[same], confidence)
        rows.append(
            {
                "writer": writer,
                "same_critic": same,
                "cross_critic": cross,
                "raw_gap": r["raw_difference"],
                "difference": r["difference"],
                "ci_low": r["ci_low"],
                "ci_high": r["ci_high"],
                "leniency_difference": r["leniency_difference"],
                "leniency_ci_low": r["leniency_ci_low"],
                "leniency_ci_high": r["leniency_ci_high"],
                "resolved": r["resolved"],
            }
        )
    return pd.DataFrame(rows, columns=SELF_PREFERENCE_COLUMNS[1:])


def self_preference_did(draws: dict[str, CellDraws], confidence: float = 0.95) -> dict | None:
    """Self-preference of a two-model writer x critic design as one number: the difference of differences of the
    judge's leniency (p − theta), Σ over the writers of (its own model's critic − the other critic), i.e.
    [L(A, A) − L(A, B)] + [L(B, B) − L(B, A)] for writers A, B (L(writer, critic)). It is 0 when the critics differ in
    leniency alone, whatever the writers, and positive when each critic inflates its own model's writing more than
    the other model's. With its interval from the four cells' draws (computed whole where every cell's distribution
    is, :mod:`vocab.stats.exact`; coverage: :func:`vocab.coverage.differences.did_coverage`); None for any other
    design or where a cell is missing."""
    triples = self_preference_pairs(draws)
    if len(triples) != 2 or len({w for w, _, _ in triples}) != 2:
        return None
    parts = [(draws[same], draws[cross]) for _, same, cross in triples]
    cells = [c for pair in parts for c in pair]
    signs = [1, -1, 1, -1]
    lean = contrast_interval(
        [[c.p - c.theta] for c in cells], [(c.p_draws - c.theta_draws)[None] for c in cells], signs, confidence
    )
    est, ci = float(lean.estimate[0]), (float(lean.low[0]), float(lean.high[0]))
    raw = sum(s * c.p for s, c in zip(signs, cells, strict=True))
    if all(c.lattices is not None for c in cells) and np.isfinite(est):
        # p is known: the leniency contrast is the raw one minus theta's, whose distribution is computed whole
        gaps = [difference_distribution(cross.lattices["theta"], same.lattices["theta"]) for same, cross in parts]
        theta = sum_distribution(*gaps)
        ci = interval_of((raw - theta[0], theta[1]), est, confidence)
    return {
        "writers": [w for w, _, _ in triples],
        "raw": raw,
        "leniency_did": est,
        "ci_low": ci[0],
        "ci_high": ci[1],
        "resolved": bool(ci[0] > RESOLVED_TOLERANCE or ci[1] < -RESOLVED_TOLERANCE),
    }


@dataclass(frozen=True)
class Comparisons:
    """Every comparison of one rater's correction: the pairs, the rank sets and (writer x critic designs) the
    self-preference, each a table; ``interval`` the method of the draws."""

    rater: str
    interval: str
    pairs: pd.DataFrame  # COMPARISON_COLUMNS
    ranks: pd.DataFrame  # RANK_COLUMNS
    self_preference: pd.DataFrame  # SELF_PREFERENCE_COLUMNS
    # two judges on the same outputs whose q1 and q0 differences are undefined: (a, b) -> each stratum (PP, PF, FP,
    # FF) with outputs and no rated output, with its outputs (one rated output of each defines them)
    unrated: dict = dataclasses.field(default_factory=dict)
    tally: tuple[int, float] | None = None  # the rows the rater gave a verdict, and how many of them passed
    left_out: tuple[tuple[str, str], ...] = ()  # (cell, why): cells of the dataset the rater's ratings cannot correct
    passed_over: str = ""  # why the default rater is not the first in line (vocab.raters.blind.BlindRaters)
    self_preference_did: dict | None = None  # :func:`self_preference_did` (a two-model writer x critic design)

    def __repr__(self) -> str:
        return reprs.text(lines(self), ": .pairs, .ranks and .self_preference hold them all")

    def _repr_html_(self) -> str:
        out = lines(self)
        return reprs.summary_html(out[0], out[len(self.pairs) + 1 :], pairs_shown(self.pairs))

    def as_dict(self) -> dict:
        """The JSON object `vocab compare --json` prints (every float as it is, NaN as None)."""

        def records(frame, columns):
            return [
                {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in row.items()}
                for row in frame[columns].to_dict("records")
            ]

        pairs = [c for c in COMPARISON_COLUMNS if c not in ("rater", "theta_a", "theta_b")]
        found = records(self.pairs, pairs)
        for r in found:  # an undefined paired comparison: the strata a rater must label one output of
            r["unrated_strata"] = self.unrated.get((r["a"], r["b"])) or None
        return {
            "rater": self.rater,
            "interval": self.interval,
            "comparisons": found,
            "ranks": records(self.ranks, ["cell", "theta", "rank_low", "rank_high"]),
            "self_preference": records(self.self_preference, SELF_PREFERENCE_COLUMNS[1:]),
            "left_out": [{"cell": cell, "why": why} for cell, why in self.left_out],
        }


def comparisons(
    counts,
    key: pd.DataFrame,
    passes: dict[str, pd.Series],
    *,
    raters: list[str] | None = None,
    pairs: list[tuple[str, str]] | None = None,
    interval: str = stats.DEFAULT_INTERVAL,
    n_boot: int = stats.N_DRAWS,
    seed: int = 0,
    confidence: float = 0.95,
    population: str = stats.DEFAULT_POPULATION,
) -> dict[str, Comparisons]:
    """Per rater variant of ``passes`` (or those in ``raters``): every pair of the cells it corrects (or the
    ``pairs`` given, as (a, b): b − a), its rank sets and self-preference. The draws are the correction table's
    (:func:`cell_draws`), so a difference's two rates are the table's."""
    out = {}
    same = same_outputs(counts, key)
    for rater in sorted(raters or passes):
        draws = cell_draws(
            counts, key, passes[rater], rater=rater, interval=interval, n_boot=n_boot, seed=seed, population=population
        )
        wanted = (
            pairs
            if pairs is not None
            else [(a, b) for a, b in ((sorted(draws)[i], sorted(draws)[j]) for i, j in pairs_of(len(draws)))]
        )
        rows, unrated_by_pair = [], {}
        for a, b in wanted:
            if a not in draws or b not in draws:
                continue
            shared = same.get((a, b)) or (shared_outputs(counts, a, b, key) if (b, a) in same else None)
            row, short = _paired(shared, key, passes[rater], rater, n_boot, seed, confidence, population)
            rows.append({"rater": rater, **(row or compare_cells(draws[a], draws[b], confidence))})
            if short:
                unrated_by_pair[a, b] = short
        ranked = family_draws(
            draws,
            len(pairs_of(len(draws))),
            lambda n, r=rater: cell_draws(
                counts,
                key,
                passes[r],
                rater=r,
                interval=interval,
                n_boot=n,
                seed=seed,
                population=population,
                stream="ranks",
            ),
            confidence,
        )
        ranks = (
            rank_sets(ranked, confidence, set(same)).assign(rater=rater)[RANK_COLUMNS]
            if draws
            else pd.DataFrame(columns=RANK_COLUMNS)
        )
        sp = self_preference_intervals(draws, confidence).assign(rater=rater)[SELF_PREFERENCE_COLUMNS]
        pairs_found = pd.DataFrame(rows, columns=COMPARISON_COLUMNS)
        rated = passes[rater].dropna()
        tally = (len(rated), float(rated.sum()))
        did = self_preference_did(draws, confidence)
        out[rater] = Comparisons(
            rater, interval, pairs_found, ranks, sp, unrated_by_pair, tally, self_preference_did=did
        )
    return out


def _paired(
    shared: Shared | None, key, verdicts, rater, n_boot, seed, confidence, population
) -> tuple[dict | None, dict[str, int]]:
    """Two judges' cells on the same outputs (``shared``), compared paired (:mod:`vocab.estimates.paired`), and the
    strata with outputs and no rated output (then one rate, q1 and q0 not identified and bounded: their ends the
    census's bound, :func:`~vocab.estimates.paired.paired_comparison`); (None, {}) for cells
    that are not paired (``shared`` None), a sample drawn by strata, or the superpopulation (the paired comparison is
    of these outputs)."""
    if shared is None or population != stats.FINITE or "stratum" in key.columns:
        return None, {}  # a sample drawn by strata: its rows are no simple random sample of each pile, as pairing needs
    if rater != PEOPLE and conflicting_label(shared, key, verdicts) is not None:
        return None, {}  # one output labelled both ways by one rater: each cell compared on its own
    short = unrated(shared, rated_strata(shared, key, verdicts))
    row = paired_comparison(shared, key, verdicts, rater=rater, n_boot=n_boot, seed=seed, confidence=confidence)
    return {k: v for k, v in row.items() if k in COMPARISON_COLUMNS}, short


def comparison_tables(found: dict[str, Comparisons]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The pairs, ranks and self-preference of every rater, each one table (rows sorted by rater)."""
    parts = [found[r] for r in sorted(found)]

    def cat(frames, columns):
        frames = [f for f in frames if len(f)]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)

    return (
        cat([c.pairs for c in parts], COMPARISON_COLUMNS),
        cat([c.ranks for c in parts], RANK_COLUMNS),
        cat([c.self_preference for c in parts], SELF_PREFERENCE_COLUMNS),
    )
