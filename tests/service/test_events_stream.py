"""``GET /v1/events`` over real HTTP (a ``cortex serve`` subprocess, httpx streaming): server-sent events of what
the facade committed, filtered by the caller's token, with the browser's session cookie too; a stream never holds
the server's shutdown, and the consolidation sweep does not take it for work in flight."""

from __future__ import annotations

import json
import queue
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.service_helpers import Server, start_server

AGENTS = {"alice": "cortex:\n  teams: [backend]\n", "bob": "cortex:\n  teams: [backend]\n", "carol": ""}


def project(root: Path) -> Path:
    (root / ".git").mkdir(parents=True)
    defs = root / "agent_defs"
    defs.mkdir()
    for name, extra in AGENTS.items():
        (defs / f"{name}.md").write_text(f"---\nname: {name}\ndescription: {name}\nmemory: true\n{extra}---\n")
    return root


class Stream:
    """An open event stream read in a thread: its events (the JSON of each ``data:``), ids and comments."""

    def __init__(self, url: str, **request: object) -> None:
        self.events: queue.Queue[dict] = queue.Queue()
        self.lines: list[str] = []
        self.status: int | None = None
        self.headers: httpx.Headers | None = None
        self.ended = threading.Event()
        self.opened = threading.Event()
        self._client = httpx.Client(timeout=httpx.Timeout(60, read=60))
        self._thread = threading.Thread(target=self._read, args=(url, request), daemon=True)
        self._thread.start()
        assert self.opened.wait(15), "the stream did not open"

    def _read(self, url: str, request: dict) -> None:
        try:
            with self._client.stream("GET", url, **request) as answer:
                self.status, self.headers = answer.status_code, answer.headers
                self.opened.set()
                for line in answer.iter_lines():
                    self.lines.append(line)
                    if line.startswith("data: "):
                        self.events.put(json.loads(line[len("data: "):]))
        except httpx.HTTPError:
            pass
        finally:
            self.opened.set()
            self.ended.set()

    def next(self, timeout: float = 10) -> dict:
        return self.events.get(timeout=timeout)

    def until(self, wanted, timeout: float = 15) -> list[dict]:
        """The events up to the first one ``wanted`` accepts (failing after ``timeout`` seconds)."""
        seen, deadline = [], time.monotonic() + timeout
        while True:
            event = self.events.get(timeout=max(0.01, deadline - time.monotonic()))
            seen.append(event)
            if wanted(event):
                return seen

    def close(self) -> None:
        self._client.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str]]]:
    server = start_server(project(tmp_path_factory.mktemp("events")), CORTEX_EMBEDDINGS="none")
    tokens = {name: server.call("POST", "/v1/tokens", json={"agent": name}).json()["token"] for name in AGENTS}
    try:
        yield server, tokens
    finally:
        server.stop()


def bearer(token: str) -> dict[str, dict[str, str]]:
    return {"headers": {"Authorization": f"Bearer {token}"}}


def test_an_admin_hears_every_write_start_and_capture_as_it_is_committed(served) -> None:
    server, _ = served
    stream = Stream(f"{server.url}/v1/events", **bearer(server.token))
    try:
        assert stream.status == 200 and stream.headers["content-type"].startswith("text/event-stream")
        assert stream.headers["cache-control"] == "no-store"
        made = server.call("POST", "/v1/agents/alice/memories", json={"content": "the CI cache is on S3"}).json()
        event = stream.next()
        assert {k: event[k] for k in ("kind", "action", "agent", "scope", "ids")} == {
            "kind": "write", "action": "store", "agent": "alice", "scope": "agent:alice", "ids": [made["id"]]}
        assert server.call("GET", f"/v1/agents/alice/memories/{made['id']}").status_code == 200
        start = httpx.post(f"{server.url}/v1/agents/alice/start", json={"task": "CI cache"},
                           headers={"Authorization": f"Bearer {server.token}", "Cortex-Session": "sess-42"})
        assert start.status_code == 200
        event = stream.next()
        assert event["kind"] == "injection" and event["agent"] == "alice" and made["id"] in event["ids"]
        assert event["session"] == "sess-42"
        assert server.call("POST", "/v1/agents/alice/tasks", json={"task": "warm the cache"}).status_code == 201
        assert stream.next()["kind"] == "capture"
        ids = [line for line in stream.lines if line.startswith("id: ")]
        numbers = [int(line.rsplit("-", 1)[1]) for line in ids]
        assert len(ids) == 3 and numbers == sorted(numbers) and len({line.split("-")[0] for line in ids}) == 1
        assert "retry: 3000" in stream.lines
    finally:
        stream.close()


