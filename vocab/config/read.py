"""Reading a config from TOML: every value checked, every error naming the file and the dotted key."""

from __future__ import annotations

import math
import re
import tomllib
from pathlib import Path
from typing import Any

from vocab.config.types import (
    EMBEDDED_ASSETS,
    MODEL_KINDS,
    PROFILES,
    Config,
    ConfigError,
    LoopConfig,
    ModelConfig,
    Sampling,
    ServeOptions,
    chat_template_path,
)
from vocab.files import read_bytes
from vocab.machine import memory_gib as machine_memory


class _Reader:
    """Pops typed values from a TOML table and reports wrong ones with file and dotted key."""

    def __init__(self, path: Path, table: dict[str, Any], prefix: str):
        self.path, self.table, self.prefix = path, dict(table), prefix

    def _key(self, key: str) -> str:
        return f"{self.prefix}.{key}" if self.prefix else key

    def error(self, key: str, problem: str) -> ConfigError:
        return ConfigError(f"{self.path}: {self._key(key)}: {problem}")

    def get(self, key: str, types: type | tuple[type, ...], default: Any = None, required: bool = False):
        if key not in self.table:
            if required:
                raise self.error(key, "missing (required)")
            return default
        value = self.table.pop(key)
        types_t = types if isinstance(types, tuple) else (types,)
        # TOML integers are acceptable where a float is expected; booleans are never numbers here.
        if float in types_t and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if isinstance(value, bool) and bool not in types_t:
            raise self.error(key, f"expected {_names(types_t)}, got a boolean")
        if not isinstance(value, types_t):
            raise self.error(key, f"expected {_names(types_t)}, got {type(value).__name__} {str(value)[:40]!r}")
        if isinstance(value, float) and not math.isfinite(value):  # TOML allows nan and inf; no setting takes them
            raise self.error(key, f"must be a finite number, got {value}")
        return value

    def sub(self, key: str) -> _Reader:
        value = self.get(key, dict, default={})
        return _Reader(self.path, value, self._key(key))

    def done(self) -> None:
        if self.table:
            unknown = ", ".join(self._key(k) for k in sorted(self.table))
            raise ConfigError(f"{self.path}: unknown key {unknown}")


def _names(types: tuple[type, ...]) -> str:
    return " or ".join(
        {
            int: "an integer",
            float: "a number",
            str: "a string",
            dict: "a table",
            list: "a list",
            bool: "true/false",
        }.get(t, t.__name__)
        for t in types
    )


def _positive(r: _Reader, key: str, value, allow_zero: bool = False):
    if value is not None and (value < 0 or (value == 0 and not allow_zero)):
        raise r.error(key, f"must be {'non-negative' if allow_zero else 'positive'}, got {value}")
    return value


def _read_sampling(r: _Reader) -> Sampling:
    stop = r.get("stop_token_ids", list, [])
    if not all(isinstance(t, int) and not isinstance(t, bool) for t in stop):
        raise r.error("stop_token_ids", "expected a list of integers")
    s = Sampling(
        stop_token_ids=tuple(stop),
        temperature=_positive(r, "temperature", r.get("temperature", float, 0.0), allow_zero=True),
        top_p=r.get("top_p", float),
        top_k=r.get("top_k", int),
        min_p=r.get("min_p", float),
        presence_penalty=r.get("presence_penalty", float),
        frequency_penalty=r.get("frequency_penalty", float),
        repetition_penalty=r.get("repetition_penalty", float),
        seed=r.get("seed", int, 0),
    )
    if s.top_p is not None and not 0 < s.top_p <= 1:
        raise r.error("top_p", f"must lie in (0, 1], got {s.top_p}")
    r.done()
    return s


VLLM_DTYPES = ("auto", "half", "float16", "bfloat16", "float", "float32")  # vllm serve --dtype's choices


