"""The docs' tables of operations, written from the operation table by cog (``cog -r docs/operations.md``;
``tests/architecture/test_docs.py`` checks they are current)."""

from __future__ import annotations

from cortex.api.operations import CLI_ONLY, DOMAINS, OPERATIONS, SERVICE_ROUTES, Operation


def _cell(text: str | None, reason: str | None) -> str:
    return f"`{text}`" if text else f"— ({reason})" if reason else "—"


def _tool_cell(row: Operation) -> str:
    cell = _cell(row.tool, row.why_not.get("mcp"))
    return f"**{cell}**" if row.tool and row.lean else cell


def operations_table() -> str:
    """Every operation of the API by domain: its HTTP route (status), MCP tool (bold: in the lean default set)
    and CLI command, or why not."""
    lines = ["| domain | operation | HTTP | MCP tool | CLI | what |", "|---|---|---|---|---|---|"]
    for domain in DOMAINS:
        for row in OPERATIONS.values():
            if row.domain != domain:
                continue
            route = f"`{row.route}` ({row.route.status})" if row.route else _cell(None, row.why_not.get("http"))
            lines.append(f"| {domain} | `{row.name}` | {route} | {_tool_cell(row)} | "
                         f"{_cell('cortex ' + row.command if row.command else None, row.why_not.get('cli'))} | "
                         f"{row.summary} |")
    return "\n".join(lines)


def service_table() -> str:
    """The server's own routes and the CLI's process commands."""
    lines = ["| HTTP route | what |", "|---|---|"]
    lines += [f"| `{s.route}` ({s.route.status}) | {s.summary} |" for s in SERVICE_ROUTES]
    lines += ["", "| CLI command | what |", "|---|---|"]
    lines += [f"| `cortex {name}` | {what} |" for name, what in CLI_ONLY.items()]
    return "\n".join(lines)