def test_an_agent_token_hears_only_what_it_may_read(served) -> None:
    server, tokens = served
    bob = Stream(f"{server.url}/v1/events", **bearer(tokens["bob"]))
    carol = Stream(f"{server.url}/v1/events", **bearer(tokens["carol"]))
    try:
        server.call("POST", "/v1/agents/alice/memories", json={"content": "alice's private note"})
        shared = server.call("POST", "/v1/agents/alice/memories",
                             json={"content": "backend: deploys on Tuesdays", "scope": "team:backend"}).json()
        server.call("POST", "/v1/agents/alice/start", json={"task": "deploys"})
        server.call("POST", "/v1/agents/carol/memories", json={"content": "carol's own note"})
        server.call("POST", "/v1/agents/bob/memories", json={"content": "bob's own note"})
        heard = bob.until(lambda e: e["scope"] == "agent:bob")
        assert [(e["kind"], e["agent"], e["scope"]) for e in heard] == [
            ("write", "alice", "team:backend"), ("write", "bob", "agent:bob")]
        assert heard[0]["ids"] == [shared["id"]]
        assert [e["scope"] for e in carol.until(lambda e: e["agent"] == "carol")] == ["agent:carol"]
    finally:
        bob.close()
        carol.close()
    # another agent's stream is not a way in: a token for an agent it is not, or none, is refused
    assert httpx.get(f"{server.url}/v1/events").status_code == 401
    assert httpx.get(f"{server.url}/v1/events", headers={"Authorization": "Bearer nope"}).status_code == 401


def test_the_browsers_session_cookie_opens_the_stream(served) -> None:
    server, tokens = served
    signed = httpx.post(f"{server.url}/v1/session", json={"token": tokens["carol"]})
    assert signed.status_code == 200
    key = {"X-CSRF-Token": signed.json()["csrf"]}
    stream = Stream(f"{server.url}/v1/events", cookies={"cortex_session": signed.cookies["cortex_session"]},
                    headers=key)
    try:
        assert stream.status == 200
        server.call("POST", "/v1/agents/alice/memories", json={"content": "not carol's business"})
        made = server.call("POST", "/v1/agents/carol/memories", json={"content": "carol's second note"}).json()
        assert [e["ids"] for e in stream.until(lambda e: e["agent"] == "carol")] == [[made["id"]]]
    finally:
        stream.close()
    cookie = {"cortex_session": signed.cookies["cortex_session"]}
    assert httpx.get(f"{server.url}/v1/events", cookies=cookie).status_code == 401  # the cookie alone opens nothing
    assert httpx.delete(f"{server.url}/v1/session", cookies=cookie, headers=key).status_code == 200
    assert httpx.get(f"{server.url}/v1/events", cookies=cookie, headers=key).status_code == 401  # signed out


def test_a_stream_that_comes_back_gets_what_it_missed(served) -> None:
    server, _ = served
    first = Stream(f"{server.url}/v1/events", **bearer(server.token))
    try:
        server.call("POST", "/v1/agents/carol/memories", json={"content": "seen live"})
        first.next()
        last = [line for line in first.lines if line.startswith("id: ")][-1][len("id: "):]
    finally:
        first.close()
    missed = server.call("POST", "/v1/agents/carol/memories", json={"content": "written while away"}).json()
    again = Stream(f"{server.url}/v1/events", headers={"Authorization": f"Bearer {server.token}",
                                                         "Last-Event-ID": last})
    try:
        assert again.next()["ids"] == [missed["id"]]
    finally:
        again.close()
    # back from another server's life (the server restarted): told that it missed what it cannot be given
    restarted = Stream(f"{server.url}/v1/events", headers={"Authorization": f"Bearer {server.token}",
                                                             "Last-Event-ID": "0badcafe-12"})
    try:
        assert restarted.next() == {"kind": "gap", "dropped": -1}
    finally:
        restarted.close()


def test_sigterm_stops_the_server_at_once_with_a_stream_open(tmp_path: Path) -> None:
    server = start_server(project(tmp_path), CORTEX_EMBEDDINGS="none")
    stream = Stream(f"{server.url}/v1/events", **bearer(server.token))
    try:
        assert stream.status == 200
        started = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(timeout=8) == 0
        assert time.monotonic() - started < 4  # uvicorn would otherwise wait 10 s for the stream, then cut it
        assert stream.ended.wait(5)
    finally:
        stream.close()
        if server.process.poll() is None:
            server.process.kill()


def test_the_sweep_does_not_wait_for_an_open_stream(tmp_path: Path) -> None:
    """A browser left open on the page must not put the consolidation sweep off forever: the sweep runs (and its
    run is an event on the very stream) while the stream is open."""
    server = start_server(project(tmp_path), CORTEX_EMBEDDINGS="none", CORTEX_CONSOLIDATE_EVERY="1s")
    stream = Stream(f"{server.url}/v1/events", **bearer(server.token))
    try:
        for content in ("The deploy script needs the VPN up first", "the deploy script needs the VPN up first."):
            server.call("POST", "/v1/agents/alice/memories", json={"content": content})
        run = stream.until(lambda e: e["kind"] == "consolidation", timeout=20)[-1]
        assert run["scope"] == "agent:alice" and run["action"] == "consolidate" and run["run"]
        assert server.call("GET", "/v1/consolidate/sweep").json()["runs"] >= 1
    finally:
        stream.close()
        assert server.stop() == 0


