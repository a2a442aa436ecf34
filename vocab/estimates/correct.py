"""The bias-corrected pass rate per rater variant and cell and its interval (the rater-error inversion and the lost
units' bounds: :mod:`vocab.estimates.what_if`; comparisons between cells, ranks and self-preference:
:mod:`vocab.estimates.compare`). The estimators themselves live in :mod:`vocab.stats`."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from vocab import reprs, stats
from vocab.datasets.dataset import JudgeRubric, cells_table
from vocab.datasets.items import cell_label
from vocab.raters.blind import PEOPLE, BlindRaters, blind_raters, pooled_passes
from vocab.raters.loaded import Loaded, load
from vocab.raters.raters import rater_passes
from vocab.sampling.sample import CalibrationError
from vocab.stats.exact import finite_intervals
from vocab.stats.strata import stratified_correction

# --- the correction per rater variant and cell ----------------------------------------------------------

CORRECTION_COLUMNS = [
    "rater",
    "cell",
    "p",
    "a",
    "b",
    "theta",
    "ci_low",
    "ci_high",
    "shift_points",
    "q1",
    "q1_low",
    "q1_high",
    "q0",
    "q0_low",
    "q0_high",
    "flags",
]


def variants(
    ratings: dict[str, pd.DataFrame],
    script: pd.DataFrame | None,
    rubric: JudgeRubric | None = None,
    people: list[str] | None = None,
) -> dict[str, pd.Series]:
    """Every rater as rated, and each non-script rater with checks 2 and 3 from the script (where the
    dataset has a script rater); with two or more ``people`` (persons among ``ratings``), their pooled rater
    :data:`~vocab.raters.raters.PEOPLE` (:func:`~vocab.raters.raters.pooled_passes`) too."""
    out = {}
    for name in sorted(ratings):
        out[name] = rater_passes(ratings[name], rubric=rubric)
        if script is not None and name != "script":
            out[f"{name}+script"] = rater_passes(ratings[name], script)
    if people and len(people) >= 2:
        pooled = {n: ratings[n] for n in people}
        out[PEOPLE] = pooled_passes(pooled, rubric=rubric)
        if script is not None:
            out[f"{PEOPLE}+script"] = pooled_passes(pooled, script)
    return out


def _flags(c, theta_ci, q1_ci, q0_ci) -> str:
    flags = []
    for name, (lo, hi) in (("theta", theta_ci), ("q1", q1_ci), ("q0", q0_ci)):
        if np.isfinite(lo) and np.isfinite(hi) and hi - lo > 0.5:
            flags.append(f"unstable:{name}")
    lo, hi = theta_ci
    if np.isfinite(c.theta) and np.isfinite(lo) and not lo - 1e-12 <= c.theta <= hi + 1e-12:
        flags.append("outside:theta")  # seed 000's bootstrap need not hold it; fiducial and Jeffreys do (stats.holding)
    if c.a == 1:
        flags.append("ceiling:q0")  # a passed pile passed in full forces q0 = 1
    if c.a == 0:
        flags.append("ceiling:q1")  # ... failed in full forces q1 = 0
    if c.b == 0:
        flags.append("ceiling:q1")  # a failed pile failed in full forces q1 = 1
    if c.b == 1:
        flags.append("ceiling:q0")
    return ";".join(dict.fromkeys(flags))


INTERVALS = stats.INTERVALS


def level_counts(attempts: pd.DataFrame, cell: str) -> pd.DataFrame:
    """One row per level of ``cell``: its attempts with a verdict and the critic's passes among them."""
    rows = attempts[attempts.cell == cell]
    return (
        rows.assign(passed=rows.verdict.eq("PASSED"))
        .groupby("level", sort=True)
        .passed.agg(passes="sum", attempts="size")
        .reset_index()
    )


def cell_counts(attempts) -> pd.DataFrame:
    """Per cell, what the correction needs of the judged items (:attr:`vocab.datasets.dataset.Dataset.cells`):
    from a frame of attempts (each with a verdict), a Dataset, or such counts already."""
    if not isinstance(attempts, pd.DataFrame):  # a Dataset
        return attempts.cells
    if "verdict" in attempts.columns:
        c = cells_table(attempts)
        return c.assign(attempts=c.passed + c.failed)
    return attempts


