"""A stand-in OpenViking 0.5.2 server: the endpoints the real ``openviking`` client (``openviking-sdk`` 0.1.17's
``AsyncHTTPClient``) calls for find, sessions, messages, commit, content read / write and removal, with the
server's shapes (``openviking/server/routers``, ``openviking/server/models.py``). A stdlib HTTP server on loopback,
an ephemeral port, in a thread.

    with serve(api_key="k") as ov:              # ov.url: "http://127.0.0.1:<port>"
        ...                                     # talk to it with X-API-Key: k
        ov.contents    # {canonical uri: text} of everything written (``viking://user/<user>/...``)
        ov.sessions    # {session id: [message bodies]} not yet committed; ov.archives: {id: [[...], ...]}
        ov.requests    # [Request(method, path, query, headers, body)] in arrival order (body: parsed JSON or text)
        ov.hang = True       # find then waits (until the server stops, at most 60 s) without answering
        ov.garbage = "text"  # every /api/v1 answer is garbage: "text" (HTML, HTTP 200), "list" (JSON of the
                             # wrong shape), "error" (status "error" with HTTP 200), "huge" (a 12 MB JSON string),
                             # "deep" (JSON nested 10 000 levels), "result" (an ok envelope whose result is a str),
                             # "echo" (HTTP 500 whose error message repeats the X-API-Key sent)

``serve(api_key, hang=..., garbage=...)`` sets the same switches from the start (``garbage=True`` is "text").

What it does: every ``/api/v1`` route needs ``X-API-Key`` (or ``Authorization: Bearer``) equal to ``api_key``, else
HTTP 401 in the server's error envelope. ``viking://~/...`` resolves to ``viking://user/<user>/...`` (user: the
``X-OpenViking-User`` header, else ``default``); the uid-less ``viking://user/memories/...`` is refused as 0.5.2
refuses it. Find ranks the stored files under ``target_uri`` by token overlap with the query (score = shared
tokens / query tokens, 0 left out) and answers ``{memories, resources, skills, total}`` with the real hit shape
(``context_type, uri, level, score, abstract, tags``; ``content`` with ``read_content``). Bodies are checked
against the server's request models (unknown fields of find and write are refused, as ``extra="forbid"`` does).
A commit archives the session's messages; memory extraction (an LLM on the real server) is not simulated.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from tests.providers.standin import Handler, Request, run

#: Fields of the server's request models (pydantic, ``extra="forbid"`` for find and write).
FIND_FIELDS = {"query", "image_url", "target_uri", "context_type", "limit", "node_limit", "score_threshold",
               "filter", "include_provenance", "tags", "since", "until", "time_field", "level", "read_content",
               "telemetry", "events_time_decay_protection"}
WRITE_FIELDS = {"uri", "content", "mode", "wait", "telemetry", "processing_mode", "tags", "tag_mode", "acl",
                "edit_source"}
MESSAGE_FIELDS = {"role", "peer_id", "content", "parts", "created_at", "turn_id", "message_kind",
                  "source_message_ids", "telemetry"}
_RESERVED_USER_SEGMENTS = {"memories", "resources", "skills", "peers", "privacy", "sessions"}
_SCOPES = {"resources", "user", "agent", "session", "~"}
_CREATE_EXTENSIONS = {".md", ".txt", ".json", ".yaml", ".yml", ".csv", ".html", ".xml"}
_TOKEN = re.compile(r"\w+", re.UNICODE)
HTTP_STATUS = {"INVALID_ARGUMENT": 400, "INVALID_URI": 400, "NOT_FOUND": 404, "ALREADY_EXISTS": 409,
               "UNAUTHENTICATED": 401}


class _Refused(Exception):
    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.details = code, message, details


@dataclass
class StandIn:
    """The running stand-in (see the module's docstring)."""

    api_key: str
    hang: bool = False
    garbage: bool | str = False
    url: str = ""
    contents: dict[str, str] = field(default_factory=dict)
    sessions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    archives: dict[str, list[list[dict[str, Any]]]] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def paths(self, method: str | None = None) -> list[str]:
        """The paths requested (of ``method`` only, when given), in order."""
        return [r.path for r in self.requests if method is None or r.method == method]


def _resolve(uri: Any, user: str, field_name: str = "uri") -> str:
    if not isinstance(uri, str) or not uri.strip():
        raise _Refused("INVALID_URI", f"{field_name} must not be empty", {"uri": str(uri)})
    uri = uri.strip()
    if not uri.startswith("viking://"):
        raise _Refused("INVALID_URI", f"{field_name} must be a viking:// URI", {"uri": uri})
    parts = [p for p in uri[len("viking://"):].split("/") if p]
    if not parts:
        return "viking://"
    if parts[0] not in _SCOPES:
        raise _Refused("INVALID_URI", f"Invalid scope '{parts[0]}'", {"uri": uri})
    if any(p in (".", "..") for p in parts):
        raise _Refused("INVALID_URI", "Unsafe Viking URI path rejected", {"uri": uri})
    if parts[0] == "~":
        parts = ["user", user, *parts[1:]]
    elif parts[0] == "user" and len(parts) >= 2 and parts[1] != user and parts[1] in _RESERVED_USER_SEGMENTS:
        rest = "/".join(parts[1:])
        raise _Refused("INVALID_URI", f"'viking://user/{rest}' no longer expands to the current user's space: "
                       f"'{parts[1]}' is a reserved name, not a user id. Use 'viking://~/{rest}' for the current "
                       "user, or 'viking://user/{user_id}/" + rest + "' for an explicit user.", {"uri": uri})
    return "viking://" + "/".join(parts)


def _category(uri: str) -> str:
    parts = uri[len("viking://"):].split("/")
    if len(parts) >= 5 and parts[0] == "user" and parts[2] == "peers" and parts[4] == "memories":
        return "memories"
    if len(parts) >= 3 and parts[0] == "user" and parts[2] in ("memories", "skills"):
        return parts[2]
    if parts[:2] == ["agent", "skills"]:
        return "skills"
    return "resources"


def _tokens(text: str) -> set[str]:
    return {t.lower() for t in _TOKEN.findall(text)}


class _Handler(Handler):
    def _error(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        # the server's OpenVikingError handler: Response(...).model_dump(), every field present
        self._send(HTTP_STATUS.get(code, 500), {"status": "error", "result": None, "error": {
            "code": code, "message": message, "details": details}, "telemetry": None, "profile": None})

    def _garbage(self, kind: str) -> None:
        if kind == "list":
            self._send(200, [1, 2, 3])
        elif kind == "error":
            self._send(200, {"status": "error", "error": {"code": "INTERNAL", "message": "boom"}})
        elif kind == "huge":
            self._send(200, {"status": "ok", "result": "x" * (12 * 1024 * 1024)})
        elif kind == "deep":
            self._send(200, None, raw=b"[" * 10_000 + b"]" * 10_000)
        elif kind == "result":
            self._send(200, {"status": "ok", "result": "not a find result"})
        elif kind == "echo":
            self._send(500, {"status": "error", "error": {"code": "INTERNAL", "message":
                             f"cannot use key {self.headers.get('X-API-Key')!r} for {self.path}"}})
        else:
            self._send(200, None, raw=b"<html><body>502 Bad Gateway</body></html>", kind="text/html")

    def _handle(self, method: str) -> None:
        ov = self.server.standin
        path, query, body = self._receive(method)
        if path == "/health":
            self._send(200, {"status": "ok", "healthy": True, "version": "0.5.2", "auth_mode": "api_key"})
            return
        if not path.startswith("/api/v1/"):
            self._error("NOT_FOUND", "Not Found")
            return
        given = self.headers.get("X-API-Key") or ""
        bearer = self.headers.get("Authorization") or ""
        if bearer.startswith("Bearer "):
            given = given or bearer[len("Bearer "):]
        if given != ov.api_key:
            self._error("UNAUTHENTICATED", "Invalid API key" if given else "Missing API key")
            return
        if ov.garbage:
            self._garbage(ov.garbage if isinstance(ov.garbage, str) else "text")
            return
        user = self.headers.get("X-OpenViking-User") or "default"
        try:
            result, envelope = self._route(ov, method, path, query, body, user)
        except _Refused as refused:
            self._error(refused.code, refused.message, refused.details)
            return
        if result is _NO_ROUTE:
            self._error("NOT_FOUND", "Not Found")
            return
        self._send(200, envelope(result))

    def _route(self, ov: StandIn, method: str, path: str, query: dict[str, str], body: Any,
               user: str) -> tuple[Any, Any]:
        lean = _lean  # Response(...).model_dump(exclude_none=True)
        full = _full  # Response(...) returned as is: every field, None included
        session = re.fullmatch(r"/api/v1/sessions/([^/]+)(/messages|/commit)?", path)
        if method == "POST" and path == "/api/v1/search/find":
            return self._find(ov, _json_object(body), user), lean
        if method == "GET" and path == "/api/v1/content/read":
            return self._read(ov, query, user), full
        if method == "POST" and path == "/api/v1/content/write":
            return self._write(ov, _json_object(body), user), lean
        if method == "DELETE" and path == "/api/v1/fs":
            uri = _resolve(query.get("uri"), user)
            with ov.lock:
                if ov.contents.pop(uri, None) is None:
                    raise _Refused("NOT_FOUND", f"File not found: {uri}", {"resource": uri, "type": "file"})
            return {"uri": uri}, full
        if method == "POST" and path == "/api/v1/sessions":
            return self._create_session(ov, _json_object(body, empty_ok=True), user), full
        if method == "POST" and session and session.group(2) == "/messages":
            return self._add_message(ov, unquote(session.group(1)), _json_object(body)), full
        if method == "POST" and session and session.group(2) == "/commit":
            return self._commit(ov, unquote(session.group(1)), _json_object(body, empty_ok=True), user), lean
        return _NO_ROUTE, None

    # -- routes -----------------------------------------------------------------------------------------------
    def _find(self, ov: StandIn, body: dict[str, Any], user: str) -> dict[str, Any]:
        unknown = sorted(set(body) - FIND_FIELDS)
        if unknown:
            raise _Refused("INVALID_ARGUMENT", f"Extra inputs are not permitted: {unknown[0]}")
        limit = body.get("limit", 10)
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise _Refused("INVALID_ARGUMENT", "limit must be an integer >= 1")
        query = body.get("query", "")
        if not isinstance(query, str):
            raise _Refused("INVALID_ARGUMENT", "query must be a string")
        if ov.hang:
            ov.stopping.wait(60)
        targets = body.get("target_uri", "")
        targets = targets if isinstance(targets, list) else [targets]
        roots = [_resolve(t, user, "target_uri") for t in targets if t] or [f"viking://user/{user}", "viking://"]
        wanted = _tokens(query)
        found: dict[str, list[dict[str, Any]]] = {"memories": [], "resources": [], "skills": []}
        with ov.lock:
            stored = list(ov.contents.items())
        for uri, text in stored:
            if not any(uri == r.rstrip("/") or uri.startswith(r.rstrip("/") + "/") for r in roots):
                continue
            shared = len(wanted & _tokens(text)) if wanted else 0
            if not shared:
                continue
            category = _category(uri)
            kind = {"memories": "memory", "skills": "skill"}.get(category, "resource")
            hit: dict[str, Any] = {"context_type": kind,
                                   "uri": uri, "level": 2, "score": round(shared / len(wanted), 6),
                                   "abstract": " ".join(text.split())[:256], "tags": []}
            if body.get("read_content"):
                hit["content"] = text
            found[category].append(hit)
        for hits in found.values():
            hits.sort(key=lambda h: -h["score"])
            del hits[limit:]
        return {**found, "total": sum(len(h) for h in found.values())}

    def _read(self, ov: StandIn, query: dict[str, str], user: str) -> str:
        uri = _resolve(query.get("uri"), user)
        with ov.lock:
            text = ov.contents.get(uri)
        if text is None:
            raise _Refused("NOT_FOUND", f"File not found: {uri}", {"resource": uri, "type": "file"})
        offset, limit = int(query.get("offset", "0")), int(query.get("limit", "-1"))
        if offset == 0 and limit == -1:
            return text
        lines = text.splitlines(keepends=True)[offset:]
        return "".join(lines if limit < 0 else lines[:limit])

    def _write(self, ov: StandIn, body: dict[str, Any], user: str) -> dict[str, Any]:
        unknown = sorted(set(body) - WRITE_FIELDS)
        if unknown:
            raise _Refused("INVALID_ARGUMENT", f"Extra inputs are not permitted: {unknown[0]}")
        content, mode = body.get("content"), body.get("mode", "replace")
        if not isinstance(content, str):
            raise _Refused("INVALID_ARGUMENT", "content must be a string")
        if mode not in ("replace", "append", "create"):
            raise _Refused("INVALID_ARGUMENT", f"unsupported write mode: {mode}")
        uri = _resolve(body.get("uri"), user)
        with ov.lock:
            before = ov.contents.get(uri)
            if before is None and not any(uri.lower().endswith(e) for e in _CREATE_EXTENSIONS):
                raise _Refused("INVALID_ARGUMENT", f"creating a new file does not allow this extension: {uri}")
            ov.contents[uri] = (before or "") + content if mode == "append" else content
        kind = {"memories": "memory", "skills": "skill"}.get(_category(uri), "resource")
        return {"uri": uri, "root_uri": uri.rsplit("/", 1)[0], "context_type": kind, "mode": mode,
                "written_bytes": len(content.encode("utf-8")), "content_updated": True,
                "semantic_status": "queued", "vector_status": "queued", "task_id": str(uuid.uuid4())}

    def _create_session(self, ov: StandIn, body: dict[str, Any], user: str) -> dict[str, Any]:
        sid = body.get("session_id") or uuid.uuid4().hex
        if not isinstance(sid, str):
            raise _Refused("INVALID_ARGUMENT", "session_id must be a string")
        with ov.lock:
            if sid in ov.sessions:
                raise _Refused("ALREADY_EXISTS", f"Session '{sid}' already exists",
                               {"resource": sid, "type": "session"})
            ov.sessions[sid] = []
        return {"session_id": sid, "uri": f"viking://user/{user}/sessions/{sid}",
                "user": {"account_id": "default", "user_id": user}, "auto_commit_policy": {},
                "memory_extraction_config": {}}

    def _add_message(self, ov: StandIn, sid: str, body: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(body) - MESSAGE_FIELDS)
        if unknown or not isinstance(body.get("role"), str):
            raise _Refused("INVALID_ARGUMENT", "a message needs a role (and only AddMessageRequest's fields)")
        if body.get("content") is None and body.get("parts") is None:
            raise _Refused("INVALID_ARGUMENT", "Either 'content' or 'parts' must be provided")
        with ov.lock:
            messages = ov.sessions.setdefault(sid, [])  # the server creates a missing session here
            messages.append(body)
            count = len(messages)
            pending = sum(len(str(m.get("content") or m.get("parts"))) // 4 for m in messages)
        return {"session_id": sid, "message_count": count, "pending_tokens": pending}

    def _commit(self, ov: StandIn, sid: str, body: dict[str, Any], user: str) -> dict[str, Any]:
        keep = body.get("keep_recent_count", 0)
        if not isinstance(keep, int) or isinstance(keep, bool) or not 0 <= keep <= 10_000:
            raise _Refused("INVALID_ARGUMENT", "keep_recent_count must be an integer in 0..10000")
        with ov.lock:
            if sid not in ov.sessions:
                raise _Refused("NOT_FOUND", f"Session not found: {sid}", {"resource": sid, "type": "session"})
            messages = ov.sessions[sid]
            if not messages:
                return {"session_id": sid, "status": "skipped", "task_id": None, "archive_uri": None,
                        "archived": False}
            cut = len(messages) - keep if keep else len(messages)
            archived, ov.sessions[sid] = messages[:cut], messages[cut:]
            ov.archives.setdefault(sid, []).append(archived)
            number = len(ov.archives[sid])
        return {"session_id": sid, "status": "accepted", "task_id": str(uuid.uuid4()),
                "archive_uri": f"viking://user/{user}/sessions/{sid}/history/archive_{number:03d}",
                "archived": True}


_NO_ROUTE = object()


def _lean(result: Any) -> dict[str, Any]:
    return {"status": "ok", "result": result}


def _full(result: Any) -> dict[str, Any]:
    return {"status": "ok", "result": result, "error": None, "telemetry": None, "profile": None}


def _json_object(body: Any, *, empty_ok: bool = False) -> dict[str, Any]:
    if body is None and empty_ok:
        return {}
    if not isinstance(body, dict):
        raise _Refused("INVALID_ARGUMENT", "the body must be a JSON object")
    return body


@contextmanager
def serve(api_key: str = "test-openviking-key", *, hang: bool = False,
          garbage: bool | str = False) -> Iterator[StandIn]:
    """Run the stand-in on 127.0.0.1 (an ephemeral port) for the ``with`` block (see the module's docstring)."""
    with run(StandIn(api_key=api_key, hang=hang, garbage=garbage), _Handler, "openviking-standin") as standin:
        yield standin
