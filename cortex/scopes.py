"""Shared scopes (docs/lifecycle.md): which graphs an agent reads, where it may write, and who may change a
shared memory.

* An agent reads its own scope (``agent``), the scopes of its teams (``team:{name}``) and the swarm (``swarm``).
* Writing to ``team:{name}`` needs membership; writing to the swarm needs a lead (``cortex: {lead: true}`` makes
  an agent lead of its teams and of the swarm).
* ``forget``, ``update`` and ``supersede`` of a shared memory need its author or a lead of its scope.
* Only a lead may ``inject_learning``: into the swarm, one of its teams, or one worker's own scope.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from cortex.errors import InvalidInputError, PermissionDeniedError
from cortex.model import Memory, MemoryType, Scope
from cortex.validation import check_agent_name, check_scope, check_team_name

#: What ``inject_learning`` takes as ``category`` (kept as a tag of the memory), and the memory type of each.
CATEGORY_TYPES = {"mistake-pattern": MemoryType.PATTERN, "best-practice": MemoryType.CONVENTION,
                  "codebase-knowledge": MemoryType.INSIGHT, "preference": MemoryType.CONVENTION}
CATEGORIES = tuple(CATEGORY_TYPES)


def check_category(value: object) -> str:
    """A learning's category (one of :data:`CATEGORIES`)."""
    if value not in CATEGORY_TYPES:
        raise InvalidInputError("category", f"unknown category {value!r}; use one of {', '.join(CATEGORIES)}")
    return str(value)


@dataclass(frozen=True)
class Member:
    """An agent as the scopes see it: its name, its teams, whether it leads."""

    agent: str
    teams: tuple[str, ...] = ()
    lead: bool = False
    #: the parent team of each temporary team among ``teams`` (read, not written)
    parents: tuple[tuple[str, str], ...] = ()

    @property
    def own(self) -> Scope:
        return Scope.agent(self.agent)

    def visible(self) -> tuple[Scope, ...]:
        """Every scope the agent reads: its own, its teams', their parents' (temporary teams), the swarm."""
        parents = [p for _, p in self.parents if p not in self.teams]
        return (self.own, *(Scope.team(t) for t in dict.fromkeys([*self.teams, *parents])), Scope.swarm())

    def leads(self, scope: Scope) -> bool:
        """Whether the agent is a lead of ``scope`` (its teams and the swarm, when ``lead``)."""
        return self.lead and (scope.kind == "swarm" or (scope.kind == "team" and scope.name in self.teams))

    def resolve(self, scope: str, known_teams: Iterable[str]) -> Scope:
        """The scope an agent names (``agent``, ``team:{name}``, ``swarm``) as a store scope."""
        relative = check_scope(scope)
        if relative == "agent":
            return self.own
        if relative == "swarm":
            return Scope.swarm()
        team = relative[5:]
        if team not in set(known_teams) and team not in self.teams:
            raise InvalidInputError("scope", f"unknown team {team!r}: no agent declares it in cortex: teams")
        return Scope.team(team)

    def readable(self, scope: str | None, known_teams: Iterable[str]) -> tuple[Scope, ...]:
        """The scopes a read covers: every visible one, or the one ``scope`` names (which must be visible)."""
        if scope is None:
            return self.visible()
        wanted = self.resolve(scope, known_teams)
        if wanted not in self.visible():
            raise PermissionDeniedError(f"agent {self.agent!r} is not in team {wanted.name!r}", "scope")
        return (wanted,)

    def writable(self, scope: str, known_teams: Iterable[str]) -> Scope:
        """The scope ``store`` writes to: its own, a team it is in, or the swarm for a lead."""
        target = self.resolve(scope, known_teams)
        if target.kind == "team" and target.name not in self.teams:
            raise PermissionDeniedError(f"agent {self.agent!r} is not in team {target.name!r}", "scope")
        if target.kind == "swarm" and not self.lead:
            raise PermissionDeniedError(f"only a lead may write to the swarm; agent {self.agent!r} is not one",
                                        "scope")
        return target

    def may_change(self, scope: Scope, memory: Memory, action: str) -> None:
        """Raise unless the agent may ``action`` (forget, update, supersede) ``memory`` of ``scope``."""
        if scope == self.own or (memory.author == self.agent) or self.leads(scope):
            return
        raise PermissionDeniedError(f"only its author ({memory.author!r}) or a lead of {scope.relative} may "
                                    f"{action} memory {memory.id!r}", "memory_id")


#: The tag of a team memory entry (cortex.consolidation.team): written by the team's lead (its extractor) only.
TEAM_MEMORY_TAG = "team-memory"


def check_team_memory_write(member: Member, scope: Scope, tags: Iterable[str]) -> None:
    """Raise unless ``member`` may write a memory with ``tags`` to ``scope``: an entry of a team's memory
    (tagged ``team-memory``) is written by a lead of the team only (its extractor, at a round's end)."""
    if scope.kind == "team" and TEAM_MEMORY_TAG in tags and not member.leads(scope):
        raise PermissionDeniedError(f"only the lead of team {scope.name!r} (its extractor, at the end of a round: "
                                    f"`cortex team round-end {scope.name}`) writes its team memory; agent "
                                    f"{member.agent!r} may not write a memory tagged {TEAM_MEMORY_TAG!r} there",
                                    "tags")


def injection_target(lead: Member, *, team: str | None, to: str | None, known_teams: Iterable[str],
                     declared: Iterable[str]) -> Scope:
    """Where ``inject_learning`` writes: the swarm (default), one of the lead's teams, or a worker's own scope."""
    if not lead.lead:
        raise PermissionDeniedError(f"only a lead may inject learnings; agent {lead.agent!r} is not one", "agent")
    if team is not None and to is not None:
        raise InvalidInputError("to", "give team or to, not both")
    if team is not None:
        name = check_team_name(team)
        if name not in set(known_teams) and name not in lead.teams:
            raise InvalidInputError("team", f"unknown team {name!r}: no agent declares it in cortex: teams")
        target = Scope.team(name)
        if not lead.leads(target):
            raise PermissionDeniedError(f"agent {lead.agent!r} does not lead team {team!r}", "team")
        return target
    if to is not None:
        try:
            worker = check_agent_name(to)
        except InvalidInputError as exc:
            raise InvalidInputError("to", exc.reason) from None
        if worker not in set(declared):
            raise InvalidInputError("to", f"agent {worker!r} is not declared with memory")
        return Scope.agent(worker)
    return Scope.swarm()
