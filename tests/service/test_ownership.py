"""One owner per store, every other opener its client (issue 19, finding 2): `Cortex.open` on a served store
gives the server's client, `cortex serve` takes over from a server a client started (or says where the store
is served), `cortex server status|stop` show and stop servers, and CLI commands never start one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from cortex import Cortex, RemoteCortex, StoreLockedError
from tests.service_helpers import cortex, env, make_project, start_server

pytestmark = pytest.mark.xdist_group("ownership")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj", "reviewer", "api")


def _gone(pid: int, timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        stat = Path(f"/proc/{pid}/stat").read_text() if Path(f"/proc/{pid}/stat").exists() else ""
        if stat and stat[stat.rindex(")") + 2] == "Z":
            return True
        time.sleep(0.05)
    return False


def _auto_server(project: Path) -> subprocess.Popen:
    """A per-store server a client started: `cortex serve --port 0 --idle-exit 1800 --auto` (what `cortex mcp`
    started before the user's background server, which tests/service/test_background_server.py covers)."""
    process = subprocess.Popen([sys.executable, "-m", "cortex.cli", "serve", "--port", "0", "--idle-exit", "1800",
                                "--auto"], cwd=project, env=env(), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    found = project / ".cortex" / "store" / "cortex-server.json"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if found.exists() and json.loads(found.read_text())["pid"] == process.pid:
            return process
        time.sleep(0.05)
    process.kill()
    raise AssertionError("the auto-started server did not publish itself")


def test_cortex_open_on_a_served_store_gives_the_servers_client(project):
    """The README's Python example after its CLI quick start and `cortex serve`: it used to raise
    StoreLockedError; now Cortex.open answers with the server's client, the same MemoryAPI."""
    server = start_server(project)
    try:
        stored = json.loads(cortex(project, "store", "reviewer", "Always check for null pointers").stdout)
        with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"]) as cx:
            assert isinstance(cx, RemoteCortex)
            assert [m.id for m in cx.recall("reviewer", "null pointers")] == [stored["id"]]
            m = cx.store("reviewer", "Tokens expire after one hour", type="pattern", confidence=0.9)
            assert cx.update("reviewer", m.id, content="Tokens expire after two hours", expected_version=1).version == 2
            assert "<agent-memory>" in cx.render(cx.recall("reviewer", "tokens"))
        seen = json.loads(cortex(project, "recall", "reviewer", "tokens").stdout)  # through the same server
        assert [x["content"] for x in seen] == ["Tokens expire after two hours"]
        with pytest.raises(StoreLockedError):  # client=False: open it here or fail, as before
            Cortex.open(project / ".cortex" / "store", client=False)
    finally:
        assert server.stop() == 0
    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"]) as cx:
        assert isinstance(cx, Cortex) and cx.count("reviewer") == 2  # no server: the store itself


def test_cortex_serve_takes_over_from_a_server_a_client_started(project):
    auto = _auto_server(project)
    try:
        server = start_server(project)
        try:
            assert auto.wait(timeout=30) == 0  # stopped gracefully, not killed
            info = json.loads((project / ".cortex" / "store" / "cortex-server.json").read_text())
            assert info["pid"] == server.process.pid and info["auto"] is False
            assert cortex(project, "store", "api", "served by the new owner").returncode == 0
        finally:
            assert server.stop() == 0
    finally:
        if auto.poll() is None:
            auto.kill()


def test_cortex_serve_on_a_store_served_by_cortex_serve_says_where_and_exits_0(project):
    server = start_server(project)
    try:
        second = cortex(project, "serve", "--port", "0", timeout=60)
        assert second.returncode == 0
        assert f"already served on {server.url} (pid {server.process.pid})" in second.stderr
        assert server.process.poll() is None  # the first one keeps the store
    finally:
        assert server.stop() == 0


def test_server_status_and_stop(project, tmp_path):
    none = cortex(project, "server", "status")
    assert none.returncode == 3 and "no Cortex server owns" in none.stderr + none.stdout
    other = make_project(tmp_path / "other", "api")
    first, second = start_server(project), start_server(other)
    try:
        shown = cortex(project, "server", "status")
        assert shown.returncode == 0
        assert f"served on {first.url} by pid {first.process.pid} (started by `cortex serve`" in shown.stdout
        data = json.loads(cortex(project, "server", "status", "--json").stdout)
        assert data["pid"] == first.process.pid and data["auto"] is False and data["rss_mib"] > 10
        assert "token" not in data
        everyone = json.loads(cortex(project, "server", "status", "--all", "--json").stdout)
        assert {s["pid"] for s in everyone} == {first.process.pid, second.process.pid}
        stopped = cortex(project, "server", "stop")
        assert stopped.returncode == 0 and f"stopped pid {first.process.pid}" in stopped.stdout
        assert first.process.wait(timeout=30) == 0 and second.process.poll() is None
        assert not (project / ".cortex" / "store" / "cortex-server.json").exists()
        assert cortex(project, "store", "api", "the store opened by the command itself").returncode == 0
        assert cortex(project, "server", "stop", "--all").returncode == 0
        assert second.process.wait(timeout=30) == 0
        assert cortex(project, "server", "status", "--all").returncode == 3
    finally:
        for s in (first, second):
            if s.process.poll() is None:
                s.stop()


def test_cli_commands_never_start_a_server(project):
    """Every store the CLI touched used to get its own background server for 30 minutes (an import into a
    scratch store included). Now commands open the store themselves and leave nothing running."""
    for args in (["store", "api", "a fact"], ["search", "api", "fact"], ["--store", "./scratch", "stats", "api"],
                 ["--store", "./scratch", "store", "api", "x"]):
        ran = cortex(project, *args, CORTEX_EMBEDDINGS="hash")
        assert ran.returncode == 0, ran.stderr
        assert "background server" not in ran.stderr
    assert not (project / ".cortex" / "store" / "cortex-server.json").exists()
    assert not (project / "scratch" / "cortex-server.json").exists()
    assert cortex(project, "server", "status", "--all").returncode == 3


def test_a_port_in_use_says_how_to_choose_another(project, tmp_path):
    server = start_server(project)
    try:
        port = server.url.rsplit(":", 1)[1]
        other = make_project(tmp_path / "other", "api")
        ran = cortex(other, "serve", "--port", port, timeout=60)
        assert ran.returncode == 1 and "Address already in use" in ran.stderr
        assert "--port 0 for any free port" in ran.stderr and "cortex server status --all" in ran.stderr
    finally:
        assert server.stop() == 0


def _cli_modules(project: Path, *args: str) -> tuple[str, list[str]]:
    """Run a CLI command in a process that then says which heavy modules it imported."""
    script = ("import sys\nfrom cortex.__main__ import main\nsys.argv = ['cortex', *sys.argv[1:]]\n"
              "code = 0\ntry:\n    main()\nexcept SystemExit as exc:\n    code = exc.code or 0\n"
              "print(sorted(m for m in ('pydantic', 'numpy', 'pyoxigraph', 'onnxruntime') if m in sys.modules))\n"
              "sys.exit(code)")
    ran = subprocess.run([sys.executable, "-c", script, *args], cwd=project, capture_output=True, text=True,
                         env=env(CORTEX_EMBEDDINGS="hash"), timeout=120)
    assert ran.returncode == 0, ran.stderr
    output, _, modules = ran.stdout.rstrip("\n").rpartition("\n")
    return output, eval(modules)


def _timeless(found: Any) -> Any:
    """A CLI answer without the figures that move with the clock (scores decay with age)."""
    if isinstance(found, dict) and "hits" in found:
        return found | {"hits": [hit | {"score": None} | ({"explain": sorted(hit["explain"])} if "explain" in hit
                                                          else {}) for hit in found["hits"]]}
    return found


def test_the_cli_through_a_server_prints_what_it_prints_in_process_without_the_engine(project):
    """Issue 19 target: the CLI through a running server within 3x `python -c pass`. It passes the server's
    JSON on as it is (pydantic alone took ~70 ms to import), and prints exactly what the store opened here
    prints: store, get, recall and search (every field of each memory; explain only with --explain)."""
    meta = '{"ticket": "CX-1", "note": null}'
    stored, modules = _cli_modules(project, "store", "reviewer", "Check the retry budget of clients", "--tag",
                                   "net", "--metadata", meta)
    assert "pydantic" in modules  # the store opened here: the engine
    memory = json.loads(stored)
    here = {name: _cli_modules(project, *args)[0] for name, args in (
        ("get", ["get", "reviewer", memory["id"]]), ("recall", ["recall", "reviewer", "retry"]),
        ("search", ["search", "reviewer", "retry budget"]),
        ("explain", ["search", "reviewer", "retry budget", "--explain"]))}
    hit = json.loads(here["search"])["hits"][0]
    assert hit["memory"]["valid_until"] is None and "explain" not in hit and hit["memory"]["metadata"]["note"] is None
    assert set(hit["memory"]) == set(json.loads(here["get"]))  # every field, as get prints it
    assert "explain" in json.loads(here["explain"])["hits"][0]
    server = start_server(project, CORTEX_EMBEDDINGS="hash")
    try:
        for name, args in (("get", ["get", "reviewer", memory["id"]]), ("recall", ["recall", "reviewer", "retry"]),
                           ("search", ["search", "reviewer", "retry budget"]),
                           ("explain", ["search", "reviewer", "retry budget", "--explain"])):
            there, modules = _cli_modules(project, *args)
            assert modules == [], (name, modules)
            assert _timeless(json.loads(there)) == _timeless(json.loads(here[name])), name
        again, modules = _cli_modules(project, "store", "reviewer", "Second fact", "--metadata", meta)
        assert modules == [] and set(json.loads(again)) == set(memory)
        table, _ = _cli_modules(project, "recall", "reviewer", "retry", "--format", "table")
        assert memory["id"] in table  # other formats decode the answer into models
    finally:
        assert server.stop() == 0
