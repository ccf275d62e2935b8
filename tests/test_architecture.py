"""The shape of the code: imports only go downwards through the layers of docs/architecture.md (no cycles),
and both fronts (the in-process Cortex and the HTTP client) have exactly the MemoryAPI's signatures."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from cortex.api import MemoryAPI
from cortex.core import Cortex
from cortex.client import RemoteCortex

PACKAGE = Path(__file__).resolve().parents[1] / "cortex"

#: Top to bottom; a module may import its own layer (without cycles) and the layers below it.
LAYERS: list[tuple[str, list[str]]] = [
    ("surfaces", ["cortex.cli", "cortex.__main__", "cortex.service"]),
    ("facade", ["cortex.core", "cortex.api", "cortex.client"]),
    ("engine", ["cortex.recall", "cortex.search", "cortex.rerank", "cortex.render", "cortex.capture",
                "cortex.lifecycle", "cortex.scopes", "cortex.listing", "cortex.sparql",
                "cortex.transfer", "cortex.shapes", "cortex.importers", "cortex.consolidation"]),
    ("repository", ["cortex.memories"]),
    ("derived", ["cortex.index", "cortex.embeddings", "cortex.llm"]),
    ("storage", ["cortex.store", "cortex.vocab"]),
    ("model", ["cortex.model", "cortex.validation", "cortex.agents", "cortex.text", "cortex.markers"]),
    ("base", ["cortex.errors", "cortex.config", "cortex.files", "cortex.state", "cortex.provenance",
              "cortex.discovery", "cortex.notices", "cortex.names"]),
]


def layer_of(module: str) -> int:
    for depth, (_, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return len(LAYERS) - depth
    raise AssertionError(f"{module} belongs to no layer: add it to LAYERS and to docs/architecture.md")


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if name != "cortex":  # the package root only re-exports names lazily
            found[name] = path
    return found


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The cortex modules ``name`` imports, at module level or inside functions (type-only ones excluded)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    type_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            type_only.update(id(n) for n in ast.walk(node))
    found = set()
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            base = node.module
            if node.level:
                base = ".".join(name.split(".")[: -node.level] + [node.module])
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name and target != "cortex":
                found.add(target)
    return found


def test_every_import_goes_down_or_sideways():
    mods = modules()
    known = set(mods)
    upward = []
    for name, path in mods.items():
        for target in imports_of(name, path, known):
            if layer_of(target) > layer_of(name):
                upward.append(f"{name} -> {target}")
    assert upward == []


def test_there_are_no_import_cycles():
    mods = modules()
    known = set(mods)
    graph = {name: imports_of(name, path, known) for name, path in mods.items()}
    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


API_METHODS = [name for name, _ in inspect.getmembers(MemoryAPI) if not name.startswith("_")] + [
    "__enter__", "__exit__"]


def shape(function) -> list[tuple[str, object, object, str]]:
    return [(p.name, p.kind, p.default, str(p.annotation)) for p in inspect.signature(function).parameters.values()]


@pytest.mark.parametrize("front", [Cortex, RemoteCortex], ids=["Cortex", "RemoteCortex"])
@pytest.mark.parametrize("method", API_METHODS)
def test_both_fronts_have_the_protocol_signatures(front, method):
    expected = getattr(MemoryAPI, method)
    actual = getattr(front, method)
    assert shape(actual) == shape(expected)
    assert str(inspect.signature(actual).return_annotation).replace(front.__name__, "MemoryAPI") == str(
        inspect.signature(expected).return_annotation)


def test_the_protocol_covers_the_surfaces_needs():
    assert {"store", "store_many", "get", "recall", "search", "touch", "forget", "stats", "prune", "agent_start",
            "agent_end", "describe_agents", "reindex", "index_status", "info", "render", "close"} <= set(API_METHODS)
