"""What `vocab compare` and the audit print of a comparison: a line for each difference between two cells, each
paired difference (two judges on the same outputs) and each cell's set of possible ranks (:func:`lines`)."""

from __future__ import annotations

import numpy as np

from vocab.datasets.items import cell_label


def _points(x: float, signed: bool = True) -> str:
    if not np.isfinite(x):
        return "undefined"
    v = 100 * x
    return (f"{v:+.0f}" if signed else f"{v:.0f}").replace("-", "−")  # a minus sign, not a hyphen


def paired_line(r: dict) -> str:
    """Two judges on the same outputs in words: their pass rates' known gap, then sensitivity and specificity."""
    a, b = (x.split("__", 1)[-1] for x in (r["a"], r["b"]))
    system = r["a"].split("__", 1)[0]

    def part(name, key):
        lo, hi = r[f"{key}_ci_low"], r[f"{key}_ci_high"]
        if not np.isfinite(r[f"{key}_difference"]):
            return f"{name} undefined"
        state = "resolved" if lo > 0 or hi < 0 else "not resolved"
        return f"{name} {_points(r[f'{key}_difference'])} points [{_points(lo)}, {_points(hi)}], {state}"

    return (
        f"{b} − {a} on {system}'s same outputs (paired): one rate for both; {b} passes "
        f"{_points(abs(r['raw_difference']), False)} points {'more' if r['raw_difference'] >= 0 else 'fewer'} than "
        f"{a} (known: both judged every output); "
        f"{part('sensitivity', 'q1')}; {part('specificity', 'q0')}"
    )


def comparison_line(r: dict) -> str:
    """One pair in words: ``b − a: +9 points [−6, +24], not resolved; the judge inflates b 15 points more [2, 28]``."""
    if r.get("paired"):
        return paired_line(r)
    a, b = cell_label(r["a"]), cell_label(r["b"])
    if not np.isfinite(r["difference"]):
        return f"{b} − {a}: undefined"
    state = "resolved" if r["resolved"] else "not resolved"
    lean = r["leniency_difference"]
    more = "more" if lean >= 0 else "less"
    lo, hi = _points(r["leniency_ci_low"]), _points(r["leniency_ci_high"])
    return (
        f"{b} − {a}: {_points(r['difference'])} points [{_points(r['ci_low'])}, {_points(r['ci_high'])}], "
        f"{state} (the judge's own gap {_points(r['raw_difference'])}); the judge inflates {b} "
        f"{_points(abs(lean), False)} points {more} than {a} [{lo}, {hi}]"
    )


def rank_line(r) -> str:
    """A cell's rank set in words: ``rank 1–2: system → judge (58 %)``."""
    ranks = f"rank {r.rank_low}" if r.rank_low == r.rank_high else f"rank {r.rank_low}–{r.rank_high}"
    return f"{ranks}: {cell_label(r.cell)} ({100 * r.theta:.0f} %)"


def lines(c) -> list[str]:  # c: vocab.estimates.compare.Comparisons, which shows itself with these lines
    """What `vocab compare` prints: whose ratings, every pair, the rank sets and any self-preference."""
    out = [f"comparisons against {c.rater}'s ratings ({c.interval} intervals, 95 %; ranks family-wise 95 %):"]
    out += [comparison_line(r) for r in c.pairs.to_dict("records")]
    if len(c.ranks) >= 2:
        out.append("ranks: " + "; ".join(rank_line(r) for r in c.ranks.itertuples()))
    if c.left_out:
        out.append(
            "left out (cannot be corrected): " + "; ".join(f"{cell_label(cell)} ({why})" for cell, why in c.left_out)
        )
    for r in c.self_preference.itertuples():
        state = "resolved" if r.resolved else "not resolved"
        out.append(
            f"self-preference of {r.writer}: its own critic minus {cell_label(r.cross_critic)}: "
            f"{_points(r.difference)} points [{_points(r.ci_low)}, {_points(r.ci_high)}], {state}; leniency "
            f"gap {_points(r.leniency_difference)} [{_points(r.leniency_ci_low)}, "
            f"{_points(r.leniency_ci_high)}]; raw gap {_points(r.raw_gap)}"
        )
    return out
