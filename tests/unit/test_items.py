"""An imported dataset's items stay in items.parquet, and the sample is picked there (vocab.calibration.items): the
same rows for the same seed as draw_sample's pass over a frame of every item, the same counts and design effect as
the frame gives, and a dataset written before 2026-12 (judgments.jsonl) read alike."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tests.stored import stored_items, write_table
from vocab.calibration import correct
from vocab.calibration import sample as sm
from vocab.calibration.dataset import _cells_of, judgment_rows, load_dataset, write_dataset
from vocab.calibration.imports.table import import_table


def _rows(seed: int, n: int) -> list[dict]:
    """Judgment rows with what makes ordering matter: groups of several epochs, two items at one (group, epoch),
    group names whose text order is not their number's, UNSCORED items, three cells (one all UNSCORED)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        system = ["sys-a", "sys-b", "sys-c"][int(rng.integers(3))]
        verdict = (
            "UNSCORED" if system == "sys-c" else str(rng.choice(["PASSED", "FAILED", "UNSCORED"], p=[0.6, 0.35, 0.05]))
        )
        rows.append({"id": f"q{i}", "group": f"g{int(rng.integers(n // 3 + 1))}", "epoch": int(rng.integers(1, 4)),
                     "system": system, "judge": "judge-x", "verdict": verdict, "criteria": {},
                     "visible": {"input": f"in {i} é", "output": f"out {i}"},
                     "hidden": {"unscored_reason": "error"} if verdict == "UNSCORED" else {}})  # fmt: skip
    return rows


def _meta():
    from vocab.calibration.dataset import single_verdict

    return {"name": "t", "source": {"kind": "table"}, "rubric": single_verdict().as_dict(),
            "visible": ["input", "output"]}  # fmt: skip


def _without_ids(s: sm.Sample) -> tuple[list, list]:
    return (s.key.drop(columns="blind_id").to_dict(orient="records"),
            s.sheet.drop(columns="blind_id").to_dict(orient="records"))  # fmt: skip


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_the_store_draws_the_rows_a_frame_of_every_item_draws(tmp_path, seed):
    d = write_dataset(tmp_path / "d", _rows(seed, 240), _meta())
    data = load_dataset(d)
    for per_pile, sizes in ((10, None), (3, None), (1, {"sys-a__judge-x": (5, 2), "sys-b__judge-x": (2, 7)})):
        stored = sm.draw(data, per_pile, seed, sizes=sizes)
        framed = sm.draw_sample(data.attempts, per_pile, seed, data.visible, sizes=sizes)
        assert len(stored.key) > 0 and _without_ids(stored) == _without_ids(framed)


def test_the_store_extends_a_pilot_as_a_frame_does(tmp_path):
    d = write_dataset(tmp_path / "d", _rows(3, 300), _meta())
    data = load_dataset(d)
    pilot = sm.draw(data, 4, 11)
    passes = pd.Series(np.arange(len(pilot.key)) % 3 != 0, index=pilot.key.blind_id, dtype=float)
    stored, s1 = sm.extend_sample(data, pilot.key, passes, 20, 5, data.visible, set(pilot.key.blind_id))
    framed, s2 = sm.extend_sample(data.attempts, pilot.key, passes, 20, 5, data.visible, set(pilot.key.blind_id))
    assert s1 == s2 and len(stored.key) > 0 and _without_ids(stored) == _without_ids(framed)

    def places(key):
        return {(r.cell, r.level, r.attempt) for r in key.itertuples() if r.pile == "passed"}

    assert places(stored.key) and not places(stored.key) & places(pilot.key)  # no row of the pilot drawn again


def test_counts_and_design_effect_are_the_frames(tmp_path):
    rows = _rows(5, 400)
    d = write_dataset(tmp_path / "d", rows, _meta())
    data = load_dataset(d)
    expected = _cells_of(data.attempts)
    got = data.cells.loc[expected.index]
    for col in ("passed", "failed", "groups", "failed_groups"):
        assert got[col].tolist() == expected[col].tolist(), col
    # the store's design effect is the exact value of the frame's (from integer sums; the frame's rounds in floats)
    assert got.deff.to_numpy() == pytest.approx(expected.deff.to_numpy(), rel=1e-12)
    assert (got.deff >= 1).all() and (got.deff > 1).any()  # one cell whose groups do cluster
    # counted from the rows themselves
    by_cell = pd.DataFrame(rows).assign(cell=lambda f: f.system + "__" + f.judge).groupby("cell").verdict
    assert data.cells.unscored.to_dict() == by_cell.apply(lambda v: int((v == "UNSCORED").sum())).to_dict()
    assert data.cells.loc["sys-c__judge-x", "attempts"] == 0


def test_a_dataset_written_before_2026_12_reads_as_before(tmp_path):
    """A format-1 dataset (judgments.jsonl and its SHA-256) loads, counts and draws as one written today."""
    import hashlib

    rows = _rows(2, 150)
    old = tmp_path / "old"
    old.mkdir()
    body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    (old / "judgments.jsonl").write_text(body)
    meta = {
        **_meta(),
        "format_version": "1",
        "counts": {},
        "judgments_sha256": hashlib.sha256(body.encode()).hexdigest(),
    }
    (old / "dataset.json").write_text(json.dumps(meta))
    new = write_dataset(tmp_path / "new", rows, _meta())
    a, b = load_dataset(old), load_dataset(new)
    assert a.cells.equals(b.cells)
    assert _without_ids(sm.draw(a, 5, 0)) == _without_ids(sm.draw(b, 5, 0))
    assert judgment_rows(old) == stored_items(new) == judgment_rows(new)
    (old / "judgments.jsonl").write_text(body.replace("q1", "q9", 1))
    with pytest.raises(Exception, match="not the file dataset.json describes"):
        load_dataset(old)


