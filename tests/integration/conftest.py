"""The real vLLM servers of configs/embedded.toml for the integration tests.

The ``servers`` fixture prepares the embedded models (idempotent) and starts both servers once for this package's
tests, reusing servers that are already healthy on the configured ports (for example a `vocab serve` running in
another terminal); servers it started are stopped when the integration tests end. Under `make test`'s two workers
these tests are one group, handed out first (tests/suite_plugin.py): the other worker's tests, the browser and the
notebooks among them, run beside these servers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EMBEDDED = ROOT / "configs" / "embedded.toml"


@pytest.fixture(scope="package")
def embedded_config():
    from vocab.config import load_config

    return load_config(EMBEDDED)


@pytest.fixture(scope="package")
def servers(embedded_config):
    from vocab.serving.models import prepare
    from vocab.serving.servers import Servers

    for m in embedded_config.models.values():
        if m.kind == "embedded":
            prepare(m.asset, embedded_config.cache_dir)
    with Servers(embedded_config) as s:
        yield s
