"""Codex CLI rollout files (``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``), one JSON object a line.

Each line is a ``RolloutLine`` of codex-rs/protocol: ``{"timestamp", "type", "payload"}`` with type
``session_meta`` (``payload.id`` is the session id; ``cwd``, ``cli_version``, ``source``...), ``turn_context``,
``response_item``, ``event_msg`` or ``compacted``. Written against the shapes of Codex CLI 0.128
(codex-rs/protocol/src/models.rs ``ResponseItem``, protocol.rs ``RolloutItem``), also reading older ones:

* ``response_item`` payloads: ``message`` ``{role, content: [{type: input_text | output_text, text}]}``;
  ``function_call`` ``{name, arguments (a JSON string), call_id}``; ``function_call_output`` ``{call_id,
  output}`` where output is a string (before 0.4x often a JSON string ``{"output": ..., "metadata": ...}``) or a
  list of ``input_text``/``input_image`` items; ``custom_tool_call`` ``{name, input, call_id}`` and
  ``custom_tool_call_output`` ``{call_id, output}``; ``local_shell_call`` ``{call_id, action: {type: exec,
  command}}``; ``web_search_call`` ``{action: {type: search, query}}``; ``reasoning`` (skipped).
* Developer and system messages are instructions, not conversation: skipped. So are the parts of user messages
  Codex writes itself (its ``ContextualUserFragment``\\ s: AGENTS.md instructions, ``<environment_context>``,
  ``<skill>``, ``<user_shell_command>``, ``<turn_aborted>``, ``<subagent_notification>``,
  ``<additional_context>``, and the older ``<user_instructions>``).
* ``event_msg`` ``user_message``/``agent_message`` repeat the response items: they are read only from a file
  that has no ``response_item`` lines (early rollouts).
"""

from __future__ import annotations

from typing import Any

from cortex import jsonsafe
from cortex.capture.transcripts._common import LineParser, Message, Problems, as_json, string, text_of

#: Line types of a rollout file.
LINE_TYPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")

#: (start, end) markers of the user-message parts Codex writes itself (codex-rs/core/src/contextual_user_message.rs;
#: compared as Codex does, ignoring case and surrounding white space).
CONTEXT_FRAGMENTS = (
    ("# AGENTS.md instructions for ", "</INSTRUCTIONS>"),
    ("<environment_context>", "</environment_context>"),
    ("<skill>", "</skill>"),
    ("<user_shell_command>", "</user_shell_command>"),
    ("<turn_aborted>", "</turn_aborted>"),
    ("<subagent_notification>", "</subagent_notification>"),
    ("<additional_context>", "</additional_context>"),
    ("<user_instructions>", "</user_instructions>"),
)


def looks_like(entry: Any) -> bool:
    """Whether one JSON line is a Codex rollout line."""
    return isinstance(entry, dict) and entry.get("type") in LINE_TYPES and "payload" in entry


def is_context(text: str) -> bool:
    """Whether a user message part is context Codex added (instructions, environment), not the user's words."""
    stripped = text.strip().lower()
    return any(stripped.startswith(start.lower()) and stripped.endswith(end.lower())
               for start, end in CONTEXT_FRAGMENTS) or stripped.startswith(("<environment_context>",
                                                                             "<user_instructions>"))


def _output_text(output: Any) -> str:
    """The text of a tool output: a string (unwrapping the older ``{"output": ...}`` JSON), a list of content
    items, or the oldest ``{content, success}`` object."""
    if isinstance(output, str):
        if output.startswith('{"output"'):
            try:
                wrapped = jsonsafe.loads(output)
            except ValueError:
                return output
            # {"output": "...", "metadata": {"exit_code", "duration_seconds"}}, as exec tools wrote it
            if isinstance(wrapped, dict) and set(wrapped) == {"output", "metadata"} \
                    and isinstance(wrapped["output"], str):
                return str(wrapped["output"])
        return output
    if isinstance(output, list):
        return text_of(output)
    if isinstance(output, dict) and isinstance(output.get("content"), (str, list)):
        return _output_text(output["content"])
    return ""


