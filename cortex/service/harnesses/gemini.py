"""Gemini CLI: ``cortex hook gemini EVENT``. Built against Gemini CLI v0.56.0 (``packages/core/src/hooks/``,
``docs/hooks/reference.md``; tests/fixtures/harnesses/README.md section 3).

* Events: ``SessionStart`` (``source`` ``startup|resume|clear``), ``AfterAgent`` (``prompt``,
  ``prompt_response``: the turn's answer, ``stop_hook_active``), ``SessionEnd`` (not awaited by the CLI) and
  ``AfterTool`` (``tool_name`` ``run_shell_command`` with ``tool_input.command``, ``write_file`` / ``replace``
  with ``tool_input.file_path``). Every payload has ``session_id``, ``transcript_path``, ``cwd`` and
  ``timestamp``. Gemini CLI has no subagent events: only the main session's agent (``--agent``) has memory here.
* Output: ``{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": ...}}``; ``{}``
  otherwise. The CLI escapes ``<`` and ``>`` in the context and wraps it in its own ``<hook_context>`` tag, so the
  block is sent without its ``<agent-memory>`` tags (``Agent memory (NAME):`` and its lines). A hook's stderr is
  shown to the user (and read as the answer when stdout is empty): a hook that worked writes nothing there. Exit
  2 (or another non-zero status with text) would deny the turn and retry it: a hook exits 0.
* Transcripts (``~/.gemini/tmp/<project>/chats/session-*.jsonl``): the payload's own text is captured
  (``AfterAgent.prompt_response``); the file is only handed to a language model, through
  :mod:`cortex.capture.transcripts.gemini`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from cortex.service.harnesses.base import PROMPT, SESSION_END, START, STOP, TOOL, Call, Harness, Offset, Reading, \
    home_dir, text

REPEATED_STARTS = ("resume", "clear")
SHELL_TOOLS = ("run_shell_command",)
WRITE_TOOLS = ("write_file", "replace")
PATH_KEYS = ("file_path", "absolute_path", "path")
#: The block's tags, left out for Gemini CLI (it would show them as ``&lt;agent-memory&gt;``).
OPEN_TAG, CLOSE_TAG = "<agent-memory>", "</agent-memory>"
#: The CLI's wrapper around a hook's context; in ``-p`` mode SessionStart's context is prepended to the prompt.
HOOK_OPEN, HOOK_CLOSE = "<hook_context>", "</hook_context>"


def user_prompt(payload: dict[str, Any]) -> str | None:
    """The payload's ``prompt`` as the user typed it: without the ``<hook_context>`` blocks the CLI put before it.

    The CLI escapes ``<`` and ``>`` inside a hook's context, so the first ``</hook_context>`` closes the block; an
    unclosed one is left as it is (it is then the user's own text).
    """
    prompt = text(payload, "prompt")
    while prompt is not None:
        rest = prompt.lstrip()
        end = rest.find(HOOK_CLOSE) if rest.startswith(HOOK_OPEN) else -1
        if end < 0:
            return rest or None
        prompt = rest[end + len(HOOK_CLOSE):]
    return None


class Gemini(Harness):
    name = "gemini"
    title = "Gemini CLI"
    events = {"SessionStart": START, "AfterAgent": STOP, "SessionEnd": SESSION_END, "AfterTool": TOOL,
              "BeforeAgent": PROMPT}
    quiet = True
    common_fields = ("session_id", "transcript_path", "cwd", "hook_event_name")
    fields = {"SessionStart": ("source",), "AfterAgent": ("prompt_response", "stop_hook_active"),
              "AfterTool": ("tool_name", "tool_input"), "BeforeAgent": ("prompt",)}

    def call(self, event: str, payload: dict[str, Any]) -> Call:
        tool = payload.get("tool_name")
        tool_input = payload.get("tool_input")
        tool_input = tool_input if isinstance(tool_input, dict) else {}
        written = text(tool_input, *PATH_KEYS) if tool in WRITE_TOOLS else None
        return Call(
            self.events.get(event), session=text(payload, "session_id"),
            cwd=payload.get("cwd") or os.environ.get("GEMINI_PROJECT_DIR") or None,
            repeated=event == "SessionStart" and payload.get("source") in REPEATED_STARTS,
            stop_hook_active=bool(payload.get("stop_hook_active")),
            task=user_prompt(payload) if self.events.get(event) == PROMPT else None,
            command=text(tool_input, "command") if tool in SHELL_TOOLS else None,
            files=(written,) if written else (), payload=payload)

    def transcript_dirs(self) -> list[Path]:
        return [home_dir("GEMINI_CLI_HOME", "") / ".gemini"]  # $GEMINI_CLI_HOME replaces the home directory

    def read_own(self, root: Path, call: Call, offset: Offset) -> Reading | None:
        said = text(call.payload, "prompt_response") if call.action == STOP else None
        # the answer is in the payload whole; the transcript is for a language model only (at the session's end)
        transcript = self.readable(root, call.payload.get("transcript_path")) if call.action == SESSION_END else None
        return Reading([("text", said)] if said else [], file=transcript)

    def context(self, block: str, agent: str) -> str:
        lines = block.strip("\n").split("\n")
        if lines and lines[0].startswith(OPEN_TAG[:-1]) and lines[-1] == CLOSE_TAG:
            lines = lines[1:-1]
        return "\n".join([f"Agent memory ({agent}):", *lines])

    def answer(self, event: str, context: str | None) -> str:
        if context and self.events.get(event) in (START, PROMPT):
            return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})
        return "{}"  # never empty: the CLI would read stderr as the answer


HARNESS = Gemini()
