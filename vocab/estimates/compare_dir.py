"""`vocab compare DIR`: a directory's comparisons, as the command, the gate and the Python API ask for them — a cell
named on the command line (:func:`resolve_cell`), the comparisons of one rater's correction (:func:`compare_dir`),
the cells it leaves out and why (:func:`left_out`), and the checks behind ``--paired``. The arithmetic is
:mod:`vocab.estimates.compare`'s."""

from __future__ import annotations

import dataclasses

from vocab import stats
from vocab.datasets.items import cell_label
from vocab.datasets.names import PEOPLE
from vocab.estimates.compare import Comparisons, comparisons
from vocab.estimates.correct import corrected
from vocab.estimates.paired import STRATA, conflicting_label, rated_strata, shared_outputs
from vocab.sampling.sample import CalibrationError

# --- naming a cell on the command line ---------------------------------------------------------------------


def resolve_cell(name: str, cells: list[str], where) -> str:
    """The cell ``name`` means: a cell as stored (``system__judge``) or as the report names it (``system →
    judge``, ``->`` too), or a system or judge name that picks one cell only. CalibrationError otherwise."""
    text = name.strip()
    for sep in (" → ", "→", " -> ", "->"):
        if sep in text:
            system, _, judge = text.partition(sep)
            text = f"{system.strip()}__{judge.strip()}"
            break
    if text in cells:
        return text
    by_system = [c for c in cells if c.split("__", 1)[0] == text]
    by_judge = [c for c in cells if c.split("__", 1)[-1] == text]
    found = sorted(set(by_system) | set(by_judge))
    if len(found) == 1:
        return found[0]
    known = ", ".join(cell_label(c) for c in cells)
    if found:
        raise CalibrationError(
            f"{where}: {name!r} names {len(found)} cells ({', '.join(map(cell_label, found))}): "
            "name one as system → judge"
        )
    raise CalibrationError(f"{where}: no cell {name!r} (known: {known})")


def compare_dir(
    run_dir,
    *,
    rater: str | None = None,
    a: str | None = None,
    b: str | None = None,
    seed: int = 0,
    n_boot: int = stats.N_DRAWS,
    population: str = stats.DEFAULT_POPULATION,
    paired: bool = False,
) -> Comparisons:
    """`vocab compare DIR`: the comparisons of one rater's correction (by default the report's lead rater), every
    pair of cells or the one pair (``a``, ``b``), on a run or an audited dataset, from the report's own draws.
    Two judges' cells on the same outputs are compared paired whenever they can be; ``paired`` asks for it
    (CalibrationError, one line, when the pair cannot be)."""
    from pathlib import Path

    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise CalibrationError(f"{run_dir}: not a directory (a run or an imported dataset)")
    if (a is None) != (b is None):
        raise CalibrationError("give both --a and --b (the pair b − a), or neither (every pair)")
    c = corrected(run_dir, None, seed=seed, n_boot=n_boot, population=population)
    if c.loaded is not None:  # the sample's record read, as the gate, the audit and the report read it: a damaged
        c.loaded.stages  # noqa: B018 - one (calibration/sample.json cut short) is one line, not an answer in full
    name = c.rater(rater, run_dir)
    cells = sorted(c.key.cell.unique())
    if len(cells) < 2:
        raise CalibrationError(f"{run_dir}: one cell only ({', '.join(map(cell_label, cells))}): nothing to compare")
    pairs = None
    if a is not None:
        pa, pb = resolve_cell(a, cells, run_dir), resolve_cell(b, cells, run_dir)
        if pa == pb:
            raise CalibrationError(f"{run_dir}: --a and --b name one cell ({cell_label(pa)}): compare two")
        pairs = [(pa, pb)]
    if paired:
        _check_paired(run_dir, c, name, pairs, population)
    found = comparisons(
        c.data, c.key, c.passes, raters=[name], pairs=pairs, seed=seed, n_boot=n_boot, population=population
    )[name]
    if pairs and found.pairs.empty:
        missing = [x for x in pairs[0] if x not in set(found.ranks.cell)]
        raise CalibrationError(
            f"{run_dir}: {name}'s ratings cannot correct {', '.join(map(cell_label, missing))} "
            "(a pile with no rated row): rate it first"
        )
    if rater is None and c.raters is not None and c.raters.passed_over:
        found = dataclasses.replace(found, passed_over=c.raters.passed_over)
    if pairs is None:  # every pair: the cells none can hold are named, with why
        return dataclasses.replace(found, left_out=left_out(c, name, set(found.ranks.cell)))
    return found


