"""Claude Code hooks as subprocesses with recorded-shape payloads, and `cortex install/uninstall claude`."""

from __future__ import annotations

import json
import shlex
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cortex import Cortex

from tests.service_helpers import cortex, env, make_project, start_server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj", "reviewer")


def hook(project: Path, event: str, payload: dict, cwd: Path | None = None, **extra_env: str):
    payload = {"session_id": "abc123", "transcript_path": "", "cwd": str(project), "hook_event_name": event,
               **payload}
    # the tests' transcripts live beside the project: Claude Code's directory, as far as the hook knows
    extra_env.setdefault("CLAUDE_CONFIG_DIR", str(project.parent))
    # `python -m cortex` is the console script's entry point (with its short path for hooks)
    return subprocess.run([sys.executable, "-m", "cortex", "hook", "claude", event], input=json.dumps(payload),
                          cwd=cwd or Path("/"), capture_output=True, text=True, env=env(**extra_env), timeout=120)


def stored(project: Path) -> list[str]:
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register("reviewer")
        return sorted(m.content for m in cx.recall("reviewer", limit=100) if m.source != "task_completion")  # the learnings (SubagentStop records the task outcome beside them)


def seed(project: Path, *contents: str) -> None:
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register("reviewer")
        cx.store_many("reviewer", [{"content": c} for c in contents])


