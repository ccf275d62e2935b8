"""The kernel of the facade: state and guards shared by every domain module of :class:`cortex.app.Cortex`."""

from __future__ import annotations

import contextvars
import functools
import inspect
import logging
import os
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from cortex import caller, config, lifecycle, notices
from cortex.agents import AgentDefinition, AgentRegistry
from cortex.capture import usage
from cortex.capture.checkpoints import Checkpoints
from cortex.capture.sessionlog import SessionLog
from cortex.capture.redact import REDACT_STORE_ENV, Redactor
from cortex.capture.scrub import automatic, scrub_memory
from cortex.embeddings import EmbeddingProvider
from cortex.errors import (
    EngineOffError,
    CortexError,
    MemoryNotFoundError,
    VersionConflictError,
)
from cortex.events import Bus, Event, Subscription
from cortex.lifecycle import Policy
from cortex.memories import MemoryRepository
from cortex.model import (
    Memory,
    Query,
    Scope,
    Source,
    utcnow,
)
from cortex.provenance import current as current_activity
from cortex.providers.settings import EngineSettings, engine_settings
from cortex.recall import Part, parts_of
from cortex.scopes import Member
from cortex.search import Fusion
from cortex.state import SESSIONS_DIR
from cortex.store.base import MemoryStore
from cortex.validation import is_memory_id
from cortex.validation import query as make_query

if TYPE_CHECKING:
    from cortex.providers.engine import Engine
    from cortex.llm import LLMSettings
    from cortex.sparql.workers import QueryWorkers

log = logging.getLogger("cortex")
_T = TypeVar("_T")
_Method = TypeVar("_Method", bound=Callable[..., Any])
#: A setting (``Cortex.llm``, ``Cortex.consolidation``) not read yet.
_UNSET = object()


