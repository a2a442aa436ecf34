"""Audit a judge from promptfoo, end to end on real parts: `promptfoo eval` (the npm package, pinned in
tests/promptfoo/) runs tests/promptfoo_task.py's config against the embedded vLLM servers (smollm2 answers, gemma3
grades with `llm-rubric`), and its results file goes through `vocab audit` -> the blind sample and a rater's
packet, the verdicts being the llm-rubric components' as promptfoo recorded them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.stored import stored_items
from vocab.calibration import read_key
from vocab.datasets.dataset import load_dataset

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from promptfoo_task import PROMPTFOO, eval_command  # noqa: E402


def test_promptfoo_results_made_here_go_through_vocab_audit_to_packets(servers, embedded_config, tmp_path):
    assert PROMPTFOO.exists(), "promptfoo is not installed: `make setup` installs it (needs Node.js 20 and npm)"
    ports = {name: m.port for name, m in embedded_config.models.items()}
    argv, env = eval_command(6, tmp_path / "pf", ports["smollm2"], ports["gemma3"])
    r = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=1800)
    assert r.returncode in (0, 100), r.stdout[-2000:] + r.stderr[-2000:]  # 100: some tests failed, results written
    results = tmp_path / "pf" / "results.json"
    doc = json.loads(results.read_text())
    assert doc["results"]["version"] == 3 and len(doc["results"]["results"]) == 12  # 6 questions x 2 repeats

    d = tmp_path / "audit"
    r = subprocess.run([sys.executable, "-m", "vocab.cli", "audit", str(results), "--out", str(d), "--raters", "ann",
                        "--per-pile", "3"], cwd=ROOT, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    assert "12 judged items (promptfoo)" in r.stdout and "ann.zip" in r.stdout
    data = load_dataset(d)
    assert data.manifest["source"]["kind"] == "promptfoo" and data.manifest["source"]["grader"] == ["gemma3"]
    # each verdict is the llm-rubric component's, as promptfoo recorded it (a grader error is UNSCORED); a result
    # whose model call failed (promptfoo's failureReason 2, an error response) was graded by nobody: UNSCORED
    expected = {}
    for res in doc["results"]["results"]:
        if not res.get("gradingResult"):
            assert res.get("failureReason") == 2 or (res.get("response") or {}).get("error"), res
            expected[res["id"]] = "UNSCORED"
            continue
        (comp,) = [c for c in res["gradingResult"]["componentResults"] if c["assertion"]["type"] == "llm-rubric"]
        expected[res["id"]] = "UNSCORED" if comp.get("metadata", {}).get("graderError") else (
            "PASSED" if comp["pass"] else "FAILED")  # fmt: skip
    got = {row["hidden"]["promptfoo_result_id"]: row["verdict"]
           for row in stored_items(d)}  # fmt: skip
    assert got == expected
    assert (d / "packets" / "ann.zip").exists() and len(read_key(d)) >= 1
