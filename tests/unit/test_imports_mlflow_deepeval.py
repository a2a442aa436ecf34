"""`vocab import mlflow` and `vocab import deepeval` on files the real tools wrote (tests/mlflow_task.py,
tests/deepeval_task.py): every class counted against the file's own records, MLflow's human feedback as a sample
that needs no draw, and bad input one line, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.stored import stored_items
from vocab.cli import main

ROOT = Path(__file__).resolve().parents[2]
MLFLOW_JSON = ROOT / "data" / "mlflow" / "traces.json"  # mlflow traces search --output json
MLFLOW_JSONL = ROOT / "data" / "mlflow" / "traces.jsonl"  # Trace.to_json(), a line each
DEEPEVAL = ROOT / "data" / "deepeval" / "qa_smollm2_gemma3.json"  # DisplayConfig(results_folder=...)'s test run


def _judgments(d: Path) -> list[dict]:
    return stored_items(d)


def _counts(rows) -> dict[str, int]:
    return {c: sum(r["verdict"] == c for r in rows) for c in ("PASSED", "FAILED", "UNSCORED")}


def _mlflow_expected(traces: list[dict]) -> tuple[dict[str, str], dict[str, str]]:
    """From the file alone: each trace's verdict from the judge's `correct` feedback (yes/no, an error UNSCORED) and
    the human source's label (True/False)."""
    judge, human = {}, {}
    for t in traces:
        for a in t["info"].get("assessments", []):
            if a.get("assessment_name") != "correct" or "feedback" not in a:
                continue
            fb, source = a["feedback"], a["source"]["source_type"]
            if source == "LLM_JUDGE":
                judge[t["info"]["trace_id"]] = (
                    "UNSCORED" if fb.get("error") or fb.get("value") is None
                    else {"yes": "PASSED", "no": "FAILED"}[fb["value"]]
                )  # fmt: skip
            elif source == "HUMAN":
                human[t["info"]["trace_id"]] = "PASSED" if fb["value"] else "FAILED"
    return judge, human


@pytest.mark.parametrize("path", [MLFLOW_JSON, MLFLOW_JSONL], ids=["cli-json", "to_json-lines"])
def test_mlflow_traces_import_exactly(path, tmp_path, capsys):
    traces = (json.loads(MLFLOW_JSON.read_text())["traces"] if path.suffix == ".json"
              else [json.loads(line) for line in path.read_text().splitlines()])  # fmt: skip
    judge, human = _mlflow_expected(traces)
    assert len(judge) >= 10 and human and set(human) <= set(judge)
    d = tmp_path / "d"
    assert main(["import", "mlflow", str(path), "--run-dir", str(d)]) == 0
    rows = _judgments(d)
    assert {r["id"]: r["verdict"] for r in rows} == judge
    assert _counts(rows) == {c: list(judge.values()).count(c) for c in ("PASSED", "FAILED", "UNSCORED")}
    assert {r["judge"] for r in rows} == {"gemma3"}
    assert "rationale" not in json.dumps([r["visible"] for r in rows])  # the judge's reasons stay hidden
    assert all(r["visible"]["input"] and r["visible"]["output"] for r in rows)
    out = capsys.readouterr().out
    assert f"{len(judge)} judged items (mlflow)" in out and "labels from people: answer-key" in out
    # the human feedback is the sample: each labelled trace the judge scored, in the pile of its verdict
    key = pd.read_csv(d / "calibration" / "key.csv", dtype=str, keep_default_na=False)
    ratings = pd.read_csv(d / "calibration" / "ratings_answer-key.csv", dtype=str)
    scored = {t: v for t, v in human.items() if judge[t] != "UNSCORED"}
    by_blind = dict(zip(key.blind_id, key.level, strict=True))  # a trace is its own group
    assert sorted(by_blind.values()) == sorted(scored)
    assert {by_blind[b]: v for b, v in zip(ratings.blind_id, ratings.verdict, strict=True)} == scored
    assert all((judge[lv] == "PASSED") == (p == "passed") for lv, p in zip(key.level, key.pile, strict=True))
    record = json.loads((d / "calibration" / "sample.json").read_text())["stages"][0]
    assert record["allocation"] == "labels" and "not drawn or blinded by vocab" in record["assumes"]


