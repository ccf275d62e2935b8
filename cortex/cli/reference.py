"""The CLI reference of the docs, written from the commands themselves by cog (``cog -r docs/cli.md``;
``tests/architecture/test_docs.py`` checks it is current)."""

from __future__ import annotations

import click
from click.testing import CliRunner


def _paths(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command's path under ``group``, groups first, hidden ones left out."""
    found = [prefix]
    for name in sorted(group.commands):
        command = group.commands[name]
        if command.hidden:
            continue
        found += _paths(command, (*prefix, name)) if isinstance(command, click.Group) else [(*prefix, name)]
    return found


def cli_reference() -> str:
    """Every command's ``--help``, as the CLI prints it."""
    from cortex.cli import cli

    runner = CliRunner()
    parts = []
    for path in _paths(cli):
        result = runner.invoke(cli, [*path, "--help"], prog_name="cortex", terminal_width=100)
        parts.append(f"### `{' '.join(('cortex', *path))}`\n\n```\n{result.output.rstrip()}\n```")
    return "\n\n".join(parts)
