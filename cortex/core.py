"""The :class:`Cortex` facade: the one entry point of every surface, and a thin coordinator.

It validates input, checks that the agent is declared with memory enabled, resolves which scope an operation
reads or writes, and calls the engine (recall, search, capture, lifecycle, render) and the repository
(:mod:`cortex.memories`, the only writer). The rules of each concern live in their own module.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any, Literal, TypeVar, overload

from cortex import config, lifecycle, listing, notices, scopes
from cortex.agents import AgentDefinition, AgentRegistry, AgentSettings
from cortex.capture import markers as capture
from cortex.capture import tasks, usage
from cortex.capture.redact import REDACT_STORE_ENV, Redactor
from cortex.embeddings import EmbeddingProvider, make_provider
from cortex.errors import (
    AgentNotFoundError,
    CortexError,
    InvalidInputError,
    MemoryNotFoundError,
    PermissionDeniedError,
    StoreLockedError,
    VersionConflictError,
)
from cortex.lifecycle import Policy
from cortex.provenance import activity as provenance_activity
from cortex.provenance import current as current_activity
from cortex.memories import MemoryRepository
from cortex.model import (
    CaptureReport,
    ImportReport,
    NotesReport,
    Captured,
    IndexStatus,
    Memory,
    MemoryType,
    Page,
    Provenance,
    Pruned,
    Query,
    Scope,
    SearchResult,
    Source,
    utcnow,
)
from cortex.recall import Part, parts_of, recall_ids
from cortex.render import RANKING as BLOCK_RANKING
from cortex.render import compose, fit, general_ids, role_terms, task_text
from cortex.render import render as render_block
from cortex.rerank import NO_RERANKING, Reranking
from cortex.scopes import Member
from cortex.search import Fusion, SearchMode, check_mode
from cortex.search import search as run_search
from cortex.store import Location, open_store
from cortex.store.base import MemoryStore
from cortex.store.oxigraph import OxigraphStore
from cortex.validation import (
    check_agent_name,
    check_confidence,
    check_duration,
    check_limit,
    check_project,
    check_query_text,
    check_scope,
    check_tags,
    check_team_name,
    check_text,
    check_version,
    is_memory_id,
    memory_from_entry,
)
from cortex.validation import query as make_query
from cortex.vocab import DEFAULT_NS, Vocabulary

if TYPE_CHECKING:
    from cortex.sparql import SparqlResult
    from cortex.sparql.workers import QueryWorkers
    from cortex.transfer import Violation
    from cortex.client import RemoteCortex
    from cortex.llm import LLMSettings
    from cortex.consolidation import ConsolidationReport, ConsolidationSettings, ReviewItem, RunInfo, UndoReport

log = logging.getLogger("cortex")
_T = TypeVar("_T")
#: ``Cortex.llm`` not read from the settings yet.
_UNSET_LLM = object()


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
        #: Replaces secrets in what is captured (and, when its ``store`` is on, in explicit writes); from
        #: ``CORTEX_REDACT``, ``CORTEX_REDACT_STORE`` and ``CORTEX_REDACT_PATTERNS`` (docs/capture.md).
        self.redactor = Redactor.from_env()
        #: How ``hybrid`` search fuses the lexical and the semantic ranking.
        self.fusion = fusion if fusion is not None else Fusion()
        self._workers: QueryWorkers | None = None
        self._closed = False
        #: what each agent was shown at its latest start, per session (the "used" signal reads it)
        self._shown = usage.ShownLog(state / "shown.json" if state is not None else None)
        self._state = state
        self._llm: object = _UNSET_LLM
        self._consolidation: object = _UNSET_LLM
        #: one transcript capture at a time (its checkpoint is read, then written after what it stored)
        self._capturing = threading.RLock()
        #: extractions done before the store was opened (:func:`cortex.capture.session.prepare`), by part
        self._prepared: dict[tuple[str, str, int, int], Any] = {}
        self._root: Path | None = None

    @overload
    @classmethod
    def open(cls, path: Location, *, agent_dirs: Iterable[str | os.PathLike[str]] | None = None,
             ns: str = DEFAULT_NS, state_dir: str | os.PathLike[str] | None = None,
             clock: Callable[[], datetime] = utcnow, embeddings: EmbeddingProvider | str | None = "auto",
             fusion: Fusion | None = None, client: Literal[False]) -> "Cortex": ...

    @overload
    @classmethod
    def open(cls, path: Location, *, agent_dirs: Iterable[str | os.PathLike[str]] | None = None,
             ns: str = DEFAULT_NS, state_dir: str | os.PathLike[str] | None = None,
             clock: Callable[[], datetime] = utcnow, embeddings: EmbeddingProvider | str | None = "auto",
             fusion: Fusion | None = None, client: bool = True) -> "Cortex | RemoteCortex": ...

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
        client: bool = True,
    ) -> "Cortex | RemoteCortex":
        """Open (creating if needed) the store at ``path``: a directory for the embedded on-disk store, None
        for an in-memory one (see :func:`cortex.store.open_store`).

        ``state_dir`` is where derived indexes are kept (default: the store directory; a store without one
        rebuilds its indexes when opened). ``agent_dirs`` are the directories whose Markdown definitions are
        loaded; problems in them are logged and kept in ``cx.agents.problems``. ``embeddings`` is a
        provider, a provider name for :func:`cortex.embeddings.make_provider` (``auto``: the local model when
        the ``semantic`` extra is installed; ``local``, ``openai``, ``hash``, ``none``) or None.

        One process owns a store: when a running Cortex server (``cortex serve``, or one a client started)
        owns it, the answer is that server's client, a :class:`~cortex.client.RemoteCortex` with the same
        :class:`~cortex.api.MemoryAPI` (the server's agents, model and clock apply; ``$CORTEX_TOKEN`` or the
        server's local token). ``client=False`` refuses that and always opens the store here. Raises
        :class:`StoreLockedError` when another process holds the store and serves nothing.
        """
        try:
            store = open_store(path, Vocabulary(ns))
        except StoreLockedError:
            owner = _owner_client(path, state_dir) if client else None
            if owner is None:
                raise
            log.info("%s is owned by a running Cortex server: using it", owner.url)
            return owner
        try:
            provider = make_provider(embeddings) if isinstance(embeddings, str) else embeddings
            registry = AgentRegistry()
            if agent_dirs is not None:
                for problem in registry.load(agent_dirs):
                    log.warning("agent definition problem: %s", problem)
            return cls(store, registry, state_dir=state_dir, clock=clock, embeddings=provider, fusion=fusion)
        except BaseException:
            store.close()
            raise

    # -- lifecycle -------------------------------------------------------------------------------

    def close(self, *, flush: bool = True) -> None:
        """Checkpoint indexes, flush (unless ``flush=False``: committed writes survive a crash of the
        process anyway, only power loss needs the ~10 ms fsync) and release the store. Idempotent."""
        with self._memories.lock:
            if self._closed:
                return
            self._closed = True
            if self._workers is not None:
                self._workers.close()
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
    def store_shared(self) -> bool:
        """Whether other processes may write the same store (a remote SPARQL server, docs/scale-out.md)."""
        return self._memories.store.shared

    @property
    def state_dir(self) -> Path | None:
        """Where derived indexes (and a server's tokens and discovery file) are kept, or None."""
        return self._memories.state_dir

    def info(self) -> dict[str, Any]:
        """The store's location and the embedding model (None without one)."""
        return {"store": self._memories.store.location, "shared": self._memories.store.shared,
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

    def _member(self, agent: str) -> Member:
        """The agent as the scope rules see it (declared with memory: raises otherwise)."""
        settings = self._agent(agent).settings
        return Member(agent, settings.teams, settings.lead, tuple(sorted(settings.parents.items())))

    def _delete(self, scope: Scope, memory_ids: Sequence[str], **recorded: Any) -> list[str]:
        """Delete memories; the ones they had superseded are current again (docs/lifecycle.md). ``recorded``
        (action, actor, at, rule) records an automatic deletion's activity in the same update."""
        return self._memories.delete(scope, memory_ids, reinstate=lifecycle.reinstated, **recorded)

    def _warn_prunable(self, memories: Sequence[Memory]) -> None:
        """Tell the caller (:func:`cortex.notices.notice`) which of these memories, just written, the prune at
        their agent's next ``agent_end`` deletes: nothing is deleted without a word."""
        now, doomed, settings = self._clock(), [], {}
        for memory in memories:
            if memory.scope != "agent":
                continue  # agent_end prunes the agent's own memories only
            if memory.agent not in settings:
                definition = self.agents.get(memory.agent)
                settings[memory.agent] = definition.settings if definition is not None else None
            found = settings[memory.agent]
            rule = lifecycle.prune_rule(memory, min_confidence=found.prune_min_confidence,
                                        max_age=found.prune_max_age, now=now) if found is not None else None
            if rule is not None:
                doomed.append((memory, rule))
        if not doomed:
            return
        memory, rule = doomed[0]
        which = (f"memory {memory.id} ({rule})" if len(doomed) == 1
                 else f"{len(doomed)} memories (e.g. {memory.id}: {rule})")
        notices.notice(f"{which} will be deleted by the prune at the next agent_end of agent {memory.agent!r} (every "
                       "Stop/SubagentStop hook): give a higher confidence, or change cortex.prune in the agent's "
                       "definition")

    def _teams(self) -> set[str]:
        """Every team some declared agent with memory belongs to."""
        return {t for d in self.agents.list() if d.memory_enabled
                for t in (*d.settings.teams, *d.settings.parents.values())}

    def _policy(self, agent: str) -> Policy:
        """The agent's time rules: time to live and decay by source."""
        settings = self._agent(agent).settings
        return Policy.for_agent({Source(k): v for k, v in settings.ttl.items()},
                                {Source(k): v for k, v in settings.decay.items()})

    def _read_scopes(self, agent: str, scope: str | None) -> tuple[Scope, ...]:
        """The scopes a read of ``agent`` covers: all it can see, or the one ``scope`` names."""
        return self._member(agent).readable(scope, self._teams())

    def _locate(self, agent: str, memory_id: str) -> tuple[Scope, Memory] | None:
        """The scope and the memory ``memory_id`` names among those ``agent`` can see, or None."""
        if not is_memory_id(memory_id):
            return None
        with self._memories.lock:
            scope = self._memories.locate(self._read_scopes(agent, None), memory_id)
            if scope is None:
                return None
            found = self._memories.load(scope, [memory_id])
            return (scope, found[0]) if found else None

    def _require(self, agent: str, memory_id: str) -> tuple[Scope, Memory]:
        located = self._locate(agent, memory_id)
        if located is None:
            raise MemoryNotFoundError(agent, str(memory_id))
        return located

    # -- writes ----------------------------------------------------------------------------------

    def store(
        self,
        agent: str,
        content: str,
        *,
        type: MemoryType | str = config.DEFAULT_TYPE,
        project: str = config.DEFAULT_PROJECT,
        confidence: float = config.DEFAULT_CONFIDENCE,
        source: Source | str = Source.MANUAL,
        ttl: timedelta | str | None = None,
        tags: Iterable[str] = (),
        metadata: Mapping[str, Any] | None = None,
        scope: str = "agent",
    ) -> Memory:
        """Store one memory and return it.

        ``source`` says where it came from and sets its default time to live (docs/lifecycle.md); ``ttl``
        overrides that (a timedelta, ``"12h"``/``"7d"``, or ``"never"``). ``tags`` are lowercase slugs,
        ``metadata`` a JSON object (at most 8 KiB). ``scope`` is where it goes: ``agent`` (the agent's own),
        ``team:{name}`` (a team the agent is in) or ``swarm`` (leads only).
        """
        entry = {"content": content, "type": type, "project": project, "confidence": confidence, "source": source,
                 "ttl": ttl, "tags": tags, "metadata": metadata, "scope": scope}
        target, memories = self._new_memories(agent, [entry], batch=False)
        self._memories.add(target, memories)
        self._warn_prunable(memories)
        return memories[0]

    def store_many(self, agent: str, entries: Iterable[Mapping[str, Any]]) -> list[Memory]:
        """Store a batch in one atomic write; returns the memories in input order.

        Each entry is a mapping with ``content`` and optionally every field :meth:`store` takes (``type``,
        ``project``, ``confidence``, ``source``, ``ttl``, ``tags``, ``metadata``, ``scope``) and what an import
        keeps: ``usage_count``, ``created_at``, ``last_used_at``, ``expires_at``, ``valid_from``. Every entry is
        validated before anything is written; one bad entry stores nothing. A batch writes one scope. Batches
        over 50,000 memories are written as consecutive atomic chunks of 50,000.
        """
        if isinstance(entries, (str, bytes, Mapping)) or not isinstance(entries, Iterable):
            self._agent(agent)
            raise InvalidInputError("entries", f"must be a list of mappings, not {type(entries).__name__}")
        target, memories = self._new_memories(agent, entries, batch=True)
        if memories:
            self._memories.add(target, memories)
            self._warn_prunable(memories)
        return memories

    def _new_memories(self, agent: str, entries: Iterable[Any], *, batch: bool) -> tuple[Scope, list[Memory]]:
        """The validated memories of ``entries`` and the one scope they go to (errors of a batch name the
        entry)."""
        member = self._member(agent)
        now = self._clock()
        policy, teams = self._policy(agent), self._teams()
        memories: list[Memory] = []
        target = member.own
        redacted: Counter[str] = Counter()
        for i, entry in enumerate(entries):
            try:
                if not isinstance(entry, Mapping):
                    raise InvalidInputError("entry", f"must be a mapping, not {type(entry).__name__}")
                scope = member.writable(entry.get("scope") or "agent", teams)
                if i and scope != target:
                    raise InvalidInputError("scope", f"one batch writes one scope: {target.relative} before, "
                                                     f"{scope.relative} here (split the batch)")
                target = scope
                fields = {k: v for k, v in entry.items() if k != "scope"}
                if self.redactor.store and isinstance(fields.get("content"), str):
                    fields["content"] = self.redactor.scrub(fields["content"], redacted)
                memory = memory_from_entry(agent, fields, now, policy.expires_at, author=agent, scope=scope.relative)
                scopes.check_team_memory_write(member, scope, memory.tags)
                memories.append(memory)
            except (InvalidInputError, PermissionDeniedError) as exc:
                if not batch:
                    raise
                raise _within(exc, f"entries[{i}]") from None
        if redacted:
            notices.notice(f"storing for agent {agent!r} {_redaction_note(redacted)} ({REDACT_STORE_ENV} is on)")
        return target, memories

    def update(
        self,
        agent: str,
        memory_id: str,
        *,
        content: str | None = None,
        type: MemoryType | str | None = None,
        project: str | None = None,
        confidence: float | None = None,
        tags: Iterable[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        expected_version: int | None = None,
    ) -> Memory:
        """Change fields of a memory in place: version + 1, ``updated_at`` = now, the earlier version kept
        (:meth:`history`). Only the fields given change (``tags=[]`` clears the tags, ``metadata={}`` the
        metadata). With ``expected_version``, raises :class:`VersionConflictError` unless the memory is still at
        that version. A shared memory can be updated by its author or a lead of its scope."""
        content = self._explicit_text(agent, content)
        changes = lifecycle.changes(content=content, type=type, project=project, confidence=confidence, tags=tags,
                                    metadata=metadata)
        expected = check_version(expected_version) if expected_version is not None else None
        member = self._member(agent)

        def attempt() -> Memory:
            scope, memory = self._require(agent, memory_id)
            member.may_change(scope, memory, "update")
            if expected is not None and memory.version != expected:
                raise _Refused(VersionConflictError(memory.id, expected, memory.version))
            now = self._clock()
            new = lifecycle.updated(memory, changes, now)
            if "tags" in changes:
                scopes.check_team_memory_write(member, scope, new.tags)
            return self._memories.write(scope, [], [(memory, new, True)], action="update", actor=agent, at=now)[0]

        updated = self._changing(attempt)
        self._warn_prunable([updated])
        return updated

    def _changing(self, attempt: Callable[[], _T]) -> _T:
        """Run ``attempt`` (read a memory, then write what follows from it) under the repository's lock; when the
        store says the memory changed between the read and the write (another process of a shared store got
        there first), read it again and decide again, up to :data:`WRITE_ATTEMPTS` times. So a change applies
        to the memory as it is when it is written, and a refusal (``_Refused``) is decided on a current read."""
        for remaining in reversed(range(WRITE_ATTEMPTS)):
            try:
                with self._memories.lock:
                    return attempt()
            except _Refused as refused:
                raise refused.error from None
            except VersionConflictError:
                if not remaining:
                    raise
        raise AssertionError("unreachable")

    def _explicit_text(self, agent: str, content: str | None) -> str | None:
        """``content`` of an explicit write, its secrets replaced when the redactor's ``store`` is on."""
        if content is None or not self.redactor.store or not isinstance(content, str):
            return content
        done = self.redactor.redact(content)
        if done.counts:
            notices.notice(f"writing for agent {agent!r} {_redaction_note(done.counts)} ({REDACT_STORE_ENV} is on)")
        return done.text

    def history(self, agent: str, memory_id: str) -> list[Memory]:
        """Every version of the memory, oldest first, the current one last (expired or superseded too)."""
        scope, memory = self._require(agent, memory_id)
        return self._memories.history(scope, memory.id)

    def supersede(
        self,
        agent: str,
        old_id: str,
        content: str | None = None,
        *,
        by: str | None = None,
        reason: str | None = None,
        **fields: Any,
    ) -> Memory:
        """Replace memory ``old_id`` by a new one with ``content`` (in the same scope; ``fields`` are those of
        :meth:`store`, type, project and tags default to the old memory's), or by the existing memory ``by``.
        The old memory is kept, valid until the new one became valid and pointing to it (``superseded_by``);
        reads leave it out unless ``include_superseded=True`` or ``as_of`` a moment it was valid. One atomic
        write. Returns the replacing memory."""
        content = self._explicit_text(agent, content)
        rule = lifecycle.supersession(content, by, reason, fields)
        member = self._member(agent)
        new = self._changing(lambda: self._supersede(agent, member, old_id, rule))
        self._warn_prunable([new])
        return new

    def _supersede(self, agent: str, member: Member, old_id: str, rule: lifecycle.Supersession) -> Memory:
        """One attempt of :meth:`supersede`, on the memory as it is now."""
        scope, old = self._require(agent, old_id)
        member.may_change(scope, old, "supersede")
        lifecycle.check_supersedable(old)
        now = self._clock()
        if rule.by is not None:
            located = self._locate(agent, rule.by)
            if located is None:
                raise MemoryNotFoundError(agent, rule.by)
            by_scope, new = located
            lifecycle.check_replacement(old, scope, new, by_scope)
            lifecycle.check_successor(new, now)
            adds = []
        else:
            entry = lifecycle.successor_entry(old, rule)
            new = memory_from_entry(agent, entry, now, self._policy(agent).expires_at, author=agent,
                                    scope=scope.relative)
            if scope.kind == "agent":
                new = new.model_copy(update={"agent": scope.name})
            adds = [new]
        derived = [(new.id, old.id)] if adds or by_scope == scope else []
        self._memories.write(scope, adds, [(old, lifecycle.superseded(old, new, rule.reason), False)], derived,
                             action="supersede", actor=agent, at=now)
        return new

    def validate(self, agent: str, memory_id: str) -> Memory:
        """Confirm a memory is still right: ``validated_at`` = now (its decay clock restarts) and confidence +
        0.05 (at most 1). One atomic write; returns the memory."""
        self._agent(agent)

        def attempt() -> Memory:
            scope, memory = self._require(agent, memory_id)
            now = self._clock()
            return self._memories.write(scope, [], [(memory, lifecycle.validated(memory, now), False)],
                                        action="validate", actor=agent, at=now)[0]

        return self._changing(attempt)

    def inject_learning(
        self,
        lead: str,
        content: str,
        category: str,
        *,
        team: str | None = None,
        to: str | None = None,
        confidence: float = 0.9,
        project: str = config.DEFAULT_PROJECT,
        tags: Iterable[str] = (),
    ) -> Memory:
        """A lead teaches others: store ``content`` as a learning of ``category`` (mistake-pattern,
        best-practice, codebase-knowledge or preference, kept as a tag) with source ``injected``, in the swarm
        (default), one of the lead's teams (``team=``) or one worker's own memory (``to=``). Only a lead may."""
        member = self._member(lead)
        kind = scopes.check_category(category)
        target = scopes.injection_target(member, team=team, to=to, known_teams=self._teams(),
                                         declared=[d.name for d in self.agents.list() if d.memory_enabled])
        entry = {"content": content, "type": scopes.CATEGORY_TYPES[kind], "project": project,
                 "confidence": confidence, "source": Source.INJECTED, "tags": [kind, *check_tags(tags)]}
        owner = target.name if target.kind == "agent" else lead
        memory = memory_from_entry(owner, entry, self._clock(), self._policy(lead).expires_at, author=lead,
                                   scope="agent" if target.kind == "agent" else target.relative)
        self._memories.add(target, [memory])
        self._warn_prunable([memory])
        return memory

    def touch(self, agent: str, memory_id: str) -> Memory:
        """Record a use: usageCount + 1 and lastUsedAt = now, in one atomic update. Returns the memory."""
        scopes = self._read_scopes(agent, None)
        with self._memories.lock:
            scope = self._memories.locate(scopes, memory_id) if is_memory_id(memory_id) else None
            touched = self._memories.touch(scope, [memory_id], self._clock()) if scope is not None else []
            if not touched:
                raise MemoryNotFoundError(agent, str(memory_id))
            return touched[0]

    def forget(self, agent: str, memory_id: str) -> bool:
        """Remove every triple of the memory (and its earlier versions). False when there was no such memory.
        A shared memory can be forgotten by its author or a lead of its scope."""
        member = self._member(agent)

        def attempt() -> bool:
            located = self._locate(agent, memory_id)
            if located is None:
                return False
            scope, memory = located
            member.may_change(scope, memory, "forget")
            return bool(self._delete(scope, [memory.id]))

        return self._changing(attempt)

    def purge_expired(self, agent: str | None = None) -> int:
        """Delete the memories whose time to live has run out: the agent's own (every scope of the store,
        shared ones included, when ``agent`` is None). Returns how many."""
        if agent is not None:
            self._agent(agent)
        self._check_open()
        with self._memories.lock:
            targets = [self._scope(agent)] if agent is not None else self._memories.scopes()
            now = self._clock()
            return sum(len(self._delete(s, lifecycle.expired(self._memories.index(s), now)))
                       for s in targets)

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
        """The ids ``prune`` selects among the agent's own memories (and deletes them when ``delete``), in one
        atomic update."""
        min_confidence = check_confidence(min_confidence, "min_confidence")
        age = check_duration(max_age) if max_age is not None else None
        self._agent(agent)
        scope = self._scope(agent)
        with self._memories.lock:
            ids = lifecycle.prune_candidates(self._memories.index(scope), min_confidence=min_confidence,
                                             max_age=age, now=self._clock())
            if delete and ids:
                self._delete(scope, ids)
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
        ``{"memories": n, "embedded": k}``. Works on agents that are stored but not declared too; ``team:NAME``
        and ``swarm`` name a shared scope."""
        self._check_open()
        return self._memories.reindex(_named_scope(agent), force=force, progress=progress)

    def embed_missing(self, agent: str | None = None) -> int:
        """Embed the memories that have no vector of the current model (every scope of the store when ``agent``
        is None); returns how many. A server runs this once its model has loaded in the background."""
        self._check_open()
        scopes = [_named_scope(agent)] if agent is not None else self._memories.scopes()
        return sum(self._memories.embed_missing(scope) for scope in scopes)

    def stored_scopes(self) -> list[str]:
        """Every scope with memories in the store, as :meth:`reindex` takes them: agent names, ``team:NAME``,
        ``swarm``."""
        self._check_open()
        return [s.name if s.kind == "agent" else s.key for s in self._memories.scopes()]

    # -- reads -----------------------------------------------------------------------------------

    def get(self, agent: str, memory_id: str) -> Memory | None:
        """The memory (from any scope the agent reads; expired or superseded too), or None for an unknown or
        malformed id."""
        self._agent(agent)
        located = self._locate(agent, memory_id)
        return located[1] if located is not None else None

    def provenance(self, agent: str, memory_id: str) -> Provenance:
        """Where a memory comes from (PROV-O): the agent it is attributed to, the activity that generated it
        (surface, hook event, session, tool, when, associated agent), the memories it was derived from, what
        superseded it and its earlier versions. Any memory the agent reads; :class:`MemoryNotFoundError`
        otherwise."""
        self._check_open()
        self._agent(agent)
        with self._memories.lock:
            scope, memory = self._require(agent, memory_id)
            return self._memories.provenance(scope, memory)

    def _query(self, agent: str, text: str | None, *, text_required: bool = False, **given: Any) -> Query:
        """A validated query of ``agent`` over the scopes it reads (or the one ``scope`` names), judged now."""
        scope = given.pop("scope", None)
        q = make_query(agent, text, text_required=text_required, now=self._clock(), **given)
        return replace(q, scopes=self._read_scopes(agent, scope))

    def _parts(self, scopes: Sequence[Scope]) -> list[Part]:
        return parts_of(self._memories.index, scopes)

    def recall(
        self,
        agent: str,
        query: str | None = None,
        *,
        type: MemoryType | str | None = None,
        project: str | None = None,
        limit: int = config.DEFAULT_LIMIT,
        tags: Iterable[str] | None = None,
        scope: str | None = None,
        source: Source | str | None = None,
        include_expired: bool = False,
        include_superseded: bool = False,
        as_of: datetime | str | None = None,
    ) -> list[Memory]:
        """AND-token recall (see :func:`cortex.recall.recall_scored`) over every scope the agent reads (its own,
        its teams', the swarm; or the one ``scope`` names), filtered inside the indexes before the limit: by
        type, project, tags (all of them), source, and time (current memories unless ``include_expired`` /
        ``include_superseded``; ``as_of``: what was recorded and valid then)."""
        q = self._query(agent, query, type=type, project=project, limit=limit, tags=tags, scope=scope,
                        source=source, include_expired=include_expired, include_superseded=include_superseded,
                        as_of=as_of)
        with self._memories.lock:
            return self._as_of(self._memories.load_many(recall_ids(self._parts(q.scopes), q)), q)

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
        tags: Iterable[str] | None = None,
        scope: str | None = None,
        source: Source | str | None = None,
        include_expired: bool = False,
        include_superseded: bool = False,
        as_of: datetime | str | None = None,
    ) -> SearchResult:
        """Ranked search: ``all`` (AND-token), ``bm25``, ``semantic`` or ``hybrid`` (see
        :mod:`cortex.search`), over the scopes and with the filters of :meth:`recall`. ``semantic`` and
        ``hybrid`` fall back to ``bm25`` when they cannot run (no provider, vectors of another model, provider
        failure) and say why in ``result.note``.

        Ranked modes over-fetch candidates and rerank them by recency, use, confidence and decay by source (see
        :mod:`cortex.rerank`); ``rerank=False`` or a :class:`Reranking` changes that. ``all`` keeps the
        contract's order. With ``explain`` each hit carries its score components.
        """
        q = self._query(agent, query, text_required=True, type=type, project=project, limit=limit, tags=tags,
                        scope=scope, source=source, include_expired=include_expired,
                        include_superseded=include_superseded, as_of=as_of)
        requested = check_mode(mode)
        settings = rerank if isinstance(rerank, Reranking) else (Reranking() if rerank else NO_RERANKING)
        result = run_search(self._memories, q.scopes, q, requested, reranking=settings, explain=explain,
                            fusion=self.fusion, now=self._clock(), policy=self._policy(agent))
        if q.filters.as_of is not None:
            then = self._as_of([h.memory for h in result.hits], q)
            result.hits = [h.model_copy(update={"memory": m}) for h, m in zip(result.hits, then)]
        return result

    def _as_of(self, memories: list[Memory], q: Query) -> list[Memory]:
        """With ``as_of``, each memory as it was then (the version current at that moment; matching was on
        the current content)."""
        moment = q.filters.as_of
        if moment is None:
            return memories
        scopes = {s.relative: s for s in q.scopes}
        return [lifecycle.version_at(self._memories.history(scopes[m.scope], m.id) or [m], moment)
                if m.version > 1 and (m.updated_at or m.created_at) > moment else m for m in memories]

    def list_memories(
        self,
        agent: str,
        *,
        scope: str | None = None,
        type: MemoryType | str | None = None,
        project: str | None = None,
        tags: Iterable[str] | None = None,
        source: Source | str | None = None,
        include_expired: bool = False,
        include_superseded: bool = False,
        cursor: str | None = None,
        limit: int = 50,
    ) -> Page:
        """Page through every memory the agent can see (or those of ``scope``), newest first, filtered as
        :meth:`recall` is. ``page.next_cursor`` continues the listing (None after the last page)."""
        q = self._query(agent, None, type=type, project=project, limit=limit, tags=tags, scope=scope, source=source,
                        include_expired=include_expired, include_superseded=include_superseded)
        with self._memories.lock:
            wanted, next_cursor = listing.page(self._parts(q.scopes), q.filters, cursor, q.limit)
            return Page.model_construct(items=self._memories.load_many(wanted), next_cursor=next_cursor)

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
        """The declared agents: name, description, whether memory is enabled, project, memory count, teams and
        whether it leads; then each broken definition file, by the agent it names (else its file name), with
        ``problems`` (``field: message``; empty for a sound one): it declares nothing until it is fixed."""
        self._check_open()
        declared = [
            {"name": d.name, "description": d.description, "memory_enabled": d.memory_enabled,
             "project": d.settings.project, "teams": list(d.settings.teams), "lead": d.settings.lead,
             "temporary_teams": dict(d.settings.parents),
             "memories": len(self._memories.index(self._scope(d.name))) if d.memory_enabled else 0, "problems": []}
            for d in self.agents.list()
        ]
        broken: list[dict[str, Any]] = [
            {"name": next((p.agent for p in problems if p.agent), path.stem), "description": "",
             "memory_enabled": False, "project": None, "teams": [], "lead": False, "temporary_teams": {},
             "memories": 0, "problems": [f"{path.name}: {p.field}: {p.message}" for p in problems]}
            for path, problems in sorted(self.agents.broken.items())
        ]
        return declared + broken

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

    def sparql(
        self,
        query: str,
        substitutions: Mapping[str, Any] | None = None,
        *,
        agent: str | None = None,
        limit: int | None = None,
        timeout: float | None = None,
    ) -> SparqlResult:
        """Run a read-only SPARQL query (docs/sparql.md). Without ``agent`` it sees the whole store (every
        named graph, and their union as the default graph); with ``agent`` exactly the graphs that agent reads
        (its own, its teams', the swarm), whatever ``FROM`` or ``GRAPH`` the query names. ``substitutions``
        binds variables (by name) to pyoxigraph terms. At most ``limit`` rows (``result.truncated`` says when
        there were more); ``timeout`` seconds, else :class:`QueryTimeoutError`. Updates and ``SERVICE`` are
        refused (:class:`InvalidInputError`, field ``query``)."""
        from cortex import sparql  # here: the hooks and most commands never run a query

        self._check_open()
        rows = check_limit(limit, "limit", 10**12) if limit is not None else None
        store = self._memories.store
        bindings = sparql.check_substitutions(substitutions)
        graphs = None
        if agent is not None:
            readable = self._read_scopes(agent, None)
            if store.shared:  # a server's dataset names graphs that exist (rdflib's engine fails on others)
                existing = set(self._memories.scopes())
                readable = tuple(s for s in readable if s in existing) or readable[:1]
            graphs = [store.vocab.graph(s) for s in readable]
        if graphs is not None and not store.confines_queries():
            raise PermissionDeniedError(f"the SPARQL server of this store ({store.location}) reads every graph "
                                        f"whatever dataset a query names, so an agent's query could read other "
                                        f"agents' memories: agents' queries are refused (an admin's run)", "query")
        # the engine runs exactly the text judged here: the agent's graphs written into it, and on a store
        # without native substitutions the bindings too
        prepared = sparql.prepare(query, dataset=[g.value for g in graphs] if graphs is not None else None,
                                  bindings=bindings, inline=not store.substitutes)
        dataset = sparql.graphs_clause(graphs) if graphs is not None else {"use_default_graph_as_union": True}
        started = time.monotonic()
        workers = self._query_workers()
        if workers is not None:  # an on-disk store: a process of its own, killed at the time-out
            if timeout is not None:
                sparql.check_timeout(timeout)
            try:
                return workers.run(prepared.text, default_graph=[g.value for g in graphs] if graphs else None,
                                   named_graphs=[g.value for g in graphs] if graphs else None,
                                   union=graphs is None, substitutions=bindings, limit=rows or 2**62,
                                   timeout=timeout)
            except InvalidInputError as exc:
                raise InvalidInputError(exc.field, sparql.engine_error(prepared, exc.reason)) from None

        def work() -> SparqlResult:
            try:
                raw = store.query(prepared.text, bindings if store.substitutes else None, **dataset)
            except InvalidInputError as exc:
                raise InvalidInputError(exc.field, sparql.engine_error(prepared, exc.reason)) from None
            return sparql.collect(raw, rows or 2**62, timeout, started)

        return sparql.run(sparql.guarded(work), timeout)

    def _query_workers(self) -> QueryWorkers | None:
        """The SPARQL worker processes of an embedded on-disk store (started at its first query), else None."""
        from cortex.sparql.workers import QueryWorkers

        store = self._memories.store
        path = store.local_path
        if path is None or not isinstance(store, OxigraphStore):
            return None
        with self._memories.lock:
            if self._workers is None:
                self._workers = QueryWorkers(path / "cortex-sparql", lambda: store.writes, store.checkpoint)
            return self._workers

    def export(self, out: IO[bytes], *, agent: str | None = None, team: str | None = None, all: bool = False,
               format: str = "trig", progress: Callable[[str, int, int | None], None] | None = None) -> int:
        """Write the graph of one agent's own memories (``agent``), of a team (``team``) or of every scope
        (``all``) to ``out`` as RDF (``trig``, ``nquads``, ``turtle`` for one scope, ``jsonld``), streaming,
        exactly as stored (versions, supersession, tags, metadata, authors; not the change log). Returns how
        many quads were written. ``import_rdf`` of the file into an empty store gives the same dataset.
        ``progress("export", memories written, memories in the scopes)`` hears how far it is."""
        from cortex import transfer

        self._check_open()
        fmt = transfer.format_of(format)
        targets = self._export_scopes(agent, team, all)
        quads = (q for scope in targets for q in self._memories.export(scope))
        total = sum(len(self._memories.index(scope)) for scope in targets) if progress is not None else None
        return transfer.write(quads, out, fmt, self._memories.store.vocab, graphs=len(targets),
                              progress=progress, total=total)

    def _export_scopes(self, agent: str | None, team: str | None, all: bool) -> list[Scope]:
        if sum((agent is not None, team is not None, bool(all))) != 1:
            raise InvalidInputError("scope", "export one agent (agent=), one team (team=) or everything (all=True)")
        if all:
            return self._memories.scopes()
        return [Scope.agent(check_agent_name(agent)) if agent is not None
                else Scope.team(check_team_name(team))]

    def validate_store(self, *, agent: str | None = None, team: str | None = None,
                       all: bool = True) -> list[Violation]:
        """Check one agent's, one team's or (default) every scope's graph against the SHACL shapes of what
        Cortex writes (``cortex/shapes.ttl``); returns the violations (none: the store conforms)."""
        from cortex import shapes, transfer

        self._check_open()
        targets = self._export_scopes(agent, team, all and agent is None and team is None)
        if agent is not None or team is not None:
            self._known_scope(targets[0])
        vocab = self._memories.store.vocab
        with self._memories.lock:
            quads = [q for scope in targets for q in self._memories.export(scope)]
        violations = shapes.validate(quads, vocab)
        try:  # and every memory readable as an import would read it (bounds included): what reads skip
            transfer.check(transfer.group(quads, vocab), vocab)
        except transfer.InvalidDataError as exc:
            seen = {(v.focus, v.path) for v in violations}
            violations += [v for v in exc.violations if (v.focus, v.path) not in seen]
        return violations

    def _known_scope(self, scope: Scope) -> None:
        """Refuse a scope neither declared (an agent, or a team some agent is in) nor holding data."""
        declared = {d.name for d in self.agents.list()} if scope.kind == "agent" else self._teams()
        if scope.name not in declared and scope not in self._memories.scopes():
            if scope.kind == "agent":
                raise AgentNotFoundError(scope.name, self.agents.dirs)
            raise InvalidInputError("team", f"no agent is in team {scope.name!r} and the store holds no memory of it")

    def import_rdf(self, source: str | os.PathLike[str] | bytes | IO[bytes], *, format: str | None = None,
                   agent: str | None = None, team: str | None = None,
                   progress: Callable[[str, int, int | None], None] | None = None) -> dict[str, int]:
        """Import memories exported by :meth:`export` (or written to the same vocabulary): the format from
        ``format`` or the file's extension; a Turtle file (one graph) goes to ``agent``'s or ``team``'s scope.
        The whole file is checked first, against the SHACL shapes too (:class:`~cortex.transfer.InvalidDataError`
        names each focus node, property and problem, and nothing is written), then written in one atomic bulk
        load and indexed. ``progress(stage, done, total)`` hears how far it is. Returns the memories imported
        per scope (``agent:NAME``, ``team:NAME``, ``swarm``)."""
        from cortex import shapes, transfer

        self._check_open()
        name = os.fspath(source) if isinstance(source, (str, os.PathLike)) else getattr(source, "name", None)
        fmt = transfer.format_of(format, name if isinstance(name, str) else None)
        graph = None if agent is None and team is None else self._export_scopes(agent, team, False)[0]
        data = _import_bytes(source)
        vocab = self._memories.store.vocab
        native = shapes.native(vocab)  # the shapes checked in the judging pass; else pyshacl afterwards
        with self._memories.lock:
            parsed = transfer.parse(data, fmt, vocab, graph=graph, progress=progress)
            transfer.fold_uses(parsed, vocab)
            # the store's other scopes (the file's own are existing()'s): their indexes loaded here, before the
            # store takes its write lock for the load that calls check()
            held = [(s, self._memories.index(s)) for s in self._memories.scopes() if s not in parsed.quads]

            def check() -> dict[Scope, list[Memory]]:
                judged = transfer.check(parsed, vocab, existing=self._memories.index,
                                        shapes=native.check if native is not None else None, progress=progress,
                                        elsewhere=lambda i: next((s for s, index in held if i in index), None))
                if native is None:
                    violations = shapes.validate((q for quads in parsed.quads.values() for q in quads), vocab)
                    if violations:
                        raise transfer.InvalidDataError(violations)
                return judged

            if parsed.problems:
                check()  # raises, naming these and whatever else is wrong
            imported = self._memories.import_quads(
                parsed.quads, check, (data, transfer.FORMATS[fmt]) if parsed.verbatim and isinstance(data, bytes)
                else None, progress=progress)
        return {scope.key: n for scope, n in imported.items()}

    # -- other memory systems --------------------------------------------------------------------

    def import_from(self, system: str, path: str | os.PathLike[str] | bytes, *, agent: str, dry_run: bool = False,
                    progress: Callable[[str, int, int | None], None] | None = None,
                    name: str | None = None) -> ImportReport:
        """Import another memory system's files into ``agent``'s own memory (docs/capture.md, "Importers"):
        ``beads`` (a knowledge log, or its directory: the archive then the log), ``mem0`` (get_all's JSON),
        ``mcp-memory`` (the MCP memory server's memory.jsonl: observations as memories about their entity, relations
        as triples between entity nodes), ``claude`` (CLAUDE.md sections, or Claude Code's memory directory).
        ``path``: a file, a directory, or a file's bytes (``name``: its file name). Each memory gets source
        ``import``, its tags and the system's, its origin in metadata and a PROV-O activity of channel
        ``import:<system>`` naming the file; its secrets are redacted. Idempotent: an item whose key is stored is
        skipped, a newer version supersedes it. Each file is checked whole, then written in one atomic write (a bad
        item is reported as failed, the rest stored). With ``dry_run`` nothing is written and the report says what
        would be. ``progress("import", done, total)`` hears how far it is."""
        from cortex.importers import common

        definition = self._agent(agent)
        files = common.documents(system, path, name)
        scope = self._scope(agent)
        with self._capturing, provenance_activity(channel=f"import:{system}"):
            run = common.Run(system, agent, scope=scope, vocab=self._memories.store.vocab, scrub=self.redactor.scrub,
                             now=self._clock(), expiry=self._policy(agent).expires_at,
                             project=definition.settings.project or config.DEFAULT_PROJECT, dry_run=dry_run,
                             progress=progress)
            read = run.read(files)
            run.remember(self._listed(agent, source=Source.IMPORT, include_expired=True))
            if any(parsed.entities or parsed.relations for _, parsed in read):
                with self._memories.lock:
                    rows = self._memories.store.query(run.graph_query())
                    run.remember_graph([(r["s"].value, r["p"].value, r["o"].value) for r in rows])
            for document, parsed in read:
                batch = run.plan(document, parsed)
                if dry_run or batch.empty:
                    continue
                with provenance_activity(file=document.name):
                    self._memories.add(scope, batch.memories, batch.triples)
                    self._warn_prunable(batch.memories)
                    for old in batch.supersessions:  # the lifecycle's rules, one atomic write each
                        try:
                            run.superseded(old, self.supersede(agent, old.old, old.content, reason=old.reason,
                                                               **old.fields))
                        except CortexError as exc:
                            run.failed_write(old, str(exc))
            run.finished()
        if run.report.redacted and not dry_run:
            notices.notice(f"import of {', '.join(run.report.files)} for agent {agent!r} "
                           f"{_redaction_note(run.report.redacted)} before storing it")
        return run.report

    def export_beads(self, directory: str | os.PathLike[str], *, agent: str) -> dict[str, Any]:
        """Write ``agent``'s current memories as a Beads knowledge log, ``directory/knowledge.jsonl`` (docs/capture.md,
        "Beads"): those imported from Beads as they were read, the others with the plugin's keys; merged with the
        knowledge files already there (same key: the newest ``ts`` wins), more than 1,000 lines rotating the oldest
        500 to ``knowledge.archive.jsonl``. Returns the counts and the files written."""
        from cortex.importers import beads

        return beads.write(directory, self.beads_lines(agent))

    def beads_lines(self, agent: str) -> list[dict[str, Any]]:
        """The Beads knowledge lines of ``agent``'s current memories, oldest first (what :meth:`export_beads`
        writes, before the merge and rotation)."""
        from cortex.importers import beads

        self._agent(agent)
        return beads.lines_of(self._listed(agent))

    def _listed(self, agent: str, **filters: Any) -> list[Memory]:
        """Every memory of ``agent``'s own scope that passes ``filters`` (those of :meth:`list_memories`)."""
        out: list[Memory] = []
        cursor = None
        while True:
            page = self.list_memories(agent, scope="agent", cursor=cursor, limit=config.MAX_LIMIT, **filters)
            out.extend(page.items)
            cursor = page.next_cursor
            if cursor is None:
                return out

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
        *,
        tags: Iterable[str] | None = None,
        scope: str | None = None,
        touch: bool = True,
    ) -> str:
        """The block to inject when ``agent`` starts on ``task``; touches every memory it renders (unless
        ``touch`` is false: the same session's block shown again).

        Considers the current memories of every scope the agent reads (or of ``scope``; shared ones are marked
        with their scope), of ``project`` (default: the agent's ``cortex.project``, else all projects) and of
        ``global``, with all ``tags``. ``limit`` and ``max_chars`` default to the agent's ``cortex.recall``
        settings, else 5 memories and 8000 characters. What is shown is ranked without usage or last use, so
        being shown never lifts a memory (:mod:`cortex.render`); the same content is one line.
        """
        if task is not None:
            task = check_query_text(task, "task")
        definition = self._agent(agent)
        settings = definition.settings
        limit = check_limit(limit if limit is not None else settings.recall_limit or config.DEFAULT_START_LIMIT)
        budget = check_limit(max_chars if max_chars is not None else
                             settings.recall_max_chars or config.DEFAULT_START_MAX_CHARS, "max_chars", 10_000_000)
        project = project if project is not None else settings.project
        q = self._query(agent, None, limit=limit, tags=tags, scope=scope)
        if project is not None:
            q = replace(q, filters=replace(q.filters, projects=frozenset([check_project(project),
                                                                           config.DEFAULT_PROJECT])))
        hits: list[Memory] = []
        text = task_text(task, role_terms(definition.name, definition.description)) if task else ""
        if text.strip():  # hybrid falls back to bm25 without embeddings
            result = run_search(self._memories, q.scopes, replace(q, text=text, limit=2 * limit), SearchMode.HYBRID,
                                reranking=BLOCK_RANKING, explain=False, fusion=self.fusion, now=self._clock(),
                                policy=self._policy(agent))
            hits = [h.memory for h in result]
        with self._memories.lock:
            # twice the limit: room for what the same content repeated takes out
            general = self._memories.load_many(general_ids(self._parts(q.scopes), q.filters, 2 * limit))
            shown = fit(compose(hits, general, limit), budget)
            grouped = _by_scope(shown, q.scopes)
            if touch:
                now = self._clock()
                for scope_, ids in grouped.items():
                    self._memories.touch(scope_, ids, now)
            self._shown.record(agent, current_activity().session,
                               [(scope_.key, i) for scope_, ids in grouped.items() for i in ids])
            return render_block(shown)

    def agent_end(self, agent: str, output: str, project: str | None = None) -> Captured:
        """Capture memories from marker lines in ``output`` (``LEARNED:``, ``INSIGHT:``, ``PATTERN:``,
        ``CONVENTION:``, ``DECISION:``; source ``agent_end``) and ``SUPERSEDES <id>: text`` lines (the memory
        ``<id>`` is superseded by ``text``), then prune with the agent's ``cortex.prune`` settings.

        Content already stored for this agent and project is touched rather than stored again. Returns the
        memories stored or refreshed, in the order of the output, then those that superseded others. Lines
        whose text is not valid content (e.g. over 64 KiB), or that name a memory the agent cannot supersede,
        are skipped and logged.
        """
        output = check_text(output, "output")
        definition = self._agent(agent)
        settings = definition.settings
        project = check_project(project if project is not None else settings.project or config.DEFAULT_PROJECT)
        scope = self._scope(agent)
        redacted: Counter[str] = Counter()
        with self._memories.lock, provenance_activity(channel=current_activity().channel or "marker"):
            now = self._clock()
            result = capture.capture(self._memories, scope, output, project, now, self._policy(agent).expires_at,
                                     self.redactor, redacted)
            for old_id, raw in capture.supersessions(output):
                try:
                    result.append(self.supersede(agent, old_id, self.redactor.scrub(raw, redacted),
                                                 source=Source.AGENT_END))
                except CortexError as exc:
                    log.warning("%s: skipped SUPERSEDES %s: %s", scope, old_id, exc)
            captured = {m.id for m in result}
            doomed = [
                i for i in lifecycle.prune_candidates(self._memories.index(scope),
                                                      min_confidence=settings.prune_min_confidence,
                                                      max_age=settings.prune_max_age, now=now)
                if i not in captured
            ]
            if redacted:
                notices.notice(f"agent_end of agent {agent!r} {_redaction_note(redacted)} before storing what it "
                               "captured")
            self._record_use(agent, output, captured)
            return Captured(result, self._prune_at_end(agent, scope, doomed, settings, now), dict(redacted))

    def record_use(self, agent: str, output: str, *, session: str | None = None) -> list[Memory]:
        """The "used" signal: which of the memories ``agent`` was shown at its latest start (in ``session``,
        default: the current activity's) its ``output`` (text and tool calls, after the start) drew on, by
        citing the memory's id, repeating it, or applying its distinctive terms (:mod:`cortex.capture.usage`).
        Each gets ``usedCount + 1``, which ranking prefers to having been shown. ``agent_end`` does this with
        its output; hooks call it with what the session wrote. Returns the memories marked."""
        output = check_text(output, "output")
        self._agent(agent)
        return self._record_use(agent, output, set(), session=session)

    def _record_use(self, agent: str, output: str, exclude: set[str], *,
                    session: str | None = None) -> list[Memory]:
        shown = self._shown.shown(agent, session if session is not None else current_activity().session)
        if not shown or not output:
            return []
        by_key = {s.key: s for s in self._read_scopes(agent, None)}
        marked: list[Memory] = []
        with self._memories.lock:
            pairs = [(by_key[k], i) for k, i in shown if k in by_key and i not in exclude]
            contents = {(s.key, m.id): m.content for s, m in
                        ((s, m) for s, i in pairs for m in self._memories.load(s, [i]))}
            hits = {i for i, _ in usage.drawn_on([(i, contents[(s.key, i)]) for s, i in pairs
                                                  if (s.key, i) in contents], output)}
            for scope_ in dict.fromkeys(s for s, i in pairs if i in hits):
                ids = [i for s, i in pairs if s == scope_ and i in hits]
                marked.extend(self._changing(lambda: self._memories.mark_used(scope_, ids)))
            if hits:
                # used once per start: a later Stop of the same session does not count the same use again
                self._shown.record(agent, session if session is not None else current_activity().session,
                                   [(k, i) for k, i in shown if i not in hits])
        return marked

    @property
    def llm(self) -> "LLMSettings | None":
        """The language model transcript capture extracts with (``CORTEX_LLM_URL``... or the ``[llm]`` table of
        ``.cortex/config.toml``; docs/capture.md); None: marker lines only. Assignable."""
        if self._llm is _UNSET_LLM:
            from cortex.llm import llm_settings

            self._llm = llm_settings(project_root=config.find_project_root())
        return self._llm  # type: ignore[return-value]

    @llm.setter
    def llm(self, settings: "LLMSettings | None") -> None:
        self._llm = settings

    def capture_transcript(self, agent: str, path: str | os.PathLike[str], *, format: str | None = None,
                           project: str | None = None, markers: bool = True, summary: bool = True,
                           tasks: bool = True) -> CaptureReport:
        """Capture what a session transcript holds for ``agent``, from where the last capture of this
        transcript for this agent stopped (so a second run stores nothing new): its marker lines (as at agent
        end, with ``markers``), and with a language model (:attr:`llm`) at most N learnings and (``summary``) a
        ``session_summary`` memory, both linked to the session in PROV-O; the outcomes of the subagent calls it
        shows, as ``task_completion`` memories of those agents (``tasks``); and the "used" signal of what its
        output drew on. Formats: Claude Code JSONL (a main transcript's subagent lines are left to the
        subagents), Codex CLI session files, a JSON list of messages, plain text (``format`` forces one).

        Captured text is redacted, and learnings pass the quality gate (a duplicate confirms the memory it
        repeats). A malformed line is reported in ``problems``, the rest read. A model that fails leaves its
        part ``pending`` (not checkpointed: the next run retries it); without a model, ``note`` says so."""
        from cortex.capture import session as captured
        from cortex.capture.checkpoints import Checkpoints
        from cortex.capture.transcripts import read

        definition = self._agent(agent)
        project = check_project(project if project is not None else definition.settings.project
                                or config.DEFAULT_PROJECT)
        if not isinstance(path, (str, os.PathLike)):
            raise InvalidInputError("transcript", f"must be a path, not {type(path).__name__}")
        real = os.path.realpath(os.fspath(path))
        checkpoints = Checkpoints(self._state / "capture.json" if self._state is not None else None)
        with self._capturing:
            offsets = checkpoints.get(agent, real)
            settings = self.llm
            new = read(real, offsets["markers"] if markers else offsets["llm"], format=format)
            # the model's part has its own checkpoint: behind the markers' after a failed call, ahead of it after a
            # capture that left the markers to the hooks
            behind = read(real, offsets["llm"], format=format) \
                if settings is not None and markers and offsets["llm"] != offsets["markers"] else new
            report = CaptureReport(agent=agent, transcript=real, format=new.format,
                                   session=new.session_id or behind.session_id or checkpoints.session(agent, real),
                                   read_from=offsets["llm"] if behind is not new else
                                   offsets["markers"] if markers else offsets["llm"],
                                   read_to=new.end, problems=list(new.problems))
            session = report.session
            name = os.path.basename(real)
            with provenance_activity(session=session, file=name) if session else provenance_activity(file=name):
                redacted: Counter[str] = Counter()
                mine = captured.own_messages(new.messages)
                report.messages = len(mine)
                if markers:
                    text = captured.marker_text(mine)
                    if text:
                        began = self._clock()
                        with provenance_activity(channel="transcript", part=f"bytes {report.read_from}-{new.end}"):
                            done = self.agent_end(agent, text, project)
                        # a line stored before (by a hook, say) is refreshed: found again, not stored
                        report.stored.extend(m for m in done if m.created_at >= began)
                        report.confirmed.extend(m.id for m in done if m.created_at < began)
                        redacted.update(done.redacted)
                    checkpoints.set(agent, real, markers=new.end, session=session)
                if mine:
                    report.used = [m.id for m in self.record_use(agent, captured.output_text(mine), session=session)]
                if tasks:
                    with provenance_activity(channel="task"):
                        report.tasks = self._record_outcomes(new.subagent_tasks)
                if settings is None:
                    # the model's checkpoint stays: a model configured later extracts what this run could not
                    report.note = ("no language model configured (CORTEX_LLM_URL): marker lines only; "
                                   "docs/capture.md says how to set one up")
                else:
                    prepared = self._prepared.pop((agent, real, offsets["llm"], behind.end), None)
                    with provenance_activity(channel="llm", model=settings.model,
                                             part=f"bytes {offsets['llm']}-{behind.end}"):
                        self._extract(agent, captured.own_messages(behind.messages), settings, project, summary,
                                      session, real, report, redacted, prepared)
                    if not report.pending:
                        checkpoints.set(agent, real, llm=behind.end, session=session)
                report.redacted = dict(redacted)
                if redacted:
                    notices.notice(f"capture of {os.path.basename(real)!r} for agent {agent!r} "
                                   f"{_redaction_note(redacted)} before storing it")
        return report

    def adopt_extraction(self, key: tuple[str, str, int, int], extraction: Any) -> None:
        """Use ``extraction`` (from :func:`cortex.capture.session.prepare`) when a capture reads exactly the part
        ``key`` names, instead of asking the model again."""
        self._prepared[key] = extraction

    def _extract(self, agent: str, mine: Sequence[Any], settings: "LLMSettings",
                 project: str, summary: bool, session: str | None, transcript: str, report: CaptureReport,
                 redacted: Counter[str], prepared: Any = None) -> None:
        """The model's part of a capture: learnings through redaction and the quality gate, and the summary."""
        from cortex.capture import session as captured
        from cortex.capture.gate import Gate, meaning

        report.llm = True
        got = prepared if prepared is not None else captured.extract(mine, settings, summary=summary)
        report.problems.extend(got.problems)
        report.pending = got.pending
        meta = captured.metadata(session, transcript, settings.model)
        candidates = [dict(item, content=self.redactor.scrub(item["content"], redacted)) for item in got.learnings]
        existing: dict[str, str] = {}
        for item in candidates:
            try:
                for hit in self.search(agent, item["content"][:2000], limit=5, mode="bm25", rerank=False).hits:
                    existing[hit.memory.id] = hit.memory.content
            except CortexError:
                continue
        # with a model, a paraphrase that only adds or drops words is a duplicate too (measured: docs/capture.md)
        gate = Gate(list(existing.items()), vectors=meaning(self._memories.embeddings))
        entries = []
        for item, verdict in zip(candidates, gate.judge_all([c["content"] for c in candidates])):
            if verdict.action == "store":
                entries.append({**item, "project": project, "source": Source.AGENT_END,
                                "tags": captured.tags_of(item["tags"]), "metadata": meta})
            elif verdict.action == "confirm" and verdict.match is not None:
                try:
                    report.confirmed.append(self.validate(agent, verdict.match).id)
                except CortexError:
                    pass
            else:
                report.refused[verdict.reason or "refused"] = report.refused.get(verdict.reason or "refused", 0) + 1
        if got.summary:
            text = self.redactor.scrub(got.summary, redacted)
            entries.append({"content": f"Session summary: {text}", "type": "insight", "project": project,
                            "source": Source.SESSION_SUMMARY, "tags": ["session-summary"], "metadata": meta})
        good = []
        for entry in entries:
            try:
                memory_from_entry(agent, entry, self._clock())
                good.append(entry)
            except InvalidInputError as exc:
                report.problems.append(f"a captured memory was not valid: {exc}")
        stored = self.store_many(agent, good) if good else []
        for memory in stored:
            if memory.source is Source.SESSION_SUMMARY:
                report.summary = memory
            else:
                report.stored.append(memory)

    def _record_outcomes(self, calls: Sequence[Any]) -> list[Memory]:
        """A task outcome under each declared subagent the transcript's subagent calls name (built-in and
        undeclared agents have no memory: skipped)."""
        from cortex.capture import session as captured

        recorded = []
        known: dict[str, set[Any]] = {}  # per agent, the tasks it has outcomes of (read once per capture)
        for agent_type, task, result, status in captured.subagent_outcomes(calls):
            name = self.resolve_agent(agent_type)
            if name is None:
                continue
            if name not in known:
                known[name] = {(m.metadata or {}).get("task") for m in
                               self.list_memories(name, source=Source.TASK_COMPLETION, limit=1000).items}
            shown = tasks.task_entry(task, result, status)["metadata"]["task"]
            if shown in known[name]:
                continue  # recorded already (by the SubagentStop hook, or an earlier capture)
            recorded.append(self.record_task(name, task, result, status))
            known[name].add(shown)
        return recorded

    # -- Markdown notes ----------------------------------------------------------------------------

    @property
    def project_root(self) -> Path:
        """The project whose notes directories are read (``.cortex/notes/{agent}/``, and an agent's
        ``cortex: notes:`` relative to it): the project of a store in ``<project>/.cortex/store``, else the
        nearest project of the current directory, unless set."""
        if self._root is None:
            local = self._memories.store.local_path
            if local is not None and local.name == "store" and local.parent.name == ".cortex":
                self._root = local.parent.parent.resolve()
            else:
                self._root = config.find_project_root()
        return self._root

    @project_root.setter
    def project_root(self, root: str | os.PathLike[str]) -> None:
        self._root = Path(root).resolve()

    def notes_dirs(self, agent: str) -> list[str]:
        """The agent's notes directories (existing or not), absolute."""
        from cortex.capture import notes

        definition = self._agent(agent)
        return [str(d) for d in notes.directories(self.project_root, agent, definition.settings.notes)]

    def sync_notes(self, agent: str | None = None, *, file: str | os.PathLike[str] | None = None) -> list[NotesReport]:
        """Index the agents' Markdown notes (``agent``'s, or every agent with memory), or only ``file`` (which
        must be in a notes directory; its agent is the directory's): each chunk (section) a ``file_index`` memory
        that does not expire while its text is there. An unchanged chunk keeps its memory (id, usage,
        validation); a changed one is superseded by its new text; one that went (or whose file went) leaves
        recall, its history kept. A file shared with ``promote_notes`` is synced into that scope too. Binary,
        oversized and unreadable files are skipped and named; their memories stay."""
        from cortex.capture import notes

        with self._capturing:
            if file is not None:
                target = Path(os.path.abspath(os.fspath(file)))
                owners = [a for a in ([agent] if agent else self._notes_agents())
                          if any(notes.inside(target, Path(d)) for d in self.notes_dirs(a))]
                if not owners:
                    raise InvalidInputError("file", f"{target} is not inside a notes directory of "
                                                    f"{'agent ' + repr(agent) if agent else 'any agent'} "
                                                    "(symbolic links are followed first)")
                return [self._sync_agent_notes(a, target) for a in owners]
            return [self._sync_agent_notes(a, None) for a in ([agent] if agent else self._notes_agents())]

    def _notes_agents(self) -> list[str]:
        return [d["name"] for d in self.describe_agents() if not d.get("problems") and d.get("memory_enabled")]

    def _notes_state(self) -> dict[str, Any]:
        import json

        from cortex.files import read_regular

        if self._state is None:
            memory: dict[str, Any] = self.__dict__.setdefault("_notes_memory", {})
            return memory
        try:
            data = json.loads(read_regular(self._state / "notes.json", 16 * 1024 * 1024))
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def _save_notes_state(self, data: dict[str, Any]) -> None:
        import json

        from cortex.files import atomic_write

        if self._state is not None:
            atomic_write(self._state / "notes.json", json.dumps(data))

    def _sync_agent_notes(self, agent: str, only: Path | None) -> NotesReport:
        from cortex.capture import notes

        definition = self._agent(agent)
        project = definition.settings.project or config.DEFAULT_PROJECT
        report = NotesReport(agent=agent)
        promoted = self._notes_state().get("promoted", {}).get(agent, {})
        found: dict[str, tuple[Any, str | None]] = {}  # label -> (file, text or None when unreadable)
        scanned: set[str] = set()  # directories read whole: their missing files went
        for directory in notes.directories(self.project_root, agent, definition.settings.notes):
            if only is not None:
                relative = notes.inside(only, directory)
                if relative is None:
                    continue
                candidates = [notes.NotesFile(only, directory, relative)]
            else:
                if directory.exists() and not os.access(directory, os.R_OK | os.X_OK):
                    report.skipped.append(f"{directory}: cannot be read (permission denied); its memories kept")
                    continue
                problems: list[str] = []
                candidates = list(notes.files(directory, problems))
                report.skipped.extend(problems)
                if not problems and directory.is_dir():
                    scanned.add(directory.name)
            for notes_file in candidates:
                try:
                    found[notes_file.label] = (notes_file, notes.read_text(notes_file.path))
                except FileNotFoundError:
                    found[notes_file.label] = (notes_file, "")  # deleted: its chunks go
                except (OSError, ValueError) as exc:
                    report.skipped.append(f"{notes_file.path}: {exc}; its memories kept")
                    found[notes_file.label] = (notes_file, None)
        report.files = sum(1 for _, text in found.values() if text is not None)
        for scope in ["agent", *sorted({s for scopes in promoted.values() for s in scopes})]:
            # a promoted file lives in the scope it was shared with, no longer in the agent's own
            labels = {label for label in found if label not in promoted} if scope == "agent" else \
                {label for label, scopes in promoted.items() if scope in scopes and label in found}
            existing: dict[str, dict[str, Memory]] = {}
            for memory in self._file_index(agent, scope):
                key = str((memory.metadata or {}).get("notes", ""))
                if key:
                    existing.setdefault(notes.file_of(key), {})[key] = memory
            gone = [label for label in existing if label not in labels and (
                (only is None and label not in found and label.split("/", 1)[0] in scanned)
                or (scope == "agent" and label in promoted and label in found))]
            for label in sorted(labels | set(gone)):
                notes_file, text = found[label] if label in labels else (None, "")  # type: ignore[assignment]
                # (not here: its chunks go)
                if text is None:
                    continue
                self._sync_notes_file(agent, scope, label, notes_file, text, existing.get(label, {}), project,
                                      report)
        return report

    def _file_index(self, agent: str, scope: str) -> list[Memory]:
        """Every current ``file_index`` memory of the agent in ``scope`` (its own, or a shared one it wrote)."""
        out: list[Memory] = []
        cursor = None
        while True:
            page = self.list_memories(agent, scope=scope, source=Source.FILE_INDEX, cursor=cursor,
                                      limit=config.MAX_LIMIT)
            out.extend(m for m in page.items if m.author == agent or scope == "agent")
            cursor = page.next_cursor
            if cursor is None:
                return out

    def _sync_notes_file(self, agent: str, scope: str, label: str, notes_file: Any, text: str,
                         existing: dict[str, Memory], project: str, report: NotesReport) -> None:
        from cortex.capture import notes

        pieces = notes.chunks(text) if notes_file is not None else []
        adds: list[dict[str, Any]] = []
        changed = False
        for chunk in pieces:
            bound = notes.edited(chunk)
            if bound is not None:  # a section of an exported file: an edit of the memory it shows
                self._apply_note_edit(agent, label, bound, report)
                continue
            key = notes.memory_key(notes_file, chunk)
            entry = notes.entry(notes_file, chunk, project)
            old = existing.pop(key, None)
            if old is not None and (old.metadata or {}).get("sha256") == chunk.digest:
                report.unchanged += 1
                continue
            changed = True
            with provenance_activity(channel="notes", file=label[-128:], part=f"lines {chunk.first_line}-"
                                                                               f"{chunk.last_line}"):
                if old is None:
                    adds.append({**entry, **({"scope": scope} if scope != "agent" else {})})
                    continue
                try:
                    fields: dict[str, Any] = {k: v for k, v in entry.items() if k not in ("content", "project")}
                    new = self.supersede(agent, old.id, str(entry["content"]), reason=f"{label} changed",
                                         **fields)
                    report.updated.append(new.id)
                except CortexError as exc:
                    report.skipped.append(f"{label} ({chunk.key}): {exc}")
        if adds:
            good = []
            for item in adds:
                try:
                    memory_from_entry(agent, {k: v for k, v in item.items() if k != "scope"}, self._clock())
                    good.append(item)
                except InvalidInputError as exc:
                    report.skipped.append(f"{label}: a chunk was not stored: {exc}")
            with provenance_activity(channel="notes", file=label[-128:]):
                report.added.extend(m.id for m in self.store_many(agent, good))
        if existing:  # chunks no longer in the file: they leave recall, their history stays
            changed = True
            report.removed.extend(self._retire(agent, list(existing.values()), f"no longer in {label}"))
        if changed and label not in report.changed_files:
            report.changed_files.append(label)

    def _apply_note_edit(self, agent: str, label: str, bound: tuple[str, str], report: NotesReport) -> None:
        """Update the memory an exported section shows when its text was edited."""
        memory_id, text = bound
        memory = self.get(agent, memory_id) if is_memory_id(memory_id) else None
        if memory is None or memory.superseded:
            report.skipped.append(f"{label}: section of memory {memory_id}: no such current memory; not applied")
            return
        if not text or text == memory.content.strip():
            report.unchanged += 1
            return
        try:
            with provenance_activity(channel="notes", file=label[-128:]):
                report.updated.append(self.update(agent, memory_id, content=text).id)
            if label not in report.changed_files:
                report.changed_files.append(label)
        except CortexError as exc:
            report.skipped.append(f"{label}: section of memory {memory_id}: {exc}")

    def export_notes(self, agent: str, directory: str | os.PathLike[str]) -> list[str]:
        """Write ``agent``'s current memories (not those read from notes) as Markdown files in ``directory``, one
        per type, a section per memory, for a person to read and edit; a later sync of the directory (a notes
        directory of the agent) applies the edits to the memories. Overwrites only files an earlier export
        wrote. Returns the files written."""
        from cortex.capture import notes
        from cortex.files import atomic_write

        self._agent(agent)
        target = Path(os.path.abspath(os.fspath(directory)))
        shown: list[tuple[str, str, str]] = []
        cursor = None
        while True:
            page = self.list_memories(agent, scope="agent", cursor=cursor, limit=config.MAX_LIMIT)
            shown.extend((m.id, m.type.value, m.content) for m in page.items if m.source is not Source.FILE_INDEX)
            cursor = page.next_cursor
            if cursor is None:
                break
        rendered = notes.render_export(agent, list(reversed(shown)))  # oldest first, as people write notes
        mark = notes.EXPORT_MARK.format(agent=agent)
        for name in rendered:
            path = target / name
            if path.exists() and not path.read_text(encoding="utf-8", errors="replace").startswith(mark):
                raise InvalidInputError("directory", f"{path} exists and was not written by an export of "
                                                     f"{agent!r}: not overwritten")
        target.mkdir(parents=True, exist_ok=True)
        for name, text in rendered.items():
            atomic_write(target / name, text, mode=0o644)
        return [str(target / name) for name in rendered]

    def _retire(self, agent: str, memories: Sequence[Memory], reason: str) -> list[str]:
        """End the validity of ``memories`` now (no successor): reads leave them out, their history stays."""
        done: list[str] = []
        for memory in memories:
            def attempt(memory_id: str = memory.id) -> Memory:
                scope, current = self._require(agent, memory_id)
                now = self._clock()
                return self._memories.write(scope, [], [(current, lifecycle.retired(current, now, reason), True)],
                                            action="supersede", actor=agent, at=now)[0]
            done.append(self._changing(attempt).id)
        return done

    def promote_notes(self, agent: str, file: str | os.PathLike[str], *, team: str | None = None,
                      swarm: bool = False) -> NotesReport:
        """Share a notes file's chunks with ``team`` (a team the agent is in) or the swarm (a lead): they move to
        that scope (the agent's own copies leave recall, history kept), and every later sync of the file updates
        them there."""
        from cortex.capture import notes

        if (team is None) == (not swarm):
            raise InvalidInputError("team", "give a team or swarm (one of them)")
        target = Path(os.path.abspath(os.fspath(file)))
        label = next((notes.NotesFile(target, Path(d), rel).label for d in self.notes_dirs(agent)
                      if (rel := notes.inside(target, Path(d))) is not None), None)
        if label is None:
            raise InvalidInputError("file", f"{target} is not inside a notes directory of agent {agent!r}")
        scope = "swarm" if swarm else f"team:{team}"
        self._member(agent).writable(scope, self._teams())  # refused now, not at the next sync
        with self._capturing:
            state = self._notes_state()
            scopes = state.setdefault("promoted", {}).setdefault(agent, {}).setdefault(label, [])
            if scope not in scopes:
                scopes.append(scope)
            self._save_notes_state(state)
        reports = self.sync_notes(agent, file=target)
        return reports[0]

    def usage_stats(self, agent: str) -> dict[str, dict[str, int]]:
        """Per source of the agent's current memories: how many there are (``memories``), how many were shown
        at least once (``shown``) and how many an output drew on (``used``), and the totals of showings and uses
        (``times_shown``: usageCount, which explicit touches add to; ``times_used``: usedCount)."""
        self._agent(agent)
        return listing.usage_by_source(self._memories.index(self._scope(agent)))

    def record_task(self, agent: str, task: str, output: str = "", status: str = "ok", *,
                    project: str | None = None) -> Memory:
        """Record a finished task's outcome as a ``task_completion`` memory of ``agent`` (source TTL: 7 days by
        default): ``Task done: <task>`` / ``Task failed: <task>``, then the outcome or what went wrong, bounded
        (:mod:`cortex.capture.tasks`); tagged ``task-outcome`` and ``task-ok``/``task-failed``. Captured text:
        its secrets are redacted (a warning says so)."""
        entry = tasks.task_entry(task, output, status)
        redacted: Counter[str] = Counter()
        entry["content"] = self.redactor.scrub(entry["content"], redacted)
        entry["metadata"]["task"] = self.redactor.redact(entry["metadata"]["task"]).text  # counted in the content
        if redacted:
            notices.notice(f"record_task of agent {agent!r} {_redaction_note(redacted)} before storing it")
        entry["project"] = project if project is not None else \
            self._agent(agent).settings.project or config.DEFAULT_PROJECT
        scope, memories = self._new_memories(agent, [entry], batch=False)
        with provenance_activity(channel=current_activity().channel or "task"):
            self._memories.add(scope, memories)
        self._warn_prunable(memories)
        return memories[0]

    def _prune_at_end(self, agent: str, scope: Scope, doomed: Sequence[str], settings: AgentSettings,
                      now: datetime) -> list[Pruned]:
        """Delete what the agent's prune rule selected, record it (a ``prune`` activity that
        ``prov:invalidated`` each memory) and say it (:func:`cortex.notices.notice`); returns what went."""
        if not doomed:
            return []
        rule = f"confidence < {settings.prune_min_confidence:g}" + (
            f" or unused for longer than {settings.prune_max_age}" if settings.prune_max_age is not None else "")
        before = {m.id: m for m in self._memories.load(scope, list(doomed))}
        deleted = self._delete(scope, doomed, action="prune", actor=agent, at=now, rule=rule)
        pruned = [Pruned(id=i, agent=agent, content=before[i].content, confidence=before[i].confidence,
                         rule=lifecycle.prune_rule(before[i], min_confidence=settings.prune_min_confidence,
                                                   max_age=settings.prune_max_age, now=now) or rule)
                  for i in deleted if i in before]
        if pruned:
            shown = ", ".join(f"{p.id} ({p.rule})" for p in pruned[:5]) + (", ..." if len(pruned) > 5 else "")
            count = f"{len(pruned)} memor{'y' if len(pruned) == 1 else 'ies'}"
            notices.notice(f"agent_end of agent {agent!r} pruned {count} (cortex.prune: {rule}): {shown}")
            log.info("%s: pruned %d memories at agent end (%s)", scope, len(pruned), rule)
        return pruned


    # -- consolidation -----------------------------------------------------------------------------

    @property
    def consolidation(self) -> "ConsolidationSettings":
        """The rules of consolidation runs and of the sweep (``CORTEX_CONSOLIDATE_*`` or the ``[consolidation]``
        table of ``.cortex/config.toml``; docs/consolidation.md). Assignable."""
        if self._consolidation is _UNSET_LLM:
            from cortex.consolidation.settings import consolidation_settings

            self._consolidation = consolidation_settings(project_root=config.find_project_root())
        return self._consolidation  # type: ignore[return-value]

    @consolidation.setter
    def consolidation(self, settings: "ConsolidationSettings") -> None:
        self._consolidation = settings

    def _consolidation_target(self, agent: str | None, team: str | None, swarm: bool) -> tuple[Scope, str]:
        """The scope one run covers and the agent it acts for: an agent's own memory (itself), a team's (its
        lead) or the swarm's (a lead)."""
        given = [name for name, value in (("agent", agent), ("team", team), ("swarm", swarm or None))
                 if value is not None]
        if len(given) != 1:
            raise InvalidInputError("agent", "name exactly one of an agent, team= or swarm=True "
                                             f"({'none' if not given else ' and '.join(given)} given)")
        if agent is not None:
            self._agent(agent)
            return Scope.agent(agent), agent
        if team is not None:
            name = check_team_name(team)
            if name not in self._teams():
                raise InvalidInputError("team", f"unknown team {name!r}: no agent declares it in cortex: teams")
            return Scope.team(name), self._lead_of(name)
        leads = sorted(d.name for d in self.agents.list() if d.memory_enabled and d.settings.lead)
        if not leads:
            raise InvalidInputError("swarm", "the swarm's memory is consolidated for a lead, and no agent is one "
                                             "(cortex: {lead: true})")
        return Scope.swarm(), leads[0]

    def _lead_of(self, team: str) -> str:
        leads = sorted(d.name for d in self.agents.list() if d.memory_enabled and d.settings.lead
                       and team in d.settings.teams)
        if not leads:
            raise InvalidInputError("team", f"team {team!r} has no lead: its memory is consolidated for its lead "
                                            f"(cortex: {{teams: [{team}], lead: true}})")
        return leads[0]

    def _consolidation_context(self, actor: str, scope: Scope, now: datetime) -> "Any":
        from cortex.consolidation.engine import Context

        policy = self._policy(actor)

        def make(entry: Mapping[str, Any]) -> Memory:
            memory = memory_from_entry(actor, dict(entry), now, policy.expires_at, author=actor,
                                       scope=scope.relative)
            return memory.model_copy(update={"agent": scope.name}) if scope.kind == "agent" else memory

        return Context(self._memories, self.consolidation, self.llm, self._state, now, make,
                       lambda text: self.redactor.redact(text).text)

    def _run_plan(self, plan_run: Callable[[], Any], report: "ConsolidationReport") -> "ConsolidationReport":
        """Plan a run (``plan_run()``: a :class:`cortex.consolidation.runs.Plan`) and, unless ``report`` is a dry
        run's or there is nothing to do, write it: ``report.run`` is then its id."""
        from cortex.consolidation import runs

        with self._capturing:
            plan = plan_run()
            if not report.dry_run and not plan.empty:
                report.run = self._changing(lambda: runs.apply(self._memories, plan, report, self._clock()))
        return report

    def _consolidation_scopes(self, agent: str | None, team: str | None, swarm: bool) -> list[Scope]:
        """The scope named (as :meth:`_consolidation_target` checks it), or every stored scope when none is."""
        if agent is None and team is None and not swarm:
            return self._memories.scopes()
        return [self._consolidation_target(agent, team, swarm)[0]]

    def consolidate(self, agent: str | None = None, *, team: str | None = None, swarm: bool = False,
                    dry_run: bool = False) -> "ConsolidationReport":
        """Consolidate one scope (an agent's own memory, ``team=``'s or the swarm's) in one run: near duplicates
        merged (the survivor supersedes them, keeps their summed usage and tags, ``prov:wasDerivedFrom`` each),
        contradictions the language model finds superseded (when configured) or listed for review, and, for an
        agent, its recent sessions and task outcomes distilled into learnings (a learning that recurs raises the
        confidence of the memory it repeats). Never deletes; one atomic write and one PROV-O activity, whose id
        (``report.run``) :meth:`undo_consolidation` takes. ``dry_run``: plan only, and say exactly what a run
        would do. Bad model output changes nothing (``problems``); an unreachable model leaves its part
        ``pending`` for the next run."""
        from cortex.consolidation import engine, runs
        from cortex.consolidation.report import ConsolidationReport

        scope, actor = self._consolidation_target(agent, team, swarm)
        now = self._clock()
        report = ConsolidationReport(scope=runs.scope_label(scope), actor=actor, dry_run=dry_run, started_at=now)
        return self._run_plan(lambda: engine.plan_scope(self._consolidation_context(actor, scope, now), scope, actor,
                                                        report, agent=agent), report)

    def team_round_end(self, team: str, *, dry_run: bool = False) -> "ConsolidationReport":
        """The end of a round of ``team``: its lead's extractor distils the round's task outcomes and the members'
        new learnings into the team memory (entries tagged ``team-memory`` and ``decision``, ``lesson``,
        ``member`` or ``context``): new entries, updates by supersession, repeats confirmed, the least valuable
        entries evicted over the bound (default 200). Needs a language model. One run, undone like any other.
        A temporary team (declared with a parent) has no extractor."""
        from cortex.consolidation import engine, runs
        from cortex.consolidation.report import ConsolidationReport

        name = check_team_name(team)
        parents = {t: p for d in self.agents.list() if d.memory_enabled for t, p in d.settings.parents.items()}
        if name in parents:
            raise InvalidInputError("team", f"team {name!r} is temporary (its parent is {parents[name]!r}): it reads "
                                            f"its parent's memory and has no extractor")
        scope, lead = self._consolidation_target(None, name, False)
        members = sorted(d.name for d in self.agents.list() if d.memory_enabled and name in d.settings.teams)
        now = self._clock()
        report = ConsolidationReport(scope=runs.scope_label(scope), actor=lead, dry_run=dry_run, started_at=now)

        def member_memories(member: str, since: datetime | None) -> list[Memory]:
            own = engine.current(self._memories, Scope.agent(member), now)
            return [m for m in own if (since is None or m.created_at > since)
                    and m.source in (Source.TASK_COMPLETION, Source.AGENT_END, Source.MANUAL, Source.INJECTED)]

        return self._run_plan(lambda: engine.plan_round(self._consolidation_context(lead, scope, now), scope, lead,
                                                        members, report, member_memories), report)

    def undo_consolidation(self, run: str = "last", *, agent: str | None = None, team: str | None = None,
                           swarm: bool = False, force: bool = False) -> "UndoReport":
        """Undo a consolidation run (its id, or ``last``: the latest run not undone, of the scope named, or of
        any scope): every memory it changed back as it was before, the memories it created removed, its
        derivation links removed; its record stays in provenance, marked undone. Refuses (nothing changed) when
        a memory was changed since by something else, unless ``force``."""
        from cortex.consolidation import runs

        wanted = runs.check_run(run)
        found = [(info, scope) for scope in self._consolidation_scopes(agent, team, swarm)
                 for info in runs.runs(self._memories, scope)
                 if (wanted == "last" and info.undone_at is None) or info.run == wanted]
        if not found:
            from cortex.errors import RunNotFoundError

            raise RunNotFoundError(wanted, "" if wanted != "last" else " left to undo")
        info, scope = max(found, key=lambda pair: (pair[0].started_at, pair[0].run))
        actor = info.actor or (scope.name if scope.kind == "agent" else "cortex")
        return runs.undo(self._memories, scope, info.run, actor, self._clock(), force=force)

    def consolidation_runs(self, agent: str | None = None, *, team: str | None = None,
                           swarm: bool = False) -> list["RunInfo"]:
        """The consolidation runs of one scope (or of every scope, naming none), the latest first, undone ones
        too."""
        from cortex.consolidation import runs

        found = [info for scope in self._consolidation_scopes(agent, team, swarm)
                 for info in runs.runs(self._memories, scope)]
        return sorted(found, key=lambda r: (r.started_at, r.run), reverse=True)

    def review(self, agent: str | None = None, *, team: str | None = None,
               swarm: bool = False) -> list["ReviewItem"]:
        """The contradictions consolidation found and did not apply (``apply_contradictions`` off), still open:
        both memories current. Decide one with :meth:`resolve_review`."""
        from cortex.consolidation import runs
        from cortex.consolidation.report import ReviewItem

        scope, _ = self._consolidation_target(agent, team, swarm)
        now = self._clock()
        items: list[ReviewItem] = []
        plans = runs.plans(self._memories, scope)
        seen: set[frozenset[str]] = {frozenset((str(d.get("keep")), str(d.get("supersede")))) for _, plan in plans
                                     for d in plan.get("dismissed", []) if isinstance(d, dict)}
        for run, plan in plans:
            for raw in plan.get("review", []):
                try:
                    item = ReviewItem.model_validate({**raw, "run": run})
                except ValueError:
                    continue
                pair = frozenset((item.keep, item.supersede))
                if pair in seen:
                    continue
                seen.add(pair)
                found = {m.id: m for m in self._memories.load(scope, [item.keep, item.supersede])}
                if len(found) == 2 and all(m.superseded_by is None and not m.expired(now)
                                           and (m.valid_until is None or m.valid_until > now) for m in found.values()):
                    items.append(item)
        return items

    def resolve_review(self, keep: str, supersede: str, *, accept: bool = True, agent: str | None = None,
                       team: str | None = None, swarm: bool = False) -> "ConsolidationReport":
        """Decide a contradiction listed for review (:meth:`review`): ``accept`` supersedes ``supersede`` by
        ``keep``; ``accept=False`` keeps both and takes the pair off the list. Either is a run of its own (kind
        ``review``), undone like any other."""
        from cortex.consolidation import runs
        from cortex.consolidation.report import ConsolidationReport, Supersession

        scope, actor = self._consolidation_target(agent, team, swarm)
        item = next((i for i in self.review(agent, team=team, swarm=swarm)
                     if (i.keep, i.supersede) == (keep, supersede)), None)
        if item is None:
            raise InvalidInputError("supersede", f"no open contradiction keeping {keep!r} over {supersede!r} in "
                                                 f"{runs.scope_label(scope)}: `cortex review` lists them")
        now = self._clock()
        report = ConsolidationReport(scope=runs.scope_label(scope), actor=actor, started_at=now, examined=2)
        plan = runs.Plan(scope, actor, "review", now)
        if accept:
            reason = f"accepted from review: {item.reason}"
            plan.supersede = [(supersede, keep, reason)]
            report.superseded = [Supersession(old=supersede, new=keep, reason=reason)]
        else:
            plan.checked = [f"dismissed:{keep} {supersede}"]
            report.dismissed = [item]
        return self._run_plan(lambda: plan, report)


#: How many times a change is read and decided again when another process changed the memory in between.
WRITE_ATTEMPTS = 5


class _Refused(Exception):
    """A decision taken on a current read (a stale ``expected_version``): final, not retried."""

    def __init__(self, error: CortexError) -> None:
        self.error = error


def _redaction_note(counts: Mapping[str, int]) -> str:
    """``replaced 3 secrets (2 aws-access-key, 1 jwt) by placeholders``."""
    total = sum(counts.values())
    kinds = ", ".join(f"{n} {rule}" for rule, n in sorted(counts.items()))
    return f"replaced {total} secret{'' if total == 1 else 's'} ({kinds}) by placeholders"


def _named_scope(name: str) -> Scope:
    """An agent's own scope by the agent's name, or a shared one by ``team:NAME`` / ``swarm``."""
    if name == "swarm":
        return Scope.swarm()
    if isinstance(name, str) and name.startswith("team:"):
        return Scope.team(check_scope(name, "agent")[5:])
    return Scope.agent(check_agent_name(name))


def _by_scope(memories: Sequence[Memory], scopes: Sequence[Scope]) -> dict[Scope, list[str]]:
    """The ids of ``memories`` grouped by the scope (among ``scopes``) each one is in."""
    by_name = {s.relative: s for s in scopes}
    out: dict[Scope, list[str]] = {}
    for memory in memories:
        out.setdefault(by_name[memory.scope], []).append(memory.id)
    return out


def _import_bytes(source: object) -> bytes | IO[bytes]:
    """What ``import_rdf`` reads: a file's bytes (a path), bytes, or a binary stream."""
    if isinstance(source, (str, os.PathLike)):
        try:
            return Path(source).read_bytes()
        except OSError as exc:
            raise InvalidInputError("file", f"cannot read {os.fspath(source)!r}: {exc.strerror or exc}") from None
    if isinstance(source, (bytes, bytearray)):
        return bytes(source)
    if hasattr(source, "read"):
        return source  # type: ignore[return-value]
    raise InvalidInputError("source", f"must be a path, bytes or a binary stream, not {type(source).__name__}")


def _within(exc: InvalidInputError | PermissionDeniedError, prefix: str) -> CortexError:
    """The error of one entry of a batch, naming the entry."""
    if isinstance(exc, InvalidInputError):
        return InvalidInputError(prefix, exc.reason) if exc.field == "entry" else exc.within(prefix)
    return PermissionDeniedError(str(exc).split(": ", 1)[-1], f"{prefix}.{exc.field}" if exc.field else prefix)


def _owner_client(path: Location, state_dir: str | os.PathLike[str] | None) -> RemoteCortex | None:
    """The client of the live Cortex server that owns the store at ``path``, or None."""
    from cortex.client import owner_client
    from cortex.state import state_dir_of

    return owner_client(Path(state_dir) if state_dir is not None else state_dir_of(path))
