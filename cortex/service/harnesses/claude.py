"""Claude Code: ``cortex hook claude EVENT``. Its hooks reference (code.claude.com/docs/en/hooks), and its
transcripts as Claude Code 2.1.47 writes them.

* Events: ``SessionStart`` (``source`` ``startup|resume|clear|compact``), ``SubagentStart`` (``agent_id``,
  ``agent_type``), ``Stop`` / ``SubagentStop`` (``stop_hook_active``, ``last_assistant_message``; SubagentStop also
  ``agent_transcript_path``), ``SessionEnd`` and ``PostToolUse`` (``tool_name``, ``tool_input``,
  ``tool_response``). Every payload has ``session_id``, ``transcript_path`` and ``cwd``; inside a subagent the
  tool events carry its ``agent_id`` and ``agent_type``.
* Output: ``{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`` on the start events; nothing else.
* Transcripts: JSONL under ``$CLAUDE_CONFIG_DIR`` (else ``~/.claude``), a subagent's lines marked
  ``"isSidechain": true`` in its parent's; a subagent's own file is ``agent_transcript_path``. A subagent's task is
  its ``Agent``/``Task`` tool call in the parent transcript (no payload carries it): the call whose id Claude Code's
  ``<session>/subagents/agent-<agent_id>.meta.json`` names (``toolUseId``), else the latest for its type.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cortex import jsonsafe
from cortex.service.harnesses.base import PROMPT, SESSION_END, START, STOP, SUBAGENT_START, SUBAGENT_STOP, TOOL, \
    Call, Harness, Offset, Reading, home_dir, log, text

#: SessionStart ``source`` values of a session that already started (its memories were touched then); "fork" (a
#: conversation branched from another, Claude Code 2.1) is one too.
REPEATED_STARTS = ("resume", "compact", "clear", "fork")
#: How much of the end of a parent transcript is read to find the subagent's task.
TASK_SCAN_BYTES = 4 * 1024 * 1024
#: The tool Claude Code starts subagents with (``Task`` in older versions).
SUBAGENT_TOOLS = ("Agent", "Task")
#: The most of a transcript one Stop hook reads (the rest is read by the next one).
MAX_TRANSCRIPT_READ = 64 * 1024 * 1024
#: A subagent's id as Claude Code writes it (``a`` and hex digits; any safe file name is read).
AGENT_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: Tools whose ``file_path`` is a file they wrote.
WRITE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")


def claude_dirs() -> list[Path]:
    """Where Claude Code keeps transcripts: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    return [home_dir("CLAUDE_CONFIG_DIR", ".claude")]


def transcript_lines(path: str, start: int) -> tuple[list[Any], int]:
    """The JSON entries of a Claude Code transcript (JSONL) from byte ``start`` on (at most
    :data:`MAX_TRANSCRIPT_READ` bytes), and where the last complete line read ends."""
    from cortex.files import open_regular

    with open_regular(path) as fh:
        fh.seek(start)
        data = fh.read(MAX_TRANSCRIPT_READ)
    end = data.rfind(b"\n") + 1
    if end == 0 and len(data) == MAX_TRANSCRIPT_READ:
        end = len(data)  # one line longer than a whole read: skipped rather than read again forever
    entries = []
    # JSONL lines end with "\n" only: str.splitlines would also cut at U+2028 or U+0085, which JSON carries raw
    for line in data[:end].decode("utf-8", errors="replace").split("\n"):
        try:
            entries.append(jsonsafe.loads(line))
        except ValueError:
            continue
    return entries, start + end


def content(entry: Any, role: str) -> list[Any]:
    message = entry.get("message") if isinstance(entry, dict) else None
    if not isinstance(message, dict) or message.get("role") != role:
        return []
    value = message.get("content")
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    return value if isinstance(value, list) else []


def sidechain(entry: Any) -> bool:
    """Whether a transcript line is a subagent's (``"isSidechain": true``), not its session's main agent's."""
    return isinstance(entry, dict) and entry.get("isSidechain") is True


def parts(entries: list[Any]) -> list[tuple[str, str]]:
    """The assistant's text and tool call inputs of ``entries``, in order, one text part per message: the text
    blocks of one message in a row (Claude Code writes each on a line of its own, with the message's id) are
    joined, so a code fence spans them as it spans the answer."""
    out: list[tuple[str, str]] = []
    last: object = None
    for entry in entries:
        message = entry.get("message") if isinstance(entry, dict) else None
        ident = message.get("id") if isinstance(message, dict) else None
        for c in content(entry, "assistant"):
            if isinstance(c, dict) and c.get("type") == "text" and isinstance(c.get("text"), str):
                if ident is not None and ident == last and out and out[-1][0] == "text":
                    out[-1] = ("text", f"{out[-1][1]}\n{c['text']}")
                else:
                    out.append(("text", c["text"]))
                last = ident
            elif isinstance(c, dict) and c.get("type") == "tool_use":
                out.append(("tool_use", json.dumps(c.get("input"), ensure_ascii=False)[:20_000]))
                last = None
    return out