def test_mlflow_labels_give_a_corrected_rate_without_a_new_sample(tmp_path, capsys):
    d = tmp_path / "d"
    assert main(["audit", str(MLFLOW_JSONL), "--out", str(d)]) == 0
    out = capsys.readouterr().out
    key_before = (d / "calibration" / "key.csv").read_text()
    assert "labelled in the source, not drawn by vocab" in out and "plan " not in out  # nothing drawn or planned
    assert "against answer-key's labels in the source (not drawn by vocab)" in out and "the pass rate is" in out
    assert main(["report", str(d)]) == 0
    md = (d / "report" / "report.md").read_text()
    assert "not drawn or blinded by vocab" in md and "does not depend on whether the judge was right" in md
    assert (d / "calibration" / "key.csv").read_text() == key_before


def test_deepeval_test_run_imports_exactly(tmp_path, capsys):
    run = json.loads(DEEPEVAL.read_text())
    (metric,) = {m["name"] for c in run["testCases"] for m in c["metricsData"]}
    expected = {}
    for c in run["testCases"]:
        (m,) = c["metricsData"]
        expected[c["name"]] = "UNSCORED" if m.get("error") else ("PASSED" if m["success"] else "FAILED")
    # DeepEval's own tally of the run agrees with the file's test cases
    (tally,) = [s for s in run["metricsScores"] if s["metric"] == metric]
    assert (tally["passes"], tally["fails"], tally["errors"]) == tuple(
        list(expected.values()).count(c) for c in ("PASSED", "FAILED", "UNSCORED"))  # fmt: skip
    d = tmp_path / "d"
    assert main(["import", "deepeval", str(DEEPEVAL), "--run-dir", str(d)]) == 0
    rows = _judgments(d)
    assert {r["id"]: r["verdict"] for r in rows} == expected
    assert {r["judge"] for r in rows} == {"gemma3"}
    visible = json.dumps([r["visible"] for r in rows])
    assert all(str(c["metricsData"][0].get("reason", "\x00")) not in visible for c in run["testCases"])
    assert f"{len(expected)} judged items (deepeval)" in capsys.readouterr().out
    # --metric by DeepEval's name or its short name
    for name in (metric, metric.split(" [")[0]):
        assert main(["import", "deepeval", str(DEEPEVAL), "--run-dir", str(tmp_path / name), "--metric", name]) == 0


def _write(tmp_path: Path, name: str, doc) -> Path:
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return p


def _mlflow_doc() -> dict:
    return json.loads(MLFLOW_JSON.read_text())


def _second_judge(doc: dict) -> dict:
    a = next(a for a in doc["traces"][0]["info"]["assessments"] if a["source"]["source_type"] == "LLM_JUDGE")
    doc["traces"][0]["info"]["assessments"].append({**a, "source": {"source_type": "CODE", "source_id": "regex"}})
    return doc


def _numeric(doc: dict) -> dict:
    for t in doc["traces"]:
        for a in t["info"]["assessments"]:
            if a.get("assessment_name") == "correct" and a["source"]["source_type"] == "LLM_JUDGE":
                a["feedback"] = {"value": 0.7}
    return doc


def _word(doc: dict) -> dict:
    a = next(a for a in doc["traces"][0]["info"]["assessments"] if a["source"]["source_type"] == "LLM_JUDGE")
    a["feedback"] = {"value": "maybe"}
    return doc


def _deepeval_doc() -> dict:
    return json.loads(DEEPEVAL.read_text())


