"""The reading routes (:mod:`cortex.api.operations`, domain ``reading``): recall, search, a page of every memory,
the counts, and the block an agent starts with."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Query

from cortex import config
from cortex.model import Memory, MemoryUsage, Page, SearchResult, UsageOrder
from cortex.service.http.bodies import Block, ReadFilters, StartBody, Tags, reranking, tag_list
from cortex.service.http.routing import Caller, Cx, operation, scoped

router = APIRouter()


@operation(router, "recall")
def recall(agent: str, caller: Caller, filters: Annotated[ReadFilters, Depends()], cx: Cx, query: str | None = None,
           type: str | None = None, project: str | None = None, limit: int = config.DEFAULT_LIMIT) -> list[Memory]:
    """AND-token recall over the agent's own, its teams' and the swarm's memories (current ones unless
    include_expired / include_superseded; as_of: what was recorded and valid then)."""
    return cx.recall(scoped(caller, agent), query, type=type, project=project, limit=limit, **filters.given())


@operation(router, "search")
def search(agent: str, caller: Caller, filters: Annotated[ReadFilters, Depends()], cx: Cx,
           query: Annotated[str, Query()], mode: str = config.DEFAULT_SEARCH_MODE,
           limit: int = config.DEFAULT_LIMIT, project: str | None = None, type: str | None = None,
           explain: bool = False,
           rerank: Annotated[str, Query(description="true, false, or a JSON object of Reranking settings")]
           = "true") -> SearchResult:
    """Ranked search (hybrid, semantic, bm25 or all), with the filters of recall."""
    return cx.search(scoped(caller, agent), query, mode=mode, limit=limit, project=project, type=type,
                     explain=explain, rerank=reranking(rerank), **filters.given())


@operation(router, "list_memories")
def list_memories(agent: str, caller: Caller, cx: Cx, cursor: str | None = None, limit: int = 50,
                  scope: str | None = None, tags: Tags = None, type: str | None = None,
                  project: str | None = None, source: str | None = None, include_expired: bool = False,
                  include_superseded: bool = False,
                  session: Annotated[str | None, Query(description="Only what this agent session's writes "
                                                                   "created (a capture of its transcript)")] = None,
                  since: Annotated[str | None, Query(description="Only what was created since: an ISO 8601 time "
                                                                 "or a duration back from now (2h, 7d)")] = None) -> Page:
    """Every memory the agent can see, newest first, a page at a time (pass next_cursor back as cursor)."""
    return cx.list_memories(scoped(caller, agent), scope=scope, type=type, project=project,
                            tags=tag_list(tags), source=source, include_expired=include_expired,
                            include_superseded=include_superseded, cursor=cursor, limit=limit, session=session,
                            since=since)


@operation(router, "stats")
def stats(agent: str, caller: Caller, cx: Cx) -> dict[str, int]:
    return cx.stats(scoped(caller, agent))


@operation(router, "agent_overview")
def agent_overview(agent: str, caller: Caller, cx: Cx) -> dict[str, Any]:
    """The agent at a glance: counts by type, source and scope, last activity, decay, expiring soon."""
    return cx.agent_overview(scoped(caller, agent))


@operation(router, "usage_stats")
def usage_stats(agent: str, caller: Caller, cx: Cx) -> dict[str, dict[str, int | float | None]]:
    """Per source of the agent's memories: how many, how many shown and used, the times of each and their ratio."""
    return cx.usage_stats(scoped(caller, agent))


@operation(router, "memory_usage")
def memory_usage(agent: str, caller: Caller, cx: Cx,
                 order: Annotated[UsageOrder, Query(description="used (what proved useful), ratio, shown, or "
                                                                "unused (shown and never used)")] = "used",
                 limit: Annotated[int, Query(ge=1, le=1000)] = 20) -> list[MemoryUsage]:
    """Per memory of the agent: how often it was shown and used, and the ratio."""
    return cx.memory_usage(scoped(caller, agent), order=order, limit=limit)


@operation(router, "agent_start")
def start(agent: str, caller: Caller, cx: Cx, body: Annotated[StartBody, Body()] = StartBody()) -> Block:
    """The <agent-memory> block to inject at agent start (touches what it shows)."""
    return Block(block=cx.agent_start(scoped(caller, agent), body.task, body.project, body.limit, body.max_chars,
                                      tags=body.tags, scope=body.scope, touch=body.touch))