class Kernel:
    """What every domain of the facade shares: the repository, the agents, the clock, the redactor, the fusion of
    search, the state directory and the language model's settings; and the guards every operation goes through
    (the agent is declared with memory, the scopes it reads and writes, a change decided on a current read)."""

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
        self._memories.redact = self._redact_write
        #: How ``hybrid`` search fuses the lexical and the semantic ranking.
        self.fusion = fusion if fusion is not None else Fusion()
        self._workers: QueryWorkers | None = None
        self._closed = False
        #: what each agent was shown at its latest start, per session (the "used" signal reads it)
        self._shown = usage.ShownLog(state / "shown.json" if state is not None else None)
        #: what each agent session's context holds of the memories: its latest start's block and every prompt's
        #: since (a prompt adds only what is not there; a use does not take it out, as it does of ``_shown``)
        self._context = usage.ShownLog(state / "context.json" if state is not None else None)
        #: per agent session: the blocks its starts injected, what it used, its transcripts (the Sessions screens)
        self._sessions = SessionLog(state / SESSIONS_DIR if state is not None else None)
        self._state = state
        self._llm: object = _UNSET
        self._consolidation: object = _UNSET
        #: one transcript capture, notes sync or import write at a time (a capture's checkpoint is read, then
        #: written after what it stored); never held while a language model is asked
        self._capturing = threading.RLock()
        #: one consolidation run of a scope at a time (by scope key): planning one asks the model, so no lock that
        #: other work needs is held meanwhile
        self._consolidating: dict[str, threading.Lock] = {}
        #: how far each transcript was captured (one instance: its lock orders the writes of the file)
        self._checkpoints = Checkpoints(state / "capture.json" if state is not None else None)
        #: extractions done before the store was opened (:func:`cortex.capture.session.prepare`), by part
        self._prepared: dict[tuple[str, str, int, int], Any] = {}
        self._root: Path | None = None
        #: What is committed, as it is (:mod:`cortex.events`): the server streams it at ``GET /v1/events``.
        self.events = Bus()
        self._memories.on_commit = _committed
        #: the engine switch and its memory providers (:mod:`cortex.providers.engine`), built on first use
        self._engine: Engine | None = None
        self._engine_settings: EngineSettings | None = None
        self._engine_lock = threading.Lock()
        self._memories.admit = self._admit

    def close(self, *, flush: bool = True) -> None:
        """Checkpoint indexes, flush (unless ``flush=False``: committed writes survive a crash of the
        process anyway, only power loss needs the ~10 ms fsync) and release the store. Idempotent."""
        with self._memories.lock:
            if self._closed:
                return
            self._closed = True
            self.events.close()
            if self._engine is not None:
                self._engine.close()
            if self._workers is not None:
                self._workers.close()
            self._memories.close(flush=flush)

    def flush(self) -> None:
        """Force committed writes to disk (fsync). Commits already survive a crash of the process; this
        also protects them against power loss, at ~10 ms a call."""
        self._check_open()
        self._memories.flush()

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
    def project_root(self) -> Path:
        """The project of the store being served, set or derived from where the store is, never from the current
        directory of a server serving several: what an agent's token may have the server read (transcripts,
        imports), where notes are, whose ``.cortex/config.toml`` gives the model's and consolidation's settings.
        An on-disk store's is the nearest project (``.cortex/`` or ``.git/``) above its directory (the project
        of ``<project>/.cortex/store``), else the directory it is in; a store without a directory's (in memory,
        remote) is the current directory's project unless set (``cortex serve`` sets it to its own)."""
        if self._root is None:
            local = self._memories.store.local_path
            self._root = config.find_project_root(Path(local).resolve().parent) if local is not None \
                else config.find_project_root()
        return self._root

    @project_root.setter
    def project_root(self, root: str | os.PathLike[str]) -> None:
        self._root = Path(root).resolve()

    @property
    def state_dir(self) -> Path | None:
        """Where derived indexes (and a server's tokens and discovery file) are kept, or None."""
        return self._memories.state_dir

    def _check_open(self) -> None:
        if self._closed:
            raise CortexError("this Cortex is closed")

    def _agent(self, agent: str) -> AgentDefinition:
        """The definition of a declared agent with memory enabled, that the caller may act for
        (:func:`cortex.caller.require`: an agent's token reads and writes its own agent only, whatever pipeline
        acts for it; raises :class:`~cortex.errors.NotYoursError` otherwise)."""
        self._check_open()
        caller.require(agent)
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

    def _note_session(self, write: Callable[[], object]) -> None:
        """Write to the session log (:mod:`cortex.capture.sessionlog`), best effort: it is a record for people
        looking back, and no operation fails for it (a failure is logged)."""
        try:
            write()
        except OSError as exc:
            log.warning("the session log was not written: %s", exc)

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
        """The agent's time rules: time to live and decay by source (settings only: a team's consolidation reads
        its lead's, whichever lead's token asked)."""
        self._check_open()
        settings = self.agents.require(agent).settings
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

    def _changing(self, attempt: Callable[[], _T]) -> _T:
        """Run ``attempt`` (read a memory, then write what follows from it) under the repository's lock; when the
        store says the memory changed between the read and the write (another process of a shared store got
        there first), read it again and decide again, up to :data:`WRITE_ATTEMPTS` times. So a change applies
        to the memory as it is when it is written, and a refusal (``_Refused``) is decided on a current read."""
        self._admit()  # before the memory is looked for: the engine may not write Cortex's store at all
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

    def _redact_write(self, memories: Sequence[Memory]) -> list[Memory]:
        """The write path's one redaction step (:mod:`cortex.capture.scrub`): the memories a write creates or
        changes, their secrets replaced in content, metadata (keys and values) and tags when the write is
        automatic (a channel's, or a memory not of source ``manual``) or ``CORTEX_REDACT_STORE`` is on; a
        notice counts what it replaced."""
        channel = current_activity().channel
        counts: Counter[str] = Counter()
        out = [scrub_memory(self.redactor, m, counts) if self.redactor.store or automatic(m, channel) else m
               for m in memories]
        if counts:
            if channel is None and not any(automatic(m, None) for m in memories):
                notices.notice(f"storing for agent {memories[0].agent!r} {_redaction_note(counts)} "
                               f"({REDACT_STORE_ENV} is on)")
            else:
                by = f"the {channel} channel" if channel else f"a {memories[0].source.value} write"
                notices.notice(f"{by} for agent {memories[0].agent!r} {_redaction_note(counts)} before storing it")
        return out

    def _explicit_text(self, agent: str, content: str | None) -> str | None:
        """``content`` of an explicit write, its secrets replaced when the redactor's ``store`` is on."""
        if content is None or not self.redactor.store or not isinstance(content, str):
            return content
        done = self.redactor.redact(content)
        if done.counts:
            notices.notice(f"writing for agent {agent!r} {_redaction_note(done.counts)} ({REDACT_STORE_ENV} is on)")
        return done.text

    def _query(self, agent: str, text: str | None, *, text_required: bool = False, **given: Any) -> Query:
        """A validated query of ``agent`` over the scopes it reads (or the one ``scope`` names), judged now."""
        scope = given.pop("scope", None)
        q = make_query(agent, text, text_required=text_required, now=self._clock(), **given)
        return replace(q, scopes=self._read_scopes(agent, scope))

    def _parts(self, scopes: Sequence[Scope]) -> list[Part]:
        return parts_of(self._memories.index, scopes)

    def subscribe(self, agent: str | None = None, *, after: str | None = None,
                  wake: Callable[[], object] | None = None) -> Subscription:
        """A subscription to this Cortex's events (:mod:`cortex.events`) that ``agent`` may read: those of the
        scopes it reads (its own, its teams', the swarm's) and the review items of the members of the teams it
        leads (it decides them); None: every event (an admin). ``after`` (the id of the last event seen) and
        ``wake`` as :meth:`cortex.events.Bus.subscribe` takes them."""
        self._check_open()
        if agent is None:
            return self.events.subscribe(None, after=after, wake=wake)
        member = self._member(agent)
        readable = frozenset(s.key for s in member.readable(None, self._teams()))
        led = set(member.teams) if member.lead else set()
        reviewed = frozenset(Scope.agent(d.name).key for d in self.agents.list()
                             if d.memory_enabled and led & set(d.settings.teams))

        def accept(event: Event) -> bool:
            return event.scope in readable or (event.kind == "review" and event.scope in reviewed)

        return self.events.subscribe(accept, after=after, wake=wake)

    def _announce(self, kind: str, action: str, agent: str | None, committed: dict[Scope, dict[str, None]],
                  result: object) -> None:
        """Publish what an announced operation (:func:`announced`) committed: one event a scope it wrote, or for
        an ``injection`` one event naming the memories shown. Never raises."""
        try:
            at = self._clock()
            details = _details(result)
            if kind == "injection":
                if result is _FAILED or agent is None:
                    return
                session = current_activity().session
                ids = [i for _, i in self._shown.shown(agent, session)]
                self.events.publish(kind, agent=agent, scope=Scope.agent(agent).key, at=at, action=action,
                                    session=session, ids=ids[:MAX_EVENT_IDS], count=len(ids))
                return
            for scope, written in committed.items():
                ids = list(written)
                self.events.publish(kind, agent=agent or (scope.name if scope.kind == "agent" else None),
                                    scope=scope.key, at=at, action=action, ids=ids[:MAX_EVENT_IDS], count=len(ids),
                                    **details)
            self._mirror(kind, action, agent, committed)
        except Exception:  # noqa: BLE001 - the change is committed: its event never fails it
            log.exception("announcing %s %s failed", kind, action)

    @property
    def engine_settings(self) -> EngineSettings:
        """Which memories answer and receive writes (``builtin``, ``both``, ``external``, ``none``) and through which
        providers: from ``CORTEX_ENGINE``, ``CORTEX_PROVIDERS`` ... or the ``[providers]`` table of
        ``.cortex/config.toml`` (:mod:`cortex.providers.settings`), read on first use; those of :attr:`engine` once
        it is built or assigned."""
        if self._engine is not None:
            return self._engine.settings
        if self._engine_settings is None:
            self._engine_settings = engine_settings(self.project_root)
        return self._engine_settings

    @property
    def engine(self) -> Engine:
        """The engine switch and its memory providers (:class:`cortex.providers.engine.Engine`), built from
        :attr:`engine_settings` on first use (its providers loaded and initialized then). Assignable."""
        if self._engine is None:
            from cortex.providers.engine import Engine

            settings = self.engine_settings
            with self._engine_lock:
                if self._engine is None:
                    self._engine = Engine(settings, redact=self._outbound)
        return self._engine

    @engine.setter
    def engine(self, engine: Engine) -> None:
        with self._engine_lock:
            old, self._engine = self._engine, engine
        if old is not None and old is not engine:
            old.close()

    def _outbound(self, text: str) -> str:
        """``text`` as it may leave for a memory provider: every secret the redactor knows replaced."""
        return self.redactor.redact(text).text if isinstance(text, str) else text

    def _admit(self) -> None:
        """The repository's check before a write (:attr:`MemoryRepository.admit`): the ``none`` engine stores
        nothing, the ``external`` one leaves Cortex's store alone (its stores go to the providers)."""
        engine = self.engine_settings.engine
        if engine == "none":
            raise EngineOffError("none", "nothing is stored (set CORTEX_ENGINE=builtin to store in Cortex)")
        if engine == "external":
            raise EngineOffError("external", "Cortex's own store is not written; store and store_many go to the "
                                             "memory providers, other changes are not available")

    def _mirror(self, kind: str, action: str, agent: str | None, committed: dict[Scope, dict[str, None]]) -> None:
        """Queue a committed write for the providers (the ``both`` engine); never raises."""
        if self.engine_settings.engine != "both" or kind not in MIRRORED_KINDS:
            return
        engine = self.engine
        if not engine.usable:
            return
        from cortex.providers.engine import removed_pairs

        for scope, written in committed.items():
            ids = list(written)
            with self._memories.lock:
                present = self._memories.load(scope, ids)
            engine.mirror(action, agent, present, removed_pairs(scope.relative, ids, [m.id for m in present]))

    @property
    def llm(self) -> "LLMSettings | None":
        """The language model transcript capture extracts with (``CORTEX_LLM_URL``... or the ``[llm]`` table of
        ``.cortex/config.toml``; docs/capture.md); None: marker lines only. Assignable."""
        if self._llm is _UNSET:
            from cortex.llm import llm_settings

            self._llm = llm_settings(project_root=self.project_root)
        return self._llm  # type: ignore[return-value]

    @llm.setter
    def llm(self, settings: "LLMSettings | None") -> None:
        self._llm = settings


