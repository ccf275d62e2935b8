"""Claude Code hooks: ``cortex hook claude <event> [--agent NAME]`` with the hook's JSON on stdin.

* ``SessionStart`` / ``SubagentStart``: answer ``{"hookSpecificOutput": {"hookEventName", "additionalContext"}}``
  with the ``<agent-memory>`` block (under 10,000 characters) of the agent: ``agent_type`` for a subagent, the
  ``--agent`` of the hook command (or ``$CORTEX_HOOK_AGENT``) for the main session. A subagent's block is ranked
  for its task, read from the parent transcript's latest ``Agent``/``Task`` tool call for that agent type. The
  memories shown are touched once per session: a ``SessionStart`` whose ``source`` is ``resume``, ``compact`` or
  ``clear`` injects the block again without touching them.
* ``Stop`` / ``SubagentStop``: capture marker lines with ``agent_end`` from ``last_assistant_message`` and the
  assistant text the agent's own transcript gained since the last capture; ignored when ``stop_hook_active`` is
  true. Learnings go to the agent that wrote them: ``Stop`` reads the main transcript without its sidechain lines
  (``"isSidechain": true``: a subagent's); ``SubagentStop`` reads ``agent_transcript_path``, and without it only
  the sidechain lines of the parent transcript (of its ``agent_id`` where the lines name one), never the main
  agent's lines. Marker lines inside fenced code blocks are not captured (:mod:`cortex.markers`).

Events Cortex does not handle are one quiet line in the log (exit 0).

A coding agent's name is resolved to a declared agent (itself, or the agent that lists it in ``cortex:
aliases:``); built-in and undeclared agents (``Explore``, ``general-purpose``) have no memory: one quiet line in
the log, nothing else. A hook never blocks the agent and never loses a learning: every failure is one line in
``<project>/.cortex/logs/hooks.log`` (exit status 0), and a capture that could not be delivered for a reason that
may pass waits in the spool (:mod:`cortex.service.spool`) for the next hook or server start. With a running
server the hook is a few standard-library HTTP calls; without one it opens the store with lexical ranking only
(a model load would cost seconds). This module must not import mcp, fastapi or rdflib.
"""

from __future__ import annotations

import json
import os
import traceback
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cortex import config, provenance

EVENTS = ("SessionStart", "SubagentStart", "Stop", "SubagentStop", "SessionEnd")
#: SessionStart ``source`` values of a session that already started (its memories were touched then).
REPEATED_STARTS = ("resume", "compact", "clear")
#: Claude Code truncates additionalContext beyond 10,000 characters; stay under it with the wrapper.
MAX_CONTEXT = 9_500
AGENT_ENV = "CORTEX_HOOK_AGENT"
#: How much of the end of a parent transcript is read to find the subagent's task.
TASK_SCAN_BYTES = 4 * 1024 * 1024
#: The tool Claude Code starts subagents with (``Task`` in older versions).
SUBAGENT_TOOLS = ("Agent", "Task")
#: The part of a task a block is ranked for.
MAX_TASK_CHARS = 8000


class _Unknown(Exception):
    """The coding agent has no memory here (built-in, undeclared): logged quietly."""


def _log(root: Path, message: str) -> None:
    """One line in ``<root>/.cortex/logs/hooks.log`` (never through a symbolic link; in a directory that is not a
    Cortex project, on stderr only: a hook creates nothing there)."""
    line = f"{datetime.now(timezone.utc).isoformat(timespec='seconds')} {message}\n"
    if not _is_project(root) or _linked(root):
        import sys

        print(f"cortex: hook: {message}", file=sys.stderr)
        return
    try:
        from cortex.files import append_private, private_dir

        logs = root / ".cortex" / "logs"
        if logs.is_symlink() or (root / ".cortex").is_symlink():
            raise OSError("the log directory is a symbolic link")
        append_private(private_dir(logs) / "hooks.log", line)
    except OSError:
        pass  # nowhere to log: still exit 0


