"""mem0 as a memory provider: the real ``mem0ai`` 2.2.1 client against the stand-in server (so a drift in the real
API shows as a failure here), and Cortex's :class:`Mem0Provider` against the same stand-in, over real HTTP."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from cortex.errors import ProviderError
from cortex.providers.mem0 import Mem0Provider
from tests.providers.mem0_standin import serve

KEY = "m0-secret-Zq8#\"key'\\x"  # a quote, an apostrophe and a backslash: escaped differently by repr and JSON
DRIVER = Path(__file__).with_name("mem0_client_driver.py")
#: Read when the module is imported: the hermetic fixtures drop every CORTEX_* variable before a test runs.
CLIENT_PYTHON = os.environ.get("CORTEX_MEM0_PYTHON", "")
REQUIRE_CLIENTS = os.environ.get("CORTEX_REQUIRE_CLIENTS") == "1"
HOSTILE = ("She said \"it's <b>done</b>\" > 'twice'\nsecond line: \u0430dmin \uff1cfullwidth\uff1e \U0001f600 "
           "\\ back\\slash {\"json\": [1]} ${HOME} `rm -rf` wheel colour")


def _client_python() -> str:
    if CLIENT_PYTHON and Path(CLIENT_PYTHON).is_file():
        return CLIENT_PYTHON
    reason = "the mem0ai 2.2.1 client runs in a virtualenv of its own: set CORTEX_MEM0_PYTHON to its python"
    if REQUIRE_CLIENTS:
        pytest.fail(f"CORTEX_REQUIRE_CLIENTS=1 but {reason}")
    pytest.skip(reason)


@pytest.mark.clients
def test_the_real_client_speaks_to_the_standin(tmp_path: Path) -> None:
    """mem0ai's MemoryClient pings, adds, searches with filters, lists, reads, updates and deletes against the
    stand-in; it also finds, by the metadata filter the provider uses, what Cortex's provider wrote."""
    python = _client_python()
    with serve(KEY) as m0:
        Mem0Provider(m0.url, KEY).on_memory_write("add", "memory", "Cortex wrote this wheel note",
                                                  {"agent": "ada", "memory_id": "m-7"})
        args = {"url": m0.url, "key": KEY, "agent": "ada", "user": "cortex", "text": HOSTILE, "cortex_id": "m-7"}
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MEM0_", "PYTHONPATH"))}
        env.update(HOME=str(tmp_path), MEM0_TELEMETRY="false", MEM0_DIR=str(tmp_path / "mem0"))
        ran = subprocess.run([python, str(DRIVER), json.dumps(args)], check=False, capture_output=True, text=True,
                             env=env, timeout=120, cwd=tmp_path)
        assert ran.returncode == 0, ran.stderr[-3000:]
        out = json.loads(ran.stdout.strip().splitlines()[-1])
        paths = [(r.method, r.path) for r in m0.requests]
    assert out["org_id"] == "org-standin"
    assert out["add"]["results"][0]["memory"] == HOSTILE
    found = out["search"]["results"]
    assert [h["memory"] for h in found] == ["Cortex wrote this wheel note", HOSTILE] or \
        {h["memory"] for h in found} == {"Cortex wrote this wheel note", HOSTILE}
    assert all({"id", "memory", "score"} <= set(h) for h in found)
    assert [m["metadata"]["cortex_id"] for m in out["get_all"]["results"]] == ["m-7"]
    assert out["get"]["memory"] == HOSTILE and out["after_update"] == HOSTILE + " (updated)"
    assert out["get_deleted"] == "MemoryNotFoundError" and out["top_level_identity"] == "refused"
    assert "Invalid API key" in out["wrong_key"]
    assert ("GET", "/v1/ping/") in paths and ("POST", "/v3/memories/search/") in paths
    assert ("PUT", f"/v1/memories/{out['add']['results'][0]['id']}/") in paths


def test_search_returns_only_the_agents_hits_best_first() -> None:
    with serve(KEY) as m0:
        mem0 = Mem0Provider(m0.url, KEY)
        mem0.on_memory_write("add", "memory", "ada rides a blue bicycle", {"agent": "ada", "memory_id": "a1"})
        mem0.on_memory_write("add", "memory", "ada's bicycle has a blue bell", {"agent": "ada", "memory_id": "a2"})
        mem0.on_memory_write("add", "memory", "bob rides a blue bicycle", {"agent": "bob", "memory_id": "b1"})
        hits = mem0.search("blue bicycle bell", agent="ada", limit=5)
        assert [h.content for h in hits] == ["ada's bicycle has a blue bell", "ada rides a blue bicycle"]
        assert hits[0].score is not None and hits[0].score >= hits[1].score
        assert hits[0].metadata["memory_id"] == "a2" and hits[0].created_at is not None
        body = next(r.body for r in m0.requests if r.path == "/v3/memories/search/")
        assert body["filters"] == {"AND": [{"user_id": "cortex"}, {"agent_id": "ada"}]} and body["top_k"] == 5
        assert mem0.recall_status()["count"] == 2 and "- ada's bicycle" in mem0.prefetch("bell", agent="ada")


