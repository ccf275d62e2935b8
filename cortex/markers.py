"""Marker lines: the learnings an agent writes into its output for Cortex to keep.

A marker line starts (after optional list bullets, numbering, quote marks or bold) with ``LEARNED:``,
``INSIGHT:``, ``PATTERN:``, ``CONVENTION:`` or ``DECISION:``, in upper case; its text runs to the end of the
line. Upper case only, so prose is not captured: a review's "**Decision:** request changes" is not a decision.
``SUPERSEDES <id>: text`` replaces the memory ``<id>`` by ``text`` (the angle brackets are optional).
Lines inside a fenced code block (```` ``` ```` or ``~~~``, CommonMark: closed by a fence of the same character at
least as long, or by the end of the text) are code an agent quotes, never its learnings: they are not read. A
fence stays open across the text parts of one message (:func:`marker_lines_of_parts`: a transcript splits one
answer into several text blocks or lines of the same message id), and closes at the end of the message.
This module has no dependencies: the hooks find marker lines in a transcript before sending anything.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: Marker -> memory type (``cortex.model.MemoryType`` values).
MARKERS = {
    "LEARNED": "insight",
    "INSIGHT": "insight",
    "PATTERN": "pattern",
    "CONVENTION": "convention",
    "DECISION": "decision",
}
_MARKER_LINE = re.compile(
    r"^[ \t>]*(?:[-*+][ \t]+|\d+[.)][ \t]+)?(?:\*\*|__)?[ \t]*"
    r"(" + "|".join(MARKERS) + r")[ \t]*(?:\*\*|__)?[ \t]*:[ \t]*(?:\*\*|__)?[ \t]*(.*?)[ \t]*$",
    re.MULTILINE,
)


_SUPERSEDES_LINE = re.compile(
    r"^[ \t>]*(?:[-*+][ \t]+|\d+[.)][ \t]+)?(?:\*\*|__)?[ \t]*SUPERSEDES[ \t]+<?([A-Za-z0-9_-]{1,128})>?"
    r"[ \t]*(?:\*\*|__)?[ \t]*:[ \t]*(?:\*\*|__)?[ \t]*(.*?)[ \t]*$",
    re.MULTILINE,
)


#: An opening or closing code fence: up to three spaces of indent (inside quotes or list markers too), then three
#: or more backticks or tildes.
_FENCE = re.compile(r"^[ \t>]*(?:[-*+][ \t]+|\d+[.)][ \t]+)?[ ]{0,3}(`{3,}|~{3,})(.*)$")


def outside_code(output: str) -> str:
    """``output`` with every line of a fenced code block (its fences included) blanked, line numbers kept."""
    if "```" not in output and "~~~" not in output:
        return output
    lines = output.split("\n")
    fence: str | None = None
    for k, line in enumerate(lines):
        match = _FENCE.match(line)
        if fence is None:
            if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):  # info string has no backtick
                fence = match.group(1)
                lines[k] = ""
        else:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) \
                    and not match.group(2).strip():
                fence = None
            lines[k] = ""
    return "\n".join(lines)


def supersessions(output: str) -> list[tuple[str, str]]:
    """The (memory id, new text) of every ``SUPERSEDES <id>: text`` line with text outside code blocks, in order,
    without repeats."""
    found: dict[tuple[str, str], None] = {}
    for match in _SUPERSEDES_LINE.finditer(outside_code(output)):
        text = match.group(2).strip()
        if text:
            found[(match.group(1), text)] = None
    return list(found)


def extract(output: str) -> list[tuple[str, str]]:
    """The (memory type, text) of every marker line with text outside code blocks, in order, without repeats."""
    found: dict[tuple[str, str], None] = {}
    for match in _MARKER_LINE.finditer(outside_code(output)):
        text = match.group(2).strip()
        if text:
            found[(MARKERS[match.group(1)], text)] = None
    return list(found)


def marker_lines(output: str) -> str:
    """Only the marker lines of ``output`` (what capture would read from it), one per line."""
    output = outside_code(output)
    lines = sorted((m.start(), m.group(0).strip()) for pattern in (_MARKER_LINE, _SUPERSEDES_LINE)
                   for m in pattern.finditer(output) if m.group(2).strip())
    return "\n".join(line for _, line in lines)


def marker_lines_of_parts(parts: Iterable[tuple[bool, str | None, str]]) -> str:
    """The marker lines of an agent's output given as parts (``(is its text, the message it belongs to, text)``,
    in order), message by message: the text parts of one message in a row (the same message id: a transcript
    splits one answer into several text blocks or lines) are read as one text, so a code fence opened in one
    hides the marker lines of the next; a part without a message id is a message of its own, and a fence left
    open closes with its message."""
    runs: list[list[str]] = []
    last: str | None = None
    for is_text, message, text in parts:
        if is_text and message is not None and message == last and runs:
            runs[-1].append(text)
        elif is_text:
            runs.append([text])
        last = message if is_text else None
    return "\n".join(filter(None, (marker_lines("\n".join(run)) for run in runs)))
