"""The shapes of agent names and memory ids, checked by every surface (a light module: the client checks
names before sending, without importing the engine's models)."""

from __future__ import annotations

import re
from typing import Any

from cortex.errors import InvalidInputError

AGENT_NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
MEMORY_ID_RE = re.compile(r"[A-Za-z0-9_-]{1,128}")


def check_agent_name(name: Any) -> str:
    """Return ``name`` if it is a valid agent name, else raise :class:`InvalidInputError`."""
    if not isinstance(name, str) or not AGENT_NAME_RE.fullmatch(name):
        raise InvalidInputError(
            "agent", f"invalid agent name {name!r}: use 1-64 of a-z, 0-9, '_' and '-', starting with a letter or digit"
        )
    return name


def is_memory_id(value: Any) -> bool:
    """True when ``value`` has the shape of a Cortex memory id."""
    return isinstance(value, str) and MEMORY_ID_RE.fullmatch(value) is not None
