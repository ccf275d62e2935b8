"""Transcript capture (issue 20): a replayed Claude Code session (a main agent and two subagents, one of which
fails) through the installed hooks, a real server and its capture queue, with a local chat-completions
stand-in as the language model; then the same capture again (nothing new), the Python API on each transcript
format, bad transcripts and a failing model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from cortex import Cortex
from cortex.errors import InvalidInputError
from cortex.llm import LLMSettings

from tests.llm_standin import Delay, Garbage, StandIn, Status
from tests.service_helpers import cortex, env, make_project, start_server
from tests.paths import TESTS

FIXTURES = TESTS / "fixtures" / "transcripts"
SECRET = "sk-proj-" + "Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"


def line(kind: str, content: object, *, sidechain: bool = False, agent: str | None = None) -> dict:
    entry: dict = {"type": kind, "sessionId": "sess-1", "isSidechain": sidechain,
                   "message": {"role": kind, "content": content}}
    if agent:
        entry["agentId"] = agent
    return entry


def text(kind: str, body: str, **kw: object) -> dict:
    return line(kind, [{"type": "text", "text": body}] if kind == "assistant" else body, **kw)  # type: ignore[arg-type]


def append(path: Path, *entries: dict) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        for entry in entries:
            fh.write(json.dumps(entry) + "\n")


@pytest.fixture
def llm():
    with StandIn() as standin:
        yield standin


class Replay:
    """Runs `cortex hook claude EVENT` the way Claude Code does, with the payloads it sends."""

    def __init__(self, project: Path, claude: Path, llm_url: str) -> None:
        self.project, self.claude = project, claude
        self.main = claude / "projects" / "proj" / "sess-1.jsonl"
        self.main.parent.mkdir(parents=True)
        self.main.write_text("")
        self.env = {"CLAUDE_CONFIG_DIR": str(claude), "CORTEX_EMBEDDINGS": "none", "CORTEX_LLM_URL": llm_url,
                    "CORTEX_LLM_MODEL": "stand-in", "CORTEX_LOCK_WAIT": "20"}

    def hook(self, event: str, agent: str | None = None, **payload: object) -> dict:
        body = {"session_id": "sess-1", "cwd": str(self.project), "hook_event_name": event,
                "transcript_path": str(self.main), **payload}
        args = [sys.executable, "-m", "cortex", "hook", "claude", event, *(["--agent", agent] if agent else [])]
        done = subprocess.run(args, input=json.dumps(body), capture_output=True, text=True, cwd="/",
                              env=env(**self.env), timeout=120)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout) if done.stdout.strip() else {}

    def subagent(self, n: int, agent_type: str, task: str, lines: list[str], final: str, failed: bool) -> None:
        append(self.main, line("assistant", [{"type": "tool_use", "id": f"toolu_{n}", "name": "Agent", "input": {
            "description": task[:40], "prompt": task, "subagent_type": agent_type}}]))
        self.hook("SubagentStart", agent_id=f"a{n}", agent_type=agent_type)
        own = self.main.parent / "sess-1" / "subagents" / f"agent-a{n}.jsonl"
        own.parent.mkdir(parents=True, exist_ok=True)
        append(own, text("user", task, sidechain=True, agent=f"a{n}"),
               *(text("assistant", body, sidechain=True, agent=f"a{n}") for body in lines),
               text("assistant", final, sidechain=True, agent=f"a{n}"))
        self.hook("SubagentStop", agent_id=f"a{n}", agent_type=agent_type, agent_transcript_path=str(own),
                  last_assistant_message=final, stop_hook_active=False)
        append(self.main, line("user", [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "is_error": failed,
                                         "content": [{"type": "text", "text": final}]}]))


def wait_for_queue(url: str, token: str, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = httpx.get(f"{url}/v1/capture/queue", headers={"Authorization": f"Bearer {token}"}).json()
        if not status["waiting"] and not status["running"] and status["done"] + status["failed"]:
            return status
        time.sleep(0.1)
    raise AssertionError(f"the capture queue did not drain: {status}")


def test_a_replayed_session_is_captured_once_by_the_hooks_and_the_server_queue(tmp_path, llm):
    project = make_project(tmp_path / "proj", "lead", "db-expert", "reviewer")
    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None) as cx:
        known = cx.store("lead", "Run the test database on port 5433 with docker compose", type="convention")
    replay = Replay(project, tmp_path / "claude", llm.url)
    server = start_server(project, **{k: v for k, v in replay.env.items() if k != "CLAUDE_CONFIG_DIR"})
    try:
        replay.hook("SessionStart", "lead", source="startup")
        append(replay.main,
               text("user", "Add an index to the orders table and review the migration."),
               text("assistant", "I'll now look at the schema.\nLEARNED: the orders table is partitioned by month\n"
                                 "LESSON: Migrations must be generated with alembic revision --autogenerate\n"
                                 f"LESSON: The staging API key is {SECRET}, use it for the smoke test\n"
                                 "LESSON: I'll now run the tests.\n"
                                 "LESSON: Run the test database on port 5433 with docker compose"))
        replay.subagent(1, "db-expert", "Add an index on orders.customer_id",
                        ["LEARNED: CREATE INDEX CONCURRENTLY avoids locking the orders table"],
                        "Added the index with CREATE INDEX CONCURRENTLY; all tests pass.", failed=False)
        replay.subagent(2, "reviewer", "Review the migration that adds the orders index",
                        ["Checking the migration."],
                        "I could not run the migration: relation orders_2026_11 does not exist.", failed=True)
        append(replay.main, text("assistant", "Done: the index is added, the review failed on a missing partition."))
        replay.hook("Stop", "lead", stop_hook_active=False)
        replay.hook("SessionEnd", "lead", reason="prompt_input_exit")
        status = wait_for_queue(server.url, server.token)
        assert status["failed"] == 0, status
    finally:
        server.stop()

    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None) as cx:
        lead = cx.list_memories("lead", limit=100).items
        contents = [m.content for m in lead]
        # the marker line (Stop hook), the extracted learnings, the summary; the duplicate confirmed
        assert "the orders table is partitioned by month" in contents
        assert "Migrations must be generated with alembic revision --autogenerate" in contents
        summaries = [m for m in lead if m.source.value == "session_summary"]
        assert len(summaries) == 1 and summaries[0].content.startswith("Session summary: ")
        assert not any(SECRET in c for c in contents)
        assert any("[REDACTED:" in c and "staging API key" in c for c in contents)
        assert not any("run the tests" in c for c in contents)  # session chatter refused
        assert contents.count(known.content) == 1
        assert cx.get("lead", known.id).validated_at is not None  # confirmed instead of stored again
        # the summary and the learnings are linked to the session in PROV-O
        activity = cx.provenance("lead", summaries[0].id).generated_by
        assert activity is not None and activity.session == "sess-1"
        assert (activity.channel, activity.model, activity.file) == ("llm", "stand-in", "sess-1.jsonl")
        assert activity.part is not None and activity.part.startswith("bytes 0-")
        marker = next(m for m in lead if m.content == "the orders table is partitioned by month")
        by_hook = cx.provenance("lead", marker.id).generated_by
        assert by_hook is not None and (by_hook.channel, by_hook.event, by_hook.session) == ("marker", "Stop", "sess-1")
        # task outcomes under the right agents, and nothing of theirs under the lead
        db = [m.content for m in cx.list_memories("db-expert", limit=100).items]
        reviewer = [m for m in cx.list_memories("reviewer", limit=100).items if m.source.value == "task_completion"]
        assert any(c.startswith("Task done: ") and "customer_id" in c for c in db)
        assert "CREATE INDEX CONCURRENTLY avoids locking the orders table" in db
        assert len(reviewer) == 1 and reviewer[0].content.startswith("Task failed: ")
        assert "orders_2026_11 does not exist" in reviewer[0].content
        assert not any(c.startswith("Task ") for c in contents)
        # recalled at the next start: the failure for a similar task, the lead's learnings
        block = cx.agent_start("reviewer", "review the migration adding an index to the invoices table")
        assert "Task failed" in block and "orders_2026_11" in block
        assert "alembic" in cx.agent_start("lead", "write a migration")
        before = sorted(m.id for a in ("lead", "db-expert", "reviewer") for m in cx.list_memories(a, limit=100).items)

    # capture again, by hand: nothing new (checkpointed)
    again = cortex(project, "capture", "lead", "--transcript", str(replay.main), CORTEX_EMBEDDINGS="none",
                   CORTEX_LLM_URL=llm.url, CORTEX_LLM_MODEL="stand-in")
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["stored"] == [] and report["summary"] is None and report["tasks"] == []
    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None) as cx:
        after = sorted(m.id for a in ("lead", "db-expert", "reviewer") for m in cx.list_memories(a, limit=100).items)
    assert after == before


@pytest.fixture
def cx(tmp_path):
    with Cortex.open(tmp_path / "store", embeddings=None) as cx:
        for name in ("lead", "db-expert", "reviewer", "coder"):
            cx.agents.register(name)
        yield cx


@pytest.mark.parametrize("fixture, fmt", [("claude_main.jsonl", "claude"), ("codex_rollout.jsonl", "codex"),
                                          ("messages.json", "messages"), ("plain.txt", "text"),
                                          ("gemini_session.json", "gemini"), ("claude_export.json", "claude")])
def test_every_format_is_captured_without_a_model_and_only_once(cx, tmp_path, fixture, fmt):
    cx.llm = None
    path = tmp_path / fixture
    path.write_bytes((FIXTURES / fixture).read_bytes())
    first = cx.capture_transcript("coder", path)
    assert first.format == fmt and first.messages > 0 and not first.llm
    assert "no language model configured" in (first.note or "")
    assert first.read_to == path.stat().st_size
    second = cx.capture_transcript("coder", path)
    assert second.stored == [] and second.tasks == [] and second.read_from == first.read_to


def test_claude_main_transcript_keeps_subagent_lines_out_and_records_their_outcomes(cx, tmp_path):
    cx.llm = None
    path = tmp_path / "main.jsonl"
    path.write_bytes((FIXTURES / "claude_main.jsonl").read_bytes())
    report = cx.capture_transcript("lead", path)
    lead = [m.content for m in cx.list_memories("lead", limit=100).items]
    sidechain = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    sidechain_text = " ".join(json.dumps(e) for e in sidechain if e.get("isSidechain"))
    for content in lead:
        assert content not in sidechain_text or content in " ".join(
            json.dumps(e) for e in sidechain if not e.get("isSidechain"))
    # another agent's outcome, from the lead's transcript: held for review, not written (docs/capture.md)
    outcomes = {i.scope: i.keep_content for i in report.held}
    assert set(outcomes) <= {"agent:db-expert", "agent:reviewer"} and outcomes and report.tasks == []


def test_a_background_subagents_outcome_is_its_notification_never_its_launch(cx, tmp_path):
    """The launch of a background subagent is no outcome (nor its ids and paths anything to store or redact); the
    <task-notification> that comes in a later part of the transcript is, under the call it names."""
    cx.llm = None
    lines = (FIXTURES / "claude_async_agent.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "main.jsonl"
    path.write_bytes(b"".join(lines[:4]))  # the turn ends (Stop) before the subagent does
    first = cx.capture_transcript("lead", path)
    assert first.tasks == [] and first.held == [] and first.problems == []
    with open(path, "ab") as fh:
        fh.write(b"".join(lines[4:]))
    second = cx.capture_transcript("lead", path)
    [held] = second.held  # the reviewer's outcome, from the lead's transcript: held for review
    assert held.scope == "agent:reviewer"
    assert "Review refund rounding" in held.keep_content and "round half up in shop/refunds.py:41" in held.keep_content
    assert "Async agent launched" not in held.keep_content and "a4c8e1f09b2d37e65" not in held.keep_content
    assert not second.redacted and second.problems == []
    assert cx.capture_transcript("lead", path).held == []  # read once


@pytest.mark.parametrize("fixture, learned", [
    ("gemini_session.json", "refunds must use Decimal.quantize(CENT, ROUND_HALF_UP), never round(float)"),
    ("claude_export.json", "money helpers live in shop/money.py")])
def test_a_session_saved_as_one_json_object_yields_its_agents_learnings(cx, tmp_path, fixture, learned):
    cx.llm = None
    path = tmp_path / fixture
    path.write_bytes((FIXTURES / fixture).read_bytes())
    report = cx.capture_transcript("coder", path)
    assert [m.content for m in report.stored] == [learned] and report.problems == []
    assert report.messages >= 5  # a conversation, not one message of JSON text


def test_a_growing_transcript_is_read_from_its_checkpoint(cx, tmp_path):
    cx.llm = None
    path = tmp_path / "t.jsonl"
    append(path, text("user", "hi"), text("assistant", "LEARNED: first thing learned here"))
    assert [m.content for m in cx.capture_transcript("coder", path).stored] == ["first thing learned here"]
    with open(path, "a") as fh:
        fh.write(json.dumps(text("assistant", "LEARNED: second thing learned here"))[:25])  # half a line
    assert cx.capture_transcript("coder", path).stored == []
    with open(path, "a") as fh:
        fh.write(json.dumps(text("assistant", "LEARNED: second thing learned here"))[25:] + "\n")
    assert [m.content for m in cx.capture_transcript("coder", path).stored] == ["second thing learned here"]
    usage = {m.content: m.usage_count for m in cx.list_memories("coder", limit=10).items}
    assert usage == {"first thing learned here": 0, "second thing learned here": 0}  # never captured twice


def test_bad_lines_are_reported_and_the_rest_captured(cx, tmp_path):
    cx.llm = None
    path = tmp_path / "t.jsonl"
    append(path, text("user", "hi"))
    with open(path, "a") as fh:
        fh.write('{"type": "assistant", "message": {"role": "assist\n')
    append(path, text("assistant", "LEARNED: kept after a broken line"))
    report = cx.capture_transcript("coder", path)
    assert [m.content for m in report.stored] == ["kept after a broken line"]
    assert report.problems and "2" in report.problems[0]
    with pytest.raises(InvalidInputError, match="transcript"):
        cx.capture_transcript("coder", tmp_path / "missing.jsonl")


def session_file(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    append(path, text("user", "Fix the flaky login test"),
           text("assistant", "Found it.\nLESSON: The login test needs the clock frozen with freezegun at 2026-01-01\n"
                             "Fixed."))
    return path


def test_a_model_that_fails_leaves_its_part_for_the_next_run(cx, tmp_path, llm):
    cx.llm = LLMSettings(url=llm.url, model="stand-in", timeout=1.0)
    path = session_file(tmp_path)
    llm.script(Status(503))
    first = cx.capture_transcript("coder", path)
    assert first.pending and first.llm and first.stored == [] and "retried next run" in first.problems[0]
    second = cx.capture_transcript("coder", path)  # the model answers now: the same part, extracted
    assert not second.pending
    assert [m.content for m in second.stored] == ["The login test needs the clock frozen with freezegun at 2026-01-01"]
    assert second.summary is not None
    assert cx.capture_transcript("coder", path).stored == []


@pytest.mark.parametrize("answers", [(Garbage, Garbage), (Delay(3, None),)])
def test_garbage_or_a_time_out_stores_nothing_from_the_model(cx, tmp_path, llm, answers):
    cx.llm = LLMSettings(url=llm.url, model="stand-in", timeout=1.0)
    llm.script(*answers, *answers)
    report = cx.capture_transcript("coder", session_file(tmp_path), summary=False)
    assert report.stored == [] and report.problems
    assert cx.list_memories("coder").items == []


def test_the_extractor_request_asks_for_the_schema_within_the_budget(cx, tmp_path, llm):
    cx.llm = LLMSettings(url=llm.url, model="stand-in", token_budget=1000)
    path = tmp_path / "big.jsonl"
    append(path, text("user", "Go"),
           *(line("user", [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "x" * 1500}]) for i in range(30)),
           text("assistant", "Done.\nLESSON: Keep tool output out of the prompt"))
    report = cx.capture_transcript("coder", path)
    assert [m.content for m in report.stored] == ["Keep tool output out of the prompt"]
    request = llm.requests[0]
    assert request["response_format"]["type"] == "json_schema"
    assert len(request["messages"][-1]["content"]) < 1000 * 4 * 1.5


def test_a_fifty_megabyte_transcript_is_captured(cx, tmp_path):
    cx.llm = None
    path = tmp_path / "big.jsonl"
    filler = json.dumps(text("assistant", "y" * 10_000)) + "\n"
    with open(path, "w") as fh:
        fh.write(filler * 5200)
        fh.write(json.dumps(text("assistant", "LEARNED: the end of a very long session")) + "\n")
    assert path.stat().st_size > 50 * 1024 * 1024
    report = cx.capture_transcript("coder", path)
    assert [m.content for m in report.stored] == ["the end of a very long session"]


def test_capture_on_every_surface(tmp_path):
    project = make_project(tmp_path / "proj", "coder")
    path = tmp_path / "t.jsonl"
    append(path, text("user", "hi"), text("assistant", "LEARNED: captured through the server"))
    server = start_server(project, CORTEX_EMBEDDINGS="none")
    try:
        headers = {"Authorization": f"Bearer {server.token}"}
        answer = httpx.post(f"{server.url}/v1/agents/coder/transcripts", json={"path": str(path)}, headers=headers)
        assert answer.status_code == 200, answer.text
        assert [m["content"] for m in answer.json()["stored"]] == ["captured through the server"]
        queued = httpx.post(f"{server.url}/v1/agents/coder/transcripts", json={"path": str(path), "wait": False},
                            headers=headers)
        assert queued.status_code == 202 and queued.json()["queued"] is True
        bad = httpx.post(f"{server.url}/v1/agents/coder/transcripts", json={"path": str(tmp_path / "nope")},
                         headers=headers)
        assert bad.status_code == 422 and "transcript" in bad.text
    finally:
        server.stop()
    append(path, text("assistant", "LEARNED: captured by the command line"))
    done = cortex(project, "capture", "coder", "--transcript", str(path), CORTEX_EMBEDDINGS="none")
    assert done.returncode == 0, done.stderr
    assert [m["content"] for m in json.loads(done.stdout)["stored"]] == ["captured by the command line"]
    assert "no language model configured" in done.stderr


def test_mcp_capture_transcript(tmp_path):
    import asyncio

    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    project = make_project(tmp_path / "proj", "coder")
    path = tmp_path / "t.jsonl"
    append(path, text("user", "hi"), text("assistant", "LEARNED: captured through MCP"))

    async def run() -> dict:
        params = StdioServerParameters(command=sys.executable, args=["-m", "cortex", "mcp"], cwd=str(project),
                                       env=env(CORTEX_EMBEDDINGS="none"))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("capture_transcript", {"agent": "coder", "path": str(path)})
            assert not result.is_error, result.content
            return result.structured_content or {}

    report = asyncio.run(run())
    assert [m["content"] for m in report["stored"]] == ["captured through MCP"]


def test_an_agent_token_captures_only_transcripts_where_transcripts_are(tmp_path, monkeypatch):
    from cortex.service.auth import TokenStore
    from cortex.service.http import create_app

    from tests.service_helpers import asgi_request

    project = make_project(tmp_path / "proj", "coder")
    monkeypatch.chdir(project)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    outside = tmp_path / "elsewhere" / "notes.txt"
    outside.parent.mkdir()
    outside.write_text("Assistant: LEARNED: a private note of the server's user\n")
    inside = project / "session.txt"
    inside.write_text("Assistant: LEARNED: a note of the project\n")
    store = project / ".cortex" / "store"  # the store's project is what an agent's token may read
    with Cortex.open(store, embeddings=None) as cx:
        cx.agents.register("coder")
        cx.llm = None
        tokens = TokenStore(store)
        admin, agent = tokens.create(None), tokens.create("coder")
        app = create_app(cx, tokens=tokens, allowed_hosts=["127.0.0.1"], mcp=False)
        refused = asgi_request(app, "POST", "/v1/agents/coder/transcripts", agent, json={"path": str(outside)})
        assert refused.status_code == 403 and "admin token" in refused.text
        link = project / "link.txt"
        link.symlink_to(outside)  # a link out of the project is where it points
        assert asgi_request(app, "POST", "/v1/agents/coder/transcripts", agent,
                            json={"path": str(link)}).status_code == 403
        assert cx.list_memories("coder").items == []
        ok = asgi_request(app, "POST", "/v1/agents/coder/transcripts", agent, json={"path": str(inside)})
        assert ok.status_code == 200 and [m["content"] for m in ok.json()["stored"]] == ["a note of the project"]
        by_admin = asgi_request(app, "POST", "/v1/agents/coder/transcripts", admin, json={"path": str(outside)})
        assert by_admin.status_code == 200


def test_without_a_server_the_session_end_hook_leaves_the_model_to_a_detached_capture(tmp_path, llm):
    project = make_project(tmp_path / "proj", "lead")
    replay = Replay(project, tmp_path / "claude", llm.url)
    llm.script(Delay(3.0, None))  # a slow model: neither the hook nor the store waits for it
    append(replay.main, text("user", "Speed up the build"),
           text("assistant", "Profiled it.\nLESSON: The build caches wheels in .cache/pip-wheels between CI runs"))
    began = time.monotonic()
    replay.hook("SessionEnd", "lead", reason="logout")
    assert time.monotonic() - began < 10
    time.sleep(1.0)  # the detached capture is asking the model now
    opened = time.monotonic()
    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None) as cx:
        cx.store("lead", "written while the model thinks")  # the store is not held meanwhile
    assert time.monotonic() - opened < 2.5
    deadline = time.monotonic() + 60
    found: list[str] = []
    while time.monotonic() < deadline and len(found) < 2:
        time.sleep(0.3)
        try:
            with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"],
                             embeddings=None) as cx:
                found = [m.content for m in cx.list_memories("lead").items]
        except Exception:  # the detached capture holds the store
            continue
    assert "The build caches wheels in .cache/pip-wheels between CI runs" in found
    assert any(c.startswith("Session summary: ") for c in found)
    assert len(llm.requests) == 2  # the extraction and the summary, asked once (before the store was opened)
    log = project / ".cortex" / "logs" / "capture.log"
    assert log.exists()


def test_a_model_configured_later_extracts_what_a_capture_without_one_could_not(cx, tmp_path, llm):
    cx.llm = None
    path = session_file(tmp_path)
    assert cx.capture_transcript("coder", path).stored == []  # no marker line, no model
    cx.llm = LLMSettings(url=llm.url, model="stand-in")
    later = cx.capture_transcript("coder", path)
    assert [m.content for m in later.stored] == ["The login test needs the clock frozen with freezegun at 2026-01-01"]
    assert cx.capture_transcript("coder", path).stored == []
