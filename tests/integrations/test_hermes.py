"""Cortex as Hermes Agent's memory provider: :class:`CortexMemoryProvider` on a real on-disk store and through a
real ``cortex serve``, ``cortex install hermes`` / ``uninstall hermes``, and (``clients``) the real hermes-agent
0.19.0 in a virtualenv of its own (``CORTEX_HERMES_PYTHON``), which loads the provider through its own discovery
and drives it through its own ``MemoryManager``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from cortex.errors import CortexError
from cortex.integrations.hermes import TOOL_NAMES, CortexMemoryProvider
from cortex.service import install_hermes
from tests.service_helpers import make_project

#: Read when the module is imported: the hermetic fixtures drop every CORTEX_* variable before a test runs.
HERMES_PYTHON = os.environ.get("CORTEX_HERMES_PYTHON", "")
REQUIRE_CLIENTS = os.environ.get("CORTEX_REQUIRE_CLIENTS") == "1"
CHECKOUT = Path(__file__).resolve().parents[2]
HOSTILE = ("She said \"it's <b>done</b>\" > 'twice'\nsecond line: \u0430dmin \uff1cfullwidth\uff1e \U0001f600 "
           "\\ back\\slash {\"json\": [1]} </agent-memory> ${HOME}")
SECRET = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"


def provider(root: Path, **init: Any) -> CortexMemoryProvider:
    p = CortexMemoryProvider(project=str(root))
    p.initialize("s-1", platform="cli", hermes_home=str(root / "hh"), **init)
    return p


def call(p: CortexMemoryProvider, tool: str, args: Any) -> dict[str, Any]:
    answer = p.handle_tool_call(tool, args)
    assert isinstance(answer, str)
    return json.loads(answer)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj", "hermes")


# -- the provider, in Cortex's own environment ---------------------------------------------------------------

def test_tool_schemas_are_openai_function_schemas() -> None:
    """Each tool is ``{name, description, parameters}`` with a name OpenAI accepts and not one of Hermes's core
    tools (Hermes drops those), and its parameters are a valid JSON Schema object."""
    from jsonschema import Draft202012Validator
    from jsonschema.validators import validator_for

    function_shape = {"type": "object", "required": ["name", "description", "parameters"],
                      "additionalProperties": False,
                      "properties": {"name": {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"},
                                     "description": {"type": "string", "minLength": 1},
                                     "parameters": {"type": "object", "required": ["type", "properties"],
                                                    "properties": {"type": {"const": "object"}}}}}
    schemas = CortexMemoryProvider().get_tool_schemas()
    assert [s["name"] for s in schemas] == list(TOOL_NAMES)
    for schema in schemas:
        Draft202012Validator(function_shape).validate(schema)
        validator_for(schema["parameters"]).check_schema(schema["parameters"])
        assert schema["name"] not in {"memory", "session_search", "todo", "clarify", "read_file", "terminal"}
    # the schemas accept what the tools need, and refuse what they would refuse
    store = Draft202012Validator(schemas[0]["parameters"])
    assert store.is_valid({"content": "x", "type": "decision", "tags": ["a"]})
    assert not store.is_valid({"type": "decision"}) and not store.is_valid({"content": "x", "type": "learned"})


def test_tools_work_on_a_real_store(project: Path) -> None:
    p = provider(project, agent_context="primary")
    stored = call(p, "cortex_store", {"content": HOSTILE, "type": "decision", "tags": ["ops"]})
    assert stored["stored"] is True and stored["memory"]["content"] == HOSTILE
    memory_id = stored["memory"]["id"]
    recalled = call(p, "cortex_recall", {"query": "fullwidth"})
    assert [m["id"] for m in recalled["memories"]] == [memory_id]
    assert p.recall_status() == {"query": "fullwidth", "count": 1, "ids": [memory_id], "source": "cortex_recall"}
    found = call(p, "cortex_search", {"query": "twice done", "limit": 5})
    assert [m["id"] for m in found["memories"]] == [memory_id]
    assert call(p, "cortex_forget", {"id": memory_id}) == {"forgotten": True, "id": memory_id}
    assert call(p, "cortex_recall", {"query": "fullwidth"})["count"] == 0
    assert p.recall_status()["ids"] == []


@pytest.mark.parametrize(("tool", "args", "says"), [
    ("memory", {"content": "x"}, "unknown tool"),
    ("cortex_store", {}, "content must be"),
    ("cortex_store", {"content": "x", "tags": "ops"}, "tags must be"),
    ("cortex_store", {"content": "x", "type": "nonsense"}, "type"),
    ("cortex_store", {"content": "z" * 2_000_000}, "content"),
    ("cortex_search", {"query": ""}, "query must be"),
    ("cortex_search", {"query": "x", "limit": True}, "limit must be"),
    ("cortex_recall", {"limit": 10**9}, "limit must be"),
    ("cortex_forget", {"id": 7}, "id must be"),
    ("cortex_recall", ["not", "an", "object"], "not a JSON object"),
])
def test_a_failed_tool_call_is_an_error_object(project: Path, tool: str, args: Any, says: str) -> None:
    answer = call(provider(project), tool, args)
    assert list(answer) == ["error"] and says in answer["error"]


def test_sync_turn_captures_markers_that_a_later_session_prefetches(project: Path) -> None:
    """The Stop hook's way: marker lines of the assistant's text (not those in a code block), redacted; a new
    provider (a later session) gets them in its ``<agent-memory>`` block."""
    first = provider(project, agent_context="primary")
    first.sync_turn("how do I deploy?", "Done.\nLEARNED: the deploy script needs AWS_PROFILE=staging and key "
                    f"{SECRET}\n```\nLEARNED: inside a fence is not a learning\n```\n",
                    messages=[{"role": "user", "content": "how do I deploy?"}])
    first.shutdown()
    later = provider(project, agent_context="primary")
    block = later.prefetch("deploy script")
    assert block.startswith("<agent-memory>") and "AWS_PROFILE=staging" in block
    assert SECRET not in block and "inside a fence" not in block
    assert later.recall_status()["query"] == "deploy script" and later.recall_status()["count"] == 1


def test_session_end_hands_the_transcript_to_the_capture_pipeline(project: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a language model nothing is written; with one, the session's messages are kept as an OpenAI-style
    transcript (private) that Cortex's capture reads, and a ``cortex capture`` of it is started (the hooks' way)."""
    messages = [{"role": "user", "content": HOSTILE}, {"role": "assistant", "content": "ok"}]
    provider(project).on_session_end(messages)
    assert not (project / ".cortex" / "hermes").exists()
    monkeypatch.setenv("CORTEX_LLM_URL", "http://127.0.0.1:9/v1")  # nothing listens: the capture fails later
    monkeypatch.setenv("CORTEX_LLM_MODEL", "none")
    monkeypatch.setenv("CORTEX_LLM_TIMEOUT", "1")
    p = CortexMemoryProvider(project=str(project))
    p.initialize("s/../1 \"x\"", platform="cli", hermes_home="h")
    p.on_session_end(messages)
    [kept] = (project / ".cortex" / "hermes").iterdir()
    assert kept.name == "s____1__x_.json" and (kept.parent.stat().st_mode & 0o077) == 0
    assert json.loads(kept.read_text()) == {"messages": messages}
    from cortex.capture.transcripts import read

    assert [m.text for m in read(kept).messages][:1] == [HOSTILE]
    assert (project / ".cortex" / "logs" / "capture.log").exists()


