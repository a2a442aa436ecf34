"""Two judges on the same outputs, compared paired (`vocab compare`, `vocab gate --min-q1-difference` and
``--min-q0-difference``): a person's label belongs to the output, so one label serves both judges' rows.

Two cells are paired when they hold one system's outputs judged by two judges: each output (its group and epoch)
is judged once in each cell and shows the rater the same fields in both. Over the outputs both judges judged, the
verdict pairs split them into four strata — both passed (PP), only the first passed (PF), only the second (FP),
neither (FF) — whose sizes are known. The sample was drawn per cell and pile; the rated outputs of a stratum are the
union of the two cells' sampled rows that fell into it, each a simple random sample of the stratum given how many
fell there, so their union is too (it is exchangeable within the stratum). A person who rated one output under both
its blind ids counts once, with the mean of their verdicts.

Each stratum's share of outputs people pass, tau_h, is drawn much as a pile's share is (the fiducial draws of k
rated passes of n — here each draw from either bounding Beta with even odds, see :func:`stratum_draws` — each unrated
output completed by a binomial of the draw: the finite population), from a stream of the seed, the rater and the
two cells. Then, with N_h the stratum's outputs and N their sum::

    theta = sum_h N_h tau_h / N                         (one rate: the outputs are the same)
    q1_a  = (N_PP tau_PP + N_PF tau_PF) / (N theta)     q1_b = (N_PP tau_PP + N_FP tau_FP) / (N theta)
    q0_a  = (N_FP (1 − tau_FP) + N_FF (1 − tau_FF)) / (N (1 − theta))
    q0_b  = (N_PF (1 − tau_PF) + N_FF (1 − tau_FF)) / (N (1 − theta))

and q1_b − q1_a, q0_b − q0_a with the percentile intervals of their draws. The difference of the judges' pass
rates is known (both judged every output): it is their leniency difference, with no sampling error. A stratum with
outputs and no rated one leaves the q1 and q0 differences unidentified, but not unknown: the census of verdicts
bounds them (:func:`vocab.stats.paired_bounds.bounded_differences`, the unrated strata's shares anywhere in [0, 1];
two judges that disagree on few outputs differ little). Still one rate, never the independent comparison, which
would difference one rate with itself. The coverage, the bound's too, is measured in
:func:`vocab.coverage.paired.paired_coverage` (``benchmarks/results/paired.json``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from vocab import stats
from vocab.datasets.items import CELL_JOIN
from vocab.stats.differences import pairs_of
from vocab.stats.intervals import holding_rows
from vocab.stats.paired_bounds import bounded_differences
from vocab.stats.shares import binomial_cd_draws, completed

STRATA = ("PP", "PF", "FP", "FF")


@dataclass(frozen=True)
class Shared:
    """The outputs both cells judged: each stratum's size, and each sampled output's stratum (by group and
    epoch)."""

    a: str
    b: str
    sizes: dict[str, int]
    stratum: dict[tuple[str, str], str]

    @property
    def outputs(self) -> int:
        return sum(self.sizes.values())


def _pairable(counts: pd.DataFrame, a: str, b: str) -> bool:
    """Two cells of one system, each FAILED group holding one item (the failed pile then samples items)."""
    sa, _, ja = a.partition(CELL_JOIN)
    sb, _, jb = b.partition(CELL_JOIN)
    if sa != sb or ja == jb or a not in counts.index or b not in counts.index:
        return False
    return all(int(counts.failed[c]) == int(counts.failed_groups[c]) for c in (a, b))


def shared_outputs(data, a: str, b: str, key: pd.DataFrame) -> Shared | None:
    """The outputs cells ``a`` and ``b`` of ``data`` share, or None when they are not paired (another system, an
    output judged twice in a cell, one shown to the rater otherwise in the other cell, or one that only one of the
    two judges scored: paired cells hold the same scored outputs)."""
    counts = data.cells
    if not _pairable(counts, a, b):
        return None
    sampled = key[key.cell.isin((a, b))]
    wanted = sorted({f"{lv}\x1f{at}" for lv, at in zip(sampled.level.astype(str), sampled.attempt, strict=True)})
    if data.items is not None:
        got = data.items.shared_verdicts(a, b, STRATA, wanted)
        if got is None:
            return None
        sizes, rows = got
    else:
        att = data.attempts
        cols = ["level", "attempt", "verdict", *data.visible]
        x, y = (att[att.cell == c][cols].astype(str) for c in (a, b))
        if x.duplicated(["level", "attempt"]).any() or y.duplicated(["level", "attempt"]).any():
            return None
        m = x.merge(y, on=["level", "attempt"], suffixes=("", "_1"))
        if m.empty or any((m[v] != m[f"{v}_1"]).any() for v in data.visible):
            return None
        pa, pb = m.verdict.eq("PASSED"), m.verdict_1.eq("PASSED")
        sizes = {
            "PP": int((pa & pb).sum()),
            "PF": int((pa & ~pb).sum()),
            "FP": int((~pa & pb).sum()),
            "FF": int((~pa & ~pb).sum()),
        }
        keys = m.level + "\x1f" + m.attempt
        m = m[keys.isin(wanted)]
        rows = list(zip(m.level, m.attempt, m.verdict, m.verdict_1, strict=True))
    if any(sum(sizes.values()) != int(counts.attempts[c]) for c in (a, b)):
        return None  # an output one judge scored and the other did not (or left out): not the same outputs
    stratum = {
        (str(lv), str(at)): ("P" if va == "PASSED" else "F") + ("P" if vb == "PASSED" else "F")
        for lv, at, va, vb in rows
    }
    return Shared(a, b, sizes, stratum)


def same_outputs(data, key: pd.DataFrame) -> dict[tuple[str, str], Shared]:
    """Every pair (a, b), a < b, of the sample's cells that hold the same outputs judged by two judges
    (:func:`~vocab.estimates.paired.shared_outputs`), with what they share; none on a study run's attempts."""
    if isinstance(data, pd.DataFrame):
        return {}
    cells = sorted(key.cell.unique())
    found = {(cells[i], cells[j]): shared_outputs(data, cells[i], cells[j], key) for i, j in pairs_of(len(cells))}
    return {pair: s for pair, s in found.items() if s is not None}


