"""Start, watch and stop one ``vllm serve`` process per served model.

:func:`build_spec` turns a model's config into the exact command line and environment for a profile
(``cpu`` or ``gpu``); :class:`Servers` starts them, waits for each health check, reuses a healthy server
already listening on a configured port, writes each server's log to a file, and stops every process group
it started when the ``with`` block ends (Ctrl-C included). A server that dies during start-up raises
:class:`ServerStartError` carrying the last lines of its log. On the CPU profile each one-engine server (and each
replica) is pinned to its core by CPU affinity, set in the child before exec and inherited by vLLM's engine-core
process and every thread (tests/integration/test_serving.py reads it back from /proc); a data-parallel server's
engines share the CPUs this process may use.

A model with ``replicas = N`` is N independent ``vllm serve`` processes on its ``replica_ports``, each pinned to its
own core (or GPUs), behind one ``vllm-router`` (PyPI) on the model's port, started once every replica is healthy.
The router's retries are off: a call the harness makes is one request to one replica, so a replica that dies ends
only the calls in flight to it, as logged errors, while the router's health check sends later calls to the others.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import math
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from vocab.config import Config, ConfigError, ModelConfig, chat_template_path
from vocab.serving.models import prepared_dir
from vocab.serving.recipes import served_dtype

log = logging.getLogger(__name__)


class ServerStartError(RuntimeError):
    """A vLLM server did not become healthy; the message ends with the tail of its log."""


@dataclass(frozen=True)
class ServerSpec:
    name: str
    argv: tuple[str, ...]
    env: dict[str, str]  # only the variables vocab sets; the rest of the environment is inherited
    port: int
    log_path: Path
    cpus: tuple[int, ...] = ()  # the CPUs its processes may run on (empty: the inherited set)
    headless: bool = False  # a data-parallel worker node: engines only, no API server (no health check)
    model: str = ""  # the served model name (a replica's spec is named NAME.rI; default: the spec's name)
    router: bool = False  # a vllm-router in front of the model's replicas, started after them
    workers: tuple[str, ...] = ()  # a router's replica URLs

    @property
    def served_name(self) -> str:
        return self.model or self.name

    @property
    def health_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/health"

    def shell(self) -> str:
        """The command as one shell line, for ``--dry-run``."""
        import shlex

        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(self.env.items()))
        pin = f"taskset -c {','.join(map(str, self.cpus))} " if self.cpus else ""
        return " ".join(part for part in (env, f"{pin}{shlex.join(self.argv)}") if part)


def model_path(cfg: Config, m: ModelConfig) -> str:
    if m.kind == "embedded":
        return str(prepared_dir(cfg.cache_dir, m.asset))
    return m.model


def build_spec(
    cfg: Config, m: ModelConfig, profile: str | None = None, core: int = 0, replica: int | None = None
) -> ServerSpec:
    """The command and environment that serve model ``m`` under ``profile`` (default: the config's): the model's
    one server, or with ``replica`` = i its i-th replica (on its replica port, core or GPUs)."""
    if not m.served:
        raise ValueError(f"model {m.name!r} is of kind {m.kind!r}: vocab serve does not start it")
    profile = profile or cfg.profile
    o = m.serve
    port = m.port if replica is None else o.replica_ports[replica]
    name = m.name if replica is None else f"{m.name}.r{replica}"
    argv = [
        sys.executable,
        "-m",
        "vocab.serving.launcher",
        "serve",
        model_path(cfg, m),
        "--served-model-name",
        m.name,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--dtype",
        served_dtype(o.dtype, profile),
        "--max-model-len",
        str(o.max_model_len),
        # Sampling comes from our config alone, never from a generation_config.json in the model folder.
        "--generation-config",
        "vllm",
        "--structured-outputs-config.backend",
        "xgrammar",
        # JSON without free whitespace: shorter critic answers, and no runaway newlines from tiny models.
        "--structured-outputs-config.disable_any_whitespace",
        "true",
        "--disable-uvicorn-access-log",
    ]
    template = chat_template_path(cfg, m)
    if template is not None:
        argv += ["--chat-template", str(template)]
    if o.reasoning_parser:
        argv += ["--reasoning-parser", o.reasoning_parser]
    cache = cfg.cache_dir
    env = {
        # vLLM leaves sockets in TMPDIR and its compile cache in VLLM_CACHE_ROOT: keep both in the project.
        "TMPDIR": str(cache / "tmp"),
        "VLLM_CACHE_ROOT": str(cache / "vllm"),
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
    }
    if m.kind == "embedded":
        # Its weights are a prepared local folder: nothing may be fetched. A `vllm` model names what vLLM
        # accepts, often a hub id that the GPU machine downloads, so the hub stays reachable there.
        env |= {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    # On the cpu profile a server is one engine, or with data_parallel_size = N, N engines on this machine behind one
    # API server (vLLM balancing them); tensor, pipeline and multi-node options are for the gpu profile.
    cpu_dp = profile == "cpu" and o.data_parallel_size > 1
    if profile == "cpu" and o.distributed and o.parallel_args() != ["--data-parallel-size", str(o.data_parallel_size)]:
        raise ConfigError(
            f"[models.{m.name}.serve] {' '.join(o.parallel_args())}: the cpu profile serves one engine "
            "per server, or data_parallel_size engines on this machine; tensor, pipeline and multi-node "
            "options are for the gpu profile"
        )
    if cpu_dp and o.cpu_core is not None:
        raise ConfigError(
            f"[models.{m.name}.serve] cpu_core with data_parallel_size = {o.data_parallel_size}: the "
            "engines share the CPUs this process may use; leave cpu_core out"
        )
    if profile == "cpu":
        # Eager mode: ready in ~30 s; torch.compile took 80-100 s to start and degraded the output here.
        argv += ["--enforce-eager", "--distributed-executor-backend", "uni"]
        # No chunked prefill on CPU: when a seeded request's prompt is split across steps, vLLM 0.32 rewinds
        # that request's torch generator (`gen.set_offset`), which CPU generators do not support, and the
        # engine dies ("CPU Generator does not use offset", EngineDeadError) under concurrent load.
        argv += ["--no-enable-chunked-prefill"]
        if replica is not None and o.replica_gpus:
            raise ConfigError(
                f"[models.{m.name}.serve] replica_gpus: the cpu profile pins replicas to cores (replica_cores)"
            )
        if replica is None:
            key, chosen = "cpu_core", o.cpu_core
        else:
            key, chosen = "replica_cores", (o.replica_cores[replica] if o.replica_cores else None)
        cpus = (chosen if chosen is not None else core,)
        allowed = sorted(os.sched_getaffinity(0))
        if cpu_dp:
            # N engine processes (vLLM's multiprocess executor, whatever the flag says) on every CPU this process
            # may use, one OpenMP thread each: the kernel spreads them; nothing pins an engine to a core. One API
            # server in front (vLLM's default is one per engine, each a process spawned to import vLLM again):
            # measured on 2 cores, start-up 117 s -> 85 s, and the harness's concurrency needs no second front end.
            # extra_args (appended after) may set another --api-server-count.
            cpus = ()
            argv += ["--data-parallel-size", str(o.data_parallel_size), "--api-server-count", "1"]
        if cpus and cpus[0] not in allowed:
            raise ConfigError(
                f"[models.{m.name}.serve] {key} = {cpus[0]}: this process may run on CPUs "
                f"{','.join(map(str, allowed))} only"
            )
        env |= {
            "VLLM_TARGET_DEVICE": "cpu",
            "VLLM_CPU_KVCACHE_SPACE": str(o.kv_cache_gib),
            # One OpenMP thread for the model's compute, and the uniprocess executor (no worker process spinning a
            # core). The core binding itself is the process's CPU affinity, set before exec (Servers.start) and
            # inherited by the engine-core process and every thread: with the `uni` executor vLLM 0.32 reads no
            # binding variable of its own (VLLM_CPU_OMP_THREADS_BIND is for its multiprocess executor).
            "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
            "OMP_NUM_THREADS": "1",
        }
        if cpu_dp:  # data parallel is multiprocess by construction (an engine process per rank, a coordinator)
            del env["VLLM_ENABLE_V1_MULTIPROCESSING"]
    elif profile == "gpu":
        cpus = ()
        if o.gpu_memory_utilization is not None:
            argv += ["--gpu-memory-utilization", str(o.gpu_memory_utilization)]
        argv += o.parallel_args()
        if replica is not None and o.replica_cores:
            raise ConfigError(
                f"[models.{m.name}.serve] replica_cores: the gpu profile gives replicas GPUs (replica_gpus)"
            )
        if replica is not None:  # one GPU each: the configured one, else the i-th (physical index) for replica i
            env["CUDA_VISIBLE_DEVICES"] = o.replica_gpus[replica] if o.replica_gpus else str(replica)
    else:
        raise ValueError(f"unknown profile {profile!r}")
    argv += list(o.extra_args)
    log_path = cache / "logs" / f"vllm_{name}.log"
    return ServerSpec(name, tuple(argv), env, port, log_path, cpus, o.headless, model=m.name)


# The router's health check: every 2 s, one failure marks a replica down (its defaults, 60 s and 3, would send calls
# to a dead replica for minutes). Its request timeout outlasts the client's, so that the client's timeout decides.
ROUTER_HEALTH_INTERVAL_S = 2


def router_spec(cfg: Config, m: ModelConfig) -> ServerSpec:
    """``vllm-router`` on the model's port in front of its replicas: retries off, its metrics on 127.0.0.1."""
    o = m.serve
    workers = tuple(f"http://127.0.0.1:{p}" for p in o.replica_ports)
    argv = [
        sys.executable,
        "-m",
        "vllm_router.launch_router",
        "--host",
        "127.0.0.1",
        "--port",
        str(m.port),
        "--worker-urls",
        *workers,
        "--policy",
        o.router_policy,
        # A router retry would be a second request the harness never sees: one call, one request, one replica.
        "--disable-retries",
        "--health-check-interval-secs",
        str(ROUTER_HEALTH_INTERVAL_S),
        "--health-failure-threshold",
        "1",
        "--request-timeout-secs",
        str(math.ceil(m.timeout_s) + 60),
        "--prometheus-host",
        "127.0.0.1",
        "--prometheus-port",
        str(o.router_metrics_port),
        "--log-level",
        "warning",
    ]
    log_path = cfg.cache_dir / "logs" / f"router_{m.name}.log"
    return ServerSpec(m.name, tuple(argv), {}, m.port, log_path, model=m.name, router=True, workers=workers)


def model_specs(cfg: Config, m: ModelConfig, profile: str | None = None, first: int = 0) -> list[ServerSpec]:
    """Every process that serves model ``m``: its server, or its replicas followed by their router. A process without
    a configured core takes the next CPU this process may use, counting from the ``first``-th."""
    allowed = sorted(os.sched_getaffinity(0))
    if not m.serve.replicated:
        return [build_spec(cfg, m, profile, core=allowed[first % len(allowed)])]
    n = len(allowed)
    replicas = [build_spec(cfg, m, profile, allowed[(first + i) % n], replica=i) for i in range(m.serve.replicas)]
    return [*replicas, router_spec(cfg, m)]


def served_specs(cfg: Config, profile: str | None = None, names: list[str] | None = None) -> list[ServerSpec]:
    models = [m for m in cfg.models.values() if m.served and (names is None or m.name in names)]
    specs, first = [], 0
    for m in models:  # one running count over every pinned process: one per server, one per replica
        specs += model_specs(cfg, m, profile, first)
        first += m.serve.replicas
    return specs


def port_free(port: int) -> bool:
    """True when nothing listens on 127.0.0.1:``port`` (a bind succeeds)."""
    import socket

    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def health(port: int, timeout: float = 2.0, path: str = "/health") -> bool:
    """True when 127.0.0.1:``port`` answers ``path`` with 200. A vllm-router answers /health with 503 while any of
    its replicas is down, and /liveness with 200 while it runs."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError, TimeoutError):
        return False


def router_workers(port: int, timeout: float = 5.0) -> dict[str, bool]:
    """A vllm-router's replicas, URL -> healthy, from its /workers page."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/workers", timeout=timeout) as r:
        return {w["url"]: bool(w.get("is_healthy")) for w in json.load(r).get("workers", [])}


def served_names(port: int, timeout: float = 5.0) -> list[str]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=timeout) as r:
        return [d["id"] for d in json.load(r).get("data", [])]