@dataclasses.dataclass(frozen=True)
class _Cell:
    """What the correction of one cell needs besides a rater's verdicts: the critic's pass rate over the cell's
    attempts, the design effect of its levels, and the sample's two piles as the rater rated them."""

    p: float
    attempts: int
    deff: float
    passed_ids: pd.Index
    failed_ids: pd.Index
    failed_weights: np.ndarray
    empty: str | None  # the pile p's weight 0 cancels ("passed" at p = 0, "failed" at p = 1), else None
    failed_levels: np.ndarray | None = None  # each failed row's level (several rows of one: labels in the source)
    # the finite population (vocab.stats.FINITE): each pile's attempts in all; NaN for a placeholder pile (drawn
    # as infinite); both None for the superpopulation
    passed_total: float | None = None
    failed_total: float | None = None
    # a sample drawn by strata within the piles (vocab.sampling.strata): per pile, each stratum's rated ids and its
    # items in all; None for a sample drawn per pile
    strata: tuple[list[tuple[pd.Index, int]], list[tuple[pd.Index, int]]] | None = None


def _population(population: str) -> str:
    if population not in stats.POPULATIONS:
        raise CalibrationError(f"unknown population {population!r} (known: {', '.join(stats.POPULATIONS)})")
    return population


def _cell(
    counts: pd.DataFrame, key: pd.DataFrame, cell: str, rated: pd.Index, population: str = stats.DEFAULT_POPULATION
) -> _Cell | None:
    """The cell's piles restricted to the rows in ``rated`` (a partial rater: the rows it rated); None when
    the correction is undefined (a pile it needs is empty, or the cell has no attempt). ``counts``:
    :func:`cell_counts`. ``population``: one of :data:`vocab.stats.POPULATIONS`; for the finite one each pile's
    attempts in all come from the counts (the critic's passes and failures)."""
    if cell not in counts.index or not counts.attempts[cell]:
        return None
    n = int(counts.attempts[cell])
    p = int(counts.passed[cell]) / n
    k = key[key.cell == cell].sort_values("blind_id")
    if "stratum" in k.columns:
        return _stratified_cell(counts, k, cell, rated, population)
    k = k[k.blind_id.isin(rated)]
    pp, fp = k[k.pile == "passed"], k[k.pile == "failed"]
    # A critic that passed nothing (p = 0) has no passed pile, and needs none: theta = b. Likewise p = 1 and
    # the failed pile. The missing pile gets a placeholder row that p's weight 0 cancels in the estimate; its
    # share's draws still enter the interval through p's draws, which moves no printed digit on the committed
    # cells that have one (tests/unit/test_intervals.py measures it).
    empty = None
    if pp.empty and p == 0 and not fp.empty:
        empty = "passed"
    elif fp.empty and p == 1 and not pp.empty:
        empty = "failed"
    elif pp.empty or fp.empty:
        return None
    totals = (None, None)
    if _population(population) == stats.FINITE:
        totals = (
            float(counts.passed[cell]) if empty != "passed" else np.nan,
            float(counts.failed[cell]) if empty != "failed" else np.nan,
        )
    return _Cell(
        p,
        n,
        float(counts.deff[cell]),
        pd.Index(pp.blind_id),
        pd.Index(fp.blind_id),
        fp.weight.to_numpy(float),
        empty,
        fp["level"].astype(str).to_numpy() if "level" in fp else None,
        *totals,
    )