def conflicting_label(shared: Shared, key: pd.DataFrame, verdicts: pd.Series) -> tuple[str, str, float, float] | None:
    """The first output (group, epoch) one rater labelled one way on cell a's row and the other on cell b's: a
    person's label belongs to the output, so two of one output that differ cannot both be taken (their mean would be
    a tie nobody gave); None when there is none."""
    k = key[key.cell.isin((shared.a, shared.b)) & key.blind_id.isin(verdicts.index)]
    out = pd.DataFrame(
        {
            "level": k.level.astype(str).to_numpy(),
            "attempt": k.attempt.astype(str).to_numpy(),
            "cell": k.cell.to_numpy(),
            "v": verdicts.loc[k.blind_id].to_numpy(float),
        }
    )
    spread = out.groupby(["level", "attempt"], sort=True).v.agg(["min", "max"])
    differ = spread[spread["min"] != spread["max"]]
    if differ.empty:
        return None
    level, attempt = differ.index[0]
    rows = out[(out.level == level) & (out.attempt == attempt)].set_index("cell").v
    return level, attempt, float(rows.get(shared.a, math.nan)), float(rows.get(shared.b, math.nan))


def rated_strata(shared: Shared, key: pd.DataFrame, verdicts: pd.Series) -> dict[str, tuple[float, int]]:
    """Per stratum: (the rated passes, the rated outputs), an output rated under both its blind ids counting
    once with the mean of its verdicts."""
    k = key[key.cell.isin((shared.a, shared.b)) & key.blind_id.isin(verdicts.index)]
    out = pd.DataFrame(
        {
            "output": list(zip(k.level.astype(str), k.attempt.astype(str), strict=True)),
            "v": verdicts.loc[k.blind_id].to_numpy(float),
        }
    )
    per = out.groupby("output", sort=True).v.mean()
    got = {s: [0.0, 0] for s in STRATA}
    for output, v in per.items():
        s = shared.stratum.get(output)
        if s is not None:  # an output only one judge judged is outside the paired population
            got[s][0] += float(v)
            got[s][1] += 1
    return {s: (k_, n) for s, (k_, n) in got.items()}


