"""A stand-in mem0 platform server: the endpoints the real ``mem0ai`` 2.2.1 ``MemoryClient`` (``mem0/client/main.py``)
calls, with the platform's shapes. A stdlib HTTP server on loopback, an ephemeral port, in a thread.

    with serve(api_key="k") as m0:              # m0.url: "http://127.0.0.1:<port>"
        ...                                     # talk to it with Authorization: Token k
        m0.memories    # {mem0 id: memory dict} ("id", "memory", "user_id", "agent_id", "run_id", "metadata", ...)
        m0.requests    # [Request(method, path, query, headers, body)] in arrival order (body: parsed JSON or text)
        m0.hang = True       # search then waits (until the server stops, at most 60 s) without answering
        m0.garbage = True    # every answer is an HTML page with HTTP 200

Routes: ``GET /v1/ping/`` (the client's constructor: ``{"status", "org_id", "project_id", "user_email"}``),
``POST /v3/memories/add/`` (``messages`` stored one memory per message with ``infer: false``, else one memory of
the user's messages; answers ``{"results": [{"id", "event": "ADD", "memory"}]}``), ``POST /v3/memories/search/``
(``query`` and ``filters``; token overlap as the score; ``{"results": [...]}``), ``POST /v3/memories/`` (get_all:
``filters``, ``page``/``page_size`` in the query string; ``{"count", "next", "previous", "results"}``),
``GET|PUT|DELETE /v1/memories/{id}/``. Filters: ``{"user_id": ...}``-style keys (``user_id``, ``agent_id``,
``run_id``, ``app_id``), ``{"metadata": {...}}``, and ``AND`` / ``OR`` lists of those; search and get_all refuse
filters without an identity, as the platform does. Every route needs ``Authorization: Token <api_key>`` (401
``{"detail": ...}`` otherwise). Memory extraction (an LLM on the real platform) is not simulated.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any
from urllib.parse import unquote

from tests.providers.standin import Handler, Request, run

_TOKEN = re.compile(r"\w+", re.UNICODE)
IDENTITIES = ("user_id", "agent_id", "run_id", "app_id")


@dataclass
class StandIn:
    api_key: str
    hang: bool = False
    garbage: bool = False
    url: str = ""
    memories: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)


def _tokens(text: str) -> set[str]:
    return {t.lower() for t in _TOKEN.findall(text)}


def _matches(memory: dict[str, Any], filters: Any) -> bool:
    if not isinstance(filters, dict):
        return False
    for key, value in filters.items():
        if key == "AND":
            if not isinstance(value, list) or not all(_matches(memory, f) for f in value):
                return False
        elif key == "OR":
            if not isinstance(value, list) or not any(_matches(memory, f) for f in value):
                return False
        elif key == "metadata":
            meta = memory.get("metadata") or {}
            if not isinstance(value, dict) or any(meta.get(k) != v for k, v in value.items()):
                return False
        elif memory.get(key) != value:
            return False
    return True


def _has_identity(filters: Any) -> bool:
    if not isinstance(filters, dict):
        return False
    return any(k in IDENTITIES for k in filters) or any(
        isinstance(filters.get(k), list) and any(_has_identity(f) for f in filters[k]) for k in ("AND", "OR"))


class _Handler(Handler):
    def _handle(self, method: str) -> None:
        m0 = self.server.standin
        path, query, body = self._receive(method)
        if self.headers.get("Authorization") != f"Token {m0.api_key}":
            self._send(401, {"detail": "Invalid API key"})
            return
        if m0.garbage:
            self._send(200, None, raw=b"<html><body>502 Bad Gateway</body></html>", kind="text/html")
            return
        try:
            self._route(m0, method, path, query, body)
        except ValueError as exc:
            self._send(400, {"detail": str(exc)})

    def _route(self, m0: StandIn, method: str, path: str, query: dict[str, str], body: Any) -> None:
        if method == "GET" and path == "/v1/ping/":
            self._send(200, {"status": "ok", "org_id": "org-standin", "project_id": "proj-standin",
                             "user_email": "standin@example.com"})
        elif method == "POST" and path == "/v3/memories/add/":
            self._send(200, {"results": self._add(m0, body)})
        elif method == "POST" and path == "/v3/memories/search/":
            if m0.hang:
                m0.stopping.wait(60)
                return
            self._send(200, {"results": self._search(m0, body)})
        elif method == "POST" and path == "/v3/memories/":
            self._send(200, self._get_all(m0, body, query))
        elif path.startswith("/v1/memories/") and path.endswith("/") and path.count("/") == 4:
            self._one(m0, method, unquote(path.split("/")[3]), body)
        else:
            self._send(404, {"detail": f"no route {method} {path}"})

    def _add(self, m0: StandIn, body: Any) -> list[dict[str, Any]]:
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body["messages"]:
            raise ValueError("messages must be a non-empty list")
        if not any(isinstance(body.get(k), str) for k in IDENTITIES):
            raise ValueError("one of user_id, agent_id, run_id, app_id is required")
        messages = body["messages"]
        if not all(isinstance(m, dict) and isinstance(m.get("content"), str) for m in messages):
            raise ValueError("each message needs a role and a content")
        texts = ([m["content"] for m in messages] if body.get("infer") is False
                 else [" ".join(m["content"] for m in messages if m.get("role") == "user") or messages[0]["content"]])
        out = []
        now = datetime.now(timezone.utc).isoformat()
        for text in texts:
            memory = {"id": str(uuid.uuid4()), "memory": text, "metadata": body.get("metadata") or {},
                      "created_at": now, "updated_at": now, "categories": [],
                      **{k: body[k] for k in IDENTITIES if isinstance(body.get(k), str)}}
            with m0.lock:
                m0.memories[memory["id"]] = memory
            out.append({"id": memory["id"], "event": "ADD", "memory": text})
        return out

    def _search(self, m0: StandIn, body: Any) -> list[dict[str, Any]]:
        if not isinstance(body, dict) or not isinstance(body.get("query"), str):
            raise ValueError("query is required")
        if not _has_identity(body.get("filters")):
            raise ValueError("filters must name at least one of user_id, agent_id, run_id, app_id")
        asked = _tokens(body["query"])
        scored = []
        with m0.lock:
            candidates = [dict(m) for m in m0.memories.values() if _matches(m, body["filters"])]
        for memory in candidates:
            shared = len(asked & _tokens(str(memory["memory"])))
            if shared:
                scored.append({**memory, "score": shared / max(1, len(asked))})
        scored.sort(key=lambda m: -m["score"])
        return scored[: int(body.get("top_k") or 10)]

    def _get_all(self, m0: StandIn, body: Any, query: dict[str, str]) -> dict[str, Any]:
        filters = body.get("filters") if isinstance(body, dict) else None
        if not _has_identity(filters):
            raise ValueError("filters must name at least one of user_id, agent_id, run_id, app_id")
        with m0.lock:
            found = [dict(m) for m in m0.memories.values() if _matches(m, filters)]
        page, size = int(query.get("page") or 1), int(query.get("page_size") or 100)
        return {"count": len(found), "next": None, "previous": None,
                "results": found[(page - 1) * size: page * size]}

    def _one(self, m0: StandIn, method: str, memory_id: str, body: Any) -> None:
        with m0.lock:
            memory = m0.memories.get(memory_id)
            if memory is None:
                self._send(404, {"detail": "Memory not found"})
                return
            if method == "GET":
                self._send(200, dict(memory))
            elif method == "PUT":
                if not isinstance(body, dict) or not body:
                    raise ValueError("text or metadata is required")
                if isinstance(body.get("text"), str):
                    memory["memory"] = body["text"]
                if isinstance(body.get("metadata"), dict):
                    memory["metadata"] = body["metadata"]
                memory["updated_at"] = datetime.now(timezone.utc).isoformat()
                self._send(200, {"id": memory_id, "memory": memory["memory"], "message": "Memory updated"})
            elif method == "DELETE":
                del m0.memories[memory_id]
                self._send(200, {"message": "Memory deleted successfully!"})
            else:
                self._send(405, {"detail": "method not allowed"})


@contextmanager
def serve(api_key: str = "test-mem0-key", *, hang: bool = False, garbage: bool = False) -> Iterator[StandIn]:
    """Run the stand-in on 127.0.0.1 (an ephemeral port) for the ``with`` block (see the module's docstring)."""
    with run(StandIn(api_key=api_key, hang=hang, garbage=garbage), _Handler, "mem0-standin") as standin:
        yield standin
