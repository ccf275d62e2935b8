"""Coding-agent hooks: ``cortex hook claude|codex|cursor|gemini <event> [--agent NAME]`` with the hook's JSON on
stdin. Each tool's adapter (:mod:`cortex.service.harnesses`) maps its events and payload fields to what this module
does for all of them, and renders its tool's output; what follows is said in Claude Code's terms (docs/agents.md
has each tool's).

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
  agent's lines. Marker lines inside fenced code blocks are not captured (:mod:`cortex.markers`). With a language
  model configured, a lead's ``Stop`` also has the round end of each (non-temporary) team it leads run after the
  hook has answered (``Cortex.team_round_end``: in the server's queue, else a detached ``cortex team round-end``).
* ``PostToolUse``: the marker lines of a Beads comment a Bash command added (``bd comment ID "LEARNED: ..."``)
  become the agent's memories, ``bead ID`` in their PROV-O activity (channel ``beads``); a Markdown file a Write
  or Edit changed is synced when it is in a notes directory (``Cortex.sync_notes(file=...)``).

Events Cortex does not handle are one quiet line in the log (exit 0), and so is a payload without a field the
adapter's version of the tool sends (it is handled with what it has).

A coding agent's name is resolved to a declared agent (itself, or the agent that lists it in ``cortex:
aliases:``); built-in and undeclared agents (``Explore``, ``general-purpose``) have no memory: one quiet line in
the log, nothing else. A hook never blocks the agent and never loses a learning: every failure is one line in
``<project>/.cortex/logs/hooks.log`` (exit status 0), and a capture that could not be delivered for a reason that
may pass waits in the spool (:mod:`cortex.service.spool`) for the next hook or server start. With a running
server the hook is a few standard-library HTTP calls; without one it opens the store with lexical ranking only
(a model load would cost seconds). This module must not import mcp, fastapi or rdflib.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import traceback
from pathlib import Path
from typing import Any

from cortex import config, provenance
from cortex.service import harnesses
from cortex.service.harnesses.base import ENDS, SESSION_END, STOP, SUBAGENT_START, SUBAGENT_STOP, TOOL, Call, \
    Harness, is_project as _is_project, linked as _linked, log as _log, quietly, reset_quiet, say as _say

AGENT_ENV = "CORTEX_HOOK_AGENT"
#: The part of a task a block is ranked for.
MAX_TASK_CHARS = 8000


class _Unknown(Exception):
    """The coding agent has no memory here (built-in, undeclared): logged quietly."""


def _here() -> Path:
    """The current directory (``/`` when it was deleted under the hook: ``os.getcwd`` fails then)."""
    try:
        return Path(os.getcwd())
    except OSError:
        return Path("/")


def _marker_text(parts: list[tuple[str, str]]) -> str:
    """The marker lines of the agent's text in ``parts``, message by message (a code fence left open in one
    message does not hide the next one's learnings)."""
    from cortex.markers import marker_lines

    return "\n".join(filter(None, (marker_lines(t) for kind, t in parts if kind == "text")))


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

    def sync_notes(self, agent: str | None = None, *, file: str | None = None) -> None:
        self._request("POST", "/notes/sync", {"agent": agent, "file": file})

    def led_teams(self, agent: str) -> list[str]:
        """The teams ``agent`` leads (all of its teams when it is a lead with memory; none otherwise)."""
        agents = self._request("GET", "/agents")
        entry = next((a for a in agents if a.get("name") == agent), None)
        if entry is None or not entry.get("lead") or not entry.get("memory_enabled"):
            return []
        temporary = {t for a in agents if a.get("memory_enabled") for t in a.get("temporary_teams") or {}}
        return [str(t) for t in entry.get("teams") or [] if t not in temporary]

    def queue_round_end(self, team: str) -> None:
        from urllib.parse import quote

        self._request("POST", f"/teams/{quote(team, safe='')}/round-end", {"wait": False})

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


