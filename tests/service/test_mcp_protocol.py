"""The MCP utilities besides tools, through the real `mcp.Client` in-process: logging/setLevel, completion of
agent names, resource subscriptions, and the spec's error codes for unknown prompts and resources."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from mcp import Client, MCPError
from mcp_types import PromptReference, ResourceTemplateReference

from cortex import Cortex
from cortex.service.auth import ADMIN, Principal
from cortex.service.mcp import build_mcp
from cortex.service.mcp.logs import BURST, LogBridge
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


async def _updates(client_factory, write) -> list[str]:
    """The resources/updated URIs a client subscribed to alice's and bob's memory receives while ``write`` runs."""
    seen: list[str] = []
    got = asyncio.Event()

    async def handler(message) -> None:
        params = getattr(getattr(message, "params", None), "uri", None)
        if getattr(message, "method", None) == "notifications/resources/updated" and params is not None:
            seen.append(str(params))
            got.set()

    async with client_factory(handler) as client:
        await client.subscribe_resource("cortex://agents/alice/memory")
        await asyncio.sleep(0.5)  # the watch is listening
        await write(client)
        await asyncio.wait_for(got.wait(), 20)
        await asyncio.sleep(0.5)  # nothing else arrives for bob's write
        await client.unsubscribe_resource("cortex://agents/alice/memory")
    return seen


def test_a_subscribed_memory_resource_is_notified_when_the_agent_s_memory_changes(cx):
    server = build_mcp(lambda: cx, lambda request: ADMIN)

    async def write(client) -> None:
        await asyncio.to_thread(cx.store, "bob", "bob's own memory is not alice's")
        await asyncio.sleep(0.5)
        await asyncio.to_thread(cx.store, "alice", "alice learned that parsers reject BOMs")

    seen = asyncio.run(_updates(lambda handler: Client(server, mode="legacy", message_handler=handler), write))
    assert seen == ["cortex://agents/alice/memory"]
    assert not server.protocol.watchers and not server.protocol.subscribed


def test_subscribing_to_another_agent_s_or_an_unknown_resource_is_refused(cx):
    async def main(uri: str) -> int:
        async with Client(build_mcp(lambda: cx, lambda request: Principal(agent="bob")), mode="legacy") as client:
            with pytest.raises(MCPError) as caught:
                await client.subscribe_resource(uri)
            return caught.value.error.code

    for uri in ("cortex://agents/alice/memory", "cortex://agents/bob/other", "file:///etc/passwd",
                "cortex://agents/../memory"):
        assert asyncio.run(main(uri)) == RESOURCE_NOT_FOUND, uri


def test_log_records_reach_the_client_that_set_a_level(cx):
    """After logging/setLevel, Cortex's own warnings (here: agent_end skipping a SUPERSEDES of a memory that does
    not exist) reach that client as notifications/message, redacted; below its level, and before it asked,
    nothing does; a second connection with another level gets only what it asked for."""
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    output = f"SUPERSEDES no-such-memory-{secret}: the new text"

    async def session(level: str | None) -> list:
        received: list = []

        async def on_log(params) -> None:
            received.append(params)

        async with Client(build_mcp(lambda: cx, lambda request: ADMIN), mode="legacy",
                          logging_callback=on_log) as client:
            if level is not None:
                await client.set_logging_level(level)
            await client.call_tool("agent_end", {"agent": "alice", "output": output})
            for _ in range(50):  # the notification is sent by a task of the server's loop
                if received:
                    break
                await asyncio.sleep(0.02)
        return received

    warned = asyncio.run(session("warning"))
    assert len(warned) == 1, warned
    (message,) = warned
    assert message.level == "warning" and message.logger.startswith("cortex")
    assert "skipped SUPERSEDES" in message.data["message"] and secret not in message.data["message"]
    assert asyncio.run(session("error")) == []
    assert asyncio.run(session(None)) == []
    logging.getLogger("cortex.test").error("after the connections closed")  # the first record removes their bridges
    assert not [h for h in logging.getLogger("cortex").handlers if isinstance(h, LogBridge)]


def test_the_log_bridge_rate_limits_and_counts_what_it_dropped():
    sent: list = []

    class Session:
        async def send_log_message(self, level, data, logger=None) -> None:
            sent.append((level, data, logger))

    async def main() -> None:
        bridge = LogBridge(Session(), asyncio.get_running_loop(), "info")
        bridge.attach()
        try:
            for i in range(BURST + 30):
                logging.getLogger("cortex.test").info("message %d", i)
            logging.getLogger("cortex.test").debug("below the level")
            await asyncio.sleep(1.1)  # RATE a second come back
            logging.getLogger("cortex.test").error("after the pause")
            await asyncio.sleep(0.05)
        finally:
            bridge.detach()

    asyncio.run(main())
    assert [d["message"] for _, d, _ in sent[:BURST]] == [f"message {i}" for i in range(BURST)]
    assert sent[-1][0] == "error" and sent[-1][1] == {"message": "after the pause", "dropped": 30}
    assert len(sent) == BURST + 1 and all(logger == "cortex.test" for *_, logger in sent)
