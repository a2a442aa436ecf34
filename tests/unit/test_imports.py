"""Judgments imported from other harnesses: an Inspect log made by `inspect eval` on this machine
(data/inspect/qa_smollm2_gemma3.eval, see tests/inspect_task.py), plain tables, and the calibration chain on them
— the notebooks run on an imported dataset with parameters only, and a known-truth table's corrected rate
covers the truth."""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.nbtext import outputs_text
from tests.stored import stored_items
from vocab import calibration, imports
from vocab.cli import main
from vocab.datasets.dataset import load_dataset
from vocab.nb import execute

ROOT = Path(__file__).resolve().parents[2]
NB = ROOT / "notebooks"
LOG = ROOT / "data" / "inspect" / "qa_smollm2_gemma3.eval"
SECRET_KEYS = ("score", "explanation", "grader", "GRADE", "gemma3", "smollm2", "model_graded_qa", "PASSED", "FAILED")


# --- Inspect logs ----------------------------------------------------------------------------------------


def test_an_inspect_log_becomes_one_item_per_sample_and_epoch(tmp_path):
    d = tmp_path / "qa"
    assert main(["import", "inspect", str(LOG), "--run-dir", str(d)]) == 0
    meta = json.loads((d / "dataset.json").read_text())
    src = meta["source"]
    assert src["kind"] == "inspect" and src["model"] == "openai-api/vllm/smollm2"
    assert src["grader"] == "openai-api/vllm2/gemma3" and src["scorer"] == "model_graded_qa"
    rows = stored_items(d)
    assert len(rows) == 16 and {r["epoch"] for r in rows} == {1, 2} and len({r["group"] for r in rows}) == 8
    assert sum(meta["counts"].values()) == 16 and meta["counts"]["UNSCORED"] == 0
    # the verdicts follow the log's own grades, C -> PASSED and I -> FAILED
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(LOG))
    grades = {f"{s.id}:{s.epoch}": s.scores["model_graded_qa"].value for s in log.samples}
    assert {r["id"]: r["verdict"] for r in rows} == {k: {"C": "PASSED", "I": "FAILED"}[v] for k, v in grades.items()}
    data = load_dataset(d)
    assert data.kind == "judgments" and data.rubric.columns == ["verdict"] and not data.rubric.script
    assert set(data.attempts.cell) == {"openai-api/vllm/smollm2__openai-api/vllm2/gemma3"}


def test_the_blind_sheet_of_an_inspect_import_holds_input_target_output_only(tmp_path):
    d = tmp_path / "qa"
    imports.import_inspect(LOG, d)
    data = load_dataset(d)
    calibration.write_sample(calibration.draw_sample(data.attempts, 5, 0, data.visible), d)
    sheet = (d / "calibration" / "blind_sheet.jsonl").read_text() + (d / "calibration" / "blind_sheet.csv").read_text()
    assert list(calibration.read_sheet(d).columns) == ["blind_id", "input", "target", "output"]
    for secret in SECRET_KEYS:
        assert secret not in sheet, secret


def _log_with_faults(tmp_path: Path) -> Path:
    """The committed log with four samples spoiled as graders and harnesses spoil them: an errored sample, a
    grader that wrote no parseable grade (NaN, Inspect's `grader_failed`), a scorer missing, a grade outside
    the mapping."""
    from inspect_ai.log import EvalError, read_eval_log, write_eval_log

    log = read_eval_log(str(LOG))
    s = log.samples
    s[0].error = EvalError(message="connection reset", traceback="", traceback_ansi="")
    s[1].scores["model_graded_qa"].value = math.nan
    s[1].scores["model_graded_qa"].reason = "grader_failed"
    s[2].scores = {}
    s[3].scores["model_graded_qa"].value = "X"
    out = tmp_path / "faulty.eval"
    write_eval_log(log, str(out))
    return out