#: The most memory ids an event lists (``count`` says how many there were).
MAX_EVENT_IDS = 50
#: The writes the running announced operation committed, by scope (None: no announced operation is running).
_committing: contextvars.ContextVar[dict[Scope, dict[str, None]] | None] = contextvars.ContextVar(
    "cortex_committing", default=None)
#: The result of an operation that raised.
_FAILED = object()


def _committed(scope: Scope, ids: Sequence[str]) -> None:
    """The repository's report of one committed write (:attr:`MemoryRepository.on_commit`): noted for the
    announced operation running, if any."""
    pending = _committing.get()
    if pending is not None:
        pending.setdefault(scope, {}).update(dict.fromkeys(ids))


def _details(result: object) -> dict[str, Any]:
    """What an operation's answer adds to its events: the run it recorded, the session it read, the contradictions
    a consolidation listed for review, the memory a review item holds."""
    out: dict[str, Any] = {}
    for name in ("run", "session"):
        value = getattr(result, name, None)
        if isinstance(value, str):
            out[name] = value
    review = getattr(result, "review", None)
    if isinstance(review, list):
        out["review"] = len(review)
    if getattr(result, "kind", None) == "held" and isinstance(getattr(result, "keep", None), str):
        out["held"] = result.keep  # type: ignore[attr-defined]
    return out