def _read_serve(r: _Reader) -> ServeOptions:
    extra = r.get("extra_args", list, [])
    if not all(isinstance(a, str) for a in extra):
        raise r.error("extra_args", "expected a list of strings")
    dtype = r.get("dtype", str)  # left out: the cpu profile's recipe for the machine (vocab.serving.recipes)
    if dtype is not None and dtype not in VLLM_DTYPES:
        raise r.error(
            "dtype",
            f"one of {', '.join(VLLM_DTYPES)} (vLLM's --dtype), or left out for the machine's "
            f"recipe; got {dtype[:40]!r}",
        )
    o = ServeOptions(
        dtype=dtype,
        max_model_len=_positive(r, "max_model_len", r.get("max_model_len", int, 4096)),
        chat_template=r.get("chat_template", str),
        reasoning_parser=r.get("reasoning_parser", str),
        gpu_memory_utilization=r.get("gpu_memory_utilization", float),
        kv_cache_gib=_positive(r, "kv_cache_gib", r.get("kv_cache_gib", int, 1)),
        cpu_core=_positive(r, "cpu_core", r.get("cpu_core", int), allow_zero=True),
        tensor_parallel_size=_positive(r, "tensor_parallel_size", r.get("tensor_parallel_size", int, 1)),
        pipeline_parallel_size=_positive(r, "pipeline_parallel_size", r.get("pipeline_parallel_size", int, 1)),
        data_parallel_size=_positive(r, "data_parallel_size", r.get("data_parallel_size", int, 1)),
        data_parallel_size_local=_positive(r, "data_parallel_size_local", r.get("data_parallel_size_local", int)),
        data_parallel_address=r.get("data_parallel_address", str),
        data_parallel_rpc_port=_positive(r, "data_parallel_rpc_port", r.get("data_parallel_rpc_port", int)),
        data_parallel_start_rank=_positive(
            r, "data_parallel_start_rank", r.get("data_parallel_start_rank", int), allow_zero=True
        ),
        headless=r.get("headless", bool, False),
        replicas=_positive(r, "replicas", r.get("replicas", int, 1)),
        replica_ports=_int_list(r, "replica_ports", 1024),
        replica_cores=_int_list(r, "replica_cores", 0),
        replica_gpus=_gpu_list(r),
        router_policy=r.get("router_policy", str, "power_of_two"),
        router_metrics_port=r.get("router_metrics_port", int),
        extra_args=tuple(extra),
    )
    _check_replicas(r, o)
    if o.gpu_memory_utilization is not None and not 0 < o.gpu_memory_utilization <= 1:
        raise r.error("gpu_memory_utilization", f"must lie in (0, 1], got {o.gpu_memory_utilization}")
    if o.data_parallel_rpc_port is not None and not 1024 <= o.data_parallel_rpc_port <= 65535:
        raise r.error("data_parallel_rpc_port", f"must lie in 1024..65535, got {o.data_parallel_rpc_port}")
    if o.data_parallel_size_local is not None and o.data_parallel_size_local > o.data_parallel_size:
        raise r.error(
            "data_parallel_size_local",
            f"{o.data_parallel_size_local} ranks on this node, more than data_parallel_size = {o.data_parallel_size}",
        )
    if o.headless and (o.data_parallel_address is None or o.data_parallel_start_rank is None):
        raise r.error(
            "headless",
            "a headless worker node needs data_parallel_address (the head) and "
            "data_parallel_start_rank (its first rank)",
        )
    r.done()
    return o


def _int_list(r: _Reader, key: str, least: int) -> tuple[int, ...]:
    value = r.get(key, list, [])
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise r.error(key, "expected a list of integers")
    if key.endswith("ports") and any(not 1024 <= v <= 65535 for v in value):
        raise r.error(key, f"every port must lie in 1024..65535, got {value}")
    if any(v < least for v in value):
        raise r.error(key, f"must be non-negative, got {value}")
    return tuple(value)


