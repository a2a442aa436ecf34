"""Start, watch and stop one ``vllm serve`` process per served model.

:func:`build_spec` turns a model's config into the exact command line and environment for a profile
(``cpu`` or ``gpu``); :class:`Servers` starts them, waits for each health check, reuses a healthy server
already listening on a configured port, writes each server's log to a file, and stops every process group
it started when the ``with`` block ends (Ctrl-C included). A server that dies during start-up raises
:class:`ServerStartError` carrying the last lines of its log. On the CPU profile each server is pinned to its
core by CPU affinity, set in the child before exec and inherited by vLLM's engine-core process and every thread
(tests/integration/test_serving.py reads it back from /proc).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
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

from vocab.config import Config, ConfigError, ModelConfig
from vocab.serving.models import prepared_dir

log = logging.getLogger(__name__)

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"


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

    @property
    def health_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/health"

    def shell(self) -> str:
        """The command as one shell line, for ``--dry-run``."""
        import shlex

        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(self.env.items()))
        pin = f"taskset -c {','.join(map(str, self.cpus))} " if self.cpus else ""
        return f"{env} {pin}{shlex.join(self.argv)}"


def model_path(cfg: Config, m: ModelConfig) -> str:
    if m.kind == "embedded":
        return str(prepared_dir(cfg.cache_dir, m.asset))
    return m.model


def chat_template_path(cfg: Config, m: ModelConfig) -> Path | None:
    if m.serve.chat_template is None:
        return None
    name = m.serve.chat_template
    if name.startswith("vocab:"):  # a template shipped in the package
        return TEMPLATES / name.removeprefix("vocab:")
    return cfg.resolve(name)


def build_spec(cfg: Config, m: ModelConfig, profile: str | None = None, core: int = 0) -> ServerSpec:
    """The command and environment that serve model ``m`` under ``profile`` (default: the config's)."""
    if not m.served:
        raise ValueError(f"model {m.name!r} is of kind {m.kind!r}: vocab serve does not start it")
    profile = profile or cfg.profile
    o = m.serve
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
        str(m.port),
        "--dtype",
        o.dtype,
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
    if profile == "cpu" and o.distributed:
        raise ConfigError(f"[models.{m.name}.serve] {' '.join(o.parallel_args())}: the cpu profile serves one engine "
                          "per server (the uni executor); the parallel options are for the gpu profile")  # fmt: skip
    if profile == "cpu":
        # Eager mode: ready in ~30 s; torch.compile took 80-100 s to start and degraded the output here.
        argv += ["--enforce-eager", "--distributed-executor-backend", "uni"]
        # No chunked prefill on CPU: when a seeded request's prompt is split across steps, vLLM 0.32 rewinds
        # that request's torch generator (`gen.set_offset`), which CPU generators do not support, and the
        # engine dies ("CPU Generator does not use offset", EngineDeadError) under concurrent load.
        argv += ["--no-enable-chunked-prefill"]
        cpus = (o.cpu_core if o.cpu_core is not None else core,)
        allowed = sorted(os.sched_getaffinity(0))
        if cpus[0] not in allowed:
            raise ConfigError(f"[models.{m.name}.serve] cpu_core = {cpus[0]}: this process may run on CPUs "
                              f"{','.join(map(str, allowed))} only")  # fmt: skip
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
    elif profile == "gpu":
        cpus = ()
        if o.gpu_memory_utilization is not None:
            argv += ["--gpu-memory-utilization", str(o.gpu_memory_utilization)]
        argv += o.parallel_args()
    else:
        raise ValueError(f"unknown profile {profile!r}")
    argv += list(o.extra_args)
    return ServerSpec(m.name, tuple(argv), env, m.port, cache / "logs" / f"vllm_{m.name}.log", cpus, o.headless)


def served_specs(cfg: Config, profile: str | None = None, names: list[str] | None = None) -> list[ServerSpec]:
    models = [m for m in cfg.models.values() if m.served and (names is None or m.name in names)]
    allowed = sorted(os.sched_getaffinity(0))  # a model without cpu_core: the next CPU this process may use
    return [build_spec(cfg, m, profile, core=allowed[i % len(allowed)]) for i, m in enumerate(models)]


def health(port: int, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=timeout) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError, TimeoutError):
        return False


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
        for spec in self.specs:
            if not spec.headless and health(spec.port):
                names = served_names(spec.port)
                if spec.name not in names:
                    raise ServerStartError(
                        f"port {spec.port} already serves {names}, not {spec.name!r}: stop it or change the port"
                    )
                log.info("%s: reusing the healthy server on port %d", spec.name, spec.port)
                self.reused.append(spec.name)
                continue
            for key in ("TMPDIR", "VLLM_CACHE_ROOT"):
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
        self.wait_healthy()

    def wait_healthy(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        # a headless worker node has no API server: it is up while its process runs (the head reports its engines)
        pending = {s.name: s for s in self.specs if s.name in self.procs and not s.headless}
        while pending:
            for name, spec in list(pending.items()):
                proc = self.procs[name]
                if proc.poll() is not None:
                    raise ServerStartError(
                        f"{name}: vllm serve exited with code {proc.returncode} during start-up; "
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
        for spec in (s for s in self.specs if s.headless and s.name in self.procs):
            if self.procs[spec.name].poll() is not None:
                raise ServerStartError(
                    f"{spec.name}: the headless worker exited with code {self.procs[spec.name].returncode} during "
                    f"start-up; last lines of {spec.log_path}:\n{log_tail(spec.log_path)}"
                )

    def stop(self, timeout: float = 30.0) -> None:
        """Stop every process group this object started (reused servers are left running)."""
        for name, proc in self.procs.items():
            if proc.poll() is None:
                log.info("%s: stopping", name)
                _signal_group(proc, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for proc in self.procs.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(proc, signal.SIGKILL)
                proc.wait()
        self.procs.clear()

    def pids(self) -> dict[str, int]:
        return {name: p.pid for name, p in self.procs.items()}


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
