"""People's labels in an imported table are part of the import's commit (issue 75, item 1): they are written before
``dataset.json`` publishes the dataset, and a dataset whose ``dataset.json`` records labels that are not there (an
import cut short before 2026-12-07, a ``calibration/`` moved away, a person's ratings file gone) is refused in one
line that says to run the import again, which restores them. Expected counts come from the table's file."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from vocab.cli import main
from vocab.imports import labels as labels_module
from vocab.imports.table import import_table


def _table(path: Path, n: int = 60) -> Path:
    """A table whose rows 1, 2, 4, 5, ... (every row but each third) ann labelled; some verdicts are empty
    (UNSCORED)."""
    verdicts = ("PASSED", "FAILED", "PASSED", "")
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "system", "judge", "verdict", "input", "output", "label:ann"])
        for i in range(n):
            label = "" if i % 3 == 0 else ("PASSED", "FAILED")[(i // 3) % 2]
            w.writerow([f"r{i}", f"s{i % 2}", "j", verdicts[i % 4], f"question {i}", f"answer {i}", label])
    return path


def _labelled_scored(path: Path) -> int:
    with path.open(newline="") as f:
        return sum(1 for r in csv.DictReader(f) if r["label:ann"] and r["verdict"])


def _labelled_per_system(path: Path) -> dict[str, int]:
    """Labelled rows the judge scored, per system (each a cell under the one judge ``j``), counted from the file."""
    counts: dict[str, int] = {}
    with path.open(newline="") as f:
        for r in csv.DictReader(f):
            if r["label:ann"] and r["verdict"]:
                counts[r["system"]] = counts.get(r["system"], 0) + 1
    return counts


def _ratings_rows(d: Path) -> int:
    f = d / "calibration" / "ratings_ann.csv"
    return len(f.read_text().splitlines()) - 1 if f.exists() else 0


def _files(d: Path) -> dict:
    return {p.relative_to(d): p.read_bytes() for p in d.rglob("*") if p.is_file()}


@pytest.mark.parametrize("lost", ["calibration", "key", "ratings", "sample record"])
def test_a_dataset_whose_recorded_labels_are_gone_is_refused_until_imported_again(tmp_path, capsys, lost):
    """A finished labelled import that lost its sample or ann's ratings: `vocab audit DIR --raters bob` does not
    draw a fresh sample over the lost labels (it did, exit 0); one line says to import again, and nothing is
    written. The same import again restores them, and the audit then reads all of ann's labels."""
    table = _table(tmp_path / "t.csv")
    d = tmp_path / "d"
    assert main(["import", "table", str(table), "--run-dir", str(d)]) == 0
    expected = _labelled_scored(table)
    assert expected == 30 and _ratings_rows(d) == expected
    cal = d / "calibration"
    if lost == "calibration":
        shutil.move(cal, tmp_path / "moved")
    else:
        (cal / {"key": "key.csv", "ratings": "ratings_ann.csv", "sample record": "sample.json"}[lost]).unlink()
    before = _files(d)
    capsys.readouterr()
    assert main(["audit", str(d), "--raters", "bob"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "labels" in err and "vocab import" in err and "Traceback" not in err
    assert _files(d) == before
    assert main(["import", "table", str(table), "--run-dir", str(d)]) == 0
    assert _ratings_rows(d) == expected
    assert main(["audit", str(d)]) == 0
    out = capsys.readouterr().out
    per_system = _labelled_per_system(table)
    assert sum(per_system.values()) == expected  # each cell's headline counts its own labelled rows
    for system, n in per_system.items():
        line = next(x for x in out.splitlines() if x.startswith(f"{system} judged by j:"))
        assert f"({n} of {n} labelled rows)" in line, line


def test_an_import_cut_short_in_its_labels_leaves_no_dataset(tmp_path, monkeypatch, capsys):
    """A Ctrl-C while the labels are written (here: as ann's ratings are stored) leaves no ``dataset.json``, so
    no command takes the directory for a dataset (before 2026-12-07 it was published before the labels); the same
    import again writes the dataset and all of ann's labels."""
    table = _table(tmp_path / "t.csv")
    d = tmp_path / "d"

    def cut(*a, **k):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(labels_module, "store_ratings", cut)
        with pytest.raises(KeyboardInterrupt):
            import_table(table, d)
    assert not (d / "dataset.json").exists() and not (d / "items.parquet").exists()
    capsys.readouterr()
    assert main(["audit", str(d), "--raters", "bob"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    import_table(table, d)
    assert (d / "dataset.json").exists() and _ratings_rows(d) == _labelled_scored(table)


def test_labels_of_items_the_judge_left_unscored_are_said_to_be_left_out(tmp_path, capsys):
    """Issue 75, item 8: a label on a row the judge left UNSCORED is in no pile. Every label there: the import says
    none is used (it said nothing of the 40 labels before); some there: it says how many, counted from the file."""
    table = _table(tmp_path / "t.csv")
    rows = list(csv.reader(table.open(newline="")))
    unscored = tmp_path / "u.csv"
    with unscored.open("w", newline="") as f:  # each labelled row's verdict emptied: UNSCORED
        csv.writer(f).writerows([rows[0], *[[*r[:3], "" if r[6] else r[3], *r[4:]] for r in rows[1:]]])
    capsys.readouterr()
    assert main(["import", "table", str(unscored), "--run-dir", str(tmp_path / "u")]) == 0
    out = capsys.readouterr().out
    n = sum(1 for r in rows[1:] if r[6])
    assert f"labels from people: ann {n}, every one on an item the judge left UNSCORED" in out and "none is used" in out
    assert main(["import", "table", str(table), "--run-dir", str(tmp_path / "d")]) == 0
    out = capsys.readouterr().out
    left = sum(1 for r in rows[1:] if r[6] and not r[3])
    assert left == 10 and f"({left} on items the judge left UNSCORED: in no pile, not used)" in out
