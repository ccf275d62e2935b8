"""The MCP server (official ``mcp`` SDK, 2.x ``MCPServer``): tools and a resource over the Cortex API.

The same server object runs over stdio (``cortex mcp``) and streamable HTTP (``/mcp`` of ``cortex serve``).
Its backend is a :class:`cortex.api.MemoryAPI`: the Cortex the server owns, or a
:class:`cortex.client.RemoteCortex` talking to it. Tools are named and shaped like the Python API
(``recall`` is the AND-token recall, ``agent_start`` the block); enums where the API has one. Every error is one
line naming the field: Cortex errors carry their own message, argument errors are rewritten from pydantic's.
"""

from __future__ import annotations

import dataclasses

import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Literal

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from cortex import config, notices, provenance
from cortex import sparql as sparql_limits
from cortex.api import MemoryAPI
from cortex.consolidation.report import ConsolidationReport, ReviewItem, RunInfo, UndoReport
from cortex.errors import AgentNotFoundError, CortexError
from cortex.model import CaptureReport, ImportReport, Memory, NotesReport, Page, Provenance, WrittenMemory
from cortex.scopes import Member
from cortex.service.auth import Principal
from cortex.service.guard import SPARQL_SLOTS
from cortex.validation import Number

SUMMARY_CHARS = 200

Agent = Annotated[str, Field(description="The agent whose memory to use: a name from list_agents, e.g. 'reviewer'")]
MemoryId = Annotated[str, Field(description="A memory id, as returned by add_memory, search_memories or recall")]
TypeName = Literal["pattern", "convention", "insight", "decision"]
Project = Annotated[str | None, Field(description="Only memories of this project (global ones are in every project)")]
Tags = Annotated[list[str] | None, Field(description="Only memories with all of these tags (lowercase slugs)")]
ScopeFilter = Annotated[str | None, Field(
    description="Only this scope: 'agent' (the agent's own), 'team:NAME' or 'swarm' (default: all it can see)")]
IncludeSuperseded = Annotated[bool, Field(description="Also memories replaced by newer ones (default: current only)")]
IncludeExpired = Annotated[bool, Field(description="Also memories whose time to live has run out")]
AsOf = Annotated[str | None, Field(description="An ISO 8601 moment, e.g. 2026-01-31T12:00:00Z: answer with the "
                                               "memories recorded and valid then (superseded ones included)")]
SourceName = Literal["manual", "agent_end", "task_completion", "session_summary", "file_index", "import", "injected"]
SourceFilter = Annotated[SourceName | None, Field(description="Only memories from this source")]
ConsolidatedAgent = Annotated[str | None, Field(
    description="An agent's own memory (an agent token: its own, the default); name one of agent, team, swarm")]
ConsolidatedTeam = Annotated[str | None, Field(description="A team's memory (an admin, or a lead of the team)")]
ConsolidatedSwarm = Annotated[bool, Field(description="The swarm's memory (an admin, or a lead)")]


class SearchHit(BaseModel):
    id: str
    summary: str = Field(description=f"The content, cut to {SUMMARY_CHARS} characters (get_memory has all of it)")
    type: str
    project: str
    scope: str = Field(description="agent (the agent's own), team:NAME or swarm")
    tags: list[str]
    score: float


class SearchOutput(BaseModel):
    mode: str = Field(description="The ranking actually used")
    note: str | None = Field(None, description="Why the requested mode was not used, if it was not")
    hits: list[SearchHit]


class MemoriesOutput(BaseModel):
    memories: list[Memory]
    warnings: list[str] = Field(default_factory=list, description="What you must know: e.g. the memories the prune "
                                                                  "at agent end deleted")


class AddOutput(BaseModel):
    memory: Memory
    created: bool = Field(description="False when exactly this content was already stored for the agent and "
                                      "project: the existing memory is returned, not a duplicate")
    warnings: list[str] = Field(default_factory=list, description="What you must know: e.g. that the prune at the "
                                                                  "agent's next agent_end will delete it")


class PruneOutput(BaseModel):
    ids: list[str] = Field(description="The memories the rule selects (deleted unless dry_run)")
    dry_run: bool


class ReindexOutput(BaseModel):
    memories: int = Field(description="Memories in the rebuilt index")
    embedded: int = Field(description="Memories embedded again (those without a vector of the current model)")


class IndexStatusOutput(BaseModel):
    scope: str
    memories: int = Field(description="Memories in the derived index")
    stored: int = Field(description="Memories in the store")
    vectors: int
    vector_model: str | None
    rebuilds: int
    seq: int
    pending: int


