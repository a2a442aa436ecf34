"""Replicas behind vllm-router: the config, the command lines (each parsed by its own program's parser), the start
order (replicas healthy before their router starts, checked with stand-in processes that are small HTTP servers),
the router's forwarded-request count and the deployment record. The real replicas: tests/integration/
test_replicas_real.py."""

from __future__ import annotations

import http.server
import json
import os
import signal
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from tests.router_metrics import router_forwarded
from vocab.config import ConfigError, ModelConfig, load_config
from vocab.serving.roundtrip import deployment
from vocab.serving.servers import Servers, ServerSpec, ServerStartError, health, served_specs

ROOT = Path(__file__).resolve().parents[2]
CPU = ROOT / "configs" / "cpu-replicas.toml"
GPU = ROOT / "configs" / "gpu-replicas.toml"


def _serve_args(spec) -> list[str]:
    argv = list(spec.argv)
    return argv[argv.index("serve") + 1 :]


@pytest.fixture(scope="module")
def vllm_parser():
    from vllm.entrypoints.launchers.cli_args import make_arg_parser
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    return make_arg_parser(FlexibleArgumentParser())


def test_cpu_replicas_are_pinned_servers_then_their_router(vllm_parser):
    from vllm_router.launch_router import parse_router_args

    specs = served_specs(load_config(CPU), "cpu")
    assert [s.name for s in specs] == ["smollm2.r0", "smollm2.r1", "smollm2"]
    assert [s.router for s in specs] == [False, False, True]
    assert [s.cpus for s in specs] == [(0,), (1,), ()]
    for spec, port in zip(specs[:2], (8122, 8123), strict=True):
        args = vllm_parser.parse_args(_serve_args(spec))
        assert args.port == port and args.served_model_name == ["smollm2"] and spec.served_name == "smollm2"
        assert spec.log_path.name == f"vllm_{spec.name}.log"
    router = parse_router_args(list(specs[2].argv[3:]))  # vllm-router's own parser
    assert router.port == 8121 and router.host == "127.0.0.1"
    assert router.worker_urls == ["http://127.0.0.1:8122", "http://127.0.0.1:8123"]
    assert router.disable_retries is True and router.policy == "power_of_two"
    assert (router.prometheus_port, router.health_check_interval_secs, router.health_failure_threshold) == (8124, 2, 1)
    assert router.request_timeout_secs > load_config(CPU).model("smollm2").timeout_s  # the client's timeout decides


def test_gpu_replicas_get_one_gpu_each(vllm_parser):
    from vllm_router.launch_router import parse_router_args

    specs = served_specs(load_config(GPU), "gpu")
    assert [s.env.get("CUDA_VISIBLE_DEVICES") for s in specs] == ["0", "1", "2", "3", None]
    for spec in specs[:4]:
        assert vllm_parser.parse_args(_serve_args(spec)).served_model_name == ["qwen"]
    urls = [f"http://127.0.0.1:{p}" for p in range(8111, 8115)]
    assert parse_router_args(list(specs[4].argv[3:])).worker_urls == urls


def test_replicas_without_cores_take_the_allowed_cpus_in_turn(tmp_path, monkeypatch):
    text = CPU.read_text().replace("replica_cores = [0, 1]", "")
    second = text[text.index("[models.smollm2]") : text.index("[loop]")].replace("[models.smollm2", "[models.other")
    second = second.replace("8121", "8131").replace("8122, 8123", "8132, 8133").replace("8124", "8134")
    p = tmp_path / "c.toml"
    p.write_text(text.replace("[loop]", second + "[loop]"))
    # CPU ids that are not list positions, and more of them than the four replicas need
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {2, 3, 5, 7, 11})
    specs = [s for s in served_specs(load_config(p), "cpu") if not s.router]
    assert {s.name: s.cpus for s in specs} == {"other.r0": (2,), "other.r1": (3,), "smollm2.r0": (5,),
                                               "smollm2.r1": (7,)}  # fmt: skip