def _stratified_cell(
    counts: pd.DataFrame, k: pd.DataFrame, cell: str, rated: pd.Index, population: str
) -> _Cell | None:
    """:func:`_cell` of a sample drawn by strata (``k``: the cell's key rows, each with its stratum and the
    stratum's items): None when a stratum holding items has no rated row (its share unknown)."""
    if _population(population) != stats.FINITE:
        raise CalibrationError(
            "a sample drawn by strata is corrected for these items only: --population superpopulation does not take it"
        )
    n = int(counts.attempts[cell])
    piles = []
    for pile in ("passed", "failed"):
        rows = k[k.pile == pile]
        strata = []
        for _, g in rows.groupby("stratum", sort=True):
            ids = pd.Index(g.blind_id[g.blind_id.isin(rated)])
            if ids.empty:
                return None
            strata.append((ids, int(g.stratum_size.iloc[0])))
        piles.append(strata)
    p = int(counts.passed[cell]) / n
    if (p > 0 and not piles[0]) or (p < 1 and not piles[1]):
        return None
    empty = "passed" if not piles[0] else "failed" if not piles[1] else None
    return _Cell(
        p, n, float(counts.deff[cell]), pd.Index([]), pd.Index([]), np.ones(0), empty, strata=(piles[0], piles[1])
    )


def cell_content(c: _Cell, verdicts: pd.Series) -> tuple:
    """What one cell's estimate is a function of, in a canonical order (the key's, by blind id): p and the
    attempts behind it, the design effect, each pile's totals, which pile is a placeholder, and each rated row's
    blind id, verdict and weight (by stratum, with its size, for a sample drawn by strata). The blind ids are the
    sample's, whoever rated it: they keep two cells whose counts agree on streams of their own."""
    head = (c.p, c.attempts, c.deff, np.nan if c.passed_total is None else c.passed_total)
    head += (np.nan if c.failed_total is None else c.failed_total, str(c.empty))
    if c.strata is not None:
        rows = [
            (i, size, *ids, *verdicts.loc[ids].to_numpy(float)) for i, pile in enumerate(c.strata) for ids, size in pile
        ]
        return (*head, *(np.array([str(x) for x in r]) for r in rows))
    ids = (c.passed_ids, c.failed_ids)
    return (*head, *ids, *(verdicts.loc[i].to_numpy(float) for i in ids), c.failed_weights, str(c.failed_levels))


def _estimate(
    c: _Cell,
    verdicts: pd.Series,
    method: str,
    n_draws: int,
    confidence: float,
    rng: np.random.Generator | None = None,
    *,
    seed: int = 0,
    name: str = "correction",
):
    """The corrected rate of one cell from a rater's 0/1 ``verdicts`` (indexed by blind id), with its interval
    by ``method``: the one implementation behind the correction table and the per-check audit. Its draws come
    from a stream of ``seed``, ``name`` (what is drawn), the method and the cell's own data
    (:func:`cell_content`), its randomisation from the data alone (:func:`vocab.stats.randomisation`): the same
    labels give the same interval whatever their rater or cell is called. ``rng``: one generator for both
    instead (a test rebuilding the draws)."""
    content = cell_content(c, verdicts)
    v_rng = None if rng is not None else stats.randomisation(method, *content)
    rng = rng if rng is not None else stats.data_stream(seed, name, method, *content)
    if c.strata is not None:
        if method != "fiducial":
            raise CalibrationError(
                f"a sample drawn by strata is corrected by the fiducial interval only, not {method!r}"
            )
        passed, failed = ([(verdicts.loc[ids].to_numpy(float), size) for ids, size in pile] for pile in c.strata)
        return stratified_correction(c.p, passed, failed, n_draws=n_draws, confidence=confidence, rng=rng)
    x = verdicts.loc[c.passed_ids].to_numpy(float) if c.empty != "passed" else np.zeros(1)
    y = verdicts.loc[c.failed_ids].to_numpy(float) if c.empty != "failed" else np.zeros(1)
    w = c.failed_weights if c.empty != "failed" else np.ones(1)
    if c.empty != "failed" and c.failed_levels is not None and len(set(c.failed_levels)) < len(c.failed_levels):
        # several rows of one level (people labelled more than one of its FAILED items): the level is the unit the
        # failed pile samples, so its rows are one row, their weighted mean verdict with the level's weight
        frame = pd.DataFrame({"level": c.failed_levels, "w": w, "wy": w * y}).groupby("level", sort=True).sum()
        y, w = (frame.wy / frame.w).to_numpy(float), frame.w.to_numpy(float)
    bs = stats.correction_interval(
        method,
        c.p,
        c.attempts,
        x,
        y,
        w,
        deff=c.deff,
        passed_total=c.passed_total,
        failed_total=c.failed_total,
        n_draws=n_draws,
        confidence=confidence,
        rng=rng,
        v_rng=v_rng,
    )
    if v_rng is not None and method == "fiducial" and c.passed_total is not None and np.isfinite(bs.point.theta):
        # the finite population's theta, q1 and q0 have a known lattice distribution: their ends computed
        # exactly, without the draws' Monte-Carlo error (vocab.stats.exact); the draws stay for the differences
        totals, again = (c.passed_total, c.failed_total), stats.randomisation(method, *content)
        pt = bs.point
        exact = finite_intervals(c.p, x, y, w, totals, again, (pt.theta, pt.q1, pt.q0), confidence)
        if exact is not None:
            bs = dataclasses.replace(
                bs, theta_ci=exact["theta"], q1_ci=exact["q1"], q0_ci=exact["q0"], lattices=exact["lattice"]
            )
    if c.empty is not None:  # the placeholder pile's share is no estimate
        share = "a" if c.empty == "passed" else "b"
        bs = dataclasses.replace(bs, point=dataclasses.replace(bs.point, **{share: float("nan")}))
    return bs


