"""The "used" signal (issue 20, item 6): a memory shown at agent start that the agent's later output draws on
gets usedCount + 1, which ranking prefers to merely having been shown; stored, exported, per source in stats;
through agent_end, record_use, the hooks, the CLI and HTTP."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from cortex import Cortex, Reranking
from cortex.capture.usage import drawn_on
from cortex.errors import InvalidInputError

from tests.service_helpers import cortex, env, make_project, start_server

DB = "Run the test database on port 5433 with docker compose -f compose.test.yml up"
PNPM = "Use pnpm install --frozen-lockfile in CI pipelines"
BILLING = "The billing service owns the invoices table"


@pytest.mark.parametrize("output, expected", [
    ("docker compose -f compose.test.yml up -d, then psql -p 5433", ["db"]),  # applied: its command and port
    ("As memory db says, the database is up.", ["db"]),  # cited by id
    ("Note: run the test database on port 5433 with docker compose.", ["db"]),  # repeated
    ("I looked at the database schema and the test suite.", []),  # the topic, not the memory
    ("npm install, then the CI pipeline ran", []),  # generic words, not the flag
])
def test_what_counts_as_drawing_on_a_memory(output, expected):
    shown = [("db", DB), ("pnpm", PNPM), ("billing", BILLING)]
    assert [i for i, _ in drawn_on(shown, output)] == expected


@pytest.fixture
def cx(tmp_path):
    with Cortex.open(tmp_path / "store", embeddings=None) as cx:
        cx.agents.register("dev", description="a developer")
        yield cx


def test_agent_end_marks_what_the_output_used_once(cx):
    db, pnpm = cx.store("dev", DB), cx.store("dev", PNPM)
    block = cx.agent_start("dev")
    assert DB in block and PNPM in block
    cx.agent_end("dev", "Started it: docker compose -f compose.test.yml up; connected on port 5433.")
    assert (cx.get("dev", db.id).used_count, cx.get("dev", pnpm.id).used_count) == (1, 0)
    assert (cx.get("dev", db.id).usage_count, cx.get("dev", pnpm.id).usage_count) == (1, 1)  # both shown
    cx.agent_end("dev", "docker compose -f compose.test.yml up again on 5433")  # the same start: counted once
    assert cx.get("dev", db.id).used_count == 1
    assert cx.record_use("dev", "nothing shown to this agent since is used: compose.test.yml 5433") == []
    stats = cx.usage_stats("dev")
    assert stats["manual"] == {"memories": 2, "shown": 2, "used": 1, "times_shown": 2, "times_used": 1, "ratio": 0.5}


def test_ranking_prefers_used_to_shown(cx):
    used = cx.store("dev", "Deploy the api with make deploy-api ENV=staging")
    shown = cx.store("dev", "Deploy the web app with make deploy-web ENV=staging")
    for _ in range(3):
        cx.agent_start("dev")  # both shown three times
    cx.record_use("dev", "ran make deploy-api ENV=staging to deploy the api")
    hits = cx.search("dev", "deploy staging", mode="bm25").hits
    assert [h.memory.id for h in hits][:2] == [used.id, shown.id]
    # the block's ranking reads usedCount, never usageCount (being shown lifts nothing)
    assert cx.agent_start("dev", limit=1).count("deploy-api") == 1


def test_used_count_is_exported_and_imported(cx, tmp_path):
    m = cx.store("dev", DB)
    cx.agent_start("dev")
    cx.record_use("dev", "docker compose -f compose.test.yml up; port 5433")
    out = io.BytesIO()
    cx.export(out, agent="dev")
    assert b"usedCount" in out.getvalue()
    with Cortex.open(tmp_path / "other", embeddings=None) as other:
        other.agents.register("dev", description="a developer")
        other.import_rdf(out.getvalue(), format="trig")
        assert other.get("dev", m.id).used_count == 1


def hook(project: Path, event: str, payload: dict, **extra: str) -> str:
    body = {"session_id": "s-9", "cwd": str(project), "hook_event_name": event, **payload}
    done = subprocess.run([sys.executable, "-m", "cortex", "hook", "claude", event, "--agent", "dev"],
                          input=json.dumps(body), capture_output=True, text=True, cwd="/",
                          env=env(CORTEX_EMBEDDINGS="none", CLAUDE_CONFIG_DIR=str(project.parent), **extra),
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("served", [False, True], ids=["no-server", "server"])
def test_the_stop_hook_reports_what_the_session_used(tmp_path, served):
    project = make_project(tmp_path / "proj", "dev")
    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None) as cx:
        db, pnpm = cx.store("dev", DB), cx.store("dev", PNPM)
    server = start_server(project, CORTEX_EMBEDDINGS="none") if served else None
    try:
        transcript = tmp_path / "s-9.jsonl"
        transcript.write_text("")
        assert DB in hook(project, "SessionStart", {"source": "startup", "transcript_path": str(transcript)})
        with open(transcript, "a") as fh:
            fh.write(json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "Bash",
                 "input": {"command": "docker compose -f compose.test.yml up -d && pg_isready -p 5433"}}]}}) + "\n")
        hook(project, "Stop", {"transcript_path": str(transcript), "stop_hook_active": False})
        hook(project, "Stop", {"transcript_path": str(transcript), "stop_hook_active": False})  # nothing new
    finally:
        if server is not None:
            server.stop()
    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None) as cx:
        assert (cx.get("dev", db.id).used_count, cx.get("dev", pnpm.id).used_count) == (1, 0)


def test_used_and_usage_stats_on_the_cli_and_http(tmp_path):
    project = make_project(tmp_path / "proj", "dev")
    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None) as cx:
        db = cx.store("dev", DB)
    shown = cortex(project, "start", "dev", CORTEX_EMBEDDINGS="none")
    assert shown.returncode == 0 and DB in shown.stdout, shown.stderr
    used = cortex(project, "used", "dev", "-", stdin="docker compose -f compose.test.yml up; port 5433",
                  CORTEX_EMBEDDINGS="none")
    assert used.returncode == 0, used.stderr
    assert [m["id"] for m in json.loads(used.stdout)] == [db.id]
    stats = cortex(project, "stats", "dev", "--usage", CORTEX_EMBEDDINGS="none")
    assert json.loads(stats.stdout)["by_source"]["manual"]["used"] == 1
    server = start_server(project, CORTEX_EMBEDDINGS="none")
    try:
        headers = {"Authorization": f"Bearer {server.token}"}
        assert httpx.get(f"{server.url}/v1/agents/dev/usage", headers=headers).json()["manual"]["times_used"] == 1
        answer = httpx.post(f"{server.url}/v1/agents/dev/used", json={"output": "x"}, headers=headers)
        assert answer.status_code == 200 and answer.json() == []
    finally:
        server.stop()


def test_replay_the_used_memory_rises_and_the_never_used_one_gives_its_place(cx):
    """Sessions on one task: A is drawn on every time, B is shown every time and never used; C, as relevant,
    arrives later. A ranks first in search and in the block, B's usage part of the score falls below 1 after
    its grace showings (explain shows it), and C takes B's place in a two-memory block."""
    a = cx.store("dev", "Before you deploy the api, run the database migrations with alembic upgrade head")
    b = cx.store("dev", "Deploy the api only after the release tag is pushed to the deploy repository")
    task, usage, blocks = "deploy the api", [], []
    for session in range(1, 11):
        block = cx.agent_start("dev", task=task, limit=2)
        blocks.append(block)
        if session == 5:
            c = cx.store("dev", "After you deploy the api, watch the canary dashboard for five minutes")
        cx.agent_end("dev", "As noted: run the database migrations with alembic upgrade head first. Deployed the api.")
        hits = cx.search("dev", task, mode="bm25", explain=True, rerank=Reranking(unused=True)).hits
        usage.append({h.memory.id: h.explain["usage"] for h in hits})
    assert cx.get("dev", a.id).used_count == 10 and cx.get("dev", b.id).used_count == 0
    assert [h.memory.id for h in cx.search("dev", task, mode="bm25").hits][0] == a.id
    assert usage[-1][a.id] > 2.0  # shown and used: both boosts
    assert usage[2][b.id] > 1.0 > usage[-1][b.id]  # shown three times: still lifted; then the penalty
    assert "release tag" in blocks[0] and "release tag" not in blocks[6] and "canary" in blocks[6]
    assert all("alembic" in block for block in blocks)
    assert cx.get("dev", c.id).usage_count > 0


def test_the_unused_penalty_is_a_setting_off_by_default_in_search(cx):
    b = cx.store("dev", "Deploy the api only after the release tag is pushed to the deploy repository")
    for _ in range(12):
        cx.agent_start("dev", task="deploy the api")
    on = cx.search("dev", "deploy the api", mode="bm25", explain=True,
                   rerank=Reranking(unused=True)).hits[0].explain["usage"]
    off = cx.search("dev", "deploy the api", mode="bm25", explain=True).hits[0].explain["usage"]
    assert on == pytest.approx(off * 0.5) and off == pytest.approx(1.5)  # a touch is a use too: not by default
    with pytest.raises(InvalidInputError, match="unused_floor"):
        Reranking(unused_floor=2)
    assert cx.get("dev", b.id).used_count == 0
