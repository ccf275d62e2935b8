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
from pathlib import Path
from types import MappingProxyType
from typing import Any

import click
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


def _echo_protocol(self: Any, agent: str, word: str, *, times: int = 1) -> dict[str, Any]:
    """Echo ``word`` ``times`` times, with how many memories the agent has.

    A second paragraph the CLI's help leaves out."""
    ...


def _echo_count(self: Any, agent: str, word: str, *, times: int = 1) -> dict[str, Any]:
    return {"agent": agent, "echo": [word] * times, "memories": self.count(agent)}


@pytest.fixture
def echo_count(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The operation ``echo_count`` in the table, the protocol and the reading domain (undone after)."""
    for cls in (protocol.ReadingAPI, protocol.MemoryAPI):
        monkeypatch.setattr(cls, "echo_count", _echo_protocol, raising=False)
    monkeypatch.setattr(ReadingOps, "echo_count", _echo_count, raising=False)
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