def test_writes_are_mirrored_added_replaced_removed() -> None:
    with serve(KEY) as m0:
        mem0 = Mem0Provider(m0.url, KEY, user_id="team-a")
        meta = {"agent": "ada", "memory_id": "m1", "tags": ["ops"], "type": "decision"}
        mem0.on_memory_write("add", "memory", HOSTILE, meta)
        [stored] = m0.memories.values()
        assert stored["memory"] == HOSTILE and stored["metadata"]["cortex_id"] == "m1"
        assert stored["user_id"] == "team-a" and stored["agent_id"] == "ada"
        add = next(r.body for r in m0.requests if r.path == "/v3/memories/add/")
        assert add["infer"] is False
        mem0.on_memory_write("replace", "memory", "changed", meta)
        assert [m["memory"] for m in m0.memories.values()] == ["changed"]
        mem0.on_memory_write("remove", "memory", "", {"agent": "ada", "memory_id": "m1"})
        assert m0.memories == {}
        mem0.on_memory_write("remove", "memory", "", {"agent": "ada", "memory_id": "m1"})  # gone already: fine
        mem0.on_memory_write("replace", "memory", "new by replace", {"agent": "ada", "memory_id": "m2"})
        assert [m["memory"] for m in m0.memories.values()] == ["new by replace"]
        mem0.sync_turn("where is my bike?", "in the garage", session_id="s1", agent="ada")
        turn = [r.body for r in m0.requests if r.path == "/v3/memories/add/"][-1]
        assert turn["messages"][1] == {"role": "assistant", "content": "in the garage"} and "infer" not in turn


def test_a_wrong_key_is_a_clear_error_without_the_key() -> None:
    with serve(KEY) as m0:
        mem0 = Mem0Provider(m0.url, "sk-wrong-" + KEY)
        with pytest.raises(ProviderError, match="HTTP 401.*check CORTEX_MEM0_API_KEY") as caught:
            mem0.search("x", agent="ada")
        assert KEY not in str(caught.value) and KEY not in repr(mem0) and "wrong" not in str(caught.value)
        assert Mem0Provider(m0.url, None).is_available() is False and Mem0Provider("", KEY).is_available() is False


@pytest.mark.parametrize("hang", [False, True])
def test_garbage_and_silence_raise_provider_errors(hang: bool) -> None:
    with serve(KEY, garbage=not hang, hang=hang) as m0:
        mem0 = Mem0Provider(m0.url, KEY, timeout=0.5)
        with pytest.raises(ProviderError, match="not JSON|did not answer within 0.5 s") as caught:
            mem0.search("x", agent="ada")
        assert KEY not in str(caught.value)


def test_answers_of_the_wrong_shape_are_refused() -> None:
    with serve(KEY) as m0:
        mem0 = Mem0Provider(m0.url, KEY)
        m0.memories["x"] = {"id": "x", "memory": ["not", "text"], "agent_id": "ada", "user_id": "cortex"}
        m0.memories["y"] = {"id": "y", "memory": "someone else's", "agent_id": "bob", "user_id": "cortex"}
        assert mem0.search("text someone", agent="ada") == []


def test_hostile_content_round_trips_through_search() -> None:
    with serve(KEY) as m0:
        mem0 = Mem0Provider(m0.url, KEY)
        mem0.on_memory_write("add", "memory", HOSTILE, {"agent": "ada", "memory_id": "h1"})
        [hit] = mem0.search("wheel colour", agent="ada")
        assert hit.content == HOSTILE and hit.metadata["memory_id"] == "h1"
        assert mem0.search("wheel colour", agent="bob") == []


def test_an_oversized_answer_is_not_read() -> None:
    with serve(KEY) as m0:
        mem0 = Mem0Provider(m0.url, KEY, timeout=20)
        m0.memories["big"] = {"id": "big", "memory": "wheel " * 1_500_000, "agent_id": "ada", "user_id": "cortex"}
        with pytest.raises(ProviderError, match="answered more than"):
            mem0.search("wheel", agent="ada")


