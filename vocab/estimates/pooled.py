"""Judges on the same outputs share one corrected rate (issue #76 items 3 and 7): the share of those outputs that
are good is one number, whichever judge's verdicts drew the sample, so it is printed once, from every labelled row
of those outputs.

Each judge's piles were drawn on its own verdicts (a simple random sample of the outputs it passed, and of those it
failed). Pooled, the labelled outputs are no simple random sample of either judge's pile: a row drawn from judge B's
PASSED pile is more likely among the outputs B passed, whatever A said. They are one within a *pattern*: the outputs
to which every judge gave the same verdicts as each other (A passed, B failed, ... ). Every judge's sample restricted to
a pattern is a simple random sample of it (the pattern lies inside one pile of each judge), so their union is
exchangeable within the pattern, and given how many fell there it is a simple random sample of it (post-stratified).
Then, with N_h a pattern's outputs (known: every judge judged every output) and tau_h its share of good ones::

    theta = sum_h N_h tau_h / N

each tau_h drawn as a paired stratum's is (:func:`vocab.estimates.paired.stratum_draws`: its rated outputs known,
the rest completed by a binomial of the fiducial draw). A pattern with outputs and no labelled output leaves theta
undefined; then the judges' piles are pooled only over the largest set of judges, taken in order, whose patterns
are all labelled (a row drawn from a judge left out is not random within those patterns, so it is left out too);
one judge alone is its own corrected rate. Coverage: :func:`vocab.coverage.pooled.pooled_coverage`
(``benchmarks/results/pooled.json``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from vocab import stats
from vocab.estimates.paired import same_outputs, stratum_draws
from vocab.stats.intervals import holding_rows


@dataclass(frozen=True)
class Pooled:
    """One rate for judges on the same outputs."""

    cells: tuple[str, ...]  # the judges' cells (one system's outputs)
    used: tuple[str, ...]  # the cells whose piles' labelled rows the rate pools
    outputs: int
    labelled: int  # labelled outputs pooled
    theta: float
    ci_low: float
    ci_high: float


def groups(data, key: pd.DataFrame) -> list[tuple[str, ...]]:
    """The sets of two or more cells in which every two cells hold the same outputs (one system, several judges),
    each sorted; a cell in no such set is in none."""
    pairs = set(same_outputs(data, key))
    cells = sorted({c for p in pairs for c in p})
    out, seen = [], set()
    for c in cells:
        if c in seen:
            continue
        group = [c, *(d for d in cells if d != c and (min(c, d), max(c, d)) in pairs)]
        if all((min(x, y), max(x, y)) in pairs for i, x in enumerate(group) for y in group[i + 1 :]):
            out.append(tuple(sorted(group)))
            seen.update(group)
    return out


def patterns(data, cells: tuple[str, ...]) -> pd.Series:
    """Each output's verdicts by the judges of ``cells`` in their order ('P' or 'F' each), indexed by (level,
    attempt) as text; outputs some judge did not score are left out."""
    if data.items is not None:
        rows = data.items.verdict_patterns(cells)
        frame = pd.DataFrame(rows, columns=["level", "attempt", "pattern", "n"])
    else:
        att = data.attempts[data.attempts.cell.isin(cells) & data.attempts.verdict.ne("UNSCORED")]
        att = att.assign(mark=np.where(att.verdict.eq("PASSED"), "P", "F")).sort_values("cell")
        frame = att.groupby([att.level.astype(str), att.attempt.astype(str)], sort=True).mark.agg(["sum", "size"])
        frame = frame.reset_index().rename(columns={"sum": "pattern", "size": "n"})
    frame = frame[frame.n == len(cells)]
    return pd.Series(
        frame.pattern.to_numpy(), index=pd.MultiIndex.from_arrays([frame.level.astype(str), frame.attempt.astype(str)])
    )


def _labelled(key: pd.DataFrame, verdicts: pd.Series, cells, index: pd.MultiIndex):
    """Over the outputs ``index``: which judge's piles drew each labelled output ((N, judges) booleans), and each
    output's mean verdict (NaN: none; one person's label belongs to the output)."""
    sampled = np.zeros((len(index), len(cells)), dtype=bool)
    k = key[key.cell.isin(cells) & key.blind_id.isin(verdicts.index)]
    where = pd.MultiIndex.from_arrays([k.level.astype(str), k.attempt.astype(str)])
    pos = index.get_indexer(where)
    keep = pos >= 0
    col = pd.Index(cells).get_indexer(k.cell)
    sampled[pos[keep], col[keep]] = True
    v = pd.Series(verdicts.loc[k.blind_id].to_numpy(float)[keep], index=pos[keep]).groupby(level=0).mean()
    values = np.full(len(index), np.nan)
    values[v.index.to_numpy()] = v.to_numpy()
    return sampled, values


def pooled_rate(
    data,
    key: pd.DataFrame,
    verdicts: pd.Series,
    cells: tuple[str, ...],
    *,
    n_draws: int = stats.N_DRAWS,
    seed: int = 0,
    confidence: float = 0.95,
) -> Pooled:
    """The one rate of the outputs the judges of ``cells`` all judged, from the labelled rows of the largest set of
    their piles (the judges in order) whose patterns are all labelled (module docstring)."""
    full = patterns(data, cells)
    sampled, values = _labelled(key, verdicts, cells, full.index)
    marks = np.array([list(p) for p in full.to_numpy()]).reshape(len(full), len(cells))
    r = pool(marks, sampled, values, n_draws, seed, confidence)
    return Pooled(tuple(cells), tuple(cells[i] for i in r[0]), *r[1:])


def pool(marks: np.ndarray, sampled: np.ndarray, values: np.ndarray, n_draws: int, seed: int, confidence: float):
    """The pooled rate from arrays, the function the simulator measures: ``marks`` (N, judges) each output's verdict
    by each judge ('P'/'F'), ``sampled`` (N, judges) whether that judge's pile drew it, ``values`` (N,) its label
    (NaN: none). Returns (the judges used, outputs, labelled outputs pooled, theta, low, high). The judges pooled
    are chosen by the data alone (:func:`_choose`), never by their names or order; the strata enter the interval in
    a canonical order (by size, labelled passes and labelled outputs)."""
    used = _choose(marks, sampled, values)
    sizes, k, n, ok = _strata(marks, sampled, values, used)
    if not ok:
        nan = float("nan")
        return used, int(sizes.sum()), int(n.sum()), nan, nan, nan
    order = np.lexsort((n, k, sizes))
    sizes, k, n = sizes[order], k[order], n[order]
    rng = stats.data_stream(seed, "pooled", sizes, k, n)
    return used, int(sizes.sum()), int(n.sum()), *pooled_interval(sizes, k, n, n_draws, rng, confidence)


MAX_SEARCHED = 12  # judges up to which every set of them is tried (2^12 sets); past it, one greedy pass


def _choose(marks, sampled, values) -> list[int]:
    """The judges whose piles are pooled: the largest set whose patterns all hold a labelled output, then the one
    pooling the most labelled outputs, then the one whose strata (sizes, passes, labelled) sort first — a choice of
    the data alone, so renaming or reordering the judges changes nothing. One judge alone when no set qualifies
    (its own patterns: its two piles). Past :data:`MAX_SEARCHED` judges, one greedy pass over the judges in the
    order of their labelled outputs (most first), ties by their verdicts."""
    m = marks.shape[1]
    if m == 0:
        return []

    def score(judges):
        sizes, k, n, ok = _strata(marks, sampled, values, list(judges))
        order = np.lexsort((n, k, sizes))
        return ok, len(judges), float(n.sum()), tuple(-x for x in np.c_[sizes, k, n][order].ravel())

    if m <= MAX_SEARCHED:
        best = None
        for size in range(m, 0, -1):
            for judges in itertools.combinations(range(m), size):
                sc = score(judges)
                if sc[0] and (best is None or sc[1:] > best[0][1:]):
                    best = (sc, judges)
            if best is not None:
                return sorted(best[1])
        return [
            min(range(m), key=lambda j: (-float((sampled[:, j] & np.isfinite(values)).sum()), marks[:, j].tobytes()))
        ]
    order = sorted(range(m), key=lambda j: (-float((sampled[:, j] & np.isfinite(values)).sum()), marks[:, j].tobytes()))
    used = [order[0]]
    for j in order[1:]:
        if _strata(marks, sampled, values, [*used, j])[3]:
            used = [*used, j]
    return sorted(used)


def _strata(marks, sampled, values, judges: list[int]):
    """Per pattern of the ``judges``' verdicts: its outputs, the labelled passes and outputs among those the
    ``judges``' piles drew, and whether every pattern holds a labelled output."""
    pattern = np.array(["".join(r) for r in marks[:, judges]]) if len(marks) else np.array([], dtype=str)
    names, which = np.unique(pattern, return_inverse=True)
    drawn = sampled[:, judges].any(axis=1) & np.isfinite(values)
    sizes = np.bincount(which, minlength=len(names)).astype(float)
    n = np.bincount(which[drawn], minlength=len(names)).astype(float)
    k = np.bincount(which[drawn], weights=values[drawn], minlength=len(names))
    return sizes, k, n, bool(len(names)) and bool((n > 0).all())


