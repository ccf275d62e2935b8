"""Whole-document transcripts: a JSON list of chat messages, and plain text.

* Messages: ``[{"role": "user" | "assistant" | "system" | "tool", "content": str | [{"type": "text", "text"}]}]``
  (OpenAI or Anthropic style), or the same list under ``{"messages": [...]}``. System messages are instructions,
  not conversation: skipped. Anthropic ``tool_use``/``tool_result`` blocks and OpenAI ``tool_calls`` (with
  ``role: "tool"`` results naming their ``tool_call_id``) become tool messages.
* Plain text: a line starting ``User:`` or ``Human:`` starts a user message, ``Assistant:`` or ``AI:`` an
  assistant one (any case); text before the first such line, or a text without any, is one assistant message.
"""

from __future__ import annotations

import re
from typing import Any

from cortex.capture.transcripts._common import Message, Problems, as_json, string, text_of

_SPEAKER = re.compile(r"^(user|human|assistant|ai)[ \t]*:[ \t]?", re.IGNORECASE | re.MULTILINE)


def message_list(document: Any) -> list[Any] | None:
    """The list of messages of a parsed JSON document (a list of ``{role, content}`` objects, or an object with
    such a list under ``messages``); None when it is not one."""
    if isinstance(document, dict) and isinstance(document.get("messages"), list):
        document = document["messages"]
    if not isinstance(document, list):
        return None
    if all(isinstance(m, dict) and "role" in m and ("content" in m or "tool_calls" in m) for m in document):
        return document
    return None


def parse_messages(items: list[Any], problems: Problems) -> list[Message]:
    """The messages of a list of chat messages (see the module docstring)."""
    out: list[Message] = []
    tools: dict[str, str] = {}  # tool call id -> tool name
    for number, item in enumerate(items, 1):
        if not isinstance(item, dict):
            problems.add(f"message {number}: not a JSON object")
            continue
        role = item.get("role")
        content = item.get("content")
        if role == "system" or role == "developer":
            continue
        if role not in ("user", "assistant", "tool"):
            problems.add(f"message {number}: unknown role {role!r}")
            continue
        if role == "tool":
            call_id = string(item.get("tool_call_id"))
            name = string(item.get("name")) or (tools.get(call_id) if call_id else None)
            out.append(Message("tool", text_of(content), "tool_result", name))
            continue
        if isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    continue
                kind = block.get("type")
                if kind == "tool_use":
                    name = string(block.get("name"))
                    if name and string(block.get("id")):
                        tools[block["id"]] = name
                    out.append(Message("assistant", as_json(block.get("input", {})), "tool_use", name))
                elif kind == "tool_result":
                    tool_id = string(block.get("tool_use_id"))
                    out.append(Message("tool", text_of(block.get("content")), "tool_result",
                                       tools.get(tool_id) if tool_id else None))
                else:
                    text = text_of([block])
                    if text.strip() and text != "[image]":
                        out.append(Message(role, text))
        elif isinstance(content, str):
            if content.strip():
                out.append(Message(role, content))
        elif content is not None:
            problems.add(f"message {number}: content is neither text nor a list of blocks")
        for call in item.get("tool_calls") or []:  # OpenAI chat completions
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict):
                continue
            name = string(function.get("name"))
            if name and string(call.get("id")):
                tools[call["id"]] = name
            out.append(Message("assistant", as_json(function.get("arguments", "")), "tool_use", name))
    return out


def parse_text(text: str) -> list[Message]:
    """The messages of a plain-text transcript (see the module docstring)."""
    out: list[Message] = []
    starts = list(_SPEAKER.finditer(text))
    head = text[: starts[0].start()] if starts else text
    if head.strip():
        out.append(Message("assistant", head.strip()))
    for k, match in enumerate(starts):
        body = text[match.end(): starts[k + 1].start() if k + 1 < len(starts) else len(text)].strip()
        if body:
            speaker = match.group(1).lower()
            out.append(Message("user" if speaker in ("user", "human") else "assistant", body))
    return out
