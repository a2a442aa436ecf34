"""A sample drawn by strata within each pile (`vocab audit --strata score|COLUMN`): the strata, and how a pile's
labels are shared out among them.

A pile's strata are the values of a column the dataset kept (``--strata COLUMN``; ``--by COLUMN`` on the first call
draws so, each slice then rated as a cell of its own) or bands of the judge's own score (``--strata score``: at most
:data:`MAX_BANDS` bands of the pile's scores, equal scores never split; items without a score their own stratum).
Each stratum gets at least :data:`MIN_PER_STRATUM` rows (or all it holds), the rest of the pile's labels in
proportion to the strata's sizes (largest remainders), never more than a stratum holds. The estimator that weights
the strata back is :func:`vocab.stats.strata.stratified_correction`.
"""

from __future__ import annotations

import numpy as np

from vocab.datasets.items import CELL_JOIN, SCORE_SQL, flatten
from vocab.datasets.slicing import check_column, natural, value_sql
from vocab.datasets.slicing import natural as natural_key
from vocab.sampling.sample import CalibrationError, Sample, _blind, data_id, sample_stages

SCORE = "score"  # --strata score: the judge's score in bands
MAX_BANDS = 4
MIN_PER_STRATUM = 3
NO_SCORE = "(no score)"


def allocate_strata(sizes: list[int], n: int) -> list[int]:
    """``n`` rows of a pile over strata of ``sizes``: each stratum min(size, :data:`MIN_PER_STRATUM`) first, the
    rest in proportion to the sizes by largest remainders, never more than a stratum holds (a pile smaller than
    ``n`` is taken whole; floors above ``n`` are kept: every stratum is rated)."""
    sizes = [int(s) for s in sizes]
    take = [min(s, MIN_PER_STRATUM) for s in sizes]
    left = min(n, sum(sizes)) - sum(take)
    while left > 0:
        room = [s - t for s, t in zip(sizes, take, strict=True)]
        open_ = [i for i, r in enumerate(room) if r > 0]
        if not open_:
            break
        total = sum(sizes[i] for i in open_)
        quota = {i: left * sizes[i] / total for i in open_}
        whole = {i: min(int(quota[i]), room[i]) for i in open_}
        given = sum(whole.values())
        for i in open_:
            take[i] += whole[i]
        left -= given
        if left > 0 and given == 0:  # fewer rows left than strata with room: the largest remainders
            for i in sorted(open_, key=lambda i: (-(quota[i] - int(quota[i])), i))[:left]:
                take[i] += 1
            left = 0
    return take


def score_bands(scores) -> list[str]:
    """Each item's band of the judge's score within its pile: the distinct scores in order, cut into at most
    :data:`MAX_BANDS` bands of about equal counts (equal scores in one band), named by their range ("score 0.2–0.5");
    an item without a finite score is :data:`NO_SCORE`."""
    x = np.asarray(scores, dtype=float)
    ok = np.isfinite(x)
    out = np.full(len(x), NO_SCORE, dtype=object)
    if not ok.any():
        return list(out)
    values, counts = np.unique(x[ok], return_counts=True)
    mid = (np.cumsum(counts) - counts / 2) / counts.sum()
    band = np.minimum((mid * MAX_BANDS).astype(int), MAX_BANDS - 1)
    names = {}
    for b in np.unique(band):
        lo, hi = values[band == b].min(), values[band == b].max()
        names[b] = f"score {lo:g}" if lo == hi else f"score {lo:g}–{hi:g}"
    of_value = {v: names[b] for v, b in zip(values, band, strict=True)}
    out[ok] = [of_value[v] for v in x[ok]]
    return list(out)


