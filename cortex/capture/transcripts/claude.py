"""Claude Code transcripts (``~/.claude/projects/<project>/<session>.jsonl``), one JSON object a line.

Lines of ``"type": "user"`` or ``"assistant"`` carry ``message: {role, content}``, where content is a string or
a list of blocks: ``text``, ``thinking`` (skipped), ``tool_use`` ``{id, name, input}`` and ``tool_result``
``{tool_use_id, content: str | [{type: text, text}], is_error}``. ``isSidechain`` marks a subagent's line,
``agentId`` names the subagent, ``sessionId`` and ``timestamp`` are on every line. Other line types (``summary``,
``system``, ``file-history-snapshot``, ...) are not conversation and are ignored. A subagent's own transcript
(``<session>/subagents/agent-<id>.jsonl``) has the same format, every line a sidechain one.

``Agent`` (``Task`` before Claude Code 2.1) tool calls start subagents; each is collected as a
:class:`SubagentCall` and paired with its result by ``tool_use_id``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cortex.capture.transcripts._common import Kind, LineParser, Message, Problems, Role, SubagentCall, as_json, \
    string, text_of

#: Adds one message of the line being read: (text, kind, tool, role).
_Add = Callable[[str, Kind, str | None, Role], None]

#: Line types that hold a conversation message.
MESSAGE_TYPES = ("user", "assistant")
#: Line types of Claude Code transcripts (any of them, with the keys below, identifies the format).
LINE_TYPES = ("user", "assistant", "summary", "system")
#: Keys a Claude Code line carries beside its type.
LINE_KEYS = ("message", "uuid", "sessionId", "leafUuid")
#: The tools Claude Code starts subagents with (``Task`` in older versions).
SUBAGENT_TOOLS = ("Agent", "Task")


#: Bookkeeping line types only Claude Code writes (a session may begin with them).
OTHER_TYPES = ("file-history-snapshot", "queue-operation")


def looks_like(entry: Any) -> bool:
    """Whether one JSON line is a Claude Code transcript line."""
    if not isinstance(entry, dict):
        return False
    kind = entry.get("type")
    return (kind in LINE_TYPES and any(key in entry for key in LINE_KEYS)) or kind in OTHER_TYPES


class _Call:
    """A subagent call while its result is looked for."""

    def __init__(self, tool_use_id: str, call: dict[str, Any]) -> None:
        self.tool_use_id = tool_use_id
        self.agent_type = string(call.get("subagent_type")) or "general-purpose"  # Claude Code's default
        self.description = string(call.get("description")) or ""
        self.prompt = string(call.get("prompt")) or ""
        self.result_text: str | None = None
        self.is_error = False


class Parser(LineParser):
    """Reads Claude Code lines into messages and subagent calls."""

    def __init__(self, problems: Problems) -> None:
        super().__init__(problems)
        self._tools: dict[str, str] = {}  # tool_use id -> tool name
        self._calls: dict[str, _Call] = {}

    def feed(self, entry: Any, where: str) -> None:
        if not isinstance(entry, dict):
            self.problems.add(f"{where}: not a JSON object")
            return
        if self.session_id is None:
            self.session_id = string(entry.get("sessionId"))
        kind = entry.get("type")
        if kind not in MESSAGE_TYPES:
            return  # summary, system, file-history-snapshot, queue-operation...: not conversation
        message = entry.get("message")
        if not isinstance(message, dict):
            self.problems.add(f"{where}: a {kind} line without a message")
            return
        role: Role = "assistant" if message.get("role", kind) == "assistant" else "user"
        sidechain = entry.get("isSidechain") is True
        agent_id = string(entry.get("agentId"))
        timestamp = string(entry.get("timestamp"))
        # isMeta lines are text Claude Code injects (command caveats, skill bodies), a compact summary retells
        # earlier turns: neither is something the user or the agent said now. Tool results in them still count.
        injected = entry.get("isMeta") is True or entry.get("isCompactSummary") is True

        message_id = string(message.get("id"))

        def add(text: str, kind: Kind = "text", tool: str | None = None, as_role: Role = role) -> None:
            self.messages.append(Message(as_role, text, kind, tool, sidechain, agent_id, timestamp, message_id))

        content = message.get("content")
        if isinstance(content, str):
            if content.strip() and not injected:
                add(content)
            return
        if not isinstance(content, list):
            self.problems.add(f"{where}: a message whose content is neither text nor a list of blocks")
            return
        for block in content:
            if not isinstance(block, dict):
                continue
            block_type = block.get("type")
            if block_type == "text":
                text = block.get("text")
                if isinstance(text, str) and text.strip() and not injected:
                    add(text)
            elif block_type == "tool_use":
                self._tool_use(block, add)
            elif block_type == "tool_result":
                self._tool_result(block, add)
            # thinking, redacted_thinking, image, document...: not text of the conversation

    def _tool_use(self, block: dict[str, Any], add: _Add) -> None:
        name = string(block.get("name"))
        tool_id = string(block.get("id"))
        call = block.get("input")
        if tool_id and name:
            self._tools[tool_id] = name
        if tool_id and name in SUBAGENT_TOOLS and isinstance(call, dict):
            self._calls[tool_id] = _Call(tool_id, call)
        add(as_json(call if call is not None else {}), "tool_use", name, "assistant")

    def _tool_result(self, block: dict[str, Any], add: _Add) -> None:
        tool_id = string(block.get("tool_use_id"))
        text = text_of(block.get("content"))
        if tool_id in self._calls:
            pending = self._calls[tool_id]
            pending.result_text = text
            pending.is_error = block.get("is_error") is True
        add(text, "tool_result", self._tools.get(tool_id) if tool_id else None, "tool")

    def subagent_calls(self) -> list[SubagentCall]:
        return [SubagentCall(c.tool_use_id, c.agent_type, c.description, c.prompt, c.result_text, c.is_error)
                for c in self._calls.values()]
