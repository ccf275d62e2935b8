"""The MCP tools of the admin domain: the agents, the indexes and the server's information."""

from __future__ import annotations

import dataclasses
from typing import Annotated

from mcp.server.mcpserver import Context
from pydantic import Field

from cortex.model import SecretScan
from cortex.service.mcp.context import READ_ONLY, WRITES_IDEMPOTENT, ToolContext, tool
from cortex.service.mcp.outputs import Agent, AgentInfo, AgentsOutput, IndexStatusOutput, InfoOutput, ReindexOutput


class AdminTools(ToolContext):
    """The tools of the agents, the indexes and the server."""

    @tool("describe_agents", READ_ONLY)
    def list_agents(self, ctx: Context) -> AgentsOutput:
        """The agents you may use, with their memory counts. Call this first: every other tool takes one of these
        names as `agent`."""
        with self.tool_errors():
            caller = self.caller_of(ctx)
            agents = [AgentInfo(**a) for a in self.backend().describe_agents() if caller.may_use(a["name"])]
        return AgentsOutput(agents=agents)

    @tool("reindex", WRITES_IDEMPOTENT)
    def reindex(
        self,
        agent: Agent,
        ctx: Context,
        force: Annotated[bool, Field(description="Embed every memory again, not only those without a vector")] = False,
    ) -> ReindexOutput:
        """Rebuild the agent's index from the store and embed what lacks a vector of the current model. Admin
        only, like POST /v1/agents/{agent}/reindex."""
        with self.calling(ctx, agent) as cx:
            self.caller_of(ctx).require_admin("reindex")
            return ReindexOutput(**cx.reindex(agent, force=force))

    @tool("scan_secrets", WRITES_IDEMPOTENT)
    def scan_secrets(
        self,
        ctx: Context,
        agent: Annotated[str | None, Field(description="Only this agent's own scope (team:NAME, swarm: a shared one; "
                                                       "none: every scope)")] = None,
        redact: Annotated[bool, Field(description="Replace what is found by placeholders (default: a dry run)")]
        = False,
    ) -> SecretScan:
        """Scan the store for secrets in every version of every memory and the scopes' other records; with
        redact, replace them by placeholders (recorded in provenance; the secret is kept nowhere). Admin only,
        like POST /v1/secrets/scan."""
        with self.tool_errors():
            self.caller_of(ctx).require_admin("scan_secrets")
            return self.backend().scan_secrets(agent, redact=redact)

    @tool("index_status", READ_ONLY)
    def index_status(self, agent: Agent, ctx: Context) -> IndexStatusOutput:
        """What the agent's derived index holds against the store (memories, vectors and their model, pending
        changes), like GET /v1/agents/{agent}/index."""
        with self.calling(ctx, agent) as cx:
            status = cx.index_status(agent)
            return IndexStatusOutput(**{f.name: getattr(status, f.name) for f in dataclasses.fields(status)})

    @tool("info", READ_ONLY)
    def server_info(self, ctx: Context) -> InfoOutput:
        """Where the memory is kept and which embedding model it uses, like GET /v1/info."""
        with self.tool_errors():
            found = dict(self.backend().info())
            return InfoOutput(store=str(found.pop("store", "")), embeddings=found.pop("embeddings", None),
                              details=found)