def run(event: str, raw: str, agent: str | None = None, harness: str = "claude") -> str:
    """Handle one hook call of the coding agent ``harness`` (claude, codex, cursor, gemini); returns what to print
    on stdout ('' for nothing). Never raises. ``agent`` names the main session's agent (the hook command's
    ``--agent``). What it writes records the hook event and the session as its activity (PROV-O)."""
    adapter = harnesses.get(harness)
    if adapter is None:
        _log(_here(), f"{str(harness)[:100]!r}: not a coding agent Cortex has hooks for "
                      f"({', '.join(harnesses.NAMES)}); nothing done")
        return ""
    quiet = quietly(adapter.quiet)
    try:
        with contextlib.redirect_stderr(io.StringIO()) if adapter.quiet else contextlib.nullcontext():
            try:
                payload = _payload(raw)
                session = adapter.call(event, payload).session if isinstance(payload, dict) else None
            except ValueError:
                session = None
            with provenance.activity(surface="hook", event=adapter.label(event) if isinstance(event, str) else None,
                                     session=session):
                return _run(adapter, event, raw, agent)
    except Exception as exc:  # a hook never fails its agent, whatever it was given
        _log(_here(), f"{event}: {type(exc).__name__}: {exc}")
        return adapter.answer(event, None)
    finally:
        reset_quiet(quiet)


def _run(adapter: Harness, event: str, raw: str, agent: str | None) -> str:
    root = _here()
    where = adapter.label(event)
    nothing = adapter.answer(event, None)
    try:
        payload = _payload(raw)
        if not isinstance(payload, dict):
            from cortex.errors import InvalidInputError

            raise InvalidInputError("payload", "is not a JSON object")
        call = adapter.call(event, payload)
        cwd = call.cwd
        if cwd is not None and (not isinstance(cwd, str) or not os.path.isdir(cwd)):
            _say(f"the payload's cwd {cwd!r} is not a directory; nothing done")
            return nothing
        root = config.find_project_root(cwd or _here())
        if not _is_project(root):
            return nothing  # no agent is declared here: nothing to read, and nothing is created
        linked = _linked(root)
        if linked is not None:
            _say(f"{root / linked} is a symbolic link: a hook writes nothing through it")
            return nothing
        if call.action is None:
            _log(root, f"{where[:100]!r}: not an event Cortex handles ({', '.join(adapter.events)}); nothing done")
            return nothing
        missing = [field for field in adapter.expected(event) if field not in payload]
        if missing:  # another version of the tool: what the payload has is used, and the log says what it lacks
            _log(root, f"{where}: the payload has no {', '.join(missing)} (another version of {adapter.title}?); "
                       "handled with what it has")
        agent_type = call.agent_type or agent or os.environ.get(AGENT_ENV)
        if call.action == TOOL:
            _tool(root, where, call, agent_type)
            return nothing
        if not agent_type or not isinstance(agent_type, str):
            return nothing
        if call.action in ENDS:
            _end(root, adapter, where, call, agent_type)
            return nothing
        task = call.task
        if not task and call.action == SUBAGENT_START:
            task = adapter.subagent_task(root, call, agent_type)
        if isinstance(task, str):
            task = task[:MAX_TASK_CHARS]  # enough to rank by; the rest only costs time
        # a session resumed, compacted or cleared gets its block again; it was touched at its start (a tool that
        # does not say: a session that was shown a block before)
        repeated = call.repeated if call.repeated is not None else _Offsets(root).shown(agent_type, call.session)
        cx = _open(root)
        try:
            name = cx.resolve_agent(agent_type)
            if name is None:
                raise _Unknown(agent_type)
            block = cx.agent_start(name, task, max_chars=adapter.max_context, touch=not repeated)
        finally:
            cx.close(flush=False)  # committed writes survive the process; a hook does not pay for an fsync
        if not block:
            return nothing
        if call.session:
            _Offsets(root).set_shown(agent_type, call.session)
        return adapter.answer(event, adapter.context(block, name))
    except _Unknown as exc:
        _log(root, f"{where}: no memory for agent type {exc.args[0]!r} (built-in or not declared; "
                   "docs/agents.md says how to give it memory)")
        return nothing
    except Exception as exc:  # a hook must never fail the agent: log everything
        from cortex.errors import CortexError

        detail = "" if isinstance(exc, CortexError) else f"\n{traceback.format_exc()}"
        _log(root, f"{where}: {type(exc).__name__}: {exc}{detail}")
        return nothing