def announced(kind: str, action: str, *, own: bool = False) -> Callable[[_Method], _Method]:
    """Publish on the facade's bus (``Kernel.events``) what the decorated operation committed: one event of
    ``kind`` (:data:`cortex.events.KINDS`) a scope it wrote, ``action`` naming the operation, once it has returned,
    or failed after committing part (a failed write commits nothing, so says nothing). An announced operation
    that another runs is part of that one's events, unless ``own`` (a review item held during a capture is news of
    its own). An ``injection`` (an agent's start) is one event whatever it wrote."""

    def decorate(method: _Method) -> _Method:
        signature = inspect.signature(method)

        @functools.wraps(method)
        def run(self: Kernel, *args: Any, **kwargs: Any) -> Any:
            if _committing.get() is not None and not own:
                return method(self, *args, **kwargs)
            committed: dict[Scope, dict[str, None]] = {}
            token = _committing.set(committed)
            result: object = _FAILED
            try:
                result = method(self, *args, **kwargs)
                return result
            finally:
                _committing.reset(token)
                try:
                    given = signature.bind_partial(self, *args, **kwargs).arguments
                except TypeError:
                    given = {}
                agent = given.get("agent", given.get("lead"))
                self._announce(kind, action, agent if isinstance(agent, str) else None, committed, result)

        return run  # type: ignore[return-value]

    return decorate


#: The kinds of event whose writes the ``both`` engine mirrors to the memory providers.
MIRRORED_KINDS = frozenset({"write", "capture", "consolidation"})

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
