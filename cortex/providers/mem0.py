"""mem0 as a memory provider, over the HTTP API that the ``mem0ai`` 2.2.1 client (``mem0/client/main.py``) speaks.

Cortex never imports ``mem0ai`` (its import costs over a second on a request's path): it sends what the client
sends, with httpx.

- Auth: ``Authorization: Token <key>`` (and the client's ``Mem0-User-ID``: an md5 of the key).
- Identities: mem0 keeps memories per ``user_id`` / ``agent_id``. Cortex's agent ``a`` is mem0's ``agent_id`` ``a``
  under one ``user_id`` (``CORTEX_MEM0_USER_ID``, default ``cortex``), so agents stay apart and one mem0 project
  can hold several teams' Cortex memories.
- Search: ``POST /v3/memories/search/`` with ``{"query", "filters": {"AND": [{"user_id"}, {"agent_id"}]},
  "top_k"}``; the answer is ``{"results": [{"id", "memory", "score", "created_at", "metadata", ...}]}``. Hits of
  another agent are dropped here too, whatever the server returns.
- Writes: a memory Cortex mirrors is added verbatim (``POST /v3/memories/add/`` with ``infer: false``, its Cortex
  id in ``metadata.cortex_id``); a replace or a removal finds it by that id (``POST /v3/memories/`` with the
  identity and metadata filters) and sends ``PUT`` / ``DELETE /v1/memories/{id}/``. A turn (``sync_turn``) is added
  for mem0's own inference.

Any failure raises :class:`~cortex.errors.ProviderError`; the API key is never part of a message or repr.
"""

from __future__ import annotations

import hashlib
import math
import os
import time
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote

from cortex.errors import ProviderError
from cortex.names import check_agent_name
from cortex.providers.base import ProviderHit, finite_score
from cortex.providers.http import HTTPProvider, head

URL_ENV = "CORTEX_MEM0_URL"
API_KEY_ENV = "CORTEX_MEM0_API_KEY"
USER_ID_ENV = "CORTEX_MEM0_USER_ID"
DEFAULT_USER_ID = "cortex"
#: The longest query sent (mem0's client trims and bounds queries too).
MAX_QUERY = 2000