def test_gpu_replicas_default_to_one_gpu_each(tmp_path):
    p = _with(tmp_path, "replica_cores = [0, 1]", "")
    assert [s.env.get("CUDA_VISIBLE_DEVICES") for s in served_specs(load_config(p), "gpu")] == ["0", "1", None]


def test_settings_of_replicas_are_refused_with_one_server(tmp_path):
    p = _with(tmp_path, "replicas = 2", "replicas = 1")
    text = p.read_text().replace('router_policy = "power_of_two"', 'router_policy = "random"')
    for key in ("replica_ports = [8122, 8123]", "replica_cores = [0, 1]", "router_metrics_port = 8124"):
        text = text.replace(key, "")
    p.write_text(text)
    with pytest.raises(ConfigError, match="router_policy: set only with replicas > 1"):
        load_config(p)
    p.write_text(text.replace('router_policy = "random"', "router_metrics_port = 0"))
    with pytest.raises(ConfigError, match="router_metrics_port: set only with replicas > 1"):
        load_config(p)


def _with(tmp_path, old: str, new: str) -> Path:
    text = CPU.read_text()
    assert old in text
    p = tmp_path / "bad.toml"
    p.write_text(text.replace(old, new))
    return p


@pytest.mark.parametrize(
    "old, new, words",
    [
        ("replica_ports = [8122, 8123]\n", "", "replica_ports: needs one port per replica"),
        ("replica_ports = [8122, 8123]", "replica_ports = [8122]", "needs one port per replica"),
        ("replica_ports = [8122, 8123]", "replica_ports = [8122, 8122]", "two replicas share a port"),
        ("replica_ports = [8122, 8123]", "replica_ports = [8121, 8123]", "port 8121 is used twice"),
        ("replica_ports = [8122, 8123]", "replica_ports = [80, 8123]", "must lie in 1024..65535"),
        ("replica_ports = [8122, 8123]", 'replica_ports = ["a", 8123]', "expected a list of integers"),
        ("router_metrics_port = 8124", "", "router_metrics_port: missing"),
        ("router_metrics_port = 8124", "router_metrics_port = 8122", "port 8122 is used twice"),
        ('router_policy = "power_of_two"', 'router_policy = "fastest"', "router_policy: must be one of"),
        ("replica_cores = [0, 1]", "replica_cores = [0]", "one entry per replica"),
        ("replica_cores = [0, 1]", "replica_cores = [-1, 0]", "non-negative"),
        ("replica_cores = [0, 1]", "cpu_core = 0", "give replica_cores"),
        ("replicas = 2", "replicas = 0", "replicas: must be positive"),
        ("replicas = 2", "replicas = 1", "replica_ports: set only with replicas > 1"),
        ("replicas = 2", "replicas = 2\ndata_parallel_size = 2", "replicas are whole single-engine servers"),
        ("replica_cores = [0, 1]", 'replica_gpus = ["0", "x"]', "one CUDA_VISIBLE_DEVICES string per replica"),
        ("replica_cores = [0, 1]", 'replica_gpus = ["0", " 1"]', "one CUDA_VISIBLE_DEVICES string per replica"),
        ("replica_cores = [0, 1]", "replica_cores = [1, 1]", "two replicas share one"),
        ("replica_cores = [0, 1]", 'replica_gpus = ["0", "0"]', "two replicas share one"),
        ("kv_cache_gib = 1", "kv_cache_gib = 1000", "GiB x 2 replicas or engines, more than this machine's"),
    ],
)
def test_bad_replica_settings_are_one_line_config_errors(tmp_path, old, new, words):
    with pytest.raises(ConfigError, match=words) as e:
        load_config(_with(tmp_path, old, new))
    assert "\n" not in str(e.value) and "bad.toml" in str(e.value)


def test_profile_mismatched_pinning_is_refused(tmp_path):
    p = _with(tmp_path, "replica_cores = [0, 1]", 'replica_gpus = ["0", "1"]')
    with pytest.raises(ConfigError, match="the cpu profile pins replicas to cores"):
        served_specs(load_config(p), "cpu")
    with pytest.raises(ConfigError, match="the gpu profile gives replicas GPUs"):
        served_specs(load_config(CPU), "gpu")


