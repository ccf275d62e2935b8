"""OpenAI Codex CLI: ``cortex hook codex EVENT``. Built against codex-cli 0.145-0.153 (``codex-rs/hooks/src/schema.rs``
with ``SessionEnd``; tests/fixtures/harnesses/README.md section 1, and the recorded payloads beside it).

* Events: ``SessionStart`` (``source`` ``startup|resume|clear|compact``), ``SubagentStart`` (``agent_id``,
  ``agent_type``; no task; its ``transcript_path`` is the child's own rollout), ``Stop`` (``last_assistant_message``, ``stop_hook_active``), ``SubagentStop`` (the same,
  and ``agent_transcript_path``: the child's rollout; ``transcript_path`` is the parent's), ``SessionEnd`` and
  ``PostToolUse`` (``tool_name`` ``Bash`` with ``tool_input.command``, or ``apply_patch``; it fires for failed
  commands too, its ``tool_response`` the output alone: a command's exit status is read in the rollout). ``SessionStart``,
  ``SessionEnd`` and ``Stop`` fire for the root thread only; a spawned subagent gets ``SubagentStart``/``Stop``,
  and its tool events carry its ``agent_type``.
* Output: Codex checks stdout against each event's schema and refuses an unknown key (the hook then fails and
  nothing is injected): ``{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`` on the start events,
  and nothing at all on the others (plain text is invalid on ``Stop``). Exit 2 would make ``Stop`` continue the
  turn: a hook exits 0.
* Transcripts: the rollout files of ``$CODEX_HOME/sessions`` (``~/.codex``), read by
  :mod:`cortex.capture.transcripts.codex`; each thread has its own, so every line of one is its agent's. A
  subagent's task is its ``spawn_agent`` call in the parent's rollout (found from the child's: its first line's
  ``session_meta`` ``source.subagent.thread_spawn.parent_thread_id``, then ``rollout-*-<parent>.jsonl`` beside it or
  in the day directories of ``sessions/``): the call an event links to the child's thread
  (``sub_agent_activity``), else the latest for its type (``SpawnAgentArgs``: ``message``, ``items``, ``agent_type``;
  ``prompt``, ``task`` and ``description`` are read too; an encrypted message is not a task).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from cortex import jsonsafe
from cortex.service.harnesses.base import PROMPT, SESSION_END, START, STOP, SUBAGENT_START, SUBAGENT_STOP, TOOL, \
    Call, Harness, Offset, Reading, home_dir, log, text
from cortex.service.harnesses.tools import patch_files, shell_outcome

REPEATED_STARTS = ("resume", "clear", "compact")
#: How much of the end of a parent rollout is read to find a subagent's task.
TASK_SCAN_BYTES = 4 * 1024 * 1024
#: Codex's shell tools (their ``tool_input.command`` is the command line, or its words).
SHELL_TOOLS = ("Bash", "shell", "local_shell", "exec_command")
#: The tool that starts a subagent, and the arguments that say what it is asked.
SPAWN_TOOL = "spawn_agent"
TASK_ARGUMENTS = ("description", "message", "prompt", "task")
#: A thread id as rollout file names carry it (a UUID; any safe name is read).
THREAD_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")
#: An encrypted payload (Fernet), which multi-agent v2 may write for a spawn's message: not a task.
ENCRYPTED = re.compile(r"gAAAAA[A-Za-z0-9_=-]*")
#: The most day directories searched for a parent thread's rollout.
MAX_DAYS = 62


def _command(tool_input: dict[str, Any]) -> str | None:
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if isinstance(command, list) and all(isinstance(w, str) for w in command):
        import shlex

        return " ".join(shlex.quote(w) for w in command) if command[:2] != ["bash", "-lc"] else " ".join(command[2:])
    return command if isinstance(command, str) and command else None


def _first_line(path: str) -> Any:
    """The JSON value of a file's first line (at most 1 MiB of it), or None."""
    from cortex.files import open_regular

    try:
        with open_regular(path) as fh:
            return jsonsafe.loads(fh.readline(1024 * 1024).decode("utf-8", errors="replace"))
    except (OSError, ValueError):
        return None


def spawned_by(rollout: str) -> str | None:
    """The parent thread of a subagent's rollout, from its first line's ``session_meta`` (``source.subagent
    .thread_spawn.parent_thread_id``, else ``parent_thread_id``); None for a thread no agent spawned."""
    first = _first_line(rollout)
    meta = first.get("payload") if isinstance(first, dict) and first.get("type") == "session_meta" else None
    if not isinstance(meta, dict):
        return None
    source = meta.get("source")
    spawn = source.get("subagent") if isinstance(source, dict) else None
    spawn = spawn.get("thread_spawn") if isinstance(spawn, dict) else None
    for value in (spawn.get("parent_thread_id") if isinstance(spawn, dict) else None, meta.get("parent_thread_id")):
        if isinstance(value, str) and THREAD_ID.fullmatch(value) and value != meta.get("id"):
            return value
    return None


