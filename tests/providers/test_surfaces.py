"""The engine switch on every surface of a real server (``cortex serve`` with CORTEX_ENGINE=both and the test plugin
providers): HTTP search and health, the CLI, the MCP tools through the real client, and the SubagentStart hook,
with a provider that hangs beside one that answers."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.providers import plugins
from tests.service_helpers import ROOT, Server, cortex, env, make_project, start_server

KEY = "sk-live-SURFACEKEY-0123456789abcdef"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str]]]:
    base = tmp_path_factory.mktemp("surfaces")
    site = plugins.install(base / "site")
    project = make_project(base / "project", "reviewer")
    (project / ".cortex").mkdir()
    (project / ".cortex" / "config.toml").write_text(
        f'[providers]\nengine = "both"\nproviders = ["echo", "hanging", "raising"]\ntimeout = 1\n\n'
        f'[providers.raising]\napi_key = "{KEY}"\n')
    settings = {"PYTHONPATH": os.pathsep.join([str(ROOT), str(site), os.environ.get("PYTHONPATH", "")]),
                "CORTEX_TEST_PROVIDER_LOG": str(base / "provider.jsonl")}
    server = start_server(project, **settings)
    try:
        assert server.call("POST", "/v1/agents/reviewer/memories",
                           json={"content": "Parsers must reject nesting past 64 levels"}).status_code == 201
        yield server, settings
    finally:
        server.stop()


def test_http_search_answers_labelled_hits_within_the_time_out(served: tuple[Server, dict[str, str]]) -> None:
    server, _ = served
    started = time.monotonic()
    answer = server.call("GET", "/v1/agents/reviewer/search", params={"query": "parsers"})
    took = time.monotonic() - started
    assert answer.status_code == 200 and took < 1 + 1.5, took
    body = answer.json()
    origins = [h["memory"]["origin"] for h in body["hits"]]
    assert {"cortex", "echo"} <= set(origins)
    assert body["providers"]["echo"] == "ok" and "longer than 1 s" in body["providers"]["hanging"]
    assert KEY not in answer.text


def test_health_on_http_cli_and_mcp_shows_each_provider_without_its_key(served: tuple[Server, dict[str, str]]
                                                                       ) -> None:
    server, settings = served
    server.call("GET", "/v1/agents/reviewer/search", params={"query": "anything"})
    answer = server.call("GET", "/v1/health")
    assert answer.status_code == 200
    health = answer.json()
    states = {p["name"]: p for p in health["providers"]}
    assert health["engine"] == "both" and states["echo"]["state"] == "ok"
    assert states["raising"]["state"] in ("failing", "open") and "***" in states["raising"]["last_error"]
    ran = cortex(server.project, "health", **settings)
    assert ran.returncode == 0, ran.stderr
    assert {p["name"] for p in json.loads(ran.stdout)["providers"]} == {"echo", "hanging", "raising"}

    async def mcp() -> dict:
        headers = {"Authorization": f"Bearer {server.token}"}
        async with Client(streamable_http_client(f"{server.url}/mcp",
                                                 http_client=httpx2.AsyncClient(headers=headers))) as client:
            found = await client.call_tool("search_memories", {"agent": "reviewer", "query": "parsers"})
            assert not found.is_error and "echo remembers parsers" in json.dumps(found.structured_content)
            result = await client.call_tool("health", {})
            assert not result.is_error
            return result.structured_content

    from_mcp = asyncio.run(mcp())
    assert "raising" in json.dumps(from_mcp)
    for text in (answer.text, ran.stdout, ran.stderr, json.dumps(from_mcp)):
        assert KEY not in text


def test_the_subagent_start_hook_shows_the_providers_memories(served: tuple[Server, dict[str, str]],
                                                              tmp_path: Path) -> None:
    server, settings = served
    transcript = tmp_path / "projects" / "-proj" / "session.jsonl"  # where Claude Code keeps it ($CLAUDE_CONFIG_DIR)
    transcript.parent.mkdir(parents=True)
    transcript.write_text(json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "Agent",
         "input": {"description": "review", "prompt": "review the parsers", "subagent_type": "reviewer"}}]}}) + "\n")
    payload = {"session_id": "s1", "cwd": str(server.project), "hook_event_name": "SubagentStart",
               "transcript_path": str(transcript), "agent_id": "a1", "agent_type": "reviewer"}
    started = time.monotonic()
    ran = subprocess.run([sys.executable, "-m", "cortex", "hook", "claude", "SubagentStart"], cwd=server.project,
                         input=json.dumps(payload), capture_output=True, text=True, env=env(**settings, CLAUDE_CONFIG_DIR=str(tmp_path)), timeout=60)
    assert ran.returncode == 0, ran.stderr
    context = json.loads(ran.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Parsers must reject nesting" in context and "(echo) echo remembers" in context
    assert time.monotonic() - started < 1 + 5
