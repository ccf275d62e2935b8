"""The lifecycle rules of a memory, in one place (docs/lifecycle.md): how long it lives (time to live by source),
how fast it fades in ranked search (decay by source), what ``prune`` and ``purge_expired`` remove, and what an
update, a supersession or a validation changes.

Defaults, overridable per agent (``cortex: {ttl: {...}, decay: {...}}``) and by environment
(``CORTEX_TTL="task_completion=10d,session_summary=1d"``, ``CORTEX_DECAY="manual=120d"``):

| source | time to live | decay half-life |
|---|---|---|
| manual, agent_end, import, injected | never | 90 d |
| file_index | 30 d | 30 d |
| task_completion | 7 d | 14 d |
| session_summary | 3 d | 7 d |
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

import numpy as np

from cortex.errors import InvalidInputError
from cortex.index.memory_index import NEVER, SOURCES, MemoryIndex, to_micros
from cortex.model import Memory, Scope, Source
from cortex.validation import (
    MAX_REASON_BYTES,
    check_reason,
    NEVER_EXPIRES,
    check_confidence,
    check_content,
    check_metadata,
    check_project,
    check_tags,
    check_text,
    check_type,
    is_memory_id,
    parse_source_durations,
)

DEFAULT_MIN_CONFIDENCE = 0.3
#: Raised by ``validate``, at most to 1.
VALIDATION_BOOST = 0.05
TTL_ENV = "CORTEX_TTL"
DECAY_ENV = "CORTEX_DECAY"

DEFAULT_TTL: dict[Source, timedelta | None] = {
    Source.MANUAL: None, Source.AGENT_END: None, Source.IMPORT: None, Source.INJECTED: None,
    Source.FILE_INDEX: timedelta(days=30), Source.TASK_COMPLETION: timedelta(days=7),
    Source.SESSION_SUMMARY: timedelta(days=3),
}
DEFAULT_HALF_LIFE: dict[Source, timedelta] = {
    Source.MANUAL: timedelta(days=90), Source.AGENT_END: timedelta(days=90), Source.IMPORT: timedelta(days=90),
    Source.INJECTED: timedelta(days=90), Source.FILE_INDEX: timedelta(days=30),
    Source.TASK_COMPLETION: timedelta(days=14), Source.SESSION_SUMMARY: timedelta(days=7),
}

@dataclass(frozen=True)
class Policy:
    """The time rules of one agent: time to live and decay half-life by source."""

    ttl: Mapping[Source, timedelta | None] = field(default_factory=lambda: dict(DEFAULT_TTL))
    half_life: Mapping[Source, timedelta] = field(default_factory=lambda: dict(DEFAULT_HALF_LIFE))

    @classmethod
    def for_agent(cls, ttl: Mapping[Source, timedelta | None] | None = None,
                  half_life: Mapping[Source, timedelta] | None = None) -> "Policy":
        """The defaults, overridden by the environment, overridden by the agent's own settings."""
        ttls: dict[Source, timedelta | None] = dict(DEFAULT_TTL)
        lives: dict[Source, timedelta] = dict(DEFAULT_HALF_LIFE)
        ttls.update(parse_source_durations(os.environ.get(TTL_ENV, ""), TTL_ENV, allow_never=True))
        lives.update({s: d for s, d in parse_source_durations(os.environ.get(DECAY_ENV, ""), DECAY_ENV,
                                                              allow_never=False).items() if d is not None})
        ttls.update(ttl or {})
        lives.update(half_life or {})
        return cls(ttls, lives)

    def expires_at(self, source: Source, created: datetime, ttl: timedelta | Literal["never"] | None) -> datetime | None:
        """When a memory of ``source`` created at ``created`` expires: ``ttl`` when given (``"never"``: never),
        else the source's time to live."""
        span = None if ttl == NEVER_EXPIRES else (ttl if ttl is not None else self.ttl.get(source))
        if span is None:
            return None
        try:
            return created + span
        except OverflowError:
            return None  # beyond the calendar: never, in practice

    def decay(self, start: np.ndarray, source_codes: np.ndarray, now: int) -> np.ndarray:
        """``0.5 ** (age_days / half_life_days)`` for memories whose decay clock started at ``start`` (the
        latest of creation, update and validation, in microseconds) with these source codes, at ``now``
        (microseconds). A validation restarts the clock."""
        halves = np.array([self.half_life.get(s, DEFAULT_HALF_LIFE[Source.MANUAL]).total_seconds() / 86400
                           for s in SOURCES])
        days = np.maximum(0.0, (now - start) / 86_400e6)
        decayed: np.ndarray = 0.5 ** (days / halves[source_codes])
        return decayed


