"""The MCP tools of the notes domain: Markdown notes indexed as memories, promoted, exported."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from pydantic import Field

from cortex.errors import AgentNotFoundError
from cortex.model import NotesReport
from cortex.service.mcp.context import WRITES, ToolContext, tool
from cortex.service.mcp.outputs import Agent


class NotesTools(ToolContext):
    """The tools of Markdown notes."""

    @tool("sync_notes", WRITES)
    def sync_notes(
        self,
        ctx: Context,
        agent: Annotated[str | None, Field(description="Whose notes (default: every agent you may use)")] = None,
        file: Annotated[str | None, Field(description="Only this file of a notes directory")] = None,
    ) -> list[NotesReport]:
        """Index Markdown notes (.cortex/notes/AGENT/ and each agent's cortex: notes:) as memories: unchanged
        sections keep theirs, changed ones are superseded, removed ones leave recall."""
        with self.tool_errors():
            caller = self.caller_of(ctx)
            if agent is None and not caller.admin:
                agent = caller.agent
            if agent is not None and not caller.may_use(agent):
                raise AgentNotFoundError(agent)
            return self.backend().sync_notes(agent, file=file)

    @tool("promote_notes", WRITES)
    def promote_notes(
        self,
        agent: Agent,
        file: Annotated[str, Field(description="A file of the agent's notes directory")],
        ctx: Context,
        team: Annotated[str | None, Field(description="The team to share it with")] = None,
        swarm: Annotated[bool, Field(description="Share it with the swarm (a lead)")] = False,
    ) -> NotesReport:
        """Move a notes file's memories to a team or the swarm; later syncs update them there."""
        with self.calling(ctx, agent) as cx:
            return cx.promote_notes(agent, file, team=team, swarm=swarm)

    @tool("export_notes", WRITES)
    def export_notes(
        self,
        agent: Agent,
        directory: Annotated[str, Field(description="Where to write the Markdown files (the agent's notes "
                                                    "directory, to sync edits back)")],
        ctx: Context,
    ) -> list[str]:
        """Write the agent's memories as Markdown files a person can read and edit (one per type); a later
        sync of the directory applies the edits to the memories."""
        with self.calling(ctx, agent) as cx:
            self.caller_of(ctx).require_admin("writing notes files")
            return cx.export_notes(agent, directory)
