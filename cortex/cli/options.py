"""What the commands share on their command lines: their names (from the table of operations), the help texts and
option decorators several commands take."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from cortex import config
from cortex.api.operations import CLI_ONLY, OPERATIONS

TYPE_HELP = "Memory type: " + ", ".join(config.MEMORY_TYPES) + "."
PROJECT_HELP = "Project the memory belongs to ('global': every project)."
PROGRESS_HELP = "Show a progress bar on stderr (default: when stderr is a terminal)."
FORMATS = click.Choice(["json", "block", "table"])


def words(name: str) -> list[str]:
    """The words of the CLI command of operation ``name`` (:data:`cortex.api.operations.OPERATIONS`), or of the
    process command ``name`` (:data:`cortex.api.operations.CLI_ONLY`): ``["notes", "sync"]`` for ``sync_notes``."""
    row = OPERATIONS.get(name)
    if row is not None and row.command is not None:
        return row.command.split()
    if row is None and name in CLI_ONLY:
        return name.split()
    raise KeyError(f"no CLI command for {name!r} in cortex.api.operations")


def name_of(name: str) -> str:
    """The name of the command of ``name`` (see :func:`words`): a group's subcommand is its last word."""
    return words(name)[-1]


def command(name: str, **settings: Any) -> Callable[[Callable[..., Any]], click.Command]:
    """``click.command`` named after the command of operation (or process command) ``name``."""
    return click.command(name_of(name), **settings)


def group(name: str, **settings: Any) -> Callable[[Callable[..., Any]], click.Group]:
    """``click.group`` named after the first word of the command of operation (or process command) ``name``."""
    return click.group(words(name)[0], **settings)


def read_filters(function: Any) -> Any:
    """The options every read takes: tags, scope, source, and time."""
    for decorator in reversed([
        click.option("--tag", "tags", multiple=True, help="Only memories with this tag (repeat: all of them)."),
        click.option("--scope", default=None, help="Only this scope: agent, team:NAME or swarm (default: all the "
                                                   "agent reads)."),
        click.option("--source", default=None, help="Only memories from this source (manual, agent_end, ...)."),
        click.option("--include-expired", is_flag=True, help="Also memories whose time to live ran out."),
        click.option("--include-superseded", is_flag=True, help="Also memories replaced by newer ones."),
    ]):
        function = decorator(function)
    return function


def _filters(tags: tuple[str, ...], scope: str | None, source: str | None, include_expired: bool,
             include_superseded: bool) -> dict[str, Any]:
    return {"tags": list(tags) or None, "scope": scope, "source": source, "include_expired": include_expired,
            "include_superseded": include_superseded}


#: ``--format json|table`` (json by default), which most commands that can print a table take.
json_or_table = click.option("--format", "fmt", type=click.Choice(["json", "table"]), default="json",
                             show_default=True)
