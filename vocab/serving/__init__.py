"""Serving the models: the embedded weights (`models`), one `vllm serve` per model (`servers`, started through
`launcher`), the one model client (`client`) and the structured round-trip check (`roundtrip`)."""

from vocab.serving.client import (
    ERROR_KINDS,
    BudgetExhausted,
    CallAborted,
    CallBudget,
    CallConnectionError,
    CallHTTPError,
    CallTimeout,
    Clients,
    MalformedOutput,
    ModelCallError,
    ModelClient,
    SchemaViolation,
    StructuredResult,
    TruncatedOutput,
    Usage,
)
from vocab.serving.models import ASSETS, ModelAssetError, prepare, prepared_dir
from vocab.serving.servers import Servers, ServerSpec, ServerStartError, build_spec, served_specs

__all__ = [
    "ASSETS",
    "ERROR_KINDS",
    "BudgetExhausted",
    "CallAborted",
    "CallBudget",
    "CallConnectionError",
    "CallHTTPError",
    "CallTimeout",
    "Clients",
    "MalformedOutput",
    "ModelAssetError",
    "ModelCallError",
    "ModelClient",
    "SchemaViolation",
    "ServerSpec",
    "ServerStartError",
    "Servers",
    "StructuredResult",
    "TruncatedOutput",
    "Usage",
    "build_spec",
    "prepare",
    "prepared_dir",
    "served_specs",
]
