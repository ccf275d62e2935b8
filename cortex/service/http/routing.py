"""What every router of the HTTP API shares: the dependencies a route takes (the facade and the services
:func:`cortex.service.http.create_app` puts on ``app.state``, the caller from its bearer token), the check that
the caller may use an agent, and the registration of an endpoint at its route in the table of operations
(:mod:`cortex.api.operations`), so that no router writes a path."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, Request

from cortex.api.operations import route
from cortex.core import Cortex
from cortex.errors import AgentNotFoundError
from cortex.service.auth import Principal
from cortex.service.http.errors import ERROR_RESPONSES
from cortex.service.queue import CaptureQueue

Endpoint = TypeVar("Endpoint", bound=Callable[..., Any])


def _principal(request: Request) -> Principal:
    principal: Principal = request.app.state.authenticate_request(dict(request.scope["headers"]))
    return principal


async def _cortex(request: Request) -> Cortex:
    cx: Cortex = request.app.state.cx
    return cx


async def _capture_queue(request: Request) -> CaptureQueue:
    queue: CaptureQueue = request.app.state.capture_queue
    return queue


#: The caller of a route, from its bearer token.
Caller = Annotated[Principal, Depends(_principal)]
#: The Cortex the app serves (``app.state.cx``).
Cx = Annotated[Cortex, Depends(_cortex)]
#: The server's capture queue (``app.state.capture_queue``): work that takes a model's seconds, run after answering.
Queue = Annotated[CaptureQueue, Depends(_capture_queue)]


def scoped(caller: Principal, agent: str) -> str:
    """``agent``, once the caller may use it (else 404, never a hint that the agent exists)."""
    if not caller.may_use(agent):
        raise AgentNotFoundError(agent, token=True)
    return agent


def operation(router: APIRouter, name: str, **settings: Any) -> Callable[[Endpoint], Endpoint]:
    """Register the decorated endpoint on ``router`` at the route of operation (or service route) ``name``: its
    method, path, success status and tag come from the table; ``settings`` are FastAPI's own (``response_model``,
    ``responses``). OpenAPI names the operation after the endpoint function."""
    where = route(name)
    responses = {**ERROR_RESPONSES, **settings.pop("responses", {})}

    def register(endpoint: Endpoint) -> Endpoint:
        router.add_api_route(where.full_path, endpoint, methods=[where.method], status_code=where.status,
                             tags=[where.tag], responses=responses, **settings)
        return endpoint

    return register
