"""Issue 19 (findings 6, 7, 9): learnings under the agent that wrote them, an injected block that does not feed
its own ranking, and an install a team can commit. Payloads and transcripts are laid out as Claude Code writes
them (JSONL, one entry a line, sidechain lines marked ``"isSidechain": true``), through ``cortex hook claude``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from cortex import Cortex

from tests.service_helpers import AGENT, cortex, make_project, start_server
from tests.hooks.test_hooks import hook


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = make_project(tmp_path / "proj", "reviewer", "architect")
    # the reviewer's role words (name, description) are in every task the main agent gives it
    (root / "agent_defs" / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews code changes by hand\nmemory: true\n---\nYou review.\n")
    return root


def line(role: str, text: str, *, sidechain: bool = False, agent_id: str | None = None) -> dict:
    """One transcript entry as Claude Code 2.x writes it."""
    entry = {"parentUuid": None, "isSidechain": sidechain, "userType": "external", "cwd": "/proj",
             "sessionId": "s1", "version": "2.1.3", "type": role, "uuid": str(uuid.uuid4()),
             "timestamp": "2026-11-24T09:00:00.000Z",
             "message": {"role": role, "content": [{"type": "text", "text": text}] if role == "assistant" else text}}
    if agent_id is not None:
        entry["agentId"] = agent_id
    return entry


def append(path: Path, *entries: dict) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        for entry in entries:
            fh.write(json.dumps(entry) + "\n")


def memories(project: Path, agent: str) -> list[str]:
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register(agent)
        return sorted(m.content for m in cx.recall(agent, limit=100) if m.source != "task_completion")  # the learnings (SubagentStop records the task outcome beside them)


def log_lines(project: Path) -> list[str]:
    path = project / ".cortex" / "logs" / "hooks.log"
    return path.read_text().splitlines() if path.exists() else []


# -- finding 6: attribution -------------------------------------------------------------------------------------


def test_subagent_stop_without_its_transcript_reads_only_its_sidechain_lines(project, tmp_path):
    parent = tmp_path / "session.jsonl"
    append(parent, line("user", "Add retries"),
           line("assistant", "CONVENTION: the main session writes changelog entries"),
           line("user", "Review the retry change", sidechain=True, agent_id="a1"),
           line("assistant", "LEARNED: retries need jitter", sidechain=True, agent_id="a1"),
           line("assistant", "LEARNED: another subagent's lesson", sidechain=True, agent_id="b2"))
    result = hook(project, "SubagentStop", {"agent_id": "a1", "agent_type": "reviewer",
                                           "transcript_path": str(parent), "stop_hook_active": False,
                                           "last_assistant_message": "Done."})
    assert result.returncode == 0 and result.stdout == ""
    assert memories(project, "reviewer") == ["retries need jitter"]
    assert sum("no agent_transcript_path" in entry for entry in log_lines(project)) == 1
    # the main Stop still finds its own learning, and never the subagent's lines
    hook(project, "Stop", {"agent_type": "architect", "transcript_path": str(parent), "stop_hook_active": False,
                           "last_assistant_message": "ok"})
    assert memories(project, "architect") == ["the main session writes changelog entries"]


def test_subagent_stop_without_any_subagent_line_captures_nothing_of_the_parent(project, tmp_path):
    parent = tmp_path / "session.jsonl"
    append(parent, line("assistant", "CONVENTION: the main session's rule"))
    hook(project, "SubagentStop", {"agent_id": "a1", "agent_type": "reviewer", "transcript_path": str(parent),
                                   "last_assistant_message": "No findings."})
    assert memories(project, "reviewer") == []


def test_subagent_stop_reads_its_own_transcript_not_the_parents(project, tmp_path):
    parent, own = tmp_path / "session.jsonl", tmp_path / "subagents" / "agent-a1.jsonl"
    own.parent.mkdir()
    append(parent, line("assistant", "CONVENTION: the main session's rule"))
    append(own, line("user", "Review it", sidechain=True, agent_id="a1"),
           line("assistant", "PATTERN: check the error path first", sidechain=True, agent_id="a1"))
    hook(project, "SubagentStop", {"agent_id": "a1", "agent_type": "reviewer", "transcript_path": str(parent),
                                   "agent_transcript_path": str(own), "last_assistant_message": "Done."})
    assert memories(project, "reviewer") == ["check the error path first"]


def test_markers_inside_fenced_code_blocks_are_not_captured(project, tmp_path):
    transcript = tmp_path / "session.jsonl"
    append(transcript,
           line("assistant", "Here is the template:\n```markdown\nCONVENTION: <your rule here>\n```\n"
                             "LEARNED: templates live in docs/"),
           line("assistant", "~~~\nDECISION: quoted from the old notes\n~~~\nDECISION: keep the old notes"),
           line("assistant", "```\nLEARNED: an unclosed fence hides the rest of its message only"),
           line("assistant", "INSIGHT: the next message is read"))
    hook(project, "Stop", {"agent_type": "reviewer", "transcript_path": str(transcript),
                           "last_assistant_message": "```text\nPATTERN: in the last message's code\n```"})
    assert memories(project, "reviewer") == ["keep the old notes", "templates live in docs/",
                                             "the next message is read"]


# -- finding 7: the injected block ------------------------------------------------------------------------------


def _usage(project: Path, agent: str) -> dict[str, int]:
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register(agent)
        return {m.content: m.usage_count for m in cx.recall(agent, limit=100)}


def test_session_start_touches_its_memories_once_per_session(project):
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register("architect")
        cx.store("architect", "Services talk through the queue")
    sources = ["startup"] + ["resume", "compact", "clear", "fork"] * 3  # 13 runs of one session
    for source in sources:
        result = hook(project, "SessionStart", {"source": source}, CORTEX_HOOK_AGENT="architect")
        context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "Services talk through the queue" in context  # injected again: the context lost it
    assert _usage(project, "architect") == {"Services talk through the queue": 1}


def test_through_the_server_a_resumed_session_is_not_touched_again(project):
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register("architect")
        cx.store("architect", "Services talk through the queue")
    server = start_server(project)
    try:
        for source in ("startup", "resume", "compact", "clear"):
            result = hook(project, "SessionStart", {"source": source}, CORTEX_HOOK_AGENT="architect")
            assert "Services talk" in json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    finally:
        server.stop()
    assert _usage(project, "architect") == {"Services talk through the queue": 1}


#: A small recorded set of tasks the main agent gave its reviewer, and what each one is about.
TASKS = {
    "Review the retry change in the HTTP client": "HTTP client retries back off exponentially",
    "Review the SQL migration for the orders table": "SQL migrations must be reversible",
    "Review the new login form": "Login forms rate-limit by IP",
    "Review the parser refactor": "The parser keeps a recursion limit of 200",
}
ROLE_NOISE = ["Changes reviewed by hand get a second reader", "Reviews by hand take a day",
              "Code changes need a changelog line"]


def _start(project: Path, parent: Path, task: str, n: int) -> str:
    append(parent, {**line("assistant", ""), "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": f"toolu_{n}", "name": "Agent",
         "input": {"description": task[:30], "prompt": task, "subagent_type": "reviewer"}}]}})
    result = hook(project, "SubagentStart", {"agent_id": f"a{n}", "agent_type": "reviewer",
                                             "transcript_path": str(parent)})
    return str(json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"])


def test_being_shown_does_not_lift_a_memory_and_role_words_do_not_match(project, tmp_path):
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register("reviewer")
        cx.store_many("reviewer", [{"content": c} for c in [*TASKS.values(), *ROLE_NOISE]])
    parent = tmp_path / "session.jsonl"
    blocks: dict[str, list[str]] = {}
    n = 0
    for _ in range(3):  # three rounds of the same tasks: every block is shown, so every shown memory is touched
        for task in TASKS:
            n += 1
            blocks.setdefault(task, []).append(_start(project, parent, task, n))
    for task, relevant in TASKS.items():
        assert all(b == blocks[task][0] for b in blocks[task]), task  # showing changed no later block
        assert relevant in blocks[task][0].splitlines()[1]  # the task's memory first
        assert not any(noise in blocks[task][0] for noise in ROLE_NOISE), blocks[task][0]


def test_a_confident_general_memory_keeps_a_slot_in_a_task_block(project):
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register("reviewer")
        general = cx.store("reviewer", "Never merge on Fridays", confidence=0.95)
        for k in range(6):
            cx.store("reviewer", f"Parser note {k}: keep the grammar in one file")
        block = cx.agent_start("reviewer", task="Check the parser", limit=5)
        assert "Never merge on Fridays" in block and block.count("Parser note") == 4
        assert cx.get("reviewer", general.id).usage_count == 1
        low = cx.agent_start("reviewer", task="Check the parser", limit=1)
        assert "Never merge" not in low  # one slot: the task's


def test_the_same_content_twice_is_one_line(project):
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register("reviewer")
        # store_many writes what it is given (store would answer the first memory again)
        cx.store_many("reviewer", [{"content": "Run the linter before pushing"}] * 2)
    result = hook(project, "SubagentStart", {"agent_type": "reviewer", "prompt": "linter"})
    context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.count("Run the linter before pushing") == 1
    result = hook(project, "SubagentStart", {"agent_type": "reviewer"})
    context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.count("Run the linter before pushing") == 1


def test_a_learning_stored_and_injected_is_one_line(tmp_path):
    defs = tmp_path / "agent_defs"
    defs.mkdir()
    for name, extra in (("lead", "cortex:\n  lead: true\n"), ("api", "")):
        (defs / f"{name}.md").write_text(f"---\nname: {name}\ndescription: {name}\nmemory: true\n{extra}---\n")
    with Cortex.open(tmp_path / "store", agent_dirs=[defs], embeddings=None) as cx:
        cx.store("api", "Run the linter before pushing")
        cx.inject_learning("lead", "Run the linter before pushing", "best-practice")  # the swarm's copy
        for task in ("linter", None):
            block = cx.agent_start("api", task=task)
            assert block.count("Run the linter before pushing") == 1, block


# -- finding 9: install for a team, unknown events --------------------------------------------------------------


def test_an_event_cortex_does_not_handle_is_one_quiet_line(project):
    result = hook(project, "PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"}})
    assert result.returncode == 0 and result.stdout == ""
    log = log_lines(project)
    assert len(log) == 1 and "'PreToolUse': not an event Cortex handles" in log[0]
    assert "Traceback" not in (project / ".cortex" / "logs" / "hooks.log").read_text()


def test_committed_files_are_portable_and_the_local_file_holds_this_machine(project, tmp_path):
    assert cortex(project, "install", "claude", "--agent", "reviewer").returncode == 0
    committed = (project / ".claude" / "settings.json").read_text()
    assert sys.executable not in committed and str(Path(sys.executable).parent) not in committed
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    commands = [h["command"] for groups in settings["hooks"].values() for g in groups for h in g["hooks"]]
    assert all(c.startswith('"${CORTEX_BIN:-cortex}" hook claude ') for c in commands), commands
    assert not (project / ".mcp.json").exists()  # the MCP server is personal: ~/.claude.json's local scope
    local = json.loads((project / ".claude" / "settings.local.json").read_text())
    executable = local["env"]["CORTEX_BIN"]
    assert os.path.isabs(executable) and os.access(executable, os.X_OK)
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register("reviewer")
        cx.store("reviewer", "Always check null pointers")
    payload = json.dumps({"cwd": str(project), "agent_type": "reviewer", "hook_event_name": "SubagentStart"})
    bare = {"PATH": "/usr/bin:/bin", "CORTEX_EMBEDDINGS": "none",
            **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {})}
    command = settings["hooks"]["SubagentStart"][0]["hooks"][0]["command"]
    # outside the virtualenv: Claude Code gives the hook settings.local.json's env
    outside = subprocess.run(["/bin/sh", "-c", command], input=payload, capture_output=True, text=True,
                             env={**bare, **local["env"]}, cwd="/", timeout=60)
    assert "Always check null pointers" in json.loads(outside.stdout)["hookSpecificOutput"]["additionalContext"]
    # a teammate with the virtualenv activated and no local file: cortex from PATH
    activated = subprocess.run(["/bin/sh", "-c", command], input=payload, capture_output=True, text=True,
                               env={**bare, "PATH": f"{Path(executable).parent}:/usr/bin:/bin"}, cwd="/", timeout=60)
    assert "Always check null pointers" in json.loads(activated.stdout)["hookSpecificOutput"]["additionalContext"]
    assert cortex(project, "uninstall", "claude").returncode == 0
    assert not (project / ".claude" / "settings.local.json").exists()


def test_install_refuses_an_undeclared_agent_unless_forced(project):
    refused = cortex(project, "install", "claude", "--agent", "reveiwer")
    assert refused.returncode == 1
    assert "'reveiwer' is not declared" in refused.stderr and "agent_defs" in refused.stderr
    assert "--force" in refused.stderr
    assert not (project / ".claude").exists() and not (project / ".mcp.json").exists()
    forced = cortex(project, "install", "claude", "--agent", "reveiwer", "--force")
    assert forced.returncode == 0 and "--agent reveiwer" in (project / ".claude" / "settings.json").read_text()
    (project / "agent_defs" / "ops.md").write_text(AGENT.format(name="ops"))
    assert cortex(project, "install", "claude", "--agent", "ops").returncode == 0


def test_a_subagent_start_finds_its_own_task_in_the_parent_transcript(project, tmp_path):
    """Claude Code's SubagentStart carries no prompt (recorded shape: the base fields, agent_id and agent_type):
    the task is the parent transcript's Agent call, the very one the subagent's meta file names when two of the
    same type run at once, else the latest for its type."""
    payload = json.loads((Path(__file__).parent.parent / "fixtures" / "harnesses" / "claude" /
                          "SubagentStart.json").read_text())
    assert "prompt" not in payload and "description" not in payload
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register("reviewer")
        cx.store_many("reviewer", [{"content": c} for c in [*TASKS.values(), *ROLE_NOISE]])
    session = payload["session_id"]
    parent = tmp_path / "home" / ".claude" / "projects" / "-proj" / f"{session}.jsonl"
    parent.parent.mkdir(parents=True)
    tasks = list(TASKS)
    # two reviewers launched in one message (in the background), the SQL one written last
    append(parent, {**line("assistant", ""), "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": f"toolu_{n}", "name": "Agent",
         "input": {"description": tasks[n][:30], "prompt": tasks[n], "subagent_type": "reviewer",
                   "run_in_background": True}} for n in (0, 1)]}})
    subagents = parent.with_suffix("") / "subagents"
    subagents.mkdir(parents=True)
    (subagents / "agent-a0.meta.json").write_text(json.dumps(
        {"agentType": "reviewer", "description": tasks[0][:30], "toolUseId": "toolu_0", "spawnDepth": 1}))

    def start(agent_id: str) -> str:
        data = {**payload, "agent_id": agent_id, "cwd": str(project), "transcript_path": str(parent)}
        result = hook(project, "SubagentStart", data, CLAUDE_CONFIG_DIR=str(tmp_path / "home" / ".claude"))
        assert result.returncode == 0 and result.stderr == ""
        return str(json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"])

    # the first reviewer's meta file names its call: its block is ranked for the retry task, not the latest
    assert TASKS[tasks[0]] in start("a0").splitlines()[1]
    # no meta file (an older Claude Code, or not written yet): the latest call for the type
    assert TASKS[tasks[1]] in start("a1").splitlines()[1]
    # a meta file naming a call that is not in the transcript, or a hostile id: the latest, nothing read elsewhere
    (subagents / "agent-a2.meta.json").write_text(json.dumps({"toolUseId": "toolu_gone"}))
    assert TASKS[tasks[1]] in start("a2").splitlines()[1]
    assert TASKS[tasks[1]] in start("../../../../etc/passwd").splitlines()[1]
    assert "Traceback" not in "\n".join(log_lines(project))
