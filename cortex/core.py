"""The :class:`Cortex` facade: every operation of every surface lives here (or below)."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from types import TracebackType
from typing import Any

import numpy as np

from cortex import capture, lifecycle
from cortex.agents import AgentDefinition, AgentRegistry
from cortex.embeddings import EmbeddingError, EmbeddingProvider, make_provider
from cortex.errors import CortexError, InvalidInputError, MemoryNotFoundError
from cortex.index.manager import IndexManager
from cortex.index.postings import AgentIndex
from cortex.model import (
    DEFAULT_CONFIDENCE,
    DEFAULT_PROJECT,
    DEFAULT_TYPE,
    Hit,
    Memory,
    MemoryType,
    SearchResult,
    check_confidence,
    check_content,
    check_count,
    check_datetime,
    check_duration,
    check_limit,
    check_agent_name,
    check_project,
    check_type,
    is_memory_id,
    new_memory_id,
    utcnow,
)
from cortex.recall import recall_ids
from cortex.rerank import NO_RERANKING, Reranking
from cortex.search import Fusion, SearchMode, check_mode, rank
from cortex.render import fit
from cortex.render import render as render_block
from cortex.store.base import MemoryStore
from cortex.store.oxigraph import OxigraphStore
from cortex.vocab import DEFAULT_NS, Vocabulary

log = logging.getLogger("cortex")

DEFAULT_START_LIMIT = 5
DEFAULT_START_MAX_CHARS = 8000
_ENTRY_FIELDS = {"content", "type", "project", "confidence", "usage_count", "created_at", "last_used_at"}
#: Memories without a vector that a search embeds on the spot; with more, it asks for ``cortex reindex``.
MAX_LAZY_EMBED = 256
#: Memories read and embedded per batch by ``reindex``.
REINDEX_BATCH = 256


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
        clock: Callable[[], datetime] = utcnow,
        embeddings: EmbeddingProvider | None = None,
        fusion: Fusion | None = None,
    ) -> None:
        self._store = store
        self.agents = agents if agents is not None else AgentRegistry()
        self._indexes = IndexManager(store)
        self._clock = clock
        #: The embedding provider (None: lexical search only).
        self.embeddings = embeddings
        #: How ``hybrid`` search fuses the lexical and the semantic ranking.
        self.fusion = fusion if fusion is not None else Fusion()
        self._lock = threading.RLock()
        self._closed = False

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] | None,
        *,
        agent_dirs: Iterable[str | os.PathLike[str]] | None = None,
        ns: str = DEFAULT_NS,
        clock: Callable[[], datetime] = utcnow,
        embeddings: EmbeddingProvider | str | None = "auto",
        fusion: Fusion | None = None,
    ) -> "Cortex":
        """Open (creating if needed) the on-disk store at ``path``, or an in-memory one for None.

        ``agent_dirs`` are the directories whose Markdown definitions are loaded; problems in them are
        logged and kept in ``cx.agents.problems``. ``embeddings`` is a provider, a provider name for
        :func:`cortex.embeddings.make_provider` (``auto``: the local model when the ``semantic`` extra is
        installed; ``local``, ``openai``, ``none``) or None. Raises :class:`StoreLockedError` when another
        process holds the store.
        """
        provider = make_provider(embeddings) if isinstance(embeddings, str) else embeddings
        registry = AgentRegistry()
        if agent_dirs is not None:
            for problem in registry.load(agent_dirs):
                log.warning("agent definition problem: %s", problem)
        return cls(OxigraphStore(path, Vocabulary(ns)), registry, clock=clock, embeddings=provider, fusion=fusion)

    # -- lifecycle -------------------------------------------------------------------------------

    def close(self, *, flush: bool = True) -> None:
        """Checkpoint indexes, flush (unless ``flush=False``: committed writes survive a crash of the
        process anyway, only power loss needs the ~10 ms fsync) and release the store. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self._indexes.close()
            finally:
                self._store.close(flush=flush)

    def flush(self) -> None:
        """Force committed writes to disk (fsync). Commits already survive a crash of the process; this
        also protects them against power loss, at ~10 ms a call."""
        with self._lock:
            self._check_open()
            self._store.flush()

    def __enter__(self) -> "Cortex":
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def store_path(self) -> os.PathLike[str] | None:
        """Where the store lives on disk (None in memory)."""
        return self._store.path

    def _check_open(self) -> None:
        if self._closed:
            raise CortexError("this Cortex is closed")

    def _agent(self, agent: str) -> AgentDefinition:
        self._check_open()
        return self.agents.require(agent)

    # -- writes ----------------------------------------------------------------------------------

    def store(
        self,
        agent: str,
        content: str,
        *,
        type: MemoryType | str = DEFAULT_TYPE,
        project: str = DEFAULT_PROJECT,
        confidence: float = DEFAULT_CONFIDENCE,
    ) -> Memory:
        """Store one memory and return it."""
        with self._lock:
            self._agent(agent)
            entry = {"content": content, "type": type, "project": project, "confidence": confidence}
            memory = self._new_memory(agent, entry, self._clock())
            self._write_new(agent, [memory])
            return memory

    def store_many(self, agent: str, entries: Iterable[Mapping[str, Any]]) -> list[Memory]:
        """Store a batch in one atomic write; returns the memories in input order.

        Each entry is a mapping with ``content`` and optionally ``type``, ``project``, ``confidence``,
        ``usage_count``, ``created_at``, ``last_used_at`` (so imports keep their history). Every entry is
        validated before anything is written; one bad entry stores nothing. Batches over 50,000 memories
        are written as consecutive atomic chunks of 50,000.
        """
        with self._lock:
            self._agent(agent)
            now = self._clock()
            if isinstance(entries, (str, bytes, Mapping)) or not isinstance(entries, Iterable):
                raise InvalidInputError("entries", f"must be a list of mappings, not {type(entries).__name__}")
            memories = []
            for i, entry in enumerate(entries):
                if not isinstance(entry, Mapping):
                    raise InvalidInputError(f"entries[{i}]", f"must be a mapping, not {type(entry).__name__}")
                try:
                    memories.append(self._new_memory(agent, entry, now))
                except InvalidInputError as exc:
                    raise InvalidInputError(f"entries[{i}].{exc.field}", str(exc).split(": ", 1)[1]) from None
            if not memories:
                return []
            self._write_new(agent, memories)
            return memories

    def _write_new(self, agent: str, memories: Sequence[Memory]) -> None:
        ids = [m.id for m in memories]
        vectors = self._embed_new(agent, memories)
        self._indexes.journal(agent, ids)
        if vectors is not None:
            self._indexes.log_vectors(agent, vectors[0], ids, vectors[1])
        self._store.add(memories)
        index = self._indexes.get(agent)
        index.add_many(memories)
        if vectors is not None:
            index.set_vectors(vectors[0], ids, vectors[1])
        self._indexes.maybe_checkpoint(agent)

    def _embed_new(self, agent: str, memories: Sequence[Memory]) -> tuple[str, np.ndarray] | None:
        """Vectors for memories about to be stored, or None (no provider, stale model, provider failure:
        the memories are stored anyway and embedded later, see :meth:`reindex`)."""
        provider = self.embeddings
        if provider is None or self._stale_model(self._indexes.get(agent)) is not None:
            return None
        try:
            return provider.model, provider.embed([m.content for m in memories])
        except EmbeddingError as exc:
            log.warning("agent %r: storing %d memories without vectors: %s", agent, len(memories), exc)
            return None

    def _stale_model(self, index: AgentIndex) -> str | None:
        """The model of the agent's vectors when it is not the provider's, else None."""
        assert self.embeddings is not None
        if index.vector_model not in (None, self.embeddings.model) and index.vector_count() > 0:
            return str(index.vector_model)
        return None

    def _embed_existing(self, agent: str, memory_ids: Sequence[str],
                        progress: Callable[[int, int], None] | None = None) -> int:
        """Embed stored memories in batches and attach the vectors; returns how many were embedded."""
        assert self.embeddings is not None
        index = self._indexes.get(agent)
        done = 0
        for start in range(0, len(memory_ids), REINDEX_BATCH):
            batch = list(memory_ids[start : start + REINDEX_BATCH])
            pairs = [(i, c) for i, c in zip(batch, self._store.contents(agent, batch)) if c is not None]
            if pairs:
                vectors = self.embeddings.embed([c for _, c in pairs])
                ids = [i for i, _ in pairs]
                self._indexes.log_vectors(agent, self.embeddings.model, ids, vectors)
                index.set_vectors(self.embeddings.model, ids, vectors)
                done += len(pairs)
            if progress is not None:
                progress(min(start + REINDEX_BATCH, len(memory_ids)), len(memory_ids))
        return done

    def _semantic_unavailable(self, agent: str) -> str | None:
        """Why semantic ranking cannot run for ``agent`` now, or None when it can (embedding a few
        memories that lack vectors on the way)."""
        if self.embeddings is None:
            return "no embedding provider configured"
        index = self._indexes.get(agent)
        stale = self._stale_model(index)
        if stale is not None:
            return (f"the vectors of agent {agent!r} were made by {stale}, the provider is "
                    f"{self.embeddings.model}: run `cortex reindex {agent}`")
        missing = index.missing_vectors()
        if len(missing) > MAX_LAZY_EMBED:
            return f"{len(missing)} memories of agent {agent!r} have no vectors: run `cortex reindex {agent}`"
        if missing:
            try:
                self._embed_existing(agent, missing)
            except EmbeddingError as exc:
                return f"embedding failed: {exc}"
        return None

    def reindex(
        self,
        agent: str,
        *,
        force: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, int]:
        """Rebuild the agent's indexes from the store: the lexical index from a full scan, then the
        vectors of every memory that has none from the current provider (all of them when the model
        changed, or with ``force``). ``progress(done, total)`` is called after each embedded batch. Returns ``{"memories": n, "embedded": k}``. Works on agents that are stored but not
        declared too."""
        check_agent_name(agent)
        with self._lock:
            self._check_open()
            index = self._indexes.rebuild(agent)
            embedded = 0
            if self.embeddings is not None:
                if force or self._stale_model(index) is not None:
                    index.drop_vectors()
                embedded = self._embed_existing(agent, index.missing_vectors(), progress)
            self._indexes.checkpoint(agent)
            return {"memories": len(index), "embedded": embedded}

    @staticmethod
    def _new_memory(agent: str, entry: Mapping[str, Any], now: datetime) -> Memory:
        unknown = sorted(set(entry) - _ENTRY_FIELDS)
        if unknown:
            hint = " (ids are generated by Cortex)" if "id" in unknown else ""
            raise InvalidInputError(str(unknown[0]), f"unknown field{hint}")
        if "content" not in entry:
            raise InvalidInputError("content", "missing")
        created = check_datetime(entry["created_at"], "created_at") if entry.get("created_at") is not None else now
        last_used = (
            check_datetime(entry["last_used_at"], "last_used_at") if entry.get("last_used_at") is not None else created
        )
        return Memory(
            id=new_memory_id(),
            agent=agent,
            content=check_content(entry["content"]),
            type=check_type(entry.get("type", DEFAULT_TYPE)),
            project=check_project(entry.get("project", DEFAULT_PROJECT)),
            confidence=check_confidence(entry.get("confidence", DEFAULT_CONFIDENCE)),
            usage_count=check_count(entry.get("usage_count", 0)),
            created_at=created,
            last_used_at=last_used,
        )

    def touch(self, agent: str, memory_id: str) -> Memory:
        """Record a use: usageCount + 1 and lastUsedAt = now, in one atomic update. Returns the memory."""
        with self._lock:
            self._agent(agent)
            touched = self._touch_many(agent, [memory_id] if is_memory_id(memory_id) else [])
            if not touched:
                raise MemoryNotFoundError(agent, str(memory_id))
            return touched[0]

    def _touch_many(self, agent: str, memory_ids: Sequence[str]) -> list[Memory]:
        index = self._indexes.get(agent)
        ids = [i for i in dict.fromkeys(memory_ids) if i in index]
        if not ids:
            return []
        self._indexes.journal(agent, ids)
        self._store.touch(agent, ids, self._clock())
        touched = [m for m in self._store.get_many(agent, ids) if m is not None]
        for m in touched:
            index.set_usage(m)
        return touched

    def forget(self, agent: str, memory_id: str) -> bool:
        """Remove every triple of the memory. False when there was no such memory."""
        with self._lock:
            self._agent(agent)
            if not is_memory_id(memory_id) or memory_id not in self._indexes.get(agent):
                return False
            self._delete(agent, [memory_id])
            return True

    def _delete(self, agent: str, memory_ids: Sequence[str]) -> None:
        index = self._indexes.get(agent)
        self._indexes.journal(agent, memory_ids)
        self._store.delete(agent, memory_ids)
        for memory_id in memory_ids:
            index.remove(memory_id)
        self._indexes.maybe_checkpoint(agent)

    def prune(
        self,
        agent: str,
        min_confidence: float = lifecycle.DEFAULT_MIN_CONFIDENCE,
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
        min_confidence: float = lifecycle.DEFAULT_MIN_CONFIDENCE,
        max_age: timedelta | str | None = None,
        *,
        delete: bool = False,
    ) -> list[str]:
        """The ids ``prune`` selects (and deletes them when ``delete``), in one atomic update."""
        min_confidence = check_confidence(min_confidence, "min_confidence")
        age = check_duration(max_age) if max_age is not None else None
        with self._lock:
            self._agent(agent)
            ids = lifecycle.prune_candidates(
                self._indexes.get(agent), min_confidence=min_confidence, max_age=age, now=self._clock()
            )
            if delete and ids:
                self._delete(agent, ids)
            return ids

    # -- reads -----------------------------------------------------------------------------------

    def get(self, agent: str, memory_id: str) -> Memory | None:
        """The memory, or None for an unknown or malformed id."""
        with self._lock:
            self._agent(agent)
            if not is_memory_id(memory_id):
                return None
            return self._store.get(agent, memory_id)

    def recall(
        self,
        agent: str,
        query: str | None = None,
        *,
        type: MemoryType | str | None = None,
        project: str | None = None,
        limit: int = 10,
    ) -> list[Memory]:
        """AND-token recall (see :func:`cortex.recall.recall_ids`), filtered by type and project inside the
        agent's graph before the limit."""
        if query is not None and not isinstance(query, str):
            raise InvalidInputError("query", f"must be a string, not {query.__class__.__name__}")
        types, projects = _filters(type, project)
        limit = check_limit(limit)
        with self._lock:
            self._agent(agent)
            ids = recall_ids(self._indexes.get(agent), query, types=types, projects=projects, limit=limit)
            return self._load(agent, ids)

    def search(
        self,
        agent: str,
        query: str,
        *,
        mode: SearchMode | str = "hybrid",
        limit: int = 10,
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
        if not isinstance(query, str):
            raise InvalidInputError("query", f"must be a string, not {query.__class__.__name__}")
        requested = check_mode(mode)
        types, projects = _filters(type, project)
        limit = check_limit(limit)
        settings = rerank if isinstance(rerank, Reranking) else (Reranking() if rerank else NO_RERANKING)
        with self._lock:
            self._agent(agent)
            return self._search(agent, query, requested, types, projects, limit, settings, explain)

    def _search(
        self,
        agent: str,
        query: str,
        requested: SearchMode,
        types: list[MemoryType] | None,
        projects: list[str] | None,
        limit: int,
        settings: Reranking,
        explain: bool,
    ) -> SearchResult:
        used, note, query_vector = requested, None, None
        if requested in (SearchMode.SEMANTIC, SearchMode.HYBRID):
            note = self._semantic_unavailable(agent)
            if note is None:
                try:
                    assert self.embeddings is not None
                    query_vector = self.embeddings.embed([query])[0]
                except EmbeddingError as exc:
                    note = f"embedding the query failed: {exc}"
            if note is not None:
                used, note = SearchMode.BM25, f"{requested.value} search fell back to bm25: {note}"
        reranked = used is not SearchMode.ALL and settings.enabled
        fetch = min(limit * settings.overfetch, 10_000) if reranked else limit
        ranked = rank(self._indexes.get(agent), query, used, types=types, projects=projects, limit=fetch,
                      query_vector=query_vector, fusion=self.fusion)
        memories = {m.id: m for m in self._load(agent, [r.id for r in ranked])}
        now = self._clock()
        top = max((r.score for r in ranked), default=0.0) or 1.0
        hits = []
        for r in ranked:
            memory = memories.get(r.id)
            if memory is None:
                continue
            # always: score == fused * recency * usage * confidence
            components = {"lexical": 0.0, "semantic": 0.0, **r.components, "fused": r.score}
            score = r.score
            if reranked:
                # relevance relative to the best candidate, so the factors' bounded ranges mean the same
                # thing in every mode (a cosine of 0.3 and a BM25 of 12 are not comparable)
                components["fused"] = max(r.score, 0.0) / top if top > 0 else 0.0
                factors = settings.factors(memory, now)
                components.update(factors)
                score = components["fused"] * factors["recency"] * factors["usage"] * factors["confidence"]
            else:
                components.update({"recency": 1.0, "usage": 1.0, "confidence": 1.0})
            hits.append(Hit.model_construct(memory=memory, score=score, explain=components if explain else None))
        if reranked:
            hits.sort(key=lambda h: -h.score)
        return SearchResult.model_construct(hits=hits[:limit], mode=used.value, requested_mode=requested.value,
                                            note=note)

    def _load(self, agent: str, ids: Sequence[str]) -> list[Memory]:
        # The index holds every field but the content, kept equal to the store (journal + recovery), so a
        # hit costs one content lookup instead of reading and decoding all of the memory's triples.
        index = self._indexes.get(agent)
        memories = []
        for memory_id, content in zip(ids, self._store.contents(agent, ids)):
            record = index.record(memory_id)
            if record is not None and content is not None:
                memories.append(Memory.model_construct(agent=agent, content=content, **record))
        return memories

    def describe_agents(self) -> list[dict[str, Any]]:
        """The declared agents: name, description, whether memory is enabled, project, and memory count."""
        with self._lock:
            self._check_open()
            return [
                {"name": d.name, "description": d.description, "memory_enabled": d.memory_enabled,
                 "project": d.settings.project,
                 "memories": len(self._indexes.get(d.name)) if d.memory_enabled else 0}
                for d in self.agents.list()
            ]

    def stored_agents(self) -> list[str]:
        """Names of the agents that have memories in the store, declared or not."""
        with self._lock:
            self._check_open()
            return self._store.agents()

    def stats(self, agent: str) -> dict[str, int]:
        """How many memories of each type the agent has (all four keys, always)."""
        with self._lock:
            self._agent(agent)
            return {t.value: n for t, n in self._indexes.get(agent).type_counts().items()}

    def count(self, agent: str) -> int:
        """How many memories the agent has."""
        with self._lock:
            self._agent(agent)
            return len(self._indexes.get(agent))

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
        if task is not None and not isinstance(task, str):
            raise InvalidInputError("task", f"must be a string, not {task.__class__.__name__}")
        with self._lock:
            definition = self._agent(agent)
            settings = definition.settings
            limit = check_limit(limit if limit is not None else settings.recall_limit or DEFAULT_START_LIMIT)
            budget = max_chars if max_chars is not None else settings.recall_max_chars or DEFAULT_START_MAX_CHARS
            project = project if project is not None else settings.project
            projects = [check_project(project), DEFAULT_PROJECT] if project is not None else None
            ids: list[str] = []
            if task is not None and task.strip():  # hybrid falls back to bm25 without embeddings
                result = self._search(agent, task, SearchMode.HYBRID, None, projects, limit, Reranking(), False)
                ids = [h.memory.id for h in result]
            if not ids:  # no task, or nothing related: the most used memories
                ids = recall_ids(self._indexes.get(agent), None, projects=projects, limit=limit)
            shown = fit(self._load(agent, ids), check_limit(budget, "max_chars", 10_000_000))
            if shown:
                self._touch_many(agent, [m.id for m in shown])
            return render_block(shown)

    def agent_end(self, agent: str, output: str, project: str | None = None) -> list[Memory]:
        """Capture memories from marker lines in ``output`` (``LEARNED:``, ``INSIGHT:``, ``PATTERN:``,
        ``CONVENTION:``, ``DECISION:``), then prune with the agent's ``cortex.prune`` settings.

        Content already stored for this agent and project is touched rather than stored again. Returns the
        memories stored or refreshed, in the order of the output. Marker lines whose text is not valid
        content (e.g. over 64 KiB) are skipped and logged.
        """
        if not isinstance(output, str):
            raise InvalidInputError("output", f"must be a string, not {output.__class__.__name__}")
        with self._lock:
            definition = self._agent(agent)
            project = check_project(project if project is not None else definition.settings.project or DEFAULT_PROJECT)
            now = self._clock()
            fresh: list[Memory] = []
            order: list[tuple[str, Memory | None]] = []
            seen: set[str] = set()
            for memory_type, text in capture.extract(output):
                if text in seen:
                    continue
                seen.add(text)
                try:
                    check_content(text)
                except InvalidInputError as exc:
                    log.warning("agent_end(%s): skipped a marker line: %s", agent, exc)
                    continue
                existing = self._store.find_content(agent, text, project)
                if existing:
                    order.append((existing[0], None))
                else:
                    memory = self._new_memory(agent, {"content": text, "type": memory_type, "project": project}, now)
                    fresh.append(memory)
                    order.append((memory.id, memory))
            if fresh:
                self._write_new(agent, fresh)
            touched = {m.id: m for m in self._touch_many(agent, [i for i, m in order if m is None])}
            result = [m if m is not None else touched[i] for i, m in order if m is not None or i in touched]
            settings = definition.settings
            captured = {m.id for m in result}
            doomed = [
                i for i in self.prune_candidates(agent, settings.prune_min_confidence, settings.prune_max_age)
                if i not in captured
            ]
            if doomed:
                self._delete(agent, doomed)
            return result


def _filters(
    type: MemoryType | str | None, project: str | None
) -> tuple[list[MemoryType] | None, list[str] | None]:
    """Validated type and project filters of recall and search (None: no filter)."""
    types = [check_type(type)] if type is not None else None
    projects = [check_project(project)] if project is not None else None
    return types, projects
