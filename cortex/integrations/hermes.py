"""Cortex as a Hermes Agent memory provider (hermes-agent 0.19.0): :class:`CortexMemoryProvider`.

``cortex install hermes`` (:mod:`cortex.service.install_hermes`) writes ``$HERMES_HOME/plugins/cortex/``, a shim
Hermes's own discovery (``plugins/memory/__init__.py``) loads; it registers this class, so upgrading Cortex
upgrades the provider. Hermes calls it as its ``MemoryManager`` does: ``is_available`` (no network),
``initialize`` once, ``prefetch`` before each model call (Hermes joins it after 8 s), ``sync_turn`` and
``queue_prefetch`` after each turn on its background worker, the tools through ``handle_tool_call``,
``on_session_end`` and ``shutdown`` at the end.

The store is reached the way Cortex's hooks reach it (:class:`cortex.service.hooks.session.HookSession`): the
server owning the project's store when one runs, else the store opened for the one call and closed again (a
Hermes session lasts hours: holding the store would lock out the CLI and the hooks); or, with ``CORTEX_URL`` (and
``CORTEX_TOKEN``), a Cortex server anywhere. The agent is ``$CORTEX_AGENT``, else the one named at install, else
Hermes's profile (``agent_identity``, unless it is ``default``), else ``hermes``; an agent no definition declares
is registered in code on a store opened here (``cortex install hermes`` also writes a declaration, which a
server reads).
"""

from __future__ import annotations

import copy
import json
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from cortex import config
from cortex.providers.base import WRITE_ORIGIN, MemoryProvider

if TYPE_CHECKING:
    from cortex.api import MemoryAPI
    from cortex.service.hooks.session import HookSession

T = TypeVar("T")

URL_ENV = "CORTEX_URL"
TOKEN_ENV = "CORTEX_TOKEN"
AGENT_ENV = "CORTEX_AGENT"
PROJECT_ENV = "CORTEX_PROJECT"
DEFAULT_AGENT = "hermes"
#: Under Hermes's 8 s prefetch budget: past it Hermes drops the answer and skips the next turn's prefetch.
PREFETCH_BUDGET = 6.0
#: The most of a query a block is ranked for (what the hooks use).
MAX_QUERY_CHARS = 8000
MAX_LIMIT = 50

#: One call at a time opens the project's store in this process (Hermes calls from its worker thread, a prefetch
#: thread and its main thread): each call opens and closes the store, so they take turns rather than overlap.
_STORE_LOCK = threading.RLock()

TOOL_NAMES = ("cortex_store", "cortex_recall", "cortex_search", "cortex_forget")


def _schema(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"name": name, "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required,
                           "additionalProperties": False}}


_LIMIT = {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "description": "At most this many memories."}
TOOL_SCHEMAS: list[dict[str, Any]] = [
    _schema("cortex_store", "Store a durable learning in Cortex (a decision, a pitfall, a convention) so later "
            "sessions recall it. Secrets are redacted before storing.",
            {"content": {"type": "string", "description": "The learning, one or two sentences."},
             "type": {"type": "string", "enum": list(config.MEMORY_TYPES),
                      "description": f"The kind of memory (default {config.DEFAULT_TYPE})."},
             "tags": {"type": "array", "items": {"type": "string"}, "description": "Tags to file it under."}},
            ["content"]),
    _schema("cortex_recall", "Recall memories from Cortex whose text has every word of the query (all current "
            "memories without a query), newest first.",
            {"query": {"type": "string", "description": "Words every memory must contain."}, "limit": _LIMIT}, []),
    _schema("cortex_search", "Ranked search of Cortex's memories (lexical, semantic when a model is configured).",
            {"query": {"type": "string", "description": "What to look for."}, "limit": _LIMIT}, ["query"]),
    _schema("cortex_forget", "Forget one memory by its id (from cortex_recall or cortex_search).",
            {"id": {"type": "string", "description": "The memory's id."}}, ["id"]),
]


