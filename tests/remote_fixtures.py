"""Pytest fixtures for the remote SPARQL backend: real Oxigraph and Virtuoso servers (tests/sparql_servers.py).

* ``oxigraph_server``, ``virtuoso_server``: one server per test session (per xdist worker), started on first use,
  stopped at the end. A missing binary skips the test with the reason, or fails it when ``CORTEX_REQUIRE_SERVERS=1``
  (CI). A server that is installed but does not start is an error either way.
* ``remote_server``: parametrized ``oxigraph`` / ``virtuoso`` (marked ``server``), plus ``external`` when
  ``CORTEX_TEST_SPARQL`` holds a store location (used as-is; its data is wiped). Each use gets an empty store.
* ``remote_store_url``: ``remote_server.url``, the Cortex store location of that empty store.

Loaded from tests/conftest.py with ``from tests.remote_fixtures import *`` (``__all__`` carries the fixtures and the
``pytest_configure`` hook that registers the ``server`` marker).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.service_helpers import make_project
from tests.service_helpers import start_server as start_cortex_server
from tests.sparql_servers import Server, external_store, servers_available, start_server

__all__ = ["oxigraph_server", "pytest_configure", "remote_server", "remote_store_url", "two_servers",
           "virtuoso_server"]

INSTALL_HINTS = {
    "oxigraph": "pip install oxigraph==0.5.13 (in the dev extra)",
    "virtuoso": "apt-get install --no-install-recommends virtuoso-opensource-7",
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "server: needs a real SPARQL server (Oxigraph, Virtuoso or CORTEX_TEST_SPARQL)")


def _session_server(name: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    if not servers_available()[name]:
        reason = f"{name} is not installed ({INSTALL_HINTS[name]})"
        if os.environ.get("CORTEX_REQUIRE_SERVERS") == "1":
            pytest.fail(f"CORTEX_REQUIRE_SERVERS=1 but {reason}")
        pytest.skip(reason)
    server = start_server(name, tmp_path_factory.mktemp(name))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def oxigraph_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from _session_server("oxigraph", tmp_path_factory)


@pytest.fixture(scope="session")
def virtuoso_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from _session_server("virtuoso", tmp_path_factory)


@pytest.fixture(scope="session")
def _external_server() -> Server:
    location = os.environ.get("CORTEX_TEST_SPARQL")
    if not location:
        pytest.skip("CORTEX_TEST_SPARQL is not set")
    return external_store(location)


_PARAMS = [pytest.param(name, marks=pytest.mark.server, id=name) for name in ("oxigraph", "virtuoso")]
if os.environ.get("CORTEX_TEST_SPARQL"):
    _PARAMS.append(pytest.param("external", marks=pytest.mark.server, id="external"))

_FIXTURES = {"oxigraph": "oxigraph_server", "virtuoso": "virtuoso_server", "external": "_external_server"}


@pytest.fixture(params=_PARAMS)
def remote_server(request: pytest.FixtureRequest) -> Server:
    """A running server with an empty store (cleared before each test)."""
    server: Server = request.getfixturevalue(_FIXTURES[request.param])
    server.clear()
    return server


@pytest.fixture
def remote_store_url(remote_server: Server) -> str:
    """The Cortex store location of an empty remote store, once per server kind."""
    return remote_server.url


@pytest.fixture
def two_servers(tmp_path, remote_store_url: str):
    """Two ``cortex serve`` processes (agents coder and reviewer) on one remote store, each with its own state
    directory."""
    project = make_project(tmp_path / "project", "coder", "reviewer")
    servers = []
    try:
        for name in ("a", "b"):
            servers.append(start_cortex_server(project, state_dir=tmp_path / f"state-{name}",
                                               CORTEX_STORE=remote_store_url, timeout=60))
        yield servers
    finally:
        for server in servers:
            server.stop()
