"""What `vocab compare` and the audit print of a comparison: a line for each difference between two cells, each
paired difference (two judges on the same outputs) and each cell's set of possible ranks (:func:`lines`), and the
pairs as a notebook shows them (:func:`pairs_shown`)."""

from __future__ import annotations

import numpy as np

from vocab.datasets.items import cell_label
from vocab.stats.differences import RESOLVED_TOLERANCE


def degenerate_text(rater: str, rows: int, passed: float, person: bool = False) -> str:
    """One line naming a rater who gave every row they rated one verdict (``rows`` rated, ``passed`` of them passed):
    every rate corrected by them is then 0 (or 100 %) by construction, not a finding; "" for any other rater."""
    its = "their" if person else "its"
    if not rows or 0 < passed < rows:
        return ""
    if passed == 0:
        return (
            f"{rater} passed none of {its} {rows} rows: {its} rates are 0 by construction, every difference between "
            "cells +0 and every leniency the judge's own pass rate — not findings: read another rater's"
        )
    return (
        f"{rater} passed every one of {its} {rows} rows: {its} rates are 100 % by construction and every difference "
        "between cells +0 — not findings: read another rater's"
    )


def _points(x: float, signed: bool = True) -> str:
    if not np.isfinite(x):
        return "undefined"
    v = 100 * x
    return (f"{v:+.0f}" if signed else f"{v:.0f}").replace("-", "−")  # a minus sign, not a hyphen


def unrated_text(a: str, b: str, unrated: dict[str, int], rater: str, r: dict | None = None) -> str:
    """Why two judges' paired q1 and q0 differences are not identified, the bound the census of their verdicts gives
    them (``r``: the comparison's row, its q1 and q0 ends the bound's), and what labels narrow them: ``unrated`` the
    strata (PP, PF, FP, FF) with outputs and none rated, each with its outputs."""
    verb = {"P": "passed", "F": "failed"}
    parts = [f"the {n} outputs {verb[s[0]]} by {a} and {verb[s[1]]} by {b}" for s, n in unrated.items()]
    why = f"{rater} rated none of {' nor of '.join(parts)} (a stratum of the outputs the pairing weighs by its size)"
    each = "each" if len(parts) > 1 else "it"
    if r is not None and all(np.isfinite(r[f"{q}_ci_{e}"]) for q in ("q1", "q0") for e in ("low", "high")):
        bound = "; ".join(
            f"{name} between {_points(r[f'{q}_ci_low'])} and {_points(r[f'{q}_ci_high'])} points"
            for name, q in (("sensitivity", "q1"), ("specificity", "q0"))
        )
        return (
            f"{bound} (95 %, bounded: {why}, so only the judges' disagreements bound it); rate one output of {each} "
            "to estimate them"
        )
    return (
        f"sensitivity and specificity undefined: {why}; rate one output of {each} to define them (the independent "
        "comparison would difference one rate with itself)"
    )


def unrated_sentence(r: dict, unrated: dict[str, int], rater: str) -> str:
    """:func:`unrated_text` of a comparison's row ``r`` as a sentence of its own (capitalised)."""
    text = unrated_text(r["a"].split("__", 1)[-1], r["b"].split("__", 1)[-1], unrated, rater, r)
    return text[:1].upper() + text[1:]


def paired_line(r: dict, unrated: dict[str, int] | None = None, rater: str = "") -> str:
    """Two judges on the same outputs in words: their pass rates' known gap, then sensitivity and specificity (or,
    with ``unrated`` strata, their bound and why it is one: :func:`unrated_text`)."""
    a, b = (x.split("__", 1)[-1] for x in (r["a"], r["b"]))
    system = r["a"].split("__", 1)[0]

    def part(name, key):
        lo, hi = r[f"{key}_ci_low"], r[f"{key}_ci_high"]
        if not np.isfinite(r[f"{key}_difference"]):
            return f"{name} undefined"
        state = "resolved" if lo > RESOLVED_TOLERANCE or hi < -RESOLVED_TOLERANCE else "not resolved"
        return f"{name} {_points(r[f'{key}_difference'])} points [{_points(lo)}, {_points(hi)}], {state}"

    qs = (
        unrated_text(a, b, unrated, rater, r)
        if unrated
        else f"{part('sensitivity', 'q1')}; {part('specificity', 'q0')}"
    )
    return (
        f"{b} − {a} on {system}'s same outputs (paired): one rate for both; {b} passes "
        f"{_points(abs(r['raw_difference']), False)} points {'more' if r['raw_difference'] >= 0 else 'fewer'} than "
        f"{a} (known: both judged every output); {qs}"
    )


def comparison_line(r: dict, unrated: dict[str, int] | None = None, rater: str = "") -> str:
    """One pair in words: ``b − a: +9 points [−6, +24], not resolved; the judge inflates b 15 points more [2, 28]``
    (two judges on the same outputs: :func:`paired_line`)."""
    if r.get("paired"):
        return paired_line(r, unrated, rater)
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


def pairs_shown(pairs):
    """The pairs as a notebook shows them (``Comparisons._repr_html_``): each pair in words, its difference in points
    with its interval, and whether it is resolved (``pairs``: :data:`vocab.estimates.compare.COMPARISON_COLUMNS`)."""
    return pairs.assign(
        pair=[f"{cell_label(b)} − {cell_label(a)}" for a, b in zip(pairs.a, pairs.b, strict=True)],
        difference=[
            f"{100 * d:+.1f} ({100 * lo:+.1f}, {100 * hi:+.1f}) pts"
            for d, lo, hi in zip(pairs.difference, pairs.ci_low, pairs.ci_high, strict=True)
        ],
    )[["pair", "difference", "resolved"]]


def lines(c) -> list[str]:  # c: vocab.estimates.compare.Comparisons, which shows itself with these lines
    """What `vocab compare` prints: whose ratings, every pair, the rank sets and any self-preference."""
    out = [f"comparisons against {c.rater}'s ratings ({c.interval} intervals, 95 %; ranks family-wise 95 %):"]
    flag = degenerate_text(c.rater, *c.tally) if c.tally else ""
    out += [flag] if flag else []
    out += [c.passed_over] if c.passed_over else []
    out += [comparison_line(r, c.unrated.get((r["a"], r["b"])), c.rater) for r in c.pairs.to_dict("records")]
    # judges on the same outputs are one rate: where every pair is such, there is nothing to rank
    if len(c.ranks) >= 2 and not (len(c.pairs) and c.pairs.paired.astype(bool).all()):
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
    if c.self_preference_did is not None:
        out.append(did_line(c.self_preference_did))
    return out


def did_line(d: dict) -> str:
    """Self-preference as one number: the difference of differences of the judge's leniency (each writer's own
    critic minus the other critic, summed over the writers), with its interval; "not shown" where it holds 0."""
    a, b = d["writers"]
    state = (
        "shown: each critic inflates its own model's writing more than the other's"
        if d["ci_low"] > RESOLVED_TOLERANCE
        else "shown the other way: each critic inflates the other model's writing more"
        if d["ci_high"] < -RESOLVED_TOLERANCE
        else "not shown (the interval holds 0)"
    )
    return (
        f"self-preference (difference of differences of leniency: {a}'s gap plus {b}'s): "
        f"{_points(d['leniency_did'])} points [{_points(d['ci_low'])}, {_points(d['ci_high'])}], {state}; raw "
        f"{_points(d['raw'])}"
    )