def test_a_core_this_process_may_not_use_is_refused(tmp_path):
    p = _with(tmp_path, "replica_cores = [0, 1]", "replica_cores = [0, 4096]")
    with pytest.raises(ConfigError, match="replica_cores = 4096: this process may run on CPUs"):
        served_specs(load_config(p), "cpu")


@pytest.mark.parametrize("extra", ["", "replica_ports = [9001, 9002]\nrouter_metrics_port = 9003\n"])
def test_an_endpoint_cannot_have_replicas(tmp_path, extra):
    p = tmp_path / "e.toml"
    head = '[models.judge]\nkind = "endpoint"\nbase_url = "http://10.0.0.1:8000/v1"\n'
    p.write_text(head + "[models.judge.serve]\nreplicas = 2\n" + extra)
    with pytest.raises(ConfigError, match="serve.replicas: an endpoint is started elsewhere"):
        load_config(p)


# --- the start order, with stand-in processes: tiny HTTP servers -----------------------------------------------

STANDIN = """
import http.server, json, signal, sys, time, urllib.request
name, port, needs = sys.argv[1], int(sys.argv[2]), [int(p) for p in sys.argv[3:]]
stamps = sys.argv[0] + ".stops"
def stopped(*_):  # the order in which the stand-ins were stopped, for the test to read
    with open(stamps, "a") as f:
        f.write(f"{name} {time.time()}\\n")
    time.sleep(0.3)  # a router that takes a moment to go
    sys.exit(0)
signal.signal(signal.SIGTERM, stopped)
for p in needs:  # a stand-in router: refuses to start unless every replica already answers /health
    urllib.request.urlopen(f"http://127.0.0.1:{p}/health", timeout=2)
if not needs:
    time.sleep(1.0)  # a stand-in replica takes a while to listen, as vllm serve does
def up(p):
    try:
        return urllib.request.urlopen(f"http://127.0.0.1:{p}/health", timeout=2).status == 200
    except OSError:
        return False
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # as vllm-router 0.1.17 answers: /health 503 while a replica is down, /liveness 200, /workers
        code, body = 200, b'{"data": [{"id": "m"}]}'
        if needs and self.path == "/health" and not all(up(p) for p in needs):
            code, body = 503, b"Unhealthy servers"
        elif needs and self.path == "/workers":
            body = json.dumps({"workers": [{"url": f"http://127.0.0.1:{p}", "is_healthy": up(p)} for p in needs]})
            body = body.encode()
        self.send_response(code); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
"""


def _free_ports(n: int) -> list[int]:
    import socket

    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _standin_specs(tmp_path, *ports_and_needs):
    script = tmp_path / "standin.py"
    script.write_text(STANDIN)
    specs = []
    for name, port, needs in ports_and_needs:
        argv = (sys.executable, str(script), name, str(port), *map(str, needs))
        workers = tuple(f"http://127.0.0.1:{p}" for p in needs)
        specs.append(
            ServerSpec(name, argv, {}, port, tmp_path / f"{name}.log", model="m", router=bool(needs), workers=workers)
        )
    return specs, Path(str(script) + ".stops")


def test_the_router_starts_only_after_its_replicas_are_healthy_and_stops_first(tmp_path, monkeypatch):
    a, b, front = _free_ports(3)
    specs, stops = _standin_specs(tmp_path, ("m.r0", a, ()), ("m.r1", b, ()), ("m", front, (a, b)))
    monkeypatch.setattr("vocab.serving.servers.served_specs", lambda *args, **kw: specs)
    with Servers(load_config(CPU), startup_timeout=60) as servers:
        assert list(servers.procs) == ["m.r0", "m.r1", "m"]
        assert all(p.poll() is None for p in servers.procs.values())  # the router found both replicas up
        procs = dict(servers.procs)
    assert all(p.poll() is not None for p in procs.values())
    order = [line.split() for line in stops.read_text().splitlines()]
    assert order[0][0] == "m" and {n for n, _ in order[1:]} == {"m.r0", "m.r1"}
    # the replicas were signalled only after the router had finished stopping (it takes 0.3 s)
    assert min(float(t) for _, t in order[1:]) >= float(order[0][1]) + 0.3