def test_unscored_samples_are_their_own_class_never_failed(tmp_path):
    log = _log_with_faults(tmp_path)
    d = tmp_path / "qa"
    imports.import_inspect(log, d)
    data = load_dataset(d)
    assert len(data.unscored) == 4 and len(data.attempts) == 12
    assert sorted(data.unscored.reason) == ["error", "grader_failed", "no_score", "unmapped:X"]
    assert "4 unscored" in data.describe() and "not FAILs" in data.describe()
    lost = data.lost().set_index("cell")
    assert lost.lost.sum() == 4 and lost.failed_if.sum() == 4
    # p is over scored items only: the unscored ones do not count as FAILED. The log grades q02, q06 and q07 C
    # in both epochs; the faults spoil its first four samples (q01-q04 of epoch 1, q02's C among them), so the
    # twelve scored samples hold five C: p = 5/12 (counting the unscored as FAILED would give 5/16).
    from inspect_ai.log import read_eval_log

    intact = [s.scores["model_graded_qa"].value for s in read_eval_log(str(log)).samples[4:]]
    assert intact.count("C") == 5 and len(intact) == 12
    assert (data.attempts.verdict == "PASSED").mean() == pytest.approx(5 / 12)
    # an explicit mapping may pass the odd grade instead
    d2 = tmp_path / "qa2"
    imports.import_inspect(log, d2, pass_values=("C", "X"))
    assert len(load_dataset(d2).unscored) == 3


def test_bad_inspect_input_is_one_line_and_exit_2(tmp_path, capsys):
    junk = tmp_path / "junk.eval"
    junk.write_bytes(b"PK\x03\x04 not a log")
    cases = [
        (["import", "inspect", str(junk), "--run-dir", str(tmp_path / "a")], "not an Inspect log"),
        (["import", "inspect", str(tmp_path / "none.eval"), "--run-dir", str(tmp_path / "b")], "no such file"),
        (["import", "inspect", str(LOG), "--run-dir", str(tmp_path / "c"), "--scorer", "f1"], "no scorer 'f1'"),
        (
            [
                "import",
                "inspect",
                str(LOG),
                "--run-dir",
                str(tmp_path / "d"),
                "--pass-values",
                "C",
                "--fail-values",
                "C,I",
            ],
            "both passing and failing",
        ),  # fmt: skip
    ]
    for argv, words in cases:
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and words in err, err
        assert not Path(argv[argv.index("--run-dir") + 1]).exists()


# --- promptfoo results ------------------------------------------------------------------------------------

PROMPTFOO = ROOT / "data" / "promptfoo" / "qa_smollm2_gemma3.json"
RUBRIC = {"type": "llm-rubric", "metric": "correct", "value": "The output is right"}


def _pf_result(n: int, *, rubric: bool | None = True, contains: bool = True, grader_error: bool = False,
               call_error: str | None = None, assertions=(RUBRIC,), description: str | None = None,
               prompt: str = "Answer: {{q}}", provider: str = "smollm2") -> dict:  # fmt: skip
    """One row of promptfoo's results.results (version 3), as promptfoo writes it."""
    row = {"id": f"r{n}", "promptIdx": 0, "testIdx": n, "vars": {"q": f"question {n}"},
           "testCase": {"vars": {"q": f"question {n}"}, "assert": list(assertions),
                        **({"description": description} if description else {})},
           "prompt": {"raw": f"Answer: question {n}", "label": prompt}, "provider": {"id": f"openai:chat:{provider}",
           "label": provider}, "latencyMs": 5, "namedScores": {}}  # fmt: skip
    if call_error:
        return {**row, "response": {"error": call_error}, "error": call_error, "failureReason": 2, "success": False,
                "score": 0}  # fmt: skip
    comps = []
    for a in assertions:
        if a["type"] == "llm-rubric":
            c = {
                "pass": bool(rubric) and not grader_error,
                "score": float(bool(rubric)),
                "assertion": a,
                "reason": "Could not extract JSON" if grader_error else "secret-reason: the grader's own words",
            }
            if grader_error:
                c["metadata"] = {"graderError": True}
        else:
            c = {"pass": contains, "score": float(contains), "reason": "Assertion passed", "assertion": a}
        comps.append(c)
    ok = all(c["pass"] for c in comps)
    return {**row, "response": {"output": f"answer {n}"}, "success": ok, "score": float(ok),
            "failureReason": 0 if ok else 1,
            "gradingResult": {"pass": ok, "score": float(ok), "reason": "", "componentResults": comps}}  # fmt: skip


