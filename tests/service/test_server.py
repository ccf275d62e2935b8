"""`cortex serve` as a real process: discovery, CLI routing, shutdown, locking, concurrency, kill -9."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import httpx
import pytest

from cortex import Cortex

from tests.service_helpers import cortex, make_project, start_server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj", "alice", "bob")


def test_cli_goes_through_the_server_which_shuts_down_cleanly(project):
    server = start_server(project)
    try:
        stored = cortex(project, "store", "alice", "Always check null pointers")
        assert stored.returncode == 0, stored.stderr
        memory = json.loads(stored.stdout)
        assert [m["id"] for m in json.loads(cortex(project, "recall", "alice", "null").stdout)] == [memory["id"]]
        missing = cortex(project, "get", "alice", "no-such-id")
        assert missing.returncode == 1 and "no memory with id 'no-such-id'" in missing.stderr
        bad = cortex(project, "store", "alice", "x", "--confidence", "7")
        assert bad.returncode == 1 and "confidence" in bad.stderr
        # a proxy in the environment is not used for the local server (it would see the token)
        proxied = cortex(project, "stats", "alice", HTTP_PROXY="http://127.0.0.1:9", http_proxy="http://127.0.0.1:9",
                         NO_PROXY="", no_proxy="")
        assert proxied.returncode == 0, proxied.stderr
        assert httpx.get(f"{server.url}/v1/agents/alice/stats").status_code == 401  # no anonymous access
        health = httpx.get(f"{server.url}/healthz").json()
        assert health["pid"] == server.process.pid
    finally:
        assert server.stop(signal.SIGTERM) == 0
    assert not (server.store / "cortex-server.json").exists()
    with Cortex.open(server.store, embeddings=None) as cx:  # the lock was released, the write kept
        cx.agents.register("alice")
        assert cx.get("alice", memory["id"]).content == "Always check null pointers"


def test_serve_refuses_other_interfaces_without_tokens(project):
    result = cortex(project, "serve", "--host", "0.0.0.0", "--port", "0")
    assert result.returncode == 1
    assert "refusing to listen on 0.0.0.0 without tokens" in result.stderr


def test_a_server_waits_for_a_process_holding_the_store_then_names_it(project):
    """A process that holds the store and serves nothing (a script with Cortex.open(client=False)) is waited
    for (CORTEX_LOCK_WAIT), then named. A second server on a served store: tests/service/test_ownership.py."""
    holder = subprocess.Popen([sys.executable, "-c", "import sys; from cortex import Cortex; "
                               f"cx = Cortex.open({str(project / '.cortex' / 'store')!r}, client=False); "
                               "print('held', flush=True); sys.stdin.readline()"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        second = cortex(project, "serve", "--port", "0", timeout=60, CORTEX_LOCK_WAIT="1")
        assert second.returncode == 1 and f"locked: a python process (pid {holder.pid}) is writing" in second.stderr
    finally:
        holder.communicate("\n", timeout=30)


def test_a_stale_discovery_file_is_ignored(project):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    store = project / ".cortex" / "store"
    store.mkdir(parents=True)
    (store / "cortex-server.json").write_text(json.dumps(
        {"url": "http://127.0.0.1:9", "pid": int(dead.stdout), "token": "x"}))
    result = cortex(project, "store", "alice", "works without a server")
    assert result.returncode == 0, result.stderr


_WRITER = textwrap.dedent("""
    import sys
    from cortex.cli import cli
    name, count = sys.argv[1], int(sys.argv[2])
    failures = 0
    for i in range(count):
        code = cli.main(["store", "alice", f"{name}-{i}"], prog_name="cortex", standalone_mode=False)
        failures += code not in (0, None)
    sys.exit(1 if failures else 0)
""")

_READER = textwrap.dedent("""
    import sys
    from cortex.cli import cli
    for i in range(int(sys.argv[1])):
        code = cli.main(["recall", "alice", "w"], prog_name="cortex", standalone_mode=False)
        assert code in (0, None)