def test_a_router_that_dies_at_start_is_named_with_its_log(tmp_path, monkeypatch):
    a, front, nothing = _free_ports(3)
    specs, _ = _standin_specs(tmp_path, ("m.r0", a, ()), ("m", front, (nothing,)))
    monkeypatch.setattr("vocab.serving.servers.served_specs", lambda *args, **kw: specs)
    with pytest.raises(ServerStartError, match="m: vllm-router exited with code 1 during start-up") as e:
        Servers(load_config(CPU), startup_timeout=60).__enter__()
    assert "Connection refused" in str(e.value)  # the tail of its log


def test_a_replica_port_held_by_another_process_is_refused_before_anything_starts(tmp_path, monkeypatch):
    a, b, front = _free_ports(3)
    specs, _ = _standin_specs(tmp_path, ("m.r0", a, ()), ("m.r1", b, ()), ("m", front, (a, b)))
    monkeypatch.setattr("vocab.serving.servers.served_specs", lambda *args, **kw: specs)
    squatter = http.server.ThreadingHTTPServer(("127.0.0.1", b), _Handler)  # answers /health like a server
    threading.Thread(target=squatter.serve_forever, daemon=True).start()
    try:
        servers = Servers(load_config(CPU), startup_timeout=60)
        with pytest.raises(
            ServerStartError, match=f"m.r1: port {b} is in use but does not answer as a healthy vllm serve"
        ):
            servers.__enter__()
        assert servers.procs == {}  # nothing was started
    finally:
        squatter.shutdown()
        squatter.server_close()


def _kill(proc) -> None:
    os.killpg(proc.pid, signal.SIGKILL)  # as a replica dies: no SIGTERM handler runs
    proc.wait()


def test_a_dead_replica_is_started_alone_behind_the_router_still_running(tmp_path, monkeypatch):
    a, b, front = _free_ports(3)
    specs, stops = _standin_specs(tmp_path, ("m.r0", a, ()), ("m.r1", b, ()), ("m", front, (a, b)))
    monkeypatch.setattr("vocab.serving.servers.served_specs", lambda *args, **kw: specs)
    with Servers(load_config(CPU), startup_timeout=60) as first:
        _kill(first.procs["m.r1"])
        assert not health(b)
        with Servers(load_config(CPU), startup_timeout=60) as again:
            assert again.reused == ["m.r0", "m"]
            assert list(again.procs) == ["m.r1"] and health(b)
        # it stopped what it started, the replica, and left the router and the other replica running
        assert not health(b) and health(a) and health(front, path="/liveness") and not health(front)
        assert first.procs["m"].poll() is None and first.procs["m.r0"].poll() is None
    assert [line.split()[0] for line in stops.read_text().splitlines()][:1] == ["m.r1"]


def test_a_dead_router_is_started_again_in_front_of_the_running_replicas(tmp_path, monkeypatch):
    a, b, front = _free_ports(3)
    specs, _ = _standin_specs(tmp_path, ("m.r0", a, ()), ("m.r1", b, ()), ("m", front, (a, b)))
    monkeypatch.setattr("vocab.serving.servers.served_specs", lambda *args, **kw: specs)
    with Servers(load_config(CPU), startup_timeout=60) as first:
        _kill(first.procs["m"])
        with Servers(load_config(CPU), startup_timeout=60) as again:
            assert again.reused == ["m.r0", "m.r1"]
            assert list(again.procs) == ["m"] and health(front)
        assert not health(front) and health(a) and health(b)


