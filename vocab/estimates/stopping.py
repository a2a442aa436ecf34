"""When to stop labelling: a confidence sequence for the corrected rate, valid however often it is looked at.

A fixed-sample interval (the report's) holds 95 % of the time for a sample size fixed in advance. A labeller who
looks after every batch and stops once it is narrow enough picks the size from the data, and the interval at that
look no longer holds 95 % of the time. A confidence sequence does: the chance that it *ever* misses the truth, over
all looks, is at most 5 %, so it may be read after every batch and the labelling stopped whenever it is narrow
enough (or the gate's answer settled).

Per pile (the judge's PASSED and FAILED rows of a cell), the share of rows people pass gets the hedged betting
confidence sequence of Waudby-Smith & Ramdas ("Estimating means of bounded random variables by betting", JRSS B
2024; for sampling without replacement, "Confidence sequences for sampling without replacement", NeurIPS 2020):
for each candidate share m, two gamblers bet on the labels in the order they came, one that they exceed m and one
that they fall short; their mean capital K_t(m) = (K⁺_t + K⁻_t) / 2 is a nonnegative martingale with mean 1 if m
is the truth, so by Ville's inequality m is ruled out once K_t(m) ≥ 1/α. The bets are the predictable
plug-in λ_t = √(2 log(2/α) / (σ̂²_{t−1} t log(1 + t))), capped at c/m_t (c = ½), with σ̂² the running variance of
the labels so far (a prior of ¼ at t = 0). For a finite pile of N rows (``population="finite"``, the default) the
candidates are the N + 1 shares k/N and each bet is against the mean of the rows *not yet labelled*,
m_t = (N m − S_{t−1}) / (N − t + 1); a share the labels already contradict is out. A pile labelled whole is known.
For a superpopulation the candidates are a grid of 1,001 shares and m_t = m.

The cell's rate is θ = (N_a a + N_b b) / N: a pair of shares (a, b) is ruled out once the product of the two
piles' capitals reaches 1/α (a test martingale of all the labels, however they interleave), and θ's interval spans
N_a a + N_b b over the pairs left. The order of the labels is the order they were given (:func:`arrival_order`): a
person's is their packets' (a random order fixed before any rating, :func:`vocab.raters.packet.rater_order`, for the
seed each packet was made with, stage by stage after a pilot's extension), or their hand-in's where they were handed
no packet; anyone else's the blind sheet's (random too). The guarantee holds for the labels in the order they
arrived, so they are never re-sorted by another seed. Outside this rule, and said so: rows that weigh unlike (the
study's FAILED pile, drawn a level at a time), pooled people (a tie counts 1/2), and the superpopulation (the judge's
rate p is uncertain there, and the sequence holds it known).

Its coverage under optional stopping (the first of 20 looks that meets a target half-width) is simulated by
:func:`vocab.coverage.stopping.simulate_stopping` beside the fixed-sample interval's under the same stopping
(``benchmarks/bench_stopping.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vocab import stats
from vocab.datasets.errors import CalibrationError
from vocab.raters.blind import PEOPLE
from vocab.raters.packet import shown_order
from vocab.sampling.sample import stage_ids

ALPHA = 0.05
C = 0.5  # the cap on a bet, as a share of the most it may stake without going below 0
GRID = 1001  # candidate shares of a superpopulation's pile, or of a pile of more rows


def check_target(h: float | None) -> None:
    if h is not None and not (isinstance(h, (int, float)) and math.isfinite(h) and 0 < h <= 0.5):
        raise CalibrationError(f"--target-half-width must lie in (0, 0.5], got {h}")


def pile_capital(x, n_pile: int | None, alpha: float = ALPHA) -> tuple[np.ndarray, np.ndarray]:
    """One pile's candidate shares and the gamblers' log capital against each after each of the labels ``x`` (0/1,
    in the order given): ``grid`` (G,) and ``log_k`` (len(x) + 1, G), row 0 before any label; a share the labels
    already contradict (for a finite pile) has capital +inf. ``n_pile``: the pile's rows (finite), or None (a
    superpopulation)."""
    x = np.asarray(x, dtype=float)
    t_all = len(x)
    if n_pile is not None and t_all > n_pile:
        raise CalibrationError(f"{t_all} labels of a pile of {n_pile} rows")
    g = GRID if n_pile is None or n_pile + 1 > GRID else n_pile + 1
    grid = np.linspace(0, 1, g)
    log_k = np.zeros((t_all + 1, g))
    log_kp, log_km = np.zeros(g), np.zeros(g)
    out = np.zeros(g, dtype=bool)
    s, mu, var_sum = 0.0, 0.5, 0.25  # the labels' sum, their running mean and squared deviations, with priors
    for t in range(1, t_all + 1):
        xt = x[t - 1]
        lam = math.sqrt(2 * math.log(2 / alpha) / (var_sum / t * t * math.log(1 + t)))
        m_t = (n_pile * grid - s) / (n_pile - t + 1) if n_pile is not None else grid
        out |= (m_t < -1e-9) | (m_t > 1 + 1e-9)  # the rows left cannot have this mean
        mt = np.clip(m_t, 1e-12, 1 - 1e-12)
        log_kp += np.log1p(np.minimum(lam, C / mt) * (xt - mt))
        log_km += np.log1p(-np.minimum(lam, C / (1 - mt)) * (xt - mt))
        s += xt
        var_sum += (xt - mu) ** 2
        mu = (0.5 + s) / (t + 1)
        if n_pile is not None:  # shares the labels so far rule out outright (to a coarse grid's step)
            slack = 1e-9 + (0.0 if g == n_pile + 1 else n_pile / (g - 1))
            out |= (grid * n_pile < s - slack) | (grid * n_pile > s + (n_pile - t) + slack)
        log_k[t] = np.where(out, np.inf, np.logaddexp(log_kp, log_km) - math.log(2))  # log of (K+ + K-) / 2
    return grid, log_k


def pile_sequence(x, n_pile: int | None, alpha: float = ALPHA) -> tuple[np.ndarray, np.ndarray]:
    """One pile's confidence sequence for its share: the (lower, upper) ends after each label (arrays of len(x) + 1),
    the shares whose capital stays under 1/alpha, widened by the grid's step when the grid is coarser than 1/N."""
    grid, log_k = pile_capital(x, n_pile, alpha)
    pad = 0.0 if n_pile is not None and len(grid) == n_pile + 1 else 1 / (len(grid) - 1)
    alive = log_k < math.log(1 / alpha)
    lo = np.array([max(grid[a].min() - pad, 0) if a.any() else np.nan for a in alive])
    hi = np.array([min(grid[a].max() + pad, 1) if a.any() else np.nan for a in alive])
    return lo, hi