def _is_project(root: Path) -> bool:
    """Whether ``root`` uses Cortex: it has ``.cortex/`` or an agent directory. A hook run anywhere else (a
    payload's ``cwd`` of ``/etc``) reads and writes nothing there."""
    return (root / ".cortex").is_dir() or bool(config.discover_agent_dirs(root))


#: Where a hook writes in a project: never through a symbolic link (a cloned repository may carry one pointing
#: anywhere), unless the store is named explicitly ($CORTEX_STORE).
_OWN_PATHS = (".cortex", ".cortex/store", ".cortex/state", ".cortex/logs")


def _linked(root: Path) -> str | None:
    """The first of the project's Cortex paths that is a symbolic link, or None."""
    for part in _OWN_PATHS:
        if part != ".cortex/store" or not os.environ.get(config.STORE_ENV):
            if (root / part).is_symlink():
                return part
    return None


def _here() -> Path:
    """The current directory (``/`` when it was deleted under the hook: ``os.getcwd`` fails then)."""
    try:
        return Path(os.getcwd())
    except OSError:
        return Path("/")


def _claude_dirs() -> list[Path]:
    """Where Claude Code keeps transcripts: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    return [Path(configured).expanduser()] if configured else [Path.home() / ".claude"]


def _readable_transcript(root: Path, path: Any) -> str | None:
    """``path`` when it is a transcript a hook may read: a regular file inside the project or Claude Code's own
    directory (symbolic links resolved first); else None (logged)."""
    if not isinstance(path, str) or not path:
        return None
    try:
        real = Path(path).resolve()
        allowed = [root.resolve(), *(d.resolve() for d in _claude_dirs())]
    except (OSError, RuntimeError, ValueError):
        return None
    if not any(real.is_relative_to(d) for d in allowed):
        _log(root, f"transcript {path!r} is outside the project and Claude Code's directory: not read")
        return None
    return str(real) if real.is_file() else None


#: The most of a transcript one Stop hook reads (the rest is read by the next one).
MAX_TRANSCRIPT_READ = 64 * 1024 * 1024


def _transcript_lines(path: str, start: int) -> tuple[list[Any], int]:
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
            entries.append(json.loads(line))
        except ValueError:
            continue
    return entries, start + end


def _content(entry: Any, role: str) -> list[Any]:
    message = entry.get("message") if isinstance(entry, dict) else None
    if not isinstance(message, dict) or message.get("role") != role:
        return []
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def _sidechain(entry: Any) -> bool:
    """Whether a transcript line is a subagent's (``"isSidechain": true``), not its session's main agent's."""
    return isinstance(entry, dict) and entry.get("isSidechain") is True


def _marker_text(entries: list[Any]) -> str:
    """The marker lines of the assistant text of ``entries``, message by message (a code fence left open in one
    message does not hide the next one's learnings)."""
    from cortex.markers import marker_lines

    parts = [c.get("text", "") for e in entries for c in _content(e, "assistant")
             if isinstance(c, dict) and c.get("type") == "text"]
    return "\n".join(filter(None, (marker_lines(p) for p in parts if isinstance(p, str))))


def subagent_task(transcript: str, agent_type: str) -> str | None:
    """The task of the latest ``Agent``/``Task`` tool call for ``agent_type`` in the parent transcript: what the
    subagent was asked to do (its description and prompt), or None."""
    try:
        size = os.path.getsize(transcript)
        entries, _ = _transcript_lines(transcript, max(0, size - TASK_SCAN_BYTES))
    except OSError:
        return None
    for entry in reversed(entries):
        for part in reversed(_content(entry, "assistant")):
            if not isinstance(part, dict) or part.get("type") != "tool_use" or part.get("name") not in SUBAGENT_TOOLS:
                continue
            call = part.get("input")
            if isinstance(call, dict) and call.get("subagent_type") == agent_type:
                text = "\n".join(str(call[k]) for k in ("description", "prompt") if isinstance(call.get(k), str))
                return text or None
    return None


