"""The table of operations every surface is driven by: one row per operation of :class:`cortex.api.MemoryAPI`.

A row names the operation's domain (the module of :mod:`cortex.app` that implements it), its HTTP route (method,
path under ``/v1``, status, OpenAPI tag), its MCP tool and its CLI command; where a surface does not have it, the
row says why. The HTTP routers and the MCP tool modules take their paths and names from here, the client
(:class:`cortex.api.client.RemoteCortex`) sends each table operation to its route, the docs' tables are generated
from it, and the surface tests check every surface against it. Standard library only: the hooks import the client.

Adding an operation: a method in its domain module of :mod:`cortex.app` (and its signature in
:mod:`cortex.api.protocol`), a row here; docs/architecture.md ("How to add an operation") says the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

#: The domains of the facade, in the order they build on each other (``cortex.app``'s modules).
DOMAINS = ("kernel", "memories", "reading", "admin", "sessions", "notes", "graph", "consolidation")

#: What each domain may call besides itself: a workflow domain builds on the base ones (the app's domain order).
BUILDS_ON: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "kernel": (),
    "memories": ("kernel",),
    "reading": ("kernel",),
    "admin": ("kernel",),
    "sessions": ("kernel", "memories", "reading", "admin"),
    "notes": ("kernel", "memories", "reading", "admin"),
    "graph": ("kernel", "memories", "reading", "admin"),
    "consolidation": ("kernel", "memories", "reading", "admin"),
})

#: Where every HTTP route of the API lives.
API_PREFIX = "/v1"


#: An empty mapping shared by the rows that need none (rows are immutable: no mutable default).
_NONE: Mapping[str, str] = MappingProxyType({})


# named tuples, not dataclasses: every command imports this table, and dataclasses would import inspect (~13 ms)
class Route(NamedTuple):
    """An HTTP route: ``method`` and ``path`` (under :data:`API_PREFIX`), the success ``status`` and the OpenAPI
    ``tag`` it is listed under."""

    method: str
    path: str
    status: int = 200
    tag: str = ""
    #: False for a route outside the API prefix (``/healthz``)
    prefixed: bool = True

    @property
    def full_path(self) -> str:
        """The path with the API prefix (``/v1/agents/{agent}/memories``)."""
        return API_PREFIX + self.path if self.prefixed else self.path

    def __str__(self) -> str:
        return f"{self.method} {self.full_path}"


class Operation(NamedTuple):
    """One operation of the API and where each surface has it.

    ``tool`` and ``command`` are None where that surface does not have it, and ``why_not`` says why (keys
    ``http``, ``mcp``, ``cli``). ``answer`` is how the client reads the route's answer (a model of
    :mod:`cortex.model`, ``list[Model]``, or ``json`` as it is) and ``key`` the field of the answer the operation
    returns; ``client`` is ``table`` when :class:`~cortex.api.client.RemoteCortex` sends it from this row alone, else
    ``hand`` (a method written out: files, streams, answers derived from another route). ``lean`` marks the
    operations whose tool is in the MCP server's default set (the others with ``--tools all``).
    """

    name: str
    domain: str
    route: Route | None
    tool: str | None
    command: str | None
    summary: str
    answer: str = "json"
    key: str | None = None
    client: str = "table"
    #: HTTP path parameters filled from a differently named argument (``memory_id`` from ``old_id``)
    path_args: Mapping[str, str] = _NONE
    why_not: Mapping[str, str] = _NONE
    #: True for the tools of everyday memory work, the MCP server's lean default set (``cortex mcp --tools``)
    lean: bool = False


def _op(name: str, domain: str, route: Route | None, tool: str | None, command: str | None, summary: str,
        **more: object) -> Operation:
    return Operation(name, domain, route, tool, command, summary, **more)  # type: ignore[arg-type]


_MEMORY = "/agents/{agent}/memories/{memory_id}"

_ROWS = (
    # -- memories: one memory's life --------------------------------------------------------------------
    _op("store", "memories", Route("POST", "/agents/{agent}/memories", 201, "memories"), "add_memory", "store",
        "Store one memory", answer="Memory", lean=True),
    _op("store_many", "memories", Route("POST", "/agents/{agent}/memories/batch", 201, "memories"), None,
        "store-many", "Store a batch in one atomic write", answer="list[Memory]",
        why_not={"mcp": "one add_memory call per memory"}),
    _op("get", "memories", Route("GET", _MEMORY, 200, "memories"), "get_memory", "get", "One memory, or none",
        answer="Memory", client="hand", lean=True),
    _op("update", "memories", Route("PATCH", _MEMORY, 200, "lifecycle"), "update_memory", "update",
        "Change fields in place (version + 1)", answer="Memory", lean=True),
    _op("history", "memories", Route("GET", _MEMORY + "/history", 200, "lifecycle"), "memory_history", "history",
        "Every version of a memory, oldest first", answer="list[Memory]"),
    _op("provenance", "memories", Route("GET", _MEMORY + "/provenance", 200, "lifecycle"), "memory_provenance",
        "provenance", "Where a memory comes from (PROV-O)", answer="Provenance"),
    _op("supersede", "memories", Route("POST", _MEMORY + "/supersede", 201, "lifecycle"), "supersede_memory",
        "supersede", "Replace a memory by a new one (or an existing one)", answer="Memory",
        path_args={"memory_id": "old_id"}, lean=True),
    _op("validate", "memories", Route("POST", _MEMORY + "/validate", 200, "lifecycle"), "validate_memory",
        "validate", "Confirm a memory: its decay restarts, confidence + 0.05", answer="Memory"),
    _op("inject_learning", "memories", Route("POST", "/agents/{lead}/inject", 201, "lifecycle"), "inject_learning",
        "inject", "A lead's learning for the swarm, a team or one worker", answer="Memory"),
    _op("touch", "memories", Route("POST", _MEMORY + "/touch", 200, "memories"), "touch_memory", "touch",
        "Record a use (usageCount + 1)", answer="Memory"),
    _op("forget", "memories", Route("DELETE", _MEMORY, 204, "memories"), "delete_memory", "forget",
        "Delete a memory", client="hand", lean=True),
    _op("prune", "memories", Route("POST", "/agents/{agent}/prune", 200, "memories"), "prune_memories", "prune",
        "Delete weak or long-unused memories", client="hand"),
    _op("prune_candidates", "memories", Route("POST", "/agents/{agent}/prune", 200, "memories"), "prune_memories",
        "prune", "What prune selects (deleted when asked)", client="hand"),
    _op("purge_expired", "memories", Route("POST", "/purge-expired", 200, "lifecycle"), "purge_expired", "prune",
        "Delete the memories whose time to live ran out", key="count"),
    # -- reading ----------------------------------------------------------------------------------------
    _op("recall", "reading", Route("GET", "/agents/{agent}/memories", 200, "memories"), "recall", "recall",
        "AND-token recall", answer="list[Memory]", lean=True),
    _op("search", "reading", Route("GET", "/agents/{agent}/search", 200, "memories"), "search_memories", "search",
        "Ranked search: hybrid, semantic, bm25 or all", answer="SearchResult", lean=True),
    _op("list_memories", "reading", Route("GET", "/agents/{agent}/list", 200, "memories"), "list_memories", "list",
        "One page of every memory the agent can see", answer="Page"),
    _op("stats", "reading", Route("GET", "/agents/{agent}/stats", 200, "memories"), "memory_stats", "stats",
        "How many memories of each type"),
    _op("count", "reading", Route("GET", "/agents/{agent}/stats", 200, "memories"), "memory_stats", "stats",
        "How many memories", client="hand"),
    _op("usage_stats", "reading", Route("GET", "/agents/{agent}/usage", 200, "memories"), "memory_stats", "stats",
        "Per source: memories shown and used"),
    _op("memory_usage", "reading", Route("GET", "/agents/{agent}/usage/memories", 200, "memories"), "memory_usage",
        "stats", "Per memory: shown, used and their ratio (what proved useful)", answer="list[MemoryUsage]"),
    _op("agent_overview", "reading", Route("GET", "/agents/{agent}/overview", 200, "memories"), "agent_overview",
        "overview", "The agent at a glance: counts by type, source and scope, last activity, decay"),
    _op("agent_start", "reading", Route("POST", "/agents/{agent}/start", 200, "prompt"), "agent_start", "start",
        "The <agent-memory> block to inject at agent start", key="block", lean=True),
    _op("agent_prompt", "reading", Route("POST", "/agents/{agent}/prompt", 200, "prompt"), None, "prompt",
        "The memories a prompt needs that the session's context lacks", key="block",
        why_not={"mcp": "the hooks' recall at each prompt; an agent asks search_memories"}),
    _op("render", "reading", None, None, None, "The <agent-memory> block of given memories", client="hand",
        why_not={"cli": "recall --format block renders", "http": "a client renders the memories it got",
                 "mcp": "the agent_memory resource is the rendered block"}),
    # -- admin: agents, scopes, indexes -----------------------------------------------------------------
    _op("describe_agents", "admin", Route("GET", "/agents", 200, "agents"), "list_agents", "agents list",
        "The declared agents and their memory counts", lean=True),
    _op("resolve_agent", "admin", Route("GET", "/agents/resolve", 200, "agents"), None, None,
        "The declared agent a coding agent's name stands for", key="agent",
        why_not={"cli": "the hooks resolve a coding agent's name; `agents list` shows aliases",
                 "mcp": "the hooks' lookup, not an agent's tool"}),
    _op("stored_agents", "admin", Route("GET", "/agents", 200, "agents"), None, None,
        "The agents with memories in the store", client="hand",
        why_not={"cli": "`agents list` and `stats` cover it", "mcp": "list_agents covers it"}),
    _op("stored_scopes", "admin", Route("GET", "/scopes", 200, "service"), None, None,
        "Every scope with memories in the store",
        why_not={"cli": "`reindex` without arguments walks them", "mcp": "an administrator's listing (GET /v1/scopes)"}),
    _op("reindex", "admin", Route("POST", "/agents/{agent}/reindex", 200, "service"), "reindex", "reindex",
        "Rebuild an agent's indexes and embed what lacks a vector", client="hand"),
    _op("index_status", "admin", Route("GET", "/agents/{agent}/index", 200, "service"), "index_status",
        "index-status", "What an agent's derived index holds", client="hand"),
    _op("info", "admin", Route("GET", "/info", 200, "service"), "server_info", "info",
        "The store's location and the embedding model"),
    _op("health", "admin", Route("GET", "/health", 200, "service"), "health", "health",
        "The memory engine and each memory provider's state"),
    _op("scan_secrets", "admin", Route("POST", "/secrets/scan", 200, "service"), "scan_secrets", "secrets scan",
        "Scan the store for secrets (every version); redact them when asked", answer="SecretScan"),
    # -- sessions: what an agent's work leaves ----------------------------------------------------------
    _op("agent_end", "sessions", Route("POST", "/agents/{agent}/end", 200, "prompt"), "agent_end", "end",
        "Capture the marker lines of an agent's output, then prune", client="hand", lean=True),
    _op("record_task", "sessions", Route("POST", "/agents/{agent}/tasks", 201, "prompt"), "record_task",
        "task-done", "Record a finished task's outcome", answer="Memory"),
    _op("capture_transcript", "sessions", Route("POST", "/agents/{agent}/transcripts", 200, "prompt"),
        "capture_transcript", "capture", "Capture what a session transcript holds", answer="CaptureReport"),
    _op("undo_capture", "sessions", Route("POST", "/agents/{agent}/transcripts/undo", 200, "prompt"),
        "undo_capture", "capture", "Undo a capture run", answer="UndoReport"),
    _op("capture_runs", "sessions", Route("GET", "/agents/{agent}/transcripts/runs", 200, "prompt"),
        "capture_runs", "capture", "An agent's capture runs", answer="list[CaptureRunInfo]"),
    _op("record_use", "sessions", Route("POST", "/agents/{agent}/used", 200, "prompt"), "record_use", "used",
        "Mark the shown memories an output drew on", answer="list[Memory]"),
    _op("sessions", "sessions", Route("GET", "/agents/{agent}/sessions", 200, "prompt"), "list_sessions",
        "sessions", "One page of an agent's sessions, newest first", answer="SessionPage"),
    _op("session_detail", "sessions", Route("GET", "/agents/{agent}/sessions/{session}", 200, "prompt"), "get_session",
        "session", "One session: its blocks, what it used, created and changed", answer="SessionDetail"),
    # -- notes ------------------------------------------------------------------------------------------
    _op("sync_notes", "notes", Route("POST", "/notes/sync", 200, "notes"), "sync_notes", "notes sync",
        "Index Markdown notes as memories", answer="list[NotesReport]"),
    _op("promote_notes", "notes", Route("POST", "/agents/{agent}/notes/promote", 200, "notes"), "promote_notes",
        "notes promote", "Move a notes file's memories to a team or the swarm", answer="NotesReport"),
    _op("export_notes", "notes", Route("POST", "/agents/{agent}/notes/export", 200, "notes"), "export_notes",
        "notes export", "Write an agent's memories as editable Markdown"),
    # -- graph: RDF, SPARQL, other memory systems -------------------------------------------------------
    _op("export", "graph", Route("GET", "/export", 200, "rdf"), "export_memories", "export",
        "A scope's graph as RDF", client="hand"),
    _op("import_rdf", "graph", Route("POST", "/import", 201, "rdf"), "import_memories", "import",
        "Import an RDF export, all or nothing", client="hand"),
    _op("import_from", "graph", Route("POST", "/import/{system}", 200, "rdf"), "import_memories_from", "import",
        "Import another memory system's files", client="hand"),
    _op("export_beads", "graph", Route("GET", "/agents/{agent}/export/beads", 200, "rdf"), "export_beads",
        "export", "An agent's memories as a Beads knowledge log", client="hand"),
    _op("validate_store", "graph", Route("GET", "/validate-store", 200, "rdf"), "validate_store",
        "validate-store", "SHACL violations of the store", client="hand"),
    _op("sparql", "graph", Route("POST", "/sparql", 200, "sparql"), "sparql_query", "sparql",
        "A read-only SPARQL query", client="hand"),
    # -- consolidation ----------------------------------------------------------------------------------
    _op("consolidate", "consolidation", Route("POST", "/consolidate", 200, "consolidation"), "consolidate",
        "consolidate", "Consolidate one scope in one run", answer="ConsolidationReport"),
    _op("team_round_end", "consolidation", Route("POST", "/teams/{team}/round-end", 200, "consolidation"),
        "team_round_end", "team round-end", "A team's round end: the lead's extractor", answer="ConsolidationReport"),
    _op("team_round", "consolidation", Route("GET", "/teams/{team}/round", 200, "consolidation"), "team_round",
        "team round", "What each member of a team learned since its last round end", answer="TeamRound"),
    _op("undo_consolidation", "consolidation", Route("POST", "/consolidate/undo", 200, "consolidation"),
        "undo_consolidation", "consolidate", "Undo a consolidation run", answer="UndoReport"),
    _op("consolidation_runs", "consolidation", Route("GET", "/consolidate/runs", 200, "consolidation"),
        "consolidation_runs", "consolidate", "The consolidation runs of a scope", answer="list[RunInfo]"),
    _op("review", "consolidation", Route("GET", "/review", 200, "consolidation"), "review_contradictions",
        "review", "Contradictions left for review", answer="list[ReviewItem]"),
    _op("resolve_review", "consolidation", Route("POST", "/review", 200, "consolidation"), "resolve_contradiction",
        "review", "Accept or dismiss a contradiction", answer="ConsolidationReport"),
    _op("review_all", "consolidation", Route("GET", "/review/all", 200, "consolidation"), "review_all",
        "review-all", "Every item the caller may review, at once", answer="list[ReviewItem]"),
    # -- kernel -----------------------------------------------------------------------------------------
    _op("close", "kernel", None, None, None, "Release what the front holds", client="hand",
        why_not={"cli": "a command closes what it opened", "http": "the server closes the store at shutdown",
                 "mcp": "the server closes the store at shutdown"}),
)

#: Every operation of the API by name, in the order of the table.
OPERATIONS: Mapping[str, Operation] = MappingProxyType({row.name: row for row in _ROWS})


class ServiceRoute(NamedTuple):
    """A route of the server that is not an operation of the API (the process's own state, tokens...)."""

    name: str
    route: Route
    summary: str


#: The server's own routes (``/healthz`` is outside the API prefix).
SERVICE_ROUTES: tuple[ServiceRoute, ...] = (
    ServiceRoute("healthz", Route("GET", "/healthz", 200, "service", prefixed=False), "Liveness: the process and its store"),
    ServiceRoute("capture_queue", Route("GET", "/capture/queue", 200, "prompt"), "The capture queue's jobs"),
    ServiceRoute("consolidation_sweep", Route("GET", "/consolidate/sweep", 200, "consolidation"),
                 "The periodic consolidation sweep's state"),
    ServiceRoute("list_tokens", Route("GET", "/tokens", 200, "tokens"), "The tokens (admin)"),
    ServiceRoute("create_token", Route("POST", "/tokens", 201, "tokens"), "A new token (admin)"),
    ServiceRoute("revoke_token", Route("DELETE", "/tokens/{token_id_}", 200, "tokens"), "Revoke a token (admin)"),
    ServiceRoute("sparql_get", Route("GET", "/sparql", 200, "sparql"), "The SPARQL protocol's GET query"),
    ServiceRoute("sign_in", Route("POST", "/session", 200, "browser"),
                 "Sign the memory browser in: a token for a session cookie"),
    ServiceRoute("session", Route("GET", "/session", 200, "browser"), "Who the browser's session is"),
    ServiceRoute("sign_out", Route("DELETE", "/session", 200, "browser"), "Sign the browser's session out"),
    ServiceRoute("events", Route("GET", "/events", 200, "browser"),
                 "Live events (server-sent): writes, starts, captures, reviews, runs"),
    ServiceRoute("resource_metadata", Route("GET", "/.well-known/oauth-protected-resource", 200, "service",
                                            prefixed=False),
                 "OAuth protected-resource metadata (RFC 9728); `/mcp` appended: the MCP endpoint's"),
)

#: CLI commands that are not operations of the API, each with what it is for.
CLI_ONLY: Mapping[str, str] = MappingProxyType({
    "agents check": "every problem of the agent definitions",
    "serve": "own the store and serve HTTP and MCP",
    "mcp": "MCP on stdio, through the running server",
    "server status": "which server owns the store",
    "server stop": "stop the server that owns the store",
    "server hub": "the user's background server (started by `cortex mcp`)",
    "token create": "a bearer token", "token list": "the tokens", "token revoke": "revoke a token",
    "hook": "coding agents' hooks", "install": "wire a coding agent's hooks and MCP",
    "uninstall": "remove what install added",
})


def operation(name: str) -> Operation:
    """The row of operation ``name`` (KeyError naming it when there is none)."""
    try:
        return OPERATIONS[name]
    except KeyError:
        raise KeyError(f"no operation {name!r} in cortex.api.operations.OPERATIONS") from None


def route(name: str) -> Route:
    """The HTTP route of operation (or service route) ``name``."""
    row = OPERATIONS.get(name)
    if row is not None and row.route is not None:
        return row.route
    for service in SERVICE_ROUTES:
        if service.name == name:
            return service.route
    raise KeyError(f"operation {name!r} has no HTTP route")
