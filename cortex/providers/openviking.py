"""OpenViking as a memory provider, over the HTTP API that the ``openviking`` 0.5.2 client speaks (its HTTP client
is the ``openviking-sdk`` package's ``AsyncHTTPClient``; the server's routers are ``openviking/server/routers``).

Cortex never imports ``openviking`` (it needs ``mcp<2``): it sends what the client sends, with httpx.

- Auth: ``X-API-Key: <key>``, plus ``X-OpenViking-Account`` / ``X-OpenViking-User`` when configured (as the client
  does), and ``X-OpenViking-Actor-Peer: <agent>`` on an agent's requests.
- Every answer is an envelope ``{"status": "ok"|"error", "result": ..., "error": {"code", "message"}}``.
- Where an agent's memories live: ``viking://~/peers/<agent>/memories/``. ``~`` is 0.5.2's home alias (the
  current user's space); the older uid-less ``viking://user/memories/...`` no longer expands there in 0.5.2 (the
  server refuses it, or reads it as a user named ``memories``). ``peers/<peer>`` is OpenViking's own per-agent
  namespace: the server classifies ``user/<uid>/peers/<peer>/memories/`` as memory, hides other peers from an
  actor peer's view, and files what it extracts from a session about an assistant whose messages carry
  ``peer_id`` there. Cortex's memory ``m`` of agent ``a`` is mirrored at
  ``viking://~/peers/a/memories/cortex/m.md``.
- Search: ``POST /api/v1/search/find`` with that prefix as ``target_uri`` (and ``read_content`` for the verbatim
  text); hits outside the agent's prefix are dropped here too, whatever the server returns.
- Turns: ``POST /api/v1/sessions/{id}/messages`` (the server creates the session on the first message), then
  ``POST /api/v1/sessions/{id}/commit``, which archives them and lets OpenViking extract memories.
- Writes: ``POST /api/v1/content/write`` (mode ``replace``: creates or overwrites); a removal is
  ``DELETE /api/v1/fs?uri=`` (the client's ``rm``).

Any failure raises :class:`~cortex.errors.ProviderError`; the API key is never part of a message or repr.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import time
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote

from cortex.errors import ProviderError
from cortex.names import check_agent_name, is_memory_id
from cortex.providers.base import ProviderHit, finite_score
from cortex.providers.http import HTTPProvider, head

URL_ENV = "CORTEX_OPENVIKING_URL"
API_KEY_ENV = "CORTEX_OPENVIKING_API_KEY"
ACCOUNT_ENV = "CORTEX_OPENVIKING_ACCOUNT"
USER_ENV = "CORTEX_OPENVIKING_USER"

_CATEGORIES = ("memories", "resources", "skills")
_SESSION_UNSAFE = re.compile(r"[^A-Za-z0-9_.@-]")


def agent_prefix(agent: str) -> str:
    """The ``viking://`` prefix under which ``agent``'s memories live (see the module's docstring)."""
    return f"viking://~/peers/{check_agent_name(agent)}/memories/"


def memory_uri(agent: str, memory_id: str) -> str:
    """Where Cortex mirrors its memory ``memory_id`` of ``agent``."""
    if not is_memory_id(memory_id):
        raise ProviderError("openviking", f"not a memory id: {memory_id!r:.80}")
    return f"{agent_prefix(agent)}cortex/{memory_id}.md"


def _owned_by(uri: str, agent: str) -> bool:
    """Whether ``uri`` (as the server answers it: canonical ``viking://user/<uid>/...`` or the ``~`` alias) is
    inside ``agent``'s prefix."""
    return re.match(rf"viking://(?:~|user/[^/]+)/peers/{re.escape(agent)}/memories/", uri) is not None


