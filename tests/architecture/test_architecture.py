"""The shape of the code: imports only go downwards through the layers of docs/architecture.md (no cycles),
and both fronts (the in-process Cortex and the HTTP client) have exactly the MemoryAPI's signatures."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from cortex.api import MemoryAPI
from cortex.app import Cortex
from cortex.client import RemoteCortex
from tests.paths import ROOT

PACKAGE = ROOT / "cortex"

#: Top to bottom; a module may import its own layer (without cycles) and the layers below it.
LAYERS: list[tuple[str, list[str]]] = [
    ("surfaces", ["cortex.cli", "cortex.__main__", "cortex.service", "cortex.integrations"]),
    ("facade", ["cortex.app", "cortex.core", "cortex.api", "cortex.client"]),
    ("engine", ["cortex.recall", "cortex.search", "cortex.rerank", "cortex.temporal", "cortex.render", "cortex.capture",
                "cortex.lifecycle", "cortex.scopes", "cortex.listing", "cortex.sparql",
                "cortex.transfer", "cortex.shapes", "cortex.importers", "cortex.consolidation",
                "cortex.providers"]),
    ("repository", ["cortex.memories"]),
    ("derived", ["cortex.index", "cortex.embeddings", "cortex.llm"]),
    ("storage", ["cortex.store", "cortex.vocab"]),
    ("model", ["cortex.model", "cortex.model_sessions", "cortex.sparql.results", "cortex.validation", "cortex.agents", "cortex.text", "cortex.markers"]),
    ("base", ["cortex.errors", "cortex.config", "cortex.files", "cortex.state", "cortex.provenance", "cortex.caller",
              "cortex.discovery", "cortex.notices", "cortex.names", "cortex.jsonsafe", "cortex.events"]),
]


def layer_of(module: str) -> int:
    """The layer of ``module`` (higher is further up), by the longest prefix of LAYERS it has."""
    found = [(len(p), len(LAYERS) - depth) for depth, (_, prefixes) in enumerate(LAYERS) for p in prefixes
             if module == p or module.startswith(p + ".")]
    if not found:
        raise AssertionError(f"{module} belongs to no layer: add it to LAYERS and to docs/architecture.md")
    return max(found)[1]


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if name != "cortex":  # the package root only re-exports names lazily
            found[name] = path
    return found


def imports_of(name: str, path: Path, known: set[str], *, typing: bool = False) -> set[str]:
    """The cortex modules ``name`` imports, at module level or inside functions (type-only ones too when
    ``typing``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    type_only: set[int] = set()
    for node in ast.walk(tree):
        if not typing and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
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


def test_the_contract_names_no_engine_module():
    """The protocol and the operation table (the contract every front shares) refer, even for typing, only to the
    model and base layers: the API's result and parameter types live in the model layer."""
    mods = modules()
    known = set(mods)
    model = dict(LAYERS)["model"]
    wrong = [f"{name} -> {target}" for name in ("cortex.api.protocol", "cortex.api.operations")
             for target in imports_of(name, mods[name], known, typing=True)
             if layer_of(target) > layer_of(model[0]) and not target.startswith("cortex.api")]
    assert wrong == []


@pytest.mark.parametrize("typing", [False, True], ids=["run-time", "type-only-too"])
def test_there_are_no_import_cycles(typing):
    mods = modules()
    known = set(mods)
    graph = {name: imports_of(name, path, known, typing=typing)
             for name, path in mods.items()}
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


#: The facade's domains in the order they build on each other: a module of cortex.app imports only modules of a
#: lower rank (the kernel, then the base domains, then the workflows, then the class that composes them).
APP_ORDER = {"cortex.app.kernel": 0, "cortex.app.memories": 1, "cortex.app.reading": 1, "cortex.app.admin": 1,
             "cortex.app.sessions": 2, "cortex.app.notes": 2, "cortex.app.graph": 2, "cortex.app.consolidation": 2,
             "cortex.app.cortex": 3, "cortex.app": 4}


def test_the_facade_domains_build_on_each_other_in_order():
    mods = modules()
    known = set(mods)
    app = [name for name in mods if name == "cortex.app" or name.startswith("cortex.app.")]
    assert set(app) == set(APP_ORDER), "a new module of cortex.app needs its rank in APP_ORDER (and docs)"
    wrong = [f"{name} -> {target}" for name in app for target in imports_of(name, mods[name], known)
             if target in APP_ORDER and APP_ORDER[target] >= APP_ORDER[name]]
    assert wrong == []


def test_each_domain_module_of_the_facade_implements_its_operations():
    """Every operation of the table is a method of the facade module of its domain (the protocol's methods)."""
    import importlib

    from cortex.api.operations import OPERATIONS

    classes = {"kernel": "Kernel", "memories": "MemoryOps", "reading": "ReadingOps", "admin": "AdminOps",
               "sessions": "SessionOps", "notes": "NotesOps", "graph": "GraphOps",
               "consolidation": "ConsolidationOps"}
    misplaced = []
    for name, row in OPERATIONS.items():
        module = importlib.import_module(f"cortex.app.{row.domain}")
        owner = getattr(module, classes[row.domain])
        if name not in vars(owner) and not (row.domain == "kernel" and name in vars(Cortex)):
            misplaced.append(f"{name} (domain {row.domain}) is not defined in cortex/app/{row.domain}.py")
    assert misplaced == []


#: The surface packages whose modules are named after the facade's domains.
SURFACE_PACKAGES = ("cortex.service.http", "cortex.service.mcp", "cortex.cli")


def test_each_surface_module_calls_only_its_domains_operations():
    """``service/http/<d>.py``, ``service/mcp/<d>.py`` and ``cli/<d>.py`` call only operations of domain <d> or of
    the domains it builds on (read from the ``.name(`` calls of the module)."""
    from cortex.api.operations import BUILDS_ON, OPERATIONS

    wrong = []
    for name, path in modules().items():
        package, _, domain = name.rpartition(".")
        if package not in SURFACE_PACKAGES or domain not in BUILDS_ON:
            continue
        allowed = {domain, *BUILDS_ON[domain]}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in OPERATIONS:
                if OPERATIONS[node.func.attr].domain not in allowed:
                    wrong.append(f"{name}:{node.lineno} calls {node.func.attr} "
                                 f"(domain {OPERATIONS[node.func.attr].domain})")
    assert wrong == []


#: Modules, functions and classes over the shape's bounds, each to be split (the list only shrinks).
SHAPE_EXCEPTIONS: set[str] = set()
MAX_MODULE_LINES, MAX_FUNCTION_LINES, MAX_METHODS = 800, 120, 40


def test_no_module_function_or_class_is_over_its_size():
    """No module over 800 lines, no function over 120 (route and tool registration included), no class defining
    more than 40 methods in its own body."""
    over = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = str(path.relative_to(PACKAGE.parent))
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > MAX_MODULE_LINES:
            over.append(where)
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
                over.append(f"{where}:{node.name}")
            if isinstance(node, ast.ClassDef) and sum(
                    isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef)) for b in node.body) > MAX_METHODS:
                over.append(f"{where}:{node.name}")
    assert set(over) <= SHAPE_EXCEPTIONS, sorted(set(over) - SHAPE_EXCEPTIONS)


def test_the_repository_root_holds_only_the_projects_own_files():
    root = PACKAGE.parent
    import subprocess

    tracked = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True).stdout.split()
    top = {name.split("/", 1)[0] for name in tracked}
    if top:  # a git checkout
        assert top <= {".ci", ".gitignore", "README.md", "CHANGELOG.md", "pyproject.toml", "agent_defs", "bench",
                       "cortex", "docs", "tests"}, top
