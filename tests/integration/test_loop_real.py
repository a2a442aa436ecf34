"""The loop against the real vLLM servers: a tiny design, a SIGKILLed runner, a server killed mid-run."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from vocab.config import load_config
from vocab.loop import run_design
from vocab.records import load_run, read_jsonl
from vocab.serving.client import ERROR_KINDS, Clients
from vocab.serving.servers import Servers

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
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
    assert max(keys.values()) == 1, [k for k, n in keys.items() if n > 1]
    per_level: dict = {}
    for cell, level, attempt in keys:
        per_level.setdefault((cell, level), []).append(attempt)
    for attempts in per_level.values():
        assert sorted(attempts) == list(range(1, len(attempts) + 1))


def test_tiny_design_on_both_models_in_all_four_cells(servers, embedded_config, tmp_path):
    loop = embedded_config.loop
    import dataclasses

    loop = dataclasses.replace(loop, levels="1,301")

    async def go():
        async with Clients.from_config(embedded_config) as clients:
            return await run_design(embedded_config, loop, tmp_path / "run", clients, progress=False)

    summary = asyncio.run(go())
    run = load_run(tmp_path / "run")
    assert run.manifest["status"] == "complete"
    assert sorted(run.cells) == ["gemma3__gemma3", "gemma3__smollm2", "smollm2__gemma3", "smollm2__smollm2"]
    assert len(run.outcomes) == 8 and set(run.outcomes.status) <= FINAL
    assert summary.calls == 2 * len(run.attempts) + sum(1 + (e.role == "critic") for e in run.errors.itertuples())
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

    # The calibration chain on it, as the demo runs it: sample, script rater, both models as blind raters.
    from vocab.calibration import KEY_COLUMNS, calibrate_run, read_key, read_sheet

    said = []
    complete = calibrate_run(embedded_config, tmp_path / "run", ["gemma3", "smollm2"], None, said.append)
    key, sheet = read_key(tmp_path / "run"), read_sheet(tmp_path / "run")
    assert list(key.columns) == KEY_COLUMNS and len(key) == len(sheet) > 0
    cal = tmp_path / "run" / "calibration"
    assert (cal / "ratings_script.csv").exists() and said[0].startswith("blind sample:")
    for name in ("gemma3", "smollm2"):  # each rater either completed its sheet or said why not
        assert (name in complete) == (cal / f"ratings_{name}.csv").exists()
        assert any(m.startswith(f"blind rater {name}:") for m in said)


def test_sigkill_mid_run_then_resume_loses_and_duplicates_nothing(servers, tmp_path):
    run_dir = tmp_path / "run"
    config = ROOT / "configs" / "embedded.toml"
    p = vocab_run(config, run_dir, "--levels", "2,3,4")
    wait_for(lambda: len(result_lines(run_dir)) >= 3, 600, "three logged attempts")
    p.send_signal(signal.SIGKILL)
    p.wait()
    # the complete lines of each results file (read_jsonl leaves out a line the kill cut short)
    before = {f.name: read_jsonl(f) for f in sorted(run_dir.glob("results_*.jsonl"))}
    assert sum(len(rows) for rows in before.values()) >= 3
    assert load_run(run_dir).manifest["status"] == "running"  # killed: it never wrote its end
    p = vocab_run(config, run_dir, "--levels", "2,3,4")
    out, _ = p.communicate(timeout=1200)
    assert p.returncode == 0, out
    run = load_run(run_dir)
    assert run.manifest["status"] == "complete" and len(run.manifest["resumed"]) == 1
    for name, rows in before.items():  # every record logged before the kill is still there, as it was, in place
        assert read_jsonl(run_dir / name)[: len(rows)] == rows, name
    assert set(run.outcomes.status) <= FINAL
    assert_no_duplicates_or_gaps(run_dir)


def test_killed_server_abandons_levels_and_retry_completes_them(tmp_path):
    cfg_path = tmp_path / "one.toml"
    cache = (ROOT / ".cache").resolve()
    cfg_path.write_text(f"""
[project]
cache_dir = "{cache}"
[models.smolx]
kind = "embedded"
asset = "smollm2-135m-instruct"
port = 8111
max_tokens = 200
concurrency = 4
timeout_s = 900  # generous: on an AVX2-only machine a 512-token answer beside a busy server took over 120 s
[models.smolx.sampling]
temperature = 0.2
top_p = 0.9
[models.smolx.serve]
cpu_core = 0
[loop]
writers = ["smolx"]
critics = ["smolx"]
levels = "1-6"
writer_max_tokens = 200
critic_max_tokens = 512
""")
    cfg = load_config(cfg_path)
    run_dir = tmp_path / "run"
    with Servers(cfg) as servers:
        p = vocab_run(cfg_path, run_dir)
        wait_for(lambda: len(result_lines(run_dir)) >= 1, 600, "a first logged attempt")
        os.killpg(servers.procs["smolx"].pid, signal.SIGKILL)
        out, _ = p.communicate(timeout=600)
        servers.procs["smolx"].wait()
    assert p.returncode == 0, out
    run = load_run(run_dir)
    abandoned = run.outcomes[run.outcomes.status == "ABANDONED"]
    assert len(abandoned) >= 1
    assert set(run.errors.kind) <= {"connection", "timeout", "http_status"}
    assert not (run.outcomes.status == "PENDING").any()
    # an abandoned level is never a Hard FAIL: it has fewer than max_attempts attempts
    assert (abandoned.attempts < 3).all()
    with Servers(cfg):
        p = vocab_run(cfg_path, run_dir, "--retry-abandoned")
        out, _ = p.communicate(timeout=1200)
    assert p.returncode == 0, out
    run = load_run(run_dir)
    # What the harness guarantees, whatever the tiny model writes: every level the dead server abandoned was
    # asked again and none is left abandoned by an infrastructure fault. A level may stay ABANDONED only by
    # the model's own answer (a truncation at max_tokens, which the pinned seed reproduces), logged by kind.
    assert not (run.outcomes.status == "PENDING").any()
    still = run.outcomes[run.outcomes.status == "ABANDONED"]
    assert set(still.error_kind) <= {"truncated", "malformed", "schema"}, still
    retried = set(zip(abandoned.cell, abandoned.level, strict=True))
    for cell, level in retried:
        row = run.outcomes[(run.outcomes.cell == cell) & (run.outcomes.level == level)].iloc[0]
        assert row.status != "ABANDONED" or row.error_kind not in {"connection", "timeout", "http_status"}
    assert_no_duplicates_or_gaps(run_dir)