def pooled_interval(sizes, k, n, n_draws: int, rng: np.random.Generator, confidence: float = 0.95):
    """(theta, low, high) of strata of ``sizes`` outputs with ``k`` good of ``n`` labelled each (arrays over the
    strata, every stratum labelled)."""
    sizes, k, n = (np.asarray(x, dtype=float) for x in (sizes, k, n))
    draws = stratum_draws(k, n, sizes, n_draws, rng)  # (strata, draws)
    theta_draws = (sizes[:, None] * draws).sum(axis=0) / sizes.sum()
    est = float((sizes * k / n).sum() / sizes.sum())
    lo, hi = holding_rows([est], theta_draws[None, :], (1 - confidence) / 2)
    return est, float(lo[0]), float(hi[0])


def _num(x: float) -> str:
    """A rate in percent as the report prints it: whole numbers, one decimal under 10 %."""
    v = 100 * x
    return f"{v:.1f}".removesuffix(".0") if 0 < v < 9.95 else f"{v:.0f}"


def _pct(x: float) -> str:
    return f"{_num(x)} %"


def pooled_results(c, rater: str | None = None) -> dict[str, Pooled]:
    """Per cell of a set of judges on the same outputs (:func:`vocab.estimates.pooled.groups`): their one rate
    (:func:`vocab.estimates.pooled.pooled_rate`) against ``rater``'s verdicts (default the lead rater); cells whose
    set the labels cannot pool are left out, and so is every cell under ``--strata`` or the superpopulation (the
    pooled rate is of these outputs, from simple random samples within each pile)."""
    out = {}
    if c.population != stats.FINITE or (c.key is not None and "stratum" in c.key.columns):
        return out
    verdicts = c.passes[rater or c.lead].dropna()
    for cells in groups(c.data, c.key):
        r = pooled_rate(c.data, c.key, verdicts, cells, n_draws=c.n_boot, seed=c.seed)
        if np.isfinite(r.theta):
            out.update({x: r for x in cells})
    return out


def pooled_lines(c) -> dict[str, str]:
    """Per cell of a set of judges on the same outputs: the line of their one rate, pooled from every labelled row
    of those outputs against the lead rater's verdicts (:func:`pooled_results`)."""
    out = {}
    for cell, r in pooled_results(c).items():
        cells = r.cells
        system = cells[0].partition("__")[0]
        judges = [x.partition("__")[2] for x in cells]
        said = (float(c.data.cells.passed[x] / c.data.cells.attempts[x]) for x in cells)
        rates = ", ".join(f"{j} {_pct(v)}" for j, v in zip(judges, said, strict=True))
        pooled_from = "every judge's" if r.used == r.cells else ", ".join(x.partition("__")[2] for x in r.used) + "'s"
        out[cell] = (
            f"{system} judged by {', '.join(judges)} (the same {r.outputs} outputs): one rate for them all, "
            f"{_pct(r.theta)} ({_num(r.ci_low)}–{_pct(r.ci_high)}, 95 %), against {c.lead}'s labels of {r.labelled} "
            f"of those outputs pooled from {pooled_from} piles; the judges say {rates}. They are compared on q1, q0 "
            "and leniency only (vocab compare)."
        )
    return out
