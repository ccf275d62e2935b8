"""The SPARQL 1.1 protocol as a remote store speaks it: requests with bounded retries (a dropped connection, a
busy server, a transaction rolled back to break a deadlock), answers read to a bounded size, refusals as
:class:`StoreError` naming the server (never its credentials), and the sizes of requests real servers take."""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from typing import Any

import httpx
import pyoxigraph as ox

from cortex.errors import StoreError
from cortex.store.remote.answers import RESULTS_ACCEPT, solutions, triples
from cortex.store.remote.endpoint import Endpoint

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
JSON_RESULTS = "application/sparql-results+json"


def _rolled_back(response: httpx.Response) -> bool:
    """Whether the server says it rolled the request's transaction back to break a deadlock (SQL state 40001,
    as Virtuoso does under concurrent updates): then even a write is safely sent again."""
    return response.status_code >= 500 and ("40001" in response.text[:500] or "deadlock" in response.text[:500].lower())


class PartialAnswerError(StoreError):
    """The server answered 200 with part of the answer (Virtuoso past ``MaxQueryExecutionTime``)."""


class SparqlProtocol:
    """Requests to the endpoint of a remote store (a base of :class:`~cortex.store.remote.RemoteStore`)."""

    endpoint: Endpoint
    _client: httpx.Client

    @property
    def location(self) -> str:
        return self.endpoint.location

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
                              headers={"Accept": RESULTS_ACCEPT}, idempotent=True, what="a query")
        return solutions(response, required, self.location)

    def _graph(self, construct: str) -> list[ox.Triple]:
        response = self._send(self.endpoint.query_url, data={"query": construct},
                              headers={"Accept": "application/n-triples"}, idempotent=True, what="a query")
        return self._parse_graph(response)

    def _parse_graph(self, response: httpx.Response) -> list[ox.Triple]:
        return triples(response, self.location)