def correction_table(
    attempts: pd.DataFrame,
    key: pd.DataFrame,
    passes: dict[str, pd.Series],
    *,
    n_boot: int = stats.N_DRAWS,
    seed: int = 0,
    interval: str = stats.DEFAULT_INTERVAL,
    population: str = stats.DEFAULT_POPULATION,
) -> pd.DataFrame:
    """One row per rater variant and cell: p, a, b, theta with its interval, the shift, q1, q0.

    ``interval``: one of :data:`vocab.stats.INTERVALS` (:func:`vocab.stats.correction_interval`); 08 chose the
    default on the coverage grid. ``population``: what theta is the rate of, one of
    :data:`vocab.stats.POPULATIONS` (finite: the cell's own attempts, p known and each pile the finite set it is).
    Each (variant, cell) draws from its own stream (``seed``, the interval and the cell's own data: :func:`_estimate`),
    so a row does not depend on the other raters or cells, nor on what they are called.
    """
    if interval not in INTERVALS:
        raise CalibrationError(f"unknown interval {interval!r} (known: {', '.join(INTERVALS)})")
    rows = []
    counts = cell_counts(attempts)
    for variant in sorted(passes):
        ok = passes[variant]
        for cell in sorted(key.cell.unique()):
            c = _cell(counts, key, cell, ok.index, population)
            if c is None:
                continue
            bs = _estimate(c, ok, interval, n_boot, 0.95, seed=seed, name="correction")
            pt = bs.point
            empty = c.empty and f"empty:{c.empty} (p = {c.p:g})"
            rows.append(
                {
                    "rater": variant,
                    "cell": cell,
                    "p": c.p,
                    "a": pt.a,
                    "b": pt.b,
                    "theta": pt.theta,
                    "ci_low": bs.theta_ci[0],
                    "ci_high": bs.theta_ci[1],
                    "shift_points": pt.shift_points,
                    "q1": pt.q1,
                    "q1_low": bs.q1_ci[0],
                    "q1_high": bs.q1_ci[1],
                    "q0": pt.q0,
                    "q0_low": bs.q0_ci[0],
                    "q0_high": bs.q0_ci[1],
                    "flags": ";".join(f for f in (_flags(pt, bs.theta_ci, bs.q1_ci, bs.q0_ci), empty) if f),
                }
            )
    return pd.DataFrame(rows, columns=CORRECTION_COLUMNS)


