"""The ``<agent-memory>`` block injected into an agent's prompt."""

from __future__ import annotations

import re
from collections.abc import Sequence

from cortex.model import Memory

OPEN_TAG = "<agent-memory>"
CLOSE_TAG = "</agent-memory>"
# Anything that a prompt parser could read as the block's own tags, with any spacing or case.
_TAG_LIKE = re.compile(r"<(\s*/?\s*agent-memory)", re.IGNORECASE)


def neutralise(text: str) -> str:
    """Make text that could close or forge the block inert (``<`` of a block tag becomes ``&lt;``)."""
    return _TAG_LIKE.sub(r"&lt;\1", text)


def render_line(memory: Memory) -> str:
    """``- [type] content``, ``- [type] (team:backend) content`` for a shared memory; further lines of the
    content are indented continuation lines."""
    first, *rest = neutralise(memory.content).strip("\n").splitlines() or [""]
    shared = f"({memory.scope}) " if memory.scope != "agent" else ""
    lines = [f"- [{memory.type.value}] {shared}{first}"]
    lines.extend(f"  {line}" for line in rest)
    return "\n".join(lines)


def fit(memories: Sequence[Memory], max_chars: int | None) -> list[Memory]:
    """The longest prefix of ``memories`` (best first) whose block stays within ``max_chars``: the
    lowest-ranked memories are dropped first."""
    if max_chars is None:
        return list(memories)
    size = len(OPEN_TAG) + len(CLOSE_TAG) + 1
    kept: list[Memory] = []
    for memory in memories:
        size += len(render_line(memory)) + 1
        if size > max_chars:
            break
        kept.append(memory)
    return kept


def render(memories: Sequence[Memory], max_chars: int | None = None) -> str:
    """The block for ``memories`` in the order given (best first), or "" when none fits."""
    kept = fit(memories, max_chars)
    if not kept:
        return ""
    return "\n".join([OPEN_TAG, *(render_line(m) for m in kept), CLOSE_TAG])
