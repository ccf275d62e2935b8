"""The engine switch (CORTEX_ENGINE, CORTEX_PROVIDERS) with providers from an installed plugin distribution: merged
and labelled reads, mirrored writes, the ``none`` and ``external`` engines, and the faults (a provider that hangs,
raises or answers garbage) that must never fail a read, with the breaker and health that report them."""

from __future__ import annotations

import importlib
import json
import logging
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cortex import Cortex
from cortex.errors import EngineOffError, InvalidInputError, ProviderError
from cortex.providers.engine import engine_settings
from tests.conftest import open_agents
from tests.providers import plugins

KEY = "sk-live-TESTKEY-0123456789abcdefXYZ"
AWS = "AKIAIOSFODNN7EXAMPLQ"


@pytest.fixture(scope="session")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The test plugin distribution installed by pip into a directory on ``sys.path``."""
    site = plugins.install(tmp_path_factory.mktemp("plugins") / "site")
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    yield site
    sys.path.remove(str(site))


@pytest.fixture
def log_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "provider.jsonl"
    monkeypatch.setenv("CORTEX_TEST_PROVIDER_LOG", str(path))
    return path


def calls(path: Path, call: str, provider: str | None = None) -> list[dict]:
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [r for r in rows if r["call"] == call and (provider is None or r["provider"] == provider)]


def engine(monkeypatch: pytest.MonkeyPatch, kind: str, providers: str = "", timeout: str = "1") -> None:
    monkeypatch.setenv("CORTEX_ENGINE", kind)
    monkeypatch.setenv("CORTEX_PROVIDERS", providers)
    monkeypatch.setenv("CORTEX_PROVIDER_TIMEOUT", timeout)


@pytest.fixture
def cx(store_path: Path, plugin_site: Path, log_file: Path) -> Iterator[Cortex]:
    cortex = open_agents(store_path, "reviewer", client=False)
    yield cortex
    cortex.close()


def test_both_merges_labelled_hits_of_the_store_and_a_plugin(cx: Cortex, monkeypatch: pytest.MonkeyPatch,
                                                             log_file: Path) -> None:
    engine(monkeypatch, "both", "echo")
    cx.store("reviewer", "Always check null pointers in parsers")
    cx.store("reviewer", "Parsers must reject nested input past 64 levels")
    result = cx.search("reviewer", "parsers", explain=True)
    origins = [h.memory.origin for h in result.hits]
    assert origins.count("cortex") == 2 and origins.count("echo") == 2 and result.hits[0].memory.origin == "cortex"
    echoed = next(h.memory for h in result.hits if h.memory.origin == "echo")
    assert echoed.content == "echo remembers parsers" and echoed.metadata["provider_id"] == "e1"
    assert echoed.id.startswith("echo-") and result.providers == {"echo": "ok"}
    assert all(h.explain and "merged" in h.explain for h in result.hits)
    assert [m.origin for m in cx.recall("reviewer", "parsers")].count("echo") == 2
    block = cx.agent_start("reviewer", "parsers")
    assert "(echo) echo remembers parsers" in block and "Always check null pointers" in block
    # what the block showed of the store is counted as shown; the provider's memories are not in the store
    assert cx.get("reviewer", echoed.id) is None
    assert calls(log_file, "initialize", "echo")[0]["platform"] == "cortex"


def test_builtin_is_the_default_and_asks_no_provider(cx: Cortex, log_file: Path) -> None:
    cx.store("reviewer", "Always check null pointers in parsers")
    result = cx.search("reviewer", "parsers")
    assert [h.memory.origin for h in result.hits] == ["cortex"] and result.providers is None
    assert cx.health()["engine"] == "builtin" and not log_file.exists()


def test_a_filtered_read_asks_no_provider(cx: Cortex, monkeypatch: pytest.MonkeyPatch, log_file: Path) -> None:
    engine(monkeypatch, "both", "echo")
    cx.store("reviewer", "Always check null pointers in parsers", type="pattern")
    assert [h.memory.origin for h in cx.search("reviewer", "parsers", type="pattern").hits] == ["cortex"]
    assert calls(log_file, "search") == []


def test_the_same_content_is_one_memory_and_cortex_keeps_its_copy(cx: Cortex, monkeypatch: pytest.MonkeyPatch
                                                                  ) -> None:
    engine(monkeypatch, "both", "echo")
    mine = cx.store("reviewer", "Echo   remembers PARSERS")  # the echo provider's first hit, spaced and cased
    hits = cx.search("reviewer", "parsers").hits
    same = [h for h in hits if h.memory.content.casefold().split() == ["echo", "remembers", "parsers"]]
    assert len(same) == 1 and same[0].memory.id == mine.id and same[0].memory.origin == "cortex"
    assert hits[0].memory.id == mine.id  # found by both: the fused scores add up


def test_writes_are_mirrored_redacted_and_removals_follow(cx: Cortex, monkeypatch: pytest.MonkeyPatch,
                                                          log_file: Path) -> None:
    engine(monkeypatch, "both", "echo")
    memory = cx.store("reviewer", f"The deploy key is {AWS} for staging", tags=["ops"])
    cx.update("reviewer", memory.id, content="Deploy keys live in the vault")
    cx.forget("reviewer", memory.id)
    assert cx.engine.drain(10)
    writes = calls(log_file, "write", "echo")
    assert [w["action"] for w in writes] == ["add", "replace", "remove"]
    assert AWS not in json.dumps(writes) and "[REDACTED" in writes[0]["content"] or "***" in writes[0]["content"]
    assert writes[0]["metadata"]["memory_id"] == memory.id and writes[0]["metadata"]["tags"] == ["ops"]
    assert writes[0]["metadata"]["write_origin"] == "cortex" and writes[2]["metadata"]["memory_id"] == memory.id
    assert cx.health()["mirror"]["sent"] == 3


def test_queries_sent_to_providers_are_redacted(cx: Cortex, monkeypatch: pytest.MonkeyPatch, log_file: Path) -> None:
    engine(monkeypatch, "both", "echo")
    cx.search("reviewer", f"why was {AWS} rotated")
    [sent] = calls(log_file, "search", "echo")
    assert AWS not in sent["query"] and "rotated" in sent["query"]


def test_a_hanging_provider_costs_at_most_its_time_out(cx: Cortex, monkeypatch: pytest.MonkeyPatch) -> None:
    engine(monkeypatch, "both", "echo,hanging", timeout="0.5")
    cx.store("reviewer", "Always check null pointers in parsers")
    started = time.monotonic()
    result = cx.search("reviewer", "parsers")
    took = time.monotonic() - started
    assert took < 0.5 + 1.0, took
    assert {h.memory.origin for h in result.hits} == {"cortex", "echo"}
    assert "longer than 0.5 s" in result.providers["hanging"] and result.providers["echo"] == "ok"
    # a write is mirrored in the background: it does not wait for the hanging provider either
    started = time.monotonic()
    cx.store("reviewer", "Another memory")
    assert time.monotonic() - started < 0.5
    block_started = time.monotonic()
    assert "Always check null pointers" in cx.agent_start("reviewer", "parsers")
    assert time.monotonic() - block_started < 0.5 + 1.0


def test_failures_open_the_breaker_and_health_shows_it_without_the_key(
        cx: Cortex, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    engine(monkeypatch, "both", "raising,garbage")
    cx.project_root = tmp_path
    (tmp_path / ".cortex").mkdir()
    (tmp_path / ".cortex" / "config.toml").write_text(f'[providers.raising]\napi_key = "{KEY}"\n')
    cx.store("reviewer", "Always check null pointers in parsers")
    assert cx.engine.drain(10)  # the mirrored write: the garbage provider took it (a success)
    caplog.set_level(logging.WARNING, logger="cortex")
    for _ in range(5):
        result = cx.search("reviewer", "parsers")
        assert [h.memory.origin for h in result.hits] == ["cortex"]
    health = cx.health()
    states = {p["name"]: p for p in health["providers"]}
    assert states["raising"]["state"] == "open" and states["raising"]["breaker"]["failures"] == 5
    assert "RuntimeError: upstream refused key ***" in states["raising"]["last_error"]
    assert states["garbage"]["state"] == "open" and "not a list of hits" in states["garbage"]["last_error"]
    calls_before = states["raising"]["calls"]
    result = cx.search("reviewer", "parsers")  # skipped while the breaker is open: not called at all
    assert "skipped" in result.providers["raising"] and cx.health()["providers"][0]["calls"] == calls_before
    everything = json.dumps(health) + caplog.text + json.dumps(result.model_dump(mode="json"))
    assert KEY not in everything


def test_the_breaker_tries_again_after_the_cool_down(cx: Cortex, monkeypatch: pytest.MonkeyPatch) -> None:
    engine(monkeypatch, "both", "raising")
    now = [1000.0]
    guarded = cx.engine.providers[0]
    guarded._clock = lambda: now[0]
    for _ in range(5):
        cx.search("reviewer", "anything")
    assert guarded.health()["state"] == "open" and guarded.health()["breaker"]["open_for_s"] == 120.0
    now[0] += 121
    guarded.provider.search = lambda query, *, agent, limit: []  # it recovered
    assert cx.search("reviewer", "anything").providers == {"raising": "ok"}
    assert guarded.health()["state"] == "ok" and guarded.health()["breaker"]["failures"] == 0


def test_a_hermes_provider_without_search_answers_through_its_prefetch(cx: Cortex, monkeypatch: pytest.MonkeyPatch
                                                                       ) -> None:
    engine(monkeypatch, "both", "hermesish")
    hits = cx.search("reviewer", "parsers").hits
    assert [h.memory.content for h in hits] == ["hermesish recalls parsers", "a second hermesish memory"]
    assert {h.memory.origin for h in hits} == {"hermesish"}


def test_an_installed_plugin_is_loaded_only_when_named(cx: Cortex, monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    mark = tmp_path / "sneaky-imported"
    monkeypatch.setenv("CORTEX_TEST_SNEAKY_MARK", str(mark))
    engine(monkeypatch, "both", "echo")
    cx.search("reviewer", "anything")
    assert not mark.exists() and "cortex_test_sneaky" not in sys.modules


def test_an_unknown_provider_is_unavailable_and_named_in_health(cx: Cortex, monkeypatch: pytest.MonkeyPatch) -> None:
    engine(monkeypatch, "both", "echo,nosuchthing")
    cx.store("reviewer", "Always check null pointers in parsers")
    result = cx.search("reviewer", "parsers")
    assert result.providers == {"echo": "ok", "nosuchthing": "unavailable"}
    [_, unknown] = cx.health()["providers"]
    assert unknown["state"] == "unavailable" and "no memory provider named 'nosuchthing'" in unknown["last_error"]
    assert "echo" in unknown["last_error"]  # the installed plugins are listed


def test_none_reads_nothing_and_refuses_every_write(cx: Cortex, monkeypatch: pytest.MonkeyPatch) -> None:
    kept = cx.store("reviewer", "Always check null pointers in parsers")
    engine(monkeypatch, "none")
    cx.engine = type(cx.engine)(engine_settings(None))
    with pytest.raises(EngineOffError, match="'none'.*nothing is stored"):
        cx.store("reviewer", "A new memory")
    with pytest.raises(EngineOffError):
        cx.store_many("reviewer", [{"content": "x"}])
    with pytest.raises(EngineOffError):
        cx.forget("reviewer", kept.id)
    assert cx.search("reviewer", "parsers").hits == [] and cx.recall("reviewer", "parsers") == []
    assert cx.agent_start("reviewer", "parsers") == "" and cx.agent_start("reviewer") == ""
    monkeypatch.setenv("CORTEX_ENGINE", "builtin")
    cx.engine = type(cx.engine)(engine_settings(None))
    assert [m.id for m in cx.recall("reviewer", "parsers")] == [kept.id] and cx.count("reviewer") == 1


def test_external_sends_writes_to_the_providers_only(cx: Cortex, monkeypatch: pytest.MonkeyPatch,
                                                     log_file: Path) -> None:
    engine(monkeypatch, "external", "echo")
    stored = cx.store("reviewer", "Kept only by the provider")
    assert stored.origin == "echo" and cx.count("reviewer") == 0
    [write] = calls(log_file, "write", "echo")
    assert write["content"] == "Kept only by the provider" and write["metadata"]["memory_id"] == stored.id
    hits = cx.search("reviewer", "provider").hits
    assert {h.memory.origin for h in hits} == {"echo"}
    assert "Kept only by the provider" in [h.memory.content for h in hits]
    with pytest.raises(EngineOffError, match="'external'"):
        cx.update("reviewer", stored.id, content="changed")
    assert cx.forget("reviewer", stored.id) is True
    assert calls(log_file, "write", "echo")[-1]["action"] == "remove"
    assert "Kept only by the provider" not in [h.memory.content for h in cx.search("reviewer", "provider").hits]


def test_external_with_every_provider_failing_says_nothing_was_stored(cx: Cortex, monkeypatch: pytest.MonkeyPatch
                                                                      ) -> None:
    engine(monkeypatch, "external", "raising", timeout="0.5")
    with pytest.raises(ProviderError, match="reached no provider, nothing was stored"):
        cx.store("reviewer", "Lost nowhere")
    assert cx.count("reviewer") == 0


@pytest.mark.parametrize(("variables", "field", "message"), [
    ({"CORTEX_ENGINE": "sometimes"}, "CORTEX_ENGINE", "must be one of builtin, external, both, none"),
    ({"CORTEX_ENGINE": "both"}, "CORTEX_PROVIDERS", "at least one provider"),
    ({"CORTEX_ENGINE": "both", "CORTEX_PROVIDERS": "mem0,Bad Name"}, "CORTEX_PROVIDERS", "not a provider name"),
    ({"CORTEX_ENGINE": "both", "CORTEX_PROVIDERS": "echo", "CORTEX_PROVIDER_TIMEOUT": "0"},
     "CORTEX_PROVIDER_TIMEOUT", "between"),
    ({"CORTEX_ENGINE": "both", "CORTEX_PROVIDERS": "echo", "CORTEX_PROVIDER_TIMEOUT": "soon"},
     "CORTEX_PROVIDER_TIMEOUT", "must be a number"),
])
def test_bad_settings_are_named(variables: dict[str, str], field: str, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message) as caught:
        engine_settings(None, variables)
    assert caught.value.field == field


def test_settings_come_from_the_project_file_and_the_environment_wins(tmp_path: Path) -> None:
    (tmp_path / ".cortex").mkdir()
    (tmp_path / ".cortex" / "config.toml").write_text(
        '[providers]\nengine = "both"\nproviders = ["mem0", "echo"]\ntimeout = 2\n\n'
        '[providers.mem0]\nurl = "http://127.0.0.1:1"\napi_key = "file-key"\n\n[providers.echo]\ncolour = "blue"\n')
    settings = engine_settings(tmp_path, {"CORTEX_MEM0_API_KEY": "env-key"})
    assert settings.engine == "both" and settings.providers == ("mem0", "echo") and settings.timeout == 2
    # a built-in's own request time-out is the engine's (2 s) plus one second, so the engine's is the one seen
    assert settings.options["mem0"] == {"url": "http://127.0.0.1:1", "api_key": "env-key", "timeout": 3}
    assert settings.options["echo"] == {"colour": "blue"}
    assert engine_settings(tmp_path, {"CORTEX_ENGINE": "builtin"}).engine == "builtin"
    (tmp_path / ".cortex" / "config.toml").write_text('[providers]\nengine = "both"\nprovider = "mem0"\n')
    with pytest.raises(InvalidInputError, match="is not a setting") as caught:
        engine_settings(tmp_path, {})
    assert "config.toml:3 [providers] provider" in caught.value.field


def test_when_embedding_the_providers_hits_fails_every_candidate_is_ranked_lexically(
        store_path: Path, plugin_site: Path, log_file: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """Cortex's hits come with their cosines; if the model then fails on the providers' hits, the merge must not
    rank Cortex's by cosine and the providers' by BM25: it ranks them all by BM25."""
    from cortex.embeddings import HashEmbeddings
    from cortex.providers.merge import lexical_relevance

    class FailingOnProviders(HashEmbeddings):
        def embed(self, texts):  # type: ignore[no-untyped-def]
            if any("echo" in t for t in texts):
                raise RuntimeError("the model went away")
            return super().embed(texts)

    engine(monkeypatch, "both", "echo")
    with open_agents(store_path, "reviewer", client=False, embeddings=FailingOnProviders()) as cortex_:
        cortex_.store("reviewer", "Always check null pointers in parsers")
        cortex_.store("reviewer", "Parsers must reject nested input past 64 levels")
        caplog.set_level(logging.WARNING, logger="cortex")
        result = cortex_.search("reviewer", "parsers", mode="hybrid")
    assert "ranked lexically" in caplog.text
    texts = [h.memory.content for h in result.hits]
    expected = dict(zip(texts, lexical_relevance("parsers", texts)))
    assert {h.memory.origin for h in result.hits} == {"cortex", "echo"}
    for hit in result.hits:  # one scale: each score is the BM25 over the candidates (a provider's before its weight)
        assert hit.score == pytest.approx(expected[hit.memory.content])
