"""Regression tests for the adversarial probe's findings (issue "Hardening"): each reproduces the reported attack
and shows that nothing is lost and the answer is a clear error."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import subprocess
import sys
import textwrap
import time

import httpx
import pytest

from cortex import Cortex, CortexError, InvalidInputError, StoreLockedError
from cortex.service.auth import TokenStore
from cortex.service.guard import Limits
from cortex.service.http import create_app
from tests.conftest import open_agents, triples_of
from tests.service_helpers import cortex, make_project, run_cli, start_server

LONE = "\ud800"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def asgi(app) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8765")


# -- finding 1: an overflowing usage count destroyed the memory on touch ----------------------------------------


def test_usage_counts_are_bounded_where_they_are_accepted(cx):
    sentinel = cx.store("reviewer", "sentinel")
    for bad in (2**63 - 1, 2**53 + 1, -1):
        with pytest.raises(InvalidInputError, match=r"entries\[0\]\.usage_count"):
            cx.store_many("reviewer", [{"content": "huge", "usage_count": bad}])
    assert cx.count("reviewer") == 1 and cx.get("reviewer", sentinel.id) == sentinel
    top = cx.store_many("reviewer", [{"content": "most used", "usage_count": 2**53}])[0]
    assert cx.touch("reviewer", top.id).usage_count == 2**53 + 1  # the bound leaves room to count
    assert len(triples_of(cx, "reviewer", top.id)) == 9


@pytest.mark.anyio
async def test_the_batch_route_refuses_an_overflowing_count_and_touch_loses_nothing(cx):
    cx.agents.register("alice")
    async with cx_app(cx) as api:
        r = await api.post("/v1/agents/alice/memories/batch",
                           json={"entries": [{"content": "x", "usage_count": 2**63 - 1}]})
        assert r.status_code == 422 and r.json()["error"]["field"] == "entries[0].usage_count"
        r = await api.post("/v1/agents/alice/memories/batch", json={"entries": [{"content": "x", "usage_count": 7}]})
        memory = r.json()[0]
        r = await api.post(f"/v1/agents/alice/memories/{memory['id']}/touch")
        assert r.status_code == 200 and r.json()["usage_count"] == 8
    assert cx.count("alice") == 1


class cx_app:
    def __init__(self, cx, **options) -> None:
        self.app = create_app(cx, mcp=False, **options)

    async def __aenter__(self) -> httpx.AsyncClient:
        self._lifespan = self.app.router.lifespan_context(self.app)
        await self._lifespan.__aenter__()
        self.client = asgi(self.app)
        return self.client

    async def __aexit__(self, *exc) -> None:
        await self.client.aclose()
        await self._lifespan.__aexit__(*exc)


# -- finding 2: the body was read and parsed before the token was checked, without a size limit ---------------


def test_a_huge_body_without_a_token_is_refused_from_the_headers(tmp_path):
    project = make_project(tmp_path / "p", "alice")
    server = start_server(project, CORTEX_MAX_BODY_BYTES="100000")
    try:
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(b"POST /v1/agents/alice/memories/batch HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         b"Content-Type: application/json\r\nContent-Length: 400000000\r\n\r\n{\"entries\": [")
            started = time.monotonic()
            answer = b""
            while b"}}" not in answer:
                part = sock.recv(65536)
                if not part:
                    break
                answer += part
            answer = answer.decode()
            assert time.monotonic() - started < 5  # answered before any body arrived
        assert answer.startswith("HTTP/1.1 401") and "missing bearer token" in answer
        auth = {"Authorization": f"Bearer {server.token}"}
        too_big = httpx.post(f"{server.url}/v1/agents/alice/memories/batch", headers=auth,
                             json={"entries": [{"content": "x" * 1000}] * 200})
        assert too_big.status_code == 413 and "over the limit of 100000 bytes" in too_big.json()["error"]["message"]

        def chunks():
            yield b'{"entries": ['
            for _ in range(200):
                yield b'{"content": "' + b"y" * 1000 + b'"},'
            yield b'{"content": "z"}]}'

        chunked = httpx.post(f"{server.url}/v1/agents/alice/memories/batch", content=chunks(),
                             headers=auth | {"Content-Type": "application/json"})
        assert chunked.status_code == 413
        ok = httpx.post(f"{server.url}/v1/agents/alice/memories", headers=auth, json={"content": "still fine"})
        assert ok.status_code == 201
        assert [m["content"] for m in httpx.get(f"{server.url}/v1/agents/alice/memories", headers=auth).json()] == [
            "still fine"]
    finally:
        server.stop()


@pytest.mark.anyio
async def test_a_body_that_does_not_arrive_in_time_is_answered_408(cx):
    cx.agents.register("alice")
    app = create_app(cx, mcp=False, limits=Limits(max_body_bytes=10_000, body_timeout=0.3))
    messages = [{"type": "http.request", "body": b'{"content": ', "more_body": True}]
    sent: list[dict] = []

    async def receive():
        if messages:
            return messages.pop(0)
        await asyncio.sleep(10)  # the rest never comes

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/v1/agents/alice/memories", "raw_path": b"",
             "query_string": b"", "headers": [(b"content-type", b"application/json"), (b"host", b"127.0.0.1")],
             "http_version": "1.1", "scheme": "http", "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1),
             "root_path": ""}
    await asyncio.wait_for(app(scope, receive, send), timeout=5)
    assert sent[0]["status"] == 408 and cx.count("alice") == 0


# -- finding 3: one agent file with an enormous max_age crashed every command -----------------------------------


def test_an_overflowing_duration_in_one_agent_file_is_reported_and_skipped(tmp_path, caplog):
    project = make_project(tmp_path / "p", "alice")
    (project / "agent_defs" / "broken.md").write_text(
        "---\nname: broken\ndescription: x\nmemory: true\ncortex:\n  prune: {max_age: 1000000000d}\n---\n")
    check = run_cli(project, "agents", "check")
    assert check.returncode == 1 and "broken.md: cortex.prune.max_age:" in check.stdout
    assert "largest duration" in check.stdout
    stored = run_cli(project, "store", "alice", "works for everyone else")
    assert stored.returncode == 0 and "warning" in stored.stderr and "broken.md" in stored.stderr
    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None) as cx:
        assert cx.count("alice") == 1 and "broken" not in cx.agents
    assert "broken.md: cortex.prune.max_age" in caplog.text


# -- finding 5: a project name with a lone surrogate was not validated -----------------------------------------


def test_a_lone_surrogate_in_a_project_is_a_field_error_everywhere(cx, tmp_path):
    with pytest.raises(InvalidInputError, match="^project: contains unpaired surrogate"):
        cx.store("reviewer", "x", project=f"p{LONE}")
    with pytest.raises(InvalidInputError, match=r"^entries\[0\]\.project"):
        cx.store_many("reviewer", [{"content": "x", "project": LONE}])
    with pytest.raises(InvalidInputError, match="^project"):
        cx.agent_end("reviewer", "LEARNED: x", project=LONE)
    with pytest.raises(InvalidInputError, match="^project"):
        cx.recall("reviewer", project=LONE)
    assert cx.count("reviewer") == 0
    project = make_project(tmp_path / "p", "alice")
    result = run_cli(project, "store", "alice", "x", "--project", LONE)
    assert result.returncode == 1 and result.stderr.startswith("cortex: error: project: contains unpaired")


@pytest.mark.anyio
async def test_a_lone_surrogate_in_a_project_is_422_on_every_route(cx):
    cx.agents.register("alice")
    escaped = json.dumps(LONE)[1:-1]  # "\\ud800" in the JSON text
    async with cx_app(cx) as api:
        for path, body in (("memories", f'{{"content": "x", "project": "{escaped}"}}'),
                           ("memories/batch", f'{{"entries": [{{"content": "x", "project": "{escaped}"}}]}}'),
                           ("end", f'{{"output": "LEARNED: x", "project": "{escaped}"}}')):
            r = await api.post(f"/v1/agents/alice/{path}", content=body, headers={"Content-Type": "application/json"})
            assert r.status_code == 422, (path, r.text)
            assert r.json()["error"]["field"].endswith("project")
    assert cx.count("alice") == 0


# -- finding 6: very large max_age values overflowed -----------------------------------------------------------


@pytest.mark.parametrize("max_age", ["1000000000d", "999999999d", "740000d"])
def test_huge_max_age_values(cx, max_age, tmp_path):
    kept = cx.store("reviewer", "kept", confidence=0.9)
    if max_age == "1000000000d":
        with pytest.raises(InvalidInputError, match="max_age: .* longer than the largest duration"):
            cx.prune("reviewer", max_age=max_age)
    else:
        assert cx.prune("reviewer", max_age=max_age) == 0  # nothing can be unused for that long
    assert cx.get("reviewer", kept.id) is not None
    project = make_project(tmp_path / "p", "alice")
    result = run_cli(project, "prune", "alice", "--max-age", max_age)
    assert result.returncode == (1 if max_age == "1000000000d" else 0), result.stderr


@pytest.mark.anyio
async def test_huge_max_age_over_http(cx):
    cx.agents.register("alice")
    async with cx_app(cx) as api:
        r = await api.post("/v1/agents/alice/prune", json={"max_age": "1000000000d"})
        assert r.status_code == 422 and r.json()["error"]["field"] == "max_age"
        r = await api.post("/v1/agents/alice/prune", json={"max_age": "800000d"})
        assert r.status_code == 200 and r.json()["count"] == 0


# -- finding 8: a malformed token file made requests answer 500 --------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("content", ["{not json", '{"tokens": "nope"}', '[1, 2]', '{"tokens": [{"agent": 3}]}'])
async def test_a_malformed_token_file_answers_503_with_the_reason(cx, tmp_path, caplog, content):
    cx.agents.register("alice")
    tokens = TokenStore(tmp_path)
    good = tokens.create("alice")
    (tmp_path / "cortex-tokens.json").write_text(content)
    async with cx_app(cx, tokens=tokens) as api:
        for headers in ({"Authorization": f"Bearer {good}"}, {"Authorization": "Bearer wrong"}):
            r = await api.get("/v1/agents/alice/stats", headers=headers)
            assert r.status_code == 503 and "token file is unreadable or malformed" in r.json()["error"]["message"]
            assert str(tmp_path) not in r.text  # a client learns nothing of the server's files (round 2, finding 8)
    assert "cortex-tokens.json is unreadable or malformed" in caplog.text and str(tmp_path) in caplog.text


# -- finding 9: a bad agent name through a server answered "404: Not Found" ------------------------------------


def test_a_bad_agent_name_through_the_server_names_the_field(tmp_path):
    project = make_project(tmp_path / "p", "alice")
    server = start_server(project)
    try:
        for name in ("a/b", "../x", "Bad Name"):
            result = cortex(project, "store", name, "x")
            assert result.returncode == 1 and "agent: invalid agent name" in result.stderr, result.stderr
        missing = httpx.get(f"{server.url}/v1/no/such/route", headers={"Authorization": f"Bearer {server.token}"})
        assert missing.status_code == 404
        assert missing.json()["error"]["message"].startswith("no route GET /v1/no/such/route")
    finally:
        server.stop()


# -- finding 10: MCP over stdio did not answer a line it could not parse ---------------------------------------


def test_mcp_stdio_answers_every_line(tmp_path):
    from cortex.service.stdio import parse_line

    for line, code, request_id in [
        (b"not json", -32700, None),
        (b"\xff\xfe{", -32700, None),
        (b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "x \\ud800"}}', -32600, 7),
        (b'{"jsonrpc": "2.0", "id": "a", "nonsense": true}', -32600, "a"),
        (b"[1, 2, 3]", -32600, None),
    ]:
        message = parse_line(line).message
        assert message.error.code == code and message.id == request_id, line
    ok = parse_line(b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}').message
    assert ok.method == "tools/list"


# -- finding 11: StoreLockedError named the wrong process when several opened at once ------------------------


def test_the_lock_error_names_the_process_that_holds_the_store(tmp_path):
    path = tmp_path / "store"
    Cortex.open(path, embeddings=None).close()
    (path / "cortex-owner.json").write_text(json.dumps({"pid": 1}))  # stale: as if another process raced us
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent("""
            import sys, pyoxigraph
            store = pyoxigraph.Store(sys.argv[1])  # holds the lock without writing an owner file
            print("ready", flush=True); sys.stdin.readline()
        """), str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(StoreLockedError) as info:
            Cortex.open(path, embeddings=None)
        assert info.value.pid == holder.pid
    finally:
        holder.communicate("\n", timeout=30)


# -- finding 12: memory text was readable by other local users --------------------------------------------------


def test_store_and_state_directories_are_private(tmp_path):
    path = tmp_path / "store"
    with open_agents(path, "a") as cx:
        cx.store_many("a", [{"content": f"secret {i}"} for i in range(1100)])
    for directory in (path, path / "cortex-index" / "a"):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory
    assert stat.S_IMODE((path / "cortex-index" / "a" / "snapshot.npz").stat().st_mode) == 0o600
    path.chmod(0o755)  # a store created before: tightened when opened
    Cortex.open(path, embeddings=None).close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o700


def test_hook_logs_and_state_are_private(tmp_path):
    from cortex.service.hooks import run

    project = make_project(tmp_path / "p", "alice")
    run("NoSuchEvent", json.dumps({"cwd": str(project)}))  # logged
    logs = project / ".cortex" / "logs"
    assert "not an event Cortex handles" in (logs / "hooks.log").read_text()
    assert stat.S_IMODE(logs.stat().st_mode) == 0o700


def test_every_error_the_findings_produce_is_a_cortex_error(cx):
    for call in (lambda: cx.store("reviewer", "x", project=LONE),
                 lambda: cx.prune("reviewer", max_age="1000000000d"),
                 lambda: cx.store_many("reviewer", [{"content": "x", "usage_count": 2**63}])):
        with pytest.raises(CortexError):
            call()
    assert os.environ.get("CORTEX_EMBEDDINGS") == "none"


# -- a second probe: what it found, each fixed -----------------------------------------------------------------


def test_an_mcp_request_id_with_a_lone_surrogate_is_answered_with_a_null_id():
    from cortex.service.stdio import parse_line

    message = parse_line(b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "tools/list"}').message
    assert message.error.code == -32600 and message.id is None
    message.model_dump_json()  # and the answer can be written


@pytest.mark.anyio
async def test_an_error_naming_a_lone_surrogate_can_be_sent(cx):
    cx.agents.register("alice")
    async with cx_app(cx) as api:
        r = await api.post("/v1/agents/alice/memories/batch", content='{"entries": [{"content": "x", "\\ud800": 1}]}',
                           headers={"Content-Type": "application/json"})
        assert r.status_code == 422 and r.json()["error"]["field"] == "entries[0].\\ud800"
        r = await api.get("/v1/agents/alice/search", params={"query": "x", "rerank": '{"\\ud800": true}'})
        assert r.status_code == 422 and r.json()["error"]["field"] == "rerank"
        r = await api.post("/v1/agents/alice/memories/batch", content="[1, 2]",
                           headers={"Content-Type": "application/json"})
        assert r.status_code == 422 and r.json()["error"]["field"] == "body"
        r = await api.post("/v1/agents/alice/memories", content=b'{"content": "\xff"}',
                           headers={"Content-Type": "application/json"})
        assert r.status_code == 400 and r.json()["error"]["message"] == "request body is not valid JSON in UTF-8"


def test_the_client_names_the_field_of_text_that_is_not_unicode(tmp_path):
    project = make_project(tmp_path / "p", "alice")
    server = start_server(project)
    try:
        for args, field in ((["store", "alice", LONE], "content"), (["recall", "alice", LONE], "query"),
                            (["search", "alice", LONE], "query"), (["start", "alice", "--task", LONE], "task"),
                            (["recall", "alice", "x", "--project", LONE], "project")):
            result = run_cli(project, *args)
            assert result.returncode == 1 and result.stderr.startswith(f"cortex: error: {field}: contains unpaired"), (
                args, result.stderr)
        bad_token = run_cli(project, "stats", "alice", env={"CORTEX_TOKEN": "caf\u00e9"})
        assert bad_token.returncode == 1 and "tokens are ASCII" in bad_token.stderr
    finally:
        server.stop()


def test_queries_and_tasks_are_bounded(cx):
    with pytest.raises(InvalidInputError, match="^query: is .* bytes; the limit is 65536"):
        cx.search("reviewer", "word " * 20_000)
    with pytest.raises(InvalidInputError, match="^task: is"):
        cx.agent_start("reviewer", task="word " * 20_000)


def test_a_huge_transcript_does_not_stop_later_captures(tmp_path):
    from cortex.service import hooks

    project = make_project(tmp_path / "p", "alice")
    transcript = project / "t.jsonl"  # inside the project: a hook reads transcripts there or in ~/.claude
    line = json.dumps({"type": "assistant", "message": {"role": "assistant", "content": "x" * 3_000_000}})
    transcript.write_text("\n".join([line] * 12) + "\n")
    payload = {"cwd": str(project), "agent_type": "alice", "agent_transcript_path": str(transcript),
               "last_assistant_message": "LEARNED: the last message still counts"}
    hooks.run("SubagentStop", json.dumps(payload))
    with open(transcript, "a") as fh:
        fh.write(json.dumps({"type": "assistant", "message": {"role": "assistant",
                                                               "content": "DECISION: and so does a later line"}}) + "\n")
    hooks.run("SubagentStop", json.dumps(payload | {"last_assistant_message": "done"}))
    with open_agents(project / ".cortex" / "store", "alice") as cx:
        learned = sorted(m.content for m in cx.recall("alice") if m.source != "task_completion")
        assert learned == ["and so does a later line", "the last message still counts"]


def test_a_fifo_where_a_file_belongs_never_hangs(tmp_path):
    project = make_project(tmp_path / "p", "alice")
    assert run_cli(project, "store", "alice", "seed").returncode == 0
    store = project / ".cortex" / "store"
    for name in ("cortex-index/alice/snapshot.npz", "cortex-server.json", "cortex-tokens.json"):
        path = store / name
        path.unlink(missing_ok=True)
        os.mkfifo(path)
    os.mkfifo(store / "cortex-index" / "alice" / "vectors.log.fifo")
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "cortex", "recall", "alice"], cwd=project, capture_output=True,
                            text=True, timeout=60, env=dict(os.environ, CORTEX_STORE=""))
    assert result.returncode == 0 and "seed" in result.stdout and time.monotonic() - started < 30
    from cortex.service import hooks

    out = hooks.run("SubagentStart", json.dumps({"cwd": str(project), "agent_type": "alice"}))
    assert "seed" in out
    fifo_transcript = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo_transcript)
    hooks.run("SubagentStart", json.dumps({"cwd": str(project), "agent_type": "alice",
                                           "transcript_path": str(fifo_transcript)}))


def test_a_hook_with_a_missing_cwd_creates_nothing(tmp_path):
    from cortex.service import hooks

    missing = tmp_path / "nowhere" / "x"
    assert hooks.run("SubagentStop", json.dumps({"cwd": str(missing), "agent_type": "alice",
                                                 "last_assistant_message": "LEARNED: lost?"})) == ""
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize(("name", "content"), [
    ("settings", {"hooks": "x"}), ("settings", {"hooks": {"SubagentStart": "x"}}),
    ("settings", {"hooks": {"SubagentStart": [1]}}), ("mcp", {"mcpServers": [1]})])
def test_install_refuses_wrongly_shaped_settings_and_changes_nothing(tmp_path, name, content):
    project = make_project(tmp_path / "p", "alice")
    path = project / ".claude" / "settings.json" if name == "settings" else project / ".mcp.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content))
    for command in ("install", "uninstall"):
        result = run_cli(project, command, "claude")
        assert result.returncode == 1 and "nothing was changed" in result.stderr
        assert json.loads(path.read_text()) == content


def test_an_oversized_agent_file_is_reported_not_parsed(tmp_path):
    project = make_project(tmp_path / "p", "alice")
    (project / "agent_defs" / "huge.md").write_text("---\nname: huge\ndescription: " + "x" * 2_000_000 + "\n---\n")
    check = run_cli(project, "agents", "check")
    assert check.returncode == 1 and "huge.md: file: is over 1024 KiB" in check.stdout
