"""The remote SPARQL backend's own rules: store locations, credentials, errors and retries. What it shares with
the embedded store (the storage contract, the facade) runs on both in the contract suites."""

from __future__ import annotations

import http.server
import json
import logging
import socket
import threading
from collections.abc import Iterator

import pytest

from cortex import Cortex
from cortex.errors import InvalidInputError, StoreError
from cortex.store import open_store
from cortex.store.remote import Endpoint, RemoteStore
from cortex.vocab import Vocabulary


def test_a_location_names_each_endpoint_and_never_prints_credentials():
    e = Endpoint.parse("sparql+https://bob:s%40cret@db.example.org:8890/sparql-auth"
                       "?update=/sparql-auth&gsp=/sparql-graph-crud-auth&auth=digest&timeout=5")
    assert e.query_url == "https://db.example.org:8890/sparql-auth"
    assert e.update_url == "https://db.example.org:8890/sparql-auth"
    assert e.gsp_url == "https://db.example.org:8890/sparql-graph-crud-auth"
    assert (e.username, e.password, e.auth, e.timeout) == ("bob", "s@cret", "digest", 5.0)
    assert e.location == "sparql+https://db.example.org:8890/sparql-auth"
    assert "cret" not in e.location and "bob" not in e.location
    plain = Endpoint.parse("sparql+http://127.0.0.1:7878/query?update=http://127.0.0.1:7879/update")
    assert plain.update_url == "http://127.0.0.1:7879/update" and plain.auth is None and plain.gsp_url is None
    assert Endpoint.parse("sparql+http://h:1").query_url == "http://h:1/sparql"


def test_credentials_may_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("CORTEX_STORE_USER", "cortex")
    monkeypatch.setenv("CORTEX_STORE_PASSWORD", "pw")
    e = Endpoint.parse("sparql+http://127.0.0.1:8890/sparql-auth?auth=digest")
    assert (e.username, e.password, e.auth) == ("cortex", "pw", "digest")
    assert Endpoint.parse("sparql+http://u:x@h:1/q").password == "x"  # the location wins
    monkeypatch.delenv("CORTEX_STORE_USER")
    assert Endpoint.parse("sparql+http://h:1/q").auth is None


@pytest.mark.parametrize("location, field_text", [
    ("sparql+ftp://h/q", "starts with sparql+http"),
    ("sparql+http://h:1/q?auth=kerberos", "auth must be basic or digest"),
    ("sparql+http://h:1/q?colour=red", "unknown parameter 'colour'"),
    ("sparql+http://h:1/q?timeout=soon", "timeout must be a number"),
    ("sparql+http://h:1/q?timeout=0", "between 0 and 3600"),
    ("sparql+http://:pw@/q", "names no host"),
    ("sparql+http://h:99999/q", "not a valid URL"),
])
def test_a_bad_location_is_refused_by_name(location, field_text):
    with pytest.raises(InvalidInputError) as info:
        Endpoint.parse(location)
    assert info.value.field == "store" and field_text in str(info.value)
    assert "pw" not in str(info.value)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_server_is_one_clear_error_without_credentials(caplog):
    port = _free_port()
    caplog.set_level(logging.DEBUG)
    with pytest.raises(StoreError) as info:
        Cortex.open(f"sparql+http://cortex:topsecret@127.0.0.1:{port}/sparql", embeddings=None)
    message = str(info.value)
    assert f"cannot reach the SPARQL server at sparql+http://127.0.0.1:{port}/sparql" in message
    assert "topsecret" not in message and "topsecret" not in caplog.text


class _Flaky(http.server.BaseHTTPRequestHandler):
    """A SPARQL endpoint that answers 503 to every other query, and 401 to the wrong password."""

    calls: list[str] = []
    deadlocks = 0

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        length = int(self.headers.get("Content-Length", 0))
        self.rfile.read(length)
        self.calls.append(self.path)
        if self.path.startswith("/locked"):
            self.send_response(401)
            self.end_headers()
            self.wfile.write(b"Unauthorized")
            return
        if self.path.startswith("/busy") and len(self.calls) <= _Flaky.deadlocks:
            self.send_response(500)  # what Virtuoso answers when it rolled a transaction back
            self.end_headers()
            self.wfile.write(b"Virtuoso 40001 Error SR172: Transaction deadlocked")
            return
        if self.path.startswith("/busy"):
            self.send_response(204)
            self.end_headers()
            return
        if len(self.calls) % 2 == 1:
            self.send_response(503)
            self.end_headers()
            return
        body = json.dumps({"head": {}, "boolean": True}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/sparql-results+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def flaky() -> Iterator[str]:
    _Flaky.calls = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_an_idempotent_query_is_retried_after_a_503(flaky):
    store = RemoteStore(f"sparql+http://{flaky}/sparql", Vocabulary())  # ASK on open: 503, then 200
    assert _Flaky.calls[:2] == ["/sparql", "/sparql"]  # then its look for unfinished writes (503, then 200)
    store.close()


def test_refused_credentials_are_named(flaky):
    with pytest.raises(StoreError) as info:
        open_store(f"sparql+http://me:wrong@{flaky}/locked", Vocabulary())
    assert "refused the credentials" in str(info.value) and "HTTP 401" in str(info.value)
    assert "wrong" not in str(info.value)


@pytest.mark.parametrize("deadlocks, applied", [(6, True), (10, False)])
def test_a_write_the_server_rolled_back_on_a_deadlock_is_sent_again(flaky, deadlocks, applied):
    """Writers of one scope all move its log head, so a busy server breaks deadlocks by rolling one back: that
    write is sent again (nothing of it was applied), a bounded number of times, then one clear error."""
    store = RemoteStore(f"sparql+http://{flaky}/sparql?update=/busy", Vocabulary())
    _Flaky.calls, _Flaky.deadlocks = [], deadlocks
    try:
        if applied:
            store._update(["INSERT DATA { <urn:a> <urn:b> <urn:c> }"], "a write")
            assert _Flaky.calls == ["/busy"] * (deadlocks + 1)
        else:
            with pytest.raises(StoreError, match="deadlocked"):
                store._update(["INSERT DATA { <urn:a> <urn:b> <urn:c> }"], "a write")
            assert len(_Flaky.calls) == 10
    finally:
        _Flaky.deadlocks = 0
        store.close()