def find_rollout(near: Path, thread: str, homes: list[Path]) -> str | None:
    """The rollout file of ``thread`` (``rollout-<time>-<thread>.jsonl``): in the directory of ``near`` (a
    child's rollout, written the same day as its parent's, mostly), else in the day directories of
    ``<home>/sessions``, the latest first (:func:`_days`); None when there is none."""
    if not THREAD_ID.fullmatch(thread):
        return None
    pattern = f"rollout-*-{thread}.jsonl"
    for directory in [near.parent, *(day for home in homes for day in _days(home / "sessions"))]:
        found = sorted(directory.glob(pattern)) if directory.is_dir() else []
        if found:
            return str(found[-1])
    return None


def _days(sessions: Path) -> list[Path]:
    """The ``YYYY/MM/DD`` directories of a Codex sessions directory, the latest first (at most
    :data:`MAX_DAYS`)."""

    def numbered(directory: Path) -> list[Path]:
        try:
            return sorted((p for p in directory.iterdir() if p.name.isdigit() and p.is_dir()), reverse=True)
        except OSError:
            return []

    out: list[Path] = []
    for year in numbered(sessions):
        for month in numbered(year):
            out.extend(numbered(month))
            if len(out) >= MAX_DAYS:
                return out[:MAX_DAYS]
    return out


def _task_text(arguments: dict[str, Any]) -> str:
    """What a ``spawn_agent`` call asks, from its arguments (an encrypted message, as multi-agent v2 may write,
    is not text)."""
    parts = [arguments[k] for k in TASK_ARGUMENTS if isinstance(arguments.get(k), str)]
    items = arguments.get("items")
    if isinstance(items, list):
        parts.extend(i["text"] for i in items if isinstance(i, dict) and isinstance(i.get("text"), str))
    parts = [p for p in parts if p.strip() and not ENCRYPTED.fullmatch(p.strip())]
    if not parts and isinstance(arguments.get("task_name"), str):
        parts = [arguments["task_name"].replace("_", " ")]
    return "\n".join(parts)


def spawn_task(parent: str, agent_type: str, agent_id: Any) -> str | None:
    """The task of a subagent in its parent's rollout: the ``spawn_agent`` call the rollout links to ``agent_id``
    (an event naming the call and the spawned thread), else the latest call for ``agent_type``."""
    from cortex.files import open_regular

    try:
        with open_regular(parent) as fh:
            size = os.fstat(fh.fileno()).st_size
            fh.seek(max(0, size - TASK_SCAN_BYTES))
            data = fh.read(TASK_SCAN_BYTES)
    except OSError:
        return None
    calls: list[tuple[str, dict[str, Any]]] = []
    linked: set[str] = set()
    for raw in data.split(b"\n"):
        if SPAWN_TOOL.encode() not in raw and b"thread" not in raw:
            continue
        try:
            line = jsonsafe.loads(raw.decode("utf-8", errors="replace"))
        except ValueError:
            continue
        item = line.get("payload") if isinstance(line, dict) else None
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call" and item.get("name") == SPAWN_TOOL:
            try:
                arguments = jsonsafe.loads(item.get("arguments") or "")
            except (TypeError, ValueError):
                continue
            if isinstance(arguments, dict):
                calls.append((str(item.get("call_id") or ""), arguments))
        elif isinstance(agent_id, str) and agent_id and agent_id in (item.get("agent_thread_id"),
                                                                      item.get("new_thread_id")):
            linked.update(str(item[k]) for k in ("call_id", "event_id") if isinstance(item.get(k), str))
    for call_id, arguments in reversed(calls):
        if call_id and call_id in linked:
            return _task_text(arguments) or None
    for _, arguments in reversed(calls):
        if arguments.get("agent_type", "default") == agent_type:
            return _task_text(arguments) or None
    return None


def _rollout_command(item: dict[str, Any]) -> str | None:
    """The command line of a rollout's shell call (``exec_command`` ``cmd``; ``shell``/``shell_command``
    ``command``; ``local_shell_call`` ``action.command``), or None for another tool."""
    if item.get("type") == "local_shell_call":
        action = item.get("action")
        return _command(action) if isinstance(action, dict) else None
    if item.get("type") != "function_call" or item.get("name") not in (*SHELL_TOOLS, "shell_command"):
        return None
    try:
        arguments = jsonsafe.loads(item.get("arguments") or "")
    except (TypeError, ValueError):
        return None
    if not isinstance(arguments, dict):
        return None
    return _command({"command": arguments.get("cmd", arguments.get("command"))})


