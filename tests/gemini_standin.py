"""A stand-in for the Gemini API (``POST /v1beta/models/MODEL:generateContent`` and ``:streamGenerateContent``,
SSE with ``alt=sse``), for running the real Gemini CLI against on 127.0.0.1 (``GOOGLE_GEMINI_BASE_URL``).

The model is a function of the request (``answer``: request body -> the model's text); every request body is kept
in ``requests``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class GeminiStandIn:
    """The server, on 127.0.0.1 and a free port, answering from a thread while open (``with`` starts it)."""

    def __init__(self, answer: Callable[[dict[str, Any]], str]) -> None:
        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        """The base URL (``GOOGLE_GEMINI_BASE_URL``): ``http://127.0.0.1:PORT``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> GeminiStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._thread.join()
        self._server.server_close()


def _handler(standin: GeminiStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, data: bytes, kind: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            standin.paths.append(self.path)
            self._send(b'{"models": []}', "application/json")

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            path = self.path.split("?")[0]
            standin.paths.append(self.path)
            if path.endswith(":countTokens"):
                return self._send(b'{"totalTokens": 100}', "application/json")
            if not path.endswith((":generateContent", ":streamGenerateContent")):
                return self._send(b"{}", "application/json")
            body = json.loads(raw or b"{}")
            standin.requests.append(body)
            answer = {"candidates": [{"content": {"role": "model", "parts": [{"text": standin.answer(body)}]},
                                      "finishReason": "STOP", "index": 0}],
                      "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
                      "modelVersion": "gemini-standin"}
            if path.endswith(":streamGenerateContent"):
                return self._send(f"data: {json.dumps(answer)}\r\n\r\n".encode(), "text/event-stream")
            self._send(json.dumps(answer).encode(), "application/json")

    return Handler