def _end(root: Path, adapter: Harness, where: str, call: Call, agent_type: str) -> None:
    """An agent stopped (a turn, a subagent, the session): capture the marker lines of what it wrote since the last
    capture, report what it drew on of its block, record a subagent's task outcome, and with a language model
    have its transcript read later."""
    if call.stop_hook_active:
        return
    from cortex.markers import marker_lines

    # only what capture keeps is sent, however long the transcript
    found = marker_lines(call.last_message) if call.last_message else ""
    offsets = _Offsets(root)
    reading = adapter.read_own(root, call, offsets.get)
    if reading is not None:
        found = f"{_marker_text(reading.parts)}\n{found}".strip("\n")
    if found:
        _deliver(root, where, agent_type, found)
    if reading is not None and reading.key:  # delivered or spooled: this part of the transcript is done
        offsets.set(reading.key, reading.end)
    if reading is not None and offsets.shown(agent_type, call.session):
        _use(root, agent_type, _output_text(reading.parts), call.session)
    if call.action == SUBAGENT_STOP:
        _task_outcome(root, adapter, where, call, agent_type, reading.parts if reading is not None else [])
    if call.action in (SUBAGENT_STOP, SESSION_END) and reading is not None and reading.file:
        _extract_later(root, agent_type, reading.file)
    if call.action == STOP:
        _round_end_later(root, agent_type)


def _deliver(root: Path, where: str, agent_type: str, found: str) -> None:
    """Capture ``found`` (marker lines) for ``agent_type``, what it notices in the log."""
    from cortex import notices

    with notices.collect() as notes:
        try:
            _capture(root, agent_type, found)
        finally:
            for note in notes:
                _log(root, f"{where}: {note}")


def _tool(root: Path, where: str, call: Call, agent_type: Any) -> None:
    """A tool ran: the marker lines of the Beads comments its command added become the agent's memories (the bead
    in their provenance), and a Markdown file it wrote is synced when it is a notes file."""
    if call.command:
        from cortex.markers import marker_lines
        from cortex.service.harnesses.tools import bead_comments

        comments = [(bead, marker_lines(comment)) for bead, comment in bead_comments(call.command)]
        for bead, found in comments:
            if not found:
                continue
            if not agent_type or not isinstance(agent_type, str):
                _log(root, f"{where}: the learnings of a comment on bead {bead} not captured: no agent "
                           "(cortex install ... --agent NAME names the main session's)")
                continue
            with provenance.activity(channel="beads", part=f"bead {bead}"):
                _deliver(root, where, agent_type, found)
    for path in call.files:
        _notes_changed(root, where, call, path)


def _notes_changed(root: Path, where: str, call: Call, path: str) -> None:
    """Sync a Markdown file a tool wrote when it is in a notes directory: ``.cortex/notes/`` of the project or
    one an agent's definition lists (``cortex: notes:``); other Markdown files are left alone, without opening
    the store."""
    if not path.lower().endswith(".md"):
        return
    base = call.cwd if isinstance(call.cwd, str) and call.cwd else str(root)
    full = Path(path) if os.path.isabs(path) else Path(base) / path
    if not _in_notes(root, full):
        return
    try:
        cx = _open(root)
        try:
            cx.sync_notes(file=str(full))
        finally:
            cx.close(flush=False)
    except Exception as exc:
        _log(root, f"{where}: notes file {path!r} not synced: {type(exc).__name__}: {exc}")


