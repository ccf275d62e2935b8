"""A backend on a remote SPARQL 1.1 server (Oxigraph server, Virtuoso, GraphDB, Fuseki...), shared by any number
of Cortex processes.

Selected by a store location ``sparql+http://[user:password@]host:port/path`` (or ``sparql+https``): ``path`` is
the query endpoint; ``?update=`` and ``?gsp=`` name the update and Graph Store endpoints when they differ (a path
on the same host, or a full URL); ``?auth=digest|basic`` the HTTP authentication (basic by default when there
are credentials); ``?timeout=`` seconds. Credentials may also come from ``CORTEX_STORE_USER`` and
``CORTEX_STORE_PASSWORD``; they are never part of :attr:`RemoteStore.location`, of an error or of a log line.

What the servers do not give, and how this module copes (docs/scale-out.md):

* **No serialised read-modify-write.** Oxigraph server runs concurrent updates on snapshots without conflict
  detection (8 clients x 200 ``usageCount + 1`` updates lost increments, and left several values). So a touch
  never rewrites a count: each use is one triple of its own (:meth:`MemoryCodec.use_literal`) that readers add
  to the stored count; updates replace every triple but those, and check the version before and after.
* **The change log is shared.** Each write appends a record whose number the server computes in the same
  update (``MAX + 1``); two writers racing may draw the same number, so records are told apart by their token
  and readers compare counts over a window of numbers (:mod:`cortex.index.manager`).
* **Batches sized for real servers.** Virtuoso refuses an ``INSERT DATA`` of ~200 memories (SP031), so data
  goes in operations of at most :data:`MEMORIES_PER_OPERATION` memories, several per request.
* **Silent truncation.** Virtuoso caps result sets (``ResultSetMaxRows``); full reads compare what arrived with
  a count and fail loudly instead of returning part of a graph.

No user string is pasted into SPARQL: every term is serialised by pyoxigraph (``str(term)``) and ids are
validated; query substitutions become a ``VALUES`` clause of serialised terms.
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
import random
import time
import urllib.parse
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pyoxigraph as ox
from pyoxigraph import Literal, NamedNode, Quad

from cortex import config
from cortex.errors import CortexError, InvalidInputError, QueryTimeoutError, StoreError, VersionConflictError
from cortex.model import Memory, Scope, utcnow
from cortex.provenance import Activity
from cortex.store.base import Change
from cortex.store.rdf import MemoryCodec, sparql_term
from cortex.vocab import Vocabulary, integer

log = logging.getLogger("cortex.store")

#: Memories per ``INSERT DATA`` operation (Virtuoso fails near 200 with SP031), and ids per ``VALUES`` read.
MEMORIES_PER_OPERATION = 100
IDS_PER_READ = 500
#: Memories per delete operation (a pattern over a thousand failed: Virtuoso's stack, Oxigraph's time-out).
DELETES_PER_OPERATION = 100
#: Operations sent in one update request (one transaction on the servers tested).
OPERATIONS_PER_REQUEST = 20
#: Writes of at least this many memories go through the Graph Store Protocol when the location names it
#: (``?gsp=``), in requests of at most this many triples.
GSP_MEMORIES = 500
GSP_TRIPLES = 50_000
#: Attempts of an idempotent request (a query, or an update that never reached the server).
ATTEMPTS = 3
#: Attempts of a request the server rolled back to break a deadlock (safe to repeat: nothing of it was applied).
#: Every write moves its scope's log head, so writers of one scope collide on it under load; the waits between
#: attempts grow from 20 ms to at most 1 s, jittered, about 6 s in all.
DEADLOCK_ATTEMPTS = 10
RETRY_STATUS = frozenset({502, 503, 504})
DEFAULT_TIMEOUT = 30.0
#: The most bytes of one answer read from the server (``max_answer=`` MiB in the location): a whole scope's graph
#: is one answer when an index is rebuilt or a scope exported (about 1.2 KB a memory in N-Triples: ~200,000
#: memories fit in the default).
DEFAULT_MAX_ANSWER = 256 * 1024 * 1024
JSON_RESULTS = "application/sparql-results+json"
#: Seconds a claim on memories holds when its writer dies before releasing it (at least the request time-out).
CLAIM_LEASE = 60.0
#: Contents kept in memory (about 100 bytes each beyond the text): recall's hits cost no round trip.
CACHED_TEXTS = 500_000


@dataclass(frozen=True)
class Endpoint:
    """Where a remote store is and how to talk to it (parsed from a ``sparql+http(s)://`` location)."""

    query_url: str
    update_url: str
    gsp_url: str | None
    auth: str | None  # "basic" or "digest"
    username: str | None = field(repr=False)
    password: str | None = field(repr=False)
    timeout: float = DEFAULT_TIMEOUT
    #: The most bytes one answer of the server may hold.
    max_answer: int = DEFAULT_MAX_ANSWER

    @property
    def location(self) -> str:
        """The query endpoint as ``sparql+http(s)://host:port/path``, without credentials."""
        return "sparql+" + self.query_url

    @classmethod
    def parse(cls, text: str) -> "Endpoint":
        """Read a store location; raises :class:`InvalidInputError` (field ``store``) naming what is wrong,
        never echoing the credentials."""
        scheme, sep, _ = text.partition("://")
        if not sep or scheme not in config.REMOTE_SCHEMES:
            raise InvalidInputError("store", f"a remote store location starts with sparql+http:// or sparql+https://"
                                             f", not {scheme!r}")
        try:
            parts = urllib.parse.urlsplit(text[len("sparql+"):])
            host, port = parts.hostname, parts.port
        except ValueError as exc:
            raise InvalidInputError("store", f"is not a valid URL ({str(exc).split(':')[0]})") from None
        if not host:
            raise InvalidInputError("store", "names no host")
        base = f"{parts.scheme}://{host if ':' not in host else '[' + host + ']'}" + (f":{port}" if port else "")
        params = urllib.parse.parse_qs(parts.query, keep_blank_values=True)
        unknown = sorted(set(params) - {"update", "gsp", "auth", "timeout", "max_answer"})
        if unknown:
            raise InvalidInputError("store", f"unknown parameter {unknown[0]!r} (update, gsp, auth, timeout, "
                                             f"max_answer)")

        def endpoint(value: str | None, default: str | None) -> str | None:
            if value is None:
                return default
            if value.startswith(("http://", "https://")):
                return value
            return base + (value if value.startswith("/") else "/" + value)

        def one(name: str) -> str | None:
            values = params.get(name)
            return values[-1] if values else None

        auth = one("auth")
        if auth is not None and auth not in ("basic", "digest"):
            raise InvalidInputError("store", f"auth must be basic or digest, not {auth!r}")
        try:
            timeout = float(one("timeout") or DEFAULT_TIMEOUT)
        except ValueError:
            raise InvalidInputError("store", "timeout must be a number of seconds") from None
        if not 0 < timeout <= 3600:
            raise InvalidInputError("store", "timeout must be between 0 and 3600 seconds")
        raw_answer = one("max_answer")
        if raw_answer is not None and not (raw_answer.isdigit() and 1 <= int(raw_answer) <= 64 * 1024):
            raise InvalidInputError("store", "max_answer must be a number of MiB from 1 to 65536")
        max_answer = int(raw_answer) * 1024 * 1024 if raw_answer is not None else DEFAULT_MAX_ANSWER
        username = urllib.parse.unquote(parts.username) if parts.username else os.environ.get("CORTEX_STORE_USER")
        password = urllib.parse.unquote(parts.password) if parts.password is not None \
            else os.environ.get("CORTEX_STORE_PASSWORD")
        query_url = base + (parts.path or "/sparql")
        return cls(query_url=query_url, update_url=endpoint(one("update"), query_url) or query_url,
                   gsp_url=endpoint(one("gsp"), None), auth=(auth or "basic") if username else None,
                   username=username, password=password, timeout=timeout, max_answer=max_answer)


def _rolled_back(response: httpx.Response) -> bool:
    """Whether the server says it rolled the request's transaction back to break a deadlock (SQL state 40001,
    as Virtuoso does under concurrent updates): then even a write is safely sent again."""
    return response.status_code >= 500 and ("40001" in response.text[:500] or "deadlock" in response.text[:500].lower())


def _auth(endpoint: Endpoint) -> httpx.Auth | None:
    if endpoint.username is None:
        return None
    password = endpoint.password or ""
    if endpoint.auth == "digest":
        return httpx.DigestAuth(endpoint.username, password)
    return httpx.BasicAuth(endpoint.username, password)


def _term(value: str, kind: str, datatype: str | None, lang: str | None) -> Any:
    if kind == "uri":
        return NamedNode(value)
    if kind == "bnode":
        return ox.BlankNode(value)
    if lang:
        return Literal(value, language=lang)
    return Literal(value, datatype=NamedNode(datatype)) if datatype else Literal(value)


class PartialAnswerError(StoreError):
    """The server answered 200 with part of the answer (Virtuoso past ``MaxQueryExecutionTime``)."""


def _stamp(moment: datetime) -> str:
    """A claim's time: UTC with microseconds, so that times compare as strings."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class _Claim:
    """Memories a writer holds (see :meth:`RemoteStore._claim`): their claim subjects and the operation that
    releases them (sent with the write itself)."""

    subjects: Sequence[NamedNode]
    release: tuple[str, ...]

    def released(self) -> "_Claim":
        return _Claim(self.subjects, ())


_UNREADABLE = (IndexError, KeyError, TypeError, AttributeError, ValueError, SyntaxError, UnicodeDecodeError)


def _unreadable_answers_are_store_errors(cls: type) -> type:
    """Wrap every public method of ``cls`` so that an answer of the server it cannot read (no row where one is
    due, a variable missing, a value of another type, a document that is not what it says) is a
    :class:`StoreError` naming the server, like every other failure of the server: never an ``IndexError`` or
    ``KeyError`` out of a read. Cortex's own errors (bad input, conflicts) pass unchanged."""
    def wrap(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def fail(self: Any, exc: BaseException) -> StoreError:
            return StoreError(f"the SPARQL server at {self.location} sent an answer Cortex cannot read ({name}: "
                              f"{type(exc).__name__}: {str(exc)[:200]})")

        if inspect.isgeneratorfunction(method):
            @functools.wraps(method)
            def generator(self: Any, *args: Any, **kwargs: Any) -> Any:
                try:
                    yield from method(self, *args, **kwargs)
                except CortexError:
                    raise
                except _UNREADABLE as exc:
                    raise fail(self, exc) from exc
            return generator

        @functools.wraps(method)
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return method(self, *args, **kwargs)
            except CortexError:
                raise
            except _UNREADABLE as exc:
                raise fail(self, exc) from exc
        return call

    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and inspect.isfunction(member):
            setattr(cls, name, wrap(name, member))
    return cls


@_unreadable_answers_are_store_errors
class RemoteStore:
    """A :class:`~cortex.store.base.MemoryStore` on a SPARQL 1.1 server, safe to share between processes."""

    #: Other processes write to this store: derived indexes check its change log before each operation.
    shared = True
    #: Query bindings travel in the query's text (a ``VALUES`` clause), not as an option of the engine.
    substitutes = False

    def __init__(self, location: str | Endpoint, vocabulary: Vocabulary, *,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.endpoint = location if isinstance(location, Endpoint) else Endpoint.parse(location)
        self.vocab = vocabulary
        self.codec = MemoryCodec(vocabulary)
        timeout = httpx.Timeout(self.endpoint.timeout, connect=min(5.0, self.endpoint.timeout))
        self._client = httpx.Client(auth=_auth(self.endpoint), timeout=timeout,
                                    transport=transport, headers={"User-Agent": "cortex"})
        self._closed = False
        #: per scope, the latest log number this process has seen (its next write is numbered after it) and
        #: the head values it has read (its next write replaces them: see MemoryCodec.shared_change)
        self._hints: dict[Scope, int] = {}
        self._heads: dict[Scope, set[str]] = {}
        # contents read before: valid while the log names no change to them (the indexes read the log before
        # every operation, through changes(), which drops what it names)
        self._texts: dict[tuple[Scope, str], str] = {}
        self._confines: bool | None = None  # whether the server honours a query's dataset (asked when needed)
        self.ping()

    # -- lifecycle -------------------------------------------------------------------------------

    @property
    def location(self) -> str:
        return self.endpoint.location

    @property
    def local_path(self) -> None:
        return None

    def ping(self) -> None:
        """One ``ASK {}``: raises :class:`StoreError` when the server cannot be reached or refuses."""
        self._select("ASK {}")

    def flush(self) -> None:
        """Nothing to do: the server made each write durable before answering."""

    def close(self, flush: bool = True) -> None:
        if not self._closed:
            self._closed = True
            self._client.close()

    # -- HTTP ------------------------------------------------------------------------------------

    def _send(self, url: str, *, data: Mapping[str, Any] | None = None, content: bytes | None = None,
              headers: Mapping[str, str] | None = None, params: Mapping[str, Any] | None = None,
              idempotent: bool, what: str) -> httpx.Response:
        """POST with bounded retries: an idempotent request also on a dropped connection or a 502/503/504, any
        request when it never reached the server or the server rolled it back (a deadlock). Every failure is one
        :class:`StoreError` naming the server
        (without credentials) and what it said."""
        failures = deadlocks = 0
        while True:
            try:
                response = self._post(url, data=data, content=content, headers=headers, params=params)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                failures += 1
                if failures == ATTEMPTS:
                    raise StoreError(f"cannot reach the SPARQL server at {self.location}: "
                                     f"{exc.__class__.__name__}") from None
                delay = 0.1 * 3 ** (failures - 1)
            except httpx.TransportError as exc:
                failures += 1
                if not idempotent or failures == ATTEMPTS:
                    maybe = "" if idempotent else " (the write may or may not have been applied)"
                    raise StoreError(f"the SPARQL server at {self.location} did not answer {what}: "
                                     f"{exc.__class__.__name__}{maybe}") from None
                delay = 0.1 * 3 ** (failures - 1)
            else:
                if response.status_code < 300:
                    return response
                if _rolled_back(response) and deadlocks + 1 < DEADLOCK_ATTEMPTS:
                    deadlocks += 1
                    delay = min(1.0, 0.02 * 2 ** (deadlocks - 1))
                elif response.status_code in RETRY_STATUS and idempotent and failures + 1 < ATTEMPTS:
                    failures += 1
                    delay = 0.1 * 3 ** (failures - 1)
                else:
                    raise StoreError(self._refusal(response, what))
            time.sleep(delay * (1 + random.random()))

    def _post(self, url: str, **request: Any) -> httpx.Response:
        """One POST, its answer read to at most :attr:`Endpoint.max_answer` bytes (a larger one is refused, not
        read: a server that answers without end must not exhaust this process)."""
        limit = self.endpoint.max_answer
        with self._client.stream("POST", url, **request) as streamed:
            declared = streamed.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit:
                raise StoreError(f"the SPARQL server at {self.location} answered {int(declared)} bytes, more than "
                                 f"the {limit} a store reads (raise max_answer= in the store location)")
            chunks, size = [], 0
            for chunk in streamed.iter_bytes():
                size += len(chunk)
                if size > limit:
                    raise StoreError(f"the SPARQL server at {self.location} answered more than the {limit} bytes a "
                                     f"store reads (raise max_answer= in the store location)")
                chunks.append(chunk)
            partial = streamed.headers.get("x-sql-state")
            if partial and streamed.status_code < 300:  # Virtuoso's "anytime" answer: cut at its time limit
                raise PartialAnswerError(f"the SPARQL server at {self.location} cut its answer short at its time "
                                         f"limit (X-SQL-State {partial[:20]}): raise MaxQueryExecutionTime, or ask "
                                         f"for less")
            # the bytes are decoded already: the response made of them must not say they are compressed
            headers = [(k, v) for k, v in streamed.headers.multi_items()
                       if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
            return httpx.Response(streamed.status_code, headers=headers, content=b"".join(chunks),
                                  request=streamed.request)

    def _refusal(self, response: httpx.Response, what: str) -> str:
        body = " ".join(response.text.split())[:300] if response.content else ""
        reason = {401: "refused the credentials", 403: "refused access"}.get(response.status_code, "refused")
        status = response.status_code
        return f"the SPARQL server at {self.location} {reason} {what} (HTTP {status}): {body}".rstrip(": ")

    def _update(self, operations: Sequence[str], what: str) -> None:
        """Send ``operations`` as one update request (one transaction)."""
        if operations:
            self._send(self.endpoint.update_url, data={"update": " ;\n".join(operations)}, idempotent=False, what=what)

    def _select(self, sparql: str, required: Sequence[str] = ()) -> list[dict[str, Any]]:
        """The solutions of a SELECT, read at once (pyoxigraph's result objects must not cross threads),
        without those leaving a ``required`` variable unbound (Virtuoso answers a ``VALUES`` row that matched
        nothing with a row of its own)."""
        response = self._send(self.endpoint.query_url, data={"query": sparql},
                              headers={"Accept": JSON_RESULTS}, idempotent=True, what="a query")
        try:
            result = ox.parse_query_results(response.content, ox.QueryResultsFormat.JSON)
            if isinstance(result, ox.QueryBoolean):
                return [{"boolean": bool(result)}]
            names = [v.value for v in result.variables]
            rows = [{n: row[n] for n in names} for row in result]
            return [r for r in rows if all(r.get(n) is not None for n in required)] if required else rows
        except (SyntaxError, ValueError) as exc:
            raise StoreError(f"the SPARQL server at {self.location} sent unreadable results: {exc}") from None

    def _graph(self, construct: str) -> list[ox.Triple]:
        response = self._send(self.endpoint.query_url, data={"query": construct},
                              headers={"Accept": "application/n-triples"}, idempotent=True, what="a query")
        return self._parse_graph(response)

    def _parse_graph(self, response: httpx.Response) -> list[ox.Triple]:
        media = response.headers.get("content-type", "").split(";")[0].strip()
        fmt = ox.RdfFormat.TURTLE if media in ("text/turtle", "application/x-turtle") else ox.RdfFormat.N_TRIPLES
        try:
            return [q.triple for q in ox.parse(response.content, fmt)]
        except SyntaxError as exc:
            raise StoreError(f"the SPARQL server at {self.location} sent an unreadable graph: {exc}") from None

    # -- writes ----------------------------------------------------------------------------------

    def _change(self, scope: Scope, memory_ids: Sequence[str], operations: list[str], what: str,
                texts_stay: bool = False) -> Change:
        if not texts_stay:
            self._drop_texts(scope, memory_ids)
        change, ops = self._record(scope, memory_ids)
        # Virtuoso compiles a request's operations together and overflows its stack on a few hundred: a long
        # write goes in several requests, its log record last (a reader never sees a record before its data)
        head, tail = operations[:-OPERATIONS_PER_REQUEST], operations[-OPERATIONS_PER_REQUEST:]
        for start in range(0, len(head), OPERATIONS_PER_REQUEST):
            self._update(head[start:start + OPERATIONS_PER_REQUEST], what)
        self._update([*tail, *ops], what)
        self._moved(scope, change)
        return change

    def _record(self, scope: Scope, memory_ids: Sequence[str]) -> tuple[Change, list[str]]:
        """The next change of the scope and the operations that log it: numbered after the latest this
        process has seen (read now if it has seen none), the head values it has seen replaced by it."""
        if scope not in self._heads:
            self.log_heads([scope])
        change = Change(self._hints.get(scope, 0) + 1, os.urandom(8).hex(), tuple(memory_ids))
        return change, self.codec.shared_change(scope, change.seq, change.token, memory_ids,
                                                sorted(self._heads.get(scope, ())))

    def _moved(self, scope: Scope, change: Change) -> None:
        """This process wrote ``change``: the head holds it (and what others added meanwhile, unseen)."""
        self._heads[scope] = {f"{change.seq} {change.token}"}
        self._seen(scope, change.seq)

    def _insert_ops(self, scope: Scope, memories: Sequence[Memory]) -> list[str]:
        graph, quads, step = self.vocab.graph(scope), self.codec.quads, MEMORIES_PER_OPERATION
        cache: dict[Any, Literal] = {}
        return [f"INSERT DATA {{ GRAPH {graph} {{ "
                f"{self.codec.triples(q for m in memories[i:i + step] for q in quads(scope, m, cache))} }} }}"
                for i in range(0, len(memories), step)]

    def _provenance_ops(self, scope: Scope, memories: Sequence[Memory], activity: Activity | None,
                        derived: Sequence[tuple[str, str]], changed: Sequence[Memory] = (),
                        deleted: Sequence[str] = ()) -> list[str]:
        quads = self.codec.derived_quads(scope, derived) + self.codec.write_activity_quads(scope, activity, memories,
                                                                                            changed, deleted)
        return self._quad_ops(quads) if quads else []

    def _quad_ops(self, quads: Sequence[Quad]) -> list[str]:
        return self.codec.insert_data(quads, MEMORIES_PER_OPERATION * 10)

    def add(self, scope: Scope, memories: Sequence[Memory], activity: Activity | None = None,
            extra: Sequence[ox.Triple] = ()) -> Change:
        what = f"a write of {len(memories)} memories"
        graph = self.vocab.graph(scope)
        others = [Quad(t.subject, t.predicate, t.object, graph) for t in extra]
        if self.endpoint.gsp_url is not None and len(memories) >= GSP_MEMORIES:
            cache: dict[Any, Literal] = {}
            quads = [q for m in memories for q in self.codec.quads(scope, m, cache)] + others
            if activity is not None:
                quads += self.codec.activity_quads(scope, activity, os.urandom(8).hex(), memories)
            self._bulk(quads, what)
            change = self._change(scope, [m.id for m in memories], [], "a change record")
        else:
            ops = self._insert_ops(scope, memories) + self._provenance_ops(scope, memories, activity, ())
            ops += self._quad_ops(others) if others else []
            if len(ops) < OPERATIONS_PER_REQUEST:
                change = self._change(scope, [m.id for m in memories], ops, what)
            else:
                # more than one request: the data first, its log record last (a reader never sees a record
                # before its data); a failure part way leaves earlier requests' memories, unlogged until a
                # reader's count check
                for start in range(0, len(ops), OPERATIONS_PER_REQUEST):
                    self._update(ops[start:start + OPERATIONS_PER_REQUEST], what)
                change = self._change(scope, [m.id for m in memories], [], "a change record")
        self._keep_texts(scope, memories)
        return change

    def _bulk(self, quads: Sequence[Quad], what: str) -> None:
        """Add quads through the Graph Store Protocol (``POST ?graph=``, N-Triples), each graph in requests of
        at most :data:`GSP_TRIPLES` triples: ~10x the rate of ``INSERT DATA`` on Virtuoso."""
        assert self.endpoint.gsp_url is not None
        by_graph: dict[str, list[Quad]] = {}
        for q in quads:
            by_graph.setdefault(q.graph_name.value, []).append(q)  # type: ignore[union-attr]
        for graph, group in by_graph.items():
            for start in range(0, len(group), GSP_TRIPLES):
                body = "".join(f"{sparql_term(q.subject)} {q.predicate} {sparql_term(q.object)} .\n"
                               for q in group[start:start + GSP_TRIPLES])
                self._send(self.endpoint.gsp_url, content=body.encode("utf-8"), params={"graph": graph},
                           headers={"Content-Type": "application/n-triples"}, idempotent=False, what=what)

    def load(self, data: Mapping[Scope, Sequence[Quad]], check: Callable[[], Mapping[Scope, Sequence[str]]],
             source: tuple[bytes, ox.RdfFormat] | None = None) -> dict[Scope, Change]:
        judged = check()  # before the first request: a server has no journal to undo a load with
        batches = {scope: (quads, judged.get(scope, ())) for scope, quads in data.items()}
        records = {scope: self._record(scope, ids) for scope, (_, ids) in batches.items()}
        for scope, (_, ids) in batches.items():
            self._drop_texts(scope, ids)
        logs = [op for _, record_ops in records.values() for op in record_ops]
        what = f"an import of {sum(len(ids) for _, ids in batches.values())} memories"
        if self.endpoint.gsp_url is not None and sum(len(ids) for _, ids in batches.values()) >= GSP_MEMORIES:
            self._bulk([q for data, _ in batches.values() for q in data], what)
            self._update(logs, what)
        else:
            ops = [op for data, _ in batches.values() for op in self._quad_ops(data)]
            if len(ops) + len(logs) <= OPERATIONS_PER_REQUEST:
                self._update([*ops, *logs], what)
            else:
                for start in range(0, len(ops), OPERATIONS_PER_REQUEST):
                    self._update(ops[start:start + OPERATIONS_PER_REQUEST], what)
                self._update(logs, what)
        for scope, (change, _) in records.items():
            self._moved(scope, change)
        return {scope: change for scope, (change, _) in records.items()}

    def export(self, scope: Scope) -> Iterator[Quad]:
        for graph in (self.vocab.graph(scope), self.vocab.prov_graph(scope)):
            yield from (Quad(t.subject, t.predicate, t.object, graph) for t in self._whole_graph(graph, scope))

    def _whole_graph(self, graph: NamedNode, scope: Scope) -> list[ox.Triple]:
        """Every triple of a graph, checked against a count taken before and after: a server that truncates
        results (Virtuoso's ResultSetMaxRows) is an error, never a silently partial graph."""
        count = f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH {graph} {{ ?s ?p ?o }} }}"
        before = int(self._select(count)[0]["n"].value)
        triples = self._graph(f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ GRAPH {graph} {{ ?s ?p ?o }} }}")
        if len(triples) < before:  # or writes removed some meanwhile: then the count after is lower too
            after = int(self._select(count)[0]["n"].value)
            if len(triples) < min(before, after):
                raise StoreError(f"the SPARQL server at {self.location} returned {len(triples)} of the {after} "
                                 f"triples of {scope.label}: it truncates results (Virtuoso: raise ResultSetMaxRows)")
        return triples

    def _by_id(self, scope: Scope, memory_ids: Sequence[str], query: Callable[[str], str],
               required: Sequence[str]) -> Iterator[tuple[str, dict[str, Any]]]:
        """The rows of ``query(values)`` (``values``: the memories' IRIs, a chunk at a time), with the id of the
        memory each row's ``?m`` is."""
        for start in range(0, len(memory_ids), IDS_PER_READ):
            values = self.codec.values(scope, memory_ids[start:start + IDS_PER_READ])
            for row in self._select(query(values), required):
                mid = self.vocab.memory_id(scope, row["m"].value)
                if mid is not None:
                    yield mid, row

    def _current(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, list[tuple[Any, Any]]]:
        """The (predicate, object) terms of each memory that exists, by id."""
        found: dict[str, list[tuple[Any, Any]]] = {}
        graph = self.vocab.graph(scope)
        for mid, row in self._by_id(scope, memory_ids, lambda values: f"SELECT ?m ?p ?o WHERE {{ VALUES ?m {{ "
                                    f"{values} }} GRAPH {graph} {{ ?m ?p ?o }} }}", ("m", "p", "o")):
            found.setdefault(mid, []).append((row["p"], row["o"]))
        return found

    def write(self, scope: Scope, adds: Sequence[Memory], replaces: Sequence[tuple[Memory, Memory, bool]],
              deletes: Sequence[str] = (), activity: Activity | None = None,
              derived: Sequence[tuple[str, str]] = (), unlink: Sequence[tuple[str, str]] = (),
              extra: Sequence[Quad] = ()) -> Change:
        # The server does not serialise read-modify-write updates, so the memories a write changes are claimed
        # first (see _claim): while this process holds them, it checks that the store holds exactly what the
        # caller read (every field, not only the version: a supersession or a validation keeps it), then writes.
        graph = self.vocab.graph(scope)
        claim = self._claim(scope, [old.id for old, _, _ in replaces] + list(deletes))
        try:
            current = self._current(scope, [old.id for old, _, _ in replaces])
            self._require_existing(scope, deletes)
            ops = self.codec.delete_operations(scope, deletes, DELETES_PER_OPERATION)
            for old, new, archive in replaces:
                pairs = current.get(old.id, [])
                if not self._holds(scope, old, pairs):
                    stored = self.codec.stored_version(Quad(self.vocab.memory(scope, old.id), p, o, graph)
                                                       for p, o in pairs) if pairs else 0
                    raise VersionConflictError(old.id, old.version, stored)  # changed since it was read
                ops += self._replace_ops(scope, old, new, archive, pairs)
            if unlink:
                ops.append(f"DELETE DATA {{ GRAPH {graph} {{ "
                           f"{self.codec.triples(self.codec.derived_quads(scope, unlink))} }} }}")
            ops += self._insert_ops(scope, adds) + self._provenance_ops(scope, adds, activity, derived,
                                                                        [new for _, new, _ in replaces], deletes)
            ops += self._quad_ops(extra) if extra else []
            ids = list(dict.fromkeys([m.id for m in adds] + [old.id for old, _, _ in replaces] + list(deletes)))
            change = self._change(scope, ids, [*ops, *claim.release], "an update")
            claim = claim.released()
        finally:
            self._release(claim)
        self._keep_texts(scope, list(adds))
        return change

    def _require_existing(self, scope: Scope, memory_ids: Sequence[str]) -> None:
        """Raise :class:`VersionConflictError` (actual version 0) when one of the memories is gone: another
        process deleted it since the caller looked (so a delete reports only what it deleted)."""
        if memory_ids:
            graph, content = self.vocab.graph(scope), self.vocab.predicate("content")
            found = {mid for mid, _ in self._by_id(scope, list(memory_ids), lambda values: (
                f"SELECT ?m WHERE {{ VALUES ?m {{ {values} }} GRAPH {graph} {{ ?m {content} ?c }} }}"), ("m",))}
            for memory_id in memory_ids:
                if memory_id not in found:
                    raise VersionConflictError(memory_id, 1, 0)

    def _claim(self, scope: Scope, memory_ids: Sequence[str]) -> "_Claim":
        """Claim memories for one write: the linearization point of writes to a shared store.

        SPARQL servers run concurrent updates on snapshots without conflict detection, and offer no
        compare-and-set; what they do offer is a linearizable insert and read. So each writer inserts a claim
        triple (``agentmem:claim "<expiry> <token>"`` on ``{ns}:claim:{scope}:{id}``, in the log graph), then
        reads every claim on those memories: it goes ahead only when no other live claim is there, else it
        withdraws and tries again after a random wait. Two writers can never both see only their own claim (the
        later reader sees the earlier insert), so at most one holds a memory at a time. A claim is released in
        the same request as the write; one whose writer died expires after :data:`CLAIM_LEASE` seconds."""
        if not memory_ids:
            return _Claim((), ())
        g, p_claim = self.codec.log_graph, self.vocab.predicate("claim")
        subjects = [NamedNode(f"{self.vocab.ns}:claim:{scope.key}:{i}") for i in dict.fromkeys(memory_ids)]
        chunks = [subjects[i:i + IDS_PER_READ] for i in range(0, len(subjects), IDS_PER_READ)]
        lease = max(CLAIM_LEASE, self.endpoint.timeout + 5)
        deadline = time.monotonic() + lease
        attempt = 0
        while True:
            now = _stamp(utcnow())
            mine = Literal(f"{_stamp(utcnow() + timedelta(seconds=lease))} {os.urandom(8).hex()}")
            claims = [Quad(s, p_claim, mine, g) for s in subjects]
            release = tuple(f"DELETE DATA {{ GRAPH {g} {{ {self.codec.triples(claims[i:i + IDS_PER_READ])} }} }}"
                            for i in range(0, len(claims), IDS_PER_READ))
            self._update(self.codec.insert_data(claims, IDS_PER_READ), "a claim")
            others = [(row["s"], row["c"]) for chunk in chunks for row in self._select(
                f"SELECT ?s ?c WHERE {{ VALUES ?s {{ {' '.join(str(s) for s in chunk)} }} GRAPH {g} {{ "
                f"?s {p_claim} ?c }} }}", ("s", "c")) if row["c"].value != mine.value]
            stale = [Quad(s, p_claim, c, g) for s, c in others if c.value.split(" ", 1)[0] < now]
            if stale:  # claims of writers that died holding them
                self._update([f"DELETE DATA {{ GRAPH {g} {{ {self.codec.triples(stale[i:i + IDS_PER_READ])} }} }}"
                              for i in range(0, len(stale), IDS_PER_READ)], "the removal of expired claims")
            if len(others) == len(stale):
                return _Claim(subjects, release)
            self._update(list(release), "a claim's withdrawal")
            if time.monotonic() > deadline:
                raise StoreError(f"memories of {scope.label} stayed claimed by another Cortex process for "
                                 f"{lease:.0f} s on the SPARQL server at {self.location}; try again")
            attempt += 1
            time.sleep(min(0.5, 0.005 * 2 ** attempt) * (0.5 + random.random()))

    def _release(self, claim: "_Claim") -> None:
        """Withdraw a claim this process still holds (the write did not happen)."""
        if claim.release:
            try:
                self._update(list(claim.release), "a claim's withdrawal")
            except StoreError as exc:  # it expires by itself
                log.warning("%s", exc)

    _IGNORED = ("usage_count", "last_used_at")

    def _holds(self, scope: Scope, new: Memory, pairs: Sequence[tuple[Any, Any]]) -> bool:
        """Whether the memory's stored triples are exactly ``new``'s fields (uses aside): a replacement that lost
        a race to another writer's, or applied beside it, does not (two values of a field, or other values)."""
        single = {node.value for f, node in self.codec.fields}
        counts: dict[str, int] = {}
        for p, _ in pairs:
            if p.value in single:
                counts[p.value] = counts.get(p.value, 0) + 1
        if not pairs or any(n > 1 for n in counts.values()):
            return False
        got = self.codec.decode(scope, new.id, ((p.value, o.value) for p, o in pairs if p != self.codec.p_used))
        return got is not None and got.model_dump(exclude=set(self._IGNORED)) == \
            new.model_dump(exclude=set(self._IGNORED))

    def _replace_ops(self, scope: Scope, old: Memory, new: Memory, archive: bool,
                     pairs: Sequence[tuple[Any, Any]]) -> list[str]:
        """Replace ``old``'s triples (``pairs``: as the server holds them, read under this writer's claim) by
        ``new``'s: exactly the difference, as ``DELETE DATA`` and ``INSERT DATA`` (no pattern for the server to
        match: Virtuoso's plan for a conditional ``DELETE/INSERT ... WHERE`` stopped matching anything once a
        graph held ~150 updated memories, silently). Its use triples, stored count and last use and its
        provenance links are kept (touches that race the update are never lost)."""
        g, m = self.vocab.graph(scope), self.vocab.memory(scope, old.id)
        uc, lu = self.vocab.predicate("usageCount"), self.vocab.predicate("lastUsedAt")
        wanted = [q for q in self.codec.quads(scope, new) if q.predicate not in (uc, lu)]
        wanted += [Quad(m, p, o, g) for p, o in pairs if p in (uc, lu) and (p != uc or new.usage_count == old.usage_count)]
        if new.usage_count != old.usage_count:
            # a deliberate change of the count (a merge sums its memories', an undo restores it): the stored count
            # moves by as much, the use triples (touches racing it) stay counted on top
            stored = next((int(o.value) for p, o in pairs if p == uc), 0)
            wanted.append(Quad(m, uc, integer(max(0, stored + new.usage_count - old.usage_count)), g))
        have, want = {(p, o) for p, o in pairs}, {(q.predicate, q.object) for q in wanted}
        removes = [Quad(m, p, o, g) for p, o in pairs if p not in self.codec.kept and (p, o) not in want]
        inserts = [q for q in wanted if (q.predicate, q.object) not in have]
        if archive:
            inserts += self.codec.version_quads(scope, old)
        ops = [f"DELETE DATA {{ GRAPH {g} {{ {self.codec.triples(removes)} }} }}"] if removes else []
        return ops + (self.codec.insert_data(inserts, MEMORIES_PER_OPERATION * 10) if inserts else [])

    def versions(self, scope: Scope, memory_id: str) -> list[Memory]:
        by_version: dict[str, list[tuple[str, str]]] = {}
        for row in self._select(self.codec.versions_query(scope, memory_id), ("v", "p", "o")):
            by_version.setdefault(row["v"].value, []).append((row["p"].value, row["o"].value))
        found = [self.codec.decode(scope, memory_id, pairs) for pairs in by_version.values()]
        return sorted((m for m in found if m is not None), key=lambda m: m.version)

    def touch(self, scope: Scope, memory_ids: Sequence[str], now: datetime) -> Change:
        g = self.vocab.graph(scope)
        rows = " ".join(f"({self.vocab.memory(scope, i)} {self.codec.use_literal(now, os.urandom(8).hex())})"
                        for i in memory_ids)
        op = (f"INSERT {{ GRAPH {g} {{ ?m {self.codec.p_used} ?u }} }} WHERE {{ VALUES (?m ?u) {{ {rows} }} "
              f"GRAPH {g} {{ ?m {self.vocab.predicate('content')} ?c }} }}")
        return self._change(scope, memory_ids, [op], "a touch", texts_stay=True)

    def delete(self, scope: Scope, memory_ids: Sequence[str]) -> Change:
        claim = self._claim(scope, memory_ids)  # never beside a write of the same memories
        try:
            self._require_existing(scope, memory_ids)
            change = self._change(scope, memory_ids, [*self.codec.delete_operations(scope, memory_ids,
                                                                                   DELETES_PER_OPERATION),
                                                      *claim.release], "a delete")
            claim = claim.released()
        finally:
            self._release(claim)
        return change

    def compact(self, scope: Scope, below: int) -> None:
        self._update([self.codec.compact_update(scope, below)], "a log compaction")

    # -- reads -----------------------------------------------------------------------------------

    def get_many(self, scope: Scope, memory_ids: Sequence[str]) -> list[Memory | None]:
        # the fields, and the use triples counted by the server (a popular memory has thousands)
        graph, used = self.vocab.graph(scope), self.codec.p_used
        wanted = list(dict.fromkeys(memory_ids))
        pairs: dict[str, list[tuple[str, str]]] = {}
        uses: dict[str, tuple[int, str]] = {}

        def query(values: str) -> str:
            return (f"SELECT ?m ?p ?o ?n ?last WHERE {{ {{ VALUES ?m {{ {values} }} GRAPH {graph} {{ ?m ?p ?o }} "
                    f"FILTER(?p != {used}) }} UNION {{ SELECT ?m (COUNT(?u) AS ?n) (MAX(STR(?u)) AS ?last) WHERE {{ "
                    f"VALUES ?m {{ {values} }} GRAPH {graph} {{ ?m {used} ?u }} }} GROUP BY ?m }} }}")

        for mid, row in self._by_id(scope, wanted, query, ("m",)):
            if row.get("p") is not None:
                pairs.setdefault(mid, []).append((row["p"].value, row["o"].value))
            elif row.get("n") is not None and row.get("last") is not None:
                uses[mid] = (int(row["n"].value), row["last"].value)
        decode = self.codec.decode
        found = [decode(scope, i, pairs[i], uses.get(i)) if i in pairs else None for i in memory_ids]
        self._keep_texts(scope, [m for m in found if m is not None])
        return found

    def _keep_texts(self, scope: Scope, memories: Sequence[Memory]) -> None:
        """Remember the contents of memories just read or written."""
        self._remember_texts(scope, {m.id: m.content for m in memories})

    def _remember_texts(self, scope: Scope, texts: Mapping[str, str]) -> None:
        """Remember contents by id, valid until the log names the memory (see ``changes``); past
        :data:`CACHED_TEXTS` the cache starts again."""
        if len(self._texts) + len(texts) > CACHED_TEXTS:
            self._texts.clear()
        self._texts.update(((scope, i), text) for i, text in list(texts.items())[:CACHED_TEXTS])

    def contents(self, scope: Scope, memory_ids: Sequence[str]) -> list[str | None]:
        graph, predicate = self.vocab.graph(scope), self.vocab.predicate("content")
        texts = self._texts
        missing = [i for i in dict.fromkeys(memory_ids) if (scope, i) not in texts]
        found = {mid: row["c"].value for mid, row in self._by_id(
            scope, missing, lambda values: f"SELECT ?m ?c WHERE {{ VALUES ?m {{ {values} }} GRAPH {graph} {{ "
                                           f"?m {predicate} ?c }} }}", ("m", "c"))}
        self._remember_texts(scope, found)
        return [found[i] if i in found else texts.get((scope, i)) for i in memory_ids]

    def iter_memories(self, scope: Scope) -> Iterator[Memory]:
        by_subject: dict[str, list[tuple[str, str]]] = {}
        for t in self._whole_graph(self.vocab.graph(scope), scope):
            if isinstance(t.subject, NamedNode):
                value = str(t.object) if isinstance(t.object, ox.Triple) else t.object.value
                by_subject.setdefault(t.subject.value, []).append((t.predicate.value, value))
        memory_id, decode = self.vocab.memory_id, self.codec.decode
        scanned: dict[str, str] = {}
        for subject, pairs in by_subject.items():
            mid = memory_id(scope, subject)
            if mid is not None:
                memory = decode(scope, mid, pairs)
                if memory is not None:
                    scanned[mid] = memory.content  # a rebuild's scan: recall's hits cost no round trip
                    yield memory
        self._remember_texts(scope, scanned)

    def last_change(self, scope: Scope) -> Change | None:
        rows = self._select(self.codec.last_change_query(scope))
        if not rows:
            return None
        self._seen(scope, int(rows[0]["s"].value))
        return Change(int(rows[0]["s"].value), rows[0]["t"].value, None)

    def change(self, scope: Scope, seq: int) -> Change | None:
        rows = self._select(self.codec.change_query(scope, seq))
        return Change(seq, rows[0]["t"].value, None) if rows else None

    def changes(self, scope: Scope, after: int, upto: int | None = None) -> list[Change]:
        rows = self._select(self.codec.changes_query(scope, after, upto), ("r", "s", "p", "o"))
        return self._read_changes(scope, rows)

    def _read_changes(self, scope: Scope, rows: list[dict[str, Any]]) -> list[Change]:
        found = self.codec.read_changes((r["r"].value, r["s"].value, r["p"].value, r["o"].value) for r in rows)
        if found:
            self._seen(scope, found[-1].seq)
        for change in found:
            if change.ids is None:
                self._texts.clear()
            else:
                self._drop_texts(scope, change.ids)
        return found

    def _drop_texts(self, scope: Scope, memory_ids: Sequence[str]) -> None:
        for memory_id in memory_ids:
            self._texts.pop((scope, memory_id), None)

    def _seen(self, scope: Scope, seq: int) -> None:
        if seq > self._hints.get(scope, 0):
            self._hints[scope] = seq

    def log_heads(self, scopes: Sequence[Scope]) -> dict[Scope, list[Change]]:
        found: dict[Scope, list[Change]] = {scope: [] for scope in scopes}
        values: dict[Scope, set[str]] = {scope: set() for scope in scopes}
        by_head = {self.codec.head_iri(scope).value: scope for scope in scopes}
        if scopes:
            for row in self._select(self.codec.heads_query(scopes), ("h", "v")):
                scope = by_head.get(row["h"].value)
                seq, _, token = row["v"].value.partition(" ")
                if scope is not None and seq.isdigit() and token:
                    found[scope].append(Change(int(seq), token, None))
                    values[scope].add(row["v"].value)
                    self._seen(scope, int(seq))
        self._heads.update(values)
        return found

    def records(self, scope: Scope, tokens: Sequence[str]) -> list[Change]:
        if not tokens:
            return []
        rows = self._select(self.codec.records_query(scope, tokens), ("r", "s", "p", "o"))
        return self._read_changes(scope, rows)

    def count(self, scope: Scope) -> int:
        return int(self._select(self.codec.count_query(scope))[0]["n"].value)

    def find_content(self, scope: Scope, content: str, project: str) -> list[str]:
        g = self.vocab.graph(scope)
        content_p = self.vocab.predicate("content")
        rows = self._select(f"SELECT ?m WHERE {{ GRAPH {g} {{ ?m {content_p} {Literal(content)} ; "
                            f"{self.vocab.predicate('project')} {Literal(project)} }} }}")
        ids = (self.vocab.memory_id(scope, row["m"].value) for row in rows)
        return [i for i in ids if i is not None]

    def scopes(self) -> list[Scope]:
        rows = self._select(f"SELECT DISTINCT ?g WHERE {{ GRAPH ?g {{ ?m a {self.vocab.memory_class} }} }}")
        found = (self.vocab.scope_of_graph(row["g"].value) for row in rows if isinstance(row["g"], NamedNode))
        return sorted({s for s in found if s is not None})

    def query(self, sparql: str, substitutions: Mapping[str, Any] | None = None, **dataset: Any) -> Any:
        if substitutions:
            raise InvalidInputError("substitutions", "a remote store takes bindings as a VALUES clause of the query "
                                                     "(sparql.prepare writes them)")
        text = sparql
        params: dict[str, list[str]] = {}
        if dataset.get("use_default_graph_as_union"):  # every graph, and their union as the default graph
            scopes = self.scopes()
            graphs = [g.value for s in scopes for g in (self.vocab.graph(s), self.vocab.prov_graph(s))] \
                + [self.codec.log_graph.value]
            params["default-graph-uri"] = params["named-graph-uri"] = graphs
        else:
            default = dataset.get("default_graph")
            if default is not None:
                params["default-graph-uri"] = [g.value for g in default if isinstance(g, NamedNode)] \
                    or [f"{self.vocab.ns}:graph:none"]
            named = dataset.get("named_graphs")
            if named is not None:
                params["named-graph-uri"] = [g.value for g in named] or [f"{self.vocab.ns}:graph:none"]
        graph = query_form(sparql) in ("CONSTRUCT", "DESCRIBE")
        response = self._client_query(text, params, graph)
        media = response.headers.get("content-type", "").split(";")[0].strip()
        if media in ("application/sparql-results+json", "application/json"):
            try:  # read whole once here, so that the caller's reading cannot fail on the server's document
                parsed = ox.parse_query_results(response.content, ox.QueryResultsFormat.JSON)
                if isinstance(parsed, ox.QuerySolutions):
                    for _ in parsed:
                        pass
                return ox.parse_query_results(response.content, ox.QueryResultsFormat.JSON)
            except SyntaxError as exc:
                raise StoreError(f"the SPARQL server at {self.location} sent unreadable results: {exc}") from None
        if graph:
            return iter(self._parse_graph(response))
        raise StoreError(f"the SPARQL server at {self.location} answered a query with {media or 'no media type'}, "
                         f"not SPARQL results")

    def confines_queries(self) -> bool:
        """Whether the server runs a query on the dataset it names (``FROM``/``FROM NAMED`` in its text and the
        protocol's ``default-graph-uri``/``named-graph-uri``) rather than on every graph: asked once, by a query
        whose dataset is the log graph looking for a triple kept in another graph for the question."""
        if self._confines is None:
            probe, p_probe = NamedNode(f"{self.vocab.ns}:log:probe"), self.vocab.predicate("probe")
            inside, outside = self.codec.log_graph, NamedNode(f"{self.vocab.ns}:graph:probe")
            if not self._select(f"ASK {{ GRAPH {outside} {{ {probe} {p_probe} ?o }} }}")[0]["boolean"]:
                # the dataset's graph must exist (rdflib's engine fails on a FROM of an unknown graph)
                self._update([f"INSERT DATA {{ GRAPH {inside} {{ {probe} {p_probe} {Literal('inside')} }} "
                              f"GRAPH {outside} {{ {probe} {p_probe} {Literal('outside')} }} }}"], "the dataset probe")
            text = (f"ASK\nFROM\n{inside}\nFROM\nNAMED\n{inside}\nWHERE\n{{ {{ {probe} {p_probe} "
                    f"{Literal('outside')} }} UNION {{ GRAPH ?g {{ {probe} {p_probe} {Literal('outside')} }} }} }}\n")
            answer = self._client_query(text, {"default-graph-uri": [inside.value],
                                               "named-graph-uri": [inside.value]}, False)
            try:
                seen = ox.parse_query_results(answer.content, ox.QueryResultsFormat.JSON)
            except SyntaxError as exc:
                raise StoreError(f"the SPARQL server at {self.location} sent unreadable results: {exc}") from None
            self._confines = not bool(seen)
            if not self._confines:
                log.warning("the SPARQL server at %s ignores the dataset a query names: agents' SPARQL queries are "
                            "refused on this store", self.location)
        return self._confines

    def _client_query(self, text: str, params: Mapping[str, list[str]], graph: bool) -> httpx.Response:
        # one kind of answer asked for: Virtuoso answers a CONSTRUCT in JSON results when JSON is acceptable
        accept = "application/n-triples, text/turtle;q=0.8" if graph else JSON_RESULTS
        try:
            return self._send(self.endpoint.query_url, data={"query": text, **params}, headers={"Accept": accept},
                              idempotent=True, what="a query")
        except PartialAnswerError:
            raise QueryTimeoutError(self.endpoint.timeout) from None
        except StoreError as exc:
            if "(HTTP 400)" in str(exc):
                raise InvalidInputError("query", f"was refused by the SPARQL server: {exc}") from None
            raise


def query_form(text: str) -> str | None:
    """SELECT, ASK, CONSTRUCT or DESCRIBE: the first keyword of a query as :func:`cortex.sparql.prepare` writes it
    (one token a line, after its BASE declarations)."""
    lines = text.split("\n")
    i = 0
    while i < len(lines) and lines[i] == "BASE":
        i += 2
    return lines[i] if i < len(lines) and lines[i] in ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE") else None


__all__ = ["Endpoint", "RemoteStore"]
