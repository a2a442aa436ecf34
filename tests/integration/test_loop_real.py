"""The loop against the real vLLM servers: a tiny four-cell design run by `vocab run`, SIGKILLed after its first logged
attempts and resumed; the design's records, the resume's guarantees and the calibration chain are read from that one
run (made once for this module). An endpoint that dies mid-run is test_data_parallel_real's and
test_replicas_real's."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from vocab.records import load_run, read_jsonl
from vocab.serving.client import ERROR_KINDS

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
EMBEDDED = ROOT / "configs" / "embedded.toml"
FINAL = {"PASSED", "HARD_FAIL", "ABANDONED"}


def vocab_run(config: Path, run_dir: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vocab.cli",
            "run",
            "--config",
            str(config),
            "--run-dir",
            str(run_dir),
            "--no-progress",
            *extra,
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def result_lines(run_dir: Path) -> list[dict]:
    return [r for p in sorted(run_dir.glob("results_*.jsonl")) for r in read_jsonl(p)]


def wait_for(pred, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def assert_no_duplicates_or_gaps(run_dir: Path):
    rows = result_lines(run_dir)
    keys = Counter((r["cell"], r["level"], r["attempt"]) for r in rows)
    assert max(keys.values(), default=1) == 1, [k for k, n in keys.items() if n > 1]
    per_level: dict = {}
    for cell, level, attempt in keys:
        per_level.setdefault((cell, level), []).append(attempt)
    for attempts in per_level.values():
        assert sorted(attempts) == list(range(1, len(attempts) + 1))


# one attempt a level: the records of all four cells, the kill and the resume need no retry chain (the replica test
# chains real retries; the loop's retries are unit-tested with a stand-in model)
LEVELS = ("--levels", "1,301", "--max-attempts", "1")


@dataclass(frozen=True)
class Resumed:
    run_dir: Path
    before: dict[str, list[dict]]  # each results file's complete lines when the runner was killed
    errors_before: int
    status_at_kill: str
    returncode: int
    output: str  # the resumed runner's


@pytest.fixture(scope="module")
def resumed(servers, tmp_path_factory) -> Resumed:
    """Levels 1 and 301 in all four cells: `vocab run`, SIGKILLed once two attempts are logged, then the same command
    again, which resumes the run to its end."""
    run_dir = tmp_path_factory.mktemp("loop") / "run"
    p = vocab_run(EMBEDDED, run_dir, *LEVELS)
    wait_for(lambda: len(result_lines(run_dir)) >= 2, 900, "two logged attempts")
    p.send_signal(signal.SIGKILL)
    p.wait()
    # the complete lines of each results file (read_jsonl leaves out a line the kill cut short)
    before = {f.name: read_jsonl(f) for f in sorted(run_dir.glob("results_*.jsonl"))}
    errors = run_dir / "errors.jsonl"
    errors_before = len(read_jsonl(errors)) if errors.exists() else 0
    status = load_run(run_dir).manifest["status"]
    p = vocab_run(EMBEDDED, run_dir, *LEVELS)
    out, _ = p.communicate(timeout=1800)
    return Resumed(run_dir, before, errors_before, status, p.returncode, out)


def test_sigkill_mid_run_then_resume_loses_and_duplicates_nothing(resumed):
    assert sum(len(rows) for rows in resumed.before.values()) >= 2
    assert resumed.status_at_kill == "running"  # killed: it never wrote its end
    assert resumed.returncode == 0, resumed.output
    run = load_run(resumed.run_dir)
    assert run.manifest["status"] == "complete" and len(run.manifest["resumed"]) == 1
    for name, rows in resumed.before.items():  # every record logged before the kill is still there, as it was
        assert read_jsonl(resumed.run_dir / name)[: len(rows)] == rows, name
    assert set(run.outcomes.status) <= FINAL
    assert_no_duplicates_or_gaps(resumed.run_dir)


def test_the_design_runs_both_models_in_all_four_cells(resumed):
    run = load_run(resumed.run_dir)
    assert sorted(run.cells) == ["gemma3__gemma3", "gemma3__smollm2", "smollm2__gemma3", "smollm2__smollm2"]
    assert len(run.outcomes) == 8 and set(run.outcomes.status) <= FINAL
    # every call the resumed runner made is an attempt's writer and critic call or a logged failed call
    after = len(result_lines(resumed.run_dir)) - sum(len(rows) for rows in resumed.before.values())
    errors = read_jsonl(resumed.run_dir / "errors.jsonl") if (resumed.run_dir / "errors.jsonl").exists() else []
    failed = sum(1 + (e["role"] == "critic") for e in errors[resumed.errors_before :])
    assert int(re.search(r"(\d+) calls in", resumed.output).group(1)) == 2 * after + failed, resumed.output
    for a in run.attempts.itertuples():
        assert set(a.checks) == {str(i) for i in range(1, 13)} and a.verdict in ("PASSED", "FAILED")
        assert a.usage["writer"]["completion_tokens"] > 0 and a.usage["critic"]["completion_tokens"] > 0
        assert a.usage["critic"]["model"] == a.critic and a.usage["writer"]["model"] == a.writer
    assert set(run.errors.kind) <= set(ERROR_KINDS)
    assert run.manifest["models"]["gemma3"]["weights"]["gguf_sha256"]
    for name in ("smollm2", "gemma3"):  # which deployment answered: the server's own description
        server = run.manifest["models"][name]["server"]
        # vLLM's /version says "0.32.0" where the package's metadata says "0.32.0+cpu"
        assert run.manifest["versions"]["vllm"].startswith(server["version"]) and server["models"][0]["id"] == name
        # the dtype its server was started in here, the instruction-set family whose recipe chose it, and the dtype
        # the engine logged as it started (read from its log, not from vocab's config)
        isa = run.manifest["machine"]["isa"]
        family = "avx512" if "avx512f" in isa else "avx2" if "avx2" in isa else "unmeasured"
        assert run.manifest["models"][name]["serve"] == {"profile": "cpu", "dtype": "float32", "recipe": family,
                                                         "dtype_served": "float32"}  # fmt: skip


def test_the_calibration_chain_runs_on_the_run(resumed, embedded_config):
    """As the demo runs it: the blind sample, the script rater, both models as isolated LLM blind raters."""
    from vocab.calibration import KEY_COLUMNS, calibrate_run, read_key, read_sheet

    said = []
    complete = calibrate_run(embedded_config, resumed.run_dir, ["gemma3", "smollm2"], None, said.append)
    key, sheet = read_key(resumed.run_dir), read_sheet(resumed.run_dir)
    assert list(key.columns) == KEY_COLUMNS and len(key) == len(sheet) > 0
    cal = resumed.run_dir / "calibration"
    assert (cal / "ratings_script.csv").exists() and said[0].startswith("blind sample:")
    for name in ("gemma3", "smollm2"):  # each rater either completed its sheet or said why not
        assert (name in complete) == (cal / f"ratings_{name}.csv").exists()
        assert any(m.startswith(f"blind rater {name}:") for m in said)
