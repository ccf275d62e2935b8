"""The admin domain of the facade: the declared agents, the stored scopes and the derived indexes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from cortex.app.kernel import Kernel
from cortex.model import (
    IndexStatus,
    Scope,
    SecretScan,
)
from cortex.provenance import activity as provenance_activity
from cortex.validation import (
    check_agent_name,
    check_scope,
)


class AdminOps(Kernel):
    """Agents, scopes and the derived indexes."""

    def info(self) -> dict[str, Any]:
        """The store's location and the embedding model (None without one)."""
        return {"store": self._memories.store.location, "shared": self._memories.store.shared,
                "embeddings": self.embeddings.model if self.embeddings is not None else None}

    def health(self) -> dict[str, Any]:
        """The memory engine and each memory provider's state, last error and breaker (:meth:`Engine.health
        <cortex.providers.engine.Engine.health>`), and the store's location. Never an API key."""
        self._check_open()
        return {"store": self._memories.store.location, **self.engine.health()}

    def reindex(
        self,
        agent: str,
        *,
        force: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, int]:
        """Rebuild the agent's indexes from the store: the lexical index from a full scan, then the
        vectors of every memory that has none from the current provider (all of them when the model
        changed, or with ``force``). ``progress(done, total)`` is called after each embedded batch. Returns
        ``{"memories": n, "embedded": k}``. Works on agents that are stored but not declared too; ``team:NAME``
        and ``swarm`` name a shared scope."""
        self._check_open()
        return self._memories.reindex(_named_scope(agent), force=force, progress=progress)

    def embed_missing(self, agent: str | None = None) -> int:
        """Embed the memories that have no vector of the current model (every scope of the store when ``agent``
        is None); returns how many. A server runs this once its model has loaded in the background."""
        self._check_open()
        scopes = [_named_scope(agent)] if agent is not None else self._memories.scopes()
        return sum(self._memories.embed_missing(scope) for scope in scopes)

    def scan_secrets(self, agent: str | None = None, *, redact: bool = False) -> SecretScan:
        """Scan the store (every scope, or only ``agent``'s own scope; ``team:NAME`` and ``swarm`` name a shared
        one) for secrets with the capture's redaction rules: in every memory as it is now, every earlier version
        of it and the other records of its scope (activities, consolidation runs and their undo journals, entity
        names). A dry run by default: the report says per memory and version which rules found how many. With
        ``redact``, each scope's findings are replaced by placeholders in one atomic write (recorded as an
        activity ``redact`` whose rule says how many of which rule; the secret itself is kept nowhere), then the
        scope's derived indexes are rebuilt from the redacted store (changed contents embedded again), so a run
        after a crash finishes the job; the session record's blocks and tasks (of the agent, or every agent's) are
        redacted too."""
        from cortex.capture import scan

        self._check_open()
        scopes = [_named_scope(agent)] if agent is not None else self._memories.scopes()
        report = SecretScan(redacted=redact, scopes=[s.key for s in scopes])
        total: Counter[str] = Counter()
        store, codec = self._memories.store, self._memories.codec
        for scope in scopes:
            with self._memories.lock:
                found = scan.plan(self.redactor, scope, store.iter_memories(scope), store.export(scope),
                                  store.vocab, codec)
                if redact and not found.empty:
                    with provenance_activity(rule=scan.summary(found.total)):
                        self._memories.write(scope, [], found.replaces, action="redact", actor=None,
                                             at=self._clock(), extra=found.insert, retract=found.retract)
                if redact:  # the indexes as the store is now: no term or vector of a secret stays
                    self._memories.reindex(scope)
            report.findings.extend(found.findings)
            total.update(found.total)
        report.total = dict(total)
        if redact:  # an agent's scope: its own record; a shared one (its members) or all: every agent's
            own = [scopes[0].name] if agent is not None and scopes[0].kind == "agent" else None
            self._note_session(lambda: self._sessions.rewrite(lambda text: self.redactor.redact(text).text,
                                                              agents=own))
        return report

    def stored_scopes(self) -> list[str]:
        """Every scope with memories in the store, as :meth:`reindex` takes them: agent names, ``team:NAME``,
        ``swarm``."""
        self._check_open()
        return [s.name if s.kind == "agent" else s.key for s in self._memories.scopes()]

    def resolve_agent(self, name: str) -> str | None:
        """The declared agent with memory that ``name`` stands for (itself, or the agent listing it in
        ``cortex: aliases:``), or None (a built-in or undeclared coding agent such as ``Explore``)."""
        self._check_open()
        if not isinstance(name, str):
            return None
        resolved = self.agents.resolve(name)
        definition = self.agents.get(resolved) if resolved is not None else None
        return resolved if definition is not None and definition.memory_enabled else None

    def describe_agents(self) -> list[dict[str, Any]]:
        """The declared agents: name, description, whether memory is enabled, project, memory count, teams and
        whether it leads; then each broken definition file, by the agent it names (else its file name), with
        ``problems`` (``field: message``; empty for a sound one): it declares nothing until it is fixed."""
        self._check_open()
        declared = [
            {"name": d.name, "description": d.description, "memory_enabled": d.memory_enabled,
             "project": d.settings.project, "teams": list(d.settings.teams), "lead": d.settings.lead,
             "temporary_teams": dict(d.settings.parents),
             "memories": len(self._memories.index(self._scope(d.name))) if d.memory_enabled else 0, "problems": []}
            for d in self.agents.list()
        ]
        broken: list[dict[str, Any]] = [
            {"name": next((p.agent for p in problems if p.agent), path.stem), "description": "",
             "memory_enabled": False, "project": None, "teams": [], "lead": False, "temporary_teams": {},
             "memories": 0, "problems": [f"{path.name}: {p.field}: {p.message}" for p in problems]}
            for path, problems in sorted(self.agents.broken.items())
        ]
        return declared + broken

    def stored_agents(self) -> list[str]:
        """Names of the agents that have memories in the store, declared or not."""
        self._check_open()
        return [s.name for s in self._memories.scopes() if s.kind == "agent"]

    def index_status(self, agent: str) -> IndexStatus:
        """What the agent's derived index holds against the store: memories, vectors, rebuilds, changes.
        Works on agents that are stored but not declared too."""
        check_agent_name(agent)
        self._check_open()
        return self._memories.status(self._scope(agent))


def _named_scope(name: str) -> Scope:
    """An agent's own scope by the agent's name, or a shared one by ``team:NAME`` / ``swarm``."""
    if name == "swarm":
        return Scope.swarm()
    if isinstance(name, str) and name.startswith("team:"):
        return Scope.team(check_scope(name, "agent")[5:])
    return Scope.agent(check_agent_name(name))
