"""The configuration's types: the models, their sampling and serving options, the loop, the whole config."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vocab.errors import InputError

PROFILES = ("cpu", "gpu")
MODEL_KINDS = ("embedded", "vllm", "endpoint")
# the embedded assets a config may name: vocab.serving.models.ASSETS holds how each is made (a test checks the two
# agree); named here so that reading a config does not import the serving package
EMBEDDED_ASSETS = ("smollm2-135m-instruct", "gemma-3-270m")
# Sampling keys the OpenAI API accepts as top-level parameters; the rest go through ``extra_body``.
OPENAI_SAMPLING_KEYS = ("temperature", "top_p", "presence_penalty", "frequency_penalty", "seed")
VLLM_SAMPLING_KEYS = ("top_k", "min_p", "repetition_penalty")


class ConfigError(InputError):
    """A config file is unreadable or holds a wrong value; the message names the file and key."""


@dataclass(frozen=True)
class Sampling:
    temperature: float = 0.0
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    repetition_penalty: float | None = None
    seed: int | None = 0
    stop_token_ids: tuple[int, ...] = ()  # vLLM: extra tokens that end generation (e.g. Gemma's <end_of_turn>)

    def request_params(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """Split into (OpenAI keyword arguments, vLLM ``extra_body``), leaving out unset values."""
        top = {k: getattr(self, k) for k in OPENAI_SAMPLING_KEYS if getattr(self, k) is not None}
        extra = {k: getattr(self, k) for k in VLLM_SAMPLING_KEYS if getattr(self, k) is not None}
        if self.stop_token_ids:
            extra["stop_token_ids"] = list(self.stop_token_ids)
        return top, extra


@dataclass(frozen=True)
class ServeOptions:
    """How ``vocab serve`` starts this model's ``vllm serve`` process."""

    # None: on the cpu profile the recipe for the machine's instruction set (vocab.serving.recipes), else bfloat16
    dtype: str | None = None
    max_model_len: int = 4096
    chat_template: str | None = None  # path relative to the config file's directory
    reasoning_parser: str | None = None
    gpu_memory_utilization: float | None = None  # gpu profile only
    kv_cache_gib: int = 1  # cpu profile only: VLLM_CPU_KVCACHE_SPACE
    cpu_core: int | None = None  # cpu profile only: the CPU this server's processes and threads are pinned to
    # vLLM's own distribution (gpu profile; the cpu profile takes data_parallel_size alone): GPUs per engine (tensor x
    # pipeline), engines behind one endpoint (data parallel, balanced by vLLM), and across nodes: ranks on this node,
    # the head's address and RPC port, the first rank of a worker node, and headless (a worker node: engines only, no
    # API server of its own).
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    data_parallel_size: int = 1
    data_parallel_size_local: int | None = None
    data_parallel_address: str | None = None
    data_parallel_rpc_port: int | None = None
    data_parallel_start_rank: int | None = None
    headless: bool = False
    # Replicas (either profile): N independent `vllm serve` processes of this model on replica_ports, each pinned to
    # its own CPU (replica_cores, cpu profile) or GPU (replica_gpus, gpu profile: CUDA_VISIBLE_DEVICES; default: the
    # i-th replica on GPU i), behind one `vllm-router` on the model's port with its retries off; its Prometheus
    # metrics on router_metrics_port.
    replicas: int = 1
    replica_ports: tuple[int, ...] = ()
    replica_cores: tuple[int, ...] = ()
    replica_gpus: tuple[str, ...] = ()
    router_policy: str = "power_of_two"
    router_metrics_port: int | None = None
    extra_args: tuple[str, ...] = ()

    def parallel_args(self) -> list[str]:
        """The ``vllm serve`` flags of the options above that differ from one engine on one GPU."""
        out = []
        for flag, value, default in (
            ("--tensor-parallel-size", self.tensor_parallel_size, 1),
            ("--pipeline-parallel-size", self.pipeline_parallel_size, 1),
            ("--data-parallel-size", self.data_parallel_size, 1),
            ("--data-parallel-size-local", self.data_parallel_size_local, None),
            ("--data-parallel-address", self.data_parallel_address, None),
            ("--data-parallel-rpc-port", self.data_parallel_rpc_port, None),
            ("--data-parallel-start-rank", self.data_parallel_start_rank, None),
        ):
            if value != default:
                out += [flag, str(value)]
        return out + (["--headless"] if self.headless else [])

    @property
    def distributed(self) -> bool:
        return bool(self.parallel_args())

    @property
    def replicated(self) -> bool:
        return self.replicas > 1


@dataclass(frozen=True)
class ModelConfig:
    name: str  # the config key; also the served model name and the name used in cell ids
    kind: str
    asset: str | None = None  # embedded: the asset name in vocab.serving.models.ASSETS
    model: str | None = None  # vllm: the id or path to serve; endpoint: the remote model name
    port: int | None = None
    base_url_: str | None = None
    api_key_env: str | None = None
    max_tokens: int = 512
    concurrency: int = 8
    timeout_s: float = 120.0
    sampling: Sampling = field(default_factory=Sampling)
    serve: ServeOptions = field(default_factory=ServeOptions)

    @property
    def served(self) -> bool:
        """True when ``vocab serve`` starts this model's server."""
        return self.kind in ("embedded", "vllm")

    @property
    def base_url(self) -> str:
        if self.base_url_:
            return self.base_url_
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def request_model(self) -> str:
        """The ``model`` field sent with each request."""
        if self.kind == "endpoint":
            return self.model or self.name
        return self.name


@dataclass(frozen=True)
class LoopConfig:
    """The write→critique design: which models write, which critique, on which levels, how many tries."""

    writers: tuple[str, ...]
    critics: tuple[str, ...]
    tiers: str = "1-28"  # the level design: tiers and levels per tier, drawn with design_seed
    per_tier: int = 5
    design_seed: int = 0
    levels: str | None = None  # an explicit level range instead of the design
    max_attempts: int = 3
    writer_max_tokens: int | None = None  # default: the writer model's max_tokens
    critic_max_tokens: int | None = None
    seed_word_in_scope: bool = False  # put rubric check 1 into the pass rule

    @property
    def cells(self) -> list[tuple[str, str]]:
        return [(w, c) for w in self.writers for c in self.critics]


@dataclass(frozen=True)
class Config:
    path: Path
    cache_dir: Path
    profile: str
    max_calls: int
    models: dict[str, ModelConfig]
    loop: LoopConfig | None = None

    def model(self, name: str) -> ModelConfig:
        try:
            return self.models[name]
        except KeyError:
            known = ", ".join(sorted(self.models))
            raise ConfigError(f"{self.path}: no model named {name!r} (known: {known})") from None

    def resolve(self, relative: str) -> Path:
        """A path written in the config, relative to the config file's directory."""
        p = Path(relative)
        return p if p.is_absolute() else (self.path.parent / p).resolve()


TEMPLATES = Path(__file__).resolve().parents[1] / "templates"  # chat templates shipped in the package


def chat_template_path(cfg: Config, m: ModelConfig) -> Path | None:
    if m.serve.chat_template is None:
        return None
    name = m.serve.chat_template
    if name.startswith("vocab:"):  # a template shipped in the package
        return TEMPLATES / name.removeprefix("vocab:")
    return cfg.resolve(name)
