"""The HTTP route of an operation no router serves: built from its row of the table (method, path, status, tag)
and its protocol method (:mod:`cortex.api.generic`), so that a new operation reaches the API from its row and
its method alone. The hand-written routes keep their own shapes; this one is used only where none is.

Path parameters come from the route; a GET or DELETE takes the other parameters as query parameters, any other
method as a JSON body (unknown fields refused). The caller is checked as on the hand routes: an operation of an
``agent`` is :func:`~cortex.service.http.routing.scoped` to it, one without (or with none given) needs an admin
token. The answer is the method's return value as JSON (under the row's ``key`` when it names one, as the client
reads it)."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import FastAPI, Path, Query, Response
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import FastAPIError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, create_model

from cortex import model
from cortex.api import generic
from cortex.service.auth import Principal
from cortex.service.http.errors import ERROR_RESPONSES
from cortex.service.http.routing import Caller, Cx, scoped

#: ``{name}`` parameters of a route's path.
_PATH_PARAMETER = re.compile(r"\{(\w+)\}")

#: The names the endpoint gives the caller, the facade and the body (no protocol parameter ends with "_").
_CALLER, _CX, _BODY = "caller_", "cx_", "body_"


def served(app: FastAPI) -> set[tuple[str, str]]:
    """(method, path) of every route ``app`` serves."""
    return {(method, path) for route in app.router.routes
            for method in getattr(route, "methods", None) or () if (path := getattr(route, "path", None))}


def add_routes(app: FastAPI) -> list[str]:
    """Add to ``app`` the route of every operation of the table whose route it does not serve yet; the names of
    the operations added."""
    localns = vars(model)
    have = served(app)
    added = []
    for row in generic.rows():
        if row.route is None or (row.route.method, row.route.full_path) in have:
            continue
        found = generic.signature(row.name, localns)
        if found is None:  # no protocol method: the surfaces' test names the operation
            continue
        _add_route(app, found)
        have.add((row.route.method, row.route.full_path))
        added.append(row.name)
    return added


def _add_route(app: FastAPI, signature: generic.Signature) -> None:
    row = signature.row
    assert row.route is not None
    settings: dict[str, Any] = {"methods": [row.route.method], "status_code": row.route.status,
                                "tags": [row.route.tag], "name": row.name, "operation_id": row.name,
                                "summary": row.summary, "responses": ERROR_RESPONSES}
    try:
        app.router.add_api_route(row.route.full_path, endpoint(signature), response_model=_answer_model(signature),
                                 **settings)
    except FastAPIError:  # an answer FastAPI cannot describe: served all the same, undocumented
        app.router.add_api_route(row.route.full_path, endpoint(signature), response_model=None, **settings)


def _answer_model(signature: generic.Signature) -> Any:
    """What OpenAPI documents as the answer (the endpoint answers a JSONResponse itself: never validated)."""
    if signature.row.route is not None and signature.row.route.status == 204:
        return None
    answer = signature.answer
    if signature.row.key is not None:
        field: dict[str, Any] = {signature.row.key: (answer, ...)}
        return create_model(f"{_camel(signature.row.name)}Answer", **field)
    return answer


def endpoint(signature: generic.Signature) -> Callable[..., Response]:
    """The endpoint of ``signature``'s operation: its parameters in FastAPI's terms, the caller checked, the
    protocol method called on the app's facade."""
    row = signature.row
    assert row.route is not None
    in_path = {row.path_args.get(name, name): name for name in _PATH_PARAMETER.findall(row.route.path)}
    by_name = {p.name: p for p in signature.parameters}
    parameters = [inspect.Parameter(_CALLER, inspect.Parameter.KEYWORD_ONLY, annotation=Caller),
                  inspect.Parameter(_CX, inspect.Parameter.KEYWORD_ONLY, annotation=Cx)]
    for argument, segment in in_path.items():
        hint = generic.without_none(by_name[argument].hint) if argument in by_name else str
        parameters.append(inspect.Parameter(segment, inspect.Parameter.KEYWORD_ONLY,
                                            annotation=Annotated[hint, Path()]))
    rest = [p for p in signature.parameters if p.name not in in_path]
    body = None
    if row.route.method in ("GET", "DELETE"):
        for p in rest:
            parameters.append(inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY,
                                                annotation=Annotated[p.hint, Query()], default=p.default))
    elif rest:
        body = _body_model(row.name, rest)
        required = any(p.required for p in rest)
        parameters.append(inspect.Parameter(_BODY, inspect.Parameter.KEYWORD_ONLY, annotation=body,
                                            default=inspect.Parameter.empty if required else None))
    renamed = {segment: argument for argument, segment in in_path.items()}

    def call(**given: Any) -> Response:
        caller: Principal = given.pop(_CALLER)
        cx = given.pop(_CX)
        sent: BaseModel | None = given.pop(_BODY, None)
        arguments = {renamed.get(name, name): value for name, value in given.items()}
        if sent is not None:
            arguments.update({name: getattr(sent, name) for name in sent.model_fields_set})
        _check(caller, row.name, arguments)
        answer = getattr(cx, row.name)(**arguments)
        if row.route is not None and row.route.status == 204:
            return Response(status_code=204)
        if row.key is not None:
            answer = {row.key: answer}
        return JSONResponse(jsonable_encoder(answer), status_code=row.route.status if row.route else 200)

    call.__name__ = call.__qualname__ = row.name
    call.__doc__ = signature.doc or row.summary
    call.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    return call


def _check(caller: Principal, name: str, arguments: dict[str, Any]) -> None:
    """The hand routes' rule: an operation of an agent is the agent's caller's, the rest is an admin's."""
    agent = arguments.get("agent")
    if isinstance(agent, str):
        scoped(caller, agent)
    else:
        caller.require_admin(name.replace("_", "-"))


def _body_model(name: str, parameters: list[generic.Parameter]) -> type[BaseModel]:
    """The JSON body of operation ``name``: its parameters as fields, unknown fields refused."""
    fields: dict[str, Any] = {p.name: (p.hint, ... if p.required else p.default) for p in parameters}
    return create_model(f"{_camel(name)}Body", __config__=ConfigDict(extra="forbid"), **fields)


def _camel(name: str) -> str:
    """``echo_count`` -> ``EchoCount``."""
    return "".join(word.title() for word in name.split("_"))
