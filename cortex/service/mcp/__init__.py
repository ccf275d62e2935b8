"""The MCP server (official ``mcp`` SDK, 2.x ``MCPServer``): tools and a resource over the Cortex API.

The same server object runs over stdio (``cortex mcp``) and streamable HTTP (``/mcp`` of ``cortex serve``).
Its backend is a :class:`cortex.api.MemoryAPI`: the Cortex the server owns, or a
:class:`cortex.client.RemoteCortex` talking to it. Tools are named and shaped like the Python API
(``recall`` is the AND-token recall, ``agent_start`` the block); enums where the API has one. Every error is one
line naming the field: Cortex errors carry their own message, argument errors are rewritten from pydantic's.

Each domain of the facade has its module of tools (:mod:`.memories`, :mod:`.reading`, ... a
:class:`~cortex.service.mcp.context.ToolContext` subclass): a tool is the method marked with the operation it
serves, and takes its name from that operation's row of :data:`cortex.api.operations.OPERATIONS`. The argument
types and output models they share are in :mod:`.outputs`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from pydantic import ValidationError

from cortex import caller, provenance
from cortex.api import MemoryAPI
from cortex.model import Memory, Page
from cortex.service.auth import Principal
from cortex.service.mcp import generic
from cortex.service.mcp.admin import AdminTools
from cortex.service.mcp.consolidation import ConsolidationTools
from cortex.service.mcp.context import TOOLS_ENV, ToolContext, add_tools, tool_selection
from cortex.service.mcp.graph import GraphTools
from cortex.service.mcp.memories import MemoriesTools
from cortex.service.mcp.notes import NotesTools
from cortex.service.mcp.protocol import ProtocolState, add_protocol_handlers, unknown_prompt, unknown_resource
from cortex.service.mcp.reading import ReadingTools
from cortex.service.mcp.sessions import SessionsTools

__all__ = ["INSTRUCTIONS", "TOOLS", "TOOLS_ENV", "argument_error", "build_mcp", "tool_selection"]

#: Each domain's tools, in the order of the facade's domains (:data:`cortex.api.operations.DOMAINS`).
TOOLS: tuple[type[ToolContext], ...] = (MemoriesTools, ReadingTools, AdminTools, SessionsTools, NotesTools,
                                        GraphTools, ConsolidationTools)


def argument_error(exc: ValidationError) -> str:
    """pydantic's report on a tool's arguments as one line naming the field."""
    errors = exc.errors()
    first: dict[str, Any] = dict(errors[0]) if errors else {}
    field = ".".join(str(p) for p in first.get("loc", ())) or "arguments"
    message = str(first.get("msg", "invalid")).rstrip(".")
    if first.get("type") == "missing":
        return f"{field}: missing (required)"
    shown = repr(first.get("input"))
    return f"{field}: {message[:1].lower()}{message[1:]}, not {shown if len(shown) <= 80 else shown[:77] + '...'}"


class _CortexMCP(MCPServer):
    """The SDK's server, with argument errors rewritten as one line naming the field; each tool runs for the
    agent its request's token names (:mod:`cortex.caller`), whatever the tool does."""

    #: who calls a tool (set by :func:`build_mcp`)
    tools_context: ToolContext | None = None
    #: the log level and subscriptions clients set (set by :func:`build_mcp`)
    protocol: ProtocolState | None = None

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            who = caller.current()  # what the HTTP guard set, unless this call's own request says
            if self.tools_context is not None and context is not None:
                with self.tools_context.tool_errors():
                    who = self.tools_context.caller_of(context).agent
            # what the tool writes records its activity, and is checked against its caller's rights
            with provenance.activity(surface="mcp", tool=name), caller.acting(who):
                return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(argument_error(exc.__cause__)) from None
            raise

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None, context: Any = None) -> Any:
        if self._prompt_manager.get_prompt(name) is None:
            raise unknown_prompt(name)  # the SDK's own answer is a bare error (code 0)
        return await super().get_prompt(name, arguments, context)

    async def read_resource(self, uri: Any, context: Any = None) -> Any:
        try:
            return await super().read_resource(uri, context)
        except ResourceNotFoundError as exc:
            raise unknown_resource(str(uri), str(exc) or None) from None
        except ResourceError as exc:
            if "is not declared" in str(exc):  # an agent the caller may not use is, to it, no resource
                raise unknown_resource(str(uri), str(exc)) from None
            raise


