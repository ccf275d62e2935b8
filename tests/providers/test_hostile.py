"""Hostile answers of a memory provider that must not fail a read: hits whose parts raise when read, and text no
UTF-8 answer can carry (unpaired surrogates) or that a terminal would obey (control characters)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from cortex import Cortex
from cortex.providers import registry
from cortex.providers.base import ProviderHit
from tests.conftest import open_agents


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text for you")


class _Answering:
    """A provider (Hermes's shape plus ``search``) that answers ``answer`` to every search."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def is_available(self) -> bool:
        return True

    def prefetch(self, query: str, **kwargs: Any) -> str:
        return ""

    def search(self, query: str, *, agent: str, limit: int = 10) -> Any:
        return self.answer


@pytest.fixture
def cx(store_path: Path) -> Iterator[Cortex]:
    cortex = open_agents(store_path, "reviewer", client=False)
    yield cortex
    cortex.close()


def _answering(cx: Cortex, monkeypatch: pytest.MonkeyPatch, answer: Any) -> None:
    monkeypatch.setenv("CORTEX_ENGINE", "both")
    monkeypatch.setenv("CORTEX_PROVIDERS", "hostile")
    monkeypatch.setenv("CORTEX_PROVIDER_TIMEOUT", "2")
    monkeypatch.setattr(registry, "load", lambda name, options: _Answering(answer))
    cx.store("reviewer", "Parsers must reject nesting past 64 levels")  # the engine is read on first use


def test_hits_whose_parts_raise_are_a_counted_failure_not_a_dead_thread(
        cx: Cortex, monkeypatch: pytest.MonkeyPatch) -> None:
    _answering(cx, monkeypatch, [{"id": _Unprintable(), "content": "parsers nest"}])
    crashed: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: crashed.append(args.exc_value))
    result = cx.search("reviewer", "parsers")
    assert [h.memory.origin for h in result.hits] == ["cortex"]
    assert "cannot be read: RuntimeError: no text for you" in result.providers["hostile"], result.providers
    assert crashed == []
    provider = cx.health()["providers"][0]  # health's probe asks it again: a second failure
    assert provider["errors"] == 2 and "no text for you" in provider["last_error"]
    assert "no text for you" in provider["probe"]


def test_a_hit_with_unpaired_surrogates_and_controls_reaches_http_clean(
        cx: Cortex, monkeypatch: pytest.MonkeyPatch) -> None:
    from cortex.service.http import create_app

    _answering(cx, monkeypatch, [ProviderHit(id="id-\udc80", content="parsers \ud800 nest\x00 deep\x1b[2J\nok\tyes")])
    result = cx.search("reviewer", "parsers")
    hit = next(h.memory for h in result.hits if h.memory.origin == "hostile")
    assert hit.content == "parsers \ufffd nest deep[2J\nok\tyes"
    assert hit.metadata["provider_id"] == "id-\ufffd"
    json.dumps(result.model_dump(mode="json"), ensure_ascii=False).encode("utf-8")  # what every surface does
    answer = TestClient(create_app(cx, mcp=False, web=False)).get("/v1/agents/reviewer/search",
                                                                  params={"query": "parsers"})
    assert answer.status_code == 200, answer.text
    assert {h["memory"]["origin"] for h in answer.json()["hits"]} == {"cortex", "hostile"}


@pytest.mark.parametrize("kind", ["none", "external"])
def test_import_and_touch_do_not_write_the_store_when_the_engine_keeps_out_of_it(tmp_path: Path, kind: str) -> None:
    from tests.service_helpers import cortex as run
    from tests.service_helpers import make_project

    project = make_project(tmp_path / "project", "reviewer")
    off = {"CORTEX_ENGINE": kind, "CORTEX_PROVIDERS": "mem0", "CORTEX_EMBEDDINGS": "none"}
    builtin = {"CORTEX_ENGINE": "builtin", "CORTEX_EMBEDDINGS": "none"}
    stored = run(project, "store", "reviewer", "Parsers must reject nesting past 64 levels", **builtin)
    assert stored.returncode == 0, stored.stderr
    memory_id = json.loads(stored.stdout)["id"]
    assert run(project, "export", "--agent", "reviewer", "-o", str(tmp_path / "out.trig"), **builtin).returncode == 0
    assert run(project, "forget", "reviewer", memory_id, **builtin).returncode == 0
    before = run(project, "list", "reviewer", **builtin).stdout

    imported = run(project, "import", str(tmp_path / "out.trig"), **off)
    assert imported.returncode != 0 and f"the memory engine is '{kind}'" in imported.stderr, imported.stderr
    assert run(project, "list", "reviewer", **builtin).stdout == before

    assert run(project, "import", str(tmp_path / "out.trig"), **builtin).returncode == 0
    before = run(project, "list", "reviewer", **builtin).stdout
    touched = run(project, "touch", "reviewer", memory_id, **off)
    assert touched.returncode != 0 and f"the memory engine is '{kind}'" in touched.stderr, touched.stderr
    assert run(project, "list", "reviewer", **builtin).stdout == before