class OpenVikingProvider(HTTPProvider):
    """An OpenViking server as a memory provider (see the module's docstring for the mapping).

    ``url``, ``api_key``, ``account`` and ``user`` default to ``CORTEX_OPENVIKING_URL``,
    ``CORTEX_OPENVIKING_API_KEY``, ``CORTEX_OPENVIKING_ACCOUNT`` and ``CORTEX_OPENVIKING_USER``; ``timeout`` bounds
    each request (connecting, each read, and the whole answer)."""

    name = "openviking"

    def __init__(self, url: str | None = None, api_key: str | None = None, *, account: str | None = None,
                 user: str | None = None, timeout: float = 5.0) -> None:
        self._setup(url if url is not None else os.environ.get(URL_ENV, ""),
                    api_key if api_key is not None else os.environ.get(API_KEY_ENV), timeout)
        self.account = account if account is not None else os.environ.get(ACCOUNT_ENV) or None
        self.user = user if user is not None else os.environ.get(USER_ENV) or None

    # -- lifecycle --------------------------------------------------------------------------------------------
    # -- recall -----------------------------------------------------------------------------------------------
    def search(self, query: str, *, agent: str, limit: int = 10) -> list[ProviderHit]:
        """``agent``'s hits for ``query`` from ``POST /api/v1/search/find``, best first: the URI is the id, the
        verbatim content (else the abstract) the content, the server's score the score."""
        agent = check_agent_name(agent)
        limit = max(1, int(limit))
        started = time.monotonic()
        self._status = {"query": query, "agent": agent, "count": 0, "state": "running"}
        try:
            result = self._call("POST", "/api/v1/search/find", agent=agent, body={
                "query": query, "target_uri": agent_prefix(agent), "limit": limit, "read_content": True})
            hits, skipped = _hits(result, agent)
        except Exception as exc:
            self._status.update(state="failed", error=str(exc), seconds=round(time.monotonic() - started, 3))
            raise
        hits = hits[:limit]
        self._status.update(state="ok", count=len(hits), skipped=skipped, ids=[h.id for h in hits],
                            seconds=round(time.monotonic() - started, 3),
                            at=datetime.now(timezone.utc).isoformat())
        return hits

    # -- writes -----------------------------------------------------------------------------------------------
    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None, agent: str | None = None) -> None:
        """Add the turn to the OpenViking session of (``agent``, ``session_id``) (``POST .../messages``, the
        assistant's message with the agent as ``peer_id``), then commit it (``POST .../commit``)."""
        agent = check_agent_name(agent or self.agent)
        path = f"/api/v1/sessions/{quote(session_key(agent, session_id), safe='')}"
        if user_content:
            self._call("POST", f"{path}/messages", agent=agent, body={"role": "user", "content": user_content})
        if assistant_content:
            self._call("POST", f"{path}/messages", agent=agent,
                       body={"role": "assistant", "content": assistant_content, "peer_id": agent})
        if user_content or assistant_content:
            self._call("POST", f"{path}/commit", agent=agent, body={"keep_recent_count": 0})

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: dict[str, Any] | None = None) -> None:
        """Mirror a write: ``add`` / ``replace`` write ``content`` verbatim at :func:`memory_uri` (of
        ``metadata``'s ``agent`` and ``memory_id``; without an id, one made from the content), ``remove`` deletes
        that file (a file already gone is fine)."""
        meta = metadata or {}
        agent = check_agent_name(meta.get("agent") or self.agent)
        memory_id = meta.get("memory_id")
        if action in ("add", "replace"):
            if not memory_id:
                memory_id = "h" + hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()[:32]
            self._call("POST", "/api/v1/content/write", agent=agent, body={
                "uri": memory_uri(agent, str(memory_id)), "content": content, "mode": "replace", "wait": False})
        elif action == "remove":
            if not memory_id:
                raise ProviderError(self.name, "a remove needs metadata['memory_id']")
            try:
                self._call("DELETE", "/api/v1/fs", agent=agent,
                           params={"uri": memory_uri(agent, str(memory_id)), "recursive": "false",
                                   "wait": "false"})
            except _NotFound:
                pass
        else:
            raise ProviderError(self.name, f"unknown memory write action {action!r:.40}")

    # -- HTTP -------------------------------------------------------------------------------------------------
    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if self._key:
            headers["X-API-Key"] = self._key
        if self.account:
            headers["X-OpenViking-Account"] = self.account
        if self.user:
            headers["X-OpenViking-User"] = self.user
        return headers

    def _call(self, method: str, path: str, *, agent: str | None = None, body: dict[str, Any] | None = None,
              params: dict[str, str] | None = None) -> Any:
        """Send one request and return the envelope's ``result``; :class:`ProviderError` for anything else."""
        if not self.is_available():
            raise ProviderError(self.name, f"no server URL configured ({URL_ENV})")
        where = f"{method} {path}"
        status, envelope, text = self._request(method, path, body=body, params=params,
                                               headers={"X-OpenViking-Actor-Peer": agent} if agent else None)
        if envelope is None:
            raise self._fail(f"{where} answered HTTP {status} with something that is not JSON: {head(text)!r}")
        if not isinstance(envelope, dict):
            raise self._fail(f"{where} answered HTTP {status} with a JSON {type(envelope).__name__}, "
                             "not the {status, result} envelope")
        if envelope.get("status") == "error" or status >= 400:
            error = envelope.get("error")
            code = error.get("code") if isinstance(error, dict) else None
            message = error.get("message") if isinstance(error, dict) else envelope.get("detail")
            if code == "NOT_FOUND" or (status == 404 and code is None and method == "DELETE"):
                raise _NotFound(self.name, f"{where}: not found")
            hint = " (check CORTEX_OPENVIKING_API_KEY)" if status == 401 or code == "UNAUTHENTICATED" else ""
            raise self._fail(f"{where} failed: HTTP {status} {head(str(code or 'error'), 40)}: "
                             f"{head(str(message or ''))}{hint}")
        if envelope.get("status") != "ok":
            raise self._fail(f"{where} answered HTTP {status} without status 'ok': {head(text)!r}")
        return envelope.get("result")


