"""A local stand-in for an OpenAI-compatible chat-completions server, for tests and manual runs.

    with StandIn() as llm:
        llm.script({"memories": []}, Status(503), Garbage)   # the next three answers, in order
        settings = LLMSettings(url=llm.url, model="standin")  # llm.url is http://127.0.0.1:PORT/v1
        ...
        llm.requests[0]["response_format"]                    # every request body, as sent

A scripted answer is a ``str`` (the message's content), a ``dict`` (its JSON as the content), ``Status(code,
body)`` (an HTTP error), ``Delay(seconds, answer)`` (that answer after a pause: for time-outs) or ``Garbage``
(text that is not JSON). With nothing scripted it answers by the request's ``json_schema`` name: ``summary``
gives ``{"summary": "<the first 100 characters of the user message>..."}``, ``extraction`` one insight per line
of the user message that starts with ``LESSON:`` (at most 5; ``distillation`` too), ``contradictions`` the pairs
whose words differ only by a negation (the newer kept), ``team_memory`` an entry per line holding ``DECISION:``,
``LESSON:``, ``MEMBER:`` or ``CONTEXT:``. Every answer reports a ``usage``.

``python tests/llm_standin.py --port 8089`` serves it until interrupted.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from collections.abc import Callable
from types import TracebackType
from typing import Any, Union


@dataclass(frozen=True)
class Status:
    """Answer with this HTTP status; ``body`` (text, or a dict sent as JSON) defaults to an OpenAI-style error."""

    code: int
    body: str | dict[str, Any] | None = None


@dataclass(frozen=True)
class Garbage:
    """Answer with text that holds no JSON (``Garbage`` itself, the class, stands for ``Garbage()``)."""

    text: str = "Sure! I looked at the transcript and there are some things worth remembering, probably."


@dataclass(frozen=True)
class Delay:
    """Wait ``seconds``, then give ``answer`` (None: the default answer)."""

    seconds: float
    answer: Answer | None = None


@dataclass(frozen=True)
class Trickle:
    """Send the headers at once, then ``answer``'s body (None: the default answer) one byte every ``seconds``: a
    server that is alive but too slow, which only a total deadline cuts off."""

    seconds: float
    answer: Answer | None = None


Answer = Union[str, dict[str, Any], Status, Garbage, Delay, Trickle, type[Garbage]]

#: How many memories the default extraction answer holds at most.
MAX_DEFAULT_LESSONS = 5


class StandIn:
    """The server, on 127.0.0.1 and a free port (or ``port``), answering from a thread while open."""

    def __init__(self, port: int = 0, host: str = "127.0.0.1",
                 answer: Callable[[dict[str, Any]], str] | None = None) -> None:
        #: What it answers when nothing is scripted (``default_answer``, or another model's behaviour)
        self.answer = answer or default_answer
        self.requests: list[dict[str, Any]] = []
        #: The headers of each request, in the order of ``requests`` (names in lower case).
        self.headers: list[dict[str, str]] = []
        self._answers: deque[Answer] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server = ThreadingHTTPServer((host, port), _handler(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL of the API, ``http://127.0.0.1:PORT/v1``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def script(self, *answers: Answer) -> None:
        """Queue ``answers``: the next requests get them, in order, before any default answer."""
        with self._lock:
            self._answers.extend(answers)

    @property
    def pending(self) -> int:
        """How many scripted answers are still queued."""
        with self._lock:
            return len(self._answers)

    def start(self) -> StandIn:
        """Serve from a thread (what ``with`` does)."""
        # A short poll: shutdown() waits for it, in every test.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="llm-standin",
                                        daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving; a delayed answer still waiting gives up."""
        self._closing.set()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> StandIn:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    # -- answering (called from the server's threads) --

    def _record(self, body: dict[str, Any], headers: dict[str, str]) -> Answer | None:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            return self._answers.popleft() if self._answers else None

    def _wait(self, seconds: float) -> bool:
        """Sleep ``seconds``; False when the server closed meanwhile."""
        return not self._closing.wait(seconds)


def _words(text: str) -> set[str]:
    return {w.removesuffix("s") for w in re.findall(r"[a-z]+", text.lower())}


def _contradictions(user: str) -> list[dict[str, str]]:
    """A pair contradicts when the two differ only in numbers or in a negation (``not``, ``never``, ``no``): the
    newer (``b``) is kept. Pairs come one JSON object per line (``cortex.consolidation``)."""
    found = []
    for line in user.splitlines():
        try:
            pair = json.loads(line)
        except ValueError:
            continue
        if not isinstance(pair, dict) or "a" not in pair:
            continue
        a, b = pair["a"], pair["b"]
        if _words(a["content"]) ^ _words(b["content"]) <= {"not", "never", "no", "do", "doe", "don"}:
            found.append({"keep": b["id"], "supersede": a["id"],
                          "reason": "they cannot both hold; the newer one wins"})
    return found


