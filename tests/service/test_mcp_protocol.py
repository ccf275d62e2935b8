"""The MCP utilities besides tools, through the real `mcp.Client` in-process: logging/setLevel, completion of
agent names, resource subscriptions, and the spec's error codes for unknown prompts and resources."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from mcp import Client, MCPError
from mcp_types import PromptReference, ResourceTemplateReference

from cortex import Cortex
from cortex.service.auth import ADMIN, Principal
from cortex.service.mcp import build_mcp
from cortex.service.mcp.protocol import INVALID_PARAMS, RESOURCE_NOT_FOUND

TEMPLATE = ResourceTemplateReference(uri="cortex://agents/{agent}/memory")


@pytest.fixture
def cx(store_path: Path, clock) -> Cortex:
    cx = Cortex.open(store_path, clock=clock, embeddings=None)
    for name in ("alice", "alba", "bob", "a-l_9"):
        cx.agents.register(name, description=name)
    yield cx
    cx.close()


def test_capabilities_logging_and_subscriptions(cx):
    async def main() -> None:
        # the initialize handshake (protocol 2025-11-25, as the conformance suite): the 2026-07-28 revision
        # dropped logging/setLevel and resources/subscribe, and the SDK answers them -32601 there
        server = build_mcp(lambda: cx, lambda request: ADMIN)
        async with Client(server, mode="legacy") as client:
            caps = client.server_capabilities
            assert caps.logging is not None and caps.completions is not None
            assert caps.resources is not None and caps.resources.subscribe
            assert (await client.set_logging_level("info")).model_dump(exclude_none=True) in ({}, {"meta": None})
            assert server.protocol.level == "info" and server.protocol.logs("error")
            assert not server.protocol.logs("debug")
            await client.subscribe_resource("cortex://agents/alice/memory")
            assert server.protocol.subscribed == {"cortex://agents/alice/memory"}
            await client.unsubscribe_resource("cortex://agents/alice/memory")
            assert server.protocol.subscribed == set()

    asyncio.run(main())


def test_completion_names_the_agents_the_caller_may_use(cx):
    async def complete(who: Principal, value: str, ref=TEMPLATE, name: str = "agent") -> list[str]:
        async with Client(build_mcp(lambda: cx, lambda request: who)) as client:
            return (await client.complete(ref, {"name": name, "value": value})).completion.values

    assert asyncio.run(complete(ADMIN, "al")) == ["alba", "alice"]
    assert asyncio.run(complete(ADMIN, "")) == ["a-l_9", "alba", "alice", "bob"]
    assert asyncio.run(complete(ADMIN, "ａl")) == []  # a full-width look-alike is no prefix
    assert asyncio.run(complete(ADMIN, "a\n'\">")) == []
    assert asyncio.run(complete(ADMIN, "x" * 100_000)) == []
    assert asyncio.run(complete(Principal(agent="bob"), "")) == ["bob"]  # an agent's token names only its agent
    assert asyncio.run(complete(ADMIN, "al", name="other")) == []
    assert asyncio.run(complete(ADMIN, "al", ref=PromptReference(name="nope"))) == []


def test_unknown_prompts_and_resources_answer_the_spec_codes(cx):
    async def main() -> None:
        async with Client(build_mcp(lambda: cx, lambda request: Principal(agent="alice"))) as client:
            with pytest.raises(MCPError) as prompt:
                await client.get_prompt("no-such-prompt'\n>")
            assert prompt.value.error.code == INVALID_PARAMS and "no-such-prompt" in prompt.value.error.message
            for uri in ("cortex://nothing/here", "test://static-text", "cortex://agents/nobody/memory",
                        "cortex://agents/bob/memory"):  # bob exists, but not for alice's token
                with pytest.raises(MCPError) as resource:
                    await client.read_resource(uri)
                assert resource.value.error.code == RESOURCE_NOT_FOUND, (uri, resource.value.error)
            assert (await client.read_resource("cortex://agents/alice/memory")).contents is not None

    asyncio.run(main())
