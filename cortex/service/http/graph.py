"""The routes of the graph (:mod:`cortex.api.operations`, domain ``graph``): RDF export and import, other memory
systems' files, the SHACL check of the store, and SPARQL (the protocol's POST operation and its GET twin)."""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from typing import Annotated, Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from cortex import jsonsafe, sparql, transfer
from cortex.core import Cortex
from cortex.errors import AgentNotFoundError, InvalidInputError
from cortex.model import ImportReport
from cortex.service.auth import Principal
from cortex.service.guard import SPARQL_SLOTS
from cortex.service.http.bodies import bounded
from cortex.service.http.errors import error_response, protocol_error
from cortex.sparql import media
from cortex.service.http.routing import Caller, Cx, operation, scoped

router = APIRouter()

#: The format hints of other endpoints (SPARQLWrapper sends all three), read in this order.
_FORMAT_HINTS = ("format", "output", "results")
#: The SPARQL 1.1 protocol's dataset parameters (each may repeat).
_SPARQL_LISTS = ("default-graph-uri", "named-graph-uri")
#: The parameters of the SPARQL route, whichever way they are sent.
_SPARQL_PARAMETERS = {"query", "agent", "limit", "timeout", *_FORMAT_HINTS, *_SPARQL_LISTS}
#: What rdflib's ``Dataset`` names its default graph (rdflib.graph.DATASET_DEFAULT_GRAPH_ID).
_RDFLIB_DEFAULT = "urn:x-rdflib:default"


@operation(router, "export")
def export(caller: Caller, cx: Cx, agent: str | None = None, team: str | None = None, all: bool = False,
           format: str = "trig") -> Response:
    """The graph of one agent (`agent=`), one team (`team=`) or every scope (`all=true`) as RDF: `trig`
    (default), `nquads`, `turtle` (one scope) or `jsonld`; lossless (docs/export.md). An agent token may
    export its own agent; the rest needs an admin token."""
    caller.require_export(agent, cx.resolve_agent)
    out = io.BytesIO()
    count = cx.export(out, agent=agent, team=team, all=all, format=format)
    media = transfer.MEDIA_TYPES[transfer.format_of(format)]
    return Response(out.getvalue(), media_type=media, headers={"Cortex-Quads": str(count)})


@operation(router, "import_rdf")
async def import_rdf(request: Request, caller: Caller, cx: Cx, format: str | None = None, agent: str | None = None,
                     team: str | None = None) -> dict[str, Any]:
    """Import an export (the body; `format=` or the Content-Type names its format): checked whole first,
    then written in one transaction, or nothing with a report naming each focus node, property and problem
    (422). Admin only."""
    caller.require_admin("import")
    kinds = {media: name for name, media in transfer.MEDIA_TYPES.items()}
    fmt = format or kinds.get(request.headers.get("content-type", "").split(";")[0].strip().lower())
    if fmt is None:
        raise InvalidInputError("format", "give format= (trig, nquads, turtle, jsonld) or its Content-Type")
    body = await request.body()
    counts = await run_in_threadpool(cx.import_rdf, body, format=fmt, agent=agent, team=team)
    return {"imported": counts}


@operation(router, "import_from")
async def import_from(system: str, request: Request, caller: Caller, cx: Cx, agent: str, dry_run: bool = False,
                      name: Annotated[str | None, Query(max_length=1000)] = None) -> ImportReport:
    """Import another memory system's file (the body) into the agent's memory (docs/capture.md, "Importers"):
    `beads` (knowledge.jsonl, its archive, bd export), `mem0` (get_all's JSON), `mcp-memory` (memory.jsonl),
    `claude` (CLAUDE.md, MEMORY.md or a topic file of the memory directory), `codex` (MEMORY.md,
    memory_summary.md or a skill's SKILL.md of Codex's memory folder). `name=`: the file's name (its path in the
    directory: `skills/x/SKILL.md`), kept in the memories' origin. The server reads no path: a directory is sent a file a request (what the client
    does). Idempotent, the file checked whole then written in atomic batches of 1,000 memories; `dry_run=true` writes nothing. The report
    lists what was imported, skipped (already there) and failed (file and line, why)."""
    body = await request.body()
    return await run_in_threadpool(cx.import_from, system, body, agent=scoped(caller, agent), dry_run=dry_run,
                                   name=name)


