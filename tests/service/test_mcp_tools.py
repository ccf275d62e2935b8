"""The MCP server's tool sets: the lean default fits in an agent's context window, ``all`` (or a list) adds the
admin, history and consolidation tools; one table says which is which.

Sizes are of ``tools/list`` as a client receives it: the JSON-RPC answer's bytes over real HTTP from ``cortex
serve``'s ``/mcp``. Tokens are approximated as bytes / 4 (no tokenizer ships offline; tiktoken fetches its
encodings from the network), which overestimates JSON's tokens for the common BPE tokenizers."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import httpx
import pytest
from mcp import Client, StdioServerParameters

from cortex.api.operations import OPERATIONS
from cortex.errors import InvalidInputError
from cortex.service.auth import ADMIN
from cortex.service.mcp import build_mcp, tool_selection
from cortex.service.mcp.context import all_tools

from tests.service_helpers import cortex, env, make_project, start_server

#: The everyday memory work (the rows of the table marked lean).
ALL_TOOLS, LEAN_TOOLS = all_tools(), all_tools(lean=True)
LEAN = ["add_memory", "agent_end", "agent_start", "delete_memory", "get_memory", "list_agents", "recall",
        "search_memories", "supersede_memory", "update_memory"]
#: The budget of the lean set in tokens (bytes / 4).
BUDGET = 10_000


def _tools_list(url: str, token: str) -> bytes:
    """The raw answer of ``tools/list`` on ``url``'s /mcp (stateless, JSON answers: one POST)."""
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2025-06-18"}
    answer = httpx.post(f"{url}/mcp", headers=headers, timeout=30,
                        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    assert answer.status_code == 200, answer.text
    return answer.content


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj", "alice")


def test_the_table_marks_the_lean_set():
    assert sorted(LEAN_TOOLS) == LEAN
    assert all(OPERATIONS[row].tool for row in OPERATIONS if OPERATIONS[row].lean)
    assert LEAN_TOOLS < ALL_TOOLS and len(ALL_TOOLS) > 40


def test_lean_by_default_and_all_over_http(project):
    """``cortex serve`` lists the lean set unless CORTEX_MCP_TOOLS says otherwise (empty is lean); measured."""
    sizes = {}
    for spec in ("", "all"):
        server = start_server(project, CORTEX_MCP_TOOLS=spec)
        try:
            raw = _tools_list(server.url, server.token)
        finally:
            server.stop()
        tools = json.loads(raw)["result"]["tools"]
        sizes[spec] = len(raw)
        names = sorted(t["name"] for t in tools)
        assert names == (LEAN if spec == "" else sorted(ALL_TOOLS))
    assert sizes[""] / 4 < BUDGET, f"the lean tools/list is {sizes[''] / 4:.0f} tokens (bytes / 4)"
    assert sizes["all"] > 3 * sizes[""]  # what the option keeps out of the context
    print(f"tools/list: lean {sizes['']} bytes ~{sizes[''] // 4} tokens, all {sizes['all']} bytes")


def test_every_lean_tool_fits_and_answers(tmp_path, clock):
    """In process, with the selection given: the lean tools work, and a named extra tool joins them."""
    from cortex import Cortex

    cx = Cortex.open(tmp_path / "store", clock=clock, embeddings=None)
    cx.agents.register("alice", description="first")

    async def main() -> None:
        async with Client(build_mcp(lambda: cx, lambda request: ADMIN, "lean,memory_history")) as client:
            names = sorted(t.name for t in (await client.list_tools()).tools)
            assert names == sorted([*LEAN, "memory_history"])
            added = await client.call_tool("add_memory", {"agent": "alice", "content": "the cache <is> \"warm\"\n"})
            assert not added.is_error, added.content
            found = await client.call_tool("search_memories", {"agent": "alice", "query": "cache"})
            assert found.structured_content["hits"]
            missing = await client.call_tool("consolidate", {"scope": "swarm"})
            assert missing.is_error  # not listed, not callable

    try:
        asyncio.run(main())
    finally:
        cx.close()


@pytest.mark.parametrize("spec", ["nope", "lean,\"x\nDROP", "ALL", "add_memory ;rm", "ａll", "x" * 10_000])
def test_unknown_tools_are_refused(spec):
    with pytest.raises(InvalidInputError) as caught:
        tool_selection(spec)
    assert caught.value.field == "tools" and len(str(caught.value)) < 2000


def test_the_cli_option(project):
    """``cortex mcp --tools``: a bad set is a usage error naming the option; a good one is what the client lists."""
    bad = cortex(project, "mcp", "--tools", "lean,nope")
    assert bad.returncode == 2 and "--tools" in bad.stderr and "nope" in bad.stderr
    params = StdioServerParameters(command=sys.executable, args=["-m", "cortex.cli", "mcp", "--tools", "recall"],
                                   cwd=str(project), env=env())

    async def main() -> list[str]:
        async with Client(params) as client:
            return [t.name for t in (await client.list_tools()).tools]

    assert asyncio.run(main()) == ["recall"]
