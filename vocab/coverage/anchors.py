"""vocab's corrected rate beside the estimators a practitioner would otherwise use, on the same simulated
populations (``benchmarks/bench_anchors.py`` runs them; 08 shows the result).

Every method gets the same number of human labels, drawn by the design it was made for:

- ``piles``: by the judge's verdict, a passed and a failed pile (seed 000's sample; vocab's ``draw_sample``);
- ``uniform``: a simple random sample of the judged attempts (PPI, PPI++, judgy's labelled test set);
- ``by-class``: a calibration set of items whose true class is known, half true passes and half true fails, apart
  from the judged attempts (Rogan–Gladen with a measured sensitivity and specificity; Lee et al.).

A population is N independent attempts: true pass with probability theta, the judge's verdict PASSED with
probability q1 for a true pass and 1 − q0 for a true fail. The target is theta. Nothing here imports an anchor's
package: the benchmark does, so that vocab does not depend on them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.stats import norm

from vocab import stats
from vocab.sampling.allocation import ALLOCATIONS, allocate, fit

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ALLOCATIONS",
    "DESIGNS",
    "PILOT",
    "Population",
    "allocate",
    "allocated_piles",
    "allocation_table",
    "anchors_table",
    "by_class_calibration",
    "lee_interval",
    "pile_rows",
    "population",
    "uniform_labels",
    "vocab_interval",
]

DESIGNS = {
    "piles": "labels drawn by the judge's verdict, half from each verdict (vocab, seed 000)",
    "uniform": "labels drawn uniformly at random from the judged attempts",
    "by-class": "a separate calibration set of known true class, half true passes, half true fails",
}
PILOT = 10  # the pilot's rows per pile (Lee et al. pilot 10 a side)


@dataclass(frozen=True)
class Population:
    truth: np.ndarray  # (N,) bool: the attempt is truly good
    verdict: np.ndarray  # (N,) bool: the judge passed it


def population(theta: float, q1: float, q0: float, attempts: int, rng: np.random.Generator) -> Population:
    truth = rng.random(attempts) < theta
    u = rng.random(attempts)
    return Population(truth, np.where(truth, u < q1, u >= q0))


def by_class_calibration(q1: float, q0: float, m1: int, m0: int, rng: np.random.Generator):
    """The judge's verdicts on m1 known true passes and m0 known true fails (a separate calibration set)."""
    return rng.random(m1) < q1, rng.random(m0) >= q0


def uniform_labels(pop: Population, budget: int, rng: np.random.Generator) -> np.ndarray:
    """Positions of ``budget`` attempts drawn uniformly without replacement (sorted)."""
    return np.sort(rng.choice(pop.truth.size, size=min(budget, pop.truth.size), replace=False))


