"""The MCP tools of the memories domain: one memory's life (store, read, correct, supersede, confirm, delete, prune)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from cortex import config, notices
from cortex.model import Memory, Provenance, WrittenMemory
from cortex.service.mcp.context import DELETES, READ_ONLY, WRITES, WRITES_IDEMPOTENT, ToolContext, tool
from cortex.service.mcp.outputs import (
    AddOutput,
    Agent,
    DeleteOutput,
    HistoryOutput,
    MemoryId,
    PruneOutput,
    PurgeOutput,
    SourceName,
    TypeName,
)
from cortex.validation import Number


class MemoriesTools(ToolContext):
    """The tools of one memory's life."""

    @tool("store", WRITES_IDEMPOTENT)
    def add_memory(
        self,
        agent: Agent,
        content: Annotated[str, Field(description="What to remember, one self-contained statement")],
        ctx: Context,
        type: Annotated[TypeName, Field(description="pattern, convention, insight or decision")] = "insight",
        project: Annotated[str, Field(description="Project it applies to; 'global' for everywhere")] = config.DEFAULT_PROJECT,
        confidence: Annotated[Number, Field(description="How sure you are, 0..1", ge=0, le=1)] = config.DEFAULT_CONFIDENCE,
        tags: Annotated[list[str] | None, Field(description="Lowercase slugs to filter by later, e.g. ['testing']")]
        = None,
        metadata: Annotated[dict[str, Any] | None, Field(description="Any JSON object (at most 8 KiB)")] = None,
        source: Annotated[SourceName, Field(description="Where it comes from: task_completion notes expire after 7 "
                                                        "days, session_summary after 3, file_index after 30")] = "manual",
        ttl: Annotated[str | None, Field(description="Time to live, e.g. '12h', '7d', or 'never' (default: the "
                                                     "source's)")] = None,
        scope: Annotated[str, Field(description="'agent' (its own memory), 'team:NAME' (shared with a team it is "
                                                "in) or 'swarm' (every agent; leads only)")] = "agent",
    ) -> AddOutput:
        """Store a memory for the agent. Adding exactly the same content for the same project and scope again
        returns the memory already stored (created: false) instead of a duplicate."""
        with self.calling(ctx, agent) as cx, notices.collect() as notes:
            memory = cx.store(agent, content, type=type, project=project, confidence=confidence,
                              tags=tags or (), metadata=metadata, source=source, ttl=ttl, scope=scope)
        if notices.stored_already(notes, memory.id):  # the facade's rule: the identical memory, not a duplicate
            return AddOutput(memory=memory, created=False)
        return AddOutput(memory=memory, created=True, warnings=notes)

    @tool("get", READ_ONLY)
    def get_memory(self, agent: Agent, memory_id: MemoryId, ctx: Context) -> Memory:
        """One memory in full."""
        with self.calling(ctx, agent) as cx:
            memory = cx.get(agent, memory_id)
            if memory is None:
                raise ToolError(f"memory_id: agent {agent!r} has no memory with id {memory_id!r}")
            return memory

    @tool("update", WRITES)
    def update_memory(
        self,
        agent: Agent,
        memory_id: MemoryId,
        ctx: Context,
        content: Annotated[str | None, Field(description="The corrected content")] = None,
        type: Annotated[TypeName | None, Field(description="A new type")] = None,
        project: Annotated[str | None, Field(description="A new project")] = None,
        confidence: Annotated[Number | None, Field(description="A new confidence, 0..1", ge=0, le=1)] = None,
        tags: Annotated[list[str] | None, Field(description="The new tags ([] clears them)")] = None,
        metadata: Annotated[dict[str, Any] | None, Field(description="The new metadata ({} clears it)")] = None,
        expected_version: Annotated[int | None, Field(
            description="The version you read: if the memory changed since, nothing is changed and you get an error "
                        "(read it again)", ge=1)] = None,
    ) -> WrittenMemory:
        """Correct a memory in place: only the fields given change, its version goes up by one and the earlier
        version is kept (memory_history). To record that a fact changed over time, use supersede_memory."""
        with self.calling(ctx, agent) as cx, notices.collect() as notes:
            memory = cx.update(agent, memory_id, content=content, type=type, project=project, confidence=confidence,
                               tags=tags, metadata=metadata, expected_version=expected_version)
        return WrittenMemory.of(memory, notes)

    @tool("history", READ_ONLY)
    def memory_history(self, agent: Agent, memory_id: MemoryId, ctx: Context) -> HistoryOutput:
        """Every version of a memory, oldest first (the last one is current)."""
        with self.calling(ctx, agent) as cx:
            return HistoryOutput(versions=cx.history(agent, memory_id))

    @tool("provenance", READ_ONLY)
    def memory_provenance(self, agent: Agent, memory_id: MemoryId, ctx: Context) -> Provenance:
        """Where a memory comes from (PROV-O): the agent it is attributed to, the activity that generated it
        (surface, hook event, session, tool, when), the memories it was derived from, its earlier versions."""
        with self.calling(ctx, agent) as cx:
            return cx.provenance(agent, memory_id)

    @tool("supersede", WRITES)
    def supersede_memory(
        self,
        agent: Agent,
        memory_id: MemoryId,
        ctx: Context,
        content: Annotated[str | None, Field(description="What is true now (a new memory replaces the old one)")]
        = None,
        by: Annotated[str | None, Field(description="Or: the id of an existing memory that replaces it")] = None,
        reason: Annotated[str | None, Field(description="Why the old memory no longer holds")] = None,
        type: Annotated[TypeName | None, Field(description="Type of the new memory (default: the old one's)")] = None,
        project: Annotated[str | None, Field(description="Project of the new memory (default: the old one's)")]
        = None,
        tags: Annotated[list[str] | None, Field(description="Tags of the new memory (default: the old one's)")] = None,
        confidence: Annotated[Number | None, Field(description="Confidence of the new memory, 0..1", ge=0, le=1)]
        = None,
        source: Annotated[SourceName | None, Field(description="Source of the new memory (default: manual)")] = None,
        ttl: Annotated[str | None, Field(description="Time to live of the new memory, e.g. '7d' or 'never'")] = None,
        metadata: Annotated[dict[str, Any] | None, Field(description="Metadata of the new memory (a JSON object)")]
        = None,
        valid_from: Annotated[str | None, Field(description="When the new fact became true (ISO 8601; default: "
                                                            "now); the old one is valid until then")] = None,
    ) -> WrittenMemory:
        """Replace an outdated memory: the old one stays in history, valid until now and pointing to its
        replacement, and no longer appears in searches. Give `content` (a new memory) or `by`. Returns the
        replacing memory."""
        given = {"type": type, "project": project, "tags": tags, "confidence": confidence, "source": source,
                 "ttl": ttl, "metadata": metadata, "valid_from": valid_from}
        fields: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
        with self.calling(ctx, agent) as cx, notices.collect() as notes:
            memory = cx.supersede(agent, memory_id, content, by=by, reason=reason, **fields)
        return WrittenMemory.of(memory, notes)

    @tool("validate", WRITES)
    def validate_memory(self, agent: Agent, memory_id: MemoryId, ctx: Context) -> Memory:
        """Confirm a memory is still right: it stops fading in rankings for a while and its confidence rises by
        0.05."""
        with self.calling(ctx, agent) as cx:
            return cx.validate(agent, memory_id)

    @tool("inject_learning", WRITES)
    def inject_learning(
        self,
        agent: Annotated[str, Field(description="The lead teaching (an agent with 'lead: true')")],
        content: Annotated[str, Field(description="The learning, one self-contained statement")],
        category: Annotated[Literal["mistake-pattern", "best-practice", "codebase-knowledge", "preference"],
                            Field(description="What kind of learning it is")],
        ctx: Context,
        team: Annotated[str | None, Field(description="Only for this team (one the lead leads)")] = None,
        to: Annotated[str | None, Field(description="Only for this worker (into its own memory)")] = None,
        confidence: Annotated[Number, Field(description="How sure, 0..1", ge=0, le=1)] = 0.9,
        project: Annotated[str, Field(description="Project it applies to; 'global' for everywhere")]
        = config.DEFAULT_PROJECT,
        tags: Annotated[list[str] | None, Field(description="More tags besides the category")] = None,
    ) -> WrittenMemory:
        """A lead shares a learning: with every agent (default), with one team, or with one worker. Only leads
        may; the memory is tagged with its category."""
        with self.calling(ctx, agent) as cx, notices.collect() as notes:
            memory = cx.inject_learning(agent, content, category, team=team, to=to, confidence=confidence,
                                        project=project, tags=tags or ())
        return WrittenMemory.of(memory, notes)

    @tool("touch", WRITES)
    def touch_memory(self, agent: Agent, memory_id: MemoryId, ctx: Context) -> Memory:
        """Record that a memory was useful (usageCount + 1, lastUsedAt = now): used memories rank higher."""
        with self.calling(ctx, agent) as cx:
            return cx.touch(agent, memory_id)

    @tool("forget", DELETES)
    def delete_memory(self, agent: Agent, memory_id: MemoryId, ctx: Context) -> DeleteOutput:
        """Delete a memory for good. Deleting one that is not there answers deleted: false."""
        with self.calling(ctx, agent) as cx:
            return DeleteOutput(deleted=cx.forget(agent, memory_id), id=memory_id)

    @tool("prune_candidates", DELETES)
    def prune_memories(
        self,
        agent: Agent,
        ctx: Context,
        min_confidence: Annotated[Number, Field(description="Select memories below this confidence", ge=0, le=1)]
        = config.DEFAULT_MIN_CONFIDENCE,
        max_age: Annotated[str | None, Field(description="Also select memories unused for longer than this "
                                                         "(e.g. 90d, 12h)")] = None,
        dry_run: Annotated[bool, Field(description="Only list what would be deleted (default)")] = True,
    ) -> PruneOutput:
        """Delete the agent's low-confidence (and, with max_age, long-unused) memories, like POST
        /v1/agents/{agent}/prune; by default only lists them."""
        with self.calling(ctx, agent) as cx:
            return PruneOutput(ids=cx.prune_candidates(agent, min_confidence, max_age, delete=not dry_run),
                               dry_run=dry_run)

    @tool("purge_expired", DELETES)
    def purge_expired(
        self,
        ctx: Context,
        agent: Annotated[str | None, Field(description="Only this agent's own memories (none: every scope)")] = None,
    ) -> PurgeOutput:
        """Delete for good the memories whose time to live has run out (they are already hidden from searches).
        Admin only, like POST /v1/purge-expired."""
        with self.tool_errors():
            self.caller_of(ctx).require_admin("purge_expired")
            return PurgeOutput(count=self.backend().purge_expired(agent))
