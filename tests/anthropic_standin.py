"""A stand-in for the Anthropic Messages API (``POST /v1/messages``, streamed as SSE or not), for running the real
Claude Code against on 127.0.0.1 (``ANTHROPIC_BASE_URL=standin.url``).

The model is a function of the request (``answer``: request body -> list of content blocks and a stop reason);
every request body is kept in ``requests``. ``delegate`` is the scripted behaviour the real-agent test uses: a prompt
holding ``DELEGATE <agent type>: <task>`` is answered with an ``Agent`` tool_use that launches that subagent, the
subagent answers ``LEARNED: ...`` lines, and the rest is a plain answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.model_standin import ModelStandIn, send

Reply = tuple[list[dict[str, Any]], str]


def text_of(body: dict[str, Any]) -> str:
    """All the text of a request: system prompt and messages (tool results included)."""
    return json.dumps(body.get("system", "")) + json.dumps(body.get("messages", []))


def _last_user(body: dict[str, Any]) -> list[dict[str, Any]]:
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content")
            return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    return []


def delegate(lesson: str, main_lesson: str) -> Callable[[dict[str, Any]], Reply]:
    """The scripted model: the main session delegates to a subagent, which learns ``lesson``; the main session's
    final answer states ``main_lesson``."""

    def answer(body: dict[str, Any]) -> Reply:
        last = _last_user(body)
        texts = " ".join(block.get("text", "") for block in last if block.get("type") == "text")
        tools = {tool.get("name") for tool in body.get("tools", [])}
        if any(block.get("type") == "tool_result" for block in last):
            return [{"type": "text", "text": f"Done.\nPATTERN: {main_lesson}"}], "end_turn"
        if "<task-notification>" in texts:
            return [{"type": "text", "text": f"The subagent finished.\nPATTERN: {main_lesson}"}], "end_turn"
        match = re.search(r"DELEGATE ([\w-]+): ([^\n\"]+)", texts)
        if match and ("Agent" in tools or "Task" in tools):
            name = "Agent" if "Agent" in tools else "Task"
            return [{"type": "tool_use", "id": "toolu_standin_1", "name": name,
                     "input": {"description": "Review", "prompt": match.group(2),
                               "subagent_type": match.group(1)}}], "tool_use"
        if "SUBTASK" in texts or (match is None and "Review the" in texts):
            return [{"type": "text", "text": f"Reviewed.\nLEARNED: {lesson}"}], "end_turn"
        return [{"type": "text", "text": "ok"}], "end_turn"

    return answer


class AnthropicStandIn(ModelStandIn):
    """The server, on 127.0.0.1 and a free port, answering from a thread while open (``with`` starts it)."""

    PATH = ""

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _handler(self)


def _events(blocks: list[dict[str, Any]], stop: str, model: str) -> list[tuple[str, dict[str, Any]]]:
    usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    out: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": {
        "id": "msg_standin", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": usage}})]
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            out.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                 "content_block": {"type": "text", "text": ""}}))
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            out.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": {
                "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}))
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        out.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}))
        out.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    out.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                  "usage": {"output_tokens": 5}}))
    out.append(("message_stop", {"type": "message_stop"}))
    return out


def _handler(standin: AnthropicStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, code: int, payload: dict[str, Any]) -> None:
            send(self, json.dumps(payload).encode(), "application/json", code)

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:
            self._send(200, {"data": [], "has_more": False})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            path = self.path.split("?")[0]
            with standin._lock:
                standin.paths.append(path)
                if path.endswith("/messages"):
                    standin.requests.append(body)
            if path.endswith("/count_tokens"):
                return self._send(200, {"input_tokens": 100})
            if not path.endswith("/messages"):
                return self._send(200, {})
            blocks, stop = standin.answer(body)
            model = body.get("model", "claude-standin")
            if not body.get("stream"):
                return self._send(200, {"id": "msg_standin", "type": "message", "role": "assistant", "model": model,
                                        "content": blocks, "stop_reason": stop, "stop_sequence": None,
                                        "usage": {"input_tokens": 10, "output_tokens": 5}})
            data = b"".join(f"event: {name}\ndata: {json.dumps(event)}\n\n".encode()
                            for name, event in _events(blocks, stop, model))
            send(self, data, "text/event-stream")

    return Handler
