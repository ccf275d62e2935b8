"""Coding-agent hooks: ``cortex hook claude|codex|cursor|gemini <event> [--agent NAME]`` with the hook's JSON on
stdin. Each tool's adapter (:mod:`cortex.service.harnesses`) maps its events and payload fields to what this module
does for all of them, and renders its tool's output; what follows is said in Claude Code's terms (docs/agents.md
has each tool's).

* ``SessionStart`` / ``SubagentStart``: answer ``{"hookSpecificOutput": {"hookEventName", "additionalContext"}}``
  with the ``<agent-memory>`` block (under 10,000 characters) of the agent: ``agent_type`` for a subagent, the
  ``--agent`` of the hook command (or ``$CORTEX_HOOK_AGENT``) for the main session. A subagent's block is ranked
  for its task, read from the parent transcript's ``Agent``/``Task`` tool call (the payload carries no task). The
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
* ``UserPromptSubmit``: answer ``additionalContext`` with the few memories the prompt needs that the session's
  context does not hold yet (:mod:`~cortex.service.hooks.prompt`; nothing for "ok", "thanks", a slash command).
* ``PostToolUse``: the marker lines of a Beads comment a Bash command added (``bd comment ID "LEARNED: ..."``)
  become the agent's memories, ``bead ID`` in their PROV-O activity (channel ``beads``); a Markdown file a Write
  or Edit changed is synced when it is in a notes directory (``Cortex.sync_notes(file=...)``).

Events Cortex does not handle are one quiet line in the log (exit 0), and so is a payload without a field the
adapter's version of the tool sends (it is handled with what it has).

A coding agent's name is resolved to a declared agent (itself, or the agent that lists it in ``cortex:
aliases:``); built-in and undeclared agents (``Explore``, ``general-purpose``) have no memory: one quiet line in
the log, nothing else. A hook never blocks the agent and never loses a learning: every failure is one line in
``<project>/.cortex/logs/hooks.log`` (exit status 0), and a capture that could not be delivered for a reason that
may pass waits in the spool (:mod:`cortex.service.spool`) for the next hook or server start. Each hook call
reaches the store once (:class:`~cortex.service.hooks.session.HookSession`): with a running server a few
standard-library HTTP requests on one connection; without one the store opened with lexical ranking only (a model
load would cost seconds). The hook path must not import mcp, fastapi, rdflib or pydantic (nor, with a server, the
engine).

* :mod:`~cortex.service.hooks.session`: the hook call's connection, and its agents resolved once;
* :mod:`~cortex.service.hooks.offsets`: how far each transcript was captured, which sessions were shown a block;
* :mod:`~cortex.service.hooks.delivery`: captures delivered, or spooled;
* :mod:`~cortex.service.hooks.end`, :mod:`~cortex.service.hooks.tool`, :mod:`~cortex.service.hooks.prompt`: what a
  stop, a tool call and a prompt do;
* :mod:`~cortex.service.hooks.later`: what runs after the hook answered (extraction, round ends).
"""

from __future__ import annotations

import contextlib
import io
import os
import traceback
from typing import Any

from cortex import config, discovery, jsonsafe, provenance
from cortex.service import harnesses
from cortex.service.harnesses.base import ENDS, PROMPT, STARTS, SUBAGENT_START, TOOL, Call, Harness, \
    is_project as _is_project, linked as _linked, log as _log, quietly, reset_quiet, say as _say
from cortex.service.hooks.end import end as _end
from cortex.service.hooks.offsets import Offsets
from cortex.service.hooks.prompt import prompt as _prompt, worth_recall
from cortex.service.hooks.session import MAX_TASK_CHARS, HookSession, Unknown, here as _here
from cortex.service.hooks.tool import tool as _tool

__all__ = ["AGENT_ENV", "MAX_PAYLOAD", "MAX_TASK_CHARS", "USAGE", "main", "run"]

AGENT_ENV = "CORTEX_HOOK_AGENT"


#: The largest hook payload read (Claude Code's carry a message and paths, far less).
MAX_PAYLOAD = 16 * 1024 * 1024


def _payload(raw: str) -> Any:
    """The hook's JSON input; ValueError for anything that is not JSON (too large, or nested deeper than the
    parser goes)."""
    from cortex.errors import InvalidInputError

    if len(raw) > MAX_PAYLOAD:
        raise InvalidInputError("payload", f"is larger than {MAX_PAYLOAD} bytes")
    try:
        return jsonsafe.loads(raw) if raw.strip() else {}
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
        if call.action == PROMPT and not worth_recall(call.task):
            return nothing  # "ok", "thanks", a slash command: answered before the store is reached
        missing = [field for field in adapter.expected(event) if field not in payload]
        if missing:  # another version of the tool: what the payload has is used, and the log says what it lacks
            _log(root, f"{where}: the payload has no {', '.join(missing)} (another version of {adapter.title}?); "
                       "handled with what it has")
        agent_type = call.agent_type or agent or os.environ.get(AGENT_ENV)
        if call.action != TOOL and (not agent_type or not isinstance(agent_type, str)):
            return nothing
        discovery.set_process_label("cortex hook")
        # the call's one way to the store, closed when it is done; a start only reads (the block), so it opens
        # the store read-only while another process writes it instead of waiting for that process
        with HookSession(root, read_only=call.action in (*STARTS, PROMPT)) as session:
            return _handle(session, adapter, event, call, agent_type)
    except Unknown as exc:
        _log(root, f"{where}: no memory for agent type {exc.args[0]!r} (built-in or not declared; "
                   "docs/agents.md says how to give it memory)")
        return nothing
    except Exception as exc:  # a hook must never fail the agent: log everything
        from cortex.errors import CortexError

        detail = "" if isinstance(exc, CortexError) else f"\n{traceback.format_exc()}"
        _log(root, f"{where}: {type(exc).__name__}: {exc}{detail}")
        return nothing


def _handle(session: HookSession, adapter: Harness, event: str, call: Call, agent_type: Any) -> str:
    """What the event does, through ``session``; returns the hook's answer."""
    root, where, nothing = session.root, adapter.label(event), adapter.answer(event, None)
    if call.action == TOOL:
        _tool(session, where, call, agent_type)
        return nothing
    if call.action in ENDS:
        _end(session, adapter, where, call, agent_type)
        return nothing
    if call.action == PROMPT:
        return _prompt(session, adapter, event, call, agent_type)
    # a subagent's task is the adapter's to find (Claude Code's and Codex's payloads carry none)
    task = adapter.subagent_task(root, call, agent_type) if call.action == SUBAGENT_START else call.task
    if isinstance(task, str):
        task = task[:MAX_TASK_CHARS]  # enough to rank by; the rest only costs time
    # a session resumed, compacted or cleared gets its block again; it was touched at its start (a tool that
    # does not say: a session that was shown a block before)
    repeated = call.repeated if call.repeated is not None else Offsets(root).shown(agent_type, call.session)
    name, block = session.with_agent(agent_type, lambda cx, name: (name, cx.agent_start(
        name, task, max_chars=adapter.max_context, touch=not repeated)))
    if not block:
        return nothing
    if call.session:
        Offsets(root).set_shown(agent_type, call.session, name)
    return adapter.answer(event, adapter.context(block, name))


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
