"""A small OpenAI-compatible HTTP server that misbehaves on purpose, for the client's fault tests.

The request's ``model`` field picks the behaviour, so one server covers every fault:

``ok``            a valid structured answer
``stall``         sleeps ``stall_s`` before answering (past the client's timeout)
``drop``          closes the connection without a response
``http500``       HTTP 500 with a JSON error body
``not_json``      a 200 response whose message content is not JSON
``bad_body``      a 200 response whose body itself is not JSON
``schema``        JSON content that violates the schema (``sentence`` is a number)
``length``        a cut-off answer with ``finish_reason: length``
``slow``          a valid answer after ``slow_s`` (for concurrency tests)
``router_lost``   vllm-router's HTTP 500 when the replica it chose died or refused the connection
``router_none``   vllm-router's HTTP 503 when no replica is healthy
``http502``       HTTP 502 Bad Gateway from a proxy
``abort``         HTTP 200 with the tokens so far and ``finish_reason: abort`` (vLLM shutting an engine down)
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VALID = json.dumps({"sentence": "Stone tones make notes.", "answer_key": ["stone", "tones", "notes"]})


def completion(content: str, finish_reason: str = "stop", model: str = "ok") -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-fault",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {"index": 0, "finish_reason": finish_reason, "message": {"role": "assistant", "content": content}}
            ],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
        }
    ).encode()


class _Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:
        """A client that gave up (a timeout test's) is expected here: no traceback on whichever test runs next."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FaultServer:
    def __init__(self, stall_s: float = 3.0, slow_s: float = 0.3):
        self.stall_s, self.slow_s = stall_s, slow_s
        self.requests: list[dict] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self.closing = threading.Event()  # set on exit: a stalled answer ends then, unsent (its client is gone)
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server._lock:
                    server.requests.append(body)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    self._answer(body.get("model", "ok"))
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _send(self, status: int, payload: bytes, ctype: str = "application/json"):
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _answer(self, mode: str):
                if mode == "stall":
                    if server.closing.wait(server.stall_s):
                        return None
                    return self._send(200, completion(VALID))
                if mode == "drop":
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.connection.close()
                    return None
                if mode == "http500":
                    return self._send(500, json.dumps({"error": {"message": "engine died"}}).encode())
                if mode == "router_lost":  # vllm-router 0.1.17's words, seen with a replica SIGKILLed mid-call
                    text = b"Request failed: error sending request for url (http://127.0.0.1:8123/v1/chat/completions)"
                    return self._send(500, text, "text/plain")
                if mode == "router_none":
                    return self._send(503, b"No available workers (all circuits open or unhealthy)", "text/plain")
                if mode == "http502":
                    return self._send(502, b"<html>502 Bad Gateway</html>", "text/html")
                if mode == "abort":  # vLLM 0.32 when a data-parallel sibling engine died: '{' and abort
                    return self._send(200, completion("{", "abort"))
                if mode == "not_json":
                    return self._send(200, completion("Sure! Here is a sentence: stone tones notes."))
                if mode == "bad_body":
                    return self._send(200, b"<html>proxy error</html>")
                if mode == "schema":
                    return self._send(200, completion(json.dumps({"sentence": 3, "answer_key": []})))
                if mode == "length":
                    return self._send(200, completion('{"sentence": "Stone tones make', "length"))
                if mode == "slow":
                    time.sleep(server.slow_s)
                return self._send(200, completion(VALID))

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> FaultServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()
