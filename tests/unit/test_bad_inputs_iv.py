"""Reliability IV (campaign 4): the causes behind 55 bad inputs on the newer commands, one test a cause. Each bad
input ends in one line on stderr, exit 2, no traceback and nothing written (the directories it touches hashed before
and after); each failed on the code before its fix. The files come from the real tools (data/mlflow, data/label_studio,
the reference run), changed the way the campaign changed them."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tracemalloc
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest

from tests.stored import stored_items
from tests.unit import test_bad_inputs as base
from tests.unit.test_bad_inputs import ROOT, _packet, refused
from vocab.cli import main

run = base.run  # the fixture: a copy of the reference run's results, sample and ratings
MLFLOW = ROOT / "data" / "mlflow" / "traces.json"
LABEL_STUDIO = ROOT / "data" / "label_studio" / "reference_ls-demo.json"  # ls-demo's export of the reference run


@contextmanager
def deadline(seconds: int):
    """A command that hangs fails the test instead of hanging the suite."""

    def hung(*_):
        raise TimeoutError(f"no answer within {seconds} s")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@contextmanager
def immutable(path: Path):
    """``chattr +i``: nothing can be made in (or changed of) ``path``, root included (the suite runs as root)."""
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode:
        pytest.fail(f"chattr +i {path} failed: this test needs an ext4-like file system and root")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def _mlflow(tmp_path: Path, doc: dict, name: str = "t.json") -> Path:
    f = tmp_path / name
    f.write_text(json.dumps(doc))
    return f


def _judge_feedback(t: dict) -> dict:
    return next(a for a in t["info"]["assessments"] if a["source"]["source_type"] == "LLM_JUDGE")


def _person(t: dict, source_id, value: bool) -> dict:
    a = {**_judge_feedback(t), "assessment_id": f"a-{source_id}-{t['info']['trace_id'][-6:]}",
         "source": {"source_type": "HUMAN", **({} if source_id is None else {"source_id": source_id})},
         "feedback": {"value": value}, "rationale": None}  # fmt: skip
    t["info"]["assessments"].append(a)
    return a


# --- the one reader: what is not a regular file, and what parses past memory -----------------------------------


def test_a_ratings_file_that_is_no_regular_file_is_refused_at_once(run, tmp_path, capsys):
    """A FIFO nobody writes to hung the import; a link to /dev/zero grew past 3 GiB; a folder was a traceback."""
    fifo = tmp_path / "r.csv"
    os.mkfifo(fifo)
    zero = tmp_path / "z.csv"
    zero.symlink_to("/dev/zero")
    folder = tmp_path / "e.json"
    folder.mkdir()
    for path, words in ((fifo, "named pipe"), (zero, "character device"), (folder, "a directory")):
        with deadline(20):
            refused(["ratings", "import", str(path), "--run-dir", str(run), "--rater", "ann"], capsys, [run], words)


def test_a_file_that_is_a_folder_is_said_to_be_one(tmp_path, capsys):
    for kind in ("mlflow", "deepeval"):
        (tmp_path / f"{kind}.json").mkdir()
        refused(["import", kind, str(tmp_path / f"{kind}.json"), "--run-dir", str(tmp_path / "d")], capsys,
                [tmp_path], "a directory, not a")  # fmt: skip


def test_json_cost_bounds_what_parsing_holds():
    """The estimate a JSON file is refused by is an upper bound of what json.loads allocates (tracemalloc, not the
    estimate's own arithmetic), on the shapes that cost most per byte and on a file MLflow wrote."""
    from vocab.files import json_cost

    shapes = {
        "empty objects": b"[" + b",".join([b"{}"] * 200_000) + b"]",
        "empty lists": b"[" + b",".join([b"[]"] * 200_000) + b"]",
        "small numbers": b"[" + b",".join(str(i).encode() for i in range(200_000)) + b"]",
        "floats": b"[" + b",".join(b"0.5" for _ in range(200_000)) + b"]",
        "objects with keys": json.dumps([{"a": i, "b": "x", f"k{i}": None} for i in range(50_000)]).encode(),
        "short strings": json.dumps([str(i) for i in range(200_000)]).encode(),
        "strings with an emoji": json.dumps(["x" * 40 + "\U0001f600"] * 20_000, ensure_ascii=False).encode(),
        "strings past latin-1": json.dumps(["x" * 40 + "\u0416"] * 20_000, ensure_ascii=False).encode(),
        "escaped emoji": json.dumps(["x" * 40 + "\U0001f600"] * 20_000).encode(),
        "mlflow traces": MLFLOW.read_bytes(),
    }
    for name, data in shapes.items():
        tracemalloc.start()
        parsed = json.loads(data)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        del parsed
        assert json_cost(data) >= peak, (name, json_cost(data), peak)
        assert json_cost(data) <= 20 * peak, (name, "so loose it would refuse files that fit", json_cost(data), peak)


def test_a_json_file_small_on_disk_but_huge_once_parsed_is_refused_before_it_is_parsed(tmp_path, capsys):
    """22 M empty objects in 64 MiB parsed to 1.7 GiB; 5 M in 15 MB would parse to some 400 MiB (their cost: 650)."""
    spans = b",".join([b"{}"] * 5_000_000)
    body = b'{"traces": [{"info": {"trace_id": "tr-1"}, "data": {"spans": [' + spans + b"]}}]}"
    (tmp_path / "t.json").write_bytes(body)
    (tmp_path / "r.json").write_bytes(b'{"testCases": [{"name": "q", "context": [' + spans + b"]}]}")
    refused(["import", "mlflow", str(tmp_path / "t.json"), "--run-dir", str(tmp_path / "d")], capsys, [tmp_path],
            "once parsed")  # fmt: skip
    refused(["import", "deepeval", str(tmp_path / "r.json"), "--run-dir", str(tmp_path / "d")], capsys, [tmp_path],
            "once parsed")  # fmt: skip
    refused(["audit", str(tmp_path / "t.json"), "--out", str(tmp_path / "d")], capsys, [tmp_path], "once parsed")


def test_an_unclosed_string_of_escapes_is_refused_at_once(tmp_path, capsys):
    """The estimate's first pattern scanned to the file's end from every escaped quote: 200 KB took minutes."""
    (tmp_path / "q.json").write_bytes(b'{"a": "' + b'\\"' * 100_000)
    with deadline(20):
        refused(["import", "mlflow", str(tmp_path / "q.json"), "--run-dir", str(tmp_path / "d")], capsys, [tmp_path],
                "not JSON")  # fmt: skip


def test_a_config_that_is_no_regular_file_is_refused(tmp_path, capsys):
    os.mkfifo(tmp_path / "c.toml")
    with deadline(20):
        refused(["serve", "--dry-run", "--config", str(tmp_path / "c.toml")], capsys, [tmp_path], "named pipe")
    refused(["serve", "--dry-run", "--config", "/dev/zero"], capsys, [tmp_path], "character device")


def test_a_sheet_with_mac_line_ends_still_imports(run, tmp_path):
    """Excel's "CSV (Macintosh)" ends lines with CR alone: the width check reads them as lines too."""
    sheet = (run / "calibration" / "ratings_smollm2.csv").read_text().replace("\n", "\r")
    (tmp_path / "mac.csv").write_text(sheet, newline="")
    assert main(["ratings", "import", str(tmp_path / "mac.csv"), "--run-dir", str(run), "--rater", "ann"]) == 0
    assert (run / "calibration" / "ratings_ann.csv").read_text() == (
        run / "calibration" / "ratings_smollm2.csv"
    ).read_text()


def test_a_ratings_csv_too_wide_is_refused_before_pandas_reads_it(run, tmp_path, capsys):
    wide = tmp_path / "r.csv"
    wide.write_text(",".join(f"x{i}" for i in range(5_000)) + "\n")
    refused(["ratings", "import", str(wide), "--run-dir", str(run), "--rater", "ann"], capsys, [run], "5,000 columns")


def test_json_nested_deep_inside_a_trace_is_kept_as_text(tmp_path, capsys):
    """A span's inputs (a string of JSON) nested 50,000 deep were a RecursionError: the input is that text."""
    doc = json.loads(MLFLOW.read_text())
    t = doc["traces"][0]
    deep = "[" * 50_000 + "]" * 50_000
    t["info"]["trace_metadata"]["mlflow.traceInputs"] = deep
    t["data"] = {"spans": []}
    assert main(["import", "mlflow", str(_mlflow(tmp_path, doc)), "--run-dir", str(tmp_path / "d")]) == 0
    rows = stored_items(tmp_path / "d")
    assert next(r for r in rows if r["id"] == t["info"]["trace_id"])["visible"]["input"] == deep


# --- the one writer: read-only places, folders where files go, links out of the run ------------------------------


def test_a_read_only_calibration_folder_is_one_line_and_nothing_written(run, tmp_path, capsys):
    rated = tmp_path / "rated.csv"
    pd.read_csv(run / "calibration" / "ratings_smollm2.csv").to_csv(rated, index=False)
    with immutable(run / "calibration"):
        refused(["ratings", "import", str(rated), "--run-dir", str(run), "--rater", "ann"], capsys, [run],
                "cannot be written")  # fmt: skip
    (run / "packets").mkdir()
    with immutable(run / "packets"):
        refused(["packet", "--run-dir", str(run), "--rater", "ann"], capsys, [run], "cannot be written")


def test_a_folder_or_file_where_the_other_goes_is_named(run, tmp_path, capsys):
    rated = tmp_path / "rated.csv"
    pd.read_csv(run / "calibration" / "ratings_smollm2.csv").to_csv(rated, index=False)
    (run / "calibration" / "ratings_ann.csv").mkdir()
    refused(["ratings", "import", str(rated), "--run-dir", str(run), "--rater", "ann"], capsys, [run],
            "is a folder where vocab writes a file")  # fmt: skip
    (run / "calibration" / "ratings_ann.csv").rmdir()
    assert main(["ratings", "import", str(rated), "--run-dir", str(run), "--rater", "ann"]) == 0
    (run / "calibration" / "history").write_text("mine")
    changed = pd.read_csv(rated, dtype=str, keep_default_na=False)
    changed.loc[0, "c5"] = "FAILED" if changed.loc[0, "c5"] != "FAILED" else "PASSED"
    changed.to_csv(rated, index=False)
    capsys.readouterr()
    refused(["ratings", "import", str(rated), "--run-dir", str(run), "--rater", "ann"], capsys, [run],
            "history is a file where vocab keeps a folder")  # fmt: skip


def test_nothing_is_written_through_a_link_out_of_the_run(run, tmp_path, capsys):
    outside = tmp_path / "outside"
    outside.mkdir()
    rated = tmp_path / "rated.csv"
    pd.read_csv(run / "calibration" / "ratings_smollm2.csv").to_csv(rated, index=False)
    assert main(["ratings", "import", str(rated), "--run-dir", str(run), "--rater", "ann"]) == 0
    (run / "calibration" / "history").symlink_to(outside)
    changed = pd.read_csv(rated, dtype=str, keep_default_na=False)
    changed.loc[0, "c5"] = "FAILED" if changed.loc[0, "c5"] != "FAILED" else "PASSED"
    changed.to_csv(rated, index=False)
    capsys.readouterr()
    refused(["ratings", "import", str(rated), "--run-dir", str(run), "--rater", "ann"], capsys, [run, outside],
            "is a link")  # fmt: skip
    (run / "packets").mkdir()
    (run / "packets" / "bob").symlink_to(outside)
    refused(["packet", "--run-dir", str(run), "--rater", "bob"], capsys, [run, outside], "is a link")
    (run / "packets" / "eve").mkdir()
    (run / "packets" / "eve" / "sheet.jsonl").symlink_to(outside / "sheet.jsonl")  # a link inside the folder
    refused(["packet", "--run-dir", str(run), "--rater", "eve"], capsys, [run, outside], "is a link")
    assert not any(outside.iterdir())
    # ... nor a rater's file read through one: the report would count another run's ratings as this run's
    (outside / "r.csv").write_bytes((run / "calibration" / "ratings_ann.csv").read_bytes())
    (run / "calibration" / "ratings_ann.csv").unlink()
    (run / "calibration" / "ratings_ann.csv").symlink_to(outside / "r.csv")
    refused(["gate", str(run), "--min-rate", "0.1", "--rater", "ann"], capsys, [run, outside], "is a link")


# --- people's labels: never overwritten, never merged ------------------------------------------------------------


def test_a_reimport_never_rewrites_a_persons_ratings(tmp_path, capsys):
    """The MLflow file again after the person's corrected hand-in left the hand-in as it was (it was rewritten with
    the MLflow labels, no copy kept); a later export whose labels changed keeps the earlier file and counts rows."""
    d = tmp_path / "ds"
    assert main(["import", "mlflow", str(MLFLOW), "--run-dir", str(d)]) == 0
    mine = d / "calibration" / "ratings_answer-key.csv"
    hand = pd.read_csv(mine, dtype=str, keep_default_na=False)
    hand.loc[0, "verdict"] = "FAILED" if hand.loc[0, "verdict"] == "PASSED" else "PASSED"
    hand.to_csv(tmp_path / "hand.csv", index=False)
    assert main(["ratings", "import", str(tmp_path / "hand.csv"), "--run-dir", str(d), "--rater", "answer-key",
                 "--partial"]) == 0  # fmt: skip
    handed_in = mine.read_bytes()
    assert main(["import", "mlflow", str(MLFLOW), "--run-dir", str(d)]) == 0
    assert mine.read_bytes() == handed_in
    # the person changed two labels in MLflow; the export again
    doc = json.loads(MLFLOW.read_text())
    flipped = 0
    for t in doc["traces"]:
        for a in t["info"]["assessments"]:
            if a["source"] == {"source_type": "HUMAN", "source_id": "answer-key"} and "feedback" in a and flipped < 2:
                a["feedback"]["value"] = not a["feedback"]["value"]
                flipped += 1
    capsys.readouterr()
    assert main(["import", "mlflow", str(_mlflow(tmp_path, doc, "u.json")), "--run-dir", str(d)]) == 0
    out = capsys.readouterr().out
    kept = list((d / "calibration" / "history").glob("ratings_answer-key.*.csv"))
    assert [p.read_bytes() for p in kept if p.read_bytes() == handed_in], "the hand-in is kept in history"
    assert "their labels changed in the source" in out and "rows changed" in out, out
    # a person's file removed by hand: the same import again writes it anew
    changed_file = mine.read_bytes()
    mine.unlink()
    assert main(["import", "mlflow", str(tmp_path / "u.json"), "--run-dir", str(d)]) == 0
    assert mine.read_bytes() == changed_file


def test_a_file_where_the_sample_goes_is_refused_before_the_dataset_is_written(tmp_path, capsys):
    d = tmp_path / "ds"
    d.mkdir()
    (d / "calibration").write_text("mine")
    refused(["import", "mlflow", str(MLFLOW), "--run-dir", str(d)], capsys, [tmp_path],
            "is a file where vocab keeps a folder")  # fmt: skip


@pytest.mark.parametrize("source_id", [None, "", "  ", "default"])
def test_feedback_of_a_person_with_no_id_is_refused_never_merged(tmp_path, capsys, source_id):
    doc = json.loads(MLFLOW.read_text())
    t = doc["traces"][0]
    _person(t, source_id, True)
    second = _person(t, source_id, False)  # a second anonymous person on the same trace
    second["assessment_id"] += "-2"
    refused(["import", "mlflow", str(_mlflow(tmp_path, doc)), "--run-dir", str(tmp_path / "d")], capsys, [tmp_path],
            "people with no source id")  # fmt: skip


def test_anonymous_feedback_of_another_name_is_no_concern_of_this_import(tmp_path):
    doc = json.loads(MLFLOW.read_text())
    t = doc["traces"][0]
    _person(t, None, True)["assessment_name"] = "tone"
    assert main(["import", "mlflow", str(_mlflow(tmp_path, doc)), "--run-dir", str(tmp_path / "d"),
                 "--feedback", "correct"]) == 0  # fmt: skip


def test_an_override_under_mlflows_default_source_is_refused(tmp_path, capsys):
    doc = json.loads(MLFLOW.read_text())
    t = doc["traces"][0]
    judge = _judge_feedback(t)
    judge["valid"] = False
    t["info"]["assessments"].append({**judge, "assessment_id": "a-override", "valid": True,
                                     "overrides": judge["assessment_id"],
                                     "source": {"source_type": "CODE", "source_id": "default"},
                                     "feedback": {"value": "no"}})  # fmt: skip
    refused(["import", "mlflow", str(_mlflow(tmp_path, doc)), "--run-dir", str(tmp_path / "d")], capsys, [tmp_path],
            "overrides recorded under MLflow's default source")  # fmt: skip


def test_an_empty_export_says_there_are_no_traces(tmp_path, capsys):
    for body in ("", "  \n", '{"traces": []}'):
        (tmp_path / "t.json").write_text(body)
        refused(["import", "mlflow", str(tmp_path / "t.json"), "--run-dir", str(tmp_path / "d")], capsys,
                [tmp_path], "no traces")  # fmt: skip


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_pass_at_must_be_finite(tmp_path, capsys, value):
    refused(["import", "mlflow", str(MLFLOW), "--run-dir", str(tmp_path / "d"), f"--pass-at={value}"], capsys,
            [tmp_path], "a finite number")  # fmt: skip


# --- every ratings reader checks rater and sample -----------------------------------------------------------------


@pytest.fixture
def ls_run(run) -> Path:
    """The reference run, whose sample ls-demo's Label Studio export (data/label_studio) was rated on."""
    return run


def _ls_csv(tmp_path: Path, tasks: list[dict], sample: str | None = None) -> Path:
    """Label Studio's CSV export of these tasks: its data fields as columns, a column per choice, annotator ids."""
    rows = []
    for t in tasks:
        a = t["annotations"][0]
        row = {k: v for k, v in t["data"].items()}
        row.update({r["from_name"]: r["value"]["choices"][0] for r in a["result"] if r.get("type") == "choices"})
        row.update({"annotation_id": a["id"], "annotator": 1, "id": t["id"], "lead_time": 3.1,
                    "created_at": a["created_at"], "updated_at": a["updated_at"]})  # fmt: skip
        if sample is not None:
            row["vocab_sample_sha256"] = sample
        rows.append(row)
    path = tmp_path / "e.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_label_studios_csv_export_is_checked_for_rater_and_sample(ls_run, tmp_path, capsys):
    tasks = [t for t in json.loads(LABEL_STUDIO.read_text()) if t.get("annotations")]
    argv = ["ratings", "import", "--run-dir", str(ls_run), "--partial"]
    path = _ls_csv(tmp_path, tasks)
    refused([*argv[:2], str(path), *argv[2:], "--rater", "ann"], capsys, [ls_run], "was rated by ls-demo, not ann")
    refused([*argv[:2], str(_ls_csv(tmp_path, tasks, "0" * 64)), *argv[2:], "--rater", "ls-demo"], capsys, [ls_run],
            "was rated on another sample")  # fmt: skip
    assert main([*argv[:2], str(_ls_csv(tmp_path, tasks)), *argv[2:], "--rater", "ls-demo"]) == 0
    assert "could not be checked" not in capsys.readouterr().out  # it names its sample: checked


def _ls(tmp_path: Path, change) -> Path:
    tasks = json.loads(LABEL_STUDIO.read_text())
    change(next(t for t in tasks if t.get("annotations")), tasks)
    path = tmp_path / "e.json"
    path.write_text(json.dumps(tasks))
    return path


def _set(key: str, value):
    def change(t, _):
        if key == "annotations":
            t["annotations"] = value
        elif key == "result":
            t["annotations"][0]["result"] = value
        else:
            t["annotations"][0]["result"][0]["value"]["choices"] = value

    return change


@pytest.mark.parametrize(
    "change, words",
    [
        (_set("annotations", 5), "annotations are not a list"),
        (_set("result", 5), "result is not a list"),
        (_set("choices", 3), "are not a list"),
        (_set("choices", {"x": "PASSED"}), "are not a list"),
        (lambda t, tasks: [a.update(was_cancelled=True) for t in tasks for a in t.get("annotations") or []],
         "no rated rows"),
        (lambda t, tasks: tasks.clear(), "no rated rows"),
        (lambda t, tasks: [t["data"].pop("vocab_rater") for t in tasks[::2]], "names its rater ls-demo on"),
    ],
)  # fmt: skip
def test_label_studio_exports_of_other_shapes_are_one_line(ls_run, tmp_path, capsys, change, words):
    refused(["ratings", "import", str(_ls(tmp_path, change)), "--run-dir", str(ls_run), "--rater", "ls-demo",
             "--partial"], capsys, [ls_run], words)  # fmt: skip


def test_two_annotations_at_one_time_with_ids_of_two_types_are_ordered(ls_run, tmp_path):
    def twice(t, _):
        a = t["annotations"][0]
        t["annotations"] = [{**a, "id": 1}, {**a, "id": "x"}]

    assert main(["ratings", "import", str(_ls(tmp_path, twice)), "--run-dir", str(ls_run), "--rater", "ls-demo",
                 "--partial"]) == 0  # fmt: skip


# --- numbers checked where they are parsed ----------------------------------------------------------------------


@pytest.mark.parametrize("argv, words", [(["--rater", ""], "an empty one"), (["--rater", " "], "an empty one")])
def test_gate_rater_must_name_someone(run, capsys, argv, words):
    refused(["gate", str(run), "--min-rate", "0.1", *argv], capsys, [run], words)


def _grid(tmp_path: Path, row: dict | str | None = None, spec: dict | None = None) -> Path:
    """The committed grid, its first row (a point the recheck simulates again) or its spec changed."""
    grid = pd.read_csv(ROOT / "data" / "coverage" / "full_grid.csv")
    meta = json.loads((ROOT / "data" / "coverage" / "full_grid.json").read_text())
    if row == "header only":
        grid, row = grid.iloc[:0], None
    for k, v in (row or {}).items():
        grid[k] = grid[k].astype(object)
        grid.loc[grid.index[0], k] = v
    meta["spec"].update(spec or {})
    grid.to_csv(tmp_path / "g.csv", index=False)
    (tmp_path / "g.json").write_text(json.dumps(meta))
    return tmp_path / "g.csv"


@pytest.mark.parametrize(
    "row, spec, words",
    [({"levels": 0}, {}, "no grid point"), ({"piles": 10_000_000}, {}, "studies x pile rows"),
     ({"levels": 20_000}, {}, "studies x attempts"), ({"theta": 1.5}, {}, "no grid point"),
     ({"levels": "x"}, {}, "no grid point"), ({}, {"n_boot": 10_000_000}, "studies x resamples"),
     ({}, {"max_attempts": 1_000_000}, "studies x attempts"), ({}, {"n_boot": "x"}, "whole numbers"),
     ("header only", {}, "no grid points")],
)  # fmt: skip
def test_a_grid_row_past_what_a_recheck_can_hold_is_refused(tmp_path, capsys, row, spec, words):
    g = _grid(tmp_path, row, spec)
    with deadline(60):
        refused(["coverage-recheck", str(g)], capsys, [tmp_path], words)


def test_a_grid_file_past_its_bound_is_refused_before_it_is_read(tmp_path, capsys):
    g = _grid(tmp_path)
    with g.open("r+b") as f:
        f.truncate(700 * 2**20)  # 700 MB (sparse): was 2.3 GiB and no answer after 400 s
    refused(["coverage-recheck", str(g)], capsys, [tmp_path], "over the 67,108,864")


def test_a_read_only_grid_folder_is_refused_before_the_simulation(tmp_path, capsys):
    g = _grid(tmp_path)
    with immutable(tmp_path), deadline(60):
        refused(["coverage-recheck", str(g)], capsys, [tmp_path], "cannot be written")


def test_serve_dtype_is_one_vllm_knows(tmp_path, capsys):
    text = (ROOT / "configs" / "embedded.toml").read_text()
    for dtype, words in (("banana", "'banana'"), ("", "got ''")):
        cfg = tmp_path / "c.toml"
        cfg.write_text(text.replace("[models.gemma3.serve]", f'[models.gemma3.serve]\ndtype = "{dtype}"', 1))
        assert f'dtype = "{dtype}"' in cfg.read_text()
        refused(["serve", "--dry-run", "--config", str(cfg)], capsys, [tmp_path], words)


def test_an_option_of_another_harness_is_named_not_ignored(tmp_path, capsys):
    refused(["audit", str(MLFLOW), "--out", str(tmp_path / "o"), "--metric", "x"], capsys, [tmp_path],
            "--metric is for deepeval files")  # fmt: skip


# --- packets and the form: refused before anything is written ----------------------------------------------------


@pytest.mark.parametrize(
    "damage, words",
    [
        ("wheel-swapped", "sha256 differs"),
        ("wheel-removed", "missing from"),
        ("rubric-removed", "missing from"),
        ("wheel-str", "not a wheel's record"),
    ],
)
def test_a_damaged_packet_folder_is_never_zipped(run, capsys, damage, words):
    assert _packet(run) == 0
    packet = run / "packets" / "ann"
    meta = json.loads((packet / "packet.json").read_text())
    wheel = packet / meta["wheel"]["name"]
    (run / "packets" / "ann.zip").unlink()
    if damage == "wheel-swapped":
        wheel.write_bytes(wheel.read_bytes() + b"\0")
    elif damage == "wheel-removed":
        wheel.unlink()
    elif damage == "rubric-removed":
        (packet / "rubric.txt").unlink()
    else:
        (packet / "packet.json").write_text(json.dumps({**meta, "wheel": "x"}))
    capsys.readouterr()
    refused(["packet", "--run-dir", str(run), "--rater", "ann"], capsys, [run], words)


def test_the_form_refuses_a_packet_of_this_machine_before_unpacking_it(tmp_path, capsys):
    """The reference run's packet (made today), its zip copied away: its run is in this checkout, so it is refused,
    and nothing unpacked beside the zip (it was unpacked, then refused). A port out of range is refused by
    argparse."""
    from tests.unit.test_form import reference_packet

    made = tmp_path / "made"
    made.mkdir()
    z = tmp_path / "annotator-1.zip"
    shutil.copy(reference_packet(made), z)
    shutil.rmtree(made)
    refused(["form", str(z), "--no-browser"], capsys, [tmp_path], "this machine holds the packet's run")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["annotator-1.zip"]
    for bad in ("99999", "0", "x"):
        refused(["form", str(z), "--no-browser", "--port", bad], capsys, [tmp_path], "a port from 1 to 65535")


def test_a_reader_that_leaves_early_is_no_error():
    """`vocab levels 1-3000 | head -1` was a traceback and exit 1: BrokenPipeError is an OSError, caught first."""
    out = subprocess.run(f"{sys.executable} -m vocab.cli levels 1-3000 | head -1", shell=True, capture_output=True,
                         text=True, cwd=ROOT, timeout=120)  # fmt: skip
    assert out.stdout.count("\n") == 1 and out.stderr == "", out.stderr[-2000:]
