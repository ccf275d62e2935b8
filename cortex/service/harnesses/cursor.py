"""Cursor (the IDE's agent and ``cursor-agent``): ``cortex hook cursor EVENT``. Built against Cursor's hooks
reference (cursor.com/docs/hooks: ``workspaceOpen``, ``afterAgentThought`` and ``failClosed`` era; the payloads
say ``cursor_version`` 3.9.8) and a ``cursor-agent`` 2026.07.23 run (tests/fixtures/harnesses/README.md section 2).

* Events: ``sessionStart`` (no ``source``: a resumed conversation is not told apart; its memories are touched
  once per conversation all the same), ``afterAgentResponse`` (``text``: the agent's answer; ``stop`` carries no
  text), ``subagentStop`` (``subagent_type``, ``task``, ``status``, ``summary``, ``agent_transcript_path``),
  ``sessionEnd``, ``afterShellExecution`` (``command``), ``afterFileEdit`` (``file_path``) and ``postToolUse``
  (``tool_name`` ``Shell`` / ``Write``, ``tool_input``). Every payload has ``conversation_id`` (``session_id`` in
  real runs), ``workspace_roots`` and ``transcript_path``; the tools' ``cwd`` may be ``""``, so the project is
  ``workspace_roots[0]`` (else ``$CURSOR_PROJECT_DIR``).
* Output: snake_case JSON at the top level: ``{"additional_context": ...}`` on ``sessionStart`` (and accepted on
  ``postToolUse``), ``{}`` for everything else. ``subagentStart`` answers only a permission: **a subagent cannot
  be given its block at its start**. Exit 2 would deny the action: a hook exits 0.
* Transcripts (``~/.cursor/projects/<slug>/agent-transcripts/``) are not documented: the payloads' own text is
  captured (``afterAgentResponse.text``, ``subagentStop.summary``), and the files are only handed to a language
  model, through :mod:`cortex.capture.transcripts.cursor`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from cortex.service.harnesses.base import SESSION_END, START, STOP, SUBAGENT_STOP, TOOL, Call, Harness, Offset, \
    Reading, home_dir, text

#: Cursor's tools that write a file, and the ``tool_input`` keys naming it.
WRITE_TOOLS = ("Write", "Edit", "StrReplace", "MultiEdit", "Delete")
PATH_KEYS = ("file_path", "path", "target_file")


class Cursor(Harness):
    name = "cursor"
    title = "Cursor"
    events = {"sessionStart": START, "afterAgentResponse": STOP, "subagentStop": SUBAGENT_STOP,
              "sessionEnd": SESSION_END, "afterShellExecution": TOOL, "afterFileEdit": TOOL, "postToolUse": TOOL}
    common_fields = ("conversation_id", "hook_event_name", "workspace_roots", "transcript_path")
    fields = {"afterAgentResponse": ("text",), "subagentStop": ("subagent_type", "status", "task", "summary"),
              "afterShellExecution": ("command",), "afterFileEdit": ("file_path",),
              "postToolUse": ("tool_name", "tool_input")}

    def call(self, event: str, payload: dict[str, Any]) -> Call:
        roots = payload.get("workspace_roots")
        first = roots[0] if isinstance(roots, list) and roots else None
        cwd = first if first else os.environ.get("CURSOR_PROJECT_DIR") or payload.get("cwd") or None
        tool = payload.get("tool_name")
        tool_input = payload.get("tool_input")
        tool_input = tool_input if isinstance(tool_input, dict) else {}
        command: str | None = None
        files: tuple[str, ...] = ()
        if event == "afterShellExecution":
            command = text(payload, "command")
        elif event == "afterFileEdit":
            files = tuple(p for p in [text(payload, "file_path")] if p)
        elif event == "postToolUse" and tool == "Shell":
            command = text(tool_input, "command")
        elif event == "postToolUse" and tool in WRITE_TOOLS:
            files = tuple(p for p in [text(tool_input, *PATH_KEYS)] if p)
        subagent = event == "subagentStop"
        return Call(
            self.events.get(event), agent_type=payload.get("subagent_type") if subagent else None,
            session=text(payload, "session_id", "conversation_id"), cwd=cwd,
            repeated=None, task=text(payload, "task", "description") if subagent else None,
            status=text(payload, "status") if subagent else None, command=command, files=files, payload=payload)

    def transcript_dirs(self) -> list[Path]:
        return [home_dir(None, ".cursor")]

    def read_own(self, root: Path, call: Call, offset: Offset) -> Reading | None:
        said = text(call.payload, {STOP: "text", SUBAGENT_STOP: "summary"}.get(str(call.action), ""))
        # the answer is in the payload whole; the transcript is for a language model only (at a subagent's end and
        # the session's)
        key = {SUBAGENT_STOP: "agent_transcript_path", SESSION_END: "transcript_path"}.get(str(call.action))
        transcript = self.readable(root, call.payload.get(key)) if key else None
        return Reading([("text", said)] if said else [], file=transcript)

    def answer(self, event: str, context: str | None) -> str:
        if context and self.events.get(event) == START:
            return json.dumps({"additional_context": context})
        return "{}"  # a valid answer to every event, which changes nothing


HARNESS = Cursor()
