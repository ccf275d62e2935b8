"""A stand-in for the Gemini API (``POST /v1beta/models/MODEL:generateContent`` and ``:streamGenerateContent``,
SSE with ``alt=sse``), for running the real Gemini CLI against on 127.0.0.1 (``GOOGLE_GEMINI_BASE_URL``).

The model is a function of the request (``answer``: request body -> the model's text); every request body is kept
in ``requests``.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.model_standin import ModelStandIn, send


class GeminiStandIn(ModelStandIn):
    """The server, on 127.0.0.1 and a free port, answering from a thread while open (``with`` starts it)."""

    PATH = ""

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _handler(self)


def _handler(standin: GeminiStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, data: bytes, kind: str) -> None:
            send(self, data, kind)

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
