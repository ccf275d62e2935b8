"""What a person reads on a terminal: any JSON answer of a command as a line or a table (with ``rich``), long
lists cut to their first rows with a count of the rest. :func:`cortex.cli.output._emit` uses it when stdout is a
terminal and the user did not ask for ``--format json``; piped output stays the JSON scripts read."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

#: Rows of a list shown on a terminal; the rest are counted (``--format json`` or a pipe prints them all).
ROWS = 10
#: Characters of a cell shown; the rest is cut with an ellipsis.
WIDTH = 60


def wanted() -> bool:
    """True when the answer goes to a person: stdout is a terminal and no ``--format`` was given explicitly
    (an explicit ``--format json`` prints JSON on a terminal too)."""
    if not sys.stdout.isatty():
        return False
    ctx = click.get_current_context(silent=True)
    while ctx is not None:
        if "fmt" in ctx.params:
            source = ctx.get_parameter_source("fmt")
            if source is not None and source is not click.core.ParameterSource.DEFAULT:
                return False
        ctx = ctx.parent
    return True


def show(data: Any) -> None:
    """Print ``data`` (a command's JSON answer) for a person on stdout."""
    from rich.console import Console

    console = Console(file=sys.stdout, highlight=False, soft_wrap=True)
    for part in _parts(data):
        console.print(part)


def _parts(data: Any) -> list[Any]:
    """The renderables of ``data``: a memory as one line, a list of objects as a table, an object as its scalar
    fields (one ``key: value`` line each) followed by its lists (a count, then a table of the first rows)."""
    from rich.text import Text

    if _is_memory(data):
        return [Text(_memory_line(data))]
    if isinstance(data, list):
        return _list(None, data)
    if not isinstance(data, dict):
        return [Text(_cell(data, width=10_000))]
    lines = [f"{key}: {_cell(value)}" for key, value in data.items() if not isinstance(value, (list, dict))]
    lines += [f"{key}: {_cell(value)}" for key, value in data.items()
              if isinstance(value, dict) and not _is_memory(value)]
    parts: list[Any] = [Text("\n".join(lines))] if lines else []
    for key, value in data.items():
        if _is_memory(value):
            parts.append(Text(f"{key}: {_memory_line(value)}"))
        elif isinstance(value, list):
            parts += _list(key, value)
    return parts or [Text("(nothing)")]


def _list(name: str | None, items: list[Any]) -> list[Any]:
    """A list: its count and a table (or lines) of its first :data:`ROWS` items."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    label = f"{name}: " if name else ""
    if not items:
        return [Text(f"{label}none")]
    shown = items[:ROWS]
    rest = len(items) - len(shown)
    parts: list[Any] = [Text(f"{label}{len(items)}")] if name else []
    if all(_is_memory(item) for item in shown):
        parts.append(Text("\n".join(_memory_line(m) for m in shown)))
    elif all(isinstance(item, dict) for item in shown):
        columns = list(dict.fromkeys(key for item in shown for key in item))
        table = Table(box=box.SIMPLE, show_edge=False, pad_edge=False)
        for column in columns:
            table.add_column(Text(column))
        for item in shown:  # Text, not str: a value is never read as rich markup
            table.add_row(*(Text(_cell(item.get(c, ""))) for c in columns))
        parts.append(table)
    else:
        parts.append(Text("\n".join(_cell(item) for item in shown)))
    if rest:
        parts.append(Text(f"… and {rest} more (piped, or with `--format json` where the command takes it: "
                          "all of them)"))
    return parts


def _is_memory(value: Any) -> bool:
    return isinstance(value, dict) and "id" in value and "content" in value and "type" in value


def _memory_line(memory: dict[str, Any]) -> str:
    """A memory in one line: id, type, project, then its content cut short."""
    where = ", ".join(str(memory[k]) for k in ("type", "project") if memory.get(k))
    return f"{memory['id']}  ({where})  {_cell(memory['content'])}"


def _cell(value: Any, width: int = WIDTH) -> str:
    """A value as one short line: text as it is, anything else as compact JSON; newlines flattened, cut at
    ``width``."""
    if value is None:
        text = "-"
    elif isinstance(value, str):
        text = value
    elif isinstance(value, bool):
        text = "yes" if value else "no"
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
