"""The MCP utilities a memory server answers besides tools: ``logging/setLevel``, ``completion/complete`` (the
agent names of the ``cortex://agents/{agent}/memory`` template), ``resources/subscribe`` and
``resources/unsubscribe``; and the spec's error codes for an unknown prompt (-32602) or resource (-32002)."""

from __future__ import annotations

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

__all__ = ["INVALID_PARAMS", "LEVELS", "RESOURCE_NOT_FOUND", "ProtocolState", "add_protocol_handlers"]

INVALID_PARAMS = -32602
#: the spec's "resource not found" (server/resources#error-handling)
RESOURCE_NOT_FOUND = -32002
#: the syslog levels of the spec, least severe first
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
#: the most values a completion answers (the spec's cap)
MAX_COMPLETIONS = 100
AGENT_TEMPLATE = "cortex://agents/{agent}/memory"


class ProtocolState:
    """What the utilities remember: the log level the client set and the resources it subscribed to."""

    def __init__(self) -> None:
        self.level = "warning"
        self.subscribed: set[str] = set()

    def logs(self, level: str) -> bool:
        """Whether a log message at ``level`` passes the level the client set."""
        return LEVELS.index(level) >= LEVELS.index(self.level)


def add_protocol_handlers(server: MCPServer, context: ToolContext) -> ProtocolState:
    """Register the utilities' handlers on ``server``; agent completions only name agents the caller may use."""
    state = ProtocolState()
    lowlevel = server._lowlevel_server  # the SDK has no public seam for these methods

    async def set_level(ctx: Any, params: SetLevelRequestParams) -> EmptyResult:
        state.level = str(params.level)
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
        state.subscribed.add(str(params.uri))
        return EmptyResult()

    async def unsubscribe(ctx: Any, params: UnsubscribeRequestParams) -> EmptyResult:
        state.subscribed.discard(str(params.uri))
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
