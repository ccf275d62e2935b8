"""Adding an operation is one row in the table and one method in its domain module: the surfaces pick it up.

The test adds ``echo_count`` (a row of :data:`cortex.api.operations.OPERATIONS`, a method of the protocol's
ReadingAPI and MemoryAPI and of :class:`cortex.app.reading.ReadingOps`), undone after, and reaches it through the
HTTP app, the MCP server, the CLI and the HTTP client, none of which has a hand-written handler for it."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from types import MappingProxyType
from typing import Any

import pytest

from cortex import Cortex
from cortex.api import client, generic, operations, protocol
from cortex.api.operations import Operation, Route
from cortex.app.reading import ReadingOps
from cortex.cli import cli
from cortex.cli import generic as cli_generic
from cortex.service.http import create_app
from cortex.service.mcp import build_mcp

# imported before the operation is added (above): what they build at import time is without it

ROW = Operation("echo_count", "reading", Route("GET", "/agents/{agent}/echo", 200, "memories"), "echo_count",
                "echo-count", "Echo a word", answer="json")


class _Protocol:
    """Where the protocol's new method is written (set on ReadingAPI and MemoryAPI by the fixture)."""

    def echo_count(self, agent: str, word: str, *, times: int = 1) -> dict[str, Any]:
        """Echo ``word`` ``times`` times, with how many memories the agent has.

        A second paragraph the CLI's help leaves out."""


class _Reading:
    """Where the reading domain's new method is written (set on ReadingOps by the fixture)."""

    def echo_count(self: Any, agent: str, word: str, *, times: int = 1) -> dict[str, Any]:
        return {"agent": agent, "echo": [word] * times, "memories": self.count(agent)}