def subagent_meta(transcript: str, agent_id: Any) -> dict[str, Any]:
    """What Claude Code wrote beside a subagent's own transcript (``<session>/subagents/agent-<id>.meta.json``:
    ``agentType``, ``description``, ``toolUseId``...), or {} when it has not (yet) or the id is not one."""
    if not isinstance(agent_id, str) or not AGENT_ID.fullmatch(agent_id) or not transcript.endswith(".jsonl"):
        return {}
    from cortex.files import read_regular

    try:
        data = jsonsafe.loads(read_regular(Path(transcript[:-len(".jsonl")]) / "subagents"
                                           / f"agent-{agent_id}.meta.json", 64 * 1024))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def subagent_task(transcript: str, agent_type: str, tool_use_id: str | None = None) -> str | None:
    """What a subagent was asked to do (its description and prompt): the ``Agent``/``Task`` tool call
    ``tool_use_id`` in the parent transcript when it is given and found, else the latest call for ``agent_type``;
    None when there is none."""
    try:
        size = os.path.getsize(transcript)
        entries, _ = transcript_lines(transcript, max(0, size - TASK_SCAN_BYTES))
    except OSError:
        return None
    latest: str | None = None
    for entry in reversed(entries):
        for part in reversed(content(entry, "assistant")):
            if not isinstance(part, dict) or part.get("type") != "tool_use" or part.get("name") not in SUBAGENT_TOOLS:
                continue
            call = part.get("input")
            if not isinstance(call, dict):
                continue
            found = "\n".join(str(call[k]) for k in ("description", "prompt") if isinstance(call.get(k), str))
            if tool_use_id is not None and part.get("id") == tool_use_id:
                return found or None
            if latest is None and call.get("subagent_type", "general-purpose") == agent_type:
                latest = found or None
                if tool_use_id is None:
                    return latest
    return latest


class Claude(Harness):
    name = "claude"
    title = "Claude Code"
    events = {"SessionStart": START, "SubagentStart": SUBAGENT_START, "Stop": STOP, "SubagentStop": SUBAGENT_STOP,
              "SessionEnd": SESSION_END, "PostToolUse": TOOL, "UserPromptSubmit": PROMPT}

    def call(self, event: str, payload: dict[str, Any]) -> Call:
        tool = payload.get("tool_name")
        tool_input = payload.get("tool_input")
        tool_input = tool_input if isinstance(tool_input, dict) else {}
        written = text(tool_input, "file_path", "notebook_path") if tool in WRITE_TOOLS else None
        prompt = payload.get("prompt")
        return Call(
            self.events.get(event), agent_type=payload.get("agent_type"), session=text(payload, "session_id"),
            cwd=payload.get("cwd"), repeated=event == "SessionStart" and payload.get("source") in REPEATED_STARTS,
            task=prompt if isinstance(prompt, str) and prompt else None,
            last_message=text(payload, "last_assistant_message"),
            stop_hook_active=bool(payload.get("stop_hook_active")),
            command=text(tool_input, "command") if tool == "Bash" else None,
            files=(written,) if written else (), payload=payload)

    def transcript_dirs(self) -> list[Path]:
        return claude_dirs()

    def read_own(self, root: Path, call: Call, offset: Offset) -> Reading | None:
        transcript, key, keep = self.own_lines(root, call)
        if not transcript:
            return None
        entries, read_to = transcript_lines(transcript, offset(transcript, key))
        return Reading(parts([e for e in entries if keep(e)]), key=key, end=read_to, file=transcript)

    def own_lines(self, root: Path, call: Call) -> tuple[str | None, str, Callable[[Any], bool]]:
        """Which transcript a ``Stop``/``SubagentStop`` reads for the agent that stops, the key of its offset, and
        which of its lines are that agent's own: never another agent's learnings under this one's name."""
        payload = call.payload
        if call.action != SUBAGENT_STOP:
            transcript = self.readable(root, payload.get("transcript_path"))
            return transcript, transcript or "", lambda e: not sidechain(e)
        own = self.readable(root, payload.get("agent_transcript_path"))
        if own:
            return own, own, lambda e: True  # a subagent's own transcript: every line is its
        parent = self.readable(root, payload.get("transcript_path"))
        agent_id = payload.get("agent_id")
        if not parent:
            return None, "", sidechain
        log(root, f"SubagentStop: no agent_transcript_path for {payload.get('agent_type')!r}: only the parent "
                  "transcript's sidechain lines are read")

        def keep(entry: Any) -> bool:
            named = entry.get("agentId") if isinstance(entry, dict) else None
            return sidechain(entry) and not (isinstance(agent_id, str) and isinstance(named, str) and named != agent_id)

        # its own offset: the main Stop reads the same file's main lines from where it left off
        return parent, f"{parent}#sidechain", keep

    def subagent_task(self, root: Path, call: Call, agent_type: str) -> str | None:
        # SubagentStart carries no task (its input is the base fields, agent_id and agent_type): the parent
        # transcript's Agent call is the task, the very call when Claude Code's meta file beside the subagent's
        # transcript names it, else the latest for the agent's type
        parent = self.readable(root, call.payload.get("transcript_path"))
        if not parent:
            return None
        tool_use = subagent_meta(parent, call.payload.get("agent_id")).get("toolUseId")
        return subagent_task(parent, agent_type, tool_use if isinstance(tool_use, str) and tool_use else None)

    def answer(self, event: str, context: str | None) -> str:
        if not context:
            return ""
        return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})

    def label(self, event: str) -> str:
        return event  # Claude Code's events were recorded unprefixed from the start


HARNESS = Claude()