def _strata_sql(data, by: str, where) -> str:
    """The SQL of a stored item's stratum source: its score (``by`` = :data:`SCORE`, banded afterwards) or its value
    in the column (checked as `--by` checks it: known, whole groups, few values). CalibrationError (one line)."""

    if by == SCORE:
        store = data.items
        scored = store.con.execute(f"SELECT count(*) FROM {store.src} WHERE ({SCORE_SQL}) IS NOT NULL").fetchone()[0]
        if not scored:
            raise CalibrationError(f"{where}: --strata score: the judge logged no numeric score in this dataset")
        return SCORE_SQL
    try:
        check_column(data, by, where)
    except CalibrationError as e:  # its words name --by: here the option is --strata
        raise CalibrationError(str(e).replace(f"--by {by!r}", f"--strata {by!r}", 1)) from None
    return value_sql(by)


def check_strata(data, by: str, where) -> str:
    """What `--strata` checks before anything is written: an imported dataset's stored items, and a score or a
    column it kept (CalibrationError, one line). Returns the stratum source's SQL (:func:`_strata_sql`)."""
    if not by or not by.strip():
        raise CalibrationError(f"{where}: --strata needs 'score' or a column name")
    if data.kind == "run":
        raise CalibrationError(
            f"{where}: --strata draws an imported dataset's stored items; a study run's sample is seed 000's design "
            "(per cell and pile; --by slices it afterwards)"
        )
    if data.items is None or not hasattr(data.items, "con"):
        raise CalibrationError(
            f"{where}: --strata draws from items stored for DuckDB's queries; this dataset's are not (import it again "
            "without --scheduler)"
        )
    return _strata_sql(data, by, where)


def pile_strata(data, cell: str, verdict: str, by: str, expr: str) -> tuple[np.ndarray, list[str]]:
    """One pile's items (their store rows, in the order the sampler numbers a pile: group, epoch, row) and each
    one's stratum; ``expr``: the stratum source's SQL (:func:`_strata_sql`, checked once for the whole draw)."""
    store = data.items
    got = store.con.execute(
        f"SELECT row, {expr} AS s FROM {store.src} WHERE cell = ? AND verdict = ? ORDER BY level, attempt, row",
        [cell, verdict],
    ).df()
    rows = got["row"].to_numpy()
    return rows, (score_bands(got.s.to_numpy(float)) if by == SCORE else [str(v) for v in got.s])


def draw_strata(data, per_pile: int, seed: int, by: str, where, *, per_stratum: bool = False) -> Sample:
    """The blind sample of an imported dataset drawn by strata within each cell's two piles: each pile's
    ``per_pile`` rows shared over its strata (:func:`allocate_strata`), or with ``per_stratum`` (`--by` on the first
    call: each slice a cell of its own) ``per_pile`` rows a stratum; each stratum's rows drawn at random among its
    items (the failed pile by item, as the passed one: weight 1); each key row records its stratum and the
    stratum's items in all."""

    if per_pile < 1:
        raise CalibrationError(f"per_pile must be positive, got {per_pile}")
    expr = check_strata(data, by, where)  # the stratum source's SQL, checked once for every pile
    rng = np.random.default_rng(seed)  # the sample's stream (as vocab.sampling.sample.draw's)
    store, picked = data.items, []
    for cell in data.cells.index[data.cells.attempts > 0]:
        for verdict, pile in (("PASSED", "passed"), ("FAILED", "failed")):
            rows, strata = pile_strata(data, cell, verdict, by, expr)
            names = sorted(set(strata), key=natural)
            members = {n: rows[[s == n for s in strata]] for n in names}
            sizes = [len(members[n]) for n in names]
            takes = [min(z, per_pile) for z in sizes] if per_stratum else allocate_strata(sizes, per_pile)
            for name, size, n in zip(names, sizes, takes, strict=True):
                take = np.sort(rng.choice(size, size=n, replace=False))
                picked += [(int(r), pile, name, size) for r in members[name][take]]
    chosen = {r: (pile, name, size) for r, pile, name, size in picked}
    items = store._frame(
        f"SELECT * FROM {store.src} WHERE row IN (SELECT unnest(?::BIGINT[])) ORDER BY cell, level, attempt, row",
        [sorted(chosen)],
    )
    flat = flatten(items, data.rubric, data.visible)
    out = []
    for i, r in enumerate(items["row"]):
        pile, name, size = chosen[int(r)]
        out.append((flat.iloc[i], pile, 1, name, size))
    return _blind(out, rng, data.visible, dataset=data_id(data))


