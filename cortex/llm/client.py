"""A client for an OpenAI-compatible chat-completions server (OpenAI, Ollama, vLLM, llama.cpp, LM Studio...),
asked for JSON that matches a pydantic model (:meth:`LLMClient.complete_json`).

Errors: :class:`~cortex.errors.LLMUnavailableError` when the server cannot be used for now (the caller retries
later), :class:`~cortex.errors.LLMOutputError` when it answered, twice, with something other than the JSON asked
for, :class:`~cortex.errors.LLMError` when it refused the request. httpx (~90 ms) is imported by the first
request, pydantic by the first answer parsed.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from cortex import jsonsafe
from cortex.config import LLM_DEADLINE_ENV as DEADLINE_SETTING
from cortex.errors import LLMError, LLMOutputError, LLMUnavailableError
from cortex.llm.settings import LLMSettings

if TYPE_CHECKING:
    import httpx
    from pydantic import BaseModel, ValidationError

_M = TypeVar("_M", bound="BaseModel")

#: The most bytes of an HTTP answer read (a chat completion is far smaller; more is a broken or hostile server).
MAX_ANSWER_BYTES = 8 * 1024 * 1024


# -- the client -----------------------------------------------------------------------------------------------

def estimate_tokens(text: str) -> int:
    """A rough count of the tokens ``text`` costs: its length in characters / 4, rounded up (the usual ratio of
    GPT-style tokenizers on English prose and code; text in other scripts costs more tokens per character).
    For budgets, not billing."""
    return -(-len(text) // 4)


class LLMClient:
    """Asks an OpenAI-compatible ``/chat/completions`` endpoint for JSON matching a pydantic model.

    ``calls`` counts the requests sent (a retry is a call of its own, a failed one too), ``prompt_tokens`` and
    ``completion_tokens`` add up the ``usage`` the server reports (nothing when it reports none). One client
    keeps its connection open: :meth:`close` it, or use it as a context manager."""

    def __init__(self, settings: LLMSettings, *, redact: Callable[[str], str] | None = None) -> None:
        self.settings = settings
        #: What every text passes before it leaves the machine (the capture's redaction, given by the engine
        #: that makes the client: this layer does not know what a secret is). None: sent as it is.
        self.redact = redact
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self._http: httpx.Client | None = None

    def __repr__(self) -> str:
        return f"LLMClient({self.settings.url!r}, model={self.settings.model!r}, calls={self.calls})"

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (the next request opens another)."""
        if self._http is not None:
            self._http.close()
            self._http = None

    def complete_json(self, system: str, user: str, schema: type[_M], name: str) -> _M:
        """Ask the model, at temperature 0, for a JSON object matching ``schema`` (sent as a strict
        ``json_schema`` response format called ``name``) and return it validated. A ```json block or prose
        around the one object is tolerated. An answer that is not such JSON is sent back once with what is
        wrong; a second bad answer raises :class:`LLMOutputError`. :class:`LLMUnavailableError` when the server
        cannot be reached, times out or answers 5xx or 429; :class:`LLMError` for another refusal (4xx)."""
        if self.redact is not None:  # nothing leaves the machine unredacted: transcripts, memories, notes...
            user = self.redact(user)
        messages: list[dict[str, str]] = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        body: dict[str, Any] = {
            "model": self.settings.model,
            "messages": messages,
            "temperature": 0,
            "response_format": {"type": "json_schema",
                                "json_schema": {"name": name, "schema": strict_schema(schema), "strict": True}},
        }
        deadline = time.monotonic() + self.settings.deadline  # both attempts share it
        answer, finished = self._post(body, deadline)
        try:
            return _parse(answer, finished, schema)
        except _BadAnswer as problem:
            messages.append({"role": "assistant", "content": answer or ""})
            messages.append({"role": "user", "content": f"That answer is not valid: {problem}. Answer again with "
                                                        f"only the JSON object matching the {name!r} schema."})
        answer, finished = self._post(body, deadline)
        try:
            return _parse(answer, finished, schema)
        except _BadAnswer as problem:
            head = (answer or "")[:200]
            raise LLMOutputError(f"the model {self.settings.model!r} did not answer with the JSON asked for "
                                 f"({name}), twice: {problem}; its answer began: {head!r}") from None

    def _post(self, body: dict[str, Any], deadline: float) -> tuple[str | None, str | None]:
        """Send one request, answered by ``deadline`` (a :func:`time.monotonic` instant) or abandoned; the
        answer's text (None when it has none: a refusal) and why it finished."""
        import httpx

        url = f"{self.settings.url}/chat/completions"
        headers = {"Authorization": f"Bearer {self.settings.api_key}"} if self.settings.api_key else {}
        left = deadline - time.monotonic()
        if left <= 0:
            raise LLMUnavailableError(self._late(url))
        if self._http is None:
            # no single wait may outlast the deadline: an abandoned exchange ends by then too
            self._http = httpx.Client(timeout=min(self.settings.timeout, self.settings.deadline))
        client = self._http
        self.calls += 1
        box: dict[str, Any] = {}
        done = threading.Event()

        def exchange() -> None:
            try:
                with client.stream("POST", url, json=body, headers=headers) as streamed:
                    data = bytearray()
                    for chunk in streamed.iter_bytes():
                        data += chunk
                        if len(data) > MAX_ANSWER_BYTES:
                            raise LLMError(f"{url} answered more than {MAX_ANSWER_BYTES} bytes: not read")
                    box["answer"] = (streamed.status_code, data.decode("utf-8", errors="replace"))
            except BaseException as exc:  # handed to the waiting thread
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=exchange, name="cortex-llm", daemon=True).start()
        if not done.wait(left):
            self._http = None  # the next request gets a connection of its own
            try:
                client.close()  # closes the socket; the exchange ends at its next read at the latest
            except Exception:  # noqa: BLE001 - closing a connection in use may complain; it is dropped anyway
                pass
            raise LLMUnavailableError(self._late(url))
        error = box.get("error")
        if isinstance(error, httpx.TimeoutException):
            raise LLMUnavailableError(f"{url} did not answer within {self.settings.timeout:g} s") from None
        if isinstance(error, httpx.TransportError):
            raise LLMUnavailableError(f"{url} cannot be reached: {error or type(error).__name__}") from None
        if error is not None:
            raise error
        status, text = box["answer"]
        response = httpx.Response(status, text=text)
        status = response.status_code
        if status == 429 or status >= 500:
            raise LLMUnavailableError(f"{url} answered HTTP {status}: {_head(response.text)}")
        if status >= 300:
            raise LLMError(f"{url} refused the request: HTTP {status}: {_head(response.text)}")
        try:
            reply = jsonsafe.loads(response.text)  # bounded: a deep reply is not a completion
            choice = reply["choices"][0]
            message = choice["message"]
            content = message.get("content")
            if content is not None and not isinstance(content, str):
                raise TypeError(f"the content is a {type(content).__name__}")
        except (ValueError, LookupError, TypeError, AttributeError) as exc:
            raise LLMError(f"{url} did not answer with a chat completion ({type(exc).__name__}: {exc}): "
                           f"{_head(response.text)}") from None
        usage = reply.get("usage")
        if isinstance(usage, dict):
            self.prompt_tokens += _count(usage.get("prompt_tokens"))
            self.completion_tokens += _count(usage.get("completion_tokens"))
        refusal = message.get("refusal")
        if content is None and isinstance(refusal, str) and refusal:
            return None, f"the model refused: {refusal}"
        finished = choice.get("finish_reason")
        return content, finished if isinstance(finished, str) else None

    def _late(self, url: str) -> str:
        return (f"{url} did not finish answering within the deadline of {self.settings.deadline:g} s "
                f"({DEADLINE_SETTING}): the call was cut off")


