"""The docs say what is built (sqlite-utils' and datasette's way): the generated tables are current, every
operation's route, tool and command is in them, every CLI command is documented with help, every MCP tool is named
in the docs, and every ``:mod:``/``:class:`` reference in a docstring names something that exists."""

from __future__ import annotations

import ast
import asyncio
import importlib
import re
from pathlib import Path

import click
import pytest

from cortex.api.operations import OPERATIONS, SERVICE_ROUTES
from tests.paths import ROOT

ROOT = ROOT
DOCS = sorted((ROOT / "docs").glob("*.md"))


def test_the_generated_docs_are_current():
    """``cog --check``: the tables written from the operation table and the CLI match them (``cog -r`` rewrites)."""
    from cogapp import Cog

    files = [str(p) for p in [ROOT / "README.md", *DOCS] if "[[[cog" in p.read_text(encoding="utf-8")]
    assert files, "no generated section found"
    assert Cog().main(["cog", "--check", *files]) == 0, "run: cog -r " + " ".join(files)


def test_every_operation_is_in_the_operations_reference():
    text = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    for name, row in OPERATIONS.items():
        assert f"`{name}`" in text
        for shown in (str(row.route) if row.route else None, row.tool, row.command):
            assert shown is None or shown in text, (name, shown)
    for service in SERVICE_ROUTES:
        assert str(service.route) in text


def _leaves(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found = []
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found += _leaves(command, f"{prefix}{name} ")
        elif not command.hidden:
            found.append((prefix + name, command))
    return found


@pytest.mark.parametrize("name,command", _leaves(__import__("cortex.cli", fromlist=["cli"]).cli))
def test_every_command_has_help_and_is_in_the_cli_reference(name, command):
    assert (command.help or "").strip(), f"cortex {name} has no help"
    assert f"### `cortex {name}`" in (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


def test_every_mcp_tool_is_named_in_the_docs():
    from cortex import Cortex
    from cortex.service.auth import ADMIN
    from cortex.service.mcp import build_mcp

    with Cortex.open(None, embeddings=None) as cx:
        tools = [t.name for t in asyncio.run(build_mcp(lambda: cx, lambda request: ADMIN).list_tools())]
    text = "\n".join(p.read_text(encoding="utf-8") for p in DOCS)
    assert [t for t in tools if f"`{t}`" not in text] == []


def test_every_docstring_reference_resolves():
    """``:mod:`cortex.x``` and ``:class:`cortex.x.Y``` (also ``:func:``, ``:meth:``, ``:data:``) in the package's
    docstrings and comments name a module, or an attribute of one, that exists."""
    wrong = []
    pattern = re.compile(r":(?:mod|class|func|meth|data|attr|exc):`~?(cortex(?:\.\w+)+)`")
    for path in sorted((ROOT / "cortex").rglob("*.py")):
        for target in set(pattern.findall(path.read_text(encoding="utf-8"))):
            if not _resolves(target):
                wrong.append(f"{path.relative_to(ROOT)}: {target}")
    assert wrong == []


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(value, name):
                annotations = getattr(value, "__annotations__", {})
                fields = getattr(value, "model_fields", {}) or getattr(value, "__dataclass_fields__", {})
                if name not in annotations and name not in fields:
                    return False
                return True
            value = getattr(value, name)
        return True
    return False