def test_a_large_table_imports_in_duckdb_with_its_labels(tmp_path):
    """200,001 rows (the old cap was 200,000): imported, counted and sampled; its labels become the sample."""
    n = 200_001
    rng = np.random.default_rng(0)
    verdict = rng.choice(["PASSED", "FAILED", ""], size=n, p=[0.6, 0.39, 0.01])
    label = np.where(np.arange(n) % 10_000 == 0, np.where(verdict == "PASSED", "passed", "failed"), "")
    table = pd.DataFrame({"id": [f"i{k}" for k in range(n)], "system": np.where(np.arange(n) % 2, "m1", "m2"),
                          "judge": "jj", "verdict": verdict, "input": "q", "output": "a", "label": label})  # fmt: skip
    path = tmp_path / "big.csv"
    table.to_csv(path, index=False)
    d = import_table(path, tmp_path / "d")
    data = load_dataset(d)
    counted = table.assign(cell=table.system + "__jj").groupby("cell").verdict
    assert data.cells.passed.to_dict() == counted.apply(lambda v: int((v == "PASSED").sum())).to_dict()
    assert data.cells.unscored.to_dict() == counted.apply(lambda v: int((v == "").sum())).to_dict()
    key = sm.read_key(d)
    assert len(key) == int(((label != "") & (verdict != "")).sum())


def test_correction_from_counts_is_the_correction_from_a_frame(tmp_path):
    d = write_dataset(tmp_path / "d", _rows(9, 300), _meta())
    data = load_dataset(d)
    s = sm.draw(data, 8, 0)
    passes = {"r": pd.Series(np.arange(len(s.key)) % 4 != 1, index=s.key.blind_id, dtype=float)}
    a = correct.correction_table(data, s.key, passes, n_boot=200)
    b = correct.correction_table(data.attempts, s.key, passes, n_boot=200)
    assert len(a) == 2 and a[["rater", "cell", "flags"]].equals(b[["rater", "cell", "flags"]])
    numbers = [c for c in a.columns if c not in ("rater", "cell", "flags")]
    assert a[numbers].to_numpy() == pytest.approx(b[numbers].to_numpy(), rel=1e-9, nan_ok=True)


BAD_ROWS = {  # one refused row (the 3rd of 5) of each kind, and what its one line names
    "verdict": ({"verdict": "maybe"}, "row 3, column 'verdict'"),
    "epoch": ({"epoch": "1.5"}, "row 3, column 'epoch'"),
    "empty id": ({"id": "\u3000 "}, "row 3, column 'id': empty"),
    "cell name": ({"system": "a__b"}, "holds '__'"),
    "control character": ({"judge": "j\u202e"}, "control character U+202E"),
    "long field": ({"output": "x" * 200_001}, "row 3, column 'output': longer than"),
    "label word": ({"label": "perhaps"}, "row 3, column 'label'"),
    "repeated id": ({"id": "i1"}, "row 3, column 'id': 'i1' repeats row 2"),
}


@pytest.mark.parametrize("case", sorted(BAD_ROWS))
def test_duckdb_names_the_refused_row_as_the_row_check_does(tmp_path, capsys, case):
    """A CSV (checked a column at a time in DuckDB) and the same rows as JSON Lines (checked row by row in Python) are
    refused with the same line, naming the first refused row; nothing is written."""
    from vocab.cli import main

    change, words = BAD_ROWS[case]
    rows = [{"id": f"i{k}", "system": "s", "judge": "j", "verdict": "PASSED", "epoch": "1", "input": "q",
             "output": "o", "label": ""} for k in range(5)]  # fmt: skip
    rows[2] = {**rows[2], **change}
    rows[3] = {**rows[3], "verdict": "nonsense"}  # a later refused row is not the one named
    said = []
    for suffix in (".csv", ".jsonl"):
        path = write_table(tmp_path / f"t{suffix}", rows)
        assert main(["import", "table", str(path), "--run-dir", str(tmp_path / "d")]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and words in err, (suffix, err)
        said.append(err.replace(str(path), "FILE"))
    assert said[0] == said[1]
    assert not (tmp_path / "d").exists()


def test_a_parquet_table_imports_as_its_csv_does(tmp_path):
    """The same table as CSV and as Parquet (written by DuckDB, typed columns: an integer epoch) gives the same
    items."""
    import duckdb

    rows = _rows(4, 60)
    flat = pd.DataFrame([{"id": r["id"], "system": r["system"], "judge": r["judge"],
                          "verdict": "" if r["verdict"] == "UNSCORED" else r["verdict"], "group": r["group"],
                          "epoch": r["epoch"], **r["visible"]} for r in rows])  # fmt: skip
    flat.to_csv(tmp_path / "t.csv", index=False)
    duckdb.connect().execute(f"COPY (SELECT * FROM read_csv('{tmp_path / 't.csv'}', types={{'epoch': 'INTEGER'}})) "
                             f"TO '{tmp_path / 't.parquet'}' (FORMAT parquet)")  # fmt: skip
    a, b = import_table(tmp_path / "t.csv", tmp_path / "a"), import_table(tmp_path / "t.parquet", tmp_path / "b")
    assert stored_items(a) == stored_items(b) and len(stored_items(a)) == 60
