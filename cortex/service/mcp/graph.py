"""The MCP tools of the graph domain: RDF export and import, other memory systems, SHACL validation and SPARQL."""

from __future__ import annotations

import io
from typing import Annotated, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from cortex import sparql as sparql_limits
from cortex.model import ImportReport
from cortex.service.guard import SPARQL_SLOTS
from cortex.service.mcp.context import READ_ONLY, WRITES, WRITES_IDEMPOTENT, ToolContext, tool
from cortex.service.mcp.outputs import (
    Agent,
    BeadsExportOutput,
    ExportOutput,
    ImportOutput,
    SparqlOutput,
    ValidateOutput,
    ViolationOut,
)


class GraphTools(ToolContext):
    """The tools of the memory graph and of other memory systems."""

    @tool("export", READ_ONLY)
    def export_memories(
        self,
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
        with self.tool_errors():
            self.caller_of(ctx).require_export(agent, self.backend().resolve_agent)
            out = io.BytesIO()
            quads = self.backend().export(out, agent=agent, team=team, all=all, format=format)
            return ExportOutput(format=format, quads=quads, data=out.getvalue().decode("utf-8"))

    @tool("import_rdf", WRITES)
    def import_memories(
        self,
        ctx: Context,
        data: Annotated[str, Field(description="An RDF document as export_memories (or `cortex export`) wrote it")],
        format: Annotated[Literal["trig", "nquads", "turtle", "jsonld"], Field(
            description="The document's format")] = "trig",
        agent: Annotated[str | None, Field(description="Turtle only: the agent whose memories it holds")] = None,
        team: Annotated[str | None, Field(description="Turtle only: the team whose memories it holds")] = None,
    ) -> ImportOutput:
        """Import memories from an RDF export, all or nothing: checked whole first (Cortex's rules and the SHACL
        shapes; the error names each focus node, property and problem). Admin only, like POST /v1/import."""
        with self.tool_errors():
            self.caller_of(ctx).require_admin("import")
            imported = self.backend().import_rdf(data.encode("utf-8"), format=format, agent=agent, team=team)
            return ImportOutput(imported=imported)

    @tool("import_from", WRITES_IDEMPOTENT)
    def import_memories_from(
        self,
        system: Annotated[Literal["beads", "mem0", "mcp-memory", "claude", "codex"], Field(
            description="beads (.beads/memory/knowledge.jsonl or its directory), mem0 (the JSON of get_all), "
                        "mcp-memory (the MCP memory server's memory.jsonl), claude (CLAUDE.md, or Claude Code's "
                        "memory directory ~/.claude/projects/<project>/memory), codex (Codex's memory folder "
                        "~/.codex/memories: the task groups of this project, the summary, the skills)")],
        path: Annotated[str, Field(description="The file or directory on this machine")],
        agent: Agent,
        ctx: Context,
        dry_run: Annotated[bool, Field(description="Write nothing: report what the import would do")] = False,
    ) -> ImportReport:
        """Import another memory system's memories into the agent's memory: each item once (running it again
        imports nothing new; a newer version of an item supersedes the old one), secrets redacted, each file checked
        whole then written in atomic batches of 1,000 memories. The report lists what was imported, skipped (already there) and failed (the
        file and line, and why). An agent's token may read files of the project and of Claude Code's and Codex's
        directories only."""
        with self.calling(ctx, agent) as cx:
            with self.caller_of(ctx).reading(path, cx):
                return cx.import_from(system, path, agent=agent, dry_run=dry_run)

    @tool("export_beads", WRITES_IDEMPOTENT)
    def export_beads(
        self,
        agent: Agent,
        directory: Annotated[str, Field(description="The Beads memory directory to write, e.g. .beads/memory")],
        ctx: Context,
    ) -> BeadsExportOutput:
        """Write the agent's memories as a Beads knowledge log (directory/knowledge.jsonl, the beads-compound
        plugin's format), merged with the files there (same key: the newest ts wins), rotated to
        knowledge.archive.jsonl past 1,000 lines. An agent's token may write inside the project (and Claude Code's
        and Codex's directories) only."""
        with self.calling(ctx, agent) as cx:
            with self.caller_of(ctx).writing(directory, cx):  # what is there already is read to be merged
                return BeadsExportOutput(**cx.export_beads(directory, agent=agent))

    @tool("validate_store", READ_ONLY)
    def validate_store(
        self,
        ctx: Context,
        agent: Annotated[str | None, Field(description="Only this agent's graph")] = None,
        team: Annotated[str | None, Field(description="Only this team's graph")] = None,
    ) -> ValidateOutput:
        """Check the store (or one agent's or team's graph) against the SHACL shapes of what Cortex writes.
        Admin only, like GET /v1/validate-store."""
        with self.tool_errors():
            self.caller_of(ctx).require_admin("validate-store")
            found = self.backend().validate_store(agent=agent, team=team)
            return ValidateOutput(conforms=not found, violations=[ViolationOut(focus=v.focus, path=v.path,
                                                                               message=v.message) for v in found])

    @tool("sparql", READ_ONLY)
    def sparql_query(
        self,
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
        with self.calling(ctx, agent) as cx, SPARQL_SLOTS.hold(self.caller_of(ctx)):
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
