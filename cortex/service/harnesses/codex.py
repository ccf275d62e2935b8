"""OpenAI Codex CLI: ``cortex hook codex EVENT``. Built against codex-cli 0.145-0.153 (``codex-rs/hooks/src/schema.rs``
with ``SessionEnd``; tests/fixtures/harnesses/README.md section 1, and the recorded payloads beside it).

* Events: ``SessionStart`` (``source`` ``startup|resume|clear|compact``), ``SubagentStart`` (``agent_id``,
  ``agent_type``; no task), ``Stop`` (``last_assistant_message``, ``stop_hook_active``), ``SubagentStop`` (the same,
  and ``agent_transcript_path``: the child's rollout; ``transcript_path`` is the parent's), ``SessionEnd`` and
  ``PostToolUse`` (``tool_name`` ``Bash`` with ``tool_input.command``, or ``apply_patch``). ``SessionStart``,
  ``SessionEnd`` and ``Stop`` fire for the root thread only; a spawned subagent gets ``SubagentStart``/``Stop``,
  and its tool events carry its ``agent_type``.
* Output: Codex checks stdout against each event's schema and refuses an unknown key (the hook then fails and
  nothing is injected): ``{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`` on the start events,
  and nothing at all on the others (plain text is invalid on ``Stop``). Exit 2 would make ``Stop`` continue the
  turn: a hook exits 0.
* Transcripts: the rollout files of ``$CODEX_HOME/sessions`` (``~/.codex``), read by
  :mod:`cortex.capture.transcripts.codex`; each thread has its own, so every line of one is its agent's. A
  subagent's task is the latest ``spawn_agent`` call for its type in the parent's rollout, when it names one (the
  argument names are not documented: ``message``, ``prompt``, ``task`` and ``description`` are read).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from cortex import jsonsafe
from cortex.service.harnesses.base import SESSION_END, START, STOP, SUBAGENT_START, SUBAGENT_STOP, TOOL, Call, \
    Harness, Offset, Reading, home_dir, log, text
from cortex.service.harnesses.tools import patch_files

REPEATED_STARTS = ("resume", "clear", "compact")
#: How much of the end of a parent rollout is read to find a subagent's task.
TASK_SCAN_BYTES = 4 * 1024 * 1024
#: Codex's shell tools (their ``tool_input.command`` is the command line, or its words).
SHELL_TOOLS = ("Bash", "shell", "local_shell", "exec_command")
#: The tool that starts a subagent, and the arguments that say what it is asked.
SPAWN_TOOL = "spawn_agent"
TASK_ARGUMENTS = ("description", "message", "prompt", "task")


def _command(tool_input: dict[str, Any]) -> str | None:
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if isinstance(command, list) and all(isinstance(w, str) for w in command):
        import shlex

        return " ".join(shlex.quote(w) for w in command) if command[:2] != ["bash", "-lc"] else " ".join(command[2:])
    return command if isinstance(command, str) and command else None


class Codex(Harness):
    name = "codex"
    title = "Codex"
    events = {"SessionStart": START, "SubagentStart": SUBAGENT_START, "Stop": STOP, "SubagentStop": SUBAGENT_STOP,
              "SessionEnd": SESSION_END, "PostToolUse": TOOL}
    common_fields = ("session_id", "transcript_path", "cwd", "hook_event_name")
    fields = {"SessionStart": ("source",), "SubagentStart": ("agent_id", "agent_type"),
              "Stop": ("stop_hook_active", "last_assistant_message"),
              "SubagentStop": ("agent_transcript_path", "stop_hook_active", "agent_id", "agent_type",
                               "last_assistant_message"),
              "PostToolUse": ("tool_name", "tool_input")}

    def call(self, event: str, payload: dict[str, Any]) -> Call:
        tool = payload.get("tool_name")
        tool_input = payload.get("tool_input")
        tool_input = tool_input if isinstance(tool_input, dict) else {}
        return Call(
            self.events.get(event), agent_type=payload.get("agent_type"), session=text(payload, "session_id"),
            cwd=payload.get("cwd"), repeated=event == "SessionStart" and payload.get("source") in REPEATED_STARTS,
            last_message=text(payload, "last_assistant_message"),
            stop_hook_active=bool(payload.get("stop_hook_active")),
            command=_command(tool_input) if tool in SHELL_TOOLS else None,
            files=tuple(patch_files(tool_input)) if tool == "apply_patch" else (), payload=payload)

    def transcript_dirs(self) -> list[Path]:
        return [home_dir("CODEX_HOME", ".codex")]

    def read_own(self, root: Path, call: Call, offset: Offset) -> Reading | None:
        key = "agent_transcript_path" if call.action == SUBAGENT_STOP else "transcript_path"
        rollout = self.readable(root, call.payload.get(key))
        if not rollout:
            return None  # a subagent without its own rollout: the parent's holds none of its lines
        from cortex.capture.transcripts import read
        from cortex.errors import CortexError

        try:
            found = read(rollout, offset(rollout, rollout), format="codex")
        except (CortexError, OSError) as exc:
            log(root, f"{self.name}: rollout {rollout!r} not read: {exc}")
            return None
        parts = [("text" if m.kind == "text" else "tool_use", m.text) for m in found.messages
                 if m.role == "assistant" and m.kind in ("text", "tool_use")]
        return Reading(parts, key=rollout, end=found.end, file=rollout)

    def subagent_task(self, root: Path, call: Call, agent_type: str) -> str | None:
        parent = self.readable(root, call.payload.get("transcript_path"))
        if not parent:
            return None
        from cortex.capture.transcripts import read
        from cortex.errors import CortexError

        try:
            found = read(parent, max(0, os.path.getsize(parent) - TASK_SCAN_BYTES), format="codex")
        except (CortexError, OSError):
            return None
        for message in reversed(found.messages):
            if message.kind != "tool_use" or message.tool != SPAWN_TOOL:
                continue
            try:
                arguments = jsonsafe.loads(message.text)
            except ValueError:
                continue
            if isinstance(arguments, dict) and arguments.get("agent_type", "default") == agent_type:
                task = "\n".join(arguments[k] for k in TASK_ARGUMENTS if isinstance(arguments.get(k), str))
                return task or None
        return None

    def answer(self, event: str, context: str | None) -> str:
        if not context or self.events.get(event) not in (START, SUBAGENT_START):
            return ""  # exit 0 with nothing on stdout: valid for every event
        return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})


HARNESS = Codex()