def _pf_file(tmp_path: Path, results: list[dict], name: str = "results.json", **config) -> Path:
    doc = {"evalId": "eval-test", "results": {"version": 3, "timestamp": "2026-12-02T00:00:00Z", "prompts": [],
           "results": results, "stats": {}}, "config": {"description": "synthetic", **config},
           "shareableUrl": None, "metadata": {"promptfooVersion": "0.121.20"}}  # fmt: skip
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_a_promptfoo_verdict_is_its_judges_assertion_never_promptfoos_success(tmp_path):
    contains = {"type": "icontains", "metric": "contains", "value": "x"}
    grader = {"id": "openai:chat:gemma3", "label": "gemma3"}
    results = [
        _pf_result(1, rubric=True, contains=False, assertions=(RUBRIC, contains)),  # success false, judge PASSED
        _pf_result(2, rubric=False, assertions=(RUBRIC, contains)),
        _pf_result(3, grader_error=True, assertions=(RUBRIC, contains)),  # promptfoo: pass false; not a verdict
        _pf_result(4, call_error="API error: 503 Service Unavailable"),  # the tested model's call failed
        _pf_result(5, assertions=(contains,)),  # no judge on this test: not an item
        _pf_result(6, call_error="API error: 503", assertions=(contains,)),  # nor when its call failed
    ]
    path = _pf_file(tmp_path, results, defaultTest={"options": {"provider": grader}})
    d = tmp_path / "pf"
    assert main(["import", "promptfoo", str(path), "--run-dir", str(d)]) == 0
    rows = {r["id"]: r for r in stored_items(d)}
    verdicts = {k.rsplit(":", 1)[0]: r["verdict"] for k, r in rows.items()}
    assert verdicts == {"vars:" + _vars_hash(n): v for n, v in [(1, "PASSED"), (2, "FAILED"), (3, "UNSCORED"),
                                                                (4, "UNSCORED")]}  # fmt: skip
    reasons = sorted(r["hidden"].get("unscored_reason", "") for r in rows.values())
    assert reasons == ["", "", "error: API error: 503 Service Unavailable", "grader_error: Could not extract JSON"]
    assert {r["judge"] for r in rows.values()} == {"gemma3"} and {r["system"] for r in rows.values()} == {"smollm2"}
    meta = json.loads((d / "dataset.json").read_text())
    assert meta["source"]["left_out"] == 2 and meta["source"]["assertion"] == "correct"
    assert meta["counts"] == {"PASSED": 1, "FAILED": 1, "UNSCORED": 2}
    # the grader's reason is hidden: never on a blind sheet
    data = load_dataset(d)
    assert list(data.visible) == ["input", "output", "rubric"]
    assert all("secret-reason" not in json.dumps(r["visible"]) for r in rows.values())


def test_a_promptfoo_response_written_as_a_string_is_the_output(tmp_path):
    """Some providers write the output itself as the response: it imported as an empty answer, and a rater graded
    nothing."""
    results = [_pf_result(1), _pf_result(2)]
    results[0]["response"] = "The answer is 4."
    path = _pf_file(tmp_path, results, defaultTest={"options": {"provider": {"id": "openai:chat:gemma3"}}})
    d = tmp_path / "pf"
    assert main(["import", "promptfoo", str(path), "--run-dir", str(d)]) == 0
    outputs = sorted(r["visible"]["output"] for r in stored_items(d))
    assert outputs[0] == "The answer is 4." and all(outputs)


