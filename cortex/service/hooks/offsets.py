"""The hooks' own record of a project's sessions (``.cortex/state/transcripts.json``): how far each transcript's
marker lines have been captured, and which agents of which sessions were shown a block (and the agent their name
stood for then).

It is the hook's, not the store's: a hook reads it before it reaches the store (whether to read a transcript from
its start, whether a start repeats one, whether a used signal is worth a request), and a running server owns the
store's state directory. :mod:`cortex.state` says how it differs from the store's ``capture.json`` and
``shown.json``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from cortex import jsonsafe

#: The most sessions whose shown blocks are remembered.
MAX_SHOWN = 256


class Offsets:
    """How far each transcript has been captured: a Stop hook runs after every turn, and re-reading the whole
    session would touch every earlier learning again each time. Keyed by the adapter's reading key (the path, or
    the path and ``#sidechain`` / ``#<agent id>`` for a subagent's lines of its parent's transcript)."""

    def __init__(self, root: Path) -> None:
        self.path = root / ".cortex" / "state" / "transcripts.json"
        from cortex.files import read_regular

        try:
            data = jsonsafe.loads(read_regular(self.path, 16 * 1024 * 1024))
            self.data: dict[str, Any] = data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            self.data = {}

    def get(self, transcript: str, key: str | None = None) -> int:
        """The offset captured up to in ``transcript`` (0 for one never read, or one now shorter: rewritten)."""
        offset = self.data.get(key or transcript, 0)
        try:
            return offset if isinstance(offset, int) and offset <= os.path.getsize(transcript) else 0
        except OSError:
            return 0

    def set(self, transcript: str, offset: int) -> None:
        """Record that ``transcript`` (a reading key) is captured up to ``offset``."""
        self.data[transcript] = offset
        self._save()

    def _save(self) -> None:
        from cortex.files import atomic_write

        atomic_write(self.path, json.dumps(self.data))

    # which agents of which sessions were shown a block: their Stop hooks report what the agent used of it
    @staticmethod
    def _shown_key(agent_type: str, session: str) -> str:
        return f"shown\n{agent_type}\n{session}"

    def shown(self, agent_type: str, session: str | None) -> bool:
        """Whether ``agent_type`` was shown a block in ``session``."""
        if not session:
            return False
        value = self.data.get(self._shown_key(agent_type, session))
        return value == 1 or isinstance(value, str)  # (1: written before the name was kept)

    def shown_as(self, agent_type: str, session: str | None) -> str | None:
        """The declared agent ``agent_type`` stood for when it was shown a block in ``session``, or None."""
        value = self.data.get(self._shown_key(agent_type, session)) if session else None
        return value if isinstance(value, str) and value else None

    def set_shown(self, agent_type: str, session: str, name: str) -> None:
        """Record that ``agent_type`` (standing for the agent ``name``) was shown a block in ``session``."""
        shown = [k for k in self.data if k.startswith("shown\n")]
        for old in shown[:max(0, len(shown) - (MAX_SHOWN - 1))]:  # the latest sessions
            del self.data[old]
        self.data[self._shown_key(agent_type, session)] = name
        self._save()
