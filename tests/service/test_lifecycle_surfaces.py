"""The lifecycle and the shared scopes on every surface: HTTP (with per-agent tokens that carry the agent's team
rights), the real MCP client, the CLI, and the remote client against a real server."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from mcp import Client

from cortex import Cortex, InvalidInputError, PermissionDeniedError, VersionConflictError
from cortex.agents import AgentSettings
from cortex.service.auth import ADMIN, Principal, TokenStore
from cortex.client import RemoteCortex
from cortex.service.http import create_app
from cortex.service.mcp import build_mcp

from tests.service_helpers import asgi_request, make_project, run_cli, start_server
from tests.app.test_scopes import DEFINITIONS, write_agents


@pytest.fixture
def team_cx(store_path: Path, clock) -> Cortex:
    cx = Cortex.open(store_path, clock=clock, embeddings=None)
    cx.agents.register("lead", settings=AgentSettings(teams=("backend",), lead=True))
    cx.agents.register("api", settings=AgentSettings(teams=("backend",)))
    cx.agents.register("ui", settings=AgentSettings(teams=("frontend",)))
    yield cx
    cx.close()


def test_http_routes_of_the_lifecycle_with_agent_tokens(team_cx, store_path, clock):
    tokens = TokenStore(store_path)
    admin, api, ui, lead = tokens.create(None), tokens.create("api"), tokens.create("ui"), tokens.create("lead")
    app = create_app(team_cx, tokens=tokens, allowed_hosts=["127.0.0.1"], mcp=False)

    def call(method: str, path: str, token: str, **kwargs) -> httpx.Response:
        return asgi_request(app, method, path, token, **kwargs)

    r = call("POST", "/v1/agents/api/memories", api, json={
        "content": "migrations run before deploy", "tags": ["deploy", "db"], "metadata": {"ticket": "OPS-7"},
        "source": "session_summary", "ttl": "never", "scope": "team:backend"})
    assert r.status_code == 201, r.text
    m = r.json()
    assert (m["tags"], m["metadata"], m["source"], m["expires_at"], m["scope"]) == (
        ["db", "deploy"], {"ticket": "OPS-7"}, "session_summary", None, "team:backend")
    # an agent token acts as its agent, with its team rights
    assert call("POST", "/v1/agents/ui/memories", ui, json={"content": "x", "scope": "team:backend"}).status_code == 403
    assert call("POST", "/v1/agents/api/memories", ui, json={"content": "x"}).status_code == 404  # not its agent
    r = call("PATCH", f"/v1/agents/api/memories/{m['id']}", api, json={"content": "migrations run first",
                                                                         "expected_version": 1})
    assert r.status_code == 200 and r.json()["version"] == 2
    r = call("PATCH", f"/v1/agents/api/memories/{m['id']}", api, json={"content": "stale", "expected_version": 1})
    assert r.status_code == 409 and r.json()["error"]["field"] == "expected_version"
    r = call("PATCH", f"/v1/agents/api/memories/{m['id']}", api, json={"colour": "red"})
    assert r.status_code == 422 and r.json()["error"]["field"] == "colour"
    r = call("GET", f"/v1/agents/api/memories/{m['id']}/history", api)
    assert [v["version"] for v in r.json()] == [1, 2]
    clock.advance(hours=1)
    r = call("POST", f"/v1/agents/lead/memories/{m['id']}/supersede", lead, json={
        "content": "migrations run in the deploy job", "reason": "pipeline change"})
    assert r.status_code == 201 and r.json()["scope"] == "team:backend"
    new_id = r.json()["id"]
    r = call("GET", "/v1/agents/api/memories", api, params={"query": "migrations"})
    assert [x["id"] for x in r.json()] == [new_id]
    r = call("GET", "/v1/agents/api/memories", api, params={"query": "migrations", "include_superseded": "true",
                                                            "tags": "db,deploy"})
    assert {x["id"] for x in r.json()} == {m["id"], new_id}
    r = call("GET", "/v1/agents/api/memories", api, params={"query": "migrations",
                                                            "as_of": (clock.now - timedelta(minutes=30)).isoformat()})
    assert [x["id"] for x in r.json()] == [m["id"]]
    r = call("GET", "/v1/agents/api/search", api, params={"query": "migrations deploy", "mode": "bm25",
                                                          "explain": "true", "tags": ["deploy"]})
    assert r.json()["hits"][0]["explain"]["decay"] == pytest.approx(1.0)
    r = call("POST", f"/v1/agents/api/memories/{new_id}/validate", api)
    assert r.status_code == 200 and r.json()["validated_at"] is not None
    # injection: lead only, 201
    r = call("POST", "/v1/agents/api/inject", api, json={"content": "x", "category": "best-practice"})
    assert r.status_code == 403 and r.json()["error"]["field"] == "agent"
    r = call("POST", "/v1/agents/lead/inject", lead, json={"content": "never force push", "category": "best-practice"})
    assert r.status_code == 201 and r.json()["scope"] == "swarm"
    r = call("POST", "/v1/agents/lead/inject", lead, json={"content": "x", "category": "gossip"})
    assert r.status_code == 422 and r.json()["error"]["field"] == "category"
    # listing, with a cursor
    first = call("GET", "/v1/agents/api/list", api, params={"limit": 1}).json()
    assert len(first["items"]) == 1 and first["next_cursor"]
    rest = call("GET", "/v1/agents/api/list", api, params={"limit": 10, "cursor": first["next_cursor"]}).json()
    assert rest["next_cursor"] is None
    assert {x["content"] for x in first["items"] + rest["items"]} == {"never force push",
                                                                       "migrations run in the deploy job"}
    assert call("GET", "/v1/agents/api/list", api, params={"cursor": "junk"}).status_code == 422
    assert call("GET", "/v1/agents/ui/list", ui, params={"scope": "team:backend"}).status_code == 403
    # purge: admin only
    call("POST", "/v1/agents/api/memories", api, json={"content": "short lived", "ttl": "1h"})
    clock.advance(hours=2)
    assert call("POST", "/v1/purge-expired", api).status_code == 403
    r = call("POST", "/v1/purge-expired", admin, json={})
    assert r.status_code == 200 and r.json() == {"count": 1}
    # the OpenAPI document describes the new routes
    paths = call("GET", "/openapi.json", admin).json()["paths"]
    for path in ("/v1/agents/{agent}/memories/{memory_id}/history", "/v1/agents/{agent}/memories/{memory_id}/supersede",
                 "/v1/agents/{agent}/memories/{memory_id}/validate", "/v1/agents/{lead}/inject",
                 "/v1/agents/{agent}/list", "/v1/purge-expired"):
        assert path in paths
    assert "patch" in paths["/v1/agents/{agent}/memories/{memory_id}"]


def test_mcp_tools_of_the_lifecycle(team_cx):
    async def main() -> None:
        async with Client(build_mcp(lambda: team_cx, lambda request: ADMIN)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            for name in ("update_memory", "memory_history", "supersede_memory", "validate_memory",
                         "inject_learning", "list_memories"):
                properties = list(tools[name].input_schema["properties"])
                assert properties[0] == "agent" and tools[name].description
            added = await client.call_tool("add_memory", {"agent": "api", "content": "pool size is 10",
                                                          "tags": ["db"], "scope": "team:backend"})
            memory = added.structured_content["memory"]
            assert memory["scope"] == "team:backend" and memory["tags"] == ["db"]
            updated = await client.call_tool("update_memory", {"agent": "api", "memory_id": memory["id"],
                                                               "content": "pool size is 20", "expected_version": 1})
            assert updated.structured_content["version"] == 2
            stale = await client.call_tool("update_memory", {"agent": "api", "memory_id": memory["id"],
                                                             "content": "x", "expected_version": 1})
            assert stale.is_error and "expected_version" in stale.content[0].text
            history = await client.call_tool("memory_history", {"agent": "api", "memory_id": memory["id"]})
            assert [v["content"] for v in history.structured_content["versions"]] == ["pool size is 10",
                                                                                      "pool size is 20"]
            denied = await client.call_tool("supersede_memory", {"agent": "ui", "memory_id": memory["id"],
                                                                 "content": "x"})
            assert denied.is_error  # ui cannot see the backend team's memory
            replaced = await client.call_tool("supersede_memory", {"agent": "lead", "memory_id": memory["id"],
                                                                   "content": "pool size is 30"})
            assert replaced.structured_content["content"] == "pool size is 30"
            validated = await client.call_tool("validate_memory", {"agent": "api",
                                                                   "memory_id": replaced.structured_content["id"]})
            assert validated.structured_content["validated_at"] is not None
            worker = await client.call_tool("inject_learning", {"agent": "api", "content": "x",
                                                                "category": "best-practice"})
            assert worker.is_error and "only a lead" in worker.content[0].text
            injected = await client.call_tool("inject_learning", {"agent": "lead", "content": "small commits",
                                                                  "category": "preference", "to": "ui"})
            assert injected.structured_content["agent"] == "ui"
            page = await client.call_tool("list_memories", {"agent": "api", "limit": 1, "include_superseded": True})
            assert len(page.structured_content["items"]) == 1 and page.structured_content["next_cursor"]
            found = await client.call_tool("search_memories", {"agent": "api", "query": "pool size",
                                                               "mode": "bm25", "include_superseded": True})
            assert {h["scope"] for h in found.structured_content["hits"]} == {"team:backend"}
            assert len(found.structured_content["hits"]) == 2
            recalled = await client.call_tool("recall", {"agent": "api", "query": "pool", "tags": ["db"]})
            assert [m["content"] for m in recalled.structured_content["memories"]] == ["pool size is 30"]
            block = await client.call_tool("agent_start", {"agent": "api", "task": "pool size"})
            assert "(team:backend) pool size is 30" in block.structured_content["block"]

    asyncio.run(main())


def test_mcp_filters_fields_and_rights_of_the_lifecycle(team_cx, clock):
    old = team_cx.store("api", "the queue is rabbitmq", source="file_index", tags=["infra"])
    t_old = clock.now
    clock.advance(days=1)
    team_cx.store("api", "the queue dashboard is grafana")
    team_cx.store("lead", "deploy on tuesdays", scope="swarm")
    agent = {"api"}

    async def main() -> None:
        async with Client(build_mcp(lambda: team_cx, lambda request: ADMIN if not agent else
                                    Principal(agent=next(iter(agent))))) as client:
            async def call(tool: str, **arguments):
                return await client.call_tool(tool, arguments)

            replaced = await call("supersede_memory", agent="api", memory_id=old.id, content="the queue is kafka",
                                  project="infra", confidence=0.7, source="task_completion", ttl="2d",
                                  metadata={"ticket": 42}, valid_from=clock.now.isoformat(), tags=["infra", "mq"])
            new = replaced.structured_content
            assert (new["project"], new["confidence"], new["source"], new["metadata"], new["tags"]) == (
                "infra", 0.7, "task_completion", {"ticket": 42}, ["infra", "mq"])
            then = await call("recall", agent="api", query="queue", as_of=(t_old + timedelta(hours=1)).isoformat())
            assert [m["id"] for m in then.structured_content["memories"]] == [old.id]
            by_source = await call("recall", agent="api", query="queue", source="manual")
            assert [m["content"] for m in by_source.structured_content["memories"]] == ["the queue dashboard is grafana"]
            clock.advance(days=3)  # the kafka note has expired
            found = await call("search_memories", agent="api", query="queue kafka", mode="bm25")
            assert "the queue is kafka" not in [h["summary"] for h in found.structured_content["hits"]]
            found = await call("search_memories", agent="api", query="queue kafka", mode="bm25", include_expired=True)
            assert "the queue is kafka" in [h["summary"] for h in found.structured_content["hits"]]
            block = await call("agent_start", agent="api", task="deploy queue", scope="swarm")
            assert "deploy on tuesdays" in block.structured_content["block"] and "grafana" not in \
                block.structured_content["block"]
            # a worker cannot write to the swarm, even content that is there already
            dup = await call("add_memory", agent="api", content="deploy on tuesdays", scope="swarm")
            assert dup.is_error and "lead" in dup.content[0].text
            denied = await call("purge_expired")
            assert denied.is_error and "admin" in denied.content[0].text
            agent.clear()  # admin from here on
            learned = await call("inject_learning", agent="lead", content="pin versions", category="best-practice",
                                 project="infra", tags=["deps"])
            assert (learned.structured_content["project"], learned.structured_content["tags"]) == (
                "infra", ["best-practice", "deps"])
            purged = await call("purge_expired")
            assert purged.structured_content["count"] == 1

    asyncio.run(main())


def test_cli_verbs_of_the_lifecycle(tmp_path):
    project = make_project(tmp_path / "proj")
    write_agents(project / "agent_defs", DEFINITIONS)

    def cli(*args: str, stdin: str | None = None):
        ran = run_cli(project, *args, stdin=stdin, env={"CORTEX_NO_SERVER": "1"})
        return ran

    def ok(*args: str, stdin: str | None = None):
        ran = cli(*args, stdin=stdin)
        assert ran.returncode == 0, ran.stderr
        return json.loads(ran.stdout) if ran.stdout.strip().startswith(("{", "[")) else ran.stdout

    m = ok("store", "api", "tests use sqlite", "--tag", "testing", "--metadata", '{"a": 1}', "--scope",
           "team:backend")
    assert m["tags"] == ["testing"] and m["metadata"] == {"a": 1} and m["scope"] == "team:backend"
    assert ok("update", "api", m["id"], "--content", "tests use postgres", "--expected-version", "1")["version"] == 2
    stale = cli("update", "api", m["id"], "--content", "x", "--expected-version", "1")
    assert stale.returncode == 1 and "expected_version" in stale.stderr
    assert [v["version"] for v in ok("history", "api", m["id"])] == [1, 2]
    assert "tests use sqlite" in ok("history", "api", m["id"], "--format", "table")
    new = ok("supersede", "api", m["id"], "-", "--reason", "ci uses containers", stdin="tests use testcontainers\n")
    assert new["content"] == "tests use testcontainers"
    assert ok("validate", "db", new["id"])["confidence"] == pytest.approx(0.75)
    denied = cli("inject", "api", "x", "--category", "preference")
    assert denied.returncode == 1 and "only a lead" in denied.stderr
    assert ok("inject", "lead", "review before merge", "--category", "best-practice")["scope"] == "swarm"
    ok("store", "api", "scratch", "--source", "task_completion", "--ttl", "1s")
    listed = ok("list", "api", "--limit", "1")
    assert len(listed["items"]) == 1 and listed["next_cursor"]
    every = ok("list", "api", "--all", "--limit", "1", "--include-superseded")
    assert len(every["items"]) == 4 and every["next_cursor"] is None
    table = ok("list", "api", "--format", "table", "--include-superseded")
    header = table.splitlines()[0].split()
    assert header == ["id", "created", "scope", "type", "source", "v", "tags", "state", "content"]
    assert "superseded" in table and "team:backend" in table
    assert [r["content"] for r in ok("recall", "db", "tests", "--tag", "testing")] == ["tests use testcontainers"]
    assert ok("recall", "db", "tests", "--scope", "agent") == []
    block = ok("start", "db", "--task", "tests")
    assert "(team:backend) tests use testcontainers" in block
    import time

    time.sleep(1.1)
    assert ok("prune", "--expired")["count"] == 1
    bad = cli("store", "api", "x", "--tag", "Not A Slug")
    assert bad.returncode == 1 and "tags" in bad.stderr


def test_remote_client_against_a_real_server(tmp_path):
    project = make_project(tmp_path / "proj")
    write_agents(project / "agent_defs", DEFINITIONS)
    server = start_server(project)
    try:
        with RemoteCortex(server.url, server.token) as cx:
            m = cx.store("api", "queue is rabbitmq", tags=("infra",), metadata={"v": 3}, scope="team:backend",
                         source="file_index")
            assert m.expires_at is not None and m.tags == ("infra",)
            with pytest.raises(VersionConflictError) as conflict:
                cx.update("api", m.id, content="x", expected_version=7)
            assert (conflict.value.memory_id, conflict.value.expected, conflict.value.actual) == (m.id, 7, 1)
            with pytest.raises(InvalidInputError) as bad:  # a body's tags are a JSON list: never split on commas
                cx.update("api", m.id, tags=["infra,db"])
            assert bad.value.field == "tags"
            v2 = cx.update("api", m.id, content="queue is kafka", tags=[])
            assert v2.version == 2 and v2.tags == ()
            assert [h.content for h in cx.history("api", m.id)] == ["queue is rabbitmq", "queue is kafka"]
            with pytest.raises(PermissionDeniedError):
                cx.forget("db", m.id)
            new = cx.supersede("api", m.id, "queue is sqs", reason="cloud move")
            assert [x.id for x in cx.recall("db", "queue")] == [new.id]
            assert len(cx.recall("db", "queue", include_superseded=True)) == 2
            assert cx.validate("db", new.id).validated_at is not None
            swarm = cx.inject_learning("lead", "write tests first", "best-practice")
            page = cx.list_memories("loner")
            assert [x.id for x in page.items] == [swarm.id] and page.next_cursor is None
            assert cx.purge_expired() == 0
            assert "(swarm) write tests first" in cx.agent_start("loner")
    finally:
        server.stop()
