"""The MCP utilities over streamable HTTP against a live ``cortex serve``, as a hostile caller sends them (raw
JSON-RPC): a subscription to another agent's resource, more subscriptions than the server keeps, completions of
agent names the token may not use, a bogus log level."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from cortex.service.auth import TokenStore
from cortex.service.mcp.protocol import MAX_SUBSCRIPTIONS
from tests.service_helpers import make_project, start_server


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory):
    project = make_project(tmp_path_factory.mktemp("mcpattack") / "proj", "alice", "bob", "bobby")
    tokens = TokenStore(project / ".cortex" / "store")
    alice, admin = tokens.create("alice"), tokens.create(None)
    server = start_server(project)
    try:
        yield server, alice, admin
    finally:
        server.stop()


def rpc(server, token: str, method: str, params: dict, ident: int = 1) -> dict:
    r = httpx.post(f"{server.url}/mcp", json={"jsonrpc": "2.0", "id": ident, "method": method, "params": params},
                   headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
                            "MCP-Protocol-Version": "2025-06-18"}, timeout=60)
    assert r.status_code == 200, r.text
    return r.json()


def test_a_token_subscribes_and_completes_only_its_agents(live) -> None:
    server, alice, admin = live
    for uri in ("cortex://agents/bob/memory", "cortex://agents/alice/../bob/memory", "cortex://agents/BOB/memory",
                "cortex://agents/bob/memory\n", "cortex://agents/\u0430lice/memory", "x" * 100_000):
        answer = rpc(server, alice, "resources/subscribe", {"uri": uri})
        assert answer.get("error", {}).get("code") in (-32002, -32602), (uri[:60], answer)
    assert "result" in rpc(server, alice, "resources/subscribe", {"uri": "cortex://agents/alice/memory"})
    ref = {"type": "ref/resource", "uri": "cortex://agents/{agent}/memory"}
    for prefix in ("", "b", "B", "bo", "\u0430", "%"):
        values = rpc(server, alice, "completion/complete", {"ref": ref, "argument": {"name": "agent", "value": prefix}}
                     )["result"]["completion"]
        assert set(values["values"]) <= {"alice"} and values.get("total", 0) <= 1, (prefix, values)
    assert rpc(server, admin, "completion/complete", {"ref": ref, "argument": {"name": "agent", "value": "bo"}}
               )["result"]["completion"]["values"] == ["bob", "bobby"]


def test_subscriptions_of_one_caller_never_lock_out_another(live) -> None:
    server, alice, admin = live
    for k in range(MAX_SUBSCRIPTIONS + 1):  # an admin may name any agent: one per name
        answer = rpc(server, admin, "resources/subscribe", {"uri": f"cortex://agents/ghost-{k}/memory"}, k)
        assert "result" in answer, answer  # stateless: nothing is kept, so there is no room to run out of
    # a new resource, never subscribed before, by another caller
    answer = rpc(server, alice, "resources/subscribe", {"uri": "cortex://agents/alice/memory"})
    assert "result" in answer, answer
    assert "result" in rpc(server, alice, "resources/unsubscribe", {"uri": "cortex://agents/alice/memory"})


def test_a_bogus_log_level_is_invalid_params(live) -> None:
    server, alice, _ = live
    for level in ("bogus", "", None, 7, "DEBUG", "debug\n", "x" * 10_000):
        answer = rpc(server, alice, "logging/setLevel", {"level": level})
        assert answer.get("error", {}).get("code") == -32602, (level, answer)
    assert "result" in rpc(server, alice, "logging/setLevel", {"level": "error"})