class _Treacherous(str):
    def __len__(self) -> int:
        raise ZeroDivisionError("a str that cannot be measured")


@pytest.mark.parametrize("hit", [
    ProviderHit(id="1", content="parsers nest", created_at="yesterday"),  # type: ignore[arg-type]
    ProviderHit(id="1", content="parsers nest", score=10 ** 400),
    ProviderHit(id="1", content="parsers nest", score=float("nan"), metadata="not a dict"),  # type: ignore[arg-type]
    ProviderHit(id=_Treacherous("1"), content=_Treacherous("parsers nest")),
], ids=["created-at-text", "score-too-big", "nan-and-bad-metadata", "str-subclass"])
def test_a_hit_with_strange_fields_is_read_plainly_and_fails_no_surface(
        cx: Cortex, monkeypatch: pytest.MonkeyPatch, hit: ProviderHit) -> None:
    from cortex.service.http import create_app

    _answering(cx, monkeypatch, [hit])
    result = cx.search("reviewer", "parsers")
    assert {h.memory.origin for h in result.hits} == {"cortex", "hostile"}, result.providers
    assert "parsers nest" in cx.agent_start("reviewer", "parsers")
    assert len(cx.recall("reviewer", "parsers")) == 2
    answer = TestClient(create_app(cx, mcp=False, web=False)).get("/v1/agents/reviewer/search",
                                                                  params={"query": "parsers"})
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("kind", ["none", "external"])
def test_a_hook_capture_with_an_engine_that_stores_nothing_is_not_kept_on_disk(tmp_path: Path, kind: str) -> None:
    from cortex.service.hooks.session import spool_dir
    from tests.service_helpers import cortex as run
    from tests.service_helpers import make_project

    project = make_project(tmp_path / "project", "reviewer")
    builtin = {"CORTEX_ENGINE": "builtin", "CORTEX_EMBEDDINGS": "none"}
    assert run(project, "store", "reviewer", "Parsers must reject nesting past 64 levels", **builtin).returncode == 0
    def contents() -> list[str]:
        return sorted(m["content"] for m in json.loads(run(project, "list", "reviewer", **builtin).stdout)["items"])

    before = contents()
    transcript = project / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}}) + "\n" + json.dumps(
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "LEARNED: the private token lives in the vault\nDECISION: we use uv"}]}}) + "\n")
    payload = json.dumps({"session_id": "s1", "transcript_path": str(transcript), "cwd": str(project),
                          "hook_event_name": "Stop"})
    hooked = run(project, "hook", "claude", "Stop", "--agent", "reviewer", stdin=payload,
                 CORTEX_ENGINE=kind, CORTEX_PROVIDERS="mem0", CORTEX_EMBEDDINGS="none")
    assert hooked.returncode == 0, hooked.stderr
    spooled = spool_dir(project)
    assert not spooled.exists() or not any(spooled.iterdir()), [p.read_text() for p in spooled.iterdir()]
    # and nothing waits to be replayed into the store once the engine is builtin again
    assert run(project, "hook", "claude", "SessionStart", "--agent", "reviewer", stdin=json.dumps(
        {"session_id": "s2", "cwd": str(project), "hook_event_name": "SessionStart"}), **builtin).returncode == 0
    assert contents() == before == ["Parsers must reject nesting past 64 levels"]


def test_a_large_limit_scores_a_bounded_number_of_a_providers_hits(cx: Cortex, monkeypatch: pytest.MonkeyPatch) -> None:
    from cortex.providers import merge

    _answering(cx, monkeypatch, [{"id": str(i), "content": f"parsers nest {i}"} for i in range(5000)])
    scored: list[int] = []
    original = merge.lexical_relevance
    monkeypatch.setattr(cx, "_relevance", lambda query, texts: scored.append(len(texts)) or original(query, texts))
    result = cx.search("reviewer", "parsers", limit=5000)
    assert result.providers["hostile"] == "ok"
    assert scored and max(scored) <= 1 + 50, scored
    assert sum(h.memory.origin == "hostile" for h in result.hits) == 50