def test_one_token_cannot_take_every_connection_with_streams(tmp_path: Path) -> None:
    """Streams hold their connection: one token holds at most 8, every caller together a quarter of the server's
    connections (here 48 // 4 = 12); beyond, a clear 429, and every other route still answers meanwhile. Real
    connections over loopback (raw sockets: closing one is the client going, at once)."""
    server = start_server(project(tmp_path), "--max-concurrency", "48", CORTEX_EMBEDDINGS="none")
    tokens = {name: server.call("POST", "/v1/tokens", json={"agent": name}).json()["token"] for name in AGENTS}
    held: list[socket.socket] = []

    def open_stream(token: str | None = None, **headers: str) -> tuple[int, bytes, socket.socket]:
        sock = _raw(server.url)
        held.append(sock)
        lines = ["GET /v1/events HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in headers.items())]
        if token:
            lines.append(f"Authorization: Bearer {token}")
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        data = b""
        while b"\r\n\r\n" not in data:
            data += sock.recv(4096)
        status = int(data.split(b" ", 2)[1])
        if status != 200:
            data += _body(sock, data)
        return status, data, sock

    try:
        assert [open_stream(tokens["alice"])[0] for _ in range(8)] == [200] * 8
        status, answer, _ = open_stream(tokens["alice"])
        assert status == 429 and b"TooBusyError" in answer and b"already holds 8 open event streams" in answer
        assert server.call("GET", "/v1/agents/alice/memories", token=tokens["alice"]).status_code == 200
        # a browser session counts towards its token
        signed = httpx.post(f"{server.url}/v1/session", json={"token": tokens["alice"]})
        cookie = {"Cookie": f"cortex_session={signed.cookies['cortex_session']}", "X-CSRF-Token": signed.json()["csrf"]}
        assert open_stream(**cookie)[0] == 429
        # other tokens open theirs up to the server's bound
        bobs = [open_stream(tokens["bob"]) for _ in range(4)]
        assert [status for status, _, _ in bobs] == [200] * 4
        status, answer, _ = open_stream(tokens["carol"])
        assert status == 429 and b"the server already holds 12 open event streams" in answer
        assert server.call("GET", "/v1/agents/carol/memories", token=tokens["carol"]).status_code == 200
        # a stream that ends gives its place back
        bobs[0][2].close()
        deadline = time.monotonic() + 10
        while (opened := open_stream(tokens["carol"]))[0] != 200 and time.monotonic() < deadline:
            time.sleep(0.1)
        status, _, carols = opened
        assert status == 200
        made = server.call("POST", "/v1/agents/carol/memories", json={"content": "heard on the freed slot"}).json()
        carols.settimeout(10)
        heard = b""
        while made["id"].encode() not in heard:
            heard += carols.recv(4096)
    finally:
        for sock in held:
            sock.close()
        server.stop()


def _body(sock: socket.socket, data: bytes) -> bytes:
    """The rest of the body of an answer whose headers (and maybe some of the body) are ``data``."""
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length")))
    rest = b""
    while len(body) + len(rest) < length:
        rest += sock.recv(4096)
    return rest


def _raw(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=10)


def _response(sock: socket.socket) -> bytes:
    """One whole response read from ``sock`` (its headers and its Content-Length of body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(4096)
    return data + _body(sock, data)


def _closed_by_server(sock: socket.socket, within: float) -> bool:
    """Whether the server closes ``sock`` within ``within`` seconds (reading what it may send first)."""
    sock.settimeout(within)
    try:
        while sock.recv(4096):
            pass
        return True
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def test_connections_that_send_no_request_are_closed(tmp_path: Path) -> None:
    """uvicorn has no time-out for a request's headers: connections that send nothing, or a header a byte at a
    time, held the server's connections for ever (every route answered 503). Now they are closed after
    $CORTEX_HEADER_TIMEOUT seconds, while a kept-alive connection between two requests still lasts."""
    server = start_server(project(tmp_path), "--max-concurrency", "8", CORTEX_EMBEDDINGS="none",
                          CORTEX_HEADER_TIMEOUT="1")
    idle = [_raw(server.url) for _ in range(7)]
    slow = _raw(server.url)
    try:
        slow.sendall(b"GET /healthz HTTP/1.1\r\n")
        time.sleep(0.2)
        assert httpx.get(f"{server.url}/healthz").status_code == 503  # held: the server's connections are taken
        started = time.monotonic()
        for _ in range(8):  # a byte every 0.3 s never completes the headers in time
            try:
                slow.sendall(b"X")
            except OSError:
                break
            time.sleep(0.3)
        assert _closed_by_server(slow, 3) and time.monotonic() - started < 4
        assert all(_closed_by_server(sock, 3) for sock in idle)
        assert httpx.get(f"{server.url}/healthz").status_code == 200
        # a connection kept alive between two requests is not cut by the headers' time-out
        kept = _raw(server.url)
        request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        for _ in range(2):
            kept.sendall(request)
            assert _response(kept).startswith(b"HTTP/1.1 200")
            time.sleep(1.5)
        kept.close()
    finally:
        for sock in [*idle, slow]:
            sock.close()
        server.stop()
