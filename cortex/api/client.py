""":class:`RemoteCortex`: the :class:`cortex.Cortex` methods, sent to a running ``cortex serve``.

Each operation of the table (:data:`cortex.api.operations.OPERATIONS`) whose row says ``client="table"`` is one line
here, ``name = remote(MemoryAPI.name)``: its signature and docstring are the protocol's, and :meth:`RemoteCortex._op`
sends it to the row's route (path parameters in the path, the other arguments as query parameters of a GET, else as
the JSON body) and reads the answer the row names; a table operation without its line here gets it when this
module is imported (:func:`table_operations`). The rest are written out (files, streams, answers derived from
another route).

The CLI, the hooks and ``cortex mcp`` use it while a server owns the store (one writer, many clients).
Errors come back as the same :class:`~cortex.errors.CortexError` subclasses, with the server's message.
Imports only the standard library's HTTP client; the models (pydantic) when an answer is decoded into one, and
not at all inside :meth:`RemoteCortex.as_json` (how the CLI passes answers on).
"""

from __future__ import annotations

import dataclasses
import functools
import json as _json
import os
import re
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from enum import Enum
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar
from urllib.parse import quote, urlencode, urlsplit

from cortex import config, errors, jsonsafe, notices, provenance
from cortex.api import operations
from cortex.api.operations import Operation
from cortex.api.protocol import MemoryAPI
from cortex.names import check_agent_name, is_memory_id

if TYPE_CHECKING:
    import http.client

    from cortex.model import (
        Captured,
        ImportReport,
        IndexStatus,
        Memory,
        Violation,
    )
    from cortex.sparql.results import SparqlResult

#: A bearer token for the server (else the local token its discovery file holds, for clients of the same user).
TOKEN_ENV = "CORTEX_TOKEN"

_ERRORS: dict[str, type[errors.CortexError]] = {
    cls.__name__: cls
    for cls in (errors.InvalidInputError, errors.AgentNotFoundError, errors.MemoryDisabledError,
                errors.MemoryNotFoundError, errors.StoreError, errors.StoreLockedError, errors.AuthError,
                errors.PermissionDeniedError, errors.VersionConflictError, errors.QueryTimeoutError,
                errors.TooBusyError, errors.BrokenAgentError, errors.RunNotFoundError, errors.UndoConflictError,
                errors.SessionNotFoundError, errors.MissingExtraError, errors.ServiceError, errors.CortexError)
}


