"""Codex CLI, Cursor and Gemini CLI beside Claude Code: every recorded payload (tests/fixtures/harnesses) through
``python -m cortex hook <tool> EVENT``, answered in the tool's own format; the same agent's memory across tools,
with and without a server; ``cortex install/uninstall <tool>``; the PostToolUse channels (Beads comments, notes
files); bad and other-version payloads."""

from __future__ import annotations

import json
import shutil
import shlex
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from cortex import Cortex

from tests.service_helpers import cortex, env, make_project, start_server
from tests.paths import TESTS

FIXTURES = TESTS / "fixtures" / "harnesses"
TRANSCRIPTS = TESTS / "fixtures" / "transcripts"
AGENTS = ("developer", "reviewer")
#: The events of each tool whose answer injects the block (the starts, and the recall at each prompt).
STARTS = {"codex": ("SessionStart", "SubagentStart", "UserPromptSubmit"), "cursor": ("sessionStart",),
          "gemini": ("SessionStart", "BeforeAgent")}
RECORDED = sorted((tool, path.stem) for tool in ("codex", "cursor", "gemini")
                  for path in (FIXTURES / tool).glob("*.json") if path.stem not in ("config", "hooks", "mcp"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "shop", *AGENTS)


def homes(project: Path) -> dict[str, str]:
    """Where the tools keep their transcripts, for the hooks (beside the project)."""
    home = project.parent / "home"
    return {"CODEX_HOME": str(home / ".codex"), "GEMINI_CLI_HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude")}


def recorded(tool: str, name: str, project: Path) -> dict:
    """A recorded payload, made to point at ``project``: its cwd and workspace, its transcripts beside it (Cursor's,
    whose directory cannot be moved, in the project)."""
    data = json.loads((FIXTURES / tool / f"{name}.json").read_text())
    if "cwd" in data:
        data["cwd"] = str(project)
    if "workspace_roots" in data:
        data["workspace_roots"] = [str(project)]
    for key in ("transcript_path", "agent_transcript_path"):
        if isinstance(data.get(key), str):
            data[key] = data[key].replace("/home/dev/.cursor", str(project / ".cursor-home")).replace(
                "/home/dev", str(project.parent / "home"))
    return data


def hook(project: Path, tool: str, event: str, payload: dict | str, *args: str, cwd: Path | None = None,
         **extra_env: str) -> subprocess.CompletedProcess:
    raw = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run([sys.executable, "-m", "cortex", "hook", tool, event, *args], input=raw,
                          cwd=cwd or Path("/"), capture_output=True, text=True,
                          env=env(**homes(project), **extra_env), timeout=120)


def log_lines(project: Path) -> list[str]:
    path = project / ".cortex" / "logs" / "hooks.log"
    return path.read_text().splitlines() if path.exists() else []


def memories(project: Path, agent: str, *, tasks: bool = False) -> list[str]:
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register(agent)
        return sorted(m.content for m in cx.recall(agent, limit=100) if tasks or m.source != "task_completion")


def seed(project: Path, agent: str, *contents: str) -> None:
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register(agent)
        cx.store_many(agent, [{"content": c} for c in contents])