def test_a_router_in_front_of_other_replicas_is_not_reused(tmp_path, monkeypatch):
    a, b, front = _free_ports(3)
    specs, _ = _standin_specs(tmp_path, ("m.r0", a, ()), ("m.r1", b, ()), ("m", front, (a, b)))
    foreign, _ = _standin_specs(tmp_path, ("m.r0", a, ()), ("m", front, (a,)))  # another config's: one replica
    chosen = [foreign]
    monkeypatch.setattr("vocab.serving.servers.served_specs", lambda *args, **kw: chosen[0])
    with Servers(load_config(CPU), startup_timeout=60):
        chosen[0] = specs
        again = Servers(load_config(CPU), startup_timeout=60)
        with pytest.raises(ServerStartError, match=rf"the router on port {front} routes to \['http://127.0.0.1:{a}'\]"):
            again.__enter__()
        assert again.procs == {}  # refused before anything started


# --- what the router reports --------------------------------------------------------------------------------------

# vllm-router 0.1.17's page after a replica died mid-run (shortened): the policy's counter stopped with one replica
# left, the circuit breaker's outcomes count every request sent on
METRICS = """# HELP vllm_router_processed_requests_total Total requests processed
# TYPE vllm_router_processed_requests_total counter
vllm_router_processed_requests_total{worker="http://127.0.0.1:8122"} 9
vllm_router_processed_requests_total{worker="http://127.0.0.1:8123"} 6
vllm_router_requests_total{route="/v1/chat/completions"} 20
vllm_router_cb_outcomes_total{worker="http://127.0.0.1:8122",outcome="success"} 14
vllm_router_cb_outcomes_total{worker="http://127.0.0.1:8123",outcome="success"} 4
vllm_router_cb_outcomes_total{worker="http://127.0.0.1:8123",outcome="failure"} 2
vllm_router_worker_health{worker="http://127.0.0.1:8123"} 0
"""


class _Handler(http.server.BaseHTTPRequestHandler):
    pages: dict[str, tuple[str, bytes]] = {}

    def do_GET(self):  # noqa: N802
        ctype, body = self.pages.get(self.path, ("text/plain", b""))
        self.send_response(200 if self.path in self.pages else 404)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def httpd():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def test_router_forwarded_counts_every_request_sent_to_a_replica(httpd):
    _Handler.pages = {"/metrics": ("text/plain", METRICS.encode())}
    assert router_forwarded(httpd.server_port) == {"http://127.0.0.1:8122": 14, "http://127.0.0.1:8123": 6}


def test_the_deployment_record_lists_the_routers_replicas(httpd):
    (closed,) = _free_ports(1)
    here, gone = f"http://127.0.0.1:{httpd.server_port}", f"http://127.0.0.1:{closed}"
    workers = {"workers": [{"url": here, "is_healthy": True, "load": 3}, {"url": gone, "is_healthy": False}]}
    _Handler.pages = {
        "/v1/models": ("application/json", json.dumps({"data": [{"id": "smollm2"}]}).encode()),
        "/workers": ("application/json", json.dumps(workers).encode()),
        "/version": ("application/json", b'{"version": "0.32.0"}'),
    }
    m = load_config(CPU).model("smollm2")
    # the one stand-in server is router and first replica; the second replica's port is closed
    m = replace(m, port=httpd.server_port, serve=replace(m.serve, replica_ports=(httpd.server_port, closed)))
    rec = deployment(m, timeout=2)
    assert rec["models"] == [{"id": "smollm2"}]
    first, second = rec["router_workers"]
    assert first == {"url": here, "version": "0.32.0", "is_healthy": True}  # asked directly, not through the router
    assert second["url"] == gone and second["is_healthy"] is False and "Connection refused" in second["version_error"]
    assert "version" not in rec and "replicas report different versions" in rec["version_error"]
    one = ModelConfig(name="x", kind="embedded", asset="smollm2-135m-instruct", port=httpd.server_port)
    assert "router_workers" not in deployment(one) and deployment(one)["version"] == "0.32.0"  # one server, no router
