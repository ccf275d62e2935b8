"""The marker channel: at agent end, the marker lines of :mod:`cortex.markers` in what the agent wrote become
memories (source ``agent_end``), their secrets redacted first."""

from __future__ import annotations

import logging
from collections import Counter
from datetime import datetime

from cortex import markers, notices
from cortex.capture.redact import Redactor
from cortex.capture.scrub import ONLY_SECRET, only_secret
from cortex.errors import InvalidInputError
from cortex.memories import MemoryRepository
from cortex.model import Memory, MemoryType, Scope, Source
from cortex.validation import Expiry, memory_from_entry

log = logging.getLogger("cortex")


def extract(output: str) -> list[tuple[MemoryType, str]]:
    """The (type, text) of every marker line with text, in order, without repeats."""
    return [(MemoryType(kind), text) for kind, text in markers.extract(output)]


def supersessions(output: str) -> list[tuple[str, str]]:
    """The (memory id, new text) of every ``SUPERSEDES <id>: text`` line, in order, without repeats."""
    return markers.supersessions(output)


def capture(memories: MemoryRepository, scope: Scope, output: str, project: str, now: datetime,
            expiry: Expiry | None = None, redactor: Redactor | None = None,
            redacted: Counter[str] | None = None) -> list[Memory]:
    """Store the marker lines of ``output`` in ``scope`` (source ``agent_end``, expiring by ``expiry``), their
    secrets replaced by ``redactor`` first (counted into ``redacted`` by rule); content already stored there for
    ``project`` is touched instead. Returns the memories stored or refreshed, in the order of the output. Marker
    lines whose text is not valid content (e.g. over 64 KiB) are skipped and logged."""
    with memories.lock:
        fresh: list[Memory] = []
        order: list[tuple[str, Memory | None]] = []
        seen: set[str] = set()
        for memory_type, raw in extract(output):
            text = redactor.scrub(raw, redacted if redacted is not None else Counter()) if redactor else raw
            if text in seen:
                continue
            if only_secret(text):  # nothing left but a placeholder: not a learning (the gate's only-a-secret)
                notices.notice(f"{scope}: dropped a marker line that held little more than a secret "
                               f"({ONLY_SECRET}): {text[:80]!r}")
                continue
            seen.add(text)
            try:
                memory = memory_from_entry(scope.name, {"content": text, "type": memory_type, "project": project,
                                                        "source": Source.AGENT_END}, now, expiry)
            except InvalidInputError as exc:
                log.warning("%s: skipped a marker line: %s", scope, exc)
                continue
            existing = memories.find_content(scope, text, project, now)
            if existing:
                order.append((existing[0], None))
            else:
                fresh.append(memory)
                order.append((memory.id, memory))
        memories.add(scope, fresh)
        touched = {m.id: m for m in memories.touch(scope, [i for i, m in order if m is None], now)}
        return [m if m is not None else touched[i] for i, m in order if m is not None or i in touched]
