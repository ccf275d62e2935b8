"""The real agents, installed from npm (``$CORTEX_AGENTS_BIN``: the npm prefix's ``node_modules/.bin``), run
against a stand-in model on 127.0.0.1 in a project where ``cortex install <agent>`` ran, with ``cortex`` off PATH:
what the installed hooks injected is in the request the model received, what they captured is in the store."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from cortex import Cortex
from cortex.errors import StoreLockedError
from tests.anthropic_standin import AnthropicStandIn, delegate, text_of
from tests.gemini_standin import GeminiStandIn
from tests.responses_standin import ResponsesStandIn
from tests.service_helpers import cortex, make_project

pytestmark = pytest.mark.clients

REQUIRE_CLIENTS = os.environ.get("CORTEX_REQUIRE_CLIENTS") == "1"


def agents_bin(name: str) -> Path:
    """The npm prefix's ``bin`` holding ``name`` (and ``node`` 22), or a skip (a failure under CORTEX_REQUIRE_CLIENTS)."""
    folder = os.environ.get("CORTEX_AGENTS_BIN")
    if folder and (Path(folder) / name).exists():
        return Path(folder)
    reason = f"CORTEX_AGENTS_BIN does not hold {name} (npm install --prefix DIR @anthropic-ai/claude-code ...)"
    if REQUIRE_CLIENTS:
        pytest.fail(f"CORTEX_REQUIRE_CLIENTS=1 but {reason}")
    pytest.skip(reason)


def bare_env(home: Path, bin_dir: Path, **extra: str) -> dict[str, str]:
    """No ``cortex`` on PATH (only the agents' prefix and the system), HOME a scratch folder, no traffic off
    loopback."""
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(home), "CORTEX_EMBEDDINGS": "none",
           "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
           "DISABLE_ERROR_REPORTING": "1", "NO_PROXY": "127.0.0.1,localhost", "LANG": "C.UTF-8", **extra}
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def seed(project: Path, memories: dict[str, str]) -> None:
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        for agent, content in memories.items():
            cx.agents.register(agent)
            cx.store(agent, content)


#: The start's block holds five memories: four confident ones beside the seeded one fill it, and the one the prompt
#: needs (less confident) reaches the model through the prompt's hook (UserPromptSubmit, BeforeAgent) only.
FILLERS = [f"the {w} service logs to syslog" for w in ("billing", "search", "mailer", "cron")]
NEEDED = "order totals are quantized once, after summing the line items"
ASK = " Why are order totals quantized?"


def seed_prompt_case(project: Path, agent: str) -> None:
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register(agent)
        cx.store_many(agent, [{"content": c, "confidence": 0.95} for c in FILLERS]
                      + [{"content": NEEDED, "confidence": 0.4}])


def assert_prompt_recall(first_request: str) -> None:
    """The first request to the model holds the start's block and, after it, what the prompt needed (the start's
    five did not hold it: tests/hooks/test_prompt_recall.py checks that on the same seeds)."""
    assert NEEDED in first_request, first_request[-3000:]
    assert all(first_request.index(f) < first_request.index(NEEDED) for f in FILLERS), first_request[-3000:]


def lead_project(tmp_path: Path, tool: str) -> tuple[Path, Path, Path]:
    """The npm ``bin`` holding ``tool``, a project where ``cortex install TOOL --agent lead`` ran with lead's
    memories seeded (the start's and the prompt's), and a scratch home with the tool's folder."""
    bin_dir = agents_bin(tool)
    project = make_project(tmp_path / "proj", "lead")
    assert cortex(project, "install", tool, "--agent", "lead").returncode == 0
    seed(project, {"lead": "the payments code lives in src/pay"})
    seed_prompt_case(project, "lead")
    home = tmp_path / "home"
    (home / f".{tool}").mkdir(parents=True)
    return bin_dir, project, home


def assert_injected_and_captured(project: Path, result: subprocess.CompletedProcess, requests: list) -> None:
    """The agent ran; its first request to the model held the start's block and the prompt's memory; the marker
    line the model answered is in lead's memory; no hook failed."""
    assert result.returncode == 0, result.stdout + result.stderr
    texts = [json.dumps(body) for body in requests]
    assert texts and "<agent-memory" in texts[0] and "the payments code lives in src/pay" in texts[0], (
        result.stderr[-3000:], texts)
    assert_prompt_recall(texts[0])
    log = project / ".cortex" / "logs" / "hooks.log"
    said = log.read_text() if log.exists() else ""
    assert "Traceback" not in said
    assert "always run the link checker" in " ".join(stored(project, "lead")), said