@pytest.mark.parametrize(
    "kind, make, extra, words",
    [
        ("mlflow", lambda: "not json {", [], "not JSON"),
        ("mlflow", lambda: {"traces": {}}, [], "'traces' is not a list"),
        ("mlflow", lambda: {"traces": [{"data": {}}]}, [], "trace 1 is not an MLflow trace"),
        ("mlflow", lambda: "[" * 100_000, [], "nested too deep"),
        ("mlflow", lambda: {"traces": []}, [], "no traces in it"),
        ("mlflow", _mlflow_doc, ["--feedback", "nope"], "no feedback named 'nope'"),
        ("mlflow", lambda: _second_judge(_mlflow_doc()), [], "several judges (gemma3, regex): choose one with --judge"),
        ("mlflow", _mlflow_doc, ["--judge", "gpt"], "no judge 'gpt'"),
        ("mlflow", lambda: _numeric(_mlflow_doc()), [], "give --pass-at"),
        ("mlflow", lambda: _word(_mlflow_doc()), [], "'maybe' is neither a pass value"),
        ("mlflow", _mlflow_doc, ["--pass-values", "yes", "--fail-values", "no,yes"], "both a pass and a fail value"),
        ("mlflow", _mlflow_doc, ["--tracking-uri", "sqlite:///x.db"], "not both"),
        ("mlflow", lambda: {**_mlflow_doc(), "next_page_token": "abc"}, [], "one page of the search"),
        ("deepeval", lambda: {"testRuns": []}, [], "not a DeepEval test run"),
        ("deepeval", lambda: {"testCases": [], "conversationalTestCases": [{"turns": []}]}, [], "conversational"),
        ("deepeval", lambda: {"testCases": ["x"]}, [], "test case 1 is not an object"),
        ("deepeval", _deepeval_doc, ["--metric", "Faithfulness"], "metric 'Faithfulness' matches none"),
        ("deepeval", lambda: {**_deepeval_doc(), "testCases": [{"name": "a", "metricsData": []}]}, [],
         "no test case holds a metric's result"),
        ("deepeval", lambda: {**_deepeval_doc(), "testCases": []}, [], "no test cases in it"),
    ],
)  # fmt: skip
def test_bad_input_to_the_new_readers_is_one_line_and_nothing_written(tmp_path, capsys, kind, make, extra, words):
    f = _write(tmp_path, f"in.{'json'}", make())
    d = tmp_path / "d"
    capsys.readouterr()
    assert main(["import", kind, str(f), "--run-dir", str(d), *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err
    assert not d.exists() or not any(d.iterdir())


def test_a_persons_override_keeps_the_judges_verdict_and_becomes_their_label(tmp_path, capsys):
    """`mlflow.override_feedback` marks the judge's feedback invalid and logs the person's with `overrides`: the
    judge still said what it said (the item keeps its verdict), and the person's feedback is their label. A NaN
    feedback is no verdict (UNSCORED, never FAILED)."""
    doc = _mlflow_doc()
    judged = [t for t in doc["traces"]
              if any(a["source"]["source_type"] == "LLM_JUDGE" and a.get("feedback", {}).get("value") in ("yes", "no")
                     for a in t["info"]["assessments"])]  # fmt: skip
    first, second = judged[0]["info"], judged[1]["info"]
    mine = next(a for a in first["assessments"] if a["source"]["source_type"] == "LLM_JUDGE" and "feedback" in a)
    said = {"yes": "PASSED", "no": "FAILED"}[mine["feedback"]["value"]]
    mine["valid"] = False
    override = {**mine, "assessment_id": "a-override", "valid": True, "overrides": mine["assessment_id"],
                "source": {"source_type": "HUMAN", "source_id": "zoe"}, "feedback": {"value": said == "FAILED"},
                "last_update_time": "2099-01-01T00:00:00Z"}  # fmt: skip
    first["assessments"].append(override)
    other = next(a for a in second["assessments"] if a["source"]["source_type"] == "LLM_JUDGE" and "feedback" in a)
    other["feedback"] = {"value": float("nan")}
    f = _write(tmp_path, "override.json", json.dumps(doc))
    d = tmp_path / "d"
    assert main(["import", "mlflow", str(f), "--run-dir", str(d), "--pass-at", "0.5"]) == 0
    verdicts = {r["id"]: r["verdict"] for r in _judgments(d)}
    assert verdicts[first["trace_id"]] == said and verdicts[second["trace_id"]] == "UNSCORED"
    key = pd.read_csv(d / "calibration" / "key.csv", dtype=str, keep_default_na=False)
    zoe = pd.read_csv(d / "calibration" / "ratings_zoe.csv", dtype=str)
    (bid,) = zoe.blind_id
    assert key.set_index("blind_id").level[bid] == first["trace_id"]
    assert zoe.verdict.iloc[0] == ("PASSED" if said == "FAILED" else "FAILED")  # the person disagreed
    # --judge naming the judge keeps the person's override (it was dropped when the override had no person's id);
    # the summary and the report count it
    capsys.readouterr()
    e = tmp_path / "e"
    assert main(["import", "mlflow", str(f), "--run-dir", str(e), "--pass-at", "0.5", "--judge", "gemma3"]) == 0
    assert "1 of the people's labels override the judge's feedback" in capsys.readouterr().out
    assert (e / "calibration" / "ratings_zoe.csv").read_text() == (d / "calibration" / "ratings_zoe.csv").read_text()
    assert main(["report", str(e)]) == 0
    assert "1 of the people's labels override the judge's feedback" in (e / "report" / "report.md").read_text()


def test_a_tracking_store_needs_mlflow_or_says_so(tmp_path, capsys):
    """MLflow is an optional extra: without it, --tracking-uri is one line saying how to install it or export."""
    try:  # make setup does not install it; where it is installed, the store is opened and the experiment is missing
        import mlflow  # noqa: F401

        installed = True
    except ImportError:
        installed = False
    d = tmp_path / "d"
    rc = main(["import", "mlflow", "--run-dir", str(d), "--tracking-uri", f"sqlite:///{tmp_path}/none.db",
               "--experiment-id", "1"])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert ("pip install -e '.[mlflow]'" in err) != installed
    assert not d.exists()


REVIEWERS = [
    ROOT / "data" / "mlflow" / n for n in ("reviewers.json", "reviewers.jsonl")
]  # tests/mlflow_reviewers_task.py


def _traces(path: Path) -> list[dict]:
    text = path.read_text()
    return json.loads(text)["traces"] if path.suffix == ".json" else [json.loads(line) for line in text.splitlines()]


@pytest.mark.parametrize("path", REVIEWERS, ids=["cli-json", "to_json-lines"])
def test_several_reviewers_as_mlflow_wrote_them_are_counted_exactly(path, tmp_path, capsys):
    """MLflow 3.17.2's own files: the judge's yes, no, errors and nulls; two reviewers on different traces,
    overlapping on some, one relabel; a third person's overrides. Every count from the file's assessments here,
    by the rules MLflow documents (a feedback's latest version per source; an override is the person's feedback)."""
    traces = _traces(path)
    judge, people, overrides = {}, {}, 0
    for t in traces:
        tid = t["info"]["trace_id"]
        latest = {}
        for a in t["info"]["assessments"]:
            if a.get("assessment_name") != "correct" or "feedback" not in a:
                continue
            src = a["source"]
            if src["source_type"] == "LLM_JUDGE":
                fb = a["feedback"]
                judge[tid] = "UNSCORED" if fb.get("error") or fb.get("value") is None else (
                    "PASSED" if fb["value"] == "yes" else "FAILED")  # fmt: skip
            elif src["source_type"] == "HUMAN" and a.get("valid", True):
                when = a.get("last_update_time") or a["create_time"]
                if src["source_id"] not in latest or when >= latest[src["source_id"]][0]:
                    latest[src["source_id"]] = (when, a)
        for who, (_, a) in latest.items():
            people.setdefault(who, {})[tid] = "PASSED" if a["feedback"]["value"] else "FAILED"
            overrides += bool(a.get("overrides"))
    counts = {c: list(judge.values()).count(c) for c in ("PASSED", "FAILED", "UNSCORED")}
    assert counts["FAILED"] and counts["UNSCORED"] and len(people) == 3 and overrides  # every class is there
    d = tmp_path / "d"
    assert main(["import", "mlflow", str(path), "--run-dir", str(d)]) == 0
    out = capsys.readouterr().out
    assert f"{counts['PASSED']} PASSED, {counts['FAILED']} FAILED, {counts['UNSCORED']} UNSCORED" in out
    assert f"{overrides} of the people's labels override the judge's feedback" in out
    assert {r["id"]: r["verdict"] for r in _judgments(d)} == judge
    key = pd.read_csv(d / "calibration" / "key.csv", dtype=str, keep_default_na=False).set_index("blind_id")
    for who, labels in people.items():
        name = who.replace("@", "-").replace(".", "-")
        got = pd.read_csv(d / "calibration" / f"ratings_{name}.csv", dtype=str)
        assert {key.level[b]: v for b, v in zip(got.blind_id, got.verdict, strict=True)} == {
            tid: v for tid, v in labels.items() if judge[tid] != "UNSCORED"}  # fmt: skip
    both = set(people["ann@example.com"]) & set(people["bob@example.com"]) - {t for t, v in judge.items()
                                                                            if v == "UNSCORED"}  # fmt: skip
    assert main(["audit", str(d)]) == 0 and "pooled (people" in capsys.readouterr().out
    assert main(["report", str(d)]) == 0
    md = (d / "report" / "report.md").read_text()
    assert f"| ann-example-com and bob-example-com | raw | {len(both)} |" in md  # agreement where they overlap
