"""Run directories: level outcomes, the raw table and the cost tables on a hand-made run."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from vocab import tables
from vocab.records import JsonlWriter, level_outcomes, load_run, read_jsonl


def usage(model, tokens, seconds=1.0):
    return {
        "model": model,
        "endpoint": "x",
        "prompt_tokens": 100,
        "completion_tokens": tokens,
        "reasoning_tokens": None,
        "finish_reason": "stop",
        "seconds": seconds,
    }


def attempt(cell, level, n, verdict):
    w, c = cell.split("__")
    return {
        "run_id": "r",
        "cell": cell,
        "writer": w,
        "critic": c,
        "level": level,
        "tier": 1,
        "attempt": n,
        "verdict": verdict,
        "usage": {"writer": usage(w, 30), "critic": usage(c, 200, 4.0)},
        "started": f"2026-01-01T00:00:0{n}+00:00",
        "finished": f"2026-01-01T00:00:0{n + 1}+00:00",
    }


def make_run_dir(tmp_path):
    d = tmp_path / "run"
    d.mkdir()
    cells = ["w__c"]
    manifest = {
        "run_id": "r",
        "cells": cells,
        "loop": {"max_attempts": 3},
        "status": "complete",
        "rubric": {"version": "1.0", "hash": "0" * 64},
        "design": {"levels": [1, 2, 3, 4], "generator_version": "1.0.0"},
        "models": {"w": {"request_model": "w"}, "c": {"request_model": "c"}},
    }
    (d / "manifest.json").write_text(json.dumps(manifest))
    lv = JsonlWriter(d / "levels.jsonl")
    for n in (1, 2, 3, 4):
        lv.write({"level": n, "tier": 1})
    lv.close()
    res = JsonlWriter(d / "results_w__c.jsonl")
    rows = [
        attempt("w__c", 1, 1, "FAILED"),
        attempt("w__c", 1, 2, "PASSED"),  # passed on attempt 2
        *[attempt("w__c", 2, n, "FAILED") for n in (1, 2, 3)],  # hard fail
        attempt("w__c", 3, 1, "FAILED"),
    ]  # then abandoned
    for r in rows[::-1]:  # order on disk must not matter
        res.write(r)
    res.close()
    err = JsonlWriter(d / "errors.jsonl")
    err.write(
        {
            "run_id": "r",
            "cell": "w__c",
            "level": 3,
            "attempt": 2,
            "role": "critic",
            "kind": "timeout",
            "message": "no answer",
            "time": "t",
            "usage": None,
        }
    )
    err.close()
    return d


@pytest.fixture
def run_dir(tmp_path):
    return make_run_dir(tmp_path)


def test_notebook_01_runs_on_any_run_directory(tmp_path):
    """pyhf-style: papermill executes the notebook with run_dir injected, output into tmp_path."""
    from pathlib import Path

    from vocab.nb import execute

    d = make_run_dir(tmp_path)
    nb = Path(__file__).resolve().parents[2] / "notebooks" / "01_run.ipynb"
    execute(nb, {"run_dir": str(d)}, tmp_path / "01_run.ipynb")
    raw = (d / "analysis" / "raw.csv").read_text().splitlines()
    assert raw[0] == ",".join(tables.RAW_COLUMNS) and raw[1].startswith("w__c,w,c,6,")


def test_outcomes_raw_table_and_costs(run_dir):
    run = load_run(run_dir)
    status = dict(zip(run.outcomes.level, run.outcomes.status, strict=True))
    assert status == {1: "PASSED", 2: "HARD_FAIL", 3: "ABANDONED", 4: "PENDING"}
    raw = tables.raw_table(run).iloc[0]
    assert raw.attempts == 6 and raw.p == pytest.approx(1 / 6)
    assert raw.levels == 4 and raw.hard_fail == 1 and raw.abandoned == 1
    assert raw.level_pass_rate == 0.5  # 1 passed of 2 levels with a result; the abandoned one is no result
    totals, per_model = tables.cost_tables(run)
    t = totals.iloc[0]
    assert t.attempt_pairs == 6 and t.model_calls == 6 * 2 + 2 and t.failed_calls == 1
    assert t.tokens_generated == 6 * 230
    m = per_model.set_index("model")
    assert m.loc["w", "calls"] == 7 and m.loc["c", "calls"] == 7 and m.loc["c", "failed"] == 1
    assert m.compute_share.sum() == pytest.approx(1.0)


def test_an_abandoned_level_that_was_retried_to_a_result_is_not_abandoned():
    atts = [attempt("w__c", 1, 1, "FAILED"), attempt("w__c", 1, 2, "PASSED")]
    errs = [{"cell": "w__c", "level": 1, "attempt": 2, "kind": "connection"}]  # attempt 2 failed once, then retried
    (o,) = level_outcomes(atts, errs, ["w__c"], [1], 3)
    assert o["status"] == "PASSED"


def test_writer_line_is_whole_and_reader_skips_a_torn_tail(tmp_path):
    p = tmp_path / "x.jsonl"
    w = JsonlWriter(p)
    w.write({"a": 1})
    w.close()
    with p.open("a") as f:
        f.write('{"a": 2')
    assert read_jsonl(p) == [{"a": 1}]
    w = JsonlWriter(p)  # reopening cuts the torn line before appending
    w.write({"a": 3})
    w.close()
    assert read_jsonl(p) == [{"a": 1}, {"a": 3}]


def test_time_table_separates_a_pause_from_work_and_counts_truncation_waste():
    """Two bursts of work 10 minutes apart (a resumed run): the pause is wall time, not active time; a truncated
    call's tokens are counted as waste."""
    import pandas as pd

    from vocab.records import Run

    rows = []
    for i, minute in enumerate([0, 0, 1, 12, 12]):
        a = attempt("w__c", i + 1, 1, "FAILED")
        a["started"] = f"2026-01-01T00:{minute:02d}:10+00:00"
        a["finished"] = f"2026-01-01T00:{minute:02d}:50+00:00"
        rows.append(a)
    errors = pd.DataFrame([{"run_id": "r", "cell": "w__c", "level": 9, "attempt": 1, "role": "critic",
                            "kind": "truncated", "message": "m", "time": "t",
                            "usage": usage("c", 768, 9.0)}])  # fmt: skip
    run = Run(None, {}, pd.DataFrame(), pd.DataFrame(rows), pd.DataFrame(), errors)
    totals, per_model = tables.time_table(run)
    t = totals.iloc[0]
    assert t.wall_minutes == pytest.approx(12 + 40 / 60, abs=0.05)  # rounded to 0.1 min
    # active: the union of the attempts' own intervals, 00:10-00:50, 01:10-01:50, 12:10-12:50 = 120 s (whole-minute
    # bins would count 3 minutes, and more than the wall time on a run that never pauses)
    assert t.active_minutes == 2 and t.idle_minutes == pytest.approx(12 + 40 / 60 - 2, abs=0.1)
    assert t.attempts_per_hour_active == pytest.approx(5 * 3600 / 120)
    assert t.in_flight_peak == 2
    m = per_model.set_index("model")
    assert m.loc["c", "truncated_calls"] == 1 and m.loc["c", "truncated_tokens"] == 768
    assert m.loc["w", "truncated_tokens"] == 0
    assert m.loc["c", "requests_in_flight"] == pytest.approx((5 * 4.0 + 9.0) / 120)


