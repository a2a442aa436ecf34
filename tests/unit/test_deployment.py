"""The manifest says which deployment answered a run: each endpoint's own /v1/models and /version, read from a
local HTTP server that answers as vLLM does, and one that answers neither (a bare OpenAI-compatible proxy)."""

from __future__ import annotations

import http.server
import json
import threading
from dataclasses import replace

import pytest

from vocab.config import ModelConfig
from vocab.serving.roundtrip import deployment


class _Handler(http.server.BaseHTTPRequestHandler):
    answers: dict[str, object] = {}
    seen: list[tuple[str, str | None]] = []

    def do_GET(self):  # noqa: N802 (http.server's name)
        self.seen.append((self.path, self.headers.get("Authorization")))
        body = self.answers.get(self.path)
        if body is None:
            self.send_response(404)
            self.end_headers()
            return
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _endpoint(port: int) -> ModelConfig:
    return ModelConfig(name="judge", kind="endpoint", model="remote-judge", base_url_=f"http://127.0.0.1:{port}/v1",
                       api_key_env="VOCAB_TEST_KEY")  # fmt: skip


def test_a_vllm_like_server_is_recorded(server, monkeypatch):
    monkeypatch.setenv("VOCAB_TEST_KEY", "sekrit")
    _Handler.seen = []
    _Handler.answers = {
        "/v1/models": {
            "object": "list",
            "data": [
                {
                    "id": "remote-judge",
                    "root": "/models/q",
                    "max_model_len": 8192,
                    "owned_by": "vllm",
                    "permission": [{"x": 1}],
                }
            ],
        },  # fmt: skip
        "/version": {"version": "0.32.0"},
    }
    rec = deployment(_endpoint(server.server_port))
    assert rec == {"models": [{"id": "remote-judge", "root": "/models/q", "max_model_len": 8192, "owned_by": "vllm"}],
                   "version": "0.32.0"}  # fmt: skip
    assert {a for _, a in _Handler.seen} == {"Bearer sekrit"}


def test_a_server_that_does_not_describe_itself_is_recorded_as_such(server):
    _Handler.answers = {}
    rec = deployment(_endpoint(server.server_port))
    assert set(rec) == {"models_error", "version_error"} and "404" in rec["models_error"]


def test_nothing_listening_is_an_error_in_the_record_not_an_exception(server):
    port = server.server_port
    server.shutdown()
    server.server_close()
    rec = deployment(replace(_endpoint(port), base_url_=f"http://127.0.0.1:{port}/v1"), timeout=2)
    assert "models_error" in rec and "version_error" in rec