def _in_notes(root: Path, path: Path) -> bool:
    """Whether ``path`` is in the project's notes tree or a notes directory an agent lists (links resolved)."""
    from cortex.capture.notes import inside

    if inside(path, root / ".cortex" / "notes") is not None:
        return True
    from cortex.agents import AgentRegistry

    registry = AgentRegistry()
    registry.load(config.discover_agent_dirs(root))
    for definition in registry.list():
        for entry in definition.settings.notes:
            directory = Path(os.path.expanduser(entry))
            if inside(path, directory if directory.is_absolute() else root / directory) is not None:
                return True
    return False


def _output_text(parts: list[tuple[str, str]]) -> str:
    """What the agent wrote and did in ``parts``: its text, and its tool calls' inputs."""
    return "\n".join(t for _, t in parts)[-USE_TEXT_CHARS:]


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


#: How a tool says a subagent did not finish its task (Cursor's ``subagentStop.status``).
FAILED_STATUSES = ("error", "errored", "failed", "aborted", "cancelled", "canceled", "timeout")


def _task_outcome(root: Path, adapter: Harness, where: str, call: Call, agent_type: str,
                  parts: list[tuple[str, str]]) -> None:
    """Record the subagent's task and its final message (bounded) as a task outcome of the subagent."""
    from cortex.capture.tasks import task_status

    final = call.last_message
    if not final or not final.strip():
        final = next((t for kind, t in reversed(parts) if kind == "text" and t.strip()), "")
    from cortex.markers import marker_lines

    # its marker lines are learnings already (captured above): the outcome is the rest
    learned = set(marker_lines(final).splitlines())
    final = "\n".join(x for x in final.splitlines() if x.strip() not in learned and x not in learned).strip()
    task = adapter.subagent_task(root, call, agent_type)
    if not task and not final:
        return  # neither what it was asked nor what came of it: nothing worth a memory
    task = task or f"a task of {agent_type}"
    try:
        cx = _open(root)
        try:
            name = cx.resolve_agent(agent_type)
            if name is None:
                raise _Unknown(agent_type)
            status = "failed" if (call.status or "").lower() in FAILED_STATUSES else task_status(final)
            cx.record_task(name, task[:MAX_TASK_CHARS], final[-8000:], status)
        finally:
            cx.close(flush=False)
    except _Unknown:
        raise
    except Exception as exc:
        _log(root, f"{where}: task outcome of {agent_type!r} not recorded: {type(exc).__name__}: {exc}")


def _llm_configured(root: Path) -> bool:
    """Whether a language model is configured for the project (a bad setting is named in the log: False)."""
    from cortex.llm import llm_settings

    try:
        return llm_settings(project_root=root) is not None
    except Exception as exc:  # the hook goes on
        _log(root, f"language model settings: {exc}")
        return False


def _owning_server(root: Path, agent_type: str) -> "tuple[_ServerHooks, str | None] | None":
    """The server that owns the project's store (its hooks' client) and the agent's name there, or None when no
    server owns it; raises when it cannot be asked."""
    from cortex import discovery
    from cortex.state import state_dir_of

    state_dir = state_dir_of(config.default_store_path(root))
    info = discovery.find(state_dir) if state_dir is not None else None
    if info is None:
        return None
    hooks = _ServerHooks(info.url, os.environ.get("CORTEX_TOKEN") or info.token)
    return hooks, hooks.resolve_agent(agent_type)


def _extract_later(root: Path, agent_type: str, transcript: str) -> None:
    """With a language model configured, have the transcript's learnings and summary extracted after the hook
    has answered: in the server's queue, else by a detached ``cortex capture`` process."""
    if not _llm_configured(root):
        return
    options = {"markers": False, "tasks": False}  # the hooks captured both already
    try:
        found = _owning_server(root, agent_type)
        if found is not None:
            hooks, name = found
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