def _gpu_list(r: _Reader) -> tuple[str, ...]:
    value = r.get("replica_gpus", list, [])
    if not all(isinstance(v, str) and re.fullmatch(r"[0-9]+(,[0-9]+)*", v) for v in value):
        raise r.error("replica_gpus", 'expected one CUDA_VISIBLE_DEVICES string per replica, like ["0", "1"]')
    return tuple(value)


ROUTER_POLICIES = ("round_robin", "power_of_two", "random", "cache_aware", "consistent_hash")


def _check_replicas(r: _Reader, o: ServeOptions) -> None:
    """One line for a replica setting that cannot work; nothing when ``replicas`` is 1 and none is set."""
    n = o.replicas
    lists = {"replica_ports": o.replica_ports, "replica_cores": o.replica_cores, "replica_gpus": o.replica_gpus}
    if n == 1:
        given = [k for k, v in lists.items() if v] + ["router_metrics_port"] * (o.router_metrics_port is not None)
        given += ["router_policy"] * (o.router_policy != ServeOptions.router_policy)
        if given:
            raise r.error(given[0], "set only with replicas > 1 (one server needs no router)")
        return
    if o.distributed:
        raise r.error(
            "replicas",
            "replicas are whole single-engine servers behind a router; combine them with "
            "vLLM's parallel options by pointing an endpoint at your own deployment instead",
        )
    if o.cpu_core is not None:
        raise r.error("cpu_core", "one core for one server: with replicas > 1 give replica_cores, one per replica")
    if len(o.replica_ports) != n:
        raise r.error("replica_ports", f"needs one port per replica ({n}), got {list(o.replica_ports)}")
    if len(set(o.replica_ports)) != n:
        raise r.error("replica_ports", f"two replicas share a port ({list(o.replica_ports)})")
    for key in ("replica_cores", "replica_gpus"):
        if lists[key] and len(lists[key]) != n:
            raise r.error(key, f"needs one entry per replica ({n}) or none, got {list(lists[key])}")
        if len(set(lists[key])) != len(lists[key]):
            raise r.error(key, f"two replicas share one, which replicas are meant not to: {list(lists[key])}")
    if o.router_metrics_port is None:
        raise r.error(
            "router_metrics_port",
            "missing (required with replicas > 1: the router's Prometheus port, "
            "which counts the requests it sent to each replica)",
        )
    if not 1024 <= o.router_metrics_port <= 65535:
        raise r.error("router_metrics_port", f"must lie in 1024..65535, got {o.router_metrics_port}")
    if o.router_policy not in ROUTER_POLICIES:
        raise r.error("router_policy", f"must be one of {', '.join(ROUTER_POLICIES)}, got {o.router_policy!r}")


def _read_model(name: str, r: _Reader) -> ModelConfig:
    kind = r.get("kind", str, required=True)
    if kind not in MODEL_KINDS:
        raise r.error("kind", f"must be one of {', '.join(MODEL_KINDS)}, got {kind!r}")
    asset = r.get("asset", str)
    model = r.get("model", str)
    port = r.get("port", int)
    base_url = r.get("base_url", str)
    api_key_env = r.get("api_key_env", str)
    if kind == "embedded":
        if asset is None:
            raise r.error("asset", f"missing (required for kind 'embedded'; one of {', '.join(EMBEDDED_ASSETS)})")
        if asset not in EMBEDDED_ASSETS:
            raise r.error("asset", f"unknown asset {asset!r} (known: {', '.join(EMBEDDED_ASSETS)})")
    if kind == "vllm" and model is None:
        raise r.error("model", "missing (required for kind 'vllm': a model id or path for vllm serve)")
    if kind in ("embedded", "vllm"):
        if port is None:
            raise r.error("port", f"missing (required for kind {kind!r})")
        if not 1024 <= port <= 65535:
            raise r.error("port", f"must lie in 1024..65535, got {port}")
        if base_url is not None:
            raise r.error("base_url", f"not allowed for kind {kind!r}: the server listens on 127.0.0.1:port")
    if kind == "endpoint" and base_url is None:
        raise r.error("base_url", "missing (required for kind 'endpoint')")
    serve_table = r.table.get("serve")
    if kind == "endpoint" and isinstance(serve_table, dict) and serve_table.get("replicas", 1) != 1:
        raise r.error(
            "serve.replicas",
            "an endpoint is started elsewhere; vocab serve starts replicas of 'embedded' or 'vllm' models only",
        )
    cfg = ModelConfig(
        name=name,
        kind=kind,
        asset=asset,
        model=model,
        port=port,
        base_url_=base_url,
        api_key_env=api_key_env,
        max_tokens=_positive(r, "max_tokens", r.get("max_tokens", int, 512)),
        concurrency=_positive(r, "concurrency", r.get("concurrency", int, 8)),
        timeout_s=_positive(r, "timeout_s", r.get("timeout_s", float, 120.0)),
        sampling=_read_sampling(r.sub("sampling")),
        serve=_read_serve(r.sub("serve")),
    )
    r.done()
    return cfg


