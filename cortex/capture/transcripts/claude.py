"""Claude Code transcripts (``~/.claude/projects/<project>/<session>.jsonl``), one JSON object a line.

Lines of ``"type": "user"`` or ``"assistant"`` carry ``message: {role, content}``, where content is a string or
a list of blocks: ``text``, ``thinking`` (skipped), ``tool_use`` ``{id, name, input}`` and ``tool_result``
``{tool_use_id, content: str | [{type: text, text}], is_error}``. ``isSidechain`` marks a subagent's line,
``agentId`` names the subagent, ``sessionId`` and ``timestamp`` are on every line. Other line types (``summary``,
``system``, ``file-history-snapshot``, ...) are not conversation and are ignored. A subagent's own transcript
(``<session>/subagents/agent-<id>.jsonl``) has the same format, every line a sidechain one. A session exported
whole as one JSON object with these lines under ``loglines`` (:func:`is_export`) is read whole.

``Agent`` (``Task`` before Claude Code 2.1) tool calls start subagents; each is collected as a
:class:`SubagentCall` and paired with its result by ``tool_use_id``. Claude Code 2.1 runs them in the background by
default: the call's ``tool_result`` then only says it was launched (``toolUseResult`` ``{"isAsync": true, "status":
"async_launched", "agentId", "outputFile", ...}``, its text "Async agent launched successfully. agentId: ...
output_file: ..."), which is neither an outcome nor anything worth reading (it is kept out of the messages); the
result arrives later as a ``<task-notification>`` (``<task-id>`` the agent's id, ``<tool-use-id>``, ``<status>``,
``<summary>``, ``<result>``, ``<usage>``), carried by a ``queue-operation`` line (``content``), an ``attachment``
line (``attachment.prompt``) and, once delivered to the model, a user line: each carrier is read, the user line as
the call's result message.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from cortex import jsonsafe
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
#: What a background subagent's launch result begins with (its text; the structured ``toolUseResult`` is read first).
ASYNC_LAUNCHED = ("Async agent launched",)
#: The message a background launch is read as: not its metadata (ids, a temporary file's path).
LAUNCHED_TEXT = "[subagent launched in the background; its result arrives as a task notification]"
#: ``<status>`` values of a task notification for a task that did not complete.
FAILED_STATUSES = ("failed", "error", "killed", "stopped", "cancelled", "canceled", "aborted", "timeout")
NOTIFICATION = "<task-notification>"
_RESULT_END = re.compile(r"</result>\s*(?:<usage>(?:(?!</?result>).)*?</usage>\s*)?(?:</task-notification>|\Z)",
                         re.DOTALL)
_TAG = re.compile(r"<(task-id|tool-use-id|status|summary)>(.*?)</\1>", re.DOTALL)


def notification(text: str) -> dict[str, str] | None:
    """The fields of a ``<task-notification>`` (``task-id``, ``tool-use-id``, ``status``, ``summary``, ``result``,
    each stripped), or None when ``text`` is not one."""
    text = text.lstrip()
    if not text.startswith(NOTIFICATION):
        return None
    fields: dict[str, str] = {}
    start = text.find("<result>")
    # a result may quote tags of its own (</result>, </task-notification>): it ends where the notification does
    closing = _RESULT_END.search(text, start) if start >= 0 else None
    if closing is not None:
        fields["result"] = text[start + len("<result>"):closing.start()].strip()
        text = text[:start] + text[closing.start() + len("</result>"):]
    end = text.find("</task-notification>")
    body = text[len(NOTIFICATION):end if end >= 0 else len(text)]
    for tag, value in _TAG.findall(body):
        fields.setdefault(tag, value.strip())
    return fields


def _launch(entry: dict[str, Any], text: str) -> dict[str, Any] | None:
    """What a subagent call's result says of its launch in the background (``toolUseResult``, or the launch text
    or JSON), or None when it is the subagent's answer."""
    structured = entry.get("toolUseResult")
    if isinstance(structured, dict) and (structured.get("isAsync") is True or structured.get("status") == "async_launched"):
        return structured
    stripped = text.lstrip()
    if stripped.startswith(ASYNC_LAUNCHED):
        found = re.search(r"agentId:\s*([A-Za-z0-9_-]+)", stripped)
        return {"agentId": found.group(1)} if found else {}
    if stripped.startswith("{") and "async_launched" in stripped:
        try:
            value = jsonsafe.loads(stripped)
        except ValueError:
            return None
        if isinstance(value, dict) and (value.get("isAsync") is True or value.get("status") == "async_launched"):
            return value
    return None