def prune_candidates(
    index: MemoryIndex, *, min_confidence: float, max_age: timedelta | None, now: datetime
) -> list[str]:
    """Ids of memories with confidence strictly below ``min_confidence``, or (when ``max_age`` is given)
    not used for longer than ``max_age`` before ``now``."""
    doomed = index.col("confidence") < min_confidence
    if max_age is not None:
        try:
            cutoff = to_micros(now - max_age)
        except OverflowError:  # older than the calendar: nothing can have been unused that long
            cutoff = None
        if cutoff is not None:
            doomed |= index.col("last_used") < cutoff
    return index.select(doomed)


def prune_rule(memory: Memory, *, min_confidence: float, max_age: timedelta | None, now: datetime) -> str | None:
    """Which rule of :func:`prune_candidates` selects ``memory`` at ``now`` (its text), or None."""
    if memory.confidence < min_confidence:
        return f"confidence {memory.confidence:g} < cortex.prune.min_confidence {min_confidence:g}"
    if max_age is not None and memory.last_used_at < now - max_age:
        return f"unused since {memory.last_used_at.isoformat()}, longer than cortex.prune.max_age {max_age}"
    return None


def expired(index: MemoryIndex, now: datetime) -> list[str]:
    """Ids of the memories whose time to live has run out at ``now`` (what ``purge_expired`` deletes)."""
    expires = index.col("expires")
    return index.select((expires != NEVER) & (expires <= to_micros(now)))


#: What ``update`` can change.
UPDATABLE = ("content", "type", "project", "confidence", "tags", "metadata")
#: What ``supersede`` takes besides the content: the fields of ``store`` (the scope is the old memory's).
SUCCESSOR_FIELDS = frozenset({"type", "project", "confidence", "source", "ttl", "tags", "metadata", "valid_from"})


def changes(**given: Any) -> dict[str, Any]:
    """The validated fields an ``update`` changes (those given, not None); at least one."""
    checks: dict[str, Callable[[Any], Any]] = {
        "content": check_content, "type": check_type, "project": check_project, "confidence": check_confidence,
        "tags": check_tags, "metadata": check_metadata,
    }
    out = {name: checks[name](value) for name, value in given.items() if value is not None}
    if not out:
        raise InvalidInputError("update", f"nothing to change: give at least one of {', '.join(UPDATABLE)}")
    return out


def updated(memory: Memory, changes: Mapping[str, object], now: datetime) -> Memory:
    """``memory`` after ``update``: the changed fields, version + 1, ``updated_at = now``."""
    return memory.model_copy(update={**changes, "version": memory.version + 1, "updated_at": now})


@dataclass(frozen=True)
class Supersession:
    """A validated ``supersede`` request: new content (with the fields of the new memory) or an existing one."""

    content: str | None
    by: str | None
    reason: str | None
    fields: Mapping[str, Any]


def supersession(content: Any, by: Any, reason: Any, fields: Mapping[str, Any]) -> Supersession:
    """Validate what ``supersede`` was given (the new memory's fields are validated when it is made)."""
    if (content is None) == (by is None):
        raise InvalidInputError("content", "give the new content, or by= the id of the memory that replaces it "
                                           "(one of them)")
    if by is not None and not is_memory_id(by):
        raise InvalidInputError("by", f"not a memory id: {by!r}")
    unknown = sorted(set(fields) - SUCCESSOR_FIELDS)
    if unknown:
        raise InvalidInputError(unknown[0], f"unknown field; supersede takes {', '.join(sorted(SUCCESSOR_FIELDS))}")
    fields = {name: value for name, value in fields.items() if value is not None}  # None: not given
    if by is not None and fields:
        raise InvalidInputError(sorted(fields)[0], "fields describe new content; with by= the memory exists already")
    if reason is not None:
        reason = check_reason(reason)
    return Supersession(check_content(content) if content is not None else None, by, reason or None, dict(fields))