def stratum_draws(k, n, total, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """A stratum's share of passes over its ``total`` outputs, per study ((S,) arrays; (S, n_draws) draws): its
    rated ``k`` of ``n`` known, the rest completed by a binomial of 03's fiducial draw of their rate (all known when
    the stratum is rated whole; 0 for an empty stratum, NaN for one with outputs and no rated output)."""
    k, n, total = (np.asarray(x, dtype=float) for x in (k, n, total))
    # each draw from Beta(k, n − k + 1) or Beta(k + 1, n − k) with even odds: the two bounding Betas of
    # vocab.stats.shares mixed (q1's and q0's differences rise with some strata's shares and fall with others', so
    # their ends cannot be read from one bound each); completed by the one rule (vocab.stats.shares.completed).
    # With one randomisation per stratum (03's rule) the paired differences held at 0.92-0.94 at 10 rows a pile
    # (bench_paired); so they hold.
    rate = binomial_cd_draws(k, n, np.full(len(k), 0.5), n_draws, rng)
    done = completed(k, n, total, rate, rng)
    done = np.where((total == 0)[:, None], 0.0, done)
    return np.where(((total > 0) & (n == 0))[:, None], np.nan, done)


def paired_estimates(sizes: dict, rated: dict, n_draws: int, rng: np.random.Generator):
    """Per study ((S,) arrays per stratum: ``sizes`` N_h, ``rated`` (k_h, n_h)): the point (theta, q1_a, q1_b, q0_a,
    q0_b), each (S,), and their draws, each (S, n_draws); the function the simulator measures."""
    with np.errstate(invalid="ignore", divide="ignore"):
        point = {
            h: np.where(np.asarray(rated[h][1]) > 0, np.asarray(rated[h][0], float) / np.asarray(rated[h][1]), 0.0)
            for h in STRATA
        }
    draws = {h: stratum_draws(*rated[h], sizes[h], n_draws, rng) for h in STRATA}
    n_ = {h: np.asarray(sizes[h], dtype=float) for h in STRATA}
    return _parts(n_, point), _parts({h: v[:, None] for h, v in n_.items()}, draws)


def _parts(sizes, tau):
    n = sum(sizes[h] for h in STRATA)
    pp, pf, fp, ff = (sizes[s] * tau[s] for s in STRATA)
    bad_pf, bad_fp, bad_ff = (sizes[s] - sizes[s] * tau[s] for s in ("PF", "FP", "FF"))
    theta = (pp + pf + fp + ff) / n
    with np.errstate(invalid="ignore", divide="ignore"):
        q1a, q1b = (pp + pf) / (n * theta), (pp + fp) / (n * theta)
        q0a, q0b = (bad_fp + bad_ff) / (n * (1 - theta)), (bad_pf + bad_ff) / (n * (1 - theta))
    return theta, q1a, q1b, q0a, q0b


def unrated(shared: Shared, rated: dict[str, tuple[float, int]]) -> dict[str, int]:
    """The strata with outputs and no rated output (each with its outputs): what leaves the paired comparison
    undefined, and what a rater must label (one output of each) to define it."""
    return {s: shared.sizes[s] for s in STRATA if shared.sizes[s] and not rated[s][1]}


def _bounded_comparison(shared: Shared, rated, sizes, n_boot: int, rng, alpha: float) -> dict:
    """:func:`paired_comparison`'s row where a stratum is unrated: one rate (not identified either: NaN), the
    known gap, and q1's and q0's differences bounded (their point NaN, their ends the bound's)."""
    tau = {h: stratum_draws(np.array([rated[h][0]]), np.array([rated[h][1]]), sizes[h], n_boot, rng) for h in STRATA}
    bounds = bounded_differences(sizes, tau, alpha)
    row = undefined_comparison(shared)
    for q in ("q1", "q0"):
        row[f"{q}_ci_low"], row[f"{q}_ci_high"] = (float(x[0]) for x in bounds[q])
    return row


def undefined_comparison(shared: Shared) -> dict:
    """b − a of two judges on the same outputs when a stratum with outputs has no rated output: still one rate for
    both (never a difference of two), their pass rates' gap known, and q1 and q0 differences undefined (NaN) — not
    the independent comparison, which would call the difference of one rate with itself resolved."""
    n = shared.outputs
    gap = (shared.sizes["FP"] - shared.sizes["PF"]) / n  # p_b − p_a: both judged every output
    nan = float("nan")
    return {
        "a": shared.a,
        "b": shared.b,
        "theta_a": nan,
        "theta_b": nan,
        "difference": 0.0,  # the same outputs have one rate
        "ci_low": 0.0,
        "ci_high": 0.0,
        "raw_difference": gap,
        "leniency_difference": gap,
        "leniency_ci_low": gap,
        "leniency_ci_high": gap,
        "q1_difference": nan,
        "q1_ci_low": nan,
        "q1_ci_high": nan,
        "q0_difference": nan,
        "q0_ci_low": nan,
        "q0_ci_high": nan,
        "paired": True,
        "resolved": False,
        "outputs": n,
    }


def paired_comparison(
    shared: Shared,
    key: pd.DataFrame,
    verdicts: pd.Series,
    *,
    rater: str,
    n_boot: int = stats.N_DRAWS,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict | None:
    """b − a of two judges on the same outputs (a row of :data:`vocab.estimates.compare.COMPARISON_COLUMNS` but the
    rater, ``paired`` true). Where a stratum with outputs has no rated output, q1's and q0's differences are not
    identified (NaN) and their ends are the bound the census of verdicts gives
    (:func:`vocab.stats.paired_bounds.bounded_differences`: the unrated strata's shares anywhere in [0, 1])."""
    rated = rated_strata(shared, key, verdicts)
    # from the seed and the pair's own data (each stratum's outputs and rated rows), never the judges' or rater's names
    rng = stats.data_stream(seed, "paired", *([shared.sizes[h], *rated[h][:2]] for h in STRATA))
    sizes = {h: np.array([shared.sizes[h]]) for h in STRATA}
    if unrated(shared, rated):
        return _bounded_comparison(shared, rated, sizes, n_boot, rng, (1 - confidence) / 2)
    est, dr = paired_estimates(
        sizes, {h: (np.array([rated[h][0]]), np.array([rated[h][1]])) for h in STRATA}, n_boot, rng
    )
    est, dr = [float(e[0]) for e in est], [d[0] for d in dr]
    alpha = (1 - confidence) / 2

    def interval(e, d):
        lo, hi = holding_rows(np.array([e]), d[None], alpha)
        return float(lo[0]), float(hi[0])

    n = shared.outputs
    pa = (shared.sizes["PP"] + shared.sizes["PF"]) / n
    pb = (shared.sizes["PP"] + shared.sizes["FP"]) / n
    q1, q0 = est[2] - est[1], est[4] - est[3]
    q1_ci, q0_ci = interval(q1, dr[2] - dr[1]), interval(q0, dr[4] - dr[3])
    # an undefined difference (no good output, or no bad one, among them) has no interval either
    q1_ci, q0_ci = ((np.nan, np.nan) if not np.isfinite(d) else ci for d, ci in ((q1, q1_ci), (q0, q0_ci)))
    return {
        "a": shared.a,
        "b": shared.b,
        "theta_a": float(est[0]),
        "theta_b": float(est[0]),
        "difference": 0.0,  # the same outputs have one rate
        "ci_low": 0.0,
        "ci_high": 0.0,
        "raw_difference": pb - pa,
        "leniency_difference": pb - pa,  # (p_b − theta) − (p_a − theta), known: both judged every output
        "leniency_ci_low": pb - pa,
        "leniency_ci_high": pb - pa,
        "q1_difference": float(q1),
        "q1_ci_low": q1_ci[0],
        "q1_ci_high": q1_ci[1],
        "q0_difference": float(q0),
        "q0_ci_low": q0_ci[0],
        "q0_ci_high": q0_ci[1],
        "paired": True,
        "resolved": False,
        "outputs": n,
    }