def test_settings_come_from_the_environment_without_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """No URL or key: unavailable (and a call says which settings are missing); from the environment: available,
    without a request (nothing listens on port 9)."""
    assert Mem0Provider().is_available() is False
    with pytest.raises(ProviderError, match="CORTEX_MEM0_URL.*CORTEX_MEM0_API_KEY"):
        Mem0Provider().search("x", agent="ada")
    monkeypatch.setenv("CORTEX_MEM0_URL", "http://127.0.0.1:9/")
    monkeypatch.setenv("CORTEX_MEM0_API_KEY", KEY)
    monkeypatch.setenv("CORTEX_MEM0_USER_ID", "team-b")
    mem0 = Mem0Provider()
    assert mem0.is_available() and mem0.url == "http://127.0.0.1:9" and mem0.user_id == "team-b"
    assert KEY not in repr(mem0) and "api_key=set" in repr(mem0)
    with pytest.raises(ProviderError, match="cannot be reached") as caught:
        mem0.search("x", agent="ada")
    assert KEY not in str(caught.value)


def test_hostile_content_round_trips_through_search_and_the_real_filters() -> None:
    """What Cortex mirrors comes back byte for byte in a search; the stand-in's OR filter and metadata filter are
    the ones the provider relies on, and another user id under the same agent name stays apart."""
    with serve(KEY) as m0:
        mem0 = Mem0Provider(m0.url, KEY)
        other_team = Mem0Provider(m0.url, KEY, user_id="team-z")
        mem0.on_memory_write("add", "memory", HOSTILE, {"agent": "ada", "memory_id": "h1"})
        other_team.on_memory_write("add", "memory", "team-z wheel colour is red", {"agent": "ada", "memory_id": "z"})
        [hit] = mem0.search("wheel colour", agent="ada")
        assert hit.content == HOSTILE and hit.metadata["memory_id"] == "h1"
        assert [h.content for h in other_team.search("wheel colour", agent="ada")] == ["team-z wheel colour is red"]
        assert mem0.search("wheel", agent="bob") == []
        both = {"OR": [{"user_id": "cortex"}, {"user_id": "team-z"}]}
        assert len(_post(m0.url, "/v3/memories/search/", {"query": "wheel", "filters": both})["results"]) == 2
        mine = {"AND": [{"user_id": "team-z"}, {"metadata": {"cortex_id": "z"}}]}
        assert [m["memory"] for m in _post(m0.url, "/v3/memories/", {"filters": mine})["results"]] == \
            ["team-z wheel colour is red"]
        assert "filters must name" in _post(m0.url, "/v3/memories/search/", {"query": "wheel"})["detail"]


def _post(url: str, path: str, body: dict[str, object]) -> dict[str, object]:
    import httpx

    answer: dict[str, object] = httpx.post(url + path, json=body, headers={"Authorization": f"Token {KEY}"}).json()
    return answer


@pytest.mark.parametrize("answer", [{"results": "not a list"}, "a bare string", {"memories": []}, [1, 2]])
def test_answers_without_a_results_list_raise(answer: object, monkeypatch: pytest.MonkeyPatch) -> None:
    with serve(KEY) as m0:
        mem0 = Mem0Provider(m0.url, KEY)
        monkeypatch.setattr(mem0, "_request", lambda *a, **k: (200, answer, json.dumps(answer)))
        if isinstance(answer, list):  # a bare list is what older servers answer: its malformed items are skipped
            assert mem0.search("x", agent="ada") == []
            return
        with pytest.raises(ProviderError, match="without a results list"):
            mem0.search("x", agent="ada")
        with pytest.raises(ProviderError, match="without a results list"):
            mem0.on_memory_write("remove", "memory", "", {"agent": "ada", "memory_id": "m1"})


def test_a_huge_answer_is_not_read() -> None:
    """An answer over the provider's bound (8 MiB) is cut off with a ProviderError, not parsed."""
    with serve(KEY) as m0:
        mem0 = Mem0Provider(m0.url, KEY, timeout=20)
        m0.memories["big"] = {"id": "big", "memory": "huge " + "x" * (9 * 1024 * 1024), "user_id": "cortex",
                              "agent_id": "ada"}
        with pytest.raises(ProviderError, match="more than 8388608 bytes") as caught:
            mem0.search("huge", agent="ada")
        assert KEY not in str(caught.value)
