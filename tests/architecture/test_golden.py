"""The public surface, frozen: every HTTP route (OpenAPI), MCP tool and resource, CLI command (its ``--help``)
and Python signature of the two fronts is compared with the golden files in ``tests/golden/``, committed before
the code behind them moved. A change of a public name or shape fails here; an intended one is written with
``CORTEX_UPDATE_GOLDEN=1 python -m pytest tests/architecture/test_golden.py`` and reviewed in the diff (and the changelog)."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import re
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from cortex import Cortex, RemoteCortex
from tests.paths import TESTS

GOLDEN = TESTS / "golden"
UPDATE = os.environ.get("CORTEX_UPDATE_GOLDEN") == "1"


def check(name: str, text: str) -> None:
    """``text`` equals the golden file ``name`` (written instead with CORTEX_UPDATE_GOLDEN=1)."""
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"no golden file {path}: write it with CORTEX_UPDATE_GOLDEN=1"
    expected = path.read_text(encoding="utf-8")
    if text != expected:
        import difflib

        diff = "".join(list(difflib.unified_diff(expected.splitlines(True), text.splitlines(True), f"golden/{name}",
                                                 "now"))[:200])
        pytest.fail(f"the public surface changed ({name}):\n{diff}")


def dumped(value: Any) -> str:
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def test_openapi_is_unchanged() -> None:
    from cortex.service.http import create_app

    with Cortex.open(None, embeddings=None) as cx:
        check("openapi.json", dumped(create_app(cx, mcp=False).openapi()))


def test_mcp_tools_and_resources_are_unchanged() -> None:
    from cortex.service.auth import ADMIN
    from cortex.service.mcp import build_mcp

    with Cortex.open(None, embeddings=None) as cx:
        server = build_mcp(lambda: cx, lambda request: ADMIN)

        async def listing() -> dict[str, Any]:
            tools = await server.list_tools()
            templates = await server.list_resource_templates()
            resources = await server.list_resources()
            return {
                "tools": sorted((t.model_dump(mode="json", exclude_none=True) for t in tools),
                                key=lambda t: t["name"]),
                "resource_templates": [t.model_dump(mode="json", exclude_none=True) for t in templates],
                "resources": [r.model_dump(mode="json", exclude_none=True) for r in resources],
            }

        check("mcp.json", dumped(asyncio.run(listing())))


def _leaves(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = [prefix]
    for name in sorted(group.commands):
        command = group.commands[name]
        if isinstance(command, click.Group):
            found += _leaves(command, (*prefix, name))
        else:
            found.append((*prefix, name))
    return found


def test_cli_help_is_unchanged() -> None:
    from cortex.cli import cli

    runner = CliRunner()
    parts = []
    for path in _leaves(cli):
        result = runner.invoke(cli, [*path, "--help"], prog_name="cortex", terminal_width=100)
        assert result.exit_code == 0, (path, result.output)
        parts.append(f"=== cortex {' '.join(path)}\n{result.output}")
    check("cli.txt", "".join(parts))


def _annotation(value: Any) -> str:
    """An annotation as written, without the quotes a string annotation adds (``"Cortex"`` is ``Cortex``)."""
    text = value if isinstance(value, str) else getattr(value, "__name__", repr(value))
    while len(text) > 1 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    return text.replace("'", "")


def _signature(function: Any) -> str:
    """A signature as text: parameters (kind, annotation, default) and return annotation, no memory addresses."""
    signature = inspect.signature(function)
    params = []
    marked = False
    for p in signature.parameters.values():
        if p.kind is p.KEYWORD_ONLY and not marked:
            params.append("*")
            marked = True
        text = ("*" if p.kind is p.VAR_POSITIONAL else "**" if p.kind is p.VAR_KEYWORD else "") + p.name
        if p.kind is p.VAR_POSITIONAL:
            marked = True
        if p.annotation is not p.empty:
            text += f": {_annotation(p.annotation)}"
        if p.default is not p.empty:
            default = getattr(p.default, "__name__", None) if callable(p.default) else None
            text += f" = {default or re.sub(r' at 0x[0-9a-f]+', '', repr(p.default))}"
        params.append(text)
    returned = "" if signature.return_annotation is signature.empty else f" -> {_annotation(signature.return_annotation)}"
    return f"({', '.join(params)}){returned}"


def _public(front: type) -> list[str]:
    lines = []
    for name in sorted(dir(front)):
        if name.startswith("_") and name not in ("__enter__", "__exit__", "__init__"):
            continue
        value = inspect.getattr_static(front, name)
        if isinstance(value, property):
            lines.append(f"{name}: property{' (settable)' if value.fset is not None else ''}")
        elif isinstance(value, (staticmethod, classmethod)) or inspect.isfunction(value):
            kind = "static " if isinstance(value, staticmethod) else "class " if isinstance(value, classmethod) else ""
            lines.append(f"{name}: {kind}{_signature(getattr(front, name))}")
        else:
            lines.append(f"{name}: {type(value).__name__}")
    return lines


def test_python_signatures_are_unchanged() -> None:
    text = "".join(f"== {front.__name__}\n" + "".join(f"{line}\n" for line in _public(front))
                   for front in (Cortex, RemoteCortex))
    check("signatures.txt", text)
