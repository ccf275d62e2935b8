"""The :class:`Cortex` facade: the one entry point of every surface, and a thin coordinator.

It validates input, checks that the agent is declared with memory enabled, resolves which scope an operation
reads or writes, and calls the engine (recall, search, capture, lifecycle, render) and the repository
(:mod:`cortex.memories`, the only writer). The rules of each concern live in their own module.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any

from cortex import capture, config, lifecycle
from cortex.agents import AgentDefinition, AgentRegistry
from cortex.embeddings import EmbeddingProvider, make_provider
from cortex.errors import CortexError, InvalidInputError, MemoryNotFoundError
from cortex.memories import MemoryRepository
from cortex.model import NO_FILTERS, Filters, IndexStatus, Memory, MemoryType, Query, Scope, SearchResult, utcnow
from cortex.recall import recall_ids
from cortex.render import fit
from cortex.render import render as render_block
from cortex.rerank import NO_RERANKING, Reranking
from cortex.search import Fusion, SearchMode, check_mode
from cortex.search import search as run_search
from cortex.store import Location, open_store
from cortex.store.base import MemoryStore
from cortex.validation import (
    check_agent_name,
    check_confidence,
    check_duration,
    check_limit,
    check_project,
    check_query_text,
    check_text,
    is_memory_id,
    memory_from_entry,
)
from cortex.validation import query as make_query
from cortex.vocab import DEFAULT_NS, Vocabulary

log = logging.getLogger("cortex")


class Cortex:
    """Persistent memory for AI agents, on an RDF store.

    Open with :meth:`Cortex.open`; use as a context manager or call :meth:`close`. Thread-safe: operations
    are serialised inside one process (the store admits one writing process anyway).
    """

    def __init__(
        self,
        store: MemoryStore,
        agents: AgentRegistry | None = None,
        *,
        state_dir: str | os.PathLike[str] | None = None,
        clock: Callable[[], datetime] = utcnow,
        embeddings: EmbeddingProvider | None = None,
        fusion: Fusion | None = None,
    ) -> None:
        state = Path(state_dir) if state_dir is not None else store.local_path
        self._memories = MemoryRepository(store, state, embeddings)
        self.agents = agents if agents is not None else AgentRegistry()
        self._clock = clock
        #: How ``hybrid`` search fuses the lexical and the semantic ranking.
        self.fusion = fusion if fusion is not None else Fusion()
        self._closed = False

    @classmethod
    def open(
        cls,
        path: Location,
        *,
        agent_dirs: Iterable[str | os.PathLike[str]] | None = None,
        ns: str = DEFAULT_NS,
        state_dir: str | os.PathLike[str] | None = None,
        clock: Callable[[], datetime] = utcnow,
        embeddings: EmbeddingProvider | str | None = "auto",
        fusion: Fusion | None = None,
    ) -> "Cortex":
        """Open (creating if needed) the store at ``path``: a directory for the embedded on-disk store, None
        for an in-memory one (see :func:`cortex.store.open_store`).

        ``state_dir`` is where derived indexes are kept (default: the store directory; a store without one
        rebuilds its indexes when opened). ``agent_dirs`` are the directories whose Markdown definitions are
        loaded; problems in them are logged and kept in ``cx.agents.problems``. ``embeddings`` is a
        provider, a provider name for :func:`cortex.embeddings.make_provider` (``auto``: the local model when
        the ``semantic`` extra is installed; ``local``, ``openai``, ``hash``, ``none``) or None. Raises
        :class:`StoreLockedError` when another process holds the store.
        """
        provider = make_provider(embeddings) if isinstance(embeddings, str) else embeddings
        registry = AgentRegistry()
        if agent_dirs is not None:
            for problem in registry.load(agent_dirs):
                log.warning("agent definition problem: %s", problem)
        store = open_store(path, Vocabulary(ns))
        return cls(store, registry, state_dir=state_dir, clock=clock, embeddings=provider, fusion=fusion)

    # -- lifecycle -------------------------------------------------------------------------------

    def close(self, *, flush: bool = True) -> None:
        """Checkpoint indexes, flush (unless ``flush=False``: committed writes survive a crash of the
        process anyway, only power loss needs the ~10 ms fsync) and release the store. Idempotent."""
        with self._memories.lock:
            if self._closed:
                return
            self._closed = True
            self._memories.close(flush=flush)

    def flush(self) -> None:
        """Force committed writes to disk (fsync). Commits already survive a crash of the process; this
        also protects them against power loss, at ~10 ms a call."""
        self._check_open()
        self._memories.flush()

    def __enter__(self) -> "Cortex":
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def embeddings(self) -> EmbeddingProvider | None:
        """The embedding provider (None: lexical search only)."""
        return self._memories.embeddings

    @property
    def store_path(self) -> Path | None:
        """Where the embedded store lives on disk (None in memory)."""
        return self._memories.store.local_path

    @property
    def state_dir(self) -> Path | None:
        """Where derived indexes (and a server's tokens and discovery file) are kept, or None."""
        return self._memories.state_dir

    def info(self) -> dict[str, Any]:
        """The store's location and the embedding model (None without one)."""
        return {"store": self._memories.store.location,
                "embeddings": self.embeddings.model if self.embeddings is not None else None}

    def _check_open(self) -> None:
        if self._closed:
            raise CortexError("this Cortex is closed")

    def _agent(self, agent: str) -> AgentDefinition:
        """The definition of a declared agent with memory enabled."""
        self._check_open()
        return self.agents.require(agent)

    @staticmethod
    def _scope(agent: str) -> Scope:
        return Scope.agent(agent)

    # -- writes ----------------------------------------------------------------------------------

    def store(
        self,
        agent: str,
        content: str,
        *,
        type: MemoryType | str = config.DEFAULT_TYPE,
        project: str = config.DEFAULT_PROJECT,
        confidence: float = config.DEFAULT_CONFIDENCE,
    ) -> Memory:
        """Store one memory and return it."""
        self._agent(agent)
        entry = {"content": content, "type": type, "project": project, "confidence": confidence}
        memory = memory_from_entry(agent, entry, self._clock())
        self._memories.add(self._scope(agent), [memory])
        return memory

    def store_many(self, agent: str, entries: Iterable[Mapping[str, Any]]) -> list[Memory]:
        """Store a batch in one atomic write; returns the memories in input order.

        Each entry is a mapping with ``content`` and optionally ``type``, ``project``, ``confidence``,
        ``usage_count``, ``created_at``, ``last_used_at`` (so imports keep their history). Every entry is
        validated before anything is written; one bad entry stores nothing. Batches over 50,000 memories
        are written as consecutive atomic chunks of 50,000.
        """
        self._agent(agent)
        if isinstance(entries, (str, bytes, Mapping)) or not isinstance(entries, Iterable):
            raise InvalidInputError("entries", f"must be a list of mappings, not {type(entries).__name__}")
        now = self._clock()
        memories = []
        for i, entry in enumerate(entries):
            if not isinstance(entry, Mapping):
                raise InvalidInputError(f"entries[{i}]", f"must be a mapping, not {type(entry).__name__}")
            try:
                memories.append(memory_from_entry(agent, entry, now))
            except InvalidInputError as exc:
                raise exc.within(f"entries[{i}]") from None
        self._memories.add(self._scope(agent), memories)
        return memories

    def touch(self, agent: str, memory_id: str) -> Memory:
        """Record a use: usageCount + 1 and lastUsedAt = now, in one atomic update. Returns the memory."""
        self._agent(agent)
        ids = [memory_id] if is_memory_id(memory_id) else []
        touched = self._memories.touch(self._scope(agent), ids, self._clock())
        if not touched:
            raise MemoryNotFoundError(agent, str(memory_id))
        return touched[0]

    def forget(self, agent: str, memory_id: str) -> bool:
        """Remove every triple of the memory. False when there was no such memory."""
        self._agent(agent)
        return is_memory_id(memory_id) and bool(self._memories.delete(self._scope(agent), [memory_id]))

    def prune(
        self,
        agent: str,
        min_confidence: float = config.DEFAULT_MIN_CONFIDENCE,
        max_age: timedelta | str | None = None,
        *,
        dry_run: bool = False,
    ) -> int:
        """Delete memories with confidence strictly below ``min_confidence``, or unused (lastUsedAt) for
        longer than ``max_age`` (a timedelta or ``30d``/``12h``/``90m``). Returns how many were (or, with
        ``dry_run``, would be) deleted."""
        return len(self.prune_candidates(agent, min_confidence, max_age, delete=not dry_run))

    def prune_candidates(
        self,
        agent: str,
        min_confidence: float = config.DEFAULT_MIN_CONFIDENCE,
        max_age: timedelta | str | None = None,
        *,
        delete: bool = False,
    ) -> list[str]:
        """The ids ``prune`` selects (and deletes them when ``delete``), in one atomic update."""
        min_confidence = check_confidence(min_confidence, "min_confidence")
        age = check_duration(max_age) if max_age is not None else None
        self._agent(agent)
        scope = self._scope(agent)
        with self._memories.lock:
            ids = lifecycle.prune_candidates(self._memories.index(scope), min_confidence=min_confidence,
                                             max_age=age, now=self._clock())
            if delete and ids:
                self._memories.delete(scope, ids)
            return ids

    def reindex(
        self,
        agent: str,
        *,
        force: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, int]:
        """Rebuild the agent's indexes from the store: the lexical index from a full scan, then the
        vectors of every memory that has none from the current provider (all of them when the model
        changed, or with ``force``). ``progress(done, total)`` is called after each embedded batch. Returns
        ``{"memories": n, "embedded": k}``. Works on agents that are stored but not declared too."""
        check_agent_name(agent)
        self._check_open()
        return self._memories.reindex(self._scope(agent), force=force, progress=progress)

    def embed_missing(self, agent: str | None = None) -> int:
        """Embed the memories that have no vector of the current model (every stored agent when ``agent`` is
        None); returns how many. A server runs this once its model has loaded in the background."""
        self._check_open()
        names = [check_agent_name(agent)] if agent is not None else self.stored_agents()
        return sum(self._memories.embed_missing(self._scope(name)) for name in names)

    # -- reads -----------------------------------------------------------------------------------

    def get(self, agent: str, memory_id: str) -> Memory | None:
        """The memory, or None for an unknown or malformed id."""
        self._agent(agent)
        if not is_memory_id(memory_id):
            return None
        return self._memories.get(self._scope(agent), memory_id)

    def recall(
        self,
        agent: str,
        query: str | None = None,
        *,
        type: MemoryType | str | None = None,
        project: str | None = None,
        limit: int = config.DEFAULT_LIMIT,
    ) -> list[Memory]:
        """AND-token recall (see :func:`cortex.recall.recall_scored`), filtered by type and project inside the
        agent's graph before the limit."""
        q = make_query(agent, query, type=type, project=project, limit=limit)
        self._agent(agent)
        scope = self._scope(agent)
        with self._memories.lock:
            return self._memories.load(scope, recall_ids(self._memories.index(scope), q))

    def search(
        self,
        agent: str,
        query: str,
        *,
        mode: str = config.DEFAULT_SEARCH_MODE,
        limit: int = config.DEFAULT_LIMIT,
        project: str | None = None,
        type: MemoryType | str | None = None,
        explain: bool = False,
        rerank: Reranking | bool = True,
    ) -> SearchResult:
        """Ranked search: ``all`` (AND-token), ``bm25``, ``semantic`` or ``hybrid`` (see
        :mod:`cortex.search`). ``semantic`` and ``hybrid`` fall back to ``bm25`` when they cannot run (no
        provider, vectors of another model, provider failure) and say why in ``result.note``.

        Ranked modes over-fetch candidates and rerank them by recency, use and confidence (see
        :mod:`cortex.rerank`); ``rerank=False`` or a :class:`Reranking` changes that. ``all`` keeps the
        contract's order. With ``explain`` each hit carries its score components.
        """
        q = make_query(agent, query, type=type, project=project, limit=limit, text_required=True)
        requested = check_mode(mode)
        settings = rerank if isinstance(rerank, Reranking) else (Reranking() if rerank else NO_RERANKING)
        self._agent(agent)
        return run_search(self._memories, self._scope(agent), q, requested, reranking=settings,
                          explain=explain, fusion=self.fusion, now=self._clock())

    def resolve_agent(self, name: str) -> str | None:
        """The declared agent with memory that ``name`` stands for (itself, or the agent listing it in
        ``cortex: aliases:``), or None (a built-in or undeclared coding agent such as ``Explore``)."""
        self._check_open()
        if not isinstance(name, str):
            return None
        resolved = self.agents.resolve(name)
        definition = self.agents.get(resolved) if resolved is not None else None
        return resolved if definition is not None and definition.memory_enabled else None

    def describe_agents(self) -> list[dict[str, Any]]:
        """The declared agents: name, description, whether memory is enabled, project, and memory count."""
        self._check_open()
        return [
            {"name": d.name, "description": d.description, "memory_enabled": d.memory_enabled,
             "project": d.settings.project,
             "memories": len(self._memories.index(self._scope(d.name))) if d.memory_enabled else 0}
            for d in self.agents.list()
        ]

    def stored_agents(self) -> list[str]:
        """Names of the agents that have memories in the store, declared or not."""
        self._check_open()
        return [s.name for s in self._memories.scopes() if s.kind == "agent"]

    def stats(self, agent: str) -> dict[str, int]:
        """How many memories of each type the agent has (all four keys, always)."""
        self._agent(agent)
        return {t.value: n for t, n in self._memories.index(self._scope(agent)).type_counts().items()}

    def count(self, agent: str) -> int:
        """How many memories the agent has."""
        self._agent(agent)
        return len(self._memories.index(self._scope(agent)))

    def index_status(self, agent: str) -> IndexStatus:
        """What the agent's derived index holds against the store: memories, vectors, rebuilds, changes.
        Works on agents that are stored but not declared too."""
        check_agent_name(agent)
        self._check_open()
        return self._memories.status(self._scope(agent))

    def sparql(self, query: str, substitutions: Mapping[str, Any] | None = None) -> Any:
        """Run a read-only SPARQL query over the whole store (every agent's graph); ``substitutions`` binds
        variables (by name) to pyoxigraph terms. Returns pyoxigraph's result object."""
        self._check_open()
        with self._memories.lock:
            return self._memories.store.query(check_text(query, "query"), substitutions)

    # -- prompt integration ----------------------------------------------------------------------

    @staticmethod
    def render(memories: Sequence[Memory], max_chars: int | None = None) -> str:
        """The ``<agent-memory>`` block for ``memories`` (best first); "" when empty."""
        if max_chars is not None:
            max_chars = check_limit(max_chars, "max_chars", 10_000_000)
        return render_block(memories, max_chars)

    def agent_start(
        self,
        agent: str,
        task: str | None = None,
        project: str | None = None,
        limit: int | None = None,
        max_chars: int | None = None,
    ) -> str:
        """The block to inject when ``agent`` starts on ``task``; touches every memory it renders.

        Considers memories of ``project`` (default: the agent's ``cortex.project``, else all projects)
        and of ``global``. ``limit`` and ``max_chars`` default to the agent's ``cortex.recall`` settings,
        else 5 memories and 8000 characters.
        """
        if task is not None:
            task = check_query_text(task, "task")
        settings = self._agent(agent).settings
        limit = check_limit(limit if limit is not None else settings.recall_limit or config.DEFAULT_START_LIMIT)
        budget = check_limit(max_chars if max_chars is not None else
                             settings.recall_max_chars or config.DEFAULT_START_MAX_CHARS, "max_chars", 10_000_000)
        project = project if project is not None else settings.project
        filters = NO_FILTERS
        if project is not None:
            filters = Filters(projects=frozenset([check_project(project), config.DEFAULT_PROJECT]))
        scope = self._scope(agent)
        ids: list[str] = []
        if task is not None and task.strip():  # hybrid falls back to bm25 without embeddings
            q = Query(agent=agent, text=task, filters=filters, limit=limit)
            result = run_search(self._memories, scope, q, SearchMode.HYBRID, reranking=Reranking(),
                                explain=False, fusion=self.fusion, now=self._clock())
            ids = [h.memory.id for h in result]
        with self._memories.lock:
            if not ids:  # no task, or nothing related: the most used memories
                ids = recall_ids(self._memories.index(scope), Query(agent=agent, filters=filters, limit=limit))
            shown = fit(self._memories.load(scope, ids), budget)
            if shown:
                self._memories.touch(scope, [m.id for m in shown], self._clock())
            return render_block(shown)

    def agent_end(self, agent: str, output: str, project: str | None = None) -> list[Memory]:
        """Capture memories from marker lines in ``output`` (``LEARNED:``, ``INSIGHT:``, ``PATTERN:``,
        ``CONVENTION:``, ``DECISION:``), then prune with the agent's ``cortex.prune`` settings.

        Content already stored for this agent and project is touched rather than stored again. Returns the
        memories stored or refreshed, in the order of the output. Marker lines whose text is not valid
        content (e.g. over 64 KiB) are skipped and logged.
        """
        output = check_text(output, "output")
        definition = self._agent(agent)
        settings = definition.settings
        project = check_project(project if project is not None else settings.project or config.DEFAULT_PROJECT)
        scope = self._scope(agent)
        with self._memories.lock:
            now = self._clock()
            result = capture.capture(self._memories, scope, output, project, now)
            captured = {m.id for m in result}
            doomed = [
                i for i in lifecycle.prune_candidates(self._memories.index(scope),
                                                      min_confidence=settings.prune_min_confidence,
                                                      max_age=settings.prune_max_age, now=now)
                if i not in captured
            ]
            self._memories.delete(scope, doomed)
            return result
