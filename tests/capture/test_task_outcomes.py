"""Task outcomes (issue 20, item 3, the explicit channel): `record_task` turns a finished task into a
task_completion memory (its time to live), a failed one saying what went wrong, so that the next start on a
similar task shows it; on Python, the CLI, HTTP, MCP and the server's client."""

from __future__ import annotations

import asyncio
import json
import warnings
from datetime import timedelta

import httpx
import pytest
from mcp import Client

from cortex import Cortex
from cortex.capture.tasks import MAX_OUTCOME_CHARS
from cortex.errors import InvalidInputError
from cortex.service.auth import ADMIN
from cortex.service.mcp import build_mcp
from tests.service_helpers import cortex, make_project, start_server


@pytest.fixture
def cx():
    with Cortex.open(None, embeddings=None) as opened:
        opened.agents.register("migrator", description="runs migrations")
        yield opened


def test_a_failed_task_says_what_went_wrong_and_the_next_similar_start_shows_it(cx):
    failed = cx.record_task("migrator", "add an index to the orders table",
                            "ALTER TABLE took the lock for 40 s: the API timed out. Use CREATE INDEX CONCURRENTLY.",
                            "failed")
    assert failed.content.startswith("Task failed: add an index to the orders table\nWhat went wrong: ALTER")
    assert failed.source.value == "task_completion" and set(failed.tags) == {"task-outcome", "task-failed"}
    assert failed.metadata == {"task": "add an index to the orders table", "status": "failed"}
    assert failed.expires_at is not None and failed.expires_at - failed.created_at == timedelta(days=7)
    cx.record_task("migrator", "rename a column of the users table", "done with a two-step rename")
    block = cx.agent_start("migrator", task="add an index to the invoices table")
    assert "Task failed: add an index to the orders table" in block
    assert "CONCURRENTLY" in block


def test_a_long_output_keeps_its_beginning_and_its_end(cx):
    output = "started the migration\n" + "noise line\n" * 2000 + "FAILED: deadlock detected on orders"
    memory = cx.record_task("migrator", "migrate orders", output, "failed")
    assert "started the migration" in memory.content and "deadlock detected on orders" in memory.content
    assert len(memory.content) < MAX_OUTCOME_CHARS + 400 and " … " in memory.content


@pytest.mark.parametrize(("args", "field"), [
    (("migrate", "x", "maybe"), "status"), (("  ", "x", "ok"), "task"), (("migrate", 5, "ok"), "output")])
def test_bad_input_is_named_and_nothing_is_stored(cx, args, field):
    with pytest.raises(InvalidInputError) as error:
        cx.record_task("migrator", *args)
    assert error.value.field == field and cx.count("migrator") == 0


def test_secrets_in_the_outcome_are_redacted(cx):
    key = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        memory = cx.record_task("migrator", f"rotate {key}", f"used {key} to push", "ok")
    assert key not in memory.content and key not in json.dumps(memory.metadata)
    assert "[REDACTED:github-token]" in memory.content
    assert any("replaced 2 secrets" in str(w.message) for w in caught)


def test_every_surface_records_a_task(tmp_path):
    project = make_project(tmp_path / "p", "migrator")
    done = cortex(project, "task-done", "migrator", "vacuum the events table", "-", "--status", "failed",
                  stdin="autovacuum was disabled on that table\n", CORTEX_EMBEDDINGS="none")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["content"].endswith("What went wrong: autovacuum was disabled on that table")
    bad = cortex(project, "task-done", "migrator", "x", "--status", "maybe", CORTEX_EMBEDDINGS="none")
    assert bad.returncode == 2
    server = start_server(project, CORTEX_EMBEDDINGS="none")
    try:
        headers = {"Authorization": f"Bearer {server.token}"}
        answer = httpx.post(f"{server.url}/v1/agents/migrator/tasks", headers=headers, timeout=30,
                            json={"task": "reindex search", "output": "took 3 minutes", "status": "ok"})
        assert answer.status_code == 201 and answer.json()["content"] == "Task done: reindex search\nOutcome: took 3 minutes"
        wrong = httpx.post(f"{server.url}/v1/agents/migrator/tasks", headers=headers, timeout=30,
                           json={"task": "x", "status": "maybe"})
        assert wrong.status_code == 422 and wrong.json()["error"]["field"] == "status"
        with Cortex.open(project / ".cortex" / "store") as client:  # the server's client
            remote = client.record_task("migrator", "compact the log", "freed 2 GB")
            assert remote.content == "Task done: compact the log\nOutcome: freed 2 GB"
            assert len(client.recall("migrator", "Task")) == 3
    finally:
        assert server.stop() == 0


def test_the_mcp_tool_records_a_task(cx):
    async def main() -> dict:
        async with Client(build_mcp(lambda: cx, lambda request: ADMIN)) as client:
            result = await client.call_tool("record_task", {"agent": "migrator", "task": "backfill totals",
                                                            "output": "stopped: out of disk", "status": "failed"})
            assert not result.is_error, result.content
            bad = await client.call_tool("record_task", {"agent": "migrator", "task": "x", "status": "maybe"})
            assert bad.is_error
            return result.structured_content

    answer = asyncio.run(main())
    assert answer["content"] == "Task failed: backfill totals\nWhat went wrong: stopped: out of disk"
    assert answer["source"] == "task_completion"
