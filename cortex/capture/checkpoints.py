"""How far each transcript has been captured, per agent: what makes transcript capture incremental and
idempotent (running it twice stores nothing new).

One JSON file in the store's state directory (``capture.json``), keyed by agent and the transcript's real path.
Each entry has two offsets, because the two halves of a capture fail apart: ``markers`` (the marker lines,
stored at once) and ``llm`` (what the extractor has read: a failed call leaves it where it was, so the next run
retries that part). An entry is written only after what it covers is stored: a process killed in between reads
the part again, and stores nothing twice (content already stored is confirmed, not repeated). A transcript that
shrank (rewritten) is read from its start again.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from cortex import jsonsafe

#: The most entries kept (the oldest go first).
MAX_ENTRIES = 10_000


class Checkpoints:
    """The capture offsets of the transcripts read for a store (in memory when it has no state directory)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()

    @staticmethod
    def key(agent: str, transcript: str) -> str:
        return f"{agent}\n{transcript}"

    def _read(self) -> dict[str, Any]:
        if self.path is None:
            return getattr(self, "_memory", {})
        from cortex.files import read_regular

        try:
            data = jsonsafe.loads(read_regular(self.path, 64 * 1024 * 1024))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def transcripts(self, agent: str) -> list[tuple[str, str | None]]:
        """The transcripts read for ``agent``: (real path, the session id the read found), oldest entry first."""
        found = []
        for key, entry in self._read().items():
            name, _, path = key.partition("\n")
            if name == agent and path:
                session = entry.get("session") if isinstance(entry, dict) else None
                found.append((path, session if isinstance(session, str) else None))
        return found

    def session(self, agent: str, transcript: str) -> str | None:
        """The session id an earlier read of ``transcript`` found (a Codex file names it on its first line only)."""
        entry = self._read().get(self.key(agent, transcript))
        value = entry.get("session") if isinstance(entry, dict) else None
        return value if isinstance(value, str) else None

    def get(self, agent: str, transcript: str) -> dict[str, int]:
        """The offsets (``markers``, ``llm``, and the ``size`` last seen) of ``agent`` in ``transcript``: zeros
        for one never read, or one that is now shorter than what was read (it was rewritten)."""
        entry = self._read().get(self.key(agent, transcript))
        offsets = {name: entry.get(name, 0) if isinstance(entry, dict) and isinstance(entry.get(name, 0), int)
                   else 0 for name in ("markers", "llm", "size")}
        try:
            size = os.path.getsize(transcript)
        except OSError:
            size = 0
        if offsets["size"] > size:
            return {"markers": 0, "llm": 0, "size": 0}
        return offsets

    def set(self, agent: str, transcript: str, *, session: str | None = None, **offsets: int) -> None:
        """Record new offsets of ``agent`` in ``transcript`` (the others kept), and the session it records."""
        with self._lock:
            data = self._read()
            key = self.key(agent, transcript)
            entry = dict(data.pop(key, None) or {})
            entry.update(offsets)
            if session:
                entry["session"] = session
            entry["size"] = max(entry.get("markers", 0), entry.get("llm", 0))
            data[key] = entry
            while len(data) > MAX_ENTRIES:
                data.pop(next(iter(data)))
            if self.path is None:
                self._memory = data
                return
            from cortex.files import atomic_write

            atomic_write(self.path, json.dumps(data))
