"""Gemini CLI chat files (``~/.gemini/tmp/<project>/chats/session-<time>-<session id prefix>.jsonl``; a subagent's
in ``chats/<parent session id>/<session id>.jsonl``), one JSON object a line, as Gemini CLI 0.39 and later write
them (``packages/core/src/services/chatRecordingService.ts`` of v0.56.0; tests/fixtures/harnesses/README.md,
section 3).

The first line is the session's metadata ``{sessionId, projectHash, startTime, lastUpdated, kind, directories?}``.
A message line is ``{id, timestamp, type: user | gemini | info | error | warning, content, displayContent?}``:
``content`` is a string or a list of parts ``{text}``; ``gemini`` lines add ``toolCalls`` (``{id, name, args,
result: [{functionResponse: {response}}], status}``), ``thoughts`` (skipped), ``tokens`` and ``model``. A message
is written again when it changes (its tool calls arrive): the last line of an id wins, in the place of its first.
``{"$set": {...}}`` updates the metadata; ``{"$rewindTo": id}`` deletes that message and every later one. Only
``user`` and ``gemini`` lines are conversation.

Read from an offset, a message written again after it (or a rewind of one read before) cannot change what an
earlier read gave: capture confirms a line it stored before rather than storing it twice.

Before 0.39 a session was one JSON document, ``session-<time>-<id>.json``: the ``ConversationRecord``
``{sessionId, projectHash, startTime, lastUpdated, summary?, kind?, directories?, messages: [message...]}``, its
messages the lines above (Gemini CLI migrates one to JSONL when it resumes it). :func:`is_record` tells one; it is
read whole (:func:`cortex.capture.transcripts.read`), and a record on one line is read as its messages too.
"""

from __future__ import annotations

from typing import Any

from cortex.capture.transcripts._common import LineParser, Message, Problems, as_json, string, text_of

MESSAGE_TYPES = ("user", "gemini")
LINE_TYPES = ("user", "gemini", "info", "error", "warning")


def looks_like(entry: Any) -> bool:
    """Whether one JSON line is a Gemini CLI chat line."""
    if not isinstance(entry, dict):
        return False
    if "sessionId" in entry and "projectHash" in entry:
        return True
    return entry.get("type") in LINE_TYPES and "id" in entry and "content" in entry and "message" not in entry


def is_record(document: Any) -> bool:
    """Whether a JSON document is a pre-0.39 Gemini CLI session (a ``ConversationRecord``)."""
    return isinstance(document, dict) and isinstance(document.get("sessionId"), str) \
        and "projectHash" in document and isinstance(document.get("messages"), list)


def _result_text(result: Any) -> str:
    """The text of a tool call's result: each ``functionResponse.response`` (its ``output`` when it has one)."""
    parts: list[str] = []
    for item in result if isinstance(result, list) else [result]:
        response = item.get("functionResponse", {}).get("response") if isinstance(item, dict) else None
        if isinstance(response, dict) and isinstance(response.get("output"), str):
            parts.append(response["output"])
        elif response is not None:
            parts.append(as_json(response))
    return "\n".join(parts)


class Parser(LineParser):
    """Reads Gemini CLI chat lines into messages: the last version of each message, in the order they began."""

    def __init__(self, problems: Problems) -> None:
        super().__init__(problems)
        self._by_id: dict[str, list[Message]] = {}

    def feed(self, entry: Any, where: str) -> None:
        if not isinstance(entry, dict):
            self.problems.add(f"{where}: not a JSON object")
            return
        if "sessionId" in entry and "projectHash" in entry:
            self.session_id = self.session_id or string(entry.get("sessionId"))
            record = entry.get("messages")
            for number, message in enumerate(record if isinstance(record, list) else [], 1):
                self.feed(message, f"{where}, message {number}")  # a whole pre-0.39 record
            return
        if "$rewindTo" in entry:
            target = entry["$rewindTo"]
            if isinstance(target, str) and target in self._by_id:
                keys = list(self._by_id)
                for key in keys[keys.index(target):]:
                    del self._by_id[key]
            return
        kind = entry.get("type")
        if kind not in MESSAGE_TYPES:
            return  # $set (metadata), info, error, warning
        timestamp = string(entry.get("timestamp"))
        said = text_of(entry.get("content"))
        messages: list[Message] = []
        if said.strip():
            messages.append(Message("user" if kind == "user" else "assistant", said, timestamp=timestamp))
        calls = entry.get("toolCalls") if kind == "gemini" else None
        for call in calls if isinstance(calls, list) else []:
            if not isinstance(call, dict):
                continue
            name = string(call.get("name"))
            messages.append(Message("assistant", as_json(call.get("args", {})), "tool_use", name, timestamp=timestamp))
            if call.get("result") is not None:
                messages.append(Message("tool", _result_text(call.get("result")), "tool_result", name,
                                        timestamp=timestamp))
        key = string(entry.get("id")) or f"#{where}"
        self._by_id[key] = messages  # a message written again replaces its earlier version, in its place

    def finish(self) -> None:
        self.messages = [m for messages in self._by_id.values() for m in messages]