def dataset_cells(data) -> list[str]:
    """Every cell of a run or dataset: those with scored units and those whose units were all lost."""
    cells = set(data.cells.index[data.cells.attempts > 0]) | set(data.lost().cell)
    if data.kind == "run":
        cells |= set(data.outcomes.cell)
    return sorted(cells)


def left_out(c, rater: str, held: set[str]) -> tuple[tuple[str, str], ...]:
    """The cells of ``c``'s dataset not in ``held`` (those ``rater``'s correction holds), each with why: no item with
    a verdict, or a pile (of those the judge's verdicts fill) with no row ``rater`` rated."""
    rated = set(c.passes[rater].dropna().index) if rater in c.passes else set()
    out = []
    for cell in dataset_cells(c.data):
        if cell in held:
            continue
        counts = c.data.cells.loc[cell] if cell in c.data.cells.index else None
        if counts is None or int(counts.attempts) == 0:
            out.append((cell, "no item with a verdict"))
            continue
        k = c.key[(c.key.cell == cell) & c.key.blind_id.isin(rated)]
        empty = [
            verdict
            for verdict, pile, n in (("PASSED", "passed", counts.passed), ("FAILED", "failed", counts.failed))
            if int(n) and not (k.pile == pile).any()
        ]
        why = f"no row of its {' or '.join(empty)} pile rated by {rater}" if empty else f"not correctable by {rater}"
        out.append((cell, why))
    return tuple(out)


def _check_paired(run_dir, c, rater: str, pairs, population: str) -> None:
    if not pairs:
        raise CalibrationError("--paired compares one pair: name it with --a and --b")
    if population != stats.FINITE:
        raise CalibrationError(
            "--paired compares these outputs: it takes the finite population, not the superpopulation"
        )
    if "stratum" in c.key.columns:
        raise CalibrationError(f"{run_dir}: its sample was drawn by strata: --paired needs each pile drawn whole")
    a, b = pairs[0]
    shared = shared_outputs(c.data, a, b, c.key)
    if shared is None:
        raise CalibrationError(
            f"{run_dir}: {cell_label(a)} and {cell_label(b)} do not judge the same outputs (two judges of one system, "
            "each output scored once by each and shown alike, the same outputs scored by both, each FAILED group one "
            "item): nothing to pair"
        )
    clash = conflicting_label(shared, c.key, c.passes[rater]) if rater != PEOPLE else None
    if clash is not None:
        group, epoch, va, vb = clash
        said = {1.0: "PASSED", 0.0: "FAILED"}
        raise CalibrationError(
            f"{run_dir}: {rater} labelled one output (group {group!r}, epoch {epoch}) {said.get(va, va)} on "
            f"{cell_label(a)}'s row and {said.get(vb, vb)} on {cell_label(b)}'s: paired, one label serves both rows; "
            "correct the label in the source and import it again"
        )
    rated = rated_strata(shared, c.key, c.passes[rater])
    for s in STRATA:
        if shared.sizes[s] and not rated[s][1]:
            raise CalibrationError(
                f"{run_dir}: the {shared.sizes[s]} outputs {'passed' if s[0] == 'P' else 'failed'} by "
                f"{a.split('__', 1)[1]} and {'passed' if s[1] == 'P' else 'failed'} by {b.split('__', 1)[1]} have no "
                f"output {rater} rated: rate one first"
            )