def test_calls_from_several_threads_share_the_store(project: Path) -> None:
    """Hermes calls from its worker thread, a prefetch thread and the main one: none waits for the store its own
    process holds."""
    import threading
    import time

    p = provider(project)
    answers: list[dict[str, Any]] = []
    started = time.monotonic()
    threads = [threading.Thread(target=lambda i=i: answers.append(call(p, "cortex_store", {"content": f"note {i}"})))
               for i in range(6)]
    threads += [threading.Thread(target=p.queue_prefetch, args=("note",)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert time.monotonic() - started < 8 and all(a.get("stored") for a in answers) and len(answers) == 6
    assert call(p, "cortex_recall", {"query": "note"})["count"] == 6


def test_only_the_primary_context_writes(project: Path) -> None:
    for context in ("subagent", "cron", "flush"):
        p = provider(project, agent_context=context)
        p.sync_turn("u", "LEARNED: a subagent's note must not be stored")
        p.on_memory_write("add", "memory", "a cron note must not be stored", {"write_origin": "tool"})
        assert "error" in call(p, "cortex_store", {"content": "no"})
        assert call(p, "cortex_recall", {"query": "stored"})["count"] == 0


def test_on_memory_write_mirrors_hermes_memory_tool(project: Path) -> None:
    p = provider(project)
    p.on_memory_write("add", "user", "Prefers terse answers", {"write_origin": "tool", "tool_name": "memory"})
    p.on_memory_write("add", "memory", "a write Cortex mirrored itself", {"write_origin": "cortex"})
    p.on_memory_write("remove", "memory", "Prefers terse answers", None)
    found = call(p, "cortex_recall", {})["memories"]
    assert [(m["content"], m["tags"]) for m in found] == [("Prefers terse answers", ["hermes-user"])]


def test_the_agent_and_its_registration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """$CORTEX_AGENT, then the installed agent, then Hermes's profile (not ``default``), then ``hermes``; an
    agent no definition declares is registered in code on a store opened here."""
    root = make_project(tmp_path / "proj")
    assert provider(root, agent_identity="default").agent == "hermes"
    p = provider(root, agent_identity="coder")
    assert p.agent == "coder"
    assert call(p, "cortex_store", {"content": "undeclared agents still remember"})["stored"] is True
    assert provider(root, agent_identity="../bad name").agent == "hermes"
    monkeypatch.setenv("CORTEX_AGENT", "ops")
    assert provider(root, agent_identity="coder").agent == "ops"


def test_availability_needs_no_network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_project(tmp_path / "proj")
    assert CortexMemoryProvider(project=str(root)).is_available()
    locked = tmp_path / "ro"
    locked.mkdir()
    monkeypatch.setenv("CORTEX_STORE", str(locked / "store"))
    locked.chmod(0o500)
    try:
        assert CortexMemoryProvider(project=str(root)).is_available() is (os.geteuid() == 0)
    finally:
        locked.chmod(0o700)
    monkeypatch.setenv("CORTEX_URL", "http://127.0.0.1:9")  # nothing listens: not asked
    assert CortexMemoryProvider(project=str(root)).is_available()


def test_through_a_running_server(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a server owning the project's store the provider uses it (as the hooks do); with $CORTEX_URL and
    $CORTEX_TOKEN it talks to that server; a wrong token is an error that does not show the token."""
    from tests.service_helpers import start_server

    server = start_server(project, CORTEX_EMBEDDINGS="none")
    try:
        owned = provider(project)
        assert call(owned, "cortex_store", {"content": "served through the owning server"})["stored"]
        assert "owning server" in owned.prefetch("owning server")
        monkeypatch.setenv("CORTEX_URL", server.url)
        monkeypatch.setenv("CORTEX_TOKEN", server.token)
        remote = provider(tmp_path_elsewhere := project.parent / "elsewhere")
        assert tmp_path_elsewhere != project
        remote.sync_turn("u", "DECISION: remote captures go to the server")
        assert "remote captures" in remote.prefetch("remote captures server")
        remote.shutdown()
        wrong = "tok-WRONG-" + "x" * 30
        monkeypatch.setenv("CORTEX_TOKEN", wrong)
        bad = provider(project)
        answer = bad.handle_tool_call("cortex_recall", {"query": "x"})
        assert "error" in json.loads(answer) and wrong not in answer
        assert bad.prefetch("x") == "" and wrong not in json.dumps(bad.recall_status())
    finally:
        server.stop()


# -- cortex install hermes ---------------------------------------------------------------------------------

def cli(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cortex", *args], cwd=root, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(CHECKOUT), **(env or {})}, timeout=120)


def test_install_and_uninstall(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_project(tmp_path / "proj")
    home = tmp_path / "hermes-home"
    home.mkdir()
    (home / "config.yaml").write_text("model:\n  default: \"gpt-\u00e9\"\nmemory:\n  provider: mem0\n  flush: 3\n")
    monkeypatch.setenv("HERMES_HOME", str(home))
    done = cli(root, "install", "hermes")
    assert done.returncode == 0, done.stderr
    shim = (home / "plugins" / "cortex" / "__init__.py").read_text()
    assert "MemoryProvider" in shim[:8192] and "def register(ctx)" in shim and "sys.path.append" in shim
    assert yaml.safe_load((home / "plugins" / "cortex" / "plugin.yaml").read_text())["name"] == "cortex"
    assert yaml.safe_load((home / "config.yaml").read_text()) == {
        "model": {"default": "gpt-\u00e9"}, "memory": {"provider": "cortex", "flush": 3}}
    assert (root / ".cortex" / "agents" / "hermes.md").is_file()
    again = cli(root, "install", "hermes")
    assert again.returncode == 0 and "already installed" in again.stderr
    assert cli(root, "uninstall", "hermes").returncode == 0
    assert not (home / "plugins" / "cortex").exists() and not (root / ".cortex" / "agents" / "hermes.md").exists()
    assert yaml.safe_load((home / "config.yaml").read_text()) == {"model": {"default": "gpt-\u00e9"},
                                                                  "memory": {"flush": 3}}
    assert "nothing to remove" in cli(root, "uninstall", "hermes").stderr


def test_install_refuses_what_it_must_not_touch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_project(tmp_path / "proj", "hermes")
    home = tmp_path / "hh"
    monkeypatch.setenv("HERMES_HOME", str(home))
    (home / "plugins").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (home / "plugins" / "cortex").symlink_to(elsewhere)
    with pytest.raises(CortexError, match="symbolic link"):
        install_hermes.install(root)
    with pytest.raises(CortexError, match="symbolic link"):
        install_hermes.uninstall(root)
    assert list(elsewhere.iterdir()) == []
    (home / "plugins" / "cortex").unlink()
    (home / "plugins" / "cortex").mkdir()
    (home / "plugins" / "cortex" / "__init__.py").write_text("# someone else's plugin\n")
    with pytest.raises(CortexError, match="did not write"):
        install_hermes.install(root)
    (home / "plugins" / "cortex" / "__init__.py").unlink()
    (home / "config.yaml").write_text("memory: [not, a, mapping]\n")
    with pytest.raises(CortexError, match="'memory' is not a mapping"):
        install_hermes.install(root)
    (home / "config.yaml").write_text("model: {unclosed\n")
    with pytest.raises(CortexError, match="not valid YAML"):
        install_hermes.install(root)
    assert not (home / "plugins" / "cortex" / "__init__.py").exists()
    (home / "config.yaml").write_text("memory:\n  provider: cortex\n")
    changes = install_hermes.install(root, "hermes")
    assert not any("declared" in c for c in changes)  # the project declares hermes already
    (home / "config.yaml").write_text("memory:\n  provider: honcho\n")  # the user switched provider since
    install_hermes.uninstall(root)
    assert yaml.safe_load((home / "config.yaml").read_text()) == {"memory": {"provider": "honcho"}}
    with pytest.raises(CortexError):
        install_hermes.install(root, "Bad Name")


# -- the real Hermes Agent ---------------------------------------------------------------------------------

def _hermes_python() -> str:
    if HERMES_PYTHON and Path(HERMES_PYTHON).is_file():
        return HERMES_PYTHON
    reason = ("hermes-agent 0.19.0 needs a virtualenv of its own (it pins pydantic, httpx, rich and installs "
              "top-level packages such as agent and tools): set CORTEX_HERMES_PYTHON to its python"
              + (f" (not a file: {HERMES_PYTHON})" if HERMES_PYTHON else ""))
    if REQUIRE_CLIENTS:
        pytest.fail(f"CORTEX_REQUIRE_CLIENTS=1 but {reason}")
    pytest.skip(reason)


DRIVER = textwrap.dedent('''
    import json, sys
    from plugins.memory import discover_memory_providers, load_memory_provider
    from agent.memory_provider import MemoryProvider
    from agent.memory_manager import MemoryManager

    step = sys.argv[1]
    out = {"discovered": [list(d) for d in discover_memory_providers() if d[0] == "cortex"]}
    p = load_memory_provider("cortex")
    out["loaded"] = p is not None
    if p is not None:
        out["is_hermes_provider"] = isinstance(p, MemoryProvider)
        out["name"] = p.name
        out["available"] = p.is_available()
        mm = MemoryManager()
        mm.add_provider(p)
        out["tools"] = [s["name"] for s in mm.get_all_tool_schemas()]
        mm.initialize_all(session_id="s-" + step, platform="cli", hermes_home=sys.argv[2], agent_context="primary",
                          agent_identity="default", agent_workspace="hermes")
        out["prefetch"] = mm.prefetch_all(sys.argv[3])
        out["status"] = p.recall_status()
        if step == "first":
            stored = json.loads(mm.handle_tool_call("cortex_store", {"content": "Hermes stored this through its tool"}))
            out["stored"] = stored
            out["search"] = json.loads(mm.handle_tool_call("cortex_search", {"query": "through its tool"}))
            out["bad"] = json.loads(mm.handle_tool_call("cortex_forget", {}))
            mm.sync_all("what did we learn?", "We shipped.\\nLEARNED: the Hermes turn marker reached Cortex\\n")
            mm.on_session_end([{"role": "user", "content": "bye"}])
        mm.shutdown_all()
    import pydantic, httpx, rich
    out["pinned"] = [m.__file__ for m in (pydantic, httpx, rich)]
    print(json.dumps(out))
''')


@pytest.mark.clients
def test_the_real_hermes_agent_loads_and_drives_cortex(tmp_path: Path) -> None:
    """``cortex install hermes``; Hermes's discovery (``plugins.memory``) finds and loads ``cortex``, available,
    a subclass of Hermes's own MemoryProvider; a memory stored through Cortex's CLI comes back from a prefetch
    through Hermes's MemoryManager; the tools work through it; a turn's marker synced in one session is
    prefetched in the next; Hermes's own pydantic/httpx/rich are the ones loaded; uninstall removes it."""
    python = _hermes_python()
    root = make_project(tmp_path / "proj")
    home = tmp_path / "hermes-home"
    env = {"HERMES_HOME": str(home)}
    assert cli(root, "install", "hermes", env=env).returncode == 0
    stored = cli(root, "store", "hermes", "The staging database listens on port 6543", "-q", env=env)
    assert stored.returncode == 0, stored.stderr
    memory_id = stored.stdout.strip()
    # Hermes's process: its own venv, no PYTHONPATH (the shim puts Cortex on sys.path), another directory
    hermes_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    hermes_env.update(HERMES_HOME=str(home), HOME=str(tmp_path / "home"))
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)

    def hermes(step: str, query: str) -> dict[str, Any]:
        run = subprocess.run([python, str(driver), step, str(home), query], cwd=tmp_path, env=hermes_env,
                             capture_output=True, text=True, timeout=180)
        assert run.returncode == 0, run.stderr[-4000:]
        return json.loads(run.stdout.strip().splitlines()[-1])

    first = hermes("first", "which port does the staging database use")
    assert first["discovered"] and first["discovered"][0][0] == "cortex" and first["discovered"][0][2] is True
    assert first["loaded"] and first["is_hermes_provider"] and first["name"] == "cortex" and first["available"]
    assert first["tools"] == list(TOOL_NAMES)
    assert "port 6543" in first["prefetch"] and "<agent-memory>" in first["prefetch"]
    assert first["status"]["count"] == 1
    assert first["stored"]["stored"] is True
    assert first["search"]["memories"][0]["content"] == "Hermes stored this through its tool"
    assert list(first["bad"]) == ["error"]
    venv = Path(python).absolute().parent.parent  # (its python is a symbolic link to the base interpreter)
    assert all(Path(f).is_relative_to(venv) for f in first["pinned"]), first["pinned"]
    second = hermes("second", "what reached Cortex from the Hermes turn marker")
    assert "the Hermes turn marker reached Cortex" in second["prefetch"]
    listed = cli(root, "list", "hermes", env=env)
    assert memory_id in listed.stdout or "6543" in listed.stdout
    assert cli(root, "uninstall", "hermes", env=env).returncode == 0
    gone = hermes("gone", "anything")
    assert gone["discovered"] == [] and gone["loaded"] is False
