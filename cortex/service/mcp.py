"""The MCP server (official ``mcp`` SDK, 2.x ``MCPServer``): tools and a resource over the Cortex API.

The same server object runs over stdio (``cortex mcp``) and streamable HTTP (``/mcp`` of ``cortex serve``).
Its backend is anything with the :class:`cortex.Cortex` methods: the Cortex the server owns, or a
:class:`cortex.service.client.RemoteCortex` talking to it. Anticipated errors (unknown agent, bad type,
missing id, ...) become a ``ToolError`` carrying the Cortex message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Literal

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from cortex import config
from cortex.api import MemoryAPI
from cortex.errors import AgentNotFoundError, CortexError, MemoryNotFoundError
from cortex.model import Memory
from cortex.service.auth import Principal

SUMMARY_CHARS = 200

Agent = Annotated[str, Field(description="The agent whose memory to use, e.g. 'reviewer'")]
MemoryId = Annotated[str, Field(description="A memory id, as returned by add_memory or search_memories")]


class SearchHit(BaseModel):
    id: str
    summary: str = Field(description=f"The content, cut to {SUMMARY_CHARS} characters (get_memory has all of it)")
    type: str
    project: str
    score: float


class SearchOutput(BaseModel):
    mode: str = Field(description="The ranking actually used")
    note: str | None = Field(None, description="Why the requested mode was not used, if it was not")
    hits: list[SearchHit]


class RecallOutput(BaseModel):
    block: str = Field(description="The <agent-memory> block to put in the prompt ('' when empty)")


class DeleteOutput(BaseModel):
    deleted: bool
    id: str


class StatsOutput(BaseModel):
    agent: str
    total: int
    by_type: dict[str, int]


class AgentInfo(BaseModel):
    name: str
    description: str
    memory_enabled: bool
    project: str | None
    memories: int


class AgentsOutput(BaseModel):
    agents: list[AgentInfo]


def _summary(content: str) -> str:
    return content if len(content) <= SUMMARY_CHARS else content[: SUMMARY_CHARS - 1] + "…"


def build_mcp(backend: Callable[[], MemoryAPI], authenticate: Callable[[Any], Principal]) -> MCPServer:
    """An MCP server whose tools call ``backend()``; ``authenticate(http_request_or_None)`` names the caller
    (agent tokens only reach their own agent)."""
    server = MCPServer(
        name="cortex", version="0.1.0", log_level="WARNING",
        instructions=(
            "Persistent memory for agents. Call search_memories before you work on something you may have "
            "met before, add_memory when you learn a pattern, convention, insight or decision worth keeping, "
            "and get_memory to read a memory in full."
        ),
    )

    def caller_of(ctx: Context) -> Principal:
        try:
            request = getattr(ctx.request_context, "request", None)
        except ValueError:  # no request (stdio, in-process)
            request = None
        return authenticate(request)

    @contextmanager
    def tool_errors() -> Iterator[None]:
        try:
            yield
        except CortexError as exc:
            raise ToolError(str(exc)) from None

    @contextmanager
    def calling(ctx: Context, agent: str) -> Iterator[MemoryAPI]:
        """The backend, for a caller allowed to use ``agent``; Cortex errors become tool errors."""
        with tool_errors():
            if not caller_of(ctx).may_use(agent):
                raise AgentNotFoundError(agent)
            yield backend()

    readonly = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)

    @server.tool(annotations=writes)
    def add_memory(
        agent: Agent,
        content: Annotated[str, Field(description="What to remember, one self-contained statement")],
        ctx: Context,
        type: Annotated[Literal["pattern", "convention", "insight", "decision"], Field(
            description="pattern, convention, insight or decision")] = config.DEFAULT_TYPE,  # type: ignore[assignment]
        project: Annotated[str, Field(description="Project it applies to; 'global' for everywhere")] = config.DEFAULT_PROJECT,
        confidence: Annotated[float, Field(description="How sure you are, 0..1", ge=0, le=1)] = config.DEFAULT_CONFIDENCE,
    ) -> Memory:
        """Store a memory for the agent."""
        with calling(ctx, agent) as cx:
            return cx.store(agent, content, type=type, project=project, confidence=confidence)

    @server.tool(annotations=readonly)
    def search_memories(
        agent: Agent,
        query: Annotated[str, Field(description="What you are looking for, in your own words")],
        ctx: Context,
        limit: Annotated[int, Field(description="How many results", ge=1, le=100)] = config.DEFAULT_LIMIT,
        mode: Annotated[Literal["hybrid", "semantic", "bm25", "all"], Field(
            description="hybrid (default), semantic, bm25, or all (every word must occur)")] = "hybrid",
        project: Annotated[str | None, Field(description="Only this project")] = None,
        type: Annotated[str | None, Field(description="Only this type")] = None,
    ) -> SearchOutput:
        """Ranked search of the agent's memories: summaries with ids, best first."""
        with calling(ctx, agent) as cx:
            result = cx.search(agent, query, mode=mode, limit=limit, project=project, type=type)
            hits = [SearchHit(id=h.memory.id, summary=_summary(h.memory.content), type=h.memory.type.value,
                              project=h.memory.project, score=h.score) for h in result.hits]
            return SearchOutput(mode=result.mode, note=result.note, hits=hits)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                                             open_world_hint=False))
    def get_memory(agent: Agent, memory_id: MemoryId, ctx: Context) -> Memory:
        """One memory in full; counts as a use (usageCount + 1)."""
        with calling(ctx, agent) as cx:
            return cx.touch(agent, memory_id)

    @server.tool(annotations=writes)
    def recall(
        agent: Agent,
        ctx: Context,
        task: Annotated[str | None, Field(description="What the agent is about to do")] = None,
        project: Annotated[str | None, Field(description="Project scope (global memories are included)")] = None,
        limit: Annotated[int | None, Field(description="How many memories at most", ge=1, le=100)] = None,
    ) -> RecallOutput:
        """The <agent-memory> block of the memories most relevant to the task (marks them used)."""
        with calling(ctx, agent) as cx:
            return RecallOutput(block=cx.agent_start(agent, task, project, limit))

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                                             open_world_hint=False))
    def touch_memory(agent: Agent, memory_id: MemoryId, ctx: Context) -> Memory:
        """Record that a memory was useful (usageCount + 1, lastUsedAt = now)."""
        with calling(ctx, agent) as cx:
            return cx.touch(agent, memory_id)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                                             open_world_hint=False))
    def delete_memory(agent: Agent, memory_id: MemoryId, ctx: Context) -> DeleteOutput:
        """Delete a memory for good."""
        with calling(ctx, agent) as cx:
            if not cx.forget(agent, memory_id):
                raise MemoryNotFoundError(agent, memory_id)
            return DeleteOutput(deleted=True, id=memory_id)

    @server.tool(annotations=readonly)
    def memory_stats(agent: Agent, ctx: Context) -> StatsOutput:
        """How many memories the agent has, by type."""
        with calling(ctx, agent) as cx:
            by_type = cx.stats(agent)
            return StatsOutput(agent=agent, total=sum(by_type.values()), by_type=by_type)

    @server.tool(annotations=readonly)
    def list_agents(ctx: Context) -> AgentsOutput:
        """The agents you may use, with their memory counts."""
        with tool_errors():
            caller = caller_of(ctx)
            agents = [AgentInfo(**a) for a in backend().describe_agents() if caller.may_use(a["name"])]
        return AgentsOutput(agents=agents)

    @server.resource("cortex://agents/{agent}/memory", name="agent_memory", mime_type="text/markdown",
                     description="The agent's <agent-memory> block: its most used memories")
    def agent_memory(agent: str, ctx: Context) -> str:
        try:
            with calling(ctx, agent) as cx:
                return cx.render(cx.recall(agent, None, limit=20))
        except ToolError as exc:
            raise ResourceError(str(exc)) from None

    return server