class _BadAnswer(Exception):
    """The answer is not the JSON asked for; the message says why, for the model to correct."""


def _head(text: str, size: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= size else flat[:size] + "..."


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)
#: How many opening braces of an answer are tried as the start of its JSON object.
_MAX_STARTS = 20


def _parse(answer: str | None, finished: str | None, schema: type[_M]) -> _M:
    from pydantic import ValidationError

    if answer is None or not answer.strip():
        raise _BadAnswer("the answer is empty" + (f" ({finished})" if finished and finished != "stop" else ""))
    value = _json_value(answer)
    if value is _NOT_JSON:
        cut = " (it was cut off: the answer reached the token limit)" if finished == "length" else ""
        raise _BadAnswer(f"it is not a JSON object{cut}")
    try:
        return schema.model_validate(value)
    except ValidationError as exc:
        raise _BadAnswer(f"it does not match the schema: {_describe(exc)}") from None


_NOT_JSON = object()


def _json_value(answer: str) -> object:
    """The JSON in ``answer``: all of it, else a fenced block, else the first object prose surrounds. JSON nested
    deeper than :data:`cortex.jsonsafe.MAX_DEPTH` is refused (:class:`_BadAnswer`), never parsed."""
    if jsonsafe.depth_exceeds(answer):
        raise _BadAnswer(f"it nests deeper than {jsonsafe.MAX_DEPTH} levels")
    for candidate in (answer, *(m.group(1) for m in _FENCE.finditer(answer))):
        try:
            return jsonsafe.loads(candidate)
        except ValueError:
            pass
    decoder = json.JSONDecoder()
    start = answer.find("{")
    for _ in range(_MAX_STARTS):
        if start < 0:
            break
        try:
            value, _end = decoder.raw_decode(answer, start)
        except ValueError:
            start = answer.find("{", start + 1)
            continue
        return value
    return _NOT_JSON


def _describe(error: ValidationError, most: int = 5) -> str:
    problems = [f"{'.'.join(str(p) for p in e['loc']) or 'the object'}: {e['msg']}" for e in error.errors()]
    more = f" (and {len(problems) - most} more)" if len(problems) > most else ""
    return "; ".join(problems[:most]) + more


def strict_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """``schema``'s JSON schema as a strict ``json_schema`` response format wants it: every object closed
    (``additionalProperties: false``) and every property required."""
    document = schema.model_json_schema()

    def close(node: object) -> None:
        if isinstance(node, dict):
            if node.get("type") == "object" and isinstance(node.get("properties"), dict):
                node["additionalProperties"] = False
                node["required"] = list(node["properties"])
            for child in node.values():
                close(child)
        elif isinstance(node, list):
            for child in node:
                close(child)

    close(document)
    return document
