"""The HTTP API in-process, through httpx's ASGI transport: every route, auth and isolation, error mapping."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from cortex import Cortex
from cortex.service.auth import TokenStore
from cortex.service.http import create_app

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def local_cx(store_path: Path, clock) -> Cortex:
    cx = Cortex.open(store_path, clock=clock, embeddings=None)
    cx.agents.register("alice", description="first")
    cx.agents.register("bob", description="second")
    cx.agents.register("mute", memory=False)
    yield cx
    cx.close()


async def _client(app) -> AsyncIterator[httpx.AsyncClient]:
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as client:
            yield client


@pytest.fixture
async def api(local_cx) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(local_cx, allowed_hosts=["127.0.0.1", "localhost"])
    async for client in _client(app):
        yield client


async def test_every_route(api, local_cx):
    r = await api.get("/healthz")
    assert r.status_code == 200 and r.json()["status"] == "ok"
    r = await api.post("/v1/agents/alice/memories", json={"content": "Always check null pointers", "type": "pattern",
                                                          "confidence": 0.9})
    assert r.status_code == 201
    memory = r.json()
    assert memory["type"] == "pattern" and memory["confidence"] == 0.9 and memory["agent"] == "alice"
    r = await api.post("/v1/agents/alice/memories/batch", json={"entries": [
        {"content": "Tokens expire hourly", "project": "auth"}, {"content": "Weak guess", "confidence": 0.1}]})
    assert r.status_code == 201 and [m["content"] for m in r.json()] == ["Tokens expire hourly", "Weak guess"]
    r = await api.get("/v1/agents/alice/memories", params={"query": "null"})
    assert [m["id"] for m in r.json()] == [memory["id"]]
    r = await api.get("/v1/agents/alice/memories", params={"project": "auth"})
    assert [m["content"] for m in r.json()] == ["Tokens expire hourly"]
    r = await api.get("/v1/agents/alice/search", params={"query": "what about null pointers?", "explain": "true"})
    body = r.json()
    assert body["hits"][0]["memory"]["id"] == memory["id"] and body["mode"] == "bm25"
    assert "fell back" in body["note"] and set(body["hits"][0]["explain"]) >= {"lexical", "semantic", "fused"}
    r = await api.get(f"/v1/agents/alice/memories/{memory['id']}")
    assert r.json()["content"] == "Always check null pointers"
    r = await api.post(f"/v1/agents/alice/memories/{memory['id']}/touch")
    assert r.json()["usage_count"] == 1
    assert (await api.get("/v1/agents/alice/stats")).json() == {"pattern": 1, "convention": 0, "insight": 2,
                                                                "decision": 0}
    r = await api.post("/v1/agents/alice/prune", json={"min_confidence": 0.3, "dry_run": True})
    assert r.json()["count"] == 1 and r.json()["dry_run"] is True and local_cx.count("alice") == 3
    r = await api.post("/v1/agents/alice/prune", json={"min_confidence": 0.3})
    assert r.json()["count"] == 1 and local_cx.count("alice") == 2
    r = await api.post("/v1/agents/alice/start", json={"task": "null pointer review"})
    assert r.json()["block"].startswith("<agent-memory>\n- [pattern] Always check null pointers")
    r = await api.post("/v1/agents/alice/end", json={"output": "ok\nLEARNED: caches live in redis\n"})
    assert [m["content"] for m in r.json()] == ["caches live in redis"]
    agents = (await api.get("/v1/agents")).json()
    assert {a["name"]: a["memories"] for a in agents} == {"alice": 3, "bob": 0, "mute": 0}
    assert (await api.post("/v1/agents/alice/reindex")).json() == {"memories": 3, "embedded": 0}
    r = await api.delete(f"/v1/agents/alice/memories/{memory['id']}")
    assert r.status_code == 204
    r = await api.delete(f"/v1/agents/alice/memories/{memory['id']}")
    assert r.status_code == 404 and r.json()["error"]["type"] == "MemoryNotFoundError"
    assert (await api.get("/docs")).status_code == 200
    paths = (await api.get("/openapi.json")).json()["paths"]
    assert "/v1/agents/{agent}/search" in paths and "/v1/agents/{agent}/memories/{memory_id}" in paths


@pytest.mark.parametrize(("request_args", "status", "kind", "field"), [
    (("POST", "/v1/agents/alice/memories", {"json": {"content": "x", "type": "bogus"}}), 422, "InvalidInputError", "type"),
    (("POST", "/v1/agents/alice/memories", {"json": {"content": "x", "confidence": 1.5}}), 422, "InvalidInputError",
     "confidence"),
    (("POST", "/v1/agents/alice/memories", {"json": {"type": "pattern"}}), 422, "InvalidInputError", "content"),
    (("POST", "/v1/agents/alice/memories", {"content": b"{not json", "headers": {"content-type": "application/json"}}),
     400, "InvalidJSON", None),
    (("POST", "/v1/agents/alice/memories", {"json": {"content": "x" * 70_000}}), 422, "InvalidInputError", "content"),
    (("GET", "/v1/agents/alice/search", {"params": {"query": "x", "mode": "fuzzy"}}), 422, "InvalidInputError", "mode"),
    (("GET", "/v1/agents/nobody/stats", {}), 404, "AgentNotFoundError", None),
    (("GET", "/v1/agents/alice/memories/does-not-exist", {}), 404, "MemoryNotFoundError", None),
    (("POST", "/v1/agents/mute/memories", {"json": {"content": "x"}}), 409, "MemoryDisabledError", None),
])
async def test_errors_map_to_status_codes_and_name_the_problem(api, local_cx, request_args, status, kind, field):
    method, url, kwargs = request_args
    r = await api.request(method, url, **kwargs)
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert error["type"] == kind and error["field"] == field and error["message"]
    assert local_cx.count("alice") == 0  # nothing half-stored


async def test_hostile_strings_round_trip(api):
    hostile = 'a "quote"\nnew > line } ?s ?p ?o . DELETE WHERE { ?s ?p ?o } <script>'
    r = await api.post("/v1/agents/alice/memories", json={"content": hostile, "project": 'p"}>'})
    assert r.status_code == 201
    r = await api.get("/v1/agents/alice/memories", params={"query": "} DELETE", "project": 'p"}>'})
    assert [m["content"] for m in r.json()] == [hostile]


async def test_foreign_host_headers_are_refused(api):
    r = await api.get("/healthz", headers={"host": "attacker.example"})
    assert r.status_code == 400


@pytest.fixture
async def secured(local_cx, store_path) -> AsyncIterator[tuple[httpx.AsyncClient, dict[str, str]]]:
    tokens = TokenStore(store_path)
    issued = {"alice": tokens.create("alice"), "bob": tokens.create("bob"), "admin": tokens.create(None)}
    assert all(t.startswith("ctx_") for t in issued.values())
    assert all(t not in tokens.path.read_text() for t in issued.values())  # only digests are stored
    app = create_app(local_cx, tokens=tokens, allowed_hosts=["127.0.0.1"])
    async for client in _client(app):
        yield client, issued


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_tokens_isolate_agents(secured, local_cx):
    api, tokens = secured
    r = await api.post("/v1/agents/alice/memories", json={"content": "alice secret"})
    assert r.status_code == 401 and r.json()["error"]["type"] == "AuthError" and r.headers["www-authenticate"].startswith(
        'Bearer resource_metadata="http') and r.headers["www-authenticate"].endswith('/.well-known/oauth-protected-resource"')
    for header in (bearer("ctx_wrong"), {"Authorization": "Basic abc"}, {"Authorization": "Bearer "}):
        assert (await api.get("/v1/agents/alice/stats", headers=header)).status_code == 401
    r = await api.post("/v1/agents/alice/memories", json={"content": "alice secret"}, headers=bearer(tokens["alice"]))
    assert r.status_code == 201
    secret = r.json()["id"]
    # bob's token sees nothing of alice: 404 on every route, never her content
    for method, url in [("GET", "/v1/agents/alice/stats"), ("GET", f"/v1/agents/alice/memories/{secret}"),
                        ("GET", "/v1/agents/alice/memories"), ("POST", f"/v1/agents/alice/memories/{secret}/touch"),
                        ("DELETE", f"/v1/agents/alice/memories/{secret}"), ("GET", "/v1/agents/alice/search?query=x")]:
        r = await api.request(method, url, headers=bearer(tokens["bob"]))
        assert r.status_code == 404 and "alice secret" not in r.text, (method, url)
    # alice's id through bob's own graph is just unknown
    r = await api.get(f"/v1/agents/bob/memories/{secret}", headers=bearer(tokens["bob"]))
    assert r.status_code == 404 and "alice secret" not in r.text
    names = [a["name"] for a in (await api.get("/v1/agents", headers=bearer(tokens["bob"]))).json()]
    assert names == ["bob"]
    denied = await api.post("/v1/agents/bob/reindex", headers=bearer(tokens["bob"]))
    assert denied.status_code == 403 and denied.json()["error"]["type"] == "PermissionDeniedError"
    assert (await api.post("/v1/agents/alice/reindex", headers=bearer(tokens["bob"]))).status_code == 404
    assert (await api.get("/v1/agents", headers={"Authorization": b"Bearer caf\xe9"})).status_code == 401
    # the admin token does everything
    r = await api.get(f"/v1/agents/alice/memories/{secret}", headers=bearer(tokens["admin"]))
    assert r.json()["content"] == "alice secret"
    assert len((await api.get("/v1/agents", headers=bearer(tokens["admin"]))).json()) == 3
    assert local_cx.get("alice", secret) is not None


async def test_a_server_app_always_wants_a_token(local_cx):
    """With the server's own token (cortex serve), even a loopback server without configured tokens refuses
    anonymous requests: a web page could otherwise send simple cross-origin POSTs (touch, prune)."""
    local_cx.store("alice", "keep me", confidence=0.1)
    app = create_app(local_cx, local_token="local-secret", allowed_hosts=["127.0.0.1"])
    async for api in _client(app):
        r = await api.post("/v1/agents/alice/prune", content=b"", headers={"Origin": "https://evil.example",
                                                                          "Content-Type": "text/plain"})
        assert r.status_code == 401
        assert (await api.post("/mcp", json={})).status_code == 401
        ok = await api.get("/v1/agents/alice/stats", headers=bearer("local-secret"))
        assert ok.status_code == 200 and ok.json()["insight"] == 1


async def test_the_api_docs_work_offline(api):
    import re

    for page in ("/docs", "/redoc"):
        r = await api.get(page)
        assert r.status_code == 200
        assets = re.findall(r'(?:src|href)="([^"]+)"', r.text) + re.findall(r"url: '([^']+)'", r.text)
        assert assets, page
        for asset in assets:
            assert not asset.startswith(("http://", "https://", "//")), f"{page} loads {asset} from the network"
            fetched = await api.get(asset)
            assert fetched.status_code == 200 and len(fetched.content) > 0, asset
    spec = (await api.get("/openapi.json")).json()
    assert "/v1/agents/{agent}/memories" in spec["paths"]
