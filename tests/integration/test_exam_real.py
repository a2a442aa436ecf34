"""The exam against the real critics: a registered, budgeted planted exam and pairwise exam on a copy of
the reference run, through the same critic call the loop uses."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vocab import rubric
from vocab.exam import run as examrun
from vocab.exam import tables
from vocab.records import read_jsonl

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def vocab(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vocab.cli", *args], cwd=ROOT, capture_output=True, text=True)


def test_registered_exams_run_on_the_real_critics_within_their_budget(servers, tmp_path):
    run = tmp_path / "reference"
    shutil.copytree(ROOT / "data" / "runs" / "reference-v1", run, ignore=shutil.ignore_patterns("exams"))
    reg = str(tmp_path / "registry.jsonl")
    planted = ["--run-dir", str(run), "--registry", reg, "--sources", "1", "--max-calls", "6", "--no-reference"]
    refused = vocab("exam", "planted", *planted)
    assert refused.returncode == 2 and "no registered exam entry" in refused.stderr
    assert vocab("exam", "register", "planted", "--id", "it-planted", "--prediction", "p", *planted).returncode == 0
    done = vocab("exam", "planted", *planted)
    assert done.returncode == 1, done.stderr  # 6 calls cannot judge 2 judges x 13 variants: incomplete
    out = run / "exams" / "it-planted"
    manifest = json.loads((out / "exam.json").read_text())
    items, errors = read_jsonl(out / "items.jsonl"), read_jsonl(out / "errors.jsonl")
    assert len(items) + len(errors) == 6 and manifest["counts"]["budget_skipped"] == manifest["jobs"] - 6
    assert manifest["source_kinds"] == {"run": 1, "reference": 0}
    for it in items:  # real critic answers, parsed by the loop's own rules
        assert set(it["checks"]) == set(rubric.CHECK_IDS) and it["verdict"] in ("PASSED", "FAILED")
        assert it["usage"]["completion_tokens"] > 0 and it["entry_hash"] == manifest["entry"]["hash"]

    pairwise = ["--run-dir", str(run), "--registry", reg, "--pairs", "1", "--max-calls", "40", "--judges", "smollm2"]
    assert vocab("exam", "register", "pairwise", "--id", "it-pairwise", "--prediction", "p", *pairwise).returncode == 0
    assert vocab("exam", "pairwise", *pairwise).returncode == 0
    got = examrun.load_exam(run / "exams" / "it-pairwise").items
    assert len(got) == 8 and set(got.winner) <= {"A", "B", "1", "2", "tie"}
    probe = tables.determinism(got)
    assert len(probe) == 2  # each null-pair label set asked twice with byte-identical prompts and seeds