def stored(project: Path, agent: str) -> list[str]:
    # a server the agent's hooks started may be starting or stopping: it holds the store's lock before its
    # discovery file is written and after it is removed, so a lock is waited out (a client is used once it serves)
    deadline = time.monotonic() + 60
    while True:
        try:
            with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
                if hasattr(cx, "agents"):  # a server the agent started may still own the store: its client then
                    cx.agents.register(agent)
                return sorted(m.content for m in cx.recall(agent, limit=100))
        except StoreLockedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_claude_code_injects_and_captures_with_a_subagent(tmp_path):
    bin_dir = agents_bin("claude")
    project = make_project(tmp_path / "proj", "reviewer", "lead")
    claude_agents = project / ".claude" / "agents"
    claude_agents.mkdir(parents=True)
    (claude_agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews code. Use for reviews.\nmemory: true\n---\nYou are reviewer.\n")
    assert cortex(project, "install", "claude", "--agent", "lead").returncode == 0
    seed(project, {"lead": "the payments code lives in src/pay",
                   "reviewer": "webhooks need an idempotency key"})
    seed_prompt_case(project, "lead")
    home = tmp_path / "home"
    home.mkdir()
    with AnthropicStandIn(delegate("retries use exponential backoff", "always run the link checker")) as model:
        result = subprocess.run(
            [str(bin_dir / "claude"), "-p", "DELEGATE reviewer: Review the payment webhook retries." + ASK,
             "--allowedTools", "Agent,Task", "--output-format", "json"],
            cwd=project, capture_output=True, text=True, timeout=240, check=False,
            env=bare_env(home, bin_dir, ANTHROPIC_BASE_URL=model.url, ANTHROPIC_API_KEY="sk-standin",
                         CLAUDE_CONFIG_DIR=str(home / ".claude")))
        requests = list(model.requests)
    assert result.returncode == 0, result.stdout + result.stderr
    texts = [text_of(body) for body in requests]
    main = [t for t in texts if "DELEGATE reviewer" in t]
    assert main and "<agent-memory" in main[0] and "the payments code lives in src/pay" in main[0]
    assert_prompt_recall(main[0])
    sub = [t for t in texts if "You are reviewer." in t]
    assert sub and "webhooks need an idempotency key" in sub[0], texts
    log = project / ".cortex" / "logs" / "hooks.log"
    assert "Traceback" not in (log.read_text() if log.exists() else "")
    assert "retries use exponential backoff" in " ".join(stored(project, "reviewer")), log.read_text()
    assert "always run the link checker" in " ".join(stored(project, "lead")), log.read_text()


def test_codex_injects_at_start_and_captures_at_stop(tmp_path):
    bin_dir, project, home = lead_project(tmp_path, "codex")
    with ResponsesStandIn(lambda body: "Looked.\nPATTERN: always run the link checker") as model:
        (home / ".codex" / "config.toml").write_text(
            'model = "standin"\nmodel_provider = "standin"\ncheck_for_update_on_startup = false\n'
            '[analytics]\nenabled = false\n'
            f'[model_providers.standin]\nname = "standin"\nbase_url = "{model.url}"\nwire_api = "responses"\n'
            'env_key = "STANDIN_API_KEY"\n'
            f'[projects."{project}"]\ntrust_level = "trusted"\n')
        result = subprocess.run(
            [str(bin_dir / "codex"), "exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check",
             "Review the payment webhook retries." + ASK],
            cwd=project, capture_output=True, text=True, timeout=240, check=False, stdin=subprocess.DEVNULL,
            env=bare_env(home, bin_dir, CODEX_HOME=str(home / ".codex"), STANDIN_API_KEY="sk-standin"))
        requests = list(model.requests)
    assert_injected_and_captured(project, result, requests)


def test_gemini_cli_injects_at_start_and_captures_after_the_agent(tmp_path):
    bin_dir, project, home = lead_project(tmp_path, "gemini")
    (home / ".gemini" / "settings.json").write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": True}},
        "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True}}))
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(project): "TRUST_FOLDER"}))
    with GeminiStandIn(lambda body: "Looked.\nPATTERN: always run the link checker") as model:
        result = subprocess.run(
            # a model named skips Gemini CLI's model router, whose classifier asks for JSON the stand-in does not
            # give (it then retries with back-off for ~100 s)
            [str(bin_dir / "gemini"), "-p", "Review the payment webhook retries." + ASK, "--output-format", "json",
             "--model", "gemini-2.5-flash"],
            cwd=project, capture_output=True, text=True, timeout=240, check=False, stdin=subprocess.DEVNULL,
            env=bare_env(home, bin_dir, GOOGLE_GEMINI_BASE_URL=model.url, GEMINI_API_KEY="standin-key",
                         GEMINI_CLI_NO_RELAUNCH="1"))
        requests = list(model.requests)
    assert_injected_and_captured(project, result, requests)


