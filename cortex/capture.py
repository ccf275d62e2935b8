"""Capture at agent end: memories from marker lines in what the agent wrote.

A marker line starts (after optional list bullets, quote marks or bold) with ``LEARNED:``, ``INSIGHT:``,
``PATTERN:``, ``CONVENTION:`` or ``DECISION:`` in any case; its text runs to the end of the line.
"""

from __future__ import annotations

import re

from cortex.model import MemoryType

MARKERS = {
    "learned": MemoryType.INSIGHT,
    "insight": MemoryType.INSIGHT,
    "pattern": MemoryType.PATTERN,
    "convention": MemoryType.CONVENTION,
    "decision": MemoryType.DECISION,
}
_MARKER_LINE = re.compile(
    r"^[ \t>]*(?:[-*+][ \t]+|\d+[.)][ \t]+)?(?:\*\*|__)?[ \t]*"
    r"(" + "|".join(MARKERS) + r")[ \t]*(?:\*\*|__)?[ \t]*:[ \t]*(?:\*\*|__)?[ \t]*(.*?)[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)


def extract(output: str) -> list[tuple[MemoryType, str]]:
    """The (type, text) of every marker line with text, in order, without repeats."""
    found: dict[tuple[MemoryType, str], None] = {}
    for match in _MARKER_LINE.finditer(output):
        text = match.group(2).strip()
        if text:
            found[(MARKERS[match.group(1).lower()], text)] = None
    return list(found)
