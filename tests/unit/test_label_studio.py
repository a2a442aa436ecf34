"""The Label Studio round trip: `vocab packet --format label-studio` makes a project of a rater's blind sheet, and
`vocab ratings import` reads the JSON export a real Label Studio made of it (data/label_studio/, see
tests/label_studio_task.py): the ratings that went in come back, exactly, and a wrong hand-in is one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from vocab.cli import main

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "data" / "runs" / "reference"
EXPORT = ROOT / "data" / "label_studio" / "reference_ls-demo.json"


@pytest.fixture
def run(tmp_path) -> Path:
    d = tmp_path / "reference"
    shutil.copytree(REFERENCE, d, ignore=shutil.ignore_patterns("packets", "report", "figures", "exams"))
    return d


def test_the_project_holds_the_sheet_in_the_raters_order_and_nothing_of_the_judge(run, capsys):
    assert main(["packet", "--run-dir", str(run), "--rater", "ls-demo", "--format", "label-studio"]) == 0
    out = run / "packets" / "ls-demo-label-studio"
    tasks = json.loads((out / "tasks.json").read_text())
    sheet = [json.loads(line) for line in (run / "calibration" / "blind_sheet.jsonl").read_text().splitlines()]
    assert {t["data"]["blind_id"] for t in tasks} == {r["blind_id"] for r in sheet}
    fields = {"blind_id", *(f"f_{k}" for k in sheet[0] if k != "blind_id"), "vocab_rater", "vocab_sample_sha256"}
    assert all(set(t["data"]) == fields for t in tasks)  # the sheet's fields only, and who rates which sample
    text = (out / "tasks.json").read_text() + (out / "label_config.xml").read_text()
    assert "critic" not in text and "gemma3" not in text and "smollm2" not in text and "pile" not in text
    # the same order as the rater's form packet
    assert main(["packet", "--run-dir", str(run), "--rater", "ls-demo"]) == 0
    form = [
        json.loads(line)["blind_id"] for line in (run / "packets" / "ls-demo" / "sheet.jsonl").read_text().splitlines()
    ]
    assert [t["data"]["blind_id"] for t in tasks] == form
    config = (out / "label_config.xml").read_text()
    assert all(f'<Choices name="c{i}"' in config for i in range(1, 13))
    assert 'name="c1" toName="f_answer_key" choice="single" required="false"' in config  # check 1 may be n/a
    assert '<Text name="f_sentence" value="$f_sentence"/>' in config
    assert (out / "rubric.txt").read_text() == (run / "packets" / "ls-demo" / "rubric.txt").read_text()


def test_label_studios_export_comes_back_as_the_ratings_that_went_in(run, capsys):
    export = json.loads(EXPORT.read_text())
    annotated = [t for t in export if t.get("annotations")]
    assert len(export) == len(annotated) == 20  # Label Studio exports the annotated tasks (its default)
    capsys.readouterr()
    assert main(["ratings", "import", str(EXPORT), "--run-dir", str(run), "--rater", "ls-demo"]) == 2
    err = capsys.readouterr().err
    assert "ids of the sheet not rated" in err and "--partial" in err
    assert main(["ratings", "import", str(EXPORT), "--run-dir", str(run), "--rater", "ls-demo", "--partial"]) == 0
    got = pd.read_csv(run / "calibration" / "ratings_ls-demo.csv", dtype=str, keep_default_na=False)
    went_in = pd.read_csv(REFERENCE / "calibration" / "ratings_gemma3.csv", dtype=str, keep_default_na=False)
    went_in = went_in[went_in.blind_id.isin({t["data"]["blind_id"] for t in annotated})]
    assert len(got) == 20
    key = ["blind_id", *(f"c{i}" for i in range(1, 13))]
    pd.testing.assert_frame_equal(got[key].sort_values("blind_id").reset_index(drop=True),
                                  went_in[key].sort_values("blind_id").reset_index(drop=True))  # fmt: skip


def _refused(argv, capsys, words):
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err


def test_an_export_under_another_raters_name_is_refused(run, capsys):
    _refused(["ratings", "import", str(EXPORT), "--run-dir", str(run), "--rater", "ann", "--partial"], capsys,
             "was rated by ls-demo, not ann")  # fmt: skip
    assert not (run / "calibration" / "ratings_ann.csv").exists()


def test_an_export_of_two_annotators_is_refused(run, tmp_path, capsys):
    export = json.loads(EXPORT.read_text())
    task = next(t for t in export if t.get("annotations"))
    task["annotations"].append({**task["annotations"][0], "id": 10**6, "completed_by": 99})
    f = tmp_path / "two.json"
    f.write_text(json.dumps(export))
    _refused(["ratings", "import", str(f), "--run-dir", str(run), "--rater", "ls-demo", "--partial"], capsys,
             "annotations by 2 annotators")  # fmt: skip
    assert not (run / "calibration" / "ratings_ls-demo.csv").exists()


@pytest.mark.parametrize(
    "text, words",
    [("[1, 2]", "not a Label Studio JSON export"), ('[{"data": {"x": 1}}]', "task 1 has no blind_id"),
     ("[" * 100_000, "nested too deep"), ("[{", "not JSON")],
)  # fmt: skip
def test_a_damaged_export_is_one_line(run, tmp_path, capsys, text, words):
    f = tmp_path / "export.json"
    f.write_text(text)
    _refused(["ratings", "import", str(f), "--run-dir", str(run), "--rater", "ls-demo", "--partial"], capsys, words)


def test_a_project_handed_out_keeps_its_order_under_another_seed(run, capsys):
    """`--seed 5` rewrote tasks.json of a project already made (exit 0, its rows in a new order); the form's packet
    refuses it. The same seed again changes nothing."""
    argv = ["packet", "--run-dir", str(run), "--rater", "ann", "--format", "label-studio"]
    assert main(argv) == 0
    tasks = run / "packets" / "ann-label-studio" / "tasks.json"
    before = tasks.read_bytes()
    capsys.readouterr()
    assert main([*argv, "--seed", "5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "another --seed" in err[0], err
    assert tasks.read_bytes() == before
    assert main(argv) == 0 and tasks.read_bytes() == before
