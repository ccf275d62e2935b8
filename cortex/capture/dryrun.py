"""A capture's dry run (docs/capture.md, "Seeing and undoing a capture"): the capture's steps as they are (the
transcript read from its checkpoint, its marker lines, the model's extraction, redaction and the quality gate)
through a :class:`DryRun` port that answers every write with what it would have written and writes nothing: no
memory stored, confirmed, superseded, touched or marked used, and no checkpoint moved (:class:`FrozenCheckpoints`).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from cortex import config
from cortex.capture import markers as capture_markers
from cortex.capture import tasks as capture_tasks
from cortex.capture.checkpoints import Checkpoints
from cortex.errors import CortexError, InvalidInputError
from cortex.model import Captured, Memory, Page, ReviewItem, SearchResult, Source
from cortex.validation import memory_from_entry

log = logging.getLogger("cortex")


class FrozenCheckpoints(Checkpoints):
    """The checkpoints as they are, read; a dry run's moves are dropped."""

    def set(self, agent: str, transcript: str, *, session: str | None = None, **offsets: int) -> None:
        return None


class DryRun:
    """The facade's capture operations, answering what each would write without writing it (a
    :class:`cortex.capture.pipeline.CapturePort`); :attr:`superseded` collects the ids a run would supersede."""

    def __init__(self, cx: Any) -> None:
        self.cx = cx
        self.superseded: list[str] = []

    # -- reads: as they are -----------------------------------------------------------------------

    def resolve_agent(self, name: str) -> str | None:
        return self.cx.resolve_agent(name)  # type: ignore[no-any-return]

    def list_memories(self, agent: str, *, source: Source | str | None = None, limit: int = 50) -> Page:
        return self.cx.list_memories(agent, source=source, limit=limit)  # type: ignore[no-any-return]

    def search(self, agent: str, query: str, **options: Any) -> SearchResult:
        return self.cx.search(agent, query, **options)  # type: ignore[no-any-return]

    # -- writes: what they would write ------------------------------------------------------------

    def agent_end(self, agent: str, output: str, project: str | None = None) -> Captured:
        """The marker lines' memories: new ones as they would be stored, those already stored as they are (a
        real run touches them), then the memories ``SUPERSEDES`` lines would write."""
        cx = self.cx
        scope, now = cx._scope(agent), cx._clock()
        project = project or cx._agent(agent).settings.project or config.DEFAULT_PROJECT
        redacted: Counter[str] = Counter()
        found: list[Memory] = []
        for memory_type, raw in capture_markers.extract(output):
            text = cx.redactor.scrub(raw, redacted)
            try:
                memory = memory_from_entry(agent, {"content": text, "type": memory_type, "project": project,
                                                   "source": Source.AGENT_END}, now, cx._policy(agent).expires_at)
            except InvalidInputError:
                continue
            existing = cx._memories.find_content(scope, text, project, now)
            found.extend(cx._memories.load(scope, existing[:1]) if existing else [memory])
        for old_id, raw in capture_markers.supersessions(output):
            try:
                old = cx.get(agent, old_id)
                if old is None or old.superseded_by is not None:
                    continue
                found.append(memory_from_entry(agent, {"content": cx.redactor.scrub(raw, redacted),
                                                       "type": old.type, "project": old.project,
                                                       "source": Source.AGENT_END}, now))
                self.superseded.append(old.id)
            except CortexError as exc:
                log.warning("%s: a dry run would skip SUPERSEDES %s: %s", scope, old_id, exc)
        unique = list({m.id: m for m in found}.values())
        return Captured(unique, redacted=dict(redacted))

    def record_use(self, agent: str, output: str, *, session: str | None = None) -> list[Memory]:
        return []

    def record_task(self, agent: str, task: str, output: str = "", status: str = "ok") -> Memory:
        entry = capture_tasks.task_entry(task, output, status)
        entry["content"] = self.cx.redactor.scrub(entry["content"], Counter())
        entry["project"] = self.cx._agent(agent).settings.project or config.DEFAULT_PROJECT
        return self.cx._new_memories(agent, [entry], batch=False)[1][0]  # type: ignore[no-any-return]

    def validate(self, agent: str, memory_id: str) -> Memory:
        memory = self.cx.get(agent, memory_id)
        if memory is None:
            raise InvalidInputError("memory_id", f"no memory {memory_id!r}")
        return memory  # type: ignore[no-any-return]

    def store_many(self, agent: str, entries: Iterable[Mapping[str, Any]]) -> list[Memory]:
        return self.cx._new_memories(agent, list(entries), batch=True)[1]  # type: ignore[no-any-return]

    def hold_memory(self, agent: str, entry: Mapping[str, Any], *, reason: str, actor: str,
                    origin: Mapping[str, Any]) -> ReviewItem:
        """The review item a capture would hold (nothing recorded)."""
        return self.cx._held_item(agent, entry, reason=reason, actor=actor, origin=origin)[1]  # type: ignore[no-any-return]


__all__ = ["DryRun", "FrozenCheckpoints"]
