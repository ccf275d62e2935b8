"""The memories domain of the facade: one memory's life (store, change, supersede, validate, forget, prune)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import Any

from cortex import config, lifecycle, notices, scopes
from cortex.app.kernel import Kernel, _Refused, announced
from cortex.errors import (
    CortexError,
    InvalidInputError,
    MemoryNotFoundError,
    PermissionDeniedError,
    VersionConflictError,
)
from cortex.memories import WRITE_BATCH
from cortex.model import (
    Memory,
    MemoryType,
    Provenance,
    Scope,
    Source,
)
from cortex.capture.sessionlog import without_lines
from cortex.provenance import current as current_activity
from cortex.render import render_line
from cortex.scopes import Member
from cortex.validation import (
    check_confidence,
    check_duration,
    check_tags,
    check_version,
    is_memory_id,
    memory_from_entry,
)


class MemoryOps(Kernel):
    """One memory's life: store, read one, change in place, supersede, validate, touch, forget, prune."""

    @announced("write", "store")
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

        When that scope already holds a current memory with exactly this content in this project, that memory is
        returned as it is and nothing is stored (a notice says so, :func:`cortex.notices.stored_already` tells it): the same
        rule on every surface (MCP's ``add_memory`` answers ``created: false``).
        """
        entry = {"content": content, "type": type, "project": project, "confidence": confidence, "source": source,
                 "ttl": ttl, "tags": tags, "metadata": metadata, "scope": scope}
        target, memories = self._new_memories(agent, [entry], batch=False)
        routed = self._to_providers(memories)
        if routed is not None:
            return routed[0]
        new = memories[0]
        with self._memories.lock:  # the check and the write as one step of this process
            same = self._memories.find_content(target, new.content, new.project, self._clock())
            found = self._memories.load(target, same[:1]) if same else []
            if found:
                notices.notice(notices.already_stored(found[0].id, found[0].agent, found[0].project, target.relative))
                return found[0]
            self._memories.add(target, memories)
        self._warn_prunable(memories)
        return new

    @announced("write", "store")
    def store_many(self, agent: str, entries: Iterable[Mapping[str, Any]]) -> list[Memory]:
        """Store a batch; returns the memories in input order.

        Each entry is a mapping with ``content`` and optionally every field :meth:`store` takes (``type``,
        ``project``, ``confidence``, ``source``, ``ttl``, ``tags``, ``metadata``, ``scope``) and what an import
        keeps: ``usage_count``, ``created_at``, ``last_used_at``, ``expires_at``, ``valid_from``. Every entry is
        validated before anything is written; one bad entry stores nothing. A batch writes one scope, in one atomic
        write up to :data:`~cortex.memories.WRITE_BATCH` (1,000) memories; a larger one as consecutive atomic writes
        of that many, embedded before each takes the store's lock, so reads never wait for the whole batch (a crash
        in the middle leaves the writes done, each whole).
        """
        if isinstance(entries, (str, bytes, Mapping)) or not isinstance(entries, Iterable):
            self._agent(agent)
            raise InvalidInputError("entries", f"must be a list of mappings, not {type(entries).__name__}")
        target, memories = self._new_memories(agent, entries, batch=True)
        routed = self._to_providers(memories)
        if routed is not None:
            return routed
        if memories:
            self._memories.add(target, memories, batch=WRITE_BATCH)
            self._warn_prunable(memories)
        return memories

    def _to_providers(self, memories: list[Memory]) -> list[Memory] | None:
        """With the ``external`` engine, ``memories`` sent to the memory providers (each labelled with the ones that
        took it; ProviderError when none did); otherwise None, after refusing a write the engine does not take."""
        if self.engine_settings.engine != "external":
            self._admit()
            return None
        if not memories:
            return []
        accepted = self.engine.write(memories)
        return [m.model_copy(update={"origin": ",".join(accepted)}) for m in memories]

    def _new_memories(self, agent: str, entries: Iterable[Any], *, batch: bool) -> tuple[Scope, list[Memory]]:
        """The validated memories of ``entries`` and the one scope they go to (errors of a batch name the
        entry)."""
        member = self._member(agent)
        now = self._clock()
        policy, teams = self._policy(agent), self._teams()
        memories: list[Memory] = []
        target = member.own
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
                memory = memory_from_entry(agent, fields, now, policy.expires_at, author=agent, scope=scope.relative)
                scopes.check_team_memory_write(member, scope, memory.tags)
                memories.append(memory)
            except (InvalidInputError, PermissionDeniedError) as exc:
                if not batch:
                    raise
                raise _within(exc, f"entries[{i}]") from None
        # the write path's redaction step, here already: store's check for the same content sees what is written
        return target, self._memories.redact(memories) if self._memories.redact is not None else memories

    @announced("write", "update")
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

    def history(self, agent: str, memory_id: str) -> list[Memory]:
        """Every version of the memory, oldest first, the current one last (expired or superseded too)."""
        scope, memory = self._require(agent, memory_id)
        return self._memories.history(scope, memory.id)

    @announced("write", "supersede")
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

    @announced("write", "validate")
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

    @announced("write", "inject")
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

    @announced("write", "forget")
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
            lines = [render_line(v) for v in self._memories.history(scope, memory.id)]
            gone = bool(self._delete(scope, [memory.id]))
            if gone:  # the session record forgets its text too (the blocks that showed it)
                self._note_session(lambda: self._sessions.rewrite(
                    lambda text: without_lines(text, lines), needles=[line.split("\n", 1)[0] for line in lines],
                    agents=[scope.name] if scope.kind == "agent" else None))  # an agent's own: only its blocks
                session = current_activity().session
                if session:  # provenance forgets it too: the session's record keeps its id only
                    self._note_session(lambda: self._sessions.forgot(agent, session, self._clock(), scope.key,
                                                                     memory.id))
            return gone

        if self.engine_settings.engine == "external":  # the memory is the providers': they remove it
            return self.engine.remove(agent, str(memory_id))
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


def _within(exc: InvalidInputError | PermissionDeniedError, prefix: str) -> CortexError:
    """The error of one entry of a batch, naming the entry."""
    if isinstance(exc, InvalidInputError):
        return InvalidInputError(prefix, exc.reason) if exc.field == "entry" else exc.within(prefix)
    return PermissionDeniedError(str(exc).split(": ", 1)[-1], f"{prefix}.{exc.field}" if exc.field else prefix)

