"""What sessions added and changed, as provenance records it: the PROV-O activities of a scope that name a session
(``agentmem:session``). An activity without ``agentmem:action`` generated new memories (:func:`cortex.listing.
made_in_session`); one with an action (update, validate, supersede, prune, redact, undo) changed or deleted
existing ones (``prov:generated`` their new state, ``prov:invalidated`` what it deleted), with the agent that did it
(``prov:wasAssociatedWith``) and when (``prov:startedAtTime``).

Session ids are those of the coding agent: a main session and its subagents share one, so in a shared scope
(a team's, the swarm) only what the agent itself wrote counts as its session's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from pyoxigraph import Literal, NamedNode

from cortex.model import Scope
from cortex.vocab import parse_date_time

if TYPE_CHECKING:
    from cortex.memories import MemoryRepository

_PROV = "http://www.w3.org/ns/prov#"


@dataclass(frozen=True)
class Change:
    """One change of an existing memory in a session: what (``action``), of which memory, when, by whom."""

    scope: Scope
    memory_id: str
    action: str
    at: datetime | None
    by: str | None


@dataclass
class Diff:
    """What one session did in the scopes read: the (scope, id) of the memories it created, and its changes."""

    created: list[tuple[Scope, str]] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)


def diffs(repo: MemoryRepository, scopes: Sequence[Scope], agent: str, sessions: Sequence[str]) -> dict[str, Diff]:
    """The :class:`Diff` of each of ``sessions`` (of ``agent``) over ``scopes``: one query a scope."""
    vocab = repo.store.vocab
    p_session, p_action = vocab.predicate("session"), vocab.predicate("action")
    p_generated, p_invalidated = NamedNode(_PROV + "generated"), NamedNode(_PROV + "invalidated")
    p_started, p_associated = NamedNode(_PROV + "startedAtTime"), NamedNode(_PROV + "wasAssociatedWith")
    out = {s: Diff() for s in sessions}
    if not sessions:
        return out
    me = vocab.agent(agent).value
    values = " ".join(str(Literal(s)) for s in sessions)
    wanted = " ".join(str(p) for p in (p_action, p_generated, p_invalidated, p_started, p_associated))
    for scope in scopes:
        rows = repo.store.query(f"SELECT ?s ?a ?p ?o WHERE {{ VALUES ?s {{ {values} }} VALUES ?p {{ {wanted} }} "
                                f"GRAPH {vocab.prov_graph(scope)} {{ ?a {p_session} ?s ; ?p ?o }} }}")
        found: dict[tuple[str, str], dict[str, list[str]]] = {}
        for row in rows:
            fields = found.setdefault((row["s"].value, row["a"].value), {})
            fields.setdefault(row["p"].value, []).append(row["o"].value)
        created: dict[str, list[str]] = {}
        for (session, _), fields in sorted(found.items(), key=lambda kv: kv[1].get(p_started.value, [""])[0]):
            memories = [i for iri in fields.get(p_generated.value, []) + fields.get(p_invalidated.value, [])
                        if (i := vocab.memory_id(scope, iri)) is not None]
            action = fields.get(p_action.value, [None])[0]
            if action is None:
                created.setdefault(session, []).extend(memories)
                continue
            by = fields.get(p_associated.value, [None])[0]
            if scope.kind != "agent" and by != me:
                continue  # another agent's change in a shared scope (a subagent of the same session)
            at = fields.get(p_started.value, [None])[0]
            for memory_id in memories:
                out[session].changes.append(Change(scope, memory_id, action, parse_date_time(at) if at else None,
                                                   by.rsplit(":", 1)[-1] if by else None))
        if scope.kind != "agent" and created:  # a shared scope's creations: the agent's own only
            mine = {m.id for m in repo.load(scope, [i for ids in created.values() for i in ids]) if m.author == agent}
            created = {s: [i for i in ids if i in mine] for s, ids in created.items()}
        for session, ids in created.items():
            out[session].created.extend((scope, i) for i in dict.fromkeys(ids))
    return out


__all__ = ["Change", "Diff", "diffs"]