class InfoOutput(BaseModel):
    store: str = Field(description="Where the memory is kept (never with credentials)")
    embeddings: str | None = Field(description="The embedding model, or null when semantic search is off")
    details: dict[str, Any] = Field(default_factory=dict, description="Everything else the server reports")


class HistoryOutput(BaseModel):
    versions: list[Memory] = Field(description="Every version, oldest first; the last is the current one")


class BlockOutput(BaseModel):
    block: str = Field(description="The <agent-memory> block to put in the prompt ('' when empty)")


class DeleteOutput(BaseModel):
    deleted: bool = Field(description="False when there was no such memory (deleting twice is harmless)")
    id: str


class SparqlOutput(BaseModel):
    kind: Literal["solutions", "boolean", "graph"] = Field(description="SELECT rows, an ASK answer, or triples")
    variables: list[str] = Field(default_factory=list)
    rows: list[dict[str, str]] = Field(default_factory=list, description="One object per solution")
    boolean: bool | None = None
    ntriples: str | None = Field(default=None, description="A CONSTRUCT/DESCRIBE result as N-Triples")
    truncated: bool = Field(default=False, description="True when the row limit cut the result short")


class PurgeOutput(BaseModel):
    count: int = Field(description="How many expired memories were deleted")


class ExportOutput(BaseModel):
    format: str = Field(description="trig, nquads, turtle or jsonld")
    quads: int = Field(description="How many quads the export holds")
    data: str = Field(description="The RDF document (docs/export.md); import_memories takes it back")


class ImportOutput(BaseModel):
    imported: dict[str, int] = Field(description="Memories imported per scope (agent:NAME, team:NAME, swarm)")


class BeadsExportOutput(BaseModel):
    directory: str
    knowledge: int = Field(description="Lines of knowledge.jsonl")
    archive: int = Field(description="Lines of knowledge.archive.jsonl (the oldest, rotated past 1,000 lines)")
    exported: int = Field(description="Lines written from the agent's memories")
    kept: int = Field(description="Lines of the files already there that were kept (newer, or not in Cortex)")
    files: list[str] = Field(description="The files written")


class ViolationOut(BaseModel):
    focus: str = Field(description="The node that breaks a shape")
    path: str = Field(description="The property")
    message: str


class ValidateOutput(BaseModel):
    conforms: bool
    violations: list[ViolationOut]


class StatsOutput(BaseModel):
    agent: str
    total: int
    by_type: dict[str, int]
    #: per source: memories, how many were shown and how many used (an output drew on them), times of each
    usage: dict[str, dict[str, int]] = {}


class AgentInfo(BaseModel):
    name: str
    description: str
    memory_enabled: bool
    project: str | None
    memories: int
    teams: list[str] = Field(default_factory=list, description="The teams it belongs to (it reads their memories)")
    lead: bool = Field(False, description="Whether it leads its teams and the swarm (may inject learnings)")
    problems: list[str] = Field(default_factory=list, description="What is wrong with its definition file; an "
                                "agent with problems cannot be used until the file is fixed")


class AgentsOutput(BaseModel):
    agents: list[AgentInfo]


def _summary(content: str) -> str:
    return content if len(content) <= SUMMARY_CHARS else content[: SUMMARY_CHARS - 1] + "…"


def argument_error(exc: ValidationError) -> str:
    """pydantic's report on a tool's arguments as one line naming the field."""
    errors = exc.errors()
    first: dict[str, Any] = dict(errors[0]) if errors else {}
    field = ".".join(str(p) for p in first.get("loc", ())) or "arguments"
    message = str(first.get("msg", "invalid")).rstrip(".")
    if first.get("type") == "missing":
        return f"{field}: missing (required)"
    shown = repr(first.get("input"))
    return f"{field}: {message[:1].lower()}{message[1:]}, not {shown if len(shown) <= 80 else shown[:77] + '...'}"