@operation(router, "export_beads")
def export_beads(agent: str, caller: Caller, cx: Cx) -> Response:
    """The agent's current memories as a Beads knowledge log (JSONL, oldest first, one line a key; docs/capture.md,
    "Beads"). `cortex export beads DIR` writes it to a directory, merged with what is there and rotated."""
    from cortex.importers.beads import encode

    lines = cx.beads_lines(scoped(caller, agent))
    return Response("".join(f"{encode(line)}\n" for line in lines), media_type="application/x-ndjson",
                    headers={"Cortex-Lines": str(len(lines))})


@operation(router, "validate_store")
def validate_store(caller: Caller, cx: Cx, agent: str | None = None, team: str | None = None) -> dict[str, Any]:
    """Check the store (or one agent's or team's graph) against the SHACL shapes of what Cortex writes:
    `{"conforms": bool, "violations": [{focus, path, message}]}`. Admin only."""
    caller.require_admin("validate-store")
    found = cx.validate_store(agent=agent, team=team)
    return {"conforms": not found,
            "violations": [{"focus": v.focus, "path": v.path, "message": v.message} for v in found]}


@operation(router, "sparql_get")
async def sparql_get(request: Request, caller: Caller, cx: Cx) -> Response:
    """A read-only SPARQL query (`query=`), the W3C SPARQL 1.1 protocol: scoped to the graphs an agent token's
    agent reads (an admin token sees the whole store, or names `agent=`); `default-graph-uri`/`named-graph-uri`
    set its dataset (within what the token reads); results by `Accept` (q-values honoured: SPARQL JSON/XML/CSV/TSV;
    Turtle, N-Triples, RDF/XML, JSON-LD, N-Quads, TriG), or `format=` (SPARQLWrapper's `output=`/`results=`
    too), else 406; at most `limit` rows and `timeout` seconds (the server's caps). Errors: 400 for a malformed
    query or parameter, as text unless the client asked for JSON."""
    return await _sparql_request(request, caller, cx)


@operation(router, "sparql")
async def sparql_post(request: Request, caller: Caller, cx: Cx) -> Response:
    """The same query as GET, in the body: `application/sparql-query` (other parameters in the URL), a form
    (`query=`), or JSON `{query, agent, limit, timeout, default-graph-uri, named-graph-uri}` (answered as
    `{head, results|boolean, truncated}` or `{ntriples, truncated}` when the client accepts application/json)."""
    return await _sparql_request(request, caller, cx)


def _collect(params: dict[str, Any], items: Iterable[tuple[str, Any]]) -> None:
    """Add ``items`` to ``params``: the dataset parameters as lists (they repeat), the others their last value."""
    for key, value in items:
        if key in _SPARQL_LISTS:
            values = value if isinstance(value, list) else [value]
            params.setdefault(key, []).extend(values)
        else:
            params[key] = value


async def _sparql_parameters(request: Request) -> dict[str, Any] | Response:
    """The query's parameters: the query string's, and a POST body's (the error answer for a JSON body that
    is not JSON)."""
    params: dict[str, Any] = {}
    _collect(params, request.query_params.multi_items())
    if request.method != "POST":
        return params
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    body = await request.body()
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError("query", "the request body is not UTF-8") from None
    if kind == "application/sparql-query":
        params["query"] = text
    elif kind == "application/x-www-form-urlencoded":
        _collect(params, ((k, v) for k, vs in parse_qs(text, keep_blank_values=True).items() for v in vs))
    elif kind == "application/json":
        try:
            doc = jsonsafe.loads(text) if text else {}
        except ValueError:
            return error_response(400, ValueError("request body is not valid JSON"), "InvalidJSON")
        if not isinstance(doc, dict):
            raise InvalidInputError("body", "must be a JSON object {query, agent, limit, timeout}")
        _collect(params, doc.items())
    else:
        raise InvalidInputError("content-type", f"send the query as application/sparql-query, a form "
                                                f"(query=...) or JSON, not {kind or 'nothing'}")
    return params