MAX_CONFIG_BYTES = 1_000_000


def load_config(path: str | Path) -> Config:
    """Read and validate a config file. Raises :class:`ConfigError` naming the file and key."""
    path = Path(path)

    data = read_bytes(path, MAX_CONFIG_BYTES, "config", ConfigError)  # a FIFO or /dev/zero: refused, never read
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text (byte {e.start}); TOML files are UTF-8") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML ({' '.join(str(e).split())})") from None
    except RecursionError:
        raise ConfigError(f"{path}: not valid TOML (nested too deeply)") from None
    root = _Reader(path, raw, "")
    project = root.sub("project")
    cache_dir = project.get("cache_dir", str, ".cache")
    profile = project.get("profile", str, "cpu")
    if profile not in PROFILES:
        raise project.error("profile", f"must be one of {', '.join(PROFILES)}, got {profile!r}")
    max_calls = _positive(project, "max_calls", project.get("max_calls", int, 10_000))
    project.done()
    models_r = root.sub("models")
    if not models_r.table:
        raise ConfigError(f"{path}: models: no model configured (add a [models.NAME] table)")
    models: dict[str, ModelConfig] = {}
    for name in sorted(models_r.table):
        # a cell is named writer__critic: no '__' in a name and no '_' at its ends, or two pairs could share a name
        if not name.replace("-", "").replace("_", "").isalnum() or "__" in name or name[0] == "_" or name[-1] == "_":
            raise models_r.error(name, "a model name may hold letters, digits, '-' and single '_' inside it only")
        models[name] = _read_model(name, models_r.sub(name))
    models_r.done()
    loop = _read_loop(root.sub("loop"), models) if "loop" in root.table else None
    root.done()  # a misspelt table ([lop], [model.x]) is named, not silently ignored
    # every port a served model listens on: its own (a headless worker has none), its replicas', its router's
    # metrics, its data-parallel RPC
    ports = [
        (p, f"models.{m.name}")
        for m in models.values()
        if m.served
        # a headless worker has no API server, and its RPC port is the head's, on the head's node
        for p in ([] if m.serve.headless else [m.port, m.serve.data_parallel_rpc_port])
        + list(m.serve.replica_ports)
        + [m.serve.router_metrics_port]
        if p is not None
    ]
    seen: dict[int, str] = {}
    for p, owner in ports:
        if p in seen:
            raise ConfigError(f"{path}: models: port {p} is used twice ({seen[p]} and {owner})")
        seen[p] = owner
    cfg_path = path.resolve()
    cache = Path(cache_dir)
    if not cache.is_absolute():
        cache = (
            (cfg_path.parent.parent / cache).resolve()
            if cfg_path.parent.name == "configs"
            else (cfg_path.parent / cache).resolve()
        )
    cfg = Config(path=path, cache_dir=cache, profile=profile, max_calls=max_calls, models=models, loop=loop)

    memory_gib = machine_memory()
    for m in models.values():
        template = chat_template_path(cfg, m)
        if template is not None and not template.is_file():
            raise ConfigError(f"{path}: models.{m.name}.serve.chat_template: no such file {template}")
        copies = m.serve.replicas * m.serve.data_parallel_size  # each replica or engine holds its own KV cache
        if m.serve.kv_cache_gib is not None and m.serve.kv_cache_gib * copies > memory_gib:
            raise ConfigError(
                f"{path}: models.{m.name}.serve.kv_cache_gib: {m.serve.kv_cache_gib} GiB"
                f"{f' x {copies} replicas or engines' if copies > 1 else ''}, more than this machine's "
                f"{memory_gib:.0f} GiB of memory"
            )
    return cfg


