"""Audit a judge from another harness, end to end on real parts: `inspect eval` runs tests/inspect_task.py
against the embedded vLLM servers (smollm2 answers, gemma3 grades with Inspect's model_graded_qa), and its log
goes through `vocab import inspect` -> `vocab calibrate` (the blind sample, an isolated LLM blind rater) ->
03_correct."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from vocab.calibration import read_key, read_ratings
from vocab.datasets.dataset import load_dataset
from vocab.nb import execute

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from inspect_task import eval_command  # noqa: E402


def vocab(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vocab.cli", *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=900)  # fmt: skip


def test_an_inspect_log_made_here_goes_through_import_sample_raters_and_correction(servers, embedded_config,
                                                                                     tmp_path):  # fmt: skip
    ports = {name: m.port for name, m in embedded_config.models.items()}
    argv, env = eval_command(24, tmp_path / "logs", ports["smollm2"], ports["gemma3"])
    r = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    (log,) = (tmp_path / "logs").glob("*.eval")

    d = tmp_path / "audit"
    r = vocab("import", "inspect", str(log), "--run-dir", str(d))
    assert r.returncode == 0, r.stderr
    assert "48 judged items (inspect)" in r.stdout
    data = load_dataset(d)
    assert len(data.attempts) + len(data.unscored) == 48  # 24 samples x 2 epochs, every one accounted for
    assert data.manifest["source"]["grader"] == "openai-api/vllm2/gemma3"

    r = vocab("calibrate", str(d), "--raters", "smollm2", "--per-pile", "6", "--config", str(ROOT / "configs" /
              "embedded.toml"))  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    assert "script rater none" in r.stdout and "blind rater smollm2" in r.stdout
    key = read_key(d)
    assert set(key.pile) <= {"passed", "failed"} and len(key) >= 6
    ratings = read_ratings(d, "smollm2")
    assert list(ratings.columns) == ["blind_id", "verdict"] and len(ratings) == len(key)
    answers = [json.loads(x) for x in (d / "calibration" / "rater_smollm2.jsonl").read_text().splitlines()]
    assert {a["model"] for a in answers} == {"smollm2"}

    execute(ROOT / "notebooks" / "03_correct.ipynb", {"run_dir": str(d), "raters": "smollm2", "n_boot": 400},
            tmp_path / "03.ipynb")  # fmt: skip
    corr = pd.read_csv(d / "analysis" / "correction.csv")
    assert list(corr.rater) == ["smollm2"] and list(corr.cell) == sorted(set(data.attempts.cell))
    row = corr.iloc[0]
    assert row.p == pytest.approx((data.attempts.verdict == "PASSED").mean(), abs=1e-6)  # written with 6 decimals
    assert 0 <= row.ci_low <= row.ci_high <= 1 and 0 <= row.theta <= 1
    # the default (randomised) interval may leave out an estimate at 0 or n; the table says so when it does
    assert row.ci_low <= row.theta <= row.ci_high and "outside:theta" not in str(row.flags)  # the interval holds it
    bounds = pd.read_csv(d / "analysis" / "abandoned_bounds.csv")
    assert bounds.unscored_items.iloc[0] == len(data.unscored)
