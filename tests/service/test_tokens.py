"""Tokens: created only for declared agents (unless forced), listed, revoked at once, on the CLI and over HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.service_helpers import cortex, make_project, run_cli, start_server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj", "alice", "bob")


def test_tokens_on_the_cli_and_a_revoked_token_is_refused_at_once(project):
    refused = run_cli(project, "token", "create", "--agent", "nobody")
    assert refused.returncode == 1 and "agent 'nobody' is not declared" in refused.stderr
    forced = run_cli(project, "token", "create", "--agent", "nobody", "--force")
    assert forced.returncode == 0 and forced.stdout.startswith("ctx_")
    alice = run_cli(project, "token", "create", "--agent", "alice")
    alice_token = alice.stdout.strip()
    listed = json.loads(run_cli(project, "token", "list").stdout)
    assert sorted(t["agent"] for t in listed) == ["alice", "nobody"]
    assert all(len(t["id"]) == 12 and "sha256" not in t for t in listed)
    alice_id = next(t["id"] for t in listed if t["agent"] == "alice")
    assert alice_id in alice.stderr
    server = start_server(project)
    try:
        auth = {"Authorization": f"Bearer {alice_token}"}
        assert httpx.get(f"{server.url}/v1/agents/alice/stats", headers=auth).status_code == 200
        revoked = cortex(project, "token", "revoke", alice_id)
        assert revoked.returncode == 0 and json.loads(revoked.stdout) == {"id": alice_id, "revoked": True}
        assert httpx.get(f"{server.url}/v1/agents/alice/stats", headers=auth).status_code == 401
        again = cortex(project, "token", "revoke", alice_id)
        assert again.returncode == 1 and "no token has the id" in again.stderr
        bad = cortex(project, "token", "revoke", "x")
        assert bad.returncode == 1 and "token_id:" in bad.stderr
    finally:
        server.stop()


def test_tokens_over_http_are_admin_only(project):
    server = start_server(project)
    try:
        admin = {"Authorization": f"Bearer {server.token}"}
        r = httpx.post(f"{server.url}/v1/tokens", json={"agent": "ghost"}, headers=admin)
        assert r.status_code == 404 and "not declared" in r.json()["error"]["message"]
        r = httpx.post(f"{server.url}/v1/tokens", json={"agent": "bob"}, headers=admin)
        assert r.status_code == 201
        bob = r.json()
        bob_auth = {"Authorization": f"Bearer {bob['token']}"}
        assert httpx.get(f"{server.url}/v1/agents/bob/stats", headers=bob_auth).status_code == 200
        assert httpx.get(f"{server.url}/v1/tokens", headers=bob_auth).status_code == 403
        listed = httpx.get(f"{server.url}/v1/tokens", headers=admin).json()
        assert [(t["id"], t["agent"]) for t in listed] == [(bob["id"], "bob")]
        assert httpx.delete(f"{server.url}/v1/tokens/{bob['id']}", headers=admin).json() == {
            "id": bob["id"], "revoked": True}
        assert httpx.get(f"{server.url}/v1/agents/bob/stats", headers=bob_auth).status_code == 401
        r = httpx.post(f"{server.url}/v1/tokens", json={"agent": "bob", "color": "red"}, headers=admin)
        assert r.status_code == 422 and r.json()["error"]["field"] == "color"
    finally:
        server.stop()


def test_unknown_json_fields_are_refused_not_dropped(project):
    server = start_server(project)
    try:
        admin = {"Authorization": f"Bearer {server.token}"}
        r = httpx.post(f"{server.url}/v1/agents/alice/memories", json={"content": "x", "colour": "red"}, headers=admin)
        assert r.status_code == 422 and r.json()["error"]["field"] == "colour"
        assert httpx.get(f"{server.url}/v1/agents/alice/stats", headers=admin).json()["insight"] == 0
    finally:
        server.stop()