def cell_sequence(x_a, x_b, n_a: int, n_b: int, population: str, alpha: float = ALPHA):
    """The confidence sequence for theta = (N_a a + N_b b) / N: a pair of shares (a, b) is ruled out once the
    product of the two piles' capitals reaches 1/alpha (each pile's capital is a test martingale of its own labels,
    so their product is one of all the labels, whatever their interleaving); theta's ends are the least and most
    N_a a + N_b b over the pairs left. Returns a function of the labels seen so far in each pile (t_a, t_b)."""
    finite = population == stats.FINITE
    piles = []
    for x, n in ((x_a, n_a), (x_b, n_b)):
        if n == 0:  # an empty pile weighs nothing
            piles.append((np.zeros(1), np.zeros((len(x) + 1, 1)), 0.0))
        else:
            grid, log_k = pile_capital(x, n if finite else None, alpha)
            piles.append((grid, log_k, 0.0 if finite and len(grid) == n + 1 else 1 / (len(grid) - 1)))
    wa = n_a / (n_a + n_b)
    theta = wa * piles[0][0][:, None] + (1 - wa) * piles[1][0][None, :]
    pad = wa * piles[0][2] + (1 - wa) * piles[1][2]

    def at(t_a: int, t_b: int) -> tuple[float, float]:
        alive = piles[0][1][t_a][:, None] + piles[1][1][t_b][None, :] < math.log(1 / alpha)
        if not alive.any():  # every pair ruled out (a chance of at most alpha): no interval at this look
            return math.nan, math.nan
        return max(float(theta[alive].min()) - pad, 0.0), min(float(theta[alive].max()) + pad, 1.0)

    return at


@dataclass(frozen=True)
class Stop:
    cell: str
    rater: str
    labels: int
    low: float
    high: float
    target: float
    fixed: tuple[float, float]  # the report's fixed-sample interval, for comparison
    why_none: str = ""
    more: str = ""  # every sampled row rated and still too wide: how to draw more rows

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    @property
    def stop(self) -> bool:
        return not self.why_none and self.half_width <= self.target

    def line(self) -> str:
        system, _, judge = self.cell.partition("__")
        head = f"stopping {system} → {judge} ({self.rater}, {self.labels} labels): "
        if self.why_none:
            return head + self.why_none
        verdict = (
            f"stop: ±{self.half_width:.3f} meets ±{self.target:g}"
            if self.stop
            else f"keep labelling: ±{self.half_width:.3f} is wider than ±{self.target:g}"
        )
        return (
            f"{head}{verdict} (anytime-valid 95 % interval {self.low:.3f}–{self.high:.3f}, valid however often it is "
            f"looked at; the fixed-sample interval {self.fixed[0]:.3f}–{self.fixed[1]:.3f} holds only at a size "
            "fixed in advance)" + (f"; {self.more}" if self.more else "")
        )

    def as_dict(self) -> dict:
        return {
            "cell": self.cell,
            "rater": self.rater,
            "labels": self.labels,
            "ci_low": self.low,
            "ci_high": self.high,
            "half_width": self.half_width,
            "target": self.target,
            "stop": self.stop,
            "fixed_ci": list(self.fixed),
            "why_none": self.why_none or None,
            "more": self.more or None,
        }


