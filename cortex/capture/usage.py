"""Usage learned from use: which of the memories shown to an agent its later output actually drew on.

Being shown touches a memory (``usageCount``), whatever the agent does with it. The "used" signal
(``usedCount``) counts only what the agent's later output or tool calls drew on (docs/capture.md, "Usage
learned from use"): :func:`drawn_on`, the detector of :mod:`cortex.capture.applied` (cited, repeated, or
applied in other words; negations and mere mentions refused). :class:`ShownLog` remembers what each agent was
shown, so that its later output can be matched against it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cortex import jsonsafe
from cortex.capture.applied import SEMANTIC_MODELS, Embed, drawn_on, judge

__all__ = ["SEMANTIC_MODELS", "Embed", "ShownLog", "drawn_on", "judge"]


class ShownLog:
    """Which memories each agent was last shown, per session (``(scope key, memory id)`` pairs), so that the
    agent's later output can be matched against them. Kept in memory, and in ``<state>/shown.json`` when the
    store has a state directory: a hook without a server, or a CLI command, opens the store anew each time.
    Bounded: the latest :data:`MAX_SESSIONS` starts."""

    MAX_SESSIONS = 256

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._data: dict[str, list[list[str]]] = {}
        self._loaded = False

    @staticmethod
    def _key(agent: str, session: str | None) -> str:
        return f"{agent} {session or ''}"

    def _load(self) -> None:
        if self._loaded or self.path is None:
            return
        self._loaded = True

        from cortex.files import read_regular

        try:
            data = jsonsafe.loads(read_regular(self.path, 8 * 1024 * 1024))
        except (OSError, ValueError):
            return
        if isinstance(data, dict):
            for key, items in data.items():
                if isinstance(key, str) and isinstance(items, list):
                    self._data.setdefault(key, [list(map(str, i)) for i in items
                                                if isinstance(i, list) and len(i) == 2])

    def record(self, agent: str, session: str | None, shown: Sequence[tuple[str, str]]) -> None:
        """Remember that ``agent`` was shown ``shown`` in ``session`` (replacing an earlier start's)."""
        key = self._key(agent, session)
        self._data.pop(key, None)
        self._data[key] = [[scope, memory_id] for scope, memory_id in shown]
        self._save()

    def add(self, agent: str, session: str | None, shown: Sequence[tuple[str, str]]) -> None:
        """Remember that ``agent`` was also shown ``shown`` in ``session`` (a prompt's memories, beside what its
        start showed)."""
        self._load()
        key = self._key(agent, session)
        have = self._data.pop(key, [])
        known = {(s, i) for s, i in have}
        have.extend([scope, memory_id] for scope, memory_id in shown if (scope, memory_id) not in known)
        self._data[key] = have
        self._save()

    def _save(self) -> None:
        while len(self._data) > self.MAX_SESSIONS:
            self._data.pop(next(iter(self._data)))
        if self.path is not None:
            import json

            from cortex.files import atomic_write

            self._load()
            try:
                atomic_write(self.path, json.dumps(self._data))
            except OSError:
                pass  # the signal is best effort: a start never fails for it

    def shown(self, agent: str, session: str | None) -> list[tuple[str, str]]:
        """What ``agent`` was shown at its latest start in ``session`` (empty when unknown)."""
        key = self._key(agent, session)
        if key not in self._data:
            self._load()
        return [(scope, memory_id) for scope, memory_id in self._data.get(key, [])]