class Mem0Provider(HTTPProvider):
    """A mem0 server (the hosted platform or a self-hosted one) as a memory provider (see the module's docstring).

    ``url``, ``api_key`` and ``user_id`` default to ``CORTEX_MEM0_URL``, ``CORTEX_MEM0_API_KEY`` and
    ``CORTEX_MEM0_USER_ID``; ``timeout`` bounds each request as a whole."""

    name = "mem0"

    def __init__(self, url: str | None = None, api_key: str | None = None, *, user_id: str | None = None,
                 timeout: float = 5.0) -> None:
        self._setup(url if url is not None else os.environ.get(URL_ENV, ""),
                    api_key if api_key is not None else os.environ.get(API_KEY_ENV), timeout)
        self.user_id = user_id or os.environ.get(USER_ID_ENV) or DEFAULT_USER_ID

    def is_available(self) -> bool:
        """True when a ``http(s)://`` URL and a key are configured (no network)."""
        return super().is_available() and bool(self._key)

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if self._key:
            headers["Authorization"] = f"Token {self._key}"
            headers["Mem0-User-ID"] = hashlib.md5(self._key.encode(), usedforsecurity=False).hexdigest()
        return headers

    def _identity(self, agent: str) -> dict[str, Any]:
        return {"AND": [{"user_id": self.user_id}, {"agent_id": agent}]}

    # -- recall -----------------------------------------------------------------------------------------------
    def search(self, query: str, *, agent: str, limit: int = 10) -> list[ProviderHit]:
        """``agent``'s hits for ``query``, best first."""
        agent = check_agent_name(agent)
        limit = max(1, int(limit))
        started = time.monotonic()
        self._status = {"query": query, "agent": agent, "count": 0, "state": "running"}
        try:
            answer = self._call("POST", "/v3/memories/search/", body={
                "query": " ".join(query.split())[:MAX_QUERY] or "*", "filters": self._identity(agent),
                "top_k": limit})
            hits = _hits(_results(answer, "search"), agent)[:limit]
        except Exception as exc:
            self._status.update(state="failed", error=str(exc), seconds=round(time.monotonic() - started, 3))
            raise
        self._status.update(state="ok", count=len(hits), ids=[h.id for h in hits],
                            seconds=round(time.monotonic() - started, 3))
        return hits

    # -- writes -----------------------------------------------------------------------------------------------
    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None, agent: str | None = None) -> None:
        """Add the turn for mem0's own inference (what it extracts is its business)."""
        agent = check_agent_name(agent or self.agent)
        turn = [{"role": role, "content": text} for role, text in (("user", user_content),
                                                                   ("assistant", assistant_content)) if text]
        if turn:
            body: dict[str, Any] = {"messages": turn, "user_id": self.user_id, "agent_id": agent}
            if session_id:
                body["run_id"] = session_id
            self._call("POST", "/v3/memories/add/", body=body)

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: dict[str, Any] | None = None) -> None:
        """Mirror a write: ``add`` stores ``content`` verbatim with its Cortex id; ``replace`` updates the mem0
        memory that carries that id (or adds it); ``remove`` deletes it (one already gone is fine)."""
        meta = metadata or {}
        agent = check_agent_name(meta.get("agent") or self.agent)
        cortex_id = str(meta.get("memory_id") or "")
        if action not in ("add", "replace", "remove"):
            raise ProviderError(self.name, f"unknown memory write action {action!r:.40}")
        found = self._find(agent, cortex_id) if cortex_id and action != "add" else []
        if action == "remove":
            for mem0_id in found:
                self._call("DELETE", f"/v1/memories/{quote(mem0_id, safe='')}/", missing_ok=True)
            return
        kept = {k: meta[k] for k in ("scope", "type", "project", "tags", "source") if k in meta}
        if found:
            self._call("PUT", f"/v1/memories/{quote(found[0], safe='')}/",
                       body={"text": content, "metadata": {"cortex_id": cortex_id, **kept}})
            return
        self._call("POST", "/v3/memories/add/", body={
            "messages": [{"role": "user", "content": content}], "user_id": self.user_id, "agent_id": agent,
            "metadata": {"cortex_id": cortex_id, **kept} if cortex_id else kept, "infer": False})

    def _find(self, agent: str, cortex_id: str) -> list[str]:
        """The mem0 ids of the memories of ``agent`` that carry Cortex's ``cortex_id``."""
        filters = {"AND": [*self._identity(agent)["AND"], {"metadata": {"cortex_id": cortex_id}}]}
        answer = self._call("POST", "/v3/memories/", body={"filters": filters}, params={"page_size": "100"})
        return [str(item["id"]) for item in _results(answer, "get_all")
                if isinstance(item, dict) and isinstance(item.get("id"), (str, int))
                and (item.get("metadata") or {}).get("cortex_id") == cortex_id]

    # -- HTTP -------------------------------------------------------------------------------------------------
    def _call(self, method: str, path: str, *, body: dict[str, Any] | None = None,
              params: dict[str, str] | None = None, missing_ok: bool = False) -> Any:
        """Send one request and return its JSON; :class:`ProviderError` for anything else."""
        if not self.is_available():
            raise ProviderError(self.name, f"no server URL and key configured ({URL_ENV}, {API_KEY_ENV})")
        status, answer, text = self._request(method, path, body=body, params=params)
        if status == 404 and missing_ok:
            return None
        if status >= 400:
            detail = answer.get("detail", answer.get("error")) if isinstance(answer, dict) else text
            hint = f" (check {API_KEY_ENV})" if status in (401, 403) else ""
            raise self._fail(f"{method} {path} failed: HTTP {status}: {head(str(detail or ''))}{hint}")
        return answer


def _results(answer: Any, what: str) -> list[Any]:
    """The ``results`` of an answer (``{"results": [...]}``, or a bare list as older servers answer)."""
    results = answer.get("results") if isinstance(answer, dict) else answer
    if not isinstance(results, list):
        raise ProviderError("mem0", f"{what} answered a {type(answer).__name__} without a results list")
    return results


def _hits(results: list[Any], agent: str) -> list[ProviderHit]:
    """``agent``'s memories among ``results``, best first (a malformed item is skipped)."""
    hits: list[ProviderHit] = []
    for item in results:
        if not isinstance(item, dict) or not isinstance(item.get("id"), (str, int)):
            continue
        text = item.get("memory")
        owner = item.get("agent_id")
        if not isinstance(text, str) or not text.strip() or (owner is not None and owner != agent):
            continue
        score = item.get("score")
        metadata: dict[str, Any] = {}
        if isinstance(item.get("metadata"), dict) and isinstance(item["metadata"].get("cortex_id"), str):
            metadata["memory_id"] = item["metadata"]["cortex_id"]
        for key in ("categories", "user_id", "agent_id"):
            if isinstance(item.get(key), (str, list)):
                metadata[key] = item[key]
        hits.append(ProviderHit(id=str(item["id"]), content=text,
                                score=finite_score(score),
                                created_at=_moment(item.get("created_at")), metadata=metadata))
    return sorted(hits, key=lambda h: -(h.score if h.score is not None else -math.inf))


def _moment(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)
