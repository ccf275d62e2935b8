"""One scenario through the four fronts: the in-process ``Cortex``, ``RemoteCortex`` on a started ``cortex serve``,
the real MCP client on that server's ``/mcp``, and the ``cortex`` command line. Store, recall, search, update,
supersede, capture a recorded transcript with a language model (the local stand-in), import a mem0 file,
consolidate (dry run, then for real) and undo: each front on a project of its own. The results, normalised (ids and
times masked), must be the same on every front, and the same as ``tests/golden/scenario.json``, written before the
code behind the fronts moved."""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cortex import Cortex, RemoteCortex
from tests.llm_standin import StandIn
from tests.service_helpers import cortex as run_cli
from tests.service_helpers import make_project, start_server
from tests.architecture.test_golden import check
from tests.paths import TESTS

FIXTURES = TESTS / "fixtures"
MEM0 = FIXTURES / "importers" / "mem0" / "get_all.json"
AGENT = "reviewer"

#: A recorded session: a marker line the capture keeps, and lessons the stand-in model extracts.
TRANSCRIPT = [
    {"role": "user", "content": "The login test fails on CI. Find out why and fix it."},
    {"role": "assistant", "content": "The test reads the wall clock.\nLESSON: tests that read the clock need a "
                                     "frozen clock fixture"},
    {"role": "user", "content": "Good. Anything else?"},
    {"role": "assistant", "content": "Fixed.\nLEARNED: the login test needs a frozen clock\n"
                                     "LESSON: cache keys include the tenant id"},
]

Step = tuple[str, Any]


def memory(m: Any) -> dict[str, Any]:
    """A memory without what differs between runs (id, times)."""
    d = m if isinstance(m, dict) else m.model_dump(mode="json")
    return {"content": d["content"], "type": d["type"], "project": d["project"], "scope": d["scope"],
            "source": d["source"], "version": d["version"], "tags": sorted(d["tags"]),
            "confidence": round(float(d["confidence"]), 4), "superseded": d.get("superseded_by") is not None}


def contents(items: list[Any]) -> list[str]:
    return [(i if isinstance(i, dict) else i.model_dump(mode="json"))["content"] for i in items]


def capture(report: Any) -> dict[str, Any]:
    d = report if isinstance(report, dict) else report.model_dump(mode="json")
    return {"stored": sorted(contents(d["stored"])), "summary": (d.get("summary") or {}).get("content"),
            "confirmed": len(d["confirmed"]), "llm": d["llm"], "pending": d["pending"], "messages": d["messages"]}


def imported(report: Any) -> dict[str, Any]:
    d = report if isinstance(report, dict) else report.model_dump(mode="json")
    return {"imported": len(d["imported"]), "skipped": len(d["skipped"]), "failed": len(d["failed"]),
            "files": [Path(f).name for f in d["files"]], "dry_run": d["dry_run"]}


def consolidation(report: Any) -> dict[str, Any]:
    d = report if isinstance(report, dict) else report.model_dump(mode="json")
    return {"dry_run": d["dry_run"], "run": d["run"] is not None, "examined": d["examined"],
            "merges": sorted((len(m["merged"]), m["reason"].split(":")[0]) for m in d["merges"]),
            "superseded": len(d["superseded"]), "review": len(d["review"]), "created": sorted(contents(d["created"])),
            "confirmed": len(d["confirmed"]), "sessions": len(d["sessions"])}


def undone(report: Any) -> dict[str, Any]:
    d = report if isinstance(report, dict) else report.model_dump(mode="json")
    return {"restored": len(d["restored"]), "removed": len(d["removed"])}


def transcript(project: Path) -> Path:
    path = project / "session.json"
    path.write_text(json.dumps(TRANSCRIPT))
    return path


def api_scenario(cx: Any, project: Path) -> list[Step]:
    """The scenario through a :class:`cortex.api.MemoryAPI` (the facade, or the server's client)."""
    steps: list[Step] = []
    first = cx.store(AGENT, "Always check for null pointers", type="pattern", confidence=0.9, tags=["nulls"])
    steps.append(("store", memory(first)))
    second = cx.store(AGENT, "Auth tokens expire after one hour", project="mayros")
    steps.append(("store", memory(second)))
    steps.append(("recall", contents(cx.recall(AGENT, "null pointers"))))
    steps.append(("search", contents([h.memory for h in cx.search(AGENT, "null pointers", mode="bm25")])))
    steps.append(("update", memory(cx.update(AGENT, first.id, content="Always check for null and undefined",
                                             expected_version=1))))
    steps.append(("supersede", memory(cx.supersede(AGENT, second.id, "Auth tokens expire after 8 hours",
                                                   reason="security review"))))
    steps.append(("capture", capture(cx.capture_transcript(AGENT, transcript(project)))))
    steps.append(("import", imported(cx.import_from("mem0", MEM0, agent=AGENT))))
    steps.append(("store", memory(cx.store(AGENT, "Always check for null and undefined!"))))
    steps.append(("consolidate dry run", consolidation(cx.consolidate(AGENT, dry_run=True))))
    steps.append(("consolidate", consolidation(cx.consolidate(AGENT))))
    steps.append(("undo", undone(cx.undo_consolidation("last", agent=AGENT))))
    steps.append(("list", sorted(contents(cx.list_memories(AGENT, limit=1000).items))))
    return steps