def sample_strata(run_dir, stages: list[dict] | None = None) -> str | None:
    """What the sample's piles were stratified by (:data:`SCORE` or a column), from its first draw's record;
    None for a sample drawn per pile. ``stages``: that record as the caller read it (by default read here)."""
    stages = sample_stages(run_dir) if stages is None else stages
    return stages[0].get("strata") if stages else None


def check_slicing(run_dir, column: str, stages: list[dict] | None = None) -> None:
    """A sample drawn by strata slices by its own strata only (`--by` its column): a slice of another column would
    mix rows drawn at different rates. CalibrationError (one line)."""
    by = sample_strata(run_dir, stages)
    if by == SCORE:
        raise CalibrationError(
            f"{run_dir}: the sample was drawn by bands of the judge's score: --by {column!r} would mix rows drawn at "
            "different rates (a sample drawn per pile slices by any column)"
        )
    if by is not None and by != column:
        raise CalibrationError(
            f"{run_dir}: the sample was drawn by strata of {by!r}: --by {column!r} would mix rows drawn at different "
            f"rates (slice by {by!r}, or draw a sample per pile)"
        )


def strata_lines(d, data, per_pile: int, seed: int, by: str, per_stratum: bool) -> tuple[Sample, list[str], dict]:
    """The first call's sample drawn by strata, what to tell the user (one line per cell and pile: its strata, their
    items and rows), and the record's fields."""
    sample = draw_strata(data, per_pile, seed, by, d, per_stratum=per_stratum)
    key = sample.key
    lines = []
    for (cell, pile), g in key.groupby(["cell", "pile"], sort=True):
        parts = [
            f"{name} {int(h.stratum_size.iloc[0])} items, {len(h)} rows"
            for name, h in sorted(g.groupby("stratum"), key=lambda x: natural_key(x[0]))
        ]
        lines.append(f"strata {cell.replace(CELL_JOIN, ' → ', 1)} {pile.upper()}: " + "; ".join(parts))
    share = (
        f"{per_pile} rows a stratum (each slice a cell of its own)"
        if per_stratum
        else f"{per_pile} rows a pile shared over its strata, at least {MIN_PER_STRATUM} each"
    )
    lines.append(
        f"blind sample: {len(key)} rows drawn by strata of {by} within each pile ({share}, seed {seed}); each "
        "cell's rate weights its strata back by their items"
    )
    return sample, lines, {"strata": by, "per_stratum": per_stratum}


def strata_notes(run_dir, key=None, passes=None, rater: str = "", stages: list[dict] | None = None) -> list[str]:
    """What the audit and the report say of a sample drawn by strata (nothing for one drawn per pile): how it was
    drawn, and each stratum the lead ``rater`` (``passes``: their verdicts by blind id) has not rated a row of, whose
    cell then gets no rate."""
    by = sample_strata(run_dir, stages)
    if by is None:
        return []
    what = "bands of the judge's score" if by == SCORE else f"the values of {by}"
    out = [
        f"Drawn by strata: each pile's rows were drawn stratum by stratum ({what}), and each rate weights its strata "
        "back by their items (fiducial intervals over these items only)."
    ]
    if key is None or passes is None or "stratum" not in key.columns:
        return out
    rated = key.blind_id.isin(passes.dropna().index)
    for (cell, pile, stratum), g in key.assign(rated=rated).groupby(["cell", "pile", "stratum"], sort=True):
        if not g.rated.any():
            out.append(
                f"{cell.replace(CELL_JOIN, ' → ', 1)}: no rate yet: {rater} has rated none of the {len(g)} rows of "
                f"its {pile.upper()} pile's stratum {stratum} (a rate needs a rated row in every stratum)"
            )
    return out