class _Offsets:
    """How far each transcript has been captured (``.cortex/state/transcripts.json``): a Stop hook runs after
    every turn, and re-reading the whole session would touch every earlier learning again each time."""

    def __init__(self, root: Path) -> None:
        self.path = root / ".cortex" / "state" / "transcripts.json"  # keyed by path (+ "#sidechain")
        from cortex.files import read_regular

        try:
            data = json.loads(read_regular(self.path, 16 * 1024 * 1024))
            self.data: dict[str, int] = data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            self.data = {}

    def get(self, transcript: str, key: str | None = None) -> int:
        offset = self.data.get(key or transcript, 0)
        try:
            return offset if isinstance(offset, int) and offset <= os.path.getsize(transcript) else 0
        except OSError:
            return 0

    def set(self, transcript: str, offset: int) -> None:
        self.data[transcript] = offset
        self._save()

    def _save(self) -> None:
        from cortex.files import atomic_write

        atomic_write(self.path, json.dumps(self.data))

    # which agents of which sessions were shown a block: their Stop hooks report what the agent used of it
    def shown(self, agent_type: str, session: str | None) -> bool:
        return bool(session) and self.data.get(f"shown\n{agent_type}\n{session}") == 1

    def set_shown(self, agent_type: str, session: str) -> None:
        shown = [k for k in self.data if k.startswith("shown\n")]
        for old in shown[:max(0, len(shown) - 255)]:  # the latest 256 sessions
            del self.data[old]
        self.data[f"shown\n{agent_type}\n{session}"] = 1
        self._save()


class _ServerHooks:
    """The calls a hook makes, sent to the running server with the standard library only (importing httpx and
    pydantic would cost more than the whole round trip)."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token

    def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        import urllib.error
        import urllib.request

        from cortex.discovery import local_opener

        request = urllib.request.Request(
            f"{self.url}/v1{path}", data=json.dumps(body).encode() if body is not None else None, method=method,
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self.token}",
                     **provenance.current().headers()})
        try:
            with local_opener().open(request, timeout=30) as response:
                from cortex import notices

                for note in notices.decode(response.headers.get(notices.HEADER)):
                    notices.notice(note)  # what the server's prune deleted: into the hook's log
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")[:300]
            raise ConnectionError(f"server answered {exc.code}: {detail}") from None

    def resolve_agent(self, name: str) -> str | None:
        from urllib.parse import quote

        answer = self._request("GET", f"/agents/resolve?name={quote(name, safe='')}")["agent"]
        return str(answer) if answer is not None else None

    def agent_start(self, agent: str, task: str | None, max_chars: int, *, touch: bool = True) -> str:
        body = {"task": task, "max_chars": max_chars, **({} if touch else {"touch": False})}
        return str(self._request("POST", f"/agents/{agent}/start", body)["block"])

    def agent_end(self, agent: str, output: str, project: str | None = None) -> None:
        self._request("POST", f"/agents/{agent}/end", {"output": output, "project": project})

    def record_task(self, agent: str, task: str, output: str = "", status: str = "ok") -> None:
        self._request("POST", f"/agents/{agent}/tasks", {"task": task, "output": output, "status": status})

    def record_use(self, agent: str, output: str, *, session: str | None = None) -> None:
        self._request("POST", f"/agents/{agent}/used", {"output": output, "session": session})

    def queue_transcript(self, agent: str, path: str, **options: Any) -> None:
        self._request("POST", f"/agents/{agent}/transcripts", {"path": path, **options, "wait": False})

    def close(self, *, flush: bool = True) -> None:
        pass


def _store(root: Path) -> tuple[Path | str, Path]:
    """The project's store location and the directory of its spool."""
    from cortex.state import state_dir_of

    store = config.default_store_path(root)
    state_dir = state_dir_of(store)
    from cortex.service.spool import SPOOL_DIR

    return store, (state_dir if state_dir is not None else root / ".cortex") / SPOOL_DIR