@pytest.fixture
def echo_count(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The operation ``echo_count`` in the table, the protocol and the reading domain (undone after)."""
    for cls in (protocol.ReadingAPI, protocol.MemoryAPI):
        monkeypatch.setattr(cls, "echo_count", _Protocol.echo_count, raising=False)
    monkeypatch.setattr(ReadingOps, "echo_count", _Reading.echo_count, raising=False)
    monkeypatch.setattr(operations, "OPERATIONS", MappingProxyType({**operations.OPERATIONS, "echo_count": ROW}))
    yield


@pytest.fixture
def cx(echo_count: None) -> Iterator[Cortex]:
    with Cortex.open(None, embeddings=None) as cortex:
        cortex.agents.register("alice")
        cortex.store("alice", "Always check for null pointers")
        yield cortex


EXPECTED = {"agent": "alice", "echo": ["hi", "hi"], "memories": 1}


def test_the_signature_comes_from_the_protocol(echo_count):
    found = generic.signature("echo_count")
    assert found is not None
    assert [(p.name, p.hint, p.required) for p in found.parameters] == [("agent", str, True), ("word", str, True),
                                                                       ("times", int, False)]
    assert found.summary == "Echo ``word`` ``times`` times, with how many memories the agent has."


def test_the_http_app_serves_it(cx):
    from fastapi.testclient import TestClient

    with TestClient(create_app(cx, mcp=False)) as client:
        answer = client.get("/v1/agents/alice/echo", params={"word": "hi", "times": 2})
        assert answer.status_code == 200, answer.text
        assert answer.json() == EXPECTED
        described = client.get("/openapi.json").json()["paths"]["/v1/agents/{agent}/echo"]["get"]
        assert described["operationId"] == "echo_count" and described["tags"] == ["memories"]
        assert {p["name"] for p in described["parameters"]} == {"agent", "word", "times"}
        assert client.get("/v1/agents/alice/echo").status_code == 422  # word is required
        assert client.get("/v1/agents/nobody/echo", params={"word": "hi"}).status_code == 404


def test_the_mcp_server_serves_it(cx):
    from mcp import Client

    from cortex.service.auth import ADMIN
    async def go() -> tuple[Any, Any, Any]:
        async with Client(build_mcp(lambda: cx, lambda request: ADMIN)) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            called = await client.call_tool("echo_count", {"agent": "alice", "word": "hi", "times": 2})
            unknown = await client.call_tool("echo_count", {"agent": "nobody", "word": "hi"})
            return tools, called, unknown

    tools, called, unknown = asyncio.run(go())
    tool = tools["echo_count"]
    assert tool.description.startswith("Echo ``word`` ``times`` times")
    assert set(tool.input_schema["properties"]) == {"agent", "word", "times"}
    assert tool.input_schema["required"] == ["agent", "word"]
    assert not called.is_error and called.structured_content == EXPECTED
    assert unknown.is_error


AGENT = """---
name: alice
description: Reviews diffs
memory: true
---
You review code.
"""


def test_the_cli_runs_it(echo_count, tmp_path, monkeypatch):
    from tests.service_helpers import run_cli

    (tmp_path / ".git").mkdir()
    (tmp_path / "agent_defs").mkdir()
    (tmp_path / "agent_defs" / "alice.md").write_text(AGENT)
    monkeypatch.setattr(cli, "commands", dict(cli.commands))  # the commands added below are gone after
    assert cli_generic.add_commands(cli) == ["echo-count"]
    assert run_cli(tmp_path, "store", "alice", "Always check for null pointers").returncode == 0
    ran = run_cli(tmp_path, "echo-count", "alice", "hi", "--times", "2")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout) == EXPECTED
    helped = run_cli(tmp_path, "echo-count", "--help")
    assert "Echo ``word`` ``times`` times, with how many memories the agent has." in helped.stdout
    assert "second paragraph" not in helped.stdout and "--times INTEGER" in helped.stdout
    assert "echo-count" in run_cli(tmp_path, "--help").stdout
    assert run_cli(tmp_path, "echo-count", "alice").returncode == 2  # WORD is required


@pytest.fixture
def served(cx: Cortex) -> Iterator[str]:
    """The HTTP app over ``cx``, served by uvicorn in a thread on a free port: its URL."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(create_app(cx, mcp=False), host="127.0.0.1", port=0,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def test_the_client_sends_it(served, monkeypatch):
    added = client.table_operations()
    assert set(added) == {"echo_count"}
    for name, method in added.items():
        monkeypatch.setattr(client.RemoteCortex, name, method, raising=False)
    assert client.RemoteCortex.echo_count.__doc__ == _Protocol.echo_count.__doc__
    with client.RemoteCortex(served) as remote:
        assert remote.echo_count("alice", "hi", times=2) == EXPECTED
        assert remote.echo_count("alice", "hi") == EXPECTED | {"echo": ["hi"]}


def test_another_agents_token_does_not_reach_it(cx):
    from fastapi.testclient import TestClient

    from cortex.service.auth import Principal

    app = create_app(cx, mcp=False)
    app.state.authenticate_request = lambda headers: Principal("bob")  # the routes' caller: bob's token
    with TestClient(app) as http:
        refused = http.get("/v1/agents/alice/echo", params={"word": "hi"})
    assert refused.status_code == 404, refused.text  # never a hint that alice exists

    async def go() -> Any:
        async with Client(build_mcp(lambda: cx, lambda request: Principal("bob"))) as mcp:
            return await mcp.call_tool("echo_count", {"agent": "alice", "word": "hi"})

    from mcp import Client

    assert asyncio.run(go()).is_error


def test_a_write_takes_a_json_body(cx, monkeypatch):
    from fastapi.testclient import TestClient

    row = Operation("echo_count", "reading", Route("POST", "/agents/{agent}/echo", 200, "memories"), "echo_count",
                    "echo-count", "Echo a word", key="echoed")
    monkeypatch.setattr(operations, "OPERATIONS", MappingProxyType({**operations.OPERATIONS, "echo_count": row}))
    with TestClient(create_app(cx, mcp=False)) as http:
        answer = http.post("/v1/agents/alice/echo", json={"word": "hi", "times": 2})
        assert answer.status_code == 200, answer.text
        assert answer.json() == {"echoed": EXPECTED}  # under the row's key, where the client reads it
        assert http.post("/v1/agents/alice/echo", json={"word": "hi", "loud": True}).status_code == 422
        assert http.post("/v1/agents/alice/echo", json={"times": 2}).status_code == 422
        described = http.get("/openapi.json").json()
    body = described["paths"]["/v1/agents/{agent}/echo"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"]["$ref"].endswith("/EchoCountBody")
    assert described["components"]["schemas"]["EchoCountBody"]["additionalProperties"] is False


def test_an_operation_without_a_method_reaches_no_surface(monkeypatch):
    """The generic handlers need the protocol's method: without one, no surface has the operation, and
    tests/architecture/test_surfaces.py names it."""
    row = Operation("no_method", "reading", Route("GET", "/agents/{agent}/nothing", 200, "memories"), "no_method",
                    "no-method", "Nothing")
    monkeypatch.setattr(operations, "OPERATIONS", MappingProxyType({**operations.OPERATIONS, "no_method": row}))
    monkeypatch.setattr(cli, "commands", dict(cli.commands))
    with Cortex.open(None, embeddings=None) as cortex:
        app = create_app(cortex, mcp=False)
        from cortex.service.auth import ADMIN

        tools = {tool.name for tool in asyncio.run(build_mcp(lambda: cortex, lambda request: ADMIN).list_tools())}
    assert "/v1/agents/{agent}/nothing" not in {getattr(route, "path", "") for route in app.routes}
    assert "no_method" not in tools
    assert cli_generic.add_commands(cli) == [] and "no-method" not in cli.commands
    assert client.table_operations() == {}