def check_supersedable(old: Memory) -> None:
    """Raise unless ``old`` is current (a memory is superseded once)."""
    if old.superseded_by is not None:
        raise InvalidInputError("memory_id", f"memory {old.id!r} is already superseded by {old.superseded_by!r}")


def check_replacement(old: Memory, old_scope: Scope, new: Memory, new_scope: Scope) -> None:
    """Raise unless the existing memory ``new`` can replace ``old``: another memory, of the same scope (one
    atomic write changes one graph)."""
    if new.id == old.id:
        raise InvalidInputError("by", "a memory cannot supersede itself")
    if new_scope != old_scope:
        raise InvalidInputError("by", f"memory {new.id!r} is in {new_scope.relative}, memory {old.id!r} in "
                                      f"{old_scope.relative}: a memory is superseded by one of its own scope")


def check_successor(new: Memory, now: datetime) -> None:
    """Raise unless the existing memory ``new`` is current and so can replace another (which also rules out
    cycles: a memory in a chain of supersession is superseded already)."""
    if new.superseded_by is not None:
        raise InvalidInputError("by", f"memory {new.id!r} is itself superseded by {new.superseded_by!r}; "
                                      f"supersede by the current one")
    if new.expired(now):
        raise InvalidInputError("by", f"memory {new.id!r} has expired; it cannot replace another")


def successor_entry(old: Memory, rule: Supersession) -> dict[str, Any]:
    """The ``store`` entry of the memory replacing ``old``: its type, project and tags unless given."""
    return {"type": old.type, "project": old.project, "tags": old.tags, **rule.fields, "content": rule.content}


def superseded(old: Memory, by: Memory, reason: str | None = None) -> Memory:
    """``old`` once ``by`` replaces it: valid until ``by`` became valid, and pointing to it."""
    until = by.valid_from or by.created_at
    return old.model_copy(update={"valid_until": max(until, old.valid_from or old.created_at),
                                  "superseded_by": by.id, "superseded_reason": reason})


def version_at(versions: Sequence[Memory], moment: datetime) -> Memory:
    """The version of a memory (``versions``: its history, oldest first, current last) that was the latest
    at ``moment``: what ``as_of`` returns. Times of use and the supersession stay the current ones'."""
    current = versions[-1]
    then = [v for v in versions if (v.updated_at or v.created_at) <= moment] or versions[:1]
    chosen = then[-1]
    if chosen is current:
        return current
    return chosen.model_copy(update={"valid_until": current.valid_until, "superseded_by": current.superseded_by,
                                     "superseded_reason": current.superseded_reason})


def retired(memory: Memory, now: datetime, reason: str) -> Memory:
    """``memory`` when what it was read from is gone (a notes chunk deleted): valid until ``now``, no successor,
    version + 1; reads leave it out, its history stays."""
    return memory.model_copy(update={"valid_until": max(now, memory.valid_from or memory.created_at),
                                     "superseded_reason": reason, "version": memory.version + 1,
                                     "updated_at": now})


def reinstated(memory: Memory) -> Memory:
    """``memory`` current again (its successor is forgotten or purged)."""
    return memory.model_copy(update={"valid_until": None, "superseded_by": None, "superseded_reason": None})


def validated(memory: Memory, now: datetime) -> Memory:
    """``memory`` after ``validate``: the decay clock restarts, confidence + 0.05 (at most 1)."""
    return memory.model_copy(update={"validated_at": now,
                                     "confidence": min(1.0, round(memory.confidence + VALIDATION_BOOST, 10))})


__all__ = ["DEFAULT_HALF_LIFE", "DEFAULT_MIN_CONFIDENCE", "DEFAULT_TTL", "NEVER_EXPIRES", "Policy", "Supersession",
           "changes", "check_replacement", "check_successor", "check_supersedable", "expired", "prune_candidates",
           "prune_rule", "reinstated", "retired", "successor_entry", "version_at", "superseded", "supersession", "updated",
           "validated"]