def _open(root: Path) -> Any:
    from cortex import discovery
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


def _transient(exc: BaseException) -> bool:
    """Whether a failed delivery may succeed later (then the capture is spooled rather than dropped)."""
    from cortex.errors import BrokenAgentError, InvalidInputError, MemoryDisabledError

    # a broken definition is fixed by editing the file: the capture waits for it (the error names the file)
    if isinstance(exc, BrokenAgentError) or (isinstance(exc, ConnectionError) and "BrokenAgentError" in str(exc)):
        return True
    if isinstance(exc, (InvalidInputError, MemoryDisabledError, _Unknown)):
        return False
    return not (isinstance(exc, ConnectionError) and ("answered 4" in str(exc) and "answered 408" not in str(exc)))


def _capture(root: Path, agent_type: str, text: str) -> None:
    """Deliver a capture (and what the spool holds); on a failure that may pass, spool it."""
    from cortex.service.spool import Spool

    _, spool_dir = _store(root)
    spool = Spool(spool_dir)
    try:
        cx = _open(root)
    except Exception as exc:
        if not _transient(exc):
            raise
        spool.put(agent_type, text)
        _log(root, f"capture for {agent_type!r} spooled (store not reachable: {type(exc).__name__}: {exc})")
        return
    try:
        try:
            agent = cx.resolve_agent(agent_type)
            if agent is None:
                raise _Unknown(agent_type)
            cx.agent_end(agent, text)
        except Exception as exc:
            if not _transient(exc):
                raise
            spool.put(agent_type, text)
            _log(root, f"capture for {agent_type!r} spooled ({type(exc).__name__}: {exc})")
            return
        _replay(root, cx, spool)
    finally:
        cx.close(flush=False)


def _replay(root: Path, cx: Any, spool: Any) -> None:
    """Deliver what waits in the spool through ``cx`` (after a delivery worked)."""
    if not spool.pending():
        return

    def deliver(agent_type: str, output: str, project: str | None) -> None:
        agent = cx.resolve_agent(agent_type)
        if agent is None:
            _log(root, f"spooled capture for {agent_type!r} dropped: no agent with memory has that name or alias")
            return
        cx.agent_end(agent, output, project)

    try:
        delivered = spool.replay(deliver)
        if delivered:
            _log(root, f"delivered {delivered} spooled capture(s)")
    except Exception as exc:
        _log(root, f"replaying the spool stopped: {type(exc).__name__}: {exc}")


#: The largest hook payload read (Claude Code's carry a message and paths, far less).
MAX_PAYLOAD = 16 * 1024 * 1024


def _payload(raw: str) -> Any:
    """The hook's JSON input; ValueError for anything that is not JSON (too large, or nested deeper than the
    parser goes)."""
    from cortex.errors import InvalidInputError

    if len(raw) > MAX_PAYLOAD:
        raise InvalidInputError("payload", f"is larger than {MAX_PAYLOAD} bytes")
    try:
        return json.loads(raw) if raw.strip() else {}
    except RecursionError:
        raise InvalidInputError("payload", "is nested too deeply") from None
    except ValueError as exc:
        raise InvalidInputError("payload", f"is not JSON: {exc}") from None


def run(event: str, raw: str, agent: str | None = None) -> str:
    """Handle one hook call; returns what to print on stdout ('' for nothing). Never raises. ``agent`` names the
    main session's agent (the hook command's ``--agent``). What it writes records the hook event and the
    session as its activity (PROV-O)."""
    try:
        try:
            payload = _payload(raw)
            session = payload.get("session_id") if isinstance(payload, dict) else None
        except ValueError:
            session = None
        with provenance.activity(surface="hook", event=event if isinstance(event, str) else None,
                                 session=session if isinstance(session, str) else None):
            return _run(event, raw, agent)
    except Exception as exc:  # a hook never fails its agent, whatever it was given
        _log(_here(), f"{event}: {type(exc).__name__}: {exc}")
        return ""


