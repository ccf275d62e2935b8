"""The values every transcript reader produces (:class:`Message`, :class:`SubagentCall`, :class:`Transcript`)
and the small helpers the format modules share. The package re-exports the public names; this module exists so
that the format modules and the package do not import each other."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["user", "assistant", "tool"]
Kind = Literal["text", "tool_use", "tool_result"]

#: How many problems a transcript lists one by one; the rest are counted.
MAX_PROBLEMS = 20


@dataclass(frozen=True)
class Message:
    """One message of a session, whatever the format it was read from.

    ``tool`` names the tool of a ``tool_use`` or ``tool_result`` when it is known (a result whose call was
    read in an earlier part of the transcript has none). ``sidechain`` marks a Claude Code subagent's line
    (``"isSidechain": true``), ``agent_id`` the subagent that wrote it when the line says, ``message_id`` the
message it is a part of."""

    role: Role
    text: str
    kind: Kind = "text"
    tool: str | None = None
    sidechain: bool = False
    agent_id: str | None = None
    timestamp: str | None = None
    #: the id of the message this is a part of, when the format says (Claude Code writes each text block or
    #: tool call of one answer on a line of its own, with the answer's id)
    message_id: str | None = None


@dataclass(frozen=True)
class SubagentCall:
    """A Claude Code ``Agent``/``Task`` tool call: the subagent it started and what came back.

    ``result_text`` is the flattened text of the matching ``tool_result`` (None when the result is not in what
    was read); ``is_error`` is the result's ``is_error``. A call launched in the background (Claude Code 2.1's
    default) gets its result from the ``<task-notification>`` that arrives later; ``task_id`` is the id that
    notification names it by (the agent's id). A notification whose call was read in an earlier part of the
    transcript is a call with an empty ``agent_type`` (the reader of that part can match it by ``tool_use_id`` or
    ``task_id``)."""

    tool_use_id: str
    agent_type: str
    description: str
    prompt: str
    result_text: str | None = None
    is_error: bool = False
    task_id: str | None = None


@dataclass
class Transcript:
    """What one :func:`cortex.capture.transcripts.read` found.

    ``end`` is the byte offset where the last complete line (or record) read ends: the next read starts there.
    ``problems`` says what was skipped and why (the first :data:`MAX_PROBLEMS`, then a count)."""

    format: str
    messages: list[Message]
    end: int
    session_id: str | None = None
    problems: list[str] = field(default_factory=list)
    subagent_tasks: list[SubagentCall] = field(default_factory=list)


class Problems:
    """The problems of one read: the first :data:`MAX_PROBLEMS` in full, the others counted."""

    def __init__(self) -> None:
        self.listed: list[str] = []
        self.more = 0

    def add(self, problem: str) -> None:
        if len(self.listed) < MAX_PROBLEMS:
            self.listed.append(problem)
        else:
            self.more += 1

    def result(self) -> list[str]:
        """The listed problems, and one line counting the rest."""
        return self.listed + ([f"... and {self.more} more problems"] if self.more else [])


class LineParser:
    """A reader of one JSON-lines format: fed each line's JSON value in order, it collects the messages."""

    def __init__(self, problems: Problems) -> None:
        self.problems = problems
        self.messages: list[Message] = []
        self.session_id: str | None = None

    def feed(self, entry: Any, where: str) -> None:
        """Take one line's JSON value; ``where`` names the line in problems."""
        raise NotImplementedError

    def finish(self) -> None:
        """Called once after the last line."""

    def subagent_calls(self) -> list[SubagentCall]:
        """The subagent calls found (Claude Code only)."""
        return []


def text_of(value: Any, *, joiner: str = "\n") -> str:
    """The text of a content value: a string, or a list of blocks whose ``text`` fields are joined (blocks of
    type ``text``, ``input_text`` or ``output_text``; an image is ``[image]``; other blocks are left out)."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        return ""
    parts: list[str] = []
    for block in value:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            kind = block.get("type")
            if kind in ("text", "input_text", "output_text", None) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif kind in ("image", "input_image"):
                parts.append("[image]")
    return joiner.join(p for p in parts if p)


def as_json(value: Any) -> str:
    """``value`` as compact JSON text (a tool call's input); a string is kept as it is."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return str(value)


def string(value: Any) -> str | None:
    """``value`` when it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None
