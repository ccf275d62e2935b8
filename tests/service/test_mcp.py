"""The MCP server through the real `mcp.Client`: in-process, over stdio (`cortex mcp`), over streamable HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from cortex import Cortex
from cortex.service.auth import ADMIN, TokenStore
from cortex.service.mcp import build_mcp

from tests.service_helpers import env, make_project, start_server

TOOLS = ["add_memory", "agent_end", "agent_overview", "agent_start", "capture_runs", "capture_transcript", "consolidate", "consolidation_runs",
         "delete_memory", "export_beads",
         "export_memories", "export_notes", "get_memory", "get_session", "health",
         "import_memories", "import_memories_from", "index_status", "inject_learning", "list_agents", "list_memories", "list_sessions", "memory_history",
         "memory_provenance", "memory_stats", "memory_usage", "promote_notes", "prune_memories", "purge_expired", "recall", "record_task",
         "record_use", "reindex", "resolve_contradiction", "review_all", "review_contradictions",
         "scan_secrets", "search_memories", "server_info", "sparql_query", "supersede_memory", "sync_notes",
         "team_round", "team_round_end", "touch_memory", "undo_capture", "undo_consolidation",
         "update_memory",
         "validate_memory", "validate_store"]


@pytest.fixture
def local_cx(store_path: Path, clock) -> Cortex:
    cx = Cortex.open(store_path, clock=clock, embeddings=None)
    cx.agents.register("alice", description="first")
    cx.agents.register("bob", description="second")
    yield cx
    cx.close()


async def exercise(client: Client, agent: str = "alice") -> None:
    """Every tool once, plus the anticipated errors."""
    init = client.initialize_result if hasattr(client, "initialize_result") else None
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert sorted(tools) == TOOLS
    assert tools["search_memories"].annotations.read_only_hint is True
    assert tools["get_memory"].annotations.read_only_hint is True
    assert tools["delete_memory"].annotations.destructive_hint is True
    assert tools["delete_memory"].annotations.idempotent_hint is True
    assert tools["add_memory"].annotations.read_only_hint is False
    assert "agent" in tools["add_memory"].input_schema["properties"] and tools["add_memory"].output_schema
    type_schema = json.dumps(tools["search_memories"].input_schema["properties"]["type"])
    assert all(t in type_schema for t in ("pattern", "convention", "insight", "decision"))  # an enum, not free text
    assert "list_agents" in tools["search_memories"].input_schema["properties"]["agent"]["description"]
    del init

    added = await client.call_tool("add_memory", {"agent": agent, "content": "Always check null pointers",
                                                  "type": "pattern", "confidence": 0.9})
    assert not added.is_error, added.content
    memory = added.structured_content["memory"]
    assert added.structured_content["created"] is True
    assert memory["type"] == "pattern" and memory["agent"] == agent
    duplicate = await client.call_tool("add_memory", {"agent": agent, "content": "Always check null pointers"})
    assert duplicate.structured_content == {"memory": memory, "created": False, "warnings": []}
    found = await client.call_tool("search_memories", {"agent": agent, "query": "null pointer checks"})
    hits = found.structured_content["hits"]
    assert hits[0]["id"] == memory["id"] and hits[0]["summary"] == "Always check null pointers"
    assert (await client.call_tool("search_memories", {"agent": agent, "query": "kubernetes ingress"})
            ).structured_content["hits"] == []
    got = await client.call_tool("get_memory", {"agent": agent, "memory_id": memory["id"]})
    assert not got.is_error, got.content
    assert got.structured_content["content"] == "Always check null pointers"
    assert got.structured_content["usage_count"] == 0  # get reads, like the API's get
    touched = await client.call_tool("touch_memory", {"agent": agent, "memory_id": memory["id"]})
    assert touched.structured_content["usage_count"] == 1
    recalled = await client.call_tool("recall", {"agent": agent, "query": "NULL point"})
    assert [m["id"] for m in recalled.structured_content["memories"]] == [memory["id"]]
    assert (await client.call_tool("recall", {"agent": agent, "query": "null absent"})
            ).structured_content["memories"] == []
    again = await client.call_tool("agent_start", {"agent": agent, "task": "null handling", "touch": False})
    assert "Always check null pointers" in again.structured_content["block"]
    assert (await client.call_tool("get_memory", {"agent": agent, "memory_id": memory["id"]})
            ).structured_content["usage_count"] == 1  # shown again, not used again
    block = await client.call_tool("agent_start", {"agent": agent, "task": "review null handling"})
    assert block.structured_content["block"].startswith("<agent-memory>\n- [pattern] Always check null pointers")
    assert (await client.call_tool("get_memory", {"agent": agent, "memory_id": memory["id"]})
            ).structured_content["usage_count"] == 2
    captured = await client.call_tool("agent_end", {"agent": agent, "output": "Done.\nLEARNED: tests need fixtures"})
    assert [m["content"] for m in captured.structured_content["memories"]] == ["tests need fixtures"]
    stats = await client.call_tool("memory_stats", {"agent": agent})
    assert stats.structured_content["total"] == 2 and stats.structured_content["by_type"]["pattern"] == 1
    names = [a["name"] for a in (await client.call_tool("list_agents", {})).structured_content["agents"]]
    assert agent in names
    resource = await client.read_resource(f"cortex://agents/{agent}/memory")
    assert "Always check null pointers" in resource.contents[0].text

    unknown = await client.call_tool("memory_stats", {"agent": "nobody"})
    assert unknown.is_error and "agent 'nobody' is not declared" in unknown.content[0].text
    for arguments, field in (({"agent": agent, "content": "x", "type": "bogus"}, "type"),
                             ({"agent": agent, "content": "x", "confidence": 3}, "confidence"),
                             ({"agent": agent}, "content")):
        error = await client.call_tool("add_memory", arguments)
        text = error.content[0].text
        assert error.is_error and text.startswith(f"{field}: ") and "\n" not in text and "http" not in text, text
    too_many = await client.call_tool("search_memories", {"agent": agent, "query": "x", "limit": 0})
    assert too_many.content[0].text == "limit: input should be greater than or equal to 1, not 0"
    missing = await client.call_tool("get_memory", {"agent": agent, "memory_id": "no-such-id"})
    assert missing.is_error and "no memory with id 'no-such-id'" in missing.content[0].text

    deleted = await client.call_tool("delete_memory", {"agent": agent, "memory_id": memory["id"]})
    assert deleted.structured_content == {"deleted": True, "id": memory["id"]}
    again = await client.call_tool("delete_memory", {"agent": agent, "memory_id": memory["id"]})
    assert not again.is_error and again.structured_content == {"deleted": False, "id": memory["id"]}
    for m in (await client.call_tool("recall", {"agent": agent})).structured_content["memories"]:
        await client.call_tool("delete_memory", {"agent": agent, "memory_id": m["id"]})


def test_in_process(local_cx):
    async def main() -> None:
        async with Client(build_mcp(lambda: local_cx, lambda request: ADMIN)) as client:
            await exercise(client)
            with pytest.raises(MCPError):
                await client.read_resource("cortex://agents/nobody/memory")

    asyncio.run(main())
    assert local_cx.count("alice") == 0  # the last step deleted it, through the real Cortex


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj", "alice", "bob")


def test_streamable_http_with_tokens(project):
    store = project / ".cortex" / "store"
    tokens = TokenStore(store)
    alice, admin = tokens.create("alice"), tokens.create(None)
    server = start_server(project)

    def client(token: str | None) -> Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return Client(streamable_http_client(f"{server.url}/mcp", http_client=httpx2.AsyncClient(headers=headers)))

    async def main() -> None:
        async with client(alice) as c:
            await exercise(c, "alice")
            other = await c.call_tool("memory_stats", {"agent": "bob"})
            assert other.is_error and "agent 'bob' is not declared" in other.content[0].text
            names = [a["name"] for a in (await c.call_tool("list_agents", {})).structured_content["agents"]]
            assert names == ["alice"]
        async with client(admin) as c:
            assert not (await c.call_tool("memory_stats", {"agent": "bob"})).is_error
        with pytest.raises(Exception):
            async with client(None) as c:
                await c.list_tools()

    try:
        asyncio.run(main())
    finally:
        server.stop()


def _stop_autostarted(store: Path) -> None:
    try:
        pid = json.loads((store / "cortex-server.json").read_text())["pid"]
    except (OSError, ValueError):
        return
    os.kill(pid, signal.SIGTERM)


def test_stdio_sessions_share_one_auto_started_server(project):
    store = project / ".cortex" / "store"
    params = StdioServerParameters(command=sys.executable, args=["-m", "cortex.cli", "mcp"], cwd=str(project),
                                   env=env())

    async def session(n: int) -> str:
        async with Client(params) as client:
            added = await client.call_tool("add_memory", {"agent": "bob", "content": f"from session {n}"})
            assert not added.is_error, added.content
            return added.structured_content["memory"]["id"]

    async def main() -> list[str]:
        first = await session(0)  # no server yet: cortex mcp starts one
        return [first, *await asyncio.gather(*(session(n) for n in range(1, 4)))]  # three at once

    try:
        ids = asyncio.run(main())
        assert len(set(ids)) == 4
        info = json.loads((store / "cortex-server.json").read_text())
        stats = httpx2.get(f"{info['url']}/v1/agents/bob/stats", headers={"Authorization": f"Bearer {info['token']}"})
        assert stats.json()["insight"] == 4
    finally:
        _stop_autostarted(store)


def test_stdio_subscription_is_notified_of_a_write_by_another_process(project):
    """``cortex mcp`` forwards to the auto-started server: a subscription to an agent's memory follows the
    server's event stream, so a memory stored by another client (here the server's HTTP API) is notified."""
    store = project / ".cortex" / "store"
    params = StdioServerParameters(command=sys.executable, args=["-m", "cortex.cli", "mcp"], cwd=str(project),
                                   env=env())
    seen: list[str] = []
    got = asyncio.Event()

    async def handler(message) -> None:
        uri = getattr(getattr(message, "params", None), "uri", None)
        if getattr(message, "method", None) == "notifications/resources/updated" and uri is not None:
            seen.append(str(uri))
            got.set()

    async def main() -> None:
        async with Client(params, mode="legacy", message_handler=handler) as client:
            first = await client.call_tool("add_memory", {"agent": "bob", "content": "the server is up"})
            assert not first.is_error, first.content
            await client.subscribe_resource("cortex://agents/alice/memory")
            await asyncio.sleep(1)
            info = json.loads((store / "cortex-server.json").read_text())
            headers = {"Authorization": f"Bearer {info['token']}"}
            async with httpx2.AsyncClient(base_url=info["url"], headers=headers) as http:
                stored = await http.post("/v1/agents/alice/memories", json={"content": "alice's note from HTTP"})
                assert stored.status_code in (200, 201), stored.text
            await asyncio.wait_for(got.wait(), 20)

    try:
        asyncio.run(main())
        assert set(seen) == {"cortex://agents/alice/memory"}
    finally:
        _stop_autostarted(store)


def test_stdio_session_survives_its_server_and_forwards_agent_dirs(tmp_path):
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    defs = tmp_path / "elsewhere"  # not a directory Cortex discovers by itself
    defs.mkdir()
    (defs / "carol.md").write_text("---\nname: carol\ndescription: c\nmemory: true\n---\n")
    store = project / ".cortex" / "store"
    params = StdioServerParameters(command=sys.executable, cwd=str(project), env=env(),
                                   args=["-m", "cortex.cli", "--agents-dir", str(defs), "mcp"])

    async def main() -> None:
        async with Client(params) as client:
            first = await client.call_tool("add_memory", {"agent": "carol", "content": "before"})
            assert not first.is_error, first.content
            pid = json.loads((store / "cortex-server.json").read_text())["pid"]
            os.kill(pid, signal.SIGTERM)  # e.g. the auto-started server idled out
            for _ in range(100):
                if not (store / "cortex-server.json").exists():
                    break
                await asyncio.sleep(0.05)
            second = await client.call_tool("add_memory", {"agent": "carol", "content": "after"})
            assert not second.is_error, second.content
            stats = await client.call_tool("memory_stats", {"agent": "carol"})
            assert stats.structured_content["total"] == 2

    try:
        asyncio.run(main())
    finally:
        _stop_autostarted(store)


def test_stdio_session_waits_out_a_process_that_holds_the_store(project):
    store = project / ".cortex" / "store"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from cortex import Cortex; cx = Cortex.open(sys.argv[1], "
         "embeddings=None); print('held', flush=True); time.sleep(3); cx.close()", str(store)],
        stdout=subprocess.PIPE, text=True, env=env())
    assert holder.stdout.readline().strip() == "held"
    params = StdioServerParameters(command=sys.executable, args=["-m", "cortex.cli", "mcp"], cwd=str(project),
                                   env=env())

    async def main() -> None:
        async with Client(params) as client:
            added = await client.call_tool("add_memory", {"agent": "alice", "content": "after the holder left"})
            assert not added.is_error, added.content

    try:
        asyncio.run(main())
        assert holder.wait(timeout=30) == 0
    finally:
        holder.kill()
        _stop_autostarted(store)


def test_prune_reindex_index_status_and_info_tools(local_cx):
    """The operations the MCP server lacked (tests/architecture/test_surfaces.py): prune (a dry run by default), reindex,
    index status and the server's info."""
    weak = local_cx.store("alice", "A weak guess about the cache", confidence=0.1)
    kept = local_cx.store("alice", "A solid fact about the cache", confidence=0.9)

    async def main() -> None:
        async with Client(build_mcp(lambda: local_cx, lambda request: ADMIN)) as client:
            listed = await client.call_tool("prune_memories", {"agent": "alice"})
            assert listed.structured_content == {"ids": [weak.id], "dry_run": True}
            assert local_cx.get("alice", weak.id) is not None  # a dry run deletes nothing
            done = await client.call_tool("prune_memories", {"agent": "alice", "dry_run": False})
            assert done.structured_content["ids"] == [weak.id] and local_cx.get("alice", weak.id) is None
            rebuilt = await client.call_tool("reindex", {"agent": "alice"})
            assert rebuilt.structured_content == {"memories": 1, "embedded": 0}
            status = await client.call_tool("index_status", {"agent": "alice"})
            assert status.structured_content["memories"] == status.structured_content["stored"] == 1
            info = await client.call_tool("server_info", {})
            assert info.structured_content["store"] == str(local_cx.info()["store"])
            assert info.structured_content["embeddings"] is None
            bad = await client.call_tool("prune_memories", {"agent": "alice", "min_confidence": 2})
            assert bad.is_error

    asyncio.run(main())
    assert local_cx.get("alice", kept.id) is not None