def _run(event: str, raw: str, agent: str | None) -> str:
    root = _here()
    try:
        payload = _payload(raw)
        if not isinstance(payload, dict):
            raise ValueError("the hook input is not a JSON object")
        cwd = payload.get("cwd")
        if cwd is not None and (not isinstance(cwd, str) or not os.path.isdir(cwd)):
            import sys

            print(f"cortex: hook: the payload's cwd {cwd!r} is not a directory; nothing done", file=sys.stderr)
            return ""
        root = config.find_project_root(cwd or _here())
        if not _is_project(root):
            return ""  # no agent is declared here: nothing to read, and nothing is created
        linked = _linked(root)
        if linked is not None:
            import sys

            print(f"cortex: hook: {root / linked} is a symbolic link: a hook writes nothing through it", file=sys.stderr)
            return ""
        if event not in EVENTS:
            _log(root, f"{str(event)[:100]!r}: not an event Cortex handles ({', '.join(EVENTS)}); nothing done")
            return ""
        agent_type = payload.get("agent_type") or agent or os.environ.get(AGENT_ENV)
        if not agent_type or not isinstance(agent_type, str):
            return ""
        if event in ("Stop", "SubagentStop", "SessionEnd"):
            if payload.get("stop_hook_active"):
                return ""
            last = payload.get("last_assistant_message")
            from cortex.markers import marker_lines

            # only what capture keeps is sent, however long the transcript
            found = marker_lines(last) if isinstance(last, str) else ""
            transcript, key, keep = _own_lines(root, event, payload)
            offsets, read_to = None, 0
            entries: list[Any] = []
            if transcript:
                offsets = _Offsets(root)
                entries, read_to = _transcript_lines(transcript, offsets.get(transcript, key))
                found = f"{_marker_text([e for e in entries if keep(e)])}\n{found}".strip("\n")
            if found:
                from cortex import notices

                with notices.collect() as notes:
                    try:
                        _capture(root, agent_type, found)
                    finally:
                        for note in notes:
                            _log(root, f"{event}: {note}")
            if offsets is not None and transcript:  # delivered or spooled: this part of the transcript is done
                offsets.set(key, read_to)
            session = payload.get("session_id") if isinstance(payload.get("session_id"), str) else None
            if transcript and offsets is not None and offsets.shown(agent_type, session):
                _use(root, agent_type, _output_text([e for e in entries if keep(e)]), session)
            if event == "SubagentStop":
                _task_outcome(root, agent_type, payload, transcript, entries if transcript else [], keep)
            if event in ("SubagentStop", "SessionEnd") and transcript:
                _extract_later(root, agent_type, transcript)
            return ""
        task = payload.get("prompt") or None
        parent = _readable_transcript(root, payload.get("transcript_path")) if event == "SubagentStart" else None
        if not task and parent:
            task = subagent_task(parent, agent_type)
        if isinstance(task, str):
            task = task[:MAX_TASK_CHARS]  # enough to rank by; the rest only costs time
        cx = _open(root)
        try:
            name = cx.resolve_agent(agent_type)
            if name is None:
                raise _Unknown(agent_type)
            # a session resumed, compacted or cleared gets its block again; it was touched at its start
            touch = not (event == "SessionStart" and payload.get("source") in REPEATED_STARTS)
            block = cx.agent_start(name, task, max_chars=MAX_CONTEXT, touch=touch)
        finally:
            cx.close(flush=False)  # committed writes survive the process; a hook does not pay for an fsync
        if not block:
            return ""
        session = payload.get("session_id")
        if isinstance(session, str) and session:
            _Offsets(root).set_shown(agent_type, session)
        return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": block}})
    except _Unknown as exc:
        _log(root, f"{event}: no memory for agent type {exc.args[0]!r} (built-in or not declared; "
                   "docs/agents.md says how to give it memory)")
        return ""
    except Exception as exc:  # a hook must never fail the agent: log everything
        from cortex.errors import CortexError

        detail = "" if isinstance(exc, CortexError) else f"\n{traceback.format_exc()}"
        _log(root, f"{event}: {type(exc).__name__}: {exc}{detail}")
        return ""