def log_tail(path: Path, lines: int = 25) -> str:
    try:
        with path.open(errors="replace") as f:
            return "".join(deque(f, maxlen=lines))
    except OSError:
        return "(no log)"


class Servers:
    """Context manager: the configured vLLM servers, healthy inside the block, stopped after it."""

    def __init__(
        self, cfg: Config, profile: str | None = None, names: list[str] | None = None, startup_timeout: float = 900.0
    ):
        self.cfg = cfg
        self.specs = served_specs(cfg, profile, names)
        self.startup_timeout = startup_timeout
        self.procs: dict[str, subprocess.Popen] = {}
        self.reused: list[str] = []

    def __enter__(self) -> Servers:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        # Each process already healthy on its port and serving the model is reused: a server, a replica, a router.
        # So after a replica died, `vocab serve` starts that replica alone (the running router's health check takes
        # it back), and a router that died is started again in front of the replicas still running.
        todo = []
        for spec in self.specs:
            # a router is up while it runs (its /health says 503 while a replica is down); a server when healthy
            if spec.headless or not health(spec.port, path="/liveness" if spec.router else "/health"):
                todo.append(spec)
                continue
            self._check_identity(spec)
            log.info("%s: reusing the running %s on port %d", spec.name, _what(spec), spec.port)
            self.reused.append(spec.name)
        for spec in todo:  # a port held by anything else would answer the health check in the new process's stead
            if not spec.headless and not port_free(spec.port):
                raise ServerStartError(
                    f"{spec.name}: port {spec.port} is in use but does not answer as a healthy {_what(spec)} (one "
                    "still starting, a hung one, or another program): wait, stop it, or change the port in the config"
                )
        for routers in (False, True):  # the servers, then the routers in front of replicas once these are healthy
            phase = [s for s in todo if s.router == routers]
            for spec in phase:
                self._launch(spec)
            self.wait_healthy(phase)
        for spec in (s for s in self.specs if s.router and s.name in self.reused):
            self._wait_router_takes_back(spec)

    def _wait_router_takes_back(self, spec: ServerSpec) -> None:
        """A reused router marks replicas started again healthy at its next health checks: wait for it, so that the
        deployment is whole when ``start`` returns."""
        deadline = time.monotonic() + max(30.0, 10 * ROUTER_HEALTH_INTERVAL_S)
        while True:
            try:
                down = [url for url, ok in router_workers(spec.port).items() if not ok]
            except (urllib.error.URLError, OSError, TimeoutError, ValueError, KeyError) as e:
                raise ServerStartError(f"{spec.name}: the router on port {spec.port} stopped answering ({e})") from None
            if not down:
                return
            if time.monotonic() > deadline:
                raise ServerStartError(
                    f"{spec.name}: the router on port {spec.port} still marks {down} down, though they answer "
                    "/health: see their logs"
                )
            time.sleep(0.5)

    def _check_identity(self, spec: ServerSpec) -> None:
        """A running process on ``spec``'s port may be reused only if it is what the config would start: a server
        that serves the model, or a router in front of exactly the configured replicas."""
        try:
            if spec.router:
                found = sorted(router_workers(spec.port))
                if found != sorted(spec.workers):
                    raise ServerStartError(
                        f"{spec.name}: the router on port {spec.port} routes to {found}, not to this config's "
                        f"replicas {sorted(spec.workers)}: stop it or change the port"
                    )
                return
            names = served_names(spec.port)
        except (urllib.error.URLError, OSError, TimeoutError, ValueError, KeyError) as e:
            raise ServerStartError(f"{spec.name}: port {spec.port} answers, but not as a {_what(spec)} ({e})") from None
        if spec.served_name not in names:
            raise ServerStartError(
                f"port {spec.port} already serves {names}, not {spec.served_name!r}: stop it or change the port"
            )

    def _launch(self, spec: ServerSpec) -> None:
        for key in ("TMPDIR", "VLLM_CACHE_ROOT"):
            if key in spec.env:
                Path(spec.env[key]).mkdir(parents=True, exist_ok=True)
        spec.log_path.parent.mkdir(parents=True, exist_ok=True)
        logf = spec.log_path.open("ab")
        logf.write(f"\n=== vocab serve {time.strftime('%Y-%m-%dT%H:%M:%S')} ===\n{spec.shell()}\n".encode())
        logf.flush()
        log.info("%s: starting on port %d (log: %s)", spec.name, spec.port, spec.log_path)
        self.procs[spec.name] = subprocess.Popen(
            list(spec.argv),
            env={**os.environ, **spec.env},
            stdout=logf,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group, stopped as one
            preexec_fn=functools.partial(_child_setup, spec.cpus),
        )
        logf.close()

    def wait_healthy(self, specs: list[ServerSpec] | None = None) -> None:
        specs = self.specs if specs is None else specs
        deadline = time.monotonic() + self.startup_timeout
        # a headless worker node has no API server: it is up while its process runs (the head reports its engines)
        pending = {s.name: s for s in specs if s.name in self.procs and not s.headless}
        while pending:
            for name, spec in list(pending.items()):
                proc = self.procs[name]
                what = _what(spec)
                if proc.poll() is not None:
                    raise ServerStartError(
                        f"{name}: {what} exited with code {proc.returncode} during start-up; "
                        f"last lines of {spec.log_path}:\n{log_tail(spec.log_path)}"
                    )
                if health(spec.port):
                    log.info("%s: healthy", name)
                    del pending[name]
            if pending and time.monotonic() > deadline:
                name, spec = next(iter(pending.items()))
                raise ServerStartError(
                    f"{name}: not healthy after {self.startup_timeout:.0f} s; last lines of {spec.log_path}:\n"
                    f"{log_tail(spec.log_path)}"
                )
            if pending:
                time.sleep(1.0)
        for spec in (s for s in specs if s.headless and s.name in self.procs):
            if self.procs[spec.name].poll() is not None:
                raise ServerStartError(
                    f"{spec.name}: the headless worker exited with code {self.procs[spec.name].returncode} during "
                    f"start-up; last lines of {spec.log_path}:\n{log_tail(spec.log_path)}"
                )

    def stop(self, timeout: float = 30.0) -> None:
        """Stop every process group this object started (reused servers are left running): the routers first, waited
        for, so that no call is routed to a replica that is stopping; then the servers. A replica started behind a
        router this object reused is stopped while that router may still send it calls: those calls end as logged
        connection errors, and their levels ABANDONED (``--retry-abandoned`` completes them)."""
        routers = {s.name for s in self.specs if s.router}
        for phase in (routers, set(self.procs) - routers):
            procs = {name: p for name, p in self.procs.items() if name in phase}
            for name, proc in procs.items():
                if proc.poll() is None:
                    log.info("%s: stopping", name)
                    _signal_group(proc, signal.SIGTERM)
            deadline = time.monotonic() + timeout
            for proc in procs.values():
                try:
                    proc.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    _signal_group(proc, signal.SIGKILL)
                    proc.wait()
        self.procs.clear()

    def pids(self) -> dict[str, int]:
        return {name: p.pid for name, p in self.procs.items()}


def _what(spec: ServerSpec) -> str:
    return "vllm-router" if spec.router else "vllm serve"


def _child_setup(cpus: tuple[int, ...]) -> None:
    """In the child before exec: pin it to ``cpus`` (its children and threads inherit the affinity), and ask Linux
    to SIGTERM the server if the process that started it dies without stopping it (a SIGKILLed test run must not
    leave servers holding 4 GiB each)."""
    if cpus:
        os.sched_setaffinity(0, cpus)
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG = 1
    except OSError:
        pass


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)  # start_new_session=True made the server its group's leader
