"""What a vllm-router says it forwarded: the replica tests' count of the calls that reached each replica."""

from __future__ import annotations

import re
import urllib.request


def router_forwarded(metrics_port: int, timeout: float = 5.0) -> dict[str, int]:
    """The requests a vllm-router sent on, per replica URL, read from its Prometheus endpoint on 127.0.0.1: the sum of
    its circuit breaker's outcomes (``vllm_router_cb_outcomes_total``, success and failure), one per request sent to
    a replica. Not ``vllm_router_processed_requests_total``: vllm-router 0.1.17 counts that in its routing policy,
    which it skips when one replica is left healthy (measured: 18 of 30 calls counted after a replica died)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=timeout) as r:
        text = r.read(8 << 20).decode("utf-8", "replace")
    name = "vllm_router_cb_outcomes_total"
    pattern = re.compile(rf'^{name}\{{worker="([^"]+)",outcome="[a-z_]+"\}}\s+([0-9.eE+]+)\s*$', re.M)
    out: dict[str, int] = {}
    for url, n in pattern.findall(text):
        out[url] = out.get(url, 0) + int(float(n))
    return out