async def mcp_scenario(client: Any, project: Path) -> list[Step]:
    """The scenario through the MCP tools."""

    async def call(tool: str, **arguments: Any) -> Any:
        result = await client.call_tool(tool, arguments)
        assert not result.is_error, (tool, result.content)
        return result.structured_content

    steps: list[Step] = []
    first = (await call("add_memory", agent=AGENT, content="Always check for null pointers", type="pattern",
                        confidence=0.9, tags=["nulls"]))["memory"]
    steps.append(("store", memory(first)))
    second = (await call("add_memory", agent=AGENT, content="Auth tokens expire after one hour",
                         project="mayros"))["memory"]
    steps.append(("store", memory(second)))
    steps.append(("recall", contents((await call("recall", agent=AGENT, query="null pointers"))["memories"])))
    hits = (await call("search_memories", agent=AGENT, query="null pointers", mode="bm25"))["hits"]
    steps.append(("search", [h["summary"] for h in hits]))
    steps.append(("update", memory(await call("update_memory", agent=AGENT, memory_id=first["id"],
                                              content="Always check for null and undefined", expected_version=1))))
    steps.append(("supersede", memory(await call("supersede_memory", agent=AGENT, memory_id=second["id"],
                                                 content="Auth tokens expire after 8 hours",
                                                 reason="security review"))))
    steps.append(("capture", capture(await call("capture_transcript", agent=AGENT, path=str(transcript(project))))))
    steps.append(("import", imported(await call("import_memories_from", system="mem0", path=str(MEM0),
                                                agent=AGENT))))
    steps.append(("store", memory((await call("add_memory", agent=AGENT,
                                              content="Always check for null and undefined!"))["memory"])))
    steps.append(("consolidate dry run", consolidation(await call("consolidate", agent=AGENT, dry_run=True))))
    steps.append(("consolidate", consolidation(await call("consolidate", agent=AGENT))))
    steps.append(("undo", undone(await call("undo_consolidation", agent=AGENT))))
    listed = (await call("list_memories", agent=AGENT, limit=100))["items"]
    steps.append(("list", sorted(contents(listed))))
    return steps


def cli_scenario(project: Path, env: dict[str, str]) -> list[Step]:
    """The scenario through the ``cortex`` command (no server: each command opens the store)."""

    def run(*args: str) -> Any:
        done = run_cli(project, *args, **env)
        assert done.returncode == 0, (args, done.stderr)
        return json.loads(done.stdout)

    steps: list[Step] = []
    first = run("store", AGENT, "Always check for null pointers", "--type", "pattern", "--confidence", "0.9",
                "--tag", "nulls")
    steps.append(("store", memory(first)))
    second = run("store", AGENT, "Auth tokens expire after one hour", "--project", "mayros")
    steps.append(("store", memory(second)))
    steps.append(("recall", contents(run("recall", AGENT, "null pointers"))))
    steps.append(("search", contents([h["memory"] for h in run("search", AGENT, "null pointers", "--mode",
                                                                  "bm25")["hits"]])))
    steps.append(("update", memory(run("update", AGENT, first["id"], "--content",
                                       "Always check for null and undefined", "--expected-version", "1"))))
    steps.append(("supersede", memory(run("supersede", AGENT, second["id"], "Auth tokens expire after 8 hours",
                                          "--reason", "security review"))))
    steps.append(("capture", capture(run("capture", AGENT, "--transcript", str(transcript(project))))))
    steps.append(("import", imported(run("import", "mem0", str(MEM0), "--agent", AGENT))))
    steps.append(("store", memory(run("store", AGENT, "Always check for null and undefined!"))))
    steps.append(("consolidate dry run", consolidation(run("consolidate", AGENT, "--dry-run"))))
    steps.append(("consolidate", consolidation(run("consolidate", AGENT))))
    steps.append(("undo", undone(run("consolidate", AGENT, "--undo", "last"))))
    steps.append(("list", sorted(contents(run("list", AGENT, "--all")["items"]))))
    return steps


@pytest.fixture(scope="module")
def llm() -> Iterator[StandIn]:
    with StandIn() as standin:
        yield standin


@pytest.fixture
def llm_env(llm: StandIn) -> dict[str, str]:
    return {"CORTEX_LLM_URL": llm.url, "CORTEX_LLM_MODEL": "standin", "CORTEX_EMBEDDINGS": "none"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "project", AGENT)


def dumped(steps: list[Step]) -> str:
    text = json.dumps([{"step": name, "result": result} for name, result in steps], indent=1, sort_keys=True)
    return re.sub(r"\b[0-9a-f]{28}\b", "<id>", text) + "\n"  # ids named in reasons


def python_front(project: Path, llm_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> list[Step]:
    for name, value in llm_env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(project)
    cx = Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None,
                     client=False)
    try:
        return api_scenario(cx, project)
    finally:
        cx.close()


def test_the_python_front_is_the_golden_scenario(project: Path, llm_env: dict[str, str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    check("scenario.json", dumped(python_front(project, llm_env, monkeypatch)))


@pytest.mark.parametrize("front", ["http", "mcp", "cli"])
def test_every_front_answers_the_same(front: str, project: Path, llm_env: dict[str, str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    if front == "cli":
        steps = cli_scenario(project, llm_env)
    else:
        server = start_server(project, **llm_env)
        try:
            if front == "http":
                with RemoteCortex(server.url, server.token) as client:
                    steps = api_scenario(client, project)
            else:
                steps = asyncio.run(_over_mcp(server.url, server.token, project))
        finally:
            server.stop()
    check("scenario.json", dumped(steps))


async def _over_mcp(url: str, token: str, project: Path) -> list[Step]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    transport = streamable_http_client(f"{url}/mcp",
                                       http_client=httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}))
    async with Client(transport) as client:
        return await mcp_scenario(client, project)
