"""Claude Code hooks: ``cortex hook claude <event>`` with the hook's JSON on stdin.

* ``SessionStart`` / ``SubagentStart``: answer ``{"hookSpecificOutput": {"hookEventName", "additionalContext"}}``
  with the ``<agent-memory>`` block of the agent in ``agent_type`` (under 10,000 characters); nothing without
  an agent (``$CORTEX_HOOK_AGENT`` names one for the main session).
* ``Stop`` / ``SubagentStop``: capture marker lines with ``agent_end`` from ``last_assistant_message`` (and the
  assistant text of the transcript file, when given); ignored when ``stop_hook_active`` is true. Prints nothing.

A hook never blocks the agent: every failure is appended to ``<project>/.cortex/logs/hooks.log`` and the exit
status is 0. The project root comes from the payload's ``cwd``. Without a running server the store is opened
here with lexical ranking only (loading an embedding model would cost seconds per hook); with one, the
server ranks. This module must not import mcp, fastapi or rdflib.
"""

from __future__ import annotations

import json
import os
import traceback
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cortex import config

EVENTS = ("SessionStart", "SubagentStart", "Stop", "SubagentStop")
#: Claude Code truncates additionalContext beyond 10,000 characters; stay under it with the wrapper.
MAX_CONTEXT = 9_500
AGENT_ENV = "CORTEX_HOOK_AGENT"


def _log(root: Path, message: str) -> None:
    try:
        from cortex.files import private_dir

        logs = private_dir(root / ".cortex" / "logs")
        with open(logs / "hooks.log", "a", encoding="utf-8") as fh:
            fh.write(f"{datetime.now(timezone.utc).isoformat(timespec='seconds')} {message}\n")
    except OSError:
        pass  # nowhere to log: still exit 0


def _transcript_text(path: str, start: int) -> tuple[str, int]:
    """The assistant text of a Claude Code transcript (JSONL) from byte ``start`` on, and where it ends
    (after the last complete line)."""
    parts: list[str] = []
    with open(path, "rb") as fh:
        fh.seek(start)
        data = fh.read()
    end = data.rfind(b"\n") + 1
    for line in data[:end].decode("utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text")
    return "\n".join(parts), start + end


class _Offsets:
    """How far each transcript has been captured (``.cortex/state/transcripts.json``): a Stop hook runs after
    every turn, and re-reading the whole session would touch every earlier learning again each time."""

    def __init__(self, root: Path) -> None:
        self.path = root / ".cortex" / "state" / "transcripts.json"
        try:
            self.data: dict[str, int] = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.data = {}

    def get(self, transcript: str) -> int:
        offset = self.data.get(transcript, 0)
        try:
            return offset if isinstance(offset, int) and offset <= os.path.getsize(transcript) else 0
        except OSError:
            return 0

    def set(self, transcript: str, offset: int) -> None:
        self.data[transcript] = offset
        from cortex.files import atomic_write

        atomic_write(self.path, json.dumps(self.data))


class _ServerHooks:
    """The two calls a hook makes, sent to the running server with the standard library only (importing
    httpx and pydantic would cost more than the whole round trip)."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        import urllib.error
        import urllib.parse
        import urllib.request

        request = urllib.request.Request(
            f"{self.url}/v1{path}", data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self.token}"})
        from cortex.service.discovery import local_opener

        try:
            with local_opener().open(request, timeout=30) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise RuntimeError(f"server answered {exc.code}: {exc.read().decode(errors='replace')[:300]}") from None

    def agent_start(self, agent: str, task: str | None, max_chars: int) -> str:
        from urllib.parse import quote

        return str(self._post(f"/agents/{quote(agent, safe='')}/start", {"task": task, "max_chars": max_chars})["block"])

    def agent_end(self, agent: str, output: str) -> None:
        from urllib.parse import quote

        self._post(f"/agents/{quote(agent, safe='')}/end", {"output": output})

    def close(self, *, flush: bool = True) -> None:
        pass


def _open(root: Path) -> Any:
    from cortex.service import discovery
    from cortex.state import state_dir_of

    store = config.default_store_path(root)
    state_dir = state_dir_of(store)
    info = discovery.find(state_dir) if state_dir is not None else None
    if info is not None:
        return _ServerHooks(info.url, os.environ.get("CORTEX_TOKEN") or info.token)
    from cortex.core import Cortex
    from cortex.service.connect import connect

    cx = connect(store, embeddings="none")
    if not isinstance(cx, Cortex):
        return cx  # the server's client: the server knows the agents
    from cortex.agents import AgentRegistry

    registry = AgentRegistry()
    for problem in registry.load(config.discover_agent_dirs(root)):
        _log(root, f"agent definition problem: {problem}")
    cx.agents = registry
    return cx


def run(event: str, raw: str) -> str:
    """Handle one hook call; returns what to print on stdout ('' for nothing). Never raises."""
    root = Path(os.getcwd())
    try:
        payload = json.loads(raw) if raw.strip() else {}
        if not isinstance(payload, dict):
            raise ValueError("the hook input is not a JSON object")
        root = config.find_project_root(payload.get("cwd") or os.getcwd())
        if event not in EVENTS:
            raise ValueError(f"unknown hook event {event!r}; expected one of {', '.join(EVENTS)}")
        agent = payload.get("agent_type") or os.environ.get(AGENT_ENV)
        if not agent:
            return ""
        if event in ("Stop", "SubagentStop"):
            if payload.get("stop_hook_active"):
                return ""
            text = payload.get("last_assistant_message") or ""
            transcript = payload.get("agent_transcript_path") or payload.get("transcript_path")
            offsets, read_to = None, 0
            if transcript and Path(transcript).is_file():
                offsets = _Offsets(root)
                earlier, read_to = _transcript_text(transcript, offsets.get(transcript))
                text = f"{earlier}\n{text}"
            if text.strip():
                cx = _open(root)
                try:
                    cx.agent_end(agent, text)
                finally:
                    cx.close(flush=False)
            if offsets is not None:
                offsets.set(str(transcript), read_to)
            return ""
        cx = _open(root)
        try:
            block = cx.agent_start(agent, payload.get("prompt") or None, max_chars=MAX_CONTEXT)
        finally:
            cx.close(flush=False)  # committed writes survive the process; a hook does not pay for an fsync
        if not block:
            return ""
        return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": block}})
    except Exception as exc:  # a hook must never fail the agent: log everything
        _log(root, f"{event}: {type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        return ""


def main(argv: list[str]) -> int:
    """``cortex hook claude EVENT`` without the CLI's imports (see :mod:`cortex.__main__`)."""
    import sys

    if len(argv) != 1:
        print("usage: cortex hook claude EVENT", file=sys.stderr)
        return 2
    out = run(argv[0], sys.stdin.read())
    if out:
        try:
            print(out, flush=True)
        except OSError:  # the reader went away (a broken pipe): still exit 0, as a hook must
            pass
    return 0
