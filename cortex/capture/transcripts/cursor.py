"""Cursor agent transcripts (``~/.cursor/projects/<workspace slug>/agent-transcripts/<conversation id>/<conversation
id>.jsonl``, a subagent's in ``subagents/<id>.jsonl`` beside it), one JSON object a line.

Not documented by Cursor: the shape observed in ``cursor-agent`` runs (tests/fixtures/harnesses/README.md, section
2; ``tests/fixtures/harnesses/cursor/transcript.agent.jsonl``). A message line is ``{"role": "user" | "assistant",
"message": {"content": [blocks]}}`` with ``text`` blocks and ``tool_use`` ``{name, input}`` blocks; the user's
words are wrapped in ``<user_query>...</user_query>``. ``{"type": "turn_ended", "status"}`` lines end a turn. There
are no timestamps, tool results or session ids in the file (the conversation id is its name).
"""

from __future__ import annotations

import re
from typing import Any

from cortex.capture.transcripts._common import LineParser, Message, as_json, string, text_of

ROLES = ("user", "assistant")
#: The wrapper Cursor puts around the user's words.
_QUERY = re.compile(r"^\s*<user_query>\s*(.*?)\s*</user_query>\s*$", re.DOTALL)


def looks_like(entry: Any) -> bool:
    """Whether one JSON line is a Cursor transcript line."""
    if not isinstance(entry, dict):
        return False
    if entry.get("type") == "turn_ended":
        return True
    return "type" not in entry and entry.get("role") in ROLES and isinstance(entry.get("message"), dict)


class Parser(LineParser):
    """Reads Cursor transcript lines into messages."""

    def feed(self, entry: Any, where: str) -> None:
        if not isinstance(entry, dict):
            self.problems.add(f"{where}: not a JSON object")
            return
        role, message = entry.get("role"), entry.get("message")
        if role not in ROLES or not isinstance(message, dict):
            return  # turn_ended, and lines of kinds not known yet
        content = message.get("content")
        blocks = content if isinstance(content, list) else [content]
        if role == "user":
            said = text_of(blocks)
            matched = _QUERY.match(said)
            said = matched.group(1) if matched else said
            if said.strip():
                self.messages.append(Message("user", said))
            return
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                self.messages.append(Message("assistant", as_json(block.get("input", {})), "tool_use",
                                             string(block.get("name"))))
            else:
                said = text_of([block])
                if said.strip():
                    self.messages.append(Message("assistant", said))
