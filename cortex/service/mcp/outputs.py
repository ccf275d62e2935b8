"""The shapes of the MCP tools' signatures: the argument types several tools share (each with the description an
agent reads in the tool's input schema) and the output models (their output schemas)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from cortex.model import Memory

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
    #: per source: memories, how many were shown and how many used (an output drew on them), times of each, ratio
    usage: dict[str, dict[str, int | float | None]] = {}


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


def summary_of(content: str) -> str:
    """``content`` cut to :data:`SUMMARY_CHARS` characters, as search hits show it."""
    return content if len(content) <= SUMMARY_CHARS else content[: SUMMARY_CHARS - 1] + "…"