def _vars_hash(n: int) -> str:
    import hashlib

    return hashlib.sha256(json.dumps({"q": f"question {n}"}, sort_keys=True).encode()).hexdigest()[:10]


def test_promptfoo_repeats_are_epochs_and_prompts_are_items(tmp_path):
    results = [_pf_result(1, description="t1"), _pf_result(1, description="t1", rubric=False),
               _pf_result(1, description="t1", prompt="Reply: {{q}}")]  # fmt: skip
    rows, meta = imports.read_promptfoo(_pf_file(tmp_path, results))
    assert [(r["id"], r["group"], r["epoch"]) for r in rows] == [("t1 / prompt 1:1", "t1 / prompt 1", 1),
                                                                 ("t1 / prompt 1:2", "t1 / prompt 1", 2),
                                                                 ("t1 / prompt 2:1", "t1 / prompt 2", 1)]  # fmt: skip
    assert meta["source"]["grader"] == ["promptfoo's default grader"]
    # two tests with one description are two items (told apart by their vars), not epochs of one
    rows, _ = imports.read_promptfoo(_pf_file(tmp_path, [_pf_result(1, description="same"),
                                                         _pf_result(2, description="same")], "two.json"))  # fmt: skip
    assert len({r["group"] for r in rows}) == 2 and {r["epoch"] for r in rows} == {1}
    assert all(r["group"].startswith("same [vars:") for r in rows)
    # a defaultTest given as a file reference (a string) is no grader: the default name stands
    rows, _ = imports.read_promptfoo(_pf_file(tmp_path, [_pf_result(1)], "str.json", defaultTest="file://d.yaml"))
    assert rows[0]["judge"] == "promptfoo's default grader"