def _memory_json(memory: Any) -> dict[str, Any]:
    """A memory as the tools answer it (a :class:`~cortex.model.Memory`, or its JSON from a server's client in
    the hooks' JSON mode)."""
    if isinstance(memory, dict):
        return {"id": memory["id"], "content": memory["content"], "type": memory["type"],
                "tags": sorted(memory.get("tags") or []), "created_at": memory.get("created_at")}
    return {"id": memory.id, "content": memory.content, "type": getattr(memory.type, "value", str(memory.type)),
            "tags": sorted(memory.tags), "created_at": memory.created_at.isoformat()}


def _hit_memories(result: Any) -> list[Any]:
    hits = result["hits"] if isinstance(result, dict) else result.hits
    return [hit["memory"] if isinstance(hit, dict) else hit.memory for hit in hits]


class CortexMemoryProvider(MemoryProvider):
    """Cortex's memory for a Hermes agent (see the module's docstring). ``project`` and ``agent`` are what
    ``cortex install hermes`` recorded; both are optional (Hermes instantiates providers without arguments)."""

    name = "cortex"

    def __init__(self, project: str | None = None, agent: str | None = None) -> None:
        self._project = project
        self._installed_agent = agent
        self.agent = DEFAULT_AGENT
        self.root: Path | None = None
        self.session_id = ""
        self._writes = True
        self._remote: Any = None  # a RemoteCortex of $CORTEX_URL
        self._lock = threading.Lock()
        self._status: dict[str, Any] = {"query": None, "count": 0, "ids": [], "source": None}
        self._queued: dict[str, str] = {}
        self._threads: list[threading.Thread] = []

    # -- where the store is -------------------------------------------------------------------------------------
    def project_root(self) -> Path:
        """``$CORTEX_PROJECT``, else the root recorded at install, else the project of the current directory."""
        chosen = os.environ.get(PROJECT_ENV) or self._project
        return config.find_project_root(Path(chosen).expanduser() if chosen else None)

    def is_available(self) -> bool:
        """Whether a store can be reached without asking anything over the network: ``$CORTEX_URL`` is set, or
        the project's store exists (or its directory can be created)."""
        if os.environ.get(URL_ENV):
            return True
        try:
            location = config.default_store_path(self.project_root())
        except Exception:
            return False
        if isinstance(location, str):
            return True  # a remote SPARQL store's URL
        return location.exists() or os.access(_existing_parent(location), os.W_OK)

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Choose the agent and the store; writes only for Hermes's ``primary`` context (not a subagent's,
        cron's or a flush's)."""
        from cortex.validation import check_agent_name

        self.session_id = session_id or ""
        self._writes = kwargs.get("agent_context", "primary") == "primary"
        self.root = self.project_root()
        identity = kwargs.get("agent_identity")
        candidates = [os.environ.get(AGENT_ENV), self._installed_agent,
                      identity if identity != "default" else None, DEFAULT_AGENT]
        for candidate in candidates:
            if not candidate or not isinstance(candidate, str):
                continue
            try:
                check_agent_name(candidate)
            except Exception:
                continue
            self.agent = candidate
            break
        url = os.environ.get(URL_ENV)
        if url:
            from cortex.api.client import RemoteCortex

            self._remote = RemoteCortex(url, token=os.environ.get(TOKEN_ENV) or None)

    # -- one call's way to the store ------------------------------------------------------------------------
    def _call(self, act: Callable[[MemoryAPI, str], T], *, read_only: bool) -> T:
        """``act(cx, agent)`` on the store: the ``$CORTEX_URL`` server's client, or a hook session of the
        project (the owning server, else the store opened for this call)."""
        if self._remote is not None:
            return act(self._remote, self.agent)
        from cortex.service.hooks.session import HookSession

        root = self.root if self.root is not None else self.project_root()
        with _STORE_LOCK, HookSession(root, read_only=read_only) as session:
            self._declare(session)
            return session.ask(lambda cx: act(cx, self.agent))

    def _declare(self, session: HookSession) -> None:
        """Register the agent in code on a store opened here when no definition declares it."""
        cx = session.open()
        if session.remote:
            return
        from cortex.core import Cortex

        if isinstance(cx, Cortex) and cx.agents.get(self.agent) is None:
            cx.agents.register(self.agent, description="Hermes Agent (registered by Cortex's Hermes provider)")

    def _session(self, read_only: bool) -> HookSession:
        from cortex.service.hooks.session import HookSession

        session = HookSession(self.root if self.root is not None else self.project_root(), read_only=read_only)
        self._declare(session)
        return session

    # -- recall ---------------------------------------------------------------------------------------------------
    def _block(self, query: str) -> str:
        query = query[:MAX_QUERY_CHARS] if isinstance(query, str) else ""
        block = self._call(lambda cx, agent: cx.agent_start(agent, query or None, touch=False), read_only=True)
        count = sum(1 for line in block.splitlines() if line.startswith("- ["))
        with self._lock:
            self._status = {"query": query, "count": count, "ids": [], "source": "prefetch"}
        return block

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """The agent's ``<agent-memory>`` block for ``query`` ("" when nothing is relevant, or on any failure,
        or after :data:`PREFETCH_BUDGET` seconds); a block :meth:`queue_prefetch` computed for the same query
        is taken as it is."""
        with self._lock:
            queued = self._queued.pop(query, None)
        if queued is not None:
            return queued
        answer: list[str] = []

        def run() -> None:
            try:
                answer.append(self._block(query))
            except Exception as exc:
                self._note(exc)

        thread = threading.Thread(target=run, name="cortex-prefetch", daemon=True)
        thread.start()
        thread.join(PREFETCH_BUDGET)
        return answer[0] if answer else ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Compute the block for ``query`` in a thread; the next :meth:`prefetch` of that query takes it."""
        def run() -> None:
            try:
                block = self._block(query)
            except Exception as exc:
                self._note(exc)
                return
            with self._lock:
                self._queued = {query: block}

        thread = threading.Thread(target=run, name="cortex-queue-prefetch", daemon=True)
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def recall_status(self) -> dict[str, Any]:
        """What the last prefetch or recall returned: its ``query``, ``count``, the memories' ``ids`` (a tool's
        recall or search; a prefetch's block names none), its ``source``, and ``error`` when it failed."""
        with self._lock:
            return dict(self._status)

    def _note(self, exc: BaseException) -> None:
        with self._lock:
            self._status = {**self._status, "error": f"{type(exc).__name__}: {exc}"}

    # -- capture ----------------------------------------------------------------------------------------------
    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None) -> None:
        """Capture the marker lines (``LEARNED:``, ``DECISION:``...) of the assistant's text as Cortex's ``Stop``
        hook does (redacted, through ``agent_end``; spooled when the store cannot be reached for a reason that
        may pass). Never raises."""
        if not self._writes or not isinstance(assistant_content, str):
            return
        try:
            self._capture(assistant_content)
        except Exception as exc:
            self._note(exc)

    def _capture(self, text: str) -> None:
        from cortex.markers import marker_lines

        found = marker_lines(text)
        if not found:
            return
        if self._remote is not None:
            self._remote.agent_end(self.agent, found)
            return
        from cortex.service.hooks.delivery import deliver

        with _STORE_LOCK, self._session(read_only=False) as session:
            deliver(session, "hermes sync_turn", self.agent, found)

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """With a language model configured for the project, have the session's learnings and summary extracted
        as Cortex's ``SessionEnd`` hook does (:func:`cortex.service.hooks.later.extract`: the owning server's
        queue, else a detached ``cortex capture``) from the messages, kept as an OpenAI-style transcript in the
        project's private ``.cortex/hermes/``; the marker lines went through :meth:`sync_turn` already. Never
        raises."""
        if not self._writes or self._remote is not None or not isinstance(messages, list) or not messages:
            return
        try:
            self._extract(messages)
        except Exception as exc:
            self._note(exc)

    def _extract(self, messages: list[dict[str, Any]]) -> None:
        from cortex.files import atomic_write, private_dir
        from cortex.service.hooks import later

        root = self.root if self.root is not None else self.project_root()
        if not later.llm_configured(root):
            return
        name = "".join(c if c.isalnum() or c in "-_" else "_" for c in self.session_id)[:100] or "session"
        path = private_dir(root / ".cortex" / "hermes") / f"{name}.json"
        atomic_write(path, json.dumps({"messages": messages}, ensure_ascii=False, default=str))
        with _STORE_LOCK, self._session(read_only=False) as session:
            later.extract(session, self.agent, str(path))

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: dict[str, Any] | None = None) -> None:
        """Hermes's built-in memory tool added or replaced an entry: store it in Cortex too (tagged
        ``hermes-<target>``); a removal is not mirrored (Hermes names the entry by text, not by id). A write Cortex
        mirrored itself (``write_origin`` ``cortex``) is not stored again."""
        if not self._writes or action not in ("add", "replace") or not isinstance(content, str) or not content.strip():
            return
        if (metadata or {}).get("write_origin") == WRITE_ORIGIN:
            return
        tag = f"hermes-{target}" if isinstance(target, str) and target.isalnum() else "hermes"
        self._call(lambda cx, agent: cx.store(agent, content, tags=[tag], source="manual"), read_only=False)

    # -- tools --------------------------------------------------------------------------------------------------
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """``cortex_store``, ``cortex_recall``, ``cortex_search``, ``cortex_forget`` (OpenAI function schemas;
        not named like Hermes's core tools, which Hermes would drop)."""
        return copy.deepcopy(TOOL_SCHEMAS)

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run a tool; a JSON string always, ``{"error": ...}`` for a failure."""
        try:
            if tool_name not in TOOL_NAMES:
                raise ValueError(f"unknown tool {str(tool_name)[:100]!r}; Cortex offers {', '.join(TOOL_NAMES)}")
            if not isinstance(args, dict):
                raise ValueError("the arguments are not a JSON object")
            return json.dumps(self._tool(tool_name, args), ensure_ascii=False)
        except Exception as exc:
            return json.dumps({"error": f"{type(exc).__name__}: {exc}"}, ensure_ascii=False)

    def _tool(self, tool_name: str, args: dict[str, Any]) -> dict[str, Any]:
        limit = args.get("limit", 10)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
            raise ValueError(f"limit must be an integer from 1 to {MAX_LIMIT}")
        if tool_name == "cortex_store":
            if not self._writes:
                raise PermissionError("this Hermes context does not write memories (only the primary one does)")
            content, kind, tags = args.get("content"), args.get("type", config.DEFAULT_TYPE), args.get("tags", [])
            if not isinstance(content, str) or not content.strip():
                raise ValueError("content must be a non-empty string")
            if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
                raise ValueError("tags must be a list of strings")
            memory = self._call(lambda cx, agent: cx.store(agent, content, type=kind, tags=tags), read_only=False)
            return {"stored": True, "memory": _memory_json(memory)}
        if tool_name == "cortex_forget":
            memory_id = args.get("id")
            if not isinstance(memory_id, str) or not memory_id:
                raise ValueError("id must be a memory's id")
            if not self._writes:
                raise PermissionError("this Hermes context does not write memories (only the primary one does)")
            return {"forgotten": self._call(lambda cx, agent: cx.forget(agent, memory_id), read_only=False),
                    "id": memory_id}
        query = args.get("query")
        if query is not None and not isinstance(query, str):
            raise ValueError("query must be a string")
        if tool_name == "cortex_recall":
            found = self._call(lambda cx, agent: cx.recall(agent, query or None, limit=limit), read_only=True)
        else:
            if not query or not query.strip():
                raise ValueError("query must be a non-empty string")
            result = self._call(lambda cx, agent: cx.search(agent, query, limit=limit),
                                read_only=True)
            found = _hit_memories(result)
        memories = [_memory_json(m) for m in found]
        with self._lock:
            self._status = {"query": query, "count": len(memories), "ids": [m["id"] for m in memories],
                            "source": tool_name}
        return {"memories": memories, "count": len(memories)}

    def shutdown(self) -> None:
        """Wait (briefly) for queued prefetches; close the server's client."""
        for thread in self._threads:
            thread.join(timeout=2.0)
        self._threads = []
        remote, self._remote = self._remote, None
        if remote is not None:
            remote.close()


def _existing_parent(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path("/")
