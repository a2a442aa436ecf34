"""A judgments table held as Parquet parts imports and is counted on Dask, on a local cluster of two worker processes
reached at its address: the same items, counts, digest, labels and sample as the same rows imported as one file on
one machine (DuckDB), and the counts are the table's own (counted here with pandas). The piles numbered on the
cluster (DaskItems) draw the rows DuckDB's numbering draws. A refused part is named, and nothing is written."""

from __future__ import annotations

import dataclasses
import re

import dask.distributed  # noqa: F401 - make setup installs it: a broken install fails here, never skips
import numpy as np
import pandas as pd
import pytest

from vocab.datasets import dask_items
from vocab.datasets.dataset import item_files, judgment_rows, load_dataset, read_meta
from vocab.datasets.errors import CalibrationError
from vocab.imports.common import JudgmentImportError
from vocab.imports.parts import import_parts
from vocab.imports.table import import_table
from vocab.sampling import sample as sm

CUTS = (0, 170, 171, 420, 421, 760, 900)  # uneven parts, two of a single row


def _table(seed: int, n: int = 900, labels: bool = True) -> pd.DataFrame:
    """A judgments table with what makes order and counting matter: groups of several epochs, group names whose
    text order is not their number's, UNSCORED rows with and without a reason, a hidden column, and two criteria
    or people's labels of the verdict on some rows (some of them UNSCORED rows)."""
    rng = np.random.default_rng(seed)
    verdict = rng.choice(["PASSED", "FAILED", ""], size=n, p=[0.55, 0.4, 0.05])
    a = np.where(verdict == "PASSED", "PASSED", rng.choice(["PASSED", "FAILED"], size=n))
    b = np.where(verdict == "PASSED", "PASSED", np.where(a == "PASSED", "FAILED", rng.choice(["PASSED", "FAILED"],
                                                                                          size=n)))  # fmt: skip
    a, b = np.where(verdict == "", "", a), np.where(verdict == "", "", b)
    t = pd.DataFrame({
        "id": [f"q{k}" for k in range(n)],
        "group": [f"g{int(g)}" for g in rng.integers(0, n // 4, size=n)],
        "epoch": rng.integers(1, 4, size=n).astype(str),
        "system": rng.choice(["sys-a", "sys-b"], size=n),
        "judge": "judge-x",
        "verdict": verdict,
        "criterion:grounded": a,
        "criterion:polite": b,
        "unscored_reason": np.where((verdict == "") & (np.arange(n) % 2 == 0), "timeout", ""),
        "input": [f"question {k} é" for k in range(n)],
        "output": [f"answer {k}" for k in range(n)],
        "trace": [f"t-{k:05d}" for k in range(n)],
    })  # fmt: skip
    t["id"] = t["id"] + "-" + t.epoch  # (system, judge, id, epoch) once each
    if labels:  # labels are of the overall verdict: a table has them or criteria
        said = rng.random(n) < 0.05
        t = t.drop(columns=["criterion:grounded", "criterion:polite"])
        t["label"] = np.where(said, rng.choice(["passed", "failed"], size=n), "")
    return t


def _parts(t: pd.DataFrame, folder) -> list:
    """The table as parts under a `key=value` folder (a name, not a column), with Spark's `_SUCCESS` beside."""
    where = folder / "split=train"
    where.mkdir(parents=True)
    for k in range(len(CUTS) - 1):
        t.iloc[CUTS[k] : CUTS[k + 1]].to_parquet(where / f"part-{k:05d}.parquet", index=False)
    (folder / "_SUCCESS").write_text("")
    return sorted(where.glob("*.parquet"))


@pytest.fixture(scope="module")
def scheduler():
    """A local cluster of two one-thread worker processes, reached as a cluster is: by its scheduler's address."""
    from vocab.cluster import local_cluster

    with local_cluster(2) as cluster:
        yield cluster.scheduler_address


def test_parts_on_two_workers_hold_what_one_file_holds(tmp_path, scheduler):
    t = _table(0)
    t.to_parquet(tmp_path / "whole.parquet", index=False)
    _parts(t, tmp_path / "parts")
    one = import_table(tmp_path / "whole.parquet", tmp_path / "one", seed=3)
    many = import_parts(tmp_path / "parts", tmp_path / "many", seed=3, scheduler=scheduler)
    a, b = read_meta(one), read_meta(many)
    for k in ("rows", "digest", "cells", "reasons"):
        assert a["items"][k] == b["items"][k], k
    assert a["counts"] == b["counts"] and a["rubric"] == b["rubric"] and a["visible"] == b["visible"]
    assert judgment_rows(one) == judgment_rows(many)  # every item, numbered alike
    ran = b["items"]["imported_on"]
    assert len(ran["tasks_by_worker"]) == 2 and sum(ran["tasks_by_worker"].values()) == len(CUTS) - 1
    assert len(b["items"]["parts"]) == len(CUTS) - 1 and len(b["source"]["parts"]) == len(CUTS) - 1
    # the counts are the table's own
    scored = t[t.verdict != ""]
    assert b["counts"] == {"PASSED": int((t.verdict == "PASSED").sum()), "FAILED": int((t.verdict == "FAILED").sum()),
                           "UNSCORED": int((t.verdict == "").sum())}  # fmt: skip
    for system in ("sys-a", "sys-b"):
        cell = b["items"]["cells"][f"{system}__judge-x"]
        s = scored[scored.system == system]
        assert cell["groups"] == s.group.nunique()
        assert cell["failed_groups"] == s[s.verdict == "FAILED"].group.nunique()
    unscored = t[t.verdict == ""]
    assert b["items"]["reasons"] == {"timeout": int((unscored.unscored_reason == "timeout").sum()),
                                     "unscored": int((unscored.unscored_reason == "").sum())}  # fmt: skip
    # people's labels: the same sample, the same files
    for name in ("key.csv", "blind_sheet.csv", "ratings_person.csv"):
        assert (one / "calibration" / name).read_bytes() == (many / "calibration" / name).read_bytes(), name
    labelled = t[(t.label != "") & (t.verdict != "")]
    assert len(pd.read_csv(many / "calibration" / "key.csv")) == len(labelled) > 0


@pytest.mark.parametrize("seed", [0, 5])
def test_piles_numbered_on_the_cluster_draw_the_rows_duckdb_draws(tmp_path, scheduler, seed):
    from dask.distributed import Client

    t = _table(seed + 1, labels=False)
    _parts(t, tmp_path / "parts")
    d = import_parts(tmp_path / "parts", tmp_path / "d", scheduler=scheduler)
    data = load_dataset(d)
    paths = [str(p) for p in item_files(d, read_meta(d)["items"])]
    with Client(scheduler):
        on_dask = dataclasses.replace(data, items=dask_items.DaskItems(dask_items.read_parts(paths)))
        for per_pile, sizes in ((10, None), (1, {"sys-a__judge-x": (6, 2), "sys-b__judge-x": (2, 9)})):
            here, there = sm.draw(data, per_pile, seed, sizes=sizes), sm.draw(on_dask, per_pile, seed, sizes=sizes)
            assert len(here.key) > 0
            pd.testing.assert_frame_equal(here.key, there.key)
            pd.testing.assert_frame_equal(here.sheet, there.sheet)
        # a pilot extended: the taken rows are left out of the piles alike
        key = here.key
        passes = pd.Series(np.arange(len(key)) % 3 > 0, index=key.blind_id, dtype=float)
        got = [sm.extend_sample(x, key, passes, 12, seed, data.visible, set(key.blind_id)) for x in (data, on_dask)]
        pd.testing.assert_frame_equal(got[0][0].key, got[1][0].key)
        assert len(got[0][0].key) > 0


def test_the_summary_on_the_cluster_is_duckdbs(tmp_path, scheduler):
    """dask_items.summarize (a groupby, and MD5 in Python) and items.summarize (SQL in DuckDB) over the same parts."""
    from dask.distributed import Client

    from vocab.datasets import items

    t = _table(9, labels=False)
    t.loc[t.system == "sys-b", "verdict"] = ""  # a cell of UNSCORED items only
    t.loc[t.system == "sys-b", ["criterion:grounded", "criterion:polite"]] = ""
    _parts(t, tmp_path / "parts")
    d = import_parts(tmp_path / "parts", tmp_path / "d", scheduler=scheduler)
    paths = [str(p) for p in item_files(d, read_meta(d)["items"])]
    con = items.connect()
    in_duckdb = items.summarize(con, "read_parquet([" + ", ".join(items.source_literal(p) for p in paths) + "])")
    with Client(scheduler):
        on_dask = dask_items.summarize(dask_items.read_parts(paths))
    assert on_dask == in_duckdb and on_dask["cells"]["sys-b__judge-x"]["passed"] == 0


def test_sample_on_the_cluster_by_the_command(tmp_path, scheduler, capsys):
    from vocab.cli import main

    t = _table(4, labels=False)
    t.to_parquet(tmp_path / "whole.parquet", index=False)
    _parts(t, tmp_path / "parts")
    assert main(["import", "table", str(tmp_path / "parts"), "--run-dir", str(tmp_path / "many"),
                 "--scheduler", scheduler]) == 0  # fmt: skip
    assert main(["import", "table", str(tmp_path / "whole.parquet"), "--run-dir", str(tmp_path / "one")]) == 0
    assert main(["sample", "--run-dir", str(tmp_path / "many"), "--scheduler", scheduler, "--seed", "2"]) == 0
    assert main(["sample", "--run-dir", str(tmp_path / "one"), "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert f"the piles numbered on {scheduler}, 2 workers" in out
    for name in ("key.csv", "blind_sheet.csv", "blind_sheet.jsonl"):
        assert (tmp_path / "one/calibration" / name).read_bytes() == (tmp_path / "many/calibration" / name).read_bytes()


def _refused(tmp_path, scheduler) -> str:
    with pytest.raises(JudgmentImportError) as e:
        import_parts(tmp_path / "parts", tmp_path / "d", scheduler=scheduler)
    assert not (tmp_path / "d").exists()  # nothing written, not even the folder
    return str(e.value)


def test_a_refused_row_is_named_by_its_part_and_row(tmp_path, scheduler):
    t = _table(2, labels=False)
    t.loc[CUTS[4] + 4, "verdict"] = "maybe"  # part 4's 5th row
    t.loc[CUTS[5] + 1, "verdict"] = "perhaps"  # and a later part's: the table's first refused row is named
    parts = _parts(t, tmp_path / "parts")
    said = _refused(tmp_path, scheduler)
    assert said.startswith(f"{parts[4]}: row 5, column 'verdict': 'maybe'"), said


def test_an_item_in_two_parts_is_named_in_both(tmp_path, scheduler):
    t = _table(2, labels=False)
    t.loc[CUTS[4] + 3, ["system", "id", "epoch"]] = t.loc[CUTS[2] + 10, ["system", "id", "epoch"]].tolist()
    parts = _parts(t, tmp_path / "parts")
    said = _refused(tmp_path, scheduler)
    assert said == (f"{parts[4]}: row 4, column 'id': {t.loc[CUTS[2] + 10, 'id']!r} repeats {parts[2]}: row 11 "
                    "(same system, judge, epoch)")  # fmt: skip


def test_parts_that_are_not_one_table_are_named(tmp_path, scheduler):
    t = _table(2, labels=False)
    parts = _parts(t, tmp_path / "parts")
    t.iloc[:5].drop(columns="trace").to_parquet(parts[2], index=False)
    assert _refused(tmp_path, scheduler) == f"{parts[2]}: its columns are not those of {parts[0]} (column 'trace')"
    parts[2].write_text("id,verdict\nq,PASSED\n")
    assert _refused(tmp_path, scheduler).startswith(f"{parts[2]}: not a Parquet file (")


def test_a_folder_without_parts_or_a_wrong_scheduler_is_one_line(tmp_path, capsys):
    from vocab.cli import main

    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "_SUCCESS").write_text("")
    assert main(["import", "table", str(tmp_path / "parts"), "--run-dir", str(tmp_path / "d")]) == 2
    pd.DataFrame({"id": ["q"], "system": ["s"], "judge": ["j"], "verdict": ["PASSED"]}).to_parquet(tmp_path / "t.pq")
    assert main(["import", "table", str(tmp_path / "t.pq"), "--run-dir", str(tmp_path / "d"), "--scheduler",
                 "local"]) == 2  # fmt: skip
    assert main(["import", "table", str(tmp_path / "parts"), "--run-dir", str(tmp_path / "d"), "--scheduler",
                 "http://127.0.0.1:1"]) == 2  # fmt: skip
    assert main(["import", "table", str(tmp_path / "parts"), "--run-dir", str(tmp_path / "d"), "--scheduler",
                 "tcp://127.0.0.1:9", "--jobs", "2"]) == 2  # fmt: skip
    err = [line for line in capsys.readouterr().err.splitlines() if line]
    assert err == [
        f"vocab: error: {tmp_path / 'parts'}: no .parquet files (a table held as Parquet parts)",
        f"vocab: error: --scheduler, --jobs: for a folder of Parquet parts; {tmp_path / 't.pq'} is one file "
        "(imported on this machine)",
        "vocab: error: --scheduler: an address such as tcp://HOST:8786 (tcp only), or local; got 'http://127.0.0.1:1'",
        "vocab: error: --jobs: a local cluster's workers (1 or more), with --scheduler local only",
    ]
    assert not (tmp_path / "d").exists()


def test_the_same_import_again_keeps_its_parts_repairs_a_damaged_one_and_takes_changed_labels(tmp_path, scheduler):
    """As the one-file import: the same parts again change nothing and leave no staging folder; a damaged part is
    written anew; labels changed in the source are refused as another sample, as one file's are."""
    t = _table(6)
    _parts(t, tmp_path / "parts")
    d = import_parts(tmp_path / "parts", tmp_path / "d", scheduler=scheduler)
    before = sorted(p.relative_to(d).as_posix() for p in d.rglob("*"))
    meta = (d / "dataset.json").read_bytes()
    assert import_parts(tmp_path / "parts", d, scheduler=scheduler) == d
    assert sorted(p.relative_to(d).as_posix() for p in d.rglob("*")) == before  # no .items.*.tmp left
    assert (d / "dataset.json").read_bytes() == meta
    (d / "items" / "part-00002.parquet").write_bytes(b"damaged")
    with pytest.raises(Exception, match="not the file dataset.json describes"):
        load_dataset(d)
    import_parts(tmp_path / "parts", d, scheduler=scheduler)
    assert len(judgment_rows(d)) == len(t)  # read again, whole
    # labels changed in the source: the parts' import answers as the one-file import answers the same change
    t.to_parquet(tmp_path / "first.parquet", index=False)
    one = import_table(tmp_path / "first.parquet", tmp_path / "one")
    said = t[(t.label != "") & (t.verdict != "")].index[0]
    t.loc[said, "label"] = "failed" if t.loc[said, "label"] == "passed" else "passed"  # one label's value
    for k, (table, folder) in enumerate(((t, "changed"), (t.assign(label=t.label.where(t.label != "", "passed")),
                                                          "more"))):  # fmt: skip
        _parts(table, tmp_path / folder)
        table.to_parquet(tmp_path / f"{folder}.parquet", index=False)
        outcomes = []
        for go in (lambda f=folder: import_parts(tmp_path / f, d, scheduler=scheduler),
                   lambda f=folder: import_table(tmp_path / f"{f}.parquet", one)):  # fmt: skip
            try:
                go()
                outcomes.append("imported")
            except CalibrationError as e:
                outcomes.append(str(e).replace(str(d), "D").replace(str(one), "D"))
        assert outcomes[0] == outcomes[1] and outcomes[0] == ("imported" if k == 0 else outcomes[1])
        if k == 0:  # the changed label is the person's now, the earlier file kept
            for name in ("ratings_person.csv", "key.csv"):
                assert (d / "calibration" / name).read_bytes() == (one / "calibration" / name).read_bytes()
            assert len(list((d / "calibration" / "history").iterdir())) == 1
        else:
            assert "another sample" in outcomes[0]


def test_parts_named_as_dask_numbers_them_and_empty_ones_are_the_tables_order(tmp_path, scheduler):
    """Dask writes part.0 ... part.11 (and may write parts with no rows): read in their numbers' order, they are
    the table the one-file import numbers alike."""
    t = _table(8, labels=False)
    folder = tmp_path / "dask"
    folder.mkdir()
    cuts = np.linspace(0, len(t), 12).astype(int).tolist()
    for k in range(11):
        t.iloc[cuts[k] : cuts[k + 1]].to_parquet(folder / f"part.{k}.parquet", index=False)
    t.iloc[:0].to_parquet(folder / "part.11.parquet", index=False)  # no rows
    t.to_parquet(tmp_path / "whole.parquet", index=False)
    many = import_parts(folder, tmp_path / "many", scheduler=scheduler)
    one = import_table(tmp_path / "whole.parquet", tmp_path / "one")
    assert read_meta(many)["items"]["digest"] == read_meta(one)["items"]["digest"]
    assert judgment_rows(many) == judgment_rows(one)


def test_what_an_import_of_parts_refuses_up_front(tmp_path, scheduler, capfd):
    """A run directory inside the table's folder, parts of one table in another column order or of another type,
    a link to a missing part, a leftover items/ without dataset.json: one line each, nothing written. A refused
    row is one line on the terminal, the workers' logs included."""
    from vocab.cli import main

    t = _table(3, labels=False)
    parts = _parts(t, tmp_path / "parts")
    with pytest.raises(JudgmentImportError, match="inside the table's folder"):
        import_parts(tmp_path / "parts", tmp_path / "parts" / "out", scheduler=scheduler)
    cols = list(t.columns)
    t.iloc[CUTS[1] : CUTS[2]][cols[::-1]].to_parquet(parts[1], index=False)
    assert "in another order" in _refused(tmp_path, scheduler)
    t.iloc[CUTS[1] : CUTS[2]].assign(trace=1.5).to_parquet(parts[1], index=False)
    assert re.search(r"column 'trace' is double here and \w*string in .*one schema$", _refused(tmp_path, scheduler))
    t.iloc[CUTS[1] : CUTS[2]].to_parquet(parts[1], index=False)
    parts[2].unlink()
    parts[2].symlink_to(tmp_path / "gone.parquet")
    assert "a part of the table is missing" in _refused(tmp_path, scheduler)
    t.iloc[CUTS[2] : CUTS[3]].to_parquet(parts[2].with_name("x.parquet"), index=False)
    parts[2].unlink()
    parts[2].with_name("x.parquet").rename(parts[2])
    (tmp_path / "d" / "items").mkdir(parents=True)
    with pytest.raises(Exception, match="without dataset.json"):
        import_parts(tmp_path / "parts", tmp_path / "d", scheduler=scheduler)
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["items"]
    (tmp_path / "d" / "items").rmdir()
    bad = t.copy()
    bad.loc[CUTS[4] + 1, "verdict"] = "maybe"
    bad.iloc[CUTS[4] : CUTS[5]].to_parquet(parts[4], index=False)
    capfd.readouterr()
    assert main(["import", "table", str(tmp_path / "parts"), "--run-dir", str(tmp_path / "d"), "--scheduler",
                 scheduler]) == 2  # fmt: skip
    err = [line for line in capfd.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and err[0].startswith(f"vocab: error: {parts[4]}: row 2, column 'verdict'"), err
