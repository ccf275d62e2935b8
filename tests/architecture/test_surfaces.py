"""Every operation of the MemoryAPI exists on every surface (CLI, HTTP, MCP), or its row of the operation table
(:data:`cortex.api.operations.OPERATIONS`) says why it does not:
the CLI's commands, the HTTP app's routes and the MCP server's tools are read from the real objects, so a new
operation without its surfaces fails this test until it gets them (or a stated reason)."""

from __future__ import annotations

import asyncio
import inspect

import click
import pytest

from cortex import Cortex
from cortex.api import MemoryAPI
from cortex.api.operations import OPERATIONS, Operation
from cortex.cli import cli
from cortex.service.auth import ADMIN
from cortex.service.http import create_app
from cortex.service.mcp import build_mcp

def _surfaces(row: Operation) -> tuple[str, str, str]:
    """(CLI command, "METHOD /path", MCP tool) of an operation; "- reason" where the surface does not have it."""
    return (row.command or f"- {row.why_not.get('cli', '')}",
            str(row.route) if row.route is not None else f"- {row.why_not.get('http', '')}",
            row.tool or f"- {row.why_not.get('mcp', '')}")


SURFACES = {name: _surfaces(row) for name, row in OPERATIONS.items()}


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


def test_the_table_and_the_service_routes_are_every_route_of_the_app(surfaces):
    from cortex.api.operations import SERVICE_ROUTES
    from cortex.service.web import SCREENS

    _, routes, _ = surfaces
    declared = {str(row.route) for row in OPERATIONS.values() if row.route is not None}
    declared |= {str(service.route) for service in SERVICE_ROUTES}
    documentation = {"GET /openapi.json", "GET /docs", "GET /docs/oauth2-redirect", "GET /redoc", "HEAD /openapi.json",
                     "HEAD /docs", "HEAD /docs/oauth2-redirect", "HEAD /redoc"}
    # the memory browser's page: its files and every screen's path answer the same page (no API of their own)
    page = {"GET /", "GET /static/{path:path}"} | {f"GET /{s}" for s in SCREENS} | {f"GET /{s}/{{rest:path}}"
                                                                                      for s in SCREENS}
    page |= {route.replace("GET", "HEAD", 1) for route in page}  # HEAD answers as GET does
    assert page <= set(routes)
    served = {r for r in routes if r not in documentation | page
              and not r.startswith(("GET /static-offline-docs", "HEAD /static-offline-docs"))}
    assert served == declared, (served - declared, declared - served)


def test_every_tool_and_command_is_in_the_table(surfaces):
    from cortex.api.operations import CLI_ONLY

    commands, _, tools = surfaces
    assert tools == {row.tool for row in OPERATIONS.values() if row.tool is not None}
    assert commands == {row.command for row in OPERATIONS.values() if row.command is not None} | set(CLI_ONLY)


def test_each_hot_command_is_found_in_its_own_module_as_the_full_group_has_it():
    """A command of :data:`cortex.cli._HOME` run from a new process imports only its module's commands: the
    module named there must define that very command, the one the full group holds; and in a fresh group only
    that module's commands are added."""
    import importlib

    from cortex.cli import _HOME, _Group

    for name, home in _HOME.items():
        defined = {command.name: command for command in importlib.import_module(f"cortex.cli.{home}").COMMANDS}
        assert defined.get(name) is cli.commands[name], (name, home)
    fresh = _Group(name="fresh")
    with click.Context(fresh) as ctx:
        assert fresh.get_command(ctx, "search") is cli.commands["search"]
        assert set(fresh._commands) == {"recall", "search", "list", "stats", "overview", "start", "prompt"}
        assert fresh.get_command(ctx, "review-all") is not None  # any other name: every command
    assert set(fresh.commands) == set(cli.commands)
