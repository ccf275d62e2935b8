"""The MCP utilities a memory server answers besides tools: ``logging/setLevel`` (then Cortex's log records go to
the client, :mod:`cortex.service.mcp.logs`), ``completion/complete`` (the agent names of the
``cortex://agents/{agent}/memory`` template), ``resources/subscribe`` and
``resources/unsubscribe``; and the spec's error codes for an unknown prompt (-32602) or resource (-32002).

A subscription to an agent's memory sends ``notifications/resources/updated`` each time a memory the agent reads is
written (its own, its teams', the swarm's) or a consolidation run changes them, in this process (the facade's
events, :mod:`cortex.events`), on the connection that subscribed. Only a connection that lasts can be notified:
``cortex mcp`` over stdio, or a client in the same process. ``/mcp`` of ``cortex serve`` answers each request on its
own (stateless, JSON replies), so a subscription there is checked and accepted, and nothing is kept or sent.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

from mcp.server import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CompleteRequestParams,
    CompleteResult,
    Completion,
    EmptyResult,
    ResourceTemplateReference,
    SetLevelRequestParams,
    SubscribeRequestParams,
    UnsubscribeRequestParams,
)

from cortex.service.mcp.context import ToolContext
from cortex.service.mcp.logs import LogBridge

__all__ = ["INVALID_PARAMS", "LEVELS", "RESOURCE_NOT_FOUND", "ProtocolState", "add_protocol_handlers"]

INVALID_PARAMS = -32602
#: the spec's "resource not found" (server/resources#error-handling)
RESOURCE_NOT_FOUND = -32002
#: the syslog levels of the spec, least severe first
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
#: the most values a completion answers (the spec's cap)
MAX_COMPLETIONS = 100
AGENT_TEMPLATE = "cortex://agents/{agent}/memory"
AGENT_RESOURCE = re.compile(r"cortex://agents/([^/]+)/memory")
#: The most resources one lasting connection subscribes to at once.
MAX_SUBSCRIPTIONS = 256
#: The kinds of event that change what an agent's memory resource shows.
CHANGES = ("write", "consolidation")

log = logging.getLogger("cortex")


class ProtocolState:
    """What the utilities remember: the log level the client set, the resources it subscribed to, and the
    watchers that notify a lasting connection of a subscribed resource's changes."""

    def __init__(self) -> None:
        self.level = "warning"
        self.subscribed: set[str] = set()
        self.watchers: dict[str, asyncio.Task[None]] = {}
        self.bridge: LogBridge | None = None

    def logs(self, level: str) -> bool:
        """Whether a log message at ``level`` passes the level the client set."""
        return LEVELS.index(level) >= LEVELS.index(self.level)

    def stop(self, uri: str) -> None:
        """Forget the subscription to ``uri`` and stop its watcher."""
        self.subscribed.discard(uri)
        task = self.watchers.pop(uri, None)
        if task is not None:
            task.cancel()


def _concerns(event: dict[str, Any], agent: str) -> bool:
    """Whether a server's event (:meth:`RemoteCortex.aevents`) may change ``agent``'s memory: a change of its own
    scope, or of a shared one (a team's or the swarm's: the stream says which scopes, not who reads them)."""
    scope = event.get("scope")
    return event.get("kind") in CHANGES and (scope == f"agent:{agent}" or event.get("agent") == agent
                                             or not str(scope or "agent:").startswith("agent:"))


async def _watch_remote(uri: str, agent: str, backend: Any, session: Any) -> None:
    """:func:`_watch` through a server (``cortex mcp`` forwards to one): its event stream."""
    try:
        async for event in backend.aevents():
            if _concerns(event, agent):
                await session.send_resource_updated(uri)
    except Exception as exc:  # noqa: BLE001 - the stream or the connection ended: the watch ends with it
        log.debug("MCP resource watch of %s ended: %s", uri, exc)