def succeeded_comments(rollout: str, start: int, end: int) -> list[tuple[str, str]]:
    """The (bead, comment) of each Beads comment a shell command added between bytes ``start`` and ``end`` of a
    rollout, when the command's output there says it exited 0 (a failed ``bd comment`` added nothing; one whose
    output is not there yet, or says nothing, is not read)."""
    from cortex.files import open_regular
    from cortex.service.harnesses.tools import bead_comments

    if end <= start:
        return []
    try:
        with open_regular(rollout) as fh:
            fh.seek(start)
            data = fh.read(end - start)
    except OSError:
        return []
    pending: dict[str, list[tuple[str, str]]] = {}
    found: list[tuple[str, str]] = []
    for raw in data.split(b"\n"):
        if b'"call_id"' not in raw:
            continue
        try:
            line = jsonsafe.loads(raw.decode("utf-8", errors="replace"))
        except ValueError:
            continue
        item = line.get("payload") if isinstance(line, dict) and line.get("type") == "response_item" else None
        call_id = item.get("call_id") if isinstance(item, dict) else None
        if not isinstance(call_id, str):
            continue
        command = _rollout_command(item)  # type: ignore[arg-type]
        if command is not None:
            comments = bead_comments(command)
            if comments:
                pending[call_id] = comments
        elif item.get("type") == "function_call_output" and call_id in pending:  # type: ignore[union-attr]
            comments = pending.pop(call_id)
            if shell_outcome(item.get("output")) is True:  # type: ignore[union-attr]
                found.extend(comments)
    return found


class Codex(Harness):
    name = "codex"
    title = "Codex"
    events = {"SessionStart": START, "SubagentStart": SUBAGENT_START, "Stop": STOP, "SubagentStop": SUBAGENT_STOP,
              "SessionEnd": SESSION_END, "PostToolUse": TOOL, "UserPromptSubmit": PROMPT}
    common_fields = ("session_id", "transcript_path", "cwd", "hook_event_name")
    fields = {"SessionStart": ("source",), "SubagentStart": ("agent_id", "agent_type"),
              "Stop": ("stop_hook_active", "last_assistant_message"),
              "SubagentStop": ("agent_transcript_path", "stop_hook_active", "agent_id", "agent_type",
                               "last_assistant_message"),
              "PostToolUse": ("tool_name", "tool_input"), "UserPromptSubmit": ("prompt",)}

    def call(self, event: str, payload: dict[str, Any]) -> Call:
        tool = payload.get("tool_name")
        tool_input = payload.get("tool_input")
        tool_input = tool_input if isinstance(tool_input, dict) else {}
        command = _command(tool_input) if tool in SHELL_TOOLS else None
        if command is not None and shell_outcome(payload.get("tool_response")) is not True:
            # PostToolUse fires for failed commands too, and its tool_response is the output alone: only a command
            # the response says succeeded is read now; the others' Beads comments are read at Stop from the
            # rollout, which records each command's exit status (:func:`succeeded_comments`)
            command = None
        return Call(
            self.events.get(event), agent_type=payload.get("agent_type"), session=text(payload, "session_id"),
            cwd=payload.get("cwd"), repeated=event == "SessionStart" and payload.get("source") in REPEATED_STARTS,
            last_message=text(payload, "last_assistant_message"),
            stop_hook_active=bool(payload.get("stop_hook_active")),
            task=text(payload, "prompt") if event == "UserPromptSubmit" else None,
            command=command,
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
        return Reading(parts, key=rollout, end=found.end, file=rollout,
                       beads=succeeded_comments(rollout, offset(rollout, rollout), found.end))

    def subagent_task(self, root: Path, call: Call, agent_type: str) -> str | None:
        # SubagentStart's transcript_path is the child's rollout (SubagentStop's the parent's): the child's
        # session_meta names its parent thread, whose rollout holds the spawn_agent call
        given = self.readable(root, call.payload.get("transcript_path"))
        if not given:
            return None
        parent = given
        parent_id = spawned_by(given)
        if parent_id is not None:
            parent = self.readable(root, find_rollout(Path(given), parent_id, self.transcript_dirs())) or ""
            if not parent:
                log(root, f"{self.name}: the rollout of {agent_type!r}'s parent thread {parent_id!r} was not found: "
                          "its block is not ranked for its task")
                return None
        return spawn_task(parent, agent_type, call.payload.get("agent_id"))

    def answer(self, event: str, context: str | None) -> str:
        if not context or self.events.get(event) not in (START, SUBAGENT_START, PROMPT):
            return ""  # exit 0 with nothing on stdout: valid for every event
        return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})


HARNESS = Codex()