def pile_rows(pop: Population, sizes: tuple[int, int], rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the passed pile's and the failed pile's rows (each pile at most as large as its verdicts)."""
    out = []
    for verdict, n in zip((True, False), sizes, strict=True):
        cands = np.flatnonzero(pop.verdict == verdict)
        out.append(np.sort(rng.choice(cands, size=min(n, cands.size), replace=False)))
    return out[0], out[1]


def vocab_interval(
    pop: Population,
    passed: np.ndarray,
    failed: np.ndarray,
    rng,
    n_draws: int = 4000,
    population: str = stats.SUPERPOPULATION,
):
    """vocab's default (03's fiducial interval, :func:`vocab.stats.fiducial_correction`) on the piles' true labels:
    (estimate, low, high), or None where a pile is empty. ``population``: the superpopulation (theta, what this
    module's anchors aim at) or the finite one (the population's own share of true passes: p known, each pile of
    its verdict's attempts in all)."""
    if passed.size == 0 or failed.size == 0:
        return None
    totals = {}
    if population == stats.FINITE:
        totals = {"passed_total": float(pop.verdict.sum()), "failed_total": float((~pop.verdict).sum())}
    c = stats.fiducial_correction(
        float(pop.verdict.mean()),
        pop.verdict.size,
        pop.truth[passed].astype(float),
        pop.truth[failed].astype(float),
        np.ones(failed.size),
        n_draws=n_draws,
        rng=rng,
        **totals,
    )
    return c.point.theta, *c.theta_ci


def lee_interval(p: float, q0: float, q1: float, n: int, m0: int, m1: int, alpha: float = 0.05):
    """Lee, Zeng, Jeong, Sohn and Lee (2025), "How to correctly report LLM-as-a-judge evaluations"
    (arXiv:2511.21140): the Rogan–Gladen estimate (p + q0 − 1)/(q0 + q1 − 1) from the judged pass rate p over n
    test items and the specificity q0 and sensitivity q1 measured on m0 known fails and m1 known passes, with
    their plug-in interval, whose added counts follow Lang and Reiczigel (2014): p gets z²/2 passes of z² added,
    q0 and q1 one of two; a second-order shift of the centre; a delta-method standard error. (estimate, low,
    high), clipped to [0, 1]; None where q0 + q1 ≤ 1 (the correction is undefined). Not on PyPI, so written here
    from the paper's formula; tests/unit/test_anchors.py holds their reference implementation's outputs."""
    z = float(norm.ppf(1 - alpha / 2))
    pt, q0t, q1t = (n * p + z**2 / 2) / (n + z**2), (m0 * q0 + 1) / (m0 + 2), (m1 * q1 + 1) / (m1 + 2)
    nt, m0t, m1t = n + z**2, m0 + 2, m1 + 2
    youden, youden_t = q0 + q1 - 1, q0t + q1t - 1
    if youden <= 0 or youden_t <= 0:
        return None
    est = min(max((p + q0 - 1) / youden, 0.0), 1.0)
    th = (pt + q0t - 1) / youden_t
    shift = 2 * z**2 * (-(1 - th) * q0t * (1 - q0t) / m0t + th * q1t * (1 - q1t) / m1t)
    se = np.sqrt(pt * (1 - pt) / nt + (1 - th) ** 2 * q0t * (1 - q0t) / m0t + th**2 * q1t * (1 - q1t) / m1t)
    se /= youden_t
    clip = lambda x: float(min(max(x, 0.0), 1.0))  # noqa: E731
    return est, clip(th + shift - z * se), clip(th + shift + z * se)


def allocated_piles(pop: Population, budget: int, allocation: str, rng: np.random.Generator):
    """The two piles' positions under ``allocation`` (:func:`vocab.sampling.allocation.allocate` within each pile's
    rows, :func:`~vocab.sampling.allocation.fit`, as `vocab sample` allocates). ``pilot`` draws :data:`PILOT` rows a
    pile first (fewer if the budget is small), rates them (here: their true labels), allocates the whole budget from
    them and draws the rest of each pile from the rows not yet drawn."""
    p = float(pop.verdict.mean())
    room = (int(pop.verdict.sum()), int((~pop.verdict).sum()))
    if allocation != "pilot":
        return pile_rows(pop, fit(allocate(budget, p, allocation), room, allocation), rng)
    first = min(PILOT, budget // 2)
    a, b = pile_rows(pop, (first, first), rng)
    counts = (a.size, int(pop.truth[a].sum()), b.size, int(pop.truth[b].sum()))
    sizes = fit(allocate(budget, p, "pilot", pilot=counts), room, "pilot")
    out = []
    for verdict, drawn, n in zip((True, False), (a, b), sizes, strict=True):
        rest = np.setdiff1d(np.flatnonzero(pop.verdict == verdict), drawn)
        more = rng.choice(rest, size=min(max(n - drawn.size, 0), rest.size), replace=False)
        out.append(np.sort(np.concatenate([drawn, more])))
    return out[0], out[1]


def anchors_table(result: dict) -> pd.DataFrame:
    """``benchmarks/results/anchors.json`` per method: its label design, the points where it answers in at least
    half the studies, how many of those it covers under 0.93, its worst coverage, at how many points it is the
    narrowest method that covers at least 0.93, and its median width over vocab's at the points where both do. An
    interval of width 0 is left out of the last two: ppi_py's at a true rate of 0 (every label 0, so no variance)
    holds the truth only because the truth is exactly 0."""
    import pandas as pd

    rows = pd.DataFrame(result["rows"])
    keys = ["theta", "q1", "q0", "attempts", "budget"]
    rows["answers"] = rows.defined >= rows.sims / 2
    ok = rows[rows.answers & (rows.coverage >= 0.93) & (rows.mean_width > 0)]
    vocab = ok[ok.method == "vocab"].set_index(keys).mean_width
    summary = pd.DataFrame(result["summary"]).T
    theta_ok = ok[ok.get("target", pd.Series("theta", index=ok.index)).fillna("theta") == "theta"]
    narrowest = theta_ok.loc[theta_ok.groupby(keys).mean_width.idxmin()].method.value_counts()
    out = pd.DataFrame(
        {
            "design": pd.Series(result["methods"]),
            "target": pd.Series(result.get("targets", {m: "theta" for m in result["methods"]})),
            "points": summary.points,
            "answers_at": summary.points - summary.mostly_undefined,
            "under_93": summary.under_93,
            "worst_coverage": summary.worst,
            "narrowest_covering": narrowest.reindex(summary.index, fill_value=0),
        }
    )
    ratio = {}
    for m, g in ok.groupby("method"):
        w = g.set_index(keys).mean_width
        both = w.index.intersection(vocab.index)
        ratio[m] = float((w[both] / vocab[both]).median()) if len(both) else float("nan")
    out["median_width_vs_vocab"] = pd.Series(ratio)
    counts = ["points", "answers_at", "under_93", "narrowest_covering"]
    out[counts] = out[counts].astype(int)
    return out.loc[[m for m in result["methods"] if m in out.index]]


def allocation_table(result: dict) -> pd.DataFrame:
    """The allocations side by side (vocab's estimator on verdict piles): per label budget, each allocation's
    mean width over the equal split's at the same points (the mean ratio), its worst coverage, and its points under
    0.93."""
    import pandas as pd

    rows = pd.DataFrame(result["rows"])
    theta = rows.target.fillna("theta") == "theta" if "target" in rows else True  # vocab-finite aims elsewhere
    rows = rows[rows.method.str.startswith("vocab") & theta & (rows.defined >= rows.sims / 2)]
    keys = ["theta", "q1", "q0", "attempts", "budget"]
    equal = rows[rows.method == "vocab"].set_index(keys).mean_width
    out = []
    for (m, budget), g in rows.groupby(["method", "budget"]):
        w = g.set_index(keys).mean_width
        both = w.index.intersection(equal.index)
        out.append(
            {
                "allocation": {"vocab": "equal"}.get(m, m.removeprefix("vocab-")),
                "budget": budget,
                "points": len(g),
                "width_vs_equal": float((w[both] / equal[both]).mean()),
                "worst_coverage": g.coverage.min(),
                "under_93": int((g.coverage < 0.93).sum()),
            }
        )
    return pd.DataFrame(out).set_index(["allocation", "budget"]).sort_index()