def rollout(path: Path, *assistant: str) -> Path:
    """A Codex rollout: the recorded one (tests/fixtures/transcripts), then a turn whose assistant says
    ``assistant``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = (TRANSCRIPTS / "codex_rollout.jsonl").read_text().splitlines()
    for text in assistant:
        lines.append(json.dumps({"timestamp": "2026-09-02T09:15:00.000Z", "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}}))
    path.write_text("\n".join(lines) + "\n")
    return path


# -- every recorded payload, answered in its tool's format -----------------------------------------------------


@pytest.mark.parametrize("tool,name", RECORDED, ids=[f"{t}-{n}" for t, n in RECORDED])
def test_every_recorded_payload_is_answered_in_its_tools_format(project, tool, name):
    seed(project, "developer", "Money amounts are Decimal, never float")
    seed(project, "reviewer", "Reviews flag float arithmetic on money")
    payload = recorded(tool, name, project)
    event = payload["hook_event_name"]
    result = hook(project, tool, event, payload, "--agent", "developer")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    answers = FIXTURES / tool / "responses" / f"{event}.json"
    if event in STARTS[tool]:
        out = json.loads(result.stdout)
        expected = json.loads(answers.read_text())
        assert out.keys() == expected.keys()  # exactly the tool's keys: Codex refuses any other
        if tool == "cursor":
            context = out["additional_context"]
        else:
            assert out["hookSpecificOutput"].keys() == expected["hookSpecificOutput"].keys()
            assert out["hookSpecificOutput"]["hookEventName"] == event
            context = out["hookSpecificOutput"]["additionalContext"]
        memory = "Reviews flag float" if event == "SubagentStart" else "Money amounts are Decimal"
        assert memory in context and len(context) < 10_000
        if tool == "gemini":  # the CLI escapes tags: a block without them
            assert "<agent-memory" not in context and "</agent-memory>" not in context
            assert context.startswith("Agent memory (developer):\n- [")
        else:
            assert context.startswith("<agent-memory>\n")
    elif tool == "codex":
        assert result.stdout == ""  # nothing at all: plain text is invalid on Stop, and nothing else is owed
    else:
        assert json.loads(result.stdout) == {}  # valid for every event, and changes nothing
    log = "\n".join(log_lines(project))
    assert "Traceback" not in log and "payload has no" not in log  # the version the adapter was built against


def test_codex_captures_for_the_agent_that_wrote_it(project):
    home = Path(homes(project)["CODEX_HOME"])
    stop = recorded("codex", "Stop", project)
    rollout(Path(stop["transcript_path"]), "Looking at the totals.\nLEARNED: line items keep their own precision")
    assert hook(project, "codex", "Stop", stop, "--agent", "developer").stdout == ""
    assert memories(project, "developer") == [
        "line items keep their own precision",  # what the rollout gained, the recorded turn's learning included
        "money in shop/ is rounded only with Decimal.quantize(CENT, ROUND_HALF_UP), never round(float).",
        "order totals must be quantized once, after summing, not per line."]
    assert hook(project, "codex", "Stop", stop, "--agent", "developer").returncode == 0  # the rollout: read once
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register("developer")
        [line] = cx.recall("developer", "precision")
        assert line.usage_count == 0
    # a subagent: its own rollout, its task from the parent's spawn_agent call
    parent = Path(stop["transcript_path"])
    with open(parent, "a") as fh:
        fh.write(json.dumps({"timestamp": "2026-09-02T09:14:40.000Z", "type": "response_item", "payload": {
            "type": "function_call", "name": "spawn_agent", "call_id": "call_1", "arguments": json.dumps(
                {"agent_type": "reviewer", "message": "Review shop/orders.py for float arithmetic"})}}) + "\n")
    sub = recorded("codex", "SubagentStop", project)
    rollout(Path(sub["agent_transcript_path"]), "PATTERN: money helpers live in shop/money.py")
    assert hook(project, "codex", "SubagentStop", sub).stdout == ""
    assert memories(project, "reviewer") == [
        "money helpers live in shop/money.py",
        "money in shop/ is rounded only with Decimal.quantize(CENT, ROUND_HALF_UP), never round(float).",
        "tests/test_orders.py covers rounding only for EUR."]
    [outcome] = set(memories(project, "reviewer", tasks=True)) - set(memories(project, "reviewer"))
    assert "Review shop/orders.py for float arithmetic" in outcome and "no float arithmetic left" in outcome
    assert "line items" not in " ".join(memories(project, "reviewer"))  # the developer's
    assert home.is_dir()


def codex_line(kind: str, payload: dict) -> str:
    return json.dumps({"timestamp": "2026-09-02T09:14:40.000Z", "type": kind, "payload": payload})


def test_a_codex_subagent_block_is_ranked_for_the_task_in_its_parents_rollout(project):
    """Codex's SubagentStart gives the child's own rollout as transcript_path: its first line names the parent
    thread, whose rollout (found beside it, or in another day's directory) holds the spawn_agent call."""
    seed(project, "reviewer", "Reviews flag float arithmetic on money", "SQL migrations must be reversible",
         "Login forms rate-limit by IP", "HTTP client retries back off exponentially")
    start = recorded("codex", "SubagentStart", project)
    child = Path(start["transcript_path"])
    parent_id, child_id = "01a06165-9f48-7d7a-8158-43d939b1d300", start["agent_id"]
    assert child.name.endswith(f"-{child_id}.jsonl") and start["session_id"] != parent_id
    child.parent.mkdir(parents=True)
    child.write_text("\n".join([  # as Codex writes a spawned thread: its meta, then the parent's, inherited
        codex_line("session_meta", {"id": child_id, "cwd": str(project), "source": {"subagent": {"thread_spawn": {
            "parent_thread_id": parent_id, "depth": 1, "agent_nickname": "Darwin", "agent_role": "reviewer"}}},
            "thread_source": "subagent"}),
        codex_line("session_meta", {"id": parent_id, "cwd": str(project), "source": "cli"})]) + "\n")
    # the parent's rollout, a day earlier (a session that ran past midnight): two reviewers spawned, the first
    # one linked to this child by its activity event
    parent = child.parent.parent / "01" / f"rollout-2026-09-01T23-50-00-{parent_id}.jsonl"
    parent.parent.mkdir(parents=True)

    def spawn(call: str, task: str) -> str:
        return codex_line("response_item", {"type": "function_call", "name": "spawn_agent", "call_id": call,
                                            "arguments": json.dumps({"agent_type": "reviewer", "message": task})})

    parent.write_text("\n".join([
        codex_line("session_meta", {"id": parent_id, "cwd": str(project), "source": "cli"}),
        spawn("call_1", "Check the SQL migration that adds the orders index"),
        codex_line("event_msg", {"type": "sub_agent_activity", "event_id": "call_1", "agent_thread_id": child_id,
                                 "kind": "started"}),
        spawn("call_2", "Check the login form")]) + "\n")

    def block(payload: dict) -> str:
        result = hook(project, "codex", "SubagentStart", payload)
        assert result.returncode == 0 and result.stderr == ""
        return str(json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"])

    assert "SQL migrations must be reversible" in block(start).splitlines()[1]
    # another child, not linked by any event yet: the latest spawn for its type
    other = child.with_name(child.name.replace(child_id, "01a06166-0000-7000-8000-000000000002"))
    other.write_text(child.read_text().replace(child_id, "01a06166-0000-7000-8000-000000000002"))
    later = {**start, "agent_id": "01a06166-0000-7000-8000-000000000002", "transcript_path": str(other)}
    assert "Login forms rate-limit by IP" in block(later).splitlines()[1]
    # the parent's rollout gone: the block is the agent's, unranked, and the log says why
    parent.unlink()
    assert "Reviews flag float" in block(start)
    assert any("parent thread" in x and parent_id in x for x in log_lines(project))
    # an older Codex that gave the parent's rollout itself still finds the call there
    parent.write_text(codex_line("session_meta", {"id": parent_id, "source": "cli"}) + "\n"
                      + spawn("call_3", "Check the SQL migration that adds the orders index") + "\n")
    assert "SQL migrations must be reversible" in block({**start, "transcript_path": str(parent)}).splitlines()[1]


def test_cursor_and_gemini_capture_the_payloads_text(project):
    assert hook(project, "cursor", "afterAgentResponse", recorded("cursor", "afterAgentResponse", project),
                "--agent", "developer").stdout.strip() == "{}"
    assert hook(project, "cursor", "subagentStop", recorded("cursor", "subagentStop", project)).stdout.strip() == "{}"
    assert memories(project, "developer") == ["order totals must be quantized once, after summing, not per line."]
    assert memories(project, "reviewer") == ["tests/test_orders.py covers rounding only for EUR."]
    [outcome] = set(memories(project, "reviewer", tasks=True)) - set(memories(project, "reviewer"))
    assert "Review shop/orders.py for float arithmetic on money" in outcome
    seed(project, "developer", "Run pytest with -q")
    gemini = hook(project, "gemini", "AfterAgent", recorded("gemini", "AfterAgent", project), "--agent", "developer")
    assert gemini.stdout.strip() == "{}" and gemini.stderr == ""
    assert len(memories(project, "developer")) == 2  # the same learning: confirmed, not stored again
    again = recorded("gemini", "AfterAgent", project) | {"stop_hook_active": True,
                                                         "prompt_response": "LEARNED: not while retrying"}
    hook(project, "gemini", "AfterAgent", again, "--agent", "developer")
    assert "not while retrying" not in memories(project, "developer")


def test_a_cursor_conversation_touches_its_memories_once(project):
    seed(project, "developer", "Money amounts are Decimal, never float")
    start = recorded("cursor", "sessionStart", project)
    for _ in range(3):  # Cursor's sessionStart does not say it resumes
        assert "Money amounts" in hook(project, "cursor", "sessionStart", start, "--agent", "developer").stdout
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register("developer")
        assert [m.usage_count for m in cx.recall("developer")] == [1]


# -- one agent's memory, whichever tool it works in ---------------------------------------------------------------


@pytest.mark.parametrize("server", [False, True], ids=["no-server", "server"])
def test_the_same_agents_memory_serves_codex_and_claude_code(project, server):
    running = start_server(project) if server else None
    try:
        # a Codex session: its Stop hook's last message, and what its rollout gained
        stop = recorded("codex", "Stop", project)
        rollout(Path(stop["transcript_path"]), "Checked the invoice PDF.\nLEARNED: invoice PDFs quantize like orders")
        assert hook(project, "codex", "Stop", stop, "--agent", "developer").returncode == 0
        # the next Claude Code session of the same agent starts with it
        start = {"session_id": "claude-1", "transcript_path": "", "cwd": str(project),
                 "hook_event_name": "SessionStart", "source": "startup"}
        out = hook(project, "claude", "SessionStart", start, "--agent", "developer")
        context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "order totals must be quantized once" in context and "invoice PDFs quantize like orders" in context
        # and back: a Claude Code Stop, then Codex's next SessionStart
        claude = Path(homes(project)["CLAUDE_CONFIG_DIR"]) / "projects" / "shop" / "claude-1.jsonl"
        claude.parent.mkdir(parents=True)
        claude.write_text(json.dumps({"type": "assistant", "sessionId": "claude-1", "message": {
            "role": "assistant", "content": [{"type": "text", "text": "Done.\nDECISION: refunds go through "
                                                                          "shop/money.py"}]}}) + "\n")
        ended = {"session_id": "claude-1", "transcript_path": str(claude), "cwd": str(project),
                 "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": "Done."}
        assert hook(project, "claude", "Stop", ended, "--agent", "developer").returncode == 0
        again = recorded("codex", "SessionStart", project) | {"session_id": "codex-2"}
        out = hook(project, "codex", "SessionStart", again, "--agent", "developer")
        context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "refunds go through shop/money.py" in context and "invoice PDFs quantize like orders" in context
    finally:
        if running is not None:
            running.stop()
    assert memories(project, "developer") == [
        "invoice PDFs quantize like orders",
        "money in shop/ is rounded only with Decimal.quantize(CENT, ROUND_HALF_UP), never round(float).",
        "order totals must be quantized once, after summing, not per line.", "refunds go through shop/money.py"]
    log = "\n".join(log_lines(project))
    assert "Traceback" not in log and "Error" not in log


# -- PostToolUse: Beads comments and notes files ----------------------------------------------------------------


BD = 'cd shop && bd comment shop-12 "LEARNED: refunds round half up, like orders" --json'
#: What Codex's exec_command tool gives the model (and records in the rollout): its status in a header.
EXEC_OUTPUT = "Chunk ID: 4b2e9f\nWall time: 0.2140 seconds\nProcess exited with code {code}\nOriginal token count: 12\n" \
              "Output:\n{output}"
TOOL_CALLS = {
    "claude": ("PostToolUse", {"session_id": "s", "transcript_path": "", "hook_event_name": "PostToolUse",
                               "tool_name": "Bash", "tool_input": {"command": BD}, "tool_response": {"stdout": ""}}),
    "codex": ("PostToolUse", None),
    "cursor": ("afterShellExecution", None),
    "gemini": ("AfterTool", None),
}


@pytest.mark.parametrize("tool", sorted(TOOL_CALLS))
def test_a_beads_comments_learning_names_its_bead(project, tool):
    event, payload = TOOL_CALLS[tool]
    if payload is None:
        payload = recorded(tool, event, project)
        if tool == "cursor":
            payload["command"] = BD
        else:
            payload["tool_input"] = {**payload["tool_input"], "command": BD}
        if tool == "codex":  # a response that says the command succeeded (the recorded one says nothing)
            payload["tool_response"] = EXEC_OUTPUT.format(code=0, output='{"id": "shop-12", "comments": 3}')
    payload = {**payload, "cwd": str(project)} if "workspace_roots" not in payload else payload
    result = hook(project, tool, event, payload, "--agent", "developer")
    assert result.returncode == 0 and result.stderr == ""
    assert memories(project, "developer") == ["refunds round half up, like orders"]
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register("developer")
        [memory] = cx.recall("developer")
        activity = cx.provenance("developer", memory.id).generated_by
        assert (activity.channel, activity.part, activity.surface) == ("beads", "bead shop-12", "hook")
        assert activity.event == (event if tool == "claude" else f"{tool}:{event}")


def test_a_codex_beads_comment_is_stored_only_when_its_command_succeeded(project):
    """Codex's PostToolUse fires for failed commands too, with the output alone (no exit status): such a comment
    waits for Stop, which reads each command's status in the rollout; a failed one (bd not found) is never stored."""
    post = recorded("codex", "PostToolUse", project)
    assert isinstance(post["tool_response"], str) and "exit" not in post["tool_response"].lower()
    failed = 'bd comment shop-13 "LEARNED: refunds are never rounded"'
    for command, response in ((BD, '{"id": "shop-12", "comments": 3}'),  # the recorded shape: the output alone
                              (failed, "bash: line 1: bd: command not found\n"),
                              (failed, EXEC_OUTPUT.format(code=127, output="bash: line 1: bd: command not found"))):
        payload = {**post, "tool_input": {"command": command}, "tool_response": response}
        result = hook(project, "codex", "PostToolUse", payload, "--agent", "developer")
        assert result.returncode == 0 and result.stdout == "" and result.stderr == ""
    assert memories(project, "developer") == []  # none said it succeeded
    stop = recorded("codex", "Stop", project)
    path = rollout(Path(stop["transcript_path"]))

    def exec_call(call: str, command: str, code: int, output: str) -> list[str]:
        return [codex_line("response_item", {"type": "function_call", "name": "exec_command", "call_id": call,
                                             "arguments": json.dumps({"cmd": command, "workdir": str(project)})}),
                codex_line("response_item", {"type": "function_call_output", "call_id": call,
                                             "output": EXEC_OUTPUT.format(code=code, output=output)})]

    with open(path, "a") as fh:
        fh.write("\n".join([*exec_call("call_ok", BD, 0, '{"id": "shop-12"}'),
                            *exec_call("call_bad", failed, 127, "bash: line 1: bd: command not found"),
                            # an older rollout's shell tool: its status in the JSON metadata
                            codex_line("response_item", {"type": "function_call", "name": "shell", "call_id": "c3",
                                                         "arguments": json.dumps({"command": ["bash", "-lc", failed]})}),
                            codex_line("response_item", {"type": "function_call_output", "call_id": "c3", "output":
                                json.dumps({"output": "Error: no issue shop-13", "metadata": {"exit_code": 1}})}),
                            ]) + "\n")
    assert hook(project, "codex", "Stop", stop, "--agent", "developer").stdout == ""
    stored = memories(project, "developer")
    assert "refunds round half up, like orders" in stored and not any("never rounded" in m for m in stored)
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register("developer")
        [memory] = cx.recall("developer", "refunds round half up")
        activity = cx.provenance("developer", memory.id).generated_by
        assert (activity.channel, activity.part, activity.event) == ("beads", "bead shop-12", "codex:Stop")


def test_a_shell_commands_status_is_read_only_where_its_tool_says_it():
    from cortex.service.harnesses.tools import shell_outcome

    assert shell_outcome(EXEC_OUTPUT.format(code=0, output="ok")) is True
    assert shell_outcome(EXEC_OUTPUT.format(code=127, output="bd: command not found")) is False
    assert shell_outcome("Exit code: 2\nWall time: 0.1 seconds\nOutput:\nfail") is False  # shell_command
    assert shell_outcome([{"type": "input_text", "text": EXEC_OUTPUT.format(code=0, output="")}]) is True
    assert shell_outcome({"stdout": "", "exit_code": 3}) is False and shell_outcome({"success": True}) is True
    assert shell_outcome('{"output": "x", "metadata": {"exit_code": 0}}') is True
    # what the command printed is not its status: only the header before "Output:" is read
    assert shell_outcome("Output:\nProcess exited with code 0") is None
    assert shell_outcome("Process exited with code 0 and then some") is None
    for unknown in ("plain output", "", None, 0, {"exit_code": True}, {"exit_code": "x"}, "{not json", [1, 2],
                    "{" + '"a": [' * 100_000):
        assert shell_outcome(unknown) is None, unknown


def test_the_bead_reaches_provenance_through_the_server(project):
    server = start_server(project)
    try:
        event, payload = TOOL_CALLS["claude"]
        hook(project, "claude", event, {**payload, "cwd": str(project)}, "--agent", "developer")
    finally:
        server.stop()
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register("developer")
        [memory] = cx.recall("developer")
        activity = cx.provenance("developer", memory.id).generated_by
        assert (activity.channel, activity.part, activity.surface) == ("beads", "bead shop-12", "hook")


def test_bead_comments_are_read_as_the_shell_splits_them():
    from cortex.service.harnesses.tools import bead_comments, patch_files

    assert bead_comments('bd comment bd-a1 "LEARNED: x y"') == [("bd-a1", "LEARNED: x y")]
    assert bead_comments("FOO=1 /usr/local/bin/bd --db .beads/x.db comments add shop-1.2 'DECISION: use uv' "
                         "--author me | tee log") == [("shop-1.2", "DECISION: use uv")]
    assert bead_comments('bd comment x-1 LEARNED: three words here > /dev/null; bd comment x-2 "PATTERN: p"') == [
        ("x-1", "LEARNED: three words here"), ("x-2", "PATTERN: p")]
    assert bead_comments("bd comment x-1 \"$(cat <<'EOF'\nDone.\nLEARNED: a heredoc\nEOF\n)\"") == [
        ("x-1", "$(cat <<'EOF'\nDone.\nLEARNED: a heredoc\nEOF\n)")]
    for other in ('bd comment "LEARNED: no id', "bd show x-1", "echo bd comment x-1 y", "bd comments x-1",
                  "abd comment x-1 y", ""):
        assert bead_comments(other) == [], other
    patch = "*** Begin Patch\n*** Update File: notes/a.md\n@@\n-x\n+y\n*** Add File: b.md\n+z\n*** End Patch"
    assert patch_files({"command": ["apply_patch", patch]}) == ["notes/a.md", "b.md"]
    assert patch_files({"input": patch}) == ["notes/a.md", "b.md"] and patch_files("nothing") == []


@pytest.mark.parametrize("tool,event,payload", [
    ("claude", "PostToolUse", {"tool_name": "Write", "tool_input": {"file_path": "NOTES", "content": "# x"}}),
    ("claude", "PostToolUse", {"tool_name": "Edit", "tool_input": {"file_path": "NOTES"}}),
    ("codex", "PostToolUse", {"tool_name": "apply_patch", "tool_input": {
        "command": "*** Begin Patch\n*** Update File: .cortex/notes/developer/MEMORY.md\n@@\n+x\n*** End Patch"}}),
    ("cursor", "afterFileEdit", {"file_path": "NOTES", "edits": []}),
    ("gemini", "AfterTool", {"tool_name": "write_file", "tool_input": {"file_path": "NOTES", "content": "# x"}}),
])
def test_a_notes_file_written_by_a_tool_is_synced(project, tool, event, payload):
    from cortex.service import hooks

    notes_file = project / ".cortex" / "notes" / "developer" / "MEMORY.md"
    notes_file.parent.mkdir(parents=True)
    notes_file.write_text("## Deploy\nUse make deploy-staging.\n")
    code = notes_file.with_suffix(".py")
    code.write_text("## Not notes\nx = 1\n")
    raw = json.dumps(payload).replace("NOTES", str(notes_file))
    common = {"session_id": "s", "cwd": str(project), "workspace_roots": [str(project)], "hook_event_name": event}
    hooks.run(event, json.dumps(common | json.loads(raw.replace(".md", ".py"))), "developer", tool)
    assert memories(project, "developer") == []  # Markdown in a notes directory only
    hooks.run(event, json.dumps(common | json.loads(raw)), "developer", tool)
    assert memories(project, "developer") == ["Deploy\nUse make deploy-staging."]


# -- cortex install / uninstall ----------------------------------------------------------------------------------

FOREIGN = {
    "codex": {".codex/hooks.json": json.dumps({"hooks": {"Stop": [{"hooks": [
                  {"type": "command", "command": "echo mine", "timeout": 5}]}]}}, indent=1),
              ".codex/config.toml": 'model = "gpt-5.3-codex"  # mine\n\n[mcp_servers.other]\ncommand = "other"\n\n'
                                    '[hooks.state."/x/.codex/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:abc"\n'},
    "cursor": {".cursor/hooks.json": json.dumps({"version": 1, "hooks": {"afterFileEdit": [
                   {"command": "./format.sh", "timeout": 10}]}}, indent=2) + "\n",
               ".cursor/mcp.json": json.dumps({"mcpServers": {"other": {"command": "other"}}}, indent=2) + "\n"},
    "gemini": {".gemini/settings.json": json.dumps({"theme": "GitHub", "hooks": {"BeforeTool": [
                   {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./guard.sh"}]}]},
                   "mcpServers": {"other": {"command": "other"}}}, indent=2) + "\n"},
}


def installed_commands(project: Path, tool: str) -> dict[str, list[str]]:
    data = json.loads((project / {"codex": ".codex/hooks.json", "cursor": ".cursor/hooks.json",
                                  "gemini": ".gemini/settings.json"}[tool]).read_text())
    if tool == "cursor":
        return {e: [h["command"] for h in entries] for e, entries in data["hooks"].items()}
    return {e: [h["command"] for g in groups for h in g["hooks"]] for e, groups in data["hooks"].items()}


def documented_commands(tool: str) -> dict[str, list[str]]:
    """The commands of the recorded install snippets (what each tool's docs shape an entry as)."""
    name = {"codex": "hooks.json", "cursor": "config.json", "gemini": "config.json"}[tool]
    data = json.loads((FIXTURES / tool / name).read_text())["hooks"]
    if tool == "cursor":
        return {e: [h["command"] for h in entries] for e, entries in data.items()}
    return {e: [h["command"] for g in groups for h in g["hooks"]] for e, groups in data.items()}


@pytest.mark.parametrize("tool", ["codex", "cursor", "gemini"])
def test_install_and_uninstall_are_exact_and_leave_foreign_entries(project, tool):
    for name, text in FOREIGN[tool].items():
        (project / name).parent.mkdir(exist_ok=True)
        (project / name).write_text(text)
    first = cortex(project, "install", tool)
    assert first.returncode == 0, first.stderr
    assert cortex(project, "install", tool).stderr.strip() == "already installed"
    with_agent = cortex(project, "install", tool, "--agent", "developer")
    assert with_agent.returncode == 0 and "added hook" in with_agent.stderr
    commands = installed_commands(project, tool)
    from cortex.service.install import resolved_argv

    argv = resolved_argv()
    if tool in ("codex", "gemini"):  # this machine's cortex by absolute path (nothing sets $CORTEX_BIN for them)
        binary = shlex.join(argv)
        assert all(c.startswith(f"{binary} hook {tool} ") for cs in commands.values() for c in cs if "cortex" in c)
        commands = {e: [c.replace(binary, '"${CORTEX_BIN:-cortex}"', 1) for c in cs] for e, cs in commands.items()}
    for event, documented in documented_commands(tool).items():  # the commands the tool's snippets show
        if event in commands:
            assert [c for c in commands[event] if "cortex" in c] == documented, event
    assert all('"${CORTEX_BIN:-cortex}" hook ' + tool in c for cs in commands.values() for c in cs
               if "cortex" in c)
    if tool == "codex":
        assert "trust" in first.stderr and "/hooks" in first.stderr
        data = tomllib.loads((project / ".codex/config.toml").read_text())
        assert data["mcp_servers"] == {"other": {"command": "other"},
                                       "cortex": {"command": argv[0], "args": [*argv[1:], "mcp"]}}
        assert data["model"] == "gpt-5.3-codex" and "hooks" in data
        hooks = json.loads((project / ".codex/hooks.json").read_text())["hooks"]
        assert hooks["SessionEnd"][0]["hooks"][0]["timeout"] == 3  # Codex's cap for SessionEnd
        assert hooks["PostToolUse"][0]["matcher"] == "Bash|apply_patch"
        assert commands["Stop"][0] == "echo mine"
    elif tool == "cursor":
        data = json.loads((project / ".cursor/hooks.json").read_text())
        assert data["version"] == 1 and data["hooks"]["afterFileEdit"][0]["command"] == "./format.sh"
        assert "subagentStart" not in data["hooks"]  # it takes no context
        servers = json.loads((project / ".cursor/mcp.json").read_text())["mcpServers"]
        assert servers["other"] == {"command": "other"} and "${" not in servers["cortex"]["command"]
        assert servers["cortex"]["env"] == {"CORTEX_STORE": "${workspaceFolder}/.cortex/store"}
    else:
        data = json.loads((project / ".gemini/settings.json").read_text())
        assert data["theme"] == "GitHub" and data["hooks"]["BeforeTool"][0]["hooks"][0]["command"] == "./guard.sh"
        assert data["hooks"]["SessionStart"][0]["hooks"][0] == {
            "name": "cortex-SessionStart", "type": "command", "timeout": 30000,
            "command": f"{shlex.join(argv)} hook gemini SessionStart --agent developer"}
        assert data["mcpServers"]["cortex"] == {"command": argv[0], "args": [*argv[1:], "mcp"]}
    # a teammate's install without --agent keeps the agent the tool hooks name
    assert cortex(project, "install", tool).stderr.strip() == "already installed"
    removed = cortex(project, "uninstall", tool)
    assert removed.returncode == 0 and "removed" in removed.stderr
    for name, text in FOREIGN[tool].items():  # JSON is written again (as the tools do); TOML as it was
        after = (project / name).read_text()
        assert (json.loads(after) == json.loads(text)) if name.endswith(".json") else (after == text), name
    assert cortex(project, "uninstall", tool).stderr.strip() == "nothing to remove"


@pytest.mark.parametrize("tool", ["codex", "cursor", "gemini"])
def test_install_into_a_fresh_project_is_removed_whole(project, tool):
    assert cortex(project, "install", tool, "--agent", "developer").returncode == 0
    assert cortex(project, "uninstall", tool).returncode == 0
    leftover = [p for d in (".codex", ".cursor", ".gemini") for p in (project / d).rglob("*") if p.is_file()]
    assert leftover == []


def test_install_refuses_what_it_cannot_merge(project):
    (project / ".codex").mkdir()
    (project / ".codex/config.toml").write_text('mcp_servers = { other = { command = "x" } }\n')
    refused = cortex(project, "install", "codex")
    assert refused.returncode == 1 and "add it by hand" in refused.stderr
    assert not (project / ".codex/hooks.json").exists()  # nothing was written
    (project / ".codex/config.toml").write_text("[mcp_servers.cortex]\ncommand = 'mine'\n")
    assert "another MCP server" in cortex(project, "install", "codex").stderr
    (project / ".codex/config.toml").write_text("not = [toml\n")
    assert "not valid TOML" in cortex(project, "install", "codex").stderr
    (project / ".gemini").mkdir()
    (project / ".gemini/settings.json").write_text('{"hooks": {"SessionStart": "nope"}}')
    assert "fix it first" in cortex(project, "install", "gemini", "--agent", "developer").stderr
    assert "is not declared" in cortex(project, "install", "cursor", "--agent", "ghost").stderr
    assert not (project / ".cursor").exists()


def test_install_claude_wires_post_tool_use(project):
    assert cortex(project, "install", "claude").returncode == 0
    settings = project / ".claude" / "settings.json"
    [group] = json.loads(settings.read_text())["hooks"]["PostToolUse"]
    assert group == {"matcher": "Write|Edit|Bash", "hooks": [
        {"type": "command", "command": '"${CORTEX_BIN:-cortex}" hook claude PostToolUse', "timeout": 30}]}
    assert cortex(project, "install", "claude", "--agent", "developer").returncode == 0
    command = json.loads(settings.read_text())["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
    assert command == '"${CORTEX_BIN:-cortex}" hook claude PostToolUse --agent developer'
    assert cortex(project, "install", "claude").stderr.strip() == "already installed"  # keeps its agent
    assert cortex(project, "uninstall", "claude").returncode == 0
    assert "PostToolUse" not in json.loads(settings.read_text()).get("hooks", {}) if settings.exists() else True


def test_installed_codex_and_gemini_commands_run_through_a_shell(project):
    from cortex.service.install import local_bin

    executable = local_bin()
    if executable is None:
        pytest.skip("no cortex console script in this installation")
    seed(project, "developer", "Money amounts are Decimal, never float")
    for tool, event in (("codex", "SessionStart"), ("gemini", "SessionStart")):
        assert cortex(project, "install", tool, "--agent", "developer").returncode == 0
        command = installed_commands(project, tool)[event][0]
        bare = {"PATH": "/usr/bin:/bin", "CORTEX_BIN": executable, "CORTEX_EMBEDDINGS": "none",
                **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {})}
        payload = json.dumps(recorded(tool, event, project))
        result = subprocess.run(["/bin/sh", "-c", command], input=payload, capture_output=True, text=True,
                                env=bare, cwd=project, timeout=60)
        assert result.returncode == 0 and result.stderr == "", result.stderr
        assert "Money amounts" in json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]


# -- bad input: a hook always exits 0 and says why in one log line ----------------------------------------------

OTHER_VERSION = {
    # an older or newer payload: fields gone, others added
    "codex": ("Stop", {"session_id": "x", "hook_event_name": "Stop", "reasoning_effort": "high",
                       "message": "LEARNED: kept from a field Codex renamed"}),
    "cursor": ("afterAgentResponse", {"conversation_id": "x", "hook_event_name": "afterAgentResponse",
                                      "response_text": "LEARNED: a renamed field", "cursor_version": "9.0"}),
    "gemini": ("AfterAgent", {"session_id": "x", "hook_event_name": "AfterAgent", "llm_response": "LEARNED: gone"}),
}
NOTHING = {"codex": "", "cursor": "{}", "gemini": "{}"}


@pytest.mark.parametrize("tool", ["codex", "cursor", "gemini"])
def test_bad_and_other_version_payloads_exit_0_with_one_log_line(project, tool):
    event, payload = OTHER_VERSION[tool]
    payload = payload | ({"workspace_roots": [str(project)]} if tool == "cursor" else {"cwd": str(project)})
    other_tools = {"codex": recorded("cursor", "afterAgentResponse", project),
                   "cursor": recorded("gemini", "AfterAgent", project) | {"workspace_roots": [str(project)]},
                   "gemini": recorded("codex", "Stop", project)}
    for raw in ("{oops", "[1, 2]", '"text"', json.dumps(payload), json.dumps(other_tools[tool]), "{}"):
        before = len(log_lines(project))
        result = hook(project, tool, event, raw, "--agent", "developer", cwd=project)
        assert result.returncode == 0 and result.stdout.strip() == NOTHING[tool], (raw, result.stdout)
        assert result.stderr == "" or tool != "gemini"
        new = log_lines(project)[before:]
        assert len(new) == 1, (raw, new)
        assert "Traceback" not in new[0] and (f"{tool}:{event}" in new[0])
    assert not (project / ".cortex" / "store").exists() or memories(project, "developer") == []
    for args in ([tool], [tool, event, "extra"], [tool, "--agent"]):
        ran = subprocess.run([sys.executable, "-m", "cortex", "hook", *args], input="{}", capture_output=True,
                             text=True, cwd=project, env=env(), timeout=60)
        assert ran.returncode == 0
    assert "malformed hook command line" in log_lines(project)[-1]


def test_gemini_prints_nothing_on_stderr_even_where_others_would(tmp_path, project):
    outside = tmp_path / "not-a-project"
    outside.mkdir()
    for payload in ({"cwd": str(outside), "hook_event_name": "SessionStart", "source": "startup"},
                    {"cwd": str(tmp_path / "missing"), "hook_event_name": "SessionStart"}):
        gemini = hook(project, "gemini", "SessionStart", payload, "--agent", "developer")
        assert gemini.returncode == 0 and gemini.stderr == "" and json.loads(gemini.stdout) == {}
        codex = hook(project, "codex", "SessionStart", payload, "--agent", "developer")
        assert codex.returncode == 0 and codex.stdout == ""


# -- the transcripts of Cursor and Gemini CLI (for a language model) ---------------------------------------------


def test_cursor_and_gemini_transcripts_are_read(tmp_path):
    from cortex.capture.transcripts import read

    cursor = read(FIXTURES / "cursor" / "transcript.agent.jsonl")
    assert cursor.format == "cursor" and cursor.problems == []
    assert [(m.role, m.kind) for m in cursor.messages] == [("user", "text"), ("assistant", "text"),
                                                           ("assistant", "tool_use"), ("assistant", "text")]
    assert cursor.messages[0].text == "Fix the rounding bug in order totals; money must stay Decimal."
    gemini = read(FIXTURES / "gemini" / "transcript.session.jsonl")
    assert gemini.format == "gemini" and gemini.session_id == "79b7fe51-a95b-4919-8807-47adc8ea111a"
    # the message written again with its tool call is one message, in its place
    assert [(m.role, m.kind) for m in gemini.messages] == [("user", "text"), ("assistant", "text"),
                                                           ("assistant", "tool_use"), ("tool", "tool_result"),
                                                           ("assistant", "text")]
    assert "LEARNED: order totals" in gemini.messages[-1].text
    rewound = tmp_path / "rewound.jsonl"
    lines = (FIXTURES / "gemini" / "transcript.session.jsonl").read_text().splitlines()
    rewound.write_text("\n".join(lines + ['{"$rewindTo": "c41b7d93-8a0e-4f62-b5d7-2e9f1a6c3b58"}']) + "\n")
    assert "LEARNED" not in " ".join(m.text for m in read(rewound).messages)
    copy = tmp_path / "copy.jsonl"
    shutil.copy(FIXTURES / "cursor" / "transcript.agent.jsonl", copy)
    assert read(copy, format="cursor").end == copy.stat().st_size


def test_with_a_server_each_tools_hook_imports_no_heavy_module(project):
    """With a server, a hook is a few standard-library HTTP calls whatever the tool (a rollout read included)."""
    seed(project, "developer", "Money amounts are Decimal, never float")
    stop = recorded("codex", "Stop", project)
    rollout(Path(stop["transcript_path"]))
    calls = [("codex", "Stop", stop), ("codex", "SessionStart", recorded("codex", "SessionStart", project)),
             ("cursor", "sessionStart", recorded("cursor", "sessionStart", project)),
             ("gemini", "SessionStart", recorded("gemini", "SessionStart", project)),
             ("claude", "PostToolUse", {**TOOL_CALLS["claude"][1], "cwd": str(project)})]
    script = ("import sys, io; sys.stdin = io.StringIO(sys.argv[1]); from cortex.__main__ import main\n"
              "sys.argv = ['cortex', 'hook', sys.argv[2], sys.argv[3], '--agent', 'developer']\n"
              "try:\n    main()\nexcept SystemExit:\n    pass\n"
              "heavy = ('mcp', 'fastapi', 'rdflib', 'uvicorn', 'torch', 'numpy', 'pyoxigraph', 'pydantic', 'httpx')\n"
              "print(sorted(m for m in heavy if m in sys.modules))")
    server = start_server(project)
    try:
        for tool, event, payload in calls:
            result = subprocess.run([sys.executable, "-c", script, json.dumps(payload), tool, event], cwd=project,
                                    capture_output=True, text=True, env=env(**homes(project)), timeout=60)
            *output, modules = result.stdout.strip().splitlines()
            assert modules == "[]", (tool, event, modules, result.stderr)
            if event.lower() == "sessionstart":
                assert "Money amounts" in "\n".join(output)
    finally:
        server.stop()
    assert "refunds round half up, like orders" in memories(project, "developer")


def _git(project: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(project), *args], capture_output=True, text=True, check=True,
                          env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}).stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="no git")
def test_install_keeps_the_store_and_machine_paths_out_of_git(project):
    _git(project, "init", "-q")
    (project / ".cortex" / "agents").mkdir(parents=True)
    (project / ".cortex" / "agents" / "developer.md").write_text("---\nname: developer\n---\nWrites code.\n")
    seed(project, "developer", "Money amounts are Decimal, never float")  # a store, tokens file and all
    (project / ".cortex" / "logs").mkdir(exist_ok=True)
    (project / ".cortex" / "logs" / "hooks.log").write_text("a line\n")
    (project / ".cortex" / "state").mkdir(exist_ok=True)
    (project / ".cortex" / "state" / "transcripts.json").write_text("{}")
    for tool in ("claude", "codex", "gemini"):
        assert cortex(project, "install", tool, "--agent", "developer").returncode == 0
    assert cortex(project, "install", "codex").stderr.strip() == "already installed"  # idempotent
    assert cortex(project, "install", "gemini").stderr.strip() == "already installed"
    staged = _git(project, "add", "-A", "--dry-run").splitlines()
    assert "add '.cortex/agents/developer.md'" in staged and "add '.cortex/.gitignore'" in staged
    assert not [line for line in staged if any(p in line for p in (
        ".cortex/store", ".cortex/logs", ".cortex/state", "cortex-tokens", ".codex/", "settings.local.json", ".gemini/"))], staged
    assert "add '.claude/settings.json'" in staged  # the portable hooks stay shareable
    status = _git(project, "status", "--porcelain", "--untracked-files=all")
    assert ".cortex/store" not in status and ".codex/" not in status and ".gemini/" not in status
    ignore = (project / ".cortex" / ".gitignore").read_text()
    assert cortex(project, "install", "claude").returncode == 0
    assert (project / ".cortex" / ".gitignore").read_text() == ignore
    exclude = (project / ".git" / "info" / "exclude").read_text()
    assert cortex(project, "uninstall", "codex").returncode == 0
    assert cortex(project, "uninstall", "gemini").returncode == 0
    assert "cortex install codex" not in (project / ".git" / "info" / "exclude").read_text()
    assert ".gemini" not in (project / ".git" / "info" / "exclude").read_text()
    assert (project / ".git" / "info" / "exclude").read_text() + "" != exclude


def test_installed_commands_run_with_a_path_that_lacks_cortex(project):
    """The exact strings install wrote, through ``sh -c`` with a PATH that has no cortex (a virtualenv install
    outside its activation): Claude Code's MCP server, Codex's and Gemini CLI's hooks and MCP servers."""
    seed(project, "developer", "Money amounts are Decimal, never float")
    for tool in ("claude", "codex", "gemini"):
        assert cortex(project, "install", tool, "--agent", "developer").returncode == 0
    bare = {"PATH": "/usr/bin:/bin", "HOME": os.environ["HOME"], "CORTEX_EMBEDDINGS": "none",
            **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {})}
    assert subprocess.run(["/bin/sh", "-c", "command -v cortex"], env=bare, capture_output=True).returncode != 0
    for tool in ("codex", "gemini"):
        hook = installed_commands(project, tool)["SessionStart"][0]
        result = subprocess.run(["/bin/sh", "-c", hook], input=json.dumps(recorded(tool, "SessionStart", project)),
                                capture_output=True, text=True, env=bare, cwd=project, timeout=60)
        assert result.returncode == 0 and result.stderr == "", result.stderr
        assert "Money amounts" in json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    claude = json.loads((Path(os.environ["HOME"]) / ".claude.json").read_text())
    servers = [claude["projects"][str(project.resolve())]["mcpServers"]["cortex"],
               tomllib.loads((project / ".codex/config.toml").read_text())["mcp_servers"]["cortex"],
               json.loads((project / ".gemini/settings.json").read_text())["mcpServers"]["cortex"]]
    hello = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}) + "\n"
    for server in servers:
        command = shlex.join([server["command"], *server["args"]])
        result = subprocess.run(["/bin/sh", "-c", command], input=hello, capture_output=True, text=True, env=bare,
                                cwd=project, timeout=60)
        answer = json.loads(result.stdout.splitlines()[0])
        assert answer["id"] == 1 and "serverInfo" in answer["result"], result.stderr
