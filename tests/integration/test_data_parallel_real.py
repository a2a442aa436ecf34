"""vLLM's own data parallelism on this CPU machine: SmolLM2 with data_parallel_size = 2 (two engine processes
behind one API server, vLLM balancing them). Both engines serve calls of a real run (vLLM's per-engine metrics
say so); then one engine core is SIGKILLed. What vLLM 0.32 does then, recorded here: the whole endpoint goes down
with it (a dense model's engines are not independent for the API server), so every call in flight ends as a
logged infrastructure error (`connection`, `http_status` or `aborted`) and its level ABANDONED, never FAILED;
nothing is duplicated. (Replicas behind a router are the shape that survives a dead copy: test_replicas_real.py,
which also restarts the dead copy and completes the lost levels with --retry-abandoned: that path is proved there.)"""

from __future__ import annotations

import os
import re
import signal
import urllib.request
from pathlib import Path

import pytest

from vocab.config import load_config
from vocab.records import load_run
from vocab.serving.client import INFRA_KINDS
from vocab.serving.servers import Servers, health

from .test_loop_real import assert_no_duplicates_or_gaps, vocab_run, wait_for

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
INFRA = list(INFRA_KINDS)


def engine_metric(port: int, name: str) -> dict[str, float]:
    """A vLLM counter or gauge summed per engine (label ``engine``), from the server's /metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    out: dict[str, float] = {}
    for engine, value in re.findall(rf'^vllm:{name}\{{[^}}]*engine="(\d+)"[^}}]*\}} ([0-9.eE+-]+)$', text, re.M):
        out[engine] = out.get(engine, 0.0) + float(value)
    return out


def engine_core_pid(group: int, rank: int) -> int:
    """The pid of ``VLLM::EngineCore_DP{rank}`` in the server's process group (vLLM names its processes)."""
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
            if os.getpgid(int(d.name)) == group and cmd.startswith(f"VLLM::EngineCore_DP{rank}"):
                return int(d.name)
        except (OSError, ProcessLookupError):
            continue
    raise AssertionError(f"no VLLM::EngineCore_DP{rank} in process group {group}")


def test_two_engines_serve_one_endpoint_and_a_dead_engine_abandons_only_what_was_in_flight(tmp_path):
    cfg_path = tmp_path / "dp.toml"
    cfg_path.write_text(f"""
[project]
cache_dir = "{(ROOT / ".cache").resolve()}"
[models.smoldp]
kind = "embedded"
asset = "smollm2-135m-instruct"
port = 8131
max_tokens = 768
concurrency = 8       # 2 engines x 4 sequences each
timeout_s = 900
[models.smoldp.sampling]
temperature = 0.2
top_k = 64
[models.smoldp.serve]
dtype = "float32"
data_parallel_size = 2
[loop]
writers = ["smoldp"]
critics = ["smoldp"]
levels = "1-4"
max_attempts = 1      # what is tested is the engines and the fault, not the retries: one attempt keeps it short
writer_max_tokens = 200
critic_max_tokens = 512
""")
    cfg = load_config(cfg_path)
    run_dir = tmp_path / "run"
    assert not health(8131), "a server already listens on 8131: this test needs its own"
    with Servers(cfg) as servers:
        group = servers.procs["smoldp"].pid
        p = vocab_run(cfg_path, run_dir)
        # both engines have finished calls of this run, and engine 1 holds one now
        wait_for(
            lambda: (
                min(engine_metric(8131, "request_success_total").values(), default=0) > 0
                and engine_metric(8131, "num_requests_running").get("1", 0) > 0
            ),
            900,
            "both engines serving, engine 1 busy",
        )
        os.kill(engine_core_pid(group, 1), signal.SIGKILL)
        out, _ = p.communicate(timeout=600)
        assert p.returncode == 0, out
        wait_for(lambda: servers.procs["smoldp"].poll() is not None, 60, "the API server to go down with its engine")
        assert not health(8131)
    run = load_run(run_dir)
    # What vLLM 0.32 answered, seen here: the dead engine's call an HTTP 500, the sibling engine's calls (shut down
    # in abort mode) an HTTP 200 with the tokens so far and finish_reason "abort" (kind `aborted`, never the
    # model's `malformed`), the rest a dropped connection; after it, nothing listens (connection refused).
    infra = run.errors[run.errors.kind.isin(INFRA)]
    assert len(infra) >= 1, run.errors
    reasons = run.errors.usage.map(lambda u: (u or {}).get("finish_reason"))
    assert run.errors[reasons.isin(["abort", "error"])].kind.eq("aborted").all()  # never folded into a content kind
    lost = run.outcomes[run.outcomes.status == "ABANDONED"]
    assert lost.error_kind.isin(INFRA).sum() == len(infra)  # one per level: the fault ends it, never FAILs it
    assert not (run.outcomes.status == "PENDING").any()
    assert_no_duplicates_or_gaps(run_dir)