class _NotFound(ProviderError):
    """The server answered NOT_FOUND (a removal of a file already gone is not a failure)."""


def session_key(agent: str, session_id: str) -> str:
    """The OpenViking session id of Cortex's ``session_id`` for ``agent``: ``cortex-<agent>[-<session>]``, with
    characters OpenViking's ids do not allow replaced (and a digest of the original when any were)."""
    if not session_id:
        return f"cortex-{agent}"
    safe = _SESSION_UNSAFE.sub("_", session_id)[:96]
    if safe != session_id:
        safe += "-" + hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"cortex-{agent}-{safe}"


def _hits(result: Any, agent: str) -> tuple[list[ProviderHit], int]:
    """The hits of a find result (``{memories, resources, skills, total}``) inside ``agent``'s prefix, best
    first, and how many malformed ones were dropped."""
    if not isinstance(result, dict) or not any(isinstance(result.get(c), list) for c in _CATEGORIES):
        raise ProviderError("openviking", f"find answered a {type(result).__name__} without memories/resources/"
                                          "skills lists")
    hits: dict[str, ProviderHit] = {}
    skipped = 0
    for category in _CATEGORIES:
        items = result.get(category)
        if items is None:
            continue
        if not isinstance(items, list):
            raise ProviderError("openviking", f"find answered {category} as a {type(items).__name__}")
        for item in items:
            uri = item.get("uri") if isinstance(item, dict) else None
            if not isinstance(uri, str) or not uri.startswith("viking://") or len(uri) > 2048:
                skipped += 1
                continue
            if not _owned_by(uri, agent) or uri in hits:
                continue
            content = next((item[k] for k in ("content", "abstract", "overview")
                            if isinstance(item.get(k), str) and item[k].strip()), "")
            if not content:
                skipped += 1
                continue
            score = item.get("score")
            metadata: dict[str, Any] = {"uri": uri, "category": category}
            for key in ("context_type", "level", "abstract"):
                if isinstance(item.get(key), (str, int)) and not isinstance(item.get(key), bool):
                    metadata[key] = item[key]
            tags = item.get("tags")
            if isinstance(tags, list):
                metadata["tags"] = [t for t in tags if isinstance(t, str)]
            mirrored = re.search(r"/memories/cortex/([A-Za-z0-9_-]{1,128})\.md$", uri)
            if mirrored:
                metadata["memory_id"] = mirrored.group(1)
            hits[uri] = ProviderHit(id=uri, content=content,
                                    score=finite_score(score),
                                    metadata=metadata)
    ranked = sorted(hits.values(), key=lambda h: -(h.score if h.score is not None else -math.inf))
    return ranked, skipped
