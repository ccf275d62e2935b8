"""The user's background server (issue 19: "if it stays: one per user, serving every store, bounded memory,
visible"): `cortex mcp` sessions of any number of projects share one process, which serves each store under
a prefix, gives a store up to `cortex serve` or after its idle time, and exits when it serves none."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cortex import Cortex, RemoteCortex
from cortex.discovery import alive
from cortex.service import control
from cortex.service.connect import ensure_server
from tests.service_helpers import cortex, env, make_project, start_server

pytestmark = pytest.mark.xdist_group("ownership")


@pytest.fixture
def servers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A servers directory of this test alone (so its background server is its own); everything stopped after."""
    directory = tmp_path / "servers"
    monkeypatch.setenv("CORTEX_SERVERS_DIR", str(directory))
    monkeypatch.setenv("CORTEX_EMBEDDINGS", "hash")
    yield directory
    for server in control.every():
        control.stop(server)


def _project(root: Path) -> tuple[Path, Path]:
    project = make_project(root, "reviewer")
    return project, project / ".cortex" / "store"


def _serve(project: Path, store: Path, **kwargs: float) -> RemoteCortex:
    return ensure_server(store, agent_dirs=[project / "agent_defs"], **kwargs)


def _wait(condition, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_every_store_is_served_by_one_process_under_its_own_prefix(servers, tmp_path):
    (a, store_a), (b, store_b) = _project(tmp_path / "a"), _project(tmp_path / "b")
    first, second = _serve(a, store_a), _serve(b, store_b)
    pids = {json.loads((s / "cortex-server.json").read_text())["pid"] for s in (store_a, store_b)}
    assert len(pids) == 1 and "/stores/" in first.url and first.url != second.url
    first.store("reviewer", "alpha lives in project a")
    second.store("reviewer", "beta lives in project b")
    # every client finds it as any server: the CLI, Cortex.open, the hooks
    seen = json.loads(cortex(a, "recall", "reviewer", "lives").stdout)
    assert [m["content"] for m in seen] == ["alpha lives in project a"]
    with Cortex.open(store_b, agent_dirs=[b / "agent_defs"]) as cx:
        assert isinstance(cx, RemoteCortex) and [m.content for m in cx.recall("reviewer", "lives")] == [
            "beta lives in project b"]
    listed = json.loads(cortex(a, "server", "status", "--all", "--json").stdout)
    assert sorted(s["store"] for s in listed) == sorted([str(store_a), str(store_b)])
    assert {s["pid"] for s in listed} == pids and all(s["shared"] and s["rss_mib"] for s in listed)
    assert second.store("reviewer", "again").content == "again"  # asking again changes nothing
    assert _serve(b, store_b).url == second.url


def test_cortex_serve_takes_its_store_and_leaves_the_others_served(servers, tmp_path):
    (a, store_a), (b, store_b) = _project(tmp_path / "a"), _project(tmp_path / "b")
    _serve(a, store_a).store("reviewer", "kept across the takeover")
    other = _serve(b, store_b)
    background = json.loads((store_b / "cortex-server.json").read_text())["pid"]
    server = start_server(a, CORTEX_SERVERS_DIR=str(servers), CORTEX_EMBEDDINGS="hash")
    try:
        assert "taking over" in "".join(server.process.stderr.readline() for _ in range(1))
        assert json.loads((store_a / "cortex-server.json").read_text())["pid"] == server.process.pid
        assert json.loads(cortex(a, "recall", "reviewer", "kept").stdout)[0]["content"] == "kept across the takeover"
        assert alive(background) and other.store("reviewer", "still served").content == "still served"
    finally:
        assert server.stop() == 0


def test_a_store_is_given_up_after_its_idle_time_and_the_process_exits_when_it_serves_none(servers, tmp_path):
    project, store = _project(tmp_path / "a")
    _serve(project, store, idle_exit=1.0).store("reviewer", "written before it idled out")
    pid = json.loads((store / "cortex-server.json").read_text())["pid"]
    assert _wait(lambda: not (store / "cortex-server.json").exists())
    with Cortex.open(store, agent_dirs=[project / "agent_defs"], client=False) as cx:  # flushed and released
        assert [m.content for m in cx.recall("reviewer", "idled")] == ["written before it idled out"]
    assert _wait(lambda: not alive(pid)) and not list(servers.glob("hub-*.json"))


def test_server_stop_all_releases_every_store_and_the_process_exits(servers, tmp_path):
    (a, store_a), (b, store_b) = _project(tmp_path / "a"), _project(tmp_path / "b")
    _serve(a, store_a), _serve(b, store_b)
    pid = json.loads((store_a / "cortex-server.json").read_text())["pid"]
    stopped = cortex(a, "server", "stop", "--all", CORTEX_SERVERS_DIR=str(servers))
    assert stopped.returncode == 0 and stopped.stdout.count("no longer serves") == 2, stopped.stdout
    assert _wait(lambda: not alive(pid))
    assert cortex(a, "server", "status", "--all", CORTEX_SERVERS_DIR=str(servers)).returncode == 3


def test_sessions_starting_at_once_share_one_process_and_other_settings_get_their_own(servers, tmp_path):
    project, store = _project(tmp_path / "a")
    script = ("import sys\nfrom pathlib import Path\nfrom cortex.service.connect import ensure_server\n"
              "print(ensure_server(Path(sys.argv[1]), agent_dirs=[Path(sys.argv[2])]).url)")
    starts = [subprocess.Popen([sys.executable, "-c", script, str(store), str(project / "agent_defs")],
                               stdout=subprocess.PIPE, text=True, env=env()) for _ in range(4)]
    urls = {p.communicate(timeout=120)[0].strip() for p in starts}
    assert len(urls) == 1 and all(p.returncode == 0 for p in starts)
    hubs = [control.read_hub(path) for path in servers.glob("hub-*.json")]
    assert len([h for h in hubs if h is not None]) == 1
    other, other_store = _project(tmp_path / "b")
    elsewhere = subprocess.run([sys.executable, "-c", script, str(other_store), str(other / "agent_defs")],
                               capture_output=True, text=True, env=env(CORTEX_EMBEDDINGS="none"), timeout=120)
    assert elsewhere.returncode == 0, elsewhere.stderr
    assert elsewhere.stdout.strip().rpartition("/stores/")[0] != urls.pop().rpartition("/stores/")[0]
    assert len(list(servers.glob("hub-*.json"))) == 2  # a session with other settings: a process of its own


def test_a_client_of_a_store_given_up_reconnects(servers, tmp_path):
    """`cortex mcp` keeps its client for the session: once the store idled out, its next call asks again."""
    from cortex.service.connect import Reconnecting

    project, store = _project(tmp_path / "a")
    client = Reconnecting(lambda: _serve(project, store, idle_exit=1.0))
    client.store("reviewer", "before the store idled out")
    assert _wait(lambda: not (store / "cortex-server.json").exists())
    assert client.store("reviewer", "after").content == "after"
    assert sorted(m.content for m in client.recall("reviewer")) == ["after", "before the store idled out"]


@pytest.mark.server
def test_a_session_on_a_remote_store_gets_that_store_served(servers, tmp_path, oxigraph_server):
    """`cortex mcp` with CORTEX_STORE=sparql+http://...: the background server serves the remote store (its
    state directory only keeps the discovery file and indexes), never an embedded store in that directory."""
    oxigraph_server.clear()
    project = make_project(tmp_path / "p", "reviewer")
    state = tmp_path / "state"
    client = ensure_server(state, agent_dirs=[project / "agent_defs"], location=oxigraph_server.url)
    client.store("reviewer", "kept on the shared SPARQL server")
    assert client.info()["store"].startswith("sparql+http://")
    assert not (state / "CURRENT").exists()  # no RocksDB store was made there
    with Cortex.open(oxigraph_server.url, embeddings=None, state_dir=tmp_path / "elsewhere", client=False) as cx:
        cx.agents.register("reviewer")
        assert [m.content for m in cx.recall("reviewer", "shared")] == ["kept on the shared SPARQL server"]
