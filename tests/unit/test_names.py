"""An interval that depends only on the data (issue #76 item 5). The same labels under three rater names print the
same lines, byte for byte once the name is set aside (expected: equality across names, which nothing in the code
decides: before #76 each name drew its own stream, and these six labels printed 67 % (42–83 %) for ann and bob but
67 % (33–83 %) for person); a rater beside them moves no number of theirs; and the seed moves no printed end of the
default interval (its ends computed exactly, vocab.stats.exact), so the spread of each end across seeds is below
the printed precision."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pandas as pd

from tests.unit.test_people import MLFLOW, _import, _relabel
from vocab.cli import main
from vocab.estimates.correct import corrected, correction_table

ROOT = Path(__file__).resolve().parents[2]
REVIEWERS = ROOT / "data" / "audits" / "mlflow-reviewers"
NAMES = ("ann", "person", "bob")


def _said(args: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(args) == 0
    return out.getvalue()


def test_the_same_labels_under_three_names_print_the_same_lines(tmp_path):
    lines = {}
    for name in NAMES:
        d = _import(tmp_path, name, _relabel(json.loads(MLFLOW.read_text()), lambda n, who=name: who))
        said = _said(["audit", str(d)])
        rate = [ln for ln in said.splitlines() if "the pass rate is" in ln]
        assert len(rate) == 1 and "%" in rate[0], said
        lines[name] = rate[0].replace(f"{name}'s", "<rater>'s")
    assert len(set(lines.values())) == 1, lines


def test_a_rater_copied_under_other_names_gets_the_same_numbers_whoever_is_beside_them(tmp_path):
    d = tmp_path / "reviewers"
    shutil.copytree(REVIEWERS, d)
    cal = d / "calibration"
    for name in ("zed", "person"):  # carol's labels under two more names
        shutil.copy(cal / "ratings_carol.csv", cal / f"ratings_{name}.csv")
    c = corrected(d)
    table = c.table[c.table.rater.isin(["carol", "zed", "person"])].drop(columns="rater")
    by = [g.reset_index(drop=True) for _, g in table.groupby(c.table.rater[table.index], sort=True)]
    assert len(by) == 3 and len(by[0]) > 0
    for other in by[1:]:
        pd.testing.assert_frame_equal(by[0], other)
    # carol alone (no neighbour) prints the same row as carol beside five other raters
    alone = correction_table(c.data, c.key, {"carol": c.passes["carol"]})
    pd.testing.assert_frame_equal(
        alone.drop(columns="rater").reset_index(drop=True),
        c.table[c.table.rater == "carol"].drop(columns="rater").reset_index(drop=True),
    )


def test_the_seed_moves_no_printed_end_of_the_default_interval():
    """Five seeds: every end of every rater's default interval printed to the report's precision (whole percent,
    0.1 under 10 %) is one text; the ends agree to 1e-9 (spread 0, below the printed 1 point)."""
    c = corrected(REVIEWERS)
    ends = ["ci_low", "ci_high", "q1_low", "q1_high", "q0_low", "q0_high"]
    tables = [correction_table(c.data, c.key, c.passes, seed=s)[ends] for s in range(5)]
    spread = pd.concat(tables).groupby(level=0).agg(lambda v: v.max() - v.min())
    assert len(tables[0]) > 0 and float(spread.max().max()) < 1e-9
