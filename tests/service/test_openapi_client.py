"""The OpenAPI stays usable, not only valid: openapi-python-client generates a typed client from a live
``cortex serve``'s /openapi.json, and that client stores, searches, recalls, gets, lists agents and forgets.

The generator lives in a virtualenv of its own (its dependencies may clash with Cortex's):
``CORTEX_OPENAPI_CLIENT_BIN`` names its ``openapi-python-client`` executable."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.service_helpers import make_project, start_server

pytestmark = [pytest.mark.clients]

GENERATOR = os.environ.get("CORTEX_OPENAPI_CLIENT_BIN")
if not GENERATOR and os.environ.get("CORTEX_REQUIRE_CLIENTS") != "1":
    pytestmark.append(pytest.mark.skip(reason="CORTEX_OPENAPI_CLIENT_BIN is not set"))

HOSTILE = 'He said "use >= 2" then\nleft; ℂortex ＜tag＞ \u202e end'


def _operation_count(spec: dict) -> int:
    methods = {"get", "post", "put", "patch", "delete"}
    return sum(1 for item in spec["paths"].values() for method in item if method in methods)


def test_generated_client_covers_every_operation_and_works(tmp_path: Path) -> None:
    assert GENERATOR, "CORTEX_REQUIRE_CLIENTS=1 but CORTEX_OPENAPI_CLIENT_BIN is not set"
    project = make_project(tmp_path / "project", "alice", "bob")
    server = start_server(project)
    try:
        spec_response = httpx.get(f"{server.url}/openapi.json", timeout=30)
        assert spec_response.status_code == 200
        (tmp_path / "openapi.json").write_bytes(spec_response.content)
        out = tmp_path / "generated"
        # the generator formats its output with ruff, installed beside it in its virtualenv
        env = {**os.environ, "PATH": f"{Path(GENERATOR).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        generated = subprocess.run([GENERATOR, "generate", "--path", str(tmp_path / "openapi.json"),
                                    "--output-path", str(out), "--meta", "none"],
                                   capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
        assert generated.returncode == 0, generated.stdout + generated.stderr
        report = generated.stdout + generated.stderr
        # The generator reports every endpoint or schema it could not translate as a warning and drops it.
        assert "Warning" not in report and "Unable to" not in report, report
        modules = [p for p in out.rglob("api/*/*.py") if p.name != "__init__.py"]
        assert len(modules) == _operation_count(spec_response.json()), report

        sys.path.insert(0, str(tmp_path))
        try:
            _exercise(importlib.import_module("generated"), server)
        finally:
            sys.path.remove(str(tmp_path))
            for name in [m for m in sys.modules if m == "generated" or m.startswith("generated.")]:
                del sys.modules[name]
    finally:
        server.stop()


def _exercise(client_pkg, server) -> None:
    """Every call through the generated typed functions and models."""
    api = lambda path: importlib.import_module(f"generated.api.{path}")  # noqa: E731
    models = importlib.import_module("generated.models")
    client = client_pkg.AuthenticatedClient(base_url=server.url, token=server.token)

    store = api("memories.store_v1_agents_agent_memories_post")
    written = store.sync("alice", client=client, body=models.StoreBody(content=HOSTILE, type_="decision",
                                                                       project="p1", confidence=0.9))
    assert isinstance(written, models.WrittenMemory), written
    assert (written.agent, written.content, written.project, written.confidence) == ("alice", HOSTILE, "p1", 0.9)
    assert written.type_.value == "decision"

    got = api("memories.get_v1_agents_agent_memories_memory_id_get").sync("alice", written.id, client=client)
    assert isinstance(got, models.Memory) and got.id == written.id and got.content == HOSTILE

    found = api("memories.search_v1_agents_agent_search_get").sync("alice", client=client, query="left",
                                                                    mode="bm25")
    assert isinstance(found, models.SearchResult)
    assert [hit.memory.id for hit in found.hits] == [written.id]
    assert isinstance(found.hits[0], models.Hit) and found.hits[0].score > 0

    recall = api("memories.recall_v1_agents_agent_memories_get").sync("alice", client=client, project="p1")
    assert written.id in str(recall), recall

    agents = api("agents.list_agents_v1_agents_get").sync(client=client)
    assert {a.to_dict()["name"] for a in agents} >= {"alice", "bob"}, agents

    forget = api("memories.forget_v1_agents_agent_memories_memory_id_delete")
    missing = forget.sync_detailed("alice", "no-such-memory", client=client)
    assert missing.status_code == 404, missing
    # the error is typed too: the OpenAPI declares Cortex's one error body on every route
    assert type(missing.parsed).__name__ == "ErrorResponse", missing.parsed
    error = missing.parsed.error.to_dict()  # the generator names the field `type_` in Python, `type` on the wire
    assert error["type"] == "MemoryNotFoundError" and "no-such-memory" in error["message"], error
    gone = forget.sync_detailed("alice", written.id, client=client)
    assert gone.status_code in (200, 204), gone
    after = api("memories.get_v1_agents_agent_memories_memory_id_get").sync_detailed("alice", written.id,
                                                                                    client=client)
    assert after.status_code == 404

    wrong = client_pkg.AuthenticatedClient(base_url=server.url, token="not-a-token")
    denied = api("agents.list_agents_v1_agents_get").sync_detailed(client=wrong)
    assert denied.status_code == 401 and denied.parsed.error.to_dict()["type"] == "AuthError", denied
