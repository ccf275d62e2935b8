"""An agent stopped (a turn, a subagent, the session): its marker lines captured, the used signal of its block,
a subagent's task outcome, and with a language model its transcript read later (:mod:`.later`)."""

from __future__ import annotations

from cortex.service.harnesses.base import SESSION_END, STOP, SUBAGENT_STOP, Call, Harness, log as _log
from cortex.service.hooks import later
from cortex.service.hooks.delivery import deliver
from cortex.service.hooks.offsets import Offsets
from cortex.service.hooks.session import MAX_TASK_CHARS, HookSession, Unknown

#: The most of an agent's output a Stop hook sends for the "used" signal (its end).
USE_TEXT_CHARS = 256 * 1024

#: How a tool says a subagent did not finish its task (Cursor's ``subagentStop.status``).
FAILED_STATUSES = ("error", "errored", "failed", "aborted", "cancelled", "canceled", "timeout")


def marker_text(parts: list[tuple[str, str]]) -> str:
    """The marker lines of the agent's text in ``parts``, message by message (a code fence left open in one
    message does not hide the next one's learnings)."""
    from cortex.markers import marker_lines

    return "\n".join(filter(None, (marker_lines(t) for kind, t in parts if kind == "text")))


def output_text(parts: list[tuple[str, str]]) -> str:
    """What the agent wrote and did in ``parts``: its text, and its tool calls' inputs."""
    return "\n".join(t for _, t in parts)[-USE_TEXT_CHARS:]


def end(session: HookSession, adapter: Harness, where: str, call: Call, agent_type: str) -> None:
    """An agent stopped (a turn, a subagent, the session): capture the marker lines of what it wrote since the last
    capture, report what it drew on of its block, record a subagent's task outcome, and with a language model
    have its transcript read later."""
    if call.stop_hook_active:
        return
    from cortex.markers import marker_lines

    root = session.root
    # only what capture keeps is sent, however long the transcript
    found = marker_lines(call.last_message) if call.last_message else ""
    offsets = Offsets(root)
    shown_as = offsets.shown_as(agent_type, call.session)
    if shown_as is not None:
        session.hint(agent_type, shown_as)
    reading = adapter.read_own(root, call, offsets.get)
    if reading is not None:
        found = f"{marker_text(reading.parts)}\n{found}".strip("\n")
    if found:
        deliver(session, where, agent_type, found)
    for bead, comment in reading.beads if reading is not None else []:
        beads(session, where, agent_type, bead, comment)
    if reading is not None and reading.key:  # delivered or spooled: this part of the transcript is done
        offsets.set(reading.key, reading.end)
    if reading is not None and offsets.shown(agent_type, call.session):
        use(session, agent_type, output_text(reading.parts), call.session, reading.file)
    if call.action == SUBAGENT_STOP:
        task_outcome(session, adapter, where, call, agent_type, reading.parts if reading is not None else [])
    if call.action in (SUBAGENT_STOP, SESSION_END) and reading is not None and reading.file:
        later.extract(session, agent_type, reading.file)
    if call.action == STOP:
        later.round_end(session, agent_type)


def beads(session: HookSession, where: str, agent_type: str, bead: str, comment: str) -> None:
    """The marker lines of a Beads comment a command of the agent added, read from its transcript (the bead in
    their provenance, as at PostToolUse)."""
    from cortex import provenance
    from cortex.markers import marker_lines

    found = marker_lines(comment)
    if found:
        with provenance.activity(channel="beads", part=f"bead {bead}"):
            deliver(session, where, agent_type, found)


def use(session: HookSession, agent_type: str, text: str, call_session: str | None,
        transcript: str | None = None) -> None:
    """Report what the agent's new output drew on of the block it was shown, and the transcript it was read from
    (kept in the session's record); best effort: logged on failure."""
    if not text.strip():
        return
    try:
        if session.agent(agent_type) is not None:
            session.with_agent(agent_type, lambda cx, name: cx.record_use(name, text, session=call_session,
                                                                          transcript=transcript))
    except Exception as exc:
        _log(session.root, f"used signal for {agent_type!r} not recorded: {type(exc).__name__}: {exc}")


def task_outcome(session: HookSession, adapter: Harness, where: str, call: Call, agent_type: str,
                 parts: list[tuple[str, str]]) -> None:
    """Record the subagent's task and its final message (bounded) as a task outcome of the subagent."""
    from cortex.capture.tasks import task_status

    root = session.root
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
    status = "failed" if (call.status or "").lower() in FAILED_STATUSES else task_status(final)
    try:
        session.with_agent(agent_type, lambda cx, name: cx.record_task(name, task[:MAX_TASK_CHARS],
                                                                       final[-8000:], status))
    except Unknown:
        raise
    except Exception as exc:
        _log(root, f"{where}: task outcome of {agent_type!r} not recorded: {type(exc).__name__}: {exc}")