""")


def _run_all(project: Path, scripts: list[list[str]]) -> list[subprocess.CompletedProcess]:
    from tests.service_helpers import env

    procs = [subprocess.Popen([sys.executable, "-c", *args], cwd=project, env=env(), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True) for args in scripts]
    return [(p, p.communicate(timeout=300)[1]) for p in procs]


def test_four_writers_and_a_reader_through_the_server(project):
    server = start_server(project)
    try:
        results = _run_all(project, [[_WRITER, f"w{n}", "100"] for n in range(4)] + [[_READER, "100"]])
        assert all(p.returncode == 0 for p, _ in results), [err[-500:] for _, err in results]
        contents = [m["content"] for m in httpx.get(f"{server.url}/v1/agents/alice/memories", params={"limit": 1000},
                                                    headers={"Authorization": f"Bearer {server.token}"}).json()]
        assert len(contents) == 400 and set(contents) == {f"w{n}-{i}" for n in range(4) for i in range(100)}
    finally:
        server.stop()


def test_two_writers_without_a_server_take_turns(project):
    results = _run_all(project, [[_WRITER, "a", "30"], [_WRITER, "b", "30"]])
    assert all(p.returncode == 0 for p, _ in results), [err[-500:] for _, err in results]
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register("alice")
        contents = [m.content for m in cx.recall("alice", limit=100)]
    assert sorted(contents) == sorted([f"a-{i}" for i in range(30)] + [f"b-{i}" for i in range(30)])


def test_kill_9_during_a_large_store_many_loses_nothing_acknowledged(project):
    server = start_server(project)
    auth = {"Authorization": f"Bearer {server.token}"}
    acknowledged = httpx.post(f"{server.url}/v1/agents/alice/memories", json={"content": "acknowledged"},
                              headers=auth).json()
    entries = [{"content": f"bulk memory {i} " + "x" * 200} for i in range(10_000)]
    outcome: list[object] = []

    def bulk() -> None:
        try:
            outcome.append(httpx.post(f"{server.url}/v1/agents/alice/memories/batch", json={"entries": entries},
                                      headers=auth, timeout=120).status_code)
        except httpx.HTTPError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=bulk)
    thread.start()
    time.sleep(0.4)
    server.stop(signal.SIGKILL)
    thread.join(timeout=120)
    with Cortex.open(server.store, embeddings=None) as cx:
        cx.agents.register("alice")
        assert cx.get("alice", acknowledged["id"]).content == "acknowledged"
        count = cx.count("alice")
        if outcome == [201]:
            assert count == 10_001
        else:
            assert count in (1, 10_001)  # one atomic write: all of it or none of it
        status = cx.index_status("alice")
        assert status.stored == status.memories == count  # no subject with only some of its triples


def test_routes_auth_and_errors_over_real_http(project):
    minted = cortex(project, "token", "create", "--agent", "alice")
    assert minted.returncode == 0 and minted.stdout.startswith("ctx_") and minted.stdout.count("\n") == 1
    alice = minted.stdout.strip()
    admin = cortex(project, "token", "create", "--admin").stdout.strip()
    assert cortex(project, "token", "create", "--admin", "--agent", "bob").returncode == 2
    server = start_server(project)
    try:
        with httpx.Client(base_url=f"{server.url}/v1") as http:
            auth = {"Authorization": f"Bearer {alice}"}
            assert http.get("/agents/alice/stats").status_code == 401
            assert http.get("/agents/alice/stats", headers={"Authorization": "Bearer nope"}).status_code == 401
            created = http.post("/agents/alice/memories", json={"content": "Tokens expire hourly"}, headers=auth)
            assert created.status_code == 201
            memory_id = created.json()["id"]
            routes = [
                ("GET", "/agents/alice/memories", {"params": {"query": "tokens"}}, 200),
                ("GET", "/agents/alice/search", {"params": {"query": "when do tokens expire?"}}, 200),
                ("GET", f"/agents/alice/memories/{memory_id}", {}, 200),
                ("POST", f"/agents/alice/memories/{memory_id}/touch", {}, 200),
                ("GET", "/agents/alice/stats", {}, 200),
                ("POST", "/agents/alice/prune", {"json": {"dry_run": True}}, 200),
                ("POST", "/agents/alice/start", {"json": {"task": "tokens"}}, 200),
                ("POST", "/agents/alice/end", {"json": {"output": "LEARNED: refresh early"}}, 200),
                ("POST", "/agents/alice/memories/batch", {"json": {"entries": [{"content": "b"}]}}, 201),
                ("POST", "/agents/alice/memories", {"json": {"content": "x", "type": "bogus"}}, 422),
                ("POST", "/agents/alice/memories", {"content": b"{", "headers": {"content-type": "application/json"}},
                 400),
                ("GET", "/agents/bob/stats", {}, 404),  # another agent: not found, not forbidden
            ]
            for method, url, kwargs, status in routes:
                headers = {**auth, **kwargs.pop("headers", {})}
                response = http.request(method, url, headers=headers, **kwargs)
                assert response.status_code == status, (method, url, response.text)
            assert http.delete(f"/agents/alice/memories/{memory_id}", headers=auth).status_code == 204
            admin_stats = http.get("/agents/bob/stats", headers={"Authorization": f"Bearer {admin}"})
            assert admin_stats.status_code == 200
        # the CLI on the same machine uses the server's local token from the discovery file
        assert cortex(project, "stats", "alice").returncode == 0
        assert cortex(project, "stats", "alice", CORTEX_TOKEN="ctx_wrong").returncode == 1
    finally:
        assert server.stop(signal.SIGINT) == 0