class Parser(LineParser):
    """Reads rollout lines into messages; ``response_items`` says the file is known to have response items (the
    event messages then only repeat them)."""

    def __init__(self, problems: Problems, *, response_items: bool = False) -> None:
        super().__init__(problems)
        self._response_items = response_items
        self._events: list[Message] = []  # user_message / agent_message events, used without response items
        self._tools: dict[str, str] = {}  # call_id -> tool name

    def feed(self, entry: Any, where: str) -> None:
        if not isinstance(entry, dict):
            self.problems.add(f"{where}: not a JSON object")
            return
        kind, payload, timestamp = entry.get("type"), entry.get("payload"), string(entry.get("timestamp"))
        if not isinstance(payload, dict):
            if kind in LINE_TYPES:
                self.problems.add(f"{where}: a {kind} line without a payload object")
            return
        if kind == "session_meta":
            if self.session_id is None:
                self.session_id = string(payload.get("id"))
        elif kind == "response_item":
            self._response_items = True
            self._item(payload, timestamp)
        elif kind == "event_msg":
            self._event(payload, timestamp)
        # turn_context (model, cwd, policies) and compacted (a summary of earlier turns): not conversation

    def _item(self, item: dict[str, Any], timestamp: str | None) -> None:
        kind = item.get("type")
        if kind == "message":
            role = item.get("role")
            content = item.get("content")
            parts = content if isinstance(content, list) else [content]
            if role == "user":
                text = "\n\n".join(t for t in (text_of([p]) for p in parts) if t.strip() and not is_context(t))
            elif role == "assistant":
                text = text_of(parts, joiner="\n\n")
            else:
                return  # developer, system: instructions
            if text.strip():
                self.messages.append(Message("user" if role == "user" else "assistant", text,
                                             timestamp=timestamp))
        elif kind in ("function_call", "custom_tool_call"):
            name = string(item.get("name"))
            call_id = string(item.get("call_id"))
            if call_id and name:
                self._tools[call_id] = name
            call = item.get("arguments" if kind == "function_call" else "input")
            self.messages.append(Message("assistant", as_json(call if call is not None else ""), "tool_use", name,
                                         timestamp=timestamp))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            call_id = string(item.get("call_id"))
            name = (self._tools.get(call_id) if call_id else None) or string(item.get("name"))
            self.messages.append(Message("tool", _output_text(item.get("output")), "tool_result", name,
                                         timestamp=timestamp))
        elif kind == "local_shell_call":
            call_id = string(item.get("call_id"))
            if call_id:
                self._tools[call_id] = "local_shell"
            action = item.get("action")
            command = action.get("command") if isinstance(action, dict) else None
            text = " ".join(str(c) for c in command) if isinstance(command, list) else as_json(action)
            self.messages.append(Message("assistant", text, "tool_use", "local_shell", timestamp=timestamp))
        elif kind == "web_search_call":
            action = item.get("action")
            query = action.get("query") if isinstance(action, dict) else None
            self.messages.append(Message("assistant", query if isinstance(query, str) else as_json(action),
                                         "tool_use", "web_search", timestamp=timestamp))
        # reasoning, ghost_snapshot, compaction, image_generation_call, other: not conversation text

    def _event(self, event: dict[str, Any], timestamp: str | None) -> None:
        if self._response_items:
            return
        text = event.get("message")
        if not isinstance(text, str) or not text.strip():
            return
        if event.get("type") == "user_message" and not is_context(text):
            self._events.append(Message("user", text, timestamp=timestamp))
        elif event.get("type") == "agent_message":
            self._events.append(Message("assistant", text, timestamp=timestamp))

    def finish(self) -> None:
        if not self._response_items and not self.messages:
            self.messages = self._events