def _read_loop(r: _Reader, models: dict[str, ModelConfig]) -> LoopConfig:
    def names(key: str) -> tuple[str, ...]:
        value = r.get(key, list, sorted(models))
        if not value or not all(isinstance(v, str) for v in value):
            raise r.error(key, "expected a non-empty list of model names")
        unknown = [v for v in value if v not in models]
        if unknown:
            raise r.error(key, f"unknown model {unknown[0]!r} (known: {', '.join(sorted(models))})")
        return tuple(value)

    lc = LoopConfig(
        writers=names("writers"),
        critics=names("critics"),
        tiers=r.get("tiers", str, "1-28"),
        per_tier=_positive(r, "per_tier", r.get("per_tier", int, 5)),
        design_seed=r.get("design_seed", int, 0),
        levels=r.get("levels", str),
        max_attempts=_positive(r, "max_attempts", r.get("max_attempts", int, 3)),
        writer_max_tokens=_positive(r, "writer_max_tokens", r.get("writer_max_tokens", int)),
        critic_max_tokens=_positive(r, "critic_max_tokens", r.get("critic_max_tokens", int)),
        seed_word_in_scope=r.get("seed_word_in_scope", bool, False),
    )
    r.done()
    return lc


def loop_with_overrides(
    cfg: Config,
    *,
    writers: str | None = None,
    critics: str | None = None,
    levels: str | None = None,
    tiers: str | None = None,
    per_tier: int | None = None,
    design_seed: int | None = None,
    max_attempts: int | None = None,
) -> LoopConfig:
    """The config's [loop] table (default: every model writes and critiques) with the given overrides, the
    design validated now, so that a bad range fails before anything is written. ``tiers`` replaces an
    explicit level range (given both, they are refused); writers and critics are comma-separated model names."""
    import dataclasses

    # deferred: the level generator and its word list load only when levels are made
    from vocab.levels import LevelError, design_numbers

    loop = cfg.loop or LoopConfig(writers=tuple(sorted(cfg.models)), critics=tuple(sorted(cfg.models)))
    changes: dict[str, Any] = {}
    for attr, value in (("writers", writers), ("critics", critics)):
        if value:
            names = tuple(v.strip() for v in value.split(",") if v.strip())
            for n in names:
                cfg.model(n)
            changes[attr] = names
    if levels and (tiers or per_tier is not None):
        raise ConfigError("--levels and --tiers/--per-tier: give a level range or a design, not both")
    if levels:
        changes["levels"] = levels
    if tiers:
        changes["tiers"], changes["levels"] = tiers, None
    for attr, value in (("per_tier", per_tier), ("design_seed", design_seed), ("max_attempts", max_attempts)):
        if value is not None:
            if value < (0 if attr == "design_seed" else 1):
                raise ConfigError(f"--{attr.replace('_', '-')} must be positive, got {value}")
            changes[attr] = value
    loop = dataclasses.replace(loop, **changes)
    try:
        design_numbers(loop.levels, loop.tiers, loop.per_tier, loop.design_seed)
    except LevelError as e:
        raise ConfigError(str(e)) from None
    return loop