def _check_text(value: Any, path: str) -> None:
    """Raise :class:`InvalidInputError` naming the first string in ``value`` that is not valid Unicode."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise errors.InvalidInputError(path or "request",
                                           "contains unpaired surrogate characters (not valid Unicode text)") from None
    elif isinstance(value, Mapping):
        for key, item in value.items():
            _check_text(key, path or "request")
            _check_text(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_text(item, f"{path}[{i}]")


#: Seconds an import request may take to answer (the server embeds what it stores: ~100 memories/s with the local
#: model on 2 cores, bench/capture.py).
IMPORT_TIMEOUT = 3600.0

#: Requests sent again once when the connection fails before an answer (a write might have been applied).
_IDEMPOTENT = frozenset({"GET", "HEAD"})


#: The error attributes the server sends in ``error.details`` (cortex.service.http.ERROR_DETAILS).
_DETAILS = frozenset({"agent", "memory_id", "expected", "actual"})


def _raise(status: int, body: bytes) -> None:
    try:
        error = jsonsafe.loads(body)["error"]
        kind, message, field = error["type"], error["message"], error.get("field")
    except (ValueError, KeyError, TypeError):
        text = body.decode("utf-8", "replace")[:200]
        raise errors.ServiceError(f"server answered {status}: {text}") from None
    if kind in ("InvalidInputError", "InvalidJSON"):
        raise errors.InvalidInputError(field or "request", error.get("reason") or message)
    cls = _ERRORS.get(kind, errors.CortexError)
    exc = cls.__new__(cls)
    Exception.__init__(exc, message)  # keep the server's wording; the subclass keeps except clauses working
    exc.field = field  # type: ignore[attr-defined]
    details = error.get("details")
    for name, value in (details.items() if isinstance(details, dict) else ()):
        if name in _DETAILS and isinstance(value, (str, int)):
            setattr(exc, name, value)
    raise exc


_P = ParamSpec("_P")
_R = TypeVar("_R")

#: ``{name}`` parameters of a route's path.
_PATH_PARAMETER = re.compile(r"\{(\w+)\}")

#: Arguments naming a file or directory of this machine, sent as absolute paths.
_FILES = ("path", "file", "directory")


def remote(method: Callable[Concatenate[Any, _P], _R]) -> Callable[Concatenate[RemoteCortex, _P], _R]:
    """The client's version of protocol ``method``: the same signature and docstring, sent by
    :meth:`RemoteCortex._op` as its row of the operation table says."""
    row = operations.operation(method.__name__)  # through the module: an operation added later is seen
    bind = _binder(method)

    def call(self: RemoteCortex, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        # only what the caller gave: the server applies the same defaults to the rest
        return self._op(row, bind(args, kwargs))  # type: ignore[no-any-return]

    functools.update_wrapper(call, method)  # inspect.signature(call) is the protocol's (it follows __wrapped__)
    call.__qualname__ = f"RemoteCortex.{method.__name__}"
    return call


def _binder(method: Callable[..., Any]) -> Callable[[tuple[Any, ...], dict[str, Any]], dict[str, Any]]:
    """Arguments by name as ``method`` (a protocol method, ``self`` first) would bind them, with Python's errors
    for a missing, unknown or repeated argument; extra keywords of a ``**fields`` method under ``fields``. From the
    code object, not :mod:`inspect`: every command and hook imports this module (inspect costs ~13 ms)."""
    code = method.__code__
    positional = code.co_varnames[1:code.co_argcount]
    keyword_only = code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
    defaults = dict(zip(positional[len(positional) - len(method.__defaults__ or ()):], method.__defaults__ or ()))
    defaults.update(method.__kwdefaults__ or {})
    extra = bool(code.co_flags & 0x08)  # CO_VARKEYWORDS
    name = method.__name__

    def bind(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        if len(args) > len(positional):
            raise TypeError(f"{name}() takes {len(positional)} positional arguments but {len(args)} were given")
        arguments = dict(zip(positional, args))
        fields = {}
        for key, value in kwargs.items():
            if key in arguments:
                raise TypeError(f"{name}() got multiple values for argument {key!r}")
            if key in positional or key in keyword_only:
                arguments[key] = value
            elif extra:
                fields[key] = value
            else:
                raise TypeError(f"{name}() got an unexpected keyword argument {key!r}")
        missing = [p for p in (*positional, *keyword_only) if p not in arguments and p not in defaults]
        if missing:
            raise TypeError(f"{name}() missing required argument {missing[0]!r}")
        if fields:
            arguments["fields"] = fields
        return arguments

    return bind


class RemoteCortex:
    """A client of the Cortex HTTP API with the facade's methods (the subset that makes sense remotely)."""

    def __init__(self, url: str, token: str | None = None, *, timeout: float = 30.0) -> None:
        if token is not None and not token.isascii():
            raise errors.AuthError("the token is not valid: tokens are ASCII (check $CORTEX_TOKEN)")
        self.url = url.rstrip("/")
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise errors.InvalidInputError("url", f"must be an http(s) URL of a Cortex server, not {url!r}")
        self._headers = {"Accept": "application/json"} | ({"Authorization": f"Bearer {token}"} if token else {})
        self._base = parts.path.rstrip("/") + "/v1"
        self._timeout = timeout
        self._parts = parts
        # the standard library's client: one persistent connection, no proxy from the environment (the token
        # and the memories never go through one), and nothing heavy to import for a one-shot CLI command
        self._conn: http.client.HTTPConnection | None = None
        self._json_only = False

    async def aevents(self, *, after: str | None = None) -> AsyncIterator[dict[str, Any]]:
        """The server's live events (``GET /v1/events``: what the token may read) as they come, each ``{kind,
        agent, scope, at, ...}``, until the server ends the stream; ``after`` (an event id) first replays what
        was missed. The error the server answers when it refuses the stream (e.g. 429: too many streams)."""
        import httpx

        headers = self._headers | {"Accept": "text/event-stream"} | ({"Last-Event-ID": after} if after else {})
        async with httpx.AsyncClient(timeout=httpx.Timeout(self._timeout, read=None), trust_env=False) as client:
            async with client.stream("GET", f"{self.url}/v1/events", headers=headers) as answer:
                if answer.status_code != 200:
                    _raise(answer.status_code, await answer.aread())
                async for line in answer.aiter_lines():
                    if not line.startswith("data:"):
                        continue
                    try:
                        event = jsonsafe.loads(line[5:].strip())
                    except ValueError:
                        continue
                    if isinstance(event, dict):
                        yield event

    @contextmanager
    def as_json(self) -> Iterator[None]:
        """Inside this block the methods answer the server's JSON (dicts and lists, as ``model_dump(mode="json")``
        of the model they name) instead of models: for an adapter that only passes answers on (the CLI prints
        them), which then never imports the models and pydantic (~70 ms of a ~120 ms command)."""
        before, self._json_only = self._json_only, True
        try:
            yield
        finally:
            self._json_only = before

    def _as(self, kind: str, data: Any) -> Any:
        """The server's JSON ``data`` as the model ``kind`` (``Memory``, ``list[Memory]``...) of :mod:`cortex.model`;
        ``json``: as it is (itself inside :meth:`as_json`)."""
        if kind.startswith("list["):
            return [self._as(kind[5:-1], item) for item in data]
        if self._json_only or kind == "json":
            if kind == "Memory" and isinstance(data, dict):  # a write's warnings came as notices (the header)
                data.pop("warnings", None)
            return data
        from cortex import model

        return getattr(model, kind).model_validate(data)

    def _op(self, row: Operation, arguments: dict[str, Any]) -> Any:
        """Send operation ``row`` with ``arguments`` (the protocol method's, by name) to its route; its answer."""
        route = row.route
        assert route is not None, row.name
        values = dict(arguments)
        values.update(values.pop("fields", None) or {})  # supersede's **fields are body fields
        path = route.path
        for name in _PATH_PARAMETER.findall(route.path):
            value = values.pop(row.path_args.get(name, name))
            path = path.replace("{" + name + "}", _segment(name, value, arguments))
        for name in _FILES:
            if values.get(name) is not None:  # the server reads the file: it runs on this machine
                values[name] = os.path.abspath(os.fspath(values[name]))
        if "tags" in values:
            values["tags"] = _tags(values["tags"])
        if route.method == "GET":
            answer = self._call("GET", path, params=self._params(**values))
        else:
            answer = self._call(route.method, path, json=_jsonable(values, drop_none=True) or None)
        if row.key is not None:
            answer = answer[row.key]
        return self._as(row.answer, answer)

    def _connection(self) -> http.client.HTTPConnection:
        import http.client  # here: the engine imports this module for owner_client without sending anything

        if self._conn is None:
            parts = self._parts
            if parts.scheme == "https":
                self._conn = http.client.HTTPSConnection(parts.hostname or "", parts.port, timeout=self._timeout)
            else:
                self._conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=self._timeout)
        return self._conn

    def _call(self, method: str, path: str, *, json: Any = None, params: Mapping[str, Any] | None = None) -> Any:
        for value in (json, params):
            _check_text(value, "")  # the same field error as in process, not an encoding traceback
        body = _json.dumps(json).encode("utf-8") if json is not None else None
        data, headers = self._raw(method, path, params=params, body=body,
                                  content_type="application/json" if body is not None else None, accept=None)
        for note in notices.decode(headers.get(notices.HEADER.lower())):
            notices.notice(note)  # the server's warnings, to this process's caller
        return jsonsafe.loads(data) if data else None

    def _raw(self, method: str, path: str, *, params: Mapping[str, Any] | None = None, body: bytes | None = None,
             content_type: str | None = None, accept: str | None = "*/*") -> tuple[bytes, Mapping[str, str]]:
        """One request: the answer's bytes and headers (names in lower case). Idempotent methods are sent again
        once when the connection fails before an answer; an error status raises the Cortex error it names."""
        target = f"{self._base}{path}" + ("?" + urlencode(dict(params), doseq=True) if params else "")
        headers = self._headers | provenance.current().headers() | ({"Accept": accept} if accept else {}) | (
            {"Content-Type": content_type} if content_type else {})
        import http.client

        attempts = 2 if method in _IDEMPOTENT else 1
        for attempt in range(attempts):
            try:
                conn = self._connection()
                conn.request(method, target, body=body, headers=headers)
                response = conn.getresponse()
                data = response.read()
                break
            except (OSError, http.client.HTTPException) as exc:  # e.g. a reused connection closed under us
                self._drop()
                if attempt + 1 == attempts:
                    raise errors.ServiceError(f"Cortex server at {self.url} did not answer: {exc}") from None
        if response.status >= 400:
            _raise(response.status, data)
        return data, {k.lower(): v for k, v in response.getheaders()}

    def _drop(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    @contextmanager
    def _waiting(self, seconds: float) -> Iterator[None]:
        """Requests inside the block wait up to ``seconds`` for their answer (an import's file is written, and with a
        model embedded, before the server answers: minutes for a large one)."""
        before = self._timeout
        if seconds > before:
            self._timeout = seconds
            self._drop()
        try:
            yield
        finally:
            if self._timeout != before:
                self._timeout = before
                self._drop()

    @staticmethod
    def _params(**values: Any) -> dict[str, Any]:
        """Query parameters: enums by value, flags as true/false, datetimes in ISO 8601, settings (a dataclass such
        as :class:`~cortex.model.Reranking`) as a JSON object, None left out."""
        out: dict[str, Any] = {}
        for key, value in values.items():
            if value is None or value is False and key.startswith("include_"):
                continue
            out[key] = _jsonable(value)
            if isinstance(value, bool):
                out[key] = str(value).lower()
            elif dataclasses.is_dataclass(value) and not isinstance(value, type):
                out[key] = _json.dumps(dataclasses.asdict(value))
        return out

    def close(self, *, flush: bool = True) -> None:
        self._drop()

    def __enter__(self) -> "RemoteCortex":
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- the facade's methods --------------------------------------------------------------------

    # -- the table's operations (cortex.api.operations, client="table"): the protocol's method, sent ----------

    store = remote(MemoryAPI.store)
    store_many = remote(MemoryAPI.store_many)
    update = remote(MemoryAPI.update)
    history = remote(MemoryAPI.history)
    provenance = remote(MemoryAPI.provenance)
    supersede = remote(MemoryAPI.supersede)  # type: ignore[arg-type]  # mypy: a ParamSpec and **fields
    validate = remote(MemoryAPI.validate)
    inject_learning = remote(MemoryAPI.inject_learning)
    touch = remote(MemoryAPI.touch)
    purge_expired = remote(MemoryAPI.purge_expired)
    scan_secrets = remote(MemoryAPI.scan_secrets)
    recall = remote(MemoryAPI.recall)
    search = remote(MemoryAPI.search)
    list_memories = remote(MemoryAPI.list_memories)
    stats = remote(MemoryAPI.stats)
    usage_stats = remote(MemoryAPI.usage_stats)
    memory_usage = remote(MemoryAPI.memory_usage)
    agent_overview = remote(MemoryAPI.agent_overview)
    agent_start = remote(MemoryAPI.agent_start)
    agent_prompt = remote(MemoryAPI.agent_prompt)
    describe_agents = remote(MemoryAPI.describe_agents)
    resolve_agent = remote(MemoryAPI.resolve_agent)
    stored_scopes = remote(MemoryAPI.stored_scopes)
    info = remote(MemoryAPI.info)
    health = remote(MemoryAPI.health)
    record_task = remote(MemoryAPI.record_task)
    capture_transcript = remote(MemoryAPI.capture_transcript)
    undo_capture = remote(MemoryAPI.undo_capture)
    capture_runs = remote(MemoryAPI.capture_runs)
    record_use = remote(MemoryAPI.record_use)
    sessions = remote(MemoryAPI.sessions)
    session_detail = remote(MemoryAPI.session_detail)
    sync_notes = remote(MemoryAPI.sync_notes)
    promote_notes = remote(MemoryAPI.promote_notes)
    export_notes = remote(MemoryAPI.export_notes)
    consolidate = remote(MemoryAPI.consolidate)
    team_round_end = remote(MemoryAPI.team_round_end)
    team_round = remote(MemoryAPI.team_round)
    undo_consolidation = remote(MemoryAPI.undo_consolidation)
    consolidation_runs = remote(MemoryAPI.consolidation_runs)
    review = remote(MemoryAPI.review)
    resolve_review = remote(MemoryAPI.resolve_review)
    review_all = remote(MemoryAPI.review_all)

    # -- written out: files, streams, answers read from another operation's route ------------------------

    def get(self, agent: str, memory_id: str) -> Memory | None:
        try:
            found: Memory = self._as("Memory", self._call("GET", f"/agents/{_agent(agent)}/memories/"
                                                                 f"{_memory(agent, memory_id)}"))
            return found
        except errors.MemoryNotFoundError:
            return None

    def forget(self, agent: str, memory_id: str) -> bool:
        try:
            self._call("DELETE", f"/agents/{_agent(agent)}/memories/{_memory(agent, memory_id)}")
            return True
        except errors.MemoryNotFoundError:
            return False

    def count(self, agent: str) -> int:
        return sum(self.stats(agent).values())

    def prune_candidates(
        self,
        agent: str,
        min_confidence: float = config.DEFAULT_MIN_CONFIDENCE,
        max_age: timedelta | str | None = None,
        *,
        delete: bool = False,
    ) -> list[str]:
        if isinstance(max_age, timedelta):
            max_age = f"{max_age.total_seconds()}s"
        body = {"min_confidence": min_confidence, "max_age": max_age, "dry_run": not delete}
        return list(self._call("POST", f"/agents/{_agent(agent)}/prune", json=body)["ids"])

    def prune(
        self,
        agent: str,
        min_confidence: float = config.DEFAULT_MIN_CONFIDENCE,
        max_age: timedelta | str | None = None,
        *,
        dry_run: bool = False,
    ) -> int:
        return len(self.prune_candidates(agent, min_confidence, max_age, delete=not dry_run))

    def agent_end(self, agent: str, output: str, project: str | None = None) -> Captured:
        data = self._call("POST", f"/agents/{_agent(agent)}/end", json={"output": output, "project": project},
                          params={"pruned": "true"})
        if self._json_only:
            return data  # type: ignore[no-any-return]
        from cortex.model import Captured, Memory, Pruned

        return Captured([Memory.model_validate(m) for m in data["memories"]],
                        [Pruned.model_validate(p) for p in data["pruned"]], data.get("redacted") or {})

    def queue_transcript(self, agent: str, path: str | os.PathLike[str], **options: Any) -> dict[str, Any]:
        """Ask the server to capture the transcript in its queue (the answer comes before the capture runs)."""
        body = _jsonable({"path": os.path.abspath(os.fspath(path)), **options, "wait": False}, drop_none=True)
        return dict(self._call("POST", f"/agents/{_agent(agent)}/transcripts", json=body))

    def stored_agents(self) -> list[str]:
        return [a["name"] for a in self.describe_agents() if a["memories"]]

    def export(self, out: IO[bytes], *, agent: str | None = None, team: str | None = None, all: bool = False,
               format: str = "trig", progress: Callable[[str, int, int | None], None] | None = None) -> int:
        data, headers = self._raw("GET", "/export", params=self._params(agent=agent, team=team, all=all or None,
                                                                          format=format))
        out.write(data)
        count = int(headers.get("cortex-quads", "0"))
        if progress is not None:  # the server did the work: one report when it is done
            progress("export", count, count)
        return count

    def import_rdf(self, source: str | os.PathLike[str] | bytes | IO[bytes], *, format: str | None = None,
                   agent: str | None = None, team: str | None = None,
                   progress: Callable[[str, int, int | None], None] | None = None) -> dict[str, int]:
        name = os.fspath(source) if isinstance(source, (str, os.PathLike)) else getattr(source, "name", None)
        if isinstance(source, (str, os.PathLike)):
            data = Path(source).read_bytes()
        else:
            data = source if isinstance(source, bytes) else source.read()
        if format is None and isinstance(name, str):
            format = Path(name).suffix.lstrip(".") or None
        body, _ = self._raw("POST", "/import", params=self._params(format=format, agent=agent, team=team),
                            body=data, content_type="application/octet-stream")
        counts: dict[str, int] = jsonsafe.loads(body)["imported"]
        if progress is not None:
            progress("index", sum(counts.values()), sum(counts.values()))
        return counts

    def import_from(self, system: str, path: str | os.PathLike[str] | bytes, *, agent: str, dry_run: bool = False,
                    progress: Callable[[str, int, int | None], None] | None = None,
                    name: str | None = None) -> ImportReport:
        # this process reads the files and sends their bytes, one request each: the server reads no path for a
        # client (an agent's token could otherwise import any file the server's user can read)
        if isinstance(path, (bytes, bytearray)):
            files = [(name or "upload", bytes(path))]
        else:
            from cortex.importers.common import documents

            files = [(d.name, d.data) for d in documents(system, path, name)]
        merged: dict[str, Any] | None = None
        for done, (file_name, data) in enumerate(files, 1):
            try:
                with self._waiting(IMPORT_TIMEOUT):
                    body, headers = self._raw("POST", f"/import/{quote(system, safe='')}", body=data,
                                              params=self._params(agent=_agent(agent), dry_run=dry_run, name=file_name),
                                              content_type="application/octet-stream")
            except errors.InvalidInputError as exc:
                if len(files) == 1 or exc.field != "file":
                    raise
                answer: dict[str, Any] = {"system": system, "agent": agent, "files": [file_name], "dry_run": dry_run,
                                          "failed": [{"where": file_name, "reason": exc.reason}]}
            else:
                for note in notices.decode(headers.get(notices.HEADER.lower())):
                    notices.notice(note)
                answer = jsonsafe.loads(body)
            merged = answer if merged is None else _merge_reports(merged, answer)
            if progress is not None:
                progress("import", done, len(files))
        report: ImportReport = self._as("ImportReport", merged)
        return report

    def export_beads(self, directory: str | os.PathLike[str], *, agent: str) -> dict[str, Any]:
        # the server sends the lines; this process writes the directory (merged with what is there, rotated)
        from cortex.importers import beads

        data, _ = self._raw("GET", f"/agents/{_agent(agent)}/export/beads", accept="application/x-ndjson")
        return beads.write(directory, [jsonsafe.loads(line) for line in data.decode("utf-8").splitlines()
                                       if line.strip()])

    def validate_store(self, *, agent: str | None = None, team: str | None = None,
                       all: bool = True) -> list[Violation]:
        from cortex.model import Violation

        found = self._call("GET", "/validate-store", params=self._params(agent=agent, team=team))
        return [Violation(v["focus"], v["path"], v["message"]) for v in found["violations"]]

    def sparql(
        self,
        query: str,
        substitutions: Mapping[str, Any] | None = None,
        *,
        agent: str | None = None,
        limit: int | None = None,
        timeout: float | None = None,
        default_graphs: Sequence[str] | None = None,
        named_graphs: Sequence[str] | None = None,
    ) -> SparqlResult:
        from cortex.sparql.results import from_json

        if substitutions:
            raise errors.InvalidInputError("substitutions", "are for in-process queries; a remote query is text")
        return from_json(self._call("POST", "/sparql", json=_jsonable(
            {"query": query, "agent": agent, "limit": limit, "timeout": timeout,
             "default-graph-uri": None if default_graphs is None else list(default_graphs),
             "named-graph-uri": None if named_graphs is None else list(named_graphs)}, drop_none=True)))

    def reindex(
        self, agent: str, *, force: bool = False, progress: Callable[[int, int], None] | None = None
    ) -> dict[str, int]:
        name = agent if agent == "swarm" or agent.startswith("team:") else _agent(agent)
        return dict(self._call("POST", f"/agents/{quote(name)}/reindex", params={"force": str(force).lower()}))

    def index_status(self, agent: str) -> IndexStatus:
        data = self._call("GET", f"/agents/{_agent(agent)}/index")
        if self._json_only:
            return data  # type: ignore[no-any-return]
        from cortex.model import IndexStatus

        return IndexStatus(**data)

    @staticmethod
    def render(memories: Sequence[Memory], max_chars: int | None = None) -> str:
        from cortex.render import render as render_block  # here: it ranks with numpy, which a CLI call never needs

        return render_block(memories, max_chars)


def owner_client(state_dir: Path | None) -> RemoteCortex | None:
    """A client of the live server whose discovery file is in ``state_dir`` (the server that owns that store),
    or None. Uses ``$CORTEX_TOKEN`` when set, else the server's local token from the discovery file."""
    from cortex import discovery

    info = discovery.find(state_dir) if state_dir is not None else None
    if info is None:
        return None
    return RemoteCortex(info.url, token=os.environ.get(TOKEN_ENV) or info.token)


def _jsonable(value: Any, *, drop_none: bool = False) -> Any:
    """``value`` as JSON can carry it: enums by value, datetimes in ISO 8601, durations in seconds, tuples and
    sets as lists (anything else as it is: the server names what it does not accept)."""
    if isinstance(value, Mapping):
        return {k: _jsonable(v) for k, v in value.items() if not (drop_none and v is None)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, timedelta):
        return f"{value.total_seconds()}s"
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    return value


def _merge_reports(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """Two import reports (of two files of one import) as one."""
    out = dict(first)
    for key in ("files", "imported", "skipped", "failed"):
        out[key] = [*first.get(key, []), *second.get(key, [])]
    redacted = dict(first.get("redacted") or {})
    for rule, count in (second.get("redacted") or {}).items():
        redacted[rule] = redacted.get(rule, 0) + count
    out["redacted"] = redacted
    out["entities"] = first.get("entities", 0) + second.get("entities", 0)
    return out


def _tags(tags: Iterable[str] | None) -> list[str] | None:
    """Tags as a list for a query string (a single string is one tag)."""
    if tags is None:
        return None
    return [tags] if isinstance(tags, str) else list(tags)


def _agent(agent: str) -> str:
    """A validated agent name (the same error as the in-process facade, and a name is a safe path segment)."""
    return check_agent_name(agent)


def _memory(agent: str, memory_id: str) -> str:
    """A memory id as a path segment; a malformed one cannot exist (:class:`MemoryNotFoundError`)."""
    if not is_memory_id(memory_id):
        raise errors.MemoryNotFoundError(agent, str(memory_id))
    return memory_id


def _segment(name: str, value: Any, arguments: dict[str, Any]) -> str:
    """A path parameter's value as a path segment: names and ids checked as in process (a malformed memory id
    cannot exist), any other text quoted into one segment (the server checks it)."""
    if name in ("agent", "lead"):
        return _agent(value)
    if name == "memory_id":
        return _memory(arguments.get("agent", ""), value)
    return quote(str(value), safe="")


def table_operations(cls: type = RemoteCortex) -> dict[str, Callable[..., Any]]:
    """The client's methods of the table's operations (``client="table"``, with a route) that ``cls`` does not
    define, each :func:`remote` of its protocol method: a new operation reaches the client from its row alone
    (the lines written out above stay: they give type checkers the signatures)."""
    return {row.name: remote(getattr(MemoryAPI, row.name)) for row in operations.OPERATIONS.values()
            if row.client == "table" and row.route is not None and not hasattr(cls, row.name)
            and callable(getattr(MemoryAPI, row.name, None))}


def _add_table_operations() -> None:
    for name, method in table_operations().items():
        setattr(RemoteCortex, name, method)


_add_table_operations()