def test_subagent_start_injects_the_block(project):
    seed(project, "Always check null pointers", "Auth tokens expire after one hour")
    result = hook(project, "SubagentStart", {"agent_id": "a1", "agent_type": "reviewer"})
    assert result.returncode == 0 and result.stderr == ""
    out = json.loads(result.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "SubagentStart"
    block = out["hookSpecificOutput"]["additionalContext"]
    assert block.startswith("<agent-memory>\n") and "Always check null pointers" in block and len(block) < 10_000


def test_session_start_with_and_without_an_agent(project):
    seed(project, "x" * 3000, "y" * 3000, "z" * 3000, "w" * 3000)
    with_agent = hook(project, "SessionStart", {"source": "startup", "agent_type": "reviewer"})
    context = json.loads(with_agent.stdout)["hookSpecificOutput"]["additionalContext"]
    assert len(context) < 10_000 and context.count("\n- [") == 3  # 4 would not fit: whole memories only
    without = hook(project, "SessionStart", {"source": "startup"})
    assert without.returncode == 0 and without.stdout == ""
    named = hook(project, "SessionStart", {"source": "startup"}, CORTEX_HOOK_AGENT="reviewer")
    assert json.loads(named.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"


def test_subagent_stop_captures_learned_lines(project, tmp_path):
    transcript = tmp_path / "agent.jsonl"
    transcript.write_text("\n".join(json.dumps(e) for e in [
        {"type": "user", "message": {"role": "user", "content": "review this"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Looking.\nPATTERN: guard clauses before the happy path"}]}},
    ]) + "\nnot json\n")
    message = "Review done.\nLEARNED: the auth module caches tokens in redis\n- DECISION: keep retries at 3"
    result = hook(project, "SubagentStop", {"agent_type": "reviewer", "stop_hook_active": False,
                                           "agent_transcript_path": str(transcript),
                                           "last_assistant_message": message})
    assert result.returncode == 0 and result.stdout == ""
    assert stored(project) == ["guard clauses before the happy path", "keep retries at 3",
                               "the auth module caches tokens in redis"]
    hook(project, "SubagentStop", {"agent_type": "reviewer", "last_assistant_message": message})
    assert len(stored(project)) == 3  # captured again: touched, not duplicated


def test_a_stop_hook_reads_only_what_the_transcript_gained(project, tmp_path):
    transcript = tmp_path / "session.jsonl"

    def say(text: str) -> None:
        with open(transcript, "a") as fh:
            fh.write(json.dumps({"type": "assistant", "message": {"role": "assistant", "content": text}}) + "\n")

    say("LEARNED: the build needs make twice")
    for turn in range(3):
        hook(project, "Stop", {"agent_type": "reviewer", "transcript_path": str(transcript),
                               "last_assistant_message": f"turn {turn}"})
        say(f"turn {turn} done")
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register("reviewer")
        [memory] = cx.recall("reviewer", "make")
        assert memory.usage_count == 0  # captured once, not touched again by the later turns


def test_stop_hook_active_captures_nothing(project):
    result = hook(project, "Stop", {"stop_hook_active": True, "agent_type": "reviewer",
                                    "last_assistant_message": "LEARNED: should not be stored"})
    assert result.returncode == 0 and result.stdout == ""
    assert not (project / ".cortex" / "store").exists() or stored(project) == []


def test_failures_exit_0_and_are_logged(project, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = hook(project, "SubagentStart", {"agent_type": "reviewer"}, CORTEX_STORE=str(blocker / "store"))
    assert result.returncode == 0 and result.stdout == ""
    log = (project / ".cortex" / "logs" / "hooks.log").read_text()
    assert "SubagentStart" in log and "Error" in log
    unknown = hook(project, "SubagentStart", {"agent_type": "ghost"})
    assert unknown.returncode == 0 and unknown.stdout == ""
    log = (project / ".cortex" / "logs" / "hooks.log").read_text()
    assert "no memory for agent type 'ghost'" in log and "Traceback" not in log.split("ghost")[-1]
    garbage = subprocess.run([sys.executable, "-m", "cortex.cli", "hook", "claude", "SubagentStop"], input="{oops",
                             cwd=project, capture_output=True, text=True, env=env(), timeout=60)
    assert garbage.returncode == 0 and garbage.stdout == ""


def test_hooks_use_the_server_when_it_runs(project):
    seed(project, "Always check null pointers")
    server = start_server(project)
    try:
        result = hook(project, "SubagentStart", {"agent_type": "reviewer"})
        assert "Always check null pointers" in json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
        hook(project, "SubagentStop", {"agent_type": "reviewer", "last_assistant_message": "LEARNED: via server"})
    finally:
        server.stop()
    assert "via server" in stored(project)


HEAVY = ('mcp', 'fastapi', 'rdflib', 'uvicorn', 'torch', 'numpy', 'pyoxigraph', 'pydantic', 'httpx')


def _hook_modules(project: Path, heavy: tuple[str, ...] = HEAVY) -> tuple[str, list[str]]:
    payload = json.dumps({"cwd": str(project), "agent_type": "reviewer"})
    script = ("import sys, io; sys.stdin = io.StringIO(sys.argv[1]); from cortex.__main__ import main\n"
              "sys.argv = ['cortex', 'hook', 'claude', 'SubagentStart']\n"
              "try:\n    main()\nexcept SystemExit:\n    pass\n"
              f"heavy = {heavy!r}\n"
              "print(sorted(m for m in heavy if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", script, payload], cwd=project, capture_output=True, text=True,
                            env=env(), timeout=60)
    *output, modules = result.stdout.strip().splitlines()
    return "\n".join(output), eval(modules)


def test_the_hook_path_imports_neither_mcp_nor_fastapi_nor_rdflib(project):
    seed(project, "Always check null pointers")
    output, modules = _hook_modules(project)
    assert "Always check null pointers" in output
    assert not {"mcp", "fastapi", "rdflib", "uvicorn", "torch"} & set(modules), modules
    server = start_server(project)
    try:  # with a server, the hook is a stdlib HTTP call: not even the engine is imported
        output, modules = _hook_modules(project)
        assert "Always check null pointers" in output and modules == []
    finally:
        server.stop()


def test_the_hook_without_a_server_imports_no_client_nor_plugin_scan(project):
    seed(project, "Always check null pointers")
    output, modules = _hook_modules(project, ("cortex.api.client", "cortex.api.operations", "importlib.metadata",
                                              "cortex.cli", "click", "cortex.core"))
    assert "Always check null pointers" in output
    assert modules == ["cortex.core"], modules  # the engine, opened here: and nothing a server's client needs


def test_install_and_uninstall_claude_are_exact_and_idempotent(project):
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = {"permissions": {"allow": ["Bash(ls)"]},
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]}}
    settings.write_text(json.dumps(mine))
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "other"}}}))
    first = cortex(project, "install", "claude")
    assert first.returncode == 0 and "added hook SubagentStart" in first.stderr
    data = json.loads(settings.read_text())
    assert data["permissions"] == mine["permissions"]
    assert data["hooks"]["Stop"] == mine["hooks"]["Stop"]  # no main-session hooks without --agent
    commands = {e: [h["command"] for g in data["hooks"][e] for h in g["hooks"]] for e in data["hooks"]}
    assert commands["SubagentStart"] == ['"${CORTEX_BIN:-cortex}" hook claude SubagentStart']
    # the committed .mcp.json is left alone: the MCP server is personal, in Claude Code's local scope
    assert json.loads((project / ".mcp.json").read_text()) == {"mcpServers": {"other": {"command": "other"}}}
    user_file = Path(os.environ["HOME"]) / ".claude.json"
    entry = json.loads(user_file.read_text())["projects"][str(project.resolve())]["mcpServers"]["cortex"]
    assert entry["type"] == "stdio" and entry["args"][-1] == "mcp" and Path(entry["command"]).is_absolute()
    assert f"{user_file}: added MCP server 'cortex'" in first.stderr
    if (project / ".claude" / "settings.local.json").exists():  # this machine's path: kept out of git
        assert ".claude/settings.local.json" in (project / ".gitignore").read_text().splitlines()
        assert "added .claude/settings.local.json" in first.stderr
    snapshot = (settings.read_text(), (project / ".mcp.json").read_text(), user_file.read_text())
    again = cortex(project, "install", "claude")
    assert again.stderr.strip() == "already installed"
    assert (settings.read_text(), (project / ".mcp.json").read_text(), user_file.read_text()) == snapshot
    with_agent = cortex(project, "install", "claude", "--agent", "reviewer")
    assert "added hook SessionStart" in with_agent.stderr
    # the main session's hooks are personal, by this machine's cortex: `claude mcp list` fires SessionEnd
    # outside a session, without settings.local.json's env
    assert json.loads(settings.read_text())["hooks"]["Stop"] == mine["hooks"]["Stop"]
    local = json.loads((project / ".claude" / "settings.local.json").read_text())
    binary = shlex.join([local["env"]["CORTEX_BIN"]])
    commands = {e: [h["command"] for g in local["hooks"][e] for h in g["hooks"]] for e in local["hooks"]}
    assert commands == {e: [f"{binary} hook claude {e} --agent reviewer"]
                        for e in ("SessionStart", "Stop", "SessionEnd", "UserPromptSubmit")}
    assert not {"SessionStart", "SessionEnd", "UserPromptSubmit"} & set(json.loads(settings.read_text())["hooks"])
    removed = cortex(project, "uninstall", "claude")
    assert removed.returncode == 0 and "removed hook SubagentStart" in removed.stderr
    assert "added" not in removed.stderr
    assert json.loads(settings.read_text()) == mine
    assert json.loads((project / ".mcp.json").read_text()) == {"mcpServers": {"other": {"command": "other"}}}
    # the project entry install created is gone with it (one Claude Code made keeps its keys)
    assert str(project.resolve()) not in json.loads(user_file.read_text())["projects"]
    assert cortex(project, "uninstall", "claude").stderr.strip() == "nothing to remove"
    broken = project / ".claude" / "settings.json"
    broken.write_text("{not json")
    failed = cortex(project, "install", "claude")
    assert failed.returncode == 1 and "is not valid JSON" in failed.stderr and broken.read_text() == "{not json"


