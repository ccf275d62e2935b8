"""The routes of what an agent's work leaves (:mod:`cortex.api.operations`, domain ``sessions``): its end's marker
lines, its tasks' outcomes, its session transcripts, the memories it used."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from cortex import notices
from cortex.model import CaptureReport, Memory, WrittenMemory
from cortex.service.http.bodies import EndAnswer, EndBody, TaskBody, TranscriptBody, UseBody
from cortex.service.http.routing import Caller, Cx, Queue, operation, scoped

router = APIRouter()


@operation(router, "capture_transcript", response_model=CaptureReport,
           responses={202: {"description": "Queued (wait=false): captured by the server's queue"}})
def capture_transcript(agent: str, body: TranscriptBody, caller: Caller, cx: Cx, queue: Queue) -> Any:
    """Capture a session transcript that this server's machine holds (Claude Code JSONL, Codex CLI session,
    JSON messages, plain text) for the agent, from its checkpoint on: marker lines, with a language model
    learnings and a session summary, subagent task outcomes, the "used" signal. ``wait=false`` queues it in
    the server (202, ``{"queued", "waiting"}``): what hooks do, so that the model's seconds are not theirs."""
    name = scoped(caller, agent)
    options: dict[str, Any] = {"format": body.format, "project": body.project, "markers": body.markers,
                               "summary": body.summary, "tasks": body.tasks}
    with caller.reading(body.path, cx):  # the queue keeps this confinement for when it reads the file
        if body.dry_run:
            return cx.capture_transcript(name, body.path, dry_run=True, **options)
        if not body.wait:
            cx.resolve_agent(name)  # an unknown store agent fails now, not in the queue
            return JSONResponse(queue.put(name, body.path, **options), status_code=202)
        return cx.capture_transcript(name, body.path, **options)


@operation(router, "record_use")
def record_use(agent: str, body: UseBody, caller: Caller, cx: Cx) -> list[Memory]:
    """Mark the memories shown at the agent's latest start (in ``session``, default the request's
    ``Cortex-Session``) that ``output`` drew on: usedCount + 1 (the "used" signal ranking prefers). ``transcript``:
    the path of the transcript the output was read from (kept in the session's record, not read)."""
    return cx.record_use(scoped(caller, agent), body.output, session=body.session, transcript=body.transcript)


@operation(router, "record_task")
def record_task(agent: str, body: TaskBody, caller: Caller, cx: Cx) -> WrittenMemory:
    """Record a finished task's outcome (a task_completion memory; a failed one says what went wrong)."""
    with notices.collect() as notes:
        memory = cx.record_task(scoped(caller, agent), body.task, body.output, body.status, project=body.project)
    return WrittenMemory.of(memory, notes)


@operation(router, "agent_end")
def end(agent: str, body: EndBody, caller: Caller, cx: Cx, pruned: bool = False) -> list[Memory] | EndAnswer:
    """Capture marker lines from the agent's output, then prune with the agent's ``cortex.prune`` settings
    (what it deleted is in the ``Cortex-Warnings`` header, and recorded as a ``prune`` activity). With
    ``pruned=true`` the answer is an object: the captured ``memories`` and the ``pruned`` ones."""
    captured = cx.agent_end(scoped(caller, agent), body.output, body.project)
    return EndAnswer(memories=list(captured), pruned=captured.pruned, redacted=captured.redacted) if pruned \
        else list(captured)
