"""What the session log records and the Sessions screens read (:meth:`cortex.Cortex.sessions`,
:meth:`cortex.Cortex.session_detail`): an agent's sessions, each start's exact block, what it showed and used, what
it created and changed; and how often each memory was shown and used (:meth:`cortex.Cortex.memory_usage`).
Re-exported by :mod:`cortex.model`."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict


class SessionInfo(BaseModel):
    """One session of an agent (:meth:`cortex.Cortex.sessions`): its first start, task, starts, how many memories
    its blocks showed and its output used, how many it created and changed, the transcripts read for it."""

    model_config = ConfigDict(defer_build=True)

    session: str
    agent: str
    started_at: datetime
    task: str | None = None
    starts: int = 0
    shown: int = 0
    used: int = 0
    added: int = 0
    changed: int = 0
    transcripts: list[str] = []


class SessionPage(BaseModel):
    """One page of an agent's sessions, newest first; ``next_cursor`` is None at the end."""

    model_config = ConfigDict(defer_build=True)

    items: list[SessionInfo]
    next_cursor: str | None = None


class SessionStart(BaseModel):
    """One start of a session: the exact block it injected (``cut``: kept shortened), for which task, the ids of
    the memories it showed, and whether they were touched (False: a resumed session's block shown again)."""

    model_config = ConfigDict(defer_build=True)

    at: datetime
    task: str | None = None
    block: str = ""
    cut: bool = False
    touched: bool = True
    shown: list[str] = []


class SessionMemory(BaseModel):
    """A memory a session showed (``used``: why its output drew on it: cited, repeated, applied) or changed
    (``action``: created, update, validate, supersede, prune, forget; when, by whom, an update's content ``before``
    and ``after``). ``content`` is the memory's now (None: it is gone)."""

    model_config = ConfigDict(defer_build=True)

    id: str
    scope: str
    content: str | None = None
    used: str | None = None
    action: str | None = None
    at: datetime | None = None
    by: str | None = None
    before: str | None = None
    after: str | None = None


class SessionDetail(BaseModel):
    """One session of an agent (:meth:`cortex.Cortex.session_detail`): its summary, its starts with their blocks, what
    they showed (and which were used), what it created and changed."""

    model_config = ConfigDict(defer_build=True)

    info: SessionInfo
    starts: list[SessionStart] = []
    shown: list[SessionMemory] = []
    created: list[SessionMemory] = []
    changed: list[SessionMemory] = []

#: The orders of :meth:`cortex.Cortex.memory_usage`.
UsageOrder = Literal["used", "ratio", "shown", "unused"]


class MemoryUsage(BaseModel):
    """How one memory fared in use (:meth:`cortex.Cortex.memory_usage`): ``shown`` (usageCount: shown in a block or
    touched), ``used`` (usedCount: an agent's later output drew on it), ``ratio`` (used / shown; None when never
    shown) and its last use."""

    model_config = ConfigDict(defer_build=True)

    id: str
    content: str
    type: str
    source: str
    shown: int
    used: int
    ratio: float | None
    last_used_at: datetime | None = None