def _output_text(entries: list[Any]) -> str:
    """What the agent wrote and did in ``entries``: its text, and its tool calls' inputs."""
    parts: list[str] = []
    for entry in entries:
        for c in _content(entry, "assistant"):
            if isinstance(c, dict) and c.get("type") == "text" and isinstance(c.get("text"), str):
                parts.append(c["text"])
            elif isinstance(c, dict) and c.get("type") == "tool_use":
                parts.append(json.dumps(c.get("input"), ensure_ascii=False)[:20_000])
    return "\n".join(parts)[-USE_TEXT_CHARS:]


#: The most of an agent's output a Stop hook sends for the "used" signal (its end).
USE_TEXT_CHARS = 256 * 1024


def _use(root: Path, agent_type: str, text: str, session: str | None) -> None:
    """Report what the agent's new output drew on of the block it was shown (best effort: logged on failure)."""
    if not text.strip():
        return
    try:
        cx = _open(root)
        try:
            name = cx.resolve_agent(agent_type)
            if name is not None:
                cx.record_use(name, text, session=session)
        finally:
            cx.close(flush=False)
    except Exception as exc:
        _log(root, f"used signal for {agent_type!r} not recorded: {type(exc).__name__}: {exc}")


def _task_outcome(root: Path, agent_type: str, payload: dict[str, Any], transcript: str | None,
                  entries: list[Any], keep: Callable[[Any], bool]) -> None:
    """Record the subagent's task and its final message (bounded) as a task outcome of the subagent."""
    from cortex.capture.tasks import task_status

    final = payload.get("last_assistant_message")
    if not isinstance(final, str) or not final.strip():
        texts = [c.get("text", "") for e in entries if keep(e) for c in _content(e, "assistant")
                 if isinstance(c, dict) and c.get("type") == "text"]
        final = next((t for t in reversed(texts) if isinstance(t, str) and t.strip()), "")
    from cortex.markers import marker_lines

    # its marker lines are learnings already (captured above): the outcome is the rest
    learned = set(marker_lines(final).splitlines())
    final = "\n".join(x for x in final.splitlines() if x.strip() not in learned and x not in learned).strip()
    parent = _readable_transcript(root, payload.get("transcript_path"))
    task = subagent_task(parent, agent_type) if parent else None
    if not task and not final:
        return  # neither what it was asked nor what came of it: nothing worth a memory
    task = task or f"a task of {agent_type}"
    try:
        cx = _open(root)
        try:
            name = cx.resolve_agent(agent_type)
            if name is None:
                raise _Unknown(agent_type)
            cx.record_task(name, task[:MAX_TASK_CHARS], final[-8000:], task_status(final))
        finally:
            cx.close(flush=False)
    except _Unknown:
        raise
    except Exception as exc:
        _log(root, f"SubagentStop: task outcome of {agent_type!r} not recorded: {type(exc).__name__}: {exc}")


