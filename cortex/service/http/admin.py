"""The administration routes (:mod:`cortex.api.operations`, domain ``admin``): the store, the agents, the scopes
and the agents' derived indexes."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query

from cortex.errors import BrokenAgentError
from cortex.model import IndexStatus, SecretScan
from cortex.service.http.bodies import ScanSecretsBody
from cortex.service.http.routing import Caller, Cx, operation, scoped

router = APIRouter()


@operation(router, "info")
def info(caller: Caller, cx: Cx) -> dict[str, Any]:
    """The store's location and the embedding model."""
    return cx.info()


@operation(router, "resolve_agent")
def resolve_agent(caller: Caller, cx: Cx, name: Annotated[str, Query(max_length=200)]) -> dict[str, str | None]:
    """The declared agent with memory that a coding agent's name stands for (itself or an alias), or null."""
    try:
        resolved = cx.resolve_agent(name)
    except BrokenAgentError as exc:
        if caller.may_use(exc.agent):
            raise
        resolved = None  # never a hint of a definition the caller may not use
    return {"agent": resolved if resolved is not None and caller.may_use(resolved) else None}


@operation(router, "describe_agents")
def list_agents(caller: Caller, cx: Cx) -> list[dict[str, Any]]:
    """The declared agents the caller may use, with their memory counts."""
    return [a for a in cx.describe_agents() if caller.may_use(a["name"])]


@operation(router, "index_status")
def index_status(agent: str, caller: Caller, cx: Cx) -> IndexStatus:
    """What the agent's derived index holds, against the store."""
    return cx.index_status(scoped(caller, agent))


@operation(router, "scan_secrets")
def scan_secrets(caller: Caller, cx: Cx,
                 body: Annotated[ScanSecretsBody, Body()] = ScanSecretsBody()) -> SecretScan:
    """Scan the store (or one agent's own scope) for secrets in every version of every memory and the scopes'
    other records; with ``redact``, replace them by placeholders (one atomic write per scope, recorded in
    provenance; the indexes rebuilt). Admin only: it reads every scope."""
    caller.require_admin("scanning the store for secrets")
    return cx.scan_secrets(body.agent, redact=body.redact)


@operation(router, "stored_scopes")
def stored_scopes(caller: Caller, cx: Cx) -> list[str]:
    """Every scope with memories in the store (agent names, team:NAME, swarm); admin only."""
    caller.require_admin("listing every scope")
    return cx.stored_scopes()


@operation(router, "reindex")
def reindex(agent: str, caller: Caller, cx: Cx, force: bool = False) -> dict[str, int]:
    scoped(caller, agent)
    caller.require_admin("reindex")
    return cx.reindex(agent, force=force)