def _dataset(params: Mapping[str, Any], name: str) -> list[str] | None:
    """The IRIs of a dataset parameter (None: not given). rdflib's ``Dataset`` over a ``SPARQLStore`` names
    its own default graph, ``urn:x-rdflib:default``, where it means the service's: that one is not a graph."""
    values = params.get(name)
    if values is None:
        return None
    if not all(isinstance(v, str) for v in values):
        raise InvalidInputError(name, "must be IRIs (strings)")
    if name == "default-graph-uri" and values and all(v == _RDFLIB_DEFAULT for v in values):
        return None
    return list(values)


def _format_of(params: Mapping[str, Any], accept: str | None, kind: str) -> str:
    """The format to answer a result of ``kind`` in: the first format hint that names one of that kind, else
    the best of ``Accept``, else (no preference) SPARQL JSON or Turtle; :class:`NotAcceptable` when nothing
    the client accepts is served."""
    for key in _FORMAT_HINTS:
        value = params.get(key)
        if value is None or value == "":
            continue
        if not isinstance(value, str):
            raise InvalidInputError(key, "must be a format's name or media type")
        name = media.hint(value, kind)
        if name is not None:
            return name
        if media.known_hint(value):  # a format of the other kind (CSV for a graph)
            raise NotAcceptable(kind, f"{key}={value}")
        if key == "format":
            raise InvalidInputError("format", f"unknown format {value[:100]!r}; use one of "
                                              f"{', '.join(sparql.FORMATS)}")
    if not accept or not accept.strip():
        return "turtle" if kind == "graph" else "json"
    name = media.best(accept, (kind,))
    if name is None:
        raise NotAcceptable(kind, f"Accept: {accept[:200]}")
    return name


class NotAcceptable(Exception):
    """Nothing the client accepts is served for this kind of result (answered 406, naming what is served)."""

    def __init__(self, kind: str, asked: str) -> None:
        self.kind = kind
        super().__init__(f"{asked} names no format this endpoint serves for a "
                         f"{'CONSTRUCT/DESCRIBE' if kind == 'graph' else 'SELECT/ASK'} result; it serves "
                         f"{', '.join(media.served(kind))}")


async def _sparql_request(request: Request, caller: Principal, cx: Cortex) -> Response:
    """The SPARQL protocol's query operation (GET ?query=, POST form query=, POST
    application/sparql-query, or a JSON body {query, agent, limit, timeout})."""
    params = await _sparql_parameters(request)
    if isinstance(params, Response):
        return params
    unknown = sorted(set(params) - _SPARQL_PARAMETERS)
    if unknown:
        raise InvalidInputError(unknown[0], f"unknown parameter; the query route takes "
                                            f"{', '.join(sorted(_SPARQL_PARAMETERS))}")
    query = params.get("query")
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputError("query", "give one SPARQL query (query=)")
    agent = caller.agent if caller.agent is not None else params.get("agent") or None
    if caller.agent is not None and params.get("agent") not in (None, "", caller.agent):
        raise AgentNotFoundError(str(params["agent"]))  # 404, as for any agent the token may not use
    limit = bounded(params.get("limit"), "limit", sparql.configured_limit(), int)
    timeout = bounded(params.get("timeout"), "timeout", sparql.configured_timeout(), float)
    default_graphs, named_graphs = _dataset(params, "default-graph-uri"), _dataset(params, "named-graph-uri")
    with SPARQL_SLOTS.hold(caller):
        result = await run_in_threadpool(cx.sparql, query, agent=agent, limit=limit, timeout=timeout,
                                         default_graphs=default_graphs, named_graphs=named_graphs)
    headers = {"Cortex-Truncated": "true" if result.truncated else "false"}
    accept = request.headers.get("accept")
    hinted = any(params.get(key) not in (None, "") for key in _FORMAT_HINTS)
    if not hinted and (not accept or accept.strip() == "application/json"):
        return JSONResponse(result.to_json(), headers=headers)  # Cortex's clients: the result and truncated
    kind = "graph" if result.kind == "graph" else "solutions"
    try:
        name = _format_of(params, accept, kind)
    except NotAcceptable as refused:
        return protocol_error(request, 406, refused, "NotAcceptable")
    return Response(result.serialize(name), media_type=sparql.media_type(name), headers=headers)
