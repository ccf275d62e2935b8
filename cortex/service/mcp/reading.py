"""The MCP tools of the reading domain: search, recall, listing, statistics and the agent-start block."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from cortex import config
from cortex.model import MemoryUsage, Page, Reranking, UsageOrder
from cortex.service.mcp.context import READ_ONLY, WRITES, ToolContext, tool
from cortex.service.mcp.outputs import (
    Agent,
    AsOf,
    BlockOutput,
    IncludeExpired,
    IncludeSuperseded,
    MemoriesOutput,
    Project,
    ScopeFilter,
    SearchHit,
    SearchOutput,
    SourceFilter,
    StatsOutput,
    Tags,
    TypeName,
    summary_of,
)


class ReadingTools(ToolContext):
    """The tools that read the memories an agent can see."""

    @tool("recall", READ_ONLY)
    def recall(
        self,
        agent: Agent,
        ctx: Context,
        query: Annotated[str | None, Field(description="Words that must all occur in the content (case and "
                                                       "accents ignored, inside words too); none: every memory")] = None,
        limit: Annotated[int, Field(description="How many memories at most", ge=1, le=100)] = config.DEFAULT_LIMIT,
        project: Project = None,
        type: Annotated[TypeName | None, Field(description="Only memories of this type")] = None,
        tags: Tags = None,
        scope: ScopeFilter = None,
        source: SourceFilter = None,
        include_superseded: IncludeSuperseded = False,
        include_expired: IncludeExpired = False,
        as_of: AsOf = None,
    ) -> MemoriesOutput:
        """AND-token recall: the memories containing every word of the query, most occurrences first, then the
        most used (search_memories ranks by meaning instead)."""
        with self.calling(ctx, agent) as cx:
            return MemoriesOutput(memories=cx.recall(agent, query, type=type, project=project, limit=limit, tags=tags,
                                                     scope=scope, source=source,
                                                     include_superseded=include_superseded,
                                                     include_expired=include_expired, as_of=as_of))

    @tool("search", READ_ONLY)
    def search_memories(
        self,
        agent: Agent,
        query: Annotated[str, Field(description="What you are looking for, in your own words")],
        ctx: Context,
        limit: Annotated[int, Field(description="How many results", ge=1, le=100)] = config.DEFAULT_LIMIT,
        mode: Annotated[Literal["hybrid", "semantic", "bm25", "all"], Field(
            description="hybrid (default), semantic, bm25, or all (every word must occur)")] = "hybrid",
        project: Project = None,
        type: Annotated[TypeName | None, Field(description="Only memories of this type")] = None,
        tags: Tags = None,
        scope: ScopeFilter = None,
        source: SourceFilter = None,
        include_superseded: IncludeSuperseded = False,
        include_expired: IncludeExpired = False,
        as_of: AsOf = None,
        unused: Annotated[bool, Field(description="Weigh down memories shown over 3 times that no output used")]
        = False,
    ) -> SearchOutput:
        """Ranked search of the memories the agent can see (its own, its teams', the swarm's): summaries with ids,
        best first (get_memory reads one in full). Memories unrelated to the query are not returned, so there
        may be fewer than `limit`."""
        with self.calling(ctx, agent) as cx:
            result = cx.search(agent, query, mode=mode, limit=limit, project=project, type=type, tags=tags,
                               scope=scope, source=source, include_superseded=include_superseded,
                               include_expired=include_expired, as_of=as_of,
                               rerank=Reranking(unused=True) if unused else True)
            hits = [SearchHit(id=h.memory.id, summary=summary_of(h.memory.content), type=h.memory.type.value,
                              project=h.memory.project, scope=h.memory.scope, tags=list(h.memory.tags),
                              score=h.score) for h in result.hits]
            return SearchOutput(mode=result.mode, note=result.note, hits=hits)

    @tool("list_memories", READ_ONLY)
    def list_memories(
        self,
        agent: Agent,
        ctx: Context,
        cursor: Annotated[str | None, Field(description="next_cursor of the previous page (none: the first page)")]
        = None,
        limit: Annotated[int, Field(description="Memories per page", ge=1, le=100)] = 50,
        scope: ScopeFilter = None,
        tags: Tags = None,
        type: Annotated[TypeName | None, Field(description="Only memories of this type")] = None,
        project: Project = None,
        source: SourceFilter = None,
        include_expired: IncludeExpired = False,
        include_superseded: IncludeSuperseded = False,
        session: Annotated[str | None, Field(description="Only what this agent session's writes created (a "
                                                         "capture of its transcript)")] = None,
        since: Annotated[str | None, Field(description="Only what was created since: an ISO 8601 time or a "
                                                       "duration back from now (2h, 7d)")] = None,
    ) -> Page:
        """Every memory the agent can see, newest first, one page at a time: call again with next_cursor until it
        is null."""
        with self.calling(ctx, agent) as cx:
            return cx.list_memories(agent, scope=scope, type=type, project=project, tags=tags, source=source,
                                    include_expired=include_expired, include_superseded=include_superseded,
                                    cursor=cursor, limit=limit, session=session, since=since)

    @tool("stats", READ_ONLY)
    def memory_stats(self, agent: Agent, ctx: Context) -> StatsOutput:
        """How many memories the agent has, by type; and per source how many were shown and how many used."""
        with self.calling(ctx, agent) as cx:
            by_type = cx.stats(agent)
            return StatsOutput(agent=agent, total=sum(by_type.values()), by_type=by_type,
                               usage=cx.usage_stats(agent))

    @tool("memory_usage", READ_ONLY)
    def memory_usage(
        self,
        agent: Agent,
        ctx: Context,
        order: Annotated[UsageOrder, Field(description="used: those an output drew on, most uses first (what "
                                                       "proved useful); ratio; shown; unused: shown and never used")]
        = "used",
        limit: Annotated[int, Field(description="How many memories at most", ge=1, le=1000)] = 20,
    ) -> list[MemoryUsage]:
        """Per memory of the agent: how often it was shown at a start, how often its later output drew on it, and
        the ratio."""
        with self.calling(ctx, agent) as cx:
            return cx.memory_usage(agent, order=order, limit=limit)

    @tool("agent_overview", READ_ONLY)
    def agent_overview(self, agent: Agent, ctx: Context) -> dict[str, Any]:
        """The agent at a glance: its current memories by type, source and scope, its last activity, how many are
        fresh, fading or stale by decay, expire within a week, were never shown or used, and their mean confidence."""
        with self.calling(ctx, agent) as cx:
            return cx.agent_overview(agent)

    @tool("agent_start", WRITES)
    def agent_start(
        self,
        agent: Agent,
        ctx: Context,
        task: Annotated[str | None, Field(description="What the agent is about to do")] = None,
        project: Annotated[str | None, Field(description="Project scope (global memories are included)")] = None,
        limit: Annotated[int | None, Field(description="How many memories at most", ge=1, le=100)] = None,
        tags: Tags = None,
        scope: ScopeFilter = None,
        touch: Annotated[bool, Field(description="Mark the memories shown as used (false when the same session "
                                                 "shows its block again: resumed, compacted)")] = True,
    ) -> BlockOutput:
        """The <agent-memory> block of the current memories most relevant to the task (its own, its teams', the
        swarm's; shared ones marked with their scope), to put in the agent's prompt (marks them used unless
        ``touch`` is false)."""
        with self.calling(ctx, agent) as cx:
            return BlockOutput(block=cx.agent_start(agent, task, project, limit, tags=tags, scope=scope,
                                                    touch=touch))