def quoted_lines(user: str) -> list[str]:
    """The lines of a user message, a line that is a JSON object read as its quoted text (``text``, else
    ``content``): what a model reading the quoted data sees."""
    lines = []
    for line in user.splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            data = None
        text = (data.get("text") or data.get("content")) if isinstance(data, dict) else None
        lines.extend(str(text).splitlines() if text is not None else [line])
    return lines


def default_answer(body: dict[str, Any]) -> str:
    """What the stand-in answers when nothing is scripted, by the request's ``json_schema`` name."""
    name = (((body.get("response_format") or {}).get("json_schema")) or {}).get("name")
    user = next((m.get("content") or "" for m in body.get("messages", []) if m.get("role") == "user"), "")
    if name == "summary":
        return json.dumps({"summary": f"{user[:100]}..."})
    if name in ("extraction", "distillation"):
        lessons = [line[len("LESSON:"):].strip() for line in user.splitlines() if line.startswith("LESSON:")]
        return json.dumps({"memories": [{"content": lesson, "type": "insight", "confidence": 0.8, "tags": []}
                                        for lesson in lessons[:MAX_DEFAULT_LESSONS]]})
    if name == "contradictions":
        return json.dumps({"contradictions": _contradictions(user)})
    if name == "team_memory":
        entries = []
        for line in quoted_lines(user):
            found = re.search(r"\b(DECISION|LESSON|MEMBER|CONTEXT): (.+)$", line)
            if found:
                entries.append({"category": found.group(1).lower(), "content": found.group(2).strip(),
                                "replaces": None})
        return json.dumps({"entries": entries})
    if name is None:
        return "The stand-in has nothing scripted to say."
    return "{}"


def completion(content: str, body: dict[str, Any]) -> dict[str, Any]:
    """A chat-completion object answering ``body`` with ``content``, with a ``usage`` (about 4 characters a
    token)."""
    prompt = sum(len(str(m.get("content") or "")) for m in body.get("messages", []))
    usage = {"prompt_tokens": -(-prompt // 4), "completion_tokens": -(-len(content) // 4)}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return {"id": f"chatcmpl-standin-{time.monotonic_ns()}", "object": "chat.completion",
            "created": int(time.time()), "model": body.get("model", "standin"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": usage}


def _handler(standin: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": "standin", "object": "model"}]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            try:
                body = json.loads(raw)
            except ValueError:
                self._send(400, {"error": {"message": "the body is not JSON"}})
                return
            answer = standin._record(body, {k.lower(): v for k, v in self.headers.items()})
            self._answer(answer, body)

        def _answer(self, answer: Answer | None, body: dict[str, Any]) -> None:
            if isinstance(answer, Trickle):
                self._trickle(answer, body)
                return
            if isinstance(answer, Delay):
                if not standin._wait(answer.seconds):
                    return
                answer = answer.answer
            if answer is None:
                self._send(200, completion(standin.answer(body), body))
            elif isinstance(answer, Status):
                error = answer.body if answer.body is not None else {
                    "error": {"message": f"stand-in status {answer.code}", "type": "standin"}}
                self._send(answer.code, error)
            elif answer is Garbage or isinstance(answer, Garbage):
                text = answer.text if isinstance(answer, Garbage) else Garbage().text
                self._send(200, completion(text, body))
            elif isinstance(answer, dict):
                self._send(200, completion(json.dumps(answer), body))
            elif isinstance(answer, str):
                self._send(200, completion(answer, body))
            else:
                raise TypeError(f"the stand-in cannot answer {answer!r}")

        def _trickle(self, trickle: Trickle, body: dict[str, Any]) -> None:
            inner = trickle.answer
            content = json.dumps(inner) if isinstance(inner, dict) else inner if isinstance(inner, str) \
                else default_answer(body)
            data = json.dumps(completion(content, body)).encode()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.flush()
                for byte in data:
                    if not standin._wait(trickle.seconds):
                        return
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (the deadline test)

        def _send(self, status: int, payload: str | dict[str, Any]) -> None:
            data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "text/plain" if isinstance(payload, str) else "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a time-out test)

    return Handler


def main() -> None:
    """Serve the stand-in until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8089)
    arguments = parser.parse_args()
    standin = StandIn(arguments.port, arguments.host).start()
    print(f"LLM stand-in at {standin.url} (CORTEX_LLM_URL={standin.url} CORTEX_LLM_MODEL=standin); Ctrl-C stops it",
          flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        standin.close()


if __name__ == "__main__":
    main()
