"""Bad input to the command line: one line on stderr naming the problem, exit code 2, no traceback, and the files
of every directory it touches unchanged (hashed before and after). One case per input of the reliability campaign
this file covers; each builds its own directory from the committed reference run's sample and ratings."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pandas as pd
import pytest

from vocab.cli import main

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "data" / "runs" / "reference"


def tree_hashes(*dirs: Path) -> dict[str, str]:
    out = {}
    for d in dirs:
        for p in sorted(d.rglob("*")) if d.exists() else ():
            if p.is_file():
                out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.fixture
def run(tmp_path) -> Path:
    """A run directory with the reference run's results, sample and ratings (no packets, exams or analysis)."""
    d = tmp_path / "run"
    d.mkdir()
    for f in REFERENCE.glob("*.json*"):
        shutil.copy(f, d / f.name)
    shutil.copytree(REFERENCE / "calibration", d / "calibration")
    return d


@pytest.fixture
def table(tmp_path) -> Path:
    t = tmp_path / "t.csv"
    pd.DataFrame({"id": ["a", "b"], "system": "s", "judge": "j", "verdict": ["PASSED", "FAILED"], "input": "q",
                  "output": ["x", "y"], "target": "t"}).to_csv(t, index=False)  # fmt: skip
    return t


def refused(argv: list[str], capsys, watch: list[Path], words: str) -> None:
    before = tree_hashes(*watch)
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("vocab: error: "), err
    assert "Traceback" not in err and words in lines[0], err
    assert tree_hashes(*watch) == before


def test_a_ratings_import_never_replaces_the_script_raters_verdicts(run, tmp_path, capsys):
    sheet = pd.read_csv(run / "calibration" / "blind_sheet.csv")
    empty = tmp_path / "empty.csv"
    pd.DataFrame({"blind_id": sheet.blind_id, **{f"c{i}": "" for i in range(1, 13)}}).to_csv(empty, index=False)
    refused(["ratings", "import", str(empty), "--run-dir", str(run), "--rater", "script"], capsys, [run],
            "machine rater")  # fmt: skip
    # ... nor an LLM rater's
    rated = tmp_path / "rated.csv"
    pd.read_csv(run / "calibration" / "ratings_smollm2.csv").to_csv(rated, index=False)
    refused(["ratings", "import", str(rated), "--run-dir", str(run), "--rater", "gemma3"], capsys, [run],
            "machine rater")  # fmt: skip


@pytest.mark.parametrize("name", ["ann\n", "ann\r", "", "1ann", "ann bob", "a" * 41])
def test_a_rater_name_is_matched_whole(run, tmp_path, capsys, name):
    rated = tmp_path / "rated.csv"
    pd.read_csv(run / "calibration" / "ratings_smollm2.csv").to_csv(rated, index=False)
    refused(["ratings", "import", str(rated), "--run-dir", str(run), "--rater", name], capsys, [run], "rater name")


@pytest.mark.parametrize("visible", ["judge,output", "input,verdict", "system", "id,input", "criterion:x,input"])
def test_the_judges_columns_can_never_be_visible(table, tmp_path, capsys, visible):
    d = tmp_path / "d"
    refused(["import", "table", str(table), "--run-dir", str(d), "--visible", visible], capsys, [tmp_path / "d"],
            "can never be shown")  # fmt: skip
    assert not d.exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["import", "table", "{table}", "--run-dir", "{d}", "--visible", ","],
        ["import", "table", "{table}", "--run-dir", "{d}", "--visible", "input,,output"],
        ["import", "table", "{table}", "--run-dir", "{d}", "--visible", ""],
        ["import", "inspect", "{table}", "--run-dir", "{d}", "--pass-values", ","],
        ["import", "inspect", "{table}", "--run-dir", "{d}", "--fail-values", " , "],
    ],
)
def test_an_empty_list_option_is_refused(table, tmp_path, capsys, argv):
    d = tmp_path / "d"
    argv = [a.format(table=table, d=d) for a in argv]
    refused(argv, capsys, [d], "none empty")
    assert not d.exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["sample", "--run-dir", "{run}", "--seed", "-1"],
        ["coverage-grid", "--out", "{tmp}/g.csv", "--seed", "-3"],
        ["coverage", "--theta", ".5", "--q1", ".8", "--q0", ".8", "--seed", "-1"],
        ["levels", "--tiers", "1", "--per-tier", "1", "--seed", "-1"],
    ],
)
def test_a_negative_seed_is_refused_by_every_command(run, tmp_path, capsys, argv):
    """numpy's generators take no negative seed: one line, before any work (coverage-grid's workers raised it)."""
    argv = [a.format(run=run, tmp=tmp_path) for a in argv]
    refused(argv, capsys, [run, tmp_path], "--seed must be non-negative")


def test_a_table_saved_with_a_byte_order_mark_imports(tmp_path, table):
    """Spreadsheets write UTF-8 with a BOM: its first column is 'id', not '\\ufeffid'."""
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + table.read_bytes())
    assert main(["import", "table", str(bom), "--run-dir", str(tmp_path / "d")]) == 0