def test_installed_commands_run_without_the_virtualenv_on_path(project):
    seed(project, "Always check null pointers")
    assert cortex(project, "install", "claude", "--agent", "reviewer").returncode == 0
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["SubagentStart"][0]["hooks"][0]["command"]
    payload = json.dumps({"cwd": str(project), "agent_type": "reviewer", "hook_event_name": "SubagentStart"})
    # as `env -i PATH=/usr/bin:/bin`, with the env Claude Code takes from .claude/settings.local.json
    local = json.loads((project / ".claude" / "settings.local.json").read_text())["env"]
    bare = {"PATH": "/usr/bin:/bin", "CORTEX_EMBEDDINGS": "none", **local}
    result = subprocess.run(["/bin/sh", "-c", command], input=payload, capture_output=True, text=True, env=bare,
                            cwd="/", timeout=60)
    assert result.returncode == 0, result.stderr
    assert "Always check null pointers" in json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert subprocess.run(["/bin/sh", "-c", "cortex --version"], env=bare, capture_output=True).returncode != 0


def test_a_reader_that_goes_away_still_gets_exit_0(project):
    seed(project, "Always check null pointers")
    payload = json.dumps({"cwd": str(project), "agent_type": "reviewer"})
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will read the answer: writing it is a broken pipe
    try:
        result = subprocess.run([sys.executable, "-m", "cortex", "hook", "claude", "SubagentStart"],
                                input=payload.encode(), stdout=write_end, stderr=subprocess.PIPE, cwd=project,
                                env=env(), timeout=60)
    finally:
        os.close(write_end)
    assert result.returncode == 0, result.stderr.decode()