def _extract_later(root: Path, agent_type: str, transcript: str) -> None:
    """With a language model configured, have the transcript's learnings and summary extracted after the hook
    has answered: in the server's queue, else by a detached ``cortex capture`` process."""
    from cortex.llm import llm_settings

    try:
        if llm_settings(project_root=root) is None:
            return
    except Exception as exc:  # a bad setting is named in the log, and the hook goes on
        _log(root, f"language model settings: {exc}")
        return
    options = {"markers": False, "tasks": False}  # the hooks captured both already
    from cortex import discovery
    from cortex.state import state_dir_of

    state_dir = state_dir_of(config.default_store_path(root))
    info = discovery.find(state_dir) if state_dir is not None else None
    if info is not None:
        try:
            hooks = _ServerHooks(info.url, os.environ.get("CORTEX_TOKEN") or info.token)
            name = hooks.resolve_agent(agent_type)
            if name is not None:
                hooks.queue_transcript(name, transcript, **options)
            return
        except Exception as exc:
            _log(root, f"capture queue not reachable ({type(exc).__name__}: {exc}); capturing in a process")
    import subprocess
    import sys

    from cortex.files import private_dir

    logs = private_dir(root / ".cortex" / "logs")
    with open(logs / "capture.log", "ab") as out:
        subprocess.Popen([sys.executable, "-m", "cortex", "capture", agent_type, "--transcript", transcript,
                          "--no-markers", "--no-tasks", "--model-first"], cwd=root, stdin=subprocess.DEVNULL, stdout=out,
                         stderr=out, start_new_session=True)


def _own_lines(root: Path, event: str,
               payload: dict[str, Any]) -> tuple[str | None, str, Callable[[Any], bool]]:
    """Which transcript a ``Stop``/``SubagentStop`` reads for the agent that stops, the key of its offset, and
    which of its lines are that agent's own: never another agent's learnings under this one's name."""
    if event in ("Stop", "SessionEnd"):
        transcript = _readable_transcript(root, payload.get("transcript_path"))
        return transcript, transcript or "", lambda e: not _sidechain(e)
    own = _readable_transcript(root, payload.get("agent_transcript_path"))
    if own:
        return own, own, lambda e: True  # a subagent's own transcript: every line is its
    parent = _readable_transcript(root, payload.get("transcript_path"))
    agent_id = payload.get("agent_id")
    if not parent:
        return None, "", _sidechain
    _log(root, f"SubagentStop: no agent_transcript_path for {payload.get('agent_type')!r}: only the parent "
               "transcript's sidechain lines are read")

    def keep(entry: Any) -> bool:
        named = entry.get("agentId") if isinstance(entry, dict) else None
        return _sidechain(entry) and not (isinstance(agent_id, str) and isinstance(named, str) and named != agent_id)

    # its own offset: the main Stop reads the same file's main lines from where it left off
    return parent, f"{parent}#sidechain", keep


USAGE = "usage: cortex hook claude EVENT [--agent NAME]"


def main(argv: list[str]) -> int:
    """``cortex hook claude EVENT [--agent NAME]`` (``argv``: what follows ``hook``) without the CLI's imports
    (see :mod:`cortex.__main__`). Always 0, a malformed command line too: a coding agent reads another status
    as a hook's refusal (Claude Code: exit 2 blocks the agent from stopping)."""
    import sys

    try:
        agent = None
        args = list(argv)
        if len(args) == 4 and args[2] == "--agent":
            args, agent = args[:2], args[3]
        if len(args) != 2 or args[0] != "claude" or args[1].startswith("-"):
            print(f"cortex: hook: {USAGE}; got {' '.join(argv)!r}: nothing done", file=sys.stderr)
            _log(config.find_project_root(_here()), f"malformed hook command line {argv!r}: nothing done ({USAGE})")
            return 0
        try:
            raw = sys.stdin.read(MAX_PAYLOAD + 1) if sys.stdin is not None else ""
        except (OSError, ValueError, UnicodeDecodeError) as exc:  # closed, or not text
            _log(config.find_project_root(_here()), f"{args[1]}: cannot read the hook input: {exc}")
            return 0
    except Exception as exc:  # whatever the process was given, a hook exits 0
        print(f"cortex: hook: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 0
    out = run(args[1], raw, agent)
    if out:
        try:
            print(out, flush=True)
        except OSError:  # the reader went away (a broken pipe): still exit 0, as a hook must
            pass
    return 0
