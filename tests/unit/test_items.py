"""An imported dataset's items stay in items.parquet, and the sample is picked there (vocab.datasets.items): the
same rows for the same seed as draw_sample's pass over a frame of every item, the same counts and design effect as
the frame gives, and a dataset written before 2026-12 (judgments.jsonl) read alike."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tests.stored import stored_items, write_table
from vocab.datasets.dataset import cells_table, judgment_rows, load_dataset
from vocab.datasets.rows import write_dataset
from vocab.estimates import correct
from vocab.imports.table import import_table
from vocab.sampling import sample as sm


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
    from vocab.datasets.dataset import single_verdict

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
    expected = cells_table(data.attempts)
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


def test_a_dataset_vocab_wrote_before_2026_12_takes_its_table_again(tmp_path, capsys):
    """data/format1: a labelled table imported by vocab at 3814074 (format 1). The same table again is the same
    dataset (not "another"), its sample and the person's ratings stay byte for byte, and the audit reads them; a
    damaged judgments.jsonl is one line and nothing changes."""
    import shutil
    from pathlib import Path

    from vocab.cli import main

    here = Path(__file__).resolve().parents[2] / "data" / "format1"
    d = tmp_path / "labelled"
    shutil.copytree(here / "labelled", d)
    before = {p.relative_to(d): p.read_bytes() for p in d.rglob("*") if p.is_file()}
    assert main(["import", "table", str(here / "labelled.csv"), "--run-dir", str(d), "--rater", "ann"]) == 0
    capsys.readouterr()
    assert {p.relative_to(d): p.read_bytes() for p in d.rglob("*") if p.is_file()} == before
    rows = [r for r in csv_rows(here / "labelled.csv") if r["verdict"]]
    cells = sorted({(r["system"], r["judge"]) for r in rows})
    assert main(["audit", str(d)]) == 0
    out = capsys.readouterr().out
    for system, judge in cells:  # each cell's headline counts its own labelled rows; a pile unlabelled: no headline
        mine = [r for r in rows if (r["system"], r["judge"]) == (system, judge)]
        piles, labelled = {r["verdict"] for r in mine}, [r for r in mine if r["label"]]
        said = [x for x in out.splitlines() if x.startswith(f"{system} judged by {judge}:")]
        if piles <= {r["verdict"] for r in labelled}:
            assert f"({len(labelled)} of {len(labelled)} labelled rows)" in said[0], said
        else:
            assert said == [], said
    assert any(x.startswith("model-a judged by judge-1:") for x in out.splitlines())  # the file has one such cell
    (d / "judgments.jsonl").write_bytes(before[Path("judgments.jsonl")][:-40])
    damaged = (d / "judgments.jsonl").read_bytes()
    assert main(["import", "table", str(here / "labelled.csv"), "--run-dir", str(d), "--rater", "ann"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert (d / "judgments.jsonl").read_bytes() == damaged


def csv_rows(path) -> list[dict]:
    import csv

    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_the_same_rows_as_csv_and_as_json_lines_are_one_dataset(tmp_path):
    """A table's text fields are kept as one JSON text whichever reader met them (DuckDB for CSV, Python for JSON
    Lines): the two imports have the same digest, and a sample of each the same blind ids."""
    rows = [{"id": f"i{k}", "system": "s", "judge": "j", "verdict": ["PASSED", "FAILED", ""][k % 3],
             "input": f"q {k} é \u2028 \"quoted\" / \\", "output": "a\nb\tc", "note": f"n{k}"}
            for k in range(30)]  # fmt: skip
    a = import_table(write_table(tmp_path / "t.csv", rows), tmp_path / "a")
    b = import_table(write_table(tmp_path / "t.jsonl", rows), tmp_path / "b")
    assert stored_items(a) == stored_items(b)
    da, db = load_dataset(a), load_dataset(b)
    assert da.manifest["items"]["digest"] == db.manifest["items"]["digest"]
    assert sm.draw(da, 4, 3).key.equals(sm.draw(db, 4, 3).key)


def test_a_column_named_row_is_the_tables_own(tmp_path, capsys):
    """`row` is a name like any other (vocab numbers the rows under a name of its own): hidden, it is kept; shown
    with --visible, it is shown; `Row` beside it is another column."""
    from vocab.cli import main

    path = tmp_path / "t.csv"
    path.write_text("id,system,judge,verdict,input,row,Row\ni1,s,j,PASSED,q1,r-one,R1\ni2,s,j,FAILED,q2,r-two,R2\n")
    assert main(["import", "table", str(path), "--run-dir", str(tmp_path / "a"), "--visible", "input"]) == 0
    assert [r["hidden"] for r in stored_items(tmp_path / "a")] == [{"row": "r-one", "Row": "R1"},
                                                                   {"row": "r-two", "Row": "R2"}]  # fmt: skip
    assert main(["import", "table", str(path), "--run-dir", str(tmp_path / "b"), "--visible", "input,row"]) == 0
    assert [r["visible"] for r in stored_items(tmp_path / "b")] == [{"input": "q1", "row": "r-one"},
                                                                    {"input": "q2", "row": "r-two"}]  # fmt: skip
    capsys.readouterr()


@pytest.mark.parametrize("header", ["case", "empty", "trailing comma", "line break"])
def test_a_header_pythons_reader_reads_imports(tmp_path, header):
    """Header names DuckDB's own header reading would not take: two names that differ only in case, an empty name,
    a trailing comma, a quoted name with a line break in a CRLF file. Each column keeps its name and its values,
    as Python's csv module reads the file."""
    extra = {"case": ("Note,note", "A,b"), "empty": ("x,", "1,2"), "trailing comma": ("x,", "1,"),
             "line break": ('"two\r\nlines"', "v")}[header]  # fmt: skip
    text = f"id,system,judge,verdict,input,{extra[0]}\r\n" + "".join(
        f"i{k},s,j,PASSED,q{k},{extra[1]}\r\n" for k in range(3)
    )
    path = tmp_path / "t.csv"
    path.write_bytes(text.encode())
    got = [r["hidden"] for r in stored_items(import_table(path, tmp_path / "d", visible=["input"]))]
    expected = [{k: v for k, v in r.items() if k not in ("id", "system", "judge", "verdict", "input")}
                for r in csv_rows(path)]  # fmt: skip
    assert got == expected and len(got) == 3 and all(got)