def test_two_model_graded_assertions_need_a_choice(tmp_path, capsys):
    other = {"type": "g-eval", "metric": "fluent", "value": "fluent"}
    path = _pf_file(tmp_path, [_pf_result(1, assertions=(RUBRIC, other))])
    assert main(["import", "promptfoo", str(path), "--run-dir", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--assertion" in err and "correct, fluent" in err
    assert not (tmp_path / "a").exists()
    rows, meta = imports.read_promptfoo(path, assertion="fluent")
    assert meta["source"]["assertion_types"] == ["g-eval"] and rows[0]["visible"]["rubric"] == "fluent"


def test_the_committed_promptfoo_results_import_as_promptfoo_recorded_them():
    """data/promptfoo/qa_smollm2_gemma3.json was made by `promptfoo eval` here (tests/promptfoo_task.py): each
    verdict is its llm-rubric component's pass, a grader error is UNSCORED, and promptfoo's success (rubric AND
    icontains) is not the verdict."""
    doc = json.loads(PROMPTFOO.read_text())
    rows, meta = imports.read_promptfoo(PROMPTFOO)
    assert len(rows) == len(doc["results"]["results"]) == 16 and meta["source"]["left_out"] == 0
    assert {r["epoch"] for r in rows} == {1, 2} and len({r["group"] for r in rows}) == 8
    by_id = {r["id"]: r for r in doc["results"]["results"]}
    for row in rows:
        res = by_id[row["hidden"]["promptfoo_result_id"]]
        (comp,) = [c for c in res["gradingResult"]["componentResults"] if c["assertion"]["type"] == "llm-rubric"]
        expected = (
            "UNSCORED" if comp.get("metadata", {}).get("graderError") else ("PASSED" if comp["pass"] else "FAILED")
        )
        assert row["verdict"] == expected
        assert row["hidden"]["promptfoo_success"] == res["success"]
    assert meta["source"]["grader"] == ["gemma3"] and {r["system"] for r in rows} == {"smollm2"}


def test_bad_promptfoo_input_is_one_line_and_exit_2(tmp_path, capsys):
    good = [_pf_result(1)]
    cases = {
        "not JSON": (tmp_path / "a.json", "{not json"),
        "no results.results list": (tmp_path / "b.json", json.dumps({"results": {"version": 3}})),
        "version 9": (tmp_path / "c.json", json.dumps({"results": {"version": 9, "results": good}})),
        "result 2 is not an object": (tmp_path / "d.json", json.dumps({"results": {"version": 3,
                                                                                  "results": [good[0], 7]}})),
        "no assertion 'fluent'": (tmp_path / "e.json", json.dumps({"results": {"version": 3, "results": good}})),
        "model-graded ones here: none": (tmp_path / "f.json", json.dumps({"results": {"version": 3, "results": [
            _pf_result(1, assertions=({"type": "icontains", "value": "x"},))]}})),
    }  # fmt: skip
    for words, (path, text) in cases.items():
        path.write_text(text)
        argv = ["import", "promptfoo", str(path), "--run-dir", str(tmp_path / path.stem)]
        if path.stem == "e":
            argv += ["--assertion", "fluent"]
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and words in err, (words, err)
        assert not (tmp_path / path.stem).exists()


def test_an_import_never_overwrites_a_run_or_another_dataset(tmp_path, capsys):
    d = tmp_path / "qa"
    imports.import_inspect(LOG, d)
    before = (d / "items.parquet").read_bytes()
    imports.import_inspect(LOG, d)  # the same import again: a no-op
    table = tmp_path / "t.csv"
    pd.DataFrame({"id": ["1"], "system": ["s"], "judge": ["j"], "verdict": ["PASSED"], "input": ["i"],
                  "output": ["o"]}).to_csv(table, index=False)  # fmt: skip
    assert main(["import", "table", str(table), "--run-dir", str(d)]) == 2
    assert "holds another dataset" in capsys.readouterr().err
    assert (d / "items.parquet").read_bytes() == before
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text("{}")
    assert main(["import", "table", str(table), "--run-dir", str(run)]) == 2
    assert "holds a run" in capsys.readouterr().err and sorted(p.name for p in run.iterdir()) == ["manifest.json"]


# --- tables -----------------------------------------------------------------------------------------------

GOOD = {"id": "a", "system": "s", "judge": "j", "verdict": "PASSED", "input": "q", "output": "x"}


def _csv(tmp_path: Path, rows: list[dict], name: str = "t.csv") -> Path:
    p = tmp_path / name
    pd.DataFrame(rows).to_csv(p, index=False)
    return p


def test_a_table_with_criteria_groups_and_hidden_columns(tmp_path):
    rows = [
        {**GOOD, "id": "a", "group": "g1", "epoch": 1, "criterion:grounded": "PASSED", "criterion:polite": "PASSED",
         "judge_reason": "fine", "target": "t"},
        {**GOOD, "id": "b", "group": "g1", "epoch": 2, "verdict": "FAILED", "criterion:grounded": "FAILED",
         "criterion:polite": "PASSED", "judge_reason": "made up", "target": "t"},
        {**GOOD, "id": "c", "group": "", "epoch": "", "verdict": "", "criterion:grounded": "",
         "criterion:polite": "", "judge_reason": "", "target": "t"},
    ]  # fmt: skip
    d = tmp_path / "d"
    imports.import_table(_csv(tmp_path, rows), d)
    data = load_dataset(d)
    assert data.rubric.columns == ["grounded", "polite"] and data.rubric.scope == ("grounded", "polite")
    assert data.visible == ("input", "output", "target")
    assert list(data.attempts.level) == ["g1", "g1"] and list(data.attempts.attempt) == [1, 2]
    assert data.attempts.checks.iloc[1] == {"grounded": "FAILED", "polite": "PASSED"}
    assert list(data.unscored.reason) == ["unscored"] and data.unscored.level.iloc[0] == "c"
    judged = stored_items(d)
    assert judged[1]["hidden"] == {"judge_reason": "made up"}


def test_a_json_lines_table_imports_like_a_csv(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(json.dumps({**GOOD, "id": str(i), "output": {"text": "x"}}) for i in range(3)) + "\n")
    d = tmp_path / "d"
    assert main(["import", "table", str(p), "--run-dir", str(d), "--question", "Is it kind?"]) == 0
    data = load_dataset(d)
    assert len(data.attempts) == 3 and data.rubric.criteria[0].question == "Is it kind?"
    assert data.attempts.output.iloc[0] == '{"text": "x"}'


BAD_TABLES = [
    ([{k: v for k, v in GOOD.items() if k != "judge"}], "row 1: no column 'judge'"),
    ([GOOD, {**GOOD, "id": "b", "verdict": "maybe"}], "row 2, column 'verdict': 'maybe'"),
    ([GOOD, {**GOOD, "id": "b", "epoch": "0"}], "row 2, column 'epoch'"),
    ([GOOD, {**GOOD, "id": "a"}], "row 2, column 'id': 'a' repeats row 1"),
    ([GOOD, {**GOOD, "id": "b", "system": " "}], "row 2, column 'system': empty"),
    ([{**GOOD, "criterion:x": "FAILED"}], "row 1, column 'verdict': PASSED does not follow from the criteria"),
    ([{**GOOD, "criterion:x": "yes"}], "row 1, column 'criterion:x': 'YES' is not PASSED or FAILED"),
]


@pytest.mark.parametrize(("rows", "words"), BAD_TABLES)
def test_a_bad_table_gets_one_line_naming_row_and_column_and_nothing_is_written(tmp_path, capsys, rows, words):
    d = tmp_path / "d"
    assert main(["import", "table", str(_csv(tmp_path, rows)), "--run-dir", str(d)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err, err
    assert not d.exists()


def test_malformed_files_are_refused_cleanly(tmp_path, capsys):
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("id,system,judge,verdict,input,output\na,s,j,PASSED,q,x,extra\n")
    empty = tmp_path / "empty.csv"
    empty.write_text("id,system,judge,verdict,input,output\n")
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(GOOD) + "\n{not json\n")
    for path, words in [
        (ragged, "row 1: more fields than the header"),
        (empty, "no rows"),
        (broken, "row 2: not a JSON object"),
        (tmp_path / "x.xlsx", "no such file"),
    ]:
        assert main(["import", "table", str(path), "--run-dir", str(tmp_path / "d")]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and words in err, err
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_a_table_larger_than_memory_imports_in_bounded_memory(tmp_path, suffix):
    """150,000 rows of 4 KB answers (600 MB, where the 200,000-row and 128 MiB caps used to refuse a table; read
    whole it would take well over 1 GiB): imported in a child process whose peak resident memory stays under 1 GiB,
    every row counted."""
    big = tmp_path / f"big{suffix}"
    n, answer = 150_000, "x" * 4000
    with big.open("w") as f:
        if suffix == ".csv":
            f.write("id,system,judge,verdict,input,output\n")
        for i in range(n):
            verdict = "FAILED" if i % 3 == 0 else "PASSED"
            if suffix == ".csv":
                f.write(f"{i},s,j,{verdict},q,{answer}\n")
            else:
                f.write(json.dumps({**GOOD, "id": str(i), "verdict": verdict, "output": answer}) + "\n")
    assert big.stat().st_size > 600_000_000
    # the child's own high-water mark (VmHWM): ru_maxrss would carry the pytest parent's over the exec
    code = ("import re, sys; from vocab.cli import main; code = main(sys.argv[1:]); "
            "print(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)); "
            "sys.exit(code)")  # fmt: skip
    r = subprocess.run([sys.executable, "-c", code, "import", "table", str(big), "--run-dir", str(tmp_path / "d")],
                       capture_output=True, text=True, timeout=600)  # fmt: skip
    assert r.returncode == 0, r.stderr
    peak_kib = int(r.stdout.strip().splitlines()[-1])
    assert peak_kib < 2**20, f"peak {peak_kib / 2**10:.0f} MiB"
    assert f"{n} judged items" in r.stdout and f"{n // 3} FAILED" in r.stdout, r.stdout


# --- the chain on an imported dataset ---------------------------------------------------------------------


def known_truth_table(path: Path, n: int = 600, seed: int = 4) -> float:
    """Items secretly right or wrong (the output names the truth); the judge passes right ones with probability
    0.85 and wrong ones with 0.35, so its raw rate overstates the truth. Returns the true pass rate."""
    rng = np.random.default_rng(seed)
    rows, good_n = [], 0
    for i in range(n):
        good = bool(rng.random() < 0.4)
        passed = rng.random() < (0.85 if good else 0.35)
        good_n += good
        rows.append({"id": f"i{i:03d}", "group": f"i{i:03d}", "system": "model", "judge": "grader",
                     "verdict": "PASSED" if passed else "FAILED", "input": f"question {i}",
                     "output": ("right" if good else "wrong") + f" answer {i}", "truth": good})  # fmt: skip
    pd.DataFrame(rows).to_csv(path, index=False)
    return good_n / n


def oracle(sheet: pd.DataFrame, flip: float = 0.0, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    good = sheet.output.str.startswith("right") ^ (rng.random(len(sheet)) < flip)
    return pd.DataFrame({"blind_id": sheet.blind_id, "verdict": np.where(good, "PASSED", "FAILED")})


@pytest.fixture(scope="module")
def imported_chain(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("imported")
    d = tmp / "ds"
    truth = known_truth_table(tmp / "judged.csv")
    imports.import_table(tmp / "judged.csv", d)
    execute(NB / "02_sample.ipynb", {"run_dir": str(d), "per_pile": 40, "seed": 1}, tmp / "02.ipynb")
    sheet = calibration.read_sheet(d)
    oracle(sheet).to_csv(d / "calibration" / "ratings_oracle.csv", index=False)
    oracle(sheet, 0.15, 2).to_csv(d / "calibration" / "ratings_noisy.csv", index=False)
    params = {"run_dir": str(d), "raters": "oracle,noisy", "n_boot": 400, "seed": 0}
    execute(NB / "03_correct.ipynb", params, tmp / "03.ipynb")
    execute(NB / "04_agreement.ipynb", params, tmp / "04.ipynb")
    execute(NB / "06_figures.ipynb", {"run_dir": str(d), "figures_dir": str(tmp / "fig")}, tmp / "06.ipynb")
    small = {"piles": "10", "thetas": "0.5", "qs": "0.8", "spreads": "inf", "levels": 40, "methods": "fiducial",
             "sims": 20, "n_boot": 50, "full_grid": "", "run_dir": str(d), "figures_dir": str(tmp / "fig")}  # fmt: skip
    execute(NB / "08_coverage.ipynb", small, tmp / "08.ipynb")
    return d, truth, tmp


def _errors(nb: Path) -> list:
    cells = json.loads(nb.read_text())["cells"]
    return [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error"]


def test_the_notebooks_run_on_an_imported_dataset_with_parameters_only(imported_chain):
    d, _, tmp = imported_chain
    for name in ("02", "03", "04", "06", "08"):
        assert not _errors(tmp / f"{name}.ipynb"), name
    key = calibration.read_key(d)
    assert (key.groupby("pile").size() == 40).all() and key.level.str.startswith("i").all()
    # what the notebooks print (their source holds these sentences too, in print calls)
    assert "no script rater for this dataset's rubric: nothing to adjudicate" in outputs_text(tmp / "04.ipynb")
    assert "no script rater in this dataset: a rater's own error cannot be measured here" in outputs_text(
        tmp / "08.ipynb"
    )
    checks = pd.read_csv(d / "analysis" / "checks.csv")
    assert list(checks.check) == ["verdict"] and checks.n.iloc[0] == 80
    assert sorted(p.name for p in (tmp / "fig").glob("06_*.png")) == [
        "06_check_agreement.png",
        "06_differences.png",
        "06_rank_sets.png",
        "06_raw_vs_corrected.png",
        "06_sensitivity_specificity.png",
    ]


def test_a_known_truth_tables_corrected_rate_covers_the_truth(imported_chain):
    d, truth, _ = imported_chain
    corr = pd.read_csv(d / "analysis" / "correction.csv").set_index("rater")
    assert set(corr.index) == {"oracle", "noisy"}  # no +script variants: the dataset has no script rater
    r = corr.loc["oracle"]
    assert r.p > truth + 0.1  # the judge overstates ...
    assert r.ci_low <= truth <= r.ci_high and abs(r.theta - truth) < 0.06  # ... the correction recovers the truth
    assert r.q1 > 0.6 and r.q0 > 0.5
    bounds = pd.read_csv(d / "analysis" / "abandoned_bounds.csv")
    assert "unscored_items" in bounds.columns and (bounds.unscored_items == 0).all()
    kappa = pd.read_csv(d / "analysis" / "kappa.csv")
    assert list(kappa.variant) == ["raw"] and 0.4 < kappa.kappa.iloc[0] < 0.9


def test_ratings_follow_the_datasets_rubric(imported_chain, tmp_path, capsys):
    d, _, _ = imported_chain
    sheet = calibration.read_sheet(d)
    vocab_style = pd.DataFrame({"blind_id": sheet.blind_id, **{f"c{i}": "PASSED" for i in range(1, 13)}})
    vocab_style.to_csv(tmp_path / "r.csv", index=False)
    assert main(["ratings", "import", str(tmp_path / "r.csv"), "--run-dir", str(d), "--rater", "x"]) == 2
    assert "missing columns: verdict" in capsys.readouterr().err
    bad = oracle(sheet)
    bad.loc[0, "verdict"] = "yes"
    bad.to_csv(tmp_path / "r.csv", index=False)
    assert main(["ratings", "import", str(tmp_path / "r.csv"), "--run-dir", str(d), "--rater", "x"]) == 2
    assert "verdict is 'YES'" in capsys.readouterr().err
    assert not (d / "calibration" / "ratings_x.csv").exists()
    with pytest.raises(calibration.CalibrationError, match="no script rater"):
        calibration.write_script_ratings(d)


def test_the_llm_rater_and_the_human_form_grade_the_judges_question(tmp_path):
    """The LLM rater is asked the dataset's question about the visible fields only (a stand-in model at the
    client boundary answers); the human form saves the single verdict."""
    from tests.unit.standin import StandInModel

    d = tmp_path / "ds"
    imports.import_inspect(LOG, d, question="Is the submission right?")
    data = load_dataset(d)
    calibration.write_sample(calibration.draw_sample(data.attempts, 3, 0, data.visible), d)
    seen = []

    def respond(role, messages, n):
        seen.append(messages)
        return {"verdict": {"verdict": "FAILED", "reason": "wrong"}}

    model = StandInModel("standin", respond)
    progress = asyncio.run(calibration.rate_with_model(d, "standin", model))
    assert progress.complete
    ratings = calibration.read_ratings(d, "standin")
    assert list(ratings.columns) == ["blind_id", "verdict"] and set(ratings.verdict) == {"FAILED"}
    prompt = json.dumps(seen)
    assert "Is the submission right?" in prompt and "[OUTPUT]" in prompt
    for secret in ("GRADE", "gemma3", "model_graded_qa", "You are assessing"):  # a grade, the grader, its words
        assert secret not in prompt
    session = calibration.RatingSession(calibration.make_packet(d, "ann"))
    assert session.rubric.columns == ["verdict"] and set(session.current()) == {"blind_id", "input", "target",
                                                                                 "output"}  # fmt: skip
    with pytest.raises(calibration.CalibrationError, match="grade verdict first"):
        session.save({"1": "PASSED"})
    while not session.finished:
        session.save({"verdict": "PASSED"})
    assert main(["ratings", "import", str(session.packet / "ratings.csv"), "--run-dir", str(d), "--rater", "ann"]) == 0
    assert set(calibration.read_ratings(d, "ann").verdict) == {"PASSED"}