#: What the stand-in model stores through Cortex's MCP server (quotes, ``>``, a look-alike and a newline: the
#: content must reach the store as the model wrote it).
MCP_NOTE = 'deploys go through "make ship" > never by hand; ＜tag＞ ok\nsecond line'


def mcp_session(body: dict[str, object]) -> tuple[list[dict[str, object]], str]:
    """The scripted model: a first turn sleeps (``claude -p`` does not wait for MCP servers to connect), the second
    calls Cortex's ``add_memory`` tool, the third answers with what the tool returned."""
    messages = body.get("messages") or []
    results = [block for message in messages if isinstance(message, dict) and isinstance(message.get("content"), list)
               for block in message["content"] if isinstance(block, dict) and block.get("type") == "tool_result"]
    if not results:
        return [{"type": "tool_use", "id": "toolu_sleep", "name": "Bash",
                 "input": {"command": "sleep 10", "description": "wait"}}], "tool_use"
    if len(results) == 1:
        return [{"type": "tool_use", "id": "toolu_cortex", "name": "mcp__cortex__add_memory",
                 "input": {"agent": "lead", "content": MCP_NOTE}}], "tool_use"
    return [{"type": "text", "text": "Stored."}], "end_turn"


def test_claude_code_runs_cortexs_mcp_server_off_path(tmp_path):
    """The MCP server install wrote to Claude Code's local scope starts with ``cortex`` off PATH and no
    CORTEX_BIN: a tool call reaches the store and its result reaches the model."""
    bin_dir = agents_bin("claude")
    project = make_project(tmp_path / "proj", "lead")
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    installed = cortex(project, "install", "claude", "--agent", "lead", CLAUDE_CONFIG_DIR=str(home / ".claude"))
    assert installed.returncode == 0, installed.stderr
    assert "mcpServers" in (home / ".claude" / ".claude.json").read_text()
    seed(project, {"lead": "the payments code lives in src/pay"})
    with AnthropicStandIn(mcp_session) as model:
        result = subprocess.run(
            [str(bin_dir / "claude"), "-p", "Note how deploys work", "--output-format", "json",
             "--allowedTools", "Bash(sleep 10),mcp__cortex__add_memory"],
            cwd=project, capture_output=True, text=True, timeout=240, check=False, stdin=subprocess.DEVNULL,
            env=bare_env(home, bin_dir, ANTHROPIC_BASE_URL=model.url, ANTHROPIC_API_KEY="sk-standin",
                         CLAUDE_CONFIG_DIR=str(home / ".claude"), ENABLE_TOOL_SEARCH="false"))
        requests = list(model.requests)
    assert result.returncode == 0, result.stdout + result.stderr
    last = json.dumps(requests[-1].get("messages", [])) if requests else ""
    assert "toolu_cortex" in last, (result.stdout[-2000:], [text_of(r)[-500:] for r in requests])
    answered = [block for message in requests[-1]["messages"] if isinstance(message.get("content"), list)
                for block in message["content"] if block.get("tool_use_id") == "toolu_cortex"]
    assert answered and not answered[0].get("is_error"), answered
    assert MCP_NOTE in stored(project, "lead")


def test_claude_mcp_list_outside_a_session_runs_cortexs_hooks_off_path(tmp_path):
    """``claude mcp list`` fires ``SessionEnd`` without ``settings.local.json``'s env: the main session's hooks,
    which install writes there by absolute path, still run with ``cortex`` off PATH (a portable command in the
    committed file failed here: ``cortex: not found``), and the MCP server connects."""
    bin_dir = agents_bin("claude")
    project = make_project(tmp_path / "proj", "lead")
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    config_dir = str(home / ".claude")
    assert cortex(project, "install", "claude", "--agent", "lead", CLAUDE_CONFIG_DIR=config_dir).returncode == 0
    user_file = home / ".claude" / ".claude.json"
    user = json.loads(user_file.read_text())
    user["projects"][str(project.resolve())]["hasTrustDialogAccepted"] = True  # as after the trust dialog
    user_file.write_text(json.dumps(user))
    result = subprocess.run([str(bin_dir / "claude"), "mcp", "list"], cwd=project, capture_output=True, text=True,
                            timeout=120, check=False, stdin=subprocess.DEVNULL,
                            env=bare_env(home, bin_dir, CLAUDE_CONFIG_DIR=config_dir))
    output = result.stdout + result.stderr
    assert result.returncode == 0 and "Connected" in output, output
    assert "failed" not in output, output  # as "SessionEnd hook [...] failed: /bin/sh: 1: cortex: not found"
