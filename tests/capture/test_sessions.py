"""Cortex in a real coding-agent session: hooks as subprocesses with recorded payload shapes (Claude Code 2.1),
agents picked up live by a running server, the spool that never loses a learning, built-in and plugin agents,
the subagent's task read from the parent transcript."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from cortex import Cortex

from tests.service_helpers import AGENT, cortex, env, make_project, start_server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj", "reviewer")


def hook(project: Path, event: str, payload: dict, *args: str, **extra_env: str) -> subprocess.CompletedProcess:
    payload = {"session_id": "s1", "cwd": str(project), "hook_event_name": event, **payload}
    return subprocess.run([sys.executable, "-m", "cortex", "hook", "claude", event, *args], input=json.dumps(payload),
                          cwd="/", capture_output=True, text=True, env=env(**extra_env), timeout=120)


def memories(project: Path, agent: str = "reviewer") -> list[str]:
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register(agent)
        return sorted(m.content for m in cx.recall(agent, limit=1000))


def log_of(project: Path) -> str:
    path = project / ".cortex" / "logs" / "hooks.log"
    return path.read_text() if path.exists() else ""


def transcript(path: Path, *entries: dict) -> Path:
    with open(path, "a", encoding="utf-8") as fh:
        for entry in entries:
            fh.write(json.dumps(entry) + "\n")
    return path


def assistant(*content: dict | str) -> dict:
    parts = [{"type": "text", "text": c} if isinstance(c, str) else c for c in content]
    return {"type": "assistant", "message": {"role": "assistant", "content": parts}}


def agent_call(agent_type: str, prompt: str, description: str = "") -> dict:
    return {"type": "tool_use", "id": "toolu_1", "name": "Agent",
            "input": {"description": description, "prompt": prompt, "subagent_type": agent_type}}


def test_built_in_undeclared_and_plugin_agents_are_one_quiet_line(project):
    for agent_type in ("Explore", "general-purpose", "my-plugin:reviewer"):
        for event, payload in (("SubagentStart", {}), ("SubagentStop", {"last_assistant_message": "LEARNED: x"})):
            result = hook(project, event, {"agent_id": "a1", "agent_type": agent_type, **payload})
            assert result.returncode == 0 and result.stdout == "" and result.stderr == ""
    log = log_of(project)
    assert "Traceback" not in log
    assert log.count("no memory for agent type 'my-plugin:reviewer'") == 2
    assert len(log.strip().splitlines()) == 6


def test_a_plugin_agent_gets_memory_through_an_alias(project):
    (project / ".cortex" / "agents").mkdir(parents=True)
    (project / ".cortex" / "agents" / "plugin-reviewer.md").write_text(
        "---\nname: plugin-reviewer\ndescription: memory for the plugin's reviewer\nmemory: true\n"
        "cortex:\n  aliases: [\"my-plugin:reviewer\"]\n---\n")
    stop = hook(project, "SubagentStop", {"agent_type": "my-plugin:reviewer",
                                          "last_assistant_message": "LEARNED: the plugin reviewer remembers"})
    assert stop.returncode == 0
    assert memories(project, "plugin-reviewer") == ["the plugin reviewer remembers"]
    start = hook(project, "SubagentStart", {"agent_type": "my-plugin:reviewer"})
    assert "the plugin reviewer remembers" in json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]


def test_the_subagent_start_block_is_ranked_for_the_task_in_the_parent_transcript(project, tmp_path):
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register("reviewer")
        cx.store_many("reviewer", [{"content": f"general note {i} about formatting"} for i in range(20)]
                      + [{"content": "Payment webhooks must carry an idempotency key"}])
    parent = transcript(tmp_path / "parent.jsonl",
                        {"type": "user", "message": {"role": "user", "content": "review the payment webhook PR"}},
                        assistant("I'll ask the reviewer.", agent_call("planner", "plan the formatting work")),
                        assistant(agent_call("reviewer", "Review the retry loop of the payment webhook",
                                             "webhook review")))
    # the parent transcript lies in Claude Code's directory, where a hook reads it (elsewhere it is not read)
    start = hook(project, "SubagentStart", {"agent_id": "a1", "agent_type": "reviewer",
                                            "transcript_path": str(parent)}, CLAUDE_CONFIG_DIR=str(tmp_path))
    block = json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    assert block.splitlines()[1] == "- [insight] Payment webhooks must carry an idempotency key"


def test_the_main_session_agent_is_named_by_the_hook_command(project):
    hook(project, "Stop", {"last_assistant_message": "LEARNED: the main session learns too"}, "--agent", "reviewer")
    assert memories(project) == ["the main session learns too"]
    start = hook(project, "SessionStart", {"source": "startup"}, "--agent", "reviewer")
    assert "the main session learns too" in start.stdout
    assert hook(project, "SessionStart", {"source": "startup"}).stdout == ""  # no agent named: nothing


def test_an_agent_added_while_the_server_runs_is_known_at_once(project):
    server = start_server(project)
    try:
        (project / "agent_defs" / "newbie.md").write_text(AGENT.format(name="newbie"))
        stored = cortex(project, "store", "newbie", "first memory of a new agent")
        assert stored.returncode == 0, stored.stderr
        stop = hook(project, "SubagentStop", {"agent_type": "newbie", "last_assistant_message": "LEARNED: from a hook"})
        assert stop.returncode == 0 and "spooled" not in log_of(project)
        auth = {"Authorization": f"Bearer {server.token}"}
        listed = httpx.get(f"{server.url}/v1/agents/newbie/memories", headers=auth).json()
        assert sorted(m["content"] for m in listed) == ["first memory of a new agent", "from a hook"]
        ghost = cortex(project, "store", "ghost", "x")
        assert ghost.returncode == 1 and str(project / "agent_defs") in ghost.stderr  # the directories searched
    finally:
        server.stop()


def test_an_undelivered_capture_waits_in_the_spool_and_is_delivered_exactly_once(project):
    server = start_server(project)
    try:
        server.process.send_signal(signal.SIGSTOP)  # the server hangs: nothing it owns can be reached
        for i in range(2):
            refused = hook(project, "SubagentStop", {"agent_type": "reviewer",
                                                     "last_assistant_message": f"LEARNED: refused lesson {i}"},
                           CORTEX_LOCK_WAIT="0.3")
            assert refused.returncode == 0
        assert log_of(project).count("spooled") == 2
        assert len(list((project / ".cortex" / "store" / "cortex-spool").glob("*.json"))) == 2
        server.process.send_signal(signal.SIGCONT)  # it answers again: the next capture delivers the spool too
        ok = hook(project, "SubagentStop", {"agent_type": "reviewer", "last_assistant_message": "LEARNED: accepted"})
        assert ok.returncode == 0 and "delivered 2 spooled capture(s)" in log_of(project)
        again = hook(project, "SubagentStop", {"agent_type": "reviewer", "last_assistant_message": "LEARNED: later"})
        assert again.returncode == 0
    finally:
        server.stop()
    assert memories(project) == ["accepted", "later", "refused lesson 0", "refused lesson 1"]
    assert list((project / ".cortex" / "store" / "cortex-spool").iterdir()) == []


def test_a_server_start_delivers_the_spool(project):
    holder = subprocess.Popen([sys.executable, "-c", "import sys; from cortex import Cortex; "
                               "cx = Cortex.open(sys.argv[1], embeddings=None); print('ready', flush=True); "
                               "sys.stdin.readline(); cx.close()", str(project / ".cortex" / "store")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        locked = hook(project, "SubagentStop", {"agent_type": "reviewer",
                                                "last_assistant_message": "LEARNED: kept while locked"},
                      CORTEX_LOCK_WAIT="0.3")
        assert locked.returncode == 0 and "spooled (store not reachable" in log_of(project)
    finally:
        holder.communicate("\n", timeout=30)
    server = start_server(project)
    try:
        auth = {"Authorization": f"Bearer {server.token}"}
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            listed = httpx.get(f"{server.url}/v1/agents/reviewer/memories", headers=auth).json()
            if listed:
                break
            time.sleep(0.1)
        assert [m["content"] for m in listed] == ["kept while locked"]
    finally:
        server.stop()
