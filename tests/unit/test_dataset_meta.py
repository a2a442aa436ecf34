"""One validated reader of dataset.json (issue 75, items 6 and 7): a hand-edited field of the wrong type or range is
one line naming the file and the field (they were tracebacks: AttributeError, KeyError, TypeError,
IntCastingNaNError, ValueError), and pile counts that are not those of the items, recounted from the store, are
refused (a hand-edited count, another dataset's items with their SHA-256 updated, were trusted)."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from tests.unit.test_labels_commit import _table
from vocab.cli import main


def _first(m: dict) -> dict:
    return m["items"]["cells"][next(iter(m["items"]["cells"]))]


EDITS = {
    "cells a string": (lambda m: m["items"].__setitem__("cells", "sys0"), "items.cells"),
    "cells empty": (lambda m: m["items"].__setitem__("cells", {}), "items.cells"),
    "visible a number": (lambda m: m.__setitem__("visible", 3), "visible"),
    "a count NaN": (lambda m: _first(m).__setitem__("passed", float("nan")), ".passed"),
    "a count -5": (lambda m: _first(m).__setitem__("failed", -5), ".failed"),
    "a count '7'": (lambda m: _first(m).__setitem__("failed", "7"), ".failed"),
    "totals off": (lambda m: m["counts"].__setitem__("PASSED", m["counts"]["PASSED"] + 1), "counts"),
}


@pytest.fixture
def dataset(tmp_path):
    d = tmp_path / "d"
    assert main(["import", "table", str(_table(tmp_path / "t.csv")), "--run-dir", str(d)]) == 0
    return d


def _refused(d, capsys, words: str) -> None:
    capsys.readouterr()
    for argv in (["gate", str(d), "--min-rate", "0.1"], ["audit", str(d)], ["compare", str(d)]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "Traceback" not in err, err
        assert "dataset.json" in err and words in err, err


@pytest.mark.parametrize("edit", list(EDITS))
def test_a_field_of_the_wrong_type_or_range_is_one_line(dataset, capsys, edit):
    fn, words = EDITS[edit]
    meta = json.loads((dataset / "dataset.json").read_text())
    fn(meta)
    (dataset / "dataset.json").write_text(json.dumps(meta))
    _refused(dataset, capsys, words)


def test_a_hand_edited_pile_count_is_recounted(dataset, capsys):
    """One PASSED item moved to FAILED in the counts (the totals kept in step): every field is well formed, and the
    items say otherwise."""
    meta = json.loads((dataset / "dataset.json").read_text())
    first = _first(meta)
    first["passed"], first["failed"] = first["passed"] - 1, first["failed"] + 1
    meta["counts"]["PASSED"], meta["counts"]["FAILED"] = meta["counts"]["PASSED"] - 1, meta["counts"]["FAILED"] + 1
    (dataset / "dataset.json").write_text(json.dumps(meta))
    _refused(dataset, capsys, "pile counts are not those of the items")


def test_another_datasets_items_with_their_sha256_updated_are_refused(tmp_path, dataset, capsys):
    other = tmp_path / "o"
    assert main(["import", "table", str(_table(tmp_path / "o.csv", n=30)), "--run-dir", str(other)]) == 0
    shutil.copy(other / "items.parquet", dataset / "items.parquet")
    meta = json.loads((dataset / "dataset.json").read_text())
    meta["items"]["sha256"] = hashlib.sha256((dataset / "items.parquet").read_bytes()).hexdigest()
    (dataset / "dataset.json").write_text(json.dumps(meta))
    _refused(dataset, capsys, "pile counts are not those of the items")