INSTRUCTIONS = (
    "Persistent memory for agents. Start with list_agents: it names the agents you may use, and every other tool "
    "takes one of those names as `agent`. Call agent_start when an agent begins a task (it returns the "
    "<agent-memory> block of what it learned before), search_memories before you work on something you may have "
    "met before, add_memory when you learn a pattern, convention, insight or decision worth keeping, and "
    "agent_end with the agent's output to keep its LEARNED:/PATTERN:/CONVENTION:/DECISION:/INSIGHT: lines. "
    "When a memory is wrong, update_memory corrects it; when a fact changed, supersede_memory replaces it (the old "
    "one stays in memory_history); validate_memory confirms one is still right. Memories can be shared: "
    "scope 'team:NAME' or 'swarm' on add_memory, and inject_learning for leads."
)
#: The instructions of the lean default set (the tools it lacks are not named).
LEAN_INSTRUCTIONS = (
    "Persistent memory for agents. Start with list_agents: it names the agents you may use, and every other tool "
    "takes one of those names as `agent`. Call agent_start when an agent begins a task (it returns the "
    "<agent-memory> block of what it learned before), search_memories before you work on something you may have "
    "met before, add_memory when you learn a pattern, convention, insight or decision worth keeping, and "
    "agent_end with the agent's output to keep its LEARNED:/PATTERN:/CONVENTION:/DECISION:/INSIGHT: lines. "
    "When a memory is wrong, update_memory corrects it; when a fact changed, supersede_memory replaces it. "
    "Memories can be shared: scope 'team:NAME' or 'swarm' on add_memory. (This is the lean tool set; the server "
    "has admin, history and consolidation tools with CORTEX_MCP_TOOLS=all.)"
)


def build_mcp(backend: Callable[[], MemoryAPI], authenticate: Callable[[Any], Principal],
              tools: str | None = None) -> MCPServer:
    """An MCP server whose tools call ``backend()``; ``authenticate(http_request_or_None)`` names the caller
    (agent tokens only reach their own agent). ``tools`` chooses the tools listed (:func:`tool_selection`:
    ``lean``, ``all`` or names); None reads :data:`TOOLS_ENV`, ``lean`` when unset."""
    selected = tool_selection(tools if tools is not None else os.environ.get(TOOLS_ENV))
    lean = selected <= tool_selection("lean")
    server = _CortexMCP(name="cortex", version="0.1.0", log_level="WARNING",
                        instructions=LEAN_INSTRUCTIONS if lean else INSTRUCTIONS)
    for model in (Memory, Page):  # deferred in the engine; tools serialise memories made without validation
        model.model_rebuild(force=True)
    for domain in TOOLS:
        add_tools(server, domain(backend, authenticate), selected)
    context = server.tools_context = ToolContext(backend, authenticate)
    generic.add_tools(server, context, generic.registered(TOOLS), selected)  # an operation no tool class serves
    server.protocol = add_protocol_handlers(server, context)

    @server.resource("cortex://agents/{agent}/memory", name="agent_memory", mime_type="text/markdown",
                     description="The agent's <agent-memory> block: its most used memories")
    def agent_memory(agent: str, ctx: Context) -> str:
        try:
            with context.calling(ctx, agent) as cx:
                return cx.render(cx.recall(agent, None, limit=20))
        except ToolError as exc:
            raise ResourceError(str(exc)) from None

    return server