def is_export(document: Any) -> bool:
    """Whether a JSON document is a whole session exported as one object, its transcript lines under ``loglines``
    (the ``claude-code-transcripts`` project's session JSON)."""
    lines = document.get("loglines") if isinstance(document, dict) else None
    return isinstance(lines, list) and any(looks_like(e) or isinstance(e, dict) and e.get("type") in MESSAGE_TYPES
                                           for e in lines[:32])


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
        self.task_id: str | None = None  # a background launch's agent id: what its notification names


class Parser(LineParser):
    """Reads Claude Code lines into messages and subagent calls."""

    def __init__(self, problems: Problems) -> None:
        super().__init__(problems)
        self._tools: dict[str, str] = {}  # tool_use id -> tool name
        self._calls: dict[str, _Call] = {}
        self._orphans: dict[str, _Call] = {}  # notifications of calls read in an earlier part

    def feed(self, entry: Any, where: str) -> None:
        if not isinstance(entry, dict):
            self.problems.add(f"{where}: not a JSON object")
            return
        if isinstance(entry.get("loglines"), list) and "type" not in entry:  # an export on one line (is_export)
            for number, line in enumerate(entry["loglines"], 1):
                self.feed(line, f"{where}, logline {number}")
            return
        if self.session_id is None:
            self.session_id = string(entry.get("sessionId"))
        kind = entry.get("type")
        if kind not in MESSAGE_TYPES:
            self._carried_notification(entry)
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
        if role == "user" and self._notified(content, add):
            return
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
                self._tool_result(block, add, entry)
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

    def _tool_result(self, block: dict[str, Any], add: _Add, entry: dict[str, Any]) -> None:
        tool_id = string(block.get("tool_use_id"))
        text = text_of(block.get("content"))
        if tool_id in self._calls:
            pending = self._calls[tool_id]
            launched = _launch(entry, text) if block.get("is_error") is not True else None
            if launched is not None:  # not an outcome: that arrives as a task notification
                pending.task_id = string(launched.get("agentId"))
                add(LAUNCHED_TEXT, "tool_result", self._tools.get(tool_id), "tool")
                return
            pending.result_text = text
            pending.is_error = block.get("is_error") is True
        add(text, "tool_result", self._tools.get(tool_id) if tool_id else None, "tool")

    def _notified(self, content: Any, add: _Add) -> bool:
        """Whether a user line is a task notification: then its result is the call's, read as its result message."""
        text = content if isinstance(content, str) else text_of(content) if isinstance(content, list) else ""
        fields = notification(text) if NOTIFICATION in text[:200] else None
        if fields is None:
            return False
        call = self._notify(fields)
        shown = fields.get("result") or fields.get("summary") or ""
        if shown.strip():
            add(shown, "tool_result", self._tools.get(call.tool_use_id, "Agent") if call else "Agent", "tool")
        return True

    def _carried_notification(self, entry: dict[str, Any]) -> None:
        """A task notification queued (``queue-operation`` ``enqueue``) or attached (``attachment``) before it is
        delivered as a user line (which a session that ends first never gets): the outcome, not a message."""
        attachment = entry.get("attachment")
        carried = entry.get("content") if entry.get("type") == "queue-operation" else \
            attachment.get("prompt") if isinstance(attachment, dict) else None
        if isinstance(carried, str) and NOTIFICATION in carried[:200]:
            fields = notification(carried)
            if fields is not None:
                self._notify(fields)

    def _notify(self, fields: dict[str, str]) -> _Call | None:
        """Record a notification's outcome on its call (by tool use id, else by the agent id of its launch); one
        whose call is not in what was read is kept for the caller to match. Every carrier of one notification
        says the same: recording it again changes nothing."""
        tool_id, task_id = fields.get("tool-use-id") or "", fields.get("task-id") or ""
        call = self._calls.get(tool_id) or next(
            (c for c in self._calls.values() if task_id and c.task_id == task_id), None)
        if call is None:
            key = tool_id or f"task:{task_id}"
            if not (tool_id or task_id):
                return None
            call = self._orphans.setdefault(key, _Call(tool_id, {}))
            call.agent_type, call.task_id = "", task_id or None
        call.result_text = fields.get("result") or fields.get("summary") or ""
        call.is_error = fields.get("status", "").lower() in FAILED_STATUSES
        return call

    def subagent_calls(self) -> list[SubagentCall]:
        return [SubagentCall(c.tool_use_id, c.agent_type, c.description, c.prompt, c.result_text, c.is_error,
                             c.task_id) for c in [*self._calls.values(), *self._orphans.values()]]