def test_paths_with_glob_characters_are_those_files(tmp_path, monkeypatch):
    """A table named `g[12].csv` or `m*.csv` is that file (not g1.csv, not every m…), a run directory `q[12]` is
    that directory (not q1), and a JSON Lines table staged where the temporary folder's name holds `[`."""
    import tempfile

    def table(name: str, n: int, verdict: str):
        return write_table(tmp_path / name, [{"id": f"i{k}", "system": "s", "judge": "j", "verdict": verdict,
                                              "input": "q"} for k in range(n)])  # fmt: skip

    table("g1.csv", 5, "FAILED"), table("mx.csv", 7, "FAILED")
    for name, n in (("g[12].csv", 2), ("m*.csv", 3)):
        d = import_table(table(name, n, "PASSED"), tmp_path / f"d-{n}", visible=["input"])
        assert load_dataset(d).cells.passed.tolist() == [n] and len(stored_items(d)) == n
    import_table(tmp_path / "g1.csv", tmp_path / "q1", visible=["input"])
    import_table(tmp_path / "g[12].csv", tmp_path / "q[12]", visible=["input"])
    data = load_dataset(tmp_path / "q[12]")
    assert data.cells.passed.tolist() == [2] and len(sm.draw(data, 5, 0).key) == 2
    odd = tmp_path / "tmp[1]"
    odd.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(odd))
    d = import_table(table("t.jsonl", 4, "PASSED"), tmp_path / "j", visible=["input"])
    assert len(stored_items(d)) == 4 and not list(odd.glob("vocab-import-*"))


def test_an_interrupted_import_leaves_no_staging_folder(tmp_path, monkeypatch):
    """Interrupted at its last step (the source's hash), an import removes what it staged and writes nothing."""
    import tempfile

    from vocab.imports import table

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def interrupted(path):
        raise KeyboardInterrupt

    monkeypatch.setattr(table, "sha256_file", interrupted)
    path = write_table(tmp_path / "t.csv", [{"id": "i", "system": "s", "judge": "j", "verdict": "PASSED",
                                             "input": "q"}])  # fmt: skip
    with pytest.raises(KeyboardInterrupt):
        import_table(path, tmp_path / "d", visible=["input"])
    assert not list(tmp_path.glob("vocab-import-*")) and not (tmp_path / "d").exists()


def test_a_folder_named_key_value_is_a_name_not_a_column(tmp_path):
    """`verdict=FAILED/` or `judge=gpt4/` on a path (a sweep's folders) adds no column to what DuckDB reads: the
    items keep their own verdicts, and a table's hidden fields are its own columns."""
    rows = [{"id": "1", "system": "s", "judge": "j", "verdict": "PASSED", "input": "q"},
            {"id": "2", "system": "s", "judge": "j", "verdict": "FAILED", "input": "q"}]  # fmt: skip
    (tmp_path / "verdict=PASSED").mkdir()
    table = write_table(tmp_path / "verdict=PASSED" / "t.csv", rows)
    d = import_table(table, tmp_path / "verdict=FAILED" / "judge=x" / "run", visible=["input"])
    data = load_dataset(d)
    assert data.cells.passed.tolist() == [1] and data.cells.failed.tolist() == [1]
    assert [(r["id"], r["verdict"], r["judge"], r["hidden"]) for r in judgment_rows(d)] == [
        ("1", "PASSED", "j", {}), ("2", "FAILED", "j", {})]  # fmt: skip
    assert [r["verdict"] for r in stored_items(d)] == ["PASSED", "FAILED"]


@pytest.mark.parametrize("char", ["\x1f", "\u202e"])
def test_a_criterion_named_with_a_control_character_is_one_line(tmp_path, capsys, char):
    """`criterion:a<U+001F>b` (or a right-to-left override) is refused at import, in one line, nothing written: it
    would print as another name, and U+001F joins the names of the per-check audit's streams."""
    from vocab.cli import main

    path = tmp_path / "t.csv"
    path.write_text(f"id,system,judge,verdict,input,criterion:a{char}b\ni1,s,j,PASSED,q,PASSED\n")
    assert main(["import", "table", str(path), "--run-dir", str(tmp_path / "d"), "--visible", "input"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"U+{ord(char):04X}" in err[0] and not (tmp_path / "d").exists()


@pytest.mark.parametrize("before", ["", "\n\n", 'i0,s,j,PASSED,"two\nlines"\n\n'])
def test_a_refused_csv_row_is_numbered_as_the_row_checks_number_it(tmp_path, capsys, before):
    """DuckDB counts a blank line as a record, and a quoted line break as none; the one line names the row as the
    row checks do (blank lines are not rows), so after blank lines and a two-line field it is still the data row."""
    from vocab.cli import main

    path = tmp_path / "t.csv"
    path.write_text(f"id,system,judge,verdict,input\n{before}i1,s,j,PASSED,q\ni2,s,j\n")
    rows_before = sum(1 for r in csv_rows(path) if r["id"] != "i2")
    assert main(["import", "table", str(path), "--run-dir", str(tmp_path / "d"), "--visible", "input"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"row {rows_before + 1}: fewer fields" in err[0], err
