"""Issue 32's "Done when", through the built-in providers over real HTTP: with CORTEX_ENGINE=both and a mem0 and an
OpenViking stand-in configured, one search returns hits from all three sources, labelled; with a provider that hangs,
the same search answers within the time-out; writes reach both providers redacted; the CLI shows the same."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cortex import Cortex
from cortex.providers.mem0 import Mem0Provider
from cortex.providers.openviking import OpenVikingProvider
from tests.conftest import open_agents
from tests.providers import mem0_standin, openviking_standin
from tests.service_helpers import cortex, make_project

MEM0_KEY = "m0-stand-in-key-0123456789abcdef"
OV_KEY = "ov-stand-in-key-0123456789abcdef"
AWS = "AKIAIOSFODNN7EXAMPLQ"


@pytest.fixture
def standins() -> Iterator[tuple[mem0_standin.StandIn, openviking_standin.StandIn]]:
    with mem0_standin.serve(api_key=MEM0_KEY) as m0, openviking_standin.serve(api_key=OV_KEY) as ov:
        yield m0, ov


def settings(m0: mem0_standin.StandIn, ov: openviking_standin.StandIn, timeout: str = "2") -> dict[str, str]:
    return {"CORTEX_ENGINE": "both", "CORTEX_PROVIDERS": "mem0,openviking", "CORTEX_PROVIDER_TIMEOUT": timeout,
            "CORTEX_MEM0_URL": m0.url, "CORTEX_MEM0_API_KEY": MEM0_KEY,
            "CORTEX_OPENVIKING_URL": ov.url, "CORTEX_OPENVIKING_API_KEY": OV_KEY}


def seed(m0: mem0_standin.StandIn, ov: openviking_standin.StandIn) -> None:
    """A memory of the agent's that only each provider has (written there by another client)."""
    meta = {"agent": "reviewer", "write_origin": "elsewhere"}
    Mem0Provider(m0.url, MEM0_KEY).on_memory_write("add", "memory", "mem0 knows parsers choke on BOMs",
                                                   {**meta, "memory_id": "m0-only"})
    OpenVikingProvider(ov.url, OV_KEY).on_memory_write("add", "memory", "openviking knows parsers need fuzzing",
                                                       {**meta, "memory_id": "ov-only"})


@pytest.fixture
def cx(store_path: Path, standins, monkeypatch: pytest.MonkeyPatch) -> Iterator[Cortex]:
    m0, ov = standins
    for name, value in settings(m0, ov).items():
        monkeypatch.setenv(name, value)
    seed(m0, ov)
    cortex_ = open_agents(store_path, "reviewer", client=False)
    yield cortex_
    cortex_.close()


def test_one_search_returns_labelled_hits_from_all_three(cx: Cortex, standins) -> None:
    m0, ov = standins
    mine = cx.store("reviewer", f"Parsers must reject nesting past 64 levels; the CI key {AWS} is rotated")
    assert cx.engine.drain(10)
    result = cx.search("reviewer", "parsers")
    by_origin: dict[str, list[str]] = {}
    for hit in result.hits:
        by_origin.setdefault(hit.memory.origin, []).append(hit.memory.content)
    assert set(by_origin) == {"cortex", "mem0", "openviking"}, by_origin
    assert "mem0 knows parsers choke on BOMs" in by_origin["mem0"]
    assert "openviking knows parsers need fuzzing" in by_origin["openviking"]
    # the mirrored copies of Cortex's own memory are that one memory, not three
    assert sum("nesting past 64 levels" in c for cs in by_origin.values() for c in cs) == 1
    assert [h.memory.id for h in result.hits if h.memory.origin == "cortex"] == [mine.id]
    assert result.providers == {"mem0": "ok", "openviking": "ok"}
    # what reached each provider (the mirrored write, the query) passed the redactor
    sent = json.dumps([r.body for r in m0.requests], default=str) + json.dumps([r.body for r in ov.requests],
                                                                                default=str)
    assert "nesting past 64 levels" in sent and AWS not in sent
    block = cx.agent_start("reviewer", "parsers")
    assert "(mem0) mem0 knows parsers" in block and "(openviking) openviking knows parsers" in block


def test_with_a_hanging_provider_the_search_answers_within_the_time_out(cx: Cortex, standins) -> None:
    m0, ov = standins
    cx.store("reviewer", "Parsers must reject nesting past 64 levels")
    assert cx.engine.drain(10)
    m0.hang = True
    started = time.monotonic()
    result = cx.search("reviewer", "parsers")
    took = time.monotonic() - started
    assert took < 2 + 1, took
    assert {h.memory.origin for h in result.hits} == {"cortex", "openviking"}
    assert "longer than 2 s" in result.providers["mem0"] and result.providers["openviking"] == "ok"
    health = {p["name"]: p for p in cx.health()["providers"]}
    assert health["mem0"]["state"] == "failing" and MEM0_KEY not in json.dumps(health)


def test_the_cli_shows_the_three_sources(tmp_path: Path, standins) -> None:
    m0, ov = standins
    seed(m0, ov)
    project = make_project(tmp_path / "project", "reviewer")
    env = settings(m0, ov)
    assert cortex(project, "store", "reviewer", "Parsers must reject nesting past 64 levels", **env).returncode == 0
    ran = cortex(project, "search", "reviewer", "parsers", "--format", "table", **env)
    assert ran.returncode == 0, ran.stderr
    assert "(mem0) mem0 knows parsers" in ran.stdout and "(openviking) openviking knows" in ran.stdout
    assert "Parsers must reject nesting" in ran.stdout
    health = cortex(project, "health", **env)
    assert {p["name"]: p["state"] for p in json.loads(health.stdout)["providers"]} == {"mem0": "ok",
                                                                                        "openviking": "ok"}
    assert MEM0_KEY not in health.stdout + health.stderr + ran.stdout + ran.stderr


def test_health_probes_so_a_wrong_key_shows_in_a_fresh_process(tmp_path: Path, standins) -> None:
    m0, ov = standins
    project = make_project(tmp_path / "project", "reviewer")
    wrong = "m0-WRONG-" + MEM0_KEY
    ran = cortex(project, "health", **{**settings(m0, ov), "CORTEX_MEM0_API_KEY": wrong})
    assert ran.returncode == 0, ran.stderr
    states = {p["name"]: p for p in json.loads(ran.stdout)["providers"]}
    assert states["mem0"]["state"] == "failing" and "HTTP 401" in states["mem0"]["probe"]
    assert "check CORTEX_MEM0_API_KEY" in states["mem0"]["last_error"] and states["openviking"]["probe"] == "ok"
    assert wrong not in ran.stdout + ran.stderr and MEM0_KEY not in ran.stdout + ran.stderr