async def _watch(uri: str, agent: str, backend: Any, session: Any) -> None:
    """Send ``notifications/resources/updated`` for ``uri`` on ``session`` after each committed change to what
    ``agent`` reads, until cancelled or the connection is gone (a burst of writes is one notification)."""
    if not callable(getattr(backend, "subscribe", None)):
        return await _watch_remote(uri, agent, backend, session)
    loop = asyncio.get_running_loop()
    arrived = asyncio.Event()
    subscription = backend.subscribe(agent, wake=lambda: loop.call_soon_threadsafe(arrived.set))
    try:
        while True:
            await arrived.wait()
            arrived.clear()
            if subscription.closed:
                return
            if any(event.kind in CHANGES for event in subscription.drain()):
                await session.send_resource_updated(uri)
    except Exception as exc:  # noqa: BLE001 - the connection went away: the watch ends with it
        log.debug("MCP resource watch of %s ended: %s", uri, exc)
    finally:
        subscription.close()


def add_protocol_handlers(server: MCPServer, context: ToolContext) -> ProtocolState:
    """Register the utilities' handlers on ``server``; agent completions only name agents the caller may use."""
    state = ProtocolState()
    lowlevel = server._lowlevel_server  # the SDK has no public seam for these methods

    async def set_level(ctx: Any, params: SetLevelRequestParams) -> EmptyResult:
        state.level = str(params.level)
        if state.bridge is not None:
            state.bridge.detach()
            state.bridge = None
        if getattr(ctx, "request", None) is None:  # a lasting connection: Cortex's log records from now on
            state.bridge = LogBridge(ctx.session, asyncio.get_running_loop(), state.level)
            state.bridge.attach()
        return EmptyResult()

    async def complete(ctx: Any, params: CompleteRequestParams) -> CompleteResult:
        values: list[str] = []
        ref, argument = params.ref, params.argument
        if isinstance(ref, ResourceTemplateReference) and ref.uri == AGENT_TEMPLATE and argument.name == "agent":
            request = getattr(ctx, "request", None)
            caller = context.authenticate(request)
            prefix = argument.value.casefold()
            values = sorted(a["name"] for a in context.backend().describe_agents()
                            if caller.may_use(a["name"]) and a["name"].casefold().startswith(prefix))
        return CompleteResult(completion=Completion(values=values[:MAX_COMPLETIONS], total=len(values),
                                                    has_more=len(values) > MAX_COMPLETIONS))

    async def subscribe(ctx: Any, params: SubscribeRequestParams) -> EmptyResult:
        uri = str(params.uri)
        found = AGENT_RESOURCE.fullmatch(uri)
        request = getattr(ctx, "request", None)
        if found is None or not context.authenticate(request).may_use(found.group(1)):
            raise unknown_resource(uri)
        if request is not None:  # stateless HTTP: nothing can be sent on it, so nothing is kept (no caller's
            return EmptyResult()  # subscriptions can fill the server's room for another's)
        if uri not in state.subscribed and len(state.subscribed) >= MAX_SUBSCRIPTIONS:
            raise MCPError(code=INVALID_PARAMS, message=f"this server already holds {MAX_SUBSCRIPTIONS} resource "
                                                        "subscriptions, the most it keeps: unsubscribe one first")
        state.subscribed.add(uri)
        backend = context.backend()
        if uri not in state.watchers and (callable(getattr(backend, "subscribe", None))
                                          or callable(getattr(backend, "aevents", None))):
            state.watchers[uri] = asyncio.get_running_loop().create_task(
                _watch(uri, found.group(1), backend, ctx.session))
        return EmptyResult()

    async def unsubscribe(ctx: Any, params: UnsubscribeRequestParams) -> EmptyResult:
        if getattr(ctx, "request", None) is None:
            state.stop(str(params.uri))
        return EmptyResult()

    lowlevel.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)
    lowlevel.add_request_handler("completion/complete", CompleteRequestParams, complete)
    lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
    lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)
    return state


def unknown_prompt(name: str) -> MCPError:
    """The spec's error for a prompt the server does not have."""
    return MCPError(code=INVALID_PARAMS, message=f"unknown prompt: {name!r}")


def unknown_resource(uri: str, why: str | None = None) -> MCPError:
    """The spec's error for a resource the server does not have (``data.uri`` names it)."""
    return MCPError(code=RESOURCE_NOT_FOUND, message=why or f"resource not found: {uri}", data={"uri": uri})