def _round_end_later(root: Path, agent_type: str) -> None:
    """A lead ended a turn: with a language model configured, have the round end of each (non-temporary) team it
    leads run after the hook has answered: in the server's queue, else by a detached ``cortex team round-end TEAM``
    process (one at a time per team). Another agent costs the check that the model is configured, and one
    request to the server (or reading the definitions)."""
    if not _llm_configured(root):
        return
    try:
        found = _owning_server(root, agent_type)
        if found is not None:
            hooks, name = found
            for team in hooks.led_teams(name) if name is not None else []:
                try:
                    hooks.queue_round_end(team)
                except ConnectionError as exc:
                    _log(root, f"round end of team {team!r} not queued: {exc}")
            return
    except Exception as exc:
        _log(root, f"the server's queue not reachable for round ends ({type(exc).__name__}: {exc}); "
                   "running them in a process")
    from cortex.agents import AgentRegistry

    registry = AgentRegistry()
    registry.load(config.discover_agent_dirs(root))
    name = registry.resolve(agent_type)
    definition = registry.get(name) if name is not None else None
    if definition is None or not definition.memory_enabled or not definition.settings.lead:
        return
    temporary = {t for d in registry.list() if d.memory_enabled for t in d.settings.parents}
    for team in definition.settings.teams:
        if team not in temporary:
            _spawn_round_end(root, team)


def _spawn_round_end(root: Path, team: str) -> None:
    """``cortex team round-end TEAM`` in a detached process, unless the one started before still runs."""
    import subprocess
    import sys

    from cortex.files import atomic_write, private_dir, read_regular

    logs = private_dir(root / ".cortex" / "logs")
    pids = logs / "round-end.json"
    try:
        running = json.loads(read_regular(pids, 64 * 1024))
        running = running if isinstance(running, dict) else {}
    except (OSError, ValueError):
        running = {}
    pid = running.get(team)
    if isinstance(pid, int) and pid > 0:
        try:
            os.kill(pid, 0)
            return  # the round end started at an earlier turn still runs: it reads this round too
        except ProcessLookupError:
            pass
        except OSError:  # alive, another user's: not ours to wait for
            pass
    with open(logs / "round-end.log", "ab") as out:
        process = subprocess.Popen([sys.executable, "-m", "cortex", "team", "round-end", team], cwd=root,
                                   stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True)
    running[team] = process.pid
    atomic_write(pids, json.dumps(running))


USAGE = f"usage: cortex hook {'|'.join(harnesses.NAMES)} EVENT [--agent NAME]"


def main(argv: list[str]) -> int:
    """``cortex hook claude|codex|cursor|gemini EVENT [--agent NAME]`` (``argv``: what follows ``hook``) without
    the CLI's imports (see :mod:`cortex.__main__`). Always 0, a malformed command line too: a coding agent reads
    another status as a hook's refusal (Claude Code: exit 2 blocks the agent from stopping; Codex: it continues
    the turn; Cursor: it denies the action; Gemini CLI: it retries the turn)."""
    import sys

    try:
        agent = None
        args = list(argv)
        if len(args) == 4 and args[2] == "--agent":
            args, agent = args[:2], args[3]
        if len(args) != 2 or args[0] not in harnesses.NAMES or args[1].startswith("-"):
            print(f"cortex: hook: {USAGE}; got {' '.join(argv)!r}: nothing done", file=sys.stderr)
            _log(config.find_project_root(_here()), f"malformed hook command line {argv!r}: nothing done ({USAGE})")
            return 0
        adapter = harnesses.get(args[0])
        quiet = quietly(adapter.quiet if adapter is not None else False)
        try:
            raw = sys.stdin.read(MAX_PAYLOAD + 1) if sys.stdin is not None else ""
        except (OSError, ValueError, UnicodeDecodeError) as exc:  # closed, or not text
            _log(config.find_project_root(_here()), f"{args[1]}: cannot read the hook input: {exc}")
            return 0
        finally:
            reset_quiet(quiet)
    except Exception as exc:  # whatever the process was given, a hook exits 0
        print(f"cortex: hook: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 0
    out = run(args[1], raw, agent, args[0])
    if out:
        try:
            print(out, flush=True)
        except OSError:  # the reader went away (a broken pipe): still exit 0, as a hook must
            pass
    return 0
