"""Replicas that fail independently, for real: configs/cpu-replicas.toml starts two SmolLM2 `vllm serve` processes,
one per core, behind vllm-router with its retries off. One replica is SIGKILLed while it holds calls: the run goes
on with the other, only the calls the dead one held (or was handed before the router's health check saw it gone)
end as logged connection errors and ABANDONED levels; serving again starts the dead replica alone, the router takes
it back, `--retry-abandoned` completes the lost levels without a duplicated attempt, and the calls the harness made
equal the requests the router forwarded."""

from __future__ import annotations

import json
import os
import re
import signal
import time
import urllib.request
from datetime import datetime
from pathlib import Path

import pytest

from tests.router_metrics import router_forwarded
from vocab.config import load_config
from vocab.records import load_run
from vocab.serving.client import INFRA_KINDS
from vocab.serving.servers import ROUTER_HEALTH_INTERVAL_S, Servers, router_workers

from .test_loop_real import assert_no_duplicates_or_gaps, result_lines, vocab_run, wait_for

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "cpu-replicas.toml"
# Four levels, two attempts each: a second attempt adds calls after the kill (the survivor must carry them) and is
# what a retried level chains; a third only lengthens both (2 cores: 284 s with six levels and three
# attempts, 253 s with these).
SHORT = ("--levels", "1-4", "--max-attempts", "2")


def router_load(port: int) -> dict[str, int]:
    """In-flight requests per replica URL, as the router's /workers page says."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/workers", timeout=5) as r:
        return {w["url"]: w["load"] for w in json.load(r)["workers"]}


def calls_made(output: str) -> int:
    return int(re.search(r"(\d+) calls in", output).group(1))


def test_a_replica_killed_mid_run_leaves_the_run_to_the_survivor(tmp_path):
    cfg = load_config(CONFIG)
    m = cfg.model("smollm2")
    metrics, dead_url = m.serve.router_metrics_port, f"http://127.0.0.1:{m.serve.replica_ports[1]}"
    run_dir = tmp_path / "run"
    with Servers(cfg) as servers:
        assert servers.reused == [], "a previous server holds the replicas' ports"
        p = vocab_run(CONFIG, run_dir, *SHORT)
        # kill r1 once both replicas have answered and r1 holds at least one call
        wait_for(
            lambda: (
                len(result_lines(run_dir)) >= 1
                and min(router_forwarded(metrics).values(), default=0) > 0
                and router_load(m.port).get(dead_url, 0) > 0
            ),
            900,
            "both replicas serving, r1 holding a call",
        )
        held = router_load(m.port)[dead_url]
        os.killpg(servers.procs["smollm2.r1"].pid, signal.SIGKILL)
        killed_at = time.time()
        out, _ = p.communicate(timeout=1500)
        assert p.returncode == 0, out
        forwarded = router_forwarded(metrics)
        assert calls_made(out) == sum(forwarded.values()), (out, forwarded)  # no call the budget did not see

        run = load_run(run_dir)
        server = run.manifest["models"]["smollm2"]["server"]
        assert sorted(w["url"] for w in server["router_workers"]) == [f"http://127.0.0.1:{p}" for p in (8122, 8123)]
        assert all(w["is_healthy"] and w["version"] == server["version"] for w in server["router_workers"]), server
        infra = run.errors[run.errors.kind.isin(INFRA_KINDS)]
        # The dead replica's calls, and nothing else, are connection errors: those it held, and those the router
        # handed it before its next health check (every 2 s) marked it down.
        assert set(infra.kind) == {"connection"} and len(infra) >= 1, run.errors
        assert all("behind a router" in msg for msg in infra.message)
        stamps = [datetime.fromisoformat(t).timestamp() for t in infra.time]
        assert max(stamps) <= killed_at + ROUTER_HEALTH_INTERVAL_S + 10, (held, list(infra.time))
        lost = run.outcomes[(run.outcomes.status == "ABANDONED") & (run.outcomes.error_kind == "connection")]
        assert len(lost) == len(infra)  # one per level: an infrastructure fault ends its level, never FAILs it
        after = [a for a in result_lines(run_dir) if datetime.fromisoformat(a["finished"]).timestamp() > max(stamps)]
        assert after, "nothing was logged after the kill: the survivor did not carry the run"
        assert not (run.outcomes.status == "PENDING").any()

        # serving again starts the dead replica alone, and the running router's health check takes it back
        with Servers(cfg) as again:
            assert again.reused == ["smollm2.r0", "smollm2"] and list(again.procs) == ["smollm2.r1"]
            assert router_workers(m.port) == {dead_url: True, f"http://127.0.0.1:{m.serve.replica_ports[0]}": True}
            # --retry-abandoned completes the lost levels, once each, every call one request the router sent on
            before = sum(router_forwarded(metrics).values())
            p = vocab_run(CONFIG, run_dir, *SHORT, "--retry-abandoned")
            out, _ = p.communicate(timeout=1500)
            assert p.returncode == 0, out
            assert calls_made(out) == sum(router_forwarded(metrics).values()) - before
    run = load_run(run_dir)
    still = run.outcomes[run.outcomes.status == "ABANDONED"]
    assert set(still.error_kind) <= {"truncated", "malformed", "schema"}, still  # the model's own answers only
    assert_no_duplicates_or_gaps(run_dir)