class _CountingProxy:
    """An HTTP proxy in front of a server that records each request it forwards (method and path)."""

    def __init__(self, target: str) -> None:
        import http.client
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from urllib.parse import urlsplit

        parts = urlsplit(target)
        seen = self.requests = []

        class Forward(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the hook's client uses it

            def _forward(self) -> None:
                seen.append(f"{self.command} {self.path.split('?')[0]}")
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                upstream = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                upstream.request(self.command, self.path, body=body or None, headers=headers)
                answer = upstream.getresponse()
                data = answer.read()
                self.send_response(answer.status)
                for key, value in answer.getheaders():
                    if key.lower() not in ("content-length", "connection", "transfer-encoding", "date", "server"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                upstream.close()

            do_GET = do_POST = do_PATCH = do_DELETE = _forward

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Forward)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _subagent_stop(project: Path, transcript: Path, **extra_env: str) -> None:
    result = hook(project, "SubagentStop", {"agent_type": "reviewer", "agent_id": "a1",
                                           "agent_transcript_path": str(transcript),
                                           "last_assistant_message": "Checked the null pointers.\n"
                                                                     "LEARNED: the parser rejects empty input"},
                  **extra_env)
    assert result.returncode == 0 and result.stdout == "", result.stderr


@pytest.mark.parametrize("shown", [True, False])
def test_a_subagent_stop_against_a_server_makes_at_most_4_requests(project, tmp_path, shown):
    seed(project, "Always check null pointers before dereferencing them in the parser")
    transcript = tmp_path / "agent.jsonl"
    transcript.write_text(json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "text", "text": "I always check null pointers before dereferencing them in the parser.\n"
                                 "PATTERN: guard clauses first"}]}}) + "\n")
    server = start_server(project)
    discovery = project / ".cortex" / "store" / "cortex-server.json"
    published = discovery.read_text()
    proxy = _CountingProxy(server.url)
    try:  # the hook finds the proxy in the discovery file, and every request it makes goes through it
        discovery.write_text(published.replace(server.url, proxy.url))
        if shown:
            started = hook(project, "SubagentStart", {"agent_type": "reviewer", "agent_id": "a1"})
            assert "null pointers" in started.stdout
        proxy.requests.clear()
        _subagent_stop(project, transcript, CORTEX_LLM_URL="http://127.0.0.1:9/v1", CORTEX_LLM_MODEL="m")
        made = list(proxy.requests)
    finally:
        discovery.write_text(published)
        proxy.close()
        server.stop()
    wanted = ["POST /v1/agents/reviewer/end", "POST /v1/agents/reviewer/tasks", "POST /v1/agents/reviewer/transcripts"]
    # the used signal when the agent was shown a block (the start resolved its name); else its name is asked once
    wanted.insert(1, "POST /v1/agents/reviewer/used") if shown else wanted.insert(0, "GET /v1/agents/resolve")
    assert made == wanted and len(made) <= 4  # today's hooks made 12: a /healthz and a resolve per step
    assert {"guard clauses first", "the parser rejects empty input"} <= set(stored(project))


def test_without_a_server_a_subagent_stop_opens_the_store_once(project, tmp_path, monkeypatch):
    from cortex.core import Cortex as Engine
    from cortex.service import hooks

    seed(project, "Always check null pointers before dereferencing them in the parser")
    transcript = project / "agent.jsonl"  # inside the project: a hook reads transcripts there or in ~/.claude
    transcript.write_text(json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "text", "text": "I always check null pointers before dereferencing them in the parser.\n"
                                 "PATTERN: guard clauses first"}]}}) + "\n")
    common = {"session_id": "s1", "cwd": str(project), "agent_type": "reviewer", "agent_id": "a1"}
    assert "null pointers" in hooks.run("SubagentStart", json.dumps(common))
    opened: list[object] = []
    real = Engine.open.__func__

    def counted(cls, *args, **kwargs):
        opened.append(args)
        return real(cls, *args, **kwargs)

    monkeypatch.setattr(Engine, "open", classmethod(counted))
    hooks.run("SubagentStop", json.dumps(common | {"agent_transcript_path": str(transcript),
                                                   "last_assistant_message": "Checked the null pointers.\n"
                                                                             "LEARNED: the parser rejects empty input"}))
    assert len(opened) == 1  # capture, the used signal and the task outcome through one open store
    monkeypatch.undo()
    with Engine.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register("reviewer")
        memories = cx.recall("reviewer", limit=100)
    assert {"guard clauses first", "the parser rejects empty input"} <= {m.content for m in memories}
    assert any(m.source == "task_completion" for m in memories)
    assert any(m.used_count for m in memories)  # the used signal went through the same store


def test_a_discovery_file_whose_pid_now_belongs_to_a_later_process_is_not_trusted_without_asking():
    """The hook sends its token to the server its discovery file names without a /healthz first only when the
    process with that pid started before the file was written: a pid the system reused is asked (or refused)."""
    import time

    from cortex import discovery

    me = discovery.ServerInfo(url="http://127.0.0.1:1", pid=os.getpid(), token="t", started=time.time())
    assert discovery.still_running(me)
    reused = discovery.ServerInfo(url="http://127.0.0.1:1", pid=os.getpid(), token="t", started=1_000_000.0)
    assert not discovery.still_running(reused)  # this process started long after that file was written