@dataclasses.dataclass
class Corrected:
    """A run's or dataset's correction as the report and the gate read it: the blind raters' ratings, the lead
    rater (people first: vocab.raters.blind.blind_raters), the script's ratings if any, the sample's size and
    the table."""

    data: object  # the Dataset
    ratings: dict[str, pd.DataFrame]
    lead: str
    script: pd.DataFrame | None
    n_rows: int
    table: pd.DataFrame
    raters: BlindRaters | None = None  # kinds, the pooled rater's rows
    key: pd.DataFrame | None = None  # the sample's key, as the table read it
    passes: dict[str, pd.Series] | None = None  # each variant's 0/1 verdicts by blind id, as the table read them
    seed: int = 0
    n_boot: int = stats.N_DRAWS
    population: str = stats.DEFAULT_POPULATION
    loaded: Loaded | None = None  # what the command read (the dataset, the sample, the ratings), handed on

    def _lead_lines(self) -> list[str]:
        t = self.table[self.table.rater == self.lead]
        head = (
            f"corrected rates against {self.lead}'s ratings ({self.n_rows} sampled rows; {self.population} population)"
        )
        rows = [
            f"{cell_label(r.cell)}: {100 * r.theta:.1f} % ({100 * r.ci_low:.1f}–{100 * r.ci_high:.1f} %), "
            f"the judge's own {100 * r.p:.1f} %"
            for r in t.itertuples()
        ]
        over = [self.raters.passed_over] if self.raters is not None and self.raters.passed_over else []
        return [head, *rows, *over, f"raters: {', '.join(sorted(self.ratings))}; every variant in .table"]

    def __repr__(self) -> str:
        return reprs.text(self._lead_lines(), ": .table holds every rater variant")

    def _repr_html_(self) -> str:
        t = self.table[self.table.rater == self.lead]
        shown = pd.DataFrame(
            {
                "cell": [cell_label(x) for x in t.cell],
                "corrected": [
                    f"{100 * a:.1f} % ({100 * b:.1f}–{100 * c:.1f} %)"
                    for a, b, c in zip(t.theta, t.ci_low, t.ci_high, strict=True)
                ],
                "judge": [f"{100 * p:.1f} %" for p in t.p],
            }
        )
        lines = self._lead_lines()
        return reprs.summary_html(lines[0], lines[-1:], shown)

    def rater(self, name: str | None, where) -> str:
        """``name`` if it is one of the table's raters or variants, else the lead rater when ``name`` is None;
        CalibrationError naming the known ones otherwise (``where``: the run or dataset, for the message)."""
        name = name or self.lead
        pooled = {PEOPLE, *([f"{PEOPLE}+script"] if self.script is not None else [])}
        pooled = pooled if self.raters is not None and self.raters.pooled else set()
        known = sorted(
            set(self.table.rater)
            | pooled
            | {*self.ratings, *(f"{n}+script" for n in self.ratings if self.script is not None)}
        )
        if name not in known:
            raise CalibrationError(f"{where}: no blind rater {name!r} (known: {', '.join(known)})")
        return name


def corrected(
    run_dir,
    raters: list[str] | None = None,
    *,
    seed: int = 0,
    n_boot: int = stats.N_DRAWS,
    population: str = stats.DEFAULT_POPULATION,
    loaded: Loaded | None = None,
) -> Corrected:
    """:func:`correction_table` of every blind rater's variants on ``run_dir``, as ``vocab report`` prints it.
    ``loaded``: the run or dataset as the command read it (:func:`vocab.raters.loaded.load`; by default read here)."""
    loaded = loaded or load(run_dir)
    data = loaded.data
    b = blind_raters(loaded.dir, raters, read=loaded.ratings)
    script = loaded.ratings("script") if loaded.has("script") else None
    key, passes = loaded.drawn.key, variants(b.ratings, script, data.rubric, b.people)
    table = correction_table(data, key, passes, n_boot=n_boot, seed=seed, population=_population(population))
    return Corrected(
        data,
        b.ratings,
        b.lead,
        script,
        len(loaded.drawn.sheet),
        table,
        b,
        key,
        passes,
        seed,
        n_boot,
        population,
        loaded,
    )


def interval_text(table: pd.DataFrame) -> list[str]:
    """Each row's interval as ``[lo, hi]`` with three decimals, for tables that show intervals side by side."""
    return [f"[{lo:.3f}, {hi:.3f}]" for lo, hi in zip(table.ci_low, table.ci_high, strict=True)]
