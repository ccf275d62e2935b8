"""MCP authorization discovery over real HTTP: a 401 names the OAuth 2.0 protected-resource metadata (RFC 9728)
of the resource asked for, the metadata is served without a token at the root and path-suffixed forms, and a
client that read it connects with a token from ``cortex token create``."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from cortex.service.auth import TokenStore
from cortex.service.guard import challenge

from tests.service_helpers import make_project, start_server

WELL_KNOWN = "/.well-known/oauth-protected-resource"


@pytest.fixture
def server(tmp_path: Path):
    project = make_project(tmp_path / "proj", "alice")
    TokenStore(project / ".cortex" / "store").create("alice")  # tokens configured: every request needs one
    running = start_server(project)
    yield running
    running.stop()


def _metadata_of(answer: httpx.Response) -> str:
    assert answer.status_code == 401
    found = re.fullmatch(r'Bearer resource_metadata="([^"]+)"', answer.headers["www-authenticate"])
    assert found, answer.headers["www-authenticate"]
    return found.group(1)


def test_a_401_points_to_the_metadata_of_its_resource(server):
    mcp = httpx.post(f"{server.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                     headers={"Accept": "application/json, text/event-stream"})
    assert _metadata_of(mcp) == f"{server.url}{WELL_KNOWN}/mcp"
    api = httpx.get(f"{server.url}/v1/agents", headers={"Authorization": "Bearer wrong"})
    assert _metadata_of(api) == f"{server.url}{WELL_KNOWN}"
    for url, resource in ((f"{server.url}{WELL_KNOWN}/mcp", f"{server.url}/mcp"),
                          (f"{server.url}{WELL_KNOWN}", server.url)):
        document = httpx.get(url)  # no token: discovery comes before one
        assert document.status_code == 200 and document.headers["content-type"] == "application/json"
        assert document.json()["resource"] == resource
        assert document.json()["bearer_methods_supported"] == ["header"]


@pytest.mark.parametrize("host", ['evil" x="1', "a b", "h\r\nX-Injected: y", "h/../x", "user@h", "ｈost\u202e", "x" * 300])
def test_a_hostile_host_is_not_echoed_into_the_challenge(host):
    """The loopback server refuses such hosts first (400); behind another bind the challenge must not carry them."""
    scope = {"type": "http", "path": "/mcp", "scheme": "http", "server": ("10.0.0.1", 8080),
             "headers": [(b"host", host.encode("utf-8"))]}
    value = challenge(scope)
    assert value == 'Bearer resource_metadata="http://10.0.0.1:8080/.well-known/oauth-protected-resource/mcp"'
    scope["headers"] = [(b"host", b"[::1]:8080")]
    assert challenge(scope) == 'Bearer resource_metadata="http://[::1]:8080/.well-known/oauth-protected-resource/mcp"'


def test_a_client_that_discovered_the_metadata_connects_with_a_cortex_token(server):
    challenge = _metadata_of(httpx.post(f"{server.url}/mcp", json={}))
    resource = httpx.get(challenge).json()["resource"]

    async def main() -> list[str]:
        headers = {"Authorization": f"Bearer {server.token}"}
        async with Client(streamable_http_client(resource, http_client=httpx.AsyncClient(headers=headers))) as c:
            return [t.name for t in (await c.list_tools()).tools]

    assert "search_memories" in asyncio.run(main())
