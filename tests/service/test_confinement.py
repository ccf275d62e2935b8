"""Confinement of every file Cortex reads on a caller's behalf (issue 29, findings 2, 3, 4 and 10): the file is opened
once and checked on its handle (its real path under the caller's directories, never Cortex's own files), the
queue reads under the confinement of who queued, importers and notes do not follow links out, and a served
store's project is its own, not the server's current directory."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import httpx
import pytest

from cortex import Cortex
from cortex.service.auth import TokenStore
from tests.llm_standin import Delay, StandIn
from tests.service_helpers import asgi_request, make_project, start_server

SECRET = "the server user's private diary entry 7431"


def _line(role: str, text: str) -> str:
    return f"{'User' if role == 'user' else 'Assistant'}: {text}\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file of the server's user outside every project."""
    path = tmp_path / "elsewhere" / "diary.txt"
    path.parent.mkdir()
    path.write_text(_line("assistant", f"LEARNED: {SECRET}"))
    return path


def _contents(url: str, token: str, agent: str = "coder") -> list[str]:
    answer = httpx.get(f"{url}/v1/agents/{agent}/memories", params={"limit": 1000},
                       headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200, answer.text
    return [m["content"] for m in answer.json()]


def _drain(url: str, token: str, jobs: int, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = httpx.get(f"{url}/v1/capture/queue", headers={"Authorization": f"Bearer {token}"}).json()
        if status["done"] + status["failed"] >= jobs and not status["running"] and not status["waiting"]:
            return status
        time.sleep(0.1)
    raise AssertionError(f"the queue did not finish: {status}")


def test_a_transcript_swapped_for_a_link_after_it_was_queued_is_not_read(tmp_path, outside):
    """Finding 2: `wait: false` checks the path when queued; the worker reads it later. A regular file of the
    project swapped for a symbolic link out of it in between must not be read (nor sent to the model)."""
    project = make_project(tmp_path / "proj", "coder")
    with StandIn() as llm:
        llm.script(Delay(3.0, json.dumps({"memories": []})))  # the first capture holds the worker for 3 s
        server = start_server(project, CORTEX_LLM_URL=llm.url, CORTEX_LLM_MODEL="stand-in")
        try:
            agent = TokenStore(server.store).create("coder")
            first, second = project / "first.txt", project / "second.txt"
            first.write_text(_line("user", "Speed up the build") + _line("assistant", "Cached the wheels."))
            second.write_text(_line("assistant", "LEARNED: an honest learning of the project"))
            for path in (first, second):
                queued = httpx.post(f"{server.url}/v1/agents/coder/transcripts", json={"path": str(path),
                                    "wait": False}, headers={"Authorization": f"Bearer {agent}"})
                assert queued.status_code == 202 and queued.json()["queued"], queued.text
            second.unlink()
            second.symlink_to(outside)  # while the worker is busy with the first
            status = _drain(server.url, server.token, 2)
            assert status["failed"] == 1 and "outside the directories" in status["last_error"], status
            assert not any(SECRET in c for c in _contents(server.url, server.token))
            assert not any(SECRET in json.dumps(r) for r in llm.requests)  # nothing of it went to the model
        finally:
            server.stop()


@pytest.mark.parametrize("kind", ["middle-link", "hard-link", "proc", "fifo", "own-token", "own-config"])
def test_what_an_agent_token_cannot_have_the_server_read(tmp_path, monkeypatch, outside, kind):
    """Findings 2 and 10, the synchronous path: a link in a middle component, a hard link to an outside file,
    /proc, a FIFO (which must not hang), the store's own token and discovery files, the project's settings."""
    from cortex.service.http import create_app

    project = make_project(tmp_path / "proj", "coder")
    monkeypatch.chdir(project)
    store = project / ".cortex" / "store"
    with Cortex.open(store, embeddings=None) as cx:
        cx.agents.register("coder")
        cx.llm = None
        tokens = TokenStore(store)
        admin, agent = tokens.create(None), tokens.create("coder")
        if kind == "middle-link":
            (project / "logs").symlink_to(outside.parent, target_is_directory=True)
            path = project / "logs" / outside.name
        elif kind == "hard-link":
            path = project / "session.txt"
            os.link(outside, path)
        elif kind == "proc":
            path = Path("/proc/self/environ")
        elif kind == "fifo":
            path = project / "pipe.txt"
            os.mkfifo(path)
        elif kind == "own-token":
            (store / "cortex-server.json").write_text(json.dumps({"token": "ctx_the_admin_token", "pid": 1}))
            path = store / "cortex-server.json"
        else:
            (project / ".cortex" / "config.toml").write_text('[llm]\napi_key = "sk-the-model-key"\n')
            path = project / ".cortex" / "config.toml"
        app = create_app(cx, tokens=tokens, allowed_hosts=["127.0.0.1"], mcp=False)
        for token in (agent, admin):
            answer = asgi_request(app, "POST", "/v1/agents/coder/transcripts", token, json={"path": str(path)})
            if token == admin and kind in ("middle-link", "hard-link"):
                assert answer.status_code == 200  # an admin may have any file read but Cortex's own
                continue
            assert answer.status_code in (403, 422), (kind, answer.status_code, answer.text)
            expected = {"middle-link": "only", "hard-link": "hard links", "proc": "pseudo file systems",
                        "fifo": "not a regular file", "own-token": "never read as input",
                        "own-config": "never read as input"}[kind]
            assert expected in answer.json()["error"]["message"], answer.text
        stored = [m.content for m in cx.list_memories("coder").items]
        assert not any("ctx_the_admin_token" in c or "sk-the-model-key" in c for c in stored)
        if kind in ("middle-link", "hard-link"):
            assert sum(SECRET in c for c in stored) == 1  # the admin's capture only


def test_an_import_of_a_directory_does_not_follow_links_out_of_it(tmp_path, monkeypatch):
    """Finding 3: MCP `import_memories_from` of a directory: a file linked out of it, a file in a linked
    directory, a hard link: not read, for an agent's token and an admin alike (a link out of the directory)."""
    from mcp import Client

    from cortex.service.auth import ADMIN, Principal
    from cortex.service.mcp import build_mcp

    project = make_project(tmp_path / "proj", "dev")
    monkeypatch.chdir(project)
    private = tmp_path / "private"
    private.mkdir()
    (private / "secrets.json").write_text(json.dumps({"results": [{"id": "m1", "memory": SECRET, "user_id": "dev"}]}))
    memory = project / "mem0"
    memory.mkdir()
    mine = {"results": [{"id": "m2", "memory": "the project uses uv", "user_id": "dev"}]}
    (memory / "mine.json").write_text(json.dumps(mine))
    (memory / "linked.json").symlink_to(private / "secrets.json")
    (memory / "sub").symlink_to(private, target_is_directory=True)
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register("dev")

        async def main() -> list[str]:
            texts = []
            for who in (Principal(agent="dev"), ADMIN):
                async with Client(build_mcp(lambda: cx, lambda request, who=who: who)) as client:
                    done = await client.call_tool("import_memories_from", {"system": "mem0", "path": str(memory),
                                                                            "agent": "dev"})
                    texts.append(json.dumps(done.structured_content) if not done.is_error else done.content[0].text)
                    outside = await client.call_tool("import_memories_from", {
                        "system": "mem0", "path": str(memory / "sub" / "secrets.json"), "agent": "dev"})
                    if who.admin:
                        assert not outside.is_error  # an admin names any file; the walk of a directory does not
                    else:
                        assert outside.is_error and "admin token" in outside.content[0].text
            return texts

        texts = asyncio.run(main())
        assert all("a link out of" in t for t in texts), texts
        stored = [m.content for m in cx.list_memories("dev").items]
        assert sum(SECRET in c for c in stored) == 1  # the admin's explicit file, not the walk


def test_notes_do_not_read_a_hard_link_to_an_outside_file(tmp_path, monkeypatch, outside):
    """Finding 3, notes: a notes file that is a hard link to a file outside the notes directory (its path
    cannot tell) is refused and named; the others are read."""
    project = make_project(tmp_path / "proj", "dev")
    monkeypatch.chdir(project)
    notes = project / ".cortex" / "notes" / "dev"
    notes.mkdir(parents=True)
    (notes / "ok.md").write_text("# Builds\n\nThe build uses uv.\n")
    os.link(outside, notes / "linked.md")
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register("dev")
        report = cx.sync_notes("dev")
        stored = [m.content for m in cx.list_memories("dev").items]
    assert not any(SECRET in c for c in stored)
    assert any("uv" in c for c in stored)
    assert any("hard links" in s for r in report for s in r.skipped), report


def test_a_store_served_from_another_directory_is_confined_to_its_own_project(tmp_path):
    """Finding 4: `cortex --store A/.cortex/store serve` run from project B: a token of A's store reads A's
    files (not B's), and A's transcripts go to A's model (its .cortex/config.toml), not B's."""
    a = make_project(tmp_path / "a", "coder")
    b = make_project(tmp_path / "b", "coder")
    in_a, in_b = a / "session.txt", b / "session.txt"
    in_a.write_text(_line("user", "Speed up the build") + _line("assistant", "LEARNED: a learning of project a"))
    in_b.write_text(_line("assistant", f"LEARNED: {SECRET} of project b"))
    store = a / ".cortex" / "store"
    with StandIn() as model_a, StandIn() as model_b:
        for root, model, name in ((a, model_a, "model-of-a"), (b, model_b, "model-of-b")):
            (root / ".cortex").mkdir(exist_ok=True)
            (root / ".cortex" / "config.toml").write_text(f'[llm]\nurl = "{model.url}"\nmodel = "{name}"\n')
        server = start_server(b, state_dir=store, CORTEX_STORE=str(store))
        try:
            agent = TokenStore(store).create("coder")
            auth = {"Authorization": f"Bearer {agent}"}
            b_answer = httpx.post(f"{server.url}/v1/agents/coder/transcripts", json={"path": str(in_b)},
                                  headers=auth, timeout=60)
            assert b_answer.status_code == 403, b_answer.text
            assert str(a.resolve()) in b_answer.json()["error"]["message"]
            a_answer = httpx.post(f"{server.url}/v1/agents/coder/transcripts", json={"path": str(in_a)},
                                  headers=auth, timeout=60)
            assert a_answer.status_code == 200, a_answer.text
            assert model_a.requests and not model_b.requests
            assert all(r["model"] == "model-of-a" for r in model_a.requests)
        finally:
            server.stop()


def test_the_users_server_gives_each_store_its_own_project_and_settings(tmp_path, monkeypatch):
    """Finding 4, the user's background server (one process, several stores), run from project B: A's store
    has A's project (what its tokens may read) and A's model settings, B's has B's."""
    from cortex.service.hub import Hub

    a = make_project(tmp_path / "a", "coder")
    b = make_project(tmp_path / "b", "coder")
    for root in (a, b):
        (root / ".cortex").mkdir(exist_ok=True)
        (root / ".cortex" / "config.toml").write_text(
            f'[llm]\nurl = "http://127.0.0.1:9/v1"\nmodel = "model-of-{root.name}"\n')
    monkeypatch.chdir(b)
    hub = Hub("http://127.0.0.1:9", "hub-token")
    try:
        for root in (a, b):
            hub.open(str(root / ".cortex" / "store"), [str(root / "agent_defs")], "none", 60.0)
        served = {s.cx.project_root: s.cx.llm.model for s in hub.stores.values()}
    finally:
        hub.close()
    assert served == {a.resolve(): "model-of-a", b.resolve(): "model-of-b"}
