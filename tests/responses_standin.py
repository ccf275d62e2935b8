"""A stand-in for the OpenAI Responses API (``POST /v1/responses``, streamed as SSE), for running the real Codex CLI
against on 127.0.0.1 (a ``model_providers`` entry whose ``base_url`` is ``standin.url``, ``wire_api = "responses"``).

The model is a function of the request (``answer``: request body -> the assistant's text); every request body is
kept in ``requests``.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.model_standin import ModelStandIn, send


class ResponsesStandIn(ModelStandIn):
    """The server, on 127.0.0.1 and a free port, answering from a thread while open (``with`` starts it)."""

    PATH = "/v1"

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _handler(self)


def _events(text: str, n: int) -> list[dict[str, Any]]:
    item = {"type": "message", "role": "assistant", "id": f"msg_{n}", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
    return [{"type": "response.created", "response": {"id": f"resp_{n}"}},
            {"type": "response.output_item.added", "output_index": 0, "item": {**item, "content": []}},
            {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "item_id": f"msg_{n}",
             "delta": text},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": {"id": f"resp_{n}", "usage": usage, "output": [item]}}]


def _handler(standin: ResponsesStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _json(self, payload: dict[str, Any]) -> None:
            send(self, json.dumps(payload).encode(), "application/json")

        def do_GET(self) -> None:
            standin.paths.append(self.path)
            self._json({"object": "list", "data": [], "models": []})

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            path = self.path.split("?")[0]
            standin.paths.append(path)
            if not path.endswith("/responses"):
                return self._json({})
            body = json.loads(raw or b"{}")
            standin.requests.append(body)
            data = b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode()
                            for e in _events(standin.answer(body), len(standin.requests)))
            send(self, data, "text/event-stream")

    return Handler
