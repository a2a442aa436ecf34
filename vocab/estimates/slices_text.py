"""What `vocab compare --by` and `vocab audit --by` print of a cell's slices (:func:`lines`): each slice's rate with its
marginal and simultaneous intervals and rank (or the labels it still wants), the differences between a cell's slices,
and, within each slice, the pairs of cells (:class:`vocab.estimates.slices.SliceEstimates`, which shows itself with
these lines)."""

from __future__ import annotations

from vocab.datasets.items import cell_label
from vocab.datasets.slicing import natural


def _pct(x: float) -> str:
    return f"{100 * x:.0f}"


def _pts(x: float) -> str:
    return f"{100 * x:+.0f}".replace("-", "−")


def _rank(lo: int, hi: int) -> str:
    return f"{lo}" if lo == hi else f"{lo}–{hi}"


def lines(e) -> list[str]:  # e: vocab.estimates.slices.SliceEstimates, which shows itself with these lines
    """What `vocab compare --by` (and `vocab audit --by`) prints."""
    out = [
        f"slices by {e.column}, against {e.rater}'s ratings ({e.interval} intervals, 95 %; within a cell "
        "simultaneous over its slices):"
    ]
    rates = e.rates.set_index(["cell", "slice"])
    for cell in sorted(set(e.labels.cell)):
        out.append(f"{cell_label(cell)}:")
        for r in e.labels[e.labels.cell == cell].itertuples():
            head = f"  {e.column} = {r.slice}: "
            labelled = f"{r.rated_passed + r.rated_failed} rated rows of {r.items} items"
            if r.status != "ok":
                more = " and ".join(
                    f"{n} more from the {pile} pile"
                    for n, pile in ((r.wanted_passed, "PASSED"), (r.wanted_failed, "FAILED"))
                    if n
                )
                out.append(
                    head + f"too few labels ({labelled}; {more or 'a rated row'} wanted: at least "
                    f"{e.min_labels} a pile, or the whole pile)"
                )
                continue
            t = rates.loc[(cell, r.slice)]
            # a rank among the cell's slices that got a number; a slice alone there has none to be ranked against
            ranked = int((rates.loc[cell].theta.notna()).sum()) > 1
            out.append(
                head + f"{_pct(t.theta)} % [{_pct(t.ci_low)}, {_pct(t.ci_high)}] (simultaneous "
                f"[{_pct(t.sim_low)}, {_pct(t.sim_high)}]; the judge's {_pct(t.p)} %)"
                + (", rank " + _rank(int(t.rank_low), int(t.rank_high)) if ranked else ", the only slice with a number")
                + f"; {labelled}"
            )
        for d in e.differences[e.differences.cell == cell].itertuples():
            state = "resolved" if d.resolved else "not resolved"
            out.append(
                f"  {d.b} − {d.a}: {_pts(d.difference)} points [{_pts(d.ci_low)}, {_pts(d.ci_high)}] "
                f"(simultaneous), {state}; the judge's own gap {_pts(d.raw_difference)}"
            )
    if len(e.across):
        for value in sorted(set(e.across.slice), key=natural):
            out.append(f"within {e.column} = {value}:")
            for r in e.across[e.across.slice == value].to_dict("records"):
                state = "resolved" if r["resolved"] else "not resolved"
                out.append(
                    f"  {cell_label(r['b'])} − {cell_label(r['a'])}: {_pts(r['difference'])} points "
                    f"[{_pts(r['ci_low'])}, {_pts(r['ci_high'])}], {state}"
                )
    return out
