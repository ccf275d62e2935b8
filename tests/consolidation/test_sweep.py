"""The periodic consolidation sweep (cortex.service.sweep) on a real on-disk store: it merges near duplicates
without a request, waits while the server serves, resumes round-robin from its checkpoint, is off by default,
runs in `cortex serve`; and a lead's Stop hook has its teams' round ends run after the hook has answered."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from cortex import Cortex
from cortex.consolidation.settings import ConsolidationSettings
from cortex.service import http
from cortex.service.http import create_app
from cortex.service.sweep import STATE_FILE, Sweeper
from tests.llm_standin import StandIn

from tests.service_helpers import asgi_request, env, start_server

DUP_A = "Run the tests with `uv run pytest -n 4` before pushing"
DUP_B = "Always run the tests with `uv run pytest -n 4` before pushing!"


def write_project(root: Path, definitions: dict[str, str | None]) -> Path:
    """A project (a .git marker) whose agent_defs/ declare ``definitions`` (name -> its ``cortex:`` block)."""
    (root / ".git").mkdir(parents=True, exist_ok=True)
    defs = root / "agent_defs"
    defs.mkdir(exist_ok=True)
    for name, block in definitions.items():
        extra = f"cortex:\n  {block}\n" if block else ""
        (defs / f"{name}.md").write_text(f"---\nname: {name}\ndescription: {name}\nmemory: true\n{extra}---\n")
    return root


def open_store(root: Path) -> Cortex:
    cx = Cortex.open(root / ".cortex" / "store", agent_dirs=[root / "agent_defs"], embeddings=None)
    cx.llm = None  # merges need no model; the sweep's contradictions and distillation would ask one
    return cx


def current(cx: Cortex, agent: str) -> list[str]:
    return sorted(m.content for m in cx.list_memories(agent, scope="agent", limit=100).items)


def wait_until(check, timeout: float = 10.0, step: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(step)
    return bool(check())


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "proj", {"reviewer": None})


def test_the_sweep_merges_planted_near_duplicates_without_a_request(project):
    with open_store(project) as cx:
        cx.store("reviewer", DUP_A)
        cx.store("reviewer", DUP_B)
        sweeper = Sweeper(cx, 0.2)
        sweeper.start()
        try:
            assert wait_until(lambda: len(current(cx, "reviewer")) == 1)
            assert wait_until(lambda: sweeper.status()["runs"] >= 1)
        finally:
            sweeper.close()
        status = sweeper.status()
        assert status["enabled"] and status["every_seconds"] == 0.2 and status["last_error"] is None
        assert status["last_run_at"] is not None and status["next_scope"] == "agent:reviewer"
        assert current(cx, "reviewer") == [DUP_A]  # the survivor: the older one (nothing used either)
        assert cx.consolidation_runs("reviewer")[0].actor == "reviewer"
        saved = json.loads((project / ".cortex" / "store" / STATE_FILE).read_text())
        assert saved["next_scope"] == "agent:reviewer" and saved["last_run_at"] == status["last_run_at"]


def test_the_sweep_waits_while_requests_are_in_flight_or_the_queue_works(project, monkeypatch):
    monkeypatch.chdir(project)
    with open_store(project) as cx:
        cx.store("reviewer", DUP_A)
        cx.store("reviewer", DUP_B)
        cx.consolidation = ConsolidationSettings(every=timedelta(seconds=0.2))

        class Serving(http.InFlight):
            def __init__(self) -> None:
                self.count = 1  # a request being served from the start: the first sweep is due 0.2 s after the
                # sweeper starts, which may be before create_app returns on a loaded machine

        monkeypatch.setattr(http, "InFlight", Serving)
        app = create_app(cx, mcp=False)
        sweeper = app.state.sweeper
        assert sweeper is not None and sweeper.every == 0.2 and sweeper.retry == 0.2
        try:
            assert wait_until(lambda: sweeper.skipped_busy >= 2)
            assert sweeper.runs == 0 and len(current(cx, "reviewer")) == 2
            app.state.in_flight.count = 0
            # the capture queue at work: the sweep waits for it too
            release = threading.Event()
            app.state.capture_queue.put_call("block", lambda: release.wait(10))
            skipped = sweeper.skipped_busy
            assert wait_until(lambda: sweeper.skipped_busy >= skipped + 2)
            assert sweeper.runs == 0 and len(current(cx, "reviewer")) == 2
            release.set()
            assert wait_until(lambda: len(current(cx, "reviewer")) == 1)
            assert app.state.capture_queue.status()["done"] == 1
        finally:
            sweeper.close()
            app.state.capture_queue.close()
        # the in-flight counter counts real requests (and the status route answers)
        answer = asgi_request(app, "GET", "/v1/consolidate/sweep")
        assert answer.status_code == 200 and answer.json()["runs"] >= 1 and answer.json()["enabled"] is True
        assert app.state.in_flight.count == 0


def test_a_sweep_put_off_between_scopes_resumes_there(tmp_path):
    root = write_project(tmp_path / "proj", {"a": None, "b": None, "c": None})
    with open_store(root) as cx:
        for name in ("a", "b", "c"):
            cx.store(name, DUP_A)
            cx.store(name, DUP_B)
        done: list[str] = []
        sweeper = Sweeper(cx, 60, busy=lambda: len(done) == 1, state_dir=None)
        original = sweeper._consolidate

        def consolidate(key: str):
            done.append(key)
            return original(key)

        sweeper._consolidate = consolidate  # type: ignore[method-assign]
        assert sweeper.run_once() == {"swept": ["agent:a"], "failed": [], "stopped": "busy"}
        assert sweeper.next_scope == "agent:b" and sweeper.skipped_busy == 1
        done.append("x")  # no longer busy
        assert sweeper.run_once()["swept"] == ["agent:b", "agent:c", "agent:a"]  # a whole round from there
        assert [len(current(cx, n)) for n in ("a", "b", "c")] == [1, 1, 1]
        assert not (root / ".cortex" / "store" / STATE_FILE).exists()  # state_dir=None: in memory only


def test_the_checkpoint_resumes_round_robin_across_restarts(tmp_path):
    root = write_project(tmp_path / "proj", {
        "a": None, "b": None, "c": None, "lead": "teams: [backend, sprint]\n  lead: true",
        "temp": "teams: [{name: sprint, parent: backend}]", "idle": None})
    store = root / ".cortex" / "store"
    with open_store(root) as cx:
        cx.agents.register("ghost")
        cx.store("ghost", "An agent nobody declares any more")  # stored, undeclared now: never swept
    with open_store(root) as cx:
        for name in ("a", "b", "c", "lead"):
            cx.store(name, f"{name} writes the changelog entry first")
        cx.store("lead", "DECISION: the team ships on Thursdays", scope="team:backend")
        cx.store("lead", "Leads review every release note", scope="swarm")
        cx.store("temp", "The sprint demo is on Friday")
        sweeper = Sweeper(cx, 60, max_scopes=2)
        # agents with memories (declared with memory), the led non-temporary teams, then the swarm
        assert sweeper.scopes() == ["agent:a", "agent:b", "agent:c", "agent:lead", "agent:temp", "team:backend",
                                    "swarm"]
        assert sweeper.run_once()["swept"] == ["agent:a", "agent:b"]
        assert json.loads((store / STATE_FILE).read_text())["next_scope"] == "agent:c"
    with open_store(root) as cx:  # a restarted server goes on where the last sweep stopped
        sweeper = Sweeper(cx, 60, max_scopes=2)
        assert sweeper.next_scope == "agent:c"
        assert sweeper.run_once()["swept"] == ["agent:c", "agent:lead"]
        assert sweeper.run_once()["swept"] == ["agent:temp", "team:backend"]
        assert sweeper.run_once()["swept"] == ["swarm", "agent:a"]  # round and round
        assert sweeper.next_scope == "agent:b" and sweeper.runs == 3
        # a scope that went away: the next one after it in the order
        sweeper.next_scope = "agent:bb"
        assert sweeper.run_once()["swept"] == ["agent:c", "agent:lead"]


def test_a_failing_scope_is_logged_and_the_sweep_goes_on(tmp_path, caplog):
    root = write_project(tmp_path / "proj", {"a": None, "b": None})
    with open_store(root) as cx:
        for name in ("a", "b"):
            cx.store(name, DUP_A)
            cx.store(name, DUP_B)
        sweeper = Sweeper(cx, 0.2)
        original = cx.consolidate

        def consolidate(agent=None, **kwargs):
            if agent == "a":
                raise RuntimeError("the disk is on fire")
            return original(agent, **kwargs)

        cx.consolidate = consolidate  # type: ignore[method-assign]
        with caplog.at_level("WARNING", logger="cortex"):
            sweeper.start()
            try:
                assert wait_until(lambda: sweeper.runs >= 2)
            finally:
                sweeper.close()
        assert sweeper.status()["last_error"] == "agent:a: RuntimeError: the disk is on fire"
        assert "consolidating agent:a failed" in caplog.text
        assert len(current(cx, "a")) == 2 and len(current(cx, "b")) == 1


def test_the_sweep_is_off_by_default(project, monkeypatch):
    monkeypatch.chdir(project)
    monkeypatch.delenv("CORTEX_CONSOLIDATE_EVERY", raising=False)
    with open_store(project) as cx:
        app = create_app(cx, mcp=False)
        assert app.state.sweeper is None
        answer = asgi_request(app, "GET", "/v1/consolidate/sweep")
        assert answer.status_code == 200
        assert answer.json() == {"enabled": False, "every_seconds": None, "last_run_at": None, "last_error": None,
                                 "runs": 0, "skipped_busy": 0, "next_scope": None, "running": False}
    assert not (project / ".cortex" / "store" / STATE_FILE).exists()


def test_cortex_serve_sweeps_every_interval(project):
    with open_store(project) as cx:
        cx.store("reviewer", DUP_A)
        cx.store("reviewer", DUP_B)
    server = start_server(project, CORTEX_CONSOLIDATE_EVERY="1s", CORTEX_EMBEDDINGS="none")
    try:
        headers = {"Authorization": f"Bearer {server.token}"}

        def swept() -> bool:
            return httpx.get(f"{server.url}/v1/consolidate/sweep", headers=headers).json()["runs"] >= 1

        assert wait_until(swept, timeout=15, step=0.2)
        status = httpx.get(f"{server.url}/v1/consolidate/sweep", headers=headers).json()
        assert status["enabled"] and status["every_seconds"] == 1.0 and status["last_error"] is None
        page = httpx.get(f"{server.url}/v1/agents/reviewer/list", params={"scope": "agent"}, headers=headers)
        assert [m["content"] for m in page.json()["items"]] == [DUP_A]
        assert httpx.get(f"{server.url}/v1/consolidate/sweep").status_code == 401  # a token, as every route
    finally:
        assert server.stop() == 0


# -- a lead's Stop hook: its teams' round ends ---------------------------------------------------------------

TEAM = {"boss": "teams: [backend, sprint]\n  lead: true", "coder": "teams: [backend]",
        "temp": "teams: [{name: sprint, parent: backend}]"}


def stop_hook(project: Path, agent: str, **extra_env: str) -> subprocess.CompletedProcess:
    payload = {"session_id": "s1", "transcript_path": "", "cwd": str(project), "hook_event_name": "Stop",
               "stop_hook_active": False, "last_assistant_message": "Done."}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "cortex", "hook", "claude", "Stop", "--agent", agent],
                          input=json.dumps(payload), cwd="/", capture_output=True, text=True, timeout=60,
                          env=env(CORTEX_EMBEDDINGS="none", **extra_env))
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert time.monotonic() - started < 20
    return done


def team_entries(project: Path) -> list[str]:
    with open_store(project) as cx:
        return sorted(m.content for m in cx.list_memories("coder", scope="team:backend", limit=100).items)


@pytest.fixture
def llm():
    with StandIn() as standin:
        yield standin


def test_a_leads_stop_hook_queues_its_teams_round_end_in_the_server(tmp_path, llm):
    project = write_project(tmp_path / "proj", TEAM)
    with open_store(project) as cx:
        cx.record_task("coder", "Choose the queue", "DECISION: the team uses Redis streams for the job queue")
    llm_env = {"CORTEX_LLM_URL": llm.url, "CORTEX_LLM_MODEL": "standin"}
    server = start_server(project, CORTEX_EMBEDDINGS="none", **llm_env)
    headers = {"Authorization": f"Bearer {server.token}"}

    def queue() -> dict:
        return httpx.get(f"{server.url}/v1/capture/queue", headers=headers).json()

    try:
        stop_hook(project, "coder", **llm_env)  # not a lead: no round end
        stop_hook(project, "boss")  # no model configured for the hook: nothing asked of the server
        time.sleep(0.3)
        assert queue()["done"] == 0 and not llm.requests
        stop_hook(project, "boss", **llm_env)
        assert wait_until(lambda: queue()["done"] >= 1, timeout=20), queue()
        assert queue()["failed"] == 0  # the temporary team was not queued (and not logged as a failure)
        # the route itself: queued with 202, a temporary team refused at once, a dry run must wait
        url = f"{server.url}/v1/teams/backend/round-end"
        answer = httpx.post(url, json={"wait": False}, headers=headers)
        assert answer.status_code == 202 and answer.json()["queued"] is True
        refused = httpx.post(f"{server.url}/v1/teams/sprint/round-end", json={"wait": False}, headers=headers)
        assert refused.status_code == 422 and "temporary" in refused.json()["error"]["message"]
        assert httpx.post(url, json={"wait": False, "dry_run": True}, headers=headers).status_code == 422
        assert wait_until(lambda: queue()["done"] >= 2, timeout=20), queue()
    finally:
        assert server.stop() == 0
    assert team_entries(project) == ["the team uses Redis streams for the job queue"]
    log = (project / ".cortex" / "logs" / "hooks.log")
    assert not log.exists() or "round end" not in log.read_text()


def test_a_leads_stop_hook_without_a_server_runs_the_round_end_in_a_process(tmp_path, llm):
    project = write_project(tmp_path / "proj", TEAM)
    with open_store(project) as cx:
        cx.record_task("coder", "Choose the queue", "DECISION: the team uses Redis streams for the job queue")
    stop_hook(project, "boss", CORTEX_LLM_URL=llm.url, CORTEX_LLM_MODEL="standin")
    pids = json.loads((project / ".cortex" / "logs" / "round-end.json").read_text())
    assert set(pids) == {"backend"}  # the temporary team has no round end

    def finished() -> bool:
        try:
            return team_entries(project) == ["the team uses Redis streams for the job queue"]
        except Exception:  # the round end's process holds the store
            return False

    assert wait_until(finished, timeout=40, step=0.2), (project / ".cortex" / "logs" / "round-end.log").read_text()
