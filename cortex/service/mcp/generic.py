"""The MCP tool of an operation no tool class serves: built from its row of the table (the tool's name) and its
protocol method (:mod:`cortex.api.generic`: the arguments, the description), so that a new operation reaches the
MCP server from its row and its method alone. The hand-written tools keep their own shapes; this one is used only
where none is.

The caller is checked as by the hand tools: an operation of an ``agent`` goes through
:meth:`~cortex.service.mcp.context.ToolContext.calling`, one without (or with none given) needs an admin token. The
result is the method's return value (the SDK wraps one that is not an object in ``{"result": ...}``)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context

from cortex import model
from cortex.api import generic
from cortex.api.operations import operation
from cortex.service.mcp.context import _MARK, READ_ONLY, WRITES, ToolContext, ToolMark

#: The name the tool gives the SDK's context (no protocol parameter ends with "_").
_CTX = "ctx_"


def registered(tools: Iterable[type[ToolContext]]) -> set[str]:
    """The names of the tools the classes ``tools`` define (their methods marked with
    :func:`~cortex.service.mcp.context.tool`)."""
    return {operation(mark.operation).tool or "" for cls in tools for attribute in vars(cls).values()
            if isinstance(mark := getattr(attribute, _MARK, None), ToolMark)}


def add_tools(server: MCPServer, context: ToolContext, registered: set[str],
              selected: frozenset[str] | None = None) -> list[str]:
    """Add to ``server`` the tool of every operation of the table whose tool is not among ``registered`` (and is
    among ``selected``, when given); the names of the tools added."""
    localns = vars(model)
    added = []
    for row in generic.rows():
        if row.tool is None or row.tool in registered or (selected is not None and row.tool not in selected):
            continue
        found = generic.signature(row.name, localns)
        if found is None:  # no protocol method: the surfaces' test names the operation
            continue
        reads = row.route is not None and row.route.method == "GET"
        server.add_tool(tool_of(context, found), name=row.tool, description=found.doc or row.summary,
                        annotations=READ_ONLY if reads else WRITES)
        registered.add(row.tool)
        added.append(row.tool)
    return added


def tool_of(context: ToolContext, signature: generic.Signature) -> Callable[..., Any]:
    """The tool function of ``signature``'s operation: the protocol method's parameters and answer, the caller
    checked, the method called on the backend."""
    name = signature.row.name
    parameters = [inspect.Parameter(_CTX, inspect.Parameter.KEYWORD_ONLY, annotation=Context)]
    parameters += [inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, annotation=p.hint, default=p.default)
                   for p in signature.parameters]

    def call(**arguments: Any) -> Any:
        ctx: Context = arguments.pop(_CTX)
        agent = arguments.get("agent")
        if isinstance(agent, str):
            with context.calling(ctx, agent) as cx:
                return getattr(cx, name)(**arguments)
        with context.tool_errors():
            context.caller_of(ctx).require_admin(name)
            return getattr(context.backend(), name)(**arguments)

    call.__name__ = call.__qualname__ = signature.row.tool or name
    call.__doc__ = signature.doc
    # the SDK reads the arguments from the signature and finds the context among the annotations
    call.__signature__ = inspect.Signature(parameters, return_annotation=signature.answer)  # type: ignore[attr-defined]
    call.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": signature.answer}
    return call