def arrival_order(c, rater: str) -> list[str]:
    """The order ``rater``'s labels came in (``c``: :func:`vocab.estimates.correct.corrected`). A person's: the order
    their packets showed them the rows (:func:`vocab.raters.packet.shown_order`: each packet's own seed, never the
    seed this command was given), then any row they rated outside a packet in the order of their hand-in; one handed
    no packet, their hand-in's order (the rows of their ratings file). Anyone else's: the blind sheet's (random),
    stage by stage."""
    stages = stage_ids(c.data.run_dir, c.loaded.drawn if c.loaded is not None else None)
    kinds = c.raters.kinds if c.raters is not None else {}
    if kinds.get(rater) != "person":
        return [b for st in stages for b in st]
    shown = shown_order(c.data.run_dir, rater, stages)
    seen = set(shown)
    handed = [str(b) for b in c.ratings[rater].blind_id] if rater in c.ratings else []
    return shown + [b for b in handed if b not in seen]


def more_rows(c, rater: str, cell: str, labels: int, half_width: float, target: float) -> str:
    """What to say when every sampled row of ``cell`` is rated and the interval is still wider than ``target``: how
    to draw more (a pilot's extension of the sample, then the new rows rated), with a rough budget: the rows a cell
    ``labels`` times (half_width / target)², as if the width fell as 1/√n (the sequence's falls a little slower)."""
    n_items = int(c.data.cells.attempts[cell])
    budget = min(n_items, max(labels + 1, math.ceil(labels * (half_width / target) ** 2)))
    d = c.data.run_dir
    kinds = c.raters.kinds if c.raters is not None else {}
    rate = (
        f"`vocab audit {d} --raters {rater}` (a packet of the new rows)"
        if kinds.get(rater) == "person"
        else f"`vocab audit {d} --llm-raters {rater} --config CONFIG`"
    )
    return (
        f"every sampled row of this cell is rated, so more must be drawn: `vocab sample --run-dir {d} --allocation "
        f"pilot --budget {budget} --rater {rater}` (about {budget} rows a cell, if the width falls as 1/√n; it extends "
        f"a sample whose every row is rated), then {rate}"
    )


def stopping(c, target: float, rater: str | None = None) -> list[Stop]:
    """Per cell ``rater`` corrects (by default the lead rater; ``c``: :func:`vocab.estimates.correct.corrected`),
    the confidence sequence after every label so far and whether it meets ``target``."""

    check_target(target)
    lead = rater or c.lead
    passes = c.passes[lead].dropna()
    base = lead.split("+")[0]  # a variant (ann+script) is rated in its rater's order
    why = ""
    if c.population != stats.FINITE:
        why = (
            "no anytime-valid interval for a superpopulation: the judge's own rate p is uncertain there too, and "
            "the sequence holds it known (run with the finite population, the default)"
        )
    elif "stratum" in c.key.columns:
        why = (
            "no anytime-valid interval for a sample drawn by strata: the sequence reads each pile as drawn whole, "
            "and each stratum was drawn at a rate of its own"
        )
    elif base == PEOPLE or not passes.isin([0.0, 1.0]).all():
        why = (
            "no anytime-valid interval for pooled labels (a tie between people counts 1/2, and each person rated "
            "in an order of their own): name one rater with --rater"
        )
    pos = {} if why else {b: i for i, b in enumerate(arrival_order(c, base))}
    rows = c.table[c.table.rater == lead].set_index("cell")
    unit = "level" if c.data.kind == "run" else "group"  # what a judge's own dataset calls its units
    out = []
    for cell, r in c.data.cells[c.data.cells.attempts > 0].iterrows():
        n_a, n = int(r.passed), int(r.attempts)
        n_b = n - n_a
        k = c.key[(c.key.cell == cell) & c.key.blind_id.isin(passes.index)]
        fixed = (float(rows.ci_low[cell]), float(rows.ci_high[cell])) if cell in rows.index else (math.nan,) * 2
        if why:
            out.append(Stop(cell, lead, len(k), math.nan, math.nan, target, fixed, why))
            continue
        if (k.weight.astype(float) != 1).any():
            out.append(
                Stop(
                    cell,
                    lead,
                    len(k),
                    math.nan,
                    math.nan,
                    target,
                    fixed,
                    f"no anytime-valid interval: this cell's FAILED pile is drawn a {unit} at a time "
                    "(rows that weigh unlike)",
                )
            )
            continue
        seqs = {}
        for pile in ("passed", "failed"):
            kp = k[k.pile == pile]
            ids = sorted(kp.blind_id.astype(str), key=lambda b: pos.get(b, len(pos)))
            seqs[pile] = passes[ids].to_numpy(dtype=float)
        at = cell_sequence(seqs["passed"], seqs["failed"], n_a, n_b, c.population)
        lo, hi = at(len(seqs["passed"]), len(seqs["failed"]))
        spent = len(k) == int((c.key.cell == cell).sum()) and (hi - lo) / 2 > target
        more = more_rows(c, base, cell, len(k), (hi - lo) / 2, target) if spent else ""
        out.append(Stop(cell, lead, len(k), lo, hi, target, fixed, more=more))
    return out
