"""Paired judges: one person's opposite labels of one output are not both taken (issue 75, item 4). A person's
label belongs to the output, so one label serves both judges' rows; where ann labelled output o3 PASSED on judge
A's row and FAILED on B's, `compare --paired` took both (their mean, a tie nobody gave) and said "one label serves
both rows". Now --paired refuses in one line naming the output, and a comparison without it compares each cell on
its own labels."""

from __future__ import annotations

import json

import pandas as pd

from tests.unit.test_paired import _table
from vocab.cli import main


def test_one_outputs_opposite_labels_are_refused_when_paired(tmp_path, capsys):
    frame = _table(tmp_path / "two.csv", n=40)
    truth = frame.truth.map({1: "PASSED", 0: "FAILED"})
    frame["label:ann"] = truth  # ann's label of each output, the same on both judges' rows ...
    clash = (frame.id == "o3") & (frame.judge == "B")
    frame.loc[clash, "label:ann"] = "FAILED" if truth[clash].iloc[0] == "PASSED" else "PASSED"  # ... but o3's
    first = frame.loc[(frame.id == "o3") & (frame.judge == "A"), "label:ann"].iloc[0]
    frame.drop(columns="truth").to_csv(tmp_path / "t.csv", index=False)
    d = tmp_path / "d"
    assert main(["import", "table", str(tmp_path / "t.csv"), "--run-dir", str(d), "--visible", "input,output"]) == 0
    capsys.readouterr()
    assert main(["compare", str(d), "--a", "S__A", "--b", "S__B", "--paired"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'o3'" in err and f"{first} on S → A" in err, err
    assert main(["compare", str(d), "--a", "S__A", "--b", "S__B", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["comparisons"]
    assert row["paired"] is False  # each cell on its own labels, not one output's two labels averaged
    assert pd.read_csv(d / "calibration" / "ratings_ann.csv").shape[0] == 80
