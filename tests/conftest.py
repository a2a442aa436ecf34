"""Shared fixtures. Integration tests get the real vLLM servers of configs/embedded.toml.

The ``servers`` fixture prepares the embedded models (idempotent) and starts both servers once per test
session, reusing servers that are already healthy on the configured ports (for example a `vocab serve`
running in another terminal); servers it started are stopped when the session ends.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EMBEDDED = ROOT / "configs" / "embedded.toml"


@pytest.fixture(scope="session")
def embedded_config():
    from vocab.config import load_config

    return load_config(EMBEDDED)


@pytest.fixture(scope="session")
def servers(embedded_config):
    from vocab.serving.models import prepare
    from vocab.serving.servers import Servers

    for m in embedded_config.models.values():
        if m.kind == "embedded":
            prepare(m.asset, embedded_config.cache_dir)
    with Servers(embedded_config) as s:
        yield s
