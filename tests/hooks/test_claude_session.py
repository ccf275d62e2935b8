"""A scripted Claude Code session: the hook commands `cortex install claude` wrote, fed the payloads and the
transcripts Claude Code 2.1 writes, through a server that restarts and one that dies; a new agent is added
mid-session, a built-in subagent runs. At the end every learning is stored exactly once, with the right agent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from cortex import Cortex

from tests.service_helpers import AGENT, cortex, make_project, start_server


class Session:
    """Runs the installed hook commands the way Claude Code does (a shell, the payload on stdin)."""

    def __init__(self, project: Path, tmp: Path) -> None:
        self.project = project
        # what Claude Code merges: the committed .claude/settings.json (subagent and tool hooks) and the personal
        # .claude/settings.local.json (the main session's hooks and the env, both naming this machine's cortex)
        settings = json.loads((project / ".claude" / "settings.json").read_text())
        local = json.loads((project / ".claude" / "settings.local.json").read_text())
        self.commands = {event: groups[-1]["hooks"][-1]["command"]
                         for data in (settings, local) for event, groups in data["hooks"].items()}
        self.env = local["env"]
        self.claude = tmp / "claude"  # Claude Code's directory ($CLAUDE_CONFIG_DIR): where its transcripts are
        self.parent = self.claude / "projects" / "-proj" / "session.jsonl"
        self.parent.parent.mkdir(parents=True)
        self.parent.write_text("")
        self.learned: dict[str, list[str]] = {}
        self.n = 0

    def append(self, path: Path, *entries: dict) -> None:
        with open(path, "a", encoding="utf-8") as fh:
            for entry in entries:
                fh.write(json.dumps(entry) + "\n")

    def hook(self, event: str, **payload: object) -> dict:
        body = {"session_id": "s1", "cwd": str(self.project), "hook_event_name": event,
                "transcript_path": str(self.parent), **payload}
        bare = {"PATH": "/usr/bin:/bin", "CORTEX_EMBEDDINGS": "none", "CORTEX_LOCK_WAIT": "2",
                "CLAUDE_CONFIG_DIR": str(self.claude), **self.env,
                **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {})}
        result = subprocess.run(["/bin/sh", "-c", self.commands[event]], input=json.dumps(body), capture_output=True,
                                text=True, env=bare, cwd="/", timeout=120)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout) if result.stdout.strip() else {}

    def subagent(self, agent_type: str, task: str, lessons: list[str], store: bool = True) -> str:
        """The main agent calls a subagent, which learns ``lessons`` (in its transcript and last message)."""
        self.n += 1
        self.append(self.parent, {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": f"toolu_{self.n}", "name": "Agent",
             "input": {"description": task[:30], "prompt": task, "subagent_type": agent_type}}]}})
        started = self.hook("SubagentStart", agent_id=f"a{self.n}", agent_type=agent_type)
        sub = self.parent.with_name(f"agent-{self.n}.jsonl")
        self.append(sub, {"type": "user", "message": {"role": "user", "content": task}},
                    *({"type": "assistant", "message": {"role": "assistant", "content": [
                        {"type": "text", "text": f"Working on it.\nLEARNED: {lesson}\n"}]}} for lesson in lessons[:-1]))
        self.hook("SubagentStop", agent_id=f"a{self.n}", agent_type=agent_type, agent_transcript_path=str(sub),
                  last_assistant_message=f"Done.\n- **LEARNED:** {lessons[-1]}\n**Decision:** looks fine",
                  stop_hook_active=False)
        if store:
            self.learned.setdefault(agent_type, []).extend(lessons)
        return started.get("hookSpecificOutput", {}).get("additionalContext", "")

    def main_turn(self, text: str, lessons: list[str]) -> None:
        self.append(self.parent, {"type": "user", "message": {"role": "user", "content": text}},
                    {"type": "assistant", "message": {"role": "assistant", "content": [
                        {"type": "text", "text": "\n".join(f"PATTERN: {lesson}" for lesson in lessons)}]}})
        self.hook("Stop", stop_hook_active=False, last_assistant_message="Anything else?")
        self.learned.setdefault("lead", []).extend(lessons)


def stored(project: Path, *agents: str) -> dict[str, list[str]]:
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        out = {}
        for agent in agents:
            cx.agents.register(agent)
            out[agent] = sorted(m.content for m in cx.recall(agent, limit=1000) if m.source != "task_completion")
        return out


def test_a_whole_session_loses_no_learning(tmp_path):
    project = make_project(tmp_path / "proj", "reviewer", "lead")
    assert cortex(project, "install", "claude", "--agent", "lead").returncode == 0
    session = Session(project, tmp_path)
    server = start_server(project)
    try:
        assert session.hook("SessionStart", source="startup") == {}  # nothing learned yet
        session.main_turn("review the payments module", ["payments code lives in src/pay"])
        block = session.subagent("reviewer", "Review the retry loop of the payment webhook",
                                 ["webhooks need an idempotency key", "retries use exponential backoff"])
        assert block == ""
        session.subagent("Explore", "Find where retries are configured", ["explore agents keep nothing"],
                         store=False)  # a built-in agent: no memory, one quiet log line
        (project / "agent_defs" / "docs-writer.md").write_text(AGENT.format(name="docs-writer"))  # mid-session
        session.subagent("docs-writer", "Document the webhook retries", ["the docs site builds with mkdocs"])
        server.stop(signal.SIGTERM)  # the server restarts (as `cortex mcp` would start a new one)
        session.subagent("reviewer", "Review the refund endpoint", ["refunds are idempotent too"])
        server = start_server(project)
        block = session.subagent("reviewer", "Review the payment webhook again", ["webhook signatures use HMAC"])
        assert "idempotency key" in block  # ranked for the task found in the parent transcript
        server.stop(signal.SIGKILL)  # and now it dies: a stale discovery file is left behind
        session.subagent("docs-writer", "Fix a broken link", ["links are checked in CI"])
        session.main_turn("wrap up", ["always run the link checker"])
        server = start_server(project)
        started = session.hook("SessionStart", source="resume")
        assert "payments code lives in src/pay" in started["hookSpecificOutput"]["additionalContext"]
    finally:
        server.stop()
    log = (project / ".cortex" / "logs" / "hooks.log").read_text()
    assert "no memory for agent type 'Explore'" in log and "Traceback" not in log
    assert stored(project, "reviewer", "lead", "docs-writer") == {
        agent: sorted(lessons) for agent, lessons in session.learned.items()}
    assert not list((project / ".cortex" / "store" / "cortex-spool").glob("*.json"))
