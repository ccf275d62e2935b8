"""Seeing and undoing what one capture did (issue 29, "Review before it steers others"): ``list --session`` and
``--since``, ``capture --dry-run`` and ``capture --undo RUN|last``, on an on-disk store with the local stand-in
for a hosted model, then on every surface (HTTP over loopback, the MCP client, the CLI, the HTTP client)."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest

from cortex import Cortex
from cortex.errors import InvalidInputError, RunNotFoundError, UndoConflictError
from cortex.llm import LLMSettings

from tests.llm_standin import StandIn
from tests.service_helpers import cortex, env, make_project, start_server


def line(kind: str, content: object, session: str = "sess-1") -> dict:
    return {"type": kind, "sessionId": session, "isSidechain": False, "message": {"role": kind, "content": content}}


def text(kind: str, body: str, session: str = "sess-1") -> dict:
    return line(kind, [{"type": "text", "text": body}] if kind == "assistant" else body, session)


def write(path: Path, *entries: dict) -> Path:
    with open(path, "a", encoding="utf-8") as fh:
        for entry in entries:
            fh.write(json.dumps(entry) + "\n")
    return path


def subagent_call(agent: str, task: str, result: str) -> list[dict]:
    return [line("assistant", [{"type": "tool_use", "id": "toolu_9", "name": "Task",
                                "input": {"description": task, "prompt": task, "subagent_type": agent}}]),
            line("user", [{"type": "tool_result", "tool_use_id": "toolu_9", "content": result}])]


@pytest.fixture
def llm():
    with StandIn() as standin:
        yield standin


@pytest.fixture
def cx(tmp_path):
    with Cortex.open(tmp_path / "store", embeddings=None) as cx:
        for name in ("coder", "reviewer"):
            cx.agents.register(name)
        yield cx


def state(cx: Cortex, agent: str) -> dict[str, dict]:
    """Every memory of the agent, superseded and expired ones too, as JSON."""
    items = cx.list_memories(agent, limit=100, include_superseded=True, include_expired=True).items
    return {m.id: m.model_dump(mode="json") for m in items}


# -- list --session / --since -----------------------------------------------------------------------------

def test_list_by_session_and_since(cx, tmp_path):
    cx.llm = None
    cx.store("coder", "stored by hand before any session")
    one = write(tmp_path / "one.jsonl", text("user", "go"), text("assistant", "LEARNED: learned in session one"))
    two = write(tmp_path / "two.jsonl", text("user", "go", "sess-2"),
                text("assistant", "LEARNED: learned in session two", "sess-2"))
    cx.capture_transcript("coder", one)
    time.sleep(0.01)
    middle = datetime.now(timezone.utc)
    time.sleep(0.01)
    cx.capture_transcript("coder", two)
    assert [m.content for m in cx.list_memories("coder", session="sess-1").items] == ["learned in session one"]
    assert [m.content for m in cx.list_memories("coder", session="sess-2").items] == ["learned in session two"]
    assert cx.list_memories("coder", session="no-such-session").items == []
    assert [m.content for m in cx.list_memories("coder", since=middle).items] == ["learned in session two"]
    assert [m.content for m in cx.list_memories("coder", since=middle.isoformat()).items] == ["learned in session two"]
    assert len(cx.list_memories("coder", since="2h").items) == 3
    future = (datetime.now(timezone.utc) + timedelta(days=1)).isoformat()
    assert cx.list_memories("coder", since=future).items == []
    # pages of a filtered listing neither skip nor repeat
    for i in range(5):
        cx.store("coder", f"filler memory number {i} after both sessions")
    first = cx.list_memories("coder", since=middle, limit=2)
    second = cx.list_memories("coder", since=middle, limit=2, cursor=first.next_cursor)
    third = cx.list_memories("coder", since=middle, limit=2, cursor=second.next_cursor)
    assert len({m.id for m in [*first.items, *second.items, *third.items]}) == 6 and third.next_cursor is None
    paged = cx.list_memories("coder", session="sess-1", limit=1)
    assert [m.content for m in paged.items] == ["learned in session one"] and paged.next_cursor is None


@pytest.mark.parametrize("field, value", [("since", "yesterday"), ("since", "-2h"), ("since", "0h"),
                                          ("since", 12), ("session", ""), ("session", "a\nb"),
                                          ("session", "x" * 200)])
def test_list_filters_refuse_bad_values_by_name(cx, field, value):
    with pytest.raises(InvalidInputError, match=field):
        cx.list_memories("coder", **{field: value})


# -- capture --dry-run -------------------------------------------------------------------------------------

def session_with_everything(path: Path, old_id: str) -> Path:
    return write(path, text("user", "Fix the flaky login test"),
                 text("assistant", "LEARNED: the login test needs a frozen clock\n"
                                   f"SUPERSEDES {old_id}: deploys run from the release branch only\n"
                                   "LESSON: Retry the payment webhook at most three times with backoff"),
                 *subagent_call("reviewer", "Review the login fix", "Looks good, merged."))


def test_a_dry_run_reports_what_a_capture_would_do_and_writes_nothing(cx, tmp_path, llm):
    cx.llm = LLMSettings(url=llm.url, model="stand-in")
    old = cx.store("coder", "deploys run from any branch")
    repeated = cx.store("coder", "Retry the payment webhook at most three times with backoff")
    path = session_with_everything(tmp_path / "s.jsonl", old.id)
    before = {a: state(cx, a) for a in ("coder", "reviewer")}
    dry = cx.capture_transcript("coder", path, dry_run=True)
    assert dry.dry_run and dry.run is None and dry.llm and llm.requests  # the model was asked
    assert {m.content for m in dry.stored} == {"the login test needs a frozen clock",
                                               "deploys run from the release branch only"}
    assert dry.confirmed == [repeated.id] and dry.superseded == [old.id]
    # the reviewer's outcome lands in another agent's memory: held for review, in the dry run as in the real one
    assert dry.tasks == [] and [h.scope for h in dry.held] == ["agent:reviewer"] and dry.summary is not None
    assert cx.review(agent="reviewer") == []
    assert {a: state(cx, a) for a in ("coder", "reviewer")} == before  # nothing stored, touched or confirmed
    real = cx.capture_transcript("coder", path)  # the checkpoint did not move: the real run does it all
    assert {m.content for m in real.stored} == {m.content for m in dry.stored}
    assert real.confirmed == [repeated.id] and real.superseded == [old.id] and len(real.held) == 1
    assert cx.capture_transcript("coder", path, dry_run=True).stored == []


# -- undo --------------------------------------------------------------------------------------------------

def test_undo_removes_what_a_capture_created_and_restores_what_it_changed(cx, tmp_path, llm):
    cx.llm = LLMSettings(url=llm.url, model="stand-in")
    old = cx.store("coder", "deploys run from any branch")
    repeated = cx.store("coder", "Retry the payment webhook at most three times with backoff")
    path = session_with_everything(tmp_path / "s.jsonl", old.id)
    before = {a: state(cx, a) for a in ("coder", "reviewer")}
    report = cx.capture_transcript("coder", path)
    assert report.run and report.superseded == [old.id] and report.confirmed == [repeated.id]
    after = {a: state(cx, a) for a in ("coder", "reviewer")}
    assert after != before
    assert after["coder"][repeated.id]["confidence"] > before["coder"][repeated.id]["confidence"]
    assert after["coder"][old.id]["superseded_by"] and after["coder"][old.id]["valid_until"]
    [info] = cx.capture_runs("coder")
    assert (info.run, info.session, info.file, info.undone_at) == (report.run, "sess-1", "s.jsonl", None)
    # created: learnings, the summary, the reviewer's task outcome; changed: the confirmed and the superseded memory
    assert (info.created, info.changed) == (len(report.stored) + 1 + len(report.tasks), 2 + len(report.used))
    undone = cx.undo_capture("coder", "last")
    assert undone.run == report.run and cx.capture_runs("coder")[0].undone_at is not None
    assert set(undone.removed) == {m.id for m in [*report.stored, *report.tasks, report.summary]}
    assert {a: state(cx, a) for a in ("coder", "reviewer")} == before  # exactly: versions, confidence, supersession
    record = cx.sparql("SELECT ?run ?u WHERE { GRAPH ?g { ?r ?type ?class ; ?p ?run ; ?q ?u } "
                       "FILTER(STRENDS(STR(?class), 'CaptureRun') && STRENDS(STR(?p), 'agentmem:run') "
                       "&& STRENDS(STR(?q), 'undoneAt')) }")
    assert [row["run"].value for row in record.rows] == [report.run]  # recorded in provenance, marked undone
    assert cx.validate_store() == []  # the run's record and its undo keep to the shapes (am:CaptureRunShape)
    with pytest.raises(UndoConflictError, match="undone already"):
        cx.undo_capture("coder", report.run)
    with pytest.raises(RunNotFoundError, match="capture run"):
        cx.undo_capture("coder", "last")
    again = cx.capture_transcript("coder", path)  # the checkpoint is free again: the same part is captured anew
    assert {m.content for m in again.stored} == {m.content for m in report.stored} and again.run != report.run


def test_undo_is_refused_when_a_memory_was_edited_since_unless_forced(cx, tmp_path):
    cx.llm = None
    path = write(tmp_path / "s.jsonl", text("user", "go"), text("assistant", "LEARNED: captured then edited"))
    report = cx.capture_transcript("coder", path)
    memory = report.stored[0]
    cx.update("coder", memory.id, content="edited by a person after the capture")
    before = state(cx, "coder")
    with pytest.raises(UndoConflictError, match=f"{memory.id} .*changed since"):
        cx.undo_capture("coder", report.run)
    assert state(cx, "coder") == before  # nothing changed
    cx.undo_capture("coder", report.run, force=True)
    assert state(cx, "coder") == {}


def test_undo_names_bad_runs_and_keeps_to_the_agent(cx, tmp_path):
    cx.llm = None
    report = cx.capture_transcript("coder", write(tmp_path / "s.jsonl", text("assistant", "LEARNED: mine alone")))
    with pytest.raises(InvalidInputError, match="run: not a capture run id"):
        cx.undo_capture("coder", "yesterday")
    with pytest.raises(RunNotFoundError):
        cx.undo_capture("reviewer", report.run)  # another agent's run is not found in its memory
    assert [m.content for m in cx.list_memories("coder").items] == ["mine alone"]
    nothing = cx.capture_transcript("coder", tmp_path / "s.jsonl")
    assert nothing.run is None  # wrote nothing: nothing to undo


# -- every surface -----------------------------------------------------------------------------------------

def test_http_and_client_list_dry_run_and_undo_with_rights(tmp_path):
    from cortex.api.client import RemoteCortex

    project = make_project(tmp_path / "proj", "coder", "reviewer")
    path = write(tmp_path / "t.jsonl", text("user", "hi"), text("assistant", "LEARNED: captured over HTTP"))
    server = start_server(project, CORTEX_EMBEDDINGS="none")
    try:
        admin = {"Authorization": f"Bearer {server.token}"}
        base = f"{server.url}/v1/agents/coder"
        dry = httpx.post(f"{base}/transcripts", json={"path": str(path), "dry_run": True}, headers=admin)
        assert dry.status_code == 200 and dry.json()["dry_run"] is True
        assert [m["content"] for m in dry.json()["stored"]] == ["captured over HTTP"]
        assert httpx.get(f"{base}/list", headers=admin).json()["items"] == []
        done = httpx.post(f"{base}/transcripts", json={"path": str(path)}, headers=admin).json()
        listed = httpx.get(f"{base}/list", params={"session": "sess-1", "since": "1h"}, headers=admin)
        assert [m["content"] for m in listed.json()["items"]] == ["captured over HTTP"]
        bad = httpx.get(f"{base}/list", params={"since": "soon"}, headers=admin)
        assert bad.status_code == 422 and "since" in bad.text
        tokens = {}
        for agent in ("coder", "reviewer"):
            made = cortex(project, "token", "create", "--agent", agent, CORTEX_EMBEDDINGS="none")
            assert made.returncode == 0, made.stderr
            tokens[agent] = {"Authorization": f"Bearer {made.stdout.strip()}"}
        foreign = httpx.post(f"{base}/transcripts/undo", json={"run": done["run"]}, headers=tokens["reviewer"])
        assert foreign.status_code == 404  # another agent's token: refused, without a hint that coder exists
        assert [m["content"] for m in httpx.get(f"{base}/list", headers=admin).json()["items"]] == \
            ["captured over HTTP"]
        client = RemoteCortex(server.url, token=server.token)
        client.update("coder", done["stored"][0]["id"], content="edited since the capture")
        refused = httpx.post(f"{base}/transcripts/undo", json={"run": "last"}, headers=tokens["coder"])
        assert refused.status_code == 409 and "changed since" in refused.text
        undone = client.undo_capture("coder", done["run"], force=True)
        assert undone.removed == [done["stored"][0]["id"]]
        assert client.list_memories("coder").items == []
        again = client.capture_transcript("coder", str(path))
        assert [m.content for m in again.stored] == ["captured over HTTP"]
        assert [m.content for m in client.list_memories("coder", session="sess-1", since="1h").items] == \
            ["captured over HTTP"]
        assert client.capture_transcript("coder", str(path), dry_run=True).dry_run
        own = httpx.post(f"{base}/transcripts/undo", json={}, headers=tokens["coder"])
        assert own.status_code == 200 and own.json()["run"] == again.run
        runs = httpx.get(f"{base}/transcripts/runs", headers=tokens["coder"]).json()
        assert [r["run"] for r in runs] == [again.run, done["run"]] and all(r["undone_at"] for r in runs)
        assert httpx.get(f"{base}/transcripts/runs", headers=tokens["reviewer"]).status_code == 404
        assert [r.run for r in client.capture_runs("coder")] == [again.run, done["run"]]
    finally:
        server.stop()


def test_cli_list_dry_run_and_undo(tmp_path):
    project = make_project(tmp_path / "proj", "coder")
    path = write(tmp_path / "t.jsonl", text("user", "hi"), text("assistant", "LEARNED: captured by the CLI"))
    run = lambda *args: cortex(project, *args, CORTEX_EMBEDDINGS="none")  # noqa: E731
    dry = run("capture", "coder", "--transcript", str(path), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["dry_run"] is True and "nothing was written" in dry.stderr
    assert json.loads(run("list", "coder", "--format", "json").stdout)["items"] == []
    done = json.loads(run("capture", "coder", "--transcript", str(path)).stdout)
    listed = run("list", "coder", "--session", "sess-1", "--since", "2h", "--format", "json")
    assert [m["content"] for m in json.loads(listed.stdout)["items"]] == ["captured by the CLI"]
    bad = run("list", "coder", "--since", "later")
    assert bad.returncode != 0 and "since" in bad.stderr
    runs = json.loads(run("capture", "coder", "--runs").stdout)
    assert [r["run"] for r in runs] == [done["run"]] and runs[0]["session"] == "sess-1"
    undone = run("capture", "coder", "--undo", "last")
    assert undone.returncode == 0, undone.stderr
    assert json.loads(undone.stdout)["run"] == done["run"]
    assert json.loads(run("list", "coder", "--format", "json").stdout)["items"] == []
    missing = run("capture", "coder", "--undo", "last")
    assert missing.returncode != 0 and "capture run" in missing.stderr
    both = run("capture", "coder", "--transcript", str(path), "--undo", "last")
    assert both.returncode != 0


def test_mcp_list_dry_run_and_undo(tmp_path):
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    project = make_project(tmp_path / "proj", "coder")
    path = write(tmp_path / "t.jsonl", text("user", "hi"), text("assistant", "LEARNED: captured through MCP"))

    async def run() -> None:
        params = StdioServerParameters(command=sys.executable, args=["-m", "cortex", "mcp"], cwd=str(project),
                                       env=env(CORTEX_EMBEDDINGS="none"))
        async with stdio_client(params) as (read, write_), ClientSession(read, write_) as session:
            await session.initialize()

            async def call(tool: str, **arguments: object) -> dict:
                result = await session.call_tool(tool, arguments)
                assert not result.is_error, result.content
                return result.structured_content or {}

            dry = await call("capture_transcript", agent="coder", path=str(path), dry_run=True)
            assert dry["dry_run"] and [m["content"] for m in dry["stored"]] == ["captured through MCP"]
            assert (await call("list_memories", agent="coder"))["items"] == []
            done = await call("capture_transcript", agent="coder", path=str(path))
            listed = await call("list_memories", agent="coder", session="sess-1", since="1h")
            assert [m["content"] for m in listed["items"]] == ["captured through MCP"]
            runs = await call("capture_runs", agent="coder")
            assert [r["run"] for r in runs["result"]] == [done["run"]]
            undone = await call("undo_capture", agent="coder", run="last")
            assert undone["run"] == done["run"]
            assert (await call("list_memories", agent="coder"))["items"] == []
            bad = await session.call_tool("list_memories", {"agent": "coder", "since": "whenever"})
            assert bad.is_error and "since" in bad.content[0].text

    asyncio.run(run())


def test_twenty_captures_undone_one_by_one_leave_the_store_exactly_as_before(cx, tmp_path, llm):
    """Measured: 20 captures of 20 sessions (marker lines, repeats of stored memories, supersessions, subagent
    outcomes, the model's lessons and summaries), each listed by its session, then undone latest first: after each
    undo every memory of both agents is exactly as it was before that capture."""
    cx.llm = LLMSettings(url=llm.url, model="stand-in")
    seeds = [cx.store("coder", f"seeded fact number {i} about the billing service") for i in range(20)]
    states, runs = [], []
    for i in range(20):
        states.append({a: state(cx, a) for a in ("coder", "reviewer")})
        session = f"sess-{i}"
        path = write(tmp_path / f"s{i}.jsonl", text("user", f"task {i}", session),
                     text("assistant", f"LEARNED: learned fact number {i} about the queue workers\n"
                                       f"LEARNED: seeded fact number {i} about the billing service\n"
                                       + (f"SUPERSEDES {seeds[i].id}: replaced fact {i} about billing\n" if i % 3 == 0
                                          else "")
                                       + f"LESSON: Lesson number {i}: the cache of service {i} needs a warm-up",
                          session),
                     *[dict(e, sessionId=session) for e in subagent_call("reviewer", f"Review change {i}", "ok")])
        report = cx.capture_transcript("coder", path)
        assert report.run and report.stored, report
        made = {m.id for m in [*report.stored, *([report.summary] if report.summary else [])]}
        listed = {m.id for m in cx.list_memories("coder", session=session, limit=100,
                                                 include_superseded=True).items}
        assert listed == made
        runs.append(report.run)
    for i in reversed(range(20)):
        assert cx.undo_capture("coder", "last").run == runs[i]
        assert {a: state(cx, a) for a in ("coder", "reviewer")} == states[i], f"capture {i} not undone exactly"


@pytest.mark.server
@pytest.mark.parametrize("kind", ["oxigraph", "virtuoso"])
def test_list_by_session_and_undo_on_a_sparql_server(request, tmp_path, kind):
    from tests.conftest import remote_location

    with Cortex.open(remote_location(request, kind), embeddings=None) as cx:
        for name in ("coder", "reviewer"):
            cx.agents.register(name)
        cx.llm = None
        old = cx.store("coder", "deploys run from any branch")
        before = state(cx, "coder")
        path = write(tmp_path / "s.jsonl", text("user", "go"),
                     text("assistant", f"LEARNED: captured on a server\nSUPERSEDES {old.id}: deploys from main only"),
                     *subagent_call("reviewer", "Review it", "fine"))
        report = cx.capture_transcript("coder", path)
        assert report.run and report.superseded == [old.id]
        assert {m.content for m in cx.list_memories("coder", session="sess-1").items} == \
            {"captured on a server", "deploys from main only"}
        assert [r.run for r in cx.capture_runs("coder")] == [report.run]
        undone = cx.undo_capture("coder", "last")
        assert undone.restored == [old.id] and state(cx, "coder") == before and state(cx, "reviewer") == {}


def test_undo_brings_back_what_the_captures_prune_deleted(cx, tmp_path):
    cx.llm = None
    weak = cx.store("coder", "a weak guess about the cache layer", confidence=0.1)
    before = state(cx, "coder")
    report = cx.capture_transcript("coder", write(tmp_path / "s.jsonl", text("assistant", "LEARNED: a sure thing")))
    assert weak.id not in state(cx, "coder")  # the agent end's prune deleted it
    assert cx.capture_runs("coder")[0].pruned == 1
    undone = cx.undo_capture("coder", report.run)
    assert weak.id in undone.restored and state(cx, "coder") == before
