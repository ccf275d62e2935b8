"""OpenViking as a memory provider: the real ``openviking`` 0.5.2 client against the stand-in server (so a drift in
the real API shows as a failure here), and Cortex's :class:`OpenVikingProvider` against the same stand-in, over
real HTTP on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from cortex.errors import CortexError, ProviderError
from cortex.providers.base import MemoryProvider, ProviderHit
from cortex.providers.openviking import OpenVikingProvider, agent_prefix, memory_uri, session_key
from tests.providers.openviking_standin import serve

KEY = "ov-secret-Zq8#\"key'\\x"  # a quote, an apostrophe and a backslash: escaped differently by repr and JSON
DRIVER = Path(__file__).with_name("openviking_client_driver.py")
#: Read when the module is imported: the hermetic fixtures drop every CORTEX_* variable before a test runs.
CLIENT_PYTHON = os.environ.get("CORTEX_OPENVIKING_PYTHON", "")
REQUIRE_CLIENTS = os.environ.get("CORTEX_REQUIRE_CLIENTS") == "1"
HOSTILE = ("She said \"it's <b>done</b>\" > 'twice'\n"
           "second line: \u0430dmin (Cyrillic a) \u2018quote\u2019 \uff1cfullwidth\uff1e \U0001f600 \\ back\\slash\r\n"
           "{\"json\": [1, 2]} & %s %% ${HOME} `rm -rf`")


def provider(url: str, key: str = KEY, **kw: Any) -> OpenVikingProvider:
    return OpenVikingProvider(url, key, **kw)


# -- the real client ------------------------------------------------------------------------------------------

def _client_python() -> str:
    if CLIENT_PYTHON and Path(CLIENT_PYTHON).is_file():
        return CLIENT_PYTHON
    reason = ("the openviking 0.5.2 client needs a virtualenv of its own (it needs mcp<2): set "
              "CORTEX_OPENVIKING_PYTHON to its python" + (f" (not a file: {CLIENT_PYTHON})" if CLIENT_PYTHON else ""))
    if REQUIRE_CLIENTS:
        pytest.fail(f"CORTEX_REQUIRE_CLIENTS=1 but {reason}")
    pytest.skip(reason)


@pytest.mark.clients
def test_the_real_client_speaks_to_the_standin(tmp_path: Path) -> None:
    """openviking.SyncHTTPClient (0.5.2) writes, reads, finds, makes a session, adds messages, commits and
    removes against the stand-in, gets the shapes it expects and the errors it maps; it also reads what
    Cortex's provider wrote, at the URI the provider chose."""
    python = _client_python()
    with serve(KEY) as ov:
        cortex_side = provider(ov.url)
        cortex_side.on_memory_write("add", "memory", HOSTILE, {"agent": "ada", "memory_id": "m-7"})
        args = {"url": ov.url, "key": KEY, "agent": "ada", "uri": "viking://~/peers/ada/memories/notes/wheel.md",
                "provider_uri": memory_uri("ada", "m-7"), "hostile": "colour blue wheel\n" + HOSTILE}
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENVIKING_")}
        env.update(HOME=str(tmp_path), OPENVIKING_CLI_CONFIG_FILE=str(tmp_path / "absent-ovcli.conf"),
                   PYTHONPATH="")  # no stray ovcli.conf, nothing of Cortex's
        done = subprocess.run([python, str(DRIVER), json.dumps(args)], capture_output=True, text=True, env=env,
                              timeout=120, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
        out = json.loads(done.stdout)
        requests = list(ov.requests)

    assert out["version"] == "0.5.2", out["version"]
    assert out["write"]["ok"]["uri"] == "viking://user/default/peers/ada/memories/notes/wheel.md", out["write"]
    assert out["read"] == {"ok": args["hostile"]}
    hits = out["find"]["ok"]
    assert hits["total"] == 1 and not hits["resources"] and not hits["skills"], hits
    assert hits["memories"][0]["uri"] == out["write"]["ok"]["uri"] and hits["memories"][0]["score"] == 1.0
    assert set(hits["memories"][0]) == {"context_type", "uri", "level", "score", "abstract", "tags"}
    assert out["find_content"]["ok"]["memories"][0]["content"] == args["hostile"]
    assert out["read_provider"] == {"ok": HOSTILE}
    assert out["create_session"]["ok"]["session_id"] == "drv-1", out["create_session"]
    assert out["create_again"]["error"] == "AlreadyExistsError", out["create_again"]
    assert out["add_user"]["ok"]["message_count"] == 1 and out["add_assistant"]["ok"]["message_count"] == 2
    assert out["commit"]["ok"]["status"] == "accepted" and out["commit"]["ok"]["archived"] is True, out["commit"]
    assert out["commit_unknown"]["error"] == "NotFoundError", out["commit_unknown"]
    assert out["rm"] == {"ok": None}, out["rm"]
    assert out["read_removed"]["error"] == "NotFoundError", out["read_removed"]
    assert out["old_prefix"]["error"] == "InvalidURIError", out["old_prefix"]  # 0.5.2: use viking://~/
    assert out["wrong_key"]["error"] == "UnauthenticatedError", out["wrong_key"]

    # what the real client sent: the stand-in implements exactly these routes and headers
    sent = {(r.method, r.path) for r in requests}
    assert sent == {("POST", "/api/v1/content/write"), ("GET", "/api/v1/content/read"),
                    ("POST", "/api/v1/search/find"), ("POST", "/api/v1/sessions"),
                    ("POST", "/api/v1/sessions/drv-1/messages"), ("POST", "/api/v1/sessions/drv-1/commit"),
                    ("POST", "/api/v1/sessions/no-such-session/commit"), ("DELETE", "/api/v1/fs")}, sent
    assert all(r.headers.get("X-API-Key") in (KEY, "not-" + KEY) for r in requests)
    client_find = [r for r in requests if r.path == "/api/v1/search/find"][0].body
    assert client_find == {"query": "colour blue wheel", "target_uri": "viking://~/peers/ada/memories/",
                           "limit": 5}, client_find
    assistant = [r.body for r in requests if r.path.endswith("/messages")][1]
    assert assistant == {"role": "assistant", "content": "Noted.", "peer_id": "ada"}, assistant


# -- Cortex's provider ----------------------------------------------------------------------------------------

def test_it_is_a_memory_provider_available_without_network() -> None:
    p = OpenVikingProvider("http://127.0.0.1:9", KEY)  # nothing listens there: is_available does not look
    assert isinstance(p, MemoryProvider) and p.name == "openviking" and p.is_available()
    assert not OpenVikingProvider("", KEY).is_available()
    assert not OpenVikingProvider("ftp://example.org", KEY).is_available()


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with serve(KEY) as ov:
        monkeypatch.setenv("CORTEX_OPENVIKING_URL", ov.url + "/")
        monkeypatch.setenv("CORTEX_OPENVIKING_API_KEY", KEY)
        monkeypatch.setenv("CORTEX_OPENVIKING_ACCOUNT", "acme")
        monkeypatch.setenv("CORTEX_OPENVIKING_USER", "alice")
        p = OpenVikingProvider()
        assert p.is_available() and p.url == ov.url
        p.on_memory_write("add", "memory", "likes tea", {"agent": "ada", "memory_id": "m1"})
        assert p.search("tea", agent="ada")[0].id == "viking://user/alice/peers/ada/memories/cortex/m1.md"
        headers = ov.requests[-1].headers
        assert (headers["X-API-Key"], headers["X-OpenViking-Account"], headers["X-OpenViking-User"],
                headers["X-OpenViking-Actor-Peer"]) == (KEY, "acme", "alice", "ada")


def test_search_returns_the_agents_hits_only_best_first() -> None:
    with serve(KEY) as ov:
        p = provider(ov.url)
        p.on_memory_write("add", "memory", "Ada rides a blue bicycle to work", {"agent": "ada", "memory_id": "a1"})
        p.on_memory_write("add", "memory", "Ada's bicycle is blue and fast", {"agent": "ada", "memory_id": "a2"})
        p.on_memory_write("add", "memory", "Bob rides a blue bicycle too", {"agent": "bob", "memory_id": "b1"})
        # something else in the same user space, outside any agent's prefix (a resource, another peer's memory)
        ov.contents["viking://user/default/resources/bicycle.md"] = "blue bicycle manual"
        ov.contents["viking://user/default/peers/adam/memories/x.md"] = "blue bicycle adam"

        hits = p.search("blue bicycle fast", agent="ada", limit=5)
        assert [h.id for h in hits] == [memory_uri("ada", "a2").replace("~", "user/default"),
                                        memory_uri("ada", "a1").replace("~", "user/default")]
        assert all(isinstance(h, ProviderHit) for h in hits)
        assert hits[0].content == "Ada's bicycle is blue and fast" and hits[0].score == 1.0
        assert hits[1].score is not None and 0 < hits[1].score < 1
        assert hits[0].metadata["memory_id"] == "a2" and hits[0].metadata["context_type"] == "memory"
        assert [h.metadata["memory_id"] for h in p.search("blue bicycle", agent="bob")] == ["b1"]
        assert p.search("nothing matches this", agent="ada") == []
        assert len(p.search("blue bicycle", agent="ada", limit=1)) == 1

        find = [r.body for r in ov.requests if r.path == "/api/v1/search/find"][0]
        assert find == {"query": "blue bicycle fast", "target_uri": agent_prefix("ada"), "limit": 5,
                        "read_content": True}
        status = p.recall_status()
        assert status["state"] == "ok" and status["agent"] == "ada" and status["count"] == 1

        # a server that ignores target_uri still never hands one agent another's memories
        ov.contents["viking://user/default/peers/bob/memories/cortex/b2.md"] = "Ada Ada Ada"
        leaky = [{"uri": u, "score": 0.9, "abstract": t, "context_type": "memory", "level": 2, "tags": []}
                 for u, t in ov.contents.items()]
        from cortex.providers.openviking import _hits
        kept, _ = _hits({"memories": leaky, "resources": [], "skills": [], "total": len(leaky)}, "ada")
        assert {h.metadata["memory_id"] for h in kept} == {"a1", "a2"}


def test_prefetch_gives_the_initialized_agents_memories_as_a_list() -> None:
    with serve(KEY) as ov:
        p = provider(ov.url)
        p.initialize("s-1", platform="cli", agent_identity="ada")
        p.on_memory_write("add", "memory", "Ada likes\ngreen tea", {"memory_id": "t1"})  # no agent: the initialized
        p.on_memory_write("add", "memory", "Bob likes green tea", {"agent": "bob", "memory_id": "t2"})
        assert p.prefetch("green tea") == "- Ada likes green tea"
        assert p.search("green tea", agent="bob")[0].content == "Bob likes green tea"


def test_writes_mirror_add_replace_remove() -> None:
    with serve(KEY) as ov:
        p = provider(ov.url)
        uri = "viking://user/default/peers/ada/memories/cortex/m-1.md"
        meta = {"agent": "ada", "memory_id": "m-1", "scope": "agent", "type": "fact", "write_origin": "cortex"}
        p.on_memory_write("add", "memory", "first", meta)
        assert ov.contents == {uri: "first"}
        p.on_memory_write("replace", "memory", "second", meta)
        assert ov.contents == {uri: "second"}
        write = [r.body for r in ov.requests if r.path == "/api/v1/content/write"][-1]
        assert write == {"uri": memory_uri("ada", "m-1"), "content": "second", "mode": "replace", "wait": False}
        p.on_memory_write("remove", "memory", "", meta)
        assert ov.contents == {}
        p.on_memory_write("remove", "memory", "", meta)  # already gone: fine
        delete = [r for r in ov.requests if r.method == "DELETE"][0]
        assert delete.path == "/api/v1/fs" and delete.query == {"uri": memory_uri("ada", "m-1"),
                                                                "recursive": "false", "wait": "false"}
        with pytest.raises(ProviderError, match="memory_id"):
            p.on_memory_write("remove", "memory", "", {"agent": "ada"})
        with pytest.raises(ProviderError, match="not a memory id"):
            p.on_memory_write("add", "memory", "x", {"agent": "ada", "memory_id": "../../etc"})
        with pytest.raises(ProviderError, match="unknown memory write action"):
            p.on_memory_write("merge", "memory", "x", meta)
        with pytest.raises(CortexError, match="invalid agent name"):
            p.on_memory_write("add", "memory", "x", {"agent": "../bob", "memory_id": "m"})


def test_a_turn_goes_into_the_agents_session_and_is_committed() -> None:
    with serve(KEY) as ov:
        p = provider(ov.url)
        p.sync_turn("Where is my bike?", "In the garage.", session_id="sess/1 \u00e9", agent="ada")
        p.sync_turn("And the pump?", "Next to it.", session_id="sess/1 \u00e9", agent="ada")
        sid = session_key("ada", "sess/1 \u00e9")
        assert sid.startswith("cortex-ada-sess_1__-") and "/" not in sid
        assert ov.sessions == {sid: []}
        assert ov.archives[sid] == [
            [{"role": "user", "content": "Where is my bike?"},
             {"role": "assistant", "content": "In the garage.", "peer_id": "ada"}],
            [{"role": "user", "content": "And the pump?"},
             {"role": "assistant", "content": "Next to it.", "peer_id": "ada"}]]
        assert ov.requests[2].path == f"/api/v1/sessions/{sid}/commit"
        assert ov.requests[2].body == {"keep_recent_count": 0}
        p.sync_turn("", "", session_id="x", agent="ada")  # nothing to send: nothing sent
        assert len(ov.requests) == 6


def test_a_wrong_key_gives_a_clear_error_without_the_key() -> None:
    with serve(KEY) as ov:
        wrong = "wrong-" + KEY
        p = provider(ov.url, wrong)
        with pytest.raises(ProviderError) as caught:
            p.search("anything", agent="ada")
        message = str(caught.value)
        assert caught.value.provider == "openviking"
        assert "401" in message and "UNAUTHENTICATED" in message and "CORTEX_OPENVIKING_API_KEY" in message
        assert wrong not in message and KEY not in message and wrong not in repr(p) and KEY not in repr(p)
        assert wrong not in json.dumps(p.recall_status())
        assert ov.requests[-1].headers["X-API-Key"] == wrong  # it was sent, to the server only
        with pytest.raises(ProviderError, match="401"):
            provider(ov.url, "").search("anything", agent="ada")


@pytest.mark.parametrize("kind", ["text", "list", "error", "huge", "deep", "result", "echo"])
def test_garbage_raises_provider_error(kind: str) -> None:
    with serve(KEY, garbage=kind) as ov:
        p = provider(ov.url)
        for call in (lambda: p.search("x", agent="ada"),
                     lambda: p.on_memory_write("add", "memory", "x", {"agent": "ada", "memory_id": "m"}),
                     lambda: p.sync_turn("u", "a", agent="ada")):
            try:
                call()
            except ProviderError as exc:
                assert exc.provider == "openviking" and KEY not in str(exc) and len(str(exc)) < 600
            else:  # an ok envelope with any result is a good answer to a write
                assert kind == "result"
        with pytest.raises(ProviderError):
            p.search("x", agent="ada")
        assert p.recall_status()["state"] == "failed"


def test_an_echoed_key_is_scrubbed() -> None:
    with serve(KEY, garbage="echo") as ov:  # a hostile server repeating the key in its error message
        p = provider(ov.url)
        with pytest.raises(ProviderError) as caught:
            p.search("x", agent="ada")
        assert "cannot use key" in str(caught.value) and "***" in str(caught.value)
        assert KEY not in str(caught.value) and KEY not in json.dumps(p.recall_status())


def test_a_hanging_server_fails_within_the_timeout() -> None:
    with serve(KEY, hang=True) as ov:
        p = provider(ov.url, timeout=0.5)
        started = time.monotonic()
        with pytest.raises(ProviderError, match="did not answer within 0.5 s"):
            p.search("anything", agent="ada")
        assert time.monotonic() - started < 2.0
        ov.hang = False
        assert p.search("anything", agent="ada") == []  # the next request gets an answer


def test_an_unreachable_server_is_a_provider_error() -> None:
    with serve(KEY) as ov:
        url = ov.url
    with pytest.raises(ProviderError, match="cannot be reached"):
        provider(url).search("x", agent="ada")
    with pytest.raises(ProviderError, match="no server URL"):
        OpenVikingProvider("", KEY).search("x", agent="ada")


def test_credentials_in_the_url_are_not_shown() -> None:
    p = OpenVikingProvider("http://user:pw-secret@127.0.0.1:9", KEY, timeout=0.5)
    assert "pw-secret" not in repr(p)
    with pytest.raises(ProviderError) as caught:
        p.search("x", agent="ada")
    assert "pw-secret" not in str(caught.value) and KEY not in str(caught.value)


def test_hostile_content_round_trips() -> None:
    huge = "big " * 250_000  # 1 MB
    with serve(KEY) as ov:
        p = provider(ov.url)
        p.on_memory_write("add", "memory", HOSTILE, {"agent": "ada", "memory_id": "h1"})
        p.on_memory_write("add", "memory", huge, {"agent": "ada", "memory_id": "h2"})
        assert ov.contents["viking://user/default/peers/ada/memories/cortex/h1.md"] == HOSTILE
        hit = p.search("twice done fullwidth", agent="ada")[0]
        assert hit.content == HOSTILE and hit.metadata["memory_id"] == "h1"
        assert p.search("big", agent="ada")[0].content == huge
        p.sync_turn(HOSTILE, HOSTILE, session_id=HOSTILE, agent="ada")
        archived = next(iter(ov.archives.values()))[0]
        assert archived[0]["content"] == HOSTILE and archived[1]["content"] == HOSTILE
        with pytest.raises(CortexError):
            p.search("x", agent="Ada\n")  # not an agent name: nothing sent
        assert "\n" not in ov.requests[-1].path


def test_shutdown_closes_and_the_provider_still_works_after() -> None:
    with serve(KEY) as ov:
        p = provider(ov.url)
        p.on_memory_write("add", "memory", "tea", {"agent": "ada", "memory_id": "m"})
        p.shutdown()
        p.shutdown()
        assert [h.content for h in p.search("tea", agent="ada")] == ["tea"]
        p.shutdown()


def test_the_module_never_imports_openviking() -> None:
    code = ("import sys, cortex.providers.openviking as m; "
            "assert not any(n == 'openviking' or n.startswith(('openviking.', 'openviking_sdk', 'mem0')) "
            "for n in sys.modules), sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
