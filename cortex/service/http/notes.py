"""The routes of Markdown notes (:mod:`cortex.api.operations`, domain ``notes``): sync, promote, export."""

from __future__ import annotations

from fastapi import APIRouter

from cortex.model import NotesReport
from cortex.service.http.bodies import NotesExportBody, NotesSyncBody, PromoteBody
from cortex.service.http.routing import Caller, Cx, operation, scoped

router = APIRouter()


@operation(router, "sync_notes")
def sync_notes(body: NotesSyncBody, caller: Caller, cx: Cx) -> list[NotesReport]:
    """Index the agents' Markdown notes (one agent's, or one file of a notes directory): unchanged chunks
    keep their memory, changed ones are superseded, removed ones leave recall. An agent's token syncs its
    own notes only."""
    agent = scoped(caller, body.agent) if body.agent is not None else None
    if agent is None and not caller.admin:
        agent = caller.agent
    return cx.sync_notes(agent, file=body.file)


@operation(router, "promote_notes")
def promote_notes(agent: str, body: PromoteBody, caller: Caller, cx: Cx) -> NotesReport:
    """Move a notes file's memories to a team the agent is in, or the swarm (a lead)."""
    return cx.promote_notes(scoped(caller, agent), body.file, team=body.team, swarm=body.swarm)


@operation(router, "export_notes")
def export_notes(agent: str, body: NotesExportBody, caller: Caller, cx: Cx) -> list[str]:
    """Write the agent's memories as editable Markdown files in a directory of the server's machine (an
    admin token: it writes files); a later sync of that directory applies the edits."""
    caller.require_admin("writing notes files on the server's machine")
    return cx.export_notes(agent, body.directory)