def test_busy_time_is_the_union_of_overlapping_intervals():
    import pandas as pd

    ts = lambda x: pd.Timestamp("2026-01-01T00:00:00") + pd.Timedelta(seconds=x)  # noqa: E731
    start = pd.Series([ts(0), ts(30), ts(50), ts(200)])
    end = pd.Series([ts(40), ts(60), ts(55), ts(210)])
    assert tables.busy_seconds(start, end) == 70.0  # [0, 60) and [200, 210)


LOG = Path(__file__).resolve().parents[1] / "logs" / "vllm_gemma3_start.log"  # a real vLLM 0.32.0 start, as logged


def test_the_dtype_a_server_logged_is_read_from_its_log(tmp_path):
    """tests/logs/vllm_gemma3_start.log is the start of a server's log as `vocab serve` wrote it (vLLM 0.32.0,
    gemma3 started with --dtype float32): the engine's own line says float32. A log appended by a later start says
    that start's; no log, or no engine line, says nothing."""
    from vocab.records import logged_dtype

    text = LOG.read_text()
    assert "--dtype float32" in text and logged_dtype(LOG) == "float32"
    again = tmp_path / "vllm_gemma3.log"
    again.write_text(text + text.replace("dtype=torch.float32", "dtype=torch.bfloat16"))
    assert logged_dtype(again) == "bfloat16"
    assert logged_dtype(tmp_path / "none.log") is None
    (tmp_path / "other.log").write_text("\n".join(text.splitlines()[:5]))
    assert logged_dtype(tmp_path / "other.log") is None


def test_the_manifest_records_the_dtype_served_beside_the_one_asked(tmp_path):
    """A run's model record: the dtype vocab asked for and the one the engine logged; without a log, None and why."""
    import shutil

    from vocab.config import load_config
    from vocab.records import model_records

    cfg = load_config(Path(__file__).resolve().parents[2] / "configs" / "embedded.toml")
    cfg = dataclasses.replace(cfg, cache_dir=tmp_path)
    (tmp_path / "logs").mkdir()
    shutil.copy(LOG, tmp_path / "logs" / "vllm_gemma3.log")
    recs = model_records(cfg, ["gemma3", "smollm2"], {"gemma3": {}, "smollm2": {}})
    assert recs["gemma3"]["serve"]["dtype"] == "float32" and recs["gemma3"]["serve"]["dtype_served"] == "float32"
    assert recs["smollm2"]["serve"]["dtype_served"] is None
    assert "not in the server's log" in recs["smollm2"]["serve"]["dtype_served_note"]
