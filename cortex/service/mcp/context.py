"""What every tool module of the MCP server shares: :class:`ToolContext` (the backend, who calls, Cortex errors as
tool errors), the tools' annotations, and :func:`tool`, which marks a method of a domain's tools as the MCP tool of
an operation of :data:`cortex.api.operations.OPERATIONS` (its name comes from the operation's row)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from cortex.api import MemoryAPI
from cortex.api import operations
from cortex.api.operations import operation
from cortex.errors import AgentNotFoundError, CortexError, InvalidInputError
from cortex.service.auth import Principal

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
#: a write that, repeated with the same arguments, changes nothing more
WRITES_IDEMPOTENT = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                    open_world_hint=False)
DELETES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)
#: destructive, and a second call undoes something else (undo_consolidation's 'last')
UNDOES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)


class ToolContext:
    """What the tools share: ``backend()`` (the :class:`~cortex.api.MemoryAPI` they call) and
    ``authenticate(http_request_or_None)``, which names the caller (agent tokens only reach their own agent).
    Each domain's tools are a subclass whose tool methods are marked with :func:`tool`."""

    def __init__(self, backend: Callable[[], MemoryAPI], authenticate: Callable[[Any], Principal]) -> None:
        self.backend = backend
        self.authenticate = authenticate

    def caller_of(self, ctx: Context) -> Principal:
        """Who calls the tool: the principal of the HTTP request's token, or of no request (stdio, in-process)."""
        try:
            request = getattr(ctx.request_context, "request", None)
        except ValueError:  # no request (stdio, in-process)
            request = None
        return self.authenticate(request)

    @contextmanager
    def tool_errors(self) -> Iterator[None]:
        """Cortex errors raised inside become tool errors (their one-line message)."""
        try:
            yield
        except CortexError as exc:
            raise ToolError(str(exc)) from None

    @contextmanager
    def calling(self, ctx: Context, agent: str) -> Iterator[MemoryAPI]:
        """The backend, for a caller allowed to use ``agent``; Cortex errors become tool errors."""
        with self.tool_errors():
            if not self.caller_of(ctx).may_use(agent):
                raise AgentNotFoundError(agent, token=True)
            yield self.backend()


@dataclass(frozen=True)
class ToolMark:
    """What :func:`tool` records on a method: the operation it is the tool of, and the tool's annotations."""

    operation: str
    annotations: ToolAnnotations


_MARK = "__cortex_tool__"
_Method = TypeVar("_Method", bound=Callable[..., Any])


def tool(name: str, annotations: ToolAnnotations) -> Callable[[_Method], _Method]:
    """Mark a method of a :class:`ToolContext` subclass as the MCP tool of operation ``name``; :func:`add_tools`
    registers it under the tool name of the operation's row. Its docstring is the tool's description, its
    signature the input schema (the method keeps the tool's name: the schemas' titles are derived from it)."""
    if operation(name).tool is None:
        raise KeyError(f"operation {name!r} has no MCP tool in cortex.api.operations.OPERATIONS")

    def mark(method: _Method) -> _Method:
        setattr(method, _MARK, ToolMark(name, annotations))
        return method

    return mark


#: The environment variable that chooses the MCP server's tools when the caller does not (``lean`` by default).
TOOLS_ENV = "CORTEX_MCP_TOOLS"


def all_tools(lean: bool = False) -> frozenset[str]:
    """Every MCP tool of the table (read when called: a row added later counts), or the lean default set (the
    rows marked ``lean``)."""
    return frozenset(row.tool for row in operations.OPERATIONS.values() if row.tool is not None and
                     (row.lean or not lean))


def tool_selection(spec: str | None) -> frozenset[str]:
    """The tools ``spec`` names: ``lean`` (the default, also for None or empty), ``all``, or a comma list of tool
    names and of those two words (``lean,consolidate``). An unknown name is an error naming it."""
    every, lean = all_tools(), all_tools(lean=True)
    chosen: set[str] = set()
    for word in (w.strip() for w in (spec or "lean").split(",")):
        if word in ("", "lean"):
            chosen |= lean
        elif word == "all":
            chosen |= every
        elif word in every:
            chosen.add(word)
        else:
            raise InvalidInputError("tools", f"no MCP tool {word[:80]!r} (lean, all, or tool names: "
                                             f"{', '.join(sorted(every))})")
    return frozenset(chosen)


def add_tools(server: MCPServer, tools: ToolContext, selected: frozenset[str] | None = None) -> None:
    """Register the methods of ``tools`` marked with :func:`tool` whose tool is among ``selected``, in the order
    its class defines them (every one without ``selected``)."""
    for attribute in vars(type(tools)).values():
        mark = getattr(attribute, _MARK, None)
        if isinstance(mark, ToolMark) and (selected is None or operation(mark.operation).tool in selected):
            server.add_tool(getattr(tools, attribute.__name__), name=operation(mark.operation).tool,
                            annotations=mark.annotations)
