"""The routes of one memory's life (:mod:`cortex.api.operations`, domain ``memories``): store, read one, change,
supersede, validate, inject, touch, forget, prune."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body
from fastapi.responses import Response

from cortex import notices
from cortex.errors import MemoryNotFoundError
from cortex.model import Memory, Provenance, WrittenMemory
from cortex.service.http.bodies import (
    BatchBody,
    InjectBody,
    PruneBody,
    PruneResult,
    PurgeBody,
    PurgeResult,
    StoreBody,
    SupersedeBody,
    UpdateBody,
)
from cortex.service.http.routing import Caller, Cx, operation, scoped

router = APIRouter()


@operation(router, "store")
def store(agent: str, body: StoreBody, caller: Caller, cx: Cx) -> WrittenMemory:
    """Store one memory (``warnings``: e.g. that the prune at the agent's next agent_end will delete it)."""
    with notices.collect() as notes:
        memory = cx.store(scoped(caller, agent), body.content, type=body.type, project=body.project,
                          confidence=body.confidence, source=body.source, ttl=body.ttl, tags=body.tags,
                          metadata=body.metadata, scope=body.scope)
    return WrittenMemory.of(memory, notes)


@operation(router, "store_many")
def store_many(agent: str, body: BatchBody, caller: Caller, cx: Cx) -> list[Memory]:
    """Store a batch atomically."""
    return cx.store_many(scoped(caller, agent), body.entries)


@operation(router, "update")
def update(agent: str, memory_id: str, body: UpdateBody, caller: Caller, cx: Cx) -> WrittenMemory:
    """Change fields in place: version + 1, the earlier version kept (history)."""
    with notices.collect() as notes:
        memory = cx.update(scoped(caller, agent), memory_id, content=body.content, type=body.type,
                           project=body.project, confidence=body.confidence, tags=body.tags,
                           metadata=body.metadata, expected_version=body.expected_version)
    return WrittenMemory.of(memory, notes)


@operation(router, "history")
def history(agent: str, memory_id: str, caller: Caller, cx: Cx) -> list[Memory]:
    """Every version of the memory, oldest first (the current one last)."""
    return cx.history(scoped(caller, agent), memory_id)


@operation(router, "provenance")
def provenance(agent: str, memory_id: str, caller: Caller, cx: Cx) -> Provenance:
    """Where a memory comes from (PROV-O): the agent it is attributed to, the activity that generated it
    (surface, hook event, session, tool), the memories it was derived from, its earlier versions."""
    return cx.provenance(scoped(caller, agent), memory_id)


@operation(router, "supersede")
def supersede(agent: str, memory_id: str, body: SupersedeBody, caller: Caller, cx: Cx) -> WrittenMemory:
    """Replace the memory by new content (or by an existing memory): returns the replacing memory."""
    fields = body.model_dump(exclude_none=True, exclude={"content", "by", "reason"})
    with notices.collect() as notes:
        memory = cx.supersede(scoped(caller, agent), memory_id, body.content, by=body.by, reason=body.reason,
                              **fields)
    return WrittenMemory.of(memory, notes)


@operation(router, "validate")
def validate(agent: str, memory_id: str, caller: Caller, cx: Cx) -> Memory:
    """Confirm the memory: its decay clock restarts, confidence + 0.05 (at most 1)."""
    return cx.validate(scoped(caller, agent), memory_id)


@operation(router, "inject_learning")
def inject(lead: str, body: InjectBody, caller: Caller, cx: Cx) -> WrittenMemory:
    """A lead's learning for the swarm (default), one of its teams, or one worker."""
    with notices.collect() as notes:
        memory = cx.inject_learning(scoped(caller, lead), body.content, body.category, team=body.team,
                                    to=body.to, confidence=body.confidence, project=body.project, tags=body.tags)
    return WrittenMemory.of(memory, notes)


@operation(router, "purge_expired")
def purge_expired(caller: Caller, cx: Cx, body: Annotated[PurgeBody, Body()] = PurgeBody()) -> PurgeResult:
    """Delete the memories whose time to live has run out; admin only."""
    caller.require_admin("purge-expired")
    return PurgeResult(count=cx.purge_expired(body.agent))


@operation(router, "get")
def get(agent: str, memory_id: str, caller: Caller, cx: Cx) -> Memory:
    memory = cx.get(scoped(caller, agent), memory_id)
    if memory is None:
        raise MemoryNotFoundError(agent, memory_id)
    return memory


@operation(router, "touch")
def touch(agent: str, memory_id: str, caller: Caller, cx: Cx) -> Memory:
    return cx.touch(scoped(caller, agent), memory_id)


@operation(router, "forget")
def forget(agent: str, memory_id: str, caller: Caller, cx: Cx) -> Response:
    if not cx.forget(scoped(caller, agent), memory_id):
        raise MemoryNotFoundError(agent, memory_id)
    return Response(status_code=204)


@operation(router, "prune")
def prune(agent: str, caller: Caller, cx: Cx, body: Annotated[PruneBody, Body()] = PruneBody()) -> PruneResult:
    ids = cx.prune_candidates(scoped(caller, agent), body.min_confidence, body.max_age, delete=not body.dry_run)
    return PruneResult(count=len(ids), ids=ids, dry_run=body.dry_run)
