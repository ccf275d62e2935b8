"""One rule for storing the same content again, whatever the surface: the facade answers with the memory already
stored (current, same scope and project) and stores nothing; a notice says so (CLI: a warning on stderr; HTTP: the
answer's ``warnings`` and the ``Cortex-Warnings`` header; MCP: ``created: false``)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from cortex import AgentSettings, Cortex, notices
from tests.service_helpers import cortex as run_cli
from tests.service_helpers import make_project


def test_storing_the_same_content_again_answers_the_memory_already_stored(cx: Cortex) -> None:
    cx.agents.register("reviewer")
    first = cx.store("reviewer", "Always check for null pointers", type="pattern")
    with notices.collect() as notes:
        again = cx.store("reviewer", "Always check for null pointers", type="decision", confidence=0.2)
    assert again == first and again.type.value == "pattern"  # returned as it is
    assert notices.stored_already(notes, first.id)
    assert cx.count("reviewer") == 1


def test_another_project_scope_or_a_superseded_memory_is_not_the_same(cx: Cortex) -> None:
    cx.agents.register("reviewer", settings=AgentSettings(teams=("backend",)))
    first = cx.store("reviewer", "Tokens expire after one hour")
    assert cx.store("reviewer", "Tokens expire after one hour", project="mayros").id != first.id
    assert cx.store("reviewer", "Tokens expire after one hour", scope="team:backend").id != first.id
    assert cx.store("reviewer", "tokens expire after one hour").id != first.id  # exactly the same, nothing less
    newer = cx.supersede("reviewer", first.id, "Tokens expire after 8 hours")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        again = cx.store("reviewer", "Tokens expire after one hour")
    assert again.id not in (first.id, newer.id)  # the old one is no longer current: stored anew
    assert not any("already stored" in str(w.message) for w in seen)


def test_a_python_caller_hears_it_as_a_warning(cx: Cortex) -> None:
    cx.agents.register("reviewer")
    cx.store("reviewer", "one")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        cx.store("reviewer", "one")
    assert any("already stored" in str(w.message) for w in seen)


def test_the_cli_follows_the_rule(tmp_path: Path) -> None:
    project = make_project(tmp_path, "reviewer")
    first = run_cli(project, "store", "reviewer", "Always check for null pointers")
    again = run_cli(project, "store", "reviewer", "Always check for null pointers")
    assert first.returncode == again.returncode == 0, again.stderr
    assert json.loads(first.stdout)["id"] == json.loads(again.stdout)["id"]
    assert "already stored" in again.stderr and "already stored" not in first.stderr
    assert len(json.loads(run_cli(project, "recall", "reviewer").stdout)) == 1


def test_http_and_mcp_follow_the_rule(cx: Cortex) -> None:
    import asyncio

    from fastapi.testclient import TestClient
    from mcp import Client

    from cortex.service.auth import ADMIN
    from cortex.service.http import create_app
    from cortex.service.mcp import build_mcp

    cx.agents.register("reviewer")
    with TestClient(create_app(cx, mcp=False)) as http:
        first = http.post("/v1/agents/reviewer/memories", json={"content": "Use UTC everywhere"})
        again = http.post("/v1/agents/reviewer/memories", json={"content": "Use UTC everywhere"})
    assert first.json()["id"] == again.json()["id"]
    assert any("already stored" in w for w in again.json()["warnings"])
    assert "already stored" in again.headers["cortex-warnings"]

    async def add() -> dict:
        async with Client(build_mcp(lambda: cx, lambda request: ADMIN)) as client:
            result = await client.call_tool("add_memory", {"agent": "reviewer", "content": "Use UTC everywhere"})
            return result.structured_content

    added = asyncio.run(add())
    assert added["created"] is False and added["memory"]["id"] == first.json()["id"]
    assert cx.count("reviewer") == 1