class _CortexMCP(MCPServer):
    """The SDK's server, with argument errors rewritten as one line naming the field."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            with provenance.activity(surface="mcp", tool=name):  # what the tool writes records its activity
                return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(argument_error(exc.__cause__)) from None
            raise


INSTRUCTIONS = (
    "Persistent memory for agents. Start with list_agents: it names the agents you may use, and every other tool "
    "takes one of those names as `agent`. Call agent_start when an agent begins a task (it returns the "
    "<agent-memory> block of what it learned before), search_memories before you work on something you may have "
    "met before, add_memory when you learn a pattern, convention, insight or decision worth keeping, and "
    "agent_end with the agent's output to keep its LEARNED:/PATTERN:/CONVENTION:/DECISION:/INSIGHT: lines. "
    "When a memory is wrong, update_memory corrects it; when a fact changed, supersede_memory replaces it (the old "
    "one stays in memory_history); validate_memory confirms one is still right. Memories can be shared: "
    "scope 'team:NAME' or 'swarm' on add_memory, and inject_learning for leads."
)


def build_mcp(backend: Callable[[], MemoryAPI], authenticate: Callable[[Any], Principal]) -> MCPServer:
    """An MCP server whose tools call ``backend()``; ``authenticate(http_request_or_None)`` names the caller
    (agent tokens only reach their own agent)."""
    server = _CortexMCP(name="cortex", version="0.1.0", log_level="WARNING", instructions=INSTRUCTIONS)
    for model in (Memory, Page):  # deferred in the engine; tools serialise memories made without validation
        model.model_rebuild(force=True)

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
                raise AgentNotFoundError(agent, token=True)
            yield backend()

    readonly = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)

    @server.tool(annotations=readonly)
    def list_agents(ctx: Context) -> AgentsOutput:
        """The agents you may use, with their memory counts. Call this first: every other tool takes one of these
        names as `agent`."""
        with tool_errors():
            caller = caller_of(ctx)
            agents = [AgentInfo(**a) for a in backend().describe_agents() if caller.may_use(a["name"])]
        return AgentsOutput(agents=agents)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                             open_world_hint=False))
    def add_memory(
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
        with calling(ctx, agent) as cx:
            if scope != "agent":  # the same refusal as store's, before answering with an existing memory
                described = cx.describe_agents()
                info = next((a for a in described if a["name"] == agent), None)
                if info is not None:
                    Member(agent, tuple(info.get("teams", ())), bool(info.get("lead"))).writable(
                        scope, {t for a in described for t in a.get("teams", ())})
            # every word of an identical memory occurs in it: AND-token recall finds the candidates cheaply
            existing = [m for m in cx.recall(agent, content, project=project, limit=50, scope=scope)
                        if m.content == content]
            if existing:
                return AddOutput(memory=existing[0], created=False)
            with notices.collect() as notes:
                memory = cx.store(agent, content, type=type, project=project, confidence=confidence,
                                  tags=tags or (), metadata=metadata, source=source, ttl=ttl, scope=scope)
            return AddOutput(memory=memory, created=True, warnings=notes)

    @server.tool(annotations=readonly)
    def search_memories(
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
    ) -> SearchOutput:
        """Ranked search of the memories the agent can see (its own, its teams', the swarm's): summaries with ids,
        best first (get_memory reads one in full). Memories unrelated to the query are not returned, so there
        may be fewer than `limit`."""
        with calling(ctx, agent) as cx:
            result = cx.search(agent, query, mode=mode, limit=limit, project=project, type=type, tags=tags,
                               scope=scope, source=source, include_superseded=include_superseded,
                               include_expired=include_expired, as_of=as_of)
            hits = [SearchHit(id=h.memory.id, summary=_summary(h.memory.content), type=h.memory.type.value,
                              project=h.memory.project, scope=h.memory.scope, tags=list(h.memory.tags),
                              score=h.score) for h in result.hits]
            return SearchOutput(mode=result.mode, note=result.note, hits=hits)

    @server.tool(annotations=readonly)
    def recall(
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
        with calling(ctx, agent) as cx:
            return MemoriesOutput(memories=cx.recall(agent, query, type=type, project=project, limit=limit, tags=tags,
                                                     scope=scope, source=source,
                                                     include_superseded=include_superseded,
                                                     include_expired=include_expired, as_of=as_of))

    @server.tool(annotations=readonly)
    def list_memories(
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
    ) -> Page:
        """Every memory the agent can see, newest first, one page at a time: call again with next_cursor until it
        is null."""
        with calling(ctx, agent) as cx:
            return cx.list_memories(agent, scope=scope, type=type, project=project, tags=tags, source=source,
                                    include_expired=include_expired, include_superseded=include_superseded,
                                    cursor=cursor, limit=limit)

    @server.tool(annotations=writes)
    def update_memory(
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
        with calling(ctx, agent) as cx, notices.collect() as notes:
            memory = cx.update(agent, memory_id, content=content, type=type, project=project, confidence=confidence,
                               tags=tags, metadata=metadata, expected_version=expected_version)
        return WrittenMemory.of(memory, notes)

    @server.tool(annotations=readonly)
    def memory_history(agent: Agent, memory_id: MemoryId, ctx: Context) -> HistoryOutput:
        """Every version of a memory, oldest first (the last one is current)."""
        with calling(ctx, agent) as cx:
            return HistoryOutput(versions=cx.history(agent, memory_id))

    @server.tool(annotations=readonly)
    def memory_provenance(agent: Agent, memory_id: MemoryId, ctx: Context) -> Provenance:
        """Where a memory comes from (PROV-O): the agent it is attributed to, the activity that generated it
        (surface, hook event, session, tool, when), the memories it was derived from, its earlier versions."""
        with calling(ctx, agent) as cx:
            return cx.provenance(agent, memory_id)

    @server.tool(annotations=writes)
    def supersede_memory(
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
        with calling(ctx, agent) as cx, notices.collect() as notes:
            memory = cx.supersede(agent, memory_id, content, by=by, reason=reason, **fields)
        return WrittenMemory.of(memory, notes)

    @server.tool(annotations=writes)
    def validate_memory(agent: Agent, memory_id: MemoryId, ctx: Context) -> Memory:
        """Confirm a memory is still right: it stops fading in rankings for a while and its confidence rises by
        0.05."""
        with calling(ctx, agent) as cx:
            return cx.validate(agent, memory_id)

    @server.tool(annotations=writes)
    def inject_learning(
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
        with calling(ctx, agent) as cx, notices.collect() as notes:
            memory = cx.inject_learning(agent, content, category, team=team, to=to, confidence=confidence,
                                        project=project, tags=tags or ())
        return WrittenMemory.of(memory, notes)

    @server.tool(annotations=writes)
    def capture_transcript(
        agent: Agent,
        path: Annotated[str, Field(description="The transcript file on this machine: Claude Code JSONL, a Codex "
                                               "CLI session file, a JSON list of messages, or plain text")],
        ctx: Context,
        format: Annotated[Literal["claude", "codex", "cursor", "gemini", "messages", "text"] | None,
                          Field(description="Default: detected from the file")] = None,
        project: Annotated[str | None, Field(description="Project the memories belong to")] = None,
        summary: Annotated[bool, Field(description="With a language model: store a session summary")] = True,
    ) -> CaptureReport:
        """Capture what a session transcript holds since its last capture: marker lines (LEARNED: ...), with a
        language model (CORTEX_LLM_URL) learnings and a session summary, the outcomes of subagent tasks, and
        which shown memories the session used. Secrets are redacted, duplicates confirmed rather than stored;
        running it again stores nothing new."""
        with calling(ctx, agent) as cx:
            caller_of(ctx).require_transcript(path)
            return cx.capture_transcript(agent, path, format=format, project=project, summary=summary)

    @server.tool(annotations=writes)
    def sync_notes(
        ctx: Context,
        agent: Annotated[str | None, Field(description="Whose notes (default: every agent you may use)")] = None,
        file: Annotated[str | None, Field(description="Only this file of a notes directory")] = None,
    ) -> list[NotesReport]:
        """Index Markdown notes (.cortex/notes/AGENT/ and each agent's cortex: notes:) as memories: unchanged
        sections keep theirs, changed ones are superseded, removed ones leave recall."""
        with tool_errors():
            caller = caller_of(ctx)
            if agent is None and not caller.admin:
                agent = caller.agent
            if agent is not None and not caller.may_use(agent):
                raise AgentNotFoundError(agent)
            return backend().sync_notes(agent, file=file)

    @server.tool(annotations=writes)
    def promote_notes(
        agent: Agent,
        file: Annotated[str, Field(description="A file of the agent's notes directory")],
        ctx: Context,
        team: Annotated[str | None, Field(description="The team to share it with")] = None,
        swarm: Annotated[bool, Field(description="Share it with the swarm (a lead)")] = False,
    ) -> NotesReport:
        """Move a notes file's memories to a team or the swarm; later syncs update them there."""
        with calling(ctx, agent) as cx:
            return cx.promote_notes(agent, file, team=team, swarm=swarm)

    @server.tool(annotations=writes)
    def export_notes(
        agent: Agent,
        directory: Annotated[str, Field(description="Where to write the Markdown files (the agent's notes "
                                                    "directory, to sync edits back)")],
        ctx: Context,
    ) -> list[str]:
        """Write the agent's memories as Markdown files a person can read and edit (one per type); a later
        sync of the directory applies the edits to the memories."""
        with calling(ctx, agent) as cx:
            caller_of(ctx).require_admin("writing notes files")
            return cx.export_notes(agent, directory)

    @server.tool(annotations=writes)
    def record_use(
        agent: Agent,
        output: Annotated[str, Field(description="What you wrote and did since your memory block was shown")],
        ctx: Context,
    ) -> list[Memory]:
        """Tell Cortex which of the memories shown to you at start your work drew on (it matches your output
        against them): they rank higher next time than memories that were merely shown."""
        with calling(ctx, agent) as cx:
            return cx.record_use(agent, output)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                                             open_world_hint=False))
    def purge_expired(
        ctx: Context,
        agent: Annotated[str | None, Field(description="Only this agent's own memories (none: every scope)")] = None,
    ) -> PurgeOutput:
        """Delete for good the memories whose time to live has run out (they are already hidden from searches).
        Admin only, like POST /v1/purge-expired."""
        with tool_errors():
            caller_of(ctx).require_admin("purge_expired")
            return PurgeOutput(count=backend().purge_expired(agent))

    @server.tool(annotations=readonly)
    def export_memories(
        ctx: Context,
        agent: Annotated[str | None, Field(description="One agent's own memories")] = None,
        team: Annotated[str | None, Field(description="One team's shared memories (admin)")] = None,
        all: Annotated[bool, Field(description="Every scope of the store (admin)")] = False,
        format: Annotated[Literal["trig", "nquads", "turtle", "jsonld"], Field(
            description="trig (default), nquads, turtle (one scope) or jsonld")] = "trig",
    ) -> ExportOutput:
        """The memory graph of one agent, one team or the whole store as an RDF document, lossless (every field,
        version, supersession and provenance), like GET /v1/export. An agent token exports its own agent only;
        the rest needs an admin token. For large stores use `cortex export` or HTTP (this answer is one text)."""
        with tool_errors():
            caller_of(ctx).require_export(agent, backend().resolve_agent)
            out = io.BytesIO()
            quads = backend().export(out, agent=agent, team=team, all=all, format=format)
            return ExportOutput(format=format, quads=quads, data=out.getvalue().decode("utf-8"))

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                                             open_world_hint=False))
    def import_memories(
        ctx: Context,
        data: Annotated[str, Field(description="An RDF document as export_memories (or `cortex export`) wrote it")],
        format: Annotated[Literal["trig", "nquads", "turtle", "jsonld"], Field(
            description="The document's format")] = "trig",
        agent: Annotated[str | None, Field(description="Turtle only: the agent whose memories it holds")] = None,
        team: Annotated[str | None, Field(description="Turtle only: the team whose memories it holds")] = None,
    ) -> ImportOutput:
        """Import memories from an RDF export, all or nothing: checked whole first (Cortex's rules and the SHACL
        shapes; the error names each focus node, property and problem). Admin only, like POST /v1/import."""
        with tool_errors():
            caller_of(ctx).require_admin("import")
            return ImportOutput(imported=backend().import_rdf(data.encode("utf-8"), format=format, agent=agent,
                                                              team=team))

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                             open_world_hint=False))
    def import_memories_from(
        system: Annotated[Literal["beads", "mem0", "mcp-memory", "claude"], Field(
            description="beads (.beads/memory/knowledge.jsonl or its directory), mem0 (the JSON of get_all), "
                        "mcp-memory (the MCP memory server's memory.jsonl), claude (CLAUDE.md, or Claude Code's "
                        "memory directory ~/.claude/projects/<project>/memory)")],
        path: Annotated[str, Field(description="The file or directory on this machine")],
        agent: Agent,
        ctx: Context,
        dry_run: Annotated[bool, Field(description="Write nothing: report what the import would do")] = False,
    ) -> ImportReport:
        """Import another memory system's memories into the agent's memory: each item once (running it again
        imports nothing new; a newer version of an item supersedes the old one), secrets redacted, each file checked
        whole then written at once. The report lists what was imported, skipped (already there) and failed (the
        file and line, and why). An agent's token may read files of the project and of Claude Code's and Codex's
        directories only."""
        with calling(ctx, agent) as cx:
            caller_of(ctx).require_transcript(path)
            return cx.import_from(system, path, agent=agent, dry_run=dry_run)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                             open_world_hint=False))
    def export_beads(
        agent: Agent,
        directory: Annotated[str, Field(description="The Beads memory directory to write, e.g. .beads/memory")],
        ctx: Context,
    ) -> BeadsExportOutput:
        """Write the agent's memories as a Beads knowledge log (directory/knowledge.jsonl, the beads-compound
        plugin's format), merged with the files there (same key: the newest ts wins), rotated to
        knowledge.archive.jsonl past 1,000 lines. An agent's token may write inside the project (and Claude Code's
        and Codex's directories) only."""
        with calling(ctx, agent) as cx:
            caller_of(ctx).require_transcript(directory)
            return BeadsExportOutput(**cx.export_beads(directory, agent=agent))

    @server.tool(annotations=readonly)
    def validate_store(
        ctx: Context,
        agent: Annotated[str | None, Field(description="Only this agent's graph")] = None,
        team: Annotated[str | None, Field(description="Only this team's graph")] = None,
    ) -> ValidateOutput:
        """Check the store (or one agent's or team's graph) against the SHACL shapes of what Cortex writes.
        Admin only, like GET /v1/validate-store."""
        with tool_errors():
            caller_of(ctx).require_admin("validate-store")
            found = backend().validate_store(agent=agent, team=team)
            return ValidateOutput(conforms=not found, violations=[ViolationOut(focus=v.focus, path=v.path,
                                                                               message=v.message) for v in found])

    @server.tool(annotations=readonly)
    def get_memory(agent: Agent, memory_id: MemoryId, ctx: Context) -> Memory:
        """One memory in full."""
        with calling(ctx, agent) as cx:
            memory = cx.get(agent, memory_id)
            if memory is None:
                raise ToolError(f"memory_id: agent {agent!r} has no memory with id {memory_id!r}")
            return memory

    @server.tool(annotations=writes)
    def touch_memory(agent: Agent, memory_id: MemoryId, ctx: Context) -> Memory:
        """Record that a memory was useful (usageCount + 1, lastUsedAt = now): used memories rank higher."""
        with calling(ctx, agent) as cx:
            return cx.touch(agent, memory_id)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                                             open_world_hint=False))
    def delete_memory(agent: Agent, memory_id: MemoryId, ctx: Context) -> DeleteOutput:
        """Delete a memory for good. Deleting one that is not there answers deleted: false."""
        with calling(ctx, agent) as cx:
            return DeleteOutput(deleted=cx.forget(agent, memory_id), id=memory_id)

    @server.tool(annotations=readonly)
    def sparql_query(
        agent: Agent,
        query: Annotated[str, Field(description=(
            "A read-only SPARQL 1.1 query (SELECT, ASK, CONSTRUCT or DESCRIBE). Memories are resources with "
            "<urn:cortex:agentmem:content>, <urn:cortex:agentmem:type>, <urn:cortex:agentmem:tag>, "
            "<urn:cortex:agentmem:createdAt>, <urn:cortex:agentmem:usageCount>, "
            "<http://purl.org/dc/terms/isReplacedBy>, ... (docs/sparql.md); each scope is a named graph"))],
        ctx: Context,
        limit: Annotated[int, Field(description="How many rows at most", ge=1, le=10_000)] = 100,
    ) -> SparqlOutput:
        """Query the agent's memory graph with SPARQL: it sees the graphs the agent reads (its own, its teams',
        the swarm's) and nothing else. Rows come back as variable -> value (IRIs and literals as text);
        CONSTRUCT results as N-Triples. Updates are refused."""
        with calling(ctx, agent) as cx, SPARQL_SLOTS.hold(caller_of(ctx)):
            result = cx.sparql(query, agent=agent, limit=min(limit, sparql_limits.configured_limit()),
                               timeout=sparql_limits.configured_timeout())
            if result.kind == "graph":
                return SparqlOutput(kind="graph", ntriples=result.serialize("ntriples").decode("utf-8"),
                                    truncated=result.truncated)
            if result.kind == "boolean":
                return SparqlOutput(kind="boolean", boolean=result.boolean)
            rows = [{k: v.value if hasattr(v, "value") else str(v) for k, v in row.items() if v is not None}
                    for row in result.rows]
            return SparqlOutput(kind="solutions", variables=result.variables, rows=rows,
                                truncated=result.truncated)

    @server.tool(annotations=writes)
    def record_task(
        agent: Agent,
        task: Annotated[str, Field(description="What the task was")],
        ctx: Context,
        output: Annotated[str, Field(description="What you wrote at its end: the result, or what went wrong "
                                                 "(kept bounded)")] = "",
        status: Annotated[Literal["ok", "failed"], Field(description="How it ended")] = "ok",
        project: Annotated[str | None, Field(description="Project it belongs to")] = None,
    ) -> WrittenMemory:
        """Record a finished task's outcome as a memory (source task_completion, kept 7 days by default). Record
        failures too, with what went wrong: the next agent starting a similar task sees it."""
        with calling(ctx, agent) as cx, notices.collect() as notes:
            memory = cx.record_task(agent, task, output, status, project=project)
        return WrittenMemory.of(memory, notes)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                                             open_world_hint=False))
    def prune_memories(
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
        with calling(ctx, agent) as cx:
            return PruneOutput(ids=cx.prune_candidates(agent, min_confidence, max_age, delete=not dry_run),
                               dry_run=dry_run)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                             open_world_hint=False))
    def reindex(
        agent: Agent,
        ctx: Context,
        force: Annotated[bool, Field(description="Embed every memory again, not only those without a vector")] = False,
    ) -> ReindexOutput:
        """Rebuild the agent's index from the store and embed what lacks a vector of the current model. Admin
        only, like POST /v1/agents/{agent}/reindex."""
        with calling(ctx, agent) as cx:
            caller_of(ctx).require_admin("reindex")
            return ReindexOutput(**cx.reindex(agent, force=force))

    @server.tool(annotations=readonly)
    def index_status(agent: Agent, ctx: Context) -> IndexStatusOutput:
        """What the agent's derived index holds against the store (memories, vectors and their model, pending
        changes), like GET /v1/agents/{agent}/index."""
        with calling(ctx, agent) as cx:
            status = cx.index_status(agent)
            return IndexStatusOutput(**{f.name: getattr(status, f.name) for f in dataclasses.fields(status)})

    @server.tool(annotations=readonly)
    def server_info(ctx: Context) -> InfoOutput:
        """Where the memory is kept and which embedding model it uses, like GET /v1/info."""
        with tool_errors():
            found = dict(backend().info())
            return InfoOutput(store=str(found.pop("store", "")), embeddings=found.pop("embeddings", None),
                              details=found)

    @server.tool(annotations=readonly)
    def memory_stats(agent: Agent, ctx: Context) -> StatsOutput:
        """How many memories the agent has, by type; and per source how many were shown and how many used."""
        with calling(ctx, agent) as cx:
            by_type = cx.stats(agent)
            return StatsOutput(agent=agent, total=sum(by_type.values()), by_type=by_type,
                               usage=cx.usage_stats(agent))

    @server.tool(annotations=writes)
    def agent_start(
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
        with calling(ctx, agent) as cx:
            return BlockOutput(block=cx.agent_start(agent, task, project, limit, tags=tags, scope=scope,
                                                    touch=touch))

    @server.tool(annotations=writes)
    def agent_end(
        agent: Agent,
        output: Annotated[str, Field(description="What the agent wrote: its LEARNED:, PATTERN:, CONVENTION:, "
                                                 "DECISION: and INSIGHT: lines (upper case, at a line start) are kept, "
                                                 "and 'SUPERSEDES <id>: text' replaces memory <id> by text")],
        ctx: Context,
        project: Annotated[str | None, Field(description="Project of the captured memories")] = None,
    ) -> MemoriesOutput:
        """Capture the marker lines of an agent's output as memories (a line already stored is refreshed, not
        stored twice), then prune the agent's memories by its prune rule: `warnings` says what was deleted."""
        with calling(ctx, agent) as cx, notices.collect() as notes:
            memories = cx.agent_end(agent, output, project)
        return MemoriesOutput(memories=memories, warnings=notes)

    def consolidating(ctx: Context, agent: str | None, team: str | None, swarm: bool) -> str | None:
        """The agent a consolidation tool names, once the caller may: its own agent for an agent token, a team's
        or the swarm's memory for an admin or a lead of it (:meth:`Principal.require_consolidation`)."""
        return caller_of(ctx).require_consolidation(agent, team, swarm, backend().describe_agents)

    @server.tool(annotations=writes)
    def consolidate(
        ctx: Context,
        agent: ConsolidatedAgent = None,
        team: ConsolidatedTeam = None,
        swarm: ConsolidatedSwarm = False,
        dry_run: Annotated[bool, Field(description="Only say what the run would do; write nothing")] = False,
    ) -> ConsolidationReport:
        """Consolidate one memory (an agent's own, a team's or the swarm's) in one run: near duplicates merged into
        one, contradictions found by the language model superseded or listed for review, the agent's recent
        sessions distilled into learnings. Never deletes; `run` in the report is the id undo_consolidation takes.
        An agent token consolidates its own agent; a team's or the swarm's memory needs an admin or a lead."""
        with tool_errors():
            name = consolidating(ctx, agent, team, swarm)
            return backend().consolidate(name, team=team, swarm=swarm, dry_run=dry_run)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                                             open_world_hint=False))
    def undo_consolidation(
        ctx: Context,
        run: Annotated[str, Field(description="The run's id as consolidate reported it (e.g. "
                                              "20261124T190501-3fa9c2), or 'last'")] = "last",
        agent: ConsolidatedAgent = None,
        team: ConsolidatedTeam = None,
        swarm: ConsolidatedSwarm = False,
        force: Annotated[bool, Field(description="Undo even when a memory changed since the run (those changes "
                                                 "are lost)")] = False,
    ) -> UndoReport:
        """Undo a consolidation run exactly: every memory it changed back as it was, the memories it created
        removed; its record stays, marked undone. Refused (nothing changed) when a memory changed since, unless
        force. Who may: as for consolidate."""
        with tool_errors():
            name = consolidating(ctx, agent, team, swarm)
            return backend().undo_consolidation(run, agent=name, team=team, swarm=swarm, force=force)

    @server.tool(annotations=readonly)
    def consolidation_runs(
        ctx: Context,
        agent: ConsolidatedAgent = None,
        team: ConsolidatedTeam = None,
        swarm: ConsolidatedSwarm = False,
    ) -> list[RunInfo]:
        """The consolidation runs of one memory (an admin naming none: of every memory), the latest first, with
        what each changed and whether it was undone. Who may: as for consolidate."""
        with tool_errors():
            name = consolidating(ctx, agent, team, swarm)
            return backend().consolidation_runs(name, team=team, swarm=swarm)

    @server.tool(annotations=readonly)
    def review_contradictions(
        ctx: Context,
        agent: ConsolidatedAgent = None,
        team: ConsolidatedTeam = None,
        swarm: ConsolidatedSwarm = False,
    ) -> list[ReviewItem]:
        """The contradictions consolidation found and left for review, still open (both memories current): accept
        or dismiss one with resolve_contradiction. Who may: as for consolidate."""
        with tool_errors():
            name = consolidating(ctx, agent, team, swarm)
            return backend().review(name, team=team, swarm=swarm)

    @server.tool(annotations=writes)
    def resolve_contradiction(
        keep: Annotated[str, Field(description="The memory the contradiction keeps, as review_contradictions "
                                               "lists it")],
        supersede: Annotated[str, Field(description="The memory the contradiction supersedes, as "
                                                    "review_contradictions lists it")],
        ctx: Context,
        accept: Annotated[bool, Field(description="true: supersede it by keep; false: keep both, and take the pair "
                                                  "off the list")] = True,
        agent: ConsolidatedAgent = None,
        team: ConsolidatedTeam = None,
        swarm: ConsolidatedSwarm = False,
    ) -> ConsolidationReport:
        """Decide a contradiction review_contradictions lists: accept supersedes `supersede` by `keep`, accept=false
        keeps both and takes the pair off the list. Either is a run of its own (kind review, `run` in the report),
        undone with undo_consolidation like any other. Who may: as for consolidate."""
        with tool_errors():
            name = consolidating(ctx, agent, team, swarm)
            return backend().resolve_review(keep, supersede, accept=accept, agent=name, team=team, swarm=swarm)

    @server.tool(annotations=writes)
    def team_round_end(
        team: Annotated[str, Field(description="The team whose round ended")],
        ctx: Context,
        dry_run: Annotated[bool, Field(description="Only say what it would do; write nothing")] = False,
    ) -> ConsolidationReport:
        """The end of a team's round: its lead's extractor distils the round's task outcomes and the members' new
        learnings into the team memory (decisions, lessons, members, context; updated, confirmed, the least
        valuable evicted over the bound). Needs a language model; one run, undone like any other. An admin or a
        lead of the team."""
        with tool_errors():
            consolidating(ctx, None, team, False)
            return backend().team_round_end(team, dry_run=dry_run)

    @server.resource("cortex://agents/{agent}/memory", name="agent_memory", mime_type="text/markdown",
                     description="The agent's <agent-memory> block: its most used memories")
    def agent_memory(agent: str, ctx: Context) -> str:
        try:
            with calling(ctx, agent) as cx:
                return cx.render(cx.recall(agent, None, limit=20))
        except ToolError as exc:
            raise ResourceError(str(exc)) from None

    return server
