"""Every operation of the MemoryAPI exists on every surface (CLI, HTTP, MCP), or says here why it does not:
the CLI's commands, the HTTP app's routes and the MCP server's tools are read from the real objects, so a new
operation without its surfaces fails this test until it gets them (or a stated reason)."""

from __future__ import annotations

import asyncio
import inspect

import click
import pytest

from cortex import Cortex
from cortex.api import MemoryAPI
from cortex.cli import cli
from cortex.service.auth import ADMIN
from cortex.service.http import create_app
from cortex.service.mcp import build_mcp

#: operation -> (CLI command, HTTP "METHOD /path", MCP tool); a string starting with "-" is the reason it is not
#: on that surface.
SURFACES: dict[str, tuple[str, str, str]] = {
    "store": ("store", "POST /v1/agents/{agent}/memories", "add_memory"),
    "store_many": ("store-many", "POST /v1/agents/{agent}/memories/batch", "- one add_memory call per memory"),
    "get": ("get", "GET /v1/agents/{agent}/memories/{memory_id}", "get_memory"),
    "recall": ("recall", "GET /v1/agents/{agent}/memories", "recall"),
    "search": ("search", "GET /v1/agents/{agent}/search", "search_memories"),
    "list_memories": ("list", "GET /v1/agents/{agent}/list", "list_memories"),
    "touch": ("touch", "POST /v1/agents/{agent}/memories/{memory_id}/touch", "touch_memory"),
    "forget": ("forget", "DELETE /v1/agents/{agent}/memories/{memory_id}", "delete_memory"),
    "update": ("update", "PATCH /v1/agents/{agent}/memories/{memory_id}", "update_memory"),
    "history": ("history", "GET /v1/agents/{agent}/memories/{memory_id}/history", "memory_history"),
    "provenance": ("provenance", "GET /v1/agents/{agent}/memories/{memory_id}/provenance", "memory_provenance"),
    "supersede": ("supersede", "POST /v1/agents/{agent}/memories/{memory_id}/supersede", "supersede_memory"),
    "validate": ("validate", "POST /v1/agents/{agent}/memories/{memory_id}/validate", "validate_memory"),
    "inject_learning": ("inject", "POST /v1/agents/{lead}/inject", "inject_learning"),
    "stats": ("stats", "GET /v1/agents/{agent}/stats", "memory_stats"),
    "count": ("stats", "GET /v1/agents/{agent}/stats", "memory_stats"),
    "prune": ("prune", "POST /v1/agents/{agent}/prune", "prune_memories"),
    "prune_candidates": ("prune", "POST /v1/agents/{agent}/prune", "prune_memories"),
    "purge_expired": ("prune", "POST /v1/purge-expired", "purge_expired"),
    "agent_start": ("start", "POST /v1/agents/{agent}/start", "agent_start"),
    "agent_end": ("end", "POST /v1/agents/{agent}/end", "agent_end"),
    "record_task": ("task-done", "POST /v1/agents/{agent}/tasks", "record_task"),
    "capture_transcript": ("capture", "POST /v1/agents/{agent}/transcripts", "capture_transcript"),
    "record_use": ("used", "POST /v1/agents/{agent}/used", "record_use"),
    "usage_stats": ("stats", "GET /v1/agents/{agent}/usage", "memory_stats"),
    "sync_notes": ("notes sync", "POST /v1/notes/sync", "sync_notes"),
    "promote_notes": ("notes promote", "POST /v1/agents/{agent}/notes/promote", "promote_notes"),
    "export_notes": ("notes export", "POST /v1/agents/{agent}/notes/export", "export_notes"),
    "consolidate": ("consolidate", "POST /v1/consolidate", "consolidate"),
    "team_round_end": ("team round-end", "POST /v1/teams/{team}/round-end", "team_round_end"),
    "undo_consolidation": ("consolidate", "POST /v1/consolidate/undo", "undo_consolidation"),
    "consolidation_runs": ("consolidate", "GET /v1/consolidate/runs", "consolidation_runs"),
    "review": ("review", "GET /v1/review", "review_contradictions"),
    "resolve_review": ("review", "POST /v1/review", "resolve_contradiction"),
    "describe_agents": ("agents list", "GET /v1/agents", "list_agents"),
    "resolve_agent": ("- the hooks resolve a coding agent's name; `agents list` shows aliases",
                      "GET /v1/agents/resolve", "- the hooks' lookup, not an agent's tool"),
    "stored_agents": ("- `agents list` and `stats` cover it", "GET /v1/agents",
                      "- list_agents covers it"),
    "stored_scopes": ("- `reindex` without arguments walks them", "GET /v1/scopes",
                      "- an administrator's listing (GET /v1/scopes)"),
    "export": ("export", "GET /v1/export", "export_memories"),
    "import_rdf": ("import", "POST /v1/import", "import_memories"),
    "import_from": ("import", "POST /v1/import/{system}", "import_memories_from"),
    "export_beads": ("export", "GET /v1/agents/{agent}/export/beads", "export_beads"),
    "validate_store": ("validate-store", "GET /v1/validate-store", "validate_store"),
    "sparql": ("sparql", "POST /v1/sparql", "sparql_query"),
    "reindex": ("reindex", "POST /v1/agents/{agent}/reindex", "reindex"),
    "index_status": ("index-status", "GET /v1/agents/{agent}/index", "index_status"),
    "info": ("info", "GET /v1/info", "server_info"),
    "render": ("- recall --format block renders", "- a client renders the memories it got",
               "- the agent_memory resource is the rendered block"),
    "close": ("- a command closes what it opened", "- the server closes the store at shutdown",
              "- the server closes the store at shutdown"),
}


def _commands(group: click.Group, prefix: str = "") -> set[str]:
    found: set[str] = set()
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found |= _commands(command, f"{prefix}{name} ")
        else:
            found.add(prefix + name)
    return found


@pytest.fixture(scope="module")
def surfaces() -> tuple[set[str], set[str], set[str]]:
    cx = Cortex.open(None, embeddings=None)
    app = create_app(cx, mcp=False)
    routes = {f"{method} {route.path}" for route in app.routes for method in getattr(route, "methods", None) or ()}
    tools = {tool.name for tool in asyncio.run(build_mcp(lambda: cx, lambda request: ADMIN).list_tools())}
    yield _commands(cli), routes, tools
    cx.close()


def test_the_table_names_every_operation_of_the_protocol():
    operations = {name for name, _ in inspect.getmembers(MemoryAPI) if not name.startswith("_")}
    assert operations == set(SURFACES), (operations - set(SURFACES), set(SURFACES) - operations)


@pytest.mark.parametrize("operation", sorted(SURFACES))
def test_every_operation_is_on_every_surface_or_says_why_not(operation, surfaces):
    commands, routes, tools = surfaces
    command, route, tool = SURFACES[operation]
    for name, where, kind in ((command, commands, "CLI command"), (route, routes, "HTTP route"),
                              (tool, tools, "MCP tool")):
        if name.startswith("- "):
            assert len(name) > 10, f"{operation}: say why it is not a {kind}"
        else:
            assert name in where, f"{operation}: no {kind} {name!r}"
