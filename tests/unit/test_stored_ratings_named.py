"""A damaged stored ratings file is refused in one line naming it and what is wrong in it (issue 75, item 10): the
user handed nothing in, so "ratings rejected" alone does not say which file to look at."""

from __future__ import annotations

import pytest

from tests.unit.test_labels_commit import _table
from vocab.cli import main


def _cut(text: str) -> str:
    """Cut mid-row: the last row kept has its id and a comma, and has lost its label."""
    lines = text.splitlines(True)
    kept = lines[: int(len(lines) * 0.6)]
    return "".join(kept) + lines[len(kept)].split(",")[0] + ","


@pytest.mark.parametrize(
    ("damage", "problem"),
    [(_cut, "expected PASSED or FAILED"), (lambda t: t + "bffffff,PASSED\n", "unknown ids: bffffff")],
    ids=["cut mid-row", "an id of another sample"],
)
@pytest.mark.parametrize("command", [["audit"], ["gate", "--min-rate", "0.1"], ["report"]])
def test_a_damaged_stored_ratings_file_is_named(tmp_path, capsys, damage, problem, command):
    d = tmp_path / "d"
    assert main(["import", "table", str(_table(tmp_path / "t.csv")), "--run-dir", str(d)]) == 0
    f = d / "calibration" / "ratings_ann.csv"
    f.write_text(damage(f.read_text()))
    capsys.readouterr()
    assert main([command[0], str(d), *command[1:]]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert str(f) in err and problem in err, err


def _handin(d, rows: list[str]) -> str:
    """The form's ratings.csv of bob for the dataset at ``d`` (its rater and sample named), rating ``rows``."""
    import hashlib

    sha = hashlib.sha256((d / "calibration" / "blind_sheet.jsonl").read_bytes()).hexdigest()
    return "blind_id,verdict,rater,sample_sha256\n" + "".join(f"{b},PASSED,bob,{sha}\n" for b in rows)


@pytest.mark.parametrize("shape", ["header only", "pasted onto itself"])
def test_an_empty_or_doubled_hand_in_is_not_called_another_samples(tmp_path, capsys, shape):
    """Issue 75, item 11: a hand-in with no rows, or a file pasted onto itself (its header a row again), was refused
    as "rated on another sample"; each is now named for what it is, and nothing is stored."""
    import csv

    d = tmp_path / "d"
    assert main(["import", "table", str(_table(tmp_path / "t.csv")), "--run-dir", str(d)]) == 0
    ids = [r["blind_id"] for r in csv.DictReader((d / "calibration" / "key.csv").open())]
    text = _handin(d, []) if shape == "header only" else _handin(d, ids) * 2
    (tmp_path / "ratings.csv").write_text(text)
    capsys.readouterr()
    argv = ["ratings", "import", str(tmp_path / "ratings.csv"), "--run-dir", str(d), "--rater", "bob", "--partial"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "another sample" not in err
    assert ("no rated rows" if shape == "header only" else f"row {len(ids) + 1} repeats the header") in err, err
    assert not (d / "calibration" / "ratings_bob.csv").exists()


@pytest.mark.parametrize(
    "argv", [["--min-rate", "0.1"], ["--a", "sys0__j", "--b", "sys1__j", "--min-difference", "-1"]]
)
def test_the_gate_waits_for_no_writer(tmp_path, capsys, argv):
    """Issue 75, item 11: `vocab gate` takes the directory's lock as compare, audit and report do: while another
    command writes (an import), it says so in one line instead of reading a half-written directory."""
    from vocab.records import dir_lock

    d = tmp_path / "d"
    assert main(["import", "table", str(_table(tmp_path / "t.csv")), "--run-dir", str(d)]) == 0
    capsys.readouterr()
    with dir_lock(d):
        assert main(["gate", str(d), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "another vocab command is writing" in err, err
